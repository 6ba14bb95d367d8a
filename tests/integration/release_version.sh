#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One version number, UEVM_VERSION in include/uevm/uevm.h, reported by
# everything that reports one: uevm --version/-V/version, uevmd -V and
# --version, uevmfs -V and --version, uevm.pc, uevm_version() (once the
# header declares it), the man pages' headers, the tarball `make dist`
# names and NEWS.md's newest entry.  The evmctl mode keeps evmctl's own
# "evmctl X.Y.Z" line and tells uevm's version on stderr with -v.
source "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
B=${UEVM_BUILD:-$(dirname "$UEVM")}
V=$(sed -n 's/^#define UEVM_VERSION "\(.*\)"$/\1/p' "$ROOT/include/uevm/uevm.h")
expect_match "uevm.h defines UEVM_VERSION as x.y.z, once" '^[0-9]+\.[0-9]+\.[0-9]+$' "$V"

expect_eq "uevm --version" "uevm $V" "$("$UEVM" --version)"
expect_eq "uevm -V" "uevm $V" "$("$UEVM" -V)"
expect_eq "uevm version" "uevm $V" "$("$UEVM" version)"
expect_eq "uevmd --version" "uevmd $V" "$("$B/uevmd" --version)"
expect_eq "uevmd -V" "uevmd $V" "$("$B/uevmd" -V)"
expect_match "uevmfs --version" "^uevmfs $V, FUSE [0-9]" "$("$B/uevmfs" --version)"
expect_eq "uevmfs -V prints what --version does" "$("$B/uevmfs" --version)" "$("$B/uevmfs" -V)"

# evmctl mode: evmctl's format on stdout, whatever uevm's version.
out=$("$UEVM" evmctl --version 2>"$T/err"); rc=$?
expect_eq "uevm evmctl --version exits 0" 0 $rc
expect_match "uevm evmctl --version prints evmctl's line" '^evmctl [0-9]+\.[0-9]+(\.[0-9]+)?$' "$out"
expect_eq "uevm evmctl --version: nothing on stderr" "" "$(cat "$T/err")"
ln -s "$UEVM" "$T/evmctl"
expect_eq "evmctl --version (a link) prints the same" "$out" "$("$T/evmctl" --version 2>/dev/null)"
"$T/evmctl" -v --version >/dev/null 2>"$T/err"
expect_match "evmctl -v --version names uevm $V on stderr" "^uevm $V in evmctl mode" "$(cat "$T/err")"

expect_eq "uevm.pc's Version" "Version: $V" "$(grep '^Version:' "$B/uevm.pc")"

# Every man page's .TH names uevm's version.
bad=""
for p in "$ROOT"/man/*.[1-9]; do
	th=$(grep -m1 '^\.TH ' "$p")
	grep -qF "\"uevm $V\"" <<<"$th" || bad="$bad $(basename "$p")"
done
expect_eq "every man page's .TH says \"uevm $V\"" "" "$bad"

expect_match "make dist names build/uevm-$V.tar.gz" "build/uevm-$V\\.tar\\.gz" \
	"$(make -s -n -C "$ROOT" dist 2>/dev/null)"
expect_match "NEWS.md's newest entry is $V" "^## $V( |$)" "$(grep -m1 '^## ' "$ROOT/NEWS.md")"

# uevm_version(), once the library has it: the header's number.
if grep -q 'uevm_version *(' "$ROOT"/include/uevm/*.h; then
	cat >"$T/v.c" <<'EOC'
#include <stdio.h>
#include <uevm/uevm.h>
int main(void) { puts(uevm_version()); return 0; }
EOC
	build_flags "$B"
	if cc "${BUILD_CFLAGS[@]}" -I"$ROOT/include" -o "$T/v" "$T/v.c" -L"$B" -luevm -Wl,-rpath,"$B" 2>"$T/err"; then
		expect_eq "uevm_version()" "$V" "$("$T/v")"
	else
		fail "a program calling uevm_version() builds against $B/libuevm.so" "$(head -3 "$T/err")"
	fi
fi
