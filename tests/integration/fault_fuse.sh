#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Faults injected by a FUSE filesystem (tests/faultfs.c) for chosen files:
# EIO on reading content (whole file and mid-file), EIO on reading
# security.ima, ENOSPC and EDQUOT on writing security.ima and on writing
# security.evm, a file whose xattr calls all fail with EOPNOTSUPP.
# `uevm label -r` must name each file with its cause, go on with the rest,
# exit non-zero, and leave every failed file exactly as it was (never a new
# security.ima beside a stale or missing security.evm); `uevm verify -r`
# must report each as an error or failure, never PASS.  The labels of the
# good files are checked by tests/evm_ref_check.py (no uevm code).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/faultfs-lib.sh"

faultfs_build
KEY=$T/key
make_key "$KEY"
B=$T/back
M=$T/mnt
RULES=$T/rules
: >"$RULES"
mkdir -p "$B/sub"
OK="ok1 ok2 sub/ok3 big_ok"
BAD="eio_read eio_mid eio_xattr enospc_ima enospc_evm edquot_ima edquot_evm noxattr"
for f in $OK $BAD; do
	{ echo "$f"; head -c 3000 /dev/urandom; } >"$B/$f"
done
head -c 2000000 /dev/urandom >"$B/big_ok"
head -c 1048576 /dev/urandom >"$B/eio_mid"
faultfs_mount "$RULES" "$B" "$M"

U() { "$UEVM" "$@" --uuid none --hmac-key "raw:$KEY"; }

# Files with earlier labels: eio_mid and eio_xattr unchanged since, and
# edquot_evm changed since (its relabel must keep the old, failing pair).
U label "$M/eio_mid" "$M/eio_xattr" "$M/edquot_evm"
expect_eq "the pre-labelled files are labelled" 0 $?
echo "changed after labelling" >>"$B/edquot_evm"
(cd "$B" && sha256sum $OK $BAD) >"$T/manifest"
for f in $BAD; do xattrs_of "$B/$f" >"$T/before.$f"; done

cat >"$RULES" <<EOF
read eio_read EIO
read eio_mid EIO 524288 4096
getxattr eio_xattr EIO security.ima
setxattr enospc_ima ENOSPC security.ima
setxattr enospc_evm ENOSPC security.evm
setxattr edquot_ima EDQUOT security.ima
setxattr edquot_evm EDQUOT security.evm
noxattr noxattr
EOF

# ---- label under faults ---------------------------------------------------

err=$(U label -r -v "$M" 2>&1 >/dev/null)
rc=$?
expect_eq "label under faults exits 2" 2 "$rc"
expect_match "label: EIO on read names the file" \
	"^uevm: $M/eio_read: not labelled: .*Input/output error" "$err"
expect_match "label: EIO in the middle of a file names the file" \
	"^uevm: $M/eio_mid: not labelled: .*Input/output error" "$err"
expect_match "label: EIO reading security.ima names file and xattr" \
	"^uevm: $M/eio_xattr: not labelled: cannot read security.ima: Input/output error" "$err"
expect_match "label: ENOSPC on security.ima" \
	"^uevm: $M/enospc_ima: not labelled: cannot write security.ima: No space left on device" "$err"
expect_match "label: ENOSPC on security.evm, security.ima taken back" \
	"^uevm: $M/enospc_evm: not labelled: cannot write security.evm: No space left on device \(security.ima left as it was\)" "$err"
expect_match "label: EDQUOT on security.ima" \
	"^uevm: $M/edquot_ima: not labelled: cannot write security.ima: Disk quota exceeded" "$err"
expect_match "label: EDQUOT on security.evm, old security.ima put back" \
	"^uevm: $M/edquot_evm: not labelled: cannot write security.evm: Disk quota exceeded \(security.ima left as it was\)" "$err"
expect_match "label: no xattr support names the file" \
	"^uevm: $M/noxattr: not labelled: .*Operation not supported" "$err"
expect_eq "label: one error line per faulty file" 8 \
	"$(grep -c ": not labelled: " <<<"$err")"
expect_match "label: the run went on and labelled the rest" \
	"labelled 6 objects, 8 errors" "$err"
for r in "read eio_read EIO" "read eio_mid EIO" "getxattr eio_xattr EIO" \
	 "setxattr enospc_ima ENOSPC" "setxattr enospc_evm ENOSPC" \
	 "setxattr edquot_ima EDQUOT" "setxattr edquot_evm EDQUOT" \
	 "getxattr noxattr EOPNOTSUPP"; do
	check "the fault was really injected: $r" grep -qx "$r" "$RULES.hits"
done

# Nothing half-written: each failed file kept exactly the xattrs it had.
for f in $BAD; do
	expect_eq "label: $f kept its xattrs as they were" \
		"$(cat "$T/before.$f")" "$(xattrs_of "$B/$f")"
done
UNLABELLED="eio_read enospc_ima enospc_evm edquot_ima noxattr"
for f in $UNLABELLED; do
	if has_labels "$B/$f"; then
		fail "label: $f has no label at all" "$(xattrs_of "$B/$f")"
	else
		pass "label: $f has no label at all"
	fi
done
check "label: no content was changed" bash -c "cd '$B' && sha256sum --quiet -c '$T/manifest'"

# ---- verify under faults --------------------------------------------------

out=$(U verify -r -v "$M" 2>&1)
rc=$?
expect_eq "verify under faults exits 1 (failures)" 1 "$rc"
for f in $OK; do
	expect_match "verify: $f passes" "^OK $M/$f: pass$" "$out"
done
expect_match "verify: an unlabelled file fails before its content is read" \
	"^FAIL $M/eio_read: no_label \(missing-hash\)" "$out"
expect_match "verify: EIO mid-file is an error, not a verdict on half the content" \
	"^ERROR $M/eio_mid: cannot verify: .*Input/output error" "$out"
expect_match "verify: unreadable security.ima fails with the cause" \
	"^FAIL $M/eio_xattr: unknown .*cannot read security.ima: Input/output error" "$out"
expect_match "verify: the changed file with its old labels fails" \
	"^FAIL $M/edquot_evm: fail \(invalid-hash\)" "$out"
for f in $UNLABELLED; do
	expect_match "verify: $f fails" "^FAIL $M/$f: " "$out"
done
expect_match "verify: the summary counts 7 failed, 1 error" \
	"14 objects, 7 failed, 1 errors" "$out"

# ---- independent check, then the faults go away and a relabel completes ---

: >"$RULES"
ref=$(python3 "$TESTS_DIR/evm_ref_check.py" --key "$KEY" --uuid none "$M")
for f in $OK; do
	expect_match "reference: $f labels are right" "^GOOD	$M/$f$" "$ref"
done
# (eio_mid and eio_xattr keep their earlier, still right labels.)
expect_eq "reference: no file whose labelling failed has right labels" 0 \
	"$(grep -c -E "^GOOD	$M/($(tr ' ' '|' <<<"$UNLABELLED edquot_evm"))$" <<<"$ref")"

U label -r "$M"
expect_eq "label without faults completes" 0 $?
out=$(U verify -r "$M")
expect_eq "verify without faults exits 0" 0 $?
expect_match "verify: all pass" "14 objects, 0 failed, 0 errors" "$out"
ref=$(python3 "$TESTS_DIR/evm_ref_check.py" --key "$KEY" --uuid none \
	--manifest "$T/manifest" "$M")
expect_eq "reference: every file is GOOD after the relabel" 12 \
	"$(grep -c '^GOOD' <<<"$ref")"
