#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Signing throughput: `uevm sign -r` (private key loaded once, all cores,
# and with -j 1) beside Debian's `evmctl ima_sign -r` (one thread, the key
# read again for every file) and `evmctl sign` per file, on a copy of a tree
# (default: 1000 generated files of 1-16 KiB) in the same run.  Prints
# files/s per tool and uevm's ratio to evmctl.
#
# Usage: bench/sign-tree.sh path/to/uevm [KEYTYPE] [NFILES]
#        KEYTYPE: rsa2048 (default), rsa4096, p256, p384
set -euo pipefail

die() { echo "bench: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: $0 path/to/uevm [rsa2048|rsa4096|p256|p384] [NFILES]"
UEVM=$(realpath -e "$1") || die "no uevm binary at '$1' (run make first)"
KEYTYPE=${2:-rsa2048}
NFILES=${3:-1000}
[ "$(id -u)" -eq 0 ] || die "run me as root: signatures live in security.* xattrs"
command -v evmctl >/dev/null || die "evmctl is missing (scripts/install-deps.sh)"

WORK=$(mktemp -d /var/tmp/uevm-bench-sign.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
case $KEYTYPE in
rsa2048) opt=(-newkey rsa:2048) ;;
rsa4096) opt=(-newkey rsa:4096) ;;
p256) opt=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1) ;;
p384) opt=(-newkey ec -pkeyopt ec_paramgen_curve:secp384r1) ;;
*) die "unknown key type $KEYTYPE" ;;
esac
openssl req -x509 "${opt[@]}" -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
	-subj /CN=bench -days 1 2>/dev/null
mkdir "$WORK/src"
for i in $(seq 1 "$NFILES"); do
	d=$WORK/src/d$((i % 20))
	[ -d "$d" ] || mkdir "$d"
	head -c $((1024 + (i * 7919) % 15360)) /dev/urandom >"$d/f$i"
done
for t in evmctl uevm uevm1; do
	cp -a "$WORK/src" "$WORK/$t"
done
cat "$WORK"/src/*/* >/dev/null	# warm cache

now() { date +%s.%N; }
rate() { echo "$NFILES $1" | awk '{printf "%.0f", $1 / $2}'; }
ratio() { echo "$1 $2" | awk '{printf "%.2f", $2 / $1}'; }

t0=$(now)
evmctl ima_sign -r -k "$WORK/key.pem" "$WORK/evmctl" >/dev/null 2>&1
t_evmctl=$(echo "$(now) $t0" | awk '{print $1 - $2}')
t0=$(now)
"$UEVM" sign -r --imasig -k "$WORK/key.pem" "$WORK/uevm"
t_uevm=$(echo "$(now) $t0" | awk '{print $1 - $2}')
t0=$(now)
"$UEVM" sign -r -j 1 --imasig -k "$WORK/key.pem" "$WORK/uevm1"
t_uevm1=$(echo "$(now) $t0" | awk '{print $1 - $2}')

# Both must have produced signatures that verify.
"$UEVM" sign -r --portable -k "$WORK/key.pem" "$WORK/uevm" >/dev/null
"$UEVM" verify -r --cert "$WORK/cert.pem" "$WORK/uevm" >/dev/null ||
	die "uevm's signatures do not verify"
evmctl ima_verify -k <(openssl x509 -in "$WORK/cert.pem" -outform DER) \
	"$WORK/evmctl/d1/f1" >/dev/null 2>&1 || die "evmctl's signature does not verify"

echo "signing $NFILES files, $KEYTYPE, IMA signatures (sha256), $(nproc) cores"
printf '  %-32s %8s files/s\n' "evmctl ima_sign -r" "$(rate "$t_evmctl")"
printf '  %-32s %8s files/s  (%sx evmctl)\n' "uevm sign -r -j 1" "$(rate "$t_uevm1")" \
	"$(ratio "$t_uevm1" "$t_evmctl")"
printf '  %-32s %8s files/s  (%sx evmctl)\n' "uevm sign -r" "$(rate "$t_uevm")" \
	"$(ratio "$t_uevm" "$t_evmctl")"
