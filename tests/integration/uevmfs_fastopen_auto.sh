#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fastopen=auto, the default (issue 17): the no-round-trip open path is
# picked when no rule of the policy depends on the caller or the file's
# owner, and the per-open hooks are kept otherwise; fastopen=on|off force
# either.  Which path serves a mount shows in its behaviour: with
# fastopen the kernel opens a refused file itself and its READ fails,
# per open the open itself fails.  uevmfs also says so on stderr.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S" "$M"
chmod 711 "$T"	# nobody reaches the mount point
echo "labelled content" >"$S/good"
echo "will be tampered" >"$S/bad"
echo "tampered offline later" >"$S/later"
chmod 644 "$S"/*
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
echo "tampered" >>"$S/bad"
printf 'measure func=FILE_CHECK mask=^MAY_READ\nappraise\n' >"$T/file-only.policy"
printf 'appraise func=FILE_CHECK uid=0\n' >"$T/uid.policy"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
OPTS="key=raw:$KEY,ml=none,audit_log=$T/audit.log,nosyslog,noauditd"

# open_then_read PATH: "open-refused", "read-refused" or "read-ok".
open_then_read() {
	python3 - "$1" <<'EOF'
import os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDONLY)
except PermissionError:
    print("open-refused"); sys.exit(0)
try:
    os.read(fd, 4096)
    print("read-ok")
except PermissionError:
    print("read-refused")
EOF
}

# ---- a file-only policy: fastopen is chosen -------------------------------------------------
: >"$T/uevmfs.stderr"
ufs_mount "$S" "$M" "$OPTS,policy=$T/file-only.policy,timeout=0" || exit 1
expect_match "file-only policy: uevmfs says it chose fastopen" \
	"fastopen: on \\(automatic" "$(cat "$T/uevmfs.stderr")"
expect_eq "file-only policy: a tampered file opens (no round trip) but its read is refused" \
	read-refused "$(open_then_read "$M/bad")"
expect_match "... audited at that first read" "op=appraise_data cause=invalid-hash" \
	"$(ufs_records invalid-hash "$M/bad" | tr '\n' ' ')"
expect_eq "file-only policy: a labelled file reads" "labelled content" "$(cat "$M/good")"
expect_eq "file-only policy: the file to tamper reads before" "tampered offline later" \
	"$(cat "$M/later")"
echo "changed behind the mount" >"$S/later"
expect_eq "file-only policy: after an offline change its read is refused" \
	read-refused "$(open_then_read "$M/later")"
# What is refused for root is refused for nobody too: nothing depends on him.
expect_eq "file-only policy: the tampered file is refused for nobody as well" \
	read-refused "$(as_nobody /usr/bin/python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    os.read(fd, 10); print("read-ok")
except PermissionError:
    print("read-refused")' "$M/bad")"
ufs_umount "$M"
echo "tampered offline later" >"$S/later"
"$UEVM" label --hmac-key "raw:$KEY" "$S/later" >/dev/null

# ---- forced off: per-open hooks with the same policy ------------------------------------------
: >"$T/uevmfs.stderr"
ufs_mount "$S" "$M" "$OPTS,policy=$T/file-only.policy,fastopen=off" || exit 1
expect_eq "fastopen=off: the tampered file's open is refused" open-refused \
	"$(open_then_read "$M/bad")"
check "fastopen=off: nothing said about fastopen" \
	test -z "$(grep -F 'fastopen: on' "$T/uevmfs.stderr")"
ufs_umount "$M"
ufs_mount "$S" "$M" "$OPTS,policy=$T/file-only.policy,nofastopen" || exit 1
expect_eq "nofastopen: the same" open-refused "$(open_then_read "$M/bad")"
ufs_umount "$M"

# ---- a uid= rule: per-open hooks kept, each caller gets his verdict ------------------------
: >"$T/uevmfs.stderr"
ufs_mount "$S" "$M" "$OPTS,policy=$T/uid.policy" || exit 1
check "uid= rule: fastopen not chosen" \
	test -z "$(grep -F 'fastopen: on' "$T/uevmfs.stderr")"
expect_eq "uid= rule: nobody reads the tampered file (the rule is root's)" \
	"will be tampered
tampered" "$(as_nobody cat "$M/bad" 2>&1)"
expect_eq "uid= rule: root's open of it is refused, after nobody's read" open-refused \
	"$(open_then_read "$M/bad")"
expect_eq "uid= rule: root reads the labelled file" "labelled content" "$(cat "$M/good")"
ufs_umount "$M"

# ---- a rule that tells an exec from a read: per-open hooks kept ---------------------------
printf 'appraise func=BPRM_CHECK\n' >"$T/bprm.policy"
: >"$T/uevmfs.stderr"
ufs_mount "$S" "$M" "$OPTS,policy=$T/bprm.policy" || exit 1
check "func=BPRM_CHECK rule: fastopen not chosen" \
	test -z "$(grep -F 'fastopen: on' "$T/uevmfs.stderr")"
chmod 755 "$S/bad"
expect_eq "func=BPRM_CHECK rule: the tampered program can still be read" \
	"will be tampered
tampered" "$(cat "$M/bad" 2>&1)"
expect_match "func=BPRM_CHECK rule: ... but its exec is refused" "Permission denied" \
	"$(/usr/bin/python3 -c 'import os, sys; os.execv(sys.argv[1], [sys.argv[1]])' "$M/bad" 2>&1)"
chmod 644 "$S/bad"
ufs_umount "$M"

# ---- measuring programs at exec (measure func=BPRM_CHECK): fastopen still chosen ----------
# fastopen runs BPRM_CHECK at the first read of a file with an execute bit:
# the program is measured before it can run (and before its exec succeeds).
printf '#!/bin/sh\necho labelled program\n' >"$S/prog"
chmod 755 "$S/prog"
"$UEVM" label --hmac-key "raw:$KEY" "$S/prog" >/dev/null
printf 'measure func=BPRM_CHECK mask=MAY_EXEC\nmeasure func=FILE_CHECK mask=^MAY_READ\nappraise\n' \
	>"$T/measure-exec.policy"
: >"$T/uevmfs.stderr"
ufs_mount "$S" "$M" "${OPTS/ml=none/ml=$T/ml},policy=$T/measure-exec.policy" || exit 1
check "measure func=BPRM_CHECK rule: fastopen chosen" \
	grep -qF 'fastopen: on (automatic' "$T/uevmfs.stderr"
expect_eq "measure func=BPRM_CHECK rule: the labelled program runs" "labelled program" \
	"$("$M/prog" 2>&1)"
expect_match "... and was measured (an ima-ng entry for it)" " ima-ng sha256:[0-9a-f]{64} $M/prog\$" \
	"$("$UEVM" measurements show "$T/ml")"
expect_eq "... a tampered file still opens and its read is refused" read-refused \
	"$(open_then_read "$M/bad")"
expect_match "... audited (cause=invalid-hash)" "cause=invalid-hash" "$(grep -F "$M/bad" "$T/audit.log")"
ufs_umount "$M"
rm -f "$S/prog"

# ---- forced on with a uid= rule: refused, naming the rule ---------------------------------
out=$("$UEVMFS" "$S" "$M" -f -o "$OPTS,securityfs=none,policy=$T/uid.policy,fastopen=on" 2>&1)
expect_eq "fastopen=on with a uid= rule: uevmfs refuses to start (exit 1)" 1 $?
expect_match "... naming the rule" "line 1: 'appraise func=FILE_CHECK uid=0'" "$out"
out=$("$UEVMFS" "$S" "$M" -f -o "$OPTS,securityfs=none,fastopen=maybe" 2>&1)
expect_eq "fastopen=maybe: a usage error (exit 2)" 2 $?
expect_match "... saying what it takes" "fastopen=maybe: not 'auto', 'on' or 'off'" "$out"

# ---- the default policy measures what root reads: per-open ------------------------------
: >"$T/uevmfs.stderr"
ufs_mount "$S" "$M" "$OPTS" || exit 1
check "default policy (euid=0 rule): fastopen not chosen" \
	test -z "$(grep -F 'fastopen: on' "$T/uevmfs.stderr")"
expect_eq "default policy: the tampered file's open is refused" open-refused \
	"$(open_then_read "$M/bad")"
ufs_umount "$M"
