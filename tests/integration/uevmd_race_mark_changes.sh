#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A root-owned labelled file is changed (mode, owner, ACL,
# an xattr, times, content) while uevmd hashes it for an open.  No ignore
# mark may stand afterwards for the changed file: the next open must be
# seen (events grows).  label_updates = no, so only the worker's own stamp
# checks (not the notifier's mark removal) can catch the change.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
DEADLINE_MS=600000 write_conf "label_updates = no"
mkdir -p "$MNT/r"
KINDS="chmod chown acl xattr touch append"
for k in $KINDS; do
	truncate -s "${BIG:-1G}" "$MNT/r/$k"
	chmod 0644 "$MNT/r/$k"
done
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT/r" >/dev/null ||
	{ fail "the files are labelled"; exit 1; }
start_uevmd || { fail "uevmd starts"; exit 1; }
pass "uevmd starts"

events() { "$UEVM" status --socket "$SOCK" | sed -n 's/^events: \([0-9]*\) .*/\1/p'; }

change() {
	case $1 in
	chmod) chmod 0666 "$2" ;;
	chown) chown 1000 "$2" ;;
	acl) setfacl -m u:1000:rw "$2" ;;
	xattr) setfattr -n user.x -v 1 "$2" ;;
	touch) touch -d @1 "$2" ;;
	append) echo x >>"$2" ;;
	esac
}

for k in $KINDS; do
	f=$MNT/r/$k
	cat -- "$f" >/dev/null 2>&1 &
	p=$!
	wait_for "$WAIT_S" "$k: the open is held" held "$p"
	change "$k" "$f"
	wait "$p"
	rc=$?
	e0=$(events)
	cat -- "$f" >/dev/null 2>&1
	e1=$(events)
	echo "$k: raced open rc=$rc, next open seen: $e0 -> $e1"
	check "$k during hashing: the next open is seen (no mark stands)" test "$e1" -gt "$e0"
done
stop_uevmd
