#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Filesystems without security.* xattrs.  This kernel has no vfat driver
# (CONFIG_VFAT_FS is off), so FAT is mounted with fusefat; ramfs has no
# xattrs at all; a FUSE filesystem (tests/faultfs.c) answers EOPNOTSUPP to
# every xattr call.  `uevm label` names each file with "Operation not
# supported", goes on, exits 2; `uevm verify` never says PASS there.
# tmpfs on this kernel does keep security.* xattrs (CONFIG_TMPFS_XATTR):
# there label and verify must simply work.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/faultfs-lib.sh"

KEY=$T/key
make_key "$KEY"

# nox_case NAME DIR: DIR holds f1 f2 f3 on a filesystem without xattrs.
nox_case() {
	local name=$1 d=$2 err out
	(cd "$d" && sha256sum f1 f2 f3) >"$T/manifest.$name"
	err=$("$UEVM" label -r -v --uuid none --hmac-key "raw:$KEY" "$d" 2>&1 >/dev/null)
	expect_eq "$name: label exits 2" 2 $?
	for f in f1 f2 f3; do
		expect_match "$name: label names $f and the cause" \
			"^uevm: $d/$f: not labelled: .*Operation not supported" "$err"
	done
	expect_match "$name: label went through all objects" "labelled [0-1] objects, [34] errors" "$err"
	check "$name: no content was changed" bash -c "cd '$d' && sha256sum --quiet -c '$T/manifest.$name'"
	out=$("$UEVM" verify -r -v --uuid none --hmac-key "raw:$KEY" "$d" 2>&1)
	expect_eq "$name: verify exits 1" 1 $?
	for f in f1 f2 f3; do
		expect_match "$name: verify fails $f, naming the cause" \
			"^FAIL $d/$f: .*Operation not supported" "$out"
	done
	check "$name: verify reports no file OK" bash -c "! grep -q '^OK .*/f[123]:' <<<'$out'"
}

mkfiles() { for f in f1 f2 f3; do { echo "$f"; head -c 700 /dev/urandom; } >"$1/$f"; done; }

# ---- ramfs ---------------------------------------------------------------------
mkdir "$T/ramfs"
mount -t ramfs ramfs "$T/ramfs" || { fail "ramfs mount"; exit 1; }
on_exit "umount '$T/ramfs'"
mkfiles "$T/ramfs"
nox_case ramfs "$T/ramfs"

# ---- FAT through fusefat -----------------------------------------------------------
if command -v fusefat >/dev/null && command -v mkfs.vfat >/dev/null; then
	truncate -s 8M "$T/fat.img"
	mkfs.vfat "$T/fat.img" >/dev/null
	mkdir "$T/fat"
	fusefat -o rw+ "$T/fat.img" "$T/fat" >/dev/null 2>&1 &&
		on_exit "fusermount -u '$T/fat' 2>/dev/null || umount -l '$T/fat'"
	if wait_mounted "$T/fat"; then
		mkfiles "$T/fat"
		nox_case vfat "$T/fat"
	else
		fail "fusefat mounts a FAT image"
	fi
else
	fail "fusefat and dosfstools are installed (scripts/install-deps.sh)"
fi

# ---- FUSE without xattrs -----------------------------------------------------------
faultfs_build
mkdir "$T/back"
echo "noxattr *" >"$T/rules"
faultfs_mount "$T/rules" "$T/back" "$T/fuse"
mkfiles "$T/fuse"
nox_case fuse "$T/fuse"

# ---- tmpfs: security.* xattrs work ---------------------------------------------------
mkdir "$T/tmpfs"
mount -t tmpfs -o size=8m tmpfs "$T/tmpfs" || { fail "tmpfs mount"; exit 1; }
on_exit "umount '$T/tmpfs'"
mkfiles "$T/tmpfs"
if setfattr -n security.uevmtest -v 1 "$T/tmpfs/f1" 2>/dev/null; then
	setfattr -x security.uevmtest "$T/tmpfs/f1"
	"$UEVM" label -r --uuid none --hmac-key "raw:$KEY" "$T/tmpfs"
	expect_eq "tmpfs keeps security.* xattrs: label exits 0" 0 $?
	out=$("$UEVM" verify -r --uuid none --hmac-key "raw:$KEY" "$T/tmpfs")
	expect_eq "tmpfs: verify exits 0" 0 $?
	expect_eq "tmpfs: reference check says every file is rightly labelled" 3 \
		"$(python3 "$TESTS_DIR/evm_ref_check.py" --key "$KEY" --uuid none "$T/tmpfs" | grep -c '^GOOD')"
	echo changed >>"$T/tmpfs/f2"
	out=$("$UEVM" verify -r -v --uuid none --hmac-key "raw:$KEY" "$T/tmpfs")
	expect_match "tmpfs: a changed file fails" "^FAIL $T/tmpfs/f2: fail \(invalid-hash\)" "$out"
else
	# A kernel without tmpfs xattrs: then it is one more no-xattr case.
	nox_case tmpfs "$T/tmpfs"
fi
