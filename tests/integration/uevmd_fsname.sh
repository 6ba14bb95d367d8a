#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fsname= matches the kernel's sb->s_type->name on btrfs too.  A btrfs
# file's st_dev is its subvolume's anonymous device, not the one in
# mountinfo, and uevm looked the name up by st_dev: no fsname= rule ever
# matched on btrfs, so `appraise fsname=btrfs` refused nothing (an attack
# review found it).  The name now comes from the mount ID (statx).  Checked
# with `uevmd --check` and the daemon: an unlabelled file is refused under
# `appraise fsname=btrfs`, also for an opener in a mount namespace of its
# own, and a rule naming another type leaves it alone.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

command -v mkfs.btrfs >/dev/null || { fail "mkfs.btrfs is installed (btrfs-progs)"; exit 1; }
truncate -s 160M "$T/img"
mkfs.btrfs -q -f "$T/img" >/dev/null || { fail "mkfs.btrfs makes an image"; exit 1; }
mkdir -p "$MNT"
mount -o loop "$T/img" "$MNT" || { fail "the btrfs image mounts"; exit 1; }
make_key "$T/key"
echo "unlabelled" >"$MNT/plain"
expect_eq "btrfs: a file's st_dev is not the mount's (the case being tested)" 1 \
	"$([ "$(stat -c %d "$MNT/plain")" != "$(mountpoint -d "$MNT" | awk -F: '{ print $1 * 256 + $2 }')" ] && echo 1 || echo 0)"

echo "appraise func=FILE_CHECK fsname=btrfs" >"$T/policy"
write_conf "mode = enforce"
out=$("$UEVMD" -c "$CONF" --check --under "$MNT" 2>&1)
expect_eq "fsname=btrfs: --check exits 1" 1 $?
expect_match "fsname=btrfs: --check refuses the unlabelled file" \
	"^refused: $MNT/plain \(missing-hash\)$" "$out"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "fsname=btrfs: uevmd refuses the unlabelled file" EPERM "$(open_result "$MNT/plain")"
# An opener in a mount namespace of its own: its mount IDs are not in
# uevmd's mountinfo (the opener's is read).
ns=$(unshare -m --propagation private cat "$MNT/plain" 2>/dev/null >/dev/null && echo ok || echo refused)
expect_eq "fsname=btrfs: an opener in another mount namespace is refused too" refused "$ns"
stop_uevmd

echo "appraise func=FILE_CHECK fsname=ext4" >"$T/policy"
out=$("$UEVMD" -c "$CONF" --check --under "$MNT" 2>&1)
expect_eq "fsname=ext4 on btrfs: nothing refused (exit 0)" 0 $?
