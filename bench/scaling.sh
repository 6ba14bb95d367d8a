#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# How `uevm label -r` scales: throughput against the number of worker
# threads (-j 1, 2, 4) and against the file size, beside one
# `openssl dgst -sha256` process over the same files, warm page cache.
# For each size a tree of BENCH_SCALING_MB MiB of random files of that size
# is made under BENCH_DIR (/var/tmp), labelled from scratch each run (the
# labels are cleared, untimed, before every run), best of BENCH_RUNS (3).
#
# Usage: bench/scaling.sh path/to/uevm OUTDIR
#        BENCH_SIZES   file sizes in KiB (default "4 64 1024 16384")
#        BENCH_JOBS    -j values (default "1 2 4")
#        BENCH_SCALING_MB  MiB per size (default 256)
# Writes OUTDIR/scaling.dat (size_kib jobs MB/s files/s; jobs 0 = openssl)
# and OUTDIR/scaling.png (gnuplot); BENCH_RESULTS as bench/lib.sh says.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: $0 path/to/uevm OUTDIR"
UEVM=$(realpath -e "$1") || die "no uevm binary at '$1' (run make first)"
OUT=$2
mkdir -p "$OUT"
[ "$(id -u)" -eq 0 ] || die "run me as root: labels live in security.* xattrs"
command -v gnuplot >/dev/null || die "gnuplot is missing (scripts/install-deps.sh)"
SIZES=${BENCH_SIZES:-4 64 1024 16384}
JOBS=${BENCH_JOBS:-1 2 4}
MB=${BENCH_SCALING_MB:-256}
RUNS=${BENCH_RUNS:-3}

WORK=$(mktemp -d "${BENCH_DIR:-/var/tmp}/uevm-bench-scaling.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
(umask 077 && head -c 32 /dev/urandom >"$WORK/key")

best_wall() {	# CMD...: the smallest wall-clock seconds of RUNS runs
	local b="" wall _cpu
	for _ in $(seq 1 "$RUNS"); do
		[ "$1" = "$UEVM" ] && "$UEVM" clear -r -q "$TREE"
		cputime "$WORK/run" "$@" || { cat "$WORK/run.err" >&2; die "$* failed"; }
		read -r wall _cpu <"$WORK/run.time"
		if [ -z "$b" ] || [ "$(calc "$wall < $b")" = 1 ]; then b=$wall; fi
	done
	echo "$b"
}

: >"$OUT/scaling.dat"
echo "# size_kib jobs MB/s files/s (jobs 0: one openssl dgst -sha256 process)" >>"$OUT/scaling.dat"
printf '\nuevm label -r, MB/s (files/s), %d MiB per size, best of %d; openssl: one process\n' "$MB" "$RUNS"
printf '%-10s' "file size"
for j in $JOBS; do printf ' %20s' "-j $j"; done
printf ' %20s\n' "openssl"
for kib in $SIZES; do
	TREE=$WORK/t$kib
	n=$(( MB * 1024 / kib ))
	[ "$n" -ge 1 ] || n=1
	# at most 1000 files a directory
	for ((d = 0; d * 1000 < n; d++)); do
		k=$(( n - d * 1000 < 1000 ? n - d * 1000 : 1000 ))
		mkdir -p "$TREE/d$d"
		head -c $(( k * kib * 1024 )) /dev/urandom |
			(cd "$TREE/d$d" && split -b "${kib}K" -a 4 -d - f)
	done
	find "$TREE" -type f -print0 >"$WORK/files"
	xargs -0 cat <"$WORK/files" >/dev/null	# warm the page cache
	bytes=$(( n * kib * 1024 ))
	printf '%-10s' "$kib KiB"
	for j in $JOBS; do
		s=$(best_wall "$UEVM" label -r -q -j "$j" --hmac-key "raw:$WORK/key" "$TREE")
		mbs=$(calc "$bytes / 1e6 / ($s < 1e-6 ? 1e-6 : $s)")
		fps=$(calc "$n / ($s < 1e-6 ? 1e-6 : $s)")
		printf '%s %s %.1f %.0f\n' "$kib" "$j" "$mbs" "$fps" >>"$OUT/scaling.dat"
		result "scale.$kib.j$j.mbs" "$mbs"
		printf ' %20s' "$(printf '%.0f (%.0f)' "$mbs" "$fps")"
	done
	# -a: every run reads the list (stdin would be empty after the first)
	s=$(best_wall xargs -0 -a "$WORK/files" openssl dgst -sha256)
	[ "$(wc -l <"$WORK/run.out")" -eq "$n" ] || die "openssl did not hash every file"
	mbs=$(calc "$bytes / 1e6 / ($s < 1e-6 ? 1e-6 : $s)")
	fps=$(calc "$n / ($s < 1e-6 ? 1e-6 : $s)")
	printf '%s 0 %.1f %.0f\n' "$kib" "$mbs" "$fps" >>"$OUT/scaling.dat"
	result "scale.$kib.openssl.mbs" "$mbs"
	printf ' %20s\n' "$(printf '%.0f (%.0f)' "$mbs" "$fps")"
	rm -rf "$TREE"
done

# ---- the plot -------------------------------------------------------------------
# One block per line of the plot (gnuplot's index): by -j (0: openssl)
# against the size, then by size against -j.
blocks() {	# KEYCOL XCOL VALUES: a block for each value of column KEYCOL
	local v
	for v in $3; do
		awk -v k="$1" -v x="$2" -v v="$v" '!/^#/ && $k == v && (k != 1 || $2 > 0) { print $x, $3 }' "$OUT/scaling.dat"
		printf '\n\n'
	done
}
{ blocks 2 1 "$JOBS 0"; blocks 1 2 "$SIZES"; } >"$WORK/plot.dat"
series="" i=0
for j in $JOBS; do
	series="$series'$WORK/plot.dat' index $i with linespoints title 'uevm label -j $j', "
	i=$((i + 1))
done
series="$series'$WORK/plot.dat' index $i with linespoints dashtype 2 title 'openssl dgst, one process'"
i=$((i + 1))
bysize=""
for kib in $SIZES; do
	bysize="$bysize${bysize:+, }'$WORK/plot.dat' index $i with linespoints title '$kib KiB files'"
	i=$((i + 1))
done
gnuplot <<EOG || die "gnuplot failed"
set terminal pngcairo size 1200,500 font ",10"
set output '$OUT/scaling.png'
set multiplot layout 1,2 title "uevm label -r: throughput, warm page cache ($(nproc) CPUs, ${MB} MiB per size, best of $RUNS)"
set grid
set key left top
set logscale x 2
set xlabel 'file size (KiB)'
set ylabel 'MB/s'
set yrange [0:*]
plot $series
unset logscale x
set key right bottom
set xlabel 'worker threads (-j)'
set xtics ($(echo "$JOBS" | sed 's/\([0-9][0-9]*\)/"\1" \1/g; s/" \([0-9]*\) "/" \1, "/g'))
plot $bysize
unset multiplot
EOG
echo "scaling: $OUT/scaling.dat, $OUT/scaling.png"
