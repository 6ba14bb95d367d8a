#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Signatures that must not pass get the kernel's status and cause: wrong
# certificate, corrupted signature, wrong keyid, truncated header, bad size
# field, unknown version, changed content or metadata; appraise_type=imasig
# (--imasig); a valid 0x03 EVM signature replaced by the HMAC
# (--fix-evm-sig); signature version 3 checked with the openssl CLI.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"

K=$T/keys
mkdir "$K"
SIG_KEYS="rsa2048 p384" make_sig_keys "$K"
make_key "$T/hmac.key"
D=$T/d
mkdir "$D"

# verdict PATH ARGS...: "status cause" from `uevm verify -v`, whose lines
# read "OK|FAIL PATH: status (cause): detail".
verdict() {
	local p=$1 line rest st cause=""
	shift
	line=$("$UEVM" verify -v "$@" "$p" 2>&1 | head -n1)
	rest=${line#*"$p": }
	st=${rest%%[ :]*}
	rest=${rest#"$st"}
	if [[ $rest =~ ^\ \(([^\)]*)\) ]]; then
		cause=${BASH_REMATCH[1]}
	fi
	echo "$st${cause:+ $cause}"
}
V=(--uuid none --hmac-key "raw:$T/hmac.key" --cert "$K/rsa2048.pem")

# set_hex PATH NAME HEX
set_hex() { setfattr -h -n "$2" -v "0x$3" "$1"; }
# A copy of the signed reference file with one xattr replaced.  A 0x03
# EVM signature covers the inode: unless the case is about security.evm,
# EVM is signed again over the replaced value (evmctl signs the stored
# security.ima as it is).
variant() {	# name [xattr hex]
	cp --preserve=all "$D/ref" "$D/$1"
	set_hex "$D/$1" security.ima "$(xattr_hex security.ima "$D/ref")"
	set_hex "$D/$1" security.evm "$(xattr_hex security.evm "$D/ref")"
	[ -n "${2:-}" ] && set_hex "$D/$1" "$2" "$3"
	if [ "${2:-}" != security.evm ]; then
		evmctl sign -u -k "$K/rsa2048.key" "$D/$1" >/dev/null 2>&1
	fi
	return 0
}

head -c 3000 /dev/urandom >"$D/ref"
"$UEVM" sign --imasig --evm --uuid none -k "$K/rsa2048.key" "$D/ref"
expect_eq "reference file passes" "pass" "$(verdict "$D/ref" "${V[@]}")"
IMA=$(xattr_hex security.ima "$D/ref")
EVM=$(xattr_hex security.evm "$D/ref")

# ---- IMA signature --------------------------------------------------------
# IMA signed with the P-384 key, EVM with the RSA key (evmctl signs EVM
# over the stored security.ima); only the RSA certificate is known.
cp "$D/ref" "$D/ima_cert"
"$UEVM" sign --imasig -k "$K/p384.key" "$D/ima_cert"
evmctl sign -u -k "$K/rsa2048.key" "$D/ima_cert" >/dev/null 2>&1
expect_eq "IMA: wrong certificate -> fail invalid-signature" "fail invalid-signature" \
	"$(verdict "$D/ima_cert" "${V[@]}")"
# Only the wrong certificate: EVM fails first, as in the kernel.
expect_eq "wrong certificate only: EVM is checked first -> invalid-HMAC" "fail invalid-HMAC" \
	"$(verdict "$D/ref" --uuid none --cert "$K/p384.pem")"
last=${IMA: -2}
flip=$(printf '%02x' $((16#$last ^ 1)))
variant ima_corrupt security.ima "${IMA:0:$((${#IMA} - 2))}$flip"
expect_eq "IMA: corrupted signature -> fail invalid-signature" "fail invalid-signature" \
	"$(verdict "$D/ima_corrupt" "${V[@]}")"
variant ima_keyid security.ima "${IMA:0:6}deadbeef${IMA:14}"
expect_eq "IMA: wrong keyid -> fail invalid-signature" "fail invalid-signature" \
	"$(verdict "$D/ima_keyid" "${V[@]}")"
expect_match "... detail names the keyid" "no certificate with keyid deadbeef" \
	"$("$UEVM" verify "${V[@]}" "$D/ima_keyid" 2>&1)"
variant ima_trunc security.ima "${IMA:0:12}"
expect_eq "IMA: truncated header -> fail invalid-signature" "fail invalid-signature" \
	"$(verdict "$D/ima_trunc" "${V[@]}")"
variant ima_size security.ima "${IMA:0:14}0001${IMA:18}"
expect_eq "IMA: size field not matching -> fail invalid-signature" "fail invalid-signature" \
	"$(verdict "$D/ima_size" "${V[@]}")"
variant ima_v4 security.ima "0304${IMA:4}"
expect_eq "IMA: signature version 4 -> fail invalid-signature-version" \
	"fail invalid-signature-version" "$(verdict "$D/ima_v4" "${V[@]}")"
variant ima_content
echo "appended" >>"$D/ima_content"
evmctl sign -u -k "$K/rsa2048.key" "$D/ima_content" >/dev/null 2>&1
expect_eq "IMA: the content-changed file still has the original signature" "$IMA" \
	"$(xattr_hex security.ima "$D/ima_content")"
expect_eq "IMA: content changed -> fail invalid-signature" "fail invalid-signature" \
	"$(verdict "$D/ima_content" "${V[@]}")"

# ---- EVM signature (0x03) ---------------------------------------------------
variant evm_corrupt security.evm "${EVM:0:$((${#EVM} - 2))}$(printf '%02x' $((16#${EVM: -2} ^ 0x80)))"
expect_eq "EVM: corrupted signature -> fail invalid-HMAC" "fail invalid-HMAC" \
	"$(verdict "$D/evm_corrupt" "${V[@]}")"
variant evm_keyid security.evm "${EVM:0:6}01020304${EVM:14}"
expect_eq "EVM: wrong keyid -> fail invalid-HMAC" "fail invalid-HMAC" \
	"$(verdict "$D/evm_keyid" "${V[@]}")"
variant evm_trunc security.evm "${EVM:0:16}"
expect_eq "EVM: truncated header -> fail invalid-HMAC" "fail invalid-HMAC" \
	"$(verdict "$D/evm_trunc" "${V[@]}")"
cp --preserve=all "$D/ref" "$D/evm_mode"
"$UEVM" sign --imasig --evm --uuid none -k "$K/rsa2048.key" "$D/evm_mode"
chmod 600 "$D/evm_mode"
expect_eq "EVM: mode changed -> fail invalid-HMAC" "fail invalid-HMAC" \
	"$(verdict "$D/evm_mode" "${V[@]}")"
expect_eq "EVM: HMAC key but no certificate -> fail invalid-HMAC" "fail invalid-HMAC" \
	"$(verdict "$D/ref" --uuid none --hmac-key "raw:$T/hmac.key")"
expect_rc "EVM: a failing signature makes uevm verify exit 1" 1 \
	"$UEVM" verify --uuid none --cert "$K/p384.pem" "$D/ref"

# ---- portable (0x05) ---------------------------------------------------------
cp --preserve=all "$D/ref" "$D/portable"
"$UEVM" sign --imasig --portable -k "$K/rsa2048.key" "$D/portable"
P=$(xattr_hex security.evm "$D/portable")
expect_eq "portable: pass_immutable" "pass_immutable" "$(verdict "$D/portable" "${V[@]}")"
pv() {	# name hex
	cp --preserve=all "$D/portable" "$D/$1"
	set_hex "$D/$1" security.ima "$(xattr_hex security.ima "$D/portable")"
	set_hex "$D/$1" security.evm "$2"
}
pv p_cert "$P"
expect_eq "portable: wrong certificate -> fail_immutable invalid-fail-immutable" \
	"fail_immutable invalid-fail-immutable" \
	"$(verdict "$D/p_cert" --uuid none --cert "$K/p384.pem")"
pv p_corrupt "${P:0:40}$(printf '%02x' $((16#${P:40:2} ^ 0xff)))${P:42}"
expect_eq "portable: corrupted signature -> fail_immutable" "fail_immutable invalid-fail-immutable" \
	"$(verdict "$D/p_corrupt" "${V[@]}")"
pv p_keyid "${P:0:6}cafef00d${P:14}"
expect_eq "portable: wrong keyid -> fail_immutable" "fail_immutable invalid-fail-immutable" \
	"$(verdict "$D/p_keyid" "${V[@]}")"
pv p_size "${P:0:14}0002${P:18}"
expect_eq "portable: bad size field -> fail_immutable" "fail_immutable invalid-fail-immutable" \
	"$(verdict "$D/p_size" "${V[@]}")"
pv p_trunc "${P:0:18}"
expect_eq "portable: truncated header (no signature) -> fail (not immutable)" \
	"fail invalid-HMAC" "$(verdict "$D/p_trunc" "${V[@]}")"
pv p_noima "$P"
setfattr -h -x security.ima "$D/p_noima"
expect_eq "portable without security.ima -> no_label missing-hash" "no_label missing-hash" \
	"$(verdict "$D/p_noima" "${V[@]}")"
expect_match "... and EVM alone fails immutable (portable needs security.ima)" \
	'"evm_status": "fail_immutable"' "$("$UEVM" verify --json "${V[@]}" "$D/p_noima" 2>&1)"
pv p_chown "$P"
chown 4242 "$D/p_chown"
expect_eq "portable: owner changed -> fail_immutable" "fail_immutable invalid-fail-immutable" \
	"$(verdict "$D/p_chown" "${V[@]}")"

# ---- appraise_type=imasig (--imasig) ----------------------------------------
head -c 100 /dev/urandom >"$D/hashed"
"$UEVM" label --uuid none --hmac-key "raw:$T/hmac.key" "$D/hashed"
expect_eq "hash + HMAC passes without --imasig" pass "$(verdict "$D/hashed" "${V[@]}")"
expect_eq "--imasig: hash + HMAC -> fail IMA-signature-required" "fail IMA-signature-required" \
	"$(verdict "$D/hashed" --imasig "${V[@]}")"
expect_eq "--imasig: IMA signature passes" pass "$(verdict "$D/ref" --imasig "${V[@]}")"
cp "$D/hashed" "$D/hashed_portable"
"$UEVM" sign --portable -k "$K/rsa2048.key" "$D/hashed_portable"
expect_eq "--imasig: hash + valid portable EVM signature is accepted (as the kernel)" \
	pass_immutable "$(verdict "$D/hashed_portable" --imasig "${V[@]}")"
head -c 100 /dev/urandom >"$D/nolabel"
expect_eq "--imasig: no security.ima -> no_label IMA-signature-required" \
	"no_label IMA-signature-required" "$(verdict "$D/nolabel" --imasig "${V[@]}")"

# ---- a valid 0x03 EVM signature replaced by the HMAC ----------------------------
cp --preserve=all "$D/ref" "$D/fix"
"$UEVM" sign --imasig --evm --uuid none -k "$K/rsa2048.key" "$D/fix"
before=$(xattr_hex security.evm "$D/fix")
"$UEVM" verify "${V[@]}" "$D/fix" >/dev/null 2>&1
expect_eq "without --fix-evm-sig verify changes nothing" "$before" "$(xattr_hex security.evm "$D/fix")"
expect_rc "--fix-evm-sig: verify passes" 0 "$UEVM" verify --fix-evm-sig "${V[@]}" "$D/fix"
expect_eq "--fix-evm-sig: security.evm is now the HMAC uevm hmac computes" \
	"$("$UEVM" hmac --uuid none --hmac-key "raw:$T/hmac.key" "$D/fix" | cut -d' ' -f1)" \
	"$(xattr_hex security.evm "$D/fix")"
expect_eq "... which is the kernel's HMAC (openssl reference)" \
	"02$(ref_evm_hmac "$T/hmac.key" "$D/fix" "$(ext4_generation "$D/fix")")" \
	"$(xattr_hex security.evm "$D/fix")"
expect_match "... and EVM verifies with the HMAC key alone" '"evm_status": "pass"' \
	"$("$UEVM" verify --json --uuid none --hmac-key "raw:$T/hmac.key" "$D/fix" 2>&1)"
cp --preserve=all "$D/portable" "$D/fix_portable"
set_hex "$D/fix_portable" security.evm "$P"
"$UEVM" verify --fix-evm-sig "${V[@]}" "$D/fix_portable" >/dev/null 2>&1
expect_eq "--fix-evm-sig never replaces a portable signature" "$P" \
	"$(xattr_hex security.evm "$D/fix_portable")"

# ---- signature version 3 ------------------------------------------------------------
f=$D/v3
head -c 777 /dev/urandom >"$f"
"$UEVM" sign --sigv3 --imasig --portable -a sha384 -k "$K/p384.key" "$f"
ima=$(xattr_hex security.ima "$f")
evm=$(xattr_hex security.evm "$f")
expect_eq "v3: IMA header says version 3" 030305 "${ima:0:6}"
digest_file sha384 "$f" "$T/dig"
v3_digest_file 03 sha384 "$T/dig" "$T/v3dig"
sig_body_file "$ima" "$T/sig"
check "v3: openssl verifies the IMA signature over H(ima_file_id{03, sha384, digest})" \
	pkey_verify "$K/p384.pub" sha384 "$T/v3dig" "$T/sig"
hex_to_file "$(ref_evm_sig_data "$f" 05)" "$T/evmdata"
digest_file sha384 "$T/evmdata" "$T/evmdig"
v3_digest_file 05 sha384 "$T/evmdig" "$T/v3evm"
sig_body_file "$evm" "$T/sig"
check "v3: openssl verifies the portable EVM signature over H(ima_file_id{05, sha384, hash})" \
	pkey_verify "$K/p384.pub" sha384 "$T/v3evm" "$T/sig"
expect_eq "v3: uevm verify passes" pass_immutable \
	"$(verdict "$f" --uuid none --cert "$K/p384.pem")"
variant_v3=$D/v3_as_v2
cp --preserve=all "$f" "$variant_v3"
set_hex "$variant_v3" security.ima "0302${ima:4}"
evmctl sign --portable -a sha384 -k "$K/p384.key" "$variant_v3" >/dev/null 2>&1
expect_eq "v3 signature relabelled as v2 fails" "fail invalid-signature" \
	"$(verdict "$variant_v3" --uuid none --cert "$K/p384.pem")"
