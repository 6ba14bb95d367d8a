#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# inotify_act.py DIR NAME EVENT ACTION ARG: wait (up to 60 s) for EVENT
# (attrib or create) on NAME in DIR, then act on DIR/NAME at once:
#   pwrite OFF:TEXT  write TEXT into it at offset OFF (behind a mount)
#   rename-over SRC  rename DIR/SRC over it
# Prints "ready" on stdout once the watch stands, "acted" after acting,
# "timeout" if no event came.  Tests time attacks on the instant a
# filesystem event names, the way an attacker would.
import ctypes, os, select, struct, sys

IN_ATTRIB, IN_CREATE = 0x4, 0x100
d, name, event, action, arg = sys.argv[1:6]
mask = {"attrib": IN_ATTRIB, "create": IN_CREATE}[event]
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_CLOEXEC)
if fd < 0 or libc.inotify_add_watch(fd, d.encode(), mask) < 0:
    sys.exit("inotify: %s" % os.strerror(ctypes.get_errno()))
print("ready", flush=True)
target = os.path.join(d, name)
while True:
    if not select.select([fd], [], [], 60)[0]:
        print("timeout", flush=True)
        sys.exit(1)
    buf = os.read(fd, 65536)
    off = 0
    while off < len(buf):
        _, m, _, ln = struct.unpack_from("iIII", buf, off)
        ev = buf[off + 16:off + 16 + ln].rstrip(b"\0").decode()
        off += 16 + ln
        if ev != name or not m & mask:
            continue
        if action == "pwrite":
            at, text = arg.split(":", 1)
            wfd = os.open(target, os.O_WRONLY)
            os.pwrite(wfd, text.encode(), int(at))
            os.close(wfd)
        else:
            os.rename(os.path.join(d, arg), target)
        print("acted", flush=True)
        sys.exit(0)
