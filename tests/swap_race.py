#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Swap a directory entry between a walker's readdir and its open.

swap_race.py SUMMARY DIR NAME REPLACEMENT [CONTROL] -- CMD...

Runs CMD (root only: fanotify).  DIR is marked for FAN_ACCESS_PERM: each
getdents of it waits for our answer.  At CMD's second getdents of DIR (the
first returned the entries, the second finds the end) every entry is read
and none opened yet: REPLACEMENT is renamed over DIR/NAME, then the read is
allowed.  A second, notification-only group with FAN_REPORT_FID (which
opens nothing itself) counts CMD's opens of REPLACEMENT's inode (O_PATH
opens make no event).  At the end we open it once ourselves, O_NONBLOCK,
and must see that event: the counter works (through CONTROL, the same
inode by another path, when DIR's mount is nodev and refuses a device).
With SWAP_FIRST="SRC DST" in the environment, SRC is renamed over DST
just before (a symlink PATH pointed elsewhere, say).  SUMMARY gets one line:
"swapped=0|1 opens=N control=0|1 hung=0|1 rc=RC".
"""
import ctypes
import os
import select
import struct
import subprocess
import sys

FAN_CLOEXEC, FAN_CLASS_CONTENT, FAN_REPORT_FID = 0x1, 0x4, 0x200
FAN_MARK_ADD = 0x1
FAN_OPEN, FAN_ACCESS_PERM, FAN_ONDIR = 0x20, 0x20000, 0x40000000
FAN_ALLOW = 0x1
AT_FDCWD = -100
META = struct.Struct("<IBBHQii")
# A guard against a hung CMD, so the test fails instead of waiting forever
# (not a timing check: a run that works takes a fraction of it).
HANG_GUARD_MS = 120000

libc = ctypes.CDLL(None, use_errno=True)
libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64,
                               ctypes.c_int, ctypes.c_char_p]


def fan_init(flags, fflags):
    fd = libc.fanotify_init(flags, fflags)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "fanotify_init")
    return fd


def fan_mark(fd, mask, path):
    if libc.fanotify_mark(fd, FAN_MARK_ADD, mask, AT_FDCWD,
                          path.encode()) < 0:
        raise OSError(ctypes.get_errno(), "fanotify_mark " + path)


def events(fd):
    buf = os.read(fd, 65536)
    off = 0
    while off + META.size <= len(buf):
        ln, _, _, _, mask, efd, pid = META.unpack_from(buf, off)
        yield mask, efd, pid
        off += ln


def main():
    sep = sys.argv.index("--")
    summary, d, name, repl = sys.argv[1:5]
    control_path = sys.argv[5] if sep == 6 else None
    cmd = sys.argv[sep + 1:]
    perm = fan_init(FAN_CLOEXEC | FAN_CLASS_CONTENT, os.O_RDONLY | os.O_CLOEXEC)
    fan_mark(perm, FAN_ACCESS_PERM | FAN_ONDIR, d)
    notif = fan_init(FAN_CLOEXEC | FAN_REPORT_FID, 0)
    fan_mark(notif, FAN_OPEN, repl)
    child = subprocess.Popen(cmd)
    pidfd = os.pidfd_open(child.pid)
    reads = opens = 0
    swapped = hung = False
    p = select.poll()
    for fd in (perm, notif, pidfd):
        p.register(fd, select.POLLIN)
    done = False
    while not done:
        ready = p.poll(HANG_GUARD_MS)
        if not ready:
            hung = True
            child.kill()
        for fd, _ in ready:
            if fd == pidfd:
                done = True
            elif fd == perm:
                for mask, efd, pid in events(perm):
                    if pid == child.pid and mask & FAN_ACCESS_PERM:
                        reads += 1
                        if reads == 2 and not swapped:
                            first = os.environ.get("SWAP_FIRST")
                            if first:
                                os.rename(*first.split(" ", 1))
                            os.rename(repl, os.path.join(d, name))
                            swapped = True
                    if mask & FAN_ACCESS_PERM:
                        os.write(perm, struct.pack("<iI", efd, FAN_ALLOW))
                    if efd >= 0:
                        os.close(efd)
            else:
                for mask, _, pid in events(notif):
                    if pid == child.pid and mask & FAN_OPEN:
                        opens += 1
    rc = child.wait()
    # CMD is gone: what it left queued is its; then our own open.
    while select.select([notif], [], [], 0)[0]:
        for mask, _, pid in events(notif):
            if pid == child.pid and mask & FAN_OPEN:
                opens += 1
    target = os.path.join(d, name) if swapped else repl
    target = control_path or target
    os.close(os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY))
    control = False
    while not control and select.select([notif], [], [], 10)[0]:
        for mask, _, pid in events(notif):
            control = control or (pid == os.getpid() and bool(mask & FAN_OPEN))
    with open(summary, "w") as f:
        f.write("swapped=%d opens=%d control=%d hung=%d rc=%d\n" %
                (swapped, opens, control, hung, rc))


main()
