#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# EIO from a failing block device.  This kernel has no device-mapper
# (dm-error, dm-flakey), so the failing device is a loop device whose
# backing image is served by tests/faultfs.c without page cache: reads of
# chosen sectors fail with EIO below ext4, which then sees real block I/O
# errors ("I/O error, dev loopN" in the kernel log).  One file has a bad
# data block in its middle, another a bad xattr block.  `uevm verify` and
# `uevm label` must name both with the cause, go on with the rest, exit
# non-zero, never PASS them, and write nothing to them.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/faultfs-lib.sh"

faultfs_build
KEY=$T/key
make_key "$KEY"
B=$T/back
F=$T/fuse
E=$T/ext4
mkdir -p "$B" "$E"
: >"$T/rules"
truncate -s 16M "$B/disk.img"
mkfs.ext4 -q -F -I 128 -b 1024 "$B/disk.img" >/dev/null 2>&1
LOOP=""
# Exit hooks run in order: ext4 and the loop device go before the FUSE mount.
on_exit 'umount "$E" 2>/dev/null; [ -z "$LOOP" ] || losetup -d "$LOOP" 2>/dev/null'
faultfs_mount "$T/rules" "$B" "$F" --direct-io
LOOP=$(losetup -f --show "$F/disk.img") || { fail "loop device over the FUSE image"; exit 1; }
mount -o errors=continue "$LOOP" "$E" || { fail "ext4 on the loop device"; exit 1; }
mkdir "$E/d"
for f in good1 good2 bad_data bad_xattr; do head -c 100000 /dev/urandom >"$E/d/$f"; done
"$UEVM" label -r --hmac-key "raw:$KEY" "$E/d"
expect_eq "label on the healthy device" 0 $?
(cd "$E/d" && sha256sum -- *) >"$T/manifest"
sync

# Bad sectors: the 51st KiB of bad_data's content, and bad_xattr's xattr
# block (with 128-byte inodes every xattr lives there).
data=$(filefrag -v "$E/d/bad_data" | awk '$1 == "0:" { sub(/\.\..*/, "", $4); print $4 }')
acl=$(debugfs -R "stat /d/bad_xattr" "$LOOP" 2>/dev/null | sed -n 's/.*File ACL: \([0-9]*\).*/\1/p')
check "bad_data's first block is known ($data)" test -n "$data"
check "bad_xattr's xattr block is known ($acl)" test -n "$acl" -a "${acl:-0}" != 0
for f in bad_data bad_xattr; do xattrs_of "$E/d/$f" >"$T/before.$f"; done

# Remount over a fresh loop device: nothing of the files stays cached.
umount "$E" && losetup -d "$LOOP" || { fail "unmount before the faults"; exit 1; }
cat >"$T/rules" <<EOF
read disk.img EIO $(( (data + 50) * 1024 )) 1024
read disk.img EIO $(( acl * 1024 )) 1024
EOF
LOOP=$(losetup -f --show "$F/disk.img") && mount -o errors=continue "$LOOP" "$E" ||
	{ fail "remount with faults"; exit 1; }

out=$("$UEVM" verify -r -v --hmac-key "raw:$KEY" "$E/d" 2>&1)
expect_eq "verify on a failing device exits 1" 1 $?
expect_match "verify: a bad data block is an error naming file and EIO" \
	"^ERROR $E/d/bad_data: cannot verify: .*Input/output error" "$out"
expect_match "verify: a bad xattr block fails naming security.ima and EIO" \
	"^FAIL $E/d/bad_xattr: unknown .*cannot read security.ima: Input/output error" "$out"
for f in good1 good2; do expect_match "verify: $f still passes" "^OK $E/d/$f: pass$" "$out"; done
expect_match "verify: summary" "5 objects, 1 failed, 1 errors" "$out"

err=$("$UEVM" label -r -v --hmac-key "raw:$KEY" "$E/d" 2>&1 >/dev/null)
expect_eq "label on a failing device exits 2" 2 $?
expect_match "label: a bad data block names file and EIO" \
	"^uevm: $E/d/bad_data: not labelled: .*Input/output error" "$err"
expect_match "label: a bad xattr block names file and EIO" \
	"^uevm: $E/d/bad_xattr: not labelled: .*Input/output error" "$err"
expect_match "label: the rest was labelled" "labelled 3 objects, 2 errors" "$err"
check "the faults were real device reads" test "$(grep -c '^read disk.img EIO' "$T/rules.hits")" -ge 2
check "the kernel saw block I/O errors on the loop device" \
	bash -c "dmesg 2>/dev/null | grep -q 'I/O error, dev $(basename "$LOOP")' || ! dmesg >/dev/null 2>&1"

# Heal the device: what is there is exactly what was there before.
: >"$T/rules"
umount "$E" && losetup -d "$LOOP" && LOOP=$(losetup -f --show "$F/disk.img") &&
	mount -o errors=continue "$LOOP" "$E" || { fail "remount without faults"; exit 1; }
for f in bad_data bad_xattr; do
	expect_eq "$f: its xattrs are as before the faults" "$(cat "$T/before.$f")" "$(xattrs_of "$E/d/$f")"
done
check "no content was changed" bash -c "cd '$E/d' && sha256sum --quiet -c '$T/manifest'"
out=$("$UEVM" verify -r --hmac-key "raw:$KEY" "$E/d")
expect_eq "verify on the healed device exits 0" 0 $?
expect_eq "reference: every file is rightly labelled" 4 \
	"$(python3 "$TESTS_DIR/evm_ref_check.py" --key "$KEY" "$E/d" | grep -c '^GOOD')"
umount "$E" && losetup -d "$LOOP" && LOOP=""
