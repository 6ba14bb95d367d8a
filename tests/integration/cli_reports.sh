#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Reports that never mislead (label, verify, clear, sign, hmac, ima-hash):
#  - a report lost to a full disk exits 2 and says why;
#  - names that are not UTF-8 (overlong forms, C0/C1 leads, surrogates,
#    code points above U+10FFFF, a byte 0xff beside the four characters
#    \xff) give strict JSON whose path/path_b64 give back the exact bytes,
#    and text lines that decode back to them, no two objects alike;
#  - verify's output is sorted and the same with -j1 and -j8;
#  - every --json object of every command has the same keys; --ndjson
#    parses line by line; -q prints failures only;
#  - md5 and sha1 digests and signatures: a warning when labelling,
#    signing and verifying, a failure below --min-hash.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"

for tool in python3 jq openssl; do
	command -v $tool >/dev/null || { fail "$tool is installed (scripts/install-deps.sh)"; exit 1; }
done
KEY=$T/key
make_key "$KEY"
HK=(--hmac-key "raw:$KEY")

# ---- write errors ------------------------------------------------------------------------

W=$T/w
mkdir -p "$W/d"
echo one >"$W/a"
echo two >"$W/d/b"
"$UEVM" label -r "${HK[@]}" "$W"
full() {	# name cmd...: exit 2 and the cause on stderr when stdout is full
	local name=$1 rc
	shift
	"$@" >/dev/full 2>"$T/full.err"
	rc=$?
	expect_eq "$name >/dev/full: exit 2 and 'write error: No space left on device'" \
		"2 1" "$rc $(grep -c '^uevm: write error: No space left on device$' "$T/full.err")"
}
full "verify --json" "$UEVM" verify -r --json "${HK[@]}" "$W"
full "verify (text)" "$UEVM" verify -r "${HK[@]}" "$W"
full "verify --ndjson -v" "$UEVM" verify -r -v --ndjson "${HK[@]}" "$W"
full "ima-hash" "$UEVM" ima-hash "$W/a"
full "hmac" "$UEVM" hmac "${HK[@]}" "$W/a"
full "label -v" "$UEVM" label -r -v "${HK[@]}" "$W"
full "uevm --help" "$UEVM" --help
"$UEVM" verify -r "${HK[@]}" "$W" >"$T/ok.out" 2>"$T/ok.err"
expect_eq "... the same verify to a file: exit 0, nothing on stderr" "0 " "$? $(cat "$T/ok.err")"
# Nothing written: a closed stdout is no error (as coreutils).
"$UEVM" label -r "${HK[@]}" "$W" >&- 2>"$T/closed.err"
expect_eq "label with stdout closed and nothing to print: exit 0" "0 " "$? $(cat "$T/closed.err")"

# ---- names that are not UTF-8 ------------------------------------------------------------

R=$T/names
mkdir -p "$R"
python3 - "$R" <<-'EOF'
	import os, sys
	root = os.fsencode(sys.argv[1])
	names = [b"overlong\xe0\x80\x8a", b"c0\xc0\xaf", b"c1\xc1\xbf", b"surr\xed\xa0\x80",
	         b"big\xf4\x90\x80\x80", b"f5\xf5\x80\x80\x80", b"ff\xff", b"ff\\xff",
	         b"ff\\\\xff", b"fffd\xef\xbf\xbd", b"new\nline", b'quo"te', b"back\\", b"ok-\xc3\xa9",
	         b"bidi\xe2\x80\xae", b"csi\xc2\x9b", b"bs\\u009b", b"tab\tx"]
	for n in names:
	    with open(os.path.join(root, n), "wb") as f:
	        f.write(n)
	os.mkdir(os.path.join(root, b"dir\xff"))
	with open(os.path.join(root, b"dir\xff", b"in\xc0\x80"), "wb") as f:
	    f.write(b"x")
	os.symlink(b"tgt\xff\\xff\xed\xa0\x80", os.path.join(root, b"link"))
	os.symlink(b"/abs\xff", os.path.join(root, b"abslink"))
	EOF
"$UEVM" label -r "${HK[@]}" "$R" 2>"$T/err"
expect_eq "label -r of the odd names: exit 0" 0 $?

# decode.py KIND FILE ROOT: check a report against the tree's real names.
cat >"$T/decode.py" <<-'EOF'
	import base64, json, os, re, sys
	kind, path, root = sys.argv[1], sys.argv[2], os.fsencode(sys.argv[3])
	want = {root}
	for d, dirs, files in os.walk(root):
	    for n in dirs + files:
	        want.add(os.path.join(d, n))
	data = open(path, "rb").read()
	data.decode("utf-8")            # the whole report is strict UTF-8
	errs = []
	if kind == "json":
	    doc = json.loads(data.decode("utf-8"), parse_constant=lambda c: 1 / 0)
	    got, keys = [], set()
	    for r in doc["results"]:
	        keys.add((r["path"], r["path_b64"]))
	        raw = base64.b64decode(r["path_b64"], validate=True) if r["path_b64"] is not None \
	            else r["path"].encode("utf-8")
	        if r["path_b64"] is None and "\ufffd" in r["path"] and b"fffd" not in raw:
	            errs.append("U+FFFD without path_b64: %r" % raw)
	        got.append(raw)
	        if r["type"] == "symlink":
	            t = base64.b64decode(r["target_b64"]) if r["target_b64"] is not None \
	                else r["target"].encode("utf-8")
	            if t != os.readlink(raw):
	                errs.append("target of %r: %r" % (raw, t))
	    if len(keys) != len(got):
	        errs.append("two objects share a (path, path_b64)")
	else:
	    esc = re.compile(rb"\\(\\|n|t|r|x[0-9a-f]{2}|u[0-9a-f]{4})")
	    def unescape(m):
	        e = m.group(1)
	        if e == b"\\": return b"\\"
	        if e in (b"n", b"t", b"r"): return {b"n": b"\n", b"t": b"\t", b"r": b"\r"}[e]
	        if e[:1] == b"x": return bytes([int(e[1:], 16)])
	        return chr(int(e[1:], 16)).encode("utf-8")
	    got = []
	    for line in data.split(b"\n"):
	        m = re.match(rb"^OK (.*): (?:pass|no_xattrs: no EVM-protected xattr)$", line)
	        if not m:
	            continue
	        if re.search(rb"\\(?!\\|n|t|r|x[0-9a-f]{2}|u[0-9a-f]{4})", m.group(1).replace(b"\\\\", b"")):
	            errs.append("stray backslash in %r" % line)
	        got.append(esc.sub(unescape, m.group(1)))
	if sorted(got) != sorted(want):
	    errs.append("names differ: missing %r extra %r" % (sorted(want - set(got)), sorted(set(got) - want)))
	if len(set(got)) != len(got):
	    errs.append("a name listed twice")
	print("\n".join(errs))
	EOF
"$UEVM" verify -r -v --json "${HK[@]}" "$R" >"$T/names.json" 2>"$T/err"
expect_eq "verify -v --json of the odd names: exit 0" 0 $?
check "... python3's json.load takes it" python3 -c 'import json,sys; json.load(sys.stdin)' <"$T/names.json"
check "... and jq" jq -e . "$T/names.json" >/dev/null
expect_eq "... every path gives back its exact bytes (path_b64 or path), targets too, none alike" \
	"" "$(python3 "$T/decode.py" json "$T/names.json" "$R" 2>&1)"
expect_eq "... the byte 0xff and the characters \\xff differ" \
	"ff\\xff None|ff� /w==" "$(python3 - "$T/names.json" <<-'EOF'
	import base64, json, sys
	out = []
	for r in json.load(open(sys.argv[1]))["results"]:
	    name = r["path"].rsplit("/", 1)[1]
	    if name in ("ff\\xff", "ff\ufffd"):
	        b = r["path_b64"] and base64.b64encode(base64.b64decode(r["path_b64"]).rsplit(b"/", 1)[1][2:]).decode()
	        out.append("%s %s" % (name, b))
	print("|".join(sorted(out)))
	EOF
)"
expect_eq "... a valid name has path_b64 null, an overlong one a path_b64" "null set" \
	"$(jq -r '[(.results[] | select(.path | endswith("/ok-é")) | .path_b64 // "null"), (.results[] | select(.path | startswith("'"$R"'/overlong")) | if .path_b64 then "set" else "null" end)] | join(" ")' "$T/names.json")"
"$UEVM" verify -r -v "${HK[@]}" "$R" >"$T/names.txt" 2>"$T/err"
expect_eq "verify -v (text) of the odd names: exit 0" 0 $?
expect_eq "... every line decodes back to its exact name (\\\\ \\n \\t \\xHH \\uXXXX), none alike" \
	"" "$(python3 "$T/decode.py" text "$T/names.txt" "$R" 2>&1)"
expect_match "... the overlong form is escaped byte by byte" '^OK .*/overlong\\xe0\\x80\\x8a: pass$' "$(cat "$T/names.txt")"
expect_match "... the surrogate too" '^OK .*/surr\\xed\\xa0\\x80: pass$' "$(cat "$T/names.txt")"
expect_match "... above U+10FFFF too" '^OK .*/big\\xf4\\x90\\x80\\x80: pass$' "$(cat "$T/names.txt")"
expect_match "... the characters \\xff with the backslash doubled" '^OK .*/ff\\\\xff: pass$' "$(cat "$T/names.txt")"
"$UEVM" verify -r "${HK[@]}" "$R" >"$T/names.txt" 2>&1
expect_match "the link's target in WARN is escaped like a path" \
	"^WARN .*/abslink: symlink to '/abs\\\\xff' leaves the tree \(absolute target\)$" "$(cat "$T/names.txt")"

# ---- stable order ------------------------------------------------------------------------

S=$T/big
python3 - "$S" <<-'EOF'
	import os, sys
	root = sys.argv[1]
	for a in range(10):
	    for b in ["x", "x-y", "x.z", "X", "x0"]:
	        d = os.path.join(root, "d%d" % a, b)
	        os.makedirs(d)
	        for i in range(40):
	            with open(os.path.join(d, "f%d" % i), "w") as f:
	                f.write("%d %s %d\n" % (a, b, i))
	EOF
"$UEVM" label -r -j 2 "${HK[@]}" "$S"
echo changed >>"$S/d3/x/f7"
echo changed >>"$S/d0/X/f12"
for j in 1 8; do
	"$UEVM" verify -r -v -j $j "${HK[@]}" "$S" "$W" >"$T/v$j.txt" 2>/dev/null
	"$UEVM" verify -r -v -j $j --json "${HK[@]}" "$S" "$W" >"$T/v$j.json" 2>/dev/null
	"$UEVM" verify -r -j $j "${HK[@]}" "$S" "$W" >"$T/f$j.txt" 2>/dev/null
done
expect_eq "verify -v of $(grep -c '^OK\|^FAIL' "$T/v1.txt") objects: -j1 and -j8 give the same text" \
	"" "$(cmp "$T/v1.txt" "$T/v8.txt" 2>&1)"
expect_eq "... the same JSON" "" "$(cmp "$T/v1.json" "$T/v8.json" 2>&1)"
expect_eq "... the same failures" "" "$(cmp "$T/f1.txt" "$T/f8.txt" 2>&1)"
expect_eq "... failures in walk order" "FAIL $S/d0/X/f12|FAIL $S/d3/x/f7" \
	"$(sed -n 's/: fail.*//p' "$T/f1.txt" | paste -sd'|')"
# The order of a walk with each directory's entries sorted by name (bytes),
# roots in the order given.
expect_eq "... in the order of a sorted walk, roots as given" "" "$(python3 - "$T/v1.json" "$S" "$W" <<-'EOF'
	import json, os, sys
	def walk(p):
	    yield p
	    if os.path.isdir(p) and not os.path.islink(p):
	        for n in sorted(os.listdir(os.fsencode(p))):
	            yield from walk(os.path.join(p, os.fsdecode(n)))
	want = [q for r in sys.argv[2:] for q in walk(r)]
	got = [r["path"] for r in json.load(open(sys.argv[1]))["results"]]
	if got != want:
	    print("first difference at %d" % next(i for i, (a, b) in enumerate(zip(got + [None], want + [None])) if a != b))
	EOF
)"
expect_eq "... the text lists them in the same order" \
	"$(jq -r '.results[].path' "$T/v1.json")" "$(sed -n 's/^\(OK\|FAIL\) \(.*\): [a-z_]*\( (.*\)\?\(: .*\)\?$/\2/p' "$T/v1.txt")"
"$UEVM" label -r -v -j 1 "${HK[@]}" "$S" >"$T/l1.txt" 2>/dev/null
"$UEVM" label -r -v -j 8 "${HK[@]}" "$S" >"$T/l8.txt" 2>/dev/null
expect_eq "label -v: -j1 and -j8 list the same lines" "" "$(cmp "$T/l1.txt" "$T/l8.txt" 2>&1)"
expect_eq "... in the sorted walk's order" "" \
	"$(diff <(sed 's/^labelled //' "$T/l1.txt") <(jq -r '.results[].path | select(startswith("'"$S"'"))' "$T/v1.json"))"

# ---- one schema --------------------------------------------------------------------------

K=$T/keys
mkdir "$K"
SIG_KEYS="rsa2048" make_sig_keys "$K"
C=$T/schema
mkdir -p "$C/d"
echo a >"$C/a"
echo b >"$C/d/b"
ln -s /etc "$C/l"
echo plain >"$T/plain"
"$UEVM" label -r -v --json "${HK[@]}" "$C" "$C/missing" >"$T/s.label" 2>/dev/null
"$UEVM" verify -r -v --json "${HK[@]}" "$C" "$C/missing" >"$T/s.verify" 2>/dev/null
"$UEVM" sign -r -v --json -k "$K/rsa2048.key" "$C" "$C/missing" >"$T/s.sign" 2>/dev/null
"$UEVM" hmac --json "${HK[@]}" "$C/a" "$T/plain" "$C/missing" >"$T/s.hmac" 2>/dev/null
"$UEVM" ima-hash --json "$C/a" "$C/d" >"$T/s.ima-hash" 2>/dev/null
"$UEVM" clear -r -v --json "$C" "$C/missing" >"$T/s.clear" 2>/dev/null
KEYS='cause,changes,detail,error,evm_status,ima_status,ok,path,path_b64,status,target,target_b64,type,value,warning,warning_detail,warnings'
for c in label verify sign hmac ima-hash clear; do
	expect_eq "$c --json: valid, \"command\": \"$c\", objects with every key, an error among them" \
		"$c|$KEYS|1" "$(jq -r '[.command, ([.results[] | keys | join(",")] | unique | join(" ")),
			([.results[] | select(.error)] | length)] | map(tostring) | join("|")' "$T/s.$c" 2>&1)"
	expect_eq "$c --json: summary with total, errors and warnings" "true" \
		"$(jq '.summary | has("total") and has("errors") and has("warnings")' "$T/s.$c")"
done
expect_eq "hmac --json: the value, and null with status none for a file without labels" \
	"computed 02 none null" "$(jq -r '[.results[0].status, .results[0].value[:2], .results[1].status, .results[1].value] | map(tostring) | join(" ")' "$T/s.hmac" 2>&1)"
expect_eq "ima-hash --json: the value is what the text gives" \
	"$("$UEVM" ima-hash "$C/a" | cut -d' ' -f1)" "$(jq -r '.results[0].value' "$T/s.ima-hash")"
expect_eq "verify --json: the link's warning in warnings and in warning/target" \
	"symlink-leaves-tree symlink-leaves-tree /etc" \
	"$(jq -r '.results[] | select(.type == "symlink") | "\(.warnings[0].code) \(.warning) \(.target)"' "$T/s.verify")"

"$UEVM" label -r "${HK[@]}" "$S"
"$UEVM" verify -r -v --ndjson "${HK[@]}" "$S" >"$T/nd" 2>/dev/null
NS=$(($(wc -l <"$T/nd") - 1))
expect_eq "verify --ndjson: every line a JSON object, one per object, then the summary" \
	"$NS $NS True" "$(python3 - "$T/nd" <<-'EOF'
	import json, sys
	lines = open(sys.argv[1], "rb").read().decode("utf-8").split("\n")
	assert lines[-1] == ""
	objs = [json.loads(l) for l in lines[:-1]]
	print(sum(1 for o in objs if "path" in o), objs[-1]["summary"]["total"],
	      objs[-1]["command"] == "verify")
	EOF
)"

# ---- -q ----------------------------------------------------------------------------------

echo changed >>"$S/d5/x/f1"
"$UEVM" verify -r -q "${HK[@]}" "$S" >"$T/q.out" 2>"$T/q.err"
expect_eq "verify -q with one tampered file: exit 1, its FAIL line only" \
	"1 FAIL $S/d5/x/f1: fail (invalid-hash): content does not match its sha256 hash" "$? $(cat "$T/q.out" "$T/q.err")"
"$UEVM" verify -r -q --json "${HK[@]}" "$S" >"$T/q.json"
expect_eq "verify -q --json: the failure, and the summary" "1 $NS" \
	"$(jq -r '"\(.results | length) \(.summary.total)"' "$T/q.json")"
"$UEVM" label -r -q "${HK[@]}" "$S" >"$T/q.out" 2>"$T/q.err"
expect_eq "label -q: exit 0, nothing printed" "0 " "$? $(cat "$T/q.out" "$T/q.err")"
expect_rc "verify -v -q: a usage error" 2 "$UEVM" verify -r -v -q "${HK[@]}" "$S"
expect_rc "verify --json --ndjson: a usage error" 2 "$UEVM" verify -r --json --ndjson "${HK[@]}" "$S"

# ---- weak digests ------------------------------------------------------------------------

M=$T/weak
mkdir -p "$M/d"
for i in 1 2 3; do echo "md5 $i" >"$M/f$i"; done
echo sha1 >"$M/d/s"
"$UEVM" label -r -a md5 "${HK[@]}" "$M" 2>"$T/w.err"
expect_eq "label -a md5: exit 0, one warning for the run" "0 1" "$? $(grep -c 'md5 is a weak digest' "$T/w.err")"
"$UEVM" label -a sha1 "${HK[@]}" "$M/d/s" 2>"$T/w.err"
expect_eq "label -a sha1: one warning" 1 "$(grep -c 'sha1 is a weak digest' "$T/w.err")"
expect_match "... security.ima in the old sha1 form (0x01)" '^01' "$(xattr_hex security.ima "$M/d/s")"
"$UEVM" verify -r "${HK[@]}" "$M" >"$T/w.out" 2>&1
expect_eq "verify: exit 0, a WARN line per weak digest, counted" "0|WARN $M/d/s: weak digest sha1 in security.ima|WARN $M/f1: weak digest md5 in security.ima|WARN $M/f2: weak digest md5 in security.ima|WARN $M/f3: weak digest md5 in security.ima|4" \
	"$?|$(grep '^WARN' "$T/w.out" | paste -sd'|')|$(awk '$1 == "warnings" { print $2 }' "$T/w.out")"
"$UEVM" verify -r --json "${HK[@]}" "$M" >"$T/w.json"
expect_eq "verify --json: warnings with code weak-digest" "4 4" \
	"$(jq -r '"\([.results[] | select(.warnings[0].code == "weak-digest" and .ok)] | length) \(.summary.warnings)"' "$T/w.json")"
"$UEVM" verify -r --min-hash sha256 --json "${HK[@]}" "$M" >"$T/w.json"
expect_eq "verify --min-hash sha256: exit 1, each fails with cause weak-hash" "1 4 4" \
	"$? $([ -s "$T/w.json" ] && jq -r '"\([.results[] | select(.cause == "weak-hash" and (.ok | not) and .status == "fail")] | length) \(.summary.failed)"' "$T/w.json")"
"$UEVM" verify -r --min-hash sha1 "${HK[@]}" "$M" >"$T/w.out" 2>&1
expect_eq "verify --min-hash sha1: exit 1, the md5 ones fail, the sha1 one warns" \
	"1|3|WARN $M/d/s: weak digest sha1 in security.ima" \
	"$?|$(grep -c "^FAIL $M/f[123]: fail (weak-hash): security.ima uses md5, weaker than --min-hash sha1$" "$T/w.out")|$(grep '^WARN' "$T/w.out")"
expect_rc "verify --min-hash nonsense: a usage error" 2 "$UEVM" verify --min-hash nonsense "${HK[@]}" "$M"
"$UEVM" label -r "${HK[@]}" "$M" 2>"$T/w.err"
expect_eq "label with the default sha256: no warning; verify --min-hash sha256 then passes" "0 " \
	"$("$UEVM" verify -r --min-hash sha256 "${HK[@]}" "$M" >/dev/null; echo $?) $(cat "$T/w.err")"

# ---- errors in text mode stay on standard error -------------------------------------------

for c in label clear; do
	"$UEVM" $c $([ $c = label ] && echo "${HK[@]}") "$T/nonexistent" >"$T/e.out" 2>"$T/e.err"
	expect_eq "$c of a missing path: exit 2, nothing on stdout, one message naming it" \
		"2||1" "$?|$(cat "$T/e.out")|$(grep -c "^uevm: $T/nonexistent: cannot open: " "$T/e.err")"
done

# ---- a weak digest in an IMA signature ---------------------------------------------------

G=$T/sigweak
mkdir -p "$G"
echo signed >"$G/s"
"$UEVM" sign -a sha1 --imasig --evm -k "$K/rsa2048.key" "$G/s" 2>"$T/g.err"
expect_eq "sign -a sha1: exit 0, one warning" "0 1" "$? $(grep -c 'sha1 is a weak digest' "$T/g.err")"
expect_match "... an IMA signature with sha1 (v2 header, algo 2)" '^030202' "$(xattr_hex security.ima "$G/s")"
"$UEVM" verify --cert "$K/rsa2048.der" "$G/s" >"$T/g.out" 2>&1
expect_eq "verify: exit 0, the signatures' weak digests are warned about" \
	"0|WARN $G/s: weak digest sha1 in security.ima|WARN $G/s: weak digest sha1 in security.evm" \
	"$?|$(grep '^WARN' "$T/g.out" | paste -sd'|')"
"$UEVM" verify --min-hash sha256 --cert "$K/rsa2048.der" "$G/s" >"$T/g.out" 2>&1
expect_eq "verify --min-hash sha256: the sha1 signature fails (weak-hash)" "1 1" \
	"$? $(grep -c "^FAIL $G/s: fail (weak-hash): security.ima uses sha1" "$T/g.out")"
