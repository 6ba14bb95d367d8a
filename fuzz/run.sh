#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run libFuzzer targets for a while each; fails if any target crashes,
# leaks, hangs or trips a sanitizer.
#   fuzz/run.sh BUILD_DIR SECONDS TARGET...
# For each target: new inputs go to BUILD_DIR/corpus/TARGET (the seeds in
# fuzz/corpus/TARGET are read, never written), a crashing input to
# BUILD_DIR/artifacts/TARGET-crash-..., the log to BUILD_DIR/logs/TARGET.log.
set -u

b=${1:?build dir}
secs=${2:?seconds}
shift 2
src=$(cd "$(dirname "$0")" && pwd)

# Longest input worth trying, per parser: a little over the largest valid
# value, so that the fuzzer spends its time on shapes, not on size.
max_len() {
	case $1 in
	ima_xattr|evm_xattr)	echo 1100 ;;	# 9-byte header + 1 KiB signature
	sig_verify)		echo 1300 ;;	# digest + signature value
	sig_certs)		echo 4096 ;;	# a PEM bundle of two certificates
	key_spec)		echo 256 ;;
	key_kblob)		echo 1400 ;;	# 128-byte key: ~400 hex digits
	key_file|key_passphrase) echo 4096 ;;	# TPM files are the largest
	ima_policy)		echo 4096 ;;
	ima_ml_binary)		echo 8192 ;;	# a few entries of any template
	ima_ml_ascii)		echo 4096 ;;	# a few lines; ima-sig lines are ~600 bytes
	pcr_file|bios_log)	echo 4096 ;;	# 24 PCRs of a bank; a dozen events
	uevmd_control)		echo 512 ;;	# one request line
	uevmd_conf)		echo 4400 ;;	# just past the longest line (4160)
	securityfs_write)	echo 4096 ;;	# a policy in a few writes
	*)			echo 4096 ;;
	esac
}

pass=0 fail=0 total=0 failed=""
mkdir -p "$b/logs" "$b/artifacts"
for t in "$@"; do
	mkdir -p "$b/corpus/$t"
	log=$b/logs/$t.log
	# -timeout: one input running for 10 s is a hang; -rss_limit_mb: a
	# parser that allocates 2 GiB for a small input is a bug too.
	"$b/$t" -max_total_time="$secs" -max_len="$(max_len "$t")" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$b/artifacts/$t-" \
		"$b/corpus/$t" "$src/corpus/$t" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
	if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
		pass=$((pass + 1))
		total=$((total + runs))
		printf 'PASS fuzz %-16s %10s runs in %ss (%s inputs in corpus)\n' \
			"$t" "$runs" "$secs" "$(find "$b/corpus/$t" "$src/corpus/$t" -type f | wc -l)"
	else
		fail=$((fail + 1))
		failed="$failed $t"
		printf 'FAIL fuzz %-16s exit %s; log %s\n' "$t" "$rc" "$log"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*property failed|artifact_prefix|Test unit written)' \
			"$log" | head -8 | sed 's/^/    /'
	fi
done
echo "fuzz: $pass passed, $fail failed, $total runs in total (${secs}s per target)${failed:+; failed:$failed}"
[ "$fail" -eq 0 ]
