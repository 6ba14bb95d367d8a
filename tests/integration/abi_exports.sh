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

# ---- nothing public is missing -------------------------------------------------------------
# The headers' function declarations, from the preprocessor's view: every
# uevm_NAME( that is not a pointer type (*uevm_NAME)(.
for h in "$ROOT"/include/uevm/*.h; do echo "#include <uevm/$(basename "$h")>"; done |
	cc -E -P -I"$ROOT/include" -x c - | tr '\n' ' ' >"$T/pp"
grep -oE '\<uevm_[A-Za-z0-9_]+ *\(' "$T/pp" | grep -oE 'uevm_[A-Za-z0-9_]+' | sort -u >"$T/called"
grep -oE '\( *\* *uevm_[A-Za-z0-9_]+' "$T/pp" | grep -oE 'uevm_[A-Za-z0-9_]+' | sort -u >"$T/ptrs"
comm -23 "$T/called" "$T/ptrs" >"$T/declared"
check "the public headers declare uevm_* functions" test -s "$T/declared"
expect_eq "every uevm_* function in include/uevm/*.h is exported" "" \
	"$(comm -23 "$T/declared" "$T/defined" | tr '\n' ' ')"

# A deliberate check that the comparison can fail: a name that is not there.
echo uevm_no_such_function >>"$T/declared"
expect_eq "(self-check: a missing function would be reported)" uevm_no_such_function \
	"$(sort "$T/declared" | comm -23 - "$T/defined" | tr -d '\n')"
