#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile trees for `uevm label` and `uevm verify`, part 1: objects that
# try to lead the walk somewhere else or to block it.
#  - symlink loops, a symlink to / and to a directory outside the tree:
#    never followed, the run ends at once, nothing outside is touched;
#  - directories swapped for symlinks (and for other directories) while
#    label -r runs: a racer in the background over many rounds, and a
#    directory replaced after the walk parked its fd (ulimit -n 64), which
#    must be reported, never entered; no file outside ever gets security.*;
#  - FIFOs without a writer and a /dev/zero-like device: never opened for
#    reading (no hang, checked with a timeout);
#  - a file the caller cannot read: the error names it, the rest is done,
#    exit 2;
#  - xattr values of 64 KiB (a loop ext4 with ea_inode): a 64 KiB
#    security.selinux is protected like any other, 64 KiB garbage in
#    security.ima and security.evm gives FAIL with the kernel's cause.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/ref_evm.sh"

for tool in python3 getfattr setfattr timeout setpriv; do
	command -v $tool >/dev/null || { fail "$tool is installed (scripts/install-deps.sh)"; exit 1; }
done
KEY=$T/key
make_key "$KEY"
SEL='system_u:object_r:etc_t:s0'
O=$T/outside
mkdir -p "$O/dir/sub"
for i in 1 2 3; do echo "outside $i" >"$O/dir/f$i"; done
echo deeper >"$O/dir/sub/g"
ln -s ../.. "$O/dir/sub/back"
outside_state() { meta_snapshot $(find "$O" | sort); }
outside_before=$(outside_state)
# No security.* xattr of uevm's under $O, ever (checked after each part).
outside_labels() { getfattr -R -h --absolute-names -d -m 'security\.(ima|evm)' "$O" 2>/dev/null; }

# ---- symlink loops and links out of the tree -----------------------------------

R=$T/links
mkdir -p "$R/d"
echo data >"$R/d/file"
ln -s self "$R/self"			# ELOOP on any follow
ln -s b "$R/a"
ln -s a "$R/b"				# a -> b -> a
ln -s / "$R/root"			# the whole system
ln -s .. "$R/d/up"			# back up into the tree
ln -s "$O/dir" "$R/out"			# a directory outside
ln -s "$O/dir/f1" "$R/outfile"		# a file outside
for l in self a b root d/up out outfile; do
	setfattr -h -n security.selinux -v "$SEL" "$R/$l"	# so that EVM labels the link
done
out=$(timeout 120 "$UEVM" label -r -v --hmac-key "raw:$KEY" "$R" 2>&1)
rc=$?
expect_eq "label -r of a tree with symlink loops and links to / finishes, exit 0" 0 "$rc"
expect_match "... and labels exactly the 10 objects of the tree" "labelled 10 objects, 0 errors" "$out"
for l in self a b root d/up out outfile; do
	check "symlink $l: the link itself is labelled (security.evm)" \
		test -n "$(xattr_hex security.evm "$R/$l")"
done
expect_eq "nothing outside the tree was touched (ctime, xattrs)" "$outside_before" "$(outside_state)"
json=$(timeout 120 "$UEVM" verify -r -v --json --hmac-key "raw:$KEY" "$R")
expect_eq "verify -r of the same tree: exit 0" 0 $?
expect_eq "verify visits the 10 objects of the tree and nothing else" \
	"$(cd "$R" && find . | sed "s|^\.|$R|" | sort)" \
	"$(jq -r '.results[].path' <<<"$json" | sort)"
expect_eq "every link verifies as a symlink" "7" \
	"$(jq '[.results[] | select(.type == "symlink" and .status == "pass")] | length' <<<"$json")"
# The links given by name with -P: the link is the object, not its target.
expect_rc "verify -P of a looping link given by name: exit 0 (the link itself)" 0 \
	timeout 120 "$UEVM" verify -P --hmac-key "raw:$KEY" "$R/self" "$R/a" "$R/root"
expect_rc "label -r -P of a link to / given by name is not a walk of /" 0 \
	timeout 120 "$UEVM" label -r -P --hmac-key "raw:$KEY" "$R/root"
# Without -P a looping link given by name is followed, and cannot be.
out=$(timeout 120 "$UEVM" verify --hmac-key "raw:$KEY" "$R/self" "$R/a" 2>&1)
expect_eq "verify of looping links given by name (followed): exit 2" 2 $?
expect_match "... each one reported as an error" "ERROR $R/self: .*symbolic link.*ERROR $R/a: " \
	"$(tr '\n' ' ' <<<"$out")"

# ---- a directory swapped for a symlink during the walk: racing ---------------------

W=$T/race
for d in $(seq 0 15); do
	mkdir -p "$W/d$d/e"
	for f in $(seq 0 60); do echo "$d $f" >"$W/d$d/f$f"; done
	for f in $(seq 0 20); do echo "$d $f" >"$W/d$d/e/g$f"; done
done
# Swaps each directory, and a subdirectory of each, for a symlink to
# $O/dir, then puts it back, until told to stop; the directories wait
# renamed inside the tree.
racer() {
	while [ ! -e "$T/stop" ]; do
		for d in $(seq 0 15); do
			mv -T "$W/d$d" "$W/.d$d" && ln -s "$O/dir" "$W/d$d"
			rm "$W/d$d" && mv -T "$W/.d$d" "$W/d$d"
			mv -T "$W/d$d/e" "$W/d$d/.e" && ln -s "$O/dir" "$W/d$d/e"
			rm "$W/d$d/e" && mv -T "$W/d$d/.e" "$W/d$d/e"
		done
	done 2>/dev/null
}
racer &
rpid=$!
on_exit "touch '$T/stop'; kill $rpid 2>/dev/null"
rounds=0 bad=0
for round in $(seq 1 8); do
	# -j 2, and a small fd budget for half the rounds (parked directories).
	if [ $((round % 2)) = 0 ]; then
		(ulimit -n 48; timeout 120 "$UEVM" label -r -j 2 --hmac-key "raw:$KEY" "$W" >/dev/null 2>&1)
	else
		timeout 120 "$UEVM" label -r -j 2 --hmac-key "raw:$KEY" "$W" >/dev/null 2>&1
	fi
	[ $? -ge 124 ] && bad=$((bad + 1))
	timeout 120 "$UEVM" verify -r -j 2 --hmac-key "raw:$KEY" "$W" >/dev/null 2>&1
	[ $? -ge 124 ] && bad=$((bad + 1))
	rounds=$round
done
touch "$T/stop"
wait $rpid
rm -f "$T/stop"
expect_eq "8 rounds of label -r and verify -r against the swapping racer never hang or crash" "8 0" "$rounds $bad"
expect_eq "racing: no file outside the tree got security.ima or security.evm" "" "$(outside_labels)"
expect_eq "racing: nothing outside the tree was touched (ctime, xattrs)" "$outside_before" "$(outside_state)"
check "racing: the tree itself was labelled (the runs were not vacuous)" \
	test "$(getfattr -R -h -m security.evm "$W" 2>/dev/null | grep -c '^security.evm')" -ge 1000

# ---- a parked directory replaced before the walk returns to it --------------------
# A deep comb (mkcomb below): at each level the walk descends first into
# the subdirectory listed first, leaving the siblings queued.  With
# ulimit -n 64 the shallow levels' fds are parked; while the walk hashes a
# big file at the bottom, level 1 is swapped (for a symlink to $O/dir, or
# for another directory).  Returning to its queued siblings, the walk must
# find out and report them, never enter what took its place.
mkcomb() {	# root depth [size of the deepest level's file, sparse]
	python3 - "$@" <<-'EOF'
	import os, sys
	root, depth = sys.argv[1], int(sys.argv[2])
	big = int(sys.argv[3]) if len(sys.argv) > 3 else 0
	os.mkdir(root)
	fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
	for i in range(depth):
	    f = os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
	    os.write(f, b"level %d\n" % i)
	    os.close(f)
	    for n in ("c0", "c1", "c2", "c3"):
	        os.mkdir(n, dir_fd=fd)
	    first = [n for n in os.listdir(fd) if n != "f"][0]
	    nfd = os.open(first, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
	    os.close(fd)
	    fd = nfd
	if big:
	    f = os.open("big", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
	    os.truncate(f, big)
	    os.close(f)
	os.close(fd)
	EOF
}
# The path of level N (0: the root) of comb ROOT: first-listed names.
comb_level() {	# root n
	python3 - "$1" "$2" <<-'EOF'
	import os, sys
	p = sys.argv[1]
	for _ in range(int(sys.argv[2])):
	    p = os.path.join(p, [n for n in os.listdir(p) if n != "f"][0])
	print(p)
	EOF
}
# xattr NAME of the file F at level N of comb ROOT, as hex (paths that deep
# exceed PATH_MAX: reached with directory fds).
comb_xattr() {	# root n name
	python3 - "$@" <<-'EOF'
	import os, sys
	fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
	for _ in range(int(sys.argv[2])):
	    n = [n for n in os.listdir(fd) if n != "f"][0]
	    nfd = os.open(n, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
	    os.close(fd)
	    fd = nfd
	f = os.open("f", os.O_RDONLY, dir_fd=fd)
	try:
	    print(os.getxattr(f, sys.argv[3]).hex())
	except OSError:
	    pass
	EOF
}
# On a tmpfs: deleting deep trees from ext4 takes minutes.
TM=$T/tmpfs
mkdir -p "$TM"
mount -t tmpfs -o size=64m,mode=755 uevm-hostile "$TM" || { fail "mount a tmpfs"; exit 1; }
on_exit "umount -l '$TM'"
# parked_or_gone PID: PID holds the big file (the walk is parked below
# level 1 until its hash ends), or has exited.
parked_or_gone() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q '/big$' || ! kill -0 "$1" 2>/dev/null; }
for how in symlink directory; do
	C=$TM/comb-$how
	mkcomb "$C" 1000 $((3 << 30))
	L1=$(comb_level "$C" 1)
	mkdir -p "$TM/other-$how/c0"
	echo other >"$TM/other-$how/f"
	(ulimit -n 64; exec "$UEVM" label -r -j 1 --hmac-key "raw:$KEY" "$C") >"$T/swap.out" 2>&1 &
	lpid=$!
	wait_for "$WAIT_S" "label to reach the deepest level's big file ($how)" parked_or_gone "$lpid"
	if kill -0 $lpid 2>/dev/null; then
		mv -T "$L1" "$C/moved-away"
		if [ $how = symlink ]; then ln -s "$O/dir" "$L1"; else mv -T "$TM/other-$how" "$L1"; fi
		wait $lpid
		rc=$?
		out=$(cat "$T/swap.out")
		expect_eq "level 1 swapped for a $how under a parked walk: exit 2" 2 "$rc"
		check "... level 1's queued entries are reported as moved or replaced, by name" \
			grep -qE "^uevm: $L1/(f|c[0-3]): cannot open: its directory was (moved or )?replaced during the walk" "$T/swap.out"
		# Below it, parked directories are reached through its name too.
		expect_eq "... every error is such a report, for an entry below level 1" "" \
			"$(grep -vE "^uevm: $L1/.*: cannot open: its directory was (moved or )?replaced during the walk( \(.*\))?$" <<<"$out" |
				head -n 3 | sed 's|\(c3/\)\{4,\}|.../|')"
		if [ $how = directory ]; then
			expect_eq "... the directory put in its place was not labelled" "" \
				"$(getfattr -R -h -d -m 'security\.(ima|evm)' "$L1" 2>/dev/null)"
		fi
		check "... the deepest level was still labelled" \
			test -n "$(comb_xattr "$C/moved-away" 998 security.ima)"
	else
		wait $lpid
		fail "level 1 swapped for a $how under a parked walk" "label ended before the swap: $(tail -n 3 "$T/swap.out")"
	fi
	rm -rf "$L1"
done
expect_eq "swaps under a parked walk: no file outside the tree got security.*" "" "$(outside_labels)"
expect_eq "swaps under a parked walk: nothing outside touched (ctime, xattrs)" "$outside_before" "$(outside_state)"

# ---- FIFOs and devices: never opened for reading ------------------------------------

F=$T/special
mkdir -p "$F"
mkfifo "$F/fifo"				# no writer: an open for reading blocks
mknod "$F/zero" c 1 5				# endless data if read
mknod "$F/blk" b 7 200				# loop200: opening it may block or fail
echo regular >"$F/file"
for o in fifo zero blk; do setfattr -h -n security.selinux -v "$SEL" "$F/$o"; done
# (the timeouts only end a hang: 120 s, never reached by a loaded machine)
expect_rc "label -r with a FIFO without a writer and a /dev/zero node: exit 0, no hang" 0 \
	timeout 120 "$UEVM" label -r -j 2 --hmac-key "raw:$KEY" "$F"
expect_rc "verify -r of them: exit 0, no hang" 0 \
	timeout 120 "$UEVM" verify -r -j 2 --hmac-key "raw:$KEY" "$F"
expect_rc "label and verify of the FIFO and the device given by name: exit 0, no hang" 0 \
	timeout 120 bash -c '"$1" label --hmac-key "raw:$2" "$3/fifo" "$3/zero" && "$1" verify --hmac-key "raw:$2" "$3/fifo" "$3/zero"' \
	_ "$UEVM" "$KEY" "$F"
for o in fifo zero blk; do
	check "$o: labelled (security.evm), no security.ima" \
		test -n "$(xattr_hex security.evm "$F/$o")" -a -z "$(xattr_hex security.ima "$F/$o")"
done

# ---- a file the caller cannot read --------------------------------------------------

P=$T/perm
mkdir -p "$P/sub"
for f in a b sub/c; do echo "$f" >"$P/$f"; done
echo secret >"$P/secret"
chmod 000 "$P/secret"
# root without the DAC capabilities (it keeps CAP_SYS_ADMIN for security.*)
DROPDAC=(setpriv --bounding-set=-dac_override,-dac_read_search
	--inh-caps=-dac_override,-dac_read_search)
out=$("${DROPDAC[@]}" "$UEVM" label -r --hmac-key "raw:$KEY" "$P" 2>&1)
expect_eq "label -r with an unreadable file: exit 2" 2 $?
expect_match "... the error names the file and the cause" \
	"^uevm: $P/secret: cannot open: cannot open for reading: Permission denied$" "$out"
expect_eq "... one error line only" 1 "$(grep -c . <<<"$out")"
for f in a b sub/c; do
	check "... the readable $f was labelled" test -n "$(xattr_hex security.ima "$P/$f")"
done
expect_eq "... the unreadable file got no label" "" \
	"$(xattr_hex security.ima "$P/secret")$(xattr_hex security.evm "$P/secret")"
chmod 755 "$T"
cp "$KEY" "$T/pub.key"
chown 65534 "$T/pub.key"
chmod 600 "$T/pub.key"
chmod 755 "$P" "$P/sub"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$UEVM" verify -r --hmac-key "raw:$T/pub.key" "$P" 2>&1)
expect_eq "verify -r as nobody with an unreadable file: exit 2" 2 $?
expect_match "... names it with the cause" "^ERROR $P/secret: cannot verify: .*Permission denied" "$out"
expect_match "... the rest verified" "Summary: 6 objects, 0 failed, 1 errors" "$out"

# ---- 64 KiB xattr values -------------------------------------------------------------

IMG=$T/ea.img
MNT=$T/ea
mkdir -p "$MNT"
truncate -s 32M "$IMG"
mkfs.ext4 -q -F -O ea_inode "$IMG"
if mount -o loop "$IMG" "$MNT"; then
	on_exit "umount '$MNT'"
	for f in big_sel big_ima big_evm big_sig; do echo "$f" >"$MNT/$f"; done
	# 65536 bytes: XATTR_SIZE_MAX, only storable with ea_inode.
	setx() {	# file name size hex-prefix
		python3 -c 'import os, sys
p = bytes.fromhex(sys.argv[4])
os.setxattr(sys.argv[1], sys.argv[2], p + os.urandom(int(sys.argv[3]) - len(p)))' "$@"
	}
	if setx "$MNT/big_sel" security.selinux 65536 41; then
		pass "a 64 KiB security.selinux can be stored (ea_inode)"
		expect_eq "its size is 65536 bytes" 65536 \
			"$(python3 -c 'import os, sys; print(len(os.getxattr(sys.argv[1], "security.selinux")))' "$MNT/big_sel")"
		expect_rc "label of a file with a 64 KiB security.selinux: exit 0" 0 \
			"$UEVM" label --hmac-key "raw:$KEY" "$MNT/big_sel"
		expect_rc "... verify: exit 0" 0 "$UEVM" verify --hmac-key "raw:$KEY" "$MNT/big_sel"
		FSUUID=$(blkid -s UUID -o value "$IMG")
		expect_eq "... the HMAC covers the 64 KiB value (equals the openssl-built reference)" \
			"02$(ref_evm_hmac "$KEY" "$MNT/big_sel" "$(ext4_generation "$MNT/big_sel")" "$FSUUID")" \
			"$(xattr_hex security.evm "$MNT/big_sel")"
		setx "$MNT/big_sel" security.selinux 65536 42
		json=$("$UEVM" verify --json --hmac-key "raw:$KEY" "$MNT/big_sel")
		expect_eq "... another 64 KiB value: fail invalid-HMAC, exit 1" "1 fail invalid-HMAC" \
			"$? $(jq -r '.results[0] | "\(.status) \(.cause)"' <<<"$json")"

		"$UEVM" label --hmac-key "raw:$KEY" "$MNT/big_ima" "$MNT/big_evm" "$MNT/big_sig"
		setx "$MNT/big_ima" security.ima 65536 04	# a 64 KiB "digest"
		setx "$MNT/big_sig" security.ima 65536 0302	# a 64 KiB "v2 signature"
		setx "$MNT/big_evm" security.evm 65536 02	# a 64 KiB "HMAC"
		# A valid HMAC over the garbage (the reference's), so that the
		# security.ima values themselves are judged.
		for f in big_ima big_sig; do
			setfattr -n security.evm -v "0x02$(ref_evm_hmac "$KEY" "$MNT/$f" \
				"$(ext4_generation "$MNT/$f")" "$FSUUID")" "$MNT/$f"
		done
		json=$("$UEVM" verify -v --json --hmac-key "raw:$KEY" "$MNT/big_ima" "$MNT/big_sig" "$MNT/big_evm" 2>"$T/big.err")
		rc=$?
		expect_eq "64 KiB garbage security.ima / security.evm: verify exit 1 (failed, no crash)" 1 "$rc"
		expect_eq "... no error and nothing on stderr" "0 " \
			"$(jq -r '.summary.errors' <<<"$json") $(cat "$T/big.err")"
		expect_eq "... each fails with the kernel's cause" \
			"$MNT/big_evm fail invalid-HMAC|$MNT/big_ima fail invalid-hash|$MNT/big_sig fail invalid-signature" \
			"$(jq -r '.results[] | "\(.path) \(.status) \(.cause)"' <<<"$json" | sort | paste -sd'|')"
		out=$("$UEVM" verify --hmac-key "raw:$KEY" "$MNT/big_ima" "$MNT/big_sig" "$MNT/big_evm" 2>&1)
		expect_eq "... and the text output is 3 FAIL lines and the summary" 3 "$(grep -c '^FAIL ' <<<"$out")"
		out=$("$UEVM" hmac --hmac-key "raw:$KEY" "$MNT/big_sig" 2>&1)
		expect_match "hmac of a file with a 64 KiB security.ima: an HMAC, no crash" "^02[0-9a-f]{40}  " "$out"
		"$UEVM" label --hmac-key "raw:$KEY" "$MNT/big_evm" "$MNT/big_ima"
		expect_rc "label replaces a 64 KiB security.evm and a 64 KiB security.ima: verify exit 0" 0 \
			"$UEVM" verify --hmac-key "raw:$KEY" "$MNT/big_evm" "$MNT/big_ima"
		expect_eq "... security.ima is the content's hash again" \
			"0404$(sha256sum "$MNT/big_ima" | cut -d' ' -f1)" "$(xattr_hex security.ima "$MNT/big_ima")"
	else
		fail "a 64 KiB security.selinux can be stored (ea_inode)"
	fi
else
	fail "mount a loop ext4 with ea_inode"
fi
expect_eq "finally: no file outside the tree got security.*" "" "$(outside_labels)"
