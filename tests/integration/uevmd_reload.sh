#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SIGHUP (systemctl reload) reloads uevmd's configuration and policy, whole
# or not at all: a good change takes effect (a file newly covered by the
# policy is refused, a mode change applies); a broken configuration (bad
# syntax, a bad policy, a policy file gone) is refused with a log line
# naming the file and the cause while the old one keeps enforcing; a change
# that needs a restart (watches, key) is refused naming the key; opens
# made while reloads run are all answered as before (no good file refused,
# no tampered file allowed).  SIGUSR1 reopens the log file only, as the
# shipped logrotate snippet has it do.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
mkdir -p "$MNT/d"
echo good >"$MNT/d/good"
echo tampered >"$MNT/d/tampered"
cp "$(type -P true)" "$MNT/d/true"
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT/d"
echo changed >>"$MNT/d/tampered"
# Execs only: reading the tampered file is not appraised.
echo "appraise func=BPRM_CHECK" >"$T/policy"
write_conf
cp "$CONF" "$T/conf.start"

start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "execs-only policy: the tampered file reads" ok "$(open_result "$MNT/d/tampered")"
expect_eq "  the labelled binary runs" ok "$(exec_result "$MNT/d/true")"

nlines() { grep -c -- "$1" "$LOG" 2>/dev/null; }
# hup_wait PATTERN: SIGHUP, then wait for one more log line matching PATTERN.
hup_wait() {
	local before
	before=$(nlines "$1")
	kill -HUP "$UEVMD_PID"
	wait_for "$WAIT_S" "a new log line /$1/" eval "[ \"\$(nlines '$1')\" -gt $before ]"
}

# ---- a good change -----------------------------------------------------------------------------
printf 'appraise func=BPRM_CHECK\nappraise func=FILE_CHECK\n' >"$T/policy"
hup_wait "reloaded $CONF"
pass "a reload with a new policy is logged"
expect_eq "  the newly covered file is refused" EPERM "$(open_result "$MNT/d/tampered")"
expect_eq "  the good file reads" ok "$(open_result "$MNT/d/good")"
expect_match "  uevm status shows the new rules" "^policy: $T/policy \(2 rules\)" \
	"$("$UEVM" status --socket "$SOCK")"

write_conf "mode = log"
hup_wait "reloaded $CONF: mode log"
pass "a reload to mode = log"
expect_eq "  the tampered file reads (logged)" ok "$(open_result "$MNT/d/tampered")"
expect_match "  uevm status: mode log" "^mode: log$" "$("$UEVM" status --socket "$SOCK")"
write_conf
hup_wait "reloaded $CONF: mode enforce"
expect_eq "back to enforce: refused again" EPERM "$(open_result "$MNT/d/tampered")"

# ---- broken configurations: refused, the old one keeps enforcing -----------------------------
write_conf "colour = blue"
hup_wait "reload refused"
check "bad syntax: the log names the file, line and key" \
	log_grep "reload refused: $CONF:[0-9]+: unknown key 'colour'; the running configuration stays"
expect_eq "  the old configuration still enforces" EPERM "$(open_result "$MNT/d/tampered")"

write_conf "mode = sometimes"
hup_wait "reload refused"
check "a bad value: the log says which" log_grep "reload refused: $CONF:[0-9]+: invalid value 'sometimes' for 'mode'"

echo "appraise func=NO_SUCH_HOOK" >"$T/policy.bad"
POLICY=$T/policy.bad write_conf "mode = log"
hup_wait "reload refused: policy"
check "a bad policy: the log names the policy file and the token" \
	log_grep "policy $T/policy.bad: .*NO_SUCH_HOOK"
expect_eq "  nothing of that configuration applies (mode stays enforce)" EPERM \
	"$(open_result "$MNT/d/tampered")"
expect_match "  uevm status: the old policy and mode" "policy: $T/policy \(2 rules\)" \
	"$("$UEVM" status --socket "$SOCK")"

POLICY=$T/policy.gone write_conf
hup_wait "reload refused: policy"
check "a policy file that is gone: named with the cause" \
	log_grep "policy $T/policy.gone: No such file or directory"

KEYSPEC=raw:$T/key.missing write_conf
hup_wait "reload refused"
check "a new key: refused, needs a restart" \
	log_grep "reload refused: $CONF: 'key' changed, which needs a restart"
write_conf "filesystem = $T"
hup_wait "reload refused"
check "a new watch: refused, needs a restart" \
	log_grep "reload refused: $CONF: 'filesystem' changed, which needs a restart"
expect_eq "after all of these, still enforcing" EPERM "$(open_result "$MNT/d/tampered")"
expect_eq "  and the good file reads" ok "$(open_result "$MNT/d/good")"

# ---- opens while reloading ---------------------------------------------------------------------
# Two policies that both appraise reads, and broken ones between them:
# every answer must stay what it was, whichever state a reload is in.
printf 'appraise func=FILE_CHECK\nappraise func=BPRM_CHECK\n' >"$T/policy.b"
opener() {
	while [ ! -e "$T/stop" ]; do
		echo "good $(open_result "$MNT/d/good")"
		echo "tampered $(open_result "$MNT/d/tampered")"
	done >"$T/opens"
}
opener &
OPENER=$!
on_exit "touch '$T/stop'; wait $OPENER 2>/dev/null"
for i in $(seq 1 12); do
	case $((i % 3)) in
	0) POLICY=$T/policy.b write_conf ;;
	1) write_conf ;;
	2) write_conf "colour = blue" ;;
	esac
	# Opens go on between each reload and the next.
	n=$(wc -l <"$T/opens" 2>/dev/null || echo 0)
	kill -HUP "$UEVMD_PID"
	wait_for "$WAIT_S" "opens after reload $i" eval "[ \"\$(wc -l <'$T/opens')\" -ge $((n + 4)) ]"
done
hup_wait "SIGHUP: reloading"
touch "$T/stop"
wait "$OPENER"
expect_eq "12 reloads: every good open allowed" "" "$(grep '^good' "$T/opens" | grep -v ' ok$')"
expect_eq "  every tampered open refused" "" "$(grep '^tampered' "$T/opens" | grep -v ' EPERM$')"
expect_eq "  no answer was late" 0 "$(status_field late)"

# ---- SIGUSR1 and the shipped logrotate snippet: the log file only ----------------------------
# A copy with the mode make install gives it: logrotate ignores a snippet
# others may write, and a tree unpacked from a tarball may be 0664.
install -m 644 "$TESTS_DIR/../programs/uevmd/uevmd.logrotate" "$T/uevmd.logrotate"
SNIPPET=$T/uevmd.logrotate
if command -v logrotate >/dev/null; then
	out=$(logrotate -d -s "$T/lr.state" "$SNIPPET" 2>&1)
	expect_eq "logrotate -d parses the shipped snippet" 0 $?
	expect_match "  which rotates /var/log/uevmd.log" "rotating pattern: /var/log/uevmd.log" "$out"
	# The snippet as shipped, but for this test's log and daemon (its
	# postrotate signals through systemctl, which is not PID 1 here).
	sed -e "s|^/var/log/uevmd.log|$LOG|" \
	    -e "s|systemctl kill .*uevmd.service|kill -USR1 $UEVMD_PID|" "$SNIPPET" >"$T/lr.conf"
	expect_match "  its postrotate sends SIGUSR1 to the main process" \
		"systemctl kill --kill-whom=main --signal=USR1 uevmd.service" "$(cat "$SNIPPET")"
	# A broken configuration in place: a reload would log its refusal.
	write_conf "colour = blue"
	reloads=$(nlines "SIGHUP: reloading")
	logrotate -f -s "$T/lr.state" "$T/lr.conf"
	expect_eq "logrotate rotates the log" 0 $?
	check "  uevmd reopens it on SIGUSR1 (its line is in the new file)" \
		log_has "SIGUSR1: log file reopened"
	check "  the rotated file keeps the earlier records" grep -q "reloaded $CONF" "$LOG.1"
	expect_eq "  SIGUSR1 reloads nothing" "$reloads" \
		"$(cat "$LOG.1" "$LOG" | grep -c "SIGHUP: reloading")"
	expect_eq "  enforcement goes on" EPERM "$(open_result "$MNT/d/tampered")"
else
	fail "logrotate is installed (scripts/install-deps.sh)"
fi
stop_uevmd

# ---- under the keeper (the unit's uevmd --supervise): the signals reach uevmd ----------------
write_conf
start_uevmd --supervise || { fail "uevmd --supervise starts"; exit 1; }
write_conf "mode = log"
hup_wait "reloaded $CONF: mode log"
pass "SIGHUP to the keeper reloads the daemon"
expect_eq "  the tampered file reads in mode log" ok "$(open_result "$MNT/d/tampered")"
mv "$LOG" "$LOG.2"
kill -USR1 "$UEVMD_PID"
check "SIGUSR1 to the keeper reopens the daemon's log" log_has "SIGUSR1: log file reopened"
stop_uevmd
