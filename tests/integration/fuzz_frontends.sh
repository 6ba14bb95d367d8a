#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The front-ends' parsers that have fuzz targets (fuzz/pcr_file.c,
# fuzz/bios_log.c): the bug found while writing them, and evmctl mode's PCR
# lines and TPM 1.2 BIOS log kept as they were when they moved to buffer
# entry points, checked against Debian's evmctl 1.4 and a replay in python.
source "$(dirname "$0")/../lib.sh"

for tool in evmctl python3; do
	command -v $tool >/dev/null || { echo "SKIP: fuzz_frontends needs $tool"; exit 0; }
done
SEEDS=$TESTS_DIR/../fuzz/corpus

# boot_aggregate FILE...: the SHA-1 boot aggregate of PCRs 0-7 computed
# here from "PCR-NN: HEX" files or replayed from a TPM 1.2 log.
py_aggregate_log() {
	python3 - "$1" <<'PY'
import hashlib, struct, sys
d = open(sys.argv[1], 'rb').read()
pcr = [bytes(20)] * 24
off = 0
while len(d) - off >= 32:
    n, _t = struct.unpack_from('<II', d, off)
    (ln,) = struct.unpack_from('<I', d, off + 28)
    pcr[n] = hashlib.sha1(pcr[n] + d[off + 8:off + 28]).digest()
    off += 32 + ln
print('sha1:' + hashlib.sha1(b''.join(pcr[:8])).hexdigest())
PY
}

# ---- a PCR value cut short read the previous line's bytes ----------------------
# The hex reader stepped two characters at a time, past the end of a value
# with an odd number of digits, into what a longer earlier line had left in
# the line buffer (found reading the code for fuzz/pcr_file.c: ASan cannot
# see it, the bytes are inside the buffer).  evmctl stops at the bad pair;
# so must uevm.
printf '#%s\nPCR-00: 1' "$(printf 'ab%.0s' $(seq 90))" >"$T/stale.pcrs"
cp "$T/stale.pcrs" "$T/stale2.pcrs"
zero_aggr=$(python3 -c 'import hashlib; print("sha1:" + hashlib.sha1(bytes(160)).hexdigest())')
expect_eq "short PCR value: no bytes from an earlier line (evmctl 1.4 agrees)" \
	"$zero_aggr $zero_aggr" \
	"$("$UEVM" evmctl ima_boot_aggregate --pcrs sha1,"$T/stale.pcrs" 2>&1) $(evmctl ima_boot_aggregate --pcrs sha1,"$T/stale2.pcrs" 2>&1)"
expect_eq "the input is in the fuzz corpus (regress-*)" \
	"$zero_aggr" "$("$UEVM" evmctl ima_boot_aggregate \
		--pcrs sha1,"$SEEDS/pcr_file/regress-short-value-stale-bytes" 2>&1)"

# ---- PCR files made by tpm2_pcrread, in evmctl's form ------------------------------
for f in "$SEEDS"/pcr_file/evmctl-sha1 "$SEEDS"/pcr_file/sysfs-tpm12; do
	expect_eq "PCR file $(basename "$f"): the same boot aggregate as evmctl 1.4" \
		"$(evmctl ima_boot_aggregate --pcrs sha1,"$f" 2>&1)" \
		"$("$UEVM" evmctl ima_boot_aggregate --pcrs sha1,"$f" 2>&1)"
done

# ---- TPM 1.2 BIOS event logs -------------------------------------------------------------
for f in "$SEEDS"/bios_log/tpm12-boot "$SEEDS"/bios_log/tpm12-separators; do
	want=$(py_aggregate_log "$f")
	expect_eq "BIOS log $(basename "$f"): aggregate as replayed in python" \
		"$want" "$("$UEVM" evmctl ima_boot_aggregate "$f" 2>&1)"
	expect_eq "BIOS log $(basename "$f"): aggregate as evmctl 1.4's" \
		"$want" "$(evmctl ima_boot_aggregate "$f" 2>&1)"
done
expect_rc "BIOS log with a PCR out of range: the events before count, no failure" 0 \
	"$UEVM" evmctl ima_boot_aggregate "$SEEDS/bios_log/bad-pcr"
