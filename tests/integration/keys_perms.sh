#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Files that hold key material are used only when nobody but their owner
# (root or the caller) can read or replace them (issue 12, item 12): the
# file opened (a symlink's target) and every directory above it, as ssh's
# StrictModes.  Certificates: nobody else may replace them.  uevm's evmctl
# mode only warns.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../keys_lib.sh"
source "$TESTS_DIR/sig_ref.sh"
cd "$T" || exit 1
FAST=(--kdf-ops 1 --kdf-mem 8)
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
chmod 755 "$T"

make_key good.key
want=$(hmac_of raw:good.key)
expect_match "a root-owned key of mode 0600 works" '^02[0-9a-f]{40}$' "$want"

# hmac_err SPEC: the error (or the HMAC) with that key, one line.
hmac_err() { "$UEVM" hmac --uuid none --hmac-key "$1" "$KEYS_PROBE" 2>&1 | head -n 3; }

# The attack: a world-writable key owned by another user, taken by root.
cp good.key other.key
chown 65534:65534 other.key
chmod 666 other.key
out=$(hmac_err raw:other.key)
expect_match "a key owned by another user is refused" \
	"other\.key .*owned by uid 65534.*chown" "$out"
chown 0:0 other.key
out=$(hmac_err raw:other.key)
expect_match "a world-writable key is refused, saying how to fix it" \
	"other\.key .*(readable|writable).*0666.*chmod 600 .*other\.key" "$out"

cp good.key group.key
chmod 640 group.key
out=$(hmac_err raw:group.key)
expect_match "a group-readable key is refused" \
	"group\.key .*mode 0640.*chmod 600" "$out"
ln -s group.key link-to-group.key
out=$(hmac_err raw:link-to-group.key)
expect_match "a symlink to a group-readable key is refused (its target is checked)" \
	"link-to-group\.key .*mode 0640.*chmod 600 $T/group\.key" "$out"
ln -s good.key link-to-good.key
expect_eq "a good key through a symlink is accepted" "$want" "$(hmac_of raw:link-to-good.key)"
ln -s "$T/good.key" abs-link.key
expect_eq "... also through an absolute link" "$want" "$(hmac_of raw:abs-link.key)"

# Directories: group/other-writable without the sticky bit, or owned by
# another user, let someone else replace the key.
mkdir open && chmod 777 open
cp good.key open/k && chmod 600 open/k
out=$(hmac_err raw:open/k)
expect_match "a key in a world-writable directory (no sticky bit) is refused" \
	"open/k: directory $T/open is writable by group or others \(mode 0777.*chmod go-w $T/open" "$out"
ln -s open/k link-into-open.key
out=$(hmac_err raw:link-into-open.key)
expect_match "... also through a symlink from a safe directory" "directory $T/open is writable" "$out"
chmod 1777 open
expect_eq "a key in a sticky world-writable directory (like /tmp) is accepted" \
	"$want" "$(hmac_of raw:open/k)"
mkdir theirs && cp good.key theirs/k && chmod 600 theirs/k && chown 65534 theirs
out=$(hmac_err raw:theirs/k)
expect_match "a key in a directory owned by another user is refused" \
	"directory $T/theirs is owned by uid 65534" "$out"

# The caller's own key is fine for the caller, not for root.
mkdir nb && chown 65534:65534 nb && chmod 700 nb
cp good.key nb/k && chown 65534:65534 nb/k && chmod 600 nb/k
expect_eq "nobody's own key (0600) works for nobody" "$want" \
	"$("${NOBODY[@]}" "$UEVM" hmac --uuid none --hmac-key raw:nb/k "$KEYS_PROBE" 2>&1 | cut -d' ' -f1)"
expect_match "... and is refused for root" "owned by uid 65534" "$(hmac_err raw:nb/k)"

# Every form and every file a key comes from: passphrase files, TPM files,
# kernel blobs and their master keys, passphrases read from a file.
"$UEVM" key generate "${FAST[@]}" --out k.pp --passphrase-fd 3 3<<<pw >/dev/null 2>&1
chmod 644 k.pp
out=$(hmac_err passphrase:k.pp,passphrase-fd=3 3<<<pw)
expect_match "a readable passphrase file is refused (before any passphrase is read)" \
	"k\.pp .*mode 0644.*chmod 600" "$out"
chmod 600 k.pp
printf 'pw\n' >pw.txt
chmod 644 pw.txt
out=$("$UEVM" hmac --hmac-key passphrase:k.pp,passphrase-fd=3 "$KEYS_PROBE" 2>&1 3<pw.txt)
expect_match "a passphrase read from a world-readable file is refused" \
	"passphrase file $T/pw\.txt .*mode 0644.*chmod 600" "$out"
chmod 600 pw.txt
expect_rc "... and accepted once it is 0600" 0 \
	"$UEVM" hmac --hmac-key passphrase:k.pp,passphrase-fd=3 "$KEYS_PROBE" 3<pw.txt
printf 'uevm-key-tpm v1\nparent owner-ecc-p256-srk\n' >k.tpm
chmod 666 k.tpm
expect_match "a world-writable TPM file is refused before the TPM is asked" \
	"k\.tpm .*mode 0666" "$(hmac_err tpm:k.tpm)"
head -c 32 /dev/urandom >kmk && chmod 600 kmk
"$UEVM" key export --kernel-blob --master-key kmk --out k.blob raw:good.key
chmod 640 kmk
out=$(hmac_err kernel-blob:k.blob,master=kmk)
expect_match "a group-readable master key file is refused" "master key file kmk .*mode 0640" "$out"
chmod 600 kmk
chown 65534 k.blob
out=$(hmac_err kernel-blob:k.blob,master=kmk)
expect_match "a kernel blob owned by another user is refused" "k\.blob .*owned by uid 65534" "$out"
chown 0 k.blob
expect_eq "the kernel blob with safe files works" "$want" "$(hmac_of kernel-blob:k.blob,master=kmk)"
out=$("$UEVM" key status group.key 2>&1)
expect_match "key status says why a file is unusable" "group\.key: .*mode 0640.*chmod 600" "$out"

# Certificates: public, but nobody else may replace them.
mkdir sk && SIG_KEYS=p256 make_sig_keys sk
echo signed >signed
"$UEVM" sign --imasig --portable -k sk/p256.key signed >/dev/null 2>&1
expect_rc "a signature verifies with a root-owned 0644 certificate" 0 \
	"$UEVM" verify --cert sk/p256.pem signed
chmod 666 sk/p256.pem
out=$("$UEVM" verify --cert sk/p256.pem signed 2>&1)
expect_match "a world-writable certificate is refused" \
	"p256\.pem .*writable by group or others.*chmod go-w" "$out"
chmod 644 sk/p256.pem
chown 65534 sk/p256.pem
out=$("$UEVM" verify --cert sk/p256.pem signed 2>&1)
expect_match "a certificate owned by another user is refused" "p256\.pem .*owned by uid 65534" "$out"
chown 0 sk/p256.pem
chmod 644 sk/p256.key
out=$("$UEVM" sign --imasig --portable -k sk/p256.key signed 2>&1)
expect_match "a readable private signing key is refused" "p256\.key .*mode 0644.*chmod 600" "$out"
chmod 600 sk/p256.key

# uevmd and uevmfs refuse such keys at start.
UEVMD=${UEVM_BUILD:-$(dirname "$UEVM")}/uevmd
out=$("$UEVMD" -c "$TESTS_DIR/../programs/uevmd/uevmd.conf" -o "key=raw:$T/group.key" \
	-o "measurement_list=$T/example.ml" -o control_tree=none -o audit_syslog=no \
	-o audit_auditd=no --check --no-walk 2>&1)
expect_eq "uevmd: a group-readable key stops the start (a configuration error: 2)" 2 $?
expect_match "... naming the file and the fix" "group\.key .*chmod 600" "$out"
UEVMFS=${UEVM_BUILD:-$(dirname "$UEVM")}/uevmfs
mkdir -p src mnt
out=$(timeout 120 "$UEVMFS" src mnt -f -o "key=raw:$T/group.key,ml=none,securityfs=none,nosyslog" 2>&1)
expect_match "uevmfs: a group-readable key stops the mount" "group\.key .*chmod 600" "$out"

# evmctl mode: evmctl never checked; a warning, then the key is used.
# (evmctl prints its results on stderr.)
ev_want="hmac: $("$UEVM" hmac --hmac-key raw:good.key "$KEYS_PROBE" | cut -d' ' -f1 | cut -c3-)"
"$UEVM" evmctl hmac --hmackey group.key -n "$KEYS_PROBE" >/dev/null 2>err
expect_eq "evmctl mode: a group-readable key still works" "$ev_want" "$(grep '^hmac: ' err)"
expect_match "... with a warning naming the file" "warning: .*group\.key .*mode 0640" "$(cat err)"
expect_eq "... one line" 1 "$(grep -c warning err)"
"$UEVM" evmctl hmac --hmackey other.key -n "$KEYS_PROBE" >/dev/null 2>err
expect_eq "evmctl mode: a world-writable key still works" "$ev_want" "$(grep '^hmac: ' err)"
expect_match "... with a warning" "warning: .*other\.key .*mode 0666" "$(cat err)"
