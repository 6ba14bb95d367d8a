#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The kernel's "encrypted" key blobs, against this machine's kernel
# (CONFIG_ENCRYPTED_KEYS): blobs uevm writes load with keyctl; blobs the
# kernel creates decrypt in uevm and re-encrypt to the identical blob.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../keys_lib.sh"
cd "$T" || exit 1
FAST=(--kdf-ops 1 --kdf-mem 8)
# Key material, master keys and blobs are private files (uevm refuses
# others), as an operator's umask would make them.
umask 077

head -c 32 /dev/urandom >kmk
head -c 32 /dev/urandom >kmk2
printf 'short' >kmk-short
keyctl padd user kmk @s <kmk >/dev/null
expect_match "the kernel has the encrypted key type" '^[0-9]+$' \
	"$(keyctl add encrypted probe "new default user:kmk 32" @s 2>&1)"

# 1. uevm writes, the kernel loads.
"$UEVM" key generate "${FAST[@]}" --out k.pp --plain k.plain --passphrase-fd 3 3<<<pw >/dev/null 2>&1
"$UEVM" key export --kernel-blob --master-key kmk --out u.blob passphrase:k.pp,passphrase-fd=3 3<<<pw
expect_match "export writes a default-format blob" '^default user:kmk 32 [0-9a-f]{162}$' "$(cat u.blob)"
id=$(keyctl add encrypted evm-key "load $(cat u.blob)" @s 2>&1)
expect_match "the kernel loads the blob uevm wrote" '^[0-9]+$' "$id"
keyctl pipe "$id" >u.repiped 2>/dev/null
check "the kernel re-emits the identical blob (same key, same IV)" cmp -s u.blob u.repiped
"$UEVM" key export --kernel-blob --master-key kmk2 --out u2.blob raw:k.plain
expect_rc "the kernel refuses a blob made with another master key" 1 \
	keyctl add encrypted evm-key2 "load $(cat u2.blob)" @s
no_key_in "no plaintext key in the blobs" k.plain u.blob u2.blob u.repiped

# 2. The kernel writes, uevm reads and re-encrypts identically.
for len in 20 32 64 128; do
	kid=$(keyctl add encrypted "kern$len" "new default user:kmk $len" @s)
	keyctl pipe "$kid" >"k$len.blob"
	out=$("$UEVM" key import --kernel-blob "k$len.blob" --master-key kmk "${FAST[@]}" \
		--out "k$len.pp" --plain "k$len.plain" --passphrase-fd 3 2>&1 3<<<pw)
	expect_eq "import a $len-byte kernel key" "$len" "$(stat -c %s "k$len.plain" 2>/dev/null)"
	iv=$(cut -d' ' -f4 "k$len.blob" | cut -c1-32)
	"$UEVM" key export --kernel-blob --master-key kmk --iv "$iv" --out "re$len.blob" \
		"passphrase:k$len.pp,passphrase-fd=3" 3<<<pw
	check "$len-byte kernel key re-encrypts to the identical blob" cmp -s "k$len.blob" "re$len.blob"
	expect_eq "$len-byte kernel blob as --hmac-key kernel-blob:...,master=" \
		"$(hmac_of "raw:k$len.plain")" "$(hmac_of "kernel-blob:k$len.blob,master=kmk")"
	no_key_in "no plaintext $len-byte key in the imported file" "k$len.plain" "k$len.pp" "k$len.blob"
done
expect_match "the HMAC from a kernel blob is real" '^02[0-9a-f]{40}$' "$(hmac_of kernel-blob:k32.blob,master=kmk)"

# A short master key (the kernel pads the derivation input to 32 bytes).
keyctl padd user kmks @s <kmk-short >/dev/null
kid=$(keyctl add encrypted kshort "new default user:kmks 32" @s)
keyctl pipe "$kid" >short.blob
"$UEVM" key import --kernel-blob short.blob --master-key kmk-short "${FAST[@]}" \
	--out short.pp --passphrase-fd 3 3<<<pw >/dev/null 2>&1
iv=$(cut -d' ' -f4 short.blob | cut -c1-32)
"$UEVM" key export --kernel-blob --master-key kmk-short --master-desc user:kmks --iv "$iv" \
	--out short.re passphrase:short.pp,passphrase-fd=3 3<<<pw
check "5-byte master key: identical blob" cmp -s short.blob short.re

# The enc32 format and the master key read from the keyring.
kid=$(keyctl add encrypted kenc32 "new enc32 user:kmk 32" @s)
keyctl pipe "$kid" >enc32.blob
expect_match "enc32 blob decrypts" '^02[0-9a-f]{40}$' "$(hmac_of kernel-blob:enc32.blob,master=kmk)"
expect_eq "master key from the keyring (master=keyring:kmk)" \
	"$(hmac_of kernel-blob:k32.blob,master=kmk)" "$(hmac_of kernel-blob:k32.blob,master=keyring:kmk)"

# 3. Wrong master key, damage, limits: clear errors.
out=$("$UEVM" key import --kernel-blob k32.blob --master-key kmk2 "${FAST[@]}" --out w.pp --passphrase-fd 3 2>&1 3<<<pw)
expect_match "wrong master key is named as such" 'k32\.blob: .*wrong master key' "$out"
expect_rc "... and nothing is written" 1 test -e w.pp
out=$("$UEVM" hmac --hmac-key kernel-blob:k32.blob "$KEYS_PROBE" 2>&1)
expect_match "a blob without master key says how to give it" 'master=' "$out"
sed 's/.$/0/;t' k32.blob >bad.blob
[ "$(tail -c1 k32.blob)" = 0 ] && sed -i 's/.$/1/' bad.blob
out=$("$UEVM" hmac --hmac-key kernel-blob:bad.blob,master=kmk "$KEYS_PROBE" 2>&1)
expect_match "a modified blob fails its HMAC" 'HMAC does not match' "$out"
head -c 100 k32.blob >trunc.blob
out=$("$UEVM" hmac --hmac-key kernel-blob:trunc.blob,master=kmk "$KEYS_PROBE" 2>&1)
expect_match "a truncated blob is reported as such" 'truncated' "$out"
kid=$(keyctl add encrypted kbig "new default user:kmk 256" @s)
keyctl pipe "$kid" >big.blob
out=$("$UEVM" hmac --hmac-key kernel-blob:big.blob,master=kmk "$KEYS_PROBE" 2>&1)
expect_match "a 256-byte kernel key is refused (EVM uses at most 128)" 'longer than the 128 bytes' "$out"
head -c 19 /dev/urandom >k19
out=$("$UEVM" key export --kernel-blob --master-key kmk raw:k19 2>&1)
expect_match "export refuses keys under the kernel's 20 bytes" 'at least 20' "$out"
out=$("$UEVM" key export --kernel-blob raw:k.plain 2>&1)
expect_eq "export needs --master-key (exit 2)" 2 $?
expect_match "... and says so" 'kernel-blob needs --master-key' "$out"
