#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# IMA and EVM signatures against independent implementations, for RSA
# 2048/4096 and ECDSA P-256/P-384 with sha1, sha224, sha256, sha384, sha512:
#  - signatures made by `uevm sign` verify with Debian's evmctl 1.4
#    (ima_verify, verify) and with `openssl pkeyutl -verify` over digests
#    this script computes itself (the file's content; the EVM data built
#    from stat/lsattr/getfattr with the kernel's recipe);
#  - signatures made by evmctl 1.4 (ima_sign, sign, sign --portable)
#    verify with `uevm verify`;
#  - headers carry the kernel's type, version, algorithm, the SKID keyid
#    and the signature's size.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"

if ! command -v evmctl >/dev/null; then
	fail "evmctl is installed (package ima-evm-utils)"
	exit 1
fi
K=$T/keys
mkdir "$K"
check "test keys and certificates from the openssl command line" make_sig_keys "$K"
D=$T/d
mkdir "$D"

# uevm_status PATH ARGS...: the status word `uevm verify -v` prints.
uevm_status() {
	local p=$1
	shift
	"$UEVM" verify -v "$@" "$p" 2>&1 | sed -n 's/^\(OK\|FAIL\) .*: \([a-z_]*\)\( (.*\)\?$/\2/p' | head -n1
}

for key in $SIG_KEYS; do
	keyid=$(skid_keyid "$K/$key.pem")
	for algo in $SIG_ALGOS; do
		id=$(algo_id "$algo")
		t="$key/$algo"

		# ---- uevm signs ----------------------------------------------
		f=$D/$key-$algo
		head -c $((4096 + RANDOM)) /dev/urandom >"$f"
		expect_rc "$t: uevm sign --imasig --evm" 0 \
			"$UEVM" sign --imasig --evm --uuid none -a "$algo" -k "$K/$key.key" "$f"
		ima=$(xattr_hex security.ima "$f")
		evm=$(xattr_hex security.evm "$f")
		expect_eq "$t: IMA header type 03 v2 algo $id keyid $keyid" \
			"0302$id$keyid" "$(sig_header "$ima" | cut -c1-14)"
		expect_eq "$t: IMA header size field equals the signature length" \
			"$(sig_body_len "$ima")" "$(sig_size_field "$ima")"
		expect_eq "$t: EVM header type 03 v2 algo $id keyid $keyid" \
			"0302$id$keyid" "$(sig_header "$evm" | cut -c1-14)"

		digest_file "$algo" "$f" "$T/dig"
		sig_body_file "$ima" "$T/sig"
		check "$t: openssl pkeyutl verifies the IMA signature over the file's digest" \
			pkey_verify "$K/$key.pub" "$algo" "$T/dig" "$T/sig"
		hex_to_file "$(ref_evm_sig_data "$f" 03)" "$T/evmdata"
		digest_file "$algo" "$T/evmdata" "$T/evmdig"
		sig_body_file "$evm" "$T/evmsig"
		check "$t: openssl pkeyutl verifies the EVM signature over the kernel's EVM data" \
			pkey_verify "$K/$key.pub" "$algo" "$T/evmdig" "$T/evmsig"

		out=$(evmctl ima_verify -k "$K/$key.der" "$f" 2>&1)
		expect_rc "$t: evmctl 1.4 ima_verify accepts uevm's IMA signature" 0 \
			evmctl ima_verify -k "$K/$key.der" "$f"
		expect_match "$t: evmctl 1.4 ima_verify says OK" "$f: verification is OK" "$out"
		out=$(evmctl verify -u -k "$K/$key.der" "$f" 2>&1)
		expect_match "$t: evmctl 1.4 verify accepts uevm's EVM signature" \
			"$f: verification is OK" "$out"
		expect_eq "$t: uevm verify --cert: pass" pass \
			"$(uevm_status "$f" --uuid none --cert "$K/$key.pem")"

		# ---- evmctl signs --------------------------------------------------
		g=$D/$key-$algo-evmctl
		head -c $((100 + RANDOM)) /dev/urandom >"$g"
		evmctl ima_sign -a "$algo" -k "$K/$key.key" "$g" >/dev/null 2>&1
		evmctl sign -u -a "$algo" -k "$K/$key.key" "$g" >/dev/null 2>&1
		expect_eq "$t: evmctl 1.4 ima_sign + sign verify with uevm: pass" pass \
			"$(uevm_status "$g" --uuid none --cert "$K/$key.der")"
		h=$D/$key-$algo-evmctl-portable
		cp "$g" "$h"
		evmctl ima_sign -a "$algo" -k "$K/$key.key" "$h" >/dev/null 2>&1
		evmctl sign --portable -a "$algo" -k "$K/$key.key" "$h" >/dev/null 2>&1
		expect_eq "$t: evmctl 1.4 portable signature verifies with uevm: pass_immutable" \
			pass_immutable "$(uevm_status "$h" --cert "$K/$key.pem")"

		# ---- uevm portable, checked by evmctl and openssl ------------------
		p=$D/$key-$algo-portable
		cp "$g" "$p"
		"$UEVM" sign --portable -a "$algo" -k "$K/$key.key" "$p"
		evm=$(xattr_hex security.evm "$p")
		expect_eq "$t: portable EVM header type 05" "0502$id$keyid" \
			"$(sig_header "$evm" | cut -c1-14)"
		hex_to_file "$(ref_evm_sig_data "$p" 05)" "$T/evmdata"
		digest_file "$algo" "$T/evmdata" "$T/evmdig"
		sig_body_file "$evm" "$T/evmsig"
		check "$t: openssl verifies the portable signature (no ino, generation, UUID)" \
			pkey_verify "$K/$key.pub" "$algo" "$T/evmdig" "$T/evmsig"
		out=$(evmctl verify -k "$K/$key.der" "$p" 2>&1)
		expect_match "$t: evmctl 1.4 verify accepts uevm's portable signature" \
			"$p: verification is OK" "$out"
	done
done

# ---- the fs UUID is bound into 0x03 signatures ----------------------------
U=0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9
f=$D/uuid
echo "uuid test" >"$f"
"$UEVM" sign --imasig --evm --uuid "$U" -k "$K/p256.key" "$f"
out=$(evmctl verify "--uuid=$U" -k "$K/p256.der" "$f" 2>&1)
expect_match "a signature bound to fs UUID $U verifies with evmctl given that UUID" \
	"verification is OK" "$out"
out=$(evmctl verify -u -k "$K/p256.der" "$f" 2>&1)
expect_match "... and fails without the UUID" "verification failed" "$out"
hex_to_file "$(ref_evm_sig_data "$f" 03 "$U")" "$T/evmdata"
digest_file sha256 "$T/evmdata" "$T/evmdig"
sig_body_file "$(xattr_hex security.evm "$f")" "$T/evmsig"
check "openssl verifies the signature over data ending with the UUID" \
	pkey_verify "$K/p256.pub" sha256 "$T/evmdig" "$T/evmsig"

# ---- keyid: the certificate's SKID, as the kernel matches it ---------------
openssl req -x509 -key "$K/rsa2048.key" -out "$K/skid.pem" -subj /CN=skid -days 30 \
	-addext "subjectKeyIdentifier=0102030405060708090a0b0c0d0e0f10a1b2c3d4" 2>/dev/null
f=$D/skid
echo skid >"$f"
"$UEVM" sign -k "$K/rsa2048.key" --keyid-from-cert "$K/skid.pem" "$f"
expect_eq "--keyid-from-cert takes the last 4 bytes of the SKID" a1b2c3d4 \
	"$(xattr_hex security.ima "$f" | cut -c7-14)"
"$UEVM" sign -k "$K/rsa2048.key" --keyid 0badcafe "$f"
expect_eq "--keyid sets the keyid" 0badcafe "$(xattr_hex security.ima "$f" | cut -c7-14)"
cat "$K/rsa2048.key" "$K/skid.pem" >"$K/key+cert.pem"
chmod 600 "$K/key+cert.pem"
"$UEVM" sign -k "$K/key+cert.pem" "$f"
expect_eq "a certificate beside the key gives its SKID keyid (as evmctl)" a1b2c3d4 \
	"$(xattr_hex security.ima "$f" | cut -c7-14)"
"$UEVM" sign --evm --uuid none -k "$K/key+cert.pem" "$f"
expect_eq "uevm verify finds the certificate by its SKID keyid" pass \
	"$(uevm_status "$f" --uuid none --cert "$K/skid.pem")"
expect_eq "a certificate with the same key but another SKID is not used" fail \
	"$(uevm_status "$f" --uuid none --cert "$K/rsa2048.pem")"

# ---- key sources: OSSL_STORE file: URIs, encrypted keys, PKCS#11 ----------
f=$D/store
echo store >"$f"
expect_rc "uevm sign -k file:URI (OSSL_STORE)" 0 \
	"$UEVM" sign --imasig --portable -k "file:$K/p384.key" "$f"
expect_eq "... verifies" pass_immutable "$(uevm_status "$f" --cert "$K/p384.pem")"
out=$(evmctl ima_verify -k "$K/p384.der" "$f" 2>&1)
expect_match "... and evmctl accepts it" "verification is OK" "$out"
openssl pkey -in "$K/rsa2048.key" -aes256 -passout pass:s3cret -out "$K/enc.key"
printf 's3cret\n' >"$T/pass"
chmod 600 "$T/pass"
expect_rc "an encrypted key without its pass phrase is refused" 2 \
	"$UEVM" sign -k "$K/enc.key" "$f"
expect_rc "an encrypted key with --pass-file signs" 0 \
	"$UEVM" sign -k "$K/enc.key" --pass-file "$T/pass" "$f"
out=$(evmctl ima_verify -k "$K/rsa2048.der" "$f" 2>&1)
expect_match "... verifiably" "verification is OK" "$out"
out=$("$UEVM" sign -k "pkcs11:token=none;object=none" "$f" 2>&1)
expect_match "a pkcs11: URI without a PKCS#11 provider is refused with the reason" \
	"pkcs11.*provider" "$out"
openssl genpkey -algorithm ed25519 -out "$K/ed.key" 2>/dev/null
out=$("$UEVM" sign -k "$K/ed.key" "$f" 2>&1)
expect_match "keys the kernel cannot verify are refused" "not supported" "$out"
openssl ecparam -name secp256k1 -genkey -noout -out "$K/k1.key" 2>/dev/null
out=$("$UEVM" sign -k "$K/k1.key" "$f" 2>&1)
expect_match "ECDSA curves the kernel lacks are refused" "NIST" "$out"
