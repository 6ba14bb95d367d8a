#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmfs's sequential reads (issue 17, cold reads): each READ request is
# as large as libfuse can answer by splicing SOURCE's pages into /dev/fuse
# (fs.pipe-max-size less 4 pages, at most 1 MiB), so no read is copied
# through a buffer; the mount's read-ahead window is 4 such requests by
# default, and readahead=KB sets it, above 1 MiB too (the kernel caps the
# window at what FUSE_INIT offered).  The requests and the way each was
# answered are taken from libfuse's debug output ("outsize: N (splice)").
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S" "$M"
head -c $((8 << 20)) /dev/urandom >"$S/big"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null

page=$(getconf PAGESIZE)
pipe_max=$(cat /proc/sys/fs/pipe-max-size)
cap=$(((1 << 20) + 4 * page))
[ "$pipe_max" -gt "$cap" ] && pipe_max=$cap
rmax=$(((pipe_max / page - 4) * page))

bdi_ra() { cat "/sys/class/bdi/$(stat -c '%Hd:%Ld' "$1")/read_ahead_kb"; }

# read_case NAME OPTIONS WANT_RA_KB WANT_REQ: a mount with OPTIONS; the
# file, never read through it before (its page cache there is cold), read
# sequentially; WANT_REQ: the size of the largest READ reply's data.
read_case() {
	local name=$1 opts=$2 want_ra=$3 want_req=$4 big copied
	: >"$T/uevmfs.stderr"
	ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,noauditd,debug$opts" || exit 1
	expect_eq "$name: the mount's read-ahead window (KiB)" "$want_ra" "$(bdi_ra "$M")"
	expect_match "$name: max_read is the largest splicable request" \
		"max_read=$rmax[,) ]" "$(grep -F " $M fuse.uevmfs " /proc/mounts)"
	check "$name: the file reads back whole through the mount" \
		cmp -s "$S/big" <(dd if="$M/big" bs=1M status=none)
	ufs_umount "$M"
	# Replies larger than a page carry file data: READ's.
	big=$(grep -Eo 'success, outsize: [0-9]+( \(splice\))?' "$T/uevmfs.stderr" |
		awk -v p="$page" '$3 > p + 16')
	expect_match "$name: READ requests of $want_req bytes, spliced" \
		"outsize: $((want_req + 16)) \(splice\)" "$big"
	copied=$(grep -v 'splice' <<<"$big" || true)
	expect_eq "$name: no READ reply copied through a buffer" "" "$copied"
	expect_eq "$name: no READ larger than $want_req bytes" "" \
		"$(awk -v m=$((want_req + 16)) '$3 > m' <<<"$big")"
}

read_case "default" "" $((4 * rmax / 1024)) "$rmax"
# 8 MiB: beyond the 1 MiB that FUSE_INIT used to offer, which capped it.
read_case "readahead=8192" ",readahead=8192" 8192 "$rmax"
# A window smaller than a request makes the requests smaller.
read_case "readahead=256" ",readahead=256" 256 $((256 << 10))
