#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `uevmd --check`, the readiness check before mode = enforce: on a
# loop-mounted ext4 with labelled files, an unlabelled one, one whose
# content changed and one whose owner changed offline, it loads the
# configuration, key and policy as uevmd does and reports, per cause, the
# files uevmd would refuse - and they are exactly those the running daemon
# refuses in mode enforce.  Exit 0/1/2, --json, --list, --under, --no-walk.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
mkdir -p "$MNT/ok/sub" "$MNT/bad" "$MNT/bin"
for f in a b sub/c; do echo "good $f" >"$MNT/ok/$f"; done
for f in unlabelled content owner; do echo "file $f" >"$MNT/bad/$f"; done
cp "$(type -P true)" "$MNT/bin/true"
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT/ok" "$MNT/bin" "$MNT/bad/content" "$MNT/bad/owner"
expect_eq "the image is labelled" 0 $?
echo tampered >>"$MNT/bad/content"
chown 4321 "$MNT/bad/owner"
write_conf "mode = log"

# ---- a tree with three bad files -------------------------------------------------
out=$("$UEVMD" -c "$CONF" --check 2>"$T/err")
expect_eq "--check exits 1 when files would be refused" 1 $?
expect_match "  counts them" "would be refused if enforcing: 3$" "$out"
expect_match "  the unlabelled one: missing-hash" "^refused: $MNT/bad/unlabelled \(missing-hash\)$" "$out"
expect_match "  the changed content: invalid-hash" "^refused: $MNT/bad/content \(invalid-hash\)$" "$out"
expect_match "  the changed owner: invalid-HMAC" "^refused: $MNT/bad/owner \(invalid-HMAC\)$" "$out"
expect_match "  per cause" "^  invalid-HMAC: 1$" "$out"
expect_match "  walked from the mount" "^checked: $MNT$" "$out"
if grep -q "refused: $MNT/ok\|refused: $MNT/bin" <<<"$out"; then
	fail "  good files are not listed" "$out"
else
	pass "  good files are not listed"
fi

json=$("$UEVMD" -c "$CONF" --check --json --list 2 2>/dev/null)
expect_eq "--check --json: exit 1" 1 $?
expect_eq "  refused 3, 2 listed, truncated" "3 2 True" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["refused"], len(d["paths"]), d["truncated"])' "$json")"
expect_eq "  causes" "invalid-HMAC=1 invalid-hash=1 missing-hash=1" \
	"$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(" ".join("%s=%d" % kv for kv in sorted(d["causes"].items())))' "$json")"
expect_eq "  files counted (6 regular files + the binary)" 7 \
	"$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["files"])' "$json")"

out=$("$UEVMD" -c "$CONF" --check --under "$MNT/ok" 2>&1)
expect_eq "--under a labelled directory: exit 0" 0 $?
expect_match "  nothing would be refused" "would be refused if enforcing: 0$" "$out"
out=$("$UEVMD" -c "$CONF" --check --under "$T" 2>&1)
expect_eq "--under a directory off the watched filesystems: exit 2" 2 $?
expect_match "  says why" "not on a watched filesystem" "$out"
out=$("$UEVMD" -c "$CONF" --check --no-walk 2>&1)
expect_eq "--no-walk: loads only, exit 0" 0 $?
expect_match "  and says so" "policy load \(4 rules\)" "$out"
expect_rc "--json without --check: usage error (2)" 2 "$UEVMD" -c "$CONF" --json
expect_rc "--list NaN: usage error (2)" 2 "$UEVMD" -c "$CONF" --check --list x

# ---- configuration errors: exit 2 ---------------------------------------------------
out=$("$UEVMD" -c "$CONF" -o "key=raw:$T/nokey" --check 2>&1)
expect_eq "a missing key: exit 2" 2 $?
expect_match "  naming it" "nokey" "$out"
echo "appraise func=NO_SUCH_HOOK" >"$T/badpolicy"
json=$("$UEVMD" -c "$CONF" -o "policy=$T/badpolicy" --check --json 2>"$T/err")
expect_eq "a bad policy: exit 2" 2 $?
expect_match "  the line and token on stderr" "line 1.*NO_SUCH_HOOK" "$(cat "$T/err")"
expect_eq "  --json still prints one object" 2 \
	"$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["exit"])' "$json")"

# ---- the verdicts are the daemon's ---------------------------------------------------
"$UEVM" label --hmac-key "raw:$T/key" "$MNT/bad/unlabelled"
write_conf "mode = enforce"
out=$("$UEVMD" -c "$CONF" --check 2>&1)
expect_match "after labelling one, 2 would be refused" "would be refused if enforcing: 2$" "$out"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "uevmd refuses the changed content" EPERM "$(open_result "$MNT/bad/content")"
expect_eq "uevmd refuses the changed owner" EPERM "$(open_result "$MNT/bad/owner")"
expect_eq "uevmd allows the newly labelled file" ok "$(open_result "$MNT/bad/unlabelled")"
expect_eq "uevmd runs the binary" ok "$(exec_result "$MNT/bin/true")"
stop_uevmd

# ---- a path longer than PATH_MAX, named with a space ----------------------------------
# Its audit record (hex for the space: 11,000 characters of name) is cut
# to fit the record, keeping the fields after it; the cut once ran past
# the record's buffer (an attack review; AddressSanitizer: the san build).
seg=$(printf '%0250d' 0)
deep=$MNT/deep
for _ in $(seq 22); do deep=$deep/$seg; done
# Made a directory at a time (a path past PATH_MAX cannot be named whole).
(cd "$MNT" && mkdir deep && cd deep &&
	for _ in $(seq 22); do mkdir "$seg" && cd "$seg" || exit 1; done &&
	echo "unlabelled, deep" >"a b")
expect_eq "a file whose path is longer than PATH_MAX (${#deep} bytes) is made" 0 $?
out=$("$UEVMD" -c "$CONF" --check --under "$MNT/deep" 2>&1)
expect_eq "--check over it exits 1 (refused)" 1 $?
expect_match "  and names it: missing-hash" "^refused: $deep/a b \(missing-hash\)$" "$out"
rm -rf "$MNT/deep"
