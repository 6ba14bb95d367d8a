#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An adversarial review of key loading after issue 12, each finding as the
# attack:
#  - a FIFO where a key, master key or certificate file is expected (an
#    offline attacker's, or a user's in a directory root trusts) hung the
#    loader in open(2) before any check ran: refused at once now, naming
#    the file, and never opened for I/O;
#  - a user mounts a FUSE filesystem of their own where root looks for a
#    key (a directory of theirs in /tmp; with user_allow_other, which lets
#    root see it): its daemon says root owns every file, mode 0600, and the
#    file safety checks believed it.  Owners on a FUSE filesystem mounted
#    by another user are no one's word: refused, naming the mount's owner.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../keys_lib.sh"
source "$TESTS_DIR/faultfs-lib.sh"
source "$TESTS_DIR/sig_ref.sh"
cd "$T" || exit 1
chmod 755 "$T"

make_key good.key
want=$(hmac_of raw:good.key)
expect_match "a root-owned key of mode 0600 works" '^02[0-9a-f]{40}$' "$want"
hmac_err() { timeout 120 "$UEVM" hmac --uuid none --hmac-key "$1" "$KEYS_PROBE" 2>&1 | head -n 3; }

# ---- a FIFO in place of a key file ------------------------------------------------------------
mkfifo -m 600 fifo.key
out=$(hmac_err raw:fifo.key)
expect_match "a FIFO as the raw key file is refused at once (not a regular file)" \
	"fifo\.key.* not a regular file" "$out"
out=$(hmac_err passphrase:fifo.key)
expect_match "... as a passphrase-protected key file" "fifo\.key.* not a regular file" "$out"
out=$(timeout 120 "$UEVM" verify --imasig --cert fifo.key "$KEYS_PROBE" 2>&1 | head -n 3)
expect_match "... as a certificate" "fifo\.key.* not a regular file" "$out"

# ---- a key on a FUSE filesystem of another user ----------------------------------------------
# nobody's filesystem: a /dev/fuse descriptor mounted for uid 65534 (as
# fusermount3 does for them) with allow_other, served by nobody's daemon,
# which claims root (--owner 0) for every object.
faultfs_build
mkdir -p back/keys fusemnt
cp good.key back/keys/evm.key
chown -R 65534:65534 back
chmod 700 back back/keys
chmod 600 back/keys/evm.key
: >rules
exec 3<>/dev/fuse
if mount -i -t fuse.nobodyfs -o "fd=3,rootmode=40000,user_id=65534,group_id=65534,allow_other" \
	nobodyfs "$T/fusemnt"; then
	on_exit "umount -l '$T/fusemnt' 2>/dev/null"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$T/faultfs" "$T/rules" "$T/back" /dev/fd/3 --owner 0 >>"$T/faultfs.log" 2>&1 &
	exec 3<&-
	wait_quiet "$WAIT_S" stat -c %u fusemnt/keys/evm.key >/dev/null 2>&1
	expect_eq "nobody's filesystem claims root owns the key, mode 0600" "0 600" \
		"$(stat -c '%u %a' fusemnt/keys/evm.key 2>&1)"
	out=$(hmac_err "raw:$T/fusemnt/keys/evm.key")
	expect_match "a key on a FUSE filesystem mounted by another user is refused" \
		"evm\.key.*FUSE filesystem mounted by uid 65534" "$out"
	expect_eq "... no HMAC is computed with it" "" "$(grep -E '^02[0-9a-f]{40}' <<<"$out")"
	out=$(timeout 120 "$UEVM" verify --imasig --cert "$T/fusemnt/keys/evm.key" "$KEYS_PROBE" 2>&1 | head -n 3)
	expect_match "... and so is a certificate there" "FUSE filesystem mounted by uid 65534" "$out"
	umount "$T/fusemnt" 2>/dev/null || umount -l "$T/fusemnt"
else
	exec 3<&-
	fail "a FUSE filesystem can be mounted for uid 65534"
fi

# ---- keyring:NAME: a key others can read, change or link ---------------------------------------
# Owned by root is not enough: a key whose permissions let group or others
# write it, read it or link it (linking it into a keyring of theirs makes
# them its possessor) is theirs to replace; so is every key on a keyring
# they may write or link.
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
NAME=uevm-review-$$-$RANDOM
make_key root.key
head -c 32 /dev/urandom >attacker.key
chmod 600 attacker.key
theirs=$(hmac_of raw:attacker.key)
expect_match "the attacker's key gives an HMAC" '^02[0-9a-f]{40}$' "$theirs"
chmod 644 attacker.key	# nobody reads it
open=$(keyctl padd user "$NAME" @s <root.key)
keyctl setperm "$open" 0x3f010004	# others: write
check "nobody replaces root's key whose permissions let others write it" \
	"${NOBODY[@]}" keyctl pupdate "$open" <attacker.key
out=$("$UEVM" hmac --uuid none --hmac-key "keyring:$NAME" "$KEYS_PROBE" 2>&1)
expect_eq "root does not compute with it" "" "$(grep -F "$theirs" <<<"$out")"
expect_match "... and names the key and its permissions" \
	"skipped user key '$NAME' \(serial $open\).*group or others .*(perm 3f010004)" "$out"
keyctl unlink "$open" @s >/dev/null

ring=$(keyctl newring "$NAME-ring" @s)
inner=$(keyctl padd user "$NAME" "$ring" <root.key)
keyctl setperm "$ring" 0x3f010018	# others: search, link
check "nobody links root's keyring into theirs and replaces the key on it" \
	"${NOBODY[@]}" keyctl session - sh -c "keyctl link $ring @s && keyctl pupdate $inner <attacker.key" >/dev/null 2>&1
out=$("$UEVM" hmac --uuid none --hmac-key "keyring:$NAME" "$KEYS_PROBE" 2>&1)
expect_eq "root does not compute with a key on a keyring others may link" "" \
	"$(grep -F "$theirs" <<<"$out")"
expect_match "... and names the keyring" "skipped user key '$NAME' \(serial $inner\).*keyring $ring.*group or others" "$out"
keyctl unlink "$ring" @s >/dev/null
