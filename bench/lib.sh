# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Helpers shared by the bench/ scripts (sourced, not run).
#
# Every script prints its own report and, when BENCH_RESULTS names a file,
# also appends its figures there as "key value" lines, which bench/run.sh
# (make bench) reads to print one table.

die() { echo "bench: $*" >&2; exit 2; }
now() { date +%s.%N; }
# calc EXPR: awk arithmetic; comparisons print 1 or 0
calc() { awk "BEGIN { print ($1) }"; }

# result KEY VALUE: one figure for bench/run.sh (nothing without BENCH_RESULTS)
result() {
	[ -n "${BENCH_RESULTS:-}" ] || return 0
	printf '%s %s\n' "$1" "$2" >>"$BENCH_RESULTS"
}

# cputime OUT CMD...: run CMD (its stdout and stderr to OUT.out, OUT.err)
# and write "wall user+sys" seconds to OUT.time; returns CMD's status.
# The CPU seconds (children included) change little with the machine's
# load, the wall-clock seconds do: both are kept.
cputime() {
	local out=$1 t0 t1 rc=0
	shift
	t0=$(now)
	/usr/bin/time -f '%U %S' -o "$out.cpu" "$@" >"$out.out" 2>"$out.err" || rc=$?
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'END { printf "%.6f %.2f\n", b - a, $(NF - 1) + $NF }' \
		"$out.cpu" >"$out.time"
	return "$rc"
}
