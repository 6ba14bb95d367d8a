#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Who may change uevmd through its control socket when the caller's pid is
# reused.  The attacker is root's uid without CAP_SYS_ADMIN (a hardened
# service, a container's root): it may connect (the socket is 0600 root),
# and may not change the mode.  It connects, hands the connection to a
# child and exits; once its pid belongs to a process with every capability
# (an attacker cycles the pid space; here the test sets ns_last_pid), the
# child sends "mode off".  SO_PEERCRED still names the old pid, so a check
# of /proc/PID alone reads the new process.  uevmd must refuse and log it.
# A second attacker (from a review) is another user who may connect
# (CAP_DAC_OVERRIDE): it connects, then runs a setuid-root program, so its
# pid shows every capability while a child sends the request; uevmd takes
# changes only from a process that connected as root.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

HELPER=$T/attack_helper
cc -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -pthread -o "$HELPER" \
	"$TESTS_DIR/uevmd_attack_helper.c" || { fail "the attack helper builds"; exit 1; }
[ -w /proc/sys/kernel/ns_last_pid ] || { fail "/proc/sys/kernel/ns_last_pid is writable (root, CONFIG_CHECKPOINT_RESTORE)"; exit 1; }

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
write_conf
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_match "uevmd starts in enforce mode" "^mode: enforce$" "$("$UEVM" status --socket "$SOCK")"

HOLDER=
stop_holder() { [ -n "$HOLDER" ] && kill "$HOLDER" 2>/dev/null; wait "$HOLDER" 2>/dev/null; HOLDER=; }
on_exit stop_holder

# handoff: one attack; prints the child's reply line ("reply: ..."), or
# "no-reuse" when PID could not be given to the holder.
handoff() {
	local p line i
	rm -f "$T/hin" "$T/hout"
	mkfifo "$T/hin" "$T/hout"
	setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin -- \
		"$HELPER" ctl-handoff "$SOCK" "mode off" <"$T/hin" >"$T/hout" &
	p=$!
	exec 7>"$T/hin" 8<"$T/hout"
	if ! read -r -t "$WAIT_S" -u 8 line || [ "$line" != "pid $p" ]; then
		echo "helper: $line"
		exec 7>&- 8<&-
		return
	fi
	wait "$p"
	# The pid is free: give it to a process with every capability.
	for i in $(seq 200); do
		echo $((p - 1)) >/proc/sys/kernel/ns_last_pid
		sleep 600 >/dev/null 2>&1 &
		HOLDER=$!
		[ "$HOLDER" = "$p" ] && break
		stop_holder
	done
	if [ "$HOLDER" != "$p" ]; then
		echo no-reuse
		exec 7>&- 8<&-
		return
	fi
	echo go >&7
	exec 7>&-
	read -r -t "$WAIT_S" -u 8 line
	exec 8<&-
	stop_holder
	echo "$line"
}

# uevmd drops a connection whose request does not come within 10 s; on a
# machine loaded enough for that, the attack is tried again.
for try in 1 2 3; do
	reply=$(handoff)
	[ "$reply" = "reply:" ] || break
done
expect_match "the pid was given to a process with every capability" "^reply:" "$reply"
expect_match "the reused pid does not make the request privileged" \
	"^reply: ERR 'mode' needs CAP_SYS_ADMIN" "$reply"
expect_match "  the mode is still enforce" "^mode: enforce$" "$("$UEVM" status --socket "$SOCK")"
check "  uevmd logs the refusal" log_has "control: 'mode' refused: the caller .*has exited"

# The second attacker: nobody with CAP_DAC_OVERRIDE connects, then runs a
# setuid-root program (sleep) while its child sends the request.
chmod 711 "$T"
cp "$(type -P sleep)" "$T/suid-sleep"
chmod 4755 "$T/suid-sleep"
runs_suid() { [ "$(readlink "/proc/$1/exe")" = "$T/suid-sleep" ]; }
handoff_exec() {
	local p line caps
	rm -f "$T/hin" "$T/hout"
	mkfifo "$T/hin" "$T/hout"
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+dac_override \
		--ambient-caps=+dac_override -- "$HELPER" ctl-handoff "$SOCK" "mode off" \
		"$T/suid-sleep" 600 <"$T/hin" >"$T/hout" &
	p=$!
	exec 7>"$T/hin" 8<"$T/hout"
	if ! read -r -t "$WAIT_S" -u 8 line || [ "$line" != "pid $p" ] ||
		! wait_quiet "$WAIT_S" runs_suid "$p"; then
		echo "helper: $line"
	else
		caps=$(sed -n 's/^CapEff:\t//p' "/proc/$p/status")
		echo go >&7
		read -r -t "$WAIT_S" -u 8 line
		echo "caps $caps $line"
	fi
	exec 7>&- 8<&-
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
}
for try in 1 2 3; do
	reply=$(handoff_exec)
	[[ "$reply" =~ reply:$ ]] || break
done
expect_match "the connecting pid runs setuid root, with every capability" "^caps 0*[1-9a-f][0-9a-f]* reply:" "$reply"
expect_match "  a request from a process that connected as nobody is refused" \
	"reply: ERR 'mode' needs CAP_SYS_ADMIN" "$reply"
expect_match "  the mode is still enforce" "^mode: enforce$" "$("$UEVM" status --socket "$SOCK")"
check "  uevmd logs the refusal" log_has "control: 'mode' refused: the caller \(pid [0-9]+\) did not connect as root"

# What must keep working: the same caller with CAP_SYS_ADMIN, still alive.
out=$("$UEVM" enable --mode log --socket "$SOCK" 2>&1)
expect_eq "a caller with CAP_SYS_ADMIN changes the mode" 0 $?
expect_match "  to log" "^mode: log$" "$("$UEVM" status --socket "$SOCK")"
out=$(setpriv --bounding-set=-sys_admin "$UEVM" enable --mode off --socket "$SOCK" 2>&1)
expect_eq "a live caller without CAP_SYS_ADMIN is refused (exit 1)" 1 $?
check "  and logged" log_has "control: '(enable|mode)' refused: the caller \(pid [0-9]+\) lacks CAP_SYS_ADMIN"
stop_uevmd
