#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile trees for `uevm label` and `uevm verify`, part 2: size.
#  - a directory of 100 000 entries: label -r and verify -r complete, every
#    file passes, peak memory stays bounded (GNU time's maximum RSS);
#  - 4096-deep nesting, as a plain chain and as a "comb" whose siblings stay
#    queued at every level (the walk's worst case for open directories):
#    no stack overflow, no fd exhaustion -- with the default limit the walk
#    keeps at most ~1024 directories open (strace shows the highest fd), and
#    with `ulimit -n 256` and `ulimit -n 40` it still completes, parking and
#    reopening directories instead of failing with EMFILE.
source "$(dirname "$0")/../lib.sh"

for tool in python3 strace /usr/bin/time; do
	command -v $tool >/dev/null || { fail "$tool is installed (scripts/install-deps.sh)"; exit 1; }
done
KEY=$T/key
make_key "$KEY"

# run_rss CMD...: runs CMD (its status is returned); $rss is its peak RSS in KiB.
run_rss() {
	local r
	/usr/bin/time -f '%M' -o "$T/rss" "$@" >/dev/null 2>"$T/stderr"
	r=$?
	rss=$(tail -n 1 "$T/rss")
	return $r
}

# On a tmpfs: creating and deleting big trees on a busy ext4 takes minutes.
TM=$T/tmpfs
mkdir -p "$TM"
mount -t tmpfs -o size=512m,nr_inodes=400k,mode=755 uevm-hostile "$TM" || { fail "mount a tmpfs"; exit 1; }
on_exit "umount -l '$TM'"

# ---- 100 000 entries in one directory ---------------------------------------------

Wd=$TM/wide
mkdir "$Wd"
python3 -c 'import os, sys
d = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for i in range(100000):
    os.close(os.open("f%06d" % i, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d))' "$Wd"
run_rss timeout 600 "$UEVM" label -r -j 2 --hmac-key "raw:$KEY" "$Wd"
expect_eq "label -r of a 100 000-entry directory: exit 0" 0 $?
# The walk queues a directory's entries (a name each): tens of MB at most,
# against ~15 MB measured for the default build.
check "... peak RSS $rss KiB < 256 MiB" test "${rss:-999999999}" -lt 262144
out=$(timeout 600 "$UEVM" verify -r -j 2 --hmac-key "raw:$KEY" "$Wd")
expect_eq "verify -r of it: exit 0" 0 $?
expect_match "... 100 001 objects, 100 000 files pass" "^Summary: 100001 objects, 0 failed, 0 errors" "$out"
expect_match "... (pass count)" "^  pass +100000$" "$out"
run_rss timeout 600 "$UEVM" verify -r -j 2 --json --hmac-key "raw:$KEY" "$Wd"
check "... verify --json of it: exit 0, peak RSS $rss KiB < 256 MiB" test $? = 0 -a "${rss:-999999999}" -lt 262144
rm -rf "$Wd"

# ---- 4096-deep nesting ---------------------------------------------------------------


# mkdeep ROOT DEPTH SIBLINGS: at each level a file f (its level as content)
# and SIBLINGS+1 subdirectories; the walk continues into the one readdir
# lists first, so that with SIBLINGS > 0 the others are still queued,
# holding their directory open, while it descends.
mkdeep() {
	python3 - "$@" <<-'EOF'
	import os, sys
	root, depth, sib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
	os.mkdir(root)
	fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
	for i in range(depth):
	    f = os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
	    os.write(f, b"level %d\n" % i)
	    os.close(f)
	    for n in range(sib + 1):
	        os.mkdir("c%d" % n, dir_fd=fd)
	    first = [n for n in os.listdir(fd) if n != "f"][0]
	    nfd = os.open(first, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
	    os.close(fd)
	    fd = nfd
	os.close(fd)
	EOF
}
mkdeep "$TM/chain" 4096 0
mkdeep "$TM/comb" 4096 3
for t in chain comb; do
	# objects: the root, then per level one file and 1 or 4 directories
	n=$((1 + 4096 * ($([ $t = chain ] && echo 2 || echo 5))))
	# -v lists every object on stdout now: only its summary (stderr) matters.
	out=$(timeout 600 "$UEVM" label -r -j 2 -v --hmac-key "raw:$KEY" "$TM/$t" 2>&1 >/dev/null)
	expect_eq "$t 4096 deep: label -r exit 0" 0 $?
	expect_match "$t 4096 deep: ... labels all $n objects" "labelled $n objects, 0 errors" "$out"
	out=$(timeout 600 "$UEVM" verify -r -j 2 --hmac-key "raw:$KEY" "$TM/$t" 2>&1)
	expect_eq "$t 4096 deep: verify -r exit 0" 0 $?
	expect_match "$t 4096 deep: ... 4096 files pass" "^  pass +4096$" "$out"
	for lim in 256 40; do
		out=$(ulimit -n $lim; timeout 600 "$UEVM" verify -r -j 2 --hmac-key "raw:$KEY" "$TM/$t" 2>&1)
		rc=$?
		expect_eq "$t 4096 deep, ulimit -n $lim: verify -r exit 0, no EMFILE" "0 " \
			"$rc $(grep -m 3 -i 'too many open files' <<<"$out" | cut -c 1-200)"
		expect_match "$t 4096 deep, ulimit -n $lim: ... all $n objects, 4096 files pass" \
			"^Summary: $n objects, 0 failed, 0 errors" "$out"
	done
	# ulimit -n 40 while labelling: every file labelled again (cleared first).
	"$UEVM" clear -r "$TM/$t" >/dev/null 2>&1
	out=$(ulimit -n 40; timeout 600 "$UEVM" label -r -j 2 -v --hmac-key "raw:$KEY" "$TM/$t" 2>&1 >/dev/null)
	expect_eq "$t 4096 deep, ulimit -n 40: label -r exit 0" 0 $?
	expect_match "$t 4096 deep, ulimit -n 40: ... labels all $n objects" "labelled $n objects, 0 errors" "$out"
	expect_rc "$t 4096 deep: ... and verify -r passes" 0 "$UEVM" verify -r --hmac-key "raw:$KEY" "$TM/$t"
done
# The highest fd the walk uses, default limit (20000 here): the comb holds
# ~4 * 4096 queued entries in ~4096 directories, the budget is 1024.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	timeout 600 strace -f -qq -e trace=openat,dup,fcntl -o "$T/strace" \
	"$UEVM" verify -r -j 2 --hmac-key "raw:$KEY" "$TM/comb" >/dev/null 2>&1
expect_eq "comb under strace: exit 0" 0 $?
maxfd=$(grep -oE '= [0-9]+$' "$T/strace" | awk '{print $2}' | sort -n | tail -n 1)
check "comb: the highest fd is $maxfd, within the 1024-directory budget (< 1100)" \
	test "${maxfd:-99999}" -lt 1100
check "comb: ... and the budget was reached (the check is not vacuous: > 1000)" \
	test "${maxfd:-0}" -gt 1000
