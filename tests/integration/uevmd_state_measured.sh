#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmd measures what it enforces with, as critical data: under a
# "measure func=CRITICAL_DATA label=uevmd" rule, at start, at each reload
# and after each change (a policy or mode change through the socket, a
# write to the control tree's ima/policy or evm), an ima-buf entry
# "uevmd-state" names its mode and EVM bits as applied, its key's full id,
# the SHA-256 of its configuration and of the policy as read or written,
# their paths, every -o override of its command line, whether a keeper
# holds its groups (uevmd --supervise) and each watch with its
# filesystem's fsid (as stat -f prints it, in 16 digits).  The attacker is offline: they edit the
# configuration to name a key of their own, weaken the policy, and
# relabel the disk with that key, so that the configuration passes its
# own check (the key it is checked with is the one it names).  uevmd
# cannot tell that from the disk; a verifier of the list can: the entry
# names the other key and policy, or is missing (the rule was taken
# out).  The kernel's settings reach a verifier through the boot chain
# and its POLICY_CHECK rules; its critical data is measured only under a
# matching rule, as here.  Digests are checked against sha256sum, the key
# id against its definition (SHA-256 over "uevm key id", a NUL and the key
# padded with zeros to 128 bytes).  An -o override in the unit file (evm =
# no, which turns EVM off) changes the entry too, and a path with spaces
# cannot pose as fields.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
echo "measure func=CRITICAL_DATA label=uevmd" >>"$T/policy"
L=$T/host.ml
write_conf "mode = enforce" "measurement_list = $L"

# state_entries: the buffers of the list's uevmd-state entries, one a line
state_entries() {
	"$UEVM" measurements daemon --ascii --socket "$SOCK" |
		awk '$3 == "ima-buf" && $5 == "uevmd-state" { print $6 }' |
		while read -r hex; do printf '%s' "$hex" | xxd -r -p; echo; done
}
keyid() { { printf 'uevm key id\0'; cat "$1"; head -c $((128 - $(stat -c %s "$1"))) /dev/zero; } |
	sha256sum | cut -d' ' -f1; }
want_state() {	# POLICY-FILE MODE KEY-FILE [EVM [OVERRIDE...]]
	local pol=$1 mode=$2 key=$3 evm=${4:-0x80000001} o name=${POLNAME:-$1}
	shift 3; [ $# -gt 0 ] && shift
	[ -n "${FROM_TREE:-}" ] && name=control-tree
	printf 'mode=%s evm=%s keeper=%s key=%s config_sha256=%s policy_sha256=%s config="%s" policy="%s"' \
		"$mode" "$evm" "${KEEPER:-no}" "$(keyid "$key")" "$(sha256sum <"$CONF" | cut -d' ' -f1)" \
		"$(sha256sum <"$pol" | cut -d' ' -f1)" "$CONF" "$name"
	for o in "$@"; do printf ' override="%s"' "$o"; done
	printf ' filesystem="%s" fsid=%016x\n' "$MNT" "0x$(stat -f -c %i "$MNT")"
}
restart_fresh() {	# a new list, as at boot with a TPM
	stop_uevmd
	rm -f "$L" "$L.mac"
	start_uevmd
}

start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "at start: one uevmd-state entry, the configuration, policy, mode and key as read" \
	"$(want_state "$T/policy" enforce "$T/key")" "$(state_entries)"
check "  logged" log_has "measured uevmd-state: mode=enforce evm=0x80000001 keeper=no key=$(keyid "$T/key")"

# A reload with another policy and mode: a second entry.
printf '%s\n' "appraise func=BPRM_CHECK" "measure func=CRITICAL_DATA" >"$T/policy"
write_conf "mode = log" "measurement_list = $L"
kill -HUP "$UEVMD_PID"
reloaded() { [ "$(state_entries | wc -l)" -ge 2 ]; }
check "after a reload: a second entry (a rule with no label= covers uevmd too)" \
	wait_quiet "$WAIT_S" reloaded
expect_eq "  naming the new policy and mode" "$(want_state "$T/policy" log "$T/key")" \
	"$(state_entries | tail -n 1)"
first_key=$(status_field key)

# As the kernel: no CRITICAL_DATA rule for the label, no entry.
echo "measure func=CRITICAL_DATA label=selinux" >"$T/policy"
restart_fresh || { fail "uevmd restarts"; exit 1; }
expect_eq "a rule for another label: no uevmd-state entry" "" "$(state_entries)"

# The offline attack: a key of the attacker's named in the configuration
# (the list kept across restarts is MACed with the key: another key does
# not take it, so the attacker removes it, as a boot with a TPM starts a
# list afresh), the policy weakened, everything labelled with that key.
head -c 32 /dev/urandom >"$T/mine.key"
chmod 600 "$T/mine.key"
printf '%s\n' "dont_appraise fsmagic=0xef53" "measure func=CRITICAL_DATA label=uevmd" >"$T/policy"
KEYSPEC="raw:$T/mine.key" write_conf "mode = enforce" "measurement_list = $L"
restart_fresh || { fail "uevmd starts with the attacker's key"; exit 1; }
expect_eq "restarted with another key: the entry names it and the weakened policy" \
	"$(want_state "$T/policy" enforce "$T/mine.key")" "$(state_entries)"
check "  a fingerprint other than the first one's" test "$(status_field key)" != "$first_key"

# The same attack through the unit file: the configuration untouched, EVM
# turned off on the command line.
write_conf "mode = enforce" "measurement_list = $L"
stop_uevmd
rm -f "$L" "$L.mac"
start_uevmd -o "evm=no" || { fail "uevmd starts with -o evm=no"; exit 1; }
expect_eq "an -o override is in the entry, and EVM as applied" \
	"$(want_state "$T/policy" enforce "$T/key" 0x0 "evm=no")" "$(state_entries)"
stop_uevmd

# Run without the keeper (uevmd --supervise), opens pass while uevmd
# restarts; the entry says which.
rm -f "$L" "$L.mac"
start_uevmd --supervise || { fail "uevmd --supervise starts"; exit 1; }
expect_eq "under uevmd --supervise: keeper=yes" \
	"$(KEEPER=yes want_state "$T/policy" enforce "$T/key")" "$(state_entries)"
stop_uevmd
# The keeper's environment alone (a unit's Environment= lines, a review's
# attack) is not a keeper: the descriptor is not our parent's socket pair.
rm -f "$L" "$L.mac"
UEVMD_SUPERVISED=1 FDSTORE=4 UEVMD_NOTIFY_FD=9 "$UEVMD" -c "$CONF" 9</dev/null >>"$T/uevmd.out" 2>&1 &
UEVMD_PID=$!
wait_quiet "$WAIT_S" uevmd_up_or_gone "$UEVMD_PID"
expect_eq "a keeper's environment without a keeper: keeper=no" \
	"$(want_state "$T/policy" enforce "$T/key")" "$(state_entries)"
stop_uevmd
# Nor is a parent that made a socket pair and passed its end with that
# environment (a wrapper a unit runs instead of uevmd --supervise): it
# holds no fanotify group, so a killed uevmd would leave opens allowed.
rm -f "$L" "$L.mac"
python3 - "$UEVMD" "$CONF" "$T/wrapped.pid" >>"$T/uevmd.out" 2>&1 <<'PY' &
import os, socket, sys
mine, theirs = socket.socketpair()
pid = os.fork()
if pid == 0:
    os.dup2(theirs.fileno(), 9)
    env = dict(os.environ, UEVMD_SUPERVISED="1", FDSTORE="4", UEVMD_NOTIFY_FD="9")
    os.execve(sys.argv[1], [sys.argv[1], "-c", sys.argv[2]], env)
with open(sys.argv[3] + ".tmp", "w") as f:
    f.write("%d\n" % pid)
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
PY
WRAPPER=$!
wait_quiet "$WAIT_S" test -s "$T/wrapped.pid"
UEVMD_PID=$(cat "$T/wrapped.pid")
wait_quiet "$WAIT_S" uevmd_up_or_gone "$UEVMD_PID"
expect_eq "a wrapper's socket pair and environment: keeper=no" \
	"$(want_state "$T/policy" enforce "$T/key")" "$(state_entries)"
kill "$UEVMD_PID"	# the wrapper's child, not ours: the wrapper waits for it
wait "$WRAPPER"
expect_eq "  uevmd stops on SIGTERM" 0 $?
UEVMD_PID=

# Changes after start: a mode set through the socket, a policy written to
# the control tree.  Each adds an entry saying what now applies (unless
# the same entry is already in the list: as the kernel, an entry is not
# added twice, so a verifier checks every entry, not only the last).
write_conf "mode = enforce" "measurement_list = $L" "control_tree = $T/tree"
rm -f "$L" "$L.mac"
start_uevmd || { fail "uevmd starts with a control tree"; exit 1; }
"$UEVM" enable --mode log --socket "$SOCK" >/dev/null
expect_eq "uevm enable --mode log: a second entry, mode log as applied" \
	"$(want_state "$T/policy" log "$T/key")" "$(state_entries | tail -n 1)"
printf '%s\n' "measure func=CRITICAL_DATA label=uevmd" >"$T/treepolicy"
tree_write "$T/tree/ima/policy" <"$T/treepolicy"
three() { [ "$(state_entries | wc -l)" -ge 3 ]; }
check "a policy written to the control tree: a third entry" wait_quiet "$WAIT_S" three
expect_eq "  naming the tree and the SHA-256 of what was written" \
	"$(FROM_TREE=1 want_state "$T/treepolicy" log "$T/key")" "$(state_entries | tail -n 1)"
stop_uevmd

# No control socket, a control tree: changes written to the tree are still
# noticed (the control thread runs for the tree alone) and measured, and
# the ignore marks placed under the old rules go.  A labelled file passes
# while opens are appraised only (and gets an ignore mark); once the tree
# asks to measure them too, its next open is measured.
printf '%s\n' "appraise func=FILE_CHECK" "measure func=CRITICAL_DATA label=uevmd" >"$T/hashonly"
mkdir -p "$MNT/t"
echo original >"$MNT/t/file"
"$UEVM" label --hmac-key "raw:$T/key" "$MNT/t/file" >/dev/null
printf '%s\n' "appraise func=FILE_CHECK" "measure func=FILE_CHECK" \
	"measure func=CRITICAL_DATA label=uevmd" >"$T/treepolicy"
POLICY=$T/hashonly write_conf "mode = enforce" "measurement_list = $L" "control_tree = $T/tree" \
	"control_socket = none"
rm -f "$L" "$L.mac"
"$UEVMD" -c "$CONF" >>"$T/uevmd.out" 2>&1 &
UEVMD_PID=$!
tree_up() { [ -e "$T/tree/ima/ascii_runtime_measurements" ] || uevmd_gone "$UEVMD_PID"; }
wait_quiet "$WAIT_S" tree_up
tree_entries() {
	awk '$3 == "ima-buf" && $5 == "uevmd-state" { print $6 }' "$T/tree/ima/ascii_runtime_measurements" |
		while read -r hex; do printf '%s' "$hex" | xxd -r -p; echo; done
}
started() { [ "$(tree_entries | wc -l)" -ge 1 ]; }
check "no socket: the start's entry, read through the tree" wait_quiet "$WAIT_S" started
expect_eq "  the labelled file opens" ok "$(open_result "$MNT/t/file")"
expect_eq "  again (its ignore mark)" ok "$(open_result "$MNT/t/file")"
tree_write "$T/tree/ima/policy" <"$T/treepolicy"
two() { [ "$(tree_entries | wc -l)" -ge 2 ]; }
check "  a policy written to the tree: a second entry" wait_quiet "$WAIT_S" two
expect_match "  naming the tree" ' policy="control-tree" ' "$(tree_entries | tail -n 1)"
cat "$MNT/t/file" >/dev/null
check "  and the file's next open is measured (the old rules' ignore mark went)" \
	grep -q " $MNT/t/file\$" "$T/tree/ima/ascii_runtime_measurements"
kill "$UEVMD_PID"
wait_quiet "$WAIT_S" uevmd_gone "$UEVMD_PID"
wait "$UEVMD_PID"
expect_eq "  and uevmd stops cleanly" 0 $?
UEVMD_PID=

# A policy written to the tree and, at once, another sent through the
# socket: the tree's is recorded first, then the socket's (a review lost
# the tree's when the socket's came before the control thread looked).
# Then one written right before SIGTERM: recorded before uevmd stops.
write_conf "mode = enforce" "measurement_list = $L" "control_tree = $T/tree"
rm -f "$L" "$L.mac"
start_uevmd || { fail "uevmd starts with a control tree"; exit 1; }
printf '%s\n' "appraise func=FILE_CHECK" "measure func=CRITICAL_DATA label=uevmd" >"$T/sockpolicy"
tree_write "$T/tree/ima/policy" <"$T/treepolicy"
"$UEVM" policy load --socket "$SOCK" "$T/sockpolicy" >/dev/null
expect_eq "tree, then socket: both recorded, in that order" \
	"$(FROM_TREE=1 want_state "$T/treepolicy" enforce "$T/key")
$(POLNAME=sockpolicy want_state "$T/sockpolicy" enforce "$T/key")" "$(state_entries | tail -n 2)"
stop_uevmd
: >"$LOG"
rm -f "$L" "$L.mac"	# a fresh list: the same entry is not added twice
start_uevmd || { fail "uevmd starts again"; exit 1; }
tree_write "$T/tree/ima/policy" <"$T/treepolicy"
stop_uevmd
check "a policy written to the tree right before SIGTERM: recorded before uevmd stopped" \
	grep -q 'measured uevmd-state: .* policy="control-tree"' "$LOG"
