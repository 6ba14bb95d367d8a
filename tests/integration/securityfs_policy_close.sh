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

# A shell builtin's redirect to a descriptor the shell holds ("echo R >&3")
# dups it and closes the dup: a close by the opener, but not its last.
restart() {
	rm -rf "$T/tree"
	start_uevmd || { fail "uevmd starts again"; exit 1; }
}
restart
out=$({ exec 3>"$T/tree/ima/policy"; echo "measure func=FILE_CHECK" >&3
	echo "appraise func=FILE_CHECK" >&3; exec 3>&-; } 2>&1)
expect_eq "exec 3>ima/policy; echo R1 >&3; echo R2 >&3: no error" "" "$out"
expect_eq "  both rules are installed, at the last close" "measure func=FILE_CHECK 
appraise func=FILE_CHECK " "$(cat "$T/tree/ima/policy")"
stop_uevmd

# An opener whose /proc ids differ from the request's (setfsuid: an
# unprivileged euid, fsuid 0) is still known by its process.
restart
out=$(python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.setresuid(1000, 1000, 0)
libc.setfsuid(0)
fd = os.open(sys.argv[1], os.O_WRONLY)
os.write(fd, b"measure func=FILE_CHECK\n")
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
os.write(fd, b"appraise func=FILE_CHECK\n")
os.close(fd)' "$T/tree/ima/policy" 2>&1)
expect_eq "an opener with fsuid 0 and euid 1000, whose child exits between writes: no error" "" "$out"
expect_eq "  both rules are installed" "measure func=FILE_CHECK 
appraise func=FILE_CHECK " "$(cat "$T/tree/ima/policy")"
stop_uevmd
