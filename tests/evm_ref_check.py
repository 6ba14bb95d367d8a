#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""An independent check of labels, for the crash and fault tests: for each
regular file under ROOT (symlinks never followed), say whether its
security.ima is the sha256 of its content (IMA_XATTR_DIGEST_NG form) and
its security.evm the kernel's HMAC over its protected xattrs and metadata
(the recipe of tests/ref_evm.sh, in Python: no uevm code involved).

  evm_ref_check.py --key KEY [--uuid auto|none] [--manifest SHA256SUMS] ROOT

Prints one line per file: "GOOD<TAB>path" when both labels are right,
"BAD<TAB>path<TAB>why" otherwise.  With --manifest (sha256sum output,
paths as under ROOT), content that differs from it is reported as
"CORRUPT<TAB>path": a labelling tool must never change file content."""

import argparse
import fcntl
import hashlib
import hmac
import os
import struct
import sys

# evm_config_default_xattrnames, in the kernel's order.
EVM_XATTRS = [
    "security.selinux", "security.SMACK64", "security.SMACK64EXEC",
    "security.SMACK64TRANSMUTE", "security.SMACK64MMAP", "security.apparmor",
    "security.ima", "security.capability",
]
FS_IOC_GETVERSION = 0x80087601      # _IOR('v', 1, long)
FS_IOC_GETFSUUID = 0x80111500       # _IOR(0x15, 0, struct fsuuid2)
IMA_XATTR_DIGEST_NG = 0x04
HASH_ALGO_SHA256 = 4
EVM_XATTR_HMAC = 0x02


def getxattr(path, name):
    try:
        return os.getxattr(path, name, follow_symlinks=False)
    except OSError:
        return None


def fs_uuid(fd):
    buf = fcntl.ioctl(fd, FS_IOC_GETFSUUID, bytes(17))
    assert buf[0] == 16
    return buf[1:17]


def generation(fd):
    try:
        buf = fcntl.ioctl(fd, FS_IOC_GETVERSION, bytes(8))
    except OSError:
        return 0
    return struct.unpack("<L", buf[:4])[0]


def evm_hmac(key, path, fd, st, uuid):
    data = b""
    found = False
    for name in EVM_XATTRS:
        v = getxattr(path, name)
        if v is None:
            continue
        found = True
        data += v
    if not found:
        return None
    # struct h_misc on LP64: ulong ino, u32 generation, uid, gid, u16 mode, 2 pad
    data += struct.pack("<QIIIHxx", st.st_ino, generation(fd), st.st_uid,
                        st.st_gid, st.st_mode & 0xffff)
    if uuid is not None:
        data += uuid
    # The kernel's key buffer: the key zero-padded to 128 bytes.
    return hmac.new(key.ljust(128, b"\0"), data, hashlib.sha1).digest()


def check(path, key, uuid_mode, manifest, rel):
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        h = hashlib.sha256()
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            h.update(b)
        digest = h.digest()
        if manifest is not None and rel in manifest and manifest[rel] != digest.hex():
            return "CORRUPT", "content differs from the manifest"
        ima = getxattr(path, "security.ima")
        evm = getxattr(path, "security.evm")
        if ima is None or evm is None:
            return "BAD", "labels missing"
        if ima != bytes([IMA_XATTR_DIGEST_NG, HASH_ALGO_SHA256]) + digest:
            return "BAD", "security.ima is not the sha256 of the content"
        uuid = fs_uuid(fd) if uuid_mode == "auto" else None
        mac = evm_hmac(key, path, fd, st, uuid)
        if evm != bytes([EVM_XATTR_HMAC]) + mac:
            return "BAD", "security.evm is not the HMAC of the xattrs and metadata"
        return "GOOD", ""
    finally:
        os.close(fd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--key", required=True)
    ap.add_argument("--uuid", default="auto", choices=["auto", "none"])
    ap.add_argument("--manifest")
    ap.add_argument("root")
    a = ap.parse_args()
    with open(a.key, "rb") as f:
        key = f.read()
    manifest = None
    if a.manifest:
        manifest = {}
        with open(a.manifest) as f:
            for line in f:
                digest, name = line.rstrip("\n").split("  ", 1)
                manifest[name] = digest
    out = sys.stdout
    for dirpath, dirnames, filenames in os.walk(a.root):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            rel = os.path.relpath(path, a.root)
            status, why = check(path, key, a.uuid, manifest, rel)
            out.write(f"{status}\t{path}\t{why}\n" if why else f"{status}\t{path}\n")


if __name__ == "__main__":
    main()
