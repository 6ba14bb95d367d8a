#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `uevm measurements` without a TPM (software PCRs): show/replay/verify
# against a Python reader written from the kernel's formats, evmctl 1.4
# accepting lists of the 'ima' template and of a custom template against
# PCR values that reader computed, JSON output, and refusals of damaged
# input.
source "$(dirname "$0")/../lib.sh"

REF="$TESTS_DIR/ima_ml_ref.py"
unset UEVM_TCTI	# software PCRs, whatever the caller's environment says

printf 'alpha\n' >"$T/a"
printf 'beta\n' >"$T/b"
printf 'gamma\n' >"$T/c"
chmod 640 "$T/c"

# PCR files in evmctl's format, from the reference reader's replay.
ref_pcr_files() {	# list
	python3 "$REF" "$1" "$T/ref.ascii" >"$T/ref.out" || return 1
	for bank in sha1 sha256; do
		awk -v b=$bank '$1 == "pcr" && $2 == b { v[$3 + 0] = $4 }
			END { z = (b == "sha1") ? 40 : 64
			      for (i = 0; i < 24; i++) {
				h = (i in v) ? v[i] : sprintf("%0" z "d", 0)
				printf "PCR-%02d: %s\n", i, h } }' "$T/ref.out" >"$T/pcrs-$bank"
	done
}

for tmpl in ima-ng ima "d-ng|n-ng|iuid|imode"; do
	L="$T/list-${tmpl//|/_}.bin"
	check "$tmpl: add with software PCRs" \
		"$UEVM" measurements add --list "$L" --template "$tmpl" "$T/a" "$T/b" "$T/c"
	check "$tmpl: reference reader parses the list" ref_pcr_files "$L"
	expect_match "$tmpl: 4 entries, digests verify" '^bad_digests 0$' "$(cat "$T/ref.out")"
	"$UEVM" measurements show "$L" >"$T/uevm.ascii"
	check "$tmpl: ASCII equals the reference rendering" cmp -s "$T/uevm.ascii" "$T/ref.ascii"
	expect_rc "$tmpl: evmctl accepts it against the reference PCRs" 0 \
		evmctl ima_measurement --pcrs sha1,"$T/pcrs-sha1" --pcrs sha256,"$T/pcrs-sha256" "$L"
	expect_rc "$tmpl: uevm verify accepts it against the reference PCRs" 0 \
		"$UEVM" measurements verify --pcrs sha1,"$T/pcrs-sha1" --pcrs sha256,"$T/pcrs-sha256" "$L"
	"$UEVM" measurements replay "$L" >"$T/replay.out"
	expect_eq "$tmpl: replay (sha256 PCR 10) equals the reference" \
		"$(awk '$1 == "pcr" && $2 == "sha256" && $3 == "10" { print $4 }' "$T/ref.out")" \
		"$(awk '/^sha256:/ { s = 1 } s && $1 == "10:" { print $2 }' "$T/replay.out")"
	"$UEVM" measurements show --binary "$L" >"$T/rt.bin"
	check "$tmpl: --binary re-renders the same bytes" cmp -s "$L" "$T/rt.bin"
done

L="$T/list-ima-ng.bin"
expect_match "ima template: 'd' column is the SHA-1 of the content" \
	" $(sha1sum "$T/a" | cut -c1-40) $T/a\$" "$(cat "$T/ref.ascii" 2>/dev/null; "$UEVM" measurements show "$T/list-ima.bin")"
expect_match "custom template: listed under its format, uid and mode in decimal" \
	"d-ng\\|n-ng\\|iuid\\|imode sha256:[0-9a-f]{64} $T/c 0 33184\$" \
	"$("$UEVM" measurements show "$T/list-d-ng_n-ng_iuid_imode.bin")"

# JSON
json=$("$UEVM" measurements show --json "$L")
expect_eq "json: one object per entry" 4 "$(jq length <<<"$json")"
expect_eq "json: first entry is boot_aggregate" boot_aggregate "$(jq -r '.[0].fields[1].value' <<<"$json")"
expect_eq "json: d-ng value" "sha256:$(sha256sum "$T/b" | cut -c1-64)" "$(jq -r '.[2].fields[0].value' <<<"$json")"
expect_eq "json: template digests are the ASCII ones" \
	"$("$UEVM" measurements show "$L" | awk 'NR == 3 { print $2 }')" "$(jq -r '.[2].template_digest' <<<"$json")"
expect_match "show --bank sha256: 64-hex template digests" '^10 [0-9a-f]{64} ima-ng ' \
	"$("$UEVM" measurements show --bank sha256 "$L")"

# Violations and duplicates through the command line.
V="$T/viol.bin"
"$UEVM" measurements add --list "$V" --violation /tmp/busy "$T/a" "$T/a"
ref_pcr_files "$V"
expect_match "violation: in the list, the same file once" '^entries 3$' "$(cat "$T/ref.out")"
expect_match "violation: counted" '^violations 1$' "$(cat "$T/ref.out")"
expect_rc "violation: uevm verify accepts" 0 \
	"$UEVM" measurements verify --pcrs sha256,"$T/pcrs-sha256" "$V"
expect_rc "violation: evmctl --ignore-violations accepts" 0 \
	evmctl ima_measurement --ignore-violations --pcrs sha1,"$T/pcrs-sha1" --pcrs sha256,"$T/pcrs-sha256" "$V"

# Refusals
# Change the first hex digit of PCR 10 (to one it is not).
sed -i -e '/^PCR-10: f/ s/^PCR-10: f/PCR-10: 0/; t' -e 's/^PCR-10: ./PCR-10: f/' "$T/pcrs-sha256"
expect_rc "verify: a different PCR value fails (exit 1)" 1 \
	"$UEVM" measurements verify --pcrs sha256,"$T/pcrs-sha256" "$V"
head -c 150 "$L" >"$T/cut.bin"	# entry 1 (boot_aggregate) has 101 bytes
expect_rc "show: a list cut short is refused (exit 2)" 2 "$UEVM" measurements show "$T/cut.bin"
out=$("$UEVM" measurements show "$T/cut.bin" 2>&1)
expect_match "show: the error names the entry" 'entry 2 at offset 101 is cut short' "$out"
expect_rc "verify: no PCR source is a usage error" 2 "$UEVM" measurements verify "$L"
expect_rc "verify: a malformed PCR file is refused" 2 \
	"$UEVM" measurements verify --pcrs sha1,/etc/hostname "$L"
expect_rc "unknown subcommand" 2 "$UEVM" measurements frobnicate "$L"
expect_rc "add: unknown template" 2 "$UEVM" measurements add --list "$T/x.bin" --template ima-nope "$T/a"
check "add: nothing is left behind by a refused open" test ! -s "$T/x.bin"
