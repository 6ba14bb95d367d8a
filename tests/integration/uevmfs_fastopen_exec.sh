#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fastopen checks a file once, at its first read (FILE_CHECK MAY_READ, and
# for a program FILE_CHECK MAY_EXEC and BPRM_CHECK), and every later open
# is the kernel's alone.  A FILE_CHECK rule that tells an exec open from a
# read open (mask=MAY_EXEC, ^MAY_EXEC) is one it cannot serve, so (attack
# review F1):
#  - on a mount where fastopen=auto chose fastopen, writing such a rule to
#    <securityfs>/ima/policy is refused (EPERM) and audited
#    (cause=exec-dependent-rule); the tampered program stays refused once
#    an exec rule fastopen serves (func=BPRM_CHECK) is loaded;
#  - fastopen / fastopen=on with such a rule at mount refuses to start,
#    naming the rule; fastopen=auto picks the per-open hooks for it;
#  - without fastopen the same later write is accepted and the tampered
#    program's exec is refused and audited.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
C=$T/sec
mkdir -p "$S" "$M"
printf '#!/bin/sh\necho ORIGINAL\n' >"$S/prog"
chmod 755 "$S/prog"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
expect_eq "setup: the labelled program verifies" 0 \
	"$("$UEVM" verify --hmac-key "raw:$KEY" "$S/prog" >/dev/null 2>&1; echo $?)"
# The attack: rewritten behind uevmfs's back, mode kept.
printf '#!/bin/sh\necho TAMPERED\n' >"$S/prog"
printf 'measure func=FILE_CHECK mask=^MAY_READ\n' >"$T/read.policy"
printf 'appraise func=FILE_CHECK mask=MAY_EXEC\n' >"$T/exec.policy"
OPTS="key=raw:$KEY,ml=none,audit_log=$T/audit.log,nosyslog,noauditd"

# run_prog: what running $M/prog prints (stdout and stderr).
run_prog() { "$M/prog" 2>&1; }

# ---- fastopen=auto chose fastopen: a later exec rule is refused ----------------------------
: >"$T/uevmfs.stderr"
ufs_mount "$S" "$M" "$OPTS,securityfs=$C,policy=$T/read.policy" || exit 1
expect_match "auto, file-only policy: fastopen chosen" "fastopen: on \\(automatic" \
	"$(cat "$T/uevmfs.stderr")"
out=$(printf 'appraise func=FILE_CHECK mask=MAY_EXEC\n' 2>&1 >"$C/ima/policy")
rc=$?
expect_eq "fastopen: writing an exec-open rule to ima/policy fails" 1 "$rc"
expect_match "... with EPERM" "Operation not permitted" "$out"
expect_match "... audited (op=policy_update cause=exec-dependent-rule)" \
	"op=policy_update cause=exec-dependent-rule" \
	"$(grep -F 'op=policy_update' "$T/audit.log")"
expect_match "... uevmfs says why, naming the rule" \
	"'appraise func=FILE_CHECK mask=MAY_EXEC' tells an exec from a read" \
	"$(cat "$T/uevmfs.stderr")"
expect_eq "... the policy in force is unchanged" "measure func=FILE_CHECK mask=^MAY_READ" \
	"$(sed 's/ *$//' "$C/ima/policy")"
# The same rule with no func= also matches the exec open's FILE_CHECK.
out=$(printf 'appraise mask=^MAY_EXEC\n' 2>&1 >"$C/ima/policy")
expect_eq "fastopen: a func-less ^MAY_EXEC rule is refused as well" 1 $?
expect_eq "... audited twice now" 2 \
	"$(grep -c 'op=policy_update cause=exec-dependent-rule' "$T/audit.log")"
# What fastopen does serve for an exec: BPRM_CHECK.
printf 'appraise func=BPRM_CHECK mask=MAY_EXEC\n' >"$C/ima/policy"
expect_eq "fastopen: an appraise func=BPRM_CHECK policy is loaded" 0 $?
out=$(run_prog)
expect_match "fastopen: the tampered program's exec is refused" "Permission denied" "$out"
check "... it never ran" test -z "$(grep -F TAMPERED <<<"$out")"
expect_match "... audited (op=appraise_data cause=invalid-hash)" \
	"op=appraise_data cause=invalid-hash" \
	"$(ufs_records invalid-hash "$M/prog" | tr '\n' ' ')"
ufs_umount "$M"

# ---- fastopen forced on with an exec-open rule: refused at start --------------------------
# start_refused OPTIONS: uevmfs's exit status; its output in $T/start.out.
# Should it mount after all, that fails and it is unmounted (no hang).
start_refused() {
	local pid
	"$UEVMFS" "$S" "$M" -f -o "$1" >"$T/start.out" 2>&1 &
	pid=$!
	wait_quiet "$WAIT_S" ufs_up_or_gone "$M" "$pid"
	if ufs_mounted "$M" fuse.uevmfs; then
		fail "... nothing is mounted" "mounted"
		fusermount3 -u "$M"
	fi
	kill -0 "$pid" 2>/dev/null && kill "$pid"
	wait "$pid"
}
for fo in fastopen fastopen=on; do
	start_refused "$OPTS,securityfs=none,policy=$T/exec.policy,$fo"
	expect_eq "$fo with a mask=MAY_EXEC rule: uevmfs refuses to start (exit 1)" 1 $?
	expect_match "... naming the rule" \
		"line 1: 'appraise func=FILE_CHECK mask=MAY_EXEC' tells an exec from a read" \
		"$(cat "$T/start.out")"
done

# ---- fastopen=auto with the rule at mount: per-open hooks, the exec refused --------------
: >"$T/uevmfs.stderr"
: >"$T/audit.log"
ufs_mount "$S" "$M" "$OPTS,policy=$T/exec.policy" || exit 1
check "auto, mask=MAY_EXEC rule: fastopen not chosen" \
	test -z "$(grep -F 'fastopen: on' "$T/uevmfs.stderr")"
out=$(run_prog)
expect_match "auto, mask=MAY_EXEC rule: the tampered program's exec is refused" \
	"Permission denied" "$out"
check "... it never ran" test -z "$(grep -F TAMPERED <<<"$out")"
expect_match "... audited" "op=appraise_data cause=invalid-hash" \
	"$(ufs_records invalid-hash "$M/prog" | tr '\n' ' ')"
ufs_umount "$M"

# ---- without fastopen the later write is accepted and enforced ----------------------------
: >"$T/audit.log"
ufs_mount "$S" "$M" "$OPTS,securityfs=$C,policy=$T/read.policy,fastopen=off" || exit 1
printf 'appraise func=FILE_CHECK mask=MAY_EXEC\n' >"$C/ima/policy"
expect_eq "fastopen=off: the exec-open rule written later is loaded" 0 $?
out=$(run_prog)
expect_match "fastopen=off: the tampered program's exec is refused" "Permission denied" "$out"
check "... it never ran" test -z "$(grep -F TAMPERED <<<"$out")"
expect_match "... audited" "op=appraise_data cause=invalid-hash" \
	"$(ufs_records invalid-hash "$M/prog" | tr '\n' ' ')"
ufs_umount "$M"
