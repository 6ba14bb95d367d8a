#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ENOSPC from a real filesystem: a small ext4 loop image with 128-byte
# inodes (no in-inode xattr space, so every labelled file needs an xattr
# block of its own).
#  1. The disk is full but for a few blocks: some files get labels, the
#     others fail with ENOSPC, each named; every file ends either fully and
#     rightly labelled or not at all.
#  2. A file whose xattr block has room for security.ima but not for
#     security.evm: the security.evm write fails with ENOSPC and the new
#     security.ima is taken back.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/faultfs-lib.sh"

KEY=$T/key
make_key "$KEY"
IMG=$T/ext4.img
M=$T/mnt
truncate -s 4M "$IMG"
mkfs.ext4 -q -F -I 128 -b 1024 -m 0 -O ^has_journal "$IMG" >/dev/null 2>&1
loop_mount "$IMG" "$M" || { fail "ext4 loop mount"; exit 1; }
mkdir "$M/t"
N=20
for i in $(seq $N); do
	{ echo "file $i"; head -c 500 /dev/urandom; } >"$M/t/f$i"
done
(cd "$M/t" && sha256sum f*) >"$T/manifest"

# ---- 1: a full disk -------------------------------------------------------

dd if=/dev/zero of="$M/fill" bs=1k 2>/dev/null
sync
# Free room for about five xattr blocks.
truncate -s $(( $(stat -c %s "$M/fill") - 5 * 1024 )) "$M/fill"
sync
err=$("$UEVM" label -r -v --hmac-key "raw:$KEY" "$M/t" 2>&1 >/dev/null)
expect_eq "label on a full disk exits 2" 2 $?
nerr=$(grep -c ": not labelled: cannot write security.ima: No space left on device" <<<"$err")
check "some files fail with ENOSPC, each named ($nerr)" test "$nerr" -ge 5
check "the run went on: some files were labelled" \
	grep -qE "labelled [1-9][0-9]* objects, $nerr errors" <<<"$err"
expect_eq "every error line names a file of the tree" "$nerr" \
	"$(grep -cE "^uevm: $M/t/f[0-9]+: not labelled: " <<<"$err")"

ref=$(python3 "$TESTS_DIR/evm_ref_check.py" --key "$KEY" --manifest "$T/manifest" "$M/t")
half=0
for i in $(seq $N); do
	f=$M/t/f$i
	if grep -q "^uevm: $f: not labelled" <<<"$err"; then
		has_labels "$f" && half=$((half + 1))
	else
		grep -qx "GOOD	$f" <<<"$ref" || half=$((half + 1))
	fi
done
expect_eq "each file is either rightly labelled or not at all" 0 "$half"
check "no content was changed" bash -c "cd '$M/t' && sha256sum --quiet -c '$T/manifest'"

out=$("$UEVM" verify -r --hmac-key "raw:$KEY" "$M/t")
expect_eq "verify after ENOSPC exits 1" 1 $?
expect_match "verify: exactly the ENOSPC files fail" "$nerr failed, 0 errors" "$out"

rm -f "$M/fill"
"$UEVM" label -r --hmac-key "raw:$KEY" "$M/t"
expect_eq "with space again, label completes" 0 $?
out=$("$UEVM" verify -r --hmac-key "raw:$KEY" "$M/t")
expect_eq "then verify passes" 0 $?
expect_eq "reference: every file is rightly labelled" $N \
	"$(python3 "$TESTS_DIR/evm_ref_check.py" --key "$KEY" "$M/t" | grep -c '^GOOD')"

# ---- 2: room for security.ima, not for security.evm ------------------------

# Find a user.pad size that leaves room in the file's xattr block for a
# 34-byte security.ima but not also for a 21-byte security.evm.
P=$M/probe
pad=""
for n in $(seq 960 -4 700); do
	echo probe >"$P"
	setfattr -n user.pad -v "$(head -c "$n" /dev/zero | tr '\0' a)" "$P" 2>/dev/null || continue
	setfattr -n security.ima -v "0x0404$(printf '%064d' 0)" "$P" 2>/dev/null || continue
	if ! setfattr -n security.evm -v "0x02$(printf '%040d' 0)" "$P" 2>/dev/null; then
		pad=$n
		break
	fi
done
rm -f "$P"
check "a user.pad size leaves room for security.ima only ($pad)" test -n "$pad"
V=$M/t/victim
echo victim >"$V"
setfattr -n user.pad -v "$(head -c "$pad" /dev/zero | tr '\0' a)" "$V"
before=$(xattrs_of "$V")
err=$("$UEVM" label --hmac-key "raw:$KEY" "$V" 2>&1)
expect_eq "label: ENOSPC on the second write exits 2" 2 $?
expect_match "label: the error names the file and security.evm" \
	"^uevm: $V: not labelled: cannot write security.evm: No space left on device \(security.ima left as it was\)" "$err"
expect_eq "label: the new security.ima was taken back (xattrs as before)" \
	"$before" "$(xattrs_of "$V")"
out=$("$UEVM" verify -v --hmac-key "raw:$KEY" "$V")
expect_match "verify: the file fails as unlabelled" "^FAIL $V: no_label" "$out"
