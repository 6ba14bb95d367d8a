#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The audit record of a refused open names the opener's auid and session
# even when the opener is killed while uevmd still appraises its open
# (SIGKILL ends a fanotify permission wait) and another login's process
# then takes its pid, or when the deadline answers the open before the
# record is written.  uevmd reads them when it reads the event: a read at
# record time named whoever held the pid then, or no one (-1).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

need_loginuid

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
DEADLINE_MS=600000 write_conf
mkdir -p "$MNT/bad"
# Unlabelled, and big but sparse: measured (hashed) before it is refused,
# which keeps the open unanswered while the opener is killed.
truncate -s "${BIG:-6G}" "$MNT/bad/big1"
truncate -s "${BIG:-6G}" "$MNT/bad/big2"

start_uevmd || { fail "uevmd starts"; exit 1; }
pass "uevmd starts"

A=$((20000 + RANDOM)); B=$((A + 1))


# spawn_at PID AUID: a process of login AUID that takes pid PID (as root,
# through ns_last_pid; retried, the machine forks too).
spawn_at() {
	local want=$1 got i
	for i in $(seq 50); do
		echo $((want - 1)) >/proc/sys/kernel/ns_last_pid
		sh -c "$AS_LOGIN" sh "$2" "$T/ses.victim" sleep 600 &
		got=$!
		[ "$got" = "$want" ] && { VICTIM=$got; return 0; }
		kill "$got"; wait "$got" 2>/dev/null
	done
	return 1
}

# record_of FILE: its refusal's audit record, in $line
record_of() {
	log_has "op=appraise_data cause=missing-hash .*name=\"$1\"" ||
		fail "the refusal of $1 is recorded"
	line=$(grep "name=\"$1\"" "$LOG" | grep appraise_data | head -n1)
	echo "record: $line"
}

# 1. Killed while held, pid reused by another login's process.
sh -c "$AS_LOGIN" sh "$A" "$T/ses.A" cat -- "$MNT/bad/big1" >/dev/null 2>&1 &
p=$!
wait_for "$WAIT_S" "opener 1 is held in its open" held "$p"
kill -9 "$p"; wait "$p" 2>/dev/null
VICTIM=
if spawn_at "$p" "$B"; then
	pass "another login's process took the killed opener's pid $p"
else
	fail "another login's process took the killed opener's pid $p"
fi
sA=$(cat "$T/ses.A")
record_of "$MNT/bad/big1"
check "big1: the record does not name the other login's auid $B" \
	bash -c "! grep -q 'auid=$B ' <<<'$line'"
check "big1: the record names the opener's auid $A and session $sA" \
	bash -c "grep -q 'pid=$p uid=0 auid=$A ses=$sA ' <<<'$line'"
[ -n "$VICTIM" ] && { kill "$VICTIM"; wait "$VICTIM" 2>/dev/null; }

# 2. Killed while held and reaped (a read at record time found no ids: -1).
sh -c "$AS_LOGIN" sh "$A" "$T/ses.A2" cat -- "$MNT/bad/big2" >/dev/null 2>&1 &
p=$!
wait_for "$WAIT_S" "opener 2 is held in its open" held "$p"
kill -9 "$p"; wait "$p" 2>/dev/null
sA=$(cat "$T/ses.A2")
record_of "$MNT/bad/big2"
check "big2: the record names the killed opener's auid $A and session $sA" \
	bash -c "grep -q 'pid=$p uid=0 auid=$A ses=$sA ' <<<'$line'"
stop_uevmd

# 3. Not killed: an open answered by the deadline (a big file, hashed on
# to the end) is recorded when its hash is done, after the answer.
truncate -s "${BIG:-6G}" "$MNT/bad/big3"
DEADLINE_MS=1000 write_conf
start_uevmd || { fail "uevmd starts (short deadline)"; exit 1; }
sh -c "$AS_LOGIN" sh "$A" "$T/ses.A3" cat -- "$MNT/bad/big3" >/dev/null 2>&1 &
p=$!
wait "$p"
sA=$(cat "$T/ses.A3")
record_of "$MNT/bad/big3"
check "big3: the record names the opener's auid $A and session $sA" \
	bash -c "grep -q 'pid=$p uid=0 auid=$A ses=$sA ' <<<'$line'"
stop_uevmd
