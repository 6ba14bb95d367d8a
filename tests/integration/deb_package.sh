#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian packages (debian/, `make deb`):
#  - dpkg-buildpackage builds libuevm0, libuevm-dev, uevm, uevmd and uevmfs
#    from a copy of this tree under $T (this tree's build/ untouched), and
#    lintian reports no error and no warning on them;
#  - installed with dpkg -i: uevm runs, labels and verifies (and catches a
#    change), the binaries carry dpkg-buildflags' hardening, a program
#    builds and runs against the installed libuevm (pkg-config), uevmd
#    --check passes on the shipped configuration, the unit is installed,
#    disabled, and systemd-analyze accepts it, /etc/uevm/uevmd.conf is a
#    conffile, evmctl is an alternative pointing at uevm's evmctl mode that
#    never replaces ima-evm-utils' /usr/bin/evmctl;
#  - dpkg --purge leaves nothing: no file of the packages, no /etc/uevm, no
#    alternative, and ima-evm-utils' evmctl as it was.
# Runs as root, with the packages of `make deps`; it installs on the real
# root and purges again, also when it fails (cleanup hook).  The packages
# are built from the source tree, not from $UEVM_BUILD: it runs once, for
# the default build.
source "$(dirname "$0")/../lib.sh"

SRC=$(cd "$TESTS_DIR/.." && pwd)
PKGS=(libuevm0 libuevm-dev uevm uevmd uevmfs)

if [ -n "${UEVM_BUILD:-}" ] && [ "$(basename "$UEVM_BUILD")" != default ]; then
	echo "NOTE: packages are built from the source tree; tested once, with build/default"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	fail "deb: runs as root (dpkg -i)"
	exit 0
fi
for c in dpkg-buildpackage dh lintian fakeroot; do
	command -v "$c" >/dev/null || { fail "deb: $c missing" "run make deps"; exit 0; }
done

installed() {	# package: 0 if dpkg knows it (installed or config-files)
	local s
	s=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
	[ -n "$s" ] && [[ "$s" != *not-installed ]]
}
# Never purge an installation that was there before the test.
for p in "${PKGS[@]}"; do
	if installed "$p"; then
		fail "deb: $p already installed" "purge it first (dpkg --purge ${PKGS[*]})"
		exit 0
	fi
done
if update-alternatives --query evmctl >/dev/null 2>&1; then
	fail "deb: an evmctl alternative exists already" "$(update-alternatives --query evmctl | head -3)"
	exit 0
fi

# ima-evm-utils' evmctl (the tests use it): its state before, to compare.
debian_evmctl=
if [ -f /usr/bin/evmctl ] && [ ! -L /usr/bin/evmctl ] &&
   [ "$(dpkg-query -S /usr/bin/evmctl 2>/dev/null | cut -d: -f1)" = ima-evm-utils ]; then
	debian_evmctl=$(sha256sum /usr/bin/evmctl /usr/share/man/man1/evmctl.1.gz)
	debian_evmctl_version=$(evmctl --version 2>&1)
fi
evmctl_untouched() {	# name
	[ -n "$debian_evmctl" ] || return 0
	local now ver
	now=$(sha256sum /usr/bin/evmctl /usr/share/man/man1/evmctl.1.gz 2>&1)
	ver=$(evmctl --version 2>&1)
	if [ "$now" = "$debian_evmctl" ] && [ ! -L /usr/bin/evmctl ] &&
	   [ "$ver" = "$debian_evmctl_version" ] && dpkg --verify ima-evm-utils; then
		pass "$1"
	else
		fail "$1" "now: $now; --version: $ver"
	fi
}

# Build.
build_state() { ls -la --time-style=full-iso "$SRC/build" 2>&1; }
build_before=$(build_state)
rc=0
make -C "$SRC" --no-print-directory deb DEB_DIR="$T/deb" DEB_JOBS=2 >"$T/build.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
	fail "deb: make deb builds the packages" "exit $rc: $(tail -n 15 "$T/build.log")"
	exit 0
fi
pass "deb: make deb builds the packages"
debs=()
for p in "${PKGS[@]}"; do
	f=$(ls "$T/deb/${p}_"*.deb 2>/dev/null)
	[ -f "$f" ] && debs+=("$f")
done
expect_eq "deb: one .deb for each of ${PKGS[*]}" "${#PKGS[@]}" "${#debs[@]}"
expect_eq "deb: the source tree's build/ untouched" "$build_before" "$(build_state)"

# lintian: no error, no warning (overrides in debian/*.lintian-overrides).
rc=0
lint=$(lintian --fail-on error,warning "$T"/deb/*.changes 2>&1) || rc=$?
expect_eq "deb: lintian exits 0 on the .changes" 0 "$rc"
expect_eq "deb: lintian reports no E: or W:" "" "$(grep -E '^[EW]: ' <<<"$lint")"

# What the packages hold.
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
contents() { dpkg-deb -c "$T/deb/$1"_*.deb | awk '{print $6}' | sed 's|^\.||'; }
expect_match "deb: libuevm0 holds the shared library in the multiarch dir" \
	"^/usr/lib/$MA/libuevm\.so\.0$" "$(contents libuevm0)"
expect_match "deb: libuevm-dev holds the .pc" "^/usr/lib/$MA/pkgconfig/uevm\.pc$" "$(contents libuevm-dev)"
expect_match "deb: libuevm-dev holds the static library" "^/usr/lib/$MA/libuevm\.a$" "$(contents libuevm-dev)"
expect_match "deb: libuevm-dev holds the headers" "^/usr/include/uevm/uevm\.h$" "$(contents libuevm-dev)"
if compgen -G "$SRC/man/*.3" >/dev/null; then
	expect_match "deb: libuevm-dev holds the man3 pages" "^/usr/share/man/man3/.*\.3\.gz$" "$(contents libuevm-dev)"
fi
# Where the library exports only uevm_* (version script UEVM_0): the
# symbols file, and nothing else exported.
if [ -e "$SRC/lib/libuevm.map" ]; then
	expect_match "deb: libuevm0 has a symbols file (UEVM_0)" '^ uevm_[a-z0-9_]+@UEVM_0 ' \
		"$(dpkg-deb --ctrl-tarfile "$T"/deb/libuevm0_*.deb | tar -xO ./symbols 2>&1)"
	dpkg-deb -x "$T"/deb/libuevm0_*.deb "$T/lib0"
	expect_eq "deb: libuevm.so.0 exports only uevm_* (and its version node)" "" \
		"$(nm -D --defined-only "$T/lib0/usr/lib/$MA/libuevm.so.0" | awk '{ n = $3; sub(/@.*/, "", n) } n !~ /^uevm_/ && n != "UEVM_0" { print $3 }')"
fi
conffiles=$(dpkg-deb --ctrl-tarfile "$T"/deb/uevmd_*.deb | tar -xO ./conffiles)
expect_match "deb: /etc/uevm/uevmd.conf is a conffile of uevmd" '^/etc/uevm/uevmd\.conf$' "$conffiles"
if [ -e "$SRC/programs/uevmd/uevmd.logrotate" ]; then
	expect_match "deb: /etc/logrotate.d/uevmd is a conffile of uevmd" '^/etc/logrotate\.d/uevmd$' "$conffiles"
fi
if [ -e "$SRC/programs/uevm/uevm.bash-completion" ]; then
	expect_match "deb: uevm holds its bash completion" \
		'^/usr/share/bash-completion/completions/uevm$' "$(contents uevm)"
fi

# Install.  From here on the cleanup hook purges whatever is installed.
purge_all() {
	local p left=()
	for p in "${PKGS[@]}"; do installed "$p" && left+=("$p"); done
	[ ${#left[@]} -eq 0 ] || dpkg --purge "${left[@]}" >/dev/null 2>&1
}
on_exit purge_all
rc=0
dpkg -i "${debs[@]}" >"$T/install.log" 2>&1 || rc=$?
expect_eq "deb: dpkg -i installs the five packages" 0 "$rc"
[ "$rc" -eq 0 ] || { tail -n 20 "$T/install.log"; exit 0; }
for p in "${PKGS[@]}"; do
	expect_eq "deb: $p installed" "install ok installed" "$(dpkg-query -W -f='${Status}' "$p")"
	dpkg-query -L "$p" >>"$T/files"
done

version=$(sed -n 's/^#define UEVM_VERSION "\(.*\)"/\1/p' "$SRC/include/uevm/uevm.h")
expect_eq "deb: uevm --version" "uevm $version" "$(/usr/bin/uevm --version 2>&1)"
expect_eq "deb: uevmd -V" "uevmd $version" "$(/usr/bin/uevmd -V 2>&1)"
expect_match "deb: uevmfs --version" "^uevmfs $version" "$(/usr/bin/uevmfs --version 2>&1)"

# Built with dpkg-buildflags (hardening=+all): full RELRO, bind now, PIE.
for f in /usr/bin/uevm /usr/bin/uevmd /usr/bin/uevmfs "/usr/lib/$MA/libuevm.so.0"; do
	hard=$(readelf -d -l -W "$f" 2>&1)
	expect_match "deb: $f: RELRO" 'GNU_RELRO' "$hard"
	expect_match "deb: $f: bind now" 'BIND_NOW|Flags: NOW' "$hard"
done
expect_match "deb: /usr/bin/uevm is PIE" 'Flags: .*PIE' "$(readelf -d /usr/bin/uevm)"

# A program built against the installed library with pkg-config (the
# digest checked against SHA-256's published value for "abc").
expect_eq "deb: pkg-config finds uevm $version" "$version" "$(pkg-config --modversion uevm 2>&1)"
expect_eq "deb: uevm.pc's libdir is multiarch" "/usr/lib/$MA" "$(pkg-config --variable=libdir uevm 2>&1)"
cat >"$T/prog.c" <<'EOF'
#include <stdio.h>
#include <uevm/uevm.h>

int main(void)
{
	uint8_t d[64];
	int algo = uevm_hash_algo_by_name("sha256");
	unsigned int i;

	if (algo < 0 || uevm_hash_buffer(algo, "abc", 3, d) < 0)
		return 2;
	for (i = 0; i < uevm_hash_algo_digest_size(algo); i++)
		printf("%02x", d[i]);
	printf("\n");
	return 0;
}
EOF
# shellcheck disable=SC2046	# pkg-config's words are separate arguments
check "deb: a program builds against the installed libuevm" \
	cc -Wall -Wextra -Werror -o "$T/prog" "$T/prog.c" $(pkg-config --cflags --libs uevm)
# (through /lib where /lib is /usr/lib: compare the files, not the names)
expect_eq "deb: it runs on /usr/lib/$MA/libuevm.so.0" "$(readlink -f "/usr/lib/$MA/libuevm.so.0")" \
	"$(readlink -f "$(ldd "$T/prog" | awk '$1 == "libuevm.so.0" { print $3 }')")"
expect_eq "deb: it hashes with the installed libuevm" \
	ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad "$("$T/prog" 2>&1)"

# uevmd --check on the configuration as shipped, which is to be safe on an
# unlabelled system (mode = log): it loads (--no-walk), finds nothing to
# refuse in an empty directory, and names an unlabelled file enforcing
# would refuse.  Until uevmd and its shipped configuration are there, only
# noted.
if ! /usr/bin/uevmd --help 2>&1 | grep -q -- '--under'; then
	echo "NOTE: uevmd --help lists no --check --under yet: not run"
elif ! grep -Eq '^[[:space:]]*mode[[:space:]]*=[[:space:]]*log' /etc/uevm/uevmd.conf; then
	echo "NOTE: the shipped /etc/uevm/uevmd.conf is not the safe default (mode = log) yet: uevmd --check not run"
else
	expect_rc "deb: uevmd --check --no-walk loads the shipped configuration" 0 \
		/usr/bin/uevmd --check --no-walk
	mkdir "$T/chk" "$T/chk/empty" "$T/chk/one"
	expect_rc "deb: uevmd --check: nothing to refuse in an empty directory (0)" 0 \
		/usr/bin/uevmd --check --under "$T/chk/empty"
	echo unlabelled >"$T/chk/one/f"
	rc=0
	out=$(/usr/bin/uevmd --check --under "$T/chk/one" 2>&1) || rc=$?
	expect_eq "deb: uevmd --check: an unlabelled file would be refused (1)" 1 "$rc"
	expect_match "deb: uevmd --check names it" "$T/chk/one/f \\(missing-hash\\)" "$out"
fi

# A real label and verify with the installed uevm.
make_key "$T/k"
echo "packaged" >"$T/file"
expect_rc "deb: uevm label" 0 /usr/bin/uevm label --hmac-key "raw:$T/k" "$T/file"
expect_rc "deb: uevm verify of the labelled file" 0 /usr/bin/uevm verify --hmac-key "raw:$T/k" "$T/file"
echo "changed" >>"$T/file"
expect_rc "deb: uevm verify of the changed file fails (1)" 1 /usr/bin/uevm verify --hmac-key "raw:$T/k" "$T/file"

# evmctl: the alternative, and Debian's evmctl left alone.
expect_match "deb: evmctl alternative registered for /usr/bin/uevm" \
	'^Alternative: /usr/bin/uevm$' "$(update-alternatives --query evmctl 2>&1)"
expect_eq "deb: /etc/alternatives/evmctl -> /usr/bin/uevm" /usr/bin/uevm "$(readlink /etc/alternatives/evmctl)"
expect_match "deb: uevm runs its evmctl mode under the alternative's name" \
	"uevm $version in evmctl mode" "$(/etc/alternatives/evmctl -v --version 2>&1)"
if [ -n "$debian_evmctl" ]; then
	evmctl_untouched "deb: ima-evm-utils' evmctl untouched by the install"
else
	expect_eq "deb: evmctl resolves to uevm" /usr/bin/uevm "$(readlink -f "$(command -v evmctl)")"
	expect_match "deb: evmctl runs uevm's evmctl mode" "uevm $version in evmctl mode" "$(evmctl -v --version 2>&1)"
fi

# The systemd unit: installed, disabled, accepted by systemd-analyze.
UNIT=/lib/systemd/system/uevmd.service
expect_eq "deb: the unit belongs to uevmd" "uevmd: $UNIT" "$(dpkg-query -S "$UNIT" 2>&1)"
expect_match "deb: the unit starts /usr/bin/uevmd" '^ExecStart=/usr/bin/uevmd ' "$(cat "$UNIT")"
expect_eq "deb: the unit is installed disabled" "" \
	"$(find /etc/systemd/system -name uevmd.service 2>/dev/null)"
if command -v systemd-analyze >/dev/null; then
	rc=0
	out=$(systemd-analyze verify "$UNIT" 2>&1) || rc=$?
	expect_eq "deb: systemd-analyze verify accepts the unit" "0:" "$rc:$out"
else
	echo "NOTE: no systemd-analyze: unit not verified"
fi

# Purge: nothing left.
rc=0
dpkg --purge uevmfs uevmd uevm libuevm-dev libuevm0 >"$T/purge.log" 2>&1 || rc=$?
expect_eq "deb: dpkg --purge removes the five packages" 0 "$rc"
for p in "${PKGS[@]}"; do
	installed "$p" && fail "deb: $p purged" "$(dpkg-query -W -f='${Status}' "$p")"
done
left=()
while read -r f; do
	[ -e "$f" ] || [ -L "$f" ] || continue
	# A directory stays when another package has it (/, /usr/bin, /lib ...).
	[ "$f" = /. ] && continue
	[ -d "$f" ] && dpkg-query -S "$f" >/dev/null 2>&1 && continue
	left+=("$f")
done < <(sort -u "$T/files")
expect_eq "deb: no file or own directory of the packages left" "" "${left[*]}"
left=()
for f in /etc/uevm /var/lib/uevm /etc/alternatives/evmctl /etc/alternatives/evmctl.1.gz \
	 /var/lib/dpkg/alternatives/evmctl /var/lib/systemd/deb-systemd-helper-enabled/uevmd.service.dsh-also; do
	if [ -e "$f" ] || [ -L "$f" ]; then left+=("$f"); fi
done
expect_eq "deb: no /etc/uevm, /var/lib/uevm, alternative or systemd state left" "" "${left[*]}"
expect_rc "deb: no evmctl alternative after the purge" 2 update-alternatives --query evmctl
if [ -n "$debian_evmctl" ]; then
	evmctl_untouched "deb: ima-evm-utils' evmctl untouched after the purge"
else
	expect_eq "deb: no /usr/bin/evmctl after the purge" "" "$(ls /usr/bin/evmctl 2>/dev/null)"
fi
