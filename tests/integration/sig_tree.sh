#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Signing a tree: parallel workers, the private key read once (strace
# counts the opens), every object handled (signed, or skipped and counted
# when there is nothing the kernel would check), and the result verified
# by uevm and, for samples, by Debian's evmctl 1.4.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"

K=$T/keys
mkdir "$K"
SIG_KEYS="rsa2048" make_sig_keys "$K"
R=$T/tree
n=0
for d in a b c; do
	for e in x y; do
		mkdir -p "$R/$d/$e"
		for i in $(seq 1 30); do
			printf 'file %s %s %s\n' "$d" "$e" "$i" >"$R/$d/$e/f$i"
			n=$((n + 1))
		done
	done
done
ln -s a/x/f1 "$R/link"
mkfifo "$R/fifo"
NFILES=$n

if command -v strace >/dev/null; then
	# LeakSanitizer cannot run under ptrace: off for the traced run.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -qq -e trace=openat,clone,clone3 -o "$T/strace.log" \
		"$UEVM" sign -r -j 4 --imasig --portable -k "$K/rsa2048.key" "$R" 2>"$T/sign.err"
	rc=$?
	expect_eq "uevm sign -r -j 4 --portable exits 0" 0 "$rc"
	expect_eq "the private key file is opened once for $NFILES files" 1 \
		"$(grep -c "rsa2048.key\"" "$T/strace.log")"
	threads=$(grep -cE '^[0-9]+ +clone3?\(' "$T/strace.log")
	expect_eq "worker threads were started for -j 4" yes "$([ "$threads" -ge 3 ] && echo yes)"
else
	fail "strace is installed"
fi

out=$("$UEVM" verify -r --cert "$K/rsa2048.pem" "$R" 2>&1)
rc=$?
expect_eq "uevm verify -r of the signed tree exits 0" 0 "$rc"
expect_match "every regular file passes immutable" "pass_immutable +$NFILES\$" "$out"
for f in a/x/f1 c/y/f30; do
	o=$(evmctl verify -k "$K/rsa2048.der" "$R/$f" 2>&1)
	expect_match "evmctl 1.4 verifies $f" "verification is OK" "$o"
	o=$(evmctl ima_verify -k "$K/rsa2048.der" "$R/$f" 2>&1)
	expect_match "evmctl 1.4 ima_verify accepts $f" "verification is OK" "$o"
done

# 0x03 signatures cover directories and other objects too, when they carry
# a protected xattr; objects without one are skipped and counted.
setfattr -n security.selinux -v "system_u:object_r:etc_t:s0" "$R/b"
out=$("$UEVM" verify -r --cert "$K/rsa2048.pem" "$R" 2>&1)
expect_match "a labelled directory without security.evm: no_label (missing-HMAC)" \
	"FAIL $R/b: no_label \(missing-HMAC\)" "$out"
out=$("$UEVM" sign -r -v --evm --uuid none -k "$K/rsa2048.key" "$R" 2>&1)
expect_match "objects without protected xattrs are reported as skipped" \
	"^skipped $R/link: no EVM-protected xattr" "$out"
expect_match "the summary counts them" "signed $((NFILES + 1)) objects, [0-9]+ skipped, 0 errors" "$out"
expect_match "a directory with security.selinux gets an EVM signature" \
	"^0302" "$(xattr_hex security.evm "$R/b")"
hex_to_file "$(ref_evm_sig_data "$R/b" 03)" "$T/d"
digest_file sha256 "$T/d" "$T/dd"
sig_body_file "$(xattr_hex security.evm "$R/b")" "$T/ds"
check "openssl verifies the directory's signature (its real generation included)" \
	pkey_verify "$K/rsa2048.pub" sha256 "$T/dd" "$T/ds"
out=$("$UEVM" verify -r --uuid none --cert "$K/rsa2048.pem" "$R" 2>&1)
expect_match "uevm verify -r: all pass" "0 failed, 0 errors" "$out"
chmod 700 "$R/b"
out=$("$UEVM" verify -r --uuid none --cert "$K/rsa2048.pem" "$R" 2>&1)
expect_match "a directory's mode change is found" "FAIL $R/b: fail" "$out"
