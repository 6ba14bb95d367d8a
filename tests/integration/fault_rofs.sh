#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A read-only filesystem: an ext4 loop image mounted read-only, and a
# read-only bind mount of a directory of the (writable) root filesystem.
# `uevm label` reports EROFS for each file it cannot write, goes on, and
# exits 2; `uevm verify` still works there and tells good from changed.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/faultfs-lib.sh"

KEY=$T/key
make_key "$KEY"

# ---- ext4 image, mounted read-only -----------------------------------------

IMG=$T/ext4.img
M=$T/mnt
truncate -s 16M "$IMG"
mkfs.ext4 -q -F "$IMG" >/dev/null 2>&1
loop_mount "$IMG" "$M" || { fail "ext4 loop mount"; exit 1; }
mkdir "$M/d"
for i in 1 2 3 4; do { echo "file $i"; head -c 2000 /dev/urandom; } >"$M/d/f$i"; done
"$UEVM" label -r --hmac-key "raw:$KEY" "$M/d"
expect_eq "label on the writable mount" 0 $?
echo new >"$M/d/unlabelled"
echo tampered >>"$M/d/f2"
umount "$M" && mount -o loop,ro "$IMG" "$M" || { fail "read-only remount"; exit 1; }
snap=$(for f in "$M"/d/*; do echo "$f"; xattrs_of "$f"; done)

err=$("$UEVM" label -r -v --hmac-key "raw:$KEY" "$M/d" 2>&1 >/dev/null)
expect_eq "label on a read-only fs exits 2" 2 $?
expect_match "label: the new file's error names it and EROFS" \
	"^uevm: $M/d/unlabelled: not labelled: cannot write security.ima: Read-only file system" "$err"
expect_match "label: the changed file's error names it and EROFS" \
	"^uevm: $M/d/f2: not labelled: cannot write security.ima: Read-only file system" "$err"
expect_eq "label: one EROFS error per file (5 files)" 5 \
	"$(grep -c ": not labelled: .*Read-only file system" <<<"$err")"
# The directory carries no protected xattr and no security.evm: its label
# is already what label would leave (nothing), so it needs no write.
check "label: the directory, which needs no write, is not an error" \
	bash -c '! grep -q "^uevm: $1: " <<<"$2"' _ "$M/d" "$err"
expect_match "label: the run went through every object" "labelled 1 objects, 5 errors" "$err"
expect_eq "label: nothing changed on the read-only fs" "$snap" \
	"$(for f in "$M"/d/*; do echo "$f"; xattrs_of "$f"; done)"

out=$("$UEVM" verify -r -v --hmac-key "raw:$KEY" "$M/d")
expect_eq "verify on a read-only fs exits 1 (one changed, one new)" 1 $?
for f in f1 f3 f4; do expect_match "verify (ro): $f passes" "^OK $M/d/$f: pass$" "$out"; done
expect_match "verify (ro): the changed file fails" "^FAIL $M/d/f2: fail \(invalid-hash\)" "$out"
expect_match "verify (ro): the new file fails" "^FAIL $M/d/unlabelled: no_label" "$out"

# ---- read-only bind mount on the root filesystem ----------------------------

R=$T/tree
RO=$T/ro
mkdir -p "$R/sub" "$RO"
for f in a b sub/c; do { echo "$f"; head -c 1000 /dev/urandom; } >"$R/$f"; done
"$UEVM" label -r --hmac-key "raw:$KEY" "$R"
expect_eq "label of the tree (writable)" 0 $?
echo fresh >"$R/sub/fresh"
mount --bind "$R" "$RO" && mount -o remount,bind,ro "$RO" ||
	{ fail "read-only bind mount"; exit 1; }
on_exit "umount '$RO' 2>/dev/null || umount -l '$RO'"
err=$("$UEVM" label -r -v --hmac-key "raw:$KEY" "$RO" 2>&1 >/dev/null)
expect_eq "label through a ro bind mount exits 2" 2 $?
expect_match "label (ro bind): the new file names EROFS" \
	"^uevm: $RO/sub/fresh: not labelled: cannot write security.ima: Read-only file system" "$err"
check "label (ro bind): the new file got no label" bash -c "[ -z \"\$(getfattr -h -m - -d '$R/sub/fresh' 2>/dev/null)\" ]"
out=$("$UEVM" verify -r -v --hmac-key "raw:$KEY" "$RO")
expect_eq "verify through a ro bind mount exits 1 (the new file)" 1 $?
for f in a b sub/c; do expect_match "verify (ro bind): $f passes" "^OK $RO/$f: pass$" "$out"; done
expect_match "verify (ro bind): the new file fails" "^FAIL $RO/sub/fresh: no_label" "$out"
