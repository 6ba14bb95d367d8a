#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Manifests (uevm label --manifest, verify --manifest, uevm diff): the
# attacks that EVM cannot see, each performed for real on a labelled tree.
# For each, plain `uevm verify` is run first to document the EVM limit
# (it passes, or only says invalid-HMAC), then verify --manifest must fail
# and say what happened.
source "$(dirname "$0")/../lib.sh"

for tool in getfattr setfattr setfacl python3 openssl; do
	command -v $tool >/dev/null || { echo "SKIP: manifest needs $tool"; exit 0; }
done
make_key "$T/k"
K="--hmac-key raw:$T/k"

# A small system tree: two releases of passwd, a program, a labelled
# symlink pair (security.selinux on the links), a device, a FIFO and a
# name no line-based format could hold raw.
fresh() {
	rm -rf "$T/tree"
	mkdir -p "$T/tree/etc" "$T/tree/bin" "$T/tree/lib" "$T/tree/dev"
	echo "root:x:0:0:new" >"$T/tree/etc/passwd"
	echo "root:x:0:0:old" >"$T/tree/etc/passwd-"
	echo "app v1" >"$T/tree/bin/app"
	echo "tool" >"$T/tree/bin/tool"
	chmod 0644 "$T/tree/bin/app" "$T/tree/bin/tool"
	ln -s ../bin/app "$T/tree/lib/good"
	ln -s /tmp/evil "$T/tree/lib/other"
	for l in good other; do
		setfattr -h -n security.selinux -v "system_u:object_r:lib_t:s0" \
			"$T/tree/lib/$l"
	done
	mknod "$T/tree/dev/null" c 1 3
	mkfifo "$T/tree/dev/fifo"
	printf 'odd\n' >"$T/tree/etc/we ird"$'\n'"na%me:"
	"$UEVM" label $K --manifest "$T/m" "$T/tree"
}

# plain NAME: plain verify's exit code; vm: verify --manifest's output.
plain_rc() { "$UEVM" verify -r $K "$T/tree" >"$T/plain.out" 2>&1; echo $?; }
vm() { "$UEVM" verify $K --manifest "$T/m" "$T/tree" 2>&1; }

# ---- labelling writes a manifest; an untouched tree matches it -----------------
fresh
check "label --manifest wrote the manifest" test -s "$T/m"
expect_eq "manifest: mode 0644 (holds digests, no secrets)" "644" "$(stat -c %a "$T/m")"
expect_eq "manifest: first line names format and version" "uevm-manifest 1" "$(head -1 "$T/m")"
expect_match "manifest: last line is the MAC" '^hmac-sha256 [0-9a-f]{64}$' "$(tail -1 "$T/m")"
expect_match "manifest: paths relative to the root, sorted" \
	' o \. d .*o bin d .*o bin/app f ' "$(tr '\n' ' ' <"$T/m")"
expect_match "manifest: odd name escaped on one line" \
	'^o etc/we%20ird%0Ana%25me%3A f ' "$(cat "$T/m")"
expect_match "manifest: device, fifo, symlink target, xattr digests" \
	'o dev/null c .* rdev=259' "$(cat "$T/m")"
expect_match "manifest: symlink with its protected xattr and security.evm" \
	'^o lib/good l .* target=\.\./bin/app x=security\.evm:[0-9a-f]{64} x=security\.selinux:' \
	"$(cat "$T/m")"
# The MAC key is derived from the EVM key (never the key itself):
# HMAC-SHA256(HMAC-SHA256(KEY, "uevm manifest MAC key v1"), BYTES BEFORE).
mac_of() {	# FILE: what the MAC line of a manifest with FILE's body says
	python3 - "$T/k" "$1" <<'PY'
import hashlib, hmac, sys
k = open(sys.argv[1], 'rb').read()
body = open(sys.argv[2], 'rb').read()
dk = hmac.new(k, b'uevm manifest MAC key v1', hashlib.sha256).digest()
print('hmac-sha256 ' + hmac.new(dk, body, hashlib.sha256).hexdigest())
PY
}
head -n -1 "$T/m" >"$T/body"
expect_eq "manifest: MAC under the derived key (documented construction)" \
	"$(tail -1 "$T/m")" "$(mac_of "$T/body")"
expect_eq "manifest: ... not under the EVM key itself" "" \
	"$(python3 -c 'import hashlib,hmac,sys; print("hmac-sha256 " + hmac.new(open(sys.argv[1],"rb").read(), open(sys.argv[2],"rb").read(), hashlib.sha256).hexdigest())' "$T/k" "$T/body" | grep -xF "$(tail -1 "$T/m")")"
# Authentic but malformed (a broken writer): refused, the line and field named.
sed 's/^o bin d [0-9]* [0-9]* /&x/' "$T/body" >"$T/body.bad"
{ cat "$T/body.bad"; mac_of "$T/body.bad"; } >"$T/m.bad"
out=$("$UEVM" verify $K --manifest "$T/m.bad" "$T/tree" 2>&1); rc=$?
expect_eq "manifest: authentic but malformed: exit 2" 2 "$rc"
expect_match "manifest: ... line and field named" "m.bad: rejected: line 3: a malformed uid" "$out"
out=$(vm); rc=$?
expect_eq "untouched tree: verify --manifest exits 0" 0 "$rc"
expect_match "untouched tree: nothing changed" 'changed +0' "$out"
expect_match "untouched tree: nothing deleted" 'deleted +0' "$out"
expect_match "untouched tree: nothing new" 'new +0' "$out"
expect_rc "untouched tree: root given with a trailing slash" 0 \
	"$UEVM" verify $K --manifest "$T/m" "$T/tree/"
mv "$T/tree" "$T/elsewhere"
expect_rc "untouched tree: moved elsewhere, paths are relative" 0 \
	"$UEVM" verify $K --manifest "$T/m" "$T/elsewhere"
mv "$T/elsewhere" "$T/tree"
expect_rc "label --manifest with two PATHs: usage error" 2 \
	"$UEVM" label $K --manifest "$T/m2" "$T/tree/etc" "$T/tree/bin"
expect_rc "verify --manifest with two PATHs: usage error" 2 \
	"$UEVM" verify $K --manifest "$T/m" "$T/tree/etc" "$T/tree/bin"

# ---- 1. an older labelled file renamed over a newer one --------------------------
fresh
mv "$T/tree/etc/passwd-" "$T/tree/etc/passwd"
expect_eq "1 rename passwd- over passwd: plain verify passes (EVM limit)" 0 "$(plain_rc)"
out=$(vm); rc=$?
expect_eq "1 rename: verify --manifest exits 1" 1 "$rc"
expect_match "1 rename: passwd replaced by another inode" \
	"^CHANGED $T/tree/etc/passwd: replaced by another inode \(inode [0-9]+ → [0-9]+, was etc/passwd-\)" "$out"
expect_match "1 rename: passwd's content changed" \
	"^CHANGED $T/tree/etc/passwd: content changed \(sha256 [0-9a-f]{16} → [0-9a-f]{16}\)" "$out"
expect_match "1 rename: passwd- deleted" "^DELETED $T/tree/etc/passwd-$" "$out"

# ---- 2. a hard link of a labelled file under a new name ---------------------------
fresh
ln "$T/tree/bin/app" "$T/tree/bin/sneaky"
expect_eq "2 hard link: plain verify passes (EVM limit)" 0 "$(plain_rc)"
out=$(vm); rc=$?
expect_eq "2 hard link: verify --manifest exits 1" 1 "$rc"
expect_match "2 hard link: new name reported" \
	"^NEW $T/tree/bin/sneaky: new, not in the manifest$" "$out"
expect_match "2 hard link: of which inode" "^NEW $T/tree/bin/sneaky: hard link of bin/app$" "$out"
expect_match "2 hard link: counted as new" 'new +1' "$out"

# ---- 3. one file rolled back to its older labelled version -------------------------
fresh
app=$T/tree/bin/app
cp "$app" "$T/app.v1"
ima_v1=$(xattr_hex security.ima "$app"); evm_v1=$(xattr_hex security.evm "$app")
ino_v1=$(stat -c %i "$app")
echo "app v2, fixes a hole" >"$app"		# the legitimate update
"$UEVM" label $K --manifest "$T/m" "$T/tree"
cat "$T/app.v1" >"$app"				# the same inode, old bytes
setfattr -n security.ima -v "0x$ima_v1" "$app"
setfattr -n security.evm -v "0x$evm_v1" "$app"
expect_eq "3 rollback: same inode" "$ino_v1" "$(stat -c %i "$app")"
expect_eq "3 rollback: plain verify passes (valid old HMAC, EVM limit)" 0 "$(plain_rc)"
out=$(vm); rc=$?
expect_eq "3 rollback: verify --manifest exits 1" 1 "$rc"
expect_match "3 rollback: content changed" "^CHANGED $app: content changed \(sha256 " "$out"
expect_match "3 rollback: security.ima changed" "^CHANGED $app: security.ima changed$" "$out"
expect_match "3 rollback: security.evm changed" "^CHANGED $app: security.evm changed$" "$out"
if grep -q "replaced by another inode" <<<"$out"; then
	fail "3 rollback: not called a replacement (same inode)"
else
	pass "3 rollback: not called a replacement (same inode)"
fi

# ---- 4. a POSIX ACL added ------------------------------------------------------------
fresh
mode_before=$(stat -c %a "$T/tree/bin/tool")
setfacl -m u:nobody:rw "$T/tree/bin/tool"
mode_after=$(stat -c %a "$T/tree/bin/tool")
out=$(vm); rc=$?
expect_eq "4 ACL: verify --manifest exits 1" 1 "$rc"
expect_match "4 ACL: ACL added" "^CHANGED $T/tree/bin/tool: ACL added$" "$out"
# The ACL mask becomes the mode's group bits: report what really changed.
if [ "$mode_before" != "$mode_after" ]; then
	expect_match "4 ACL: the mode's group bits (mask) changed too" \
		"^CHANGED $T/tree/bin/tool: mode 0$mode_before → 0$mode_after$" "$out"
	expect_eq "4 ACL: plain verify sees only the mode (invalid HMAC)" 1 "$(plain_rc)"
else
	fail "4 ACL: rw for nobody should widen the mask" "$mode_before"
fi
setfacl -b "$T/tree/bin/tool"
chmod "$mode_before" "$T/tree/bin/tool"
expect_eq "4 ACL: ACL alone (mask within the group bits): plain verify passes" 0 \
	"$(setfacl -m u:nobody:r "$T/tree/bin/tool"; plain_rc)"
out=$(vm)
expect_match "4 ACL: ... and the manifest says ACL added" "^CHANGED $T/tree/bin/tool: ACL added$" "$out"
expect_eq "4 ACL: ... and nothing about the mode" "" "$(grep "tool: mode" <<<"$out")"

# ---- 5. a labelled symlink retargeted in place ----------------------------------------
fresh
# lib/good -> ../bin/app; the other labelled link -> /tmp/evil takes its name.
mv -T "$T/tree/lib/other" "$T/tree/lib/good"
expect_eq "5 symlink: now points elsewhere" "/tmp/evil" "$(readlink "$T/tree/lib/good")"
expect_eq "5 symlink: plain verify passes (EVM limit)" 0 "$(plain_rc)"
out=$(vm); rc=$?
expect_eq "5 symlink: verify --manifest exits 1" 1 "$rc"
expect_match "5 symlink: target change explained" \
	"^CHANGED $T/tree/lib/good: symlink target '../bin/app' → '/tmp/evil'$" "$out"
expect_match "5 symlink: replaced" "^CHANGED $T/tree/lib/good: replaced by another inode" "$out"
expect_match "5 symlink: the other name deleted" "^DELETED $T/tree/lib/other$" "$out"

# ---- 6. a new symlink and a new device node ---------------------------------------------
fresh
ln -s /etc/shadow "$T/tree/lib/newlink"
mknod "$T/tree/dev/mem2" c 1 1
expect_eq "6 new symlink and device: plain verify passes (EVM limit)" 0 "$(plain_rc)"
out=$(vm); rc=$?
expect_eq "6 new objects: verify --manifest exits 1" 1 "$rc"
expect_match "6 new symlink reported" "^NEW $T/tree/lib/newlink: new, not in the manifest$" "$out"
expect_match "6 new device reported" "^NEW $T/tree/dev/mem2: new, not in the manifest$" "$out"
expect_match "6 counted" 'new +2' "$out"

# ---- 7. a file deleted -------------------------------------------------------------------
fresh
rm "$T/tree/bin/tool"
expect_eq "7 delete: plain verify passes (EVM limit)" 0 "$(plain_rc)"
out=$(vm); rc=$?
expect_eq "7 delete: verify --manifest exits 1" 1 "$rc"
expect_match "7 delete: reported" "^DELETED $T/tree/bin/tool$" "$out"
expect_match "7 delete: counted" 'deleted +1' "$out"

# ---- 8. owner and mode changed: EVM says invalid HMAC, the manifest says what -----------
fresh
chown 1000 "$T/tree/bin/app"
chmod 4755 "$T/tree/bin/tool"
expect_eq "8 chown/chmod: plain verify fails" 1 "$(plain_rc)"
expect_match "8 chown/chmod: ... without saying what" "FAIL $T/tree/bin/app: fail \(invalid-HMAC\)" \
	"$(cat "$T/plain.out")"
out=$(vm); rc=$?
expect_eq "8 chown/chmod: verify --manifest exits 1" 1 "$rc"
expect_match "8 owner explained" "^CHANGED $T/tree/bin/app: owner 0 → 1000$" "$out"
expect_match "8 mode explained" "^CHANGED $T/tree/bin/tool: mode 0644 → 4755$" "$out"
setfattr -h -x security.selinux "$T/tree/lib/good"
out=$(vm)
expect_match "8 xattr removal explained" "^CHANGED $T/tree/lib/good: security.selinux removed$" "$out"
setfattr -h -n security.selinux -v "system_u:object_r:etc_t:s0" "$T/tree/lib/other"
out=$(vm)
expect_match "8 xattr change explained" "^CHANGED $T/tree/lib/other: security.selinux changed$" "$out"

# ---- 9. security.evm copied from another file -----------------------------------------
fresh
setfattr -n security.evm -v "0x$(xattr_hex security.evm "$T/tree/etc/passwd")" "$T/tree/bin/tool"
out=$(vm); rc=$?
expect_eq "9 evm copied: verify --manifest exits 1" 1 "$rc"
expect_match "9 evm copied: explained" \
	"^CHANGED $T/tree/bin/tool: security.evm copied from etc/passwd$" "$out"

# ---- JSON: the same explanations, per object, and the deletions ----------------------
fresh
chown 1000 "$T/tree/bin/app"; rm "$T/tree/bin/tool"; ln "$T/tree/etc/passwd" "$T/tree/hl"
"$UEVM" verify --json $K --manifest "$T/m" "$T/tree" >"$T/out.json"
expect_eq "json: exits 1" 1 "$?"
expect_eq "json: changes per object, deletions as objects, summary counts" \
	"owner 0 → 1000|deleted|new,hard-link|1 1 1" "$(python3 - "$T/out.json" "$T/tree" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = sys.argv[2]
r = {o['path']: o for o in d['results']}
print('%s|%s|%s|%d %d %d' % (
    [c['detail'] for c in r[t + '/bin/app']['changes'] if c['code'] == 'owner'][0],
    ','.join(c['code'] for c in r[t + '/bin/tool']['changes']),
    ','.join(c['code'] for c in r[t + '/hl']['changes']),
    d['summary']['changed'], d['summary']['deleted'], d['summary']['new']))
PY
)"

# ---- 10. a tampered manifest is rejected before anything is reported -------------------
fresh
rejected() {	# NAME FILE [KEYOPT]: exit 2, nothing on stdout, the reason on stderr
	local out rc
	out=$("$UEVM" verify ${3:-$K} --manifest "$2" "$T/tree" 2>"$T/err"); rc=$?
	expect_eq "10 $1: exit 2" 2 "$rc"
	expect_eq "10 $1: nothing reported" "" "$out"
	expect_match "10 $1: clear error naming the file" "manifest $2: " "$(cat "$T/err")"
}
# One byte of an entry: the uid of bin/app, 0 -> 1.
sed '/^o bin\/app /s/ 0 0 0644 / 1 0 0644 /' "$T/m" >"$T/m.flip"
expect_eq "10 flip: exactly one byte differs" 1 "$(cmp -l "$T/m" "$T/m.flip" | wc -l)"
rejected "byte flipped" "$T/m.flip"
expect_match "10 byte flipped: says the MAC does not match" "MAC does not match" "$(cat "$T/err")"
head -c $(($(stat -c %s "$T/m") - 20)) "$T/m" >"$T/m.trunc"
rejected "truncated" "$T/m.trunc"
head -n 3 "$T/m" >"$T/m.cut"
rejected "cut after whole lines" "$T/m.cut"
head -n -1 "$T/m" >"$T/m.nomac"
rejected "MAC line dropped" "$T/m.nomac"
make_key "$T/k2"
rejected "wrong key" "$T/m" "--hmac-key raw:$T/k2"

# ---- --sign-key / --cert round trip -------------------------------------------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$T/sign.pem" -out "$T/cert.pem" -days 2 -subj /CN=uevm-manifest \
	-addext subjectKeyIdentifier=hash 2>/dev/null
chmod 600 "$T/sign.pem"
check "sign: label --sign-key" "$UEVM" label $K --manifest "$T/ms" --sign-key "$T/sign.pem" "$T/tree"
expect_match "sign: last line is a signature" '^signature 03' "$(tail -1 "$T/ms")"
expect_rc "sign: verify --cert accepts it" 0 "$UEVM" verify $K --cert "$T/cert.pem" --manifest "$T/ms" "$T/tree"
# The signature has security.ima's format: it must not also sign a file
# holding the manifest's bytes (a signed manifest would hand out signed
# files).  The same file signed for real does verify: the check can pass.
head -n -1 "$T/ms" >"$T/ms.body"
cp "$T/ms.body" "$T/ms.body2"
setfattr -n security.ima -v "0x$(tail -1 "$T/ms" | cut -d' ' -f2)" "$T/ms.body"
expect_rc "sign: the manifest's signature is no IMA signature of its bytes" 1 \
	"$UEVM" evmctl ima_verify -k "$T/cert.pem" "$T/ms.body"
"$UEVM" sign --imasig -k "$T/sign.pem" "$T/ms.body2"
expect_rc "sign: ... while an IMA signature of them verifies" 0 \
	"$UEVM" evmctl ima_verify -k "$T/cert.pem" "$T/ms.body2"
rm "$T/tree/bin/tool"
out=$("$UEVM" verify $K --cert "$T/cert.pem" --manifest "$T/ms" "$T/tree"); rc=$?
expect_eq "sign: a deletion found with the signed manifest" "1" "$rc"
expect_match "sign: ... and named" "^DELETED $T/tree/bin/tool$" "$out"
out=$("$UEVM" verify $K --manifest "$T/ms" "$T/tree" 2>&1); rc=$?
expect_eq "sign: no --cert for a signed manifest: exit 2" 2 "$rc"
expect_match "sign: ... says to give --cert" "signed: give --cert" "$out"
sed '/^o bin\/app /s/ 0 0 0644 / 1 0 0644 /' "$T/ms" >"$T/ms.flip"
out=$("$UEVM" verify $K --cert "$T/cert.pem" --manifest "$T/ms.flip" "$T/tree" 2>&1); rc=$?
expect_eq "sign: a flipped byte: rejected, exit 2" 2 "$rc"
expect_match "sign: ... its signature does not verify" "signature does not verify" "$out"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$T/other.pem" -out "$T/other.crt" -days 2 -subj /CN=other 2>/dev/null
expect_rc "sign: another certificate: rejected, exit 2" 2 \
	"$UEVM" verify $K --cert "$T/other.crt" --manifest "$T/ms" "$T/tree"
out=$("$UEVM" verify --cert "$T/cert.pem" --manifest "$T/m" "$T/tree" 2>&1); rc=$?
expect_eq "sign: an HMAC manifest with only --cert: exit 2" 2 "$rc"
expect_match "sign: ... says to give --hmac-key" "give --hmac-key" "$out"
expect_rc "sign: --sign-key without --manifest: usage error" 2 \
	"$UEVM" label $K --sign-key "$T/sign.pem" "$T/tree"

# ---- 11. uevm diff between two releases ---------------------------------------------------
fresh
cp "$T/m" "$T/r1"
echo "app v2" >"$T/tree/bin/app"
rm "$T/tree/bin/tool"
echo new >"$T/tree/bin/new"
chmod 0600 "$T/tree/etc/passwd"
"$UEVM" label $K --manifest "$T/r2" "$T/tree"
out=$("$UEVM" diff $K "$T/r1" "$T/r2"); rc=$?
expect_eq "11 diff: releases differ: exit 1" 1 "$rc"
expect_match "11 diff: content" "^CHANGED bin/app: content changed \(sha256 " "$out"
expect_match "11 diff: security.ima relabelled" "^CHANGED bin/app: security.ima changed$" "$out"
expect_match "11 diff: deleted" "^DELETED bin/tool$" "$out"
expect_match "11 diff: new" "^NEW bin/new: new, not in the manifest$" "$out"
expect_match "11 diff: mode" "^CHANGED etc/passwd: mode 0644 → 0600$" "$out"
expect_match "11 diff: summary" "^Summary: 2 changed, 1 deleted, 1 new$" "$out"
expect_rc "11 diff: identical releases: exit 0" 0 "$UEVM" diff $K "$T/r1" "$T/r1"
expect_eq "11 diff --json: codes" "bin/app:content,xattr-changed,xattr-changed bin/new:new bin/tool:deleted" \
	"$("$UEVM" diff --json $K "$T/r1" "$T/r2" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(" ".join("%s:%s" % (o["path"], ",".join(c["code"] for c in o["changes"]))
               for o in d["results"] if o["path"].startswith("bin/")))')"
expect_rc "11 diff: a tampered release: exit 2" 2 "$UEVM" diff $K "$T/r1" "$T/m.flip"
expect_rc "11 diff: no key: exit 2" 2 "$UEVM" diff "$T/r1" "$T/r2"
expect_rc "11 diff: signed against --cert: exit 0" 0 "$UEVM" diff --cert "$T/cert.pem" "$T/ms" "$T/ms"
expect_rc "11 diff: one manifest only: usage error" 2 "$UEVM" diff $K "$T/r1"

# ---- 12. names quoted in a change's detail cannot pass for one another ------------------
# Two links retargeted: one to a name with a newline, one to the same
# characters with a backslash and an n.  The newline is shown as \n; the
# backslash must then be doubled, or both details would read the same.
fresh
ln -sfn $'x\ny' "$T/tree/lib/good"
ln -sfn 'x\ny' "$T/tree/lib/other"
out=$(vm); rc=$?
expect_eq "12 quoting: verify --manifest exits 1" 1 "$rc"
expect_match "12 quoting: the newline shown as \\n" \
	"^CHANGED $T/tree/lib/good: symlink target '../bin/app' → 'x\\\\ny'$" "$out"
expect_match "12 quoting: the backslash doubled" \
	"^CHANGED $T/tree/lib/other: symlink target '/tmp/evil' → 'x\\\\\\\\ny'$" "$out"
