#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The offline-tamper matrix: label a tree with `uevm label -r`, change it
# behind EVM's back in every way the issue lists (each on its own file),
# and check that `uevm verify -r` reports each case with the kernel's status
# and cause, that every untouched object still passes, the exit codes, and
# that the text output names exactly the failing files.
source "$(dirname "$0")/../lib.sh"

command -v jq >/dev/null || { fail "jq is installed (scripts/install-deps.sh)"; exit 1; }

KEY=$T/key
make_key "$KEY"
R=$T/tree
SEL='system_u:object_r:var_t:s0'
CAPVAL=0x0100000200200000000000000000000000000000	# cap_net_raw, permitted

# Directories get a security.selinux label first, as on an SELinux system:
# without any protected xattr EVM keeps no security.evm on a directory.
mkdir -p "$R/files" "$R/ok/deep" "$R/dir_mode" "$R/bare"
for d in "$R" "$R/files" "$R/ok" "$R/ok/deep" "$R/dir_mode"; do
	setfattr -n security.selinux -v "$SEL" "$d"
done

CASES="c_byte c_append c_trunc ima_changed ima_removed evm_removed evm_corrupt
evm_trunc evm_copied uid gid mode replaced_cp replaced_all cap_added
cap_changed sel_added sel_changed"
for c in $CASES; do
	# distinct content per file, 3000 bytes (printable, so byte 100 is known)
	{ echo "file $c"; head -c 2250 /dev/urandom | base64 -w 64; } | head -c 3000 >"$R/files/$c"
done
setfattr -n security.capability -v $CAPVAL "$R/files/cap_changed"
setfattr -n security.selinux -v "$SEL" "$R/files/sel_changed"

: >"$R/ok/empty"
printf 'x' >"$R/ok/one"
head -c 100000 /dev/urandom >"$R/ok/big"
echo caps >"$R/ok/caps"
setfattr -n security.capability -v $CAPVAL "$R/ok/caps"
echo sel >"$R/ok/sel"
setfattr -n security.selinux -v "$SEL" "$R/ok/sel"
echo deep >"$R/ok/deep/file"
echo touched >"$R/ok/touched"
ln -s ../files/c_byte "$R/ok/link"
echo inside >"$R/dir_mode/file"
echo bare >"$R/bare/file"

# ---- labelling and a clean verify ---------------------------------------

"$UEVM" label -r --hmac-key "raw:$KEY" "$R"
expect_eq "label -r exits 0" 0 $?
expect_eq "a directory without protected xattrs gets no security.evm" "" \
	"$(xattr_hex security.evm "$R/bare")"
check "a directory with security.selinux gets security.evm" \
	test -n "$(xattr_hex security.evm "$R/dir_mode")"

out=$("$UEVM" verify -r --hmac-key "raw:$KEY" "$R")
expect_eq "verify of the clean tree exits 0" 0 $?
expect_match "clean tree: summary says 0 failed, 0 errors" "0 failed, 0 errors" "$out"
json=$("$UEVM" verify -r -v --json --hmac-key "raw:$KEY" "$R")
expect_eq "clean tree: every object ok" 0 \
	"$(jq '[.results[] | select(.ok | not)] | length' <<<"$json")"
nobj=$(find "$R" | wc -l)
expect_eq "clean tree: every object reported with -v" "$nobj" \
	"$(jq '.results | length' <<<"$json")"
expect_eq "clean tree: summary total" "$nobj" "$(jq '.summary.total' <<<"$json")"

# ---- the tampering, offline (no kernel EVM hooks involved) -----------------

F=$R/files
b=$(od -An -tu1 -j100 -N1 "$F/c_byte" | tr -d ' ')
printf "\\$(printf %03o $(((b + 1) % 256)))" |
	dd of="$F/c_byte" bs=1 seek=100 conv=notrunc status=none
echo more >>"$F/c_append"
truncate -s -1 "$F/c_trunc"
# a well-formed sha256 value for other content
setfattr -n security.ima -v "0x0404$(echo other | openssl dgst -sha256 -r | cut -d' ' -f1)" "$F/ima_changed"
setfattr -x security.ima "$F/ima_removed"
setfattr -x security.evm "$F/evm_removed"
v=$(xattr_hex security.evm "$F/evm_corrupt")
last=$(printf %02x $((16#${v: -2} ^ 0x01)))
setfattr -n security.evm -v "0x${v:0:40}$last" "$F/evm_corrupt"
v=$(xattr_hex security.evm "$F/evm_trunc")
setfattr -n security.evm -v "0x${v:0:40}" "$F/evm_trunc"
setfattr -n security.evm -v "0x$(xattr_hex security.evm "$F/c_append")" "$F/evm_copied"
chown 1000 "$F/uid"
chgrp 1000 "$F/gid"
chmod 600 "$F/mode"
# cp --preserve=all copies xattrs, but libattr's /etc/xattr.conf tells it to
# skip security.evm ("may only be written by kernel").
ino0=$(stat -c %i "$F/replaced_cp")
cp --preserve=all "$F/replaced_cp" "$F/replaced_cp.new" && mv "$F/replaced_cp.new" "$F/replaced_cp"
check "cp --preserve=all: new inode" test "$(stat -c %i "$F/replaced_cp")" != "$ino0"
expect_eq "cp --preserve=all keeps security.ima" 1 \
	"$(getfattr -n security.ima "$F/replaced_cp" >/dev/null 2>&1 && echo 1)"
expect_eq "cp --preserve=all drops security.evm (xattr.conf skips it)" "" \
	"$(xattr_hex security.evm "$F/replaced_cp")"
# ... and an attacker who copies security.evm as well:
evm=$(xattr_hex security.evm "$F/replaced_all")
ino0=$(stat -c %i "$F/replaced_all")
cp --preserve=all "$F/replaced_all" "$F/replaced_all.new"
setfattr -n security.evm -v "0x$evm" "$F/replaced_all.new"
mv "$F/replaced_all.new" "$F/replaced_all"
check "byte-identical copy with all xattrs: new inode" \
	test "$(stat -c %i "$F/replaced_all")" != "$ino0"
setfattr -n security.capability -v $CAPVAL "$F/cap_added"
setfattr -n security.capability -v 0x0100000200100000000000000000000000000000 "$F/cap_changed"
setfattr -n security.selinux -v "$SEL" "$F/sel_added"
setfattr -n security.selinux -v 'system_u:object_r:shadow_t:s0' "$F/sel_changed"
chmod 700 "$R/dir_mode" "$R/bare"
# mtime/atime are not protected by EVM: touching must not fail.
touch -d '2001-02-03 04:05:06' "$R/ok/touched"

# ---- verify: exact status and cause per case -----------------------------

json=$("$UEVM" verify -r -v --json --hmac-key "raw:$KEY" "$R")
rc=$?
expect_eq "verify of the tampered tree exits 1" 1 "$rc"
if jq -e . <<<"$json" >/dev/null; then pass "verify --json output is valid JSON"
else fail "verify --json output is valid JSON" "$json"; fi

verdict() {	# path -> "status cause ok"
	jq -r --arg p "$1" '.results[] | select(.path == $p) |
		"\(.status) \(.cause) \(.ok)"' <<<"$json"
}
# expect_verdict CASE PATH STATUS CAUSE
tampered=()
expect_verdict() {
	tampered+=("$2")
	expect_eq "$1: $3 ($4)" "$3 $4 false" "$(verdict "$2")"
}
expect_verdict "content byte changed" "$F/c_byte" fail invalid-hash
expect_verdict "content appended" "$F/c_append" fail invalid-hash
expect_verdict "content truncated" "$F/c_trunc" fail invalid-hash
expect_verdict "security.ima changed" "$F/ima_changed" fail invalid-HMAC
expect_verdict "security.ima removed" "$F/ima_removed" no_label missing-hash
expect_verdict "security.evm removed" "$F/evm_removed" no_label missing-HMAC
expect_verdict "security.evm corrupted" "$F/evm_corrupt" fail invalid-HMAC
expect_verdict "security.evm truncated" "$F/evm_trunc" fail invalid-HMAC
expect_verdict "security.evm copied from another file" "$F/evm_copied" fail invalid-HMAC
expect_verdict "uid changed" "$F/uid" fail invalid-HMAC
expect_verdict "gid changed" "$F/gid" fail invalid-HMAC
expect_verdict "mode changed" "$F/mode" fail invalid-HMAC
expect_verdict "replaced by cp --preserve=all (no security.evm)" "$F/replaced_cp" no_label missing-HMAC
expect_verdict "replaced by a byte-identical copy with security.evm (new inode)" "$F/replaced_all" fail invalid-HMAC
expect_verdict "security.capability added" "$F/cap_added" fail invalid-HMAC
expect_verdict "security.capability changed" "$F/cap_changed" fail invalid-HMAC
expect_verdict "security.selinux added" "$F/sel_added" fail invalid-HMAC
expect_verdict "security.selinux changed" "$F/sel_changed" fail invalid-HMAC
expect_verdict "labelled directory's mode changed" "$R/dir_mode" fail invalid-HMAC

# Which half failed: content cases pass EVM and fail IMA.
for c in c_byte c_append c_trunc; do
	expect_eq "$c: evm_status pass, ima_status fail" "pass fail" \
		"$(jq -r --arg p "$F/$c" '.results[] | select(.path == $p) |
			"\(.evm_status) \(.ima_status)"' <<<"$json")"
done
expect_eq "uid changed: evm_status fail" fail \
	"$(jq -r --arg p "$F/uid" '.results[] | select(.path == $p) | .evm_status' <<<"$json")"

# A directory without protected xattrs has no security.evm, so EVM cannot
# see its mode change (the kernel behaves the same): no_xattrs, not a failure.
expect_eq "unlabelled directory's mode change is invisible to EVM: no_xattrs" \
	"no_xattrs null true" "$(verdict "$R/bare")"

# Everything else is untouched and passes.
want_ok=$(find "$R" | sort | grep -vxF -f <(printf '%s\n' "${tampered[@]}"))
got_ok=$(jq -r '.results[] | select(.ok) | .path' <<<"$json" | sort)
expect_eq "every untouched object passes" "$want_ok" "$got_ok"
expect_eq "untouched regular files all have status pass" "" \
	"$(jq -r '.results[] | select(.ok and .type == "file" and .status != "pass") | .path' <<<"$json")"
expect_eq "the touched (mtime only) file passes" "pass null true" "$(verdict "$R/ok/touched")"
expect_eq "summary: failed count" "${#tampered[@]}" "$(jq '.summary.failed' <<<"$json")"
expect_eq "summary: fail + no_label counts" "${#tampered[@]}" \
	"$(jq '.summary.fail + .summary.no_label' <<<"$json")"
expect_eq "summary: no errors" 0 "$(jq '.summary.errors' <<<"$json")"

# Text output: one FAIL line per failing file, naming it, nothing else.
text=$("$UEVM" verify -r --hmac-key "raw:$KEY" "$R")
expect_eq "text verify exits 1" 1 $?
expect_eq "text output names exactly the failing files" \
	"$(printf '%s\n' "${tampered[@]}" | sort)" \
	"$(sed -n 's/^FAIL \(.*\): [a-z_]* (.*$/\1/p' <<<"$text" | sort)"
expect_match "text output gives status and cause" \
	"^FAIL $F/evm_removed: no_label \(missing-HMAC\)" "$text"
expect_match "text summary counts the failures" \
	"Summary: $nobj objects, ${#tampered[@]} failed, 0 errors" "$text"

# Untouched subtrees still verify cleanly (exit 0); one tampered file: 1.
expect_rc "verify of an untouched subtree exits 0" 0 \
	"$UEVM" verify -r --hmac-key "raw:$KEY" "$R/ok"
expect_rc "verify of one tampered file exits 1" 1 \
	"$UEVM" verify --hmac-key "raw:$KEY" "$F/c_trunc"
# A different key fails everything that carries security.evm.
make_key "$T/otherkey"
json=$("$UEVM" verify -r --json --hmac-key "raw:$T/otherkey" "$R/ok")
expect_eq "another key: every labelled file of the clean subtree fails with invalid-HMAC" \
	"$(find "$R/ok" -type f | wc -l)" \
	"$(jq '[.results[] | select(.type == "file" and .cause == "invalid-HMAC")] | length' <<<"$json")"
