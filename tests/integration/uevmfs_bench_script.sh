#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/uevmfs.sh on a small file: speed is not asserted here (the script
# prints it), only that it measures both sides in the same run, prints
# every row with a ratio and its target (issue 17's where it sets one), and
# leaves no mount or scratch directory behind.
source "$(dirname "$0")/../lib.sh"

BENCH=$TESTS_DIR/../bench/uevmfs.sh
B=$(dirname "$UEVM")
command -v fusermount3 >/dev/null || { fail "fusermount3 is installed"; exit 1; }
mkdir -p "$T/bdir"
before=$(grep -c 'uevmfs-bench\.' /proc/mounts || true)
rc=0
out=$(BENCH_SIZE_MB=16 BENCH_RUNS=1 BENCH_OPS=300 BENCH_DIR=$T/bdir bash "$BENCH" "$B" 2>&1) || rc=$?
expect_eq "bench/uevmfs.sh exits 0" 0 "$rc"
num='[0-9]+\.[0-9]+'
for row in "seq. read, warm page cache" "seq. read, mount's cache cold \(FUSE path\)" \
	   "seq. read, cold \(disk\)" "seq. write \+ close \(uevmfs rehashes\)"; do
	expect_match "row: $row (native, uevmfs MB/s, ratio)" \
		"^$row +$num +$num +MB/s +$num""x" "$out"
done
expect_match "reads are held against the 70% target" \
	"^seq. read, warm page cache .*x  >= 0.70 \((met|NOT met)\)$" "$out"
for row in "open\+close, cached \(appraised once\)" "open\+close, cached, automatic fast path" \
	"open\+close, cached, fastopen"; do
	expect_match "row: $row (us, ratio, target 2x)" \
		"^$row +$num +$num +us +$num""x  <= 2.00 \((met|NOT met)\)$" "$out"
done
for row in "stat, cached" "stat, cached, fastopen"; do
	expect_match "row: $row (us, ratio, target 3x)" \
		"^$row +$num +$num +us +$num""x  <= 3.00 \((met|NOT met)\)$" "$out"
done
expect_match "writes are held against the 0.6x target" \
	"^seq. write \+ close .*x  >= 0.60 \((met|NOT met)\)$" "$out"
expect_match "cold reads are held against the 0.85x target" \
	"^seq. read, cold \(disk\) .*x  >= 0.85 \((met|NOT met)\)$" "$out"
expect_match "the write's ceiling: one SHA-256 stream against the native write" \
	"^write \+ close ceiling: SHA-256 of one stream \(openssl dgst, warm\) [0-9]+\.[0-9] MB/s = [0-9]+\.[0-9]{2}x native at best$" "$out"
expect_match "the first read (appraisal included) is reported" \
	"^first read through uevmfs, appraisal included: $num MB/s$" "$out"
expect_eq "no uevmfs mount left" "$before" "$(grep -c 'uevmfs-bench\.' /proc/mounts || true)"
expect_eq "its scratch directory is removed" "" "$(ls -A "$T/bdir")"
rc=0
BENCH_DIR=$T/bdir bash "$BENCH" "$T/nosuch" >/dev/null 2>&1 || rc=$?
expect_eq "a wrong build directory: usage error (2)" 2 "$rc"
