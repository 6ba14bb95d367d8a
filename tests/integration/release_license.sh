#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Licensing as COPYING states it:
#  - every source file (C, headers, shell, Python, make files, templates,
#    scripts) names its license in an SPDX-License-Identifier line near the
#    top, and only licenses whose text is in LICENSES/;
#  - libuevm (lib/, include/) is LGPL-2.1-or-later, the programs
#    (programs/) GPL-2.0-or-later;
#  - COPYING, the license texts (verbatim, as Debian ships them) and the
#    README's License section with the copyright holder are there.
source "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
cd "$ROOT" || exit 2
HOLDER="Copyright (C) 2026 The uevm authors"

# The tracked files in a checkout, the tree less build/ in an unpacked tarball.
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$ROOT" ]; then
	git ls-files >"$T/files"
else
	find . -path ./build -prune -o -path ./.git -prune -o -type f -print |
		sed 's|^\./||' | sort >"$T/files"
fi
# Source files: by name, or a script's #! line.  Data (fuzz seeds,
# configurations, documents) is not.
is_source() {
	case $1 in
	fuzz/corpus/*) return 1 ;;
	*.c | *.h | *.sh | *.py | *.mk | *.in | Makefile) return 0 ;;
	esac
	[ "$(head -c 2 "$1")" = "#!" ]
}
nsrc=0 untagged="" unknown="" wrong_lib="" wrong_prog=""
while read -r f; do
	[ -f "$f" ] && is_source "$f" || continue
	nsrc=$((nsrc + 1))
	id=$(head -n 3 "$f" | sed -n 's/.*SPDX-License-Identifier: \([A-Za-z0-9.+-]*\).*/\1/p' | head -n 1)
	if [ -z "$id" ]; then
		untagged="$untagged $f"
		continue
	fi
	[ -f "LICENSES/$id.txt" ] || unknown="$unknown $f($id)"
	case $f in
	lib/* | include/*) [ "$id" = LGPL-2.1-or-later ] || wrong_lib="$wrong_lib $f($id)" ;;
	programs/*) [ "$id" = GPL-2.0-or-later ] || wrong_prog="$wrong_prog $f($id)" ;;
	esac
done <"$T/files"
expect_match "source files found" '^[1-9][0-9]{2,}$' "$nsrc"
expect_eq "every source file has an SPDX-License-Identifier line in its first 3" "" "$untagged"
expect_eq "every SPDX identifier has its text in LICENSES/" "" "$unknown"
expect_eq "lib/ and include/ are LGPL-2.1-or-later" "" "$wrong_lib"
expect_eq "programs/ are GPL-2.0-or-later" "" "$wrong_prog"
expect_eq "lib/ and include/ have files" 1 "$(grep -qE '^(lib|include)/.*\.[ch]$' "$T/files" && echo 1)"

# The texts, verbatim where Debian's copies are at hand.
for pair in GPL-2.0-or-later:GPL-2 LGPL-2.1-or-later:LGPL-2.1; do
	id=${pair%%:*} deb=/usr/share/common-licenses/${pair#*:}
	check "LICENSES/$id.txt exists" test -s "LICENSES/$id.txt"
	[ -f "$deb" ] && check "LICENSES/$id.txt is $deb verbatim" cmp -s "$deb" "LICENSES/$id.txt"
	expect_match "COPYING names $id" "$id" "$(cat COPYING)"
done
check "COPYING has the line '$HOLDER'" grep -qFx "$HOLDER" COPYING
expect_match "COPYING puts lib/ and include/ under the LGPL" 'lib/ and include/' "$(cat COPYING)"
license=$(awk '/^## License/ { on = 1; next } on && /^## / { exit } on' README.md)
expect_match "README has a License section naming the copyright holder" 'Copyright \(C\) 2026 The uevm authors' "$license"
