#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""An independent reader of IMA binary measurement lists, for the tests.

Written from the kernel's documented formats (not from uevm's code): it
checks every template digest, replays the sha1 and sha256 banks and renders
the list as ascii_runtime_measurements would.

usage: ima_ml_ref.py LIST ASCII_OUT [ASCII_SHA256_OUT]
(the third file: as ascii_runtime_measurements_sha256, sha256 template digests)
prints "entries N", "violations N", "bad_digests N" and
"pcr BANK NN HEX" for each PCR the list extends; exit 1 on a malformed list.
"""
import hashlib
import struct
import sys

NAME_LEN_MAX = 255


def fields_of(data):
    """Split template data into its {u32 length, data} fields."""
    out, off = [], 0
    while off < len(data):
        (n,) = struct.unpack_from("=I", data, off)
        off += 4
        if off + n > len(data):
            raise ValueError("field runs past the template data")
        out.append(data[off:off + n])
        off += n
    return out


def digest_ascii(f):
    """d-ng / d-ngv2: '<prefix>:' NUL digest -> 'prefix:hex'."""
    nul = f.index(b"\0")
    return f[:nul].decode() + f[nul + 1:].hex()


def string_ascii(f):
    return f.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def uint_ascii(f):
    return str(int.from_bytes(f, sys.byteorder))


FIELD_SHOW = {
    "d-ng": digest_ascii, "d-ngv2": digest_ascii, "d-modsig": digest_ascii,
    "n-ng": string_ascii, "sig": bytes.hex, "buf": bytes.hex,
    "modsig": bytes.hex, "evmsig": bytes.hex,
    "iuid": uint_ascii, "igid": uint_ascii, "imode": uint_ascii,
}
BUILTIN_FMT = {
    "ima-ng": "d-ng|n-ng", "ima-sig": "d-ng|n-ng|sig", "ima-buf": "d-ng|n-ng|buf",
    "ima-ngv2": "d-ngv2|n-ng", "ima-sigv2": "d-ngv2|n-ng|sig",
    "ima-modsig": "d-ng|n-ng|sig|d-modsig|modsig",
}


def show(name, i, f):
    """A custom template is recorded under its format string."""
    fmt = BUILTIN_FMT.get(name, name).split("|")
    return FIELD_SHOW[fmt[i]](f)


def main():
    raw = open(sys.argv[1], "rb").read()
    ascii_out = open(sys.argv[2], "w", encoding="utf-8", errors="surrogateescape")
    ascii256 = None
    if len(sys.argv) > 3:
        ascii256 = open(sys.argv[3], "w", encoding="utf-8", errors="surrogateescape")
    pcr = {"sha1": {}, "sha256": {}}
    off = entries = violations = bad = 0
    while off < len(raw):
        idx, digest = struct.unpack_from("=I20s", raw, off)
        (nlen,) = struct.unpack_from("=I", raw, off + 24)
        name = raw[off + 28:off + 28 + nlen].decode()
        off += 28 + nlen
        if name == "ima":
            d = raw[off:off + 20]
            (flen,) = struct.unpack_from("=I", raw, off + 20)
            fname = raw[off + 24:off + 24 + flen]
            off += 24 + flen
            hashed = d + fname + bytes(NAME_LEN_MAX + 1 - flen)
            cols = [d.hex(), fname.decode()]
        else:
            (tlen,) = struct.unpack_from("=I", raw, off)
            hashed = raw[off + 4:off + 4 + tlen]
            if len(hashed) != tlen:
                raise ValueError("entry %d cut short" % (entries + 1))
            off += 4 + tlen
            fields = fields_of(hashed)
            cols = [show(name, i, f) if f else "" for i, f in enumerate(fields)]
        entries += 1
        violation = digest == bytes(20)
        if violation:
            violations += 1
        elif hashlib.sha1(hashed).digest() != digest:
            bad += 1
        for bank in ("sha1", "sha256"):
            h = hashlib.new(bank)
            size = h.digest_size
            ext = b"\xff" * size if violation else hashlib.new(bank, hashed).digest()
            old = pcr[bank].get(idx, bytes(size))
            pcr[bank][idx] = hashlib.new(bank, old + ext).digest()
        ascii_out.write("%2d %s %s %s\n" % (idx, digest.hex(), name, " ".join(cols)))
        if ascii256:
            d256 = bytes(32) if violation else hashlib.sha256(hashed).digest()
            ascii256.write("%2d %s %s %s\n" % (idx, d256.hex(), name, " ".join(cols)))
    print("entries", entries)
    print("violations", violations)
    print("bad_digests", bad)
    for bank in ("sha1", "sha256"):
        for idx in sorted(pcr[bank]):
            print("pcr", bank, "%02d" % idx, pcr[bank][idx].hex())


if __name__ == "__main__":
    try:
        main()
    except (ValueError, struct.error, KeyError, IndexError, UnicodeDecodeError) as e:
        print("malformed list:", e, file=sys.stderr)
        sys.exit(1)
