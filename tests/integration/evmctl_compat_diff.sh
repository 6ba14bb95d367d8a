#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevm's evmctl mode against Debian's evmctl 1.4, line by line: stdout,
# stderr and the exit status, on the commands whose formats did not change
# between 1.4 and 1.6.  Run both as a link named evmctl and as
# `uevm evmctl`.  Where 1.6 (which uevm follows) prints differently from
# 1.4, the line is named and filtered:
#   "keyid XXXX (from CERT)"  1.6 reports the SKID keyid of each certificate;
#   "generation: N"           1.6 no longer prints it for portable signatures;
#   "errno: ..."              ima_measurement/ima_boot_aggregate: 1.6 resets
#                             errno after optional probes, 1.4 reports it.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"

if ! command -v evmctl >/dev/null; then
	fail "evmctl is installed (package ima-evm-utils)"
	exit 1
fi

K=$T/keys
mkdir "$K"
SIG_KEYS="rsa2048 p256" make_sig_keys "$K"
W=$T/w
mkdir "$W"
cd "$W" || exit 1

source "$TESTS_DIR/evmctl_diff_lib.sh"

head -c 10000 /dev/urandom >f
printf 'second file\n' >g
mkdir -p tree/sub
echo one >tree/a
echo two >tree/sub/b
: >empty

# ---- ima_hash ---------------------------------------------------------------
for algo in md5 sha1 sha224 sha256 sha384 sha512; do
	same "ima_hash -a $algo" "" -a "$algo" ima_hash f
	expect_eq "ima_hash -a $algo: the same security.ima as evmctl" \
		"$("$DEB" -a "$algo" -n ima_hash f 2>/dev/null)" "$(xattr_hex security.ima f)"
done
same "ima_hash of an empty file" "" ima_hash empty
same "-n ima_hash" "" -n ima_hash g
same "ima_hash -r (relative names, readdir order)" "" ima_hash -r tree
same "ima_hash of a missing file" "" ima_hash missing
same "ima_hash of a directory" "" ima_hash tree
same "ima_hash without a file" "" ima_hash
same "ima_hash with an unknown algorithm" "" -a nosuch ima_hash f

# ---- ima_sign, ima_verify (RSA PKCS#1 v1.5 is deterministic) ----------------
for algo in sha1 sha256 sha512; do
	same "ima_sign -a $algo" "" -a "$algo" ima_sign -k "$K/rsa2048.key" f
done
same "ima_sign -n" "" -n ima_sign -k "$K/rsa2048.key" g
same "ima_sign --sigfile" "" ima_sign -f -k "$K/rsa2048.key" g
expect_eq "the .sig file equals security.ima" "$(xattr_hex security.ima g)" "$(hex_of_file g.sig)"
same "ima_sign with a missing key" "" ima_sign -k "$K/missing.key" g
same "ima_verify" "" ima_verify -k "$K/rsa2048.der" f
same "ima_verify of several files" "" ima_verify -k "$K/rsa2048.der" f g
same "ima_verify --sigfile" "" ima_verify -f -k "$K/rsa2048.der" g
same "ima_verify with the wrong certificate" "" ima_verify -k "$K/p256.der" f
same "ima_verify of a file without security.ima" "" ima_verify -k "$K/rsa2048.der" empty
same "ima_verify of a missing file" "" ima_verify -k "$K/rsa2048.der" missing
cp f fbad
"$DEB" ima_sign -k "$K/rsa2048.key" fbad >/dev/null 2>&1
echo tamper >>fbad
same "ima_verify of a changed file" "" ima_verify -k "$K/rsa2048.der" fbad

# ---- ECDSA: random signatures; the logs and status must match -----------------
"$DEB" ima_sign -k "$K/p256.key" g >/dev/null 2>&1
same "ima_verify of evmctl's ECDSA signature" "" ima_verify -k "$K/p256.der" g
"$LINKDIR/evmctl" ima_sign -k "$K/p256.key" g >"$T/u.out" 2>"$T/u.err"
expect_eq "ECDSA ima_sign: stderr as evmctl's (hash, signature size may vary)" \
	"hash(sha256): $(sha256sum g | cut -d' ' -f1)" "$(head -n1 "$T/u.err")"
expect_match "... evm/ima signature line" "^evm/ima signature: [0-9]+ bytes$" "$(tail -n1 "$T/u.err")"
same "ima_verify of uevm's ECDSA signature" "" ima_verify -k "$K/p256.der" g

# ---- sign / verify (EVM) -------------------------------------------------------
"$DEB" ima_sign -k "$K/rsa2048.key" f >/dev/null 2>&1
same "sign -u" "" sign -u -k "$K/rsa2048.key" f
same "sign -u -a sha512" "" sign -u -a sha512 -k "$K/rsa2048.key" f
same "sign -u --imasig" "" sign -u -s -k "$K/rsa2048.key" f
same "sign -u --imahash" "" sign -u -d -k "$K/rsa2048.key" g
U=0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9
same "sign --uuid=UUID" "" sign "--uuid=$U" -k "$K/rsa2048.key" f
same "verify --uuid=UUID" "" verify "--uuid=$U" -k "$K/rsa2048.der" f
same "verify without the UUID fails" "" verify -u -k "$K/rsa2048.der" f
same "sign -u with overrides (--uid --gid --mode --generation --ino)" "" \
	sign -u --uid 7 --gid 8 --mode 33261 --generation 9 --ino 10 -k "$K/rsa2048.key" f
same "verify with the same overrides" "" \
	verify -u --uid 7 --gid 8 --mode 33261 --generation 9 --ino 10 -k "$K/rsa2048.der" f
same "sign -u --ima HEX --selinux LABEL --caps VALUE" "" \
	sign -u --ima 0404aabb --selinux system_u:object_r:bin_t:s0 --caps=abc -k "$K/rsa2048.key" f
same "verify with the same overrides" "" \
	verify -u --ima 0404aabb --selinux system_u:object_r:bin_t:s0 --caps=abc -k "$K/rsa2048.der" f
same "--caps without a value leaves security.capability out" "" \
	sign -u --caps -k "$K/rsa2048.key" f
same "sign -u --m32" "" sign -u --m32 -k "$K/rsa2048.key" f
same "verify -u --m32" "" verify -u --m32 -k "$K/rsa2048.der" f
same "verify -u --m64 fails on a --m32 signature" "" verify -u --m64 -k "$K/rsa2048.der" f
same "sign --portable" '/^generation: /d' sign --portable -k "$K/rsa2048.key" f
same "verify (portable)" '/^generation: /d' verify -k "$K/rsa2048.der" f
same "verify with the wrong certificate" '/^generation: /d' verify -k "$K/p256.der" f
same "verify of a file without security.evm" "" verify -u -k "$K/rsa2048.der" empty
same "verify without a file" "" verify -k "$K/rsa2048.der"

# ---- hmac (1.4 hashes with -a: sha1 is the kernel's; no fs UUID: -u) ----------
evmctl_hmac_key
same "-a sha1 hmac -u -n" "" -a sha1 hmac -u -n f
same "-a sha1 hmac -u -n --imahash" "" -a sha1 -d hmac -u -n g

# ---- ima_setxattr, ima_clear, sign_hash ----------------------------------------
cp g.sig h.sig
cp g h
same "ima_setxattr from FILE.sig" "" ima_setxattr h
same "ima_setxattr --sigfile" "" ima_setxattr -f g.sig h
expect_eq "ima_setxattr wrote the signature" "$(hex_of_file g.sig)" "$(xattr_hex security.ima h)"
same "ima_setxattr without a .sig" "" ima_setxattr empty
"$DEB" ima_hash -r tree >/dev/null 2>&1
same "ima_clear -r" "" ima_clear -r tree
expect_eq "ima_clear removed security.ima" "" "$(xattr_hex security.ima tree/sub/b)"
sha256sum f g >"$T/sums"
same_stdin "sign_hash (sha256sum output)" "$T/sums" sign_hash -k "$K/rsa2048.key"
: >"$T/nothing"
same "sign_hash without input (1.6 changed its usage line)" '/^usage: /d' \
	sign_hash -k "$K/rsa2048.key"

# ---- ima_boot_aggregate and ima_measurement with --pcrs ------------------------
mkpcrs() {	# pcr10hex size file
	local i v
	for i in $(seq 0 23); do
		v=$(printf "%0$2d" 0)
		[ "$i" = 10 ] && v=$1
		[ "$i" = 0 ] && v=$(printf '%s' "$v" | sed 's/^00/a5/')
		printf 'PCR-%02d: %s\n' "$i" "$v"
	done >"$3"
}
"$UEVM" measurements add --list ml.bin --tcti none --template ima-sig f g >/dev/null
read -r _ s1 < <("$UEVM" measurements replay ml.bin | sed -n '/^sha1:/{n;p}')
read -r _ s256 < <("$UEVM" measurements replay ml.bin | sed -n '/^sha256:/{n;p}')
mkpcrs "$s1" 40 pcrs1
mkpcrs "$s256" 64 pcrs256
mkpcrs "$(printf '%040d' 7)" 40 bad1
same "ima_boot_aggregate --pcrs" "" ima_boot_aggregate --pcrs sha1,pcrs1 --pcrs sha256,pcrs256
same "ima_boot_aggregate --pcrs sha1 only" "" ima_boot_aggregate --pcrs pcrs1
same "ima_measurement matching PCRs" "" ima_measurement --pcrs sha1,pcrs1 -k "$K/rsa2048.der" ml.bin
same "ima_measurement sha256 bank" "" ima_measurement --pcrs sha256,pcrs256 -k "$K/rsa2048.der" ml.bin
# -v adds debug lines "function:line ..." that no other build reproduces,
# and 1.4's "keyid: " line of calc_keyid_v2 (1.6 takes the SKID instead).
DEBUG_LINES='/^[a-z_0-9]*:[0-9]* /d;/^keyid: /d'
same "ima_measurement -v" "$DEBUG_LINES" -v ima_measurement --pcrs sha1,pcrs1 -k "$K/rsa2048.der" ml.bin
same "ima_measurement wrong PCRs" '/^errno: /d' ima_measurement --pcrs sha1,bad1 -k "$K/rsa2048.der" ml.bin
"$UEVM" measurements add --list mlv.bin --tcti none --template ima-ng --violation /tmp/v f >/dev/null
read -r _ v1 < <("$UEVM" measurements replay mlv.bin | sed -n '/^sha1:/{n;p}')
mkpcrs "$v1" 40 vpcrs
same "ima_measurement with a violation" '/^errno: /d' ima_measurement --pcrs sha1,vpcrs mlv.bin
same "ima_measurement --ignore-violations" "" ima_measurement --ignore-violations --pcrs sha1,vpcrs mlv.bin

# ---- the command line itself --------------------------------------------------------
same "an unknown command" "" nosuchcommand
same "help COMMAND" "" help ima_hash
same "an unknown option" 's/^[^:]*: //' --nosuchoption ima_hash f
