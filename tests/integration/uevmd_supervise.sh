#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 12, item 14: `kill -9` of uevmd.  When the process that holds a
# fanotify permission group dies, the kernel closes the group and allows
# every pending and later open: uevmd alone fails open, for as long as it
# takes to start it again.  `uevmd --supervise` keeps the groups in a small
# parent and restarts uevmd at once: opens wait in the kernel meanwhile,
# and the new uevmd appraises them (or refuses those its predecessor had
# taken but not answered).  on_exit = refuse starts only with such a
# keeper.  This test measures the window both ways.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

make_image 1G || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
D=$MNT/d
mkdir -p "$D"
echo good >"$D/good"
for i in $(seq 1 20); do echo "bad $i" >"$D/bad$i"; done
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT" >/dev/null
for i in $(seq 1 20); do echo tampered >>"$D/bad$i"; done
truncate -s 8G "$D/big"		# unlabelled: hashed for seconds, then refused

child_pid() { "$UEVM" status --socket "$SOCK" 2>/dev/null | sed -n 's/^pid: //p'; }
# wait_new_child OLD: until a uevmd other than OLD answers the socket.
new_child() { local c; c=$(child_pid); [ -n "$c" ] && [ "$c" != "$1" ]; }
wait_new_child() {
	wait_quiet "$WAIT_S" new_child "$1" && child_pid
}
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# ---- on_exit = refuse needs a keeper ---------------------------------------------------------
write_conf "on_exit = refuse"
out=$(timeout 120 "$UEVMD" -c "$CONF" -f 2>&1 </dev/null)
rc=$?
check "on_exit = refuse without a keeper: uevmd refuses to start ($rc)" test "$rc" = 1
expect_match "  and says to run it supervised" "uevmd --supervise" "$out"
check "on_exit = refuse under --supervise: it starts" start_uevmd --supervise
stop_uevmd
write_conf

# ---- baseline: unsupervised, a kill -9 lets a tampered file open ------------------------------
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "a tampered file is refused" EPERM "$(open_result "$D/bad1")"
kill -9 "$UEVMD_PID"
wait "$UEVMD_PID" 2>/dev/null
UEVMD_PID=
expect_eq "unsupervised, after kill -9: the tampered file opens (the fail-open uevmd(8) documents)" \
	ok "$(open_result "$D/bad1")"

# ---- supervised: opens pending at the kill wait, and are appraised ---------------------------
start_uevmd --supervise || { fail "uevmd --supervise starts"; exit 1; }
SUP=$UEVMD_PID
c1=$(child_pid)
check "the daemon is a child of the supervisor" test "$(ps -o ppid= -p "$c1" | tr -d ' ')" = "$SUP"
expect_eq "supervised: the tampered file is refused" EPERM "$(open_result "$D/bad2")"
stop_process "$c1"
(open_result "$D/bad3" >"$T/r.bad3") &
p1=$!
(open_result "$D/good" >"$T/r.good") &
p2=$!
# (in_open, uevmd_lib.sh: the cat waits in its open for an answer from
# the group)
both_in_open() { in_open "$D/bad3" && in_open "$D/good"; }
wait_quiet "$WAIT_S" both_in_open
check "  the two opens wait in the group while uevmd is stopped" both_in_open
t0=$(date +%s%N)
kill -9 "$c1"
wait $p1 $p2
window=$(ms_since "$t0")
expect_eq "an open of a tampered file pending at the kill -9: refused by the new uevmd" \
	EPERM "$(cat "$T/r.bad3")"
expect_eq "an open of a good file pending at the kill -9: allowed by the new uevmd" \
	ok "$(cat "$T/r.good")"
echo "measured: kill -9 to the pending opens answered: $window ms (they waited, none passed unchecked)"
c2=$(wait_new_child "$c1")
check "a new uevmd runs" test -n "$c2"

# ---- a kill -9 in the middle of a hash: that open is refused, not allowed ------------------------
(open_result "$D/big" >"$T/r.big") &
pb=$!
hashing() { [ "$(status_field busy)" -ge 1 ]; }
wait_for "$WAIT_S" "a worker busy hashing the 8G file" hashing
t0=$(date +%s%N)
kill -9 "$c2"
# Opens of tampered files all through the restart: none may pass.
passed=0
for i in $(seq 4 20); do
	[ "$(open_result "$D/bad$i")" = ok ] && passed=$((passed + 1))
done
wait $pb
expect_eq "the open being hashed when uevmd was killed: refused (its predecessor's, not appraised)" \
	EPERM "$(cat "$T/r.big")"
expect_eq "17 opens of tampered files during the restart: none allowed" 0 "$passed"
c3=$(wait_new_child "$c2")
check "the new uevmd says it refused what its predecessor left pending" \
	log_has "restarted: [0-9]+ opens left pending by the previous uevmd were refused"
echo "measured: kill -9 in a hash to a new uevmd answering: $(ms_since "$t0") ms"

# ---- a clean stop ends it: opens are no longer held ------------------------------------------------
stop_uevmd
check "after a clean stop nothing is left waiting (supervisor gone)" \
	test "$(timeout 60 cat "$D/good" 2>/dev/null)" = good

# ---- a daemon that cannot start again: the supervisor gives up ---------------------------------------
start_uevmd --supervise || { fail "uevmd --supervise starts again"; exit 1; }
SUP=$UEVMD_PID
mv "$T/policy" "$T/policy.away"
kill -9 "$(child_pid)"
wait_for "$WAIT_S" "the supervisor to give up" uevmd_gone "$SUP"
wait "$SUP" 2>/dev/null
rc=$?
UEVMD_PID=
check "a daemon failing three times at start: the supervisor gives up (exit $rc)" test "$rc" = 1
expect_match "  and says what that means" "giving up; the kernel now allows every open" \
	"$(cat "$T/uevmd.out")"
expect_eq "  opens are no longer held" ok "$(timeout 60 cat "$D/good" >/dev/null 2>&1 && echo ok)"
mv "$T/policy.away" "$T/policy"

# ---- the shipped unit runs uevmd under its keeper ----------------------------------------------
expect_match "the systemd unit starts uevmd --supervise" "^ExecStart=.*/uevmd --supervise " \
	"$(cat "$TESTS_DIR/../programs/uevmd/uevmd.service.in")"
