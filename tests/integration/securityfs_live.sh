#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The control tree's measurement files read as the kernel's seq_file, on
# both front-ends (uevmfs, uevmd): a long-lived reader (tests/ml_reader.py)
# keeps ascii_runtime_measurements*, binary_runtime_measurements* and
# runtime_measurements_count open while files are measured, and on the
# same descriptors
#  - a read at the old end returned 0 before, and returns exactly the
#    appended bytes after (SEEK_SET to the stored offset, and on from the
#    current position, SEEK_CUR);
#  - lseek(0) and a read give what a fresh open reads, byte for byte;
#  - the count file reads the current count;
#  - the Keylime agent's requests ("the list from entry N on", answered
#    from offsets it remembers, rust-keylime's MeasurementList::read) give
#    exactly the new entries, and nothing when none came;
#  - after the front-end restarts (stopped, or killed: then its dead tree
#    is replaced), the old descriptor fails with ENOTCONN and a reopen
#    reads the resumed list.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"
source "$TESTS_DIR/ml_reader-lib.sh"

LISTS="ascii_runtime_measurements ascii_runtime_measurements_sha256
binary_runtime_measurements binary_runtime_measurements_sha1 binary_runtime_measurements_sha256"

# ---- the checks ----------------------------------------------------------------------------
# The tree's files have size 0, as securityfs's: cmp compares sizes first,
# so a file of the tree is compared through a pipe, <(cat FILE).
tree_gone() { ! ufs_mounted "$(realpath -m "$1")" fuse.uevm-securityfs; }
count_is() { [ "$(cat "$1/ima/runtime_measurements_count")" = "$2" ]; }

# live_checks NAME TREE MEASURE: MEASURE N makes the front-end measure N
# new files.
live_checks() {
	local fe=$1 C=$2 measure=$3 l n0 len off ans
	local -A L0

	start_reader
	for l in $LISTS runtime_measurements_count; do
		req open "$l" "$C/ima/$l"
		expect_eq "$fe: the reader opens $l" ok "$ANS"
	done
	n0=$(cat "$C/ima/runtime_measurements_count")
	for l in $LISTS; do
		req read "$l" 0 "$T/$l.0"
		L0[$l]=$(cut -d' ' -f3 <<<"$ANS")
		check "$fe: $l: the first read is a fresh open's content" \
			cmp -s "$T/$l.0" <(cat "$C/ima/$l")
		req read "$l" "${L0[$l]}" "$T/$l.eof"
		expect_eq "$fe: $l: a read at the end returns 0 bytes" "ok ${L0[$l]} 0" "$ANS"
	done
	req agent ascii_runtime_measurements 0 "$T/agent.0"
	expect_eq "$fe: agent, first request (entry 0): the whole list, $n0 entries" \
		"ok 0 $n0" "$ANS"
	check "$fe:   the text of a fresh open" cmp -s "$T/agent.0" <(cat "$C/ima/ascii_runtime_measurements")
	req read runtime_measurements_count 0 "$T/count"
	expect_eq "$fe: the count read on the held descriptor" "$n0" "$(cat "$T/count")"

	$measure 3
	wait_for "$WAIT_S" "$fe: three new entries" count_is "$C" $((n0 + 3)) || return 1
	req read runtime_measurements_count 0 "$T/count"
	expect_eq "$fe: the held count file reads the new count" $((n0 + 3)) "$(cat "$T/count")"
	for l in $LISTS; do
		cat "$C/ima/$l" >"$T/$l.fresh"
		req read "$l" "${L0[$l]}" "$T/$l.new"
		len=$(cut -d' ' -f3 <<<"$ANS")
		check "$fe: $l: a read at the old end returns the appended bytes" \
			test "${len:-0}" -gt 0
		check "$fe:   old content + appended bytes = a fresh open's content" \
			cmp -s <(cat "$T/$l.0" "$T/$l.new") "$T/$l.fresh"
		req read "$l" 0 "$T/$l.again"
		check "$fe: $l: lseek(0) on the held descriptor reads a fresh open's content" \
			cmp -s "$T/$l.again" "$T/$l.fresh"
	done
	expect_eq "$fe: ascii: the appended bytes are the three new lines" 3 \
		"$(wc -l <"$T/ascii_runtime_measurements.new")"
	expect_match "$fe:   naming the new files" "/$fe-new-3 ?\$" \
		"$(cat "$T/ascii_runtime_measurements.new")"

	# SEEK_CUR: on from where the last read stopped, and back a little.
	req seekcur ascii_runtime_measurements 0
	len=$(stat -c %s "$T/ascii_runtime_measurements.fresh")
	expect_eq "$fe: lseek(0, SEEK_CUR) after reading to the end: the length" "ok $len" "$ANS"
	$measure 1
	wait_for "$WAIT_S" "$fe: one more entry" count_is "$C" $((n0 + 4)) || return 1
	req cont ascii_runtime_measurements "$T/cont"
	expect_eq "$fe: a read on from the current position: the one new line" \
		"$(tail -n 1 "$C/ima/ascii_runtime_measurements")" "$(cat "$T/cont")"
	req seekcur ascii_runtime_measurements -5
	off=$(cut -d' ' -f2 <<<"$ANS")
	req cont ascii_runtime_measurements "$T/cont"
	expect_eq "$fe: lseek(-5, SEEK_CUR) and a read: the last 5 bytes" \
		"$(tail -c 5 "$C/ima/ascii_runtime_measurements" | od -An -c)" "$(od -An -c "$T/cont")"
	expect_eq "$fe:   from the offset asked for" \
		$(($(wc -c <"$C/ima/ascii_runtime_measurements") - 5)) "$off"

	# The agent: "from entry n0 on" is what the verifier asks after it
	# processed n0 entries.
	req agent ascii_runtime_measurements "$n0" "$T/agent.1"
	expect_eq "$fe: agent, request from entry $n0: answered with $((n0 + 4)) entries" \
		"ok $n0 $((n0 + 4))" "$ANS"
	check "$fe:   exactly the four new lines" \
		cmp -s "$T/agent.1" <(tail -n +$((n0 + 1)) "$C/ima/ascii_runtime_measurements")
	req agent ascii_runtime_measurements $((n0 + 4)) "$T/agent.2"
	expect_eq "$fe: agent, request for the next entry to come: none yet" \
		"ok $((n0 + 4)) $((n0 + 4))" "$ANS"
	check "$fe:   an empty text" test ! -s "$T/agent.2"
	$measure 1
	wait_for "$WAIT_S" "$fe: one more entry" count_is "$C" $((n0 + 5)) || return 1
	req agent ascii_runtime_measurements $((n0 + 4)) "$T/agent.3"
	expect_eq "$fe: agent, the same request after one more measurement" \
		"ok $((n0 + 4)) $((n0 + 5))" "$ANS"
	check "$fe:   the new line" \
		cmp -s "$T/agent.3" <(tail -n 1 "$C/ima/ascii_runtime_measurements")
	req agent ascii_runtime_measurements $((n0 + 9)) "$T/agent.4"
	expect_eq "$fe: agent, a request past the end: the whole list" "ok 0 $((n0 + 5))" "$ANS"
	check "$fe:   as a fresh open" cmp -s "$T/agent.4" <(cat "$C/ima/ascii_runtime_measurements")
	cp "$C/ima/ascii_runtime_measurements" "$T/before-restart"
}

# after_restart NAME TREE: the reader's descriptors are on the old mount.
after_restart() {
	local fe=$1 C=$2
	req read ascii_runtime_measurements 0 "$T/dead"
	expect_eq "$fe restarted: a read on the old descriptor fails with ENOTCONN" "err ENOTCONN" "$ANS"
	req read runtime_measurements_count 0 "$T/dead"
	expect_eq "$fe restarted:   the count file too" "err ENOTCONN" "$ANS"
	req reopen ascii_runtime_measurements
	expect_eq "$fe restarted: the path opens again" ok "$ANS"
	req read ascii_runtime_measurements 0 "$T/reopened"
	check "$fe restarted:   and reads the resumed list (a fresh open's content)" \
		cmp -s "$T/reopened" <(cat "$C/ima/ascii_runtime_measurements")
	check "$fe restarted:   which begins with the list before the restart" \
		cmp -s "$T/before-restart" <(head -c "$(stat -c %s "$T/before-restart")" "$T/reopened")
	stop_reader
}

# hold NAME TREE: a new reader holds the ASCII list and the count open.
hold() {
	start_reader
	req open ascii_runtime_measurements "$2/ima/ascii_runtime_measurements"
	req open runtime_measurements_count "$2/ima/runtime_measurements_count"
	req read ascii_runtime_measurements 0 "$T/before-restart"
	check "$1: a new reader holds the list" test "$ANS" != "" -a "${ANS%% *}" = ok
}

# ---- uevmfs -----------------------------------------------------------------------------
KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/ufs
UC=$T/security
NEXT=0
mkdir -p "$S"
for i in $(seq 1 12); do echo "file $i" >"$S/uevmfs-new-$i"; done
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
UFS_OPTS="key=raw:$KEY,ml=$T/ufs.ml,securityfs=$UC,audit_log=$T/audit.log,nosyslog"
ufs_measure() {	# n: read n new files through the mount (measured: root reads)
	local i
	for i in $(seq 1 "$1"); do
		NEXT=$((NEXT + 1))
		cat "$M/uevmfs-new-$NEXT" >/dev/null
	done
}
ufs_mount "$S" "$M" "$UFS_OPTS" || exit 1
live_checks uevmfs "$UC" ufs_measure
ufs_umount "$M"
check "uevmfs: the control tree is gone with it (a reader held it open)" tree_gone "$UC"
ufs_mount "$S" "$M" "$UFS_OPTS" || exit 1
after_restart uevmfs "$UC"
# Killed: the tree's mount is left with its connection gone; the next
# uevmfs mounts a new one there (the main mount is undone by hand, as an
# administrator or systemd does after a crash).
hold uevmfs "$UC"
kill -9 "$UFS_PID"
wait "$UFS_PID" 2>/dev/null
fusermount3 -u -z "$M"
ufs_mount "$S" "$M" "$UFS_OPTS" || exit 1
after_restart "uevmfs killed and" "$UC"
ufs_umount "$M"

# ---- uevmd ------------------------------------------------------------------------------
make_image || { fail "loop-mounted ext4 image"; exit 1; }
cat >"$T/policy" <<-'EOF'
measure func=FILE_CHECK mask=MAY_READ
appraise func=FILE_CHECK
EOF
DC=$T/tree
write_conf "control_tree = $DC" "measurement_list = $T/uevmd.ml"
for i in $(seq 1 12); do echo "file $i" >"$MNT/uevmd-new-$i"; done
"$UEVM" label --hmac-key "raw:$KEY" "$MNT"/uevmd-new-* >/dev/null
NEXT=0
uevmd_measure() {
	local i
	for i in $(seq 1 "$1"); do
		NEXT=$((NEXT + 1))
		cat "$MNT/uevmd-new-$NEXT" >/dev/null
	done
}
start_uevmd || { fail "uevmd starts"; exit 1; }
live_checks uevmd "$DC" uevmd_measure
stop_uevmd
check "uevmd: the control tree is gone with it (a reader held it open)" tree_gone "$DC"
start_uevmd || { fail "uevmd restarts"; exit 1; }
after_restart uevmd "$DC"
hold uevmd "$DC"
kill -9 "$UEVMD_PID"
wait "$UEVMD_PID" 2>/dev/null
UEVMD_PID=
start_uevmd || { fail "uevmd starts again after SIGKILL, its dead tree left mounted"; exit 1; }
pass "uevmd starts again after SIGKILL, its dead tree left mounted"
after_restart "uevmd killed and" "$DC"
stop_uevmd
