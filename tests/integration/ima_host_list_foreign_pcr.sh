#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# From an attack review (issue 13, host list): a host list whose entries go to a
# PCR other than the kernel's (-o pcr=11, or pcr= rules) on a kernel with
# IMA.  An offline attacker cuts the last entry (hides that a file was
# opened); the TPM was NOT reset.  tpm_was_reset() used to look only at the
# configured PCR being zero or PCR 10 holding the kernel's list, so the
# edited list is "rotated" as if the TPM had been reset (the evidence goes
# to FILE.prev, the front-end reports a reboot) instead of being refused.
# Expected: refused, nothing moved, as uevmfs_tpm checks for pcr=11 without
# a kernel list.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

for tool in swtpm tpm2_pcrread tpm2_pcrextend python3; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
source "$TESTS_DIR/swtpm-lib.sh"
REF=$TESTS_DIR/ima_ml_ref.py
EDIT=$TESTS_DIR/ima_ml_edit.py
FIX=$TESTS_DIR/ima_ml_fixture.py
KEY=$T/key
make_key "$KEY"
S=$T/src M=$T/mnt H=$T/host.ml K=$T/kernel_binary_runtime_measurements
mkdir -p "$S"
for i in 1 2; do echo "file $i" >"$S/f$i"; done
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
printf 'measure func=FILE_CHECK mask=^MAY_READ\nappraise\n' >"$T/policy"

start_swtpm || { fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
for i in $(seq 0 9); do tpm_extend "$i" "boot$i"; done
# The kernel's list (a fixture), extended into PCR 10 as the kernel does.
python3 "$FIX" "$K" boot_aggregate /usr/bin/kernel-measured | while read -r d; do
	tpm2_pcrextend -T "$TCTI" "10:$d"
done
OPTS="key=raw:$KEY,policy=$T/policy,tcti=$TCTI,pcr=11,kernel_ml=$K,ml=$H"
ufs_mount "$S" "$M" "$OPTS" || { fail "uevmfs mounts (pcr=11, kernel list)"; exit 1; }
cat "$M/f1" "$M/f2" >/dev/null
ufs_umount "$M"
n=$(python3 "$EDIT" "$H" count)
expect_eq "the list: three entries (boot_aggregate, f1, f2)" 3 "$n"

# Offline, TPM not reset: the last entry (f2 was opened) is cut away.
python3 "$EDIT" "$H" keep 2
cp "$H" "$T/edited.ml"
"$UEVMFS" "$S" "$M" -f -o "securityfs=none,$OPTS" >"$T/reopen.out" 2>&1 &
pid=$!
UFS_PIDS+=("$pid")
wait_quiet "$WAIT_S" ufs_up_or_gone "$M" "$pid"
if ufs_mounted "$M" fuse.uevmfs; then
	fail "an offline-edited list (TPM not reset) is refused" \
		"uevmfs mounted: $(head -c 600 "$T/reopen.out")"
	fusermount3 -u "$M"
else
	pass "an offline-edited list (TPM not reset) is refused"
fi
wait "$pid" 2>/dev/null
check "  nothing moved aside (no $H.prev)" test ! -e "$H.prev"
check "  the edited list stays where it was" cmp -s "$T/edited.ml" "$H"
