#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmfs -o fastopen, one user dirtying a shared mapping of a file while
# another truncates it (`: > f`, an O_TRUNC open the kernel makes itself,
# then a SETATTR).  The kernel answers a truncation's SETATTR while it
# holds the file's writes back; uevmfs dropped the file's pages before its
# reply, which waits for the dirty page's WRITE: the mount hung for every
# user, uevmfs unkillable (an attack review).  The pages are now dropped
# after the reply: the mount still answers, and unmounts.  And that reply
# does not let the kernel serve those pages meanwhile: an unsigned program
# written, truncated to its size and run while the flusher is busy is
# refused (a review of the first fix ran it).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S" "$M"
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,noauditd,fastopen=on" || exit 1

# If it hangs, abort our own connection (fusectl) so that the test ends.
abort_mount() {
	local conn
	conn=$(awk -v m="$M" '$5 == m { split($3, d, ":"); print d[2] }' /proc/self/mountinfo | tail -n 1)
	[ -n "$conn" ] || return
	if ! mountpoint -q /sys/fs/fuse/connections; then
		mount -t fusectl fusectl /sys/fs/fuse/connections &&
			on_exit "umount /sys/fs/fuse/connections"
	fi
	echo 1 >"/sys/fs/fuse/connections/$conn/abort" 2>/dev/null
}

cat >"$T/mm.py" <<'PY'
import mmap, os, sys
# Dirty every page of a shared mapping, again and again; a truncation by
# the other user may end it with SIGBUS, and the loop below starts again.
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
while True:
    os.ftruncate(fd, 65536)
    m = mmap.mmap(fd, 65536, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    for i in range(0, 65536, 4096):
        m[i] = 1
    m.close()
    with open(sys.argv[2], "a") as f:
        f.write("round\n")
PY
(
	end=$((SECONDS + 8))
	while [ "$SECONDS" -lt "$end" ]; do timeout 10 python3 "$T/mm.py" "$M/f" "$T/mm.out" 2>/dev/null; done
) &
mm=$!
on_exit "kill $mm 2>/dev/null"
# The truncations too in a child: a hung mount leaves it in D state, and
# this shell must still report, abort the connection and end.
( for i in $(seq 2000); do : >"$M/f" 2>/dev/null; done ) &
tr=$!
on_exit "kill $tr 2>/dev/null"
gone() { ! kill -0 "$mm" 2>/dev/null && ! kill -0 "$tr" 2>/dev/null; }
wait_quiet 120 gone
if gone; then
	pass "the truncations and the mapping's writer end (nothing stuck in the mount)"
	check "the mount answers" timeout 30 ls "$M"
else
	fail "the truncations and the mapping's writer end (nothing stuck in the mount)"
	abort_mount
	exit 1
fi
check "... it dirtied the mapping" grep -q round "$T/mm.out"
ufs_umount "$M"

# ---- a truncation that keeps the size, then exec ---------------------------------------
# The pages a write left are dropped after the truncation's reply, by the
# flusher; that reply's mtime must not let the kernel keep them meanwhile.
# An attack review kept the flusher busy (rehashing a big sparse file after
# its writer went idle), wrote an unsigned program, truncated it to its
# own size and ran it from the cached pages: it ran, unappraised.
printf 'appraise func=BPRM_CHECK appraise_type=imasig\nmeasure func=BPRM_CHECK\n' >"$T/policy"
: >"$T/audit.log"
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,noauditd,fastopen=on,write_idle=0.3,policy=$T/policy,audit_log=$T/audit.log" ||
	exit 1
rchar() { awk '$1 == "rchar:" { print $2 }' "/proc/$UFS_PID/io"; }
for r in 1 2 3; do
	base=$(rchar)
	truncate -s 8G "$M/big$r"
	# The flusher rehashes it once its writer is idle: wait until it reads.
	hashing() { [ "$(rchar)" -gt $((base + (256 << 20))) ]; }
	wait_quiet "$WAIT_S" hashing
	check "run $r: the flusher is busy rehashing 8 GiB" hashing
	out=$(python3 - "$M/p$r" 2>&1 <<'PY'
import os, sys
p = sys.argv[1]
d = (b"#!/bin/sh\necho UNSIGNED RAN\n" + b"#" * 8192)[:8192]
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o755)
os.write(fd, d)
os.ftruncate(fd, len(d))
os.close(fd)
os.execv(p, [p])
PY
)
	expect_eq "run $r: the unsigned program did not run" "" "$(grep "UNSIGNED RAN" <<<"$out")"
	expect_match "run $r: ... refused" "Permission denied" "$out"
	rm -f "$M/big$r"
done
ufs_umount "$M"
