#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A portable EVM signature survives a copy to another filesystem; an HMAC
# and a 0x03 signature (bound to inode, generation and fs UUID) do not.
# The copies are made with cp --preserve=all onto a loop-mounted ext4 and
# a tmpfs, and their security.evm/security.ima are then set with setfattr.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"

K=$T/keys
mkdir "$K"
SIG_KEYS="p256" make_sig_keys "$K"
make_key "$T/hmac.key"
D=$T/src
mkdir "$D"
for n in portable hmac sig03; do
	head -c 5000 /dev/urandom >"$D/$n"
	chmod 640 "$D/$n"
done
"$UEVM" sign --imasig --portable -k "$K/p256.key" "$D/portable"
"$UEVM" label --hmac-key "raw:$T/hmac.key" "$D/hmac"
"$UEVM" sign --imasig --evm -k "$K/p256.key" "$D/sig03"

# status PATH: the status word of `uevm verify -v` with the HMAC key and
# the certificate.
status() {
	"$UEVM" verify -v --hmac-key "raw:$T/hmac.key" --cert "$K/p256.pem" "$1" 2>&1 |
		sed -n 's/^\(OK\|FAIL\) .*: \([a-z_]*\)\( (.*\)\?$/\2/p' | head -n1
}
expect_eq "before the copy: portable signature" pass_immutable "$(status "$D/portable")"
expect_eq "before the copy: HMAC" pass "$(status "$D/hmac")"
expect_eq "before the copy: 0x03 signature" pass "$(status "$D/sig03")"

# copy_to DIR: cp --preserve=all, then the labels set explicitly.
copy_to() {
	local n
	for n in portable hmac sig03; do
		cp --preserve=all "$D/$n" "$1/$n" || return 1
		setfattr -h -n security.ima -v "0x$(xattr_hex security.ima "$D/$n")" "$1/$n" || return 1
		setfattr -h -n security.evm -v "0x$(xattr_hex security.evm "$D/$n")" "$1/$n" || return 1
	done
}

# check_copies DIR NAME
check_copies() {
	local dir=$1 fs=$2 out
	expect_eq "$fs: the copy has the same security.evm" \
		"$(xattr_hex security.evm "$D/portable")" "$(xattr_hex security.evm "$dir/portable")"
	expect_eq "$fs: portable signature still verifies" pass_immutable "$(status "$dir/portable")"
	# evmctl 1.4 asks for the generation even for portable signatures and
	# gives up where FS_IOC_GETVERSION is missing (tmpfs): ext4 only.
	if [ "$fs" = ext4 ]; then
		out=$(evmctl verify -k "$K/p256.der" "$dir/portable" 2>&1)
		expect_match "$fs: evmctl 1.4 agrees on the portable copy" "verification is OK" "$out"
	fi
	expect_eq "$fs: HMAC does not survive the copy" fail "$(status "$dir/hmac")"
	expect_match "$fs: ... cause invalid-HMAC" "invalid-HMAC" \
		"$("$UEVM" verify --hmac-key "raw:$T/hmac.key" "$dir/hmac" 2>&1)"
	expect_eq "$fs: a 0x03 signature does not survive the copy" fail "$(status "$dir/sig03")"
}

M=$T/ext4
mkdir "$M"
truncate -s 16M "$T/ext4.img"
if mkfs.ext4 -q -F "$T/ext4.img" >/dev/null 2>&1 &&
	mount -o loop "$T/ext4.img" "$M" 2>/dev/null; then
	on_exit "umount '$M'"
	check "copy to a loop-mounted ext4 with cp --preserve=all and setfattr" copy_to "$M"
	expect_eq "the copy is another inode" 1 \
		"$([ "$(stat -c %d:%i "$D/portable")" != "$(stat -c %d:%i "$M/portable")" ] && echo 1)"
	check_copies "$M" ext4
else
	fail "a loop-mounted ext4 is available (root, loop devices)"
fi

M2=$T/tmpfs
mkdir "$M2"
if mount -t tmpfs -o size=8M uevm-test "$M2" 2>/dev/null; then
	on_exit "umount '$M2'"
	check "copy to a tmpfs with cp --preserve=all and setfattr" copy_to "$M2"
	check_copies "$M2" tmpfs
else
	fail "a tmpfs can be mounted"
fi

# Metadata is still bound: a mode change on the copy breaks the portable
# signature with the kernel's immutable status.
if mountpoint -q "$M"; then
	chmod 600 "$M/portable"
	expect_eq "ext4: chmod of the portable copy: fail_immutable" fail_immutable \
		"$(status "$M/portable")"
fi
