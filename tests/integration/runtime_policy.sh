#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevm runtime-policy create: Keylime runtime policies (schema version 1)
# checked by a validator written here from Keylime's schema
# (keylime/ima/ima.py RUNTIME_POLICY_SCHEMA, file_signatures.py
# IMA_KEYRING_JSON_SCHEMA), Python stdlib only:
#  - from a labelled tree: every digest equals sha256sum's, names are
#    absolute, --map/--prefix rename them, --exclude leaves files out and
#    lands in "excludes" (Python regexes), --hash agrees, two runs (1 and
#    4 threads) are byte-equal, --timestamp follows SOURCE_DATE_EPOCH;
#  - from ASCII lists of the three templates (ima, ima-ng, ima-sig) made
#    by `uevm measurements add`, and a sha256-bank list: the list's
#    digests, its boot_aggregate, ima.log_hash_alg from its bank;
#  - --cert: a signed file is covered by "verification-keys" (the
#    certificate's key, base64 DER, keyid from its subject key id) and not
#    listed; RSA and EC; a file whose content no longer matches its
#    signature fails (exit 1, no output); a --sigv3 signature is listed
#    by digest with a warning;
#  - bad input: exit 2 naming the file and cause.
# The evaluation of lists against these policies: runtime_policy_check.sh.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"
unset UEVM_TCTI

KEY=$T/key
make_key "$KEY"
S=$T/src
mkdir -p "$S/bin" "$S/etc" "$S/log" "$S/lib"
printf '#!/bin/sh\necho hi\n' >"$S/bin/prog"
echo "config" >"$S/etc/conf"
echo "spaced" >"$S/etc/with space"
echo "log line" >"$S/log/app.log"
echo "library" >"$S/lib/libx.so"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null

# The schema, as Keylime's verifier validates a policy, and what this
# generator promises on top: sorted keys, digests of one length.
cat >"$T/schema.py" <<'EOF'
import base64, json, re, sys

def fail(msg):
    print("INVALID: " + msg)
    sys.exit(1)

def digests_object(name, v, hexlen):
    if not isinstance(v, dict):
        fail(name + " is not an object")
    for k, lst in v.items():
        if not isinstance(lst, list) or not lst:
            fail("%s[%r] is not a non-empty array" % (name, k))
        for d in lst:
            if not isinstance(d, str) or not re.match(r"^[0-9a-f]{40,128}$", d):
                fail("%s[%r]: %r is not lowercase hex" % (name, k, d))
            if hexlen and k != "boot_aggregate" and len(d) != hexlen:
                fail("%s[%r]: %r is not %d hex digits" % (name, k, d, hexlen))
        if lst != sorted(set(lst)):
            fail("%s[%r]: digests not sorted and unique" % (name, k))

text = open(sys.argv[1], encoding="utf-8").read()
hexlen = int(sys.argv[2]) if len(sys.argv) > 2 else 0
p = json.loads(text)
want = ["digests", "excludes", "ima", "ima-buf", "keyrings", "meta", "release",
        "verification-keys"]
if not isinstance(p, dict) or sorted(p) != want:
    fail("top-level keys: %r" % (sorted(p) if isinstance(p, dict) else p))
if list(p) != want:
    fail("top-level keys not in sorted order: %r" % list(p))
m = p["meta"]
if not isinstance(m, dict) or type(m.get("version")) is not int or m["version"] != 1:
    fail("meta.version is not 1")
if type(m.get("generator")) is not int or not 2 <= m["generator"] <= 3:
    fail("meta.generator is not 2 or 3 (0 and 1 read as an empty policy)")
if "timestamp" in m and not isinstance(m["timestamp"], str):
    fail("meta.timestamp is not a string")
if type(p["release"]) is not int or p["release"] < 0:
    fail("release is not an integer >= 0")
digests_object("digests", p["digests"], hexlen)
digests_object("keyrings", p["keyrings"], 0)
digests_object("ima-buf", p["ima-buf"], 0)
if not isinstance(p["excludes"], list) or not all(isinstance(x, str) for x in p["excludes"]):
    fail("excludes is not an array of strings")
for x in p["excludes"]:
    re.compile(x)
ima = p["ima"]
if not isinstance(ima, dict) or sorted(ima) != ["dm_policy", "ignored_keyrings", "log_hash_alg"]:
    fail("ima keys: %r" % ima)
if ima["log_hash_alg"] not in ("sha1", "sha256", "sha384", "sha512"):
    fail("ima.log_hash_alg %r" % ima["log_hash_alg"])
if ima["dm_policy"] is not None:
    fail("ima.dm_policy is not null")
if not isinstance(ima["ignored_keyrings"], list) or not all(isinstance(x, str) for x in ima["ignored_keyrings"]):
    fail("ima.ignored_keyrings is not an array of strings")
vk = p["verification-keys"]
if not isinstance(vk, str):
    fail("verification-keys is not a string")
if vk:
    kr = json.loads(vk)
    if not isinstance(kr, dict) or not isinstance(kr.get("keyids"), list) or not isinstance(kr.get("pubkeys"), list):
        fail("verification-keys: no keyids and pubkeys arrays")
    if not all(type(i) is int for i in kr["keyids"]) or len(kr["keyids"]) != len(kr["pubkeys"]):
        fail("verification-keys: keyids")
    for k in kr["pubkeys"]:
        if base64.b64decode(k, validate=True)[:1] != b"\x30":
            fail("verification-keys: a pubkey is not base64 DER")
print("VALID")
EOF

# valid POLICY [HEXLEN]
valid() { python3 "$T/schema.py" "$@"; }
# The digests as "HEX  NAME" lines, sorted, as sha256sum prints them.
cat >"$T/pairs.py" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
for k in sorted(p["digests"]):
    for d in p["digests"][k]:
        print("%s  %s" % (d, k))
EOF
pairs() { python3 "$T/pairs.py" "$1"; }
field() {	# POLICY PYTHON-EXPR on p
	python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print($2)" "$1"
}

# ---- a labelled tree ---------------------------------------------------------
check "create on a labelled tree exits 0" \
	"$UEVM" runtime-policy create -o "$T/p1.json" "$S"
expect_eq "the policy validates against the schema (sha256)" VALID "$(valid "$T/p1.json" 64)"
expect_eq "its digests are sha256sum's, under absolute names (spaces as _)" \
	"$(cd / && find "$S" -type f -print0 | sort -z | xargs -0 sha256sum | sed 's/ /_/3g' | sort)" \
	"$(pairs "$T/p1.json" | sort)"
expect_eq "no excludes, keys, keyrings; log_hash_alg sha1; no timestamp" \
	"[] '' {} {} sha1 False" \
	"$(field "$T/p1.json" '"%r %r %r %r %s %r" % (p["excludes"], p["verification-keys"], p["keyrings"], p["ima-buf"], p["ima"]["log_hash_alg"], "timestamp" in p["meta"])')"
"$UEVM" runtime-policy create -j 1 "$S" >"$T/p1-j1.json"
"$UEVM" runtime-policy create -j 4 "$S" >"$T/p1-j4.json"
check "deterministic: -o, stdout, 1 and 4 threads give the same bytes" \
	bash -c 'cmp -s "$1" "$2" && cmp -s "$1" "$3"' _ "$T/p1.json" "$T/p1-j1.json" "$T/p1-j4.json"
"$UEVM" runtime-policy create --hash "$S" >"$T/p1-hash.json"
check "--hash (every file hashed) gives the same policy" cmp -s "$T/p1.json" "$T/p1-hash.json"
"$UEVM" runtime-policy create -a sha512 "$S" >"$T/p1-512.json"
expect_eq "-a sha512: digests are sha512sum's" \
	"$(find "$S" -type f -print0 | sort -z | xargs -0 sha512sum | sed 's/ /_/3g' | sort)" \
	"$(pairs "$T/p1-512.json" | sort)"
expect_eq "-a sha512: the schema holds (128 hex digits)" VALID "$(valid "$T/p1-512.json" 128)"
expect_eq "a digest cross-checked with openssl dgst" \
	"$(openssl dgst -sha256 -r "$S/etc/conf" | cut -d' ' -f1)" \
	"$(field "$T/p1.json" "p['digests']['$S/etc/conf'][0]")"

# A file whose security.ima no longer matches its content (changed
# offline, labels kept): trusted without --hash, an error with it.
cp -a "$S" "$T/src2"
printf 'changed\n' >>"$T/src2/etc/conf"
expect_eq "without --hash the label's digest is listed" \
	"$(field "$T/p1.json" "p['digests']['$S/etc/conf'][0]")" \
	"$("$UEVM" runtime-policy create --prefix / "$T/src2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["digests"]["/etc/conf"][0])')"
out=$("$UEVM" runtime-policy create --hash -o "$T/p-bad.json" "$T/src2" 2>&1); rc=$?
expect_eq "--hash: a label that does not match the content: exit 1" 1 "$rc"
expect_match "--hash: the message names the file" "src2/etc/conf: security.ima does not match the content" "$out"
check "--hash: nothing written" test ! -e "$T/p-bad.json"

# Names: --map, --prefix, --exclude, --skip.
M=/mnt/app
"$UEVM" runtime-policy create --map "$S=$M" --exclude "$M/log/.*" --exclude '.*\.so$' \
	"$S" >"$T/p2.json"
expect_eq "--map/--exclude: valid" VALID "$(valid "$T/p2.json" 64)"
expect_eq "--map: names under the mount point; excluded files left out" \
	"$M/bin/prog $M/etc/conf $M/etc/with_space" \
	"$(field "$T/p2.json" '" ".join(sorted(p["digests"]))')"
expect_eq "--exclude: the regexes are the policy's excludes, sorted" \
	"['.*\\\\.so\$', '$M/log/.*']" "$(field "$T/p2.json" 'p["excludes"]')"
expect_eq "--map: the digests do not change" \
	"$(field "$T/p1.json" "p['digests']['$S/bin/prog']")" \
	"$(field "$T/p2.json" "p['digests']['$M/bin/prog']")"
"$UEVM" runtime-policy create --map "$S=/" "$S" >"$T/p3.json"
expect_eq "--map SRC=/: names from the tree's root" "/bin/prog /etc/conf /etc/with_space /lib/libx.so /log/app.log" \
	"$(field "$T/p3.json" '" ".join(sorted(p["digests"]))')"
"$UEVM" runtime-policy create --map "$S=/opt/a" --map "$S/etc=/etc" "$S" >"$T/p4.json"
expect_eq "--map: the longest SRC wins" "/etc/conf /etc/with_space /opt/a/bin/prog /opt/a/lib/libx.so /opt/a/log/app.log" \
	"$(field "$T/p4.json" '" ".join(sorted(p["digests"]))')"
"$UEVM" runtime-policy create --prefix /opt/app "$S/etc" "$S/bin/prog" >"$T/p5.json"
expect_eq "--prefix: each PATH operand at PREFIX (a file by its name)" \
	"/opt/app/conf /opt/app/prog /opt/app/with_space" \
	"$(field "$T/p5.json" '" ".join(sorted(p["digests"]))')"
(cd "$S" && "$UEVM" runtime-policy create --skip log --skip '*.so' .) >"$T/p6.json"
expect_eq "--skip: not walked, not in excludes; a relative PATH made absolute" \
	"$S/bin/prog $S/etc/conf $S/etc/with_space []" \
	"$(field "$T/p6.json" '" ".join(sorted(p["digests"])) + " " + str(p["excludes"])')"
"$UEVM" runtime-policy create --root "$S" /etc / >"$T/p6r.json"
expect_eq "--root: names as seen from inside the root" "/bin/prog /etc/conf /etc/with_space /lib/libx.so /log/app.log" \
	"$(field "$T/p6r.json" '" ".join(sorted(p["digests"]))')"
SOURCE_DATE_EPOCH=86400 "$UEVM" runtime-policy create --timestamp --release 7 "$S" >"$T/p7.json"
expect_eq "--timestamp (SOURCE_DATE_EPOCH) and --release" "1970-01-02 00:00:00 7" \
	"$(field "$T/p7.json" 'p["meta"]["timestamp"] + " " + str(p["release"])')"
expect_eq "--timestamp: still valid" VALID "$(valid "$T/p7.json" 64)"
BA=$(printf 'x' | sha256sum | cut -d' ' -f1)
"$UEVM" runtime-policy create --boot-aggregate "$BA" --log-hash-alg sha256 \
	--ignored-keyring .builtin_trusted_keys "$S" >"$T/p8.json"
expect_eq "--boot-aggregate, --log-hash-alg, --ignored-keyring" \
	"['$BA'] sha256 ['.builtin_trusted_keys']" \
	"$(field "$T/p8.json" '"%s %s %s" % (p["digests"]["boot_aggregate"], p["ima"]["log_hash_alg"], p["ima"]["ignored_keyrings"])')"

# ---- lists of the three templates -------------------------------------------
for tmpl in ima ima-ng ima-sig; do
	L=$T/list-$tmpl
	"$UEVM" measurements add --list "$L" --template "$tmpl" --hmac-key "raw:$KEY" \
		"$S/bin/prog" "$S/etc/conf" >/dev/null 2>&1
	"$UEVM" measurements show --ascii "$L" >"$L.txt"
	expect_match "$tmpl: the list has its template" " $tmpl " "$(sed -n 2p "$L.txt")"
	check "$tmpl: create --list exits 0" \
		"$UEVM" runtime-policy create --list "$L.txt" -o "$T/pl-$tmpl.json"
	if [ "$tmpl" = ima ]; then len=40 sum=sha1sum; else len=64 sum=sha256sum; fi
	expect_eq "$tmpl: valid ($len hex digits)" VALID "$(valid "$T/pl-$tmpl.json" $len)"
	expect_eq "$tmpl: the files' digests ($sum) and the list's boot_aggregate" \
		"$( (cd / && $sum "$S/bin/prog" "$S/etc/conf"
		     awk 'NR == 1 { sub(/^[a-z0-9]+:/, "", $4); print $4 "  " $5 }' "$L.txt") | sort)" \
		"$(pairs "$T/pl-$tmpl.json" | sort)"
	expect_eq "$tmpl: ima.log_hash_alg sha1 (the list's template digests)" sha1 \
		"$(field "$T/pl-$tmpl.json" 'p["ima"]["log_hash_alg"]')"
done
"$UEVM" measurements show --ascii --bank sha256 "$T/list-ima-ng" >"$T/list256.txt"
"$UEVM" runtime-policy create --list "$T/list256.txt" >"$T/pl-256.json"
expect_eq "a sha256-bank list: ima.log_hash_alg sha256" sha256 \
	"$(field "$T/pl-256.json" 'p["ima"]["log_hash_alg"]')"
expect_eq "a sha256-bank list: the same digests" "$(pairs "$T/pl-ima-ng.json")" "$(pairs "$T/pl-256.json")"
"$UEVM" runtime-policy create --list "$T/list-ima-ng.txt" --map "$S=$M" "$S/lib" >"$T/pl-mix.json"
expect_eq "a list and a tree together" 4 "$(field "$T/pl-mix.json" 'len(p["digests"])')"

# ---- signatures: --cert ------------------------------------------------------
K=$T/keys
mkdir "$K"
SIG_KEYS="rsa2048 p256" make_sig_keys "$K"
G=$T/signed
mkdir -p "$G"
echo "signed by rsa" >"$G/rsa"
echo "signed by ec" >"$G/ec"
echo "signed v3" >"$G/v3"
echo "plain" >"$G/plain"
echo "other key" >"$G/other"
"$UEVM" label -r --hmac-key "raw:$KEY" "$G" >/dev/null
"$UEVM" sign -k "$K/rsa2048.key" "$G/rsa" >/dev/null
"$UEVM" sign -k "$K/p256.key" "$G/ec" >/dev/null
"$UEVM" sign --sigv3 -k "$K/rsa2048.key" "$G/v3" >/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$K/other.key" -out "$K/other.pem" \
	-subj "/CN=not given" -days 30 2>/dev/null
"$UEVM" sign -k "$K/other.key" "$G/other" >/dev/null
out=$("$UEVM" runtime-policy create --cert "$K/rsa2048.pem" --cert "$K/p256.der" \
	-o "$T/ps.json" "$G" 2>&1); rc=$?
expect_eq "--cert: exit 0" 0 "$rc"
expect_eq "--cert: valid" VALID "$(valid "$T/ps.json" 64)"
expect_eq "--cert: files signed by the given keys are not listed; v3, other key, plain are" \
	"$G/other $G/plain $G/v3" "$(field "$T/ps.json" '" ".join(sorted(p["digests"]))')"
expect_match "--cert: a v3 signature is listed by digest, with a warning" \
	"$G/v3: a version 3 signature, which Keylime does not check" "$out"
keyids=$(for c in rsa2048 p256; do printf '%d\n' "0x$(skid_keyid "$K/$c.pem")"; done | sort -n | paste -sd' ')
expect_eq "verification-keys: the keyids are the certificates' SKIDs' last 4 bytes" "$keyids" \
	"$(field "$T/ps.json" '" ".join(str(i) for i in json.loads(p["verification-keys"])["keyids"])')"
pubs=$(for c in rsa2048 p256; do
	printf '%d %s\n' "0x$(skid_keyid "$K/$c.pem")" \
		"$(openssl x509 -in "$K/$c.pem" -noout -pubkey | openssl pkey -pubin -outform DER | base64 -w0)"
	done | sort -n | cut -d' ' -f2 | paste -sd' ')
expect_eq "verification-keys: the certificates' public keys (base64 DER), in keyid order" "$pubs" \
	"$(field "$T/ps.json" '" ".join(json.loads(p["verification-keys"])["pubkeys"])')"
"$UEVM" runtime-policy create --cert "$K/rsa2048.pub" "$G" >"$T/ps-pub.json" 2>/dev/null
expect_eq "--cert with a public key: the same keyid (computed from the key)" \
	"$(printf '%d' "0x$(skid_keyid "$K/rsa2048.pem")")" \
	"$(field "$T/ps-pub.json" 'json.loads(p["verification-keys"])["keyids"][0]')"
"$UEVM" runtime-policy create --cert "$K/rsa2048.pem" "$G" >"$T/ps2.json" 2>/dev/null
"$UEVM" runtime-policy create --cert "$K/rsa2048.pem" "$G" >"$T/ps3.json" 2>/dev/null
check "--cert: deterministic" cmp -s "$T/ps2.json" "$T/ps3.json"
cp -a "$G" "$T/signed2"
printf 'tampered\n' >>"$T/signed2/rsa"	# the signature stays
out=$("$UEVM" runtime-policy create --cert "$K/rsa2048.pem" -o "$T/ps-bad.json" "$T/signed2" 2>&1); rc=$?
expect_eq "a signed file changed since signing: exit 1" 1 "$rc"
expect_match "... naming the file and the signature" "signed2/rsa: security.ima: signature invalid" "$out"
check "... and no policy written" test ! -e "$T/ps-bad.json"

# ---- bad input ------------------------------------------------------------------
bad() {	# NAME REGEX ARGS...
	local name=$1 want=$2 out rc
	shift 2
	out=$("$UEVM" runtime-policy create "$@" 2>&1 >/dev/null); rc=$?
	expect_eq "$name: exit 2" 2 "$rc"
	expect_match "$name: says why" "$want" "$out"
}
bad "a lookahead in --exclude" "exclude '/a\(\?=b\)': group '\(\?=' is not supported" --exclude '/a(?=b)' "$S"
bad "a backreference in --exclude" "escape '.1' is not supported" --exclude '(a)\1' "$S"
bad "--map without =" "--map needs SRC=DST" --map /x "$S"
bad "--prefix with --map" "exclude each other" --prefix /a --map /b=/c "$S"
bad "a missing PATH" "cannot open" "$T/nonexistent"
bad "an unreadable --list" "nonexistent.txt: cannot read" --list "$T/nonexistent.txt"
bad "a binary --list" "not an ASCII measurement list" --list "$T/list-ima-ng"
sed '2s/ima-ng sha256:\(.\)/ima-ng sha256:0/' "$T/list-ima-ng.txt" >"$T/damaged.txt"
cmp -s "$T/damaged.txt" "$T/list-ima-ng.txt" && sed -i '2s/ima-ng sha256:0/ima-ng sha256:1/' "$T/damaged.txt"
bad "a --list with a wrong template digest" "damaged.txt: line 2: the template digest does not match" \
	--list "$T/damaged.txt"
bad "--cert that is not a key" "not an X.509 certificate or public key" --cert "$S/etc/conf" "$S"
bad "--boot-aggregate not hex" "--boot-aggregate needs lowercase hex" --boot-aggregate XYZ "$S"
bad "--log-hash-alg md5" "--log-hash-alg is sha1, sha256, sha384 or sha512" --log-hash-alg md5 "$S"
bad "no PATH, no --list" "give a PATH or --list" -o "$T/x.json"
out=$("$UEVM" runtime-policy create -o "$T/no/such/dir/p.json" "$S" 2>&1); rc=$?
expect_eq "an output file that cannot be created: exit 2" 2 "$rc"
expect_match "... naming it" "no/such/dir/p.json: cannot create" "$out"
