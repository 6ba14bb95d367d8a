#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 13: the certificates uevmd verifies signatures with are measured
# as the kernel measures keys added to its .ima keyring (func=KEY_CHECK):
# one ima-buf entry named ".ima" whose buffer is the DER certificate -
# only with a matching "measure func=KEY_CHECK" rule, once per list.  The
# entry is checked against independent references: the DER from openssl,
# the digests from sha256sum/sha1sum, the template digest recomputed from
# the kernel's documented template layout, the list read by
# tests/ima_ml_ref.py, and the certificate loaded from the buffer with
# python3-cryptography as Keylime loads it (its runtime policy lists the
# key's sha256 under keyrings[".ima"]).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"
source "$TESTS_DIR/sig_ref.sh"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
mkdir -p "$T/sig"
SIG_KEYS="rsa2048 p256" make_sig_keys "$T/sig" || { fail "openssl makes the certificates"; exit 1; }
echo "data" >"$MNT/f"
"$UEVM" label --hmac-key "raw:$T/key" "$MNT/f" >/dev/null

L=$T/bml
# keys_policy RULE...: a measuring policy with the given KEY_CHECK rules.
keys_policy() {
	{
		for r in "$@"; do echo "$r"; done
		echo "measure func=FILE_CHECK mask=MAY_READ"
	} >"$T/policy"
}
ascii_list() { "$UEVM" measurements daemon --ascii --socket "$SOCK"; }
# ima_buf_lines: the ima-buf entries of the running daemon's list.
ima_buf_lines() { ascii_list | awk '$3 == "ima-buf"'; }

# ---- no KEY_CHECK rule: no key entry (the kernel's behaviour) -----------------------
keys_policy
write_conf "cert = $T/sig/rsa2048.der" "measurement_list = $L"
start_uevmd || { fail "uevmd starts with a certificate"; exit 1; }
cat "$MNT/f" >/dev/null
expect_eq "without a KEY_CHECK rule no key is measured" "" "$(ima_buf_lines)"
# A reload that brings the rule measures the keys then.
keys_policy "measure func=KEY_CHECK keyrings=.ima"
kill -HUP "$UEVMD_PID"
check "  a reload brings a KEY_CHECK rule" log_has "reloaded $CONF"
expect_eq "  and the certificate is measured then, after the file" \
	"$MNT/f .ima" "$(ascii_list | awk '$5 != "boot_aggregate" { print $5 }' | tr '\n' ' ' | sed 's/ $//')"
stop_uevmd
rm -f "$L" "$L.mac"

# ---- a rule for another keyring: none either ------------------------------------------
keys_policy "measure func=KEY_CHECK keyrings=.evm|.builtin_trusted_keys"
write_conf "cert = $T/sig/rsa2048.der" "measurement_list = $L"
start_uevmd || { fail "uevmd starts (keyrings=.evm)"; exit 1; }
expect_eq "a KEY_CHECK rule for other keyrings measures nothing" "" "$(ima_buf_lines)"
stop_uevmd
rm -f "$L" "$L.mac"

# ---- keyrings=.ima: one entry per certificate, a PEM one as DER -------------------------
keys_policy "measure func=KEY_CHECK keyrings=.ima|.evm"
write_conf "cert = $T/sig/rsa2048.der" "cert = $T/sig/p256.pem" "measurement_list = $L"
start_uevmd || { fail "uevmd starts with a KEY_CHECK rule"; exit 1; }
check "  the log says the certificates were measured" \
	log_has "measured 2 certificates as keys of the .ima keyring"
cat "$MNT/f" >/dev/null
ascii_list >"$T/ascii"
openssl x509 -in "$T/sig/p256.pem" -outform DER -out "$T/p256.der"
n=0
for c in rsa2048 p256; do
	der=$T/sig/$c.der
	[ "$c" = p256 ] && der=$T/p256.der
	hex=$(xxd -p "$der" | tr -d '\n')
	sha=$(sha256sum "$der" | cut -d' ' -f1)
	n=$((n + 1))
	line=$(sed -n "$((n + 1))p" "$T/ascii")
	expect_eq "$c: entry $((n + 1)) is ima-buf, named .ima, digest sha256 of the DER" \
		"10 ima-buf sha256:$sha .ima" "$(awk '{ print $1, $3, $4, $5 }' <<<"$line")"
	expect_eq "  its buffer is the DER certificate (openssl x509 -outform DER | xxd -p)" \
		"$hex" "$(awk '{ print $6 }' <<<"$line")"
	# The template digest, from the kernel's layout: each field as
	# {u32 length, data}; d-ng "sha256:\0" + digest, n-ng name + '\0'.
	th=$(python3 - "$der" <<-'EOF'
	import hashlib, struct, sys
	der = open(sys.argv[1], "rb").read()
	f = lambda b: struct.pack("<I", len(b)) + b
	d = b"sha256:\0" + hashlib.sha256(der).digest()
	print(hashlib.sha1(f(d) + f(b".ima\0") + f(der)).hexdigest())
	EOF
	)
	expect_eq "  its template digest is sha1 over the fields" "$th" "$(awk '{ print $2 }' <<<"$line")"
	# Keylime: the buffer must load as a key (file_signatures.get_pubkey
	# tries DER X.509 first) and its digest is looked up in
	# keyrings[".ima"] of the runtime policy: the key file's sha256sum.
	kl=$(python3 - "$(awk '{ print $6 }' <<<"$line")" <<-'EOF'
	import sys
	from cryptography import x509
	from cryptography.hazmat.primitives.asymmetric import ec, rsa
	k = x509.load_der_x509_certificate(bytes.fromhex(sys.argv[1])).public_key()
	print("rsa" if isinstance(k, rsa.RSAPublicKey) else
	      "ec" if isinstance(k, ec.EllipticCurvePublicKey) else "other")
	EOF
	)
	expect_eq "  the buffer loads as an X.509 certificate with its key (as Keylime's get_pubkey)" \
		"$([ "$c" = p256 ] && echo ec || echo rsa)" "$kl"
done
expect_eq "two key entries, after boot_aggregate and before the files" \
	"boot_aggregate .ima .ima $MNT/f" "$(awk '{ print $5 }' "$T/ascii" | tr '\n' ' ' | sed 's/ $//')"
"$UEVM" measurements daemon --binary --socket "$SOCK" >"$T/live.bin"
python3 "$TESTS_DIR/ima_ml_ref.py" "$T/live.bin" "$T/ref.ascii" >"$T/ref.out"
expect_rc "the reference reader accepts the binary list" 0 \
	python3 "$TESTS_DIR/ima_ml_ref.py" "$T/live.bin" "$T/ref.ascii"
check "  no bad template digest" grep -qx "bad_digests 0" "$T/ref.out"
check "  and renders the same ASCII list" cmp -s "$T/ref.ascii" "$T/ascii"

# ---- a reload keeps the list as it is; a restart resumes it without doubles -----------
kill -HUP "$UEVMD_PID"
check "  a reload is done" log_has "reloaded $CONF"
cat "$MNT/f" >/dev/null
expect_eq "after a reload the keys are not listed twice" 2 "$(ima_buf_lines | wc -l)"
stop_uevmd
start_uevmd || { fail "uevmd restarts"; exit 1; }
expect_eq "after a restart the resumed list has each key once" 2 "$(ima_buf_lines | wc -l)"
stop_uevmd

# ---- the rule's template= and pcr= are used (as the kernel's ima_get_action) ------------
rm -f "$L" "$L.mac"
keys_policy "measure func=KEY_CHECK template=ima-ng pcr=11"
write_conf "cert = $T/sig/rsa2048.der" "measurement_list = $L"
start_uevmd || { fail "uevmd starts (KEY_CHECK template=ima-ng pcr=11)"; exit 1; }
expect_eq "a rule without keyrings= matches .ima; template= and pcr= apply" \
	"11 ima-ng sha256:$(sha256sum "$T/sig/rsa2048.der" | cut -d' ' -f1) .ima" \
	"$(ascii_list | awk '$5 == ".ima" { print $1, $3, $4, $5 }')"
stop_uevmd
