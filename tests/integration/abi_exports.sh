#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What libuevm.so.0 exports: only the uevm_ namespace, every symbol
# versioned UEVM_0 (lib/libuevm.map), and every uevm_* function the public
# headers declare, so that no public call is missing from the ABI.
source "$(dirname "$0")/../lib.sh"

B=${UEVM_BUILD:-$(dirname "$UEVM")}
LIB=$B/libuevm.so.0
ROOT=$(cd "$TESTS_DIR/.." && pwd)
[ -f "$LIB" ] || { fail "the shared library is built" "no $LIB"; exit 1; }

# ---- only uevm_* ------------------------------------------------------------------------
# nm prints a versioned symbol as NAME@@UEVM_0.
nm -D --defined-only "$LIB" | awk '{ print $NF }' >"$T/nm"
sed 's/@.*//' "$T/nm" | sort >"$T/defined"
check "the library defines symbols" test -s "$T/defined"
expect_eq "nm -D --defined-only lists only uevm_* and the version node UEVM_0" "" \
	"$(grep -vE '^(uevm_[A-Za-z0-9_]+|UEVM_0)$' "$T/defined" | head -n 20 | tr '\n' ' ')"
expect_eq "no kernel-named symbol (ima_, evm_, integrity_) is exported" "" \
	"$(grep -E '^(ima|evm|integrity)_' "$T/defined" | head -n 5 | tr '\n' ' ')"

# ---- every one versioned UEVM_0 -----------------------------------------------------------
expect_eq "nm -D: every uevm_* symbol carries the default version @@UEVM_0" "" \
	"$(grep '^uevm_' "$T/nm" | grep -v '@@UEVM_0$' | head -n 5 | tr '\n' ' ')"
# objdump -T: "... .text  <size>  UEVM_0  name"; the version column is the
# one before the name.
objdump -T "$LIB" | awk '$NF ~ /^uevm_/ && $0 !~ /\*UND\*/ { print $(NF-1), $NF }' \
	>"$T/versioned"
expect_eq "objdump -T: every exported uevm_* symbol is versioned UEVM_0" "" \
	"$(awk '$1 != "UEVM_0"' "$T/versioned" | head -n 5 | tr '\n' ' ')"
expect_eq "objdump -T lists as many uevm_* as nm -D" \
	"$(grep -c '^uevm_' "$T/defined")" "$(wc -l <"$T/versioned")"
check "readelf shows the version definition UEVM_0" \
	grep -q 'Name: UEVM_0' <(readelf -V "$LIB")
check "the SONAME is libuevm.so.0" \
	grep -q 'Library soname: \[libuevm.so.0\]' <(readelf -d "$LIB")

# ---- exactly the public functions ----------------------------------------------------------
# The headers' function declarations as the compiler sees them (clang's
# AST; the inline *_init() helpers are static and not in the library), and
# the version script's list: all three sets must be equal, so nothing public
# is missing and nothing internal leaks.
for h in "$ROOT"/include/uevm/*.h; do echo "#include <uevm/$(basename "$h")>"; done >"$T/all.c"
clang -std=c11 -fsyntax-only -Xclang -ast-dump=json -I"$ROOT/include" "$T/all.c" 2>/dev/null |
	jq -r '.inner[] | select(.kind == "FunctionDecl" and .storageClass != "static") | .name' |
	sort -u >"$T/declared"
check "the public headers declare uevm_* functions" grep -q '^uevm_verify_file$' "$T/declared"
expect_eq "every function in include/uevm/*.h is exported" "" \
	"$(comm -23 "$T/declared" "$T/defined" | tr '\n' ' ')"
expect_eq "every exported function is declared in include/uevm/*.h (no internal uevm_* leaks)" "" \
	"$(grep '^uevm_' "$T/defined" | comm -13 "$T/declared" - | tr '\n' ' ')"
sed -nE 's/^[[:space:]]+(uevm_[A-Za-z0-9_]+);$/\1/p' "$ROOT/lib/libuevm.map" | sort >"$T/map"
expect_eq "lib/libuevm.map lists exactly the declared functions" "" \
	"$(diff "$T/declared" "$T/map" | grep '^[<>]' | tr '\n' ' ')"

# A deliberate check that the comparison can fail: a name that is not there.
echo uevm_no_such_function >>"$T/declared"
expect_eq "(self-check: a missing function would be reported)" uevm_no_such_function \
	"$(sort "$T/declared" | comm -23 - "$T/defined" | tr -d '\n')"
