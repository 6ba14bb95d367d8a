#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevm runtime-policy check: a list evaluated against a policy as Keylime's
# verifier does (keylime/ima/ima.py, ast.py).
#  - A host: uevmfs serves a labelled tree and measures what is read into
#    its list (the control tree's ascii_runtime_measurements).  A policy
#    made from the tree with --map SOURCE=MOUNTPOINT passes the untouched
#    host (exit 0), an excluded log passes unchecked; a policy with the
#    source's names fails every file (not_in_allowlist); the boot
#    aggregate needs --boot-aggregate; then a file changed offline and
#    measured again fails "digest mismatch" and a new file "not in
#    allowlist" (exit 1, text and --json).
#  - Signatures (ima-sig lists of `uevm measurements add`): a file signed
#    by a verification key passes by its signature; changed after signing
#    it fails (Keylime falls back on the digests: not_in_allowlist, the
#    bad signature said); a key loaded onto .ima (an ima-buf entry) that
#    the policy's keyrings accept verifies later signatures, unless its
#    keyring is ignored.
#  - Entries: a line that cannot be parsed, a wrong template digest, PCR
#    11, a list of another bank than ima.log_hash_alg.
#  - Excludes: the paths that match are those Python's re.match finds with
#    Keylime's combined regex.
#  - A bad policy: exit 2 naming the file and the field.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"
source "$TESTS_DIR/sig_ref.sh"
unset UEVM_TCTI

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
C=$T/security
chmod 755 "$T"
mkdir -p "$S/bin" "$S/etc" "$S/log"
printf '#!/bin/sh\necho hi\n' >"$S/bin/prog"
chmod 755 "$S/bin/prog"
echo "config" >"$S/etc/conf"
echo "log line" >"$S/log/app.log"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null

ufs_mount "$S" "$M" "key=raw:$KEY,ml=$T/ml,securityfs=$C,nosyslog" || exit 1
"$M/bin/prog" >/dev/null
cat "$M/etc/conf" "$M/log/app.log" >/dev/null
cp "$C/ima/ascii_runtime_measurements" "$T/host0.txt"
expect_eq "the host's list: boot_aggregate and three files" 4 "$(wc -l <"$T/host0.txt")"
BA=$(head -n 1 "$T/host0.txt" | cut -d' ' -f4 | cut -d: -f2)

"$UEVM" runtime-policy create --map "$S=$M" --exclude "$M/log/.*" --boot-aggregate "$BA" \
	-o "$T/policy.json" "$S"
out=$("$UEVM" runtime-policy check -v "$T/policy.json" "$T/host0.txt"); rc=$?
expect_eq "the untouched host passes: exit 0" 0 "$rc"
expect_match "... every entry passed, the log unchecked" \
	'^4 entries: 4 passed \(1 excluded\), 0 failed, 0 violations not checked$' "$out"
expect_match "-v: the log passed as excluded" "^ok line [0-9]: $M/log/app.log \(excluded\)$" "$out"
expect_match "-v: a file passed by its digest" "^ok line [0-9]: $M/etc/conf \(digest\)$" "$out"

"$UEVM" runtime-policy create --exclude "$M/log/.*" --boot-aggregate "$BA" "$S" >"$T/policy-src.json"
out=$("$UEVM" runtime-policy check "$T/policy-src.json" "$T/host0.txt"); rc=$?
expect_eq "a policy with the source's names: exit 1" 1 "$rc"
expect_eq "... every measured file is not in the allowlist (the host records $M)" \
	"FAIL line 2: $M/bin/prog: not in allowlist (not_in_allowlist)
FAIL line 3: $M/etc/conf: not in allowlist (not_in_allowlist)" \
	"$(grep ^FAIL <<<"$out" | sed 's/): .*/)/' | sort)"

"$UEVM" runtime-policy create --map "$S=$M" --exclude "$M/log/.*" "$S" >"$T/policy-noba.json"
out=$("$UEVM" runtime-policy check "$T/policy-noba.json" "$T/host0.txt"); rc=$?
expect_eq "without the boot aggregate: exit 1" 1 "$rc"
expect_match "... boot_aggregate is not in the allowlist" \
	'^FAIL line 1: boot_aggregate: not in allowlist \(not_in_allowlist\)' "$out"
expect_rc "... check --boot-aggregate accepts it, as Keylime does with the boot log's" 0 \
	"$UEVM" runtime-policy check --boot-aggregate "$BA" "$T/policy-noba.json" "$T/host0.txt"

# Changed offline (and relabelled, so that uevmfs serves it), read again;
# a new file written through the mount.
printf 'evil\n' >>"$S/etc/conf"
"$UEVM" label --hmac-key "raw:$KEY" "$S/etc/conf" >/dev/null
cat "$M/etc/conf" >/dev/null
echo "new" >"$M/etc/new"
cat "$M/etc/new" >/dev/null
cp "$C/ima/ascii_runtime_measurements" "$T/host1.txt"
ufs_umount "$M"
expect_match "the changed file was measured again" \
	" sha256:$(sha256sum "$S/etc/conf" | cut -d' ' -f1) $M/etc/conf\$" "$(cat "$T/host1.txt")"
out=$("$UEVM" runtime-policy check "$T/policy.json" "$T/host1.txt"); rc=$?
expect_eq "tampered host: exit 1" 1 "$rc"
expect_match "the changed file: digest mismatch" \
	"^FAIL line [0-9]: $M/etc/conf: digest mismatch \(runtime_policy_hash\): sha256:$(sha256sum "$S/etc/conf" | cut -d' ' -f1) is not among" "$out"
expect_match "the new file: not in allowlist" \
	"^FAIL line [0-9]: $M/etc/new: not in allowlist \(not_in_allowlist\)" "$out"
expect_match "the summary counts two failures" '^6 entries: 4 passed \(1 excluded\), 2 failed' "$out"
"$UEVM" runtime-policy check --json "$T/policy.json" "$T/host1.txt" >"$T/check.json"
expect_eq "--json: the failures by name and event, and the summary" \
	"$M/etc/conf runtime_policy_hash digest mismatch|$M/etc/new not_in_allowlist not in allowlist|6 4 1 2" \
	"$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
f = " ".join if 0 else None
print("|".join(sorted("%s %s %s" % (x["name"], x["event"], x["reason"]) for x in d["failures"]))
      + "|%(entries)d %(passed)d %(excluded)d %(failed)d" % d["summary"])' "$T/check.json")"

# ---- signatures --------------------------------------------------------------
K=$T/keys
mkdir "$K"
SIG_KEYS="rsa2048 p256" make_sig_keys "$K"
G=$T/signed
mkdir -p "$G"
echo "signed" >"$G/rsa"
echo "signed ec" >"$G/ec"
echo "learned" >"$G/learned"
echo "v3" >"$G/v3"
"$UEVM" sign -k "$K/rsa2048.key" "$G/rsa" >/dev/null
"$UEVM" sign -k "$K/p256.key" "$G/ec" >/dev/null
"$UEVM" sign --sigv3 -k "$K/rsa2048.key" "$G/v3" >/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$K/ima.key" -out "$K/ima.pem" \
	-subj "/CN=on the .ima keyring" -days 30 2>/dev/null
openssl x509 -in "$K/ima.pem" -outform DER -out "$K/ima.der"
"$UEVM" sign -k "$K/ima.key" "$G/learned" >/dev/null
mklist() {	# NAME FILE...: an ima-sig ASCII list
	local n=$1
	shift
	"$UEVM" measurements add --list "$T/$n" --template ima-sig --hmac-key "raw:$KEY" "$@" \
		>/dev/null 2>&1
	"$UEVM" measurements show --ascii "$T/$n" >"$T/$n.txt"
}
mklist sig0 "$G/rsa" "$G/ec" "$G/v3"
SBA=$(head -n 1 "$T/sig0.txt" | cut -d' ' -f4 | cut -d: -f2)
"$UEVM" runtime-policy create --cert "$K/rsa2048.pem" --cert "$K/p256.pem" \
	--boot-aggregate "$SBA" "$G" >"$T/psig.json" 2>/dev/null
out=$("$UEVM" runtime-policy check -v "$T/psig.json" "$T/sig0.txt"); rc=$?
expect_eq "signed files: exit 0" 0 "$rc"
expect_match "an RSA signature verifies with verification-keys" "^ok line 2: $G/rsa \(signature\)$" "$out"
expect_match "an EC signature too" "^ok line 3: $G/ec \(signature\)$" "$out"
expect_match "a v3 signature: by its digest (Keylime checks v2 only)" "^ok line 4: $G/v3 \(digest\)$" "$out"
"$UEVM" runtime-policy create --cert "$K/p256.pem" --boot-aggregate "$SBA" --map "$G=/x" \
	"$G" >"$T/psig-v3.json" 2>/dev/null
out=$("$UEVM" runtime-policy check "$T/psig-v3.json" "$T/sig0.txt")
expect_match "a file signed by a key not in the policy: not in allowlist, the key said" \
	"^FAIL line 2: $G/rsa: not in allowlist \(not_in_allowlist\): no key with keyid" "$out"
printf 'tampered\n' >>"$G/rsa"	# content changed, signature kept
mklist sig1 "$G/rsa"
out=$("$UEVM" runtime-policy check "$T/psig.json" "$T/sig1.txt"); rc=$?
expect_eq "a signed file changed after signing: exit 1" 1 "$rc"
expect_match "... fails on its signature (then not in the allowlist, as Keylime)" \
	"^FAIL line 2: $G/rsa: not in allowlist \(not_in_allowlist\): signature invalid" "$out"

# A key measured onto .ima (ima-buf, its DER certificate), then a file
# signed with it.  The ima-buf line is built here from the kernel's
# template layout: {u32 length, data} per field, SHA-1 over them.
mklist sig2 "$G/learned"
python3 - "$K/ima.der" "$T/buf.txt" <<'EOF'
import hashlib, struct, sys
der = open(sys.argv[1], "rb").read()
d = hashlib.sha256(der).digest()
fields = [b"sha256:\0" + d, b".ima\0", der]
data = b"".join(struct.pack("<I", len(f)) + f for f in fields)
open(sys.argv[2], "w").write("10 %s ima-buf sha256:%s .ima %s\n" % (
    hashlib.sha1(data).hexdigest(), d.hex(), der.hex()))
EOF
{ head -n 1 "$T/sig2.txt"; cat "$T/buf.txt"; tail -n +2 "$T/sig2.txt"; } >"$T/learn.txt"
"$UEVM" runtime-policy create --list "$T/buf.txt" >"$T/pkr.json"
expect_eq "create --list: the key's ima-buf entry goes into keyrings" \
	"$(sha256sum "$K/ima.der" | cut -d' ' -f1)" \
	"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["keyrings"][".ima"][0])' "$T/pkr.json")"
"$UEVM" runtime-policy create --list "$T/buf.txt" --boot-aggregate "$SBA" >"$T/plearn.json"
out=$("$UEVM" runtime-policy check -v "$T/plearn.json" "$T/learn.txt"); rc=$?
expect_eq "a key accepted by keyrings is learned: exit 0" 0 "$rc"
expect_match "... the key's entry passes by keyrings" '^ok line 2: \.ima \(digest\)$' "$out"
expect_match "... and verifies the next file's signature" "^ok line 3: $G/learned \(signature\)$" "$out"
"$UEVM" runtime-policy create --list "$T/buf.txt" --boot-aggregate "$SBA" \
	--ignored-keyring '*' >"$T/pignore.json"
out=$("$UEVM" runtime-policy check -v "$T/pignore.json" "$T/learn.txt"); rc=$?
expect_eq "an ignored keyring: its key is not learned: exit 1" 1 "$rc"
expect_match "... its entry passes unchecked" '^ok line 2: \.ima \(ignored keyring\)$' "$out"
expect_match "... the signed file fails" "^FAIL line 3: $G/learned: not in allowlist" "$out"
python3 -c '
import json, sys
p = json.load(open(sys.argv[1])); p["keyrings"][".ima"] = ["00" * 32]
json.dump(p, open(sys.argv[2], "w"))' "$T/plearn.json" "$T/pbadkr.json"
out=$("$UEVM" runtime-policy check "$T/pbadkr.json" "$T/learn.txt")
expect_match "a key whose digest keyrings lacks: digest mismatch, not learned" \
	'^FAIL line 2: \.ima: digest mismatch \(runtime_policy_hash\).*FAIL line 3: ' \
	"$(tr '\n' ' ' <<<"$out")"

# ---- entries Keylime refuses ---------------------------------------------------
P=$T/policy.json
L=$T/host0.txt
{ cat "$L"; echo; echo "garbage"; } >"$T/garbage.txt"
out=$("$UEVM" runtime-policy check "$P" "$T/garbage.txt"); rc=$?
expect_eq "a line that is not an entry: exit 1" 1 "$rc"
expect_match "... not parsable, the empty line skipped" \
	'^FAIL line 6: not parsable \(entry\): [^|]*\|5 entries: 4 passed' "$(tr '\n' '|' <<<"$out")"
sed '3s/^10 \(.\)/10 0/' "$L" >"$T/tdigest.txt"
cmp -s "$T/tdigest.txt" "$L" && sed -i '3s/^10 0/10 1/' "$T/tdigest.txt"
out=$("$UEVM" runtime-policy check "$P" "$T/tdigest.txt"); rc=$?
expect_eq "a wrong template digest: exit 1" 1 "$rc"
expect_match "... template hash mismatch (ima_hash)" '^FAIL line 3: .*: template hash mismatch \(ima_hash\)' "$out"
sed '2s/^10 /11 /' "$L" >"$T/pcr11.txt"
out=$("$UEVM" runtime-policy check "$P" "$T/pcr11.txt")
expect_match "an entry for PCR 11: wrong PCR (ima_pcr)" \
	"^FAIL line 2: $M/.*: wrong PCR \(ima_pcr\): PCR 11, Keylime attests PCR 10" "$out"
"$UEVM" measurements show --ascii --bank sha256 "$T/ml" >"$T/host256.txt"
out=$("$UEVM" runtime-policy check "$P" "$T/host256.txt"); rc=$?
expect_eq "a sha256-bank list against log_hash_alg sha1: exit 1" 1 "$rc"
expect_eq "... every entry: template hash mismatch" "$(wc -l <"$T/host256.txt")" \
	"$(grep -c 'template hash mismatch (ima_hash): .*ima.log_hash_alg is sha1' <<<"$out")"
"$UEVM" runtime-policy create --list "$T/host256.txt" -o "$T/p256.json"
expect_rc "a policy made from that list (log_hash_alg sha256) passes it" 0 \
	"$UEVM" runtime-policy check "$T/p256.json" "$T/host256.txt"

# ---- excludes: the matches of Python's re.match ------------------------------
R=$T/rx
mkdir -p "$R/sub"
for n in a.log b.txt 12.txt foo bar x1y.dat q.log.bak sub/deep.log "sp ace.txt" A.TXT; do
	echo "$n" >"$R/$n"
done
(cd "$R" && "$UEVM" measurements add --list "$T/rxlist" --hmac-key "raw:$KEY" \
	a.log b.txt 12.txt foo bar x1y.dat q.log.bak sub/deep.log "sp ace.txt" A.TXT >/dev/null 2>&1)
"$UEVM" measurements show --ascii "$T/rxlist" >"$T/rx.txt"
EX=("$R/[^/]*\.log$" "$R/\d+\.txt" "$R/(?:foo|baz)$" "$R/x\wy\.dat" "$R/q.*?bak" \
	"$R/sp[ _]a" "$R/[A-Z]\.T[X-Z]T" "$R/su{1,2}b/" "nomatch")
args=()
for e in "${EX[@]}"; do args+=(--exclude "$e"); done
"$UEVM" runtime-policy create --list "$T/rx.txt" "${args[@]}" >"$T/prx.json"
got=$("$UEVM" runtime-policy check -v "$T/prx.json" "$T/rx.txt" | sed -n 's/^ok line [0-9]*: \(.*\) (excluded)$/\1/p' | sort)
want=$(python3 -c '
import json, re, sys
p = json.load(open(sys.argv[1]))
rx = re.compile("(" + ")|(".join(p["excludes"]) + ")")
for line in open(sys.argv[2]):
    name = line.rstrip("\n").split(" ", 4)[4]
    if rx.match(name):
        print(name)' "$T/prx.json" "$T/rx.txt" | sort)
expect_eq "excludes: the names Python's re.match matches with Keylime's combined regex" "$want" "$got"
expect_eq "excludes: eight of the ten files match" 8 "$(grep -c . <<<"$got")"

# ---- bad policies: exit 2, the file and the field named ----------------------
badp() {	# NAME REGEX PYTHON-EDIT (on p) | -raw TEXT
	local name=$1 want=$2 out rc
	if [ "$3" = -raw ]; then
		printf '%s' "$4" >"$T/bad.json"
	else
		python3 -c "import json,sys; p=json.load(open(sys.argv[1])); $3; json.dump(p, open(sys.argv[2], 'w'))" \
			"$P" "$T/bad.json"
	fi
	out=$("$UEVM" runtime-policy check "$T/bad.json" "$L" 2>&1 >/dev/null); rc=$?
	expect_eq "$name: exit 2" 2 "$rc"
	expect_match "$name: names the file and the cause" "^uevm: $T/bad.json: .*$want" "$out"
}
badp "not JSON" "not valid JSON: line 1, column 14: unexpected character" -raw '{"digests": [}'
badp "trailing data" "trailing data after the document" -raw '{} {}'
badp "an array" "the document is a array, not an object" -raw '[]'
badp "no digests" '"digests" is missing' 'del p["digests"]'
badp "digests a list" '"digests" is a array, not an object' 'p["digests"] = []'
badp "an uppercase digest" "item 0 is not lowercase hex" \
	'k = sorted(p["digests"])[0]; p["digests"][k] = [p["digests"][k][0].upper()]'
badp "an empty digest list" 'is not a non-empty array' 'p["digests"]["/x"] = []'
badp "meta.version a string" "meta.version is not an integer" 'p["meta"]["version"] = "1"'
badp "meta.generator 4" "meta.generator is out of range" 'p["meta"]["generator"] = 4'
badp "release negative" '"release" is out of range' 'p["release"] = -1'
badp "log_hash_alg md5" 'ima.log_hash_alg "md5" is not sha1' 'p["ima"]["log_hash_alg"] = "md5"'
badp "a dm_policy" "ima.dm_policy is not null" 'p["ima"]["dm_policy"] = {}'
badp "verification-keys not a string" '"verification-keys" is a array' 'p["verification-keys"] = []'
badp "verification-keys not a keyring" "verification-keys: keyids is missing" 'p["verification-keys"] = "{}"'
badp "verification-keys with a bad key" "pubkeys: item 0 is not a base64 DER" \
	'p["verification-keys"] = json.dumps({"keyids": [1], "pubkeys": ["AAAA"]})'
badp "an exclude Python has but not this check" "group '\(\?<' is not supported" \
	'p["excludes"] = ["(?<=a)b"]'
# Counted repetitions are copied (Python's re does not copy them): a
# policy whose copies would pass a{65536} in all is refused at once, with
# the pattern named, rather than making an 8-million-instruction matcher.
badp "nested counted repetitions" \
	"exclude '\(\(a\{200\}\)\{200\}\)\{200\}': counted repetitions too large" \
	'p["excludes"] = ["((a{200}){200}){200}"]'
badp "counts over the limit only in all the excludes" \
	"exclude 'c\{30000\}': counted repetitions too large \(in all the excludes together, at most a\{65536\}" \
	'p["excludes"] = ["a{30000}", "b{30000}", "c{30000}"]'
badp "a count over 65536" "exclude 'a\{70000\}': a count over 65536" \
	'p["excludes"] = ["a{70000}"]'
# What glibc's regcomp took minutes or gigabytes for (it stores, per
# state, every state reachable without reading): matched here at once.
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["excludes"] += ["/x(|a){600}", "/y{0,30000}", "((((((((((((a|)+|)+|)+|)+|)+|)+|)+|)+|)+|)+|)+|)+b"]; json.dump(p, open(sys.argv[2], "w"))' \
	"$P" "$T/count.json"
expect_rc "30000 optional copies, 600 copies of an empty branch and 12 nested loops over empty branches (exit 0)" 0 \
	"$UEVM" runtime-policy check "$T/count.json" "$L"
badp "a signed (DSSE) envelope" "a signed \(DSSE\) policy" -raw '{"payload": "e30=", "signatures": []}'
out=$("$UEVM" runtime-policy check "$T/nonexistent.json" "$L" 2>&1); rc=$?
expect_eq "an unreadable policy: exit 2" 2 "$rc"
expect_match "... named" "nonexistent.json: cannot read" "$out"
out=$("$UEVM" runtime-policy check "$P" "$T/nonexistent.txt" 2>&1); rc=$?
expect_eq "an unreadable list: exit 2" 2 "$rc"
expect_match "... named" "nonexistent.txt: cannot read" "$out"
out=$("$UEVM" runtime-policy check "$P" "$T/ml" 2>&1); rc=$?
expect_eq "a binary list: exit 2" 2 "$rc"
expect_match "... said" "not an ASCII measurement list" "$out"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p["meta"]["generator"] = 1; json.dump(p, open(sys.argv[2], "w"))' \
	"$P" "$T/gen1.json"
out=$("$UEVM" runtime-policy check "$T/gen1.json" "$L" 2>&1); rc=$?
expect_eq "meta.generator 1: still evaluated (exit 0)" 0 "$rc"
expect_match "... with a warning that Keylime takes it for empty" "meta.generator is 1: Keylime takes the policy for an empty one" "$out"
expect_rc "check without LIST: exit 2" 2 "$UEVM" runtime-policy check "$P"
