#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Error messages name the real cause and the fix, not a misleading hint:
#  - ramfs has no security.* xattrs: label, sign and verify say so for files
#    and directories, and do not send the user to --uuid;
#  - `uevm mount` of a SOURCE that does not exist says so;
#  - `uevm sign -k` with a file that is no private key says that (naming
#    it), not that a pass phrase is missing; an encrypted key still asks
#    for its pass phrase;
#  - label, clear and sign without CAP_SYS_ADMIN (as nobody) say once, up
#    front, that writing security.* needs it (exit 2), instead of one
#    EPERM per object; the key checks still apply as root.
source "$(dirname "$0")/../lib.sh"

KEY=$T/key
make_key "$KEY"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/priv.pem" 2>/dev/null
chmod 600 "$T/priv.pem"

# ---- ramfs: no security.* xattrs -----------------------------------------------
mkdir "$T/ram"
mount -t ramfs none "$T/ram" || { fail "mount -t ramfs"; exit 1; }
on_exit "umount '$T/ram'"
mkdir "$T/ram/d"
echo data >"$T/ram/f"
for uuid in "" "--uuid none"; do
	err=$("$UEVM" label -d $uuid --hmac-key "raw:$KEY" "$T/ram/d" "$T/ram/f" 2>&1)
	expect_eq "ramfs label ${uuid:-(auto UUID)}: exit 2" 2 $?
	for o in d f; do
		expect_match "ramfs label ${uuid:-(auto UUID)}: $o: the filesystem lacks security.* xattrs" \
			"^uevm: $T/ram/$o: not labelled: the filesystem does not support security\.\* extended attributes \(Operation not supported\)$" "$err"
	done
	expect_eq "ramfs label ${uuid:-(auto UUID)}: no advice to give --uuid" "" "$(grep -e '--uuid' <<<"$err")"
done
out=$("$UEVM" verify -d --hmac-key "raw:$KEY" "$T/ram/d" "$T/ram/f" 2>&1)
expect_eq "ramfs verify: exit 1" 1 $?
for o in d f; do
	expect_match "ramfs verify: $o: the filesystem lacks security.* xattrs" \
		"^FAIL $T/ram/$o: .*the filesystem does not support security\.\* extended attributes" "$out"
done
err=$("$UEVM" sign -k "$T/priv.pem" "$T/ram/f" 2>&1)
expect_eq "ramfs sign: exit 2" 2 $?
expect_match "ramfs sign: the filesystem lacks security.* xattrs" \
	"^uevm: $T/ram/f: not signed: the filesystem does not support security\.\* extended attributes" "$err"

# ---- mount: a SOURCE that does not exist, one that is a file ------------------
err=$("$UEVM" mount "$T/no-such-dir" "$T/mnt" 2>&1)
expect_eq "mount of a missing SOURCE: exit 2" 2 $?
expect_match "mount of a missing SOURCE: says it does not exist" \
	"$T/no-such-dir: No such file or directory" "$err"
expect_eq "mount of a missing SOURCE: not 'not a directory'" "" "$(grep 'not a directory' <<<"$err")"
err=$("$UEVM" mount "$T/key" "$T/mnt" 2>&1)
expect_eq "mount of a file: exit 2" 2 $?
expect_match "mount of a file: not a directory" "$T/key: not a directory" "$err"

# ---- sign -k: not a private key, an encrypted one -----------------------------
head -c 32 /dev/urandom >"$T/raw.key"
chmod 600 "$T/raw.key"
echo data >"$T/file"
err=$("$UEVM" sign -k "$T/raw.key" "$T/file" 2>&1)
expect_eq "sign -k RAWKEY: exit 2" 2 $?
expect_match "sign -k RAWKEY: not a private key OpenSSL can read, naming the file" \
	"$T/raw.key: not a private key OpenSSL can read \(PEM or DER" "$err"
expect_eq "sign -k RAWKEY: no pass phrase hint" "" "$(grep -i 'pass phrase' <<<"$err")"
expect_eq "sign -k RAWKEY: the file is not signed" "" "$(xattr_hex security.ima "$T/file")"
openssl pkey -in "$T/priv.pem" -aes256 -passout pass:secret -out "$T/enc.pem"
chmod 600 "$T/enc.pem"
err=$(env -u UEVM_KEY_PASSWORD "$UEVM" sign -k "$T/enc.pem" "$T/file" 2>&1 </dev/null)
expect_eq "sign -k ENCRYPTED without its pass phrase: exit 2" 2 $?
expect_match "sign -k ENCRYPTED without its pass phrase: asks for it" \
	"$T/enc.pem: cannot read the encrypted private key .*needs its pass phrase" "$err"
openssl pkcs8 -topk8 -in "$T/priv.pem" -passout pass:secret -outform DER -out "$T/enc.der"
chmod 600 "$T/enc.der"
err=$(env -u UEVM_KEY_PASSWORD "$UEVM" sign -k "$T/enc.der" "$T/file" 2>&1 </dev/null)
expect_match "sign -k ENCRYPTED DER without its pass phrase: asks for it" \
	"$T/enc.der: cannot read the encrypted private key .*needs its pass phrase" "$err"

# ---- without CAP_SYS_ADMIN ----------------------------------------------------
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
mkdir -p "$T/tree/sub"
for i in 1 2 3; do echo "$i" >"$T/tree/sub/f$i"; done
expect_eq "the scratch tree is out of nobody's reach" 1 \
	"$("${NOBODY[@]}" ls "$T/tree" >/dev/null 2>&1 || echo 1)"
# nobody_once CMD ARG...: exit 2, one line naming CAP_SYS_ADMIN.
nobody_once() {
	local name=$1 err rc
	err=$("${NOBODY[@]}" "$UEVM" "$@" 2>&1); rc=$?
	expect_eq "$name as nobody: exit 2" 2 $rc
	expect_match "$name as nobody: says it needs CAP_SYS_ADMIN" \
		"^uevm $name: .* security\.\* attributes needs CAP_SYS_ADMIN" "$err"
	expect_eq "$name as nobody: one line, not one per object" 1 "$(wc -l <<<"$err")"
}
nobody_once label -r --hmac-key "raw:$KEY" "$T/tree"
nobody_once clear -r "$T/tree"
nobody_once sign -r -k "$T/priv.pem" "$T/tree"
# nobody's own key and tree: the same answer.
NB=$(mktemp -d /var/tmp/uevm-nobody.XXXXXX)
on_exit "rm -rf '$NB'"
chmod 755 "$NB"
mkdir "$NB/own"
make_key "$NB/own/key"
echo x >"$NB/own/f"
chown -R 65534:65534 "$NB/own"
chmod 700 "$NB/own"
nobody_once label --hmac-key "raw:$NB/own/key" "$NB/own/f"
# Root still gets the key checks.
chmod 644 "$KEY"
err=$("$UEVM" label -r --hmac-key "raw:$KEY" "$T/tree" 2>&1)
expect_eq "root, a key others can read: exit 2" 2 $?
expect_match "root, a key others can read: the key is refused" "mode 0644" "$err"
chmod 600 "$KEY"
expect_rc "root labels the tree" 0 "$UEVM" label -r --hmac-key "raw:$KEY" "$T/tree"
expect_rc "root verifies it" 0 "$UEVM" verify -r --hmac-key "raw:$KEY" "$T/tree"
expect_rc "root clears it" 0 "$UEVM" clear -r "$T/tree"
expect_eq "clear removed security.ima" "" "$(xattr_hex security.ima "$T/tree/sub/f1")"
