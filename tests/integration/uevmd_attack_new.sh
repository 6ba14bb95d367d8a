#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 12, item 1: a file planted offline must never pass for a file
# created while uevmd runs.  The attacker has the disk: they plant an
# unlabelled setuid-root binary and set its ext4 birth time (debugfs,
# crtime) a few seconds into the future.  Once that time comes, with uevmd
# running:
#  - any user opens it with open(O_RDONLY|O_CREAT): the open creates
#    nothing, so it is not new;
#  - any user renames it (mv): a rename never creates a file;
#  - root hard-links it and unlinks the old name: a link creates a name,
#    not a file;
# then runs it.  Each run must be refused with an audit record naming the
# file (missing-hash), as the kernel sets IMA_NEW_FILE only for the file the
# very open created.  A file really created while uevmd runs (O_CREAT,
# mknod-free shell redirection, cp) still works, and is labelled.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
ID=$(type -P id)
PY=/usr/bin/python3	# Debian's, which nobody may run
chmod 711 "$T"		# nobody reaches the mount, not the key

make_image 512M || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
write_conf
mkdir -p "$MNT/sys" "$MNT/drop" "$MNT/linked" "$MNT/made"
chown 65534:65534 "$MNT/drop" "$MNT/made"
chmod 755 "$MNT/sys" "$MNT/linked"
echo "labelled" >"$MNT/sys/good"
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT" >/dev/null || fail "the image is labelled"

# ---- offline: the attacker plants binaries born "in the future" -----------------------------
for n in sys/ocreat drop/renamed linked/src; do
	cp "$ID" "$MNT/$n"
	chown 0:0 "$MNT/$n"
	chmod 4755 "$MNT/$n"
done
# plant_birth MARGIN: offline, the planted files' birth time MARGIN
# seconds ahead; then uevmd starts.  The attack needs uevmd running before
# that time comes: a start slowed down by load past it is tried again with
# more margin (a fixed 4 s was a guess at how long a start takes).
plant_birth() {
	umount "$MNT"
	born=$(($(date +%s) + $1))
	for n in sys/ocreat drop/renamed linked/src; do
		debugfs -w -R "set_inode_field /$n crtime @$born" "$T/img" >/dev/null 2>&1 ||
			fail "debugfs sets the birth time of $n"
	done
	mount -o loop "$T/img" "$MNT"
	start_uevmd || { fail "uevmd starts"; exit 1; }
}
early=no
for margin in 4 20 120; do
	plant_birth "$margin"
	[ "$(date +%s)" -lt "$born" ] && { early=yes; break; }
	stop_uevmd
done
expect_eq "uevmd runs before the forged birth time" yes "$early"
check "the planted files carry the forged birth time" \
	test "$(stat -c %W "$MNT/sys/ocreat")" = "$born"
# Wait for the forged birth time to come (the attack's own clock).
while [ "$(date +%s)" -le "$born" ]; do sleep 0.1; done

# runs_as_root FILE: what `id -u` prints when nobody runs FILE (the
# setuid bit makes it 0), or the error.
runs_as() { "${NOBODY[@]}" "$1" -u 2>&1; }

# ---- open(O_RDONLY|O_CREAT) of the existing file ---------------------------------------------
"${NOBODY[@]}" "$PY" -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_CREAT, 0o644))' \
	"$MNT/sys/ocreat" 2>/dev/null
out=$(runs_as "$MNT/sys/ocreat")
expect_match "O_CREAT open of a planted binary, then nobody runs it: refused" \
	"Permission denied|Operation not permitted" "$out"
check "  audit: missing-hash for it" \
	log_has "op=appraise_data cause=missing-hash .*name=\"$MNT/sys/ocreat\""
expect_eq "  and it was not labelled" "" "$(xattr_hex security.ima "$MNT/sys/ocreat")"

# ---- mv ---------------------------------------------------------------------------------
"${NOBODY[@]}" mv "$MNT/drop/renamed" "$MNT/drop/renamed.new"
out=$(runs_as "$MNT/drop/renamed.new")
expect_match "a planted binary renamed by a user, then run: refused" \
	"Permission denied|Operation not permitted" "$out"
check "  audit: missing-hash for it" \
	log_has "op=appraise_data cause=missing-hash .*name=\"$MNT/drop/renamed.new\""
expect_eq "  and it was not labelled" "" "$(xattr_hex security.ima "$MNT/drop/renamed.new")"

# ---- link + unlink: a new name for an old inode, link count back to 1 ---------------------
# In one go, while uevmd rehashes a big file just written (its change
# notifications wait behind that), so the link count is back to 1 before
# uevmd looks at the link's FAN_CREATE.
"$PY" - "$MNT/linked/src" "$MNT/linked/dst" "$MNT/linked/big" <<'EOF'
import os, sys
src, dst, big = sys.argv[1:]
fd = os.open(big, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
block = b"\1" * (1 << 20)
for _ in range(256):
    os.write(fd, block)
os.close(fd)
os.link(src, dst)
os.unlink(src)
EOF
"${NOBODY[@]}" "$PY" -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_CREAT, 0o644))' \
	"$MNT/linked/dst" 2>/dev/null
out=$(runs_as "$MNT/linked/dst")
expect_match "a planted binary hard-linked, old name removed, O_CREAT open, run: refused" \
	"Permission denied|Operation not permitted" "$out"
expect_eq "  and it was not labelled" "" "$(xattr_hex security.ima "$MNT/linked/dst")"

# ---- what must keep working: files really created now ----------------------------------------
"${NOBODY[@]}" sh -c "cp '$ID' '$MNT/made/id' && chmod 755 '$MNT/made/id'"
expect_match "a binary copied by a user now runs" '^65534$' "$(runs_as "$MNT/made/id")"
"${NOBODY[@]}" sh -c "echo fresh >'$MNT/made/text'"
expect_eq "a file written now opens" ok "$("${NOBODY[@]}" cat "$MNT/made/text" >/dev/null 2>&1 && echo ok)"
"${NOBODY[@]}" "$PY" -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o644)
os.close(fd)' "$MNT/made/empty"
expect_eq "an empty file made with O_RDONLY|O_CREAT opens" ok \
	"$("${NOBODY[@]}" cat "$MNT/made/empty" >/dev/null 2>&1 && echo ok)"
expect_eq "the untouched labelled file opens" ok "$(open_result "$MNT/sys/good")"
stop_uevmd
json=$("$UEVM" verify -v --json --hmac-key "raw:$T/key" "$MNT/made/id" "$MNT/made/text")
expect_eq "offline: the files written while uevmd ran verify PASS" "pass pass" \
	"$(jq -r '[.results[].status] | join(" ")' <<<"$json")"
