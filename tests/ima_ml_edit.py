#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Edit a binary measurement list offline, as an attacker with the disk would.

Entries are split by the kernel's binary format (written from the format,
not from uevm's code).  Entry numbers start at 1.

usage: ima_ml_edit.py LIST count
       ima_ml_edit.py LIST delete N
       ima_ml_edit.py LIST swap N M
       ima_ml_edit.py LIST keep N            (truncate to the first N entries)
       ima_ml_edit.py LIST append OTHER N    (append entry N of list OTHER)
"""
import struct
import sys


def entries(buf):
    out, off = [], 0
    while off < len(buf):
        start = off
        (pcr,) = struct.unpack_from("=I", buf, off)
        off += 4 + 20
        (nlen,) = struct.unpack_from("=I", buf, off)
        off += 4
        name = buf[off:off + nlen]
        off += nlen
        if name == b"ima":
            off += 20
            (n,) = struct.unpack_from("=I", buf, off)
            off += 4 + n
        else:
            (tlen,) = struct.unpack_from("=I", buf, off)
            off += 4 + tlen
        if off > len(buf):
            raise ValueError("entry at offset %d is cut short" % start)
        out.append(buf[start:off])
    return out


def main(argv):
    path, op = argv[1], argv[2]
    with open(path, "rb") as f:
        e = entries(f.read())
    if op == "count":
        print(len(e))
        return 0
    if op == "delete":
        del e[int(argv[3]) - 1]
    elif op == "swap":
        i, j = int(argv[3]) - 1, int(argv[4]) - 1
        e[i], e[j] = e[j], e[i]
    elif op == "keep":
        e = e[:int(argv[3])]
    elif op == "append":
        with open(argv[3], "rb") as f:
            e.append(entries(f.read())[int(argv[4]) - 1])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    with open(path, "wb") as f:
        f.write(b"".join(e))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
