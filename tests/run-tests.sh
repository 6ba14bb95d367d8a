#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs every unit test binary (only stress_* ones for a build/tsan) and integration script against each build
# directory given (default: build/default) and ends with one line
# "N passed, N failed".  Each test reports lines "PASS: name" or
# "FAIL: name: why"; a script or binary that crashes counts as a failure.
set -u
cd "$(dirname "$0")/.."
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=(build/default)

pass=0
fail=0
failed_names=()
log_dir=$(mktemp -d /tmp/uevm-test-logs.XXXXXX)

run_one() {	# label command...
	local label=$1; shift
	local log="$log_dir/$(echo "$label" | tr '/ ' '__').log"
	"$@" >"$log" 2>&1
	local rc=$?
	local p f
	p=$(grep -c '^PASS: ' "$log")
	f=$(grep -c '^FAIL: ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL: $label exited with status $rc" >>"$log"
		f=1
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	printf '%-50s %4d passed, %d failed\n' "$label" "$p" "$f"
	if [ "$f" -ne 0 ]; then
		failed_names+=("$label")
		grep '^FAIL: ' "$log" | sed 's/^/    /'
		tail -n 20 "$log" | sed 's/^/    | /'
	fi
}

for b in "${builds[@]}"; do
	variant=$(basename "$b")
	export UEVM="$PWD/$b/uevm" UEVM_BUILD="$PWD/$b"
	for t in "$b"/tests/*; do
		[ -x "$t" ] || continue
		# ThreadSanitizer builds run the concurrency tests only.
		[ "$variant" = tsan ] && [[ "$(basename "$t")" != stress* ]] && continue
		run_one "$variant/unit/$(basename "$t")" "$t"
	done
	[ "$variant" = tsan ] && continue
	for s in tests/integration/*.sh; do
		[ -f "$s" ] || continue
		run_one "$variant/$(basename "$s" .sh)" bash "$s"
	done
done

echo
if [ "$fail" -ne 0 ]; then
	echo "failed: ${failed_names[*]}"
	echo "logs: $log_dir"
else
	rm -rf "$log_dir"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
