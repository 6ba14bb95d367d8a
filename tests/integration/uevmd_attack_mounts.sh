#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 12, item 2: the same files reached through other mounts.  A
# fanotify mount mark (`mount = DIR`) sees only opens through that one
# mount: a bind mount of DIR, a copy of the mount in another mount
# namespace (`unshare -m` as root, `unshare -Urm` as a user, a sandboxed
# service, a container) reaches the same inodes unseen.  The kernel's hooks
# apply per inode, so:
#  - uevmd refuses `mount =` in enforce mode (at start, and a later switch
#    to enforce), saying to use `filesystem =`; in log mode it starts and
#    warns;
#  - with `filesystem =`, a tampered binary run through a bind mount, from
#    a new mount namespace as root, and from a user namespace as nobody is
#    refused, with an audit record each time.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
chmod 711 "$T"
make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
mkdir -p "$MNT/bin"
cp "$(type -P true)" "$MNT/bin/good"
# One tampered copy for each way in, so each refusal is a first appraisal
# with its own audit record.
WAYS="direct bind ns userns userbind"
for w in $WAYS; do cp "$(type -P true)" "$MNT/bin/t-$w"; done
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT" >/dev/null
# offline: the tail of each binary (section headers, not loaded) changes
for w in $WAYS; do
	printf 'X' | dd of="$MNT/bin/t-$w" bs=1 seek=$(($(stat -c %s "$MNT/bin/t-$w") - 50)) \
		conv=notrunc status=none
done
mkdir -p "$T/bind"

# ---- mount = in enforce mode: refused ------------------------------------------------------
write_conf
sed -i "s|^filesystem = .*|mount = $MNT|" "$CONF"
out=$(timeout 120 "$UEVMD" -c "$CONF" -f 2>&1 </dev/null)
rc=$?
expect_eq "uevmd with 'mount =' in enforce mode refuses to start (exit 2)" 2 "$rc"
expect_match "  and says why and what to use" \
	"mount = $MNT: .*other mounts.*filesystem =" "$out"

# ---- mount = in log mode: starts, warns; no switch to enforce -------------------------------
write_conf "mode = log"
sed -i "s|^filesystem = .*|mount = $MNT|" "$CONF"
if start_uevmd; then
	pass "uevmd with 'mount =' in log mode starts"
	check "  and warns that other mounts are not seen" \
		log_has "mount = $MNT: .*other mounts"
	out=$("$UEVM" enable --mode enforce --socket "$SOCK" 2>&1)
	check "  a switch to enforce is refused" test $? -ne 0
	expect_match "  with the reason" "filesystem =" "$out"
	expect_match "  and the mode stays log" "^mode: log$" "$("$UEVM" status --socket "$SOCK")"
	stop_uevmd
else
	fail "uevmd with 'mount =' in log mode starts"
fi

# ---- filesystem =: every way to the inode is enforced ----------------------------------------
write_conf
start_uevmd || { fail "uevmd starts with filesystem ="; exit 1; }
expect_eq "the good binary runs" ok "$(exec_result "$MNT/bin/good")"
expect_eq "the tampered binary is refused" EPERM "$(exec_result "$MNT/bin/t-direct")"

mount --bind "$MNT" "$T/bind"
on_exit "umount -l '$T/bind' 2>/dev/null"
: >"$LOG.mark"
expect_eq "through a bind mount: the tampered binary is refused" EPERM \
	"$(exec_result "$T/bind/bin/t-bind")"
check "  audit record for it" \
	log_has "op=appraise_data cause=invalid-hash .*name=\"$T/bind/bin/t-bind\""
expect_eq "  the good binary runs through the bind mount" ok "$(exec_result "$T/bind/bin/good")"
umount "$T/bind"

out=$(unshare -m sh -c "'$MNT/bin/t-ns' && echo ran" 2>&1)
expect_match "root in a new mount namespace (unshare -m): refused" \
	"Permission denied|Operation not permitted" "$out"
check "  audit record for it" log_has "op=appraise_data cause=invalid-hash .*t-ns\""
out=$("${NOBODY[@]}" unshare -Urm sh -c "'$MNT/bin/t-userns' && echo ran" 2>&1)
expect_match "nobody in a user and mount namespace (unshare -Urm): refused" \
	"Permission denied|Operation not permitted" "$out"
check "  audit record for it" log_has "op=appraise_data cause=invalid-hash .*t-userns\""
mkdir -m 777 "$T/u"
out=$("${NOBODY[@]}" unshare -Urm sh -c "mount --bind '$MNT/bin' '$T/u' && '$T/u/t-userbind' && echo ran" 2>&1)
expect_match "nobody's own bind mount in its namespace: refused" \
	"Permission denied|Operation not permitted" "$out"
check "  audit record for it" log_has "op=appraise_data cause=invalid-hash .*t-userbind\""
stop_uevmd
