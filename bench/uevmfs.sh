#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# uevmfs against the native filesystem underneath it, in the same run:
# sequential read and write throughput of one large file, and the latency
# of cached opens and stats (make bench-uevmfs).
#
# Usage: bench/uevmfs.sh BUILD_DIR        (the directory with uevm and uevmfs)
# Environment: BENCH_SIZE_MB (1024), BENCH_RUNS (3, best of), BENCH_OPS
# (20000 opens and stats per run), BENCH_DIR (/var/tmp: a filesystem with
# security.* xattrs), BENCH_RESULTS (bench/lib.sh).  Needs root: it mounts,
# and drops the page cache for the cold rows.
#
# Targets (issue 17): write + close >= 0.6x native; sequential read cold
# from disk >= 0.85x; cached opens <= 2x native latency wherever the policy
# allows the kernel to open files itself; warm reads >= 0.7x, stats <= 3x
# (earlier issues).  The same SOURCE is mounted three times: with the
# default policy, whose rule on root's reads (euid=0) depends on the caller
# and so needs a FUSE round trip per open; with a policy that has no such
# rule, where uevmfs may open without a round trip by itself ("automatic");
# and with -o fastopen, where the kernel opens files itself and the hooks
# run at the first read and after the last write (uevmfs(8)).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
B=$(realpath -e "$1") || die "no build directory '$1' (run make first)"
UEVM=$B/uevm
UEVMFS=$B/uevmfs
[ -x "$UEVM" ] && [ -x "$UEVMFS" ] || die "$B has no uevm and uevmfs (run make)"
[ "$(id -u)" -eq 0 ] || die "run me as root: uevmfs mounts, and the cold rows drop caches"
for t in python3 dd fusermount3; do
	command -v $t >/dev/null || die "$t is missing (scripts/install-deps.sh)"
done
SIZE_MB=${BENCH_SIZE_MB:-1024}
RUNS=${BENCH_RUNS:-3}
OPS=${BENCH_OPS:-20000}

WORK=$(mktemp -d "${BENCH_DIR:-/var/tmp}/uevmfs-bench.XXXXXX")
S=$WORK/src
M=$WORK/mnt
F=$WORK/fast
A=$WORK/auto
PID=
PID2=
PID3=
cleanup() {
	local m p
	for m in "$M" "$F" "$A"; do
		if grep -q " $m fuse" /proc/mounts; then fusermount3 -u -z "$m" || true; fi
	done
	for p in "$PID" "$PID2" "$PID3"; do
		[ -n "$p" ] && kill "$p" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$S" "$M" "$F" "$A"

(umask 077 && head -c 32 /dev/urandom >"$WORK/key")
echo "bench: making a ${SIZE_MB} MiB file and labelling it ..."
head -c $((SIZE_MB * 1048576)) /dev/urandom >"$S/big"
head -c 4096 /dev/urandom >"$S/small"
"$UEVM" label -r --hmac-key "raw:$WORK/key" "$S" >/dev/null

"$UEVMFS" "$S" "$M" -f -o "key=raw:$WORK/key,ml=memory,securityfs=none,nosyslog" \
	2>"$WORK/uevmfs.log" &
PID=$!
for _ in $(seq 1 200); do grep -q " $M fuse.uevmfs " /proc/mounts && break; sleep 0.05; done
grep -q " $M fuse.uevmfs " /proc/mounts || die "uevmfs did not mount: $(cat "$WORK/uevmfs.log")"
"$UEVMFS" "$S" "$F" -f -o "key=raw:$WORK/key,ml=memory,securityfs=none,nosyslog,fastopen" \
	2>"$WORK/uevmfs-fast.log" &
PID2=$!
for _ in $(seq 1 200); do grep -q " $F fuse.uevmfs " /proc/mounts && break; sleep 0.05; done
grep -q " $F fuse.uevmfs " /proc/mounts || die "uevmfs -o fastopen did not mount: $(cat "$WORK/uevmfs-fast.log")"
# The default policy less its caller-dependent rule (euid=0).
printf '%s\n' "measure func=BPRM_CHECK mask=MAY_EXEC" "measure func=FILE_CHECK mask=^MAY_READ" \
	appraise >"$WORK/policy.auto"
"$UEVMFS" "$S" "$A" -f -o "key=raw:$WORK/key,ml=memory,securityfs=none,nosyslog,policy=$WORK/policy.auto" \
	2>"$WORK/uevmfs-auto.log" &
PID3=$!
for _ in $(seq 1 200); do grep -q " $A fuse.uevmfs " /proc/mounts && break; sleep 0.05; done
grep -q " $A fuse.uevmfs " /proc/mounts || die "uevmfs with a caller-independent policy did not mount: $(cat "$WORK/uevmfs-auto.log")"

drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# secs CMD...: wall-clock seconds of one run
secs() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}
# calc EXPR: awk arithmetic (1/0 for comparisons)
calc() { awk "BEGIN { print ($1) }"; }
best() {	# runs CMD...: the smallest of RUNS runs
	local b="" t
	for _ in $(seq 1 "$RUNS"); do
		t=$(secs "$@")
		if [ -z "$b" ] || [ "$(calc "$t < $b")" = 1 ]; then b=$t; fi
	done
	echo "$b"
}
readf() { dd if="$1" of=/dev/null bs=1M status=none; }
writef() { dd if="$S/big" of="$1" bs=1M status=none; }
mbs() { awk -v s="$SIZE_MB" -v t="$1" 'BEGIN { printf "%.1f\n", s / t }'; }

declare -a rows
row() {	# key label native uevmfs unit target: ratio = uevmfs / native
	rows+=("$2|$3|$4|$5|$6")
	result "uevmfs.$1.native" "$3"
	result "uevmfs.$1.uevmfs" "$4"
}

# ---- reads --------------------------------------------------------------------------
drop
t=$(secs readf "$M/big")
first=$(mbs "$t")
echo "bench: first read through uevmfs (includes appraisal: the whole file hashed once)"
readf "$S/big"
row read_warm "seq. read, warm page cache" "$(mbs "$(best readf "$S/big")")" \
	"$(mbs "$(best readf "$M/big")")" MB/s ">= 0.70"
readf "$F/big"
row read_warm_fastopen "seq. read, warm page cache, fastopen" "$(mbs "$(best readf "$S/big")")" \
	"$(mbs "$(best readf "$F/big")")" MB/s ">= 0.70"
drop; readf "$S/big"
row read_fuse_cold "seq. read, mount's cache cold (FUSE path)" "$(mbs "$(best readf "$S/big")")" \
	"$(mbs "$(drop; readf "$S/big"; secs readf "$M/big")")" MB/s ">= 0.70"
best_cold() {	# path: the fastest of RUNS reads, each after dropping caches
	local b="" t
	for _ in $(seq 1 "$RUNS"); do
		drop
		t=$(secs readf "$1")
		if [ -z "$b" ] || [ "$(calc "$t < $b")" = 1 ]; then b=$t; fi
	done
	echo "$b"
}
cold_n=$(mbs "$(best_cold "$S/big")")
cold_u=$(mbs "$(best_cold "$M/big")")
row read_cold "seq. read, cold (disk)" "$cold_n" "$cold_u" MB/s ">= 0.85"

# ---- writes --------------------------------------------------------------------------
# Each run writes a new file (the old one removed and synced, untimed);
# dd's close returns once uevmfs has relabelled it.  The old file is
# removed through the same path: removed under the mount's back, uevmfs's
# cached entry would still name the deleted file.
best_write() {	# dir: the fastest of RUNS writes of the big file into dir/w
	local b="" t
	for _ in $(seq 1 "$RUNS"); do
		rm -f "$1/w"
		sync
		t=$(secs writef "$1/w")
		if [ -z "$b" ] || [ "$(calc "$t < $b")" = 1 ]; then b=$t; fi
	done
	echo "$b"
}
wrote_n=$(mbs "$(best_write "$S")")
wrote_u=$(mbs "$(best_write "$M")")
# What uevmfs wrote must carry a label that verifies: a fast write that
# left the file unlabelled would not count.
"$UEVM" verify -q --hmac-key "raw:$WORK/key" "$S/w" ||
	die "the file written through uevmfs does not verify"
row write "seq. write + close (uevmfs rehashes)" "$wrote_n" "$wrote_u" MB/s ">= 0.60"
rm -f "$M/w"
# The write row's ceiling: close returns once the file's SHA-256 is known,
# and one file's SHA-256 is one sequential stream on one CPU.  Its speed
# over the same (warm) file, by one openssl process, bounds a write + close
# at hash/native of native even with hashing and writing fully overlapped.
command -v openssl >/dev/null || die "openssl is missing (scripts/install-deps.sh)"
readf "$S/big"
hashed=$(mbs "$(best openssl dgst -sha256 "$S/big")")
result uevmfs.write.hash "$hashed"

# ---- latency ---------------------------------------------------------------------------
cat >"$WORK/lat.py" <<'EOF'
import os, sys, time
path, n = sys.argv[1], int(sys.argv[2])
for _ in range(200):
    os.close(os.open(path, os.O_RDONLY))
t = time.perf_counter()
for _ in range(n):
    os.close(os.open(path, os.O_RDONLY))
o = (time.perf_counter() - t) / n * 1e6
t = time.perf_counter()
for _ in range(n):
    os.stat(path)
s = (time.perf_counter() - t) / n * 1e6
print("%.2f %.2f" % (o, s))
EOF
lat() {	# path -> "open_us stat_us", median of RUNS
	for _ in $(seq 1 "$RUNS"); do python3 "$WORK/lat.py" "$1" "$OPS"; done |
		sort -n -k1,1 | sed -n "$(( (RUNS + 1) / 2 ))p"
}
read -r on sn < <(lat "$S/small")
read -r ou su < <(lat "$M/small")
row open "open+close, cached (appraised once)" "$on" "$ou" us "<= 2.00"
row stat "stat, cached" "$sn" "$su" us "<= 3.00"
read -r oa _ < <(lat "$A/small")
row open_auto "open+close, cached, automatic fast path" "$on" "$oa" us "<= 2.00"
read -r of sf < <(lat "$F/small")
row open_fastopen "open+close, cached, fastopen" "$on" "$of" us "<= 2.00"
row stat_fastopen "stat, cached, fastopen" "$sn" "$sf" us "<= 3.00"

# ---- report -----------------------------------------------------------------------------
echo
echo "uevmfs vs native, ${SIZE_MB} MiB file, best of $RUNS (latency: median of $RUNS x $OPS)"
printf '%-42s %10s %10s %6s %7s  %s\n' "" native uevmfs unit ratio target
for r in "${rows[@]}"; do
	IFS='|' read -r label n u unit target <<<"$r"
	ratio=$(awk -v u="$u" -v n="$n" 'BEGIN { printf "%.2f\n", u / n }')
	met=""
	case $target in
	">= "*) [ "$(calc "$ratio >= ${target#>= }")" = 1 ] && met=met || met="NOT met" ;;
	"<= "*) [ "$(calc "$ratio <= ${target#<= }")" = 1 ] && met=met || met="NOT met" ;;
	esac
	printf '%-42s %10s %10s %6s %6sx  %s\n' "$label" "$n" "$u" "$unit" "$ratio" \
		"${target/-/}${met:+ ($met)}"
done
echo "first read through uevmfs, appraisal included: $first MB/s"
ceiling=$(awk -v h="$hashed" -v n="$wrote_n" 'BEGIN { printf "%.4f\n", (h < n ? h : n) / (n > 0 ? n : 1) }')
result uevmfs.write.ceiling "$ceiling"
printf 'write + close ceiling: SHA-256 of one stream (openssl dgst, warm) %s MB/s = %.2fx native at best\n' \
	"$hashed" "$ceiling"
result uevmfs.first_read_mbs "$first"
result uevmfs.size_mb "$SIZE_MB"
result uevmfs.runs "$RUNS"
fusermount3 -u "$M"
wait "$PID" || die "uevmfs exited with an error: $(tail -n 5 "$WORK/uevmfs.log")"
PID=
fusermount3 -u "$F"
wait "$PID2" || die "uevmfs -o fastopen exited with an error: $(tail -n 5 "$WORK/uevmfs-fast.log")"
PID2=
fusermount3 -u "$A"
wait "$PID3" || die "uevmfs (caller-independent policy) exited with an error: $(tail -n 5 "$WORK/uevmfs-auto.log")"
PID3=
