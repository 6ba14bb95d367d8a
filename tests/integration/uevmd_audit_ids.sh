#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The audit record of a refused open or exec names the opener's own audit
# login uid and session (auid=, ses=), as the kernel's integrity records
# do.  uevmd reads them from /proc with the opener's other ids, while the
# opener is held in its call; each opener here runs in a login
# session of its own (it writes /proc/self/loginuid, which starts a new
# session), different from the daemon's and from the other openers', so a
# record with the daemon's ids, another opener's, or none (-1) fails.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

need_loginuid

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
write_conf
mkdir -p "$MNT/ok" "$MNT/bad"
echo "labelled" >"$MNT/ok/file"
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT/ok" >/dev/null
expect_eq "the good file is labelled" 0 $?
# Unlabelled before uevmd starts: refused (missing-hash), not new files.
for n in 1 2 3; do echo "unlabelled $n" >"$MNT/bad/f$n"; done
cp "$(type -P true)" "$MNT/bad/true"

start_uevmd || { fail "uevmd starts"; exit 1; }
pass "uevmd starts"


# Three openers (two opens, an exec: its comm is still the sh), each its own login uid and session.
A1=$((10000 + RANDOM)); A2=$((A1 + 1)); A3=$((A1 + 2))
sh -c "$AS_LOGIN" sh "$A1" "$T/ses.$A1" cat -- "$MNT/bad/f1" >/dev/null 2>"$T/err1" &
p1=$!
wait "$p1"
expect_eq "open of an unlabelled file is refused (opener 1)" 1 $?
sh -c "$AS_LOGIN" sh "$A2" "$T/ses.$A2" cat -- "$MNT/bad/f2" >/dev/null 2>"$T/err2" &
p2=$!
wait "$p2"
expect_eq "open of an unlabelled file is refused (opener 2)" 1 $?
sh -c "$AS_LOGIN" sh "$A3" "$T/ses.$A3" "$MNT/bad/true" 2>"$T/err3" &
p3=$!
wait "$p3"
expect_match "exec of an unlabelled binary is refused (opener 3)" "Operation not permitted" "$(cat "$T/err3")"
s1=$(cat "$T/ses.$A1"); s2=$(cat "$T/ses.$A2"); s3=$(cat "$T/ses.$A3")
check "three distinct sessions were made ($s1 $s2 $s3)" \
	test "$s1" != "$s2" -a "$s2" != "$s3" -a "$s1" != 4294967295

rec() {	# pid auid ses comm name
	echo "pid=$1 uid=0 auid=$2 ses=$3 op=appraise_data cause=missing-hash comm=\"$4\" name=\"$5\""
}
check "open 1: the record has opener 1's pid, auid and session" \
	log_has "$(rec "$p1" "$A1" "$s1" cat "$MNT/bad/f1")"
check "open 2: the record has opener 2's pid, auid and session" \
	log_has "$(rec "$p2" "$A2" "$s2" cat "$MNT/bad/f2")"
check "exec 3: the record has opener 3's pid, auid and session" \
	log_has "$(rec "$p3" "$A3" "$s3" sh "$MNT/bad/true")"
check "no refusal recorded with an unknown auid or session" \
	bash -c "! grep -E 'auid=4294967295 ses=4294967295 op=appraise_data .*name=\"$MNT/bad/' '$LOG'"

# A good file opened from a login session: allowed, and no record needed.
sh -c "$AS_LOGIN" sh "$((A1 + 3))" "$T/ses.x" cat -- "$MNT/ok/file" >/dev/null
expect_eq "a labelled file opens from a login session" 0 $?
stop_uevmd

