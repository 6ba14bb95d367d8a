#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/uevmd.sh on a small tree: speed is not asserted here (the script
# prints it), only that it measures what it says - native and uevmd runs
# of the read storm and the exec storm, the three ratios against their
# targets, no permission event reaching uevmd once cached - and that it
# leaves no mount or daemon behind.
source "$(dirname "$0")/../lib.sh"

[ "$(id -u)" -eq 0 ] || { fail "the uevmd benchmark needs root"; exit 1; }
B=${UEVM_BUILD:-$TESTS_DIR/../build/default}
mounts_before=$(grep -c uevmd-bench /proc/self/mounts)
out=$(BENCH_FILES=200 BENCH_EXECS=50 bash "$TESTS_DIR/../bench/uevmd.sh" "$B" 2>&1)
expect_eq "bench/uevmd.sh exits 0" 0 $?
expect_match "it names the workload" "uevmd benchmark: 200 files of 4 KiB, 50 execs" "$out"
expect_match "cached open (against 1.10x): native, uevmd, ratio, target" \
	"^open\+read\+close, cached \(ignore marks\) +[0-9.]+ us +[0-9.]+ us +[0-9.]+x <= 1\.10x: (yes|NO)$" "$out"
expect_match "first appraisal of a 4 KiB file against 60 us" \
	"^open\+read\+close, first appraisal \(4 KiB\) +[0-9.]+ us +[0-9.]+ us +[0-9.]+x <= 60 us: (yes|NO)$" "$out"
expect_match "the floor: the same storm against a responder that allows all" \
	"^open\+read\+close, a responder allowing all +[0-9.]+ us +[0-9.]+ us +[0-9.]+x \(the fanotify round trip alone: the floor\)$" "$out"
expect_match "exec once cached against 1.05x" \
	"^fork\+exec\+wait of a small binary, cached +[0-9.]+ us +[0-9.]+ us +[0-9.]+x <= 1\.05x: (yes|NO)$" "$out"
expect_match "native runs use a twin mount uevmd does not watch" \
	"^native: the same files on a twin ext4 mount that uevmd does not watch" "$out"
expect_match "cached storms do not reach uevmd (ignore marks)" \
	"during the cached storms \(1800 opens, 153 execs\): 0$" "$out"
expect_match "every file and the binary were measured once" "measurement list: 202 entries" "$out"
expect_eq "no responder is left running" "" "$(pgrep -f 'uevmd-bench\..*/storm answer' || true)"
expect_eq "no benchmark mount is left" "$mounts_before" "$(grep -c uevmd-bench /proc/self/mounts)"
expect_eq "no benchmark directory is left" "" "$(find /var/tmp -maxdepth 1 -name 'uevmd-bench.*' -newer "$T" 2>/dev/null)"
