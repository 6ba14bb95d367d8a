#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmd end to end, online changes: files edited, truncated, created,
# copied, renamed over, chmod'ed, chown'ed and relabelled while uevmd runs
# open afterwards, and after uevmd stops `uevm verify` (and evmctl, for the
# HMAC) finds every one of them PASS: the notification group rewrote their
# labels.  What failed stays failing: an online change does not launder an
# offline-tampered file.  The fast path: a passed file is not seen again
# until it is written.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"
source "$TESTS_DIR/ref_evm.sh"

command -v python3 >/dev/null || { fail "python3 is installed"; exit 1; }
make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
write_conf

D=$MNT/data
mkdir -p "$D" "$MNT/off"
for f in append overwrite trunc chmod chown selinux loop merged concurrent \
	 renamed_over editor marked held; do
	printf 'original %s\n' "$f" >"$D/$f"
done
printf 'offline victim\n' >"$MNT/off/content"
printf 'offline victim\n' >"$MNT/off/owner"
printf 'offline victim\n' >"$MNT/off/never_opened"
"$UEVM" label -r --hmac-key "raw:$T/key" "$D" "$MNT/off"
expect_eq "the image is labelled" 0 $?
# offline tampering, before uevmd starts
echo evil >>"$MNT/off/content"
chown 1234 "$MNT/off/owner"

start_uevmd || { fail "uevmd starts"; exit 1; }

# Files the tests change are first opened (their status becomes known).
for f in "$D"/*; do cat "$f" >/dev/null || fail "opens before the edits: $f"; done

# ---- the fast path ----------------------------------------------------------
e0=$(status_field events)
cat "$D/marked" >/dev/null; cat "$D/marked" >/dev/null; cat "$D/marked" >/dev/null
expect_eq "a passed file is not seen again (ignore mark)" "$e0" "$(status_field events)"
echo more >>"$D/marked"
expect_eq "after a write it opens" ok "$(open_result "$D/marked")"
check "  and was appraised again (the write cleared the mark)" \
	test "$(status_field events)" -gt "$e0"
check "uevm status counts ignore marks" test "$(status_field marks_added)" -gt 0

# ---- legitimate changes -----------------------------------------------------
echo appended >>"$D/append"
expect_eq "append, then read at once" ok "$(open_result "$D/append")"
echo replaced >"$D/overwrite"
expect_eq "overwrite (O_TRUNC), then read" ok "$(open_result "$D/overwrite")"
: >"$D/trunc"
expect_eq "truncate by open, then read" ok "$(open_result "$D/trunc")"
chmod 600 "$D/chmod"
expect_eq "chmod, then read" ok "$(open_result "$D/chmod")"
chown 1000:1000 "$D/chown"
expect_eq "chown, then read" ok "$(open_result "$D/chown")"
setfattr -n security.selinux -v system_u:object_r:etc_t:s0 "$D/selinux"
expect_eq "setfattr security.selinux, then read" ok "$(open_result "$D/selinux")"
bad=0
for i in $(seq 1 20); do
	echo "line $i" >>"$D/loop"
	[ "$(open_result "$D/loop")" = ok ] || bad=$((bad + 1))
done
expect_eq "20 appends, each read right after: all open" 0 "$bad"
# One process closing the same file many times (fanotify merges such
# close events): the label still follows the last content.
python3 - "$D/merged" <<'EOF'
import os, sys
for i in range(50):
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"x" * 100)
    os.close(fd)
EOF
expect_eq "50 quick write/close rounds by one process, then read" ok "$(open_result "$D/merged")"
# Two writers: the label is rewritten when the last one closes.
exec 7>>"$D/concurrent"
echo "first writer" >>"$D/concurrent"
echo "still open" >&7
exec 7>&-
expect_eq "two writers, the last closed: read" ok "$(open_result "$D/concurrent")"
# Read while a writer still holds the file open and has changed it (the
# kernel keeps the status until the last close; uevmd relabels first).
exec 8>>"$D/held"
echo "written, still open" >&8
expect_eq "read while the writer is still open" ok "$(open_result "$D/held")"
echo "more, still open" >&8
expect_eq "  again after more writes" ok "$(open_result "$D/held")"
exec 8>&-
expect_eq "  and after the writer closed" ok "$(open_result "$D/held")"
# New files, directories, copies, renames.
echo "brand new" >"$D/new"
expect_eq "a new file opens" ok "$(open_result "$D/new")"
touch "$D/empty_new"
expect_eq "a new empty file opens" ok "$(open_result "$D/empty_new")"
mkdir "$D/sub"
echo nested >"$D/sub/file"
expect_eq "a new file in a new directory opens" ok "$(open_result "$D/sub/file")"
cp "$(type -P true)" "$D/true"
expect_eq "a binary copied in runs" ok "$(exec_result "$D/true")"
echo "replacement" >"$D/replacement.tmp"
mv "$D/replacement.tmp" "$D/renamed_over"
expect_eq "renamed over an old file: opens" ok "$(open_result "$D/renamed_over")"
python3 - "$D/editor" <<'EOF'
import os, sys
p = sys.argv[1]
tmp = p + ".swp"
with open(tmp, "w") as f:
    f.write("edited by an editor\n")
    f.flush()
    os.fsync(f.fileno())
os.rename(tmp, p)
EOF
expect_eq "an editor's write-and-rename: opens" ok "$(open_result "$D/editor")"
cp "$D/append" "$D/copy"
chmod 640 "$D/copy"
expect_eq "cp then chmod: opens" ok "$(open_result "$D/copy")"

# Many new files at once: 4 threads each create, append to and read back
# 100 files (the opener's flags are read while it may not yet sleep).
mkdir "$D/many"
out=$(python3 - "$D/many" <<'EOF'
import os, sys, threading
fails = []
def work(t):
    for i in range(100):
        p = "%s/t%d_%d" % (sys.argv[1], t, i)
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.write(fd, b"first\n"); os.close(fd)
            fd = os.open(p, os.O_WRONLY | os.O_APPEND); os.write(fd, b"second\n"); os.close(fd)
            open(p).read()
        except OSError as e:
            fails.append(str(e))
ts = [threading.Thread(target=work, args=(t,)) for t in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print(len(fails), *fails[:3])
EOF
)
expect_eq "400 files created, appended and read by 4 threads at once: no refusal" 0 "$out"

# ---- no laundering ------------------------------------------------------------
expect_eq "offline-tampered content: refused" EPERM "$(open_result "$MNT/off/content")"
chmod 600 "$MNT/off/content"
expect_eq "  still refused after an online chmod" EPERM "$(open_result "$MNT/off/content")"
expect_eq "  and cannot be opened for writing" 1 \
	"$( (echo more >>"$MNT/off/content") 2>/dev/null; echo $?)"
expect_eq "offline-changed owner: refused" EPERM "$(open_result "$MNT/off/owner")"
chown 4321 "$MNT/off/owner"
expect_eq "  still refused after an online chown" EPERM "$(open_result "$MNT/off/owner")"
check "  audit: the label was not updated (op=update_metadata cause=fail)" \
	log_has "op=update_metadata cause=fail .*name=\"$MNT/off/owner\""
# A file whose status was never seen: no pre-change status, no new HMAC.
chmod 600 "$MNT/off/never_opened"
expect_eq "chmod of a file not seen since uevmd started: refused afterwards" EPERM \
	"$(open_result "$MNT/off/never_opened")"
check "  audit: op=update_metadata cause=unknown" \
	log_has "op=update_metadata cause=unknown .*name=\"$MNT/off/never_opened\""

check "uevm status counts the attribute changes relabelled" test "$(status_field relabelled)" -gt 0
check "uevm status counts the new files" test "$(status_field created)" -gt 0
check "uevm status counts the refused relabels (owner, never_opened)" test "$(status_field refused)" -ge 2
stop_uevmd

# ---- offline check with the independent verifier ---------------------------------
legit=$(find "$D" -type f | sort)
json=$("$UEVM" verify -v --json --hmac-key "raw:$T/key" $legit)
expect_eq "every legitimately changed file verifies PASS" "" \
	"$(jq -r '.results[] | select(.ok | not) | "\(.path) \(.status) \(.cause)"' <<<"$json")"
expect_eq "  ($(wc -l <<<"$legit") files)" "$(wc -l <<<"$legit")" "$(jq '.results | length' <<<"$json")"
# The labels of a few of them, recomputed from the kernel's recipe with
# openssl and coreutils (tests/ref_evm.sh), not by uevm.
UUID=$(blkid -s UUID -o value "$T/img")
ref_ok=0
for f in "$D/chmod" "$D/chown" "$D/selinux" "$D/append" "$D/new" "$D/merged" "$D/sub/file"; do
	ima="0404$(openssl dgst -sha256 -r "$f" | cut -d' ' -f1)"
	evm="02$(ref_evm_hmac "$T/key" "$f" "$(ext4_generation "$f")" "$UUID")"
	if [ "$(xattr_hex security.ima "$f")" = "$ima" ] &&
	   [ "$(xattr_hex security.evm "$f")" = "$evm" ]; then
		ref_ok=$((ref_ok + 1))
	else
		echo "labels of $f: ima $(xattr_hex security.ima "$f") want $ima," \
		     "evm $(xattr_hex security.evm "$f") want $evm"
	fi
done
expect_eq "security.ima = openssl sha256 and security.evm = reference HMAC (7 files)" 7 "$ref_ok"
json=$("$UEVM" verify --json --hmac-key "raw:$T/key" "$MNT"/off/*)
expect_eq "the offline-tampered files still fail" 3 \
	"$(jq '[.results[] | select(.ok | not)] | length' <<<"$json")"
