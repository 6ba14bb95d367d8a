#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# POSIX ACLs are enforced through the mount (issue 12, item 13): an ACL
# in SOURCE that denies a user a file its mode lets everyone read is
# enforced for that user through the mount; setfacl through the mount
# works, keeps the labels valid, and is enforced; the caller's umask still
# applies to files created through the mount.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"
command -v setfacl >/dev/null || { fail "setfacl is installed (scripts/install-deps.sh: acl)"; exit 1; }

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S" "$M"
chmod 711 "$T"	# nobody reaches the mount point
echo "denied by an ACL" >"$S/denied"
echo "allowed later" >"$S/later"
chmod 644 "$S/denied"
chmod 600 "$S/later"
setfacl -m u:nobody:--- "$S/denied"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
expect_match "the ACL denies nobody in SOURCE" "Permission denied" "$(as_nobody cat "$S/denied" 2>&1)"

ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,audit_log=$T/audit.log,nosyslog" || exit 1
expect_eq "root reads the file through the mount" "denied by an ACL" "$(cat "$M/denied")"
out=$(as_nobody cat "$M/denied" 2>&1)
expect_match "the ACL that denies nobody is enforced through the mount" "Permission denied" "$out"
expect_eq "... nothing of the content reached nobody" "" "$(grep -F 'denied by an ACL' <<<"$out")"
expect_match "getfacl through the mount shows the ACL" "^user:nobody:---" "$(getfacl -p "$M/denied" 2>/dev/null)"

expect_match "nobody cannot read a 0600 file" "Permission denied" "$(as_nobody cat "$M/later" 2>&1)"
check "setfacl through the mount works" setfacl -m u:nobody:r "$M/later"
expect_eq "... and is enforced: nobody reads it now" "allowed later" "$(as_nobody cat "$M/later" 2>&1)"
expect_match "... the ACL is in SOURCE" "^user:nobody:r--" "$(getfacl -p "$S/later" 2>/dev/null)"
check "setfacl -x through the mount works" setfacl -x u:nobody "$M/later"
expect_match "... and is enforced: nobody is refused again" "Permission denied" \
	"$(as_nobody cat "$M/later" 2>&1)"
expect_match "nobody cannot set an ACL on root's file" "Operation not permitted" \
	"$(as_nobody setfacl -m u:nobody:rw "$M/denied" 2>&1)"

mkdir "$M/dir"
(umask 022; echo new >"$M/dir/plain")
expect_eq "a file created through the mount gets the caller's umask" 644 "$(stat -c %a "$S/dir/plain")"
setfacl -d -m u:nobody:r "$M/dir"
(umask 077; echo new >"$M/dir/inherits")
expect_match "a default ACL of the directory is inherited" "^user:nobody:r--" \
	"$(getfacl -p "$S/dir/inherits" 2>/dev/null)"
expect_eq "... and enforced through the mount" "new" "$(as_nobody cat "$M/dir/inherits" 2>&1)"
ufs_umount "$M"
expect_rc "the labels written through the mount verify (ACL changes included)" 0 \
	"$UEVM" verify -r --hmac-key "raw:$KEY" "$S"
