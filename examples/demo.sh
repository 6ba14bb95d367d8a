#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The uevm demo (make demo): build a small example tree on a filesystem with
# security.* xattrs, label it, verify it, tamper with it offline in several
# ways, and verify again to show which files failed and why.
#
# Usage: examples/demo.sh path/to/uevm
# Exits 0 when every step behaved as expected (including the second verify
# failing with exit status 1), non-zero otherwise.  Needs root: it writes
# security.* xattrs, changes owners and loop-mounts a small ext4 image.
set -euo pipefail

die() { echo "demo: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 path/to/uevm"
UEVM=$(realpath -e "$1") || die "no uevm binary at '$1' (run make first)"
[ -x "$UEVM" ] || die "$UEVM is not executable"
[ "$(id -u)" -eq 0 ] || die "run me as root: labels live in security.* xattrs"

WORK=$(mktemp -d /var/tmp/uevm-demo.XXXXXX)
MNT=
LOOP=
UFS_MNT=
cleanup() {
	cd /
	# uevmfs (below) first: its source lives on the demo filesystem.
	if [ -n "$UFS_MNT" ]; then
		for m in "$UFS_MNT" "$WORK/security"; do
			if grep -q " $m fuse" /proc/mounts; then fusermount3 -u -z "$m" || true; fi
		done
	fi
	if [ -n "$MNT" ] && mountpoint -q "$MNT"; then umount "$MNT" || true; fi
	if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Output helpers: a section title, a command shown before it runs, a note.
B=$(tput bold 2>/dev/null || true); N=$(tput sgr0 2>/dev/null || true)
[ -t 1 ] || { B=; N=; }
section() { printf '\n%s== %s ==%s\n' "$B" "$*" "$N"; }
show() { printf '$ %s\n' "$*"; }
note() { printf '   %s\n' "$@"; }
problems=0
unexpected() { echo "demo: UNEXPECTED: $*" >&2; problems=$((problems + 1)); }

uevm() { "$UEVM" "$@"; }

# ---------------------------------------------------------------------------
section "A filesystem for the demo"
# A fresh ext4 image gives a real filesystem UUID that EVM binds into every
# HMAC; when loop devices are unavailable (or DEMO_NO_LOOP is set), use
# /var/tmp instead.
FSUUID=$(cat /proc/sys/kernel/random/uuid)
if [ -z "${DEMO_NO_LOOP:-}" ] &&
   truncate -s 16M "$WORK/fs.img" &&
   mkfs.ext4 -q -F -U "$FSUUID" -O ^has_journal "$WORK/fs.img" 2>/dev/null &&
   LOOP=$(losetup --find --show "$WORK/fs.img" 2>/dev/null) &&
   mkdir -p "$WORK/mnt" && mount -t ext4 "$LOOP" "$WORK/mnt" 2>/dev/null; then
	MNT=$WORK/mnt
	BASE=$MNT
	note "16 MiB ext4 image on $LOOP, mounted at $MNT, filesystem UUID $FSUUID"
else
	[ -z "$LOOP" ] || { losetup -d "$LOOP"; LOOP=; }
	BASE=$WORK/fs
	mkdir -p "$BASE"
	FSUUID=
	note "no loop-mounted image (no loop device, or DEMO_NO_LOOP set): using $BASE"
fi
cd "$BASE"

# A throw-away demo key: 32 random bytes in the demo's own directory.
KEY=$WORK/demo-hmac.key
(umask 077 && head -c 32 /dev/urandom >"$KEY")
note "demo HMAC key: $KEY (32 random bytes, deleted at the end)"

# ---------------------------------------------------------------------------
section "The example tree"
mkdir -p demo/bin demo/sbin demo/etc demo/lib demo/share/doc demo/var/log
cat >demo/bin/greet <<'EOF'
#!/bin/sh
# greet: a tiny example program
echo "hello from the uevm demo"
EOF
chmod 755 demo/bin/greet
ln -s greet demo/bin/hello
head -c 8192 /dev/urandom >demo/sbin/greetd
chmod 755 demo/sbin/greetd
printf 'greeting = hello\nloud = no\n' >demo/etc/greet.conf
printf 'Welcome to the uevm demo tree.\n' >demo/etc/motd
printf 'root ALL=(ALL:ALL) ALL\n' >demo/etc/sudoers
chmod 440 demo/etc/sudoers
head -c 65536 /dev/urandom >demo/lib/libgreet.so.1
head -c 32768 /dev/urandom >demo/lib/libutil.so.1
printf 'greet: read me\n' >demo/share/doc/README
printf 'greet 1.0: first release\n' >demo/share/doc/NEWS
printf 'GPL-2.0-or-later\n' >demo/share/doc/COPYING
# /etc gets a security.selinux value (any bytes: no SELinux policy needs to
# be loaded), so that the directory has a protected xattr and thus an HMAC.
DIR_LABELLED=0
if setfattr -n security.selinux -v "system_u:object_r:etc_t:s0" demo/etc 2>/dev/null; then
	DIR_LABELLED=1
fi
find demo | sort | sed 's/^/   /'

# ---------------------------------------------------------------------------
section "Labelling"
# FS_IOC_GETFSUUID (Linux >= 6.5) gives the UUID EVM uses; older kernels
# cannot tell it, so give the image's UUID explicitly there.
UUID_OPT=()
if ! uevm hmac --hmac-key "raw:$KEY" demo/etc/motd >/dev/null 2>&1; then
	if [ -n "$FSUUID" ]; then
		UUID_OPT=(--uuid "$FSUUID")
		note "this kernel cannot report the filesystem UUID: passing --uuid $FSUUID"
	else
		UUID_OPT=(--uuid none)
		note "this kernel cannot report the filesystem UUID: using --uuid none"
	fi
fi
show uevm label -r -v --hmac-key "raw:$KEY" "${UUID_OPT[@]}" demo
uevm label -r -v --hmac-key "raw:$KEY" "${UUID_OPT[@]}" demo || {
	unexpected "uevm label failed"; exit 1; }
note "every regular file now carries security.ima (0x04 0x04 + SHA-256 of the" \
     "content) and security.evm (0x02 + HMAC-SHA1 over the protected xattrs," \
     "inode number, generation, owner, mode and filesystem UUID):"
show getfattr -d -m '^security\.' -e hex demo/etc/motd
getfattr -d -m '^security\.' -e hex demo/etc/motd | sed '/^$/d'
ima=$(getfattr --absolute-names -n security.ima -e hex demo/etc/motd | sed -n 's/^security.ima=0x//p')
sum=$(sha256sum demo/etc/motd | cut -d' ' -f1)
[ "$ima" = "0404$sum" ] || unexpected "security.ima is not 0404 + sha256sum"
note "(the same digest as sha256sum: $sum)"

show uevm verify -r --hmac-key "raw:$KEY" "${UUID_OPT[@]}" demo
rc=0
uevm verify -r --hmac-key "raw:$KEY" "${UUID_OPT[@]}" demo || rc=$?
[ "$rc" -eq 0 ] || unexpected "verify of the fresh labels exited $rc, not 0"
note "exit status $rc: everything passes.  Directories and symlinks without any" \
     "protected xattr count as no_xattrs and carry no security.evm, as in the kernel."

# ---------------------------------------------------------------------------
section "Offline tampering (as if the disk were mounted elsewhere)"
# Each case: the path, the status and cause uevm must report, what was
# done, and the shell commands that do it (shown, then run).
cases=()
tamper() {	# path expected-status-and-cause description commands
	printf '# %s: %s\n' "$1" "$3"
	printf '$ %s\n' "$4"
	eval "$4"
	cases+=("$1|$2|$3")
}
# Print one xattr as 0x... hex, as setfattr -v takes it.
xattr_hex() { getfattr --absolute-names -n "$1" -e hex "$2" | sed -n "s/^$1=//p"; }

tamper demo/bin/greet "fail (invalid-hash)" \
	"one byte of the content changed in place, mtime put back" \
	't=$(stat -c %y demo/bin/greet); printf X | dd of=demo/bin/greet bs=1 seek=30 conv=notrunc status=none; touch -d "$t" demo/bin/greet'
tamper demo/etc/greet.conf "fail (invalid-hash)" \
	"a line appended" \
	'echo "admin = yes" >>demo/etc/greet.conf'
tamper demo/etc/motd "no_label (missing-hash)" \
	"security.ima removed" \
	'setfattr -x security.ima demo/etc/motd'
tamper demo/sbin/greetd "fail (invalid-HMAC)" \
	"mode changed: setuid bit added" \
	'chmod u+s demo/sbin/greetd'
tamper demo/etc/sudoers "fail (invalid-HMAC)" \
	"owner changed to uid 1000" \
	'chown 1000:1000 demo/etc/sudoers'
tamper demo/share/doc/README "fail (invalid-HMAC)" \
	"security.evm copied from share/doc/NEWS (a valid HMAC, for another file)" \
	'setfattr -n security.evm -v "$(xattr_hex security.evm demo/share/doc/NEWS)" demo/share/doc/README'
# cp --preserve=all copies security.ima but skips security.evm (see
# /etc/xattr.conf), so that one is copied by hand.
tamper demo/lib/libgreet.so.1 "fail (invalid-HMAC)" \
	"replaced by a byte-identical copy with the same owner, mode, security.ima and security.evm (a new inode)" \
	'cp --preserve=all demo/lib/libgreet.so.1 demo/lib/new && setfattr -n security.evm -v "$(xattr_hex security.evm demo/lib/libgreet.so.1)" demo/lib/new && mv -f demo/lib/new demo/lib/libgreet.so.1'
if [ "$DIR_LABELLED" = 1 ]; then
	tamper demo/etc "fail (invalid-HMAC)" \
		"directory mode changed to 0777 (it carries security.selinux, hence security.evm)" \
		'chmod 0777 demo/etc'
fi
untouched=(demo/lib/libutil.so.1 demo/share/doc/NEWS demo/share/doc/COPYING)

# ---------------------------------------------------------------------------
section "Verifying the tampered tree"
show uevm verify -r --hmac-key "raw:$KEY" "${UUID_OPT[@]}" demo
rc=0
uevm verify -r --hmac-key "raw:$KEY" "${UUID_OPT[@]}" demo >"$WORK/verify.out" 2>"$WORK/verify.err" || rc=$?
# Worker threads finish in any order: sort the file lines for reading.
grep -v '^Summary\|^  ' "$WORK/verify.out" | LC_ALL=C sort -k2 || true
grep '^Summary\|^  ' "$WORK/verify.out" || true
cat "$WORK/verify.err" >&2
note "exit status $rc (1 = at least one file failed verification)"
[ "$rc" -eq 1 ] || unexpected "verify after tampering exited $rc, not 1"
[ -s "$WORK/verify.err" ] && unexpected "verify printed errors"

section "What each line means"
for c in "${cases[@]}"; do
	IFS='|' read -r path expect what <<<"$c"
	line=$(grep -F "FAIL $path: " "$WORK/verify.out" || true)
	printf '%s\n' "${line:-(no line for $path)}"
	note "<- $what"
	case $expect in
	*invalid-hash*)  note "   the content no longer matches the digest in security.ima" ;;
	*missing-hash*)  note "   a regular file without security.ima has no trusted content hash" ;;
	*invalid-HMAC*)  note "   the HMAC over xattrs and inode metadata no longer matches security.evm" ;;
	esac
	case $line in
	"FAIL $path: $expect"*) ;;
	*) unexpected "$path: wanted '$expect', got '${line:-nothing}'" ;;
	esac
done
nfail=$(grep -c '^FAIL ' "$WORK/verify.out" || true)
[ "$nfail" -eq "${#cases[@]}" ] ||
	unexpected "$nfail files failed, expected exactly ${#cases[@]}"

# The files nobody touched still pass, one by one.
show uevm verify -v --hmac-key "raw:$KEY" "${UUID_OPT[@]}" "${untouched[@]}"
rc=0
uevm verify -v --hmac-key "raw:$KEY" "${UUID_OPT[@]}" "${untouched[@]}" >"$WORK/untouched.out" || rc=$?
grep -v '^Summary\|^  ' "$WORK/untouched.out"
[ "$rc" -eq 0 ] || unexpected "untouched files do not pass (exit $rc)"
for f in "${untouched[@]}"; do
	grep -qxF "OK $f: pass" "$WORK/untouched.out" || unexpected "$f does not pass"
done

# ---------------------------------------------------------------------------
section "Enforcement: the tampered tree mounted through uevmfs"
# uevmfs(8) passes every open through the EVM/IMA hooks: what uevm verify
# found offline is refused at run time, with an audit record.
UEVMFS=$(dirname "$UEVM")/uevmfs
if [ -x "$UEVMFS" ] && [ -c /dev/fuse ] && command -v fusermount3 >/dev/null; then
	UFS_MNT=$WORK/uevmfs
	mkdir -p "$UFS_MNT"
	UFS_OPTS="key=raw:$KEY,audit_log=$WORK/audit.log,ml=$WORK/measurements,securityfs=$WORK/security,nosyslog"
	[ ${#UUID_OPT[@]} -eq 2 ] && UFS_OPTS="$UFS_OPTS,uuid=${UUID_OPT[1]}"
	show uevmfs demo "$UFS_MNT" -o "key=raw:$KEY,audit_log=$WORK/audit.log,..."
	# In the foreground, in the background of this script: its exit is
	# awaited before the demo filesystem is unmounted.
	"$UEVMFS" "$BASE/demo" "$UFS_MNT" -f -o "$UFS_OPTS" 2>"$WORK/uevmfs.err" &
	UFS_PID=$!
	for _ in $(seq 1 100); do
		grep -q " $UFS_MNT fuse.uevmfs " /proc/mounts && break
		kill -0 "$UFS_PID" 2>/dev/null || break
		sleep 0.05
	done
	if grep -q " $UFS_MNT fuse.uevmfs " /proc/mounts; then
		for c in "${cases[@]}"; do
			IFS='|' read -r path expect what <<<"$c"
			rel=${path#demo/}
			[ -f "$UFS_MNT/$rel" ] || continue	# directories: not appraised on access
			show cat "uevmfs/$rel"
			if out=$(cat "$UFS_MNT/$rel" 2>&1 >/dev/null); then
				unexpected "uevmfs let the tampered $rel open"
			else
				note "${out##*: }"
				cause=$(grep -F "name=\"$UFS_MNT/$rel\"" "$WORK/audit.log" |
					sed -n 's/.* op=\([^ ]*\) cause=\([^ ]*\) .*/op=\1 cause=\2/p' | tail -n 1)
				note "audit: ${cause:-(no record)}"
				[ -n "$cause" ] || unexpected "no audit record for $rel"
			fi
		done
		show uevmfs/bin/greet
		if out=$("$UFS_MNT/bin/greet" 2>&1); then
			unexpected "uevmfs ran the tampered program"
		else
			note "${out##*: } (exec of a changed program)"
		fi
		for f in "${untouched[@]}"; do
			show cat "uevmfs/${f#demo/}"
			if cat "$UFS_MNT/${f#demo/}" >/dev/null; then note "opens"
			else unexpected "untouched ${f#demo/} refused through uevmfs"; fi
		done
		show cat security/ima/ascii_runtime_measurements
		sed 's/^/   /' "$WORK/security/ima/ascii_runtime_measurements" 2>/dev/null | head -n 4
		fusermount3 -u "$UFS_MNT" || unexpected "uevmfs did not unmount"
		wait "$UFS_PID" || unexpected "uevmfs exited with an error: $(cat "$WORK/uevmfs.err")"
		note "the control tree (evm, ima/policy, the measurement lists) was at $WORK/security"
	else
		unexpected "uevmfs did not mount the demo tree: $(cat "$WORK/uevmfs.err")"
	fi
else
	note "uevmfs is not built, or FUSE is missing: enforcement demo skipped"
fi

section "Result"
if [ "$problems" -ne 0 ]; then
	echo "demo: $problems unexpected result(s)" >&2
	exit 1
fi
echo "demo: as expected: ${#cases[@]} tampered objects detected, untouched files pass."
echo "demo: cleaning up (unmount, detach the loop device, remove $WORK)"
