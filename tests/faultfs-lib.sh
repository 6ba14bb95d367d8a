# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the fault tests: build tests/faultfs.c (the FUSE fault
# injector) into $T, mount and unmount it, loop-mount images.  Source it
# after lib.sh.

# faultfs_build: compiles $T/faultfs, or fails the test.
faultfs_build() {
	# shellcheck disable=SC2046
	cc -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror \
		$(pkg-config --cflags fuse3) -o "$T/faultfs" "$TESTS_DIR/faultfs.c" \
		$(pkg-config --libs fuse3) || { fail "faultfs builds"; exit 1; }
}

# wait_mounted DIR: until DIR is a mount point (WAIT_S at most).
wait_mounted() {
	wait_quiet "$WAIT_S" mountpoint -q "$1"
}

# faultfs_mount RULES BACKDIR MOUNTPOINT [fuse options]: mounts, unmounted
# again at exit.
faultfs_mount() {
	local rules=$1 back=$2 mnt=$3; shift 3
	mkdir -p "$mnt"
	"$T/faultfs" "$rules" "$back" "$mnt" "$@" >>"$T/faultfs.log" 2>&1 &
	wait_mounted "$mnt" || { fail "faultfs mounts $mnt" "$(cat "$T/faultfs.log")"; exit 1; }
	on_exit "fusermount3 -u '$mnt' 2>/dev/null || umount -l '$mnt' 2>/dev/null"
}

# loop_mount IMAGE MOUNTPOINT [mount options]: a loop mount, undone at exit.
loop_mount() {
	local img=$1 mnt=$2; shift 2
	mkdir -p "$mnt"
	mount -o loop "$@" "$img" "$mnt" || return 1
	on_exit "umount '$mnt' 2>/dev/null || umount -l '$mnt' 2>/dev/null"
}

# xattrs_of PATH: every xattr of PATH as hex, sorted ("" when none).
xattrs_of() {
	getfattr -h --absolute-names -d -m - -e hex -- "$1" 2>/dev/null | grep -v '^#' | sort
}

# has_labels PATH: true when PATH has security.ima or security.evm.
has_labels() {
	getfattr -h --absolute-names -d -m '^security\.(ima|evm)$' -- "$1" 2>/dev/null |
		grep -q '^security'
}
