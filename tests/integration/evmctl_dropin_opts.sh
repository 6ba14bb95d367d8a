#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# evmctl options that the other evmctl tests do not reach: key ids,
# --rsa, --provider, --verify-bank.  Each line is compared with Debian's
# evmctl (1.4) where 1.4 has the option and behaves as 1.6.2; otherwise
# 1.6.2's result is stated (as_162), or uevm's documented difference from
# it is asserted (see COMPATIBILITY in uevm-evmctl(1)).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"

if ! command -v evmctl >/dev/null; then
	fail "evmctl is installed (package ima-evm-utils)"
	exit 1
fi
K=$T/keys
mkdir "$K"
SIG_KEYS="rsa2048" make_sig_keys "$K"
W=$T/w
mkdir "$W"
cd "$W" || exit 1
source "$TESTS_DIR/evmctl_diff_lib.sh"

printf 'some content\n' >f
cp f f2

# ---- --keyid: a 32-bit hex value, 0 reserved --------------------------------
same "--keyid" "" -n --keyid 1234abcd ima_sign -k "$K/rsa2048.key" f
same "--keyid 0 is refused" "" -n --keyid 0 ima_sign -k "$K/rsa2048.key" f
same "--keyid with a non-hex value" "" -n --keyid 12zz ima_sign -k "$K/rsa2048.key" f
same "--keyid over 32 bits" "" -n --keyid 123456789 ima_sign -k "$K/rsa2048.key" f
"$LINKDIR/evmctl" --keyid 1234abcd ima_sign -k "$K/rsa2048.key" f2 >/dev/null 2>&1
expect_eq "--keyid: the signature carries the key id" "1234abcd" \
	"$(xattr_hex security.ima f2 | cut -c7-14)"

# ---- --keyid-from-cert ---------------------------------------------------
same "--keyid-from-cert (SKID)" "" -n --keyid-from-cert "$K/rsa2048.pem" \
	ima_sign -k "$K/rsa2048.key" f
same "--keyid-from-cert with a missing file" "" -n --keyid-from-cert "$K/missing.pem" \
	ima_sign -k "$K/rsa2048.key" f
openssl req -x509 -new -key "$K/rsa2048.key" -subj /CN=noskid -days 2 \
	-addext subjectKeyIdentifier=none -addext authorityKeyIdentifier=none \
	-out "$K/noskid.pem" 2>/dev/null
# 1.4 crashes here and 1.6.2 exits 1 ("SKID not found"); uevm takes the
# key id from the public key as evmctl does for a key without a
# certificate (the last 4 bytes of SHA-1 of the PKCS#1 public key;
# documented difference).
run_form link -n --keyid-from-cert "$K/noskid.pem" ima_sign -k "$K/rsa2048.key" f \
	>"$T/u.out" 2>"$T/u.err"
expect_eq "--keyid-from-cert without an SKID: exit status" 0 "$?"
keyid=$(sed -n 's/^keyid \([0-9a-f]*\) (from .*noskid.pem)$/\1/p' "$T/u.err")
want=$(openssl x509 -in "$K/noskid.pem" -noout -pubkey |
	openssl rsa -pubin -RSAPublicKey_out -outform der 2>/dev/null |
	openssl dgst -sha1 -binary | tail -c 4 | od -An -tx1 | tr -d ' \n')
# evmctl logs the key id with %04x: no leading zeros.
expect_eq "--keyid-from-cert without an SKID: the key id of the public key" \
	"$(printf '%x' "0x$want")" "$keyid"
expect_eq "--keyid-from-cert without an SKID: in the signature" "$want" \
	"$(tail -n1 "$T/u.out" | cut -c7-14)"

# ---- --rsa: signature version 1, gone from 1.6 (CONFIG_SIGV1 off) ----------
# 1.6.2 imaevm_signhash: log_info("Signature version 1 deprecated.") with no
# newline and -1, so evmctl exits 125 before printing the hash.
for form in link uevm; do
	run_form "$form" --rsa ima_sign -k "$K/rsa2048.key" f2 >"$T/u.out" 2>"$T/u.err"
	expect_eq "--rsa [$form]: exit status (1.6.2)" 125 "$?"
	expect_eq "--rsa [$form]: nothing on stdout (1.6.2)" "" "$(cat "$T/u.out")"
	expect_match "--rsa [$form]: the message (1.6.2)" '^Signature version 1 deprecated\.' \
		"$(cat "$T/u.err")"
done

# ---- --provider (1.6.2; 1.4 has no such option) ---------------------------
# ima_hash: the label on stdout, "hash(ALGO): " before it on stderr.
as_162 "--provider default" 0 "0404$(sha256sum f | cut -c1-64)" "hash(sha256): " \
	-n --provider default ima_hash f
# 1.6.2 prints "setup_provider failed" and exits 0 without running the
# command; uevm exits 125 (documented difference: never 0 for nothing done).
for form in link uevm; do
	run_form "$form" -n --provider nosuch ima_hash f >"$T/u.out" 2>"$T/u.err"
	expect_eq "--provider nosuch [$form]: exit status" 125 "$?"
	expect_eq "--provider nosuch [$form]: the command did not run" "" "$(cat "$T/u.out")"
	expect_match "--provider nosuch [$form]: 1.6.2's message" '^setup_provider failed$' \
		"$(cat "$T/u.err")"
done

# ---- --verify-bank --------------------------------------------------------
mkpcrs() {	# pcr10hex size file
	local i v
	for i in $(seq 0 23); do
		v=$(printf "%0$2d" 0)
		[ "$i" = 10 ] && v=$1
		printf 'PCR-%02d: %s\n' "$i" "$v"
	done >"$3"
}
"$UEVM" measurements add --list ml.bin --tcti none --template ima-ng f >/dev/null 2>&1
read -r _ s1 < <("$UEVM" measurements replay ml.bin | sed -n '/^sha1:/{n;p}')
read -r _ s256 < <("$UEVM" measurements replay ml.bin | sed -n '/^sha256:/{n;p}')
mkpcrs "$s1" 40 pcrs1
mkpcrs "$s256" 64 pcrs256
mkpcrs "$(printf '%064d' 7)" 64 bad256
same "--verify-bank=sha1" "" ima_measurement --verify-bank=sha1 \
	--pcrs sha1,pcrs1 --pcrs sha256,bad256 ml.bin
same "--verify-bank=sha256 on a bad bank" '/^errno: /d' ima_measurement --verify-bank=sha256 \
	--pcrs sha1,pcrs1 --pcrs sha256,bad256 ml.bin
same "--verify-bank=sha256" "" ima_measurement --verify-bank=sha256 \
	--pcrs sha1,pcrs1 --pcrs sha256,pcrs256 ml.bin
# The value is optional (getopt "::"): a separate word is the command.
same "--verify-bank sha1 (separate word)" "" --verify-bank sha1 ima_measurement ml.bin
