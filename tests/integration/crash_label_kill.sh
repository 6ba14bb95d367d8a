#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Crash safety of `uevm label -r`: a tree of 3000 small and a few large
# files, labelled by runs killed with SIGKILL
#  1. at random moments (20 rounds; between rounds some files change
#     content or mode, and every fifth round starts from a cleared tree);
#  2. exactly between a file's security.ima and security.evm writes
#     (strace kills the process on entry to the Nth fsetxattr: N even is
#     the security.evm write of a file whose security.ima was just written),
#     both for unlabelled files and for changed, labelled ones.
# After each kill `uevm verify -r` may pass only files whose labels are
# right by tests/evm_ref_check.py (sha256 of the content, HMAC recomputed
# in Python), and no content may have changed; at the end one more
# `uevm label -r` completes and everything passes.
source "$(dirname "$0")/../lib.sh"

for tool in jq strace python3; do
	command -v $tool >/dev/null || { fail "$tool is installed (scripts/install-deps.sh)"; exit 1; }
done
KEY=$T/key
make_key "$KEY"
R=$T/tree
mkdir -p "$R"
for d in $(seq 30); do
	mkdir "$R/d$d"
	for f in $(seq 100); do
		head -c $((RANDOM % 6000)) /dev/urandom >"$R/d$d/f$f"
	done
done
for i in 1 2 3 4; do head -c 16M /dev/urandom >"$R/big$i"; done
mapfile -t FILES < <(cd "$R" && find . -type f | sed 's|^\./||' | sort)
NFILES=${#FILES[@]}

U() { "$UEVM" "$@" --hmac-key "raw:$KEY"; }

# check_round NAME: verify the tree; every file uevm passes must be right
# by the reference, and no content may differ from the manifest.
unsafe_total=0
check_round() {
	local name=$1 json ref passed good unsafe corrupt
	json=$(U verify -r -v --json "$R" 2>/dev/null)
	passed=$(jq -r '.results[] | select(.ok == true and .type == "file") | .path' <<<"$json" | sort)
	ref=$(python3 "$TESTS_DIR/evm_ref_check.py" --key "$KEY" --manifest "$T/manifest" "$R")
	good=$(sed -n 's/^GOOD\t//p' <<<"$ref" | sort)
	unsafe=$(comm -23 <(echo "$passed") <(echo "$good") | grep -c .)
	corrupt=$(grep -c '^CORRUPT' <<<"$ref")
	ROUND_PASSED=$(grep -c . <<<"$passed")
	unsafe_total=$((unsafe_total + unsafe))
	if [ "$unsafe" -ne 0 ] || [ "$corrupt" -ne 0 ]; then
		fail "$name: no PASS with wrong labels, no content changed" \
			"unsafe=$unsafe corrupt=$corrupt: $(comm -23 <(echo "$passed") <(echo "$good") | head -3)"
	else
		pass "$name: no PASS with wrong labels, no content changed"
	fi
}

# tamper N: change the content of N random files and the mode of N others.
tamper() {
	local i f
	for i in $(seq "$1"); do
		f=$R/${FILES[RANDOM % NFILES]}
		case $((RANDOM % 3)) in
		0) echo "appended $RANDOM" >>"$f" ;;
		1) head -c "$(stat -c %s "$f")" /dev/urandom >"$f.new" && cat "$f.new" >"$f" && rm "$f.new" ;;
		2) : >"$f" ;;
		esac
		chmod "$(printf '%o' $((0600 + RANDOM % 0100)))" "$R/${FILES[RANDOM % NFILES]}"
	done
	(cd "$R" && sha256sum -- "${FILES[@]}") >"$T/manifest"
}

# How long a whole labelling run takes here, for the kill delays.
(cd "$R" && sha256sum -- "${FILES[@]}") >"$T/manifest"
start=$(date +%s%N)
U label -r "$R"
full_ms=$(( ($(date +%s%N) - start) / 1000000 + 20 ))
"$UEVM" clear -r "$R" >/dev/null || fail "uevm clear -r"

# ---- 1: SIGKILL at random moments -------------------------------------------

mixed=0
for round in $(seq 20); do
	if [ $((round % 5)) -eq 1 ]; then
		"$UEVM" clear -r "$R" >/dev/null || fail "uevm clear -r"
	fi
	[ "$round" -gt 1 ] && tamper 15
	delay_ms=$((RANDOM % full_ms))
	"$UEVM" label -r --hmac-key "raw:$KEY" "$R" >/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	check_round "random kill, round $round (after ${delay_ms} ms)"
	echo "# round $round: killed after $delay_ms of ~$full_ms ms, $ROUND_PASSED of $NFILES files pass"
	[ "$ROUND_PASSED" -gt 0 ] && [ "$ROUND_PASSED" -lt "$NFILES" ] && mixed=$((mixed + 1))
done
expect_eq "random kills: no file passed with wrong labels in 20 rounds" 0 "$unsafe_total"
check "random kills: some rounds were cut in the middle ($mixed of 20)" test "$mixed" -ge 3

# ---- 2: SIGKILL between the security.ima and security.evm writes -------------

# kill_at N PATH...: label PATH with one worker, killed on entry to the
# Nth fsetxattr (that call is not made).
kill_at() {
	local n=$1; shift
	# (in the background: the shell's "Killed" notice goes to /dev/null too)
	strace -f -qq -o /dev/null -e trace=fsetxattr \
		-e "inject=fsetxattr:error=EIO:signal=KILL:when=$n" \
		"$UEVM" label -r -j 1 --hmac-key "raw:$KEY" "$@" >/dev/null 2>&1 &
	wait $! 2>/dev/null
}

# ima_only DIR: how many files in DIR have security.ima without security.evm.
ima_only() {
	local f n=0
	for f in "$1"/*; do
		[ -n "$(xattr_hex security.ima "$f")" ] && [ -z "$(xattr_hex security.evm "$f")" ] && n=$((n + 1))
	done
	echo $n
}

"$UEVM" clear -r "$R" >/dev/null || fail "uevm clear -r"
i=0
for k in 2 8 30 64; do
	i=$((i + 1))
	d=$R/d$i
	kill_at "$k" "$d"
	expect_eq "unlabelled files, killed at fsetxattr #$k: one file has security.ima only" \
		1 "$(ima_only "$d")"
	check_round "unlabelled files, killed at fsetxattr #$k"
done

# Labelled files whose content then changed: every file of the directory
# needs both writes again.
U label -r "$R"
expect_eq "a complete label" 0 $?
for k in 2 10 40; do
	i=$((i + 1))
	d=$R/d$i
	for f in "$d"/*; do echo "changed $RANDOM" >>"$f"; done
	(cd "$R" && sha256sum -- "${FILES[@]}") >"$T/manifest"
	kill_at "$k" "$d"
	# Before the kill: relabelled, passing; the killed one: new security.ima
	# beside the old security.evm; after it: old labels, changed content.
	json=$(U verify -r -v --json "$d")
	expect_eq "changed files, killed at fsetxattr #$k: one has a new security.ima beside a stale security.evm and fails invalid-HMAC" \
		1 "$(jq '[.results[] | select(.cause == "invalid-HMAC")] | length' <<<"$json")"
	expect_eq "changed files, killed at fsetxattr #$k: the ones before it pass" \
		$((k / 2 - 1)) "$(jq '[.results[] | select(.ok and .type == "file")] | length' <<<"$json")"
	expect_eq "changed files, killed at fsetxattr #$k: the ones after it fail invalid-hash" \
		$((100 - k / 2)) "$(jq '[.results[] | select(.cause == "invalid-hash")] | length' <<<"$json")"
	check_round "changed files, killed at fsetxattr #$k"
done

# ---- the next complete run finishes the job -------------------------------------

U label -r "$R"
expect_eq "a second, complete label exits 0" 0 $?
out=$(U verify -r "$R")
expect_eq "then verify exits 0" 0 $?
expect_match "then every object passes" " 0 failed, 0 errors" "$out"
expect_eq "reference: every file is rightly labelled" "$NFILES" \
	"$(python3 "$TESTS_DIR/evm_ref_check.py" --key "$KEY" --manifest "$T/manifest" "$R" | grep -c '^GOOD')"
