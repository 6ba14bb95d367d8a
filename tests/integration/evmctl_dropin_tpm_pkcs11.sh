#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# evmctl mode as a drop-in for evmctl 1.6.2, where keys live on a PKCS#11
# token and PCRs in a TPM found the way the TSS finds one:
#  - --engine pkcs11, and a pkcs11: key URI without --engine (1.6.2 then
#    loads the "pkcs11" provider, else the "pkcs11" engine), with a SoftHSM
#    token made here; signatures are checked by Debian's evmctl (1.4).
#    libengine-pkcs11-openssl loads p11-kit's proxy module unless told
#    otherwise, and p11-kit loads SoftHSM (its softhsm2.module), which
#    reads SOFTHSM2_CONF: that variable is all the setup the engine needs.
#  - no TCTI in the environment: the TSS loader's default order, which
#    ends with swtpm on 127.0.0.1:2321; a swtpm started there is found.
#  - ima_measurement's exits on missing, empty, directory and malformed
#    lists and with no TPM; -t without 'f'; --help and --version.
# Where 1.6.2 differs from the installed 1.4 its result is asserted with a
# reference to its source; uevm's deliberate differences are marked.
source "$(dirname "$0")/../lib.sh"

for tool in evmctl softhsm2-util pkcs11-tool openssl swtpm tpm2_pcrread \
	tpm2_pcrextend ss; do
	if ! command -v "$tool" >/dev/null; then
		fail "tools" "$tool is missing (scripts/install-deps.sh installs it)"
		exit 1
	fi
done
SOFTHSM_MODULE=/usr/lib/softhsm/libsofthsm2.so
W=$T/w
mkdir "$W"
cd "$W" || exit 1
source "$TESTS_DIR/evmctl_diff_lib.sh"
source "$TESTS_DIR/swtpm-lib.sh"
# Nothing from the caller's environment picks a TPM for the runs below.
unset UEVM_TCTI TPM2TOOLS_TCTI TSS2_TCTI TCTI_NAME
printf 'some content\n' >f

# ---- --version and --help ---------------------------------------------------
# 1.6.2 main(): case 129 prints "evmctl %s\n" with VERSION and exits 0.
as_162 "--version" 0 "evmctl 1.6.2" "" --version
for form in link uevm; do
	run_form "$form" --help >"$T/help.out" 2>"$T/help.err"
	expect_eq "--help [$form]: exit status" 0 "$?"
	expect_eq "--help [$form]: the first lines (1.6.2 usage())" \
		"$(printf 'Usage: evmctl [-v] <command> [OPTIONS]\ncommands:\n --version ')" \
		"$(head -n 3 "$T/help.out")"
	# 1.6.2's cmds[] with DEBUG (its configure's default) and no SIGV1.
	expect_eq "--help [$form]: the commands (1.6.2 cmds[])" \
		"help import sign verify ima_sign ima_verify ima_setxattr ima_hash ima_measurement ima_boot_aggregate ima_fix ima_clear sign_hash hmac" \
		"$(sed -n '4,/^$/p' "$T/help.out" | awk 'NF { printf "%s%s", sep, $1; sep = " " }')"
	# Every option 1.6.2's usage() lists (with engine and provider
	# support), and the ones only its commands' lines name.
	missing=
	for o in --hashalgo --imasig --veritysig --imahash --sigfile --xattr-user \
		--key --keyid --keyid-from-cert --portable --pass --recursive --type \
		--uuid --smack --m32 --m64 --ino --uid --gid --mode --generation --ima \
		--selinux --caps --verify-sig --engine --provider --ignore-violations \
		--hmackey --pcrs --verify-bank --hwtpm --help; do
		grep -qE -- "^ *(-[a-z], )?$o([ =[]|\$)" "$T/help.out" || missing+=" $o"
	done
	expect_eq "--help [$form]: lists every option" "" "$missing"
	expect_eq "--help [$form]: nothing on stderr" "" "$(cat "$T/help.err")"
done

# ---- a SoftHSM token with an RSA key -------------------------------------------
# Under AddressSanitizer: libengine-pkcs11-openssl 0.4.12 never frees the
# methods it makes when loaded (ENGINE_by_id), asked for (ENGINE_get_pkey_meth:
# --engine makes it the default, as in evmctl) and unloaded (ENGINE_remove),
# whatever its user does; those stacks only are not reported.
printf 'leak:ENGINE_by_id\nleak:ENGINE_get_pkey_meth\nleak:ENGINE_remove\n' >"$T/lsan.supp"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$T/lsan.supp:print_suppressions=0"
export SOFTHSM2_CONF=$T/softhsm2.conf
mkdir "$T/tokens"
printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' \
	"$T/tokens" >"$SOFTHSM2_CONF"
openssl genrsa -out "$T/key.pem" 2048 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in "$T/key.pem" -outform DER -out "$T/key.der"
openssl req -new -x509 -key "$T/key.pem" -subj /CN=uevm-p11 -days 2 \
	-addext subjectKeyIdentifier=hash -outform DER -out "$T/cert.der" 2>/dev/null
if softhsm2-util --init-token --free --label uevmtest --pin 1234 --so-pin 5678 \
	>"$T/p11.log" 2>&1 &&
   pkcs11-tool --module "$SOFTHSM_MODULE" --login --pin 1234 --token-label uevmtest \
	--write-object "$T/key.der" --type privkey --id 01 --label k >>"$T/p11.log" 2>&1; then
	pass "a SoftHSM token holds the key"
else
	fail "a SoftHSM token holds the key" "$(tail -n 3 "$T/p11.log")"
	exit 1
fi
URI='pkcs11:token=uevmtest;object=k;type=private'
KEYID=$(openssl x509 -inform DER -in "$T/cert.der" -noout -ext subjectKeyIdentifier |
	sed -n 's/^ *//; s/://g; 2p' | tail -c 9 | tr A-F a-f)

# ---- --engine pkcs11, and a pkcs11: URI without it ----------------------------
same "ima_sign --engine pkcs11" "" -n --engine pkcs11 --keyid "$KEYID" \
	ima_sign -k "$URI;pin-value=1234" f
# Without --engine 1.6.2 main() loads the "pkcs11" provider, else the
# "pkcs11" engine (1.4: the engine); Debian 12 has no pkcs11 provider.
same "ima_sign with a pkcs11: URI alone" "" -n --keyid "$KEYID" \
	ima_sign -k "$URI;pin-value=1234" f
sha256sum f >sums
same_stdin "sign_hash --engine pkcs11" sums --engine pkcs11 --keyid "$KEYID" \
	sign_hash -k "$URI;pin-value=1234"
same_stdin "sign_hash with a pkcs11: URI alone" sums --keyid "$KEYID" \
	sign_hash -k "$URI;pin-value=1234"
# 1.6.2 read_priv_pkey_engine(): the keyid must be given.
same "a pkcs11: URI needs --keyid" "" -n --engine pkcs11 ima_sign -k "$URI;pin-value=1234" f
# The PIN from --pass (1.6.2: ENGINE_ctrl_cmd_string "PIN"); the signature,
# written to security.ima, verifies with Debian's evmctl and the certificate.
for form in link uevm; do
	cp f "f.$form"
	run_form "$form" --engine pkcs11 --keyid-from-cert "$T/cert.der" -p1234 \
		ima_sign -k "$URI" "f.$form" >"$T/u.out" 2>"$T/u.err"
	expect_eq "ima_sign --engine with the PIN from --pass [$form]" 0 "$?"
	expect_match "[$form]: Debian's evmctl verifies it" "verification is OK" \
		"$("$DEB" ima_verify -k "$T/cert.der" "f.$form" 2>&1)"
done
# A portable EVM signature (no fs UUID, which evmctl 1.4 cannot read
# here) with the engine's key, checked by Debian's evmctl.
for form in link uevm; do
	cp f "g.$form"
	run_form "$form" --engine pkcs11 --keyid "$KEYID" --imahash --portable \
		sign -k "$URI;pin-value=1234" "g.$form" >"$T/u.out" 2>"$T/u.err"
	expect_eq "sign (EVM) --engine pkcs11 [$form]" 0 "$?"
	expect_match "[$form]: Debian's evmctl verifies the EVM signature" "verification is OK" \
		"$("$DEB" verify --portable -k "$T/cert.der" "g.$form" 2>&1)"
done
# A missing object: 1.6.2 read_priv_pkey_engine() logs "Failed to load
# private key URI" and the command fails (125); 1.4 crashes here.
for form in link uevm; do
	run_form "$form" -n --engine pkcs11 --keyid 1 ima_sign \
		-k 'pkcs11:token=uevmtest;object=nosuch;pin-value=1234' f >"$T/u.out" 2>"$T/u.err"
	expect_eq "a missing token object [$form]: exit status (1.6.2)" 125 "$?"
	expect_match "[$form]: 1.6.2's message" \
		'^Failed to load private key pkcs11:token=uevmtest;object=nosuch' "$(cat "$T/u.err")"
done
# An unknown engine: 1.6.2 logs "engine e isn't available" and
# "setup_engine failed", then exits 0 without running the command; uevm
# exits 125 (documented difference, as for --provider).
for form in link uevm; do
	run_form "$form" -n --engine nosuch ima_hash f >"$T/u.out" 2>"$T/u.err"
	expect_eq "--engine nosuch [$form]: exit status" 125 "$?"
	expect_eq "--engine nosuch [$form]: the command did not run" "" "$(cat "$T/u.out")"
	expect_match "--engine nosuch [$form]: 1.6.2's messages" \
		"^engine nosuch isn't available" "$(head -n 1 "$T/u.err")"
	expect_match "--engine nosuch [$form]: setup_engine failed" \
		"^setup_engine failed" "$(tail -n 1 "$T/u.err")"
done
# A file key with --engine: the engine does not serve it (1.6.2
# read_priv_pkey() reads files itself).
same "--engine pkcs11 with a key file" "" -n --engine pkcs11 ima_sign -k "$T/key.pem" f

# ---- ima_measurement: lists it cannot use ---------------------------------------
mkpcrs() {	# out: PCR-00..23 all zero, sha1
	for i in $(seq 0 23); do printf 'PCR-%02d: %040d\n' "$i" 0; done >"$1"
}
mkpcrs zero1
same "ima_measurement: a missing list" "" ima_measurement --pcrs sha1,zero1 nosuch.bin
# 1.6.2 reads no entry from an empty list or a directory and exits 0
# ("Matched per TPM bank calculated digest(s)." having compared nothing);
# uevm refuses them (125).
: >empty.bin
mkdir dir.bin
for form in link uevm; do
	run_form "$form" ima_measurement --pcrs sha1,zero1 empty.bin >"$T/u.out" 2>"$T/u.err"
	expect_eq "ima_measurement: an empty list [$form]" 125 "$?"
	expect_match "[$form]: says so" "empty.bin: the measurement list is empty" "$(cat "$T/u.err")"
	run_form "$form" ima_measurement --pcrs sha1,zero1 dir.bin >"$T/u.out" 2>"$T/u.err"
	expect_eq "ima_measurement: a directory [$form]" 125 "$?"
	expect_match "[$form]: says so" "dir.bin: Is a directory" "$(cat "$T/u.err")"
done
# Headers evmctl stops at with exit 1: a PCR beyond 23, a name over 255.
printf '\x20\x00\x00\x00' >badpcr.bin
head -c 24 /dev/zero >>badpcr.bin
same "ima_measurement: PCR 32" "" ima_measurement --pcrs sha1,zero1 badpcr.bin
{ printf '\x0a\x00\x00\x00'; head -c 20 /dev/zero; printf '\x00\x01\x00\x00'; } >longname.bin
same "ima_measurement: a 256-byte template name" "" ima_measurement --pcrs sha1,zero1 longname.bin
# Truncated after the header: 1.6.2 "Unable to read template name" and
# then the last entry's result (0 here: none); uevm 125 with its reason.
{ printf '\x0a\x00\x00\x00'; head -c 20 /dev/zero; printf '\x06\x00\x00\x00ima'; } >short.bin
for form in link uevm; do
	run_form "$form" ima_measurement --pcrs sha1,zero1 short.bin >/dev/null 2>&1
	expect_eq "ima_measurement: a truncated list [$form]" 125 "$?"
done

# ---- -t without 'f' ------------------------------------------------------------
# 1.6.2 get_file_type(): with -t the file types are those the value names,
# so without 'f' no file is visited; uevm also says so on stderr.
mkdir -p tree/sub
echo a >tree/a
echo b >tree/sub/b
same "ima_hash -r -t m: no file" '/no file is visited$/d' -n -r -t m ima_hash tree
same "ima_hash -r -t fm" "" -n -r -t fm ima_hash tree
same "ima_hash -r -t x: no file" '/no file is visited$/d' -n -r -t x ima_hash tree

# ---- the TPM the TSS loader finds --------------------------------------------
"$UEVM" measurements add --list ml.bin --tcti none --template ima-ng f >/dev/null 2>&1
if [ -e /dev/tpmrm0 ] || [ -e /dev/tpm0 ] || [ -e /sys/class/tpm/tpm0 ]; then
	echo "SKIP: this machine has a TPM, which the TSS loader (and sysfs) would use before a swtpm"
	exit 0
fi
if ss -ltn | grep -qE ':(2321|2322)\b'; then
	echo "SKIP: 127.0.0.1:2321/2322 is taken: the TSS loader would read whatever listens there"
	exit 0
fi
# No TPM at all.  1.6.2 cmd_ima_bootaggr(): "Failed to read any TPM PCRs"
# and -1 (125).  1.6.2 ima_measurement(): the same line, then exit 0 with
# no PCR compared; uevm exits 125 (documented difference).
for form in link uevm; do
	run_form "$form" ima_boot_aggregate >"$T/u.out" 2>"$T/u.err"
	expect_eq "ima_boot_aggregate without a TPM [$form]: exit status (1.6.2)" 125 "$?"
	expect_eq "[$form]: the message (1.6.2; the TSS's own log is quiet)" \
		"Failed to read any TPM PCRs" "$(cat "$T/u.err")"
	run_form "$form" ima_measurement ml.bin >"$T/u.out" 2>"$T/u.err"
	expect_eq "ima_measurement without a TPM [$form]: not 0" 125 "$?"
	expect_match "[$form]: 1.6.2's line" "^Failed to read any TPM PCRs$" "$(cat "$T/u.err")"
	expect_match "[$form]: and why it fails" "ml.bin: not verified: no TPM PCRs" "$(cat "$T/u.err")"
done

start_swtpm 2321
case $? in
0) pass "swtpm on 127.0.0.1:2321" ;;
2) echo "SKIP: 127.0.0.1:2321/2322 was taken meanwhile"; exit 0 ;;
*) fail "swtpm on 127.0.0.1:2321" "$(tail -n 5 "$T/swtpm.log")"; exit 1 ;;
esac
rm -f ml.bin
"$UEVM" measurements add --list ml.bin --tcti "$TCTI" --template ima-ng f >/dev/null 2>&1
expect_eq "the list is extended into the swtpm" 0 "$?"
pcr_file sha1 pcrs1
pcr_file sha256 pcrs256
for form in link uevm; do
	run_form "$form" ima_measurement ml.bin >"$T/u.out" 2>"$T/u.err"
	expect_eq "ima_measurement, TPM from the TSS loader [$form]" 0 "$?"
	expect_match "[$form]: matched" "^Matched per TPM bank calculated digest\(s\)\.$" \
		"$(cat "$T/u.err")"
	expect_eq "ima_boot_aggregate, TPM from the TSS loader [$form]" \
		"$("$DEB" ima_boot_aggregate --pcrs sha1,pcrs1 --pcrs sha256,pcrs256 2>/dev/null)" \
		"$(run_form "$form" ima_boot_aggregate 2>/dev/null)"
done
expect_rc "Debian's evmctl agrees with the swtpm's PCRs" 0 \
	"$DEB" ima_measurement --pcrs sha1,pcrs1 --pcrs sha256,pcrs256 ml.bin
# PCR 10 moves on without the list: the replay no longer matches.
tpm_extend 10 "not in the list" >/dev/null
for form in link uevm; do
	run_form "$form" ima_measurement ml.bin >"$T/u.out" 2>"$T/u.err"
	expect_eq "ima_measurement, PCR 10 extended past the list [$form]" 1 "$?"
	expect_match "[$form]: evmctl's verdict" \
		"^Failed to match per TPM bank or SHA1 padded TPM digest\(s\)\.$" "$(cat "$T/u.err")"
done
# PCR 0 moves: boot_aggregate follows the TPM.
tpm_extend 0 "firmware" >/dev/null
pcr_file sha1 pcrs1
pcr_file sha256 pcrs256
for form in link uevm; do
	expect_eq "ima_boot_aggregate follows PCR 0 [$form]" \
		"$("$DEB" ima_boot_aggregate --pcrs sha1,pcrs1 --pcrs sha256,pcrs256 2>/dev/null)" \
		"$(run_form "$form" ima_boot_aggregate 2>/dev/null)"
done
