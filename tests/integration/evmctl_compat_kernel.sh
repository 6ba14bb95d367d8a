#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Where uevm's evmctl mode deliberately follows the kernel (and evmctl 1.6)
# rather than evmctl 1.4: the HMAC is evmctl 1.6.2's, which for the files
# here is the kernel's (HMAC-SHA1 with the 128-byte key buffer, the fs UUID
# from FS_IOC_GETFSUUID unless -u, directory generations; where 1.6.2 and
# the kernel part see evmctl_dropin_evm.sh), checked against an openssl-command-line
# reference; exit codes 0 / 1 / 125; PEM certificates; --xattr-user;
# signature version 3; the opt-in `make install EVMCTL_LINK=1` link.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"

EV=$T/bin/evmctl
mkdir "$T/bin"
ln -s "$UEVM" "$EV"
K=$T/keys
mkdir "$K"
SIG_KEYS="rsa2048 p384" make_sig_keys "$K"
make_key "$T/hmac.key"
W=$T/w
mkdir "$W"
cd "$W" || exit 1
head -c 2000 /dev/urandom >f
mkdir dir
"$EV" ima_hash f >/dev/null 2>&1

# fs UUID as the kernel binds it (FS_IOC_GETFSUUID); 16 zero bytes answer
# on some root filesystems, which is still a UUID the HMAC includes.
FSUUID=$(perl -e '
	open(my $fh, "<", ".") or die; my $b = pack("C", 16) . ("\0" x 16);
	ioctl($fh, 0x80111500, $b) or die "ioctl: $!"; print unpack("H*", substr($b, 1, 16));' 2>/dev/null)
if [ ${#FSUUID} -ne 32 ]; then
	fail "FS_IOC_GETFSUUID answers on the test filesystem" "$FSUUID"
fi
GEN=$(ext4_generation f)

out=$("$EV" hmac --hmackey "$T/hmac.key" -n f 2>&1)
expect_match "hmac prints the kernel's HMAC with the fs UUID" \
	"^hmac: $(ref_evm_hmac "$T/hmac.key" f "$GEN" "$FSUUID")$" "$out"
"$EV" hmac --hmackey "$T/hmac.key" f >/dev/null 2>&1
expect_eq "hmac writes 0x02 + that HMAC" "02$(ref_evm_hmac "$T/hmac.key" f "$GEN" "$FSUUID")" \
	"$(xattr_hex security.evm f)"
expect_eq "... which is what uevm hmac computes" "$("$UEVM" hmac --hmac-key "raw:$T/hmac.key" f | cut -d' ' -f1)" \
	"$(xattr_hex security.evm f)"
out=$("$EV" -a sha256 hmac -u --hmackey "$T/hmac.key" -n f 2>&1)
expect_match "-u: no fs UUID, and HMAC-SHA1 whatever -a says" \
	"^hmac: $(ref_evm_hmac "$T/hmac.key" f "$GEN")$" "$out"
U=0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9
out=$("$EV" "--uuid=$U" hmac --hmackey "$T/hmac.key" -n f 2>&1)
expect_match "--uuid=UUID binds that UUID" "^hmac: $(ref_evm_hmac "$T/hmac.key" f "$GEN" "$U")$" "$out"
expect_match "... and logs it as evmctl does" "^uuid: 0a1b2c3d4e5f60718293a4b5c6d7e8f9$" "$out"
expect_rc "a malformed UUID is an internal error (125)" 125 \
	"$EV" --uuid=1234 hmac --hmackey "$T/hmac.key" -n f
setfattr -n security.selinux -v "system_u:object_r:etc_t:s0" dir 2>/dev/null ||
	setfattr -n security.apparmor -v "unconfined" dir
out=$("$EV" -u hmac --hmackey "$T/hmac.key" -n dir 2>&1)
expect_match "a directory's HMAC binds its real generation (evmctl 1.4 used 0)" \
	"^hmac: $(ref_evm_hmac "$T/hmac.key" dir "$(ext4_generation dir)")$" "$out"
head -c 129 /dev/urandom >"$T/bigkey"
expect_rc "an HMAC key over 128 bytes is refused (125)" 125 "$EV" hmac --hmackey "$T/bigkey" -n f
expect_match "... saying so" "key is too long: 129" \
	"$("$EV" hmac --hmackey "$T/bigkey" -n f 2>&1)"

# ---- exit codes and certificates -------------------------------------------
"$EV" ima_sign -k "$K/rsa2048.key" f >/dev/null 2>&1
expect_rc "ima_verify good: 0" 0 "$EV" ima_verify -k "$K/rsa2048.der" f
expect_rc "ima_verify with a PEM certificate (accepted, unlike evmctl): 0" 0 \
	"$EV" ima_verify -k "$K/rsa2048.pem" f
expect_rc "ima_verify with the wrong certificate: 1" 1 "$EV" ima_verify -k "$K/p384.der" f
"$EV" sign -k "$K/rsa2048.key" f >/dev/null 2>&1
expect_rc "sign without -u binds the fs UUID (no blkid needed); verify: 0" 0 \
	"$EV" verify -k "$K/rsa2048.der" f
expect_rc "... and without the UUID the check fails: 1" 1 "$EV" verify -u -k "$K/rsa2048.der" f
expect_rc "verify with a certificate list \"a,b\": 0" 0 \
	"$EV" verify -k "$K/p384.der,$K/rsa2048.pem" f
expect_rc "an unknown keyid: internal error 125 (as evmctl)" 125 \
	"$EV" verify -k "$K/p384.der" f
expect_rc "an unknown command: 125" 125 "$EV" nosuch
expect_rc "an unknown option: 1" 1 "$EV" --nosuch ima_hash f
expect_match "--version names evmctl 1.6" "^evmctl 1\.6" "$("$EV" --version)"
expect_match "as uevm evmctl too" "^evmctl 1\.6" "$("$UEVM" evmctl --version)"

# ---- --xattr-user ------------------------------------------------------------------
cp f u
"$EV" --xattr-user ima_hash u >/dev/null 2>&1
expect_eq "--xattr-user writes user.ima" "0404$(sha256sum u | cut -d' ' -f1)" "$(xattr_hex user.ima u)"
"$EV" --xattr-user ima_sign -k "$K/p384.key" u >/dev/null 2>&1
expect_rc "--xattr-user ima_verify reads user.ima" 0 "$EV" --xattr-user ima_verify -k "$K/p384.der" u

# ---- signature version 3 (the kernel verifies it; evmctl 1.6 cannot) ------------------
"$UEVM" sign --sigv3 --imasig --portable -k "$K/p384.key" f
expect_rc "ima_verify of a v3 IMA signature: 0" 0 "$EV" ima_verify -k "$K/p384.der" f
expect_rc "verify of a v3 portable EVM signature: 0" 0 "$EV" verify -k "$K/p384.der" f

# ---- sign_hash --veritysig: sigv3 of type 0x06 over an fs-verity digest ----------------
D256=$(head -c 32 /dev/urandom | od -An -v -tx1 | tr -d ' \n')
out=$(echo "sha256:$D256 some/file" | "$EV" sign_hash --veritysig -k "$K/p384.key" 2>/dev/null)
sig=${out##* }
expect_eq "--veritysig: header 06 03 04" 060304 "${sig:0:6}"
hex_to_file "$D256" "$T/vdig"
v3_digest_file 06 sha256 "$T/vdig" "$T/v3"
sig_body_file "$sig" "$T/vsig"
check "--veritysig: openssl verifies over H(ima_file_id{06, sha256, digest})" \
	pkey_verify "$K/p384.pub" sha256 "$T/v3" "$T/vsig"

# ---- ima_measurement on a list with ima-sig signatures: --verify-sig ---------------------
"$UEVM" measurements add --list ml.bin --tcti none --template ima-sig f >/dev/null
out=$("$EV" -v ima_measurement --verify-sig -k "$K/p384.der" ml.bin 2>&1)
expect_match "ima_measurement --verify-sig checks the recorded signature" \
	"f: verification is OK" "$out"

# ---- make install EVMCTL_LINK=1 ------------------------------------------------------------
SRC=$(cd "$TESTS_DIR/.." && pwd)
B=$(dirname "$UEVM")
if make -s -C "$SRC" B="$B" DESTDIR="$T/inst" PREFIX=/usr EVMCTL_LINK=1 install-evmctl-link \
	>"$T/make.log" 2>&1; then
	expect_eq "make install EVMCTL_LINK=1 creates bin/evmctl -> uevm" uevm \
		"$(readlink "$T/inst/usr/bin/evmctl")"
else
	fail "make install-evmctl-link" "$(tail -n3 "$T/make.log")"
fi
make -s -C "$SRC" B="$B" DESTDIR="$T/inst2" PREFIX=/usr install-evmctl-link >/dev/null 2>&1
expect_eq "without EVMCTL_LINK=1 no evmctl link is installed" "" \
	"$(ls "$T/inst2/usr/bin/evmctl" 2>/dev/null)"
