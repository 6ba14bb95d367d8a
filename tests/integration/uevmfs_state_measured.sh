#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmfs measures what a mount enforces with, as critical data: under a
# "measure func=CRITICAL_DATA label=uevmfs" rule, once at mount, an
# ima-buf entry "uevmfs-state" names the mode, EVM as applied, fastopen,
# the key's full id, the policy and the SHA-256 of a policy file as read,
# the hash, PCR and m32 settings, then SOURCE (with its filesystem's
# fsid, as stat -f prints it, in 16 digits), the mount point and the
# options that shape labels and entries (fastopen is on: these policies do
# not depend on the caller).  The attacker is offline: the mount's options
# live in fstab or a unit on the disk, so they name a key of their own, a
# weaker policy or evm=0 there (and relabel the files with that key).
# uevmfs cannot tell that from the disk; a verifier of the list can: the
# entry names the other key, policy or EVM setting (or is missing: the
# rule was taken out).  A SOURCE whose name holds fake fields cannot pose
# as them: strings are encoded as audit records encode names.  Digests are
# checked against sha256sum, the key id against its definition (SHA-256
# over "uevm key id", a NUL and the key padded with zeros to 128 bytes).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

S=$T/src
M=$T/mnt
mkdir -p "$S" "$M"
make_key "$T/key"
echo hello >"$S/a"
"$UEVM" label -r --hmac-key "raw:$T/key" "$S" >/dev/null
P=$T/policy
printf '%s\n' "measure func=FILE_CHECK mask=MAY_READ" "appraise func=FILE_CHECK" \
	"measure func=CRITICAL_DATA label=uevmfs" >"$P"

keyid() { { printf 'uevm key id\0'; cat "$1"; head -c $((128 - $(stat -c %s "$1"))) /dev/zero; } |
	sha256sum | cut -d' ' -f1; }
enc() {	# as audit records: quoted when one printable word, else hex
	if [[ "$1" =~ ^[!#-~]*$ ]]; then printf '"%s"' "$1"; else printf '%s' "$1" | xxd -p -u | tr -d '\n'; fi
}
# state_entries: the buffers of the list's uevmfs-state entries, one a line
state_entries() {
	awk '$3 == "ima-buf" && $5 == "uevmfs-state" { print $6 }' "$T/sec/ima/ascii_runtime_measurements" |
		while read -r hex; do printf '%s' "$hex" | xxd -r -p; echo; done
}
want_state() {	# SOURCE POLICY-FILE MODE EVM KEY-FILE
	local name=$2
	[ -n "${FROM_TREE:-}" ] && name=control-tree
	printf 'mode=%s evm=%s fastopen=on key=%s policy_sha256=%s hash=sha256 pcr=10 m32=0' \
		"$3" "$4" "$(keyid "$5")" "$(sha256sum <"$2" | cut -d' ' -f1)"
	printf ' syslog=0 auditd=1 integrity_audit=0 policy=%s source=%s source_fsid=%016x mountpoint=%s' \
		"$(enc "$name")" "$(enc "$1")" "0x$(stat -f -c %i "$1")" "$(enc "$M")"
	echo ' audit_log="" uuid="fs" evm_xattrs="" template="" measure_path="mount"'
}

ufs_mount "$S" "$M" "key=raw:$T/key,policy=$P,ml=memory,securityfs=$T/sec,nosyslog" || exit 1
expect_eq "at mount: one uevmfs-state entry, its settings as applied" \
	"$(want_state "$S" "$P" enforce 0x80000001 "$T/key")" "$(state_entries)"
first=$(state_entries)
expect_eq "  and files are measured as before" hello "$(cat "$M/a")"
expect_eq "  the list: boot_aggregate, the state, the file" 3 \
	"$(cat "$T/sec/ima/runtime_measurements_count")"
ufs_umount "$M"

# As the kernel: no CRITICAL_DATA rule for the label, no entry.
printf '%s\n' "appraise func=FILE_CHECK" "measure func=CRITICAL_DATA label=uevmd" >"$T/other"
ufs_mount "$S" "$M" "key=raw:$T/key,policy=$T/other,ml=memory,securityfs=$T/sec,nosyslog" || exit 1
expect_eq "a rule for another label: no uevmfs-state entry" "" "$(state_entries)"
ufs_umount "$M"

# The offline attack: fstab names the attacker's key and a policy that
# appraises nothing, and the files are relabelled with that key.
head -c 32 /dev/urandom >"$T/mine.key"
chmod 600 "$T/mine.key"
"$UEVM" label -r --hmac-key "raw:$T/mine.key" "$S" >/dev/null
printf '%s\n' "measure func=CRITICAL_DATA label=uevmfs" >"$T/weak"
ufs_mount "$S" "$M" "key=raw:$T/mine.key,policy=$T/weak,mode=log,ml=memory,securityfs=$T/sec,nosyslog" || exit 1
expect_eq "with the attacker's key: the entry names it, the weakened policy and the mode" \
	"$(want_state "$S" "$T/weak" log 0x80000001 "$T/mine.key")" "$(state_entries)"
check "  a key id other than the first key's" test "$(keyid "$T/mine.key")" != "$(keyid "$T/key")"
ufs_umount "$M"

# The attack a review found: the legitimate key and policy, EVM turned
# off (evm=0), so that content relabelled with a bare hash passes.
"$UEVM" label -r --hmac-key "raw:$T/key" "$S" >/dev/null
ufs_mount "$S" "$M" "key=raw:$T/key,policy=$P,evm=0,ml=memory,securityfs=$T/sec,nosyslog" || exit 1
expect_eq "evm=0: the entry says EVM is off" \
	"$(want_state "$S" "$P" enforce 0x0 "$T/key")" "$(state_entries)"
check "  so it differs from the first mount's" test "$(state_entries)" != "$first"
ufs_umount "$M"

# evm=0x80000000 (setup complete, EVM off) blocks a later "echo 1 > evm",
# where evm=0 does not: the entry tells the two apart.
ufs_mount "$S" "$M" "key=raw:$T/key,policy=$P,evm=0x80000000,ml=memory,securityfs=$T/sec,nosyslog" || exit 1
expect_eq "evm=0x80000000: the bit the evm file hides is in the entry" \
	"$(want_state "$S" "$P" enforce 0x80000000 "$T/key")" "$(state_entries)"
ufs_umount "$M"

# A change through the control tree: EVM enabled, then a policy written.
ufs_mount "$S" "$M" "key=raw:$T/key,policy=$P,evm=0,ml=memory,securityfs=$T/sec,nosyslog" || exit 1
echo 1 >"$T/sec/evm"
expect_eq "echo 1 > evm: a second entry with EVM as now applied" \
	"$(want_state "$S" "$P" enforce 0x80000001 "$T/key")" "$(state_entries | tail -n 1)"
printf '%s\n' "appraise func=FILE_CHECK" "measure func=CRITICAL_DATA label=uevmfs" >"$T/treepolicy"
tree_write "$T/sec/ima/policy" <"$T/treepolicy"
expect_eq "a policy written to the tree: a third entry naming the tree and what was written" \
	"$(FROM_TREE=1 want_state "$S" "$T/treepolicy" enforce 0x80000001 "$T/key")" \
	"$(state_entries | tail -n 1)"
expect_eq "  three entries in all" 3 "$(state_entries | wc -l)"
ufs_umount "$M"

# A SOURCE named to carry fake fields (the legitimate mode and key id
# after a space): written in hex, whole, so the only mode= and key= are
# the real ones at the start.
F="$T/s mode=enforce fastopen=on key=$(keyid "$T/key")"
mkdir "$F"
cp -a "$S/a" "$F/a"
ufs_mount "$F" "$M" "key=raw:$T/mine.key,policy=$T/weak,mode=log,ml=memory,securityfs=$T/sec,nosyslog" || exit 1
expect_eq "a SOURCE with fake fields: encoded in hex" \
	"$(want_state "$F" "$T/weak" log 0x80000001 "$T/mine.key")" "$(state_entries)"
expect_eq "  one mode= and one key= field, the real ones" "mode=log key=$(keyid "$T/mine.key")" \
	"$(state_entries | tr ' ' '\n' | grep -E '^(mode|key)=' | tr '\n' ' ' | sed 's/ $//')"
ufs_umount "$M"
