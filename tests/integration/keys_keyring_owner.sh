#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# keyring:NAME takes only a key owned by the caller or by root (issue 12,
# item 15).  The attack: under sudo, root keeps the invoking user's session
# keyring; the user plants `keyctl padd user NAME @s` with a key of their
# own and labels a tree with it; root's `uevm verify --hmac-key keyring:NAME`
# must not use that key, and must say which key it skipped and which it used.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../keys_lib.sh"
cd "$T" || exit 1
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
NAME=uevm-plant-$$-$RANDOM
BASE=$NAME
chmod 755 "$T"

# Everything this script adds to root's user keyring goes on exit.
drop_user_keys() {
	local id
	for id in $(keyctl rlist @u 2>/dev/null); do
		case $(keyctl rdescribe "$id" 2>/dev/null) in
		*";$BASE"*|*";uevm-info:$BASE"*) keyctl unlink "$id" @u >/dev/null 2>&1 ;;
		esac
	done
}
on_exit drop_user_keys

# The session keyring (private to this script, from keys_lib.sh) belongs
# to the unprivileged user, as the invoking user's does under sudo.
keyctl chown @s 65534
head -c 32 /dev/urandom >attacker.key
chmod 644 attacker.key
planted=$("${NOBODY[@]}" keyctl padd user "$NAME" @s <attacker.key)
expect_match "the user plants a key in the session keyring root uses" '^[0-9]+$' "$planted"
expect_match "... owned by that user" "^user;65534;" "$(keyctl rdescribe "$planted")"

make_key root.key
# The user's tree, tampered and labelled with the planted key.
mkdir tree && echo evil >tree/f
chmod 600 attacker.key
"$UEVM" label -r --hmac-key raw:attacker.key tree >/dev/null
check "the attacker's labels verify with the attacker's key" \
	"$UEVM" verify -r --hmac-key raw:attacker.key tree

out=$("$UEVM" verify -r --hmac-key "keyring:$NAME" tree 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then
	fail "root does not use a key planted by another user" "verify passed: $out"
else
	pass "root does not use a key planted by another user (exit $rc)"
fi
expect_match "... saying no key of its own was found" "no user key '$NAME' owned by uid 0 or root" "$out"
expect_match "... and naming the key it skipped (serial and owner)" \
	"warning: .*skipped user key '$NAME' \(serial $planted\) owned by uid 65534" "$out"
expect_match "the planted key was not burnt or taken" "^user;65534;" "$(keyctl rdescribe "$planted" 2>&1)"

# Root's own key on the user's session keyring is no better: whoever owns
# a keyring possesses the keys on it, and can replace them.
ses=$(keyctl padd user "$NAME-ses" @s <root.key)
check "the session keyring's owner can replace root's key on it" \
	"${NOBODY[@]}" keyctl pupdate "$ses" <attacker.key
out=$("$UEVM" verify -r --hmac-key "keyring:$NAME-ses" tree 2>&1)
expect_eq "root's key on another user's session keyring is not used" 2 $?
expect_match "... the warning names the keyring's owner" \
	"skipped user key '$NAME-ses' \(serial $ses\) owned by uid 0 on the session keyring, which uid 65534 owns" "$out"
out=$("$UEVM" key load --keyring @s --name "$NAME-ses" raw:root.key 2>&1)
expect_eq "key load refuses a keyring another user owns" 2 $?
expect_match "... saying why" "target keyring belongs to uid 65534" "$out"

# With root's own key of that name on its user keyring (where uevm key
# load puts it), root's key is used.
"$UEVM" key load --name "$NAME" raw:root.key >load.out 2>&1
mine=$(sed -n 's/.*, serial \([0-9]*\),.*/\1/p' load.out)
expect_match "key load: on root's user keyring" "as user key '$NAME', serial [0-9]+, on the user keyring" "$(cat load.out)"
mkdir good && echo good >good/f
"$UEVM" label -r --hmac-key raw:root.key good >/dev/null
out=$("$UEVM" verify -r -v --hmac-key "keyring:$NAME" good 2>&1)
expect_eq "root's own key (user keyring) is used instead: its tree verifies" 0 $?
expect_match "... -v says which key: serial, owner, keyring" \
	"HMAC key: user key '$NAME' \(serial $mine\) owned by uid 0 on the user keyring" "$out"
expect_match "... and the skipped key is still named" "skipped user key '$NAME' \(serial $planted\)" "$out"
out=$("$UEVM" verify -r --hmac-key "keyring:$NAME" tree 2>&1)
expect_eq "... and the attacker's tree fails with it" 1 $?

# A master key for a kernel blob: the same rule.
head -c 32 /dev/urandom >kmk && chmod 600 kmk
"$UEVM" key export --kernel-blob --master-key kmk --out k.blob raw:root.key
kmk_planted=$("${NOBODY[@]}" keyctl padd user "kmk-$NAME" @s <attacker.key)
out=$("$UEVM" hmac --hmac-key "kernel-blob:k.blob,master=keyring:kmk-$NAME" "$KEYS_PROBE" 2>&1)
expect_match "a planted master key is skipped too" \
	"skipped user key 'kmk-$NAME' \(serial $kmk_planted\) owned by uid 65534" "$out"

# uevm key status: which key a consumer would take, and the skipped one.
st=$("$UEVM" key status --name "$NAME" 2>&1)
expect_match "key status names the key in use: serial, owner, keyring" \
	"user key '$NAME' present \(serial $mine, owner uid 0, user keyring" "$st"
expect_match "key status names the skipped key" "skipped user key '$NAME' \(serial $planted\) owned by uid 65534" "$st"

# The unprivileged user's own key is theirs to use.
nb=$("${NOBODY[@]}" "$UEVM" verify -r --hmac-key "keyring:$NAME" tree 2>&1)
expect_eq "the user who owns the key can use it" 0 $?

# A consumer takes it from the user keyring, and burns it.
expect_rc "keyring:NAME,burn takes root's key from the user keyring" 0 \
	"$UEVM" verify -r --hmac-key "keyring:$NAME,burn" good
expect_rc "... and it is gone from there" 1 keyctl search @u user "$NAME"
expect_match "... while the planted key was left alone" "^user;65534;" "$(keyctl rdescribe "$planted" 2>&1)"
