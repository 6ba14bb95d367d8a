#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# -o fastopen must not let one caller's verdict serve another caller
# (issue 12, item 6).  With fastopen the first READ of a content is checked
# as its reader and the kernel then serves its page cache to everyone, so:
#  - a policy with a rule that depends on the caller (euid=0 ...) is
#    refused at mount with fastopen, naming the rule; without fastopen the
#    attack (nobody reads a tampered file first, root then) ends refused;
#  - fastopen's default policy does not depend on the caller: root's read
#    after nobody's is measured;
#  - a caller-dependent policy written to the control tree while fastopen
#    is active is refused and audited; a caller-independent one is loaded.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
C=$T/sec
mkdir -p "$S" "$M"
chmod 711 "$T"	# nobody reaches the mount point
echo "labelled content" >"$S/secret"
echo "will be tampered" >"$S/bad"
chmod 644 "$S/secret" "$S/bad"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
echo "tampered" >>"$S/bad"
printf 'measure func=FILE_CHECK mask=^MAY_READ\nappraise func=FILE_CHECK euid=0\n' >"$T/root-only.policy"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
OPTS="key=raw:$KEY,audit_log=$T/audit.log,nosyslog"

# ---- the attack: nobody reads first, then root -------------------------------------------
: >"$T/uevmfs.stderr"
"$UEVMFS" "$S" "$M" -f -o "$OPTS,ml=none,securityfs=none,fastopen,policy=$T/root-only.policy" \
	>"$T/refused.out" 2>&1 &
pid=$!
UFS_PIDS+=("$pid")
UFS_MOUNTS+=("$M")
wait_quiet "$WAIT_S" ufs_up_or_gone "$M" "$pid"
if ufs_mounted "$M" fuse.uevmfs; then
	fail "fastopen with a caller-dependent policy: nothing is mounted" "mounted"
	expect_eq "fastopen, caller-dependent policy: root's read after nobody's is refused" \
		"$(as_nobody cat "$M/bad" >/dev/null 2>&1; echo refused)" \
		"$(cat "$M/bad" >/dev/null 2>&1 || echo refused)"
	fusermount3 -u "$M"
fi
wait "$pid"
expect_eq "fastopen with a caller-dependent policy: uevmfs refuses to start (exit 1)" 1 $?
expect_match "... and names the rule and the cause" \
	"fastopen.*line 2: 'appraise func=FILE_CHECK euid=0'.*depends on the caller" "$(cat "$T/refused.out")"

# Without fastopen the same policy is enforced per open.
ufs_mount "$S" "$M" "$OPTS,ml=none,policy=$T/root-only.policy" || exit 1
expect_match "per open: nobody reads the tampered file (the rule does not apply to nobody)" \
	"tampered" "$(as_nobody cat "$M/bad" 2>&1)"
expect_match "per open: root's read after it is refused" "Permission denied" "$(cat "$M/bad" 2>&1)"
expect_match "per open: ... and audited" 'uid=0 .*op=appraise_data cause=invalid-hash' \
	"$(ufs_records invalid-hash "$M/bad" | tr '\n' ' ')"
ufs_umount "$M"

# fastopen's default policy: root's read after nobody's is measured.
ufs_mount "$S" "$M" "$OPTS,ml=$T/ml,securityfs=$C,fastopen" || exit 1
expect_eq "fastopen default: nobody reads the labelled file" "labelled content" \
	"$(as_nobody cat "$M/secret" 2>&1)"
expect_eq "fastopen default: root reads it" "labelled content" "$(cat "$M/secret")"
expect_match "fastopen default: the content root read is in the measurement list" \
	" ima-ng sha256:[0-9a-f]{64} $M/secret\$" "$("$UEVM" measurements show "$T/ml")"
expect_match "fastopen default: the policy in force does not depend on the caller" \
	"^measure func=FILE_CHECK mask=\\^MAY_READ *$" "$(cat "$C/ima/policy")"
expect_match "fastopen default: the tampered file is refused for nobody" "Permission denied" \
	"$(as_nobody cat "$M/bad" 2>&1)"
expect_match "fastopen default: ... and for root" "Permission denied" "$(cat "$M/bad" 2>&1)"

# ---- the control tree: no caller-dependent policy while fastopen is active ----------------
out=$(cat "$T/root-only.policy" 2>&1 >"$C/ima/policy")
rc=$?
expect_eq "fastopen: writing a caller-dependent policy to ima/policy fails" 1 "$rc"
expect_match "... with an error" "Operation not permitted|Invalid argument|Permission denied" "$out"
expect_match "... audited (op=policy_update cause=caller-dependent-rule)" \
	"op=policy_update cause=caller-dependent-rule" "$(grep -F 'op=policy_update' "$T/audit.log")"
expect_match "... the policy in force is unchanged" "^appraise *$" "$(cat "$C/ima/policy")"
printf 'appraise func=FILE_CHECK\nmeasure func=BPRM_CHECK\n' >"$C/ima/policy"
expect_eq "fastopen: a caller-independent policy is loaded" 0 $?
expect_match "... and in force" "^measure func=BPRM_CHECK" "$(cat "$C/ima/policy")"
ufs_umount "$M"
