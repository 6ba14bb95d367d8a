#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 12, adversarial review of uevmd: attacks by a local unprivileged
# user (nobody) while uevmd runs, on what the earlier fixes left, each
# written as the attacker makes it (tests/uevmd_attack_helper.c where a
# shell is not enough).
#
#  1. Forged open flags.  uevmd reads openat2's flags back from the
#     opener's memory (struct open_how), after the kernel copied them: a
#     second thread rewrites them to O_TMPFILE, and an offline-planted
#     setuid-root file, unlinked and opened again through /proc/self/fd
#     (link count 0, as a new O_TMPFILE's), would pass as "new".
#  2. The --supervise keeper's channel.  Its child's pings (WATCHDOG=1)
#     came over an abstract unix socket, "@uevmd-supervisor-PID", that any
#     user sees in /proc/net/unix and can send to: a flood of datagrams
#     filled it, the pings were lost, and the keeper killed a healthy
#     daemon again and again (each restart refuses the opens it had).
#  3. Pending opens: uevmd holds 1024; one user's threads blocked in
#     opens of their own big file took them all, and every other open on
#     the watched filesystem was refused at once (overload).
#  4. Not holes, kept as tests: a tampered binary run through the
#     dynamic loader (ld.so opens it: FILE_CHECK, MAY_READ), a tampered
#     script given to sh (a read), and a tampered binary run through an
#     overlay mounted by the user in a user namespace, its lower layer on
#     the watched filesystem (the opens reach the real inode's filesystem)
#     are refused under a policy that appraises FILE_CHECK.  Under one
#     that appraises BPRM_CHECK only, the first two run: the kernel would
#     need MMAP_CHECK (mmap with PROT_EXEC), which fanotify cannot see
#     (uevmd(8), docs/threat-model.md).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
ID=$(type -P id)
HELPER=$T/attack_helper
chmod 711 "$T"		# nobody reaches the mount, not the key

cc -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -pthread -o "$HELPER" \
	"$TESTS_DIR/uevmd_attack_helper.c" || { fail "the attack helper builds"; exit 1; }
chmod 755 "$HELPER"

make_image 1G || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
mkdir -p "$MNT/home"
chown 65534:65534 "$MNT/home"
mkdir -p "$MNT/bin"
cp "$ID" "$MNT/bin/tool"
printf '#!/bin/sh\necho script ran\n' >"$MNT/bin/script.sh"
chmod 755 "$MNT/bin/script.sh"
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT" >/dev/null || fail "the image is labelled"

# ---- offline: the attacker plants a setuid-root binary in nobody's directory ---------------
cp "$ID" "$MNT/home/planted"
echo "tampered offline" >"$MNT/home/planted.bad"
printf x >>"$MNT/bin/tool"		# a trailing byte: still runs
echo "echo tampered ran" >>"$MNT/bin/script.sh"
# nobody's big sparse file, unlabelled (made while uevmd is stopped: it is
# hashed at each open, for far longer than the deadline, then refused).
setpriv --reuid=65534 --regid=65534 --clear-groups -- truncate -s 64G "$MNT/home/huge"
chown 0:0 "$MNT/home/planted"
chmod 4755 "$MNT/home/planted"

# One worker, which one user may hold whole: the helper keeps it busy with
# a big file of its own while its forged open waits.
# The forged open is decided by appraisal after the big file's hash, not
# by the deadline: a generous one (the default 5 s ran out under load, and
# the open was refused as late, with no missing-hash record).
DEADLINE_MS=60000 write_conf "workers = 1" "worker_share = 1"
start_uevmd || { fail "uevmd starts"; exit 1; }

# ---- 1. openat2 flags rewritten while the open waits ---------------------------------------
"${NOBODY[@]}" truncate -s 512M "$MNT/home/big"
out=$(cd "$MNT/home" && "${NOBODY[@]}" "$HELPER" forge-openat2 "$MNT/home" planted "$MNT/home/big" 2>&1)
expect_match "forged openat2 flags: the planted file's open is refused" "^open: (EACCES|EPERM)$" "$out"
expect_eq "forged openat2 flags: the planted setuid file never runs as root" "" \
	"$(grep -x 0 <<<"$out")"
# The name of a file deleted meanwhile is recorded without readlink's
# " (deleted)", as the kernel's d_absolute_path gives it.
check "  audit: missing-hash for the planted file" \
	log_has "op=appraise_data cause=missing-hash .*name=\"$MNT/home/planted\""

# What must keep working: openat2 by a user, O_TMPFILE and appends.
expect_eq "openat2(O_TMPFILE) by a user makes a file" ok \
	"$(cd "$MNT/home" && "${NOBODY[@]}" "$HELPER" openat2-tmpfile "$MNT/home" "$MNT/home/tmpfile" "made")"
expect_eq "  which then opens" ok "$("${NOBODY[@]}" cat "$MNT/home/tmpfile" >/dev/null 2>&1 && echo ok)"
"${NOBODY[@]}" sh -c "echo one >'$MNT/home/appended'"
expect_eq "openat2(O_WRONLY|O_APPEND) of a user's good file writes" ok \
	"$("${NOBODY[@]}" "$HELPER" openat2-append "$MNT/home/appended" "two")"
expect_eq "  and the changed file opens" "one two" \
	"$("${NOBODY[@]}" cat "$MNT/home/appended" 2>&1 | tr "\n" " ")"

stop_uevmd
json=$("$UEVM" verify -v --json --hmac-key "raw:$T/key" "$MNT/home/tmpfile" "$MNT/home/appended")
expect_eq "offline: the files written with openat2 verify PASS" "pass pass" \
	"$(jq -r '[.results[].status] | join(" ")' <<<"$json")"

# ---- 2. flooding the keeper's socket -------------------------------------------------------------
# A 1 s watchdog (the keeper's own WatchdogSec): a lost ping shows quickly.
write_conf "workers = 1" "worker_share = 1"	# the default deadline again
WATCHDOG_USEC=1000000 start_uevmd --supervise || { fail "uevmd --supervise starts"; exit 1; }
c1=$("$UEVM" status --socket "$SOCK" | sed -n 's/^pid: //p')
# The attacker floods every abstract socket of uevmd it can see, from four
# processes, for four seconds.
"${NOBODY[@]}" timeout 4 /usr/bin/python3 - >"$T/flood.out" 2>&1 <<'EOF'
import os, socket
names = {l.split()[-1] for l in open("/proc/net/unix") if l.split()[-1].startswith("@uevmd")}
print("targets:", " ".join(sorted(names)) or "none", flush=True)
for _ in range(2):
    os.fork()
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setblocking(False)
while names:
    for n in names:
        try:
            s.sendto(b"WATCHDOG=1", b"\0" + n[1:].encode())
        except BlockingIOError:
            pass
EOF
c2=$("$UEVM" status --socket "$SOCK" | sed -n 's/^pid: //p')
expect_eq "a user's flood of the keeper's socket: the daemon keeps running" "$c1" "$c2"
expect_eq "  the keeper killed nothing" "" "$(grep "killing it" "$T/uevmd.out")"
expect_eq "  and the tampered file is still refused" EPERM "$(open_result "$MNT/home/planted.bad")"
stop_uevmd

# ---- 3. one user's pending opens take every slot ---------------------------------------------------
# uevmd keeps 1024 pending opens.  nobody opens one big sparse file of its
# own from 1100 threads: one hashes it, the others wait for that hash.
# Every slot taken, everyone else's opens were refused at once.  (With
# the one worker of this configuration, which one user may hold whole: the
# others' opens also need it back, in time.)
start_uevmd || { fail "uevmd starts"; exit 1; }
"${NOBODY[@]}" /usr/bin/python3 - "$MNT/home/huge" >"$T/slots.out" 2>&1 <<'EOF' &
import os, sys, threading
threading.stack_size(64 * 1024)
def opener():
    try:
        os.close(os.open(sys.argv[1], os.O_RDONLY))
    except OSError:
        pass
ts = [threading.Thread(target=opener) for _ in range(1100)]
for t in ts:
    t.start()
print("started", flush=True)
for t in ts:
    t.join()
EOF
flood=$!
# Wait until the threads are all blocked in their opens (or uevmd refused
# some at once: the overload counter moves).
wait_for "$WAIT_S" "the 1100 opener threads to start" grep -q started "$T/slots.out"
flooded() { [ "$(status_field queued)" -ge 1000 ] || [ "$(status_field overload)" -gt 0 ]; }
wait_for "$WAIT_S" "1000 opens queued or the overload counter moving" flooded
expect_eq "one user's 1100 pending opens: root's open of a good file still works" ok \
	"$(open_result "$MNT/home/appended")"
expect_eq "  and root's tampered file is refused" EPERM "$(open_result "$MNT/home/planted.bad")"
check "  the flood's refusal is logged, naming the user" \
	log_has "user 65534 has [0-9]+ opens waiting.*refused"
kill "$flood" 2>/dev/null
wait "$flood" 2>/dev/null
stop_uevmd

# ---- 4. other ways to run a tampered file ------------------------------------------------------------
start_uevmd || { fail "uevmd starts"; exit 1; }
LDSO=$(readlink -f /lib64/ld-linux-x86-64.so.2)
out=$("${NOBODY[@]}" "$LDSO" "$MNT/bin/tool" -u 2>&1)
expect_match "a tampered binary run through ld.so: refused" "Operation not permitted|Permission denied" "$out"
check "  audit: invalid-hash for it (FILE_CHECK)" \
	log_has "cause=invalid-hash .*name=\"$MNT/bin/tool\""
out=$("${NOBODY[@]}" sh "$MNT/bin/script.sh" 2>&1)
expect_match "a tampered script given to sh: refused" "Operation not permitted|Permission denied" "$out"
out=$("${NOBODY[@]}" unshare -Urm sh -c '
	mount -t tmpfs t "$1" && mkdir "$1/u" "$1/w" "$1/o" &&
	mount -t overlay overlay -o "lowerdir=$2,upperdir=$1/u,workdir=$1/w" "$1/o" || exit 9
	"$1/o/tool" -u' sh "$MNT/home" "$MNT/bin" 2>&1)
expect_match "a tampered binary run through a user's overlay (lower layer watched): refused" \
	"Operation not permitted|Permission denied" "$out"
stop_uevmd

# The documented limit: with a policy that appraises only BPRM_CHECK (the
# kernel's would add MMAP_CHECK, which fanotify cannot see), the loader
# maps the tampered binary unappraised.
printf 'appraise func=BPRM_CHECK\n' >"$T/policy"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_match "BPRM_CHECK only: the tampered binary run directly is refused" \
	"Operation not permitted|Permission denied" "$("${NOBODY[@]}" "$MNT/bin/tool" -u 2>&1)"
expect_eq "BPRM_CHECK only: through ld.so it runs (no MMAP_CHECK in userspace: documented)" \
	65534 "$("${NOBODY[@]}" "$LDSO" "$MNT/bin/tool" -u 2>&1)"
stop_uevmd
write_policy
