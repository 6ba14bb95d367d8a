#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 12, item 16: a protected xattr that cannot be read is not absent.
# A damaged EA inode makes getxattr fail with EUCLEAN (here injected by
# tests/faultfs.c, with EIO as well).  Taking that for "no such xattr" let
# a directory with security.selinux and no security.evm fall to
# no_xattrs, which passes; the kernel's evm_find_protected_xattrs()
# returns the error and EVM fails the object.  Now: FAIL, with the name
# of the xattr and the error, for directories and files alike, and for
# the hooks (uevmfs, uevmd) as for `uevm verify`, which share the check.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/faultfs-lib.sh"

faultfs_build
KEY=$T/key
make_key "$KEY"
B=$T/back
M=$T/mnt
RULES=$T/rules
: >"$RULES"
mkdir -p "$B/dir_euclean" "$B/dir_eio" "$B/dir_ok"
echo data >"$B/file_euclean"
for o in dir_euclean dir_eio file_euclean; do
	setfattr -n security.selinux -v "system_u:object_r:etc_t:s0" "$B/$o"
done
faultfs_mount "$RULES" "$B" "$M"

out=$("$UEVM" verify -d -v --hmac-key "raw:$KEY" "$M/dir_euclean" "$M/dir_eio" "$M/dir_ok" 2>&1)
expect_match "without faults: a directory with security.selinux and no security.evm fails" \
	"dir_euclean: .*(no_label|missing-HMAC)" "$out"

cat >"$RULES" <<EOF
getxattr dir_euclean EUCLEAN security.selinux
getxattr dir_eio EIO security.selinux
getxattr file_euclean EUCLEAN security.selinux
EOF

json=$("$UEVM" verify -d -v --json --hmac-key "raw:$KEY" "$M/dir_euclean" "$M/dir_eio" "$M/dir_ok")
rc=$?
st() { jq -r --arg p "$M/$1" '.results[] | select(.path == $p) | .status' <<<"$json"; }
detail() { jq -r --arg p "$M/$1" '.results[] | select(.path == $p) | .detail' <<<"$json"; }
expect_eq "security.selinux unreadable (EUCLEAN): the directory fails, not no_xattrs" fail \
	"$(st dir_euclean)"
expect_match "  the detail names the xattr and the error" \
	"cannot read security.selinux: Structure needs cleaning" "$(detail dir_euclean)"
expect_eq "security.selinux unreadable (EIO): the directory fails" fail "$(st dir_eio)"
expect_eq "a directory without protected xattrs still has none (no_xattrs)" no_xattrs \
	"$(st dir_ok)"
expect_eq "verify exits 1" 1 "$rc"

"$UEVM" label --hmac-key "raw:$KEY" "$B/file_euclean" >/dev/null
setfattr -x security.evm "$B/file_euclean"
out=$("$UEVM" verify -v --hmac-key "raw:$KEY" "$M/file_euclean" 2>&1)
expect_match "a file whose security.selinux cannot be read and has no security.evm fails" \
	"file_euclean: .*cannot read security.selinux" "$out"
