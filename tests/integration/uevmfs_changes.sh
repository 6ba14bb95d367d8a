#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Legitimate changes through a uevmfs mount keep every file valid, and the
# xattr rules hold for every caller:
#  - edits, appends, truncations (by name and by descriptor), overwrites,
#    sed -i, writes through a dup'ed descriptor and through a shared
#    mapping, fallocate, chmod, chown, setfattr/removal of security.selinux
#    and security.capability, renames, links, new files, directories,
#    symlinks and FIFOs, removals: all open through the mount afterwards,
#    and `uevm verify -r SOURCE` passes every object once unmounted;
#  - an unprivileged caller (credentials from the FUSE request, not
#    uevmfs's own) cannot set or remove security.evm; root cannot write an
#    HMAC into it;
#  - no caller changes a protected xattr, the mode or the owner of a file
#    whose EVM status fails: refused with EPERM and audited, and the file
#    stays failing (no laundering).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
SEL='system_u:object_r:var_t:s0'
CAPVAL=0x0100000200200000000000000000000000000000
OPTS="key=raw:$KEY,ml=$T/ml,audit_log=$T/audit.log,nosyslog"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
chmod 755 "$T"	# the unprivileged caller walks through it

mkdir -p "$S/d/sub" "$S/mv_dir/inner" "$S/rmdir_me"
for f in edit append trunc_name trunc_fd overwrite sedit chmod chown chgrp \
	 sel_add sel_change sel_remove cap_add cap_remove user_x rename \
	 link dup mmap falloc nobody_writes d/moved_across rm_me; do
	printf 'line one of %s\nline two\nline three\n' "$f" >"$S/$f"
done
echo inner >"$S/mv_dir/inner/file"
setfattr -n security.selinux -v "$SEL" "$S/sel_change" "$S/sel_remove" "$S/mv_dir"
setfattr -n security.capability -v $CAPVAL "$S/cap_remove"
chown 65534:65534 "$S/nobody_writes"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
expect_rc "the tree verifies before mounting" 0 "$UEVM" verify -r --hmac-key "raw:$KEY" "$S"

ufs_mount "$S" "$M" "$OPTS" || exit 1
pass "uevmfs mounts (enforce)"

# ---- legitimate changes ---------------------------------------------------------
printf 'X' | dd of="$M/edit" bs=1 seek=5 conv=notrunc status=none
echo appended >>"$M/append"
python3 -c 'import os, sys; os.truncate(sys.argv[1], 7)' "$M/trunc_name"
truncate -s 12 "$M/trunc_fd"
head -c 50000 /dev/urandom >"$T/payload"
cp "$T/payload" "$M/overwrite"
sed -i 's/two/TWO/' "$M/sedit"
chmod 600 "$M/chmod"
chown 1000:1000 "$M/chown"
chgrp 1000 "$M/chgrp"
setfattr -n security.selinux -v "$SEL" "$M/sel_add"
setfattr -n security.selinux -v 'system_u:object_r:etc_t:s0' "$M/sel_change"
setfattr -x security.selinux "$M/sel_remove"
setfattr -n security.capability -v $CAPVAL "$M/cap_add"
setfattr -x security.capability "$M/cap_remove"
setfattr -n user.comment -v hello "$M/user_x"
mv "$M/rename" "$M/renamed"
mv "$M/d/moved_across" "$M/moved_here"
mv "$M/mv_dir" "$M/d/mv_dir_moved"
ln "$M/link" "$M/link.hard"
ln -s renamed "$M/symlink"
mkfifo "$M/fifo"
rm "$M/rm_me"
rmdir "$M/rmdir_me"
mkdir -p "$M/new/deeper/deepest"
setfattr -n security.selinux -v "$SEL" "$M/new/deeper"
echo "a new file" >"$M/new/file"
echo "deep" >"$M/new/deeper/deepest/file"
: >"$M/new/empty"
touch "$M/new/touched"
cp "$T/payload" "$M/new/copy"
fallocate -l 16384 "$M/falloc"
# Two descriptors of one open file: a write after the first close.
bash -c 'exec 3>>"$1"; echo "via fd 3" >&3; exec 4>&3; exec 3>&-; echo "via fd 4" >&4; exec 4>&-' _ "$M/dup"
# A shared mapping written after its descriptor was closed.
python3 - "$M/mmap" <<'EOF'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0)
os.close(fd)
m[0:4] = b"MMAP"
m.flush()
m.close()
EOF
# The owner of a file, unprivileged, appends to it.
"${NOBODY[@]}" bash -c 'echo "by nobody" >>"$1"' _ "$M/nobody_writes"
expect_eq "an unprivileged owner's write succeeds" "by nobody" "$(tail -n 1 "$M/nobody_writes")"

bad=""
for f in $(cd "$M" && find . -type f | sort); do
	cat "$M/$f" >/dev/null 2>&1 || bad="$bad $f"
done
expect_eq "every changed file still opens through the mount" "" "$bad"
expect_eq "no refusal was audited" "" "$(grep -F ' res=0 ' "$T/audit.log")"
expect_eq "edit in place: content" "line Xne of edit" "$(head -n 1 "$M/edit")"
expect_eq "truncate by name: size" 7 "$(stat -c %s "$S/trunc_name")"
expect_eq "truncate by descriptor: size" 12 "$(stat -c %s "$S/trunc_fd")"
check "overwrite: content" cmp -s "$S/overwrite" "$T/payload"
expect_eq "dup'ed descriptors: both writes" "via fd 3|via fd 4" \
	"$(tail -n 2 "$S/dup" | paste -sd'|')"
expect_eq "shared mapping: written" MMAP "$(head -c 4 "$S/mmap")"
expect_eq "security.capability removed" "" "$(xattr_hex security.capability "$S/cap_remove")"
check "hard link: same inode" test "$(stat -c %i "$S/link")" = "$(stat -c %i "$S/link.hard")"
ufs_umount "$M"

json=$("$UEVM" verify -r -v --json --hmac-key "raw:$KEY" "$S")
expect_eq "uevm verify -r SOURCE: every object passes after the changes" "" \
	"$(jq -r '.results[] | select(.ok | not) | "\(.path) \(.status) \(.cause)"' <<<"$json")"
expect_eq "uevm verify -r SOURCE: no errors" 0 "$(jq '.summary.errors' <<<"$json")"
expect_eq "every regular file passes (security.ima and security.evm)" \
	"$(find "$S" -type f | wc -l)" \
	"$(jq '[.results[] | select(.type == "file" and .status == "pass")] | length' <<<"$json")"
expect_eq "the new directory with security.selinux passes" pass \
	"$(jq -r --arg p "$S/new/deeper" '.results[] | select(.path == $p) | .status' <<<"$json")"
expect_eq "the renamed directory with security.selinux still passes" pass \
	"$(jq -r --arg p "$S/d/mv_dir_moved" '.results[] | select(.path == $p) | .status' <<<"$json")"

# ---- security.evm and the caller's credentials ----------------------------------
: >"$T/audit.log"
ufs_mount "$S" "$M" "$OPTS" || exit 1
evm0=$(xattr_hex security.evm "$S/edit")
sig=0x030204aabbccdd0100$(head -c 256 /dev/urandom | od -An -tx1 | tr -d ' \n')
err=$("${NOBODY[@]}" setfattr -n security.evm -v "$sig" "$M/edit" 2>&1)
expect_match "unprivileged caller: setting security.evm refused" 'Operation not permitted' "$err"
err=$("${NOBODY[@]}" setfattr -x security.evm "$M/edit" 2>&1)
expect_match "unprivileged caller: removing security.evm refused" 'Operation not permitted' "$err"
err=$("${NOBODY[@]}" setfattr -x security.evm "$M/nobody_writes" 2>&1)
expect_match "unprivileged owner: removing its file's security.evm refused" \
	'Operation not permitted' "$err"
err=$(setfattr -n security.evm -v "0x02$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')" "$M/edit" 2>&1)
expect_match "root: writing an HMAC into security.evm refused" 'Operation not permitted' "$err"
expect_match "  audited op=update_metadata cause=invalid-xattr-type" \
	'op=update_metadata cause=invalid-xattr-type .*res=0' \
	"$(ufs_records invalid-xattr-type "$M/edit")"
expect_eq "security.evm unchanged" "$evm0" "$(xattr_hex security.evm "$S/edit")"
ufs_umount "$M"
expect_rc "the file still verifies" 0 "$UEVM" verify --hmac-key "raw:$KEY" "$S/edit"

# ---- no change to a failing file -------------------------------------------------
setfattr -n security.selinux -v 'system_u:object_r:shadow_t:s0' "$S/sel_add"	# offline
chown 65534:65534 "$S/sel_add"		# ... and its owner (offline too)
setfattr -x security.evm "$S/chmod"						# offline
before_sel=$(getfattr -d -m - -e hex "$S/sel_add" 2>/dev/null)
before_chmod=$(getfattr -d -m - -e hex "$S/chmod" 2>/dev/null)
: >"$T/audit.log"
ufs_mount "$S" "$M" "$OPTS" || exit 1
good_ima=$("$UEVM" ima-hash "$S/sel_add" | cut -d' ' -f1)
try() {	# description expected-cause command...
	local what=$1 cause=$2; shift 2
	local err
	err=$("$@" 2>&1)
	expect_match "FAIL file: $what refused (EPERM)" 'Operation not permitted' "$err"
}
try "root setting security.selinux" fail setfattr -n security.selinux -v "$SEL" "$M/sel_add"
try "root removing security.selinux" fail setfattr -x security.selinux "$M/sel_add"
try "root adding security.capability" fail setfattr -n security.capability -v $CAPVAL "$M/sel_add"
try "root rewriting security.ima (even to the right hash)" fail \
	setfattr -n security.ima -v "0x$good_ima" "$M/sel_add"
try "root removing security.evm" fail setfattr -x security.evm "$M/sel_add"
try "root chmod" fail chmod 600 "$M/sel_add"
try "root chown" fail chown 0:0 "$M/sel_add"
try "its unprivileged owner chmod" fail "${NOBODY[@]}" chmod 600 "$M/sel_add"
try "its unprivileged owner chgrp" fail "${NOBODY[@]}" chgrp 65534 "$M/sel_add"
expect_match "  audited op=appraise_metadata cause=fail" \
	'type=INTEGRITY_METADATA .*op=appraise_metadata cause=fail .*res=0' \
	"$(ufs_records fail "$M/sel_add")"
try "(no security.evm) root setting security.selinux" no_label \
	setfattr -n security.selinux -v "$SEL" "$M/chmod"
try "(no security.evm) root chmod" no_label chmod 644 "$M/chmod"
expect_match "  audited cause=no_label" 'op=appraise_metadata cause=no_label ' \
	"$(ufs_records no_label "$M/chmod")"
ufs_umount "$M"
expect_eq "the failing file's xattrs are unchanged" "$before_sel" \
	"$(getfattr -d -m - -e hex "$S/sel_add" 2>/dev/null)"
expect_eq "the file without security.evm is unchanged" "$before_chmod" \
	"$(getfattr -d -m - -e hex "$S/chmod" 2>/dev/null)"
expect_eq "no laundering: still failing with invalid-HMAC" "fail invalid-HMAC" \
	"$("$UEVM" verify --json --hmac-key "raw:$KEY" "$S/sel_add" | jq -r '.results[0] | "\(.status) \(.cause)"')"
expect_eq "no laundering: still no_label" "no_label missing-HMAC" \
	"$("$UEVM" verify --json --hmac-key "raw:$KEY" "$S/chmod" | jq -r '.results[0] | "\(.status) \(.cause)"')"
