#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Symlinks planted in SOURCE must not reach SOURCE itself (issue 12, item 5).
# An offline attacker replaces a labelled program of SOURCE by a symlink to
# an unlabelled file elsewhere in SOURCE (absolute, ../ and /proc/self/root
# forms).  Through the mount the link must not resolve to SOURCE outside
# uevmfs:
#  - mounted over SOURCE itself (uevmfs DIR DIR, and the one-argument
#    form uevmfs DIR): the link resolves through the mount, so the payload
#    is appraised and refused (missing-hash), audited by its name;
#  - mounted elsewhere: READLINK of a link whose target lands in SOURCE is
#    refused with EACCES and audited (op=follow_link cause=target-in-source);
#  - over SOURCE, a link through uevmfs's own /proc/PID/fd/N (SOURCE
#    beneath the mount), planted once the pid is known (through a bind
#    mount of SOURCE made before, standing in for the offline write), is
#    refused at READLINK and audited (cause=target-through-proc), whether
#    absolute, climbing to /proc with ../, or out of /proc/thread-self (an
#    attack review ran the payload that way).  Through stock symlinks
#    (/dev/fd/.., /var/run/..) the text shows no /proc: there the kernel
#    refuses to run it, since uevmfs holds SOURCE through a private
#    noexec copy of its mount (its descriptors run nothing, not even a
#    labelled program).  The caller's own /proc/self/fd stays followable;
#  - a file uevmfs opens itself in SOURCE (an audit log there: its content
#    the offline attacker's) is reopened through the copy before the mount,
#    so that /proc/PID/fd/N maps nothing executable (a review loaded a
#    library planted as the audit log that way), and records still reach it;
#  - the payload by its own name is refused as before, links that stay in
#    the tree work, and `uevm verify` warns about links that leave the tree.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S/bin" "$S/other" "$M"
printf '#!/bin/sh\necho labelled program\n' >"$S/bin/prog"
printf '#!/bin/sh\necho labelled program\n' >"$S/bin/prog2"
printf '#!/bin/sh\necho labelled program\n' >"$S/bin/prog3"
printf '#!/bin/sh\necho good\n' >"$S/other/good"
chmod 755 "$S/bin/prog" "$S/bin/prog2" "$S/bin/prog3" "$S/other/good"
ln -s ../other/good "$S/bin/inside"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
expect_rc "the tree is labelled and verifies" 0 "$UEVM" verify -r --hmac-key "raw:$KEY" "$S"

# ---- the offline attack ---------------------------------------------------------------
printf '#!/bin/sh\necho PAYLOAD RAN\n' >"$S/other/payload"
chmod 755 "$S/other/payload"
ln -sfn "$S/other/payload" "$S/bin/prog"			# absolute
ln -sfn "../../$(basename "$S")/other/payload" "$S/bin/prog2"	# ../ out and back in
ln -sfn "/proc/self/root$S/other/payload" "$S/bin/prog3"	# a magic link
OPTS="key=raw:$KEY,ml=none,audit_log=$T/audit.log,nosyslog"

# ---- uevm verify reports the links --------------------------------------------------
out=$("$UEVM" verify -r --hmac-key "raw:$KEY" "$S" 2>&1)
rc=$?
expect_match "verify: the absolute link is reported" \
	"^WARN $S/bin/prog: symlink to '$S/other/payload' leaves the tree \\(absolute target\\)" "$out"
expect_match "verify: the ../ link is reported" \
	"^WARN $S/bin/prog2: symlink to '\\.\\./\\.\\./src/other/payload' leaves the tree \\(climbs out of $S\\)" "$out"
expect_match "verify: the /proc link is reported" "^WARN $S/bin/prog3: " "$out"
expect_eq "verify: a link that stays in the tree is not reported" "" \
	"$(grep -F "$S/bin/inside" <<<"$out")"
expect_match "verify: the summary counts the warnings" "^  warnings +3$" "$out"
expect_eq "verify: the unlabelled payload fails the run (exit 1)" 1 "$rc"
json=$("$UEVM" verify -r --json --hmac-key "raw:$KEY" "$S" 2>/dev/null)
expect_eq "verify --json: the link carries the warning and its target" \
	"symlink-leaves-tree $S/other/payload" \
	"$(jq -r --arg p "$S/bin/prog" '.results[] | select(.path == $p) | "\(.warning) \(.target)"' <<<"$json")"
expect_eq "verify --json: summary.warnings" 3 "$(jq .summary.warnings <<<"$json")"
mkdir -p "$T/clean/sub"
echo x >"$T/clean/sub/f"
ln -s ../sub/f "$T/clean/sub/rel"
ln -s /etc/passwd "$T/clean/abs"
"$UEVM" label -r --hmac-key "raw:$KEY" "$T/clean" >/dev/null
out=$("$UEVM" verify -r --hmac-key "raw:$KEY" "$T/clean" 2>&1)
expect_eq "verify: a warning alone keeps exit 0" 0 $?
expect_match "verify: ... and is printed without -v" "^WARN $T/clean/abs: " "$out"

# ---- mounted elsewhere: READLINK refuses targets in SOURCE ---------------------------------
ufs_mount "$S" "$M" "$OPTS" || exit 1
for p in prog:target-in-source prog2:target-in-source prog3:target-through-proc; do
	cause=${p#*:}
	p=${p%:*}
	out=$("$M/bin/$p" 2>&1)
	expect_match "elsewhere: exec of the $p link is refused" "Permission denied" "$out"
	expect_eq "elsewhere: the payload did not run through $p" "" "$(grep PAYLOAD <<<"$out")"
	expect_match "elsewhere: audit record for $p (op=follow_link cause=$cause)" \
		"op=follow_link cause=$cause" "$(ufs_records "$cause" "$M/bin/$p")"
done
expect_match "elsewhere: readlink(2) itself fails with EACCES" "Permission denied" \
	"$(python3 -c 'import os, sys; os.readlink(sys.argv[1])' "$M/bin/prog" 2>&1)"
expect_match "elsewhere: the payload by its own name is refused" "Permission denied" \
	"$("$M/other/payload" 2>&1)"
expect_match "elsewhere: ... and audited (missing-hash)" "op=appraise_data" \
	"$(ufs_records missing-hash "$M/other/payload")"
expect_eq "elsewhere: a link inside the tree works" "good" "$("$M/bin/inside")"
ln -s "$S/other/good" "$M/bin/new-into-source"
expect_match "elsewhere: a link into SOURCE made through the mount is refused too" \
	"Permission denied" "$(cat "$M/bin/new-into-source" 2>&1)"
ufs_umount "$M"

# log mode: allowed, still audited
: >"$T/audit.log"
ufs_mount "$S" "$M" "$OPTS,mode=log" || exit 1
expect_eq "mode=log: the link is followed" "$S/other/payload" "$(readlink "$M/bin/prog")"
expect_match "mode=log: ... and audited" "cause=target-in-source" \
	"$(ufs_records target-in-source "$M/bin/prog")"
ufs_umount "$M"

# ---- over SOURCE itself: SOURCE is not reachable, links resolve through uevmfs ------------
: >"$T/audit.log"
mkdir -p "$T/raw"
mount --bind "$S" "$T/raw" || fail "a bind mount of SOURCE"
on_exit "umount '$T/raw' 2>/dev/null"
ufs_mount "$S" "$S" "$OPTS" || exit 1
check "over SOURCE: mounted on SOURCE itself" ufs_mounted "$S" fuse.uevmfs
for p in prog prog2 prog3; do
	out=$("$S/bin/$p" 2>&1)
	expect_match "over SOURCE: exec through the $p link is refused" "Permission denied" "$out"
	expect_eq "over SOURCE: the payload did not run through $p" "" "$(grep PAYLOAD <<<"$out")"
done
expect_match "over SOURCE: the payload was appraised through the mount (audited by name)" \
	"op=appraise_data" "$(ufs_records missing-hash "$S/other/payload")"
expect_eq "over SOURCE: links are plain (readlink works)" "$S/other/payload" "$(readlink "$S/bin/prog")"
expect_eq "over SOURCE: a good program still runs" "good" "$("$S/bin/inside")"
# uevmfs's own descriptors of SOURCE, which lead beneath the mount.
fdn=
for l in /proc/"$UFS_PID"/fd/*; do
	[ -e "$l/other/good" ] && { fdn=${l##*/}; break; }
done
check "over SOURCE: uevmfs holds a descriptor of SOURCE (fd $fdn)" test -n "$fdn"
up=$(realpath --relative-to="$S/bin" /)
ln -s "/proc/$UFS_PID/fd/$fdn/other/payload" "$T/raw/bin/prog4"
ln -s "$up/proc/$UFS_PID/fd/$fdn/other/payload" "$T/raw/bin/prog5"
ln -s "/proc/thread-self/../../../$UFS_PID/fd/$fdn/other/payload" "$T/raw/bin/prog6"
for p in prog4 prog5 prog6; do
	out=$("$S/bin/$p" 2>&1)
	expect_match "over SOURCE: exec of the $p link through uevmfs's fd is refused" \
		"Permission denied" "$out"
	expect_eq "over SOURCE: the payload did not run through $p" "" "$(grep PAYLOAD <<<"$out")"
	expect_match "over SOURCE: audit record for $p (op=follow_link cause=target-through-proc)" \
		"op=follow_link cause=target-through-proc" "$(ufs_records target-through-proc "$S/bin/$p")"
done
expect_eq "over SOURCE: links without /proc are not looked at, still plain" \
	"../other/good" "$(readlink "$S/bin/inside")"
check "fixture: /dev/fd and /var/run are symlinks (to /proc/self/fd, /run)" \
	test -L /dev/fd -a -L /var/run
ln -s "/dev/fd/../../$UFS_PID/fd/$fdn/other/payload" "$T/raw/bin/prog7"
ln -s "/var/run/../proc/$UFS_PID/fd/$fdn/other/payload" "$T/raw/bin/prog8"
for p in prog7 prog8; do
	out=$("$S/bin/$p" 2>&1)
	expect_match "over SOURCE: the $p link through a stock symlink: the kernel refuses the run" \
		"Permission denied" "$out"
	expect_eq "over SOURCE: the payload did not run through $p" "" "$(grep PAYLOAD <<<"$out")"
done
expect_match "over SOURCE: uevmfs's descriptor runs not even a labelled program (noexec copy)" \
	"Permission denied" "$("/proc/$UFS_PID/fd/$fdn/other/good" 2>&1)"
expect_eq "over SOURCE: ... which runs through the mount" "good" "$("$S/other/good")"
ln -s /proc/self/fd "$T/raw/fdlink"
check "over SOURCE: a link to the caller's own /proc/self/fd is followed" \
	test -e "$S/fdlink/0"
fusermount3 -u "$S"
wait "$UFS_PID"
expect_eq "over SOURCE: uevmfs exits 0 after the unmount" 0 $?

# uevmfs DIR: one argument means DIR DIR.  Started in DIR with a directory
# of it open as fd 7: its working directory and that fd would lead around
# the mount (/proc/PID/cwd, /proc/PID/fd/7) as its own descriptors did;
# it leaves the one and reopens the other through the copy.
: >"$T/audit.log"
(cd "$S" && exec 7<"$S/other" && exec "$UEVMFS" "$S" -f -o "$OPTS,securityfs=none") \
	>>"$T/uevmfs.stderr" 2>&1 &
UFS_PID=$!
UFS_PIDS+=("$UFS_PID")
UFS_MOUNTS+=("$S")
wait_quiet "$WAIT_S" ufs_up_or_gone "$S" "$UFS_PID"
check "uevmfs DIR: mounted over DIR" ufs_mounted "$S" fuse.uevmfs
expect_match "uevmfs DIR: the planted link is refused" "Permission denied" "$("$S/bin/prog" 2>&1)"
expect_match "uevmfs DIR: audited by the payload's name" "op=appraise_data" \
	"$(ufs_records missing-hash "$S/other/payload")"
expect_eq "uevmfs DIR: its working directory is / once mounted" "/" \
	"$(readlink "/proc/$UFS_PID/cwd")"
check "uevmfs DIR: the inherited fd 7 no longer leads into SOURCE itself" \
	test "$(readlink "/proc/$UFS_PID/fd/7")" != "$S/other"
expect_match "uevmfs DIR: ... nothing runs through it (reopened on the copy)" \
	"Permission denied|No such file" "$("/proc/$UFS_PID/fd/7/payload" 2>&1)"
ln -s "/dev/fd/../../$UFS_PID/cwd/other/payload" "$T/raw/bin/prog9"
out=$("$S/bin/prog9" 2>&1)
expect_eq "uevmfs DIR: the payload did not run through its cwd" "" "$(grep PAYLOAD <<<"$out")"
expect_match "uevmfs DIR: ... the link leads nowhere" "No such file or directory|Permission denied" "$out"
fusermount3 -u "$S"
wait "$UFS_PID"
expect_eq "uevmfs DIR: exits 0 after the unmount" 0 $?

# ---- a file uevmfs opens itself in SOURCE: the audit log ---------------------------
mkdir -p "$S/log"
ufs_mount "$S" "$S" "key=raw:$KEY,ml=none,audit_log=$S/log/audit.log,nosyslog" || exit 1
check "audit log in SOURCE: mounted over SOURCE" ufs_mounted "$S" fuse.uevmfs
"$S/other/payload" >/dev/null 2>&1
afd=
for l in /proc/"$UFS_PID"/fd/*; do
	case $(readlink "$l") in */log/audit.log) afd=${l##*/} ;; esac
done
expect_eq "audit log in SOURCE: uevmfs's descriptor of it is on the copy" "/log/audit.log" \
	"$(readlink "/proc/$UFS_PID/fd/$afd")"
expect_match "audit log in SOURCE: it cannot be mapped executable through /proc/PID/fd" \
	"PermissionError" "$(python3 -c 'import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
mmap.mmap(fd, 1, prot=mmap.PROT_READ | mmap.PROT_EXEC)
print("MAPPED")' "/proc/$UFS_PID/fd/$afd" 2>&1)"
check "audit log in SOURCE: records still reach it" \
	grep -q "cause=missing-hash" "$T/raw/log/audit.log"
ufs_umount "$S"

