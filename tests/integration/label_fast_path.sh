#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 17: the label/verify hot path lists a file's xattrs once and reads
# only the protected ones listed, and keeps each filesystem's UUID once read
# (by st_dev) for the run.  Checked against an HMAC computed here, apart
# from uevm, as the kernel's evm_calc_hmac: HMAC-SHA1 under the 128-byte
# zero-padded key of the protected values in the kernel's order, then
# struct h_misc (ino, generation, uid, gid, mode), then the fs UUID.
#  1. One walk over two ext4 filesystems with different UUIDs: each file's
#     security.evm is the HMAC with its own filesystem's UUID, not the
#     other's.
#  2. Protected xattrs besides security.ima (a security.selinux value
#     longer than the first read buffer, security.apparmor), and a name list
#     longer than the first list buffer: all go into the HMAC.
#  3. A protected xattr removed after labelling: verify fails (the listing
#     is not stale, nor taken for "all there").
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/faultfs-lib.sh"

KEY=$T/key
make_key "$KEY"
R=$T/tree
mkdir -p "$R"
UUID1=11111111-2222-4333-8444-555555555555
UUID2=99999999-8888-4777-8666-555555555555
for i in 1 2; do
	truncate -s 8M "$T/fs$i.img"
	u=UUID$i
	mkfs.ext4 -q -F -b 4096 -I 256 -U "${!u}" "$T/fs$i.img" >/dev/null 2>&1 ||
		{ fail "mkfs.ext4 $i"; exit 1; }
	loop_mount "$T/fs$i.img" "$R/m$i" || { fail "ext4 loop mount $i"; exit 1; }
	for j in 1 2 3; do
		head -c $((4096 * j)) /dev/urandom >"$R/m$i/f$j"
	done
done

# hmac_of PATH UUID: the kernel-format EVM HMAC of PATH, in hex.
hmac_of() {
	python3 - "$KEY" "$1" "$2" <<'PY'
import fcntl, hashlib, hmac, os, struct, sys, uuid
key, path, fsuuid = sys.argv[1:4]
k = open(key, 'rb').read()
k = k + b'\0' * (128 - len(k))
names = ['security.selinux', 'security.SMACK64', 'security.SMACK64EXEC',
         'security.SMACK64TRANSMUTE', 'security.SMACK64MMAP',
         'security.apparmor', 'security.ima', 'security.capability']
h = hmac.new(k, digestmod=hashlib.sha1)
fd = os.open(path, os.O_RDONLY)
for n in names:
    try:
        h.update(os.getxattr(fd, n))
    except OSError:
        pass
st = os.fstat(fd)
gen = struct.unpack('l', fcntl.ioctl(fd, 0x80087601, b'\0' * 8))[0] & 0xffffffff
h.update(struct.pack('=QIIIH2x', st.st_ino, gen, st.st_uid, st.st_gid,
                     st.st_mode & 0xffff))
h.update(uuid.UUID(fsuuid).bytes)
print(h.hexdigest())
PY
}
evm_of() { getfattr --absolute-names -e hex -n security.evm -- "$1" 2>/dev/null |
	sed -n 's/^security.evm=0x02//p'; }

# ---- 1: two filesystems in one walk ---------------------------------------

"$UEVM" label -r -j2 --hmac-key "raw:$KEY" "$R" >/dev/null
expect_eq "label over two filesystems exits 0" 0 $?
for i in 1 2; do
	u=UUID$i; o=UUID$((3 - i))
	for j in 1 2 3; do
		f=$R/m$i/f$j
		got=$(evm_of "$f")
		expect_eq "m$i/f$j: security.evm is the HMAC with its filesystem's UUID" \
			"$(hmac_of "$f" "${!u}")" "$got"
		check "m$i/f$j: and not the one with the other filesystem's UUID" \
			test "$(hmac_of "$f" "${!o}")" != "$got"
	done
done
"$UEVM" verify -r -j2 --hmac-key "raw:$KEY" "$R" >/dev/null
expect_eq "verify over both filesystems passes" 0 $?

# ---- 2: other protected xattrs, long values and long lists ----------------

F=$R/m1/x
head -c 4096 /dev/urandom >"$F"
long=$(head -c 600 /dev/zero | tr '\0' s)
setfattr -n security.selinux -v "system_u:object_r:${long}_t:s0" "$F"
setfattr -n security.apparmor -v "unconfined" "$F"
for n in $(seq 30); do
	setfattr -n "user.a_rather_long_attribute_name_to_fill_the_list_$n" -v 1 "$F"
done
check "the file's names are longer than the first list buffer (1024)" \
	test "$(getfattr --absolute-names -d -m - "$F" | grep -c "^user")" -eq 30
"$UEVM" label --hmac-key "raw:$KEY" "$F" >/dev/null
expect_eq "label of the file with many xattrs exits 0" 0 $?
expect_eq "its HMAC covers security.selinux (600+ bytes), security.apparmor, security.ima" \
	"$(hmac_of "$F" "$UUID1")" "$(evm_of "$F")"
"$UEVM" verify --hmac-key "raw:$KEY" "$F" >/dev/null
expect_eq "and it verifies" 0 $?

# ---- 3: a protected xattr gone after labelling -----------------------------

setfattr -x security.apparmor "$F"
out=$("$UEVM" verify -v --hmac-key "raw:$KEY" "$F" 2>&1)
expect_eq "security.apparmor removed: verify fails" 1 $?
expect_match "  as an HMAC mismatch" "invalid-HMAC|HMAC mismatch" "$out"
setfattr -n security.apparmor -v "unconfined" "$F"
"$UEVM" verify --hmac-key "raw:$KEY" "$F" >/dev/null
expect_eq "put back: verify passes again" 0 $?
