#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Two attacks on the label/verify hot path (issue 17), each performed and
# refused: `uevm verify` reports FAIL with invalid-HMAC and exits 1.
#  F2. A listing that says less than getxattr returns: a FUSE server whose
#      listxattr fails (EOPNOTSUPP for one file; ENOSYS, which the kernel
#      turns into EOPNOTSUPP for the whole mount, as with no handler) or
#      leaves a name out, while getxattr works.  Label through it, add
#      security.capability to the backing file offline, verify through it:
#      the capability must still be covered by the HMAC.
#  F3. The fs UUID kept per st_dev for the run: while verify is held in the
#      middle of a walk (an open held by tests/faultfs.c), filesystem A is
#      unmounted and a clone B with another UUID mounted in its place, on
#      A's loop device if the kernel lets it.  B's file must be checked with
#      B's UUID: the cache holds A's filesystem, so A cannot be unmounted
#      (EBUSY) nor its device number given to B.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/faultfs-lib.sh"

faultfs_build
KEY=$T/key
make_key "$KEY"
U() { "$UEVM" "$@" --hmac-key "raw:$KEY"; }

# ---- F2: listings that say less than getxattr -----------------------------

B=$T/back
M=$T/mnt
RULES=$T/rules
mkdir -p "$B"
for f in nolist hidecap enosys good; do
	{ echo "$f"; head -c 3000 /dev/urandom; } >"$B/$f"
done
cat >"$RULES" <<EOF
listxattr nolist EOPNOTSUPP
listhide hidecap security.capability
EOF
faultfs_mount "$RULES" "$B" "$M"

# The fault is real: the listing fails, getxattr answers.
U label --uuid none "$M/nolist" "$M/hidecap" "$M/good" >/dev/null
expect_eq "F2: label through the FUSE mount exits 0" 0 $?
check "F2: nolist: listxattr fails through the mount" \
	bash -c "! getfattr -d -m - -- '$M/nolist' >/dev/null 2>&1"
check "F2: nolist: getxattr works through the mount" \
	bash -c "getfattr -n security.ima -- '$M/nolist' >/dev/null 2>&1"
out=$(U verify --uuid none "$M/nolist" "$M/hidecap" "$M/good")
expect_eq "F2: untampered files verify (exit 0)" 0 $?

# Offline, on the backing files: a capability the labels never covered.
setcap cap_setuid+ep "$B/nolist"
setcap cap_setuid+ep "$B/hidecap"
check "F2: hidecap: the mount lists no security.capability" \
	bash -c "! getfattr -d -m - -- '$M/hidecap' 2>/dev/null | grep -q capability"
check "F2: hidecap: but getxattr returns it" \
	bash -c "getfattr -n security.capability -- '$M/hidecap' >/dev/null 2>&1"
for f in nolist hidecap; do
	out=$(U verify --uuid none "$M/$f" 2>&1)
	rc=$?
	expect_eq "F2: $f: verify after an offline setcap exits 1" 1 "$rc"
	expect_match "F2: $f: FAIL names the invalid HMAC" \
		"^FAIL $M/$f: fail \(invalid-HMAC\)" "$out"
done
out=$(U verify --uuid none "$M/good")
expect_eq "F2: the untouched file still verifies" 0 $?

# ENOSYS from listxattr: the kernel stops asking (EOPNOTSUPP for every
# file on this mount from then on), as with a server with no handler.
echo "listxattr * ENOSYS" >"$RULES"
check "F2: enosys: the listing fails through the mount" \
	bash -c "! getfattr -d -m - -- '$M/enosys' >/dev/null 2>&1"
: >"$RULES"
check "F2: enosys: and still fails with the rule gone (kernel took ENOSYS)" \
	bash -c "! getfattr -d -m - -- '$M/enosys' >/dev/null 2>&1"
U label --uuid none "$M/enosys" >/dev/null
expect_eq "F2: enosys: label exits 0" 0 $?
setcap cap_setuid+ep "$B/enosys"
out=$(U verify --uuid none "$M/enosys" 2>&1)
rc=$?
expect_eq "F2: enosys: verify after an offline setcap exits 1" 1 "$rc"
expect_match "F2: enosys: FAIL names the invalid HMAC" \
	"^FAIL $M/enosys: fail \(invalid-HMAC\)" "$out"

# ---- F3: a filesystem swapped under a walk ----------------------------------

UUIDA=aaaaaaaa-1111-4222-8333-444444444444
UUIDB=bbbbbbbb-5555-4666-8777-888888888888
R=$T/tree
mkdir -p "$R/a"
truncate -s 8M "$T/A.img"
# No metadata_csum: tune2fs -U then rewrites only the UUID.
mkfs.ext4 -q -F -b 4096 -I 256 -O ^metadata_csum -U "$UUIDA" "$T/A.img" \
	>/dev/null 2>&1 || { fail "F3: mkfs.ext4"; exit 1; }
loop_mount "$T/A.img" "$R/a" || { fail "F3: loop mount A"; exit 1; }
echo first >"$R/a/f"
echo second >"$R/a/f2"
U label "$R/a/f" "$R/a/f2" >/dev/null
expect_eq "F3: label on A exits 0" 0 $?
umount "$R/a"
cp "$T/A.img" "$T/B.img"
tune2fs -U "$UUIDB" "$T/B.img" >/dev/null 2>&1 || { fail "F3: tune2fs -U"; exit 1; }

# Every loop device of A.img or B.img is detached at exit.
detach_loops() {
	umount -l "$R/a" 2>/dev/null
	losetup -j "$T/A.img" -O NAME -n | xargs -r -n1 losetup -d 2>/dev/null
	losetup -j "$T/B.img" -O NAME -n | xargs -r -n1 losetup -d 2>/dev/null
}
on_exit detach_loops
LA=$(losetup -f --show "$T/A.img") || { fail "F3: losetup A"; exit 1; }
mount "$LA" "$R/a" || { fail "F3: mount A"; exit 1; }
# B on its own: its f2 carries labels made with A's UUID.
LB=$(losetup -f --show "$T/B.img") && mkdir -p "$T/b" && mount "$LB" "$T/b"
out=$(U verify "$T/b/f2" 2>&1)
expect_eq "F3: B's f2 alone fails (its labels have A's UUID)" 1 $?
umount "$T/b"; losetup -d "$LB"

# Hold verify at the open of $M/hold, between A's f and the f2 at the
# same path, which will then be B's.  hold has no labels: a plain FAIL.
echo hold >"$B/hold"
: >"$RULES.hits"
echo "slowopen hold 600000" >"$RULES"
U verify -j1 "$R/a/f" "$M/hold" "$R/a/f2" >"$T/out" 2>&1 &
vpid=$!
wait_for "$WAIT_S" "verify held at the open of hold" \
	grep -q '^slowopen hold' "$RULES.hits"
umount "$R/a" 2>/dev/null
rc=$?
check "F3: A cannot be unmounted while verify has its UUID cached" test "$rc" -ne 0
# The attack goes on: a lazy unmount, A's loop device freed if it can be,
# B on it if the kernel lets it, else on another.
[ "$rc" -ne 0 ] && umount -l "$R/a"
losetup -d "$LA" 2>/dev/null
if losetup "$LA" "$T/B.img" 2>/dev/null; then
	LB=$LA
	fail "F3: A's loop device is still A's" "B was attached to $LA"
else
	pass "F3: A's loop device is still A's"
	LB=$(losetup -f --show "$T/B.img")
fi
mount "$LB" "$R/a" || fail "F3: mount B in A's place"
: >"$RULES"
wait "$vpid"
rc=$?
out=$(cat "$T/out")
expect_eq "F3: verify exits 1" 1 "$rc"
expect_match "F3: A's f passes (the one pass)" "^  pass +1\$" "$out"
check "F3: and is reported neither failed nor in error" \
	bash -c "! grep -q ' $R/a/f:' '$T/out'"
expect_match "F3: B's f2, in A's place, fails with invalid-HMAC" \
	"^FAIL $R/a/f2: fail \(invalid-HMAC\)" "$out"
