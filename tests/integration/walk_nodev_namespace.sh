#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A recursive walk opens each file its directory lists as regular with one
# open(2) only where the mount is nodev; a walking command run with
# CAP_SYS_ADMIN first moves into a mount namespace of its own whose mounts
# are all nodev (programs/uevm/privs.c).  The attacker: offline, with the
# disk, who writes a directory entry whose type byte says "regular file"
# over an inode that is a character device (debugfs here), so that a walk
# trusting the listing would open the device (a watchdog would start).
#  1. As root (the nodev namespace) and without CAP_SYS_ADMIN (no
#     namespace: the O_PATH open, a stat, then a reopen), label -r and
#     verify -r never open the device: inotify sees no IN_OPEN of it (an
#     O_PATH open makes none, an open for reading does).
#  2. As root the walk did run in that namespace: mount_setattr set nodev
#     and the regular file was opened at once (openat2, not crossing into
#     a mount over its name), not through O_PATH.
#  3. Nothing leaks to the host: the mount still allows devices, and a
#     device node on it still opens.  A command that opens a file after
#     its walk (runtime-policy create -o) opens it in the host's view: a
#     device node there still opens.
#  4. A device node bind-mounted over a file of a nodev directory (a
#     container's /dev is made so; the host can mount so during a walk):
#     the mount over the name has flags of its own, and the direct open
#     does not cross into it (an attack review had the device opened).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/faultfs-lib.sh"

for tool in debugfs strace setpriv python3; do
	command -v $tool >/dev/null || { fail "$tool is installed (scripts/install-deps.sh)"; exit 1; }
done
KEY=$T/key
make_key "$KEY"
IMG=$T/fs.img
M=$T/m
truncate -s 8M "$IMG"
mkfs.ext4 -q -F -b 4096 -I 256 "$IMG" >/dev/null 2>&1 || { fail "mkfs.ext4"; exit 1; }
# dev0: an entry written as a regular file whose inode is then made the
# character device 1:3 (/dev/null's numbers; old encoding in i_block[0]).
debugfs -w -R "write /dev/null dev0" "$IMG" >/dev/null 2>&1
debugfs -w -f - "$IMG" >/dev/null 2>&1 <<'EOF'
sif dev0 mode 020644
sif dev0 flags 0
sif dev0 block[0] 0x103
sif dev0 block[1] 0
sif dev0 block[2] 0
EOF
loop_mount "$IMG" "$M" || { fail "ext4 loop mount"; exit 1; }
mkdir "$M/sub"
head -c 5000 /dev/urandom >"$M/sub/a"
mknod "$M/realdev" c 1 3

check "fixture: dev0 is a character device 1:3" \
	test "$(stat -c '%F %t:%T' "$M/dev0")" = "character special file 1:3"
check "fixture: its directory entry says regular file" \
	python3 -c 'import os, sys; sys.exit(not [e for e in os.scandir(sys.argv[1]) if e.name == "dev0" and e.is_file(follow_symlinks=False)])' "$M"

# opens_of NODE CMD...: run CMD; print "OPENS RC": how often NODE was
# opened for I/O meanwhile (inotify IN_OPEN) and CMD's exit status.
opens_of() {
	python3 - "$@" <<'PY'
import ctypes, os, struct, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
if fd < 0 or libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x20) < 0:
    sys.exit("inotify: %s" % os.strerror(ctypes.get_errno()))
rc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL).returncode
n = 0
while True:
    try:
        b = os.read(fd, 4096)
    except BlockingIOError:
        break
    off = 0
    while off < len(b):
        _, mask, _, ln = struct.unpack_from('iIII', b, off)
        off += 16 + ln
        n += bool(mask & 0x20)
print(n, rc)
PY
}

expect_eq "the watch works: an open for reading of dev0 is seen" "1 0" \
	"$(opens_of "$M/dev0" python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK))' "$M/dev0")"

# ---- 1: the device is never opened ----------------------------------------
NOADMIN=(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin --)
expect_eq "root: label -r does not open dev0, exits 0" "0 0" \
	"$(opens_of "$M/dev0" "$UEVM" label -r --hmac-key "raw:$KEY" "$M")"
expect_eq "root: verify -r does not open dev0, exits 0" "0 0" \
	"$(opens_of "$M/dev0" "$UEVM" verify -r --hmac-key "raw:$KEY" "$M")"
expect_eq "without CAP_SYS_ADMIN: verify -r does not open dev0, exits 0" "0 0" \
	"$(opens_of "$M/dev0" "${NOADMIN[@]}" "$UEVM" verify -r --hmac-key "raw:$KEY" "$M")"
out=$("$UEVM" verify -r -v --hmac-key "raw:$KEY" "$M" 2>&1)
expect_match "verify reports dev0 as what it is, not as a file it hashed" \
	"^OK $M/dev0: no_xattrs" "$out"
expect_match "and sub/a as labelled and passing" "^OK $M/sub/a: pass" "$out"

# ---- 2: the namespace was there -------------------------------------------
strace -f -qq -o "$T/trace" -e trace=mount_setattr,openat,openat2 \
	"$UEVM" verify -r -j 1 --hmac-key "raw:$KEY" "$M" >/dev/null 2>&1
expect_match "root: the walk set nodev on every mount of its namespace" \
	'mount_setattr\(AT_FDCWD, "/", AT_RECURSIVE, \{attr_set=MOUNT_ATTR_NODEV.*= 0$' "$(grep mount_setattr "$T/trace")"
expect_match "root: sub/a was opened for reading at once, not with O_PATH first" \
	'^[0-9]+ +openat2\([0-9]+, "a", \{flags=O_RDONLY\|[A-Z_|]+, resolve=RESOLVE_NO_XDEV[^}]*\}, [0-9]+\) = [0-9]+$' \
	"$(grep '"a"' "$T/trace" | grep -v O_PATH)"
expect_eq "  and only so" 1 "$(grep -c '"a"' "$T/trace")"
strace -f -qq -o "$T/trace2" -e trace=mount_setattr,openat,openat2 \
	"${NOADMIN[@]}" "$UEVM" verify -r -j 1 --hmac-key "raw:$KEY" "$M" >/dev/null 2>&1
expect_eq "without CAP_SYS_ADMIN: no namespace, sub/a opened with O_PATH first" \
	"O_PATH" "$(grep -m1 '"a"' "$T/trace2" | grep -o O_PATH)"

# ---- 3: the host's mounts are as they were --------------------------------
check "the mount still allows devices" \
	bash -c '! findmnt -n -o OPTIONS --target "$1" | grep -qw nodev' _ "$M"
check "a device node on it still opens" bash -c ': <"$1"' _ "$M/realdev"
check "and so does /dev/null" bash -c ': </dev/null'

mkdir -p "$T/rp"
echo content >"$T/rp/file"
mknod "$T/out.dev" c 1 3
"$UEVM" runtime-policy create -o "$T/out.dev" "$T/rp" >/dev/null 2>"$T/rp.err"
expect_eq "runtime-policy create -o DEVICE after its walk: written, exit 0" \
	"0 " "$? $(cat "$T/rp.err")"

# ---- 4: a device mounted over a listed file -------------------------------
ND=$T/nd
mkdir -p "$ND.src" "$ND" "$T/devsrc"
for f in a b c; do echo "$f" >"$ND.src/$f"; done
mount --bind "$ND.src" "$ND" || fail "a bind mount"
on_exit "umount -R '$ND' 2>/dev/null"
mount -o remount,bind,nodev "$ND"
mknod "$T/devsrc/null" c 1 3
mount --bind "$T/devsrc/null" "$ND/b" || fail "the device bind-mounted over b"
check "fixture: b is now the device, the directory nodev" \
	test "$(stat -c %F "$ND/b")" = "character special file" -a \
	-n "$(findmnt -n -o OPTIONS --target "$ND/a" | grep -w nodev)"
"$UEVM" label -r --hmac-key "raw:$KEY" "$ND" >/dev/null 2>&1
expect_eq "without CAP_SYS_ADMIN: verify -r does not open the device over b" "0 0" \
	"$(opens_of "$T/devsrc/null" "${NOADMIN[@]}" "$UEVM" verify -r --hmac-key "raw:$KEY" "$ND")"
expect_eq "root: verify -r does not open it either" "0 0" \
	"$(opens_of "$T/devsrc/null" "$UEVM" verify -r --hmac-key "raw:$KEY" "$ND")"
out=$("${NOADMIN[@]}" "$UEVM" verify -r -v --hmac-key "raw:$KEY" "$ND" 2>&1)
expect_match "b is reported as the device it is now" "^OK $ND/b: no_xattrs" "$out"
expect_match "a and c pass" "^OK $ND/c: pass" "$out"
