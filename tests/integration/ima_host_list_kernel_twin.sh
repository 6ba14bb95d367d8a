#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Review finding (issue 13, host list adopted from the kernel): a uevm entry
# byte-identical to a later kernel entry (the same file measured by both
# with ima-ng/sha256 under the same path: a FUSE file the kernel measures
# too, or uevmd's real paths) is taken by another writer's catch-up for the
# kernel's copy (same_bytes, greedy), so the kernel's own entry is never
# pulled and the replay differs from the TPM: that writer's adds fail until
# the first writer happens to catch up.  A failed add does not deny the
# open (ima_store_measurement's error is only audited), and once the list
# heals it replays to the TPM again: the file was read, never measured, and
# a verifier cannot tell.  Fixed: the TPM decides how many of the bytes
# equal to kernel entries are copies (catch_up_once), so the read is in the
# list.  And an add that fails on a host list (here: the file made
# immutable) invalidates the PCR: the read is allowed, audited
# (host-list-invalidated, naming the file), and the list never replays to
# the TPM again, whatever is added after.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

for tool in swtpm tpm2_pcrread tpm2_pcrextend python3; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
source "$TESTS_DIR/swtpm-lib.sh"
REF=$TESTS_DIR/ima_ml_ref.py
FIX=$TESTS_DIR/ima_ml_fixture.py
KEY=$T/key
make_key "$KEY"
S1=$T/src1 S2=$T/src2 M1=$T/mnt1 M2=$T/mnt2 H=$T/host.ml K=$T/kernel_list
mkdir -p "$S1" "$S2" "$M1" "$M2"
# The fixture's content digest is SHA-256 of the name: give x that content,
# so that uevmfs's entry for M1/x and the "kernel's" are the same bytes.
M1R=$(realpath "$M1")
printf '%s' "$M1R/x" >"$S1/x"
for f in a b c d; do echo "$f" >"$S1/$f"; echo "$f" >"$S2/$f"; done
"$UEVM" label -r --hmac-key "raw:$KEY" "$S1" "$S2" >/dev/null
printf 'measure func=FILE_CHECK mask=^MAY_READ\n' >"$T/policy"

start_swtpm || { fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
for i in $(seq 0 9); do tpm_extend "$i" "boot$i"; done
kernel_measures() {
	python3 "$FIX" "$K" "$@" | while read -r d; do tpm2_pcrextend -T "$TCTI" "10:$d"; done
}
kernel_measures boot_aggregate /usr/bin/kernel-measured
OPTS="key=raw:$KEY,policy=$T/policy,tcti=$TCTI,kernel_ml=$K,ml=$H,audit_log=$T/audit.log,nosyslog"
ufs_mount "$S1" "$M1" "$OPTS" || { fail "uevmfs 1 mounts"; exit 1; }
P1=$UFS_PID
ufs_mount "$S2" "$M2" "$OPTS" || { fail "uevmfs 2 mounts"; exit 1; }
P2=$UFS_PID
cat "$M2/a" >/dev/null		# mount 2 caught up with the adopted list
cat "$M1/x" >/dev/null		# mount 1 appends x ...
kernel_measures "$M1R/x"	# ... and the kernel measures the same file
check "a read through mount 2 succeeds" cat "$M2/b"
cat "$M1/a" >/dev/null		# mount 1 catches up: the list heals
cat "$M2/a" "$M1/b" >/dev/null
names=$(python3 "$REF" "$H" "$T/ref.ascii" >/dev/null && awk '{ print $5 }' "$T/ref.ascii")
expect_match "the file read through mount 2 is in the list" "$(realpath "$M2")/b" "$names"
python3 "$REF" "$H" /dev/null >"$T/ref.out"
replay10() {
	python3 "$REF" "$H" /dev/null |
		awk '$1 == "pcr" && $2 == "sha256" && $3 + 0 == 10 { print $4 }'
}
expect_eq "  the list replays to PCR 10" "$(tpm_pcr sha256 10)" "$(replay10)"
expect_eq "  no add failed" "" "$(grep -F op=add_measurement "$T/audit.log" 2>/dev/null)"

# A failed add on the host list (EPERM: immutable file; on_exit undoes it).
on_exit "chattr -i '$H' 2>/dev/null"
chattr +i "$H"
check "a read whose measurement cannot be added is allowed (as the kernel)" cat "$M2/c"
check "  an audit record names the file: host-list-invalidated" \
	ufs_records host-list-invalidated "$(realpath "$M2")/c"
chattr -i "$H"
check "  PCR 10 no longer equals the list's replay" \
	test "$(tpm_pcr sha256 10)" != "$(replay10)"
check "the next read through the other mount is allowed" cat "$M1/d"
check "  the list still does not replay to PCR 10" \
	test "$(tpm_pcr sha256 10)" != "$(replay10)"
check "a read through mount 2 again is allowed" cat "$M2/d"
check "  its add fails (the list is refused), audited" \
	ufs_records host-list-invalidated "$(realpath "$M2")/d"
check "  the list still does not replay to PCR 10" \
	test "$(tpm_pcr sha256 10)" != "$(replay10)"
fusermount3 -u "$M1"; fusermount3 -u "$M2"
wait_quiet "$WAIT_S" ufs_gone "$P1"; wait_quiet "$WAIT_S" ufs_gone "$P2"
expect_eq "both uevmfs exited without a sanitizer report" "" \
	"$(grep -E 'Sanitizer|runtime error' "$T/uevmfs.stderr")"
