#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `uevm measurements show|replay|verify` on ASCII lists
# (ascii_runtime_measurements and its _sha256 variant): lists written by
# uevm and, independently, by the Python reader (tests/ima_ml_ref.py, from
# the binary list) are read back; each replays to the PCR values of the
# binary list and of the Python reader; each kind of malformed line is
# refused with its line number; a terminal gets names escaped, a pipe the
# kernel's bytes.
source "$(dirname "$0")/../lib.sh"

REF="$TESTS_DIR/ima_ml_ref.py"
unset UEVM_TCTI	# software PCRs

printf 'alpha\n' >"$T/a"
printf 'beta\n' >"$T/b c"		# the writer records "b_c"
printf 'gamma\n' >"$T/c"
evil=$(printf 'evil\033[31mred')	# a name with an escape sequence
printf 'delta\n' >"$T/$evil"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/rsa.key" 2>/dev/null
evmctl ima_sign --key "$T/rsa.key" -a sha256 "$T/c" >/dev/null 2>&1

# The sha256 bank of PCR 10 as `replay` prints it.
replay_pcr10() { awk '/^sha256:/ { s = 1 } s && $1 == "10:" { print $2 }'; }

for tmpl in ima ima-ng ima-sig ima-ngv2 ima-sigv2 "d-ng|n-ng|iuid|imode"; do
	t=${tmpl//|/_}
	L="$T/$t.bin"
	"$UEVM" measurements add --list "$L" --template "$tmpl" \
		--violation /tmp/busy "$T/a" "$T/b c" "$T/c" "$T/$evil"
	python3 "$REF" "$L" "$T/$t.ref" "$T/$t.ref256" >"$T/$t.refout"
	"$UEVM" measurements show "$L" >"$T/$t.uevm"
	"$UEVM" measurements show --bank sha256 "$L" >"$T/$t.uevm256"
	check "$tmpl: uevm's ASCII equals the Python rendering" cmp -s "$T/$t.uevm" "$T/$t.ref"
	check "$tmpl: same for the _sha256 list" cmp -s "$T/$t.uevm256" "$T/$t.ref256"
	"$UEVM" measurements replay "$L" >"$T/$t.replay-bin"
	ref10=$(awk '$1 == "pcr" && $2 == "sha256" && $3 == "10" { print $4 }' "$T/$t.refout")
	for form in uevm ref uevm256 ref256; do
		A="$T/$t.$form"
		"$UEVM" measurements show "$A" >"$T/$t.$form.again"
		check "$tmpl/$form: show gives the ASCII list back byte for byte" \
			cmp -s "$A" "$T/$t.$form.again"
		"$UEVM" measurements replay "$A" >"$T/$t.$form.replay"
		check "$tmpl/$form: replay equals the binary list's (sha1, sha256)" \
			cmp -s "$T/$t.replay-bin" "$T/$t.$form.replay"
		expect_eq "$tmpl/$form: PCR 10 equals the Python reader's" \
			"$ref10" "$(replay_pcr10 <"$T/$t.$form.replay")"
	done
	expect_match "$tmpl: 6 entries, 1 violation" '^entries: 6$' "$(cat "$T/$t.ref.replay")"
done

# verify against PCR values the Python reader computed, from ASCII lists.
L="$T/ima-sig.bin"
for bank in sha1 sha256; do
	awk -v b=$bank '$1 == "pcr" && $2 == b { printf "PCR-%s: %s\n", $3, $4 }' \
		"$T/ima-sig.refout" >"$T/pcrs-$bank"
done
expect_match "ima-sig: the signed file's sig column is filled" ' 030204[0-9a-f]+$' \
	"$(grep "$T/c " "$T/ima-sig.ref")"
for A in "$T/ima-sig.ref" "$T/ima-sig.uevm256"; do
	expect_rc "verify ${A##*/}: matches the Python reader's PCRs" 0 \
		"$UEVM" measurements verify --pcrs sha1,"$T/pcrs-sha1" \
		--pcrs sha256,"$T/pcrs-sha256" "$A"
done
"$UEVM" measurements replay --ascii-input "$T/ima-sig.ref" >"$T/explicit"
check "--ascii-input: the same list read as ASCII explicitly" \
	cmp -s "$T/explicit" "$T/ima-sig.ref.replay"
expect_rc "--ascii-input on a binary list: refused" 2 \
	"$UEVM" measurements replay --ascii-input "$L"

# A changed digit: parsed, but the digest check fails (exit 1).
A="$T/ima-sig.ref"
sed '3 s/^\(10 \)\(.\)/\1x\2/; 3 s/^10 x0/10 1/; 3 s/^10 x./10 0/' "$A" >"$T/flip"
out=$("$UEVM" measurements show "$T/flip" 2>&1 >/dev/null)
expect_match "changed template digest: show names the entry" \
	'entry 3: the template digest does not match its data' "$out"
expect_rc "changed template digest: replay fails (exit 1)" 1 "$UEVM" measurements replay "$T/flip"
expect_rc "changed template digest: verify fails (exit 1)" 1 \
	"$UEVM" measurements verify --pcrs sha256,"$T/pcrs-sha256" "$T/flip"

# Malformed lines, each on line 4 of the ima-sig list.
refuse() {	# name sed-script cause
	sed "$2" "$A" >"$T/bad"
	local out rc
	out=$("$UEVM" measurements show "$T/bad" 2>&1 >/dev/null)
	rc=$?
	expect_eq "malformed ($1): show exits 2" 2 "$rc"
	expect_match "malformed ($1): line 4: $3" "not a valid ASCII measurement list: line 4: $3" "$out"
	expect_rc "malformed ($1): replay exits 2" 2 "$UEVM" measurements replay "$T/bad"
}
refuse "PCR out of range" '4 s/^10/31/' 'PCR 31 out of range'
refuse "PCR not '%2d'" '4 s/^10/7/' "does not start with a PCR number"
refuse "digest too short" '4 s/^\(10 [0-9a-f]*\)[0-9a-f] /\1 /' 'template digest of 39 hex digits'
refuse "uppercase digest" '4 s/^10 ./10 A/' 'template digest: uppercase hex digit'
refuse "no template name" '4 s/ ima-sig .*//' 'no template name'
refuse "too few fields" '4 s/ sha256:[0-9a-f]* / /; 4 s/ [^ ]*$//' "template 'ima-sig' has 3 fields, the line fewer"
refuse "d-ng without its algo" '4 s/ sha256:/ /' "template 'ima-sig', field 'd-ng': no '<algo>:' before the digest"
refuse "sig not hex" '4 s/$/zz/' "template 'ima-sig', field 'sig': not a hex digit"
refuse "DOS line ending" '4 s/$/\r/' "template 'ima-sig', field 'sig': carriage return"
refuse "NUL byte" '4 s/b_c/b\x00c/' 'contains a NUL byte'
head -c -1 "$A" >"$T/bad"
expect_match "malformed (cut short): the last line is named" \
	'line 6: no newline at its end' "$("$UEVM" measurements show "$T/bad" 2>&1 >/dev/null)"

# Terminals get control characters escaped; pipes the kernel's bytes.
expect_match "pipe: the name's escape byte as recorded" "$(printf 'evil\033')" \
	"$(cat "$T/ima-ng.ref")"
tty_out=$(script -qec "$UEVM measurements show $T/ima-ng.ref" /dev/null)
expect_match "terminal: the escape byte is shown as \\x1b" 'evil\\x1b\[31mred' "$tty_out"
check "terminal: no raw escape byte" test "$(printf %s "$tty_out" | tr -dc '\033' | wc -c)" -eq 0
