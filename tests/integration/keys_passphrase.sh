#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevm key generate/import/export with the passphrase form; the key as
# --hmac-key for label/verify; wrong passphrase; damaged files.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../keys_lib.sh"
cd "$T" || exit 1
FAST=(--kdf-ops 1 --kdf-mem 8)

# generate: protected form only, the plain copy only on request.
"$UEVM" key generate --out k.pp --passphrase-fd 3 --plain k.plain 3<<<"correct horse" >gen.out 2>gen.err
expect_rc "generate with --passphrase-fd (default Argon2id cost)" 0 test -s k.pp
expect_eq "plain copy has 32 bytes" 32 "$(stat -c %s k.plain)"
expect_eq "plain copy has mode 0600" 600 "$(stat -c %a k.plain)"
expect_eq "protected file has mode 0600" 600 "$(stat -c %a k.pp)"
expect_match "default KDF cost is recorded (3 passes, 256 MiB)" \
	'^kdf argon2id ops=3 mem=268435456$' "$(cat k.pp)"
expect_match "generate warns about the plain copy" "plain text" "$(cat gen.err)"
no_key_in "no plaintext key in the passphrase file or the output" k.plain k.pp gen.out gen.err

# The same key through every spelling of the spec.
want=$(hmac_of raw:k.plain)
expect_match "the plain copy as raw:FILE gives an HMAC" '^02[0-9a-f]{40}$' "$want"
expect_eq "passphrase file (passphrase:FILE,passphrase-fd=N) gives the same key" "$want" \
	"$(hmac_of passphrase:k.pp,passphrase-fd=3 3<<<"correct horse")"

# label with the plain key, verify with the passphrase file.
mkdir tree && echo data >tree/a && echo more >tree/b
"$UEVM" label -r --hmac-key raw:k.plain tree >/dev/null 2>&1
expect_rc "verify with the passphrase-protected key" 0 \
	"$UEVM" verify -r --hmac-key passphrase:k.pp,passphrase-fd=3 tree 3<<<"correct horse"

# Wrong passphrase: a clear error, exit 2, nothing computed.
out=$("$UEVM" hmac --hmac-key passphrase:k.pp,passphrase-fd=3 "$KEYS_PROBE" 3<<<"wrong horse" 2>&1)
rc=$?
expect_eq "wrong passphrase exits 2" 2 "$rc"
expect_match "wrong passphrase is named as such, with the file" 'k\.pp: wrong passphrase' "$out"
out=$("$UEVM" key load --keyring @s --passphrase-fd 3 passphrase:k.pp 3<<<"wrong horse" 2>&1)
expect_match "key load: wrong passphrase" 'wrong passphrase' "$out"
expect_rc "key load: nothing on the keyring after a wrong passphrase" 1 keyctl search @s user evm-key

# No terminal and no fd: a clear error instead of a hang.
out=$(setsid "$UEVM" hmac --hmac-key passphrase:k.pp "$KEYS_PROBE" </dev/null 2>&1)
expect_match "no terminal: says how to give the passphrase" 'no terminal.*passphrase-fd' "$out"

# Damaged files: every one is an error, none a raw key.
for n in 1 2 3 4 5 6 7; do
	sed "${n}s/.\$/Z/" k.pp >"bad$n.pp"
	chmod 600 "bad$n.pp"
	expect_rc "line $n made invalid is rejected" 2 "$UEVM" hmac --hmac-key "passphrase:bad$n.pp,passphrase-fd=3" "$KEYS_PROBE" 3<<<"correct horse"
done
# Valid hex, other value: the AEAD tag catches it (salt, nonce, data).
for name in salt nonce data; do
	sed "/^$name /{s/ 0/ 1/;t;s/ [1-9a-f]/ 0/}" k.pp >"mod-$name.pp"
	chmod 600 "mod-$name.pp"
	expect_eq "modified $name: one byte differs" 1 "$(cmp -l k.pp "mod-$name.pp" | wc -l)"
	out=$("$UEVM" hmac --hmac-key "passphrase:mod-$name.pp,passphrase-fd=3" "$KEYS_PROBE" 2>&1 3<<<"correct horse")
	expect_match "modified $name: refused as wrong passphrase or modified file" 'modified' "$out"
done
for n in 10 40 100 150 200 250 $(( $(stat -c %s k.pp) - 1 )); do
	head -c "$n" k.pp >"trunc$n.pp"
	chmod 600 "trunc$n.pp"
	out=$("$UEVM" hmac --hmac-key "passphrase:trunc$n.pp,passphrase-fd=3" "$KEYS_PROBE" 2>&1 3<<<"correct horse")
	rc=$?
	expect_eq "truncated to $n bytes is rejected" 2 "$rc"
	expect_match "truncated to $n bytes: the error names the file" "trunc$n\.pp" "$out"
done
printf 'uevm-key-passphrase v1\nkdf argon2id ops=1 mem=8192\n' >short.pp
chmod 600 short.pp
out=$("$UEVM" hmac --hmac-key passphrase:short.pp "$KEYS_PROBE" 2>&1)
expect_match "a cut-off header says what is missing" "'salt' line is missing" "$out"

# generate: sizes, never overwriting, bad options.
"$UEVM" key generate "${FAST[@]}" --size 128 --out k128.pp --plain k128.plain --passphrase-fd 3 3<<<pw >/dev/null 2>&1
expect_eq "--size 128 gives a 128-byte key" 128 "$(stat -c %s k128.plain)"
expect_eq "128-byte key round trip" "$(hmac_of raw:k128.plain)" "$(hmac_of passphrase:k128.pp,passphrase-fd=3 3<<<pw)"
expect_rc "--size 129 is refused" 2 "$UEVM" key generate --size 129 --out x.pp --passphrase-fd 3 3<<<pw
expect_rc "--size 0 is refused" 2 "$UEVM" key generate --size 0 --out x.pp --passphrase-fd 3 3<<<pw
cp k.pp k.pp.orig
expect_rc "--out never overwrites" 2 "$UEVM" key generate "${FAST[@]}" --out k.pp --passphrase-fd 3 3<<<pw
check "--out left the existing file alone" cmp -s k.pp k.pp.orig
ln -s k.pp link.pp
expect_rc "--out does not follow a symlink" 2 "$UEVM" key generate "${FAST[@]}" --out link.pp --passphrase-fd 3 3<<<pw
expect_rc "--plain never overwrites" 2 "$UEVM" key generate "${FAST[@]}" --out new.pp --plain k.plain --passphrase-fd 3 3<<<pw
expect_rc "generate needs --out" 2 "$UEVM" key generate --passphrase-fd 3 3<<<pw
expect_rc "an empty passphrase is refused" 2 "$UEVM" key generate "${FAST[@]}" --out e.pp --passphrase-fd 3 3<<<""
expect_rc "... and nothing is written" 1 test -e e.pp

# import a raw key into the passphrase form; export it back explicitly.
"$UEVM" key import "${FAST[@]}" --out imp.pp --passphrase-fd 3 raw:k.plain 3<<<"pw2" >/dev/null
expect_eq "import a raw key into the passphrase form" "$want" "$(hmac_of passphrase:imp.pp,passphrase-fd=3 3<<<pw2)"
"$UEVM" key export --plain exp.plain passphrase:imp.pp,passphrase-fd=3 3<<<"pw2" 2>/dev/null
check "export --plain gives back the same bytes" cmp -s k.plain exp.plain
no_key_in "no plaintext key in the imported file" k.plain imp.pp

# status describes files without a passphrase and never shows the key.
st=$("$UEVM" key status k.pp k.plain 2>&1)
expect_match "status: passphrase file" 'k\.pp: 32-byte key protected by a passphrase \(Argon2id, 3 passes, 256 MiB' "$st"
expect_match "status: plain file is flagged" 'k\.plain: 32-byte PLAIN key' "$st"
echo "$st" >status.out
no_key_in "status never prints the key" k.plain status.out

# The terminal: asked twice without echo.  Each line is typed once its
# prompt is shown (tests/pty_answer.py), never before.
on_tty() {	# INPUT-LINE... -- CMD...: run CMD on a pty, answering its prompts
	python3 "$TESTS_DIR/pty_answer.py" '[Pp]assphrase[^\n]*:' "$@" 2>&1
}
out=$(on_tty "tty secret 1" "tty secret 1" -- "$UEVM" key generate "${FAST[@]}" --out tty.pp --plain tty.plain)
expect_match "terminal: asks for the new passphrase twice" 'New passphrase: .*Passphrase again:' "$(tr -d '\r\n' <<<"$out")"
expect_eq "terminal: the passphrase is not echoed" 0 "$(grep -c "tty secret" <<<"$out")"
expect_eq "terminal: the key is under that passphrase" "$(hmac_of raw:tty.plain)" \
	"$(hmac_of passphrase:tty.pp,passphrase-fd=3 3<<<"tty secret 1")"
out=$(on_tty "tty secret 1" -- "$UEVM" hmac --uuid none --hmac-key passphrase:tty.pp "$KEYS_PROBE")
expect_match "terminal: a consumer asks for the passphrase" "Passphrase for tty\.pp: .*$(hmac_of raw:tty.plain)" "$(tr -d '\r\n' <<<"$out")"
out=$(on_tty "one" "two" -- "$UEVM" key generate "${FAST[@]}" --out tty2.pp)
expect_match "terminal: different passphrases are refused" 'do not match' "$out"
expect_rc "... and nothing is written" 1 test -e tty2.pp
