#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# evmctl mode computes the EVM data as evmctl 1.6.2 does, not as the
# kernel does: sign -i (immutable signatures), symlinks, FIFOs and device
# nodes, generation 0 for every type but regular files (and directories in
# hmac), the Smack extras only with --smack, values over 1024 bytes left
# out; and trees (-r) label each file in place.  Each line is compared with
# Debian's evmctl 1.4, output and the xattrs written; where 1.4 differs from
# 1.6.2 the 1.6.2 result is asserted, read from its source.  The native
# commands keep the kernel's rules (checked against tests/ref_evm.sh).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"
source "$TESTS_DIR/ref_evm.sh"

if ! command -v evmctl >/dev/null; then
	fail "evmctl is installed (package ima-evm-utils)"
	exit 1
fi
K=$T/keys
mkdir "$K"
SIG_KEYS="rsa2048" make_sig_keys "$K"
KEY=$K/rsa2048.key
CERT=$K/rsa2048.der
W=$T/w
mkdir "$W"
cd "$W" || exit 1
source "$TESTS_DIR/evmctl_diff_lib.sh"

# all xattrs of PATH (not following a symlink), as getfattr dumps them
xattrs() { getfattr -h -d -m - -e hex --absolute-names "$1" 2>/dev/null | sed 1d; }

# same_xattrs NAME PATH ARGS...: evmctl 1.4 and then uevm (both forms) run
# ARGS, each from PATH without security.evm; the xattrs left must agree.
same_xattrs() {
	local name=$1 path=$2 form want
	shift 2
	setfattr -h -x security.evm "$path" 2>/dev/null
	"$DEB" "$@" >/dev/null 2>&1 </dev/null
	want=$(xattrs "$path")
	for form in link uevm; do
		setfattr -h -x security.evm "$path" 2>/dev/null
		run_form "$form" "$@" >/dev/null 2>&1 </dev/null
		expect_eq "$name [$form]: the xattrs written" "$want" "$(xattrs "$path")"
	done
}

# The fs UUID as FS_IOC_GETFSUUID answers it (uevm's source for it).
FSUUID=$(perl -e '
	open(my $fh, "<", ".") or die; my $b = pack("C", 16) . ("\0" x 16);
	ioctl($fh, 0x80111500, $b) or die "ioctl: $!"; print unpack("H*", substr($b, 1, 16));' 2>/dev/null)
[ ${#FSUUID} -eq 32 ] || fail "FS_IOC_GETFSUUID answers on the test filesystem" "$FSUUID"

printf 'some content\n' >f
setfattr -n security.ima -v 0x0401 f

# ---- sign -i: evmctl's immutable signature ----------------------------------------
# 1.6.2 calc_evm_hash with evm_immutable: no generation, no UUID, and after
# the values struct h_misc_digsig {uid, gid, mode} (12 bytes); sign_evm then
# sets byte 1 (the version) to 3 on the type-3 signature.  1.4 does the same.
same "sign -i -n" "" sign -i -n -k "$KEY" f
same_xattrs "sign -i" f sign -i -k "$KEY" f
sig=$(xattr_hex security.evm f)
expect_eq "sign -i: type 03, version 3, sha256" 030304 "${sig:0:6}"
read -r uid gid mode < <(stat -c '%u %g %f' f)
hex_to_file "0401$(hex_le 4 "$uid")$(hex_le 4 "$gid")$(hex_le 2 "$((16#$mode))")0000" "$T/imm"
digest_file sha256 "$T/imm" "$T/imm.dgst"
sig_body_file "$sig" "$T/imm.sig"
check "sign -i: a plain signature over H(values || uid gid mode)" \
	pkey_verify "$K/rsa2048.pub" sha256 "$T/imm.dgst" "$T/imm.sig"
cp -a f fcopy
"$UEVM" evmctl sign -i -k "$KEY" fcopy >/dev/null 2>&1
expect_eq "sign -i of a copy (another inode) gives the same signature" "$sig" \
	"$(xattr_hex security.evm fcopy)"
# The other option wins when -i and -o are both given, with evmctl's message.
same "-i then -o: immutable" "" -i sign -o -n -k "$KEY" f
# No evmctl verifies what -i writes: 1.4 finds no hash algorithm in a
# version-3 header; 1.6.2 imaevm_verify_hash goes to verify_hash_v3, whose
# calc_hash_sigv3 takes fs-verity only (log_err, -EINVAL: exit 125).
"$DEB" sign -i -k "$KEY" f >/dev/null 2>&1
for form in link uevm; do
	for opt in "" -i; do
		run_form "$form" verify $opt -k "$CERT" f >"$T/u.out" 2>"$T/u.err"
		expect_eq "verify $opt of a -i signature [$form]: exit status (1.6.2)" 125 "$?"
		expect_match "verify $opt of a -i signature [$form]: the message (1.6.2)" \
			'^Only fsverity supports signature format v3 \(sigv3\)$' "$(cat "$T/u.err")"
	done
done
"$DEB" verify -k "$CERT" f >/dev/null 2>"$T/deb.err"
expect_eq "evmctl 1.4 refuses the -i signature (exit 125)" 125 "$?"

# ---- symlinks, FIFOs, device nodes, directories ------------------------------------
mkdir dir
ln -s f link
mkfifo fifo
mknod chr c 1 3
for x in dir link fifo chr; do
	setfattr -h -n security.ima -v 0x0401 "$x"
	setfattr -h -n security.apparmor -v 0x756e636f6e66696e656400 "$x"
done
evmctl_hmac_key
# 1.4 and 1.6.2 sign and verify alike here: generation only for S_ISREG
# (1.4 also logs "generation: 0" for -o, which 1.6.2's calc_evm_hash skips
# for portable signatures: filtered).
for x in dir link fifo chr; do
	same "sign -u -n $x" "" sign -u -n -k "$KEY" "$x"
	same_xattrs "sign -u $x" "$x" sign -u -k "$KEY" "$x"
	same "verify -u $x" "" verify -u -k "$CERT" "$x"
	same "sign -o -n $x" '/^generation: /d' sign -o -n -k "$KEY" "$x"
	same "sign -i -n $x" "" sign -i -n -k "$KEY" "$x"
done
# hmac: 1.4 has no --hmackey (the fixed key file) and no UUID (-u here);
# 1.6.2 adds the UUID but agrees on generation 0 for these types.
for x in link fifo chr; do
	same "-a sha1 hmac -u -n $x" "" -a sha1 hmac -u -n "$x"
	same_xattrs "-a sha1 hmac -u $x" "$x" -a sha1 hmac -u "$x"
	out=$("$UEVM" evmctl hmac --hmackey "$EVMKEY" -n "$x" 2>&1)
	expect_match "hmac $x with the fs UUID: generation 0 (1.6.2)" \
		"^hmac: $(ref_evm_hmac "$EVMKEY" "$x" 0 "$FSUUID")$" "$out"
done
# Without this, uevm refused these types (llistxattr of the proc link).
expect_rc "hmac of a symlink with xattrs: 0" 0 "$UEVM" evmctl hmac --hmackey "$EVMKEY" -n link
expect_rc "sign of a FIFO with the fs UUID: 0" 0 "$UEVM" evmctl sign -n -k "$KEY" fifo
# 1.6.2 calc_evm_hmac reads the generation of directories too (1.4 did not).
DGEN=$(ext4_generation dir)
[ "${DGEN:-0}" != 0 ] || fail "the test directory has a non-zero generation" "$DGEN"
out=$("$UEVM" evmctl hmac -u --hmackey "$EVMKEY" -n dir 2>&1)
expect_match "hmac -u dir binds the directory's generation (1.6.2)" \
	"^hmac: $(ref_evm_hmac "$EVMKEY" dir "$DGEN")$" "$out"
# ... but sign does not: generation 0, as 1.4 (same above) and 1.6.2.
expect_match "sign -u dir logs generation 0" "^generation: 0$" \
	"$("$UEVM" evmctl sign -u -n -k "$KEY" dir 2>&1)"
# The native commands keep the kernel's i_generation for every type.
expect_eq "uevm hmac dir: the kernel's HMAC with the real generation" \
	"02$(ref_evm_hmac "$EVMKEY" dir "$DGEN")" \
	"$("$UEVM" hmac --uuid none --hmac-key "raw:$EVMKEY" dir | cut -d' ' -f1)"

# ---- values over 1024 bytes; the Smack extras --------------------------------------------
# evmctl reads each value into a 1024-byte buffer: a longer one fails with
# ERANGE, is logged "no xattr" and left out; 1024 bytes still count.
big=$(head -c 1500 /dev/urandom | od -An -v -tx1 | tr -d ' \n')
b1024=$(head -c 1024 /dev/urandom | od -An -v -tx1 | tr -d ' \n')
printf 'big\n' >big
setfattr -n security.ima -v 0x0401 big
setfattr -n security.SMACK64 -v "0x$big" big
printf 'exact\n' >exact
setfattr -n security.SMACK64 -v "0x$b1024" exact
printf 'smack\n' >smack
setfattr -n security.SMACK64 -v bar smack
setfattr -n security.SMACK64EXEC -v foo smack
setfattr -n security.SMACK64MMAP -v baz smack
setfattr -n security.ima -v 0x0401 smack
for x in big exact smack; do
	same "sign -u -n $x" "" sign -u -n -k "$KEY" "$x"
	same "--smack sign -u -n $x" "" --smack sign -u -n -k "$KEY" "$x"
	same_xattrs "sign -u $x" "$x" sign -u -k "$KEY" "$x"
	same "verify -u $x" "" verify -u -k "$CERT" "$x"
	same "-a sha1 hmac -u -n $x" "" -a sha1 hmac -u -n "$x"
	same "--smack -a sha1 hmac -u -n $x" "" --smack -a sha1 hmac -u -n "$x"
	same_xattrs "--smack sign -u $x" "$x" --smack sign -u -k "$KEY" "$x"
	same_xattrs "-a sha1 hmac -u $x" "$x" -a sha1 hmac -u "$x"
	same_xattrs "--smack -a sha1 hmac -u $x" "$x" --smack -a sha1 hmac -u "$x"
done
expect_match "a 1500-byte value is left out" "^no xattr: security.SMACK64$" \
	"$("$UEVM" evmctl sign -u -n -k "$KEY" big 2>&1)"
expect_match "a 1024-byte value is hashed" "^name: security.SMACK64, size: 1024$" \
	"$("$UEVM" evmctl sign -u -n -k "$KEY" exact 2>&1)"
expect_eq "without --smack SMACK64EXEC is not even looked up" "" \
	"$("$UEVM" evmctl sign -u -n -k "$KEY" smack 2>&1 | grep SMACK64EXEC)"
# 1.6.2 --ima/--selinux/--caps overrides longer than that buffer fail.
long=$(head -c 1100 /dev/zero | tr '\0' a)
for form in link uevm; do
	run_form "$form" sign -u -n --selinux "$long" -k "$KEY" f >"$T/u.out" 2>"$T/u.err"
	expect_eq "--selinux over 1024 bytes [$form]: exit status (1.6.2)" 125 "$?"
	expect_match "--selinux over 1024 bytes [$form]: the message (1.6.2)" \
		'^selinux\[1101\] value is too long to fit into xattr\[1024\]$' "$(cat "$T/u.err")"
done
# evmctl lists the names into 1024 bytes too: with more, llistxattr fails
# (ERANGE) and evmctl exits 125.  uevm signs (documented difference: it
# never refuses such a file), over the same data as without those names.
printf 'many\n' >many
setfattr -n security.ima -v 0x0401 many
for i in $(seq 1 40); do setfattr -n "user.a_long_attribute_name_number_$i" -v 1 many; done
"$DEB" sign -u -n -k "$KEY" many >/dev/null 2>"$T/deb.err"
expect_eq "evmctl 1.4 refuses names over 1024 bytes (125)" 125 "$?"
expect_match "... saying so" '^llistxattr\(\) failed' "$(cat "$T/deb.err")"
with=$("$UEVM" evmctl sign -u -n -k "$KEY" many 2>/dev/null)
expect_eq "uevm signs a file whose names exceed 1024 bytes: exit 0" 0 "$?"
for i in $(seq 1 40); do setfattr -x "user.a_long_attribute_name_number_$i" many; done
expect_eq "... the signature evmctl gives without those (unprotected) names" \
	"$("$DEB" sign -u -n -k "$KEY" many 2>/dev/null)" "$with"
# The native commands hash what the kernel hashes: every value, of any
# size, and the Smack extras (the kernel's CONFIG_EVM_EXTRA_SMACK_XATTRS).
for x in big smack; do
	expect_eq "uevm hmac $x: the kernel's HMAC (all values, any size)" \
		"02$(ref_evm_hmac "$EVMKEY" "$x" "$(ext4_generation "$x")")" \
		"$("$UEVM" hmac --uuid none --hmac-key "raw:$EVMKEY" "$x" | cut -d' ' -f1)"
done

# ---- trees: -r -------------------------------------------------------------------------
mkdir -p tree/sub/deeper
printf 'a\n' >tree/a
printf 'b\n' >tree/sub/b
printf 'c\n' >tree/sub/deeper/c
ln -s a tree/l
mkfifo tree/p
ln -s tree treelink
same "ima_hash -r" "" ima_hash -r tree
same_xattrs "ima_hash -r: tree/sub/deeper/c" tree/sub/deeper/c ima_hash -r tree
# Each run starts without .sig files (a run would sign the last one's).
rmsigs() { find tree -name '*.sig' -delete; }
rmsigs
"$DEB" ima_sign -r -f -k "$KEY" tree >"$T/deb.out" 2>"$T/deb.err"
rc_deb=$?
find tree -name '*.sig' | sort >"$T/deb.sigs"
for form in link uevm; do
	rmsigs
	run_form "$form" ima_sign -r -f -k "$KEY" tree >"$T/u.out" 2>"$T/u.err"
	expect_eq "ima_sign -r -f [$form]: exit status" "$rc_deb" "$?"
	expect_eq "ima_sign -r -f [$form]: stdout" "$(cat "$T/deb.out")" "$(cat "$T/u.out")"
	expect_eq "ima_sign -r -f [$form]: stderr" "$(cat "$T/deb.err")" "$(cat "$T/u.err")"
	expect_eq "ima_sign -r -f [$form]: the .sig files" "$(cat "$T/deb.sigs")" \
		"$(find tree -name '*.sig' | sort)"
done
for x in a sub/b sub/deeper/c; do
	expect_eq "ima_sign -r -f writes tree/$x.sig beside the file" \
		"$(xattr_hex security.ima "tree/$x")" "$(hex_of_file "tree/$x.sig")"
done
expect_eq "... and none in the current directory" "" "$(ls ./*.sig 2>/dev/null)"
expect_eq "... and none for the symlink or the FIFO" "" \
	"$(ls tree/l.sig tree/p.sig 2>/dev/null)"
rmsigs
same "ima_hash -r -t f" "" ima_hash -r -t f tree
same "ima_hash -r -t x (no f: nothing)" "" ima_hash -r -t x tree
same "ima_hash -r -t m (no f: nothing)" "" ima_hash -r -t m tree
same "ima_hash -r -t fm" "" ima_hash -r -t fm tree
same "ima_hash -r through a symlink to the tree" "" ima_hash -r treelink
same "ima_hash -r of a file" "" ima_hash -r f
same "sign -r" "" sign -r -u -k "$KEY" tree
same "sign -r -i" "" sign -r -i -k "$KEY" tree

# ---- verify of a signature naming a hash this OpenSSL cannot compute ---------------
# An offline attacker writes security.evm (type 03 or the portable 05) or
# security.ima (03) whose algorithm byte names a hash the kernel knows but
# OpenSSL 3 does not have (rmd128, wp256, tgr128, tgr192, streebog256), and
# fills the rest with anything.  Nothing can be checked, so it fails: evmctl
# exits 1 (its calc_evm_hash / calc_hash return 1 there), the kernel
# refuses (-ENOPKG).  uevm said "verification is OK", exit 0, for EVM.
# Debian's 1.4 prints the name as "(null)": only the status is compared.
printf 'planted\n' >planted
setfattr -n security.ima -v 0x0401 planted
for a in 08:rmd128 0b:wp256 0e:tgr128 10:tgr192 12:streebog256; do
	id=${a%%:*} name=${a#*:}
	for t in 03 05; do
		setfattr -n security.evm -v "0x${t}02${id}45f725680004deadbeef" planted
		"$DEB" verify -k "$CERT" planted >/dev/null 2>&1 </dev/null
		rc_deb=$?
		expect_eq "evmctl 1.4 fails verify of a type-$t EVM signature naming $name" 1 "$rc_deb"
		for form in link uevm; do
			run_form "$form" -v verify -k "$CERT" planted >"$T/u.out" 2>&1 </dev/null
			expect_eq "verify of a type-$t EVM signature naming $name [$form]: exit status as evmctl's" \
				"$rc_deb" "$?"
			expect_match "... [$form]: says the hash is missing" \
				"^EVP_get_digestbyname\\($name\\) failed$" "$(cat "$T/u.out")"
			expect_eq "... [$form]: never says OK" 0 "$(grep -c 'verification is OK' "$T/u.out")"
		done
	done
	setfattr -n security.ima -v "0x0302${id}45f725680004deadbeef" planted
	"$DEB" ima_verify -k "$CERT" planted >/dev/null 2>&1 </dev/null
	rc_deb=$?
	expect_eq "evmctl 1.4 fails ima_verify of a signature naming $name" 1 "$rc_deb"
	for form in link uevm; do
		run_form "$form" -v ima_verify -k "$CERT" planted >"$T/u.out" 2>&1 </dev/null
		expect_eq "ima_verify of a signature naming $name [$form]: exit status as evmctl's" \
			"$rc_deb" "$?"
		expect_eq "... [$form]: never says OK" 0 "$(grep -c 'verification is OK' "$T/u.out")"
	done
	setfattr -n security.ima -v 0x0401 planted
done
