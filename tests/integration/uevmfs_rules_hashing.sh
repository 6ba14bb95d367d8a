#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmfs -o fastopen: the rules change (here `echo 1 > evm`) while the first
# read of a large file is being appraised.  The change used to wait, under
# the inode table's lock, for that file's lock, which the appraisal holds
# for its whole hash: every lookup on the mount, and the writer of `evm`,
# stopped until the hash ended (minutes for a huge sparse file any user
# can make).  Now the change and the lookups are answered while the hash
# runs, and the read under way is not answered with the old rules'
# verdict: the file, whose owner was changed behind EVM's back, is refused
# before a byte of it is served, and audited invalid-HMAC; so is a file
# with a hash label when a policy requiring signatures comes meanwhile,
# also while the mount's flusher relabels a user's huge file.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
C=$T/sec
SIZE=$((8 << 30))
mkdir -p "$S"
truncate -s "$SIZE" "$S/big"
echo small >"$S/small"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
chown 1234 "$S/big"	# the content still matches; the HMAC no longer
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,fastopen,evm=0,securityfs=$C,audit_log=$T/audit.log" ||
	exit 1
expect_eq "evm=0: a small file reads" small "$(cat "$M/small")"

rchar() { awk '$1 == "rchar:" { print $2 }' /proc/"$UFS_PID"/io; }
r0=$(rchar)
cat "$M/big" >"$T/out" 2>"$T/cat.err" &
CAT=$!
hashing() { [ $(($(rchar) - r0)) -ge $((256 << 20)) ]; }
wait_for "$WAIT_S" "uevmfs hashing the big file" hashing

# The change is made while the hash runs; the writer of evm waits for
# the library to drop the verdict the hash holds, as uevmd's does.  The
# mount's own look at the rules (its flusher, every 0.2 s) must not stop
# the mount: lookups of new names go on being answered while the hash
# runs, past the first second after the change (by then the look has been
# made: before, every lookup waited from there until the hash ended).
echo 1 >"$C/evm" &
EVM=$!
ms() { echo $(($(date +%s%N) / 1000000)); }
t0=$(ms)
n=0 late=0
while [ $(($(rchar) - r0)) -lt "$SIZE" ]; do
	n=$((n + 1))
	touch "$S/fresh.$n"
	stat "$M/fresh.$n" >/dev/null || break
	# Answered, and the hash was still running when it was.
	[ $(($(rchar) - r0)) -lt "$SIZE" ] && [ $(($(ms) - t0)) -ge 1000 ] && { late=1; break; }
done
expect_eq "a lookup was answered 1 s after the change, the hash still under way ($n lookups)" 1 "$late"
wait "$EVM"
expect_eq "echo 1 > evm: exit 0" 0 "$?"

wait "$CAT"
expect_eq "the read under way when EVM was initialised: refused" 1 "$(($? != 0))"
expect_match "  with EACCES" 'Permission denied' "$(cat "$T/cat.err")"
expect_eq "  and not a byte served with the old rules' verdict" 0 "$(stat -c %s "$T/out")"
expect_match "  audited invalid-HMAC" 'cause=invalid-HMAC' "$(ufs_records invalid-HMAC "$M/big")"
expect_match "a read after it: refused too" 'Permission denied' "$(cat "$M/big" 2>&1 >/dev/null)"
expect_eq "the small file still reads" small "$(cat "$M/small")"
ufs_umount "$M"

# refused_unserved N WHAT: the cat $CAT of big (output $T/outN, errors
# $T/catN.err) was refused under the strict rules, served nothing, and
# was audited in $T/auditN.log; the policy write $POL succeeded.
refused_unserved() {
	wait "$CAT"
	expect_eq "the read under way$2: refused" 1 "$(($? != 0))"
	expect_match "  with EACCES" 'Permission denied' "$(cat "$T/cat$1.err")"
	expect_eq "  and not a byte served with the weak rules' verdict" 0 "$(stat -c %s "$T/out$1")"
	expect_match "  audited IMA-signature-required" 'cause=IMA-signature-required' \
		"$(ufs_records IMA-signature-required "$M/big" "$T/audit$1.log")"
	wait "$POL"
	expect_eq "the policy write: exit 0" 0 "$?"
}

# A stricter policy loaded while the hash runs: the appraisal under way
# passes the weak rules it began with; that pass is not served either.
chown 0 "$S/big"	# as labelled: EVM would pass it again
echo "appraise func=FILE_CHECK" >"$T/weak"
echo "appraise func=FILE_CHECK appraise_type=imasig" >"$T/strict"
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,fastopen,policy=$T/weak,securityfs=$C,audit_log=$T/audit2.log" ||
	exit 1
r0=$(rchar)
cat "$M/big" >"$T/out2" 2>"$T/cat2.err" &
CAT=$!
wait_for "$WAIT_S" "uevmfs hashing the big file" hashing
tree_write "$C/ima/policy" <"$T/strict" &
POL=$!
refused_unserved 2 " when the signature rule came"
ufs_umount "$M"

# The same while a huge file is being relabelled by the mount's flusher,
# which used to be the one looking at the rules every 0.2 s: the read's
# check goes by the library's epoch, which moves as the load begins (it
# went by the flusher's look, which waited for that relabel, and the whole
# file was served under the weak rules), and the kernel's cached pages of
# a file read before are dropped by a thread of their own, not after the
# relabel.
# checking NAME: uevmfs has SOURCE/NAME open for reading (not O_PATH):
# a read's check has begun with it.  (uevmfs runs with SOURCE as its
# root: its descriptors name /NAME.)
checking() {
	local fd
	for fd in /proc/"$UFS_PID"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "/$1" ] || continue
		awk '$1 == "flags:" && !(int(substr($2, length($2) - 7, 1)) % 2) { ok = 1 }
			END { exit !ok }' "/proc/$UFS_PID/fdinfo/${fd##*/}" 2>/dev/null && return 0
	done
	return 1
}
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,fastopen,policy=$T/weak,securityfs=$C,audit_log=$T/audit3.log" ||
	exit 1
expect_eq "weak rules: the small file reads (its page now cached)" small "$(cat "$M/small")"
r0=$(rchar)
dd if=/dev/zero of="$M/w" bs=1 count=1 seek=$((20 << 30)) status=none
wait_for "$WAIT_S" "the flusher relabelling a 20 GiB file" hashing
cat "$M/big" >"$T/out3" 2>"$T/cat3.err" &
CAT=$!
wait_for "$WAIT_S" "the big file's check begun" checking big
tree_write "$C/ima/policy" <"$T/strict" &
POL=$!
small_refused() { ! cat "$M/small" >/dev/null 2>&1; }
wait_for "$WAIT_S" "the small file refused under the strict rules" small_refused &&
	pass "the small file's cached page dropped: refused under the strict rules"
expect_eq "  while the flusher still relabels the 20 GiB file" 1 "$(checking w && echo 1)"
refused_unserved 3 ", the flusher busy"
ufs_umount "$M"
