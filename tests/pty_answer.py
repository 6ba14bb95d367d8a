#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Run a command on a pseudo-terminal and answer its prompts.

    pty_answer.py PROMPT-REGEX LINE [LINE...] -- CMD [ARG...]

Each LINE is typed only once the output since the last answer ends with a
match of PROMPT-REGEX (so input never races the prompt or the terminal's
echo setting).  Everything the command printed goes to stdout; the exit
status is the command's, or 124 when it did not ask or finish within 60 s.
"""
import os
import pty
import re
import select
import sys
import time


def main():
    args = sys.argv[1:]
    sep = args.index("--")
    prompt = re.compile(args[0].encode() + rb"\s*$")
    lines, cmd = args[1:sep], args[sep + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    out, pending = b"", b""
    deadline = time.monotonic() + 60
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            sys.stdout.buffer.write(out)
            return 124
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b""
        if not data:
            break
        out += data
        pending += data
        if lines and prompt.search(pending):
            os.write(fd, lines.pop(0).encode() + b"\n")
            pending = b""
    _, status = os.waitpid(pid, 0)
    sys.stdout.buffer.write(out)
    return os.waitstatus_to_exitcode(status)


sys.exit(main())
