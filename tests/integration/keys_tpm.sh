#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# TPM 2.0 sealing through tpm2-tss, against a private swtpm this script
# starts and stops: seal/unseal, PCR policy, PCR change, damage.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../keys_lib.sh"
cd "$T" || exit 1

if ! swtpm_start; then
	fail "swtpm starts" "$(cat "$T/swtpm/log" 2>/dev/null)"
	exit 0
fi
pass "swtpm starts ($TPM_TCTI)"

# Seal without a policy; the TCTI from --tcti.
"$UEVM" key generate --tpm --tcti "$TPM_TCTI" --out k.tpm --plain k.plain >gen.out 2>&1
expect_match "generate --tpm" 'sealed to the TPM' "$(cat gen.out)"
expect_match "the sealed file starts with its magic line" '^uevm-key-tpm v1$' "$(head -1 k.tpm)"
want=$(hmac_of raw:k.plain)
expect_eq "unseal with tcti= in the spec gives the same key" "$want" "$(hmac_of "tpm:k.tpm,tcti=$TPM_TCTI")"
expect_eq "unseal with the TCTI from TPM2TOOLS_TCTI" "$want" "$(TPM2TOOLS_TCTI=$TPM_TCTI hmac_of tpm:k.tpm)"
expect_eq "unseal with the TCTI from UEVM_TCTI" "$want" "$(UEVM_TCTI=$TPM_TCTI hmac_of tpm:k.tpm)"
no_key_in "no plaintext key in the sealed file or the output" k.plain k.tpm gen.out

# Seal to PCRs 7 and 16; unseal works until PCR 7 changes.
export UEVM_TCTI=$TPM_TCTI
"$UEVM" key generate --tpm --pcrs 7,16 --out p.tpm --plain p.plain --size 64 >/dev/null 2>&1
expect_match "the PCR list is recorded" '^pcrs sha256:7,16$' "$(cat p.tpm)"
pwant=$(hmac_of raw:p.plain)
expect_eq "unseal under unchanged PCRs" "$pwant" "$(hmac_of tpm:p.tpm)"
mkdir tree && echo x >tree/f
"$UEVM" label --hmac-key tpm:p.tpm tree/f >/dev/null 2>&1
expect_rc "label and verify with the sealed key" 0 "$UEVM" verify --hmac-key tpm:p.tpm tree/f
tpm2_pcrextend -T "$TPM_TCTI" 7:sha256=$(printf '%064d' 1) 2>/dev/null
out=$("$UEVM" hmac --hmac-key tpm:p.tpm "$KEYS_PROBE" 2>&1)
rc=$?
expect_eq "after PCR 7 changed, unseal fails (exit 2)" 2 "$rc"
expect_match "... with a clear error naming the PCRs" 'refused to unseal.*PCRs sha256:7,16 no longer' "$out"
expect_rc "... and verify cannot run with that key" 2 "$UEVM" verify --hmac-key tpm:p.tpm tree/f
expect_eq "the key without a policy still unseals" "$want" "$(hmac_of tpm:k.tpm)"
no_key_in "no plaintext key in the PCR-sealed file" p.plain p.tpm

# Sealing to the new PCR values works again.
"$UEVM" key import --tpm --pcrs 7 --out p2.tpm raw:p.plain >/dev/null 2>&1
expect_eq "import a key and seal it to the current PCR 7" "$pwant" "$(hmac_of tpm:p2.tpm)"

# Damage and limits.
# flip one hex digit inside the encrypted private part / its size field
awk '/^private /{d=substr($2,41,1); $2=substr($2,1,40) (d=="0"?"1":"0") substr($2,42)} 1' k.tpm >bad.tpm
chmod 600 "bad.tpm"
out=$("$UEVM" hmac --hmac-key tpm:bad.tpm "$KEYS_PROBE" 2>&1)
expect_match "a modified private part is refused by the TPM" 'bad\.tpm: .*does not accept the sealed key' "$out"
sed 's/^private \(..\)/private ff/' k.tpm >bad1.tpm
chmod 600 "bad1.tpm"
out=$("$UEVM" hmac --hmac-key tpm:bad1.tpm "$KEYS_PROBE" 2>&1)
expect_match "a private part with a wrong size is refused" "bad1\.tpm: TPM key file: the 'private' line" "$out"
sed '/^public /s/.\(.\)$/0\1/' k.tpm >bad2.tpm
chmod 600 "bad2.tpm"
cmp -s k.tpm bad2.tpm && sed -i '/^public /s/.\(.\)$/1\1/' bad2.tpm
out=$("$UEVM" hmac --hmac-key tpm:bad2.tpm "$KEYS_PROBE" 2>&1)
expect_match "a modified public part is refused by the TPM" 'does not accept the sealed key' "$out"
sed 's/^pcrs none$/pcrs sha256:7/' k.tpm >bad3.tpm
chmod 600 "bad3.tpm"
expect_rc "a changed PCR line does not unseal" 2 "$UEVM" hmac --hmac-key tpm:bad3.tpm "$KEYS_PROBE"
for n in 20 60 200 $(( $(stat -c %s k.tpm) - 2 )); do
	head -c "$n" k.tpm >"trunc$n.tpm"
	chmod 600 "trunc$n.tpm"
	out=$("$UEVM" hmac --hmac-key "tpm:trunc$n.tpm" "$KEYS_PROBE" 2>&1)
	expect_match "truncated to $n bytes is refused, naming the file" "trunc$n\.tpm: TPM key file" "$out"
done
expect_rc "--pcrs needs --tpm" 2 "$UEVM" key generate --pcrs 7 --out x --passphrase-fd 0
expect_rc "--pcrs 24 is refused" 2 "$UEVM" key generate --tpm --pcrs 24 --out x
st=$("$UEVM" key status k.tpm p.tpm)
expect_match "status shows the PCR policy" 'p\.tpm: 64-byte key sealed to a TPM, PCR policy on sha256:7,16' "$st"

# Without a TPM: a clear error.
swtpm_stop
out=$("$UEVM" hmac --hmac-key tpm:k.tpm "$KEYS_PROBE" 2>&1)
expect_match "no TPM: the error names the TCTI" "cannot (reach|talk to) .*TPM.*$TPM_TCTI|TPM \\($TPM_TCTI\\)" "$out"
