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
openssl pkey -in "$T/k.pem" -pubout -outform DER -out "$T/p.der"
{ cat "$T/p.der"; printf '\0'; } >"$T/pjunk.der"

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
case_ "$T/k.pem" keyrings
case_ "$T/p.der" keyrings
case_ "$T/pjunk.der" keyrings

# Keyids (file_signatures.py): a certificate's Subject Key Identifier,
# its last 4 bytes, unless those are 0 (Keylime then takes none) or it
# has none: then bytes 16..19 of SHA-1 over the key (PKCS#1 DER for RSA,
# the UNCOMPRESSED point for EC, whatever form the certificate holds).
# A signature made with Keylime's keyid must verify with the key learned
# from an ima-buf entry and with the one `create --cert` puts in
# verification-keys.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/z.key" -out "$T/z.pem" \
	-subj /CN=skid0 -days 2 -addext "subjectKeyIdentifier=01:02:03:04:05:06:07:08:00:00:00:00" \
	2>/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out "$T/e.key"
openssl ec -in "$T/e.key" -conv_form compressed -out "$T/ec.key" 2>/dev/null
openssl req -x509 -key "$T/ec.key" -out "$T/ec.pem" -subj /CN=compressed -days 2 \
	-addext subjectKeyIdentifier=none 2>/dev/null
keyid_case() {	# name certificate key
	python3 - "$2" "$3" "$T" <<'PY' || { fail "$1: fixture" "python failed"; return; }
import hashlib, json, struct, sys
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization as s
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed
cert = x509.load_pem_x509_certificate(open(sys.argv[1], "rb").read())
key = s.load_pem_private_key(open(sys.argv[2], "rb").read(), None)
t = sys.argv[3]
pub = cert.public_key()
if isinstance(pub, rsa.RSAPublicKey):
    kb = pub.public_bytes(s.Encoding.DER, s.PublicFormat.PKCS1)
else:
    kb = pub.public_bytes(s.Encoding.X962, s.PublicFormat.UncompressedPoint)
keyid = int.from_bytes(hashlib.sha1(kb).digest()[16:], "big")
try:
    skid = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    if len(skid) >= 4 and int.from_bytes(skid[-4:], "big"):
        keyid = int.from_bytes(skid[-4:], "big")
except x509.ExtensionNotFound:
    pass
def field(b): return struct.pack("<I", len(b)) + b
def line(tmpl, d, name, last):
    data = field(b"sha256:\0" + d) + field(name.encode() + b"\0") + field(last)
    return "10 %s %s sha256:%s %s %s\n" % (hashlib.sha1(data).hexdigest(), tmpl, d.hex(), name, last.hex())
der = cert.public_bytes(s.Encoding.DER)
d = hashlib.sha256(b"signed content").digest()
if isinstance(key, rsa.RSAPrivateKey):
    sig = key.sign(d, padding.PKCS1v15(), Prehashed(hashes.SHA256()))
else:
    sig = key.sign(d, ec.ECDSA(Prehashed(hashes.SHA256())))
sig = struct.pack(">BBBIH", 3, 2, 4, keyid, len(sig)) + sig
open(t + "/kid", "w").write(str(keyid))
open(t + "/der", "wb").write(der)
open(t + "/siglist", "w").write(line("ima-sig", d, "/opt/signed", sig))
open(t + "/buflist", "w").write(line("ima-buf", hashlib.sha256(der).digest(), ".ima", der) +
                                line("ima-sig", d, "/opt/signed", sig))
pol = {"meta": {"version": 1, "generator": 3}, "release": 0, "digests": {}, "excludes": [],
       "keyrings": {".ima": [hashlib.sha256(der).hexdigest()]},
       "ima": {"ignored_keyrings": [], "log_hash_alg": "sha1", "dm_policy": None},
       "ima-buf": {}, "verification-keys": ""}
json.dump(pol, open(t + "/learn.json", "w"))
PY
	"$UEVM" runtime-policy check "$T/learn.json" "$T/buflist" >"$T/out" 2>&1
	expect_eq "$1: the key learned from the ima-buf entry verifies a signature with Keylime's keyid" \
		0 $?
	"$UEVM" runtime-policy create --list "$T/siglist" --cert "$2" -o "$T/made.json" >"$T/out" 2>&1
	expect_eq "$1: create --cert" 0 $?
	expect_eq "$1: verification-keys holds Keylime's keyid" "[$(cat "$T/kid")]" \
		"$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(json.loads(p["verification-keys"])["keyids"], "/opt/signed" in p["digests"])' "$T/made.json" 2>&1 | sed 's/ False$//')"
	"$UEVM" runtime-policy check "$T/made.json" "$T/siglist" >"$T/out" 2>&1
	expect_eq "$1: the signed entry passes check with the policy create made" 0 $?
}
keyid_case "RSA certificate, SKID ending 00000000" "$T/z.pem" "$T/z.key"
keyid_case "EC certificate, compressed point, no SKID" "$T/ec.pem" "$T/ec.key"
