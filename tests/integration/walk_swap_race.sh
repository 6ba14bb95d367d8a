#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A regular file swapped for a FIFO or a device node between the walk's
# readdir and its open (tests/swap_race.py holds the walk's second getdents
# of the directory with fanotify, renames the object over the name, then
# lets it go on: no sleeps).  The walk opens an entry listed as a regular
# file directly only in a directory nobody but root can change; in one
# others can write (world-writable sticky, group-writable, another user's)
# a swapped-in device node or FIFO is never opened (fanotify counts the
# opens of its inode).  In every case: no hang, the object there now is
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

# race CASE MODE OWNER KIND CMD: a directory of three files with MODE and
# OWNER; f2 is swapped for a KIND (fifo, dev: 1:3, /dev/null's numbers)
# while CMD (label or verify) walks it.  Sets $sum and $out.
race() {
	local c=$1 mode=$2 owner=$3 kind=$4 cmd=$5
	D=$T/$c/d
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
	out=$(python3 "$TESTS_DIR/swap_race.py" "$T/$c/sum" "$D" f2 "$T/$c/spare/x" -- \
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

# ---- a directory only root can change: the direct open ---------------------
# Only root could have swapped the FIFO in; it is opened (O_NONBLOCK: at
# once), found to be no regular file, and handled by the O_PATH way.
for cmd in label verify; do
	race closed-$cmd 755 root fifo $cmd
	common closed-$cmd fifo $cmd
	expect_match "closed-$cmd: the entry listed as regular was opened directly" \
		"opens=[1-9]" "$sum"
done

# ---- directories others can change: never opened ---------------------------
for dir in "1777 root sticky" "775 root:nogroup groupw" "755 nobody other-user"; do
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
