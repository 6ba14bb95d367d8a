#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Only content that came through the mount is relabelled (issue 12, item
# 10).  While a legitimate writer has a file open through the mount,
# content written into SOURCE directly (behind the mount) must not be
# labelled at that writer's close: the relabel is refused, audited
# (op=update_xattr cause=changed-behind-mount), and the file stays failing.
# Legitimate changes through the mount (writes, truncate, chmod, a rename
# while open, as log rotation does) are still relabelled.  Both modes.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S"

# writer PATH_THROUGH_MOUNT PATH_IN_SOURCE BEHIND: write through the mount,
# BEHIND=before|last: write into SOURCE between two writes, or after the
# last one; then fsync (fastopen's writer ends there) and close.
writer() {
	python3 - "$@" <<'PY'
import os, sys
m, s, behind = sys.argv[1:4]
fd = os.open(m, os.O_WRONLY | os.O_APPEND)
os.write(fd, b"through the mount 1\n")
if behind == "before":
    with open(s, "ab") as f:
        f.write(b"BEHIND THE MOUNT\n")
os.write(fd, b"through the mount 2\n")
if behind == "last":
    with open(s, "ab") as f:
        f.write(b"BEHIND THE MOUNT, LAST\n")
os.fsync(fd)
os.close(fd)
PY
}

for mode in per-open fastopen; do
	extra=
	[ $mode = fastopen ] && extra=,fastopen,write_idle=30
	for f in legit before last rotate; do
		echo "start" >"$S/$f-$mode"
	done
	"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
	: >"$T/audit.log"
	ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,audit_log=$T/audit.log,nosyslog,timeout=0$extra" || exit 1

	writer "$M/legit-$mode" "$S/legit-$mode" none
	expect_rc "$mode: a write session through the mount is relabelled" 0 \
		"$UEVM" verify --hmac-key "raw:$KEY" "$S/legit-$mode"

	for b in before last; do
		writer "$M/$b-$mode" "$S/$b-$mode" $b
		expect_rc "$mode: content written behind the mount ($b) is not labelled" 1 \
			"$UEVM" verify --hmac-key "raw:$KEY" "$S/$b-$mode"
		expect_match "$mode: ... the refused relabel is audited ($b)" \
			"op=update_xattr cause=changed-behind-mount" \
			"$(ufs_records changed-behind-mount "$M/$b-$mode")"
		expect_match "$mode: ... and the file is refused through the mount ($b)" \
			"Permission denied" "$(cat "$M/$b-$mode" 2>&1)"
	done

	python3 - "$M/rotate-$mode" <<'PY'
import os, sys
p = sys.argv[1]
fd = os.open(p, os.O_WRONLY | os.O_APPEND)
os.write(fd, b"before the rotation\n")
os.rename(p, p + ".1")
os.chmod(p + ".1", 0o640)
os.write(fd, b"after the rotation\n")
os.ftruncate(fd, 30)
os.write(fd, b"after the truncation\n")
os.fsync(fd)
os.close(fd)
PY
	expect_rc "$mode: rename, chmod and truncate through the mount while open: relabelled" 0 \
		"$UEVM" verify --hmac-key "raw:$KEY" "$S/rotate-$mode.1"
	ufs_umount "$M"
	expect_eq "$mode: no false alarm for the legitimate sessions" "" \
		"$(grep -E "name=\"$M/(legit|rotate)" "$T/audit.log")"
done
