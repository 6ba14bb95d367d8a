#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevm ima-hash's machine-readable forms: -0 ends each "VALUE  NAME" record
# with a NUL and keeps the name's bytes (a newline, a backslash, invalid
# UTF-8), which the default text escapes; --json gives the same values.
source "$(dirname "$0")/../lib.sh"

D=$T/d
mkdir "$D"
printf 'one\n' >"$D/plain"
printf 'two\n' >"$D/new"$'\n'"line"
printf 'three\n' >"$D/back\\slash"
printf 'four\n' >"$D/bad"$'\xff'"utf8"
names=("$D/plain" "$D/new"$'\n'"line" "$D/back\\slash" "$D/bad"$'\xff'"utf8")
"$UEVM" ima-hash -0 "${names[@]}" >"$T/out0"
expect_eq "-0: exit 0, one NUL per file" "0 4" "$? $(tr -cd '\0' <"$T/out0" | wc -c)"
i=0
while IFS= read -r -d '' rec; do
	expect_eq "-0: record $i names the file byte for byte" "${names[$i]}" "${rec#*  }"
	expect_eq "-0: record $i's value is security.ima's form of sha256sum" \
		"0404$(sha256sum <"${names[$i]}" | cut -d' ' -f1)" "${rec%%  *}"
	i=$((i + 1))
done <"$T/out0"
expect_eq "-0: four records read back" 4 "$i"
text=$("$UEVM" ima-hash "${names[@]}")
expect_eq "without -0: four lines (names escaped)" 4 "$(wc -l <<<"$text")"
expect_match "without -0: the newline is escaped" 'new\\nline$' "$text"
expect_eq "--json gives the same values" \
	"$(tr '\0' '\n' <"$T/out0" | grep -oE '^0404[0-9a-f]{64}' | sort)" \
	"$("$UEVM" ima-hash --json "${names[@]}" | grep -oE '"value": "[0-9a-f]+"' | cut -d'"' -f4 | sort)"
expect_rc "-0 with --json: exit 2" 2 "$UEVM" ima-hash -0 --json "$D/plain"
