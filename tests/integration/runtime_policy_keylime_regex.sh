#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Review finding (issue 13, runtime-policy check): excludes that Python's
# re.match (what Keylime's verifier uses) does NOT match, but the POSIX
# translation does, so `uevm runtime-policy check` reports PASS (excluded)
# for entries Keylime fails with not_in_allowlist:
#  - a '[' escaped inside a class followed by ':' becomes a POSIX
#    character class: Python [[\:alpha\:]] is the set {[ : a l p h},
#    POSIX [[:alpha:]] any letter;
#  - '.' and counts on non-ASCII names: Python counts code points, the
#    POSIX regex (C locale) bytes: '/opt/..\Z' matches "/opt/é" (2 bytes).
# The oracle is Python's re itself.
source "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || { fail "tools" "python3 is missing"; exit 1; }

# case EXCLUDE NAME: check's verdict must be Python's (excluded or not).
case_() {
	python3 - "$1" "$2" "$T" <<'PY'
import hashlib, json, re, struct, sys
excl, name, t = sys.argv[1], sys.argv[2], sys.argv[3]
def field(b): return struct.pack("<I", len(b)) + b
d = hashlib.sha256(name.encode()).digest()
data = field(b"sha256:\0" + d) + field(name.encode() + b"\0")
open(t + "/list", "w").write("10 %s ima-ng sha256:%s %s\n" % (hashlib.sha1(data).hexdigest(), d.hex(), name))
json.dump({"meta": {"version": 1, "generator": 3}, "release": 0, "digests": {},
           "excludes": [excl], "keyrings": {},
           "ima": {"ignored_keyrings": [], "log_hash_alg": "sha1", "dm_policy": None},
           "ima-buf": {}, "verification-keys": ""}, open(t + "/pol.json", "w"))
import warnings; warnings.simplefilter("ignore")
open(t + "/py", "w").write("1" if re.compile("(" + excl + ")").match(name) else "0")
PY
	"$UEVM" runtime-policy check "$T/pol.json" "$T/list" >"$T/out" 2>&1
	local rc=$?
	if [ "$(cat "$T/py")" = 1 ]; then
		expect_eq "exclude '$1' on '$2': excluded, as Python's re.match" 0 "$rc"
	else
		expect_eq "exclude '$1' on '$2': not excluded, as Python's re.match (Keylime: not_in_allowlist)" 1 "$rc"
	fi
}
case_ '/opt/[[\:alpha\:]]' '/opt/z]'
case_ '/opt/[[\:alpha\:]]' '/opt/:]'
case_ '/opt/..\Z' '/opt/é'
case_ '/tmp/.{4,}' '/tmp/éé'
case_ '/tmp/.{4,}' '/tmp/abcd'
# The same without escapes (Python warns of a possible nested set but
# reads a literal '['), a '[' with '.' and '=', and classes on non-ASCII.
case_ '/opt/[[:alpha:]]' '/opt/x]'
case_ '/opt/[[:alpha:]]' '/opt/[]'
case_ '/opt/[x[.]a' '/opt/.a'
case_ '/opt/[x[=]a' '/opt/xa'
case_ '/opt/\w\Z' '/opt/é'
case_ '/opt/[^/]\Z' '/opt/é'
case_ '/opt/\s' '/opt/ x'
