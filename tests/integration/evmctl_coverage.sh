#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every command and option of evmctl 1.6.2 (its command table and getopt
# table, listed here by hand from its source) has an entry in
# uevm-evmctl(1)'s COMPATIBILITY section that starts with "Same" or
# "Difference:", and is run by at least one evmctl test.
source "$(dirname "$0")/../lib.sh"

MAN=$TESTS_DIR/../man/uevm-evmctl.1
EVTESTS=("$TESTS_DIR"/integration/evmctl_*.sh "$TESTS_DIR"/integration/interop_evmctl.sh)

COMMANDS="help import sign verify ima_sign ima_verify ima_setxattr ima_hash
ima_measurement ima_boot_aggregate ima_fix ima_clear sign_hash hmac"
# long option[/short option]
OPTIONS="--help/-h -v -n --imasig/-s --imahash/-d --hashalgo/-a --pass/-p
--sigfile/-f --uuid/-u --rsa --key/-k --type/-t --recursive/-r --m32 --m64
--portable/-o -i --smack --version --inode --uid --gid --mode --generation
--ima --selinux --caps --verify-sig --engine --xattr-user --ignore-violations
--pcrs --verify-bank --keyid --keyid-from-cert --veritysig --hwtpm --hmackey
--provider EVMCTL_KEY_PASSWORD"

# The COMPATIBILITY section of the page's source, as plain text: each entry
# is "%%TAG" (the line after .TP) followed by its text, roff macros and
# escapes removed.
section=$(sed -n '/^\.SH COMPATIBILITY/,/^\.SH /p' "$MAN" | sed '1d;$d' |
	awk '
		/^\.T[PQ]/ { tag = 1; next }	# .TQ: one more tag for the same text
		/^\.(SS|PP|IP)/ { print "%%"; next }
		{
			line = $0
			gsub(/\\-/, "-", line)
			gsub(/\\f[BIRP]/, "", line)
			gsub(/\\\(bu/, "", line)
			gsub(/\\&/, "", line)
			if (line ~ /^\.[A-Z]+ /) {	# .B, .BR, .I...: drop the macro and quotes
				sub(/^\.[A-Z]+ /, "", line)
				gsub(/"/, "", line)
			}
			print (tag ? "%%" : "") line
			tag = 0
		}')
if [ -z "$section" ]; then
	fail "uevm-evmctl(1) has a COMPATIBILITY section"
	exit 1
fi

# entry_of WORD: the text of the entry whose tag (or one of whose tags)
# names WORD.
entry_of() {
	awk -v w="$1" '
		/^%%/ {
			if (found && body) exit
			body = 0
			n = split(substr($0, 3), t, /[ ,]+/)
			for (i = 1; i <= n; i++) {
				sub(/[=[].*/, "", t[i])
				if (t[i] == w) found = 1
			}
			next
		}
		{ body = 1 }
		found { print }
	' <<<"$section"
}

check_entry() {	# word
	local text
	text=$(entry_of "$1" | tr -s ' \n' ' ' | sed 's/^ //')
	if [ -z "$text" ]; then
		fail "uevm-evmctl(1) COMPATIBILITY lists $1"
	elif grep -qE '^(Same[.,:; (]|Difference:)' <<<"$text"; then
		pass "uevm-evmctl(1) COMPATIBILITY: $1"
	else
		fail "uevm-evmctl(1) COMPATIBILITY: $1 says Same. or Difference:" "$text"
	fi
}

# tested WORD...: one of the evmctl tests runs it (as an argument word).
tested() {
	local w
	for w in "$@"; do
		if grep -qE -- "(^|[ \"'])$w([ =\"']|$)" "${EVTESTS[@]}"; then
			pass "an evmctl test runs $*"
			return
		fi
	done
	fail "an evmctl test runs $*"
}

for c in $COMMANDS; do
	check_entry "$c"
	tested "$c"
done
for o in $OPTIONS; do
	check_entry "${o%%/*}"
	tested ${o//\// }
done
