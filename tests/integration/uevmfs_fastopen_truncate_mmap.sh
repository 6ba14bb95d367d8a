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
# refused (a review of the first fix ran it).  The same holds for a
# chmod: its pages were dropped before its reply too, and users who each
# chmod a file they keep dirtying through a shared mapping took every
# worker into a drop waiting for a WRITE no worker was left to serve.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S" "$M"
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,noauditd,fastopen=on" || exit 1


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
	ufs_abort "$M"
	exit 1
fi
check "... it dirtied the mapping" grep -q round "$T/mm.out"
ufs_umount "$M"

# ---- chmods of files with dirty shared mappings, more than the workers ------------------
# Two workers and six users: each dirties its own file's shared mapping
# and chmods it, again and again.  A chmod's drop made in the worker before
# its reply waits for the dirty page's WRITE, which needs another worker.
: >"$T/chm-audit.log"
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,noauditd,fastopen=on,max_threads=2,audit_log=$T/chm-audit.log" ||
	exit 1
cat >"$T/chm.py" <<'PY'
import mmap, os, sys
p = sys.argv[1]
fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, 65536)
m = mmap.mmap(fd, 65536, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
for r in range(300):
    for i in range(0, 65536, 4096):
        m[i] = r & 0xff
    os.chmod(p, 0o600 if r & 1 else 0o644)
m.close()
os.close(fd)
with open(sys.argv[2], "a") as f:
    f.write("done\n")
PY
: >"$T/chm.out"
chm=()
for u in 1 2 3 4 5 6; do
	python3 "$T/chm.py" "$M/c$u" "$T/chm.out" 2>>"$T/chm.err" &
	chm+=($!)
	on_exit "kill ${chm[-1]} 2>/dev/null"
done
chm_gone() { local p; for p in "${chm[@]}"; do ! kill -0 "$p" 2>/dev/null || return 1; done; }
wait_quiet 120 chm_gone
if chm_gone; then
	pass "six users chmod files they dirty through shared mappings: all end (two workers)"
	check "the mount answers" timeout 30 ls "$M"
else
	fail "six users chmod files they dirty through shared mappings: all end (two workers)"
	ufs_abort "$M"
	exit 1
fi
expect_eq "... each did its 300 rounds" 6 "$(grep -c done "$T/chm.out")"
ufs_umount "$M"
# Their own writes were never refused (a writeback's WRITE arriving while
# a read relabelled the file opened a second writer, which appraised the
# content not yet relabelled), and each file ends labelled as it is.
expect_eq "... nothing of theirs was refused (no audit record)" "" "$(cat "$T/chm-audit.log")"
for u in 1 2 3 4 5 6; do
	check "... c$u verifies" "$UEVM" verify -q --hmac-key "raw:$KEY" "$S/c$u"
	expect_eq "... c$u holds its last round" "43 43" \
		"$(od -An -tu1 -j 61440 -N 1 "$S/c$u" | tr -d ' ') $(od -An -tu1 -N 1 "$S/c$u" | tr -d ' ')"
done

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
# The same with a chmod in place of the truncation (no size change, no
# stat first): its reply too brings an mtime into the kernel's cache.
for r in 1 2 3 4 5 6; do
	how=truncate
	[ $((r % 2)) -eq 0 ] && how=chmod
	base=$(rchar)
	truncate -s 8G "$M/big$r"
	# The flusher rehashes it once its writer is idle: wait until it reads.
	hashing() { [ "$(rchar)" -gt $((base + (256 << 20))) ]; }
	wait_quiet "$WAIT_S" hashing
	check "run $r: the flusher is busy rehashing 8 GiB" hashing
	out=$(python3 - "$M/p$r" "$how" 2>&1 <<'PY'
import os, sys
p, how = sys.argv[1], sys.argv[2]
d = (b"#!/bin/sh\necho UNSIGNED RAN\n" + b"#" * 8192)[:8192]
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o755 if how == "truncate" else 0o644)
os.write(fd, d)
if how == "truncate":
    os.ftruncate(fd, len(d))
os.close(fd)
if how == "chmod":
    os.chmod(p, 0o755)
os.execv(p, [p])
PY
)
	expect_eq "run $r ($how): the unsigned program did not run" "" "$(grep "UNSIGNED RAN" <<<"$out")"
	expect_match "run $r ($how): ... refused" "Permission denied" "$out"
	rm -f "$M/big$r"
done

# Racing chmods: answering a chmod at once and leaving the drop to the
# kernel's next GETATTR let an attack review run an unsigned program (7 to
# 28 times in 300 to 500 tries): another chmod's reply has the kernel
# discard that GETATTR's attributes.  Each try reads the program while it
# is not executable (the read passes, the pages stay cached), makes it
# executable while other threads keep doing so, and runs it.
cat >"$T/race.py" <<'PY'
import os, subprocess, sys, threading
p, cycles, nr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = (b"#!/bin/sh\necho UNSIGNED RAN\n" + b"#" * 8192)[:8192]
with open(p, "wb") as f:
    f.write(d)
go, stop = threading.Event(), threading.Event()
def racer():
    while not stop.is_set():
        if go.wait(0.1):
            try:
                os.chmod(p, 0o755)
            except OSError:
                pass
ts = [threading.Thread(target=racer) for _ in range(nr)]
for t in ts:
    t.start()
ran = refused = 0
for c in range(cycles):
    go.clear()
    os.chmod(p, 0o644)
    try:
        with open(p, "rb") as f:
            f.read()
    except OSError:
        pass
    os.chmod(p, 0o755)
    go.set()
    try:
        r = subprocess.run([p], capture_output=True)
        ran += b"UNSIGNED RAN" in r.stdout
    except PermissionError:
        refused += 1
stop.set()
go.set()
for t in ts:
    t.join()
print("ran %d refused %d" % (ran, refused))
PY
out=$(timeout 600 python3 "$T/race.py" "$M/race" 200 2 2>&1)
expect_match "racing chmods: the unsigned program never ran in 200 tries" "^ran 0 refused" "$out"
expect_match "... and was refused at least once (the race ran)" "refused [1-9]" "$out"
ufs_umount "$M"
