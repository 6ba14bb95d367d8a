#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Controlling uevmd: the configuration file and its errors, on_exit =
# refuse, `uevm status`, `uevm enable` (EVM initialised at run time: what
# was appraised without it is appraised again), the modes enforce, log,
# fix and off, `uevm policy load` (whole or nothing), who may change what,
# the securityfs-like control tree (the library's module, shared with
# uevmfs), the systemd notification protocol and the unit file.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

command -v python3 >/dev/null || { fail "python3 is installed"; exit 1; }
make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
mkdir -p "$MNT/c"
for f in good content owner fixme; do echo "file $f" >"$MNT/c/$f"; done
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT/c"
echo tampered >>"$MNT/c/content"
echo tampered >>"$MNT/c/fixme"
chown 4321 "$MNT/c/owner"		# only EVM sees this one

# ---- no daemon, bad configurations ---------------------------------------------
out=$("$UEVM" status --socket "$SOCK" 2>&1)
expect_eq "uevm status without uevmd: exit 2" 2 $?
expect_match "  says it cannot reach uevmd" "cannot reach uevmd at $SOCK" "$out"
write_conf "on_exit = refuse"
out=$("$UEVMD" -c "$CONF" 2>&1)
expect_eq "on_exit = refuse: uevmd refuses to start (exit 1)" 1 $?
expect_match "  and explains that the kernel allows opens when it exits" \
	"kernel allows every pending and later open" "$out"
write_conf "workers = many"
out=$("$UEVMD" -c "$CONF" 2>&1)
expect_eq "an invalid value: exit 2" 2 $?
expect_match "  names the file and line" "$CONF:[0-9]+: invalid value 'many' for 'workers'" "$out"
write_conf "colour = blue"
expect_match "an unknown key is refused" "unknown key 'colour'" "$("$UEVMD" -c "$CONF" 2>&1)"
write_conf
out=$("$UEVMD" -c "$CONF" --check --no-walk 2>&1)
expect_eq "uevmd --check --no-walk loads configuration, key and policy" 0 $?
expect_match "  and says so" "policy load \(4 rules\)" "$out"
# A copy off the root filesystem the example watches (inputs on a watched
# filesystem must be labelled with the daemon's key: uevmd_attack_config).
cp "$TESTS_DIR/../programs/uevmd/uevmd.conf" "$MNT/example.conf"
out=$("$UEVMD" -c "$MNT/example.conf" -o "key=raw:$T/key" \
	-o "measurement_list=$T/example.ml" --check --no-walk 2>&1)
expect_eq "the example configuration (programs/uevmd/uevmd.conf) loads" 0 $?
expect_match "  with its built-in policy" "policy load \([0-9]+ rules\)" "$out"
echo "appraise func=NO_SUCH_HOOK" >"$T/badpolicy"
out=$("$UEVMD" -c "$CONF" -o "policy=$T/badpolicy" --check --no-walk 2>&1)
expect_eq "a bad policy file stops the start (a configuration error: 2)" 2 $?
expect_match "  with the line and token" "line 1.*NO_SUCH_HOOK" "$out"
check "nothing was left marked (a file opens freely)" \
	test "$(open_result "$MNT/c/content")" = ok

# ---- EVM initialised at run time ----------------------------------------------------
write_conf "evm = no" "control_tree = $T/tree"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_match "uevm status: evm 0 before enable" "^evm: 0$" "$("$UEVM" status --socket "$SOCK")"
# Before EVM is initialised IMA appraises the content alone, as the kernel
# does: a matching hash passes even though the owner changed offline.
expect_eq "before enable: a file whose owner changed offline opens (content matches)" ok \
	"$(open_result "$MNT/c/owner")"
expect_eq "  content changes are refused" EPERM "$(open_result "$MNT/c/content")"
expect_eq "the tree's evm file says 0" 0 "$(cat "$T/tree/evm")"
out=$(setpriv --bounding-set=-sys_admin "$UEVM" enable --socket "$SOCK" 2>&1)
expect_eq "uevm enable without CAP_SYS_ADMIN: refused (exit 1)" 1 $?
expect_match "  because of CAP_SYS_ADMIN" "needs CAP_SYS_ADMIN" "$out"
expect_match "  but uevm status works" "^state: running" \
	"$(setpriv --bounding-set=-sys_admin "$UEVM" status --socket "$SOCK")"
expect_rc "another user cannot reach the socket (mode 0600)" 2 \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$UEVM" status --socket "$SOCK"
out=$("$UEVM" enable --socket "$SOCK")
expect_eq "uevm enable" 0 $?
expect_match "  reports evm 1" "^evm: 1$" "$out"
expect_eq "  the tree's evm file says 1" 1 "$(cat "$T/tree/evm")"
expect_eq "after enable the owner change is refused" EPERM "$(open_result "$MNT/c/owner")"
check "  appraised again, with EVM: cause invalid-HMAC" \
	log_has "cause=invalid-HMAC .*name=\"$MNT/c/owner\""
expect_eq "  the untouched file opens" ok "$(open_result "$MNT/c/good")"
expect_eq "a second enable changes nothing" 0 "$("$UEVM" enable --socket "$SOCK" >/dev/null; echo $?)"

# ---- modes ------------------------------------------------------------------------------
"$UEVM" enable --mode log --socket "$SOCK" >/dev/null
expect_match "log mode" "^mode: log$" "$("$UEVM" status --socket "$SOCK")"
expect_eq "log mode: a tampered file opens" ok "$(open_result "$MNT/c/content")"
"$UEVM" enable --mode off --socket "$SOCK" >/dev/null
e0=$(status_field denied)
expect_eq "off mode: a tampered file opens" ok "$(open_result "$MNT/c/owner")"
expect_eq "  nothing was denied" "$e0" "$(status_field denied)"
"$UEVM" enable --mode fix --socket "$SOCK" >/dev/null
expect_eq "fix mode: a tampered file opens" ok "$(open_result "$MNT/c/fixme")"
"$UEVM" enable --mode enforce --socket "$SOCK" >/dev/null
expect_eq "  and stays good afterwards, relabelled (enforce)" ok "$(open_result "$MNT/c/fixme")"
expect_eq "enforce mode: refused again" EPERM "$(open_result "$MNT/c/content")"
expect_rc "an unknown mode is refused" 1 "$UEVM" enable --mode lenient --socket "$SOCK"

# ---- policy loads ------------------------------------------------------------------------
printf 'measure func=FILE_CHECK\nappraise func=FILE_CHECK bogus=1\n' >"$T/p_bad"
out=$("$UEVM" policy load --socket "$SOCK" "$T/p_bad" 2>&1)
expect_eq "uevm policy load of a bad policy: refused (exit 1)" 1 $?
expect_match "  with the line number" "line 2" "$out"
expect_match "  the old policy stays" "policy: $T/policy \(4 rules\)" "$("$UEVM" status --socket "$SOCK")"
expect_eq "  and is enforced" EPERM "$(open_result "$MNT/c/content")"
printf 'measure func=FILE_CHECK mask=MAY_READ\n' >"$T/p_measure"
out=$("$UEVM" policy load --socket "$SOCK" "$T/p_measure")
expect_eq "a measure-only policy loads" 0 $?
expect_match "  uevm status names it" "policy: p_measure \(1 rules\)" "$("$UEVM" status --socket "$SOCK")"
expect_eq "  nothing is appraised now: the tampered file opens" ok "$(open_result "$MNT/c/content")"
expect_match "uevm status --policy shows the rules" "^measure func=FILE_CHECK mask=MAY_READ" \
	"$("$UEVM" status --policy --socket "$SOCK")"
"$UEVM" policy load --socket "$SOCK" "$T/policy" >/dev/null
expect_eq "the appraise policy again: refused" EPERM "$(open_result "$MNT/c/content")"
expect_rc "uevm policy load of a missing file: exit 2" 2 \
	"$UEVM" policy load --socket "$SOCK" "$T/no-such-policy"

# ---- the control tree ----------------------------------------------------------------------
cat "$MNT/c/good" >/dev/null
expect_eq "tree: runtime_measurements_count = uevm measurements daemon --count" \
	"$("$UEVM" measurements daemon --count --socket "$SOCK")" \
	"$(cat "$T/tree/ima/runtime_measurements_count")"
"$UEVM" measurements daemon --binary --socket "$SOCK" >"$T/live.bin"
cat "$T/tree/ima/binary_runtime_measurements" >"$T/tree.bin"
check "tree: binary_runtime_measurements = the daemon's binary list" \
	cmp "$T/live.bin" "$T/tree.bin"
expect_match "tree: ima/policy shows the rules" "^appraise func=FILE_CHECK" "$(cat "$T/tree/ima/policy")"
expect_match "tree: evm_xattrs lists security.ima" "^security.ima$" "$(cat "$T/tree/evm_xattrs")"
e0=$(status_field events)
cat "$MNT/c/good" >/dev/null
expect_eq "a passed file has an ignore mark (not seen)" "$e0" "$(status_field events)"
# One open, one write, one close (python): the tree installs a policy at
# the first close of its writer, and shells and dd close a dup2 copy first
# (reported to the control tree's module).
printf 'appraise func=FILE_CHECK\nmeasure func=FILE_CHECK mask=MAY_READ pcr=11\n' >"$T/p_tree"
tree_write "$T/tree/ima/policy" <"$T/p_tree"
expect_eq "a policy written to the tree's ima/policy loads" 0 $?
tree_policy() { "$UEVM" status --socket "$SOCK" | grep -q "policy: control tree (2 rules)"; }
wait_quiet "$WAIT_S" tree_policy
expect_match "  uevm status sees it" "policy: control tree \(2 rules\)" "$("$UEVM" status --socket "$SOCK")"
cat "$MNT/c/good" >/dev/null
check "  its ignore marks were dropped (the file is seen again)" \
	test "$(status_field events)" -gt "$e0"
expect_match "  the new rules measure into PCR 11" "^11 .* $MNT/c/good\$" \
	"$("$UEVM" measurements daemon --socket "$SOCK")"
expect_rc "the tree's policy is written once" 1 tree_write "$T/tree/ima/policy" <"$T/p_tree"
stop_uevmd
check "the tree is unmounted when uevmd stops" eval "! mountpoint -q '$T/tree'"

# ---- systemd: READY=1, WATCHDOG=1, STOPPING=1 by hand -------------------------------------
cat >"$T/notify.py" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1].replace("@", "\0", 1))
open(sys.argv[2] + ".ready", "w").close()
with open(sys.argv[2], "a") as out:
    while True:
        out.write(s.recv(4096).decode() + "\n---\n")
        out.flush()
EOF
NAME="@uevmd-test-$$-$RANDOM"
python3 "$T/notify.py" "$NAME" "$T/notify.out" &
NPID=$!
on_exit "kill $NPID 2>/dev/null; wait $NPID 2>/dev/null"
wait_for "$WAIT_S" "the notify socket stand-in to bind" test -e "$T/notify.out.ready"
write_conf
# wait_notify REGEX COUNT: until the notify socket got COUNT such lines.
notified() { [ "$(grep -c -- "$1" "$T/notify.out")" -ge "$2" ]; }
wait_notify() { wait_quiet "$WAIT_S" notified "$@"; }
NOTIFY_SOCKET=$NAME WATCHDOG_USEC=400000 start_uevmd || fail "uevmd starts under a notify socket"
check "  WATCHDOG=1 comes again and again (3 pings at WatchdogSec 400 ms)" \
	wait_notify '^WATCHDOG=1$' 3
stop_uevmd
expect_match "sd_notify (abstract socket): READY=1 with a STATUS" "^READY=1$" "$(cat "$T/notify.out")"
expect_match "  STATUS= says what is enforced" "^STATUS=enforcing 1 watch" "$(cat "$T/notify.out")"
check "  STOPPING=1 on SIGTERM" wait_notify '^STOPPING=1$' 1
: >"$T/notify.out"
NOTIFY_SOCKET=$NAME WATCHDOG_USEC=400000 WATCHDOG_PID=1 start_uevmd
# From READY=1 on, a watchdog would ping every 200 ms.  No event marks a
# ping not sent, so this one negative window stays: six intervals.  Load
# can only make it catch fewer pings (a missed failure), never fail it.
wait_for "$WAIT_S" "READY=1 from the second uevmd" notified '^READY=1$' 1
sleep 1.2
stop_uevmd
expect_eq "  no pings when WATCHDOG_PID names another process" 0 \
	"$(grep -c '^WATCHDOG=1$' "$T/notify.out")"

# ---- the unit file ----------------------------------------------------------------------------
UNIT=${UEVM_BUILD:-$TESTS_DIR/../build/default}/uevmd.service
if command -v systemd-analyze >/dev/null; then
	sed "s|^ExecStart=[^ ]*|ExecStart=$UEVMD|" "$UNIT" >"$T/uevmd.service"
	out=$(systemd-analyze verify --man=no "$T/uevmd.service" 2>&1)
	expect_eq "systemd-analyze verify accepts the unit" "" "$out"
fi
expect_match "the unit is Type=notify with a watchdog" "Type=notify" "$(cat "$UNIT")"
expect_match "  WatchdogSec is set" "^WatchdogSec=[0-9]+" "$(cat "$UNIT")"
