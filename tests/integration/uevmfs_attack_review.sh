#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An adversarial review of uevmfs after issue 12, each finding as the
# attack a local unprivileged user (nobody) makes through the mount:
#  - fastopen: content a user just wrote through the mount is read or
#    executed before uevmfs relabelled it -- from the writer's own
#    descriptor or from the kernel's page cache, which the writes filled.
#    A program nobody writes and runs at once must still meet a policy
#    that asks for signatures (refused, audited), and what root reads
#    right after nobody wrote it must be measured with that content.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"
source "$TESTS_DIR/faultfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S/u" "$M"
chown 65534:65534 "$S/u"
chmod 711 "$T"	# nobody reaches the mount point
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# Whole pages, so that the writes leave them up to date in the page cache.
payload() {	# file text
	{ printf '#!/bin/sh\necho %s\n' "$2"; head -c 8192 /dev/zero | tr '\0' '#'; } |
		head -c 8192 >"$1"
	chmod 644 "$1"
}

# ---- fastopen: written content is checked before it is read or run -------------------------
printf '%s\n' 'appraise func=BPRM_CHECK appraise_type=imasig' \
	'measure func=BPRM_CHECK' 'measure func=FILE_CHECK mask=^MAY_READ' >"$T/sig.policy"
payload "$T/prog" "UNSIGNED PROGRAM RAN"
payload "$T/data" "data nobody wrote"
ufs_mount "$S" "$M" "key=raw:$KEY,ml=$T/ml,audit_log=$T/audit.log,nosyslog,policy=$T/sig.policy,fastopen,write_idle=30" ||
	exit 1
# write, chmod(2) (no stat first: its reply refreshes the kernel's idea
# of the mtime without dropping pages) and execve(2), in one process.
write_run() {	# payload file [mode]
	as_nobody /usr/bin/python3 - "$@" <<'PY' 2>&1
import os, sys
data = open(sys.argv[1], "rb").read()
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, data)
os.close(fd)
if len(sys.argv) > 3:
    os.chmod(sys.argv[2], int(sys.argv[3], 8))
try:
    os.execv(sys.argv[2], [sys.argv[2]])
except OSError as e:
    print("exec:", e.strerror)
PY
}
out=$(write_run "$T/prog" "$M/u/prog" 755)
expect_eq "fastopen: an unsigned program nobody writes, chmods and runs at once is refused" \
	"exec: Permission denied" "$out"
expect_match "fastopen: ... audited by its name (cause=IMA-signature-required)" \
	'op=appraise_data cause=IMA-signature-required' \
	"$(ufs_records IMA-signature-required "$M/u/prog")"
expect_match "fastopen: ... and the same when run again" "Permission denied" \
	"$(as_nobody "$M/u/prog" 2>&1)"
payload "$T/prog2" "UNSIGNED PROGRAM RAN AGAIN"
out=$(write_run "$T/prog2" "$M/u/prog")
expect_eq "fastopen: ... and when nobody overwrites it and runs it (no chmod)" \
	"exec: Permission denied" "$out"

as_nobody sh -c "cat '$T/data' >'$M/u/data'"
expect_eq "fastopen: root reads what nobody has just written" "$(sha256sum <"$T/data")" \
	"$(sha256sum <"$M/u/data")"
expect_match "fastopen: ... and that content is measured" \
	" ima-ng sha256:$(sha256sum "$T/data" | cut -d' ' -f1) $M/u/data\$" \
	"$("$UEVM" measurements show "$T/ml")"

# An ACL changes the mode bits without a SETATTR and without touching the
# mtime: nobody writes a program (mode 644), has it relabelled (fsync),
# reads it (the read passes, its pages stay cached), makes it executable
# with setfacl u::rwx and runs it.  Its pages must be dropped at that
# SETXATTR, as at a chmod, so that the exec is appraised (an attack
# review ran it from the pages).
payload "$T/prog3" "UNSIGNED PROGRAM RAN BY ACL"
out=$(as_nobody /usr/bin/python3 - "$T/prog3" "$M/u/acl" <<'PY' 2>&1
import os, struct, sys
data = open(sys.argv[1], "rb").read()
p = sys.argv[2]
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, data)
os.fsync(fd)
os.close(fd)
assert open(p, "rb").read() == data
# system.posix_acl_access, version 2: user::rwx group::r-- other::r--
acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, m, 0xffffffff)
                                      for t, m in ((1, 7), (4, 4), (0x20, 4)))
os.setxattr(p, "system.posix_acl_access", acl)
print("mode %o" % (os.stat(p).st_mode & 0o777))
try:
    os.execv(p, [p])
except OSError as e:
    print("exec:", e.strerror)
PY
)
expect_eq "fastopen: a program nobody read, then made executable by setfacl, is refused" \
	"mode 744
exec: Permission denied" "$out"
expect_match "fastopen: ... audited by its name (cause=IMA-signature-required)" \
	'op=appraise_data cause=IMA-signature-required' \
	"$(ufs_records IMA-signature-required "$M/u/acl")"
ufs_umount "$M"

# ---- the control tree: capabilities held only in a user namespace ---------------------------
# /proc/PID/status shows a process's capabilities in its own user
# namespace; the kernel's securityfs asks for them in the initial one.
# root inside a new user namespace (uid 0 mapped to 0: DAC still lets it
# open the root-owned 0600 file) holds CAP_SYS_ADMIN only there.
C=$T/sec
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,audit_log=$T/audit.log,nosyslog,securityfs=$C" || exit 1
expect_match "the control tree: root reads ima/policy" "^appraise" "$(cat "$C/ima/policy")"
expect_match "the control tree: root in a user namespace of its own may not (EPERM, as securityfs)" \
	"Operation not permitted" "$(unshare -Ur cat "$C/ima/policy" 2>&1)"
expect_match "the control tree: nor may nobody in a user namespace of theirs" \
	"Permission denied|Operation not permitted" "$(as_nobody unshare -Ur cat "$C/ima/policy" 2>&1)"
ufs_umount "$M"

# ---- one user cannot hold every worker ------------------------------------------------------
# SOURCE on tests/faultfs.c, whose reads of slow* files wait a second per
# block: hashing them holds a worker without burning the CPU.  nobody
# opens more of them at once than uevmfs has workers; root's read of
# another file must not wait for their hashes.  faultfs logs where each
# read ends: when root's read is served, none of nobody's files may have
# been read to its end (an order of events, not a duration: load slows
# both sides alike).
faultfs_build
B=$T/back
F=$T/ffs
M2=$T/mnt2
SLOW_SIZE=$((2 * 1024 * 1024))
mkdir -p "$B/u" "$M2"
echo "root's file" >"$B/small"
for i in 1 2 3 4 5 6; do head -c "$SLOW_SIZE" /dev/urandom >"$B/u/slow$i"; done
chmod 644 "$B"/u/slow* "$B/small"
: >"$T/ffrules"
faultfs_mount "$T/ffrules" "$B" "$F" --direct-io
"$UEVM" label -r --uuid none --hmac-key "raw:$KEY" "$F" >/dev/null
for i in 1 2 3 4 5 6; do echo "slow slow$i 1000"; done >"$T/ffrules"
ufs_mount "$F" "$M2" "key=raw:$KEY,uuid=none,ml=none,audit_log=$T/audit2.log,nosyslog,max_threads=4" || exit 1
pids=()
for i in 1 2 3 4 5 6; do
	as_nobody cat "$M2/u/slow$i" >/dev/null 2>&1 &
	pids+=($!)
done
# Until every worker hashes one of nobody's files.
slow_hashed() {
	[ "$(awk '$1 == "slow" { print $2 }' "$T/ffrules.hits" 2>/dev/null | sort -u | wc -l)" -ge 4 ]
}
wait_for "$WAIT_S" "four workers in the hashes of nobody's files" slow_hashed
# (the timeout only ends a hang)
out=$(timeout "$WAIT_S" cat "$M2/small" 2>&1)
cp "$T/ffrules.hits" "$T/hits.at-root-read"
expect_eq "while nobody's hashes hold every worker, root's read is served" "root's file" "$out"
expect_eq "... before any of their hashes read its file to the end" "" \
	"$(awk -v size="$SLOW_SIZE" '$1 == "slow" && $4 >= size { print $2 }' "$T/hits.at-root-read" | sort -u)"
check "  (faultfs logs where the reads end)" grep -qE '^slow slow[0-9] \? [0-9]+$' "$T/hits.at-root-read"
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
cancelled() { grep -q 'cause=user-holds-the-workers' "$T/audit2.log" 2>/dev/null; }
wait_quiet "$WAIT_S" cancelled
expect_match "nobody's extra hook calls are cancelled, audited with the file and the user" \
	'uid=65534 .*op=worker_share cause=user-holds-the-workers .*name="'"$M2"'/u/slow' \
	"$(grep -F 'op=worker_share' "$T/audit2.log" | head -n 1)"
# No need to wait out the slow reads: removing the rule ends them.
: >"$T/ffrules"
wait "${pids[@]}" 2>/dev/null
# Before the unmount (which drops releases still queued): every open
# file of nobody's released, their hashes done.  The inode table's O_PATH
# descriptors stay (until the kernel forgets the inodes): not counted.
slow_closed() {
	local fd flags
	for fd in /proc/"$UFS_PID"/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in "$F"/u/slow*) ;; *) continue ;; esac
		flags=$(awk '/^flags:/ { print $2 }' "/proc/$UFS_PID/fdinfo/${fd##*/}" 2>/dev/null)
		[ -n "$flags" ] && [ $((8#$flags & 8#10000000)) = 0 ] && return 1
	done
	return 0
}
wait_for "$WAIT_S" "uevmfs to close nobody's files" slow_closed
ufs_umount "$M2"

# ---- SOURCE reached from before the mount ---------------------------------------------------
# A process whose working directory was in SOURCE when uevmfs mounted over
# it still reaches SOURCE itself: ./bin/tool from there is never checked.
# Nothing can take that back: uevmfs names such processes at start.
S3=$T/src3
mkdir -p "$S3/bin" "$T/sync"
chmod 777 "$T/sync"
printf '#!/bin/sh\necho labelled tool\n' >"$S3/bin/tool"
chmod 755 "$S3/bin/tool"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S3" >/dev/null
echo "echo TAMPERED TOOL" >>"$S3/bin/tool"	# offline
mkfifo -m 666 "$T/sync/go"
as_nobody /usr/bin/python3 - "$S3" "$T/sync" <<'PY' >"$T/sync/out" 2>&1 &
import os, subprocess, sys
os.chdir(sys.argv[1])
open(sys.argv[2] + "/ready", "w").write(str(os.getpid()))
open(sys.argv[2] + "/go").read()
print(subprocess.run(["./bin/tool"], capture_output=True, text=True).stdout, end="")
PY
holder=$!
wait_for "$WAIT_S" "the process in SOURCE to start" test -s "$T/sync/ready"
pid=$(cat "$T/sync/ready")
: >"$T/uevmfs.stderr"
ufs_mount "$S3" "$S3" "key=raw:$KEY,ml=none,audit_log=$T/audit3.log,nosyslog" || exit 1
# The scan runs once the mount stands: wait for its audit record, not for
# the mount alone.
wait_for "$WAIT_S" "uevmfs to audit the process in SOURCE" \
	grep -q "op=mount cause=source-held-open" "$T/audit3.log"
expect_match "a process sitting in SOURCE from before the mount is named at start" \
	"warning: process $pid \\(python3, uid 65534\\) has cwd $S3 in SOURCE from before the mount" \
	"$(cat "$T/uevmfs.stderr")"
expect_match "... and audited (op=mount cause=source-held-open)" \
	"uid=65534 .*op=mount cause=source-held-open .*name=\"$S3\"" "$(cat "$T/audit3.log")"
expect_match "through the mount the tampered tool is refused" "Permission denied" "$("$S3/bin/tool" 2>&1)"
echo go >"$T/sync/go"
wait "$holder"
ufs_umount "$S3"
