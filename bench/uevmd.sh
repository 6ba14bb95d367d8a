#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# uevmd against the native filesystem, in one run:
#
#   read storm   open, read and close every file of a labelled tree of
#                4 KiB files: natively, then under uevmd for the first time
#                (each file appraised and measured), then again (cached:
#                the kernel's ignore marks keep the opens out of uevmd)
#   exec storm   1000 runs of a small binary, natively and under uevmd
#                once its appraisal is cached
#
# "Native" is the same work on a twin loop mount (same image size, same
# mkfs, same files) that uevmd does not watch.  The cached rows alternate
# a native and a watched run three times while the daemon runs, so the
# ratio is not moved by the machine drifting between a native phase and a
# uevmd phase (exec ratios of 0.93x and 1.14x were measured that way with
# no permission event reaching uevmd).
#
# Targets (issue 17): the first appraisal of a 4 KiB file <= 60 us; cached
# open <= 1.10x native; exec <= 1.05x native once cached.  Page cache warm
# in every run; the policy appraises and measures (software PCRs, the list
# kept without fdatasync).  The first appraisal is the median of 3
# runs (a fresh daemon each); the cached rows the median of 9 rounds.
# Beside the first appraisal, its floor: the same storm answered by a
# responder that allows every open at once (uevmd-storm answer); and its
# split: the storm under a policy whose one rule is another user's (the
# event path alone), under measurement alone and under appraisal alone,
# with uevmd's CPU time an event, and what each read the event path makes
# costs here when timed alone (uevmd-storm costs).
#
# Usage: bench/uevmd.sh BUILD_DIR     (make bench-uevmd; root)
#        BENCH_FILES=N (default 2000) files in the tree,
#        BENCH_EXECS=N (default 1000) execs per run,
#        BENCH_RESULTS=FILE: "uevmd.KEY NANOSECONDS" lines (bench/lib.sh)
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
B=$(realpath -e "$1") || die "no build directory '$1'"
UEVM=$B/uevm
UEVMD=$B/uevmd
SRC=$(cd "$(dirname "$0")" && pwd)
[ -x "$UEVM" ] && [ -x "$UEVMD" ] || die "build uevm and uevmd first (make)"
[ "$(id -u)" -eq 0 ] || die "run me as root (fanotify, loop mount)"
for t in cc mkfs.ext4 mount split; do
	command -v "$t" >/dev/null || die "$t is missing (scripts/install-deps.sh)"
done
N=${BENCH_FILES:-2000}
EXECS=${BENCH_EXECS:-1000}

WORK=$(mktemp -d /var/tmp/uevmd-bench.XXXXXX)
MNT=$WORK/mnt
NAT=$WORK/native
UEVMD_PID=
ANSWER_PID=
cleanup() {
	if [ -n "$UEVMD_PID" ]; then kill "$UEVMD_PID" 2>/dev/null; wait "$UEVMD_PID" 2>/dev/null || true; fi
	if [ -n "$ANSWER_PID" ]; then kill "$ANSWER_PID" 2>/dev/null; wait "$ANSWER_PID" 2>/dev/null || true; fi
	for m in "$MNT" "$NAT"; do
		if mountpoint -q "$m" 2>/dev/null; then umount "$m" || umount -l "$m"; fi
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cc -O2 -o "$WORK/storm" "$SRC/uevmd-storm.c" || die "cannot build the load generator"
for m in "$MNT" "$NAT"; do
	truncate -s 512M "$m.img"
	mkfs.ext4 -q -F -I 256 "$m.img"
	mkdir "$m"
	mount -o loop "$m.img" "$m"
done
mkdir -p "$MNT/tree" "$MNT/bin"
head -c $((N * 4096)) /dev/urandom | (cd "$MNT/tree" && split -b 4096 -a 5 -d - f)
cp "$(type -P true)" "$MNT/bin/true"
(umask 077 && head -c 32 /dev/urandom >"$WORK/key")
"$UEVM" label -r --hmac-key "raw:$WORK/key" "$MNT/tree" "$MNT/bin"
cp -a "$MNT/tree" "$MNT/bin" "$NAT/"
find "$MNT/tree" -type f | sort >"$WORK/list"
find "$NAT/tree" -type f | sort >"$WORK/list.native"
cat >"$WORK/policy" <<'EOF'
measure func=BPRM_CHECK
measure func=FILE_CHECK mask=MAY_READ
appraise func=BPRM_CHECK
appraise func=FILE_CHECK
EOF
cat >"$WORK/uevmd.conf" <<EOF
filesystem = $MNT
policy = $WORK/policy
key = raw:$WORK/key
control_socket = $WORK/uevmd.sock
control_tree = none
log_file = $WORK/uevmd.log
audit_syslog = no
measurement_list = $WORK/measurements
measurement_sync = no
EOF

start_uevmd() {
	"$UEVMD" -c "$WORK/uevmd.conf" >>"$WORK/uevmd.out" 2>&1 &
	UEVMD_PID=$!
	for _ in $(seq 1 200); do
		"$UEVM" status --socket "$WORK/uevmd.sock" 2>/dev/null | grep -q '^state: running' && return 0
		sleep 0.05
	done
	die "uevmd did not start: $(tail -n 5 "$WORK/uevmd.out")"
}
stop_uevmd() {
	kill "$UEVMD_PID"
	wait "$UEVMD_PID" 2>/dev/null || true
	UEVMD_PID=
}
# ns per operation of one storm run (fails the benchmark if anything failed)
storm() {
	local out
	out=$("$WORK/storm" "$@") || die "storm $* failed: $out"
	awk '/^ns/ { ns = $2 } /^ops/ { ops = $2 } END { printf "%.0f\n", ns / ops }' <<<"$out"
}
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
us() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
meets() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "yes" : "NO" }'; }

echo "uevmd benchmark: $N files of 4 KiB, $EXECS execs of $(basename "$(type -P true)"), $(nproc) CPUs, $(uname -r)"
echo "native: the same files on a twin ext4 mount that uevmd does not watch; cached runs alternate with native ones"
storm open "$WORK/list" 1 >/dev/null	# warm the page cache
storm open "$WORK/list.native" 1 >/dev/null

# uevmd's CPU time so far, all threads (ns, from the scheduler's accounting)
cpu_ns() {
	cat /proc/"$UEVMD_PID"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# ---- uevmd: first appraisal (a fresh daemon each run: empty cache, no marks)
# Beside the whole policy, three others split the time (each run with a
# fresh daemon, median of 3): a policy whose one rule is another user's
# (every open still reaches uevmd, which reads the opener's credentials,
# open flags and the file's name, matches and answers; nothing is hashed),
# measurement alone and appraisal alone.
cp "$WORK/policy" "$WORK/policy.full"
first() {	# POLICY: median ns of 3 first-appraisal storms in $ns, CPU ns an event in $cpu
	local p=$1 t=() c=() c0
	cp "$WORK/policy.$p" "$WORK/policy"
	for _ in 1 2 3; do
		start_uevmd
		c0=$(cpu_ns)
		t+=("$(storm open "$WORK/list" 1)")
		c+=($(( ($(cpu_ns) - c0) / N )))
		stop_uevmd
	done
	cp "$WORK/policy.full" "$WORK/policy"
	cpu=$(median "${c[@]}")
	ns=$(median "${t[@]}")
}
echo "measure func=FILE_CHECK mask=MAY_READ uid=65534" >"$WORK/policy.other"
echo "measure func=FILE_CHECK mask=MAY_READ" >"$WORK/policy.measure"
echo "appraise func=FILE_CHECK" >"$WORK/policy.appraise"
first full; first_open=$ns first_cpu=$cpu
first other; other_open=$ns other_cpu=$cpu
first measure; measure_open=$ns measure_cpu=$cpu
first appraise; appraise_open=$ns appraise_cpu=$cpu

# ---- the floor under any fanotify appraiser ---------------------------------
# The same storm against a responder that allows every open at once and
# reads nothing (uevmd-storm answer): the kernel's permission round trip.
b=()
for _ in 1 2 3; do
	coproc ANSWER { exec "$WORK/storm" answer "$MNT"; }	# sets ANSWER_PID
	read -r line <&"${ANSWER[0]}" || line=
	[ "$line" = ready ] || die "the bare fanotify responder did not start"
	b+=("$(storm open "$WORK/list" 1)")
	kill "$ANSWER_PID"
	wait "$ANSWER_PID" 2>/dev/null || true
	ANSWER_PID=
done
bare_open=$(median "${b[@]}")

# ---- uevmd: cached opens and execs -----------------------------------------
start_uevmd
storm open "$WORK/list" 1 >/dev/null
storm exec "$MNT/bin/true" 1 >/dev/null
storm exec "$NAT/bin/true" 1 >/dev/null
events0=$("$UEVM" status --socket "$WORK/uevmd.sock" | awk '/^events:/ { print $2 }')
# Native and watched in turn (see the top), in 9 rounds each of a third of
# the work, the median of each kept: one fork+exec+wait here varies by 15%
# from one run of 1000 to the next (580 to 760 us), with no event reaching
# uevmd, and three long runs let that noise decide the row.  The setup's
# writes (two trees, labels, the loop images) go out before the clocks start.
sync
ROUNDS=9
n=(); c=(); e=(); x=()
for ((r = 0; r < ROUNDS; r++)); do
	n+=("$(storm open "$WORK/list.native" 1)")
	c+=("$(storm open "$WORK/list" 1)")
done
for ((r = 0; r < ROUNDS; r++)); do
	e+=("$(storm exec "$NAT/bin/true" $(( (EXECS + 2) / 3 )))")
	x+=("$(storm exec "$MNT/bin/true" $(( (EXECS + 2) / 3 )))")
done
native_open=$(median "${n[@]}"); cached_open=$(median "${c[@]}")
native_exec=$(median "${e[@]}"); cached_exec=$(median "${x[@]}")
status=$("$UEVM" status --socket "$WORK/uevmd.sock")
events1=$(awk '/^events:/ { print $2 }' <<<"$status")
stop_uevmd
entries=$(grep -o '^measurements: [0-9]*' <<<"$status" | awk '{ print $2 }')

overhead=$((first_open - native_open))
result uevmd.native_open_ns "$native_open"
result uevmd.first_open_ns "$first_open"
result uevmd.bare_open_ns "$bare_open"
result uevmd.cached_open_ns "$cached_open"
result uevmd.native_exec_ns "$native_exec"
result uevmd.cached_exec_ns "$cached_exec"
result uevmd.files "$N"
for k in first other measure appraise; do
	key=${k}_cpu
	result "uevmd.${k}_cpu_ns" "${!key}"
done
result uevmd.other_open_ns "$other_open"
result uevmd.measure_open_ns "$measure_open"
result uevmd.appraise_open_ns "$appraise_open"
# What the event path's reads cost here, each timed alone (uevmd-storm costs)
"$WORK/storm" costs "$(head -n 1 "$WORK/list")" >"$WORK/costs" || die "uevmd-storm costs failed"
costs=()
while read -r _ name ns; do
	result "uevmd.cost.$name" "$ns"
	costs+=("$name $ns")
done <"$WORK/costs"
printf '\n%-44s %10s %10s %8s %s\n' "" "native" "uevmd" "ratio" "target"
printf '%-44s %8s us %8s us %8s %s\n' "open+read+close, cached (ignore marks)" \
	"$(us "$native_open")" "$(us "$cached_open")" "$(ratio "$cached_open" "$native_open")x" \
	"<= 1.10x: $(meets "$(ratio "$cached_open" "$native_open")" 1.10)"
printf '%-44s %8s us %8s us %8s %s\n' "open+read+close, first appraisal (4 KiB)" \
	"$(us "$native_open")" "$(us "$first_open")" "$(ratio "$first_open" "$native_open")x" \
	"<= 60 us: $(meets "$first_open" 60000)"
printf '%-44s %8s    %8s us\n' "  of which uevmd's appraisal + measurement" "" "$(us "$overhead")"
printf '%-44s %8s us %8s us %8s %s\n' "open+read+close, a responder allowing all" \
	"$(us "$native_open")" "$(us "$bare_open")" "$(ratio "$bare_open" "$native_open")x" \
	"(the fanotify round trip alone: the floor)"
echo
echo "first appraisal, split (a fresh daemon each, median of 3 runs; uevmd's CPU time an event, all threads):"
split_row() {	# label ns cpu_ns
	printf '  %-58s %8s us   CPU %6s us\n' "$1" "$(us "$2")" "$(us "$3")"
}
printf '  %-58s %8s us\n' "the fanotify round trip alone (a responder allowing all)" "$(us "$bare_open")"
split_row "event path: a rule for another user (nothing hashed)" "$other_open" "$other_cpu"
split_row "measurement alone (hash, list entry)" "$measure_open" "$measure_cpu"
split_row "appraisal alone (hash, security.ima, security.evm HMAC)" "$appraise_open" "$appraise_cpu"
split_row "both (the row above, the policy of the table)" "$first_open" "$first_cpu"
echo "  reads the event path makes for every event, each timed alone here (uevmd-storm costs):"
reads=0
for c in "${costs[@]}"; do
	read -r name ns <<<"$c"
	printf '    %-22s %6s us\n' "$name" "$(us "$ns")"
	case $name in proc_*|fd_readlink) reads=$((reads + ns)) ;; esac
done
result uevmd.cost_reads_ns "$reads"
printf '    %-22s %6s us  (the /proc reads and the name; with the round trip: %s us)\n' \
	"sum" "$(us "$reads")" "$(us $((reads + bare_open)))"
echo
printf '%-44s %8s us %8s us %8s %s\n' "fork+exec+wait of a small binary, cached" \
	"$(us "$native_exec")" "$(us "$cached_exec")" "$(ratio "$cached_exec" "$native_exec")x" \
	"<= 1.05x: $(meets "$(ratio "$cached_exec" "$native_exec")" 1.05)"
echo
echo "permission events reaching uevmd during the cached storms ($((ROUNDS * N)) opens, $((ROUNDS * ((EXECS + 2) / 3))) execs): $((events1 - events0))"
echo "measurement list: $entries entries; $(grep -o 'cache: .*' <<<"$status")"
