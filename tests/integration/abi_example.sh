#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# examples/verify-file.c, built as an application would be: against the
# *installed* library (make install DESTDIR=$T/root PREFIX=/usr) with
# `pkg-config --cflags --libs uevm` and nothing from the source tree.  It
# labels a file and verifies it and a tampered copy, each answer checked
# against `uevm verify`; the public structs' size check refuses a struct
# that was not initialised.
source "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$TESTS_DIR/.." && pwd)
: "${UEVM_BUILD:=$ROOT/build/default}"
build_flags "$UEVM_BUILD"
make -s -C "$ROOT" "${BUILD_MAKE[@]}" install DESTDIR="$T/root" PREFIX=/usr >"$T/install.log" 2>&1
# The library directory is the multiarch one where the compiler has it.
LIBD=$T/root/usr/lib$(ma=$(cc -print-multiarch 2>/dev/null); [ -z "$ma" ] || echo "/$ma")
check "make install DESTDIR=... PREFIX=/usr" test -f "$LIBD/pkgconfig/uevm.pc"
for p in "$ROOT"/man/*.3; do
	check "man3 page $(basename "$p") installed" cmp -s "$p" "$T/root/usr/share/man/man3/$(basename "$p")"
done

# pkg-config over the staged tree: the .pc says /usr, the sysroot maps it.
expect_match "the installed uevm.pc says PREFIX=/usr" '^prefix=/usr$' "$(cat "$LIBD/pkgconfig/uevm.pc")"
export PKG_CONFIG_PATH=$LIBD/pkgconfig PKG_CONFIG_SYSROOT_DIR=$T/root
flags=$(pkg-config --cflags --libs uevm)
expect_match "pkg-config --cflags --libs uevm names the staged tree" "^-I$T/root/usr/include .*-L$LIBD -luevm" "$flags"
expect_eq "pkg-config --modversion is the header's UEVM_VERSION" \
	"$(sed -n 's/^#define UEVM_VERSION "\(.*\)"/\1/p' "$ROOT/include/uevm/uevm.h")" "$(pkg-config --modversion uevm)"
cp "$ROOT/examples/verify-file.c" "$T/"
# shellcheck disable=SC2086
out=$(cd "$T" && cc -std=c11 -Wall -Wextra -pedantic -Werror "${BUILD_CFLAGS[@]}" -o verify-file verify-file.c $flags 2>&1)
expect_eq "verify-file builds against the installed library" "" "$out"
export LD_LIBRARY_PATH=$LIBD
check "verify-file uses the installed libuevm.so" \
	grep -q "$LIBD/libuevm.so" <(ldd "$T/verify-file")

make_key "$T/k"
D=$T/files
mkdir -p "$D"
printf 'hello\n' >"$D/good"
printf 'hello\n' >"$D/bad"
out=$("$T/verify-file" --label "raw:$T/k" "$D/good" "$D/bad")
expect_eq "verify-file --label exits 0" 0 $?
expect_eq "it says what it labelled" "$D/good: labelled
$D/bad: labelled" "$out"
expect_rc "uevm verify accepts what verify-file labelled" 0 \
	"$UEVM" verify --hmac-key "raw:$T/k" "$D/good" "$D/bad"
printf 'tampered\n' >"$D/bad"

out=$("$T/verify-file" "raw:$T/k" "$D/good")
expect_eq "verify-file passes the labelled file" "0 $D/good: pass" "$? $out"
expect_rc "... as uevm verify does" 0 "$UEVM" verify --hmac-key "raw:$T/k" "$D/good"
out=$("$T/verify-file" "raw:$T/k" "$D/bad")
rc=$?
expect_eq "verify-file fails the tampered file with 1" 1 "$rc"
expect_match "... naming the kernel's cause" "^$D/bad: fail \(invalid-hash" "$out"
uout=$("$UEVM" verify --hmac-key "raw:$T/k" "$D/bad" 2>&1)
expect_eq "... as uevm verify does (exit 1)" 1 $?
expect_match "... with the same cause" "invalid-hash" "$uout"
make_key "$T/k2"
out=$("$T/verify-file" "raw:$T/k2" "$D/good")
expect_eq "another key fails the good file" 1 $?
expect_rc "... as uevm verify does" 1 "$UEVM" verify --hmac-key "raw:$T/k2" "$D/good"
out=$("$T/verify-file" "raw:$T/k" "$D/missing" 2>&1)
expect_eq "a missing file is an error (2)" 2 $?
expect_match "... naming it" "$D/missing" "$out"

# The sizes the public structs carry are checked: a struct uevm_config
# that no init function set is refused with a reason, not misread.
cat >"$T/size.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <uevm/uevm.h>
int main(void)
{
	struct uevm_config cfg;
	struct uevm_walk_opts wo;
	struct uevm_ctx *ctx = NULL;
	const char *paths[] = { "." };

	memset(&cfg, 0, sizeof(cfg));
	if (uevm_ctx_new(&cfg, NULL, &ctx) != -22 || !strstr(uevm_last_error(), "uevm_config"))
		return 1;
	uevm_config_init(&cfg);
	if (cfg.size != sizeof(cfg) || uevm_ctx_new(&cfg, NULL, &ctx) != 0)
		return 2;
	memset(&wo, 0, sizeof(wo));
	if (uevm_walk(paths, 1, &wo, NULL, NULL) != -22)
		return 3;
	uevm_ctx_free(ctx);
	printf("%s\n", uevm_version());
	return 0;
}
EOF
# shellcheck disable=SC2086
out=$(cd "$T" && cc -std=c11 -Wall -Wextra -Werror "${BUILD_CFLAGS[@]}" -o size size.c $flags 2>&1)
expect_eq "size check program builds" "" "$out"
out=$("$T/size")
expect_eq "an uninitialised struct uevm_config/uevm_walk_opts is refused; uevm_version()" \
	"0 $(pkg-config --modversion uevm)" "$? $out"
