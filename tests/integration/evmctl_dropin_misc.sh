#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# evmctl commands and options the other evmctl tests do not reach: import,
# ima_fix and ima_clear with -t, -h, --inode, --hwtpm, and an Ed25519 key
# (uevm's documented difference).  Compared with Debian's evmctl (1.4)
# where 1.4 behaves as 1.6.2; 1.6.2's result is stated where it differs.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"

if ! command -v evmctl >/dev/null; then
	fail "evmctl is installed (package ima-evm-utils)"
	exit 1
fi
K=$T/keys
mkdir "$K"
SIG_KEYS="rsa2048" make_sig_keys "$K"
W=$T/w
mkdir "$W"
cd "$W" || exit 1
source "$TESTS_DIR/evmctl_diff_lib.sh"

# ---- import: a DER certificate into a keyring given by number -------------
# Each tool gets a new keyring of its own (linked to the user keyring and
# unlinked at exit): the key's serial number differs, the rest must not.
import_into() {	# TOOL...: prints "rc|stdout|stderr|key description"
	local ring out err rc
	ring=$(keyctl newring "uevm-test-import.$$" @u) || return 1
	on_exit "keyctl unlink $ring @u >/dev/null 2>&1"
	"$@" import "$K/rsa2048.der" "$ring" >"$T/imp.out" 2>"$T/imp.err"
	rc=$?
	out=$(cat "$T/imp.out")
	err=$(sed -e "s/$ring/RING/" -e "s/^keyid: $out\$/keyid: ID/" "$T/imp.err")
	[[ "$out" =~ ^[0-9]+$ ]] && out=NUMBER
	# the type and description of the key now in the keyring
	echo "$rc|$out|$err|$(keyctl rdescribe "$(keyctl rlist "$ring" 2>/dev/null)" 2>/dev/null |
		cut -d';' -f1,5)"
	keyctl unlink "$ring" @u >/dev/null 2>&1
}
deb=$(import_into "$DEB")
expect_match "import: evmctl adds the key (serial number on stdout)" '^0\|NUMBER\|' "$deb"
for form in link uevm; do
	expect_eq "import [$form]: as evmctl (exit status, output, the key added)" \
		"$deb" "$(import_into run_form "$form")"
done
same "import of a missing certificate" "" import "$K/missing.der" 1

# ---- ima_fix and ima_clear, with -t ----------------------------------------
# ima_fix opens each file (a kernel in fix mode labels it); ima_clear removes
# both attributes.  Without -r, the path itself; with -r, the regular files
# of the tree, or with -t the types its letters name (1.6.2 get_file_type:
# f regular files, x skip files with both attributes, m stay on the
# filesystem; other letters select nothing).  1.4 = 1.6.2 here.
mk_tree() {
	rm -rf tree
	mkdir -p tree/sub
	echo a >tree/a
	echo b >tree/sub/b
	ln -s a tree/link
	setfattr -n security.ima -v 0x0401 tree tree/a tree/sub/b tree/sub
	setfattr -n security.evm -v 0x0201 tree/a
}
attrs() { getfattr -R -h -d -m '^security\.(ima|evm)$' -e hex tree 2>/dev/null; }
for t in "" "-r" "-r -t f" "-r -t d" "-r -t fd" "-r -t x" "-r -t m"; do
	for cmd in ima_fix ima_clear; do
		mk_tree
		# shellcheck disable=SC2086
		"$DEB" $cmd $t tree >"$T/deb.out" 2>"$T/deb.err"
		rc_deb=$?
		want=$(attrs)
		for form in link uevm; do
			mk_tree
			# shellcheck disable=SC2086
			run_form "$form" $cmd $t tree >"$T/u.out" 2>"$T/u.err"
			expect_eq "$cmd ${t:-(no -t)} [$form]: exit status" "$rc_deb" "$?"
			expect_eq "$cmd ${t:-(no -t)} [$form]: output" \
				"$(cat "$T/deb.out" "$T/deb.err")" "$(cat "$T/u.out" "$T/u.err")"
			expect_eq "$cmd ${t:-(no -t)} [$form]: the attributes left" "$want" "$(attrs)"
		done
	done
done
# The check above cannot pass vacuously: ima_clear did remove something.
mk_tree
run_form link ima_clear -r tree >/dev/null 2>&1
check "ima_clear -r removed the files' attributes" test -z "$(attrs | grep -A2 '^# file: tree/a$' | grep security)"

# ---- -h is --help ----------------------------------------------------------
for form in link uevm; do
	run_form "$form" --help >"$T/help.out" 2>&1
	rc_long=$?
	run_form "$form" -h >"$T/h.out" 2>&1
	expect_eq "-h [$form]: the exit status of --help" "$rc_long" "$?"
	expect_eq "-h [$form]: the text of --help" "$(cat "$T/help.out")" "$(cat "$T/h.out")"
	expect_match "--help [$form]: lists the commands" 'ima_measurement' "$(cat "$T/help.out")"
done

# ---- --inode (the option's full name; --ino, a prefix, elsewhere) ----------
printf 'inode override\n' >f
same "sign -u --inode" "" -n sign -u --inode 77 -k "$K/rsa2048.key" f
"$LINKDIR/evmctl" sign -u --inode 77 -k "$K/rsa2048.key" f >/dev/null 2>&1
same "verify -u --inode (the same number)" "" verify -u --inode 77 -k "$K/rsa2048.der" f
same "verify -u --inode (another number fails)" "" verify -u --inode 78 -k "$K/rsa2048.der" f

# ---- --hwtpm: the TPM 2.0 PCRs of sysfs (1.6.2; 1.4 has no such option) ----
# 1.6.2 read_tpm_banks: with no TPM 1.2 file, no sysfs TPM 2.0 PCRs and no
# TPM for tpm2-tss, ima_boot_aggregate logs "Failed to read any TPM PCRs"
# and exits 125.
if [ -e /sys/class/tpm/tpm0 ] || [ -e /dev/tpmrm0 ] || [ -e /dev/tpm0 ]; then
	pass "--hwtpm without a TPM: not checked, this machine has a TPM"
else
	as_162 "ima_boot_aggregate --hwtpm without a TPM" 125 "" "Failed to read any TPM PCRs" \
		ima_boot_aggregate --hwtpm
fi

# ---- Ed25519: refused (documented difference) -------------------------------
# evmctl (1.4 and 1.6.2) signs the digest with EVP_PKEY_sign, which Ed25519
# does not offer, and writes whatever its buffer held, exiting 0.
openssl genpkey -algorithm ed25519 -out "$K/ed.key" 2>/dev/null
printf 'ed25519\n' >e
for form in link uevm; do
	run_form "$form" ima_sign -k "$K/ed.key" e >"$T/u.out" 2>"$T/u.err"
	expect_eq "ima_sign with an Ed25519 key [$form]: refused (exit 125)" 125 "$?"
	expect_match "ima_sign with an Ed25519 key [$form]: says why" 'ED25519 keys are not supported' \
		"$(cat "$T/u.err")"
	expect_eq "ima_sign with an Ed25519 key [$form]: nothing written" "" "$(xattr_hex security.ima e)"
done
