#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Lists that prove nothing must not verify (issue 12, item 9).  An attacker
# who hands a verifier a measurement list wants "list verified" for a
# machine whose IMA PCR says something else:
#  - an empty list, against PCRs where PCR 10 is not zero;
#  - a list whose entries all extend PCR 11 (its PCR 11 value matches),
#    so that PCR 10, the one IMA measures into, is never compared.
# Both through PCR files and through a TPM (swtpm), with `uevm
# measurements verify` and the evmctl mode's ima_measurement (exit codes
# of evmctl: 125 error, 1 failed verification).  Legitimate lists still
# verify, and --pcr names another IMA PCR.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/swtpm-lib.sh"

for tool in swtpm tpm2_pcrread tpm2_pcrextend evmctl python3; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
REF="$TESTS_DIR/ima_ml_ref.py"
unset UEVM_TCTI

# PCR files (sha1, sha256) with every PCR the reference reader replays from
# LIST, zeros elsewhere, and PCR 10 set to the digest of TEXT when given.
pcr_files() {	# list out-prefix [pcr10-text]
	python3 "$REF" "$1" "$T/ref.ascii" >"$T/ref.out" || return 1
	for bank in sha1 sha256; do
		local p10=
		if [ -n "${3:-}" ]; then
			p10=$(printf '%s' "$3" | ${bank}sum | cut -d' ' -f1)
		fi
		awk -v b=$bank -v p10="$p10" '$1 == "pcr" && $2 == b { v[$3 + 0] = $4 }
			END { z = (b == "sha1") ? 40 : 64
			      if (p10 != "") v[10] = p10
			      for (i = 0; i < 24; i++) {
				h = (i in v) ? v[i] : sprintf("%0" z "d", 0)
				printf "PCR-%02d: %s\n", i, h } }' "$T/ref.out" >"$2-$bank"
	done
}

printf 'a measured file\n' >"$T/f1"
printf 'another one\n' >"$T/f2"

# ---- an empty list against a non-zero PCR 10 ------------------------------------
: >"$T/empty.bin"
python3 "$REF" "$T/empty.bin" "$T/ref.ascii" >"$T/ref.out"
expect_match "the reference reader sees no entry in the empty list" '^entries 0$' "$(cat "$T/ref.out")"
pcr_files "$T/empty.bin" "$T/p-empty" "IMA measured something"
check "the attacker's PCR files hold a non-zero PCR 10" \
	grep -qvE '^PCR-10: 0+$' "$T/p-empty-sha256"
out=$("$UEVM" measurements verify --pcrs sha1,"$T/p-empty-sha1" --pcrs sha256,"$T/p-empty-sha256" "$T/empty.bin" 2>&1)
rc=$?
expect_eq "verify: an empty list is refused (exit 2)" 2 "$rc"
expect_match "  the message names the list and says it is empty" "$T/empty.bin: the list is empty" "$out"
check "  it never says verified" eval '! grep -q "list verified" <<<"$out"'
out=$("$UEVM" evmctl ima_measurement --pcrs sha1,"$T/p-empty-sha1" --pcrs sha256,"$T/p-empty-sha256" "$T/empty.bin" 2>&1)
rc=$?
expect_eq "evmctl mode: an empty list is an error (125, as evmctl)" 125 "$rc"
expect_match "  with a message naming the list" "$T/empty.bin.*empty" "$out"
expect_rc "Debian's evmctl 1.4 gives 125 for the same input" 125 \
	evmctl ima_measurement --pcrs sha1,"$T/p-empty-sha1" --pcrs sha256,"$T/p-empty-sha256" "$T/empty.bin"
# Also when PCR 10 is zero: an empty list proves nothing either.
pcr_files "$T/empty.bin" "$T/p-zero"
expect_rc "verify: an empty list is refused even against zero PCRs" 2 \
	"$UEVM" measurements verify --pcrs sha256,"$T/p-zero-sha256" "$T/empty.bin"

# ---- every entry on PCR 11, PCR 10 not zero --------------------------------------
L11=$T/pcr11.bin
"$UEVM" measurements add --list "$L11" --pcr 11 "$T/f1" "$T/f2"
python3 "$REF" "$L11" "$T/ref.ascii" >"$T/ref.out"
expect_match "the attacker's list extends PCR 11 only" '^pcr sha256 11 ' "$(cat "$T/ref.out")"
check "  and not PCR 10" eval '! grep -q "^pcr sha256 10 " "$T/ref.out"'
pcr_files "$L11" "$T/p11" "IMA measured something"
out=$("$UEVM" measurements verify --pcrs sha1,"$T/p11-sha1" --pcrs sha256,"$T/p11-sha256" "$L11" 2>&1)
rc=$?
expect_eq "verify: a list without PCR 10 entries against a non-zero PCR 10 fails (exit 1)" 1 "$rc"
expect_match "  PCR 10 is compared and the message says the list has no entry for it" \
	'sha256 PCR 10: DIFFERS \(the list has no entry for it, the PCR is not zero\)' "$out"
expect_match "  list NOT verified" '^list NOT verified$' "$out"
out=$("$UEVM" evmctl ima_measurement --pcrs sha1,"$T/p11-sha1" --pcrs sha256,"$T/p11-sha256" "$L11" 2>&1)
rc=$?
expect_eq "evmctl mode: the same list fails (1)" 1 "$rc"
expect_match "  and says PCR 10 is not covered" 'PCR-10 is not zero.*no entry' "$out"
# The PCR file omits PCR 10 altogether: nothing to compare, no pass.
grep -v '^PCR-10:' "$T/p11-sha256" >"$T/p11-no10-sha256"
out=$("$UEVM" measurements verify --pcrs sha256,"$T/p11-no10-sha256" "$L11" 2>&1)
expect_eq "verify: PCR values without PCR 10 cannot verify (exit 1)" "1" "$?"
expect_match "  says which value is missing" 'no sha256 value given for PCR 10' "$out"

# Legitimate uses still verify.
pcr_files "$L11" "$T/p11z"
expect_rc "verify: the PCR 11 list with PCR 10 still zero verifies" 0 \
	"$UEVM" measurements verify --pcrs sha1,"$T/p11z-sha1" --pcrs sha256,"$T/p11z-sha256" "$L11"
expect_rc "evmctl mode: the same verifies" 0 \
	"$UEVM" evmctl ima_measurement --pcrs sha1,"$T/p11z-sha1" --pcrs sha256,"$T/p11z-sha256" "$L11"
out=$("$UEVM" measurements verify --pcr 11 --pcrs sha1,"$T/p11-sha1" --pcrs sha256,"$T/p11-sha256" "$L11" 2>&1)
expect_eq "verify --pcr 11: IMA measures PCR 11 here, PCR 10 is not IMA's" 0 "$?"
expect_match "  verified" '^list verified$' "$out"
expect_rc "verify --pcr 10 --pcr 11: both are IMA's, PCR 10 not covered fails" 1 \
	"$UEVM" measurements verify --pcr 10 --pcr 11 --pcrs sha256,"$T/p11-sha256" "$L11"
expect_rc "verify --pcr 24 is a usage error" 2 \
	"$UEVM" measurements verify --pcr 24 --pcrs sha256,"$T/p11-sha256" "$L11"
L10=$T/pcr10.bin
"$UEVM" measurements add --list "$L10" "$T/f1" "$T/f2"
pcr_files "$L10" "$T/p10"
out=$("$UEVM" measurements verify --pcrs sha1,"$T/p10-sha1" --pcrs sha256,"$T/p10-sha256" "$L10" 2>&1)
expect_eq "verify: a PCR 10 list against its own PCR values verifies" 0 "$?"
expect_match "  sha256 PCR 10 matches" 'sha256 PCR 10: matches' "$out"
expect_rc "evmctl mode: the PCR 10 list verifies" 0 \
	"$UEVM" evmctl ima_measurement --pcrs sha1,"$T/p10-sha1" --pcrs sha256,"$T/p10-sha256" "$L10"
expect_rc "Debian's evmctl 1.4 agrees on the PCR 10 list" 0 \
	evmctl ima_measurement --pcrs sha1,"$T/p10-sha1" --pcrs sha256,"$T/p10-sha256" "$L10"

# ---- the same through a TPM -----------------------------------------------------------
start_swtpm || { fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
pass "swtpm starts on 127.0.0.1"
T11=$T/tpm11.bin
check "a list on PCR 11 is extended into the TPM" \
	"$UEVM" measurements add --list "$T11" --tcti "$TCTI" --pcr 11 "$T/f1" "$T/f2"
expect_rc "  it verifies while PCR 10 is zero" 0 "$UEVM" measurements verify --tcti "$TCTI" "$T11"
tpm_extend 10 "IMA measured something"
check "PCR 10 of the TPM is no longer zero" eval '! grep -qE "^0+$" <<<"$(tpm_pcr sha256 10)"'
out=$("$UEVM" measurements verify --tcti "$TCTI" "$T11" 2>&1)
expect_eq "verify --tcti: the PCR 11 list against a non-zero PCR 10 fails (exit 1)" 1 "$?"
expect_match "  PCR 10 is named" 'PCR 10: DIFFERS \(the list has no entry for it' "$out"
out=$(UEVM_TCTI=$TCTI "$UEVM" evmctl ima_measurement "$T11" 2>&1)
expect_eq "evmctl mode through the TPM: fails (1)" 1 "$?"
expect_match "  and says PCR 10 is not covered" 'PCR-10 is not zero.*no entry' "$out"
expect_rc "verify --tcti --pcr 11: verifies" 0 "$UEVM" measurements verify --pcr 11 --tcti "$TCTI" "$T11"
out=$("$UEVM" measurements verify --tcti "$TCTI" "$T/empty.bin" 2>&1)
expect_eq "verify --tcti: an empty list is refused (exit 2)" 2 "$?"
expect_match "  the message says it is empty" 'the list is empty' "$out"
out=$(UEVM_TCTI=$TCTI "$UEVM" evmctl ima_measurement "$T/empty.bin" 2>&1)
expect_eq "evmctl mode through the TPM: an empty list is an error (125)" 125 "$?"
