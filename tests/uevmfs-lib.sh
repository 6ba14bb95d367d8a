# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the uevmfs tests: source it after lib.sh.
#
#   ufs_mount SOURCE MOUNTPOINT [OPTIONS]   uevmfs in the foreground, in the
#       background of the test; waits until mounted; UFS_PID is its pid.
#       Every mount is undone when the test exits, even on failure.
#   ufs_umount MOUNTPOINT                   unmount, wait for uevmfs, and
#       check that it exited 0.
#   ufs_records CAUSE NAME                  audit lines for NAME with CAUSE.
#   ufs_abort MOUNTPOINT                    abort its FUSE connection (fusectl):
#       a test whose mount hangs still ends.
#   UFS_EXTRA_OPTS                          appended to every mount's options
#       (uevmfs_fastopen_*.sh: fastopen).

UEVMFS=${UEVMFS:-$(dirname "$UEVM")/uevmfs}
command -v fusermount3 >/dev/null || { fail "fusermount3 is installed (scripts/install-deps.sh)"; exit 1; }
[ -x "$UEVMFS" ] || { fail "uevmfs is built ($UEVMFS)"; exit 1; }
[ -c /dev/fuse ] || { fail "/dev/fuse exists"; exit 1; }

UFS_MOUNTS=()
UFS_PIDS=()
_ufs_cleanup() {
	local m p
	# A uevmfs killed while a thread of its waits in the kernel for a
	# write only it could serve never ends: abort the connection first.
	for m in "${UFS_MOUNTS[@]}"; do
		grep -q " $m fuse" /proc/mounts 2>/dev/null &&
			{ ufs_abort "$m"; fusermount3 -u -z "$m" 2>/dev/null; }
	done
	for p in "${UFS_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	return 0
}
on_exit _ufs_cleanup

# mounted MOUNTPOINT TYPE: the mount is in /proc/mounts with that fs type.
ufs_mounted() {
	grep -q " $1 $2 " /proc/mounts
}

# _ufs_up MOUNTPOINT SECURITYFS: both mounted (SECURITYFS may be empty).
_ufs_up() {
	ufs_mounted "$1" fuse.uevmfs &&
		{ [ -z "$2" ] || ufs_mounted "$(realpath -m "$2")" fuse.uevm-securityfs; }
}
_ufs_up_or_gone() { _ufs_up "$1" "$2" || ! kill -0 "$3" 2>/dev/null; }
# ufs_gone PID: uevmfs PID has exited.
ufs_gone() { ! kill -0 "$1" 2>/dev/null; }
# ufs_up_or_gone MOUNTPOINT PID: mounted as fuse.uevmfs, or PID has exited.
ufs_up_or_gone() { ufs_mounted "$1" fuse.uevmfs || ufs_gone "$2"; }

ufs_mount() {	# source mountpoint [options]
	local src=$1 mnt=$2 opts=${3:-}
	mkdir -p "$mnt"
	UFS_MOUNTS+=("$mnt")
	case $opts in *securityfs=*) ;; *) opts="securityfs=none${opts:+,$opts}" ;; esac
	# The fastopen variants of the tests run the same scripts with it set.
	[ -n "${UFS_EXTRA_OPTS:-}" ] && opts="$opts,$UFS_EXTRA_OPTS"
	"$UEVMFS" "$src" "$mnt" -f -o "$opts" >>"$T/uevmfs.stderr" 2>&1 &
	UFS_PID=$!
	UFS_PIDS+=("$UFS_PID")
	# The control tree is mounted after the filesystem: wait for both.
	local sec=
	case ",$opts," in *,securityfs=none,*) ;; *,securityfs=*) sec=${opts#*securityfs=}; sec=${sec%%,*} ;; esac
	wait_quiet "$WAIT_S" _ufs_up_or_gone "$mnt" "$sec" "$UFS_PID"
	_ufs_up "$mnt" "$sec" && return 0
	echo "uevmfs did not mount $mnt: $(tail -n 3 "$T/uevmfs.stderr")" >&2
	return 1
}

# Also an assertion: uevmfs exits 0 (under ASan: no error, no leak).
ufs_umount() {	# mountpoint
	local status
	fusermount3 -u "$1" 2>/dev/null || fusermount3 -u -z "$1"
	wait_quiet "$WAIT_S" ufs_gone "$UFS_PID"
	wait "$UFS_PID" 2>/dev/null
	status=$?
	if [ "$status" = 0 ]; then
		pass "uevmfs exits 0 after the unmount"
	else
		fail "uevmfs exits 0 after the unmount" \
			"status $status: $(tail -n 40 "$T/uevmfs.stderr")"
	fi
}

ufs_records() {	# cause name [audit log]
	grep -F " cause=$1 " "${3:-$T/audit.log}" | grep -F "name=\"$2\""
}

# ufs_abort MOUNTPOINT: abort the FUSE connection of the last mount there,
# through fusectl (mounted for the moment in $T if it is not).
ufs_abort() {
	local conn dir=/sys/fs/fuse/connections
	conn=$(awk -v m="$1" '$5 == m { split($3, d, ":"); print d[2] }' /proc/self/mountinfo | tail -n 1)
	[ -n "$conn" ] || return 0
	if [ -e "$dir/$conn/abort" ]; then
		echo 1 >"$dir/$conn/abort" 2>/dev/null
	else
		dir=$(mktemp -d "$T/fusectl.XXXXXX") &&
			mount -t fusectl fusectl "$dir" &&
			{ echo 1 >"$dir/$conn/abort" 2>/dev/null; umount "$dir"; }
		rmdir "$dir" 2>/dev/null
	fi
	return 0
}
