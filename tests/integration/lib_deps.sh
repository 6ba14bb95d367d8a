#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What libuevm.so.0 needs: a program that only labels and verifies must not
# pull in FUSE, the TPM stack, libaudit or libsodium.  Those are loaded at
# first use (lib/dlopen.c) or live outside the library (the FUSE server in
# uevmfs/uevmd).  Checked here:
#  - readelf -d NEEDED of the library names none of them;
#  - a small program linked against the shared library labels and verifies,
#    and catches a tampered file, with none of them loaded;
#  - in a mount namespace where those libraries are unreadable, labelling
#    and verifying still work, and a passphrase or TPM key fails with an
#    error naming the missing library;
#  - `make install DESTDIR` then a static link with `pkg-config --static`.
source "$(dirname "$0")/../lib.sh"

B=$(cd "${UEVM_BUILD:-$(dirname "$UEVM")}" && pwd)
ROOT=$(cd "$TESTS_DIR/.." && pwd)
SRC=$TESTS_DIR/integration/lib_deps/label_verify.c
LIB=$B/libuevm.so.0
OPTIONAL='fuse|tss2|audit|sodium'
cd "$T" || exit 1
make_key "$T/k"

build_flags "$B"

# ---- NEEDED ------------------------------------------------------------------------------
readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >needed
check "the library has NEEDED entries (libcrypto)" grep -q '^libcrypto' needed
expect_eq "libuevm.so.0 NEEDs none of fuse, tss2, audit, sodium" "" \
	"$(grep -E "$OPTIONAL" needed | tr '\n' ' ')"

# ---- a program linked against the shared library ------------------------------------------
if cc -std=c11 -Wall -Wextra -Werror "${BUILD_CFLAGS[@]}" -I"$ROOT/include" -o lv_shared \
	"$SRC" -L"$B" -luevm -Wl,-rpath,"$B" 2>cc.err; then
	pass "a program builds against $B/libuevm.so"
else
	fail "a program builds against $B/libuevm.so" "$(head -n 5 cc.err)"
fi
ldd ./lv_shared >ldd.out 2>&1 || echo "ldd failed" >>ldd.out
expect_match "it runs with that build's libuevm.so.0" "libuevm.so.0 => $B/libuevm.so.0" \
	"$(cat ldd.out)"
expect_eq "nothing it loads is fuse, tss2, audit or sodium (ldd)" "" \
	"$(grep -E "$OPTIONAL|ldd failed" ldd.out | tr '\n' ' ')"
echo "some content" >f
expect_rc "it labels a file" 0 ./lv_shared label "raw:$T/k" f
expect_rc "it verifies the file" 0 ./lv_shared verify "raw:$T/k" f
expect_rc "uevm verify agrees with its labels" 0 "$UEVM" verify --hmac-key "raw:$T/k" f
echo "changed" >>f
expect_rc "it fails a file changed after labelling (exit 1)" 1 ./lv_shared verify "raw:$T/k" f

# ---- without the optional libraries --------------------------------------------------------
# Each one's file is covered by /dev/null in a private mount namespace, so
# dlopen fails there as on a system without it; nothing outside changes.
hide=()
for so in libfuse3.so.3 libtss2-esys.so.0 libtss2-tctildr.so.0 libtss2-mu.so.0 \
	libtss2-rc.so.0 libaudit.so.1 libsodium.so.23; do
	p=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ { print $NF; exit }')
	[ -n "$p" ] && hide+=("$(readlink -f "$p")")
done
check "the optional libraries are installed here (to hide them)" test "${#hide[@]}" -eq 7
without() {	# CMD...: run CMD with the optional libraries unreadable
	unshare -m --propagation private bash -c '
		n=$1; shift
		for f in "${@:1:$n}"; do mount --bind /dev/null "$f" || exit 99; done
		shift "$n"; exec "$@"' _ "${#hide[@]}" "${hide[@]}" "$@"
}
out=$(without "$B/uevmfs" --version 2>&1)
expect_match "(self-check: a program that NEEDs libfuse3 cannot start there)" \
	'libfuse3.so.3.*(cannot|too short|invalid ELF)' "$out"
echo "other content" >g
expect_rc "without them: the program labels" 0 without ./lv_shared label "raw:$T/k" g
expect_rc "without them: the program verifies" 0 without ./lv_shared verify "raw:$T/k" g
expect_rc "without them: uevm label -r" 0 without "$UEVM" label -r --hmac-key "raw:$T/k" g
expect_rc "without them: uevm verify" 0 without "$UEVM" verify --hmac-key "raw:$T/k" g

out=$(without "$UEVM" key generate --kdf-ops 1 --kdf-mem 8 --out k.pp --passphrase-fd 3 \
	3<<<pw 2>&1)
rc=$?
expect_eq "without libsodium: a passphrase key cannot be made (exit 2)" 2 "$rc"
expect_match "... and the error names the library" \
	'passphrase key support needs libsodium.so.23: ' "$out"
check "... and no key file is left" test ! -e k.pp
printf 'uevm-key-tpm v1\nparent owner-ecc-p256-srk\n' >fake.tpm
chmod 600 fake.tpm
out=$(without "$UEVM" verify --hmac-key "tpm:$T/fake.tpm" g 2>&1)
rc=$?
expect_eq "without the TPM stack: a tpm: key cannot be used (exit 2)" 2 "$rc"
expect_match "... and the error names the library" \
	'TPM support needs libtss2-esys.so.0: ' "$out"
out=$("$UEVM" verify --hmac-key "tpm:$T/fake.tpm" g 2>&1)
expect_match "with the TPM stack the same file gets past loading (a file error)" \
	'TPM key file' "$out"

# ---- make install, then a static link with pkg-config --static ---------------------------
if make -s -C "$ROOT" B="$B" "${BUILD_MAKE[@]}" DESTDIR="$T/root" PREFIX=/usr install \
	>make.log 2>&1; then
	pass "make install DESTDIR=\$T/root PREFIX=/usr"
else
	fail "make install DESTDIR=\$T/root PREFIX=/usr" "$(tail -n 5 make.log)"
fi
pc=$(find "$T/root" -name uevm.pc | head -n 1)
check "uevm.pc is installed" test -n "$pc"
libdir=$(dirname "$(dirname "$pc")")
check "libuevm.a is installed beside it" test -f "$libdir/libuevm.a"
check "the internal FUSE library is not installed" \
	test -z "$(find "$T/root" -name 'libuevm-fuse*')"
pkc=(pkg-config --define-variable=libdir="$libdir"
     --define-variable=includedir="$T/root/usr/include")
export PKG_CONFIG_PATH=$(dirname "$pc")
static=$("${pkc[@]}" --static --libs uevm)
expect_match "pkg-config --static --libs names libuevm's dependencies" '-lkeyutils' "$static"
expect_eq "... and none of the optional ones" "" "$(grep -oE "$OPTIONAL" <<<"$static")"
# -l:libuevm.a picks the archive where both are installed, as a packager would.
if cc -std=c11 -Wall -Wextra -Werror "${BUILD_CFLAGS[@]}" $("${pkc[@]}" --cflags uevm) \
	-o lv_static "$SRC" ${static/-luevm/-l:libuevm.a} 2>cc.err; then
	pass "a static link with pkg-config --static --libs succeeds"
else
	fail "a static link with pkg-config --static --libs succeeds" "$(head -n 5 cc.err)"
fi
readelf -d lv_static >static.dyn 2>&1 || echo "readelf failed" >>static.dyn
expect_eq "the statically linked program does not NEED libuevm.so" "" \
	"$(grep -E 'libuevm|NEEDED.*('"$OPTIONAL"')|readelf failed' static.dyn)"
echo "static" >h
expect_rc "it labels a file" 0 ./lv_static label "raw:$T/k" h
expect_rc "it verifies the file" 0 ./lv_static verify "raw:$T/k" h
expect_rc "the shared-library program agrees" 0 ./lv_shared verify "raw:$T/k" h
