#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile trees for `uevm label` and `uevm verify`, part 4: file names.
# Names with a newline, CR, ESC sequences (colours, cursor moves, a title
# change), DEL, C1 controls (U+009B CSI), bidi overrides, backslashes and
# invalid UTF-8:
#  - they are labelled and verified like any name;
#  - stdout and stderr of label and verify (text, errors, -v) hold no raw
#    control byte: one line per object, names escaped;
#  - --json is valid JSON (python3 -m json.tool) and gives each valid UTF-8
#    name back exactly;
#  - messages quoting a library error stay escaped too;
#  - the audit log of uevmfs names such a file without a raw control byte.
source "$(dirname "$0")/../lib.sh"

for tool in python3 jq setpriv; do
	command -v $tool >/dev/null || { fail "$tool is installed (scripts/install-deps.sh)"; exit 1; }
done
KEY=$T/key
make_key "$KEY"
R=$T/names
mkdir -p "$R"
# Each name: a python bytes literal.
NAMES=(
	"b'new\\nline'"
	"b'car\\rriage'"
	"b'\\x1b[31mred\\x1b[0m'"
	"b'\\x1b]0;owned\\x07title'"
	"b'\\x1b[2J\\x1b[Hclear'"
	"b'del\\x7f'"
	"b'csi\\xc2\\x9b31m'"
	"b'bidi\\xe2\\x80\\xaetxt.exe'"
	"b'back\\\\slash'"
	"b'bad\\xff\\xfeutf8'"
	"b'tab\\there'"
	"b'\\xe2\\x80\\xa8lsep'"
	"b'ok-\\xc3\\xa9t\\xc3\\xa9'"
)
mkname() {	# dir pyname content
	python3 -c 'import os, sys
p = os.fsencode(sys.argv[1]) + b"/" + eval(sys.argv[2])
with open(p, "wb") as f: f.write(sys.argv[3].encode())' "$@"
}
i=0
for n in "${NAMES[@]}"; do
	mkname "$R" "$n" "content $i"
	i=$((i + 1))
done
mkdir "$R/$(printf 'dir\033[1mbold')"
mkname "$R/$(printf 'dir\033[1mbold')" "b'in\\nside'" inside
nobj=$((${#NAMES[@]} + 3))	# the names, the directory, its file, the root

# raw_controls FILE: the offending bytes' offsets, or nothing.  A newline is
# allowed only as the line end; everything else a terminal acts on is not.
raw_controls() {
	python3 - "$1" <<-'EOF'
	import re, sys
	data = open(sys.argv[1], "rb").read()
	bad = re.compile(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]")
	print(" ".join("%d:%r" % (m.start(), m.group()) for m in bad.finditer(data))[:300])
	EOF
}

# ---- label and verify --------------------------------------------------------------

"$UEVM" label -r -v --hmac-key "raw:$KEY" "$R" >"$T/out" 2>"$T/err"
expect_eq "label -r of the hostile names: exit 0" 0 $?
expect_match "... all $nobj objects labelled" "labelled $nobj objects, 0 errors" "$(cat "$T/err")"
expect_eq "label: no raw control byte on stdout or stderr" "" "$(raw_controls "$T/out")$(raw_controls "$T/err")"
"$UEVM" verify -r -v --hmac-key "raw:$KEY" "$R" >"$T/out" 2>"$T/err"
expect_eq "verify -r -v: exit 0" 0 $?
expect_eq "verify -r -v: no raw control byte on stdout or stderr" "" "$(raw_controls "$T/out")$(raw_controls "$T/err")"
expect_eq "verify -r -v: one OK line per object" "$nobj" "$(grep -c '^OK ' "$T/out")"
expect_eq "verify -r -v: every line is a result or the summary" "" \
	"$(grep -vE '^(OK|FAIL|ERROR) |^Summary: |^  [a-z_]+ +[0-9]+$' "$T/out")"
expect_match "verify -r -v: the ESC is shown as \\x1b, the newline as \\n" \
	'^OK .*/\\x1b\[31mred\\x1b\[0m: pass$' "$(cat "$T/out")"
expect_match "... the newline as \\n" '^OK .*/new\\nline: pass$' "$(cat "$T/out")"
expect_match "... C1 CSI and the bidi override as \\u009b and \\u202e" \
	'^OK .*/csi\\u009b31m: pass$' "$(grep -F 'csi' "$T/out")"
expect_match "... the bidi override as \\u202e" '^OK .*/bidi\\u202etxt.exe: pass$' "$(grep -F bidi "$T/out")"
expect_match "... invalid UTF-8 as \\xff\\xfe" '^OK .*/bad\\xff\\xfeutf8: pass$' "$(grep -F utf8 "$T/out")"
expect_match "... a backslash doubled" '^OK .*/back\\\\slash: pass$' "$(grep -F slash "$T/out")"
expect_match "... and valid UTF-8 kept" '^OK .*/ok-été: pass$' "$(grep -F ok- "$T/out")"

"$UEVM" verify -r -v --json --hmac-key "raw:$KEY" "$R" >"$T/json" 2>"$T/err"
expect_eq "verify --json: exit 0" 0 $?
check "verify --json: python3 -m json.tool accepts it" python3 -m json.tool "$T/json" /dev/null
expect_eq "verify --json: no raw control byte" "" "$(raw_controls "$T/json")$(raw_controls "$T/err")"
expect_eq "verify --json: $nobj results" "$nobj" "$(jq '.results | length' "$T/json")"
# Every valid UTF-8 name comes back exactly (python compares the bytes).
missing=$(python3 - "$T/json" "$R" <<-'EOF'
	import json, os, sys
	res = json.load(open(sys.argv[1]))["results"]
	got = {r["path"] for r in res}
	for dirpath, dirs, files in os.walk(os.fsencode(sys.argv[2])):
	    for n in dirs + files:
	        p = os.path.join(dirpath, n)
	        try:
	            s = p.decode("utf-8")
	        except UnicodeDecodeError:
	            continue
	        if s not in got:
	            print(repr(p))
	EOF
)
expect_eq "verify --json: every valid UTF-8 name is given back exactly" "" "$missing"
# Not UTF-8: path has U+FFFD for each bad byte (strict JSON), path_b64 the
# exact bytes (it used to be \xNN, which a name with those characters shared).
expect_eq "verify --json: the invalid UTF-8 name: U+FFFD in path, its bytes in path_b64" \
	"$R/bad��utf8 $(printf '%s/bad\xff\xfeutf8' "$R" | base64 -w0)" \
	"$(jq -r '.results[] | select(.path | contains("utf8")) | "\(.path) \(.path_b64)"' "$T/json")"

# ---- failures and errors name the files escaped ------------------------------------------

RED="$R/$(printf '\033[31mred\033[0m')"
echo tampered >>"$RED"
chmod 000 "$R/$(printf 'del\177')"
DROPDAC=(setpriv --bounding-set=-dac_override,-dac_read_search
	--inh-caps=-dac_override,-dac_read_search)
"${DROPDAC[@]}" "$UEVM" verify -r -v --hmac-key "raw:$KEY" "$R" >"$T/out" 2>"$T/err"
expect_eq "verify with a tampered and an unreadable hostile name: exit 1" 1 $?
expect_eq "... no raw control byte on stdout or stderr" "" "$(raw_controls "$T/out")$(raw_controls "$T/err")"
expect_match "... the tampered one: FAIL, escaped" '^FAIL .*/\\x1b\[31mred\\x1b\[0m: fail \(invalid-hash\)' "$(cat "$T/out")"
expect_match "... the unreadable one: ERROR, escaped, with the cause" \
	'^ERROR .*/del\\x7f: cannot verify: .*Permission denied' "$(cat "$T/out")"
"${DROPDAC[@]}" "$UEVM" label -r --hmac-key "raw:$KEY" "$R" >"$T/out" 2>"$T/err"
expect_eq "label with an unreadable hostile name: exit 2" 2 $?
expect_eq "... no raw control byte on stdout or stderr" "" "$(raw_controls "$T/out")$(raw_controls "$T/err")"
expect_match "... the error names it escaped, with the cause" \
	'^uevm: .*/del\\x7f: cannot open: .*Permission denied$' "$(cat "$T/err")"
expect_eq "... one line on stderr" 1 "$(wc -l <"$T/err")"
chmod 644 "$R/$(printf 'del\177')"
# A missing path given on the command line, and a message quoting it.
"$UEVM" verify --hmac-key "raw:$KEY" "$R/$(printf 'gone\033[5m\n')" >"$T/out" 2>"$T/err"
expect_eq "verify of a missing hostile path: no raw control byte" "" "$(raw_controls "$T/out")$(raw_controls "$T/err")"
"$UEVM" label --hmac-key "$(printf 'raw:%s/no\033[31mkey' "$T")" "$R" >"$T/out" 2>"$T/err"
expect_eq "label with a hostile missing key path: exit 2, no raw control byte" "2 " \
	"$? $(raw_controls "$T/out")$(raw_controls "$T/err")"
expect_match "... the error names it escaped" 'cannot open key file .*/no\\x1b\[31mkey' "$(cat "$T/err")"
"$UEVM" label --hmac-key "$(printf '%s/no\033[31mkey' "$T")" "$R" >"$T/out" 2>"$T/err"
expect_eq "label with a hostile plain key path (no form): exit 2, no raw control byte" "2 " \
	"$? $(raw_controls "$T/out")$(raw_controls "$T/err")"

# ---- uevmfs audit log -------------------------------------------------------------------

source "$TESTS_DIR/uevmfs-lib.sh"
S=$T/src
M=$T/mnt
mkdir -p "$S"
BAD=$(printf 'evil\033[31m\nname\r')
echo "to be tampered" >"$S/$BAD"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S"
echo "tampered" >>"$S/$BAD"
if ufs_mount "$S" "$M" "key=raw:$KEY,ml=$T/ml,audit_log=$T/audit.log,nosyslog"; then
	check "uevmfs: the tampered hostile name is refused" test "$(cat "$M/$BAD" 2>&1 >/dev/null | grep -c 'Permission denied')" = 1
	ufs_umount "$M"
	check "uevmfs: an audit record was written" grep -q 'cause=invalid-hash' "$T/audit.log"
	expect_eq "uevmfs: the audit log holds no raw control byte" "" "$(raw_controls "$T/audit.log")"
	expect_match "uevmfs: the record names the file in hex, as the kernel does" \
		"name=[0-9A-F]*$(printf '%s' "$BAD" | od -An -tx1 | tr -d ' \n' | tr a-f A-F)" \
		"$(grep 'cause=invalid-hash' "$T/audit.log")"
else
	fail "uevmfs mounts"
fi
