#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs the Debian 12 packages that uevm's build, tests and demo need.
# Safe to run again: it only calls apt-get for packages that are missing.
set -eu

# One package a line; a comment says what needs it.
# dpkg-dev, debhelper, fakeroot, lintian: make deb (debian/) and
# tests/integration/deb_package.sh.
# python3-cryptography, xxd: tests/integration/uevmd_keys.sh (the key
# entries of the list read as Keylime reads them).
# aide, gnuplot-nox: make bench (bench/run.sh: AIDE is the peer of two rows,
# gnuplot draws scaling.png) and tests/integration/bench_smoke.sh (file:
# that scaling.png is a PNG).
PACKAGES="
build-essential
pkg-config
dpkg-dev
debhelper
fakeroot
lintian
libssl-dev
libkeyutils-dev
libaudit-dev
keyutils
attr
acl
openssl
ima-evm-utils
libimaevm-dev
e2fsprogs
util-linux
mount
groff-base
man-db
clang
libclang-rt-14-dev
jq
strace
libsodium-dev
libtss2-dev
swtpm
swtpm-tools
tpm2-tools
libtss2-tcti-swtpm0
python3
time
iproute2
gdb
libfuse3-dev
fuse3
btrfs-progs
dosfstools
fusefat
libcap2-bin
softhsm2
libengine-pkcs11-openssl
opensc
stress-ng
logrotate
zsh
systemd
python3-cryptography
xxd
aide
gnuplot-nox
file
"

missing=""
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing" >&2
	echo "install-deps: run 'make deps' as root, or install them yourself" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
