#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmd must never wait for itself.  Its configuration, key, policy, log
# file and measurement list live on the watched mount; a journald stand-in
# receives its syslog records and appends each one to a file on the same
# mount (open, write, close per record), and another stand-in reads its
# stderr but stalls.  Under a stream of refusals (each one a record), every
# open is still answered in time, the daemon rereads and rotates its log
# and loads a policy from the mount, and the stand-in's file keeps valid
# labels through hundreds of open/append/close rounds.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

command -v python3 >/dev/null || { fail "python3 is installed"; exit 1; }
make_image || { fail "loop-mounted ext4 image"; exit 1; }
E=$MNT/etc
V=$MNT/var
mkdir -p "$E" "$V" "$MNT/data"
make_key "$E/key"
POLICY=$E/policy
cat >"$POLICY" <<'EOF'
measure func=FILE_CHECK mask=MAY_READ
appraise func=FILE_CHECK
appraise func=BPRM_CHECK
EOF
cp "$POLICY" "$E/policy2"
echo "dont_measure fsmagic=0x9fa0" >>"$E/policy2"
for i in $(seq 1 800); do echo "unlabelled $i" >"$MNT/data/bad$i"; done
echo good >"$MNT/data/good"
"$UEVM" label -r --hmac-key "raw:$E/key" "$E" "$MNT/data/good"
# The measurement list and the log are uevmd's own files there.
KEYSPEC=raw:$E/key
LOG=$V/uevmd.log
CONF=$E/uevmd.conf
write_conf "measurement_list = $V/measurements" "audit_syslog = yes" \
	"syslog_socket = $T/syslog.sock" "deadline_ms = 3000"
# On the watched filesystem, uevmd's own inputs must pass appraisal.
"$UEVM" label --hmac-key "raw:$E/key" "$CONF" >/dev/null

cat >"$T/standin.py" <<'EOF'
# A journald stand-in: datagrams (or stdin lines) appended to FILE, which
# is opened and closed for every record, like a naive logger would.
import os, socket, sys, time
target, mode = sys.argv[1], sys.argv[2]
def append(data):
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
    os.write(fd, data.rstrip(b"\n") + b"\n")
    os.close(fd)
if mode == "dgram":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(sys.argv[3])
    open(sys.argv[3] + ".ready", "w").close()
    while True:
        append(s.recv(65536))
else:
    # stalled until the test says so (FILE appears): the pipe fills up;
    # the first refusal record it appends is announced in GOT (off the
    # watched mount), for the test to wait on
    while not os.path.exists(sys.argv[3]):
        time.sleep(0.05)
    announced = False
    for line in sys.stdin.buffer:
        append(line)
        if not announced and b"cause=missing-hash" in line:
            open(sys.argv[4], "w").close()
            announced = True
EOF
python3 "$T/standin.py" "$V/journal" dgram "$T/syslog.sock" &
STANDIN=$!
on_exit "kill $STANDIN 2>/dev/null; wait $STANDIN 2>/dev/null"
wait_for "$WAIT_S" "the syslog stand-in to bind its socket" test -e "$T/syslog.sock.ready" || exit 1

start_uevmd || { fail "uevmd starts with everything on the watched mount"; exit 1; }
pass "uevmd starts with config, key, policy, log and list on the watched mount"

# 200 refusals: each a record to the stand-in, which then opens the file
# on the watched mount; no open may hang.  (An answer comes by the 5 s
# deadline even from a stuck worker: the timeout, generous so that load
# never fires it, catches a watchdog stuck too; one hang is enough.)
hung=0 wrong=0
for i in $(seq 1 200); do
	timeout 60 cat "$MNT/data/bad$i" >/dev/null 2>&1
	case $? in 124) hung=$((hung + 1)); break ;; 0) wrong=$((wrong + 1)) ;; esac
	if [ "$i" = 50 ]; then kill -HUP "$UEVMD_PID"; fi		# log reopened
	if [ "$i" = 100 ]; then mv "$LOG" "$LOG.1"; kill -HUP "$UEVMD_PID"; fi	# rotated
done
expect_eq "200 refused opens with a logger on the mount: none hung" 0 "$hung"
expect_eq "  and all were refused" 0 "$wrong"
expect_eq "the untouched file opens" ok "$(open_result "$MNT/data/good")"
expect_eq "no answer was late (watchdog count)" 0 "$(status_field late)"

out=$("$UEVM" policy load --socket "$SOCK" "$E/policy2" 2>&1)
expect_eq "uevm policy load of a file on the watched mount" 0 $?
expect_match "  uevm status shows the new policy" "policy: policy2 \(4 rules\)" \
	"$("$UEVM" status --socket "$SOCK")"
expect_eq "  enforcement goes on" EPERM "$(open_result "$MNT/data/bad201")"
# The stand-in's file is read while uevmd runs (labels kept current).
journal_has_all() { [ "$(grep -c "cause=missing-hash" "$V/journal" 2>/dev/null)" -ge 201 ]; }
wait_quiet "$WAIT_S" journal_has_all
n=$(grep -c "cause=missing-hash" "$V/journal" 2>/dev/null)
check "the stand-in wrote the records to the watched mount (${n:-0} >= 201, read with uevmd running)" \
	test "${n:-0}" -ge 201
# The stand-in goes first: whatever it wrote after uevmd stopped would be
# an offline change, which uevmd would rightly refuse next time.
kill "$STANDIN"
wait "$STANDIN" 2>/dev/null
stop_uevmd

# Offline now: the files can be read without uevmd.
check "the rotated log has records" grep -q "cause=missing-hash" "$LOG.1"
check "the reopened log has records" grep -q "cause=missing-hash" "$LOG"
check "the daemon logged the policy change" grep -q "policy replaced from policy2" "$LOG"
json=$("$UEVM" verify -v --json --hmac-key "raw:$E/key" "$V/journal")
expect_eq "the stand-in's file, appended ~200 times, verifies PASS" pass \
	"$(jq -r '.results[0].status' <<<"$json")"

# ---- stderr to a stalled reader (journald stuck on us) -------------------------
mkfifo "$T/stderr.fifo"
python3 "$T/standin.py" "$V/stderr.journal" stream "$T/reader.go" "$T/reader.got" <"$T/stderr.fifo" &
STANDIN2=$!
on_exit "kill $STANDIN2 2>/dev/null; wait $STANDIN2 2>/dev/null"
"$UEVMD" -c "$CONF" -f 2>"$T/stderr.fifo" >/dev/null &
UEVMD_PID=$!
wait_quiet "$WAIT_S" uevmd_up_or_gone "$UEVMD_PID"
check "uevmd starts with its stderr to a stalled reader" uevmd_running
hung=0
for i in $(seq 1 800); do
	timeout 60 cat "$MNT/data/bad$i" >/dev/null 2>&1
	[ $? = 124 ] && { hung=$((hung + 1)); break; }
done
expect_eq "800 refusals (records) while stderr's reader stalls: none hung" 0 "$hung"
dropped=$(status_field log_dropped)
check "  records that did not fit were dropped, not waited for ($dropped)" test "$dropped" -gt 0
touch "$T/reader.go"
# The reader catches up while uevmd runs (its appends are appraised), and
# goes before uevmd stops, as the first stand-in does: appends racing the
# stop are the last section's case, not this one's.  Its file is not read
# through uevmd meanwhile: a read while the stand-in appends is rightly
# refused, and the refusal is one more record for the stand-in to append,
# which can keep the file's label from ever being current while it runs.
wait_quiet "$WAIT_S" test -e "$T/reader.got"
check "the stalled reader got the records that fit (uevmd running)" test -e "$T/reader.got"
kill "$STANDIN2"
wait "$STANDIN2" 2>/dev/null
stop_uevmd
check "  they are in its file (read offline)" grep -q "cause=missing-hash" "$V/stderr.journal"

# ---- a stop while opens are being appraised ---------------------------------
# An appender on the mount (open, append, close, as fast as it can) while
# uevmd stops: the opens it has in flight get their real answers (its file
# is good: allowed), never a refusal because the daemon was stopping.  The
# file is large, so that its opens are mostly hashing and the stop finds
# one being hashed.  (Stopping used to cancel that hashing, and the
# cancelled open was refused.)
head -c 16M /dev/urandom >"$V/appended"
"$UEVM" label --hmac-key "raw:$E/key" "$V/appended"
cat >"$T/appender.py" <<'EOF2'
import os, sys
target, ready, stop = sys.argv[1:4]
n = 0
while not os.path.exists(stop):
    fd = os.open(target, os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"appended\n")
    os.close(fd)
    n += 1
    if n == 3:
        open(ready, "w").close()
EOF2
start_uevmd || { fail "uevmd starts again"; exit 1; }
python3 "$T/appender.py" "$V/appended" "$T/appender.ready" "$T/appender.stop" \
	2>"$T/appender.err" &
APPENDER=$!
on_exit "kill $APPENDER 2>/dev/null; wait $APPENDER 2>/dev/null"
while kill -0 "$APPENDER" 2>/dev/null && [ ! -e "$T/appender.ready" ]; do sleep 0.05; done
check "the appender's opens are allowed while uevmd runs" test -e "$T/appender.ready"
stop_uevmd
touch "$T/appender.stop"
wait "$APPENDER"
rc=$?
if [ "$rc" = 0 ]; then
	pass "an appender's opens across uevmd's stop: none refused"
else
	fail "an appender's opens across uevmd's stop: none refused" \
		"exit $rc: $(tail -n 1 "$T/appender.err")"
fi
