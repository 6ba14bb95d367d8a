# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for integration tests: source it, then call check/expect_*.
# Every test prints "PASS: name" or "FAIL: name: why" (counted by run-tests.sh).
set -u
: "${UEVM:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/default/uevm}"
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# A scratch directory on a filesystem with security.* xattrs (the root fs
# here), removed on exit.
T=$(mktemp -d /var/tmp/uevm-test.XXXXXX)
cleanup_hooks=()
on_exit() { cleanup_hooks+=("$1"); }
_cleanup() {
	local h
	for h in "${cleanup_hooks[@]}"; do eval "$h"; done
	rm -rf "$T"
}
trap _cleanup EXIT

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1${2:+: $2}"; }

# check NAME CMD...: passes when CMD exits 0.
check() {
	local name=$1; shift
	if "$@"; then pass "$name"; else fail "$name" "command failed: $*"; fi
}
# expect_eq NAME EXPECTED ACTUAL
expect_eq() {
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1" "expected '$2', got '$3'"; fi
}
# expect_rc NAME RC CMD...: passes when CMD exits with RC.
expect_rc() {
	local name=$1 want=$2; shift 2
	"$@" >/dev/null 2>&1
	local rc=$?
	if [ "$rc" -eq "$want" ]; then pass "$name"; else fail "$name" "exit $rc, wanted $want: $*"; fi
}
# expect_match NAME REGEX TEXT
expect_match() {
	if grep -qE -- "$2" <<<"$3"; then pass "$1"; else fail "$1" "no match for /$2/ in: $3"; fi
}

# Synchronise on events, never on sleeps: a loaded machine stretches any
# fixed delay.  wait_for SECONDS DESCRIPTION CMD...: polls CMD every 0.05 s
# until it exits 0 (returns 0 at once then), or fails the test with
# DESCRIPTION once SECONDS have passed (returns 1).  The bound is a safety
# net against a hang, so make it generous (WAIT_S, 120 s): it costs
# nothing when the event comes.
WAIT_S=${WAIT_S:-120}
wait_for() {
	local limit=$1 what=$2 end
	shift 2
	end=$((SECONDS + limit))
	until "$@"; do
		if [ "$SECONDS" -ge "$end" ]; then
			# One last look: the event may have come during the sleep.
			"$@" && return 0
			fail "waited ${limit} s for $what" "still not so: $*"
			return 1
		fi
		sleep 0.05
	done
}
# wait_quiet SECONDS CMD...: wait_for without the FAIL line, for callers
# that report the outcome themselves.
wait_quiet() {
	local limit=$1 end
	shift
	end=$((SECONDS + limit))
	until "$@"; do
		[ "$SECONDS" -ge "$end" ] && { "$@"; return; }
		sleep 0.05
	done
}
# all_stopped PID: every thread of PID is in a stop (state T).
all_stopped() {
	local t st
	for t in /proc/"$1"/task/*/stat; do
		st=$(sed 's/.*) //' "$t" 2>/dev/null) || return 1
		[ "${st%% *}" = T ] || return 1
	done
}
# stop_process PID: SIGSTOP, then wait until every thread has stopped:
# kill returns before they do, and a thread still running can answer
# one more request meanwhile (uevmd's reader did, seen on Linux 6.18).
stop_process() {
	kill -STOP "$1" && wait_for "$WAIT_S" "pid $1 stopped (SIGSTOP)" all_stopped "$1"
}

# build_flags [BUILD_DIR]: for programs a test compiles against a build's
# library: BUILD_MAKE, the make variables of that build (SANITIZE=...), and
# BUILD_CFLAGS, the sanitizer its library needs in the program too.
build_flags() {
	case "$(basename "${1:-${UEVM_BUILD:-build/default}}")" in
	san) BUILD_MAKE=(SANITIZE=1); BUILD_CFLAGS=(-fsanitize=address,undefined) ;;
	tsan) BUILD_MAKE=(SANITIZE=thread); BUILD_CFLAGS=(-fsanitize=thread) ;;
	*) BUILD_MAKE=(); BUILD_CFLAGS=() ;;
	esac
}

# xattr value as hex without 0x, or empty when absent.
xattr_hex() {	# name path
	getfattr -h --absolute-names -n "$1" -e hex "$2" 2>/dev/null |
		sed -n "s/^$1=0x//p"
}

# A 32-byte test key (never a production key).
make_key() {	# path
	head -c 32 /dev/urandom >"$1"
	chmod 600 "$1"
}

# evmctl_hmac_key: evmctl 1.4 reads its HMAC key from a fixed path,
# /etc/keys/evm-key-plain.  Keep a valid key that is already there (other
# users may rely on it), otherwise write a test key; either way the original
# state (file, directory) is restored on exit.  Sets EVMKEY.
evmctl_hmac_key() {
	EVMKEY=/etc/keys/evm-key-plain
	local size
	if [ -e "$EVMKEY" ]; then
		cp -a "$EVMKEY" "$T/evm-key-plain.orig"
		on_exit "cp -a '$T/evm-key-plain.orig' '$EVMKEY'"
	else
		on_exit "rm -f '$EVMKEY'"
		[ -d /etc/keys ] || { mkdir /etc/keys && on_exit "rmdir /etc/keys"; }
	fi
	size=$(stat -c %s "$EVMKEY" 2>/dev/null || echo 0)
	if [ ! -f "$EVMKEY" ] || [ "$size" -lt 1 ] || [ "$size" -gt 128 ]; then
		make_key "$EVMKEY"
	fi
}

# tree_write FILE: stdin written to FILE through one descriptor, in one
# write(2) and one close (a control tree's ima/policy is one write session,
# installed at that close).
tree_write() {
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.write(fd, sys.stdin.buffer.read())
os.close(fd)' "$1"
}
