#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevm key load puts the key on the keyring; a consumer reads it once and
# burns it (zeros, then invalidation); other names are kept unless asked.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../keys_lib.sh"
cd "$T" || exit 1
FAST=(--kdf-ops 1 --kdf-mem 8)

"$UEVM" key generate "${FAST[@]}" --out k.pp --plain k.plain --passphrase-fd 3 3<<<pw >/dev/null 2>&1
mkdir tree && echo a >tree/a && echo b >tree/b

load=$("$UEVM" key load --keyring @s --passphrase-fd 3 passphrase:k.pp 3<<<pw 2>&1)
expect_match "key load reports the name and fingerprint" "as user key 'evm-key'" "$load"
id=$(keyctl search @s user evm-key 2>/dev/null)
expect_match "evm-key is on the session keyring" '^[0-9]+$' "$id"
keyctl pipe "$id" >loaded 2>/dev/null
check "the keyring holds the unwrapped key" cmp -s k.plain loaded
fpr=$(sed -n 's/.*fingerprint \([0-9a-f]*\).*/\1/p' <<<"$load")
st=$("$UEVM" key status 2>&1)
expect_match "status: present, with the same fingerprint" "present .*fingerprint $fpr" "$st"
expect_match "status: where it came from" "last load: fingerprint=$fpr .*source=.*k\.pp" "$st"
echo "$st" >status1.out
no_key_in "status never prints the key" k.plain status1.out

# The consumer reads it once and burns it.
expect_rc "label with --hmac-key keyring:evm-key" 0 "$UEVM" label -r --hmac-key keyring:evm-key tree
expect_rc "evm-key is gone from the keyring after the read" 1 keyctl search @s user evm-key
expect_rc "the old key id can no longer be read" 1 keyctl pipe "$id"
# Invalidated keys are garbage-collected by a kernel work item: wait for it.
hexid=$(printf '%08x' "$id")
key_collected() { ! grep -q "^$hexid " /proc/keys; }
wait_quiet "$WAIT_S" key_collected
expect_eq "the key is gone from /proc/keys (invalidated and collected)" "" \
	"$(grep "^$hexid " /proc/keys)"
: >all-keys
for k in $(keyctl rlist @s); do keyctl pipe "$k" >>all-keys 2>/dev/null; done
no_key_in "no key on the keyring holds the key bytes any more" k.plain all-keys
expect_rc "the labels were made with the right key" 0 "$UEVM" verify -r --hmac-key raw:k.plain tree
st=$("$UEVM" key status 2>&1)
expect_match "status: absent after the consumer took it" "no user key 'evm-key'" "$st"
expect_match "status: who took it" "taken=.* by-pid=[0-9]+" "$st"

# Other names: kept by default (keyring:NAME), burnt with ,burn.
"$UEVM" key load --keyring @s --name "uevm-t-$$" raw:k.plain >/dev/null 2>&1
expect_rc "keyring:NAME (not evm-key) reads without burning" 0 "$UEVM" verify -r --hmac-key "keyring:uevm-t-$$" tree
expect_match "... and the key is still there" '^[0-9]+$' "$(keyctl search @s user "uevm-t-$$" 2>&1)"
expect_rc "keyring:NAME,burn reads and burns" 0 "$UEVM" verify -r --hmac-key "keyring:uevm-t-$$,burn" tree
expect_rc "... the key is gone" 1 keyctl search @s user "uevm-t-$$"
out=$("$UEVM" verify -r --hmac-key "keyring:uevm-t-$$" tree 2>&1)
expect_match "a second consumer finds no key" "no user key 'uevm-t-$$'" "$out"
"$UEVM" key load --keyring @s --passphrase-fd 3 passphrase:k.pp 3<<<pw >/dev/null 2>&1
expect_rc "keyring:evm-key,keep does not burn" 0 "$UEVM" verify -r --hmac-key keyring:evm-key,keep tree
expect_match "... evm-key is still there" '^[0-9]+$' "$(keyctl search @s user evm-key 2>&1)"

# A key the consumer may read but not overwrite: refuse rather than leave it.
id=$(keyctl search @s user evm-key)
keyctl setperm "$id" 0x0b000000
out=$("$UEVM" verify -r --hmac-key keyring:evm-key tree 2>&1)
rc=$?
expect_eq "a key that cannot be burnt is refused (exit 2)" 2 "$rc"
expect_match "... saying so" 'cannot wipe key' "$out"
keyctl unlink "$id" @s >/dev/null

# Every form loads: a kernel blob with its master key.
head -c 32 /dev/urandom >kmk
chmod 600 kmk
"$UEVM" key export --kernel-blob --master-key kmk --out k.blob raw:k.plain
"$UEVM" key load --keyring @s --master-key kmk kernel-blob:k.blob >/dev/null 2>&1
keyctl pipe "$(keyctl search @s user evm-key)" >loaded2 2>/dev/null
check "key load of a kernel blob with --master-key" cmp -s k.plain loaded2
out=$("$UEVM" key load --keyring @s kernel-blob:k.blob 2>&1)
expect_match "key load of a kernel blob without master key says what is missing" 'master' "$out"
