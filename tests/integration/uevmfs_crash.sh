#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kill -9 of uevmfs in the middle of writes: SOURCE is left with every
# file either passing or detectably failing, never passing with a content
# that no write produced completely.
#
# Writers rewrite files (O_TRUNC, 256 KiB writes of 0.25-2 MiB contents),
# append to one, and create new ones, through the mount.  The SHA-256 of
# every complete content a write leaves is recorded before the write.  uevmfs is
# killed at a random moment; the mount is cleaned up with fusermount3 -u -z;
# then every file `uevm verify` passes must have one of the recorded
# contents (or be empty: see below).  Several rounds, each with new writers and a new random moment.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S" "$T/stage"
OPTS="key=raw:$KEY,ml=$T/ml,audit_log=$T/audit.log,nosyslog"
COMPLETE=$T/complete	# sha256 of every content a write leaves complete
ROUNDS=${UEVMFS_CRASH_ROUNDS:-6}

# The initial tree: labelled offline, so its contents are complete ones.
for i in 0 1 2 3; do
	head -c $((300000 + i * 1000)) /dev/urandom >"$S/f$i"
done
echo start >"$S/log"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
sha256sum "$S"/f* "$S/log" | cut -d' ' -f1 >"$COMPLETE"

# writer ROUND ID: rewrite its own file f$ID, create new files, and (writer
# 0) append to "log", until told to stop.  One writer per file, so
# that every content is one write's.
writer() {
	local round=$1 id=$2 n=0 next
	while [ ! -e "$T/stop" ]; do
		n=$((n + 1))
		next=$T/stage/c.$id.$((n % 8))
		case $((n % 3)) in
		0) dd if="$next" of="$M/f$id" bs=256K status=none 2>/dev/null ;;
		1) dd if="$next" of="$M/new.$round.$id.$n" bs=256K status=none 2>/dev/null ;;
		2) if [ "$id" = 0 ]; then
			# An append: the complete content is the old one plus the line.
			printf 'round %s line %s\n' "$round" "$n" >"$T/stage/line"
			cat "$M/log" "$T/stage/line" 2>/dev/null >"$T/stage/log.want" &&
			sha256sum <"$T/stage/log.want" | cut -d' ' -f1 >>"$COMPLETE" &&
			cat "$T/stage/line" 2>/dev/null >>"$M/log"
		   else
			dd if="$next" of="$M/f$id" bs=256K status=none 2>/dev/null
		   fi ;;
		esac
	done
}

# uevmfs relabels at every close of a descriptor of a file open for
# writing (FUSE's FLUSH; the kernel's RELEASE comes only after close()
# returned).  dd and shell redirections open the file, dup2() it and close
# the first descriptor before writing: the new file's empty content is a
# state its writer closed, and may pass.
sha256sum </dev/null | cut -d' ' -f1 >>"$COMPLETE"

# Each writer's contents, 0.25 to 2 MiB, made (and recorded) beforehand so
# that the writers spend their time writing.
for id in 0 1 2; do
	for k in $(seq 0 7); do
		head -c $(( (RANDOM % 8 + 1) * 262144 )) /dev/urandom >"$T/stage/c.$id.$k"
		sha256sum <"$T/stage/c.$id.$k" | cut -d' ' -f1 >>"$COMPLETE"
	done
done

# A write caught in the middle in every round, whatever the moment of the
# kill: a helper creates held.ROUND, writes HELD (64 KiB) into it and keeps
# rewriting the same bytes at offset 0 without closing.  Without fastopen no
# close means no relabel, so the file must detectably fail; with fastopen a
# writer idle for write_idle is relabelled, so a stalled helper may leave
# HELD labelled: a content some write completed.
head -c 65536 /dev/urandom >"$T/stage/held"
fastopen=0
case ",${UFS_EXTRA_OPTS:-}," in *,fastopen,*) fastopen=1 ;; esac
[ "$fastopen" = 1 ] && sha256sum <"$T/stage/held" | cut -d' ' -f1 >>"$COMPLETE"
mkfifo "$T/held.ready"
held_writer() {
	python3 - "$1" "$T/stage/held" "$T/held.ready" <<'PY'
import os, sys, time
data = open(sys.argv[2], 'rb').read()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, data)
with open(sys.argv[3], 'w') as ready:
    ready.write('ready\n')
try:
    while True:
        os.pwrite(fd, data, 0)
        time.sleep(0.01)
except OSError:
    pass
PY
}

total_pass=0
total_fail=0
held_fail=0
for round in $(seq 1 "$ROUNDS"); do
	ufs_mount "$S" "$M" "$OPTS" || { fail "round $round: uevmfs mounts"; break; }
	pids=()
	for id in 0 1 2; do
		writer "$round" "$id" &
		pids+=($!)
	done
	held_writer "$M/held.$round" &
	hpid=$!
	# (the timeout only keeps a helper that died before its open from hanging the test)
	timeout 120 cat "$T/held.ready" >/dev/null || fail "round $round: the held writer is ready"
	# A random moment: 0.3 to 2.5 seconds into the writes.
	sleep "$(printf '0.%d' $((RANDOM % 10)))"
	sleep $((RANDOM % 3))
	kill -9 "$UFS_PID"
	wait "$UFS_PID" 2>/dev/null
	kill -9 "$hpid" 2>/dev/null
	wait "$hpid" 2>/dev/null
	# Writers see ENOTCONN now; stop them before the dead mount is
	# detached (their writes would land in the bare directory).
	touch "$T/stop"
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -f "$T/stop"
	fusermount3 -u -z "$M"
	check "round $round: mount cleaned up after kill -9" bash -c "! grep -q ' $M ' /proc/mounts"

	json=$("$UEVM" verify -r -v --json --hmac-key "raw:$KEY" "$S")
	expect_eq "round $round: uevm verify examines every file (no errors)" 0 \
		"$(jq '.summary.errors' <<<"$json")"
	bad=""
	npass=0
	while read -r path; do
		npass=$((npass + 1))
		sum=$(sha256sum <"$path" | cut -d' ' -f1)
		grep -qx "$sum" "$COMPLETE" || {
			bad="$bad $path"
			echo "not a complete content: $path ($(stat -c %s "$path") bytes)"
			getfattr -d -m - -e hex "$path"
		}
	done < <(jq -r '.results[] | select(.type == "file" and .status == "pass") | .path' <<<"$json")
	nfail=$(jq '[.results[] | select(.type == "file" and .status != "pass")] | length' <<<"$json")
	expect_eq "round $round: every passing file has a content some write completed" "" "$bad"
	held=$(jq -r --arg p "$S/held.$round" '.results[] | select(.path == $p) | .status' <<<"$json")
	if [ "$fastopen" = 0 ]; then
		check "round $round: the file held open for writing is not passed ($held)" \
			test -n "$held" -a "$held" != pass
	fi
	[ -n "$held" ] && [ "$held" != pass ] && held_fail=$((held_fail + 1))
	echo "round $round: $npass files pass, $nfail detectably failing (held.$round: ${held:-missing})"
	total_pass=$((total_pass + npass))
	total_fail=$((total_fail + nfail))
done
# The check above cannot pass vacuously: files did pass, and writes were
# caught in the middle (the held files at least) over the rounds.
check "passing files were checked ($total_pass)" test "$total_pass" -gt 0
check "writes were interrupted: held files detectably fail ($held_fail of $ROUNDS)" \
	test "$held_fail" -gt 0
check "writes were interrupted: some files detectably fail ($total_fail)" \
	test "$total_fail" -gt 0
