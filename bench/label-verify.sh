#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Throughput of `uevm label -r` and `uevm verify -r` over a tree, beside
# `openssl dgst -sha256` (one process) and sha256sum over the same regular
# files, all timed in the same run with a warm page cache (make bench runs
# it on copies of system trees, see bench/run.sh).
#
# Usage: bench/label-verify.sh path/to/uevm [TREE]     (TREE: /usr/lib)
#
# Labelling writes security.ima and security.evm into TREE.  If TREE carried
# no such labels before, they are removed again afterwards (uevm clear -r).
# If it did, the benchmark refuses to run, because labelling would replace
# those labels with ones made from a throw-away key; BENCH_OVERWRITE=1 runs it
# anyway and leaves the new labels in place.  Needs root.
#
# Environment: BENCH_RUNS (3: best of, interleaved), BENCH_TARGET (1.8: the
# label/openssl and verify/openssl ratio of issue 17), BENCH_SHA256SUM=0
# leaves sha256sum out, BENCH_AIDE=1 also times AIDE's init and check on
# the same tree (sha256, metadata, xattrs; one run each), BENCH_RESULTS=FILE
# and BENCH_NAME=NAME append "NAME.TOOL.wall|cpu SECONDS" lines to FILE.
#
# Label's floor: bench/xattr-floor.c sets security.ima and security.evm
# (values of their real sizes, no hashing) on every regular file, on as many
# threads as uevm uses, and also only opens and closes them.  The
# difference is what the filesystem charges for storing the two labels; with
# openssl's CPU time for the hashing, it estimates the best label/openssl
# ratio a labeller can reach here (printed as "estimated ceiling"; not a
# bound: hashing a file in uevm costs less than openssl dgst's whole run
# spends on it).  Reading the two labels back ("get", once label has run)
# gives verify's the same way.  On ext4 with 256-byte inodes the two labels
# do not fit in the inode, so every file gets an xattr block of its own.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

TARGET=${BENCH_TARGET:-1.8}
NAME=${BENCH_NAME:-tree}
SHA256SUM=${BENCH_SHA256SUM:-1}
AIDE=${BENCH_AIDE:-0}
if [ $# -lt 1 ] || [ $# -gt 2 ]; then die "usage: $0 path/to/uevm [TREE]"; fi
UEVM=$(realpath -e "$1") || die "no uevm binary at '$1' (run make first)"
[ -f "$UEVM" ] && [ -x "$UEVM" ] || die "'$1' is not the uevm program (give path/to/uevm, e.g. build/default/uevm)"
TREE=${2:-/usr/lib}
[ -d "$TREE" ] || die "$TREE is not a directory"
TREE=$(realpath -e "$TREE")
[ "$(id -u)" -eq 0 ] || die "run me as root: labels live in security.* xattrs"
[ "$AIDE" = 1 ] && { command -v aide >/dev/null || die "aide is missing (scripts/install-deps.sh)"; }
for t in openssl sha256sum getfattr xargs find /usr/bin/time cc; do
	command -v "$t" >/dev/null || die "$t is missing (scripts/install-deps.sh)"
done

WORK=$(mktemp -d /var/tmp/uevm-bench.XXXXXX)
LABELLED=0	# set once our labels are in TREE: clear them on any exit
FLOORING=0	# xattr-floor's made-up values may be in TREE: the same
cleanup() {
	if [ "$LABELLED" = 1 ] || [ "$FLOORING" = 1 ]; then
		echo "bench: removing the benchmark's labels: uevm clear -r -x $TREE"
		"$UEVM" clear -r -x "$TREE" || echo "bench: uevm clear failed: labels remain in $TREE" >&2
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

FLOOR=$WORK/xattr-floor
cc -O2 -pthread -o "$FLOOR" "$(dirname "$0")/xattr-floor.c" || die "cannot build bench/xattr-floor.c"

# A throw-away key, never a real key location.
KEY=$WORK/bench-hmac.key
(umask 077 && head -c 32 /dev/urandom >"$KEY")

CPUS=$(nproc)

# ---- the file set ----------------------------------------------------------
# uevm walks with -x; find uses -xdev so that both see the same files.
find "$TREE" -xdev -type f -print0 >"$WORK/files"
read -r NFILES BYTES < <(find "$TREE" -xdev -type f -printf '%s\n' |
	awk '{ n++; b += $1 } END { printf "%d %.0f\n", n, b }')
NOBJ=$(find "$TREE" -xdev | wc -l)
[ "$NFILES" -gt 0 ] || die "$TREE has no regular files"

# ---- labels already there? ------------------------------------------------
if getfattr -R -P -h --absolute-names -m '^security\.(ima|evm)$' "$TREE" 2>/dev/null |
	grep -q '^security\.'; then
	[ "${BENCH_OVERWRITE:-}" = 1 ] ||
		die "$TREE already carries security.ima/security.evm labels; labelling would replace them.
bench: use a copy of the tree, or set BENCH_OVERWRITE=1 to replace them (they are then kept)."
	echo "bench: $TREE already carried labels; BENCH_OVERWRITE=1: they are replaced and kept afterwards"
	CLEAR_AFTER=0
else
	echo "bench: $TREE carries no security.ima/evm labels: the benchmark's labels are removed afterwards"
	CLEAR_AFTER=1
fi

echo "bench: $TREE: $NFILES regular files ($NOBJ objects), $(awk -v b="$BYTES" 'BEGIN { printf "%.1f", b / 1e6 }') MB; $CPUS CPUs online; uevm -j $CPUS (default)"
echo "bench: $(openssl version)"

# ---- warm the page cache (content and metadata) ---------------------------
xargs -0 -n 4096 cat -- <"$WORK/files" >/dev/null
find "$TREE" -xdev >/dev/null

# ---- the timed runs ---------------------------------------------------------
# Each tool runs BENCH_RUNS times, interleaved, and its best time counts.
RUNS=${BENCH_RUNS:-3}
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive number"
declare -A best bestcpu
timed() {	# name command...: run once, keep the best wall and CPU seconds
	local name=$1 rc=0 wall cpu
	shift
	cputime "$WORK/run" "$@" || rc=$?
	cp "$WORK/run.out" "$WORK/out"
	if [ "$rc" -ne 0 ]; then
		cat "$WORK/run.err" >&2
		die "$name exited with status $rc"
	fi
	read -r wall cpu <"$WORK/run.time"
	best[$name]=$(awk -v s="$wall" -v p="${best[$name]:-}" \
		'BEGIN { if (p != "" && p < s) s = p; printf "%.6f", s }')
	bestcpu[$name]=$(awk -v s="$cpu" -v p="${bestcpu[$name]:-}" \
		'BEGIN { if (p != "" && p < s) s = p; printf "%.2f", s }')
}
# One process at a time: xargs splits the list only where the kernel's
# argument limit forces it, and runs the parts one after another.
XARGS_MAX=$(xargs --show-limits -0 </dev/null 2>&1 |
	sed -n 's/^Maximum length of command we could actually use: //p')
XARGS=(xargs -0 -n 1000000 ${XARGS_MAX:+-s "$XARGS_MAX"})
NPROC=$("${XARGS[@]}" sh -c 'echo x' sh <"$WORK/files" | wc -l)

[ "$CLEAR_AFTER" = 1 ] && LABELLED=1
for ((run = 1; run <= RUNS; run++)); do
	echo "bench: run $run of $RUNS"
	# Label from scratch every time (untimed): an unchanged security.ima
	# is not rewritten, which would flatter later runs (and the first, on
	# a tree that had labels).
	if [ "$run" -gt 1 ] || [ "$CLEAR_AFTER" = 0 ]; then "$UEVM" clear -r -x -q "$TREE"; fi
	# The floor (see the top); its values are cleared again, untimed, and
	# on any exit before that (even with BENCH_OVERWRITE=1: they are no
	# labels, and the tree's own were cleared above).
	timed "open+close alone" "$FLOOR" open "$WORK/files" "$CPUS"
	FLOORING=1
	timed "xattrs alone" "$FLOOR" set "$WORK/files" "$CPUS"
	"$UEVM" clear -r -x -q "$TREE"
	FLOORING=0
	timed "uevm label -r" "$UEVM" label -r -x --hmac-key "raw:$KEY" "$TREE"
	timed "uevm verify -r" "$UEVM" verify -r -x --hmac-key "raw:$KEY" "$TREE"
	grep -qE "^Summary: [0-9]+ objects, 0 failed, 0 errors$" "$WORK/out" || {
		cat "$WORK/out" >&2; die "verify did not pass every object"; }
	timed "xattrs read alone" "$FLOOR" get "$WORK/files" "$CPUS"
	if [ "$SHA256SUM" = 1 ]; then
		timed "sha256sum" "${XARGS[@]}" sha256sum -- <"$WORK/files"
		[ "$(wc -l <"$WORK/out")" -ge "$NFILES" ] || die "sha256sum did not hash every file"
	fi
	timed "openssl dgst -sha256" "${XARGS[@]}" openssl dgst -sha256 <"$WORK/files"
	[ "$(wc -l <"$WORK/out")" -ge "$NFILES" ] || die "openssl did not hash every file"
done

# ---- AIDE on the same tree -------------------------------------------------------
# Its database in WORK; the rule: SHA-256, metadata and xattrs.  Both runs
# see the labels of the last uevm run.  One run each (they are slow).
TOOLS=("uevm label -r" "uevm verify -r")
[ "$SHA256SUM" = 1 ] && TOOLS+=("sha256sum")
TOOLS+=("openssl dgst -sha256" "open+close alone" "xattrs alone" "xattrs read alone")
if [ "$AIDE" = 1 ]; then
	cat >"$WORK/aide.conf" <<EOC
database_in=file:$WORK/aide.db
database_out=file:$WORK/aide.db.new
gzip_dbout=no
num_workers=$CPUS
report_url=stdout
Bench = sha256+p+i+n+u+g+s+m+c+xattrs
$TREE Bench
EOC
	echo "bench: AIDE init and check ($CPUS workers), one run each"
	timed "aide --init" aide -c "$WORK/aide.conf" --init
	mv "$WORK/aide.db.new" "$WORK/aide.db"
	[ "$(grep -c '^/' "$WORK/aide.db")" -ge "$NFILES" ] || die "aide --init did not record every file"
	timed "aide --check" aide -c "$WORK/aide.conf" --check
	TOOLS+=("aide --init" "aide --check")
fi

# ---- report -------------------------------------------------------------------
key() {	# tool name -> results key
	case $1 in
	"uevm label -r") echo label ;; "uevm verify -r") echo verify ;;
	"openssl dgst -sha256") echo openssl ;; "aide --init") echo aide_init ;;
	"aide --check") echo aide_check ;; "open+close alone") echo opens ;;
	"xattrs alone") echo xattrs ;; "xattrs read alone") echo xattrs_get ;;
	*) echo "$1" ;;
	esac
}
result "$NAME.files" "$NFILES"
result "$NAME.bytes" "$BYTES"
result "$NAME.runs" "$RUNS"
echo
printf '%-22s %9s %11s %9s %9s   (best of %d)\n' "" seconds files/s MB/s "CPU s" "$RUNS"
for name in "${TOOLS[@]}"; do
	result "$NAME.$(key "$name").wall" "${best[$name]}"
	result "$NAME.$(key "$name").cpu" "${bestcpu[$name]}"
	awk -v n="$name" -v s="${best[$name]}" -v c="${bestcpu[$name]}" -v f="$NFILES" -v b="$BYTES" \
		'BEGIN { if (s < 1e-6) s = 1e-6
		        printf "%-22s %9.3f %11.0f %9.1f %9.2f\n", n, s, f / s, b / 1e6 / s, c }'
done
echo "(sha256sum and openssl: $NPROC process(es) each, one after another;"
echo " open+close and xattrs alone: bench/xattr-floor.c on $CPUS threads, regular files only)"
echo
ok=1
for name in "${TOOLS[@]}"; do
	[ "$name" = "openssl dgst -sha256" ] && continue
	case $name in aide* | *alone) continue ;; esac
	awk -v n="$name" -v a="${best[$name]}" -v o="${best[openssl dgst -sha256]}" \
		-v t="$TARGET" -v u="${name%% *}" 'BEGIN {
		r = o / (a < 1e-6 ? 1e-6 : a)
		verdict = ""
		if (u == "uevm")
			verdict = sprintf("  (target >= %.1fx: %s)", t, (r >= t) ? "met" : "NOT met")
		printf "%-15s / openssl dgst: %5.2fx%s\n", n, r, verdict
		exit (u == "uevm" && r < t) }' || ok=0
done
# The ceilings: openssl's hashing plus storing (or reading) the labels, on
# every CPU.
for pair in "storing|label|xattrs alone" "reading|verify|xattrs read alone"; do
	IFS='|' read -r what tool floor <<<"$pair"
	read -r x r < <(awk -v ow="${best[openssl dgst -sha256]}" \
		-v oc="${bestcpu[openssl dgst -sha256]}" -v xc="${bestcpu[$floor]}" \
		-v pc="${bestcpu[open+close alone]}" -v n="$CPUS" 'BEGIN {
		x = xc - pc; if (x < 0) x = 0
		printf "%.2f %.4f\n", x, ow * n / (oc + x > 0 ? oc + x : 1e-6) }')
	result "$NAME.$tool.labels_cpu" "$x"
	result "$NAME.$tool.ceiling" "$r"
	awk -v x="$x" -v r="$r" -v f="$NFILES" -v n="$CPUS" -v what="$what" -v tool="$tool" 'BEGIN {
		printf "%s the two labels alone: %.2f s CPU (%.1f us/file); %s/openssl estimated ceiling on %d CPUs: %.2fx\n",
			what, x, x * 1e6 / f, tool, n, r }'
done
if [ "$AIDE" = 1 ]; then
	for pair in "uevm label -r|aide --init" "uevm verify -r|aide --check"; do
		awk -v n="${pair%|*}" -v m="${pair#*|}" -v a="${best[${pair%|*}]}" \
			-v o="${best[${pair#*|}]}" 'BEGIN {
			printf "%-15s / %-12s %5.2fx\n", n, m ":", o / (a < 1e-6 ? 1e-6 : a) }'
	done
fi
[ "$ok" = 1 ] || echo "bench: below target on this machine ($CPUS CPUs)"
[ "$CLEAR_AFTER" = 1 ] || echo "bench: the new labels stay in $TREE (BENCH_OVERWRITE=1)"
