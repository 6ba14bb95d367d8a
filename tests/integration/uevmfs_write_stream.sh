#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmfs hashes what is written through the mount as it goes by (issue 17):
# a file written from start to end through one open file is relabelled at
# close from that digest, without reading it back; every other way of
# writing falls back to reading the file again.  Whichever way, the label
# must be the SHA-256 of the file as it is on disk (checked here against
# sha256sum, independently of uevm) and `uevm verify` must pass; content
# changed offline afterwards must still be refused through the mount.
# The daemon's exit line says how many closes took which way.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S" "$M"
head -c $((3 << 20)) /dev/urandom >"$T/data"
echo "old content" >"$S/exist"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null

# label_is_sha NAME FILE: security.ima of SOURCE's FILE is the ima-ng
# digest (0x04, sha256 0x04) of its bytes, and uevm verify accepts it.
label_is_sha() {
	local want
	want=0404$(sha256sum <"$S/$2" | cut -c1-64)
	expect_eq "$1: security.ima is sha256sum of the file on disk" "$want" \
		"$(xattr_hex security.ima "$S/$2")"
	expect_rc "$1: uevm verify accepts it" 0 \
		"$UEVM" verify --hmac-key "raw:$KEY" "$S/$2"
}

# run_case NAME EXPECT CMD...: CMD under a fresh mount; EXPECT is
# "stream" (every relabel from the written stream) or "reread" (none).
run_case() {
	local name=$1 expect=$2 line s r
	shift 2
	: >"$T/uevmfs.stderr"
	ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,noauditd${CASE_OPTS:-}" || exit 1
	"$@"
	ufs_umount "$M"
	cat "$T/uevmfs.stderr" >>"$T/all.stderr"
	line=$(grep -F "relabelled at close:" "$T/uevmfs.stderr")
	s=$(sed -n 's/.*: \([0-9]*\) from the written stream.*/\1/p' <<<"$line")
	r=$(sed -n 's/.*stream, \([0-9]*\) read again.*/\1/p' <<<"$line")
	if [ "$expect" = stream ]; then
		check "$name: relabelled from the written stream ($line)" \
			test "${s:-0}" -ge 1 -a "${r:-1}" -eq 0
	else
		check "$name: the close read the file again ($line)" \
			test "${s:-1}" -eq 0 -a "${r:-0}" -ge 1
	fi
}

py() { python3 -c "$@"; }

# ---- written start to end: from the stream ----------------------------------------------
run_case "sequential, new file" stream \
	dd if="$T/data" of="$M/seq" bs=64k status=none
label_is_sha "sequential, new file" seq
cmp -s "$T/data" "$S/seq" && pass "sequential: the content arrived" ||
	fail "sequential: the content arrived" "differs"

run_case "O_TRUNC over a labelled file" stream \
	dd if="$T/data" of="$M/exist" bs=1M count=2 status=none
label_is_sha "O_TRUNC over a labelled file" exist

run_case "empty file created" stream touch "$M/empty"

# A prefix written in place over a longer file (dd conv=notrunc): the
# stream is unbroken but is not the whole file; read again, not taken for
# a change behind the mount (a review found it refused).
head -c 100000 "$T/data" >"$S/prefix"
"$UEVM" label --hmac-key "raw:$KEY" "$S/prefix" >/dev/null
run_case "a prefix written over a longer file" reread \
	sh -c "printf HELLO | dd of='$M/prefix' conv=notrunc status=none"
label_is_sha "a prefix written over a longer file" prefix
label_is_sha "empty file created" empty

# ---- the fallbacks: the file is read again -------------------------------------------------
run_case "non-sequential writes" reread py "
import os
fd = os.open('$M/nonseq', os.O_WRONLY | os.O_CREAT, 0o644)
d = open('$T/data', 'rb').read()
os.pwrite(fd, d[1048576:2097152], 1048576)
os.pwrite(fd, d[:1048576], 0)
os.close(fd)"
label_is_sha "non-sequential writes" nonseq

run_case "two open files write" reread py "
import os
d = open('$T/data', 'rb').read()
a = os.open('$M/two', os.O_WRONLY | os.O_CREAT, 0o644)
b = os.open('$M/two', os.O_WRONLY)
os.pwrite(a, d[:65536], 0)
os.pwrite(b, d[65536:131072], 65536)
os.pwrite(a, d[131072:196608], 131072)
os.close(b)
os.close(a)"
label_is_sha "two open files write" two

run_case "truncated mid-way" reread py "
import os
d = open('$T/data', 'rb').read()
fd = os.open('$M/trunc', os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, d[:1048576])
os.ftruncate(fd, 524288)
os.pwrite(fd, d[2097152:2162688], 524288)
os.close(fd)"
label_is_sha "truncated mid-way" trunc

run_case "extended by ftruncate" reread py "
import os
d = open('$T/data', 'rb').read()
fd = os.open('$M/ext', os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, d[:100000])
os.ftruncate(fd, 200000)
os.close(fd)"
label_is_sha "extended by ftruncate" ext

run_case "pwrite into the middle after a sequential stream" reread py "
import os
d = open('$T/data', 'rb').read()
fd = os.open('$M/mid', os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, d[:2097152])
os.pwrite(fd, b'X' * 4096, 100000)
os.close(fd)"
label_is_sha "pwrite into the middle after a sequential stream" mid

run_case "a second fd appends after the first" reread py "
import os
d = open('$T/data', 'rb').read()
a = os.open('$M/fd2', os.O_WRONLY | os.O_CREAT, 0o644)
os.write(a, d[:65536])
b = os.open('$M/fd2', os.O_WRONLY)
os.pwrite(b, d[65536:131072], 65536)
os.close(b)
os.write(a, d[131072:196608])
os.close(a)"
label_is_sha "a second fd appends after the first" fd2

cp "$T/data" "$S/app"
"$UEVM" label --hmac-key "raw:$KEY" "$S/app" >/dev/null
run_case "O_APPEND" reread sh -c "head -c 5000 '$T/data' >>'$M/app'"
label_is_sha "O_APPEND" app

run_case "shared mapping written after a sequential stream" reread py "
import mmap, os
d = open('$T/data', 'rb').read()
fd = os.open('$M/mm', os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, d[:1048576])
m = mmap.mmap(fd, 1048576, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
m[4096:8192] = b'M' * 4096
m.flush()
m.close()
os.close(fd)"
label_is_sha "shared mapping written after a sequential stream" mm

run_case "fallocate" reread py "
import os
fd = os.open('$M/falloc', os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b'abc' * 1000)
os.posix_fallocate(fd, 0, 1 << 20)
os.close(fd)"
label_is_sha "fallocate" falloc

# ---- what was labelled from the stream is still checked --------------------------------
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,noauditd,timeout=0" || exit 1
expect_eq "streamed label: the file reads through the mount" "$(sha256sum <"$T/data")" \
	"$(sha256sum <"$M/seq")"
printf 'X' | dd of="$S/seq" bs=1 seek=1000 conv=notrunc status=none
expect_match "offline change after close: refused through the mount" "Permission denied" \
	"$(cat "$M/seq" 2>&1 >/dev/null)"
expect_rc "offline change after close: uevm verify fails" 1 \
	"$UEVM" verify --hmac-key "raw:$KEY" "$S/seq"
ufs_umount "$M"

# ---- fastopen: the shared writer streams too (fsync ends it) -----------------------------
CASE_OPTS=",fastopen=on"
run_case "fastopen: sequential, ended by fsync" stream \
	dd if="$T/data" of="$M/fast" bs=128k conv=fsync status=none
label_is_sha "fastopen: sequential, ended by fsync" fast
run_case "fastopen: O_TRUNC of an existing file, ended by fsync" stream \
	dd if="$T/data" of="$M/exist" bs=1M count=1 conv=fsync status=none
label_is_sha "fastopen: O_TRUNC of an existing file" exist
run_case "fastopen: non-sequential, ended by fsync" reread py "
import os
d = open('$T/data', 'rb').read()
fd = os.open('$M/fastns', os.O_WRONLY | os.O_CREAT, 0o644)
os.pwrite(fd, d[65536:131072], 65536)
os.pwrite(fd, d[:65536], 0)
os.fsync(fd)
os.close(fd)"
label_is_sha "fastopen: non-sequential" fastns
run_case "fastopen: a prefix written over a longer file, ended by fsync" reread \
	sh -c "printf HELLO | dd of='$M/prefix' conv=notrunc,fsync status=none"
label_is_sha "fastopen: a prefix written over a longer file" prefix
CASE_OPTS=

grep -E "ERROR: (Address|Thread|Leak)Sanitizer|runtime error:" "$T/all.stderr" "$T/uevmfs.stderr" &&
	fail "no sanitizer report from uevmfs" || pass "no sanitizer report from uevmfs"
