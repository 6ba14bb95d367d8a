#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 13, item 4: which path a measurement records (uevmfs(8), uevmd(8)).
# A runtime policy matches entries by path, so the rule must be known:
#   uevmfs: MOUNTPOINT/x, the path the application opened - over SOURCE
#     itself, on a separate mount point and with fastopen alike; a bind
#     mount of the mount still records MOUNTPOINT/x (FUSE does not say
#     which path the caller used); -o measure_path=source records SOURCE/x
#     in measurements and audit records.
#   uevmd: the path the file was opened by, as the kernel's IMA records it:
#     through a bind mount, in another mount namespace (that namespace's
#     path); an unlinked file without readlink's " (deleted)".
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
printf 'measure func=FILE_CHECK mask=MAY_READ\nappraise func=FILE_CHECK\n' >"$T/policy"
S=$T/src
mkdir -p "$S"
for f in a b c d e; do echo "file $f" >"$S/$f"; done
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
echo "no label" >"$S/bad"
C=$T/sec/integrity
OPTS="key=raw:$KEY,policy=$T/policy,ml=memory,securityfs=$T/sec,audit_log=$T/audit.log,nosyslog,noauditd"
names() { awk '$5 != "boot_aggregate" { print $5 }' "$C/ima/ascii_runtime_measurements" | tr '\n' ' '; }
# reopen_unlinked PATH: open PATH with O_PATH, unlink it, then open it for
# reading through /proc/self/fd: the first open that is measured is of an
# unlinked file.
reopen_unlinked() {
	python3 - "$1" <<-'EOF'
	import os, sys
	fd = os.open(sys.argv[1], os.O_PATH)
	os.unlink(sys.argv[1])
	r = os.open("/proc/self/fd/%d" % fd, os.O_RDONLY)
	os.read(r, 100)
	EOF
}

# ---- uevmfs on a separate mount point ----------------------------------------------
M=$T/mnt
ufs_mount "$S" "$M" "$OPTS" || exit 1
cat "$M/a" >/dev/null
mkdir -p "$T/bind"
mount --bind "$M" "$T/bind"
cat "$T/bind/b" >/dev/null
cp "$S/d" "$S/d.keep"
reopen_unlinked "$M/d"
cat "$M/bad" >/dev/null 2>&1
umount "$T/bind"
expect_eq "separate mount point: MOUNTPOINT paths (a bind mount of it too; unlinked without ' (deleted)')" \
	"$M/a $M/b $M/d $M/bad " "$(names)"
check "  the audit record names MOUNTPOINT/bad" ufs_records missing-hash "$M/bad"
ufs_umount "$M"
mv "$S/d.keep" "$S/d"

# ---- -o measure_path=source -----------------------------------------------------------
: >"$T/audit.log"
ufs_mount "$S" "$M" "$OPTS,measure_path=source" || exit 1
cat "$M/a" >/dev/null
cat "$M/bad" >/dev/null 2>&1
expect_eq "measure_path=source: SOURCE paths" "$S/a $S/bad " "$(names)"
check "  the audit record names SOURCE/bad" ufs_records missing-hash "$S/bad"
ufs_umount "$M"

# ---- fastopen ---------------------------------------------------------------------------
ufs_mount "$S" "$M" "$OPTS,fastopen" || exit 1
cat "$M/c" >/dev/null
expect_eq "fastopen: MOUNTPOINT paths" "$M/c " "$(names)"
ufs_umount "$M"

# ---- over SOURCE itself: the two are the same ----------------------------------------
ufs_mount "$S" "$S" "$OPTS" || exit 1
cat "$S/e" >/dev/null
expect_eq "over SOURCE: its own paths" "$S/e " "$(names)"
ufs_umount "$S"

out=$("$UEVMFS" "$S" "$M" -f -o "measure_path=both,securityfs=none,ml=none" 2>&1)
rc=$?
expect_eq "measure_path=both is refused (exit 2)" 2 "$rc"
expect_match "  naming the option and the values" "measure_path=both: not 'mount' or 'source'" "$out"

# ---- uevmd ------------------------------------------------------------------------------
source "$TESTS_DIR/uevmd_lib.sh"
make_image || { fail "loop-mounted ext4 image"; exit 1; }
printf 'measure func=FILE_CHECK mask=MAY_READ\n' >"$T/dpolicy"
POLICY=$T/dpolicy KEYSPEC=raw:$KEY write_conf "measurement_list = $T/dml"
mkdir -p "$MNT/d" "$T/dbind" "$T/nsbind"
for f in f g h u; do echo "uevmd $f" >"$MNT/d/$f"; done
start_uevmd || { fail "uevmd starts"; exit 1; }
cat "$MNT/d/f" >/dev/null
mount --bind "$MNT/d" "$T/dbind"
cat "$T/dbind/g" >/dev/null
umount "$T/dbind"
unshare -m --propagation private sh -c "mount --bind '$MNT/d' '$T/nsbind' && cat '$T/nsbind/h' >/dev/null"
reopen_unlinked "$MNT/d/u"
expect_eq "uevmd: the opened path (a bind mount, another namespace's bind mount, unlinked without ' (deleted)')" \
	"$MNT/d/f $T/dbind/g $T/nsbind/h $MNT/d/u " \
	"$("$UEVM" measurements daemon --ascii --socket "$SOCK" | awk '$5 != "boot_aggregate" { print $5 }' | tr '\n' ' ')"
stop_uevmd
