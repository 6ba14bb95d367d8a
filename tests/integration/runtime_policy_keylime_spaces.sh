#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Review finding (issue 13, runtime-policy check): a name with a space in an
# ima-sig or ima-buf line.  Keylime (keylime/ima/ast.py) splits those
# entries' fields with split(" ", maxsplit=2): the name is the first
# token, the rest is taken for the signature / buffer, so the template
# digest it recomputes differs (ima-sig: "ima_hash") or the line does not
# parse (ima-buf: "entry").  The kernel never writes such a name (spaces
# become '_'), but a list restored across kexec or written by another
# tool can; `uevm runtime-policy check` reads the name from both ends and
# reports PASS.  The oracle below rebuilds the template data Keylime's way.
source "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || { fail "tools" "python3 is missing"; exit 1; }

case_() {	# name template
	python3 - "$1" "$2" "$T" <<'PY'
import hashlib, json, struct, sys
name, tmpl, t = sys.argv[1], sys.argv[2], sys.argv[3]
def field(b): return struct.pack("<I", len(b)) + b
if tmpl == "ima-sig":
    d = hashlib.sha256(b"content").digest(); last = b""; key = "digests"
else:
    last = b"hello"; d = hashlib.sha256(last).digest(); key = "ima-buf"
data = field(b"sha256:\0" + d) + field(name.encode() + b"\0") + field(last)
rest = "sha256:%s %s %s" % (d.hex(), name, last.hex())
open(t + "/list", "w").write("10 %s %s %s\n" % (hashlib.sha1(data).hexdigest(), tmpl, rest))
pol = {"meta": {"version": 1, "generator": 3}, "release": 0, "digests": {}, "excludes": [],
       "keyrings": {}, "ima": {"ignored_keyrings": [], "log_hash_alg": "sha1", "dm_policy": None},
       "ima-buf": {}, "verification-keys": ""}
pol[key][name] = [d.hex()]
json.dump(pol, open(t + "/pol.json", "w"))
# Keylime's reading: three tokens, the name is the second.
tok = rest.split(" ", 2)
try:
    tail = bytes.fromhex(tok[2])
    if tmpl == "ima-sig" and tail:
        raise ValueError("not a signature")
    kl = field(b"sha256:\0" + d) + field(tok[1].encode() + b"\0") + field(tail)
    ok = hashlib.sha1(kl).hexdigest() == hashlib.sha1(data).hexdigest()
except ValueError:
    ok = tmpl == "ima-sig" and hashlib.sha1(field(b"sha256:\0" + d) + field(tok[1].encode() + b"\0")
                                            + field(b"")).hexdigest() == hashlib.sha1(data).hexdigest()
open(t + "/keylime", "w").write("0" if ok else "1")
PY
	"$UEVM" runtime-policy check "$T/pol.json" "$T/list" >"$T/out" 2>&1
	local rc=$?
	expect_eq "$2 named '$1': check exits as Keylime's verdict (1: fails)" \
		"$(cat "$T/keylime")" "$rc"
}
case_ '/opt/a b' ima-sig
case_ 'my keys' ima-buf
case_ '/opt/a_b' ima-sig

# What Keylime does take: an ima-ng (and ima) name is the whole rest of
# the line, spaces and all (split(" ", maxsplit=1)); an ima-buf buffer is
# read with bytes.fromhex, which allows whitespace between byte pairs and
# upper case.  Both entries are good: check passes them.
python3 - "$T" <<'PY'
import hashlib, json, struct, sys
t = sys.argv[1]
def field(b): return struct.pack("<I", len(b)) + b
def th(d, name, *last):
    return hashlib.sha1(field(b"sha256:\0" + d) + field(name.encode() + b"\0") +
                        b"".join(field(x) for x in last)).hexdigest()
d1 = hashlib.sha256(b"content").digest()
buf = b"hello"; d2 = hashlib.sha256(buf).digest()
open(t + "/list", "w").write(
    "10 %s ima-ng sha256:%s /opt/a b  c\n" % (th(d1, "/opt/a b  c"), d1.hex()) +
    "10 %s ima-buf sha256:%s kbuf 68 65\t6C 6c 6F\n" % (th(d2, "kbuf", buf), d2.hex()))
json.dump({"meta": {"version": 1, "generator": 3}, "release": 0,
           "digests": {"/opt/a b  c": [d1.hex()]}, "excludes": [], "keyrings": {},
           "ima": {"ignored_keyrings": [], "log_hash_alg": "sha1", "dm_policy": None},
           "ima-buf": {"kbuf": [d2.hex()]}, "verification-keys": ""}, open(t + "/pol.json", "w"))
PY
"$UEVM" runtime-policy check -v "$T/pol.json" "$T/list" >"$T/out" 2>&1
expect_eq "ima-ng name with spaces, ima-buf hex with whitespace and upper case: pass (as Keylime)" \
	0 $?
expect_match "both entries checked against the policy" "2 entries: 2 passed" "$(cat "$T/out")"
