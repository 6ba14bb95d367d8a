#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# EDQUOT from a real filesystem.  This kernel has no quota format for ext4
# (CONFIG_QFMT_V2 is off) and no XFS or tmpfs quota, so the quota here is
# a btrfs qgroup limit on one subvolume: a setxattr there needs a metadata
# reservation the limit refuses.  uevm runs with CAP_SYS_RESOURCE dropped,
# as a quota-bound labeller would (btrfs qgroups bind root too; ext4's
# hard limits would not bind a process with that capability).  One run
# labels both subvolumes: the limited one's files fail with EDQUOT, each
# named, the others are labelled; nothing is half-written, or where btrfs
# refuses even the undo, the error says so and the file fails to verify.  (btrfs has no
# FS_IOC_GETFSUUID: the HMACs here are made without the UUID, --uuid none.)
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/faultfs-lib.sh"

for tool in mkfs.btrfs btrfs capsh; do
	command -v $tool >/dev/null || { fail "$tool is installed (scripts/install-deps.sh)"; exit 1; }
done
KEY=$T/key
make_key "$KEY"
IMG=$T/btrfs.img
M=$T/mnt
truncate -s 200M "$IMG"
mkfs.btrfs -q -f "$IMG" >/dev/null 2>&1
loop_mount "$IMG" "$M" || { fail "btrfs loop mount"; exit 1; }
btrfs quota enable "$M" && btrfs subvolume create "$M/limited" >/dev/null &&
	btrfs subvolume create "$M/free" >/dev/null ||
	{ fail "btrfs quota and subvolumes"; exit 1; }
for d in limited free; do
	for i in $(seq 10); do
		{ echo "$d $i"; head -c 300 /dev/urandom; } >"$M/$d/f$i"
	done
done
(cd "$M" && sha256sum limited/f* free/f*) >"$T/manifest"
sync
btrfs qgroup limit 64k "$M/limited" || { fail "btrfs qgroup limit"; exit 1; }
sync

err=$(capsh --drop=cap_sys_resource -- -c \
	'grep ^CapEff /proc/self/status; exec "$0" "$@"' \
	"$UEVM" label -r -v --uuid none --hmac-key "raw:$KEY" "$M/limited" "$M/free" 2>&1)
rc=$?
expect_eq "label under a quota limit exits 2" 2 "$rc"
eff=$(sed -n 's/^CapEff:[[:space:]]*//p' <<<"$err")
check "uevm ran without CAP_SYS_RESOURCE (CapEff $eff)" \
	test $(( (16#$eff >> 24) & 1 )) -eq 0
# How many writes the limit lets through depends on btrfs's reservations:
# the checks hold whatever that number is.
nerr=$(grep -c ": not labelled: " <<<"$err")
check "files under the limit fail with EDQUOT ($nerr)" test "$nerr" -ge 5
expect_eq "every error names a file under the limit and EDQUOT" "$nerr" \
	"$(grep -cE "^uevm: $M/limited/f[0-9]+: not labelled: cannot write security\.(ima|evm): Disk quota exceeded" <<<"$err")"
expect_match "the run went on with the other subvolume" \
	"labelled $((22 - nerr)) objects, $nerr errors" "$err"

# A failed file keeps no label, except where btrfs refused even the undo
# (removexattr needs a metadata reservation too): then the error says so,
# and what is left is a security.ima without security.evm, which fails.
ref=$(python3 "$TESTS_DIR/evm_ref_check.py" --key "$KEY" --uuid none --manifest "$T/manifest" "$M")
bad=0
for i in $(seq 10); do
	f=$M/limited/f$i
	line=$(grep "^uevm: $f: not labelled" <<<"$err")
	if [ -z "$line" ]; then
		grep -qx "GOOD	$f" <<<"$ref" || { bad=$((bad + 1)); echo "# $f: no error, labels not right"; }
	elif grep -q "could not be taken back" <<<"$line"; then
		[ -n "$(xattr_hex security.ima "$f")" ] && [ -z "$(xattr_hex security.evm "$f")" ] ||
			{ bad=$((bad + 1)); echo "# $f: $(xattrs_of "$f")"; }
	elif has_labels "$f"; then
		bad=$((bad + 1)); echo "# $f: half-labelled: $(xattrs_of "$f")"
	fi
done
expect_eq "each file under the limit is labelled right, untouched, or said otherwise" 0 "$bad"
expect_eq "reference: the files of the other subvolume are rightly labelled" 10 \
	"$(grep -c "^GOOD	$M/free/" <<<"$ref")"
check "no content was changed" bash -c "cd '$M' && sha256sum --quiet -c '$T/manifest'"

out=$("$UEVM" verify -r --uuid none --hmac-key "raw:$KEY" "$M/limited" "$M/free")
expect_eq "verify exits 1" 1 $?
expect_match "verify: exactly the failed files fail" \
	"22 objects, $nerr failed, 0 errors" "$out"

btrfs qgroup limit none "$M/limited"
"$UEVM" label -r --uuid none --hmac-key "raw:$KEY" "$M/limited"
expect_eq "without the limit, label completes" 0 $?
expect_eq "reference: now every file is rightly labelled" 20 \
	"$(python3 "$TESTS_DIR/evm_ref_check.py" --key "$KEY" --uuid none "$M" | grep -c '^GOOD')"
