# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the uevmd end-to-end tests (source after lib.sh).  Each test
# makes its own ext4 image, loop-mounts it under $T and starts uevmd with
# a configuration that watches only that mount; everything is stopped,
# unmounted and removed on exit.  Nothing else is ever marked.
: "${UEVMD:=${UEVM_BUILD:-$(cd "$TESTS_DIR/.." && pwd)/build/default}/uevmd}"

MNT=$T/mnt
CONF=$T/uevmd.conf
SOCK=$T/uevmd.sock
LOG=$T/uevmd.log
UEVMD_PID=

if [ "$(id -u)" -ne 0 ]; then
	fail "uevmd tests need root (fanotify permission events, loop mounts)"
	exit 1
fi
if [ ! -x "$UEVMD" ]; then
	fail "uevmd is built" "$UEVMD is missing"
	exit 1
fi

uevmd_gone() { ! kill -0 "$1" 2>/dev/null; }

# stop_uevmd: SIGTERM; the daemon must still be running, exit 0 and
# leave no sanitizer report in its output.
stop_uevmd() {
	local rc
	if [ -n "$UEVMD_PID" ]; then
		if ! kill -0 "$UEVMD_PID" 2>/dev/null; then
			fail "uevmd was still running when stopped" "$(tail -n 20 "$T/uevmd.out" 2>/dev/null)"
		fi
		kill "$UEVMD_PID" 2>/dev/null
		# The SIGKILL only ends a hang (the status check says so).
		wait_quiet "$WAIT_S" uevmd_gone "$UEVMD_PID"
		kill -9 "$UEVMD_PID" 2>/dev/null
		wait "$UEVMD_PID" 2>/dev/null
		rc=$?
		[ "$rc" -eq 0 ] || fail "uevmd exited with status 0 on SIGTERM" \
			"status $rc: $(tail -n 20 "$T/uevmd.out" 2>/dev/null)"
		if grep -qE "runtime error|Sanitizer" "$T/uevmd.out" 2>/dev/null; then
			fail "uevmd: no sanitizer report" "$(grep -m 5 -E "runtime error|Sanitizer" "$T/uevmd.out")"
			: >"$T/uevmd.out"
		fi
		UEVMD_PID=
	fi
}

umount_image() {
	stop_uevmd
	# A daemon a test left behind (a keeper killed under it): its config
	# is this test's own.
	pkill -9 -f -- "uevmd -c $CONF( |\$)" 2>/dev/null
	if mountpoint -q "$MNT"; then
		umount "$MNT" 2>/dev/null || umount -l "$MNT"
	fi
}
on_exit umount_image

# make_image [SIZE]: a fresh ext4 (256-byte inodes: birth times and
# nanosecond timestamps) mounted at $MNT.
make_image() {
	truncate -s "${1:-96M}" "$T/img"
	mkfs.ext4 -q -F -I 256 "$T/img" || return 1
	mkdir -p "$MNT"
	mount -o loop "$T/img" "$MNT"
}

# write_conf [EXTRA LINE]...: a configuration watching $MNT only (its own
# loop-mounted filesystem: every mount of it).
write_conf() {
	{
		echo "filesystem = $MNT"
		echo "policy = ${POLICY:-$T/policy}"
		echo "key = ${KEYSPEC:-raw:$T/key}"
		echo "control_socket = $SOCK"
		echo "control_tree = none"
		echo "log_file = $LOG"
		echo "audit_syslog = no"
		echo "measurement_sync = no"
		echo "deadline_ms = ${DEADLINE_MS:-5000}"
		for l in "$@"; do echo "$l"; done
	} >"$CONF"
}

# uevmd_running: the daemon at $SOCK answers and says it runs.
uevmd_running() {
	"$UEVM" status --socket "$SOCK" 2>/dev/null | grep -q '^state: running'
}
# uevmd_up_or_gone PID: PID runs (uevmd_running) or has exited.
uevmd_up_or_gone() { uevmd_running || uevmd_gone "$1"; }

# start_uevmd [uevmd options]: start and wait until it says "running".
start_uevmd() {
	"$UEVMD" -c "$CONF" "$@" >>"$T/uevmd.out" 2>&1 &
	UEVMD_PID=$!
	wait_quiet "$WAIT_S" uevmd_up_or_gone "$UEVMD_PID"
	uevmd_running && return 0
	echo "uevmd did not start:" >&2
	tail -n 20 "$T/uevmd.out" >&2
	UEVMD_PID=
	return 1
}

# status_field NAME: a counter from `uevm status`.
status_field() {
	"$UEVM" status --socket "$SOCK" | tr ' ' '\n' | grep -A1 -x "$1:" | tail -n 1
}

# The default test policy: appraise and measure opens and execs.
write_policy() {
	cat >"$T/policy" <<-'EOF'
	measure func=BPRM_CHECK
	measure func=FILE_CHECK mask=MAY_READ
	appraise func=BPRM_CHECK
	appraise func=FILE_CHECK
	EOF
}

# log_has REGEX: the daemon's log file has a matching line (waits for it:
# records are written by the logger thread after the answer).
log_grep() { grep -qE -- "$1" "$LOG" 2>/dev/null; }
log_has() { wait_quiet "$WAIT_S" log_grep "$1"; }

# in_open FILE: a `cat [--] FILE` is blocked in its open (openat, 257 on
# x86_64), waiting for an answer.
in_open() {
	local p
	for p in $(pgrep -f -- "cat (-- )?$1\$"); do
		[ "$(cut -d' ' -f1 "/proc/$p/syscall" 2>/dev/null)" = 257 ] && return 0
	done
	return 1
}

# The errno of reading FILE ("ok" when it reads).
open_result() {
	local err
	if err=$(cat -- "$1" 2>&1 >/dev/null); then echo ok; return; fi
	case $err in
	*"Permission denied"*) echo EACCES ;;
	*"Operation not permitted"*) echo EPERM ;;
	*) echo "other: $err" ;;
	esac
}

# The errno of running FILE ("ok" when it runs and exits 0).
exec_result() {
	local err
	if err=$("$1" 2>&1 >/dev/null); then echo ok; return; fi
	case $err in
	*"Permission denied"*) echo EACCES ;;
	*"Operation not permitted"*) echo EPERM ;;
	*) echo "other: $err" ;;
	esac
}

# Openers in login sessions of their own (audit ids).  need_loginuid: the
# test stops, failed, unless a child may set its login uid here
# (CAP_AUDIT_CONTROL, not made immutable).
need_loginuid() {
	sh -c 'echo 4242 >/proc/self/loginuid' 2>/dev/null && return 0
	fail "a child can set its login uid (/proc/self/loginuid)"
	exit 1
}
# sh -c "$AS_LOGIN" sh AUID FILE CMD...: run CMD (exec'd: the same pid as
# the sh, which is $! when started with &) in a new login session of AUID;
# its session id goes to FILE.
# shellcheck disable=SC2016
AS_LOGIN='echo "$1" >/proc/self/loginuid && cat /proc/self/sessionid >"$2" && shift 2 && exec "$@"'
# held PID: process PID is blocked in openat (257 on x86_64), waiting for
# an answer.
held() { [ "$(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null)" = 257 ]; }
