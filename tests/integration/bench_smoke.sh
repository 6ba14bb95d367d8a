#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench's harness (bench/run.sh) at its smallest scale: no figure is
# asserted (speed is what it prints, not what a test checks), only that
#  - it exits 0 and its table has every row of issue 17, each with uevm's
#    figure, its peer's, a ratio, the target and met / NOT met;
#  - the table names the machine (CPUs, SHA-NI, kernel, OpenSSL) and the
#    runs, the CPU-time rows, row 6's split and the scaling table are
#    there, and
#    scaling.png is a PNG image;
#  - the system trees it copies keep their attributes, and it leaves no
#    copy, mount or daemon behind, also when stopped in the middle.
source "$(dirname "$0")/../lib.sh"

[ "$(id -u)" -eq 0 ] || { fail "the benchmark harness needs root"; exit 1; }
B=${UEVM_BUILD:-$TESTS_DIR/../build/default}
RUN=$TESTS_DIR/../bench/run.sh

# The first files of each tree the harness copies: their attributes now.
attrs() {
	(cd / && find usr/lib/x86_64-linux-gnu usr/share usr/lib -xdev -type f -size -16M 2>/dev/null |
		head -n 300 | tr '\n' '\0' | xargs -0 getfattr -h -d -m - 2>/dev/null | sha256sum)
}
attrs_before=$(attrs)
mounts_before=$(grep -cE 'uevm-bench|uevmd-bench|uevmfs-bench' /proc/mounts || true)

mkdir -p "$T/scratch"
rc=0
out=$(BENCH_SCALE=tiny BENCH_OUT=$T/out BENCH_DIR=$T/scratch bash "$RUN" "$B" 2>&1) || rc=$?
expect_eq "bench/run.sh exits 0" 0 "$rc"
[ "$rc" -eq 0 ] || echo "$out" | tail -n 20
md=$T/out/results.md
expect_eq "the table is written to results.md" 1 "$([ -s "$md" ] && echo 1 || echo 0)"
table=$(cat "$md" 2>/dev/null)
expect_match "the table is printed too" "^\| # \| work \| uevm \| peer \(same run\) \| ratio \| target \| status \|$" "$out"

num='[0-9]+(\.[0-9]+)?'
# row WORK UNIT PEER TARGET: one row of the table, its figures and status
row() {
	expect_match "row: $1" \
		"^\| [0-9]+ \| $1[^|]* \| $num $2 \| $3[^|]*: $num $2 \| $num""x \| $4 \| (met|NOT met) \|$" "$table"
}
ossl='openssl dgst -sha256, one process'
row "label, copy of /usr/lib/x86_64-linux-gnu \+ /usr/share \([0-9]+ files, $num MB\)" MB/s "$ossl" '>= 1\.8x'
row "verify, same tree" MB/s "$ossl" '>= 1\.8x'
row "label, copy of /usr/lib \([0-9]+ files" MB/s "$ossl" '>= 1\.9x'
row "label, [0-9]+ files of 4 KiB" files/s "$ossl" '>= 90000 files/s'
row "verify, [0-9]+ files of 4 KiB" files/s "$ossl" '>= 90000 files/s'
row "uevmd: first appraisal of a 4 KiB file" us native '<= 60 us'
row "uevmd: open\+read\+close, cached" us native '<= 1\.10x'
row "uevmd: fork\+exec\+wait of a small binary, cached" us native '<= 1\.05x'
row "uevmfs: write \+ close \(relabel\)" MB/s native '>= 0\.60x'
row "uevmfs: open\+close, default policy" us native '<= 2\.00x'
row "uevmfs: open\+close, caller-independent policy \(automatic fast path\)" us native '<= 2\.00x'
row "uevmfs: sequential read, cold from disk" MB/s native '>= 0\.85x'
row "label against AIDE init" MB/s "aide --init" '>= 6x'
row "verify against AIDE check" MB/s "aide --check" '>= 10x'
expect_eq "14 rows, no more" 14 "$(grep -cE '^\| [0-9]+ \| ' <<<"$table")"
expect_eq "no row says error" 0 "$(grep -c '| error |' <<<"$table")"

expect_match "the machine: CPUs, SHA-NI, kernel, OpenSSL" \
	"^Machine: [0-9]+ CPUs \(.*\), SHA-NI: (yes|no), .*; kernel [^;]+; OpenSSL [0-9.]+; AIDE" "$table"
expect_match "the scale and the runs are stated" "^Scale: tiny; best of 1 runs" "$table"
for w in "label, row 1's tree" "verify, 4 KiB files"; do
	expect_match "CPU time row: $w" "^\| $w \| $num s, $num us/file \| $num s, $num us/file \|$" "$table"
done
for w in "label, row 1's tree" "verify, row 1's tree" "label, /usr/lib copy"; do
	expect_match "ceiling row: $w (the labels alone, best ratio, measured, target)" \
		"^\| $w \| $num s, $num us/file \| ${num}x \| ${num}x \| >= ${num}x \|$" "$table"
done
for w in label verify; do
	expect_match "ceiling row: $w, 4 KiB files in files/s" \
		"^\| $w, 4 KiB files \| $num s, $num us/file \| $num files/s \| $num files/s \| >= 90000 files/s \|$" "$table"
done
expect_match "floor row: uevmd's first appraisal against a bare fanotify responder" \
	"^\| uevmd: first appraisal of a 4 KiB file \(a responder that allows every open at once, reading nothing: the fanotify round trip\) \| - \| $num us \| $num us \| <= 60 us \|$" "$table"
# Row 6's split: the same storm under policies that do less, uevmd's CPU
# time an event, and the per-event reads timed alone.
expect_match "split row: the bare round trip" \
	"^\| the fanotify round trip alone \(a responder allowing all\) \| $num us \| - \|$" "$table"
for w in "event path only: the policy's one rule is another user's \(credentials, open flags, name; nothing hashed\)" \
	 "measurement alone" "appraisal alone" "both \(row 6\)"; do
	expect_match "split row: $w, latency and uevmd's CPU" "^\| $w \| $num us \| $num us \|$" "$table"
done
expect_match "split row: the per-event reads, each timed alone, and their sum with the round trip" \
	"^\| reads of every event, each alone: /proc/PID/status $num, loginuid $num, sessionid $num, syscall $num, the fd's name $num \| $num us \(with the round trip: $num us\) \| - \|$" "$table"
expect_match "ceiling row: uevmfs's write against one SHA-256 stream" \
	"^\| uevmfs: write \+ close, 8 MiB file \(close waits for the file's SHA-256, one stream: $num MB/s\) \| - \| ${num}x \| ${num}x \| >= 0\.60x \|$" "$table"
for s in 4 64 1024; do
	expect_match "scaling table: $s KiB files at -j 1, 2, 4 and openssl" \
		"^$s KiB( +$num \($num\)){4}$" "$table"
done
expect_eq "scaling.dat: 3 sizes x (3 -j + openssl)" 12 "$(grep -vc '^#' "$T/out/scaling.dat")"
expect_eq "scaling.png starts with PNG's signature" "89504e470d0a1a0a" \
	"$(head -c 8 "$T/out/scaling.png" | xxd -p)"
expect_match "file(1) reads scaling.png as a PNG image" "PNG image data, [0-9]+ x [0-9]+" \
	"$(file -b "$T/out/scaling.png")"
for p in usr lib small4k uevmd uevmfs scaling; do
	expect_eq "logs/$p.log is kept" 1 "$([ -s "$T/out/logs/$p.log" ] && echo 1 || echo 0)"
done

expect_eq "the system trees' attributes are unchanged" "$attrs_before" "$(attrs)"
expect_eq "no copy is left in BENCH_DIR" "" "$(ls -A "$T/scratch")"
expect_eq "no benchmark mount is left" "$mounts_before" \
	"$(grep -cE 'uevm-bench|uevmd-bench|uevmfs-bench' /proc/mounts || true)"

# Stopped while uevmfs is mounted: the mounts, daemons and copies go.
mkdir -p "$T/scratch2"
BENCH_SCALE=tiny BENCH_OUT=$T/out2 BENCH_DIR=$T/scratch2 bash "$RUN" "$B" >"$T/run2.log" 2>&1 &
pid=$!
# mounted_or_gone PID: a uevmfs of the second run is mounted, or PID ended
mounted_or_gone() {
	grep -q "^[^ ]* $T/scratch2/[^ ]* fuse.uevmfs " /proc/mounts || ! kill -0 "$1" 2>/dev/null
}
wait_for "$WAIT_S" "the second run's uevmfs mounts" mounted_or_gone "$pid"
expect_match "the second run gets to its uevmfs mounts" "^[^ ]* $T/scratch2/[^ ]* fuse.uevmfs " \
	"$(cat /proc/mounts)"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
expect_eq "stopped by SIGTERM: status 130" 130 "$rc"
expect_eq "no uevmfs mount of the stopped run is left" 0 "$(grep -c " $T/scratch2/" /proc/mounts || true)"
expect_eq "no process of the stopped run is left" "" "$(pgrep -f "$T/scratch2/" || true)"
expect_eq "no copy of the stopped run is left" "" "$(ls -A "$T/scratch2")"
expect_eq "the system trees' attributes are still unchanged" "$attrs_before" "$(attrs)"
