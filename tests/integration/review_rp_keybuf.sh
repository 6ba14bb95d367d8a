#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Review finding (issue 13, runtime-policy check): whether an ima-buf
# buffer "is a key" decides between keyrings[name] and ima-buf[name].
# Keylime (file_signatures.get_pubkey) tries, with python3-cryptography,
# DER/PEM certificate, DER/PEM public key, then DER/PEM PRIVATE key, all
# strict (trailing bytes refused).  uevm's check takes a DER certificate
# with trailing bytes as a key (d2i_X509 ignores them) and a private key
# as no key: each way a policy entry in the other map makes check PASS
# where Keylime fails with not_in_allowlist.  Oracle: python3-cryptography
# with Keylime's order of loaders.
source "$(dirname "$0")/../lib.sh"
for tool in python3 openssl; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
python3 -c 'import cryptography' 2>/dev/null || { fail "tools" "python3-cryptography is missing"; exit 1; }

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/k.pem" -out "$T/c.pem" \
	-subj /CN=review -days 2 2>/dev/null
openssl x509 -in "$T/c.pem" -outform DER -out "$T/c.der"
openssl pkey -in "$T/k.pem" -outform DER -out "$T/k.der"
{ cat "$T/c.der"; printf '\0'; } >"$T/cjunk.der"

case_() {	# buffer-file map: the policy lists the buffer's digest in MAP
	python3 - "$1" "$2" "$T" <<'PY'
import hashlib, json, struct, sys
from cryptography import x509
from cryptography.hazmat.primitives import serialization as s
buf, where, t = open(sys.argv[1], "rb").read(), sys.argv[2], sys.argv[3]
def field(b): return struct.pack("<I", len(b)) + b
d = hashlib.sha256(buf).digest()
data = field(b"sha256:\0" + d) + field(b".ima\0") + field(buf)
open(t + "/list", "w").write("10 %s ima-buf sha256:%s .ima %s\n" %
                             (hashlib.sha1(data).hexdigest(), d.hex(), buf.hex()))
pol = {"meta": {"version": 1, "generator": 3}, "release": 0, "digests": {}, "excludes": [],
       "keyrings": {}, "ima": {"ignored_keyrings": [], "log_hash_alg": "sha1", "dm_policy": None},
       "ima-buf": {}, "verification-keys": ""}
pol[where][".ima"] = [d.hex()]
json.dump(pol, open(t + "/pol.json", "w"))
key = False
for f in (x509.load_der_x509_certificate, x509.load_pem_x509_certificate,
          s.load_der_public_key, s.load_pem_public_key,
          lambda b: s.load_der_private_key(b, None), lambda b: s.load_pem_private_key(b, None)):
    try:
        f(buf); key = True; break
    except Exception:
        pass
# Keylime: a key is checked against keyrings, anything else against ima-buf.
open(t + "/keylime", "w").write("0" if (where == "keyrings") == key else "1")
PY
	"$UEVM" runtime-policy check "$T/pol.json" "$T/list" >"$T/out" 2>&1
	local rc=$?
	expect_eq "$(basename "$1") listed in $2: check exits as Keylime's verdict" \
		"$(cat "$T/keylime")" "$rc"
}
case_ "$T/c.der" keyrings
case_ "$T/cjunk.der" keyrings
case_ "$T/k.der" ima-buf
