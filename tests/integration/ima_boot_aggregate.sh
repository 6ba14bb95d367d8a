#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The boot_aggregate entry with a TPM (swtpm, all four banks) is the
# kernel's ima_calc_boot_aggregate, which is also what Keylime's verifier
# accepts (it hashes PCRs 0-7 and 0-9 of each bank from the measured-boot
# log): the list's hash algorithm picks the bank, sha1 covers PCRs 0-7,
# every other bank PCRs 0-9; the 'ima' template's digest is the sha1 one.
# The expected values are computed here in Python from tpm2_pcrread.
# Without a TPM the digest is all zeros, as the kernel's.
source "$(dirname "$0")/../lib.sh"

for tool in swtpm tpm2_pcrread tpm2_pcrextend python3 openssl; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
source "$TESTS_DIR/swtpm-lib.sh"
start_swtpm || { fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
pass "swtpm starts on 127.0.0.1"

first() { "$UEVM" measurements show "$1" | head -n 1 | cut -d' ' -f3-; }

# PCRs 0-9 in their reset state: the aggregate is a hash of zeros, not zeros.
"$UEVM" measurements add --list "$T/l-zero" --tcti "$TCTI" --pcr 11
expect_eq "PCRs 0-9 all zero: sha256 over ten zero PCRs" \
	"ima-ng sha256:$(boot_aggregate_of sha256) boot_aggregate" "$(first "$T/l-zero")"

# Boot PCRs with values, distinct per bank and PCR (as a firmware's).
for i in $(seq 0 9); do tpm_extend_banks "$i" "boot$i"; done
check "PCR 8 now differs from its reset state" \
	test "$(tpm_pcr sha256 8)" != "$(printf '0%.0s' $(seq 64))"

pcr=12
for algo in sha1 sha256 sha384 sha512; do
	"$UEVM" measurements add --list "$T/l-$algo" --tcti "$TCTI" --pcr $pcr -a "$algo"
	expect_eq "-a $algo: the $algo bank, PCRs $([ $algo = sha1 ] && echo 0-7 || echo 0-9)" \
		"ima-ng $algo:$(boot_aggregate_of "$algo") boot_aggregate" "$(first "$T/l-$algo")"
	pcr=$((pcr + 1))
done
"$UEVM" measurements add --list "$T/l-ima" --tcti "$TCTI" --pcr 16 --template ima
expect_eq "template ima: the sha1 aggregate of PCRs 0-7" \
	"ima $(boot_aggregate_of sha1) boot_aggregate" "$(first "$T/l-ima")"
"$UEVM" measurements add --list "$T/l-sig" --tcti "$TCTI" --pcr 23 --template ima-sig
expect_eq "template ima-sig: as ima-ng, sha256 of PCRs 0-9" \
	"ima-sig sha256:$(boot_aggregate_of sha256) boot_aggregate " "$(first "$T/l-sig")"
for l in "13 sha256" "16 ima" "23 sig"; do
	set -- $l
	expect_rc "the $2 list replays to the TPM's PCR $1" 0 "$UEVM" measurements verify \
		--tcti "$TCTI" --pcr "$1" "$T/l-$2"
done

# No TPM: zeros (the kernel without a TPM chip); only a policy naming that
# digest accepts it.
"$UEVM" measurements add --list "$T/l-none" --tcti none 2>/dev/null
expect_eq "no TPM: an all-zero sha256 digest" \
	"ima-ng sha256:$(printf '0%.0s' $(seq 64)) boot_aggregate" "$(first "$T/l-none")"
