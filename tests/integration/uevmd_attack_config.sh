#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 12, item 11: uevmd's own configuration, policy and certificates
# live on the disk it protects.  An offline attacker edits them - the
# policy to "dont_appraise", the configuration to "mode = log", a
# certificate replaced by their own - and enforcement is gone at the next
# start.  uevmd appraises each of them with its key (as the kernel
# appraises a policy file, POLICY_CHECK) and refuses to start, naming the
# file and the cause.  Inputs outside the watched filesystems without
# labels are used as before, with a notice.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"
source "$TESTS_DIR/sig_ref.sh"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
E=$MNT/etc
mkdir -p "$E" "$MNT/data"
mkdir -p "$T/sig" "$T/sig2"
SIG_KEYS="rsa2048" make_sig_keys "$T/sig"
cp "$T/sig/rsa2048.der" "$E/cert.der"
POLICY=$E/policy
write_policy
cp "$T/policy" "$E/policy"
CONF=$E/uevmd.conf
write_conf "cert = $E/cert.der"
echo "data" >"$MNT/data/good"
printf 'tampered' >"$MNT/data/bad"
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT" >/dev/null
echo "offline change" >>"$MNT/data/bad"

# start_fails WHY: uevmd must refuse to start; its output must match WHY.
start_fails() {
	local out rc
	out=$(timeout 120 "$UEVMD" -c "$CONF" -f 2>&1 </dev/null)
	rc=$?
	check "$1: uevmd refuses to start (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
	expect_match "  it names the file and the cause" "$2" "$out"
}

start_uevmd || { fail "uevmd starts with its labelled inputs on the watched mount"; exit 1; }
pass "uevmd starts with its labelled inputs on the watched mount"
check "  it says it appraised them" log_has "policy $E/policy: appraised"
expect_eq "  the offline-changed file is refused" EPERM "$(open_result "$MNT/data/bad")"
stop_uevmd

# ---- the attacks (uevmd stopped: offline) -------------------------------------------------
cp -a "$E/policy" "$T/policy.good"
echo "dont_appraise fsmagic=0xef53" | cat - "$T/policy.good" >"$E/policy.new"
cat "$E/policy.new" >"$E/policy"; rm "$E/policy.new"
start_fails "policy edited offline (dont_appraise)" "policy $E/policy: op=appraise_data cause=invalid-hash"
cp -a "$T/policy.good" "$E/policy"

setfattr -x security.ima "$E/policy"
setfattr -x security.evm "$E/policy"
start_fails "policy's labels removed offline" "policy $E/policy: op=appraise_data cause=missing-(hash|HMAC)"
"$UEVM" label --hmac-key "raw:$T/key" "$E/policy" >/dev/null

cp -a "$CONF" "$T/conf.good"
echo "mode = log" >>"$CONF"
start_fails "configuration edited offline (mode = log)" "configuration $CONF: op=appraise_data cause=invalid-hash"
cp -a "$T/conf.good" "$CONF"

SIG_KEYS="p256" make_sig_keys "$T/sig2"
cat "$T/sig2/p256.der" >"$E/cert.der"
start_fails "certificate replaced offline" "certificate $E/cert.der: op=appraise_data cause=invalid-hash"
cp "$T/sig/rsa2048.der" "$E/cert.der"
"$UEVM" label --hmac-key "raw:$T/key" "$E/cert.der" >/dev/null

# ---- everything restored: it starts again ---------------------------------------------------
check "uevmd starts again once its inputs are good" start_uevmd
expect_eq "  and enforces" EPERM "$(open_result "$MNT/data/bad")"
stop_uevmd

# ---- inputs elsewhere, without labels: used, with a notice -------------------------------------
cp "$T/policy.good" "$T/policy.plain"
POLICY=$T/policy.plain
CONF=$T/uevmd.conf
write_conf
: >"$LOG"
check "uevmd starts with unlabelled inputs off the watched filesystems" start_uevmd
check "  and says they were not appraised" \
	log_has "policy $T/policy.plain is not on a watched filesystem and has no labels: not appraised"
stop_uevmd

# ---- a FIFO planted where the policy is read: refused at once, never a hang ------------------
# (it held uevmd in open(2) with SIGTERM taken by its signal thread, so
# that only SIGKILL ended it: a start or reload that never finishes)
mkfifo "$T/policy.fifo"
POLICY=$T/policy.fifo
write_conf
# A hang ends in timeout's 124 (or 137), never in uevmd's 2.
out=$(timeout -k 5 60 "$UEVMD" -c "$CONF" --check 2>&1)
rc=$?
expect_eq "a FIFO as the policy: --check ends with a configuration error (2), not a hang" 2 "$rc"
expect_match "  naming the policy" "policy $T/policy.fifo" "$out"
