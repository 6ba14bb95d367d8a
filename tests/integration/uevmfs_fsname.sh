#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fsname= rules through uevmfs, which holds SOURCE through a private copy
# of its mounts (noexec; in no namespace's mountinfo).  A rule finds a
# file's type by its mount's ID, and a btrfs file's st_dev is not its
# mount's, so the copy's mounts are named after the ones they copy: with
# SOURCE on ext4 and a btrfs filesystem mounted below it (a subvolume in
# it), under
#     appraise func=BPRM_CHECK fsname=btrfs
#     measure func=FILE_CHECK mask=MAY_READ fsname=btrfs
# an unlabelled program on btrfs is refused and audited, a labelled one
# runs, the same unlabelled program on ext4 runs (the rule is btrfs's), and
# a read of a btrfs file is measured while one on ext4 is not (an attack
# review ran the unlabelled btrfs program when the copy's mounts had no
# names).  With 300 mounts listed before the btrfs one (a review found
# names past 256 dropped), and a tmpfs stacked on a ramfs (the copy holds
# the top one; a review found it named after the one beneath) under
#     appraise func=BPRM_CHECK fsname=tmpfs  And names read back from the copy: a file moved out of SOURCE
# while open is measured as MOUNTPOINT/?, not as MOUNTPOINT itself (the
# copy's root, which the kernel names it then).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

command -v mkfs.btrfs >/dev/null || { fail "mkfs.btrfs is installed (btrfs-progs)"; exit 1; }
command -v btrfs >/dev/null || { fail "btrfs is installed (btrfs-progs)"; exit 1; }
KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S/plain" "$S/bt" "$S/x" "$M"
mount -t ramfs ramfs "$S/x" && mount -t tmpfs tmpfs "$S/x" ||
	{ fail "a tmpfs on a ramfs"; exit 1; }
on_exit "umount '$S/x'; umount '$S/x'"
for i in $(seq 300); do
	mkdir -p "$S/many/$i"
	mount -t ramfs ramfs "$S/many/$i" || { fail "ramfs mount $i"; exit 1; }
done
on_exit "umount '$S'/many/* 2>/dev/null"
printf '#!/bin/sh\necho UNLABELLED RAN\n' >"$S/x/prog"
chmod 755 "$S/x/prog"
truncate -s 160M "$T/bt.img"
mkfs.btrfs -q -f "$T/bt.img" >/dev/null || { fail "mkfs.btrfs makes an image"; exit 1; }
mount -o loop "$T/bt.img" "$S/bt" || { fail "the btrfs image mounts"; exit 1; }
on_exit "umount '$S/bt' 2>/dev/null || umount -l '$S/bt'"
btrfs -q subvolume create "$S/bt/vol" >/dev/null || { fail "a btrfs subvolume"; exit 1; }
printf '#!/bin/sh\necho good\n' >"$S/bt/vol/good"
printf '#!/bin/sh\necho UNLABELLED RAN\n' >"$S/bt/vol/prog"
cp "$S/bt/vol/prog" "$S/plain/prog"
echo data >"$S/bt/vol/data"
echo data >"$S/plain/data"
chmod 755 "$S/bt/vol/good" "$S/bt/vol/prog" "$S/plain/prog"
# btrfs has no FS_IOC_GETFSUUID: HMACs without the UUID here and below.
"$UEVM" label --uuid none --hmac-key "raw:$KEY" "$S/bt/vol/good" >/dev/null ||
	fail "fixture: good is labelled"
check "fixture: a btrfs file's st_dev is not its mount's" \
	test "$(stat -c %d "$S/bt/vol/prog")" != \
	"$(mountpoint -d "$S/bt" | awk -F: '{ print $1 * 256 + $2 }')"
cat >"$T/policy" <<'EOF'
appraise func=BPRM_CHECK fsname=btrfs
appraise func=BPRM_CHECK fsname=tmpfs
measure func=FILE_CHECK mask=MAY_READ fsname=btrfs
EOF

for where in elsewhere over; do
	mnt=$M
	[ "$where" = over ] && mnt=$S
	: >"$T/audit.log"
	ufs_mount "$S" "$mnt" "key=raw:$KEY,uuid=none,policy=$T/policy,ml=memory,securityfs=$T/sec,audit_log=$T/audit.log,nosyslog" ||
		exit 1
	out=$("$mnt/bt/vol/prog" 2>&1)
	expect_match "$where: the unlabelled program on btrfs is refused" "Permission denied" "$out"
	expect_eq "$where: ... it did not run" "" "$(grep UNLABELLED <<<"$out")"
	expect_match "$where: ... audited (missing-hash)" "op=appraise_data" \
		"$(ufs_records missing-hash "$mnt/bt/vol/prog")"
	expect_eq "$where: the labelled program on btrfs runs" good "$("$mnt/bt/vol/good")"
	expect_eq "$where: the unlabelled program on ext4 runs (the rules are btrfs's, tmpfs's)" \
		"UNLABELLED RAN" "$("$mnt/plain/prog")"
	expect_match "$where: the unlabelled program on the tmpfs stacked on a ramfs is refused" \
		"Permission denied" "$("$mnt/x/prog" 2>&1)"
	cat "$mnt/bt/vol/data" "$mnt/plain/data" >/dev/null
	ml=$(cat "$T/sec/ima/ascii_runtime_measurements")
	expect_match "$where: the read on btrfs is measured" " $mnt/bt/vol/data\$" "$ml"
	expect_eq "$where: the read on ext4 is not" "" "$(grep -F " $mnt/plain/data" <<<"$ml")"
	ufs_umount "$mnt"
done

# ---- names from the copy: a file moved out of SOURCE while open ------------
mkdir -p "$S/plain2"
echo first >"$S/plain2/g"
echo "measure func=FILE_CHECK mask=MAY_READ" >"$T/policy2"
ufs_mount "$S" "$M" "key=raw:$KEY,uuid=none,policy=$T/policy2,mode=log,ml=memory,securityfs=$T/sec,audit_log=$T/audit.log,nosyslog" ||
	exit 1
cat "$M/plain2/g" >/dev/null
exec 8<"$M/plain2/g"
mv "$S/plain2" "$T/outside"
echo changed >>"$T/outside/g"
cat "/proc/self/fd/8" >/dev/null
exec 8<&-
ml=$(cat "$T/sec/ima/ascii_runtime_measurements")
expect_match "moved out: the first read is measured by its name" " $M/plain2/g\$" "$ml"
expect_match "moved out: the read after the move and the change is measured as $M/?" \
	" $M/\\?\$" "$ml"
expect_eq "moved out: nothing is measured as the mount point itself" "" \
	"$(grep -E " $M\$" <<<"$ml")"
ufs_umount "$M"

