#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 12, item 3: one user must not starve every worker.  An unprivileged
# user grows files of their own to many GB with truncate(2) (sparse: cheap
# to make, seconds to hash, and nothing rehashes them) and opens them over
# and over, each time after one more truncate so that nothing is cached.
# With two workers both hashed for seconds and every other open waited for
# deadline_ms, then got the on_timeout answer: "deny" failed legitimate
# opens, "allow" let tampered files open.  Now:
#  - a user holds at most `share` workers; others' opens go on meanwhile;
#  - another open of a file being hashed waits for that hash;
#  - work past the deadline that holds a worker another user waits for is
#    cancelled (its open is refused, nothing is cached);
#  - on_timeout = allow is refused with a policy that appraises.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

chmod 711 "$T"
make_image 256M || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
U=$MNT/user
mkdir -p "$U" "$MNT/victim"
chown 65534:65534 "$U"
chmod 777 "$U"
for i in $(seq 1 30); do echo "victim $i" >"$MNT/victim/f$i"; done
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT" >/dev/null

# ---- on_timeout = allow with an appraising policy: refused ---------------------------------
write_conf "on_timeout = allow"
out=$(timeout 120 "$UEVMD" -c "$CONF" -f 2>&1 </dev/null)
rc=$?
check "on_timeout = allow with a policy that appraises: uevmd refuses to start ($rc)" \
	test "$rc" -ne 0 -a "$rc" -ne 124
expect_match "  and says why" "on_timeout = allow: the policy appraises" "$out"

# ---- two workers, one user hashing huge files --------------------------------------------------
write_conf "workers = 2" "deadline_ms = 4000"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_match "two workers, one for each user at most" "^workers: 2 share: 1 " \
	"$("$UEVM" status --socket "$SOCK" | grep '^workers:')"

# hog UID FILE: as UID, make FILE (a new file, labelled at close), then
# until $T/stop exists: grow it by a page and open it (a full hash each time).
hog() {
	setpriv --reuid="$1" --regid="$1" --clear-groups -- sh -c '
		echo seed >"$1" || exit 1
		truncate -s 8G "$1"
		while [ ! -e "$2" ]; do
			truncate -s +4096 "$1" 2>/dev/null
			cat "$1" >/dev/null 2>&1
		done' hog "$2" "$T/stop" &
	HOGS="$HOGS $!"
}
stop_hogs() {
	touch "$T/stop"
	for p in $HOGS; do wait "$p" 2>/dev/null; done
	HOGS=
	rm -f "$T/stop"
}
on_exit "touch '$T/stop'; wait"
# wait_idle: until no worker is busy and no label update pending.
idle() { [ "$(status_field busy)" = 0 ] && [ "$(status_field relabel_pending)" = 0 ]; }
wait_idle() { wait_quiet "$WAIT_S" idle; }
# wait_busy N: until N workers are busy.
busy() { [ "$(status_field busy)" -ge "$1" ]; }
wait_busy() { wait_quiet "$WAIT_S" busy "$1"; }

HOGS=
CATS=
hog 65534 "$U/huge1"
hog 65534 "$U/huge2"
check "the user's hash holds a worker" wait_busy 1
bad=0
for i in $(seq 1 10); do
	[ "$(open_result "$MNT/victim/f$i")" = ok ] || bad=$((bad + 1))
done
expect_eq "meanwhile root's 10 first opens of labelled files all succeed" 0 "$bad"
check "  the user's second hash waited for its share" test "$(status_field share_waits)" -gt 0
expect_eq "  no open of root's was answered late" "" "$(grep -F "$MNT/victim/" "$LOG" | grep 'no decision')"
stop_hogs
check "the daemon gets idle again" wait_idle

# ---- the same huge file opened by four processes at once: one hash ------------------------------
setpriv --reuid=65534 --regid=65534 --clear-groups -- sh -c "echo seed >'$U/shared'; truncate -s 4G '$U/shared'"
check "  (idle first)" wait_idle
w0=$(status_field inode_waits)
for i in 1 2 3 4; do
	setpriv --reuid=65534 --regid=65534 --clear-groups -- cat "$U/shared" >/dev/null 2>&1 &
	CATS="$CATS $!"
done
for p in $CATS; do wait "$p"; done
check "four opens of one file being hashed: the others waited for its hash" \
	test "$(status_field inode_waits)" -gt "$w0"
stop_uevmd

# ---- two users hold both workers: their work stops for root's open -----------------------------
write_conf "workers = 2" "deadline_ms = 3000"
: >"$LOG"
start_uevmd || { fail "uevmd restarts"; exit 1; }
mkdir -p "$MNT/user2"
chown 65533:65533 "$MNT/user2"
hog 65534 "$U/huge3"
hog 65533 "$MNT/user2/huge4"
check "two users' hashes hold both workers" wait_busy 2
bad=0
for i in $(seq 11 14); do
	[ "$(open_result "$MNT/victim/f$i")" = ok ] || bad=$((bad + 1))
done
expect_eq "root's opens wait at most half the deadline, then succeed" 0 "$bad"
check "  the hashes that held the workers were cancelled" test "$(status_field cancelled)" -gt 0
check "  and their opens refused, audited (timeout)" \
	log_has "op=collect_data cause=timeout .*name=\"$MNT/(user/huge3|user2/huge4)\""
expect_eq "  no open of root's was answered late" "" "$(grep -F "$MNT/victim/" "$LOG" | grep 'no decision')"
stop_hogs

# ---- a flood of small files: every one labelled, none dropped -----------------------------------
# (the users' own big hashes end first: their opens beyond their share
# would wait for them)
check "the daemon gets idle again" wait_idle
mkdir -p "$MNT/flood"
chown 65534:65534 "$MNT/flood"
setpriv --reuid=65534 --regid=65534 --clear-groups -- /usr/bin/python3 - "$MNT/flood" <<'EOF'
import os, sys
for i in range(3000):
    with open(os.path.join(sys.argv[1], "f%d" % i), "w") as f:
        f.write("flood %d\n" % i)
EOF
check "  (idle again)" wait_idle
expect_eq "3000 files written as fast as a user can: no label update dropped" 0 \
	"$(status_field relabel_dropped)"
stop_uevmd
json=$("$UEVM" verify -r --json --hmac-key "raw:$T/key" "$MNT/flood")
expect_eq "  offline, all 3000 verify PASS" "3000 0" \
	"$(jq -r '"\(.summary.pass) \(.summary.failed)"' <<<"$json")"
