#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# appraise_algos=: content that passes appraisal is still refused when its
# label was made with a hash the rule does not allow, as the kernel's
# process_measurement refuses it after appraisal (audit op=collect_data
# cause=denied-hash-algorithm).  The attacker is offline: they relabel
# files with md5 or sha1 digests (any key they lack is not needed for a
# signature the signer once made with a weak hash, so those are signed
# here with the trusted key) and count on the weak hash's collisions.
# Checked with the running daemon (first open and every later one: no
# cached pass, no ignore mark lets them through) and with `uevmd --check`;
# labels with an allowed hash and the rule without appraise_algos= pass.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"
source "$TESTS_DIR/sig_ref.sh"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
mkdir -p "$T/sig"
SIG_KEYS="rsa2048" make_sig_keys "$T/sig" || { fail "openssl makes the certificates"; exit 1; }
H=(--hmac-key "raw:$T/key")
mkdir -p "$MNT/d"
for a in md5 sha1 sha256 sha384 sha512; do
	echo "digest $a" >"$MNT/d/$a"
	"$UEVM" label -q -a "$a" "${H[@]}" "$MNT/d/$a" >/dev/null
	# md5 and sha1 in the kernel's legacy form (0x01, ima_fix_xattr's
	# algo <= HASH_ALGO_SHA1), the others as 0x04 with the algorithm id.
	case $a in md5 | sha1) want=01 ;; *) want=04$(printf '%02x' "$(algo_id "$a")") ;; esac
	expect_eq "security.ima of d/$a: the kernel's form of a $a digest" "$want" \
		"$(getfattr -n security.ima -e hex --only-values "$MNT/d/$a" 2>/dev/null | xxd -p | head -c ${#want})"
done
for a in sha1 sha256; do
	echo "signed $a" >"$MNT/d/sig_$a"
	"$UEVM" sign -q -a "$a" --imasig --evm -k "$T/sig/rsa2048.key" \
		--keyid-from-cert "$T/sig/rsa2048.der" "$MNT/d/sig_$a" >/dev/null 2>&1
	expect_eq "security.ima of d/sig_$a: a v2 signature over a $a digest" \
		"0302$(printf '%02x' "$(algo_id "$a")")" \
		"$(getfattr -n security.ima -e hex --only-values "$MNT/d/sig_$a" 2>/dev/null | xxd -p | head -c 6)"
done
# Every label is good: appraisal alone passes them all.
out=$("$UEVM" verify -r "${H[@]}" --cert "$T/sig/rsa2048.der" "$MNT/d" 2>&1)
expect_eq "uevm verify passes every file (the labels are good)" 0 $?

refused="md5 sha1 sig_sha1"
allowed="sha256 sha384 sig_sha256"
echo "appraise func=FILE_CHECK appraise_algos=sha256,sha384" >"$T/policy"
write_conf "cert = $T/sig/rsa2048.der" "mode = enforce"

# ---- uevmd --check: the files with a weak hash, each named with the cause -----------
out=$("$UEVMD" -c "$CONF" --check --under "$MNT/d" 2>&1)
expect_eq "--check: exit 1 (files would be refused)" 1 $?
for f in $refused sha512; do
	expect_match "--check refuses d/$f: denied-hash-algorithm" \
		"^refused: $MNT/d/$f \(denied-hash-algorithm\)$" "$out"
done
for f in $allowed; do
	expect_eq "--check does not list d/$f" 0 "$(grep -c "refused: $MNT/d/$f " <<<"$out")"
done
expect_match "--check counts 4" "would be refused if enforcing: 4$" "$out"

# ---- the daemon: refused at every open, audited each time ---------------------------
start_uevmd || { fail "uevmd starts"; exit 1; }
for round in first second third; do
	for f in $refused sha512; do
		expect_eq "$round open of d/$f: refused" EPERM "$(open_result "$MNT/d/$f")"
	done
	for f in $allowed; do
		expect_eq "$round open of d/$f: allowed" ok "$(open_result "$MNT/d/$f")"
	done
done
for f in $refused sha512; do
	check "audit: op=collect_data cause=denied-hash-algorithm name=d/$f, every open" \
		log_has "op=collect_data cause=denied-hash-algorithm .*name=\"$MNT/d/$f\".* res=0"
	expect_eq "... one record for each of the three opens of d/$f" 3 \
		"$(grep -c "op=collect_data cause=denied-hash-algorithm .*name=\"$MNT/d/$f\"" "$LOG")"
done
expect_eq "d/sha256 is never refused for its hash" 0 \
	"$(grep -c "op=collect_data cause=denied-hash-algorithm .*name=\"$MNT/d/sha256\"" "$LOG")"
stop_uevmd

# ---- a pass for another access does not stand for a restricted one -------------------
# The open inside execve (FILE_CHECK, MAY_EXEC) is appraised by a rule
# without appraise_algos= and passes; that must not let later reads, under
# the rule with appraise_algos=, go unseen (no ignore mark for the file).
cp "$(type -P true)" "$MNT/d/true_sha1"
"$UEVM" label -q -a sha1 "${H[@]}" "$MNT/d/true_sha1" >/dev/null 2>&1
printf '%s\n' "appraise func=FILE_CHECK mask=MAY_READ appraise_algos=sha256" \
	"appraise func=FILE_CHECK mask=MAY_EXEC" >"$T/policy"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "exec of a sha1-labelled binary: allowed (no rule restricts its hash)" ok \
	"$(exec_result "$MNT/d/true_sha1")"
for round in first second; do
	expect_eq "then a read of it ($round): refused, still seen" EPERM \
		"$(open_result "$MNT/d/true_sha1")"
done
stop_uevmd

# ---- the same policy without appraise_algos=: every file passes ---------------------
echo "appraise func=FILE_CHECK" >"$T/policy"
out=$("$UEVMD" -c "$CONF" --check --under "$MNT/d" 2>&1)
expect_eq "without appraise_algos=, --check passes all (exit 0)" 0 $?
start_uevmd || { fail "uevmd starts"; exit 1; }
for f in $refused $allowed sha512; do
	expect_eq "without appraise_algos=: d/$f opens" ok "$(open_result "$MNT/d/$f")"
done
stop_uevmd
