#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The measurement list against independent implementations: uevm builds a
# list extended into a software TPM (swtpm, its own instance on free random
# ports), tpm2_pcrread reads the PCRs, and Debian's evmctl 1.4
# `ima_measurement --pcrs` must accept the list and reject corrupted copies.
# A Python reader written from the kernel's formats checks the digests, the
# replay and the ASCII rendering; evmctl ima_boot_aggregate checks the first
# entry.  Restarts of the list's owner resume without re-extending.
source "$(dirname "$0")/../lib.sh"

for tool in swtpm tpm2_pcrread tpm2_pcrextend evmctl python3 openssl; do
	if ! command -v "$tool" >/dev/null; then
		fail "tools" "$tool is missing (scripts/install-deps.sh installs it)"
		exit 1
	fi
done
REF="$TESTS_DIR/ima_ml_ref.py"
source "$TESTS_DIR/swtpm-lib.sh"

flip_byte() {	# file offset
	python3 -c 'import sys
p, o = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read()); b[o] ^= 0x01; open(p, "wb").write(b)' "$1" "$2"
}

evmctl_accepts() {	# list [extra evmctl options]
	local list=$1; shift
	pcr_file sha1 "$T/pcrs-sha1"
	pcr_file sha256 "$T/pcrs-sha256"
	evmctl ima_measurement "$@" --pcrs sha1,"$T/pcrs-sha1" \
		--pcrs sha256,"$T/pcrs-sha256" "$list" >"$T/evmctl.out" 2>&1
}

if ! start_swtpm; then
	fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"
	exit 1
fi
pass "swtpm starts on 127.0.0.1"

# Give the boot PCRs 0-9 values so that boot_aggregate is not a digest of
# zeros.
for i in $(seq 0 9); do
	tpm2_pcrextend -T "$TCTI" "$i:sha1=$(printf 'boot%d' "$i" | sha1sum | cut -c1-40),sha256=$(printf 'boot%d' "$i" | sha256sum | cut -c1-64)"
done

# Files to measure: one with a space in its name, one with an IMA signature.
printf 'first file\n' >"$T/f1"
printf 'second file\n' >"$T/f 2"
printf 'signed file\n' >"$T/f3"
printf 'fourth file\n' >"$T/f4"
openssl genrsa -out "$T/key.pem" 2048 2>/dev/null
evmctl ima_sign --key "$T/key.pem" -a sha256 "$T/f3" >/dev/null 2>&1
expect_match "f3 has an IMA signature" '^03' "$(xattr_hex security.ima "$T/f3")"

L=$T/list.bin
out=$("$UEVM" measurements add -v --list "$L" --tcti "$TCTI" --template ima-sig "$T/f1" "$T/f 2" 2>&1)
expect_match "add: a new list is created" 'created \(1 entries, TPM\)' "$out"
# The owner restarts: the list is reloaded, nothing is re-extended.
before=$(tpm_pcr sha256 10)
out=$("$UEVM" measurements add -v --list "$L" --tcti "$TCTI" --template ima-sig 2>&1)
expect_match "restart: the list resumes" 'resumed \(3 entries, TPM\)' "$out"
expect_eq "restart: the TPM is not extended again" "$before" "$(tpm_pcr sha256 10)"
out=$("$UEVM" measurements add -v --list "$L" --tcti "$TCTI" --template ima-sig "$T/f3" "$T/f1" 2>&1)
expect_match "restart: a new file is measured" "measured $T/f3" "$out"
expect_match "restart: an identical entry is not added again" "already measured $T/f1" "$out"

# The independent reader: digests, replay and ASCII.
ref=$(python3 "$REF" "$L" "$T/ref.ascii")
expect_match "reference reader: 4 entries" '^entries 4$' "$ref"
expect_match "reference reader: every template digest verifies" '^bad_digests 0$' "$ref"
expect_eq "sha1 PCR 10: reference replay = TPM" \
	"$(awk '$1 == "pcr" && $2 == "sha1" && $3 == "10" { print $4 }' <<<"$ref")" "$(tpm_pcr sha1 10)"
expect_eq "sha256 PCR 10: reference replay = TPM" \
	"$(awk '$1 == "pcr" && $2 == "sha256" && $3 == "10" { print $4 }' <<<"$ref")" "$(tpm_pcr sha256 10)"
"$UEVM" measurements show --ascii "$L" >"$T/uevm.ascii"
check "ASCII rendering equals the reference rendering" cmp -s "$T/uevm.ascii" "$T/ref.ascii"
expect_match "ASCII: spaces in names become '_' (and an empty sig leaves a space)" " $T/f_2 \$" "$(cat "$T/uevm.ascii")"
expect_match "ASCII: the signature is shown in hex" \
	" $T/f3 $(xattr_hex security.ima "$T/f3")\$" "$(cat "$T/uevm.ascii")"

# boot_aggregate, as evmctl computes it from the same PCRs.
pcr_file sha1 "$T/pcrs-sha1"
pcr_file sha256 "$T/pcrs-sha256"
aggr=$(evmctl ima_boot_aggregate --pcrs sha1,"$T/pcrs-sha1" --pcrs sha256,"$T/pcrs-sha256" 2>/dev/null |
	grep -o 'sha256:[0-9a-f]*')
first=$(head -n 1 "$T/uevm.ascii" | awk '{ print $4, $5 }')
expect_eq "boot_aggregate equals evmctl ima_boot_aggregate (sha256 bank)" "$aggr boot_aggregate" "$first"

# Debian's evmctl accepts the list against the TPM's PCRs...
check "evmctl ima_measurement accepts the list" evmctl_accepts "$L"
expect_match "evmctl matched the per-bank digests" 'Matched per TPM bank' \
	"$(evmctl -v ima_measurement --pcrs sha1,"$T/pcrs-sha1" --pcrs sha256,"$T/pcrs-sha256" "$L" 2>&1)"
expect_rc "uevm verify accepts the list (PCR files)" 0 \
	"$UEVM" measurements verify --pcrs sha1,"$T/pcrs-sha1" --pcrs sha256,"$T/pcrs-sha256" "$L"
expect_rc "uevm verify accepts the list (TPM)" 0 "$UEVM" measurements verify --tcti "$TCTI" "$L"

# ...and rejects corrupted copies.  Entry 2 starts after entry 1.
e1=$(python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack_from("=I", b, 24)[0]
t = struct.unpack_from("=I", b, 28 + n)[0]; print(32 + n + t)' "$L")
cp "$L" "$T/bad-data.bin"
flip_byte "$T/bad-data.bin" $((e1 + 4 + 20 + 4 + 7 + 4 + 4 + 12))	# in entry 2's digest field
cp "$L" "$T/bad-digest.bin"
flip_byte "$T/bad-digest.bin" $((e1 + 4 + 5))				# in entry 2's template digest
check "corrupted copies differ from the list" \
	eval '! cmp -s "$L" "$T/bad-data.bin" && ! cmp -s "$L" "$T/bad-digest.bin"'
expect_rc "evmctl rejects a list with a changed data byte" 1 evmctl_accepts "$T/bad-data.bin"
expect_rc "evmctl rejects a list with a changed template digest" 1 evmctl_accepts "$T/bad-digest.bin"
expect_rc "uevm verify rejects the changed data" 1 "$UEVM" measurements verify --tcti "$TCTI" "$T/bad-data.bin"
expect_rc "uevm verify rejects the changed digest" 1 "$UEVM" measurements verify --tcti "$TCTI" "$T/bad-digest.bin"

# An add cut short between the append and the extend looks exactly like an
# entry appended offline: the next owner never extends it, it drops it and
# records a violation in its place (ima_measurements_resume.sh has the
# attack).  (The copy gets one more entry, with software PCRs, and then
# replaces the list.)
cp "$L" "$T/copy.bin"
"$UEVM" measurements add --list "$T/copy.bin" --tcti none --template ima-sig "$T/f4" 2>/dev/null
cp "$T/copy.bin" "$L"
out=$("$UEVM" measurements add -v --list "$L" --tcti "$TCTI" --template ima-sig 2>&1)
expect_match "interrupted add: the unextended last entry is dropped on reopen" \
	'1 entry at the end was not proven by the TPM.*dropped' "$out"
expect_match "  and a violation names it" "^10 0{40} ima-sig sha256:0{64} $T/f4 \$" \
	"$("$UEVM" measurements show "$L")"
check "evmctl --ignore-violations accepts the list" evmctl_accepts "$L" --ignore-violations

# Violations, in their own list on PCR 11: 0xff.. extended.
V=$T/violations.bin
"$UEVM" measurements add --list "$V" --tcti "$TCTI" --pcr 11 --violation /tmp/opened-for-write "$T/f1"
ref=$(python3 "$REF" "$V" "$T/refv.ascii")
expect_match "violation recorded" '^violations 1$' "$ref"
expect_eq "violation: reference replay of PCR 11 = TPM" \
	"$(awk '$1 == "pcr" && $2 == "sha256" && $3 == "11" { print $4 }' <<<"$ref")" "$(tpm_pcr sha256 11)"
check "evmctl --ignore-violations accepts the list with a violation" \
	evmctl_accepts "$V" --ignore-violations
# That list's IMA PCR is 11 (PCR 10 holds the first list): --pcr says so.
expect_rc "uevm verify --pcr 11 accepts the list with a violation" 0 \
	"$UEVM" measurements verify --pcr 11 --tcti "$TCTI" "$V"
expect_rc "uevm verify refuses it as a PCR 10 list (PCR 10 not covered)" 1 \
	"$UEVM" measurements verify --tcti "$TCTI" "$V"

# A list that does not describe the TPM is refused on reopen.
tpm2_pcrextend -T "$TCTI" "11:sha1=$(printf x | sha1sum | cut -c1-40),sha256=$(printf x | sha256sum | cut -c1-64)"
out=$("$UEVM" measurements add --list "$V" --tcti "$TCTI" --pcr 11 2>&1)
expect_eq "reopen against a changed PCR: refused" "2" "$?"
expect_match "reopen against a changed PCR: says why" 'does not describe the TPM: PCR 11' "$out"

# The TPM restarts (PCRs reset): the old list is refused, or rotated.
cp "$L" "$T/before-reset.bin"
stop_swtpm
if ! start_swtpm; then
	fail "swtpm restarts" "$(tail -n 5 "$T/swtpm.log")"
	exit 1
fi
expect_rc "TPM reset: the stale list is refused" 2 \
	"$UEVM" measurements add --list "$L" --tcti "$TCTI" --template ima-sig
out=$("$UEVM" measurements add -v --rotate-stale --list "$L" --tcti "$TCTI" --template ima-sig "$T/f1" 2>&1)
expect_match "TPM reset: --rotate-stale starts a new list" 'TPM was reset' "$out"
check "TPM reset: the old list is kept as .prev" cmp -s "$T/before-reset.bin" "$L.prev"
check "evmctl accepts the new list" evmctl_accepts "$L"
