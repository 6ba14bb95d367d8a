#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# evmctl mode as a drop-in for evmctl 1.6.2: weak keys (RSA-1024, ECDSA
# P-192, SM2) are taken with a warning, -a names are matched as libimaevm
# matches them, sign_hash's malformed lines, and pass phrases (-p, --pass,
# EVMCTL_KEY_PASSWORD, OpenSSL's terminal prompt).  Lines are compared
# with Debian's evmctl (1.4) where it behaves as 1.6.2; otherwise 1.6.2's
# behaviour, read from its source, is stated, or uevm's documented
# difference from it (uevm-evmctl(1)) is asserted.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"

if ! command -v evmctl >/dev/null; then
	fail "evmctl is installed (package ima-evm-utils)"
	exit 1
fi
K=$T/keys
mkdir "$K"
SIG_KEYS="rsa2048" make_sig_keys "$K"
# weak_key NAME GENPKEY-ARGS...: NAME.key, .pem (with SKID), .der, .pub
weak_key() {
	local name=$1
	shift
	openssl genpkey "$@" -out "$K/$name.key" 2>/dev/null &&
		openssl req -x509 -new -key "$K/$name.key" -subj "/CN=uevm test $name" \
			-days 30 -out "$K/$name.pem" 2>/dev/null &&
		openssl x509 -in "$K/$name.pem" -outform DER -out "$K/$name.der" &&
		openssl pkey -in "$K/$name.key" -pubout -out "$K/$name.pub"
}
check "an RSA-1024 key" weak_key r1024 -algorithm RSA -pkeyopt rsa_keygen_bits:1024
check "an ECDSA P-192 key" weak_key p192 -algorithm EC -pkeyopt ec_paramgen_curve:prime192v1
check "an SM2 key" weak_key sm2 -algorithm SM2
W=$T/w
mkdir "$W"
cd "$W" || exit 1
source "$TESTS_DIR/evmctl_diff_lib.sh"
printf 'some content\n' >f
WARN='/: warning: /d'

# ---- weak keys: signing -----------------------------------------------------
# evmctl 1.6.2's sign_hash_v2 signs with whatever PEM_read_PrivateKey
# returns; uevm takes the same keys with one warning line.
for k in r1024 p192; do
	for form in link uevm; do
		cp f "s-$k-$form"
		run_form "$form" ima_sign -k "$K/$k.key" "s-$k-$form" >"$T/u.out" 2>"$T/u.err"
		expect_eq "$k: ima_sign [$form]: exit status" 0 "$?"
		expect_eq "$k: ima_sign [$form]: one warning line" 1 \
			"$(grep -c ': warning: .*weak' "$T/u.err")"
		expect_match "$k: ima_sign [$form]: the warning names the key" \
			": warning: $K/$k.key: .* is weak" "$(cat "$T/u.err")"
		val=$(xattr_hex security.ima "s-$k-$form")
		expect_eq "$k: ima_sign [$form]: header 03 v2 sha256, the certificate's keyid" \
			"030204$(skid_keyid "$K/$k.pem")" "$(cut -c1-14 <<<"$val")"
		digest_file sha256 "s-$k-$form" "$T/dig"
		sig_body_file "$val" "$T/sig"
		check "$k: ima_sign [$form]: openssl verifies the signature" \
			pkey_verify "$K/$k.pub" sha256 "$T/dig" "$T/sig"
		"$DEB" ima_verify -k "$K/$k.der" "s-$k-$form" >"$T/d.out" 2>&1
		expect_eq "$k: ima_sign [$form]: Debian's evmctl ima_verify: exit status" 0 "$?"
		expect_match "$k: ima_sign [$form]: Debian's evmctl ima_verify: OK" \
			"verification is OK" "$(cat "$T/d.out")"
	done
	# evmctl 1.4's signature verifies in evmctl mode, with the warning.
	cp f "d-$k"
	"$DEB" ima_sign -k "$K/$k.key" "d-$k" >/dev/null 2>&1
	for form in link uevm; do
		run_form "$form" ima_verify -k "$K/$k.der" "d-$k" >"$T/u.out" 2>"$T/u.err"
		expect_eq "$k: evmctl 1.4's ima_sign, ima_verify [$form]: exit status" 0 "$?"
		expect_match "$k: evmctl 1.4's ima_sign, ima_verify [$form]: OK" \
			"^d-$k: verification is OK$" "$(cat "$T/u.err")"
		expect_match "$k: ima_verify [$form]: the certificate's warning" \
			": warning: $K/$k.der: .* is weak" "$(cat "$T/u.err")"
	done
	# EVM: portable signatures (no fs UUID or generation), both ways.
	cp f "e-$k"
	setfattr -n security.ima -v "0x$("$DEB" -n ima_hash f 2>/dev/null)" "e-$k"
	"$DEB" sign --portable -k "$K/$k.key" "e-$k" >/dev/null 2>&1
	run_form uevm verify -k "$K/$k.der" "e-$k" >"$T/u.out" 2>"$T/u.err"
	expect_eq "$k: evmctl 1.4's portable sign, verify: exit status" 0 "$?"
	expect_match "$k: evmctl 1.4's portable sign, verify: OK" \
		"^e-$k: verification is OK$" "$(cat "$T/u.err")"
	cp f "eu-$k"
	setfattr -n security.ima -v "0x$("$DEB" -n ima_hash f 2>/dev/null)" "eu-$k"
	run_form uevm sign --portable -k "$K/$k.key" "eu-$k" >/dev/null 2>"$T/u.err"
	expect_eq "$k: portable sign: one warning line" 1 "$(grep -c ': warning: ' "$T/u.err")"
	"$DEB" verify -k "$K/$k.der" "eu-$k" >"$T/d.out" 2>&1
	expect_eq "$k: portable sign, Debian's evmctl verify: exit status" 0 "$?"
	expect_match "$k: portable sign, Debian's evmctl verify: OK" \
		"verification is OK" "$(cat "$T/d.out")"
done
# RSA signatures are deterministic: all but the warning as evmctl's.
same "r1024: ima_sign -n" "$WARN" -n ima_sign -k "$K/r1024.key" f
h=$(sha256sum f | cut -c1-64)
printf '%s f\n' "$h" >hashes
for form in link uevm; do
	"$DEB" sign_hash -k "$K/r1024.key" <hashes >"$T/d.out" 2>"$T/d.err"
	run_form "$form" sign_hash -k "$K/r1024.key" <hashes >"$T/u.out" 2>"$T/u.err"
	expect_eq "r1024: sign_hash [$form]: exit status" 0 "$?"
	expect_eq "r1024: sign_hash [$form]: stdout" "$(cat "$T/d.out")" "$(cat "$T/u.out")"
	expect_eq "r1024: sign_hash [$form]: stderr but the warning" "$(cat "$T/d.err")" \
		"$(sed -e "$WARN" "$T/u.err")"
done

sm2_verify() {	# PUB DIGEST SIG: over the digest as given (no Z value)
	openssl pkeyutl -verify -pubin -inkey "$1" -in "$2" -sigfile "$3" >/dev/null 2>&1
}
# A digest of the wrong size reaches EVP_PKEY_sign as in sign_hash_v2:
# OpenSSL's refusal differs by key type (ECDSA queues no error, SM2
# refuses sha256 first).
printf '1234 f\n' >short-hash
for k in p192 sm2 r1024; do
	"$DEB" sign_hash -k "$K/$k.key" <short-hash >"$T/d.out" 2>"$T/d.err"
	rc_deb=$?
	for form in link uevm; do
		run_form "$form" sign_hash -k "$K/$k.key" <short-hash >"$T/u.out" 2>"$T/u.err"
		expect_eq "$k: sign_hash, a 2-byte digest [$form]: exit status" "$rc_deb" "$?"
		expect_eq "$k: sign_hash, a 2-byte digest [$form]: stderr but the warning" \
			"$(cat "$T/d.err")" "$(sed -e "$WARN" "$T/u.err")"
	done
done

# SM2: OpenSSL 3.0 signs SM2 keys over an sm3 digest (hash algo 17) with
# EVP_PKEY_sign, as 1.6.2's sign_hash_v2 calls it (its SM2 alias code is
# for OpenSSL 1.1 only); the kernel takes the digest as is.
for form in link uevm; do
	cp f "sm2-$form"
	run_form "$form" -a sm3 ima_sign -k "$K/sm2.key" "sm2-$form" >"$T/u.out" 2>"$T/u.err"
	expect_eq "sm2: ima_sign -a sm3 [$form]: exit status" 0 "$?"
	expect_match "sm2: ima_sign -a sm3 [$form]: the warning" \
		": warning: $K/sm2.key: SM2 key" "$(cat "$T/u.err")"
	val=$(xattr_hex security.ima "sm2-$form")
	expect_eq "sm2: ima_sign -a sm3 [$form]: header 03 v2 sm3 (17), the keyid" \
		"030211$(skid_keyid "$K/sm2.pem")" "$(cut -c1-14 <<<"$val")"
	openssl dgst -sm3 -binary "sm2-$form" >"$T/dig"
	sig_body_file "$val" "$T/sig"
	check "sm2: ima_sign -a sm3 [$form]: openssl verifies the signature" \
		sm2_verify "$K/sm2.pub" "$T/dig" "$T/sig"
	"$DEB" ima_verify -k "$K/sm2.der" "sm2-$form" >"$T/d.out" 2>&1
	expect_eq "sm2: ima_sign [$form]: Debian's evmctl ima_verify" 0 "$?"
done
cp f sm2-deb
"$DEB" -a sm3 ima_sign -k "$K/sm2.key" sm2-deb >/dev/null 2>&1
for form in link uevm; do
	run_form "$form" ima_verify -k "$K/sm2.der" sm2-deb >"$T/u.out" 2>"$T/u.err"
	expect_eq "sm2: evmctl 1.4's signature, ima_verify [$form]" 0 "$?"
done
# SM2 with sha256: OpenSSL refuses the digest, as in evmctl.
same "sm2: ima_sign with sha256 fails as evmctl's" "$WARN" -n ima_sign -k "$K/sm2.key" f
# An Ed25519 key: evmctl 1.6.2 ignores EVP_PKEY_sign_init's -2 and prints
# 1014 bytes of its stack as the "signature"; uevm stops (documented).
openssl genpkey -algorithm ed25519 -out "$K/ed.key" 2>/dev/null
for form in link uevm; do
	run_form "$form" -n ima_sign -k "$K/ed.key" f >"$T/u.out" 2>"$T/u.err"
	expect_eq "ed25519: ima_sign [$form]: exit status" 125 "$?"
	expect_eq "ed25519: ima_sign [$form]: no signature" "" "$(cat "$T/u.out")"
	expect_match "ed25519: ima_sign [$form]: OpenSSL's reason" \
		'^sign_hash_v2: signing failed: \(operation not supported for this keytype\) in EVP_PKEY_sign_init$' \
		"$(cat "$T/u.err")"
done

# ---- weak keys: the native CLI refuses them unless allowed ------------------
cp f n1
out=$("$UEVM" sign --imasig --evm --uuid none -k "$K/r1024.key" n1 2>&1)
expect_eq "uevm sign: RSA-1024 refused: exit status" 2 "$?"
expect_match "uevm sign: RSA-1024 refused: why, and how to allow it" \
	'RSA key of 1024 bits is weak.*unless weak keys are allowed' "$out"
out=$("$UEVM" sign --imasig -k "$K/p192.key" n1 2>&1)
expect_match "uevm sign: P-192 refused as weak (the kernel has P-192)" \
	'ECDSA key on NIST P-192 is weak' "$out"
expect_eq "uevm sign: no claim that the kernel lacks P-192" 0 "$(grep -c 'P-256, P-384 and P-521 only' <<<"$out")"
for k in r1024 p192; do
	cp f "n-$k"
	"$UEVM" sign --allow-weak-keys --imasig --evm --uuid none -k "$K/$k.key" "n-$k" \
		>/dev/null 2>"$T/u.err"
	expect_eq "uevm sign --allow-weak-keys ($k): exit status" 0 "$?"
	expect_match "uevm sign --allow-weak-keys ($k): the warning" ': warning: .* is weak' \
		"$(cat "$T/u.err")"
	"$DEB" ima_verify -k "$K/$k.der" "n-$k" >/dev/null 2>&1
	expect_eq "uevm sign --allow-weak-keys ($k): Debian's evmctl ima_verify" 0 "$?"
	out=$("$UEVM" verify -v --uuid none --cert "$K/$k.pem" "n-$k" 2>&1)
	expect_eq "uevm verify ($k): the certificate is refused: exit status" 2 "$?"
	expect_match "uevm verify ($k): why" 'is weak.*unless weak keys are allowed' "$out"
	out=$("$UEVM" verify -v --uuid none --allow-weak-keys --cert "$K/$k.pem" "n-$k" 2>&1)
	expect_eq "uevm verify --allow-weak-keys ($k): exit status" 0 "$?"
	expect_match "uevm verify --allow-weak-keys ($k): pass" "^OK n-$k: pass" "$out"
done
expect_match "uevm sign --help shows --allow-weak-keys" 'allow-weak-keys' \
	"$("$UEVM" sign --help 2>&1)"
expect_match "uevm verify --help shows --allow-weak-keys" 'allow-weak-keys' \
	"$("$UEVM" verify --help 2>&1)"
out=$("$UEVM" sign --allow-weak-keys -k "$K/ed.key" n1 2>&1)
expect_match "uevm sign --allow-weak-keys: Ed25519 is still refused" 'not supported' "$out"

# ---- -a: libimaevm's names ------------------------------------------------------
# imaevm_get_hash_algo compares exactly (strcmp) with its table and with
# hash_info.gen's names (the kernel enum in lower case without '_':
# "ripemd160"); ima_calc_hash2 takes any OpenSSL name.  1.4 is 1.6.2 here.
for a in SHA1 sha3-256 SHA256 ripemd160 rmd160 md4 wp256 RSA-SHA256 blake2b512 nosuch; do
	same "-a $a ima_hash" "" -n -a "$a" ima_hash f
	same "-a $a ima_sign" "" -n -a "$a" ima_sign -k "$K/rsa2048.key" f
done
if openssl dgst -ripemd160 f >/dev/null 2>&1; then
	expect_eq "-a ripemd160 ima_hash: 04 03 and OpenSSL's RIPEMD-160" \
		"0403$(openssl dgst -ripemd160 -r f | cut -c1-40)" \
		"$("$UEVM" evmctl -n -a ripemd160 ima_hash f 2>/dev/null)"
fi
for a in SHA1 sha3-256 ripemd160; do
	same "-a $a sign (EVM, no UUID)" "" -n -u -a "$a" sign -k "$K/rsa2048.key" f
done
# A digest OpenSSL has and the kernel lacks: evmctl hashes the EVM data,
# then sign_hash_v2 fails; uevm fails without hashing (documented).
for form in link uevm; do
	run_form "$form" -n -u -a blake2b512 sign -k "$K/rsa2048.key" f >"$T/u.out" 2>"$T/u.err"
	expect_eq "-a blake2b512 sign [$form]: exit status" 125 "$?"
	expect_eq "-a blake2b512 sign [$form]: nothing on stdout" "" "$(cat "$T/u.out")"
	expect_eq "-a blake2b512 sign [$form]: evmctl's last message" \
		"sign_hash_v2: hash algo is unknown: blake2b512" "$(tail -n1 "$T/u.err")"
done
# 1.6.2's calc_evm_hash: an unknown digest logs and returns 0 (1.4: 1),
# so evmctl exits 0 having signed nothing.
for form in link uevm; do
	run_form "$form" -n -u -a nosuch sign -k "$K/rsa2048.key" f >"$T/u.out" 2>"$T/u.err"
	expect_eq "-a nosuch sign [$form]: exit status (1.6.2)" 0 "$?"
	expect_eq "-a nosuch sign [$form]: nothing on stdout (1.6.2)" "" "$(cat "$T/u.out")"
	expect_match "-a nosuch sign [$form]: the message (1.6.2)" \
		'^EVP_get_digestbyname\(nosuch\) failed$' "$(cat "$T/u.err")"
done

# ---- sign_hash: malformed lines ------------------------------------------------
printf '%s f\n%s g\n' "$h" "$h" >good
same_stdin "sign_hash: two lines" good sign_hash -k "$K/rsa2048.key"
printf '\n' >empty
same_stdin "sign_hash: an empty line" empty sign_hash -k "$K/rsa2048.key"
printf '%s f\n' "${h:0:40}" >short
same_stdin "sign_hash: a digest of the wrong length" short sign_hash -k "$K/rsa2048.key"
printf '%s\tf\n' "$h" >tab
same_stdin "sign_hash: a tab after the digest" tab sign_hash -k "$K/rsa2048.key"
# 1.6.2's cmd_sign_hash converts with hex2bin, unchecked, and signs
# hashlen/2 bytes: "xyz" signs 1 byte, which EVP_PKEY_sign refuses
# (sign_hash_v2 -1: exit 125, after the lines before it were printed).
printf '%s f\nxyz f\n%s g\n' "$h" "$h" >bad
for form in link uevm; do
	run_form "$form" sign_hash -k "$K/rsa2048.key" <bad >"$T/u.out" 2>"$T/u.err"
	expect_eq "sign_hash: a non-hex line [$form]: exit status (1.6.2)" 125 "$?"
	expect_eq "sign_hash: a non-hex line [$form]: the line before is signed" \
		"$(head -n1 good)" "$(cut -d' ' -f1-2 "$T/u.out")"
	expect_match "sign_hash: a non-hex line [$form]: why" \
		'^sign_hash_v2: hash is not hexadecimal$' "$(cat "$T/u.err")"
done
# A non-hex digest of the right length: 1.6.2 signs what hex2bin left in
# its buffer and exits 0; an over-long one trips its assert (abort).  uevm
# stops with 125 for both (documented difference).
printf 'zz%s f\n' "${h:2}" >nonhex
printf '%s%s00 f\n' "$h" "$h" >long
for in in nonhex long; do
	for form in link uevm; do
		run_form "$form" sign_hash -k "$K/rsa2048.key" <"$in" >"$T/u.out" 2>"$T/u.err"
		expect_eq "sign_hash: $in [$form]: exit status" 125 "$?"
		expect_eq "sign_hash: $in [$form]: nothing signed" "" "$(cat "$T/u.out")"
	done
done
expect_match "sign_hash: an over-long digest: why" '^sign_hash_v2: hash is too long: 130 hex digits$' \
	"$(cat "$T/u.err")"
# --veritysig (1.6.2 only): an algorithm name of 7 or more characters is
# "Missing/invalid fsverity hash algorithm" and skipped; no line signed
# leaves hashlen 0: "Parameters missing", usage, exit 125.
printf 'sha3-256:%s f\n' "$h" >verity
for form in link uevm; do
	run_form "$form" sign_hash --veritysig -k "$K/rsa2048.key" <verity >"$T/u.out" 2>"$T/u.err"
	expect_eq "sign_hash --veritysig: a long algorithm name [$form]: exit status (1.6.2)" 125 "$?"
	expect_eq "sign_hash --veritysig: a long algorithm name [$form]: stdout (1.6.2)" \
		"usage: sign_hash [--veritysig] [--key key] [--pass[=<password>]]" "$(cat "$T/u.out")"
	expect_eq "sign_hash --veritysig: a long algorithm name [$form]: stderr (1.6.2)" \
		"$(printf 'Missing/invalid fsverity hash algorithm\nParameters missing')" \
		"$(cat "$T/u.err")"
done
# An unknown name (calc_hash_sigv3: imaevm_get_hash_algo) is skipped.
printf 'SHA256:%s f\n' "$h" >verity
for form in link uevm; do
	run_form "$form" sign_hash --veritysig -k "$K/rsa2048.key" <verity >"$T/u.out" 2>"$T/u.err"
	expect_eq "sign_hash --veritysig: SHA256 [$form]: exit status (1.6.2)" 0 "$?"
	expect_eq "sign_hash --veritysig: SHA256 [$form]: messages (1.6.2)" \
		"$(printf 'Hash algorithm SHA256 not supported\nFailure to calculate fs-verity hash')" \
		"$(cat "$T/u.err")"
done

# ---- pass phrases -------------------------------------------------------------------
openssl pkey -in "$K/rsa2048.key" -aes256 -passout pass:s3cret -out "$K/enc.key"
same "--pass=PASS" "" -n --pass=s3cret ima_sign -k "$K/enc.key" f
same "-pPASS" "" -n -ps3cret ima_sign -k "$K/enc.key" f
same "a wrong --pass" '/^openssl: /d' -n --pass=wrong ima_sign -k "$K/enc.key" f
# -p alone off a terminal: 1.6.2's get_password fails tcsetattr (perror)
# and leaves the pass phrase unset: EVMCTL_KEY_PASSWORD then.
export EVMCTL_KEY_PASSWORD=s3cret
same "EVMCTL_KEY_PASSWORD" "" -n ima_sign -k "$K/enc.key" f
same "-p alone off a terminal, EVMCTL_KEY_PASSWORD" "" -n -p ima_sign -k "$K/enc.key" f
same "--pass=PASS wins over EVMCTL_KEY_PASSWORD" "" -n --pass=s3cret ima_sign -k "$K/enc.key" f
EVMCTL_KEY_PASSWORD=wrong
same "a wrong EVMCTL_KEY_PASSWORD" '/^openssl: /d' -n ima_sign -k "$K/enc.key" f
unset EVMCTL_KEY_PASSWORD
want=$("$DEB" -n --pass=s3cret ima_sign -k "$K/enc.key" f 2>/dev/null)
# On a terminal without a pass phrase, PEM_read_PrivateKey's default
# callback asks on the terminal ("Enter PEM pass phrase:"), as for evmctl.
on_tty() {	# LINE -- CMD...: CMD on a pty, answering OpenSSL's prompt
	python3 "$TESTS_DIR/pty_answer.py" 'Enter PEM pass phrase:' "$@" 2>&1
}
out=$(on_tty s3cret -- sh -c "\"\$0\" -n ima_sign -k \"\$1\" f >tty.deb.out" \
	"$DEB" "$K/enc.key")
expect_match "no pass phrase, a terminal: evmctl 1.4 asks as OpenSSL" 'Enter PEM pass phrase:' "$out"
expect_eq "no pass phrase, a terminal: evmctl 1.4 signs" "$want" "$(cat tty.deb.out)"
for form in link uevm; do
	if [ "$form" = link ]; then cmd=("$LINKDIR/evmctl"); else cmd=("$UEVM" evmctl); fi
	for p in "" -p --pass; do
		out=$(on_tty s3cret -- sh -c '"$@" >tty.out' sh "${cmd[@]}" -n $p ima_sign \
			-k "$K/enc.key" f)
		expect_eq "${p:-no pass phrase}, a terminal [$form]: exit status" 0 "$?"
		expect_match "${p:-no pass phrase}, a terminal [$form]: OpenSSL's prompt" \
			'Enter PEM pass phrase:' "$out"
		# (No check of the echo: OpenSSL prints its prompt before it
		# turns echo off, so an answer typed at once may be echoed.)
		# 1.6.2 prints "PEM password: " on stdout here and keeps the
		# newline in the pass phrase (bad decrypt): uevm's difference.
		expect_eq "${p:-no pass phrase}, a terminal [$form]: stdout holds only the signature" \
			"$want" "$(cat tty.out)"
	done
done
