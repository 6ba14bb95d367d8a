#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmfs -o fastopen stopped by SIGTERM while users chmod files they keep
# dirtying through shared mappings.  Each chmod's reply waits for a drop of
# the file's pages, which waits for the WRITE of its dirty pages; a signal
# ends libfuse's workers, and the stop waited for those drops with no one
# left to serve the WRITEs: uevmfs hung until its connection was aborted
# (an attack review).  At a signal the workers now serve the writes the
# drops wait for before libfuse's loop ends (chmods refused meanwhile);
# after stop_timeout seconds or at a second signal, long hashing is
# cancelled and the connection aborted.  And those drops run in
# threads of their own, at most 4 per worker: past that, chmods queue for
# one (300 callers made 304 threads).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S" "$M"
: >"$T/uevmfs.stderr"
: >"$T/audit.log"


cat >"$T/flood.py" <<'PY'
import mmap, os, sys
# Dirty every page of a shared mapping and chmod the file, until the mount
# fails us (the stop refuses chmods, then the mount is gone).  Says so
# after its first chmod: once the mount is gone, the same name is a file
# of the directory below, where the loop would go on for ever.
p, size = sys.argv[1], int(sys.argv[3])
try:
    fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
    os.ftruncate(fd, size)
    m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    r = 0
    while True:
        for i in range(0, size, 4096):
            m[i] = r & 0xff
        os.chmod(p, 0o600 if r & 1 else 0o644)
        if r == 0:
            with open(sys.argv[2], "a") as f:
                f.write("started\n")
        r += 1
except OSError as e:
    print("ended:", e.errno, file=sys.stderr)
PY

all_started() { [ "$(grep -c started "$T/started" 2>/dev/null)" = 6 ]; }
drop_running() { grep -qx uevmfs-drop /proc/"$UFS_PID"/task/*/comm 2>/dev/null; }
fl_gone() { local p; for p in "${fl[@]}"; do ! kill -0 "$p" 2>/dev/null || return 1; done; }
fusectl_mounts() { awk '$9 == "fusectl"' /proc/self/mountinfo | wc -l; }

# stop_round OPTIONS [SECOND [SIZE]]: mount (two workers), start six users
# (mappings of SIZE bytes, 64 KiB), wait until a drop is under way, SIGTERM
# (and SECOND: a second SIGTERM once the stop serves).  Sets STATUS (uevmfs's exit status, or "hung") and LOG (its
# stderr of this round); fails the test's steps that must hold every round.
stop_round() {
	local opts=$1 second=${2:-} size=${3:-65536} from u
	from=$(wc -l <"$T/uevmfs.stderr")
	ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,noauditd,fastopen=on,max_threads=2,audit_log=$T/audit.log$opts" ||
		exit 1
	fl=()
	: >"$T/started"
	for u in 1 2 3 4 5 6; do
		python3 "$T/flood.py" "$M/c$u" "$T/started" "$size" 2>>"$T/flood.err" &
		fl+=($!)
		on_exit "kill -9 ${fl[-1]} 2>/dev/null"
	done
	if ! wait_quiet 60 all_started; then
		fail "stop ($opts): the six users start" "$(cat "$T/flood.err")"
		exit 1
	fi
	# Not an assertion: a drop may end before the signal.
	wait_quiet 60 drop_running
	kill -TERM "$UFS_PID"
	if [ -n "$second" ]; then
		# Once this round's stop serves (libfuse's loop has ended).
		serving() { tail -n +$((from + 1)) "$T/uevmfs.stderr" |
			grep -q "stopping: waiting for" || ufs_gone "$UFS_PID"; }
		wait_quiet 60 serving
		kill -TERM "$UFS_PID" 2>/dev/null
	fi
	if wait_quiet 120 ufs_gone "$UFS_PID"; then
		wait "$UFS_PID"
		STATUS=$?
	else
		STATUS=hung
		ufs_abort "$M"
		wait_quiet 60 ufs_gone "$UFS_PID"
	fi
	LOG=$(tail -n +$((from + 1)) "$T/uevmfs.stderr")
	if ! wait_quiet 60 fl_gone; then
		fail "stop ($opts): the six users end" "$(ps -o pid,stat,wchan:30,cmd -p "${fl[*]}")"
		ufs_abort "$M"
		exit 1
	fi
	ufs_mounted "$M" fuse.uevmfs && fusermount3 -u -z "$M"
	return 0
}

check_files() {	# what
	local u
	for u in 1 2 3 4 5 6; do
		check "$1: c$u verifies (relabelled as it ended up)" \
			"$UEVM" verify -q --hmac-key "raw:$KEY" "$S/c$u"
	done
	expect_eq "$1: nothing of theirs was refused (no audit record)" "" "$(cat "$T/audit.log")"
}

# rounds WHAT PATTERN N OPTIONS [SECOND [SIZE]]: up to N stop_rounds,
# until this round's stderr shows PATTERN (a drop must be under way at the
# signal: most rounds have one).  Each must end uevmfs with status 0.
rounds() {
	local what=$1 pattern=$2 n=$3 round
	shift 3
	HIT=0
	for round in $(seq "$n"); do
		stop_round "$@"
		if [ "$STATUS" != 0 ]; then
			fail "$what: uevmfs ends, exit 0" "status $STATUS: $(tail -n 20 "$T/uevmfs.stderr")"
			exit 1
		fi
		grep -q "$pattern" <<<"$LOG" && { HIT=$round; break; }
	done
	pass "$what: uevmfs ends, exit 0, the six users too ($round rounds)"
}
# hit WHAT: the last rounds saw their pattern.
hit() {
	if [ "$HIT" != 0 ]; then pass "$1 (round $HIT)"; else fail "$1" "in no round: $LOG"; fi
}

# ---- SIGTERM: the stop serves the writes the drops wait for ----------------------------
rounds "SIGTERM with chmod drops under way" "stopping: waiting for" 5 ""
hit "... the stop served requests while drops were under way"
expect_match "... and says when they were done" "stopping: page drops done after [0-9.]+ s" "$LOG"
expect_eq "... no abort (they all ended in time)" "" "$(grep aborting <<<"$LOG")"
check_files "SIGTERM"

# ---- stop_timeout=0: drops under way abort the connection at once ----------------------
# Their writes fail (the mapped data is lost, as on a kill), uevmfs still
# ends, and the fusectl mount it may make for the abort is gone.
before=$(fusectl_mounts)
rounds "stop_timeout=0" "aborting the connection" 5 ",stop_timeout=0"
hit "... drops under way at the stop: the connection was aborted"
expect_match "... for the time" "stop_timeout passed" "$LOG"
expect_eq "... no fusectl mount left by uevmfs" "$before" "$(fusectl_mounts)"
expect_eq "... no directory of its own left" "" "$(ls -d /run/uevmfs-fusectl.* 2>/dev/null)"
check_files "stop_timeout=0"

# ---- a second SIGTERM while the stop serves: abort at once -----------------------------
# stop_timeout is long; the second signal must not wait for it.  Sent once
# the stop serves: 16 MiB mappings, whose drops write 4096 pages back one
# WRITE each, keep it serving a while; still, a few rounds.
rounds "a second SIGTERM" "aborting the connection" 10 ",stop_timeout=3600" second $((16 << 20))
hit "... drops still under way at it: the connection was aborted"
expect_match "... for the signal" "a second signal" "$LOG"
check_files "second SIGTERM"

# ---- a long relabel at the stop: cancelled once stop_timeout has passed -----------------
# A huge sparse file written through the mount is relabelled by the flusher
# once idle: hashing 1 TiB of zeros takes minutes.  A stop waited for it,
# signals or not (a review: still up after 471 s with stop_timeout=2).  Now
# the hashing is cancelled (the file keeps failing), and uevmfs ends.
: >"$T/big-audit.log"
from=$(wc -l <"$T/uevmfs.stderr")
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,noauditd,fastopen=on,write_idle=0.1,stop_timeout=1,audit_log=$T/big-audit.log" ||
	exit 1
truncate -s 1T "$M/big"
rchar() {	# uevmfs's bytes read so far (0 once it is gone)
	local v
	v=$(awk '$1 == "rchar:" { print $2 }' "/proc/$UFS_PID/io" 2>/dev/null)
	echo "${v:-0}"
}
r0=$(rchar)
hashing() { [ $(($(rchar) - r0)) -gt $((1 << 30)) ]; }	# a GiB read: under way
if ! wait_quiet 120 hashing; then
	fail "a long relabel: the flusher hashes the big file" "read $(($(rchar) - r0)) bytes"
	exit 1
fi
kill -TERM "$UFS_PID"
if wait_quiet 120 ufs_gone "$UFS_PID"; then
	wait "$UFS_PID"
	expect_eq "a long relabel under way at SIGTERM: uevmfs ends, exit 0" 0 $?
else
	fail "a long relabel under way at SIGTERM: uevmfs ends, exit 0" "still up after 120 s"
	ufs_abort "$M"
	exit 1
fi
ufs_mounted "$M" fuse.uevmfs && fusermount3 -u -z "$M"
LOG=$(tail -n +$((from + 1)) "$T/uevmfs.stderr")
expect_match "... once stop_timeout passed, the hashing was cancelled" \
	"stop_timeout passed: long hashing cancelled" "$LOG"
expect_match "... audited by the file's name (op=worker_share cause=uevmfs-stopping)" \
	"op=worker_share cause=uevmfs-stopping .*name=\"$M/big\"" "$(cat "$T/big-audit.log")"
rm -f "$S/big"

# ---- many users at once: at most 4 drop threads per worker ----------------------------
# 48 users against two workers, each dirtying its own file's shared mapping
# and chmodding it: at most 8 drop threads, the other chmods queue, every
# one is answered, nothing is refused, every file ends labelled.
cat >"$T/many.py" <<'PY'
import mmap, os, sys, threading
d, n = sys.argv[1], int(sys.argv[2])
bar = threading.Barrier(n)
errs = []
def run(u):
    p = os.path.join(d, "m%d" % u)
    fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
    os.ftruncate(fd, 65536)
    m = mmap.mmap(fd, 65536, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    bar.wait()
    try:
        for r in range(100):
            for i in range(0, 65536, 4096):
                m[i] = r & 0xff
            os.chmod(p, 0o600 if r & 1 else 0o644)
    except OSError as e:
        errs.append(str(e))
    m.close()
    os.close(fd)
ts = [threading.Thread(target=run, args=(u,)) for u in range(n)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("errors:", len(errs), *errs[:3])
PY
from=$(wc -l <"$T/uevmfs.stderr")
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,noauditd,fastopen=on,max_threads=2,audit_log=$T/audit.log" ||
	exit 1
expect_eq "48 users chmod files they dirty through shared mappings: every chmod answered" \
	"errors: 0" "$(timeout 600 python3 "$T/many.py" "$M" 48)"
ufs_umount "$M"
LOG=$(tail -n +$((from + 1)) "$T/uevmfs.stderr")
peak=$(sed -n 's/.*page drops: at most \([0-9]*\) threads at once (of \([0-9]*\)), \([0-9]*\) requests queued.*/\1 \2 \3/p' <<<"$LOG")
read -r peak cap queued <<<"${peak:-0 0 0}"
expect_eq "... at most 4 drop threads per worker (8 with two)" "8" "$cap"
check "... no more than that ran at once ($peak)" test "$peak" -ge 1 -a "$peak" -le 8
check "... the rest queued for one ($queued)" test "$queued" -ge 1
expect_eq "... nothing of theirs was refused (no audit record)" "" "$(cat "$T/audit.log")"
bad=0
for u in $(seq 0 47); do
	"$UEVM" verify -q --hmac-key "raw:$KEY" "$S/m$u" || bad=$((bad + 1))
done
expect_eq "... every file verifies" 0 "$bad"

# ---- option check --------------------------------------------------------------------
expect_rc "stop_timeout=-1 is refused" 2 "$UEVMFS" "$S" "$M" -f -o "securityfs=none,stop_timeout=-1"
expect_match "... naming the option" "stop_timeout=-1: not between 0 and 86400" \
	"$("$UEVMFS" "$S" "$M" -f -o "securityfs=none,stop_timeout=-1" 2>&1)"
