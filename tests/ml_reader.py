#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A long-lived reader of a control tree's measurement files, for
tests/integration/securityfs_live.sh: it keeps its descriptors open across
the test's steps, as an attestation agent does, and is driven one command
a line from the FIFO CMD, answering one line on the FIFO REPLY:

  open NAME PATH        open PATH read-only as NAME          -> ok
  reopen NAME           close NAME and open its path again   -> ok
  read NAME OFF OUT     lseek(OFF, SEEK_SET), read to the end into OUT
                                                             -> ok POS LEN
  cont NAME OUT         read from the current position to the end
                                                             -> ok POS LEN
  seekcur NAME DELTA    lseek(DELTA, SEEK_CUR)               -> ok POS
  agent NAME NTH OUT    the Keylime agent's request for the list from entry
                        NTH on (see agent_read), the text into OUT
                                                             -> ok NTH ENTRIES
  quit

A failing system call answers "err ERRNO-NAME" (ENOTCONN, EIO, ...).
"""
import errno
import os
import sys


def read_to_end(fd):
    out = bytearray()
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return bytes(out)
        out += chunk


class AgentList:
    """What rust-keylime's agent does with the ASCII list it opened once
    (keylime/src/ima/measurement_list.rs, MeasurementList::read): it
    remembers (entries counted, byte offset) pairs of earlier reads; for a
    request from entry NTH it seeks to the offset of the largest remembered
    count below NTH, reads to the end, counts lines on from there and
    answers from line NTH on, with the total; NTH past the next entry to
    come starts over from entry 0."""

    def __init__(self):
        self.seen = set()

    def read(self, fd, nth):
        start = (0, 0)
        for count, off in self.seen:
            if start[0] < count < nth:
                start = (count, off)
        count, base = start
        os.lseek(fd, base, os.SEEK_SET)
        data = read_to_end(fd)
        pos, answer = 0, None
        while True:
            if count == nth:
                answer = data[pos:]
            nl = data.find(b"\n", pos)
            if nl < 0:
                break
            pos = nl + 1
            count += 1
        self.seen.add((count, base + pos))
        if answer is None:
            return self.read(fd, 0)
        return answer, nth, count


def main():
    cmd_path, reply_path = sys.argv[1], sys.argv[2]
    files, paths, agents = {}, {}, {}
    with open(cmd_path, "r") as cmds, open(reply_path, "w", buffering=1) as reply:
        for line in cmds:
            w = line.split()
            if not w:
                continue
            if w[0] == "quit":
                reply.write("ok\n")
                break
            try:
                if w[0] == "open":
                    files[w[1]] = os.open(w[2], os.O_RDONLY)
                    paths[w[1]] = w[2]
                    agents[w[1]] = AgentList()
                    ans = "ok"
                elif w[0] == "reopen":
                    try:
                        os.close(files[w[1]])
                    except OSError:
                        pass
                    files[w[1]] = os.open(paths[w[1]], os.O_RDONLY)
                    agents[w[1]] = AgentList()
                    ans = "ok"
                elif w[0] in ("read", "cont"):
                    fd = files[w[1]]
                    if w[0] == "read":
                        os.lseek(fd, int(w[2]), os.SEEK_SET)
                    data = read_to_end(fd)
                    with open(w[-1], "wb") as out:
                        out.write(data)
                    ans = "ok %d %d" % (os.lseek(fd, 0, os.SEEK_CUR), len(data))
                elif w[0] == "seekcur":
                    ans = "ok %d" % os.lseek(files[w[1]], int(w[2]), os.SEEK_CUR)
                elif w[0] == "agent":
                    data, nth, count = agents[w[1]].read(files[w[1]], int(w[2]))
                    with open(w[3], "wb") as out:
                        out.write(data)
                    ans = "ok %d %d" % (nth, count)
                else:
                    ans = "err EINVAL"
            except OSError as e:
                ans = "err " + errno.errorcode.get(e.errno, str(e.errno))
            reply.write(ans + "\n")


if __name__ == "__main__":
    main()
