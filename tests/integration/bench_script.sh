#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench's script (bench/label-verify.sh) on a small tree; speed is not
# asserted here (bench/ prints it), only that the script measures what it
# says and leaves trees as it promises:
#  - it prints files/s and MB/s for uevm label, uevm verify, sha256sum and
#    openssl, and both ratios against the 1.8x target (issue 17), and with
#    BENCH_RESULTS the same figures as "key value" lines for bench/run.sh;
#  - it times label's and verify's floors (bench/xattr-floor.c: the two
#    labels stored, then read back, with no hashing, and a plain open and
#    close) and prints the ceilings they leave for label and verify;
#  - a tree without labels has none afterwards (uevm clear), the floor's
#    values included;
#  - a tree that already carries labels is refused and left untouched,
#    unless BENCH_OVERWRITE=1, which keeps the new labels.
source "$(dirname "$0")/../lib.sh"

BENCH=$TESTS_DIR/../bench/label-verify.sh
R=$T/tree
mkdir -p "$R/a/b" "$R/c"
for i in $(seq 1 40); do echo "file $i" >"$R/a/f$i"; done
head -c 300000 /dev/urandom >"$R/a/b/big"
ln -s ../a/f1 "$R/c/link"
nfiles=$(find "$R" -type f | wc -l)

# labelled_count DIR NAME: how many objects carry the attribute NAME
labelled_count() {
	getfattr -R -P -h --absolute-names -n "$2" "$1" 2>/dev/null | grep -c "^$2=" || true
}

rc=0
out=$(BENCH_RUNS=1 BENCH_RESULTS=$T/res BENCH_NAME=t bash "$BENCH" "$UEVM" "$R" 2>&1) || rc=$?
expect_eq "bench exits 0 on an unlabelled tree" 0 "$rc"
expect_eq "BENCH_RESULTS: the file count" "t.files $nfiles" "$(grep '^t\.files ' "$T/res")"
for k in label verify; do
	expect_match "BENCH_RESULTS: $k's estimated ceiling and the labels' own CPU" \
		"t\.$k\.labels_cpu [0-9]+\.[0-9]{2}"$'\n'"t\.$k\.ceiling [0-9]+\.[0-9]{4}" "$(cat "$T/res")"
done
for k in label verify sha256sum openssl opens xattrs xattrs_get; do
	expect_match "BENCH_RESULTS: $k's wall and CPU seconds" \
		"t\.$k\.wall [0-9]+\.[0-9]{6}"$'\n'"t\.$k\.cpu [0-9]+\.[0-9]{2}" "$(cat "$T/res")"
done
expect_match "bench counts the tree's regular files" "$R: $nfiles regular files" "$out"
for tool in "uevm label -r" "uevm verify -r" "sha256sum" "openssl dgst -sha256" \
	"open+close alone" "xattrs alone" "xattrs read alone"; do
	expect_match "bench times $tool (seconds, files/s, MB/s)" \
		"^${tool//+/\\+} +[0-9]+\.[0-9]{3} +[0-9]+ +[0-9]+\.[0-9] +[0-9]+\.[0-9]{2}$" "$out"
done
expect_match "bench prints label/openssl against the target" \
	'^uevm label -r +/ openssl dgst: +[0-9]+\.[0-9]{2}x +\(target >= 1\.8x: (met|NOT met)\)' "$out"
expect_match "bench prints verify/openssl against the target" \
	'^uevm verify -r +/ openssl dgst: +[0-9]+\.[0-9]{2}x +\(target >= 1\.8x: (met|NOT met)\)' "$out"
expect_match "bench prints the labels' storage cost and label's ceiling" \
	"^storing the two labels alone: [0-9]+\.[0-9]{2} s CPU \([0-9]+\.[0-9] us/file\); label/openssl estimated ceiling on $(nproc) CPUs: [0-9]+\.[0-9]{2}x$" "$out"
expect_match "bench prints the labels' reading cost and verify's ceiling" \
	"^reading the two labels alone: [0-9]+\.[0-9]{2} s CPU \([0-9]+\.[0-9] us/file\); verify/openssl estimated ceiling on $(nproc) CPUs: [0-9]+\.[0-9]{2}x$" "$out"
expect_match "bench says it removes its labels" "removing the benchmark's labels" "$out"
expect_eq "no security.ima left behind" 0 "$(labelled_count "$R" security.ima)"
expect_eq "no security.evm left behind" 0 "$(labelled_count "$R" security.evm)"

# A tree that carries labels already.
make_key "$T/key"
"$UEVM" label --hmac-key "raw:$T/key" "$R/a/f1"
evm_before=$(xattr_hex security.evm "$R/a/f1")
rc=0
out=$(BENCH_RUNS=1 bash "$BENCH" "$UEVM" "$R" 2>&1) || rc=$?
expect_eq "bench refuses a tree that carries labels" 2 "$rc"
expect_match "bench says why it refuses" 'already carries security.ima/security.evm labels' "$out"
expect_eq "the existing label is untouched" "$evm_before" "$(xattr_hex security.evm "$R/a/f1")"
expect_eq "no other file got a label" 1 "$(labelled_count "$R" security.ima)"

rc=0
out=$(BENCH_OVERWRITE=1 BENCH_RUNS=1 bash "$BENCH" "$UEVM" "$R" 2>&1) || rc=$?
expect_eq "BENCH_OVERWRITE=1 runs on a labelled tree" 0 "$rc"
expect_match "BENCH_OVERWRITE=1 says the labels stay" 'the new labels stay in' "$out"
expect_eq "BENCH_OVERWRITE=1 keeps a label on every regular file" \
	"$nfiles" "$(labelled_count "$R" security.ima)"

expect_rc "bench without arguments is a usage error" 2 bash "$BENCH"
expect_rc "bench on a missing tree is an error" 2 bash "$BENCH" "$UEVM" "$T/nonexistent"
