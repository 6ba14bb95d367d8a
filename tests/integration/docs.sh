#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The user documentation matches the program:
#  - every man page formats with groff and man without a single warning;
#  - every command `uevm --help` lists has its page, is named in uevm(1)
#    and in the README, and every option its help shows (usage line and
#    option table, its subcommands' too) is documented in its page;
#  - the README's Commands block lists exactly the commands of `--help`;
#  - the README opens with `make demo` and then `make check`, and what it
#    says `make check` does (builds, fuzzing time), `make fuzz`'s default
#    time and the unit file `make install` installs match the Makefiles.
source "$(dirname "$0")/../lib.sh"
# Options described before their code is merged: not in the pages yet.
PENDING=" $(grep -v '^#' "$TESTS_DIR/cli_pending.txt" | tr '\n' ' ') "

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

# help_opts CMD HELP: the option tokens of a help text (its usage lines and
# the forms of its option table), less the rows of options still pending.
help_opts() {
	local row
	{
		grep -E '^(Usage: |  uevm )' <<<"$2"
		sed -n '/^Options:/,$p' <<<"$2" | awk -F'  +' '/^ +-/ { print $2 }' |
			while read -r row; do
				for o in $(grep -oE -- '--[a-z0-9][a-z0-9-]*' <<<"$row"); do
					case "$PENDING" in *" $1:$o "*) continue 2 ;; esac
				done
				echo "$row"
			done
	} | grep -oE -- '(^|[[ |(,])--?[a-z0-9][a-z0-9-]*' | tr -d '[ |(,' | sort -u
}

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
	help=$("$UEVM" "$c" --help)
	[ "$c" = evmctl ] && continue	# evmctl's own help: COMPATIBILITY
	names=("$c")
	for s in $(awk -v c="$c" '/^Subcommands/ { on = 1; next } on && NF == 0 { exit }
			on && $2 == c { print $3 }' <<<"$help"); do
		names+=("$c $s")
	done
	for n in "${names[@]}"; do
		help=$("$UEVM" $n --help)
		missing=""
		for opt in $(help_opts "$c" "$help"); do
			grep -qE -- "(^|[^a-z0-9-])$opt([^a-z0-9-]|$)" <<<"$text" || missing="$missing $opt"
		done
		expect_eq "uevm-$c(1) documents every option of '$n --help'" "" "$missing"
	done
done

# The README's Commands block and `uevm --help`: the same commands.
readme_cmds=$(awk '/^## Commands/ { on = 1; next } on && /^```/ { if (inb) exit; inb = 1; next }
	inb && /^uevm / { print $2 }' "$ROOT/README.md" | sort -u)
expect_eq "README's Commands block lists the commands of uevm --help" \
	"$(sort -u <<<"$cmds")" "$readme_cmds"

# The README's first two code blocks are the two first commands.
blocks=$(awk '/^```/ { if (inb) { inb = 0; n++; if (n == 2) exit } else inb = 1; next }
	inb { print }' "$ROOT/README.md")
expect_eq "README opens with make demo, then make check" "make demo
make check" "$blocks"
before=$(sed -n '1,/^```sh$/p' "$ROOT/README.md" | grep -c '^```')
expect_eq "no code block before make demo" 1 "$before"

# What the README says `make check` does, from the Makefiles.
check_rule=$(sed -n '/^check:/,/^$/p' "$ROOT/Makefile")
nbuilds=$(grep -c '$(MAKE) all' <<<"$check_rule")
fuzz_time=$(grep -oE 'FUZZ_TIME=[0-9]+' <<<"$check_rule" | cut -d= -f2)
fuzz_default=$(sed -nE 's/^FUZZ_TIME *\?= *([0-9]+).*/\1/p' "$ROOT/fuzz/fuzz.mk")
times=(never once twice "three times" "four times" "five times")
para=$(awk '/^make check$/ { on = 1 } on && /^## / { exit } on' "$ROOT/README.md" | tr '\n' ' ')
expect_match "the Makefile's check rule builds and fuzzes" '^[1-5] [0-9]+$' "$nbuilds $fuzz_time"
expect_match "README: make check builds uevm ${times[$nbuilds]} (as the Makefile)" \
	"builds uevm ${times[$nbuilds]} " "$para"
expect_match "README: make check fuzzes each target $fuzz_time s (as the Makefile)" \
	"each fuzz target for $fuzz_time seconds" "$para"
expect_match "README: make fuzz's default time is FUZZ_TIME=$fuzz_default (fuzz/fuzz.mk)" \
	"make fuzz .*FUZZ_TIME=$fuzz_default s" "$(grep -E '^make fuzz ' "$ROOT/README.md")"
# The unit `make install` installs is made from the file the Makefile names.
unit_src=$(grep -oE '^\$\(B\)/uevmd\.service: *[^ ]+' "$ROOT/Makefile" | sed 's/.*: *//')
expect_match "the Makefile makes uevmd's unit from programs/uevmd/" '^programs/uevmd/uevmd\.service' "$unit_src"
expect_eq "README names uevmd's unit by its source, $unit_src" "$unit_src" \
	"$(grep -oE 'programs/uevmd/uevmd\.service[.a-z]*' "$ROOT/README.md" | sort -u | tr '\n' ' ' | sed 's/ $//')"

# The library's pages (man3): format clean, and every function the
# installed headers declare is in the SYNOPSIS of one of them (the inline
# *_init() functions are documented, the *_init_size() they call are not).
pages3=("$ROOT"/man/*.3)
expect_eq "man3 pages exist" 1 "$([ -e "${pages3[0]}" ] && echo 1 || echo 0)"
for p in "${pages3[@]}"; do
	name=$(basename "$p")
	w=$(groff -man -Tutf8 -ww -z "$p" 2>&1)
	expect_eq "$name: groff -ww prints no warning" "" "$w"
	w=$(MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null)
	expect_eq "$name: man -l prints no warning" "" "$w"
	expect_eq "$name: has NAME, SYNOPSIS, RETURN VALUE and THREAD SAFETY" 4 \
		"$(render "$p" | grep -cxE 'NAME|SYNOPSIS|RETURN VALUE|THREAD SAFETY')"
done
for p in "${pages3[@]}"; do
	render "$p" | awk '/^SYNOPSIS$/ { on = 1; next } /^[A-Z]/ { on = 0 } on'
done >"$T/synopses.txt"
undocumented=$(grep -ohE '\buevm_[a-z0-9_]+\(' "$ROOT"/include/uevm/*.h | tr -d '(' | sort -u |
	grep -v '_init_size$' | while read -r fn; do
		grep -qE "[ *]$fn\(" "$T/synopses.txt" || echo "$fn"
	done)
expect_eq "every public function is in a man3 SYNOPSIS" "" "$undocumented"
check "uevm(3) names every man3 page" bash -c '
	for p in "$1"/man/*.3; do
		n=$(basename "$p" .3); [ "$n" = uevm ] && continue
		grep -q "fB$n\\\\fR(3)" "$1/man/uevm.3" || { echo "uevm(3) lacks $n(3)"; exit 1; }
	done' _ "$ROOT"
