#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make bench: every row of issue 17's table in one run, each against its
# peer measured in the same run, with its target and status, plus the
# scaling of `uevm label` against -j and the file size (table and PNG).
#
# Usage: bench/run.sh BUILD_DIR        (root: labels, mounts, drop_caches)
#
# Environment:
#   BENCH_SCALE  full (default): copies of /usr/lib/x86_64-linux-gnu +
#                /usr/share and of /usr/lib, 100000 files of 4 KiB, a 1 GiB
#                file through uevmfs, 2000 files and 1000 execs under uevmd;
#                small: the same kinds of work, about a tenth; tiny: a few
#                hundred files each (tests/integration/bench_smoke.sh)
#   BENCH_RUNS   runs per figure, the best (or median) kept (full: 3,
#                small: 2, tiny: 1)
#   BENCH_OUT    where the results go (default build/bench): results.md
#                (the table), results.txt (every figure, "key value"),
#                scaling.dat, scaling.png, logs/ (each part's own report)
#   BENCH_DIR    scratch space on ext4 with xattrs (default /var/tmp)
#
# Every tree is a copy made under BENCH_DIR, never a system tree, and is
# removed again (with every mount and daemon of the parts) on any exit.
# Exit status: 0 when every part ran, whether its targets were met or not
# (the table says); 2 when a part failed (its rows say "error").
set -euo pipefail
SRC=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/lib.sh"

[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
B=$(realpath -e "$1") || die "no build directory '$1' (run make first)"
UEVM=$B/uevm
[ -x "$UEVM" ] && [ -x "$B/uevmd" ] && [ -x "$B/uevmfs" ] || die "$B lacks uevm, uevmd or uevmfs (run make)"
[ "$(id -u)" -eq 0 ] || die "run me as root: labels are security.* xattrs; uevmd, uevmfs and drop_caches need it"

SCALE=${BENCH_SCALE:-full}
case $SCALE in
full)	CAP=0 NSMALL=100000 UFILES=2000 UEXECS=1000 FSMB=1024 FSOPS=20000
	SCMB=256 SIZES="4 64 1024 16384" RUNS=${BENCH_RUNS:-3} ;;
small)	CAP=6000 NSMALL=10000 UFILES=500 UEXECS=200 FSMB=128 FSOPS=5000
	SCMB=32 SIZES="4 64 1024 16384" RUNS=${BENCH_RUNS:-2} ;;
tiny)	CAP=300 NSMALL=500 UFILES=100 UEXECS=20 FSMB=8 FSOPS=300
	SCMB=2 SIZES="4 64 1024" RUNS=${BENCH_RUNS:-1} ;;
*)	die "BENCH_SCALE must be full, small or tiny (not '$SCALE')" ;;
esac
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive number"
OUT=${BENCH_OUT:-build/bench}
mkdir -p "$OUT/logs"
OUT=$(realpath -e "$OUT")
RES=$OUT/results.txt
: >"$RES"
rm -f "$OUT/scaling.png" "$OUT/scaling.dat" "$OUT"/logs/*.log

# What the parts need; installs only what is missing (Debian packages).
"$SRC/../scripts/install-deps.sh" >/dev/null || die "scripts/install-deps.sh failed"
for t in aide gnuplot openssl /usr/bin/time fusermount3 mkfs.ext4 cc; do
	command -v "$t" >/dev/null || die "$t is missing (scripts/install-deps.sh)"
done

WORK=$(mktemp -d "${BENCH_DIR:-/var/tmp}/uevm-bench-run.XXXXXX")
CHILD=
cleanup() {
	# A part cleans up its own mounts and daemons when it ends: let it.
	if [ -n "$CHILD" ]; then
		kill -TERM "$CHILD" 2>/dev/null || true
		wait "$CHILD" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
T0=$(date +%s)

# ---- the machine -------------------------------------------------------------
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
shani=$(grep -qw sha_ni /proc/cpuinfo && echo yes || echo no)
commit=$(git -C "$SRC/.." describe --always --dirty 2>/dev/null || echo unknown)
FACTS="$(nproc) CPUs ($cpu), SHA-NI: $shani, $(awk '{ printf "%.1f GB RAM", $2 / 1048576; exit }' /proc/meminfo);\
 kernel $(uname -r); $(openssl version | cut -d' ' -f1-2); $(aide --version 2>&1 | head -n 1);\
 uevm $commit; $(date -u '+%Y-%m-%d %H:%M UTC')"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench: $FACTS"
echo "bench: scale $SCALE, best of $RUNS (first appraisal and latency rows: median of 3; cached uevmd rows: of 9 rounds); load average $LOAD0"

# ---- the parts -----------------------------------------------------------------
FAILED=""
part() {	# NAME CMD...: one part, its report in logs/NAME.log
	local name=$1 t0 rc=0
	shift
	t0=$(date +%s)
	printf 'bench: %-12s ' "$name"
	BENCH_RESULTS=$RES BENCH_RUNS=$RUNS "$@" >"$OUT/logs/$name.log" 2>&1 &
	CHILD=$!
	wait "$CHILD" || rc=$?
	CHILD=
	if [ "$rc" -eq 0 ]; then
		echo "done in $(( $(date +%s) - t0 )) s"
	else
		echo "FAILED (status $rc): see $OUT/logs/$name.log"
		tail -n 5 "$OUT/logs/$name.log" | sed 's/^/bench:   /'
		FAILED="$FAILED $name"
	fi
}
# copy DEST SRC...: a copy of the SRC trees under DEST (CAP files of each at
# most when CAP > 0), with their xattrs, and no security.ima/evm in it
copy() {
	local dest=$1 s
	shift
	mkdir -p "$dest"
	for s in "$@"; do
		if [ "$CAP" = 0 ]; then
			cp -a "$s" "$dest/"
		else
			# relative paths: cp -a --parents of coreutils 9.1
			# fails on the parents of absolute ones
			(cd / && { find "${s#/}" -xdev -type f -size -16M -print0 || true; } |
				head -z -n "$CAP" | xargs -0 cp -a --parents -t "$dest")
		fi
	done
	"$UEVM" clear -r -x -q "$dest"
}
# files DIR N KIB: N random files of KIB KiB, 1000 a directory
files() {
	local d k
	for ((d = 0; d * 1000 < $2; d++)); do
		k=$(( $2 - d * 1000 < 1000 ? $2 - d * 1000 : 1000 ))
		mkdir -p "$1/d$d"
		head -c $(( k * $3 * 1024 )) /dev/urandom | (cd "$1/d$d" && split -b "$3K" -a 4 -d - f)
	done
}

echo "bench: copying the trees into $WORK"
if [ "$CAP" = 0 ]; then
	# The /usr/lib copy's x86_64-linux-gnu is hard-linked into the first
	# tree: one copy on disk; the labels of one run are cleared before the next.
	copy "$WORK/lib" /usr/lib
	mkdir -p "$WORK/usr"
	cp -al "$WORK/lib/lib/x86_64-linux-gnu" "$WORK/usr/"
	copy "$WORK/usr" /usr/share
	LIBTREE=$WORK/lib/lib
else
	copy "$WORK/usr" /usr/lib/x86_64-linux-gnu /usr/share
	copy "$WORK/lib" /usr/lib
	LIBTREE=$WORK/lib
fi
part usr env BENCH_NAME=usr BENCH_AIDE=1 BENCH_SHA256SUM=0 \
	bash "$SRC/label-verify.sh" "$UEVM" "$WORK/usr"
rm -rf "$WORK/usr"
part lib env BENCH_NAME=lib BENCH_SHA256SUM=0 BENCH_TARGET=1.9 \
	bash "$SRC/label-verify.sh" "$UEVM" "$LIBTREE"
rm -rf "$WORK/lib"
echo "bench: making $NSMALL files of 4 KiB"
files "$WORK/small" "$NSMALL" 4
part small4k env BENCH_NAME=small4k BENCH_SHA256SUM=0 \
	bash "$SRC/label-verify.sh" "$UEVM" "$WORK/small"
rm -rf "$WORK/small"
part uevmd env BENCH_FILES=$UFILES BENCH_EXECS=$UEXECS bash "$SRC/uevmd.sh" "$B"
part uevmfs env BENCH_SIZE_MB=$FSMB BENCH_OPS=$FSOPS BENCH_DIR="$WORK" bash "$SRC/uevmfs.sh" "$B"
part scaling env BENCH_SIZES="$SIZES" BENCH_SCALING_MB=$SCMB BENCH_DIR="$WORK" \
	bash "$SRC/scaling.sh" "$UEVM" "$OUT"

# ---- the table ------------------------------------------------------------------
SECS=$(( $(date +%s) - T0 ))
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
{
	echo "# uevm benchmark (make bench)"
	echo
	echo "Machine: $FACTS."
	echo "Scale: $SCALE; best of $RUNS runs (uevmd: first appraisal median of 3 runs, cached rows of 9 rounds; uevmfs latency rows:"
	echo "median of $RUNS runs; AIDE: one run each); warm page cache except the cold read. Whole run: $SECS s;"
	echo "load average $LOAD0 at the start, $LOAD1 at the end (a busy machine lowers every figure)."
	echo
	awk -f "$SRC/table.awk" "$RES"
	echo
	echo "Label throughput against -j and file size: [scaling.png](scaling.png) (data: scaling.dat)"
	echo
	echo '```'
	sed -n '/^uevm label -r, MB/,/^scaling:/p' "$OUT/logs/scaling.log" 2>/dev/null | grep -v '^scaling:' || true
	echo '```'
	[ -z "$FAILED" ] || { echo; echo "Parts that failed (logs/NAME.log):$FAILED"; }
} >"$OUT/results.md"
cat "$OUT/results.md"
echo
echo "bench: $OUT/results.md, $OUT/scaling.png; each part's report in $OUT/logs/"
[ -z "$FAILED" ] || exit 2
