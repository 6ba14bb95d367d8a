#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmfs measures what a mount enforces with, as critical data: under a
# "measure func=CRITICAL_DATA label=uevmfs" rule, once at mount, an
# ima-buf entry "uevmfs-state" names SOURCE, the mount point, the policy
# (the SHA-256 of a policy file as read), the mode, fastopen and the key's
# fingerprint (fastopen is on: these policies do not depend on the
# caller).  The attacker is offline: the mount's options live in fstab or
# a unit on the disk, so they name a key of their own and a weaker policy
# there and relabel the files with that key.  uevmfs cannot tell
# that from the disk; a verifier of the list can: the entry names the
# other key and policy (or is missing: the rule was taken out).  Digests
# are checked against sha256sum, the fingerprint against its definition
# (the first 8 bytes of the SHA-256 of the key padded to 128 bytes).
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

fpr() { { cat "$1"; head -c $((128 - $(stat -c %s "$1"))) /dev/zero; } | sha256sum | cut -c1-16; }
# state_entries: the buffers of the list's uevmfs-state entries, one a line
state_entries() {
	awk '$3 == "ima-buf" && $5 == "uevmfs-state" { print $6 }' "$T/sec/ima/ascii_runtime_measurements" |
		while read -r hex; do printf '%s' "$hex" | xxd -r -p; echo; done
}
want_state() {	# POLICY-FILE MODE FASTOPEN KEY
	echo "source=$S mountpoint=$M policy=$1 sha256:$(sha256sum <"$1" | cut -d' ' -f1)" \
		"mode=$2 fastopen=$3 key=$(fpr "$4")"
}

ufs_mount "$S" "$M" "key=raw:$T/key,policy=$P,ml=memory,securityfs=$T/sec,nosyslog" || exit 1
expect_eq "at mount: one uevmfs-state entry, source, mount point, policy, mode and key" \
	"$(want_state "$P" enforce on "$T/key")" "$(state_entries)"
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
	"$(want_state "$T/weak" log on "$T/mine.key")" "$(state_entries)"
check "  a fingerprint other than the first key's" test "$(fpr "$T/mine.key")" != "$(fpr "$T/key")"
ufs_umount "$M"
