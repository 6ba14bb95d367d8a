#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A regular file swapped for a FIFO or a device node between the walk's
# readdir and its open (tests/swap_race.py holds the walk's second getdents
# of the directory with fanotify, renames the object over the name, then
# lets it go on: no sleeps).  The walk opens an entry listed as a regular
# file directly only when the directory's mount is nodev; elsewhere a
# swapped-in device node or FIFO is never opened, whoever owns the
# directory (fanotify counts the opens of its inode).  On a nodev mount the
# FIFO is opened (O_NONBLOCK: at once) but the device is not (the kernel
# refuses it).  A recursive walk by root runs in a mount namespace of its
# own where every mount is nodev (walk_nodev_namespace); the other way is
# taken where that namespace is not made, here where /dev is no mount of
# its own (a container's), by a wrapper.  In every case: no hang, the object there now is
# handled and reported as what it is (no security.ima on it), the file it
# replaced is not labelled, the rest of the directory is, and the exit
# status is that of a tree holding such an object from the start (0).
source "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: walk_swap_race needs root (fanotify, mknod)"
	exit 0
fi
KEY=$T/key
make_key "$KEY"

# "${NO_DEV_MOUNT[@]}" CMD...: CMD in a mount namespace where /dev is no
# mount of its own, so that uevm makes no nodev namespace (privs.c) and
# takes the O_PATH way off nodev mounts, as without CAP_SYS_ADMIN.
NO_DEV_MOUNT=(unshare -m --propagation private sh -c 'umount -l /dev && exec "$@"' sh)

# nodev_dir DIR: DIR made a nodev bind mount of DIR.src (where the same
# inodes can still be opened as devices), unmounted at exit.
nodev_dir() {
	mkdir -p "$1" "$1.src"
	mount --bind "$1.src" "$1" || return 1
	on_exit "umount '$1'"
	mount -o remount,bind,nodev "$1"
}

# race CASE MODE OWNER KIND CMD: a directory of three files with MODE and
# OWNER; f2 is swapped for a KIND (fifo, dev: 1:3, /dev/null's numbers)
# while CMD (label or verify) walks it.  Sets $sum and $out.
race() {
	local c=$1 mode=$2 owner=$3 kind=$4 cmd=$5
	D=$T/$c/d
	mkdir -p "$T/$c"
	[ -n "${NODEV:-}" ] && { nodev_dir "$T/$c" || fail "$c: nodev bind mount"; }
	mkdir -p "$D" "$T/$c/spare"
	for i in 1 2 3; do echo "$c $i" >"$D/f$i"; done
	ln "$D/f2" "$T/$c/orig"		# the replaced file, kept to look at
	chmod "$mode" "$D"
	chown "$owner" "$D"
	[ "$cmd" = verify ] && "$UEVM" label -r --hmac-key "raw:$KEY" "$D"
	if [ "$kind" = fifo ]; then
		mkfifo "$T/$c/spare/x"
	else
		mknod "$T/$c/spare/x" c 1 3
	fi
	local control=()
	[ -n "${NODEV:-}" ] && control=("$T/$c.src/d/f2")
	out=$(python3 "$TESTS_DIR/swap_race.py" "$T/$c/sum" "$D" f2 "$T/$c/spare/x" \
		"${control[@]}" -- "${WRAP[@]}" \
		"$UEVM" "$cmd" -r -v -j1 --hmac-key "raw:$KEY" "$D" 2>&1)
	sum=$(cat "$T/$c/sum" 2>/dev/null)
}

# Checks common to every case: CASE KIND CMD.
common() {
	local c=$1 kind=$2 cmd=$3 type=fifo

	[ "$kind" = dev ] && type="character special file"
	expect_match "$c: the swap happened between readdir and open" "swapped=1" "$sum"
	expect_match "$c: $cmd did not hang" "hung=0" "$sum"
	expect_match "$c: the open counter works (our own open seen)" "control=1" "$sum"
	expect_match "$c: $cmd exits 0, as for a tree that held the $kind all along" "rc=0" "$sum"
	expect_eq "$c: f2 is now the $kind" "$type" "$(stat -c %F "$D/f2")"
	expect_eq "$c: the $kind has no security.ima" "" "$(xattr_hex security.ima "$D/f2")"
	if [ "$cmd" = label ]; then
		expect_match "$c: the $kind is reported as what was labelled" "^labelled $D/f2\$" "$out"
		expect_eq "$c: the replaced file was not labelled" "" \
			"$(xattr_hex security.ima "$T/$c/orig")"
	else
		expect_match "$c: the $kind is reported (no protected xattr)" \
			"^OK $D/f2: no_xattrs" "$out"
	fi
	check "$c: the other files are labelled" test -n "$(xattr_hex security.ima "$D/f1")" \
		-a -n "$(xattr_hex security.ima "$D/f3")"
	expect_rc "$c: the directory verifies afterwards" 0 \
		"$UEVM" verify -r --hmac-key "raw:$KEY" "$D"
}

# ---- not nodev: never opened, whoever owns the directory -------------------
WRAP=("${NO_DEV_MOUNT[@]}")
for dir in "755 root closed" "1777 root sticky" "775 root:nogroup groupw" \
	   "755 nobody other-user"; do
	set -- $dir
	for kind in fifo dev; do
		for cmd in label verify; do
			c=$3-$kind-$cmd
			race "$c" "$1" "$2" $kind $cmd
			common "$c" $kind $cmd
			expect_match "$c: the swapped-in $kind was never opened" "opens=0" "$sum"
		done
	done
done

# ---- a nodev mount: the direct open, whoever can write the directory -------
# First a mount that is nodev in uevm's namespace only (root's default),
# then one nodev for everyone.
WRAP=()
for where in ns nodev; do
	[ "$where" = nodev ] && NODEV=1
	for cmd in label verify; do
		c=$where-fifo-$cmd
		race "$c" 1777 root fifo $cmd
		common "$c" fifo $cmd
		expect_match "$c: the entry listed as regular was opened directly" "opens=[1-9]" "$sum"
		c=$where-dev-$cmd
		race "$c" 1777 root dev $cmd
		common "$c" dev $cmd
		why="nodev in uevm's namespace"
		[ "$where" = nodev ] && why=nodev
		expect_match "$c: the device is not opened ($why)" "opens=0" "$sum"
		[ "$where" = ns ] && check "$c: the mount still allows devices outside it" \
			bash -c ': <"$1"' _ "$D/f2"
	done
done

# ---- without /proc: no second lookup of the name off a nodev mount ---------
# The O_PATH descriptor cannot be reopened; looking the name up again could
# open a device swapped in meanwhile, so that is done only for a directory
# (O_DIRECTORY) or on a nodev mount (where g is opened directly anyway).
mkdir -p "$T/noproc/plain"
echo plain >"$T/noproc/plain/f"
nodev_dir "$T/noproc/nd" || fail "noproc: nodev bind mount"
echo nodev >"$T/noproc/nd/g"
# An empty tmpfs over the process's own /proc/PID/fd and its main
# thread's /proc/PID/task/PID/fd, which /proc/thread-self/fd names (exec
# keeps the PID; the rest of /proc stays, which sanitizer builds need).
out=$(unshare -m --propagation private \
	sh -c 'umount -l /dev && mount -t tmpfs none "/proc/$$/fd" &&
		mount -t tmpfs none "/proc/$$/task/$$/fd" && exec "$@"' sh \
	"$UEVM" label -r --hmac-key "raw:$KEY" "$T/noproc/plain" "$T/noproc/nd" 2>&1)
expect_eq "noproc: label exits 2 (a file it could not open)" 2 $?
expect_match "noproc: the file off nodev is refused, naming /proc" \
	"$T/noproc/plain/f: .*is /proc mounted" "$out"
expect_eq "noproc: and not labelled" "" "$(xattr_hex security.ima "$T/noproc/plain/f")"
check "noproc: the file on the nodev mount is labelled" \
	test -n "$(xattr_hex security.ima "$T/noproc/nd/g")"

# ---- a PATH reached again through a repointed symlink ----------------------
# The walk parks directories when too many are open and reopens a PATH's
# directory by resolving the PATH again.  The PATH is a symlink to a nodev
# bind mount of R; at R's second getdents it is pointed at the same R on a
# mount that allows devices, and victim is swapped for a device node.  The
# reopened R is the same directory but no longer nodev: it counts as
# replaced, and the device is never opened (a 1300-deep chain below R makes
# the walk park R before it reaches victim).
M=$T/sym
mkdir -p "$M/dev" "$M/nodev" "$M/eve"
mount -t tmpfs -o size=64m tmpfs "$M/dev" || fail "symlink: tmpfs"
on_exit "umount '$M/dev'"
mount --bind "$M/dev" "$M/nodev" || fail "symlink: bind mount"
on_exit "umount '$M/nodev'"
mount -o remount,bind,nodev "$M/nodev"
R=$M/dev/R
mkdir -p "$R"
echo victim >"$R/victim"	# first: tmpfs lists it after zz, so it comes last
mkdir "$R/zz"
(cd "$R/zz" && for i in $(seq 1300); do echo x >f; mkdir a; cd a; done)
mknod "$M/dev/spare" c 1 3
ln -s "$M/nodev/R" "$M/eve/link"
ln -s "$M/dev/R" "$M/eve/link.new"
SWAP_FIRST="$M/eve/link.new $M/eve/link" \
	python3 "$TESTS_DIR/swap_race.py" "$M/sum" "$R" victim "$M/dev/spare" -- \
	"${NO_DEV_MOUNT[@]}" "$UEVM" label -r -j1 --hmac-key "raw:$KEY" "$M/eve/link" >"$M/out" 2>&1
sum=$(cat "$M/sum" 2>/dev/null)
expect_match "symlink: the swap happened between readdir and open" "swapped=1" "$sum"
expect_eq "symlink: the PATH now leads to the mount that allows devices" \
	"$M/dev/R" "$(readlink "$M/eve/link")"
expect_match "symlink: label did not hang" "hung=0" "$sum"
expect_match "symlink: the open counter works (our own open seen)" "control=1" "$sum"
expect_match "symlink: the device swapped in was never opened" "opens=0" "$sum"
expect_match "symlink: label exits 2" "rc=2" "$sum"
expect_match "symlink: victim is refused: its directory counts as replaced" \
	"link/victim: .*replaced during the walk" "$(cat "$M/out")"
