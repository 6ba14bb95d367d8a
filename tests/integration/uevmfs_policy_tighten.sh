#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmfs: a stricter policy written to the control tree applies to files
# read under the weaker one before it (see uevmd_policy_tighten.sh).  A
# file with a hash label that passed `appraise func=FILE_CHECK` must be
# refused, with its audit record, once the tree has loaded
# `appraise func=FILE_CHECK appraise_type=imasig`: with per-open hooks
# (nofastopen), and with fastopen, where the kernel is also told to drop
# the pages it read under the old rules.  Before, the library's cached
# "passed" answered it.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

command -v python3 >/dev/null || { fail "python3 is installed"; exit 1; }
KEY=$T/key
make_key "$KEY"
S=$T/src
mkdir -p "$S"
echo "hashed" >"$S/hashed"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
echo "appraise func=FILE_CHECK" >"$T/weak"
echo "appraise func=FILE_CHECK appraise_type=imasig" >"$T/strict"

read_result() {
	local err
	if err=$(cat -- "$1" 2>&1 >/dev/null); then echo ok; return; fi
	case $err in
	*"Permission denied"*) echo EACCES ;;
	*"Operation not permitted"*) echo EPERM ;;
	*) echo "other: $err" ;;
	esac
}

for mode in nofastopen fastopen; do
	M=$T/mnt-$mode
	C=$T/sec-$mode
	A=$T/audit-$mode.log
	ufs_mount "$S" "$M" "key=raw:$KEY,ml=$T/ml-$mode,securityfs=$C,audit_log=$A,nosyslog,policy=$T/weak,mode=enforce,$mode" ||
		exit 1
	expect_eq "$mode, weak rules: hashed reads" ok "$(read_result "$M/hashed")"
	expect_eq "  and again (cached)" ok "$(read_result "$M/hashed")"
	tree_write "$C/ima/policy" <"$T/strict"
	expect_match "$mode: the tree loaded the strict rules" "appraise_type=imasig" \
		"$(cat "$C/ima/policy")"
	expect_eq "$mode, strict rules: hashed, read before, is refused" EACCES \
		"$(read_result "$M/hashed")"
	refused() { grep -F " cause=IMA-signature-required " "$A" | grep -F "name=\"$M/hashed\"" |
		grep -q " res=0"; }
	wait_for "$WAIT_S" "the refusal's record" refused &&
		pass "  audit: op=appraise_data cause=IMA-signature-required res=0"
	ufs_umount "$M"
done
