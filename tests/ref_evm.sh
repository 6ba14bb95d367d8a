# SPDX-License-Identifier: GPL-2.0-or-later
# An independent reference for the EVM HMAC, for integration tests: the
# kernel's recipe (reference section 2) spelled out with getfattr, stat,
# coreutils and the openssl command line -- no uevm code involved.
# Source it after lib.sh.

# The kernel's default protected xattrs, in evm_config_default_xattrnames order.
REF_EVM_XATTRS="security.selinux security.SMACK64 security.SMACK64EXEC
security.SMACK64TRANSMUTE security.SMACK64MMAP security.apparmor
security.ima security.capability"

# hex of a file's bytes, lower case, no spaces
hex_of_file() { od -An -v -tx1 "$1" | tr -d ' \n'; }

# hex_le WIDTH_BYTES NUMBER: little-endian hex
hex_le() {
	printf "%0$(($1 * 2))x" "$2" | fold -w2 | tac | tr -d '\n'
}

# ref_evm_hmac KEYFILE PATH GENERATION [UUID]: prints the 20-byte HMAC hex
# EVM computes for PATH (never following a symlink), or nothing when no
# protected xattr exists.  UUID (hex, dashes allowed) is appended when given.
ref_evm_hmac() {
	local key=$1 path=$2 gen=$3 uuid=${4:-} data="" name v found=0
	local ino uid gid mode keyhex tmp
	for name in $REF_EVM_XATTRS; do
		v=$(xattr_hex "$name" "$path")
		getfattr -h --absolute-names -n "$name" "$path" >/dev/null 2>&1 || continue
		found=1
		data+=$v
	done
	[ "$found" = 1 ] || return 0
	read -r ino uid gid mode < <(stat -c '%i %u %g %f' -- "$path")
	# struct h_misc on LP64: ulong ino, u32 generation, uid, gid, u16 mode, 2 pad
	data+=$(hex_le 8 "$ino")$(hex_le 4 "$gen")$(hex_le 4 "$uid")$(hex_le 4 "$gid")
	data+=$(hex_le 2 "$((16#$mode))")0000
	[ -n "$uuid" ] && data+=$(tr -d '-' <<<"$uuid" | tr A-F a-f)
	# The kernel's key buffer: the key zero-padded to 128 bytes.
	keyhex=$(hex_of_file "$key")
	while [ ${#keyhex} -lt 256 ]; do keyhex+=00; done
	tmp=$(mktemp "$T/ref.XXXXXX")
	tr a-f A-F <<<"$data" | basenc --base16 -d >"$tmp"
	openssl dgst -sha1 -mac HMAC -macopt "hexkey:$keyhex" -r "$tmp" | cut -d' ' -f1
	rm -f "$tmp"
}

# ext4 inode generation of a regular file or directory (lsattr -v).
ext4_generation() { lsattr -vd -- "$1" 2>/dev/null | awk '{print $1}'; }

# A stable dump of every xattr and the ctime of each PATH (for "nothing
# changed" checks).  Never follows symlinks.
meta_snapshot() {
	local p
	for p in "$@"; do
		printf '%s ctime=%s\n' "$p" "$(stat -c '%z' -- "$p" 2>&1)"
		getfattr -h --absolute-names -d -m - -e hex -- "$p" 2>&1 | sort
	done
}
