#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The release tarball and what a packager does with it:
#  - `make dist` makes build/uevm-VERSION.tar.gz, every entry under
#    uevm-VERSION/, without build/ or .git;
#  - unpacked elsewhere, the tree builds with the flags dpkg-buildflags
#    gives (hardening=+all), they reach the compiler and the linker (and our
#    -Werror stays), and a few of its tests pass there; `make dist` works
#    there too, without git;
#  - `make install DESTDIR=... PREFIX=/usr` after that build (made for
#    /usr/local) installs a .pc and a unit that say /usr, the library in the
#    multiarch directory, uevm, uevmfs, uevmd and their man pages; `make
#    uninstall` takes away every file and every directory install made.
# Builds a whole tree (a few minutes on a busy machine).
source "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
VERSION=$(sed -n 's/^#define UEVM_VERSION "\(.*\)"/\1/p' "$ROOT/include/uevm/uevm.h")
D=uevm-$VERSION
for tool in git dpkg-buildflags readelf; do
	command -v $tool >/dev/null || { fail "$tool is installed (scripts/install-deps.sh)"; exit 1; }
done

# ---- make dist ---------------------------------------------------------------
# In the tree the test runs from (git archive of HEAD in a checkout, the
# tree itself in an unpacked tarball); it writes only build/$D.tar.gz.
make -C "$ROOT" dist >"$T/dist.out" 2>&1
expect_eq "make dist exits 0" 0 $?
tgz=$ROOT/build/$D.tar.gz
check "make dist makes build/$D.tar.gz" test -s "$tgz"
tar -tzf "$tgz" >"$T/list" || fail "the tarball lists"
expect_eq "every entry is under $D/" "" "$(grep -v "^$D/" "$T/list" | head -3)"
expect_eq "no build/ in the tarball" "" "$(grep -E "^$D/build(/|$)" "$T/list" | head -3)"
expect_eq "no .git in the tarball" "" "$(grep -E '(^|/)\.git(/|$)' "$T/list" | head -3)"
for f in Makefile COPYING NEWS.md README.md LICENSES/GPL-2.0-or-later.txt \
	 LICENSES/LGPL-2.1-or-later.txt include/uevm/uevm.h uevm.pc.in \
	 programs/uevmd/uevmd.service.in; do
	expect_eq "the tarball holds $f" "$D/$f" "$(grep -x "$D/$f" "$T/list")"
done

# ---- build the unpacked tree with dpkg-buildflags' flags --------------------
# (with SANITIZE=1 too when the suite runs against the ASan build)
MV=() BD=build/default
if [ "$(basename "${UEVM_BUILD:-}")" = san ]; then MV=(SANITIZE=1) BD=build/san; fi
mkdir "$T/x" && tar -C "$T/x" -xzf "$tgz" || { fail "the tarball unpacks"; exit 1; }
S=$T/x/$D
flags=$(cd "$S" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)
expect_match "dpkg-buildflags gives a fortifying CPPFLAGS" '_FORTIFY_SOURCE' "$flags"
(eval "$flags"; export CPPFLAGS CFLAGS LDFLAGS; cd "$S" && nice make -j2 all "${MV[@]}") >"$T/build.out" 2>&1
rc=$?
expect_eq "the unpacked tree builds with dpkg-buildflags' flags" 0 $rc
[ $rc -eq 0 ] || { tail -n 20 "$T/build.out"; exit 1; }
cc_line=$(grep -m1 -E " -c -o $BD/lib/ctx\\.o " "$T/build.out")
ld_line=$(grep -m1 -E -- "-o $BD/uevmd " "$T/build.out")
for f in $(eval "$flags"; echo "$CPPFLAGS $CFLAGS"); do
	case $f in -ffile-prefix-map=*) f=${f%%=*} ;; esac	# its path: the tree's
	expect_match "the compiler gets $f" " $f( |=|$)" "$cc_line"
done
expect_match "our -Werror follows the builder's flags" 'format-security .*-Werror ' "$cc_line"
expect_match "the linker gets -z relro -z now" '-Wl,-z,relro -Wl,-z,now' "$ld_line"
for b in uevm uevmd uevmfs libuevm.so.0; do
	dyn=$(readelf -d "$S/$BD/$b")
	expect_match "$b is linked with BIND_NOW" '\(BIND_NOW\)|\(FLAGS\).*BIND_NOW|\(FLAGS_1\).*NOW' "$dyn"
	expect_match "$b has a read-only relocation segment" 'GNU_RELRO' "$(readelf -lW "$S/$BD/$b")"
	expect_match "$b is fortified and stack-protected" '__stack_chk_fail' "$(readelf -sW --dyn-syms "$S/$BD/$b")"
	expect_match "$b calls fortified functions" '__[a-z_]+_chk@' "$(readelf -sW --dyn-syms "$S/$BD/$b")"
done

# ---- a few tests of the unpacked tree, from there ---------------------------
for u in kat_hmac ima_xattr_parse; do
	if [ -x "$S/$BD/tests/$u" ]; then
		out=$("$S/$BD/tests/$u" 2>&1); rc=$?
		expect_eq "unpacked: unit test $u passes" "0 0" "$rc $(grep -c '^FAIL' <<<"$out")"
	else
		fail "unpacked: unit test $u is built"
	fi
done
out=$(cd "$S" && UEVM=$S/$BD/uevm UEVM_BUILD=$S/$BD \
	bash tests/integration/cli_help.sh 2>&1)
expect_eq "unpacked: tests/integration/cli_help.sh has no FAIL" "" "$(grep '^FAIL' <<<"$out" | head -3)"
expect_match "unpacked: tests/integration/cli_help.sh passes checks" '^PASS: ' "$out"

# make dist without git: the same files (less the new build/).
(cd "$S" && make dist) >"$T/dist2.out" 2>&1
expect_eq "make dist in the unpacked tree (no git) exits 0" 0 $?
expect_match "it says it packs the tree" 'no git checkout' "$(cat "$T/dist2.out")"
expect_eq "it packs the same files" "$(grep -v '/$' "$T/list" | sort)" \
	"$(tar -tzf "$S/build/$D.tar.gz" | grep -v '/$' | sed 's|^\./||' | sort)"

# ---- install after a plain build, then uninstall ----------------------------
R=$T/root
mkdir "$R"
(cd "$S" && make install DESTDIR="$R" PREFIX=/usr "${MV[@]}") >"$T/install.out" 2>&1
rc=$?
expect_eq "make install DESTDIR PREFIX=/usr after a plain build exits 0" 0 $rc
[ $rc -eq 0 ] || tail -n 20 "$T/install.out"
ma=$(cc -print-multiarch)
libdir=/usr/lib${ma:+/$ma}
check "the library is in the multiarch $libdir" test -f "$R$libdir/libuevm.so.0"
pc=$R$libdir/pkgconfig/uevm.pc
check "uevm.pc is in $libdir/pkgconfig" test -f "$pc"
expect_eq "uevm.pc: prefix, libdir, includedir, version" \
	"prefix=/usr libdir=$libdir includedir=/usr/include Version: $VERSION" \
	"$(grep -E '^(prefix|libdir|includedir)=|^Version:' "$pc" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
unit=$(find "$R" -name uevmd.service)
expect_eq "the unit is in /usr/lib/systemd/system" "$R/usr/lib/systemd/system/uevmd.service" "$unit"
expect_match "the unit runs /usr/bin/uevmd" '^ExecStart=/usr/bin/uevmd ' "$(cat "$unit" 2>/dev/null)"
expect_eq "neither the .pc nor the unit says /usr/local" "" "$(grep -l /usr/local "$pc" "$unit")"
for f in bin/uevm bin/uevmfs bin/uevmd share/man/man1/uevm.1 share/man/man8/uevmd.8 \
	 share/man/man8/uevmfs.8 include/uevm/uevm.h; do
	check "install puts /usr/$f" test -e "$R/usr/$f"
done
for m in "$S"/man/*.3; do
	[ -e "$m" ] || break
	check "install puts man3 page $(basename "$m")" test -e "$R/usr/share/man/man3/$(basename "$m")"
done
(cd "$S" && make uninstall DESTDIR="$R" PREFIX=/usr "${MV[@]}") >"$T/uninstall.out" 2>&1
expect_eq "make uninstall exits 0" 0 $?
expect_eq "uninstall leaves no file" "" "$(find "$R" ! -type d | head -3)"
expect_eq "uninstall leaves no directory install made" "" "$(find "$R" -mindepth 1 -type d | head -3)"

# A directory that was there before install stays after uninstall.
mkdir -p "$R/usr/bin"
(cd "$S" && make install DESTDIR="$R" PREFIX=/usr "${MV[@]}" &&
	make uninstall DESTDIR="$R" PREFIX=/usr "${MV[@]}") \
	>"$T/again.out" 2>&1
expect_eq "install and uninstall again exit 0" 0 $?
expect_eq "a directory that was there before install stays" "$R/usr $R/usr/bin" \
	"$(find "$R" -mindepth 1 | sort | tr '\n' ' ' | sed 's/ $//')"
