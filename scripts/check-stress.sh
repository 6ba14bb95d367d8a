#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the test suite (tests/run-tests.sh) against the builds given while
# every CPU is kept busy by stress-ng, so that a test that only passes on
# an idle machine (a race settled by a sleep, a timing assumption) fails
# here rather than on a loaded CI machine.  Ends, like run-tests.sh, with
# "N passed, N failed"; exit status is run-tests.sh's.
set -u
cd "$(dirname "$0")/.."
command -v stress-ng >/dev/null ||
	{ echo "check-stress: stress-ng is not installed (make deps)" >&2; exit 2; }
[ $# -gt 0 ] || set -- build/default

cpus=$(nproc)
# Its own session, so that every worker it forks goes with it.
setsid stress-ng --cpu "$cpus" --cpu-method matrixprod --timeout 4h --quiet &
stress=$!
trap 'kill -TERM -- -"$stress" 2>/dev/null; wait "$stress" 2>/dev/null' EXIT

# The load must really be there before the first test starts: wait until
# stress-ng has forked its workers (one per CPU), not for a fixed time.
for _ in $(seq 1 600); do
	n=$(pgrep -c -s "$stress" stress-ng 2>/dev/null || echo 0)
	[ "$n" -gt "$cpus" ] && break
	kill -0 "$stress" 2>/dev/null || { echo "check-stress: stress-ng exited" >&2; exit 2; }
	sleep 0.1	# polling for the condition above, not waiting for time
done
echo "check-stress: $cpus stress-ng CPU workers running (load $(cut -d' ' -f1 /proc/loadavg))"
tests/run-tests.sh "$@"
