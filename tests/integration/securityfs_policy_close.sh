#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The control tree's ima/policy is installed at its opener's close, as the
# kernel installs at the last close (ima_release_policy), not at the close
# of a copy of the descriptor that a child inherited.  Before, in
#   { echo RULE1; /bin/true; echo RULE2; } > ima/policy
# the exit of /bin/true (a FUSE flush) installed RULE1 alone - a weaker
# policy, audited "completed" - and the shell's second write failed.  Run
# against uevmd's tree (the library's module, shared with uevmfs).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
mkdir -p "$MNT/s"
echo "unlabelled" >"$MNT/s/unlabelled"
echo "measure func=FILE_CHECK" >"$T/policy"
write_conf "mode = enforce" "control_tree = $T/tree"
start_uevmd || { fail "uevmd starts with a control tree"; exit 1; }
expect_eq "the configured rules: an unlabelled file opens" ok "$(open_result "$MNT/s/unlabelled")"

out=$({ echo "measure func=FILE_CHECK"; /bin/true; echo "appraise func=FILE_CHECK"; } 2>&1 \
	>"$T/tree/ima/policy")
expect_eq "a policy written by a shell that ran a child between two writes: no error" "" "$out"
expect_eq "  both rules are installed, at the shell's close" "measure func=FILE_CHECK 
appraise func=FILE_CHECK " "$(cat "$T/tree/ima/policy")"
expect_eq "  one policy_update record (the child's exit installed nothing)" 1 \
	"$(grep -c 'op=policy_update cause=completed' "$LOG")"
expect_eq "  the appraise rule applies: the unlabelled file is refused" EPERM \
	"$(open_result "$MNT/s/unlabelled")"
stop_uevmd
