#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmfs's command line and setup:
#  - `uevm mount` runs uevmfs in the background and returns once mounted;
#  - the key in a protected form (passphrase file) works like a raw one;
#  - a policy file, a built-in policy, and errors that name their cause
#    (bad key, bad policy line, missing source) before anything is mounted;
#  - not root: refused; SIGTERM unmounts and exits 0;
#  - the measurement list survives a remount (replayed, not restarted);
#  - exec is told apart from read: a BPRM_CHECK-only policy lets a changed
#    program be read but not run;
#  - a control tree below the mount point is refused at start (its mkdir
#    waited on uevmfs itself, which hung there for a review).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S" "$M"
chmod 755 "$T"
echo hello >"$S/a"
printf '#!/bin/sh\necho ran\n' >"$S/prog"
chmod 755 "$S/prog"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null

# ---- uevm mount -------------------------------------------------------------------
expect_match "uevm mount --help shows the usage" 'SOURCE \[MOUNTPOINT\]' "$("$UEVM" mount --help)"
expect_rc "uevm mount without arguments: usage error" 2 "$UEVM" mount
UFS_MOUNTS+=("$M" "$T/sec")
out=$("$UEVM" mount "$S" "$M" --hmac-key "raw:$KEY" -o "ml=$T/ml,securityfs=$T/sec,nosyslog" 2>&1)
expect_eq "uevm mount returns 0 once mounted" "0 " "$? $out"
check "mounted as fuse.uevmfs" ufs_mounted "$M" fuse.uevmfs
expect_eq "a labelled file reads through it" hello "$(cat "$M/a")"
n1=$(cat "$T/sec/ima/runtime_measurements_count")
expect_eq "measured: boot_aggregate and the file" 2 "$n1"
fusermount3 -u "$M"
sec_gone() { ! ufs_mounted "$T/sec" fuse.uevm-securityfs; }
wait_quiet "$WAIT_S" sec_gone
check "the background uevmfs unmounts its control tree when it ends" \
	bash -c "! grep -q ' $T/sec ' /proc/mounts"

# Started with standard input closed: a descriptor uevmfs opens for itself
# must not take fd 0, which going to the background points at /dev/null.
out=$("$UEVM" mount "$S" "$M" --hmac-key "raw:$KEY" -o "ml=none,securityfs=none,nosyslog" \
	2>&1 0<&-)
expect_eq "stdin closed: uevm mount returns 0 once mounted" "0 " "$? $out"
expect_eq "stdin closed: a labelled file reads through it" hello "$(cat "$M/a" 2>&1)"
fusermount3 -u "$M"

# ---- the measurement list survives a remount -------------------------------------------
ufs_mount "$S" "$M" "key=raw:$KEY,ml=$T/ml,securityfs=$T/sec,nosyslog" || exit 1
expect_eq "remount: the list is replayed, not restarted" "$n1" \
	"$(cat "$T/sec/ima/runtime_measurements_count")"
cat "$M/a" >/dev/null
expect_eq "remount: the same file is not measured twice" "$n1" \
	"$(cat "$T/sec/ima/runtime_measurements_count")"
expect_match "remount: the first entry is still boot_aggregate" ' boot_aggregate$' \
	"$(head -n 1 "$T/sec/ima/ascii_runtime_measurements")"
ufs_umount "$M"

# ---- key forms ------------------------------------------------------------------------
PASSFILE=$T/key.pass
printf 'correct horse\n' >"$T/pw"
chmod 600 "$T/pw"
if "$UEVM" key generate --out "$PASSFILE" --passphrase-fd 3 --kdf-ops 1 --kdf-mem 8 \
	3<"$T/pw" >/dev/null 2>"$T/keygen.err"; then
	# A fresh protected key labels a copy of the tree, then mounts it.
	mkdir -p "$T/src2"
	echo protected >"$T/src2/f"
	"$UEVM" label -r --hmac-key "passphrase:$PASSFILE,passphrase-fd=3" "$T/src2" 3<"$T/pw" >/dev/null
	"$UEVMFS" "$T/src2" "$M" -f --hmac-key "passphrase:$PASSFILE,passphrase-fd=3" \
		-o securityfs=none,ml=none,nosyslog 3<"$T/pw" 2>>"$T/uevmfs.stderr" &
	UFS_PID=$!
	UFS_PIDS+=("$UFS_PID")
	wait_for "$WAIT_S" "uevmfs to mount with a passphrase key" ufs_up_or_gone "$M" "$UFS_PID"
	expect_eq "a passphrase-protected key (--hmac-key passphrase:...)" protected "$(cat "$M/f" 2>&1)"
	ufs_umount "$M"
else
	fail "uevm key generate --passphrase-fd makes a protected key" "$(cat "$T/keygen.err")"
fi

# ---- stopped by a signal --------------------------------------------------------------
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,securityfs=$T/sec,nosyslog" || exit 1
check "the control tree is up" ufs_mounted "$T/sec" fuse.uevm-securityfs
kill -TERM "$UFS_PID"
wait "$UFS_PID"
expect_eq "SIGTERM: uevmfs exits 0" 0 $?
check "SIGTERM: the mount and the control tree are gone" \
	bash -c "! grep -qE ' ($M|$T/sec) ' /proc/mounts"

# ---- errors before mounting ----------------------------------------------------------
expect_match "a missing key file: named, nothing mounted" "key=raw:$T/nokey: cannot open key file $T/nokey" \
	"$("$UEVMFS" "$S" "$M" -f -o "key=raw:$T/nokey,securityfs=none,ml=none" 2>&1)"
printf 'measure func=FILE_CHECK\nappraise fowner=zero\n' >"$T/badpolicy"
expect_match "a bad policy: the file, line and token" "$T/badpolicy: line 2: .*fowner=zero" \
	"$("$UEVMFS" "$S" "$M" -f -o "key=raw:$KEY,policy=$T/badpolicy,securityfs=none,ml=none" 2>&1)"
expect_match "an unknown built-in policy" "policy 'nosuch'" \
	"$("$UEVMFS" "$S" "$M" -f -o "key=raw:$KEY,policy=nosuch,securityfs=none,ml=none" 2>&1)"
expect_rc "a missing source: usage error (2)" 2 "$UEVMFS" "$T/nosuch" "$M" -f
expect_match "not root: refused" 'must run as root' \
	"$(setpriv --reuid=65534 --regid=65534 --clear-groups "$UEVMFS" "$S" "$M" -f 2>&1)"
expect_eq "nothing was mounted by the failed attempts" "" "$(grep " $M " /proc/mounts)"

# ---- exec versus read ---------------------------------------------------------------
printf 'appraise func=BPRM_CHECK\n' >"$T/bprm-policy"
echo 'echo tampered' >>"$S/prog"
ufs_mount "$S" "$M" "key=raw:$KEY,policy=$T/bprm-policy,ml=none,audit_log=$T/audit.log,nosyslog" || exit 1
check "BPRM_CHECK-only policy: the changed program can be read" \
	bash -c 'cat "$1" >/dev/null' _ "$M/prog"
expect_match "BPRM_CHECK-only policy: but not executed" 'Permission denied' "$("$M/prog" 2>&1)"
expect_match "  audited with the cause" ' cause=invalid-hash ' "$(ufs_records invalid-hash "$M/prog")"
ufs_umount "$M"

# ---- a control tree below the mount point ------------------------------------------
out=$(timeout -s KILL 60 "$UEVMFS" "$S" -f -o "key=raw:$KEY,ml=none,securityfs=$S/sec,nosyslog" 2>&1)
rc=$?
[ "$rc" = 2 ] || umount -l "$S" 2>/dev/null	# a hung mount (the old code)
expect_eq "securityfs below the mount point: refused, exit 2 (no hang)" 2 "$rc"
expect_match "  naming the cause" "securityfs=$S/sec: below the mount point" "$out"
expect_eq "  nothing was mounted" "" "$(findmnt -rn -o TARGET | grep -Fx "$S")"

