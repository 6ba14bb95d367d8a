#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs every unit test binary (only stress_* ones for a build/tsan) and integration script against each build
# directory given (default: build/default) and ends with one line
# "N passed, N failed".  Each test reports lines "PASS: name" or
# "FAIL: name: why"; a script or binary that crashes counts as a failure.
#
# A test still running after UEVM_TEST_TIMEOUT seconds (default 1200) has
# its process tree written to its log, is stopped (TERM to its session,
# KILL 30 s later) and is run once more; a second timeout is a failure.
# Why: a sanitizer runtime has been seen to hang in its exit-time leak
# check (LeakSanitizer's stop-the-world never stopping its own process),
# and one such hang would otherwise hold the whole run until CI's limit.
# The retry is printed, so it is never silent.
set -u
cd "$(dirname "$0")/.."
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=(build/default)

pass=0
fail=0
failed_names=()
retried=0
log_dir=$(mktemp -d /tmp/uevm-test-logs.XXXXXX)

test_timeout=${UEVM_TEST_TIMEOUT:-1200}

# Run "$@" in its own session (so the whole tree can be stopped) with
# stdin from /dev/null, output to LOG; a watchdog stops it after
# $test_timeout seconds and leaves LOG.timeout behind.  Exit status: the
# test's.
run_watched() {	# log command...
	local log=$1; shift
	local pid wd
	rm -f "$log.timeout"
	setsid "$@" </dev/null >"$log" 2>&1 &
	pid=$!
	(
		sleep "$test_timeout" &
		s=$!
		trap 'kill $s 2>/dev/null; exit 0' TERM
		wait $s
		{
			echo "=== timed out after ${test_timeout}s; its processes:"
			ps -s "$pid" -o pid,ppid,stat,wchan:24,etime,args
			for p in $(ps -s "$pid" -o pid=); do
				echo "--- kernel stack of $p:"
				cat "/proc/$p/stack" 2>/dev/null
			done
		} >"$log.timeout" 2>&1
		kill -TERM -- "-$pid" 2>/dev/null
		sleep 30 &
		s=$!
		wait $s
		kill -KILL -- "-$pid" 2>/dev/null
	) &
	wd=$!
	wait "$pid"
	local rc=$?
	kill "$wd" 2>/dev/null
	wait "$wd" 2>/dev/null
	return "$rc"
}

run_one() {	# label command...
	local label=$1; shift
	local log="$log_dir/$(echo "$label" | tr '/ ' '__').log"
	local t0=$SECONDS note=""
	run_watched "$log" "$@"
	local rc=$?
	if [ -e "$log.timeout" ]; then
		# Keep the first attempt's log and process listing; run again.
		mv "$log" "$log.first"
		cat "$log.timeout" >>"$log.first"
		note=" (run twice: the first run timed out after ${test_timeout}s, see $log.first)"
		run_watched "$log" "$@"
		rc=$?
		if [ -e "$log.timeout" ]; then
			cat "$log.timeout" >>"$log"
			echo "FAIL: $label timed out twice (${test_timeout}s each)" >>"$log"
		fi
	fi
	local p f
	p=$(grep -c '^PASS: ' "$log")
	f=$(grep -c '^FAIL: ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL: $label exited with status $rc" >>"$log"
		f=1
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	printf '%-50s %4d passed, %d failed %5ds%s\n' "$label" "$p" "$f" $((SECONDS - t0)) "$note"
	[ -n "$note" ] && retried=1
	if [ "$f" -ne 0 ]; then
		failed_names+=("$label")
		grep '^FAIL: ' "$log" | sed 's/^/    /'
		tail -n 20 "$log" | sed 's/^/    | /'
	fi
}

for b in "${builds[@]}"; do
	variant=$(basename "$b")
	export UEVM="$PWD/$b/uevm" UEVM_BUILD="$PWD/$b"
	for t in "$b"/tests/*; do
		[ -x "$t" ] || continue
		# ThreadSanitizer builds run the concurrency tests only.
		[ "$variant" = tsan ] && [[ "$(basename "$t")" != stress* ]] && continue
		run_one "$variant/unit/$(basename "$t")" "$t"
	done
	[ "$variant" = tsan ] && continue
	for s in tests/integration/*.sh; do
		[ -f "$s" ] || continue
		run_one "$variant/$(basename "$s" .sh)" bash "$s"
	done
done

echo
if [ "$fail" -ne 0 ] || [ "$retried" -ne 0 ]; then
	[ "$fail" -ne 0 ] && echo "failed: ${failed_names[*]}"
	echo "logs: $log_dir"
else
	rm -rf "$log_dir"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
