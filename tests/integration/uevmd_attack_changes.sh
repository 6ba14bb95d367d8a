#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 12, item 4: a verdict (cached, or a kernel ignore mark) must never
# outlive a change of the content, however it was written.
#  (a) a user maps a measured and appraised script of their own with
#      MAP_SHARED|PROT_WRITE, writes through the mapping (no write(2), so no
#      FAN_MODIFY), unmaps, and runs it: the run must be measured with the
#      new digest (and the label follow the legitimate change), or refused;
#      never the new content run under the old verdict;
#  (b) `: >> f` (a write open with no write), later `echo x >> f`: the
#      change is legitimate, the file must keep opening;
#  (c) the same with truncate(2) growing a file by name, and with a
#      write(2) to an fd opened before the file was cached.
# The kernel decides at each open from i_version/ctime whether the content
# changed; uevmd may keep opens out of userspace only while nothing can
# change the content unseen.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
PY=/usr/bin/python3
chmod 711 "$T"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
write_conf "measurement_list = $T/ml"
U=$MNT/user
mkdir -p "$U"
chown 65534:65534 "$U"
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT" >/dev/null
start_uevmd || { fail "uevmd starts"; exit 1; }

sha() { sha256sum "$1" | cut -d' ' -f1; }
# measured DIGEST NAME: the daemon's list has an entry with that digest for NAME.
measured() {
	"$UEVM" measurements daemon --ascii --socket "$SOCK" |
		grep -qE " sha256:$1 $2\$"
}

# ---- (a) writes through a shared mapping ---------------------------------------------------
"${NOBODY[@]}" sh -c "printf '#!/bin/sh\necho original-output\n' >'$U/script'; chmod 755 '$U/script'"
expect_eq "the user's new script runs" original-output "$("${NOBODY[@]}" "$U/script" 2>&1)"
old=$(sha "$U/script")
check "  its run was measured" measured "$old" "$U/script"
# Run it again: from now on the daemon may keep its opens out of userspace.
"${NOBODY[@]}" "$U/script" >/dev/null 2>&1
"${NOBODY[@]}" "$PY" - "$U/script" <<'EOF'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
i = m.find(b"original")
m[i:i + 8] = b"MAPPED!!"
m.close()
os.close(fd)
EOF
new=$(sha "$U/script")
check "  the mapping changed the content" test "$new" != "$old"
out=$("${NOBODY[@]}" "$U/script" 2>&1)
if [ "$out" = "MAPPED!!-output" ]; then
	check "the script changed through a mapping runs: its new digest is measured" \
		measured "$new" "$U/script"
else
	expect_match "the script changed through a mapping is refused" \
		"Permission denied|Operation not permitted" "$out"
fi
check "  no ignore mark was ever placed on a file its user can write" \
	test "$(status_field marks_added)" = 0
# A file only root can write does get the fast path (an ignore mark).  A
# write through root's own mapping is seen when it is closed: the mark
# goes as that close is handled (uevmd(8): the one window left, root's).
echo "data before" >"$MNT/rootfile"
cat "$MNT/rootfile" >/dev/null; cat "$MNT/rootfile" >/dev/null
check "a file only root can write gets an ignore mark" test "$(status_field marks_added)" -gt 0
n0=$(status_field notifications)
"$PY" - "$MNT/rootfile" <<'EOF'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
m[0:4] = b"DATA"
m.close()
os.close(fd)
EOF
notified() { [ "$(status_field notifications)" -gt "$n0" ]; }
wait_for "$WAIT_S" "uevmd to be notified of the write through the mapping" notified
expect_eq "a root-read file changed through a mapping reads (legitimate)" ok \
	"$(open_result "$MNT/rootfile")"
check "  and the read of the new content was measured" measured "$(sha "$MNT/rootfile")" "$MNT/rootfile"

# ---- (b) a write open without a write, then a write --------------------------------------
echo "first line" >"$MNT/appended"
cat "$MNT/appended" >/dev/null; cat "$MNT/appended" >/dev/null
: >>"$MNT/appended"
expect_eq ": >> f keeps it opening" ok "$(open_result "$MNT/appended")"
echo "second line" >>"$MNT/appended"
expect_eq "a later echo x >> f: it still opens" ok "$(open_result "$MNT/appended")"
cat "$MNT/appended" >/dev/null
echo "third line" >>"$MNT/appended"
expect_eq "  and after another append" ok "$(open_result "$MNT/appended")"

# ---- (c) truncate(2) by name, and a writer that opened before ------------------------------
echo "to be grown" >"$MNT/grown"
cat "$MNT/grown" >/dev/null; cat "$MNT/grown" >/dev/null
truncate -s 1M "$MNT/grown"
expect_eq "truncate -s by name (grown), then read: opens" ok "$(open_result "$MNT/grown")"
check "  the new content was measured" measured "$(sha "$MNT/grown")" "$MNT/grown"
echo "early writer" >"$MNT/early"
exec 8>>"$MNT/early"
cat "$MNT/early" >/dev/null; cat "$MNT/early" >/dev/null
echo "written late" >&8
exec 8>&-
expect_eq "a writer open before the reads, written after: opens" ok "$(open_result "$MNT/early")"
check "  its new content was measured" measured "$(sha "$MNT/early")" "$MNT/early"

stop_uevmd
json=$("$UEVM" verify -v --json --hmac-key "raw:$T/key" "$U/script" "$MNT/rootfile" "$MNT/appended" \
	"$MNT/grown" "$MNT/early")
expect_eq "offline: every file changed legitimately verifies PASS" "pass pass pass pass pass" \
	"$(jq -r '[.results[].status] | join(" ")' <<<"$json")"
