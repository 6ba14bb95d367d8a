#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmd's measurement list against independent implementations: files
# opened and executed on the watched loop mount are measured into a
# software TPM (swtpm, its own instance on free random ports); Debian's
# evmctl 1.4 `ima_measurement --pcrs` accepts the binary list against the
# PCRs tpm2_pcrread reads, across a restart of uevmd, and rejects a
# corrupted copy.  Then the watchdog: with the TPM frozen a measuring
# worker is stuck, and the open is answered by the deadline instead.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

for tool in swtpm tpm2_pcrread tpm2_pcrextend evmctl openssl; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
source "$TESTS_DIR/swtpm-lib.sh"
evmctl_accepts() {	# list
	pcr_file sha1 "$T/pcrs-sha1"
	pcr_file sha256 "$T/pcrs-sha256"
	evmctl ima_measurement --pcrs sha1,"$T/pcrs-sha1" --pcrs sha256,"$T/pcrs-sha256" \
		"$1" >"$T/evmctl.out" 2>&1
}

start_swtpm || { fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
pass "swtpm starts on 127.0.0.1"
for i in $(seq 0 9); do
	tpm2_pcrextend -T "$TCTI" "$i:sha1=$(printf 'boot%d' "$i" | sha1sum | cut -c1-40),sha256=$(printf 'boot%d' "$i" | sha256sum | cut -c1-64)"
done

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
L=$T/binary_runtime_measurements
write_conf "tpm_tcti = $TCTI" "measurement_list = $L" "template = ima-sig"
mkdir -p "$MNT/m"
for i in 1 2 3 4 5; do echo "measured file $i" >"$MNT/m/f$i"; done
echo "with a space" >"$MNT/m/f 6"
echo "opened while uevmd is killed" >"$MNT/m/f7"
# A name anyone could choose, made to read as an audit record's fields
# where uevmd's own messages quote it (a late answer, below).
LATE="$MNT/m/late type=INTEGRITY_DATA pid=1 uid=0 op=appraise_data cause=invalid-hash comm=\"sshd\" res=0"
echo "answered late" >"$LATE"
cp "$(type -P true)" "$MNT/m/true"
echo "tampered later" >"$MNT/m/tampered"
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT/m"
echo "offline change" >>"$MNT/m/tampered"
TAMPERED_SHA=$(openssl dgst -sha256 -r "$MNT/m/tampered" | cut -d' ' -f1)

start_uevmd || { fail "uevmd starts with the TPM"; exit 1; }
expect_match "uevm status: a TPM-backed list" "measurements: 1 entries, 0 violations, TPM" \
	"$("$UEVM" status --socket "$SOCK")"
for i in 1 2 3; do cat "$MNT/m/f$i" >/dev/null; done
cat "$MNT/m/f 6" >/dev/null
"$MNT/m/true"
expect_eq "a tampered file is refused" EPERM "$(open_result "$MNT/m/tampered")"
cat "$MNT/m/f1" >/dev/null	# measured once only
expect_eq "7 entries: boot_aggregate, 4 reads, 1 exec, the refused file" 7 \
	"$("$UEVM" measurements daemon --count --socket "$SOCK")"
"$UEVM" measurements daemon --ascii --socket "$SOCK" >"$T/ascii"
expect_match "the refused file is measured with its tampered content" \
	"ima-sig sha256:$TAMPERED_SHA $MNT/m/tampered" \
	"$(cat "$T/ascii")"
expect_match "ima-sig: a hash in security.ima leaves the sig field empty (as the kernel)" \
	" sha256:$(xattr_hex security.ima "$MNT/m/f1" | cut -c5-) $MNT/m/f1 \$" "$(cat "$T/ascii")"
"$UEVM" measurements daemon --binary --socket "$SOCK" >"$T/live.bin"
check "the live binary list equals the persisted file" cmp -s "$T/live.bin" "$L"
check "evmctl 1.4 accepts uevmd's list against swtpm's PCRs (uevmd running)" evmctl_accepts "$L"
stop_uevmd
check "evmctl 1.4 accepts the list after uevmd stopped" evmctl_accepts "$L"
check "  matched per TPM bank" grep -q "Matched per TPM bank" "$T/evmctl.out"
aggr=$(evmctl ima_boot_aggregate --pcrs sha1,"$T/pcrs-sha1" --pcrs sha256,"$T/pcrs-sha256" 2>/dev/null |
	grep -o 'sha256:[0-9a-f]*')
expect_eq "boot_aggregate equals evmctl ima_boot_aggregate" "$aggr boot_aggregate" \
	"$(head -n 1 "$T/ascii" | awk '{ print $4, $5 }')"

# A restart resumes the list: nothing measured twice, new files appended.
start_uevmd || { fail "uevmd restarts"; exit 1; }
cat "$MNT/m/f1" "$MNT/m/f4" >/dev/null
expect_eq "after a restart: only the new file is added" 8 \
	"$("$UEVM" measurements daemon --count --socket "$SOCK")"
stop_uevmd
check "evmctl accepts the resumed list" evmctl_accepts "$L"
cp "$L" "$T/bad.bin"
python3 -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) - 3] ^= 1; open(p, "wb").write(b)' "$T/bad.bin"
expect_rc "evmctl rejects a corrupted copy" 1 evmctl_accepts "$T/bad.bin"

# ---- the watchdog: a worker stuck in the TPM -------------------------------------
DEADLINE_MS=1500
write_conf "tpm_tcti = $TCTI" "measurement_list = $L" "template = ima-sig" \
	"on_timeout = deny" "workers = 2"
start_uevmd || { fail "uevmd starts (deadline 1500 ms)"; exit 1; }
cat "$MNT/m/f2" >/dev/null	# measured already: no TPM needed
stop_process "$SWTPM_PID"
start=$(date +%s%N)
r=$(timeout 120 cat "$LATE" 2>&1 >/dev/null; echo "rc=$?")
ms=$((($(date +%s%N) - start) / 1000000))
expect_match "with the TPM frozen, a new file's open is answered by the deadline (denied)" \
	"Operation not permitted" "$r"
check "  not before the deadline ($ms ms >= 1500)" test "$ms" -ge 1400
expect_eq "  uevm status counts it late" 1 "$(status_field late)"
check "  and the log says so, the name as audit records carry it (hex: it has spaces)" \
	log_has "no decision within 1500 ms \(pid [0-9]+\): denied: $(printf '%s' "$LATE" | xxd -p | tr -d '\n' | tr a-f A-F)\$"
expect_eq "  the name's fake fields are nowhere in the log" 0 \
	"$(grep -c 'type=INTEGRITY_DATA pid=1 uid=0 op=appraise_data' "$LOG")"
expect_eq "  an already measured file still opens meanwhile (no TPM needed)" ok \
	"$(timeout 120 cat "$MNT/m/f2" >/dev/null 2>&1 && echo ok)"
kill -CONT "$SWTPM_PID"
# The worker that waited on the TPM finishes first; then the open passes.
late_opens() { [ "$(open_result "$LATE")" = ok ]; }
wait_quiet "$WAIT_S" late_opens
expect_eq "the TPM back: the file opens" ok "$(open_result "$LATE")"
stop_uevmd
check "evmctl accepts the list after the stall" evmctl_accepts "$L"

# ---- uevmd killed: the kernel allows what was pending (see uevmd(8)) ----------------
DEADLINE_MS=60000
write_conf "tpm_tcti = $TCTI" "measurement_list = $L" "template = ima-sig"
start_uevmd || { fail "uevmd starts (deadline 60 s)"; exit 1; }
stop_process "$SWTPM_PID"
rm -f "$T/pending.rc"
(cat "$MNT/m/f7" >/dev/null 2>&1; echo $? >"$T/pending.rc") &
PENDING=$!
# The open is held: the cat sits in openat while a worker is busy with it
# (in the frozen TPM; the deadline is 60 s away).
busy_on_f7() { in_open "$MNT/m/f7" && [ "$(status_field busy)" -ge 1 ]; }
wait_for "$WAIT_S" "the open of f7 blocked, a uevmd worker busy with it" busy_on_f7
check "an open waits while its measurement hangs in the TPM" test ! -e "$T/pending.rc"
kill -9 "$UEVMD_PID"
wait "$UEVMD_PID" 2>/dev/null
UEVMD_PID=
wait "$PENDING"
expect_eq "uevmd killed: the kernel allowed the pending open (documented fail-open)" 0 \
	"$(cat "$T/pending.rc" 2>/dev/null)"
expect_eq "  and later opens are not checked at all" ok "$(open_result "$MNT/m/tampered")"
kill -CONT "$SWTPM_PID"
DEADLINE_MS=5000
write_conf "tpm_tcti = $TCTI" "measurement_list = $L" "template = ima-sig"
start_uevmd || { fail "uevmd restarts after being killed"; exit 1; }
expect_eq "restarted: enforcing again" EPERM "$(open_result "$MNT/m/tampered")"
stop_uevmd
check "evmctl accepts the list after the kill and restart" evmctl_accepts "$L"
