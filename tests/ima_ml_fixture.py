#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Append ima-ng entries to a binary measurement list, for the tests.

Written from the kernel's documented binary format (native endian):
u32 pcr, the SHA-1 template digest, u32 name length, the template name,
u32 template data length, the template data ({u32 length, field} for
d-ng "sha256:\\0"+digest and n-ng name+"\\0").  Each entry's "content" is
its name, hashed with SHA-256.  A stand-in for the kernel's list, or for
an entry a writer appended but never extended.

usage: ima_ml_fixture.py LIST [--pcr N] NAME...
prints, per entry, "sha1=HEX,sha256=HEX,sha384=HEX,sha512=HEX": the
digests it extends each TPM bank with, as the kernel does (the template
data hashed with the bank's algorithm), for tpm2_pcrextend N:THAT.
"""
import hashlib
import struct
import sys


def field(data):
    return struct.pack("=I", len(data)) + data


def entry(pcr, name):
    digest = hashlib.sha256(name.encode()).digest()
    data = field(b"sha256:\0" + digest) + field(name.encode() + b"\0")
    sha1 = hashlib.sha1(data).digest()
    raw = (struct.pack("=I", pcr) + sha1 + struct.pack("=I", 6) + b"ima-ng" +
           struct.pack("=I", len(data)) + data)
    return raw, ",".join("%s=%s" % (a, hashlib.new(a, data).hexdigest())
                         for a in ("sha1", "sha256", "sha384", "sha512"))


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    path, args, pcr = argv[1], argv[2:], 10
    if args[0] == "--pcr":
        pcr, args = int(args[1]), args[2:]
    with open(path, "ab") as f:
        for name in args:
            raw, digests = entry(pcr, name)
            f.write(raw)
            print(digests)


if __name__ == "__main__":
    main(sys.argv)
