#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The user documentation matches the program:
#  - every man page formats with groff and man without a single warning;
#  - every command `uevm --help` lists has its page, is named in uevm(1)
#    and in the README, and every option its usage line shows is documented
#    in its page;
#  - the README opens with `make demo` and then `make check`.
source "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
for tool in groff man; do
	command -v $tool >/dev/null || { fail "$tool is installed (scripts/install-deps.sh)"; exit 1; }
done

# render PAGE: plain text, '-' for \-, no hyphenation or adjustment effects
# on option names (the pages use .nh).
render() { groff -man -Tascii -P-cbou "$1" 2>/dev/null; }

pages=("$ROOT"/man/*.1)
expect_eq "man pages exist" 1 "$([ -e "${pages[0]}" ] && echo 1 || echo 0)"
for p in "${pages[@]}"; do
	name=$(basename "$p")
	w=$(groff -man -Tutf8 -ww -z "$p" 2>&1)
	expect_eq "$name: groff -ww prints no warning" "" "$w"
	w=$(MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null)
	expect_eq "$name: man -l prints no warning" "" "$w"
	expect_eq "$name: has NAME, SYNOPSIS and EXIT STATUS" 3 \
		"$(render "$p" | grep -cxE 'NAME|SYNOPSIS|EXIT STATUS')"
done

cmds=$("$UEVM" --help | awk '/^Commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
expect_match "uevm --help lists commands" 'label' "$cmds"
render "$ROOT/man/uevm.1" >"$T/uevm.1.txt"
# mentions NAME REGEX FILE: like expect_match, without quoting all of FILE
mentions() {
	if grep -qE -- "$2" "$3"; then pass "$1"; else fail "$1" "no match for /$2/ in $3"; fi
}
for c in $cmds; do
	page=$ROOT/man/uevm-$c.1
	if [ ! -f "$page" ]; then
		fail "man/uevm-$c.1 exists"
		continue
	fi
	pass "man/uevm-$c.1 exists"
	mentions "uevm(1) names uevm-$c(1)" "uevm-$c\(1\)" "$T/uevm.1.txt"
	mentions "README documents uevm $c" "uevm $c" "$ROOT/README.md"
	text=$(render "$page")
	# Every option token of the usage line: -r, --hmac-key, --uuid ...
	usage=$("$UEVM" "$c" --help)
	missing=""
	for opt in $(grep -oE -- '(^|[[ |])--?[a-z0-9][a-z0-9-]*' <<<"$usage" | tr -d '[ |' | sort -u); do
		grep -qE -- "(^|[^a-z0-9-])$opt([^a-z0-9-]|$)" <<<"$text" || missing="$missing $opt"
	done
	expect_eq "uevm-$c(1) documents every option of '$c --help'" "" "$missing"
done

# The README's first two code blocks are the two first commands.
blocks=$(awk '/^```/ { if (inb) { inb = 0; n++; if (n == 2) exit } else inb = 1; next }
	inb { print }' "$ROOT/README.md")
expect_eq "README opens with make demo, then make check" "make demo
make check" "$blocks"
before=$(sed -n '1,/^```sh$/p' "$ROOT/README.md" | grep -c '^```')
expect_eq "no code block before make demo" 1 "$before"
