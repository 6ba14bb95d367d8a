#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A key's form is what the operator names, never what the file's bytes say
# (issue 12, item 8).  The attack: an offline attacker overwrites a
# passphrase-protected or TPM-sealed key file with 32 raw bytes of their own
# and relabels the tree with them.  Every front-end must refuse that key,
# naming the file and the cause: uevm verify, uevmd and uevmfs.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../keys_lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"
cd "$T" || exit 1
FAST=(--kdf-ops 1 --kdf-mem 8)

if ! swtpm_start; then
	fail "swtpm starts" "$(cat "$T/swtpm/log" 2>/dev/null)"
	exit 0
fi
export UEVM_TCTI=$TPM_TCTI

# The operator's keys and trees: one labelled with a passphrase-protected
# key, one with a TPM-sealed key.
"$UEVM" key generate "${FAST[@]}" --out k.pp --passphrase-fd 3 3<<<"correct horse" >/dev/null 2>&1
"$UEVM" key generate --tpm --out k.tpm >/dev/null 2>&1
mkdir -p pp tpm
for d in pp tpm; do
	printf '#!/bin/sh\necho genuine\n' >"$d/run"
	chmod 755 "$d/run"
done
"$UEVM" label -r --hmac-key passphrase:k.pp,passphrase-fd=3 pp 3<<<"correct horse" >/dev/null
"$UEVM" label -r --hmac-key tpm:k.tpm tpm >/dev/null
check "the operator's trees verify with their protected keys" \
	"$UEVM" verify -r --hmac-key passphrase:k.pp,passphrase-fd=3 pp 3<<<"correct horse"
cp k.pp k.pp.genuine
cp k.tpm k.tpm.genuine

# A plain path does not say the key's form: refused before the file is
# opened, so a protected file given plainly is never unwrapped, unsealed
# or used as raw bytes; the message names the file in each form.
PLAIN_RE="a plain path does not say the key's form; name the key's form"
out=$("$UEVM" verify -r --hmac-key k.tpm tpm 2>&1)
expect_eq "plain path to a TPM-sealed file: refused (exit 2)" 2 $?
expect_match "... naming the file and the form to write" \
	"$PLAIN_RE: raw:k\.tpm, tpm:k\.tpm," "$out"
out=$("$UEVM" verify -r --hmac-key k.pp pp 2>&1 3<<<"correct horse")
expect_eq "plain path to a passphrase file: refused (exit 2)" 2 $?
expect_match "... naming the file and the form to write" \
	"$PLAIN_RE: .*passphrase:k\.pp,passphrase-fd=N" "$out"
out=$("$UEVM" verify -r --hmac-key raw:k.pp pp 2>&1)
expect_match "raw: with a passphrase file: refused, naming the form" \
	'k\.pp .*passphrase-protected key file.*passphrase:k\.pp' "$out"

# The attack: 32 raw bytes of the attacker's over each key file, tampered
# content, labels made with the attacker's bytes.
head -c 32 /dev/urandom >attacker.key
chmod 600 attacker.key
for d in pp tpm; do
	printf '#!/bin/sh\necho evil\n' >"$d/run"
done
cat attacker.key >k.pp
cat attacker.key >k.tpm
"$UEVM" label -r --hmac-key raw:attacker.key pp tpm >/dev/null
check "the attacker's labels verify with the attacker's key" \
	"$UEVM" verify -r --hmac-key raw:attacker.key pp tpm

# refused NAME TREE SPEC REGEX: verify with SPEC must fail (not pass) and
# say why, naming the file.
refused() {
	local name=$1 tree=$2 spec=$3 re=$4 out rc
	out=$("$UEVM" verify -r --hmac-key "$spec" "$tree" 2>&1 3<<<"correct horse")
	rc=$?
	if [ "$rc" -eq 0 ]; then
		fail "$name" "verify passed the tampered tree: $out"
	else
		expect_match "$name" "$re" "$out"
	fi
}
refused "verify --hmac-key PATH (passphrase file replaced): refused" pp \
	k.pp "$PLAIN_RE: raw:k\.pp, .*passphrase:k\.pp,passphrase-fd=N"
refused "verify --hmac-key PATH (TPM file replaced): refused" tpm \
	k.tpm "$PLAIN_RE: raw:k\.tpm, tpm:k\.tpm,"
refused "verify --hmac-key passphrase:PATH,passphrase-fd=3: refused" pp \
	passphrase:k.pp,passphrase-fd=3 'k\.pp .*is not a passphrase-protected key file'
refused "verify --hmac-key file:PATH,passphrase-fd=3: refused" pp \
	file:k.pp,passphrase-fd=3 "'file:' .*name the key's form.*passphrase:k\.pp"
refused "verify --hmac-key file:PATH (TPM): refused" tpm \
	file:k.tpm "'file:' .*name the key's form.*tpm:k\.tpm"
refused "verify --hmac-key tpm:PATH: refused" tpm \
	tpm:k.tpm 'k\.tpm .*is not a TPM-sealed key file'

# Options that belong to another form are refused rather than ignored.
out=$("$UEVM" hmac --hmac-key raw:attacker.key,passphrase-fd=3 "$KEYS_PROBE" 2>&1 3<<<x)
expect_match "raw: with passphrase-fd=: refused" 'passphrase-fd= .*passphrase: keys only' "$out"
out=$("$UEVM" hmac --hmac-key tpm:k.tpm.genuine,master=attacker.key "$KEYS_PROBE" 2>&1)
expect_match "tpm: with master=: refused" 'master= .*kernel-blob: keys only' "$out"
out=$("$UEVM" hmac --hmac-key "passphrase:k.pp.genuine,tcti=$TPM_TCTI" "$KEYS_PROBE" 2>&1)
expect_match "passphrase: with tcti=: refused" 'tcti= .*tpm: keys only' "$out"
out=$("$UEVM" key load --keyring @s --passphrase-fd 3 raw:attacker.key 2>&1 3<<<x)
expect_match "key load --passphrase-fd with a raw key: refused" \
	'--passphrase-fd .*passphrase:' "$out"

# Legitimate raw keys work when named so: raw:PATH.  A plain PATH is
# refused even for a genuine raw key file (its form is not guessed), by
# every command that loads a key.
check "raw:PATH works" "$UEVM" verify -r --hmac-key raw:attacker.key pp
out=$("$UEVM" verify -r --hmac-key attacker.key pp 2>&1)
expect_eq "a plain PATH to a raw key file: refused (exit 2)" 2 $?
expect_match "... naming the file and the form to write" \
	"HMAC key: $PLAIN_RE: raw:attacker\.key, tpm:attacker\.key, " "$out"
head -c 32 /dev/urandom >kmk
chmod 600 kmk
for cmd in "key load --keyring @s" "key export --plain exp.plain" \
	   "key export --kernel-blob --master-key kmk --out exp.blob" \
	   "key import --out imp.pp --passphrase-fd 3 ${FAST[*]}"; do
	# shellcheck disable=SC2086 # $cmd is a command and its options
	out=$("$UEVM" $cmd attacker.key 2>&1 3<<<"correct horse")
	expect_eq "uevm $cmd PATH (no form): refused (exit 2)" 2 $?
	expect_match "... naming the form to write" "$PLAIN_RE: raw:attacker\.key, " "$out"
done
expect_rc "... nothing was loaded" 1 keyctl search @s user evm-key
expect_rc "... nothing was written" 1 test -e exp.plain -o -e exp.blob -o -e imp.pp
check "uevm key export --plain raw:PATH works" \
	"$UEVM" key export --plain exp.plain raw:attacker.key
check "... and gives the same bytes" cmp -s attacker.key exp.plain

# ---- uevmd ------------------------------------------------------------------
# The tree on a watched mount, labelled with the sealed key; then attacked.
make_image 32M || { fail "ext4 image"; exit 1; }
write_policy
cp k.tpm.genuine k.tpm
mkdir "$MNT/app"
printf '#!/bin/sh\necho genuine\n' >"$MNT/app/run"
chmod 755 "$MNT/app/run"
"$UEVM" label -r --hmac-key tpm:k.tpm "$MNT/app" >/dev/null
cat attacker.key >k.tpm
printf '#!/bin/sh\necho evil\n' >"$MNT/app/run"
"$UEVM" label -r --hmac-key raw:attacker.key "$MNT/app" >/dev/null

# daemon_refuses NAME SPEC REGEX: uevmd with "key = SPEC" must not start,
# and its message must match REGEX.  If it does start, say what it let run.
daemon_refuses() {
	local name=$1 spec=$2 re=$3 pid rc
	KEYSPEC=$spec write_conf
	"$UEVMD" -c "$CONF" -f >"$T/d.out" 2>&1 &
	pid=$!
	# Until it exits or runs (a slow start must not pass for a start).
	wait_quiet "$WAIT_S" uevmd_up_or_gone "$pid"
	if kill -0 "$pid" 2>/dev/null; then
		local ran
		ran=$("$MNT/app/run" 2>&1)
		kill "$pid"
		wait "$pid"
		fail "$name" "uevmd started with the attacker's key; the tampered program ran: $ran"
		return
	fi
	wait "$pid"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		fail "$name" "uevmd exited 0"
	else
		expect_match "$name" "$re" "$(cat "$T/d.out")"
	fi
}
daemon_refuses "uevmd: key = PATH (no form) does not start" "$T/k.tpm" \
	"key = $T/k\.tpm: .*name the key's form: raw:$T/k\.tpm, tpm:$T/k\.tpm"
daemon_refuses "uevmd: key = tpm:PATH (raw bytes inside) does not start" "tpm:$T/k.tpm" \
	"$T/k\.tpm .*is not a TPM-sealed key file"
daemon_refuses "uevmd: key = file:PATH does not start" "file:$T/k.tpm" \
	"'file:' .*name the key's form"
grep -q . "$LOG" 2>/dev/null &&
	expect_match "uevmd: the refusal is in its log file too" "$T/k\.tpm" "$(cat "$LOG")"
KEYSPEC=raw:$T/attacker.key write_conf
check "uevmd: key = raw:PATH starts" start_uevmd
expect_match "uevmd: its log names the key it loaded" \
	"key: raw key file $T/attacker\.key.*fingerprint [0-9a-f]{16}" "$(cat "$LOG")"
stop_uevmd

# ---- uevmfs -----------------------------------------------------------------
S=$T/src
M=$T/ufs
mkdir -p "$S" "$M"
printf '#!/bin/sh\necho genuine\n' >"$S/run"
chmod 755 "$S/run"
cp k.pp.genuine k.pp
"$UEVM" label -r --hmac-key passphrase:k.pp,passphrase-fd=3 "$S" 3<<<"correct horse" >/dev/null
cat attacker.key >k.pp
printf '#!/bin/sh\necho evil\n' >"$S/run"
"$UEVM" label -r --hmac-key raw:attacker.key "$S" >/dev/null

# fs_refuses NAME REGEX ARGS...: uevmfs S M -f ARGS must not mount.
fs_refuses() {
	local name=$1 re=$2 pid rc
	shift 2
	UFS_MOUNTS+=("$M")
	"$UEVMFS" "$S" "$M" -f "$@" >"$T/f.out" 2>&1 3<<<"correct horse" &
	pid=$!
	wait_quiet "$WAIT_S" ufs_up_or_gone "$M" "$pid"
	if kill -0 "$pid" 2>/dev/null; then
		local got
		got=$(cat "$M/run" 2>&1)
		fusermount3 -u "$M"
		wait "$pid"
		fail "$name" "uevmfs mounted with the attacker's key; read: $got"
		return
	fi
	wait "$pid"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		fail "$name" "uevmfs exited 0"
	else
		expect_match "$name" "$re" "$(cat "$T/f.out")"
	fi
}
O="ml=none,securityfs=none,nosyslog"
fs_refuses "uevmfs: -o key=PATH (no form) does not mount" \
	"key=$T/k\.pp: .*name the key's form: raw:$T/k\.pp" -o "key=$T/k.pp,$O"
fs_refuses "uevmfs: --hmac-key PATH (no form) does not mount" \
	"key=$T/k\.pp: .*name the key's form" -o "$O" --hmac-key "$T/k.pp"
fs_refuses "uevmfs: key=passphrase:PATH (raw bytes inside) does not mount" \
	"$T/k\.pp .*is not a passphrase-protected key file" \
	--hmac-key "passphrase:$T/k.pp,passphrase-fd=3" -o "$O"
cp k.tpm.genuine k.tpm
"$UEVM" label -r --hmac-key tpm:k.tpm "$S" >/dev/null
cat attacker.key >k.tpm
"$UEVM" label -r --hmac-key raw:attacker.key "$S" >/dev/null
fs_refuses "uevmfs: key=tpm:PATH (raw bytes inside) does not mount" \
	"$T/k\.tpm .*is not a TPM-sealed key file" -o "key=tpm:$T/k.tpm,$O"
fs_refuses "uevmfs: key=PATH (TPM file replaced) does not mount" \
	"key=$T/k\.tpm: .*name the key's form" -o "key=$T/k.tpm,$O"
if ufs_mount "$S" "$M" "key=raw:$T/attacker.key,$O"; then
	expect_eq "uevmfs: key=raw:PATH mounts and uses that key" evil "$("$M/run")"
	ufs_umount "$M"
else
	fail "uevmfs: key=raw:PATH mounts" "$(tail -n 3 "$T/uevmfs.stderr")"
fi
