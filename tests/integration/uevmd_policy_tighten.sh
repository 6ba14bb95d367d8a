#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A stricter policy applies to files appraised before it was loaded.
#
# The attacker: someone whose file passed an earlier, weaker policy (a
# hash label where signatures are now required).  Before, the library's
# cached "passed" answered every later open, under any later rules, until
# the file changed: a policy load through the socket or the control tree
# tightened only what had not been read yet.  Now every policy load makes
# what was cached stale, so each file is appraised again under the rules
# that apply (stricter than the kernel, whose iint keeps IMA_APPRAISED
# across ima_update_policy; a userspace daemon has its policy replaced
# far more often than a kernel does).
#
# Checked against the running daemon, with the refusal's audit record
# (and the same for EVM initialised through the tree):
#  - a policy written to the control tree, then one loaded through the
#    socket, after the files were read under the weaker rules;
#  - a load while a worker is still hashing under the old rules: that
#    open gets the old rules' answer, but the next one the new rules'
#    (the verdict reached under the old rules is not kept);
#  - a signed file still opens under the stricter rules, and loosening
#    them again lets the hashed file open.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"
source "$TESTS_DIR/sig_ref.sh"

command -v python3 >/dev/null || { fail "python3 is installed"; exit 1; }
make_image 160M || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
mkdir -p "$T/sig"
SIG_KEYS="rsa2048" make_sig_keys "$T/sig" || { fail "openssl makes the certificates"; exit 1; }
mkdir -p "$MNT/s"
echo "signed" >"$MNT/s/signed"
echo "hashed" >"$MNT/s/hashed"
echo "hashed too" >"$MNT/s/hashed2"
# A file whose hashing takes a while: 4 GiB of holes.
truncate -s 4G "$MNT/s/big"
"$UEVM" sign -q --imasig --evm -k "$T/sig/rsa2048.key" \
	--keyid-from-cert "$T/sig/rsa2048.der" "$MNT/s/signed" >/dev/null 2>&1
"$UEVM" label --hmac-key "raw:$T/key" "$MNT/s/hashed" "$MNT/s/hashed2" "$MNT/s/big"
expect_eq "s/signed carries a signature" 030204 "$(xattr_hex security.ima "$MNT/s/signed" | cut -c1-6)"
expect_eq "s/hashed carries a hash" 04 "$(xattr_hex security.ima "$MNT/s/hashed" | cut -c1-2)"

echo "appraise func=FILE_CHECK" >"$T/weak"
echo "appraise func=FILE_CHECK appraise_type=imasig" >"$T/strict"
cp "$T/weak" "$T/policy"
DEADLINE_MS=120000 write_conf "cert = $T/sig/rsa2048.der" "mode = enforce" \
	"control_tree = $T/tree"
start_uevmd || { fail "uevmd starts"; exit 1; }
for f in signed hashed hashed2; do
	expect_eq "weak rules: s/$f opens" ok "$(open_result "$MNT/s/$f")"
done
e0=$(status_field events)
cat "$MNT/s/hashed" >/dev/null
expect_eq "  s/hashed passed and is cached (its next open is not seen)" "$e0" \
	"$(status_field events)"

# ---- the control tree ---------------------------------------------------------------
# A client of the socket holds uevmd's control thread (it serves one
# connection at a time, for up to 10 s), so the tree's change cannot wait
# for that thread: the marks must go before the writer's close returns.
sockets() { find "/proc/$UEVMD_PID/fd" -lname 'socket:*' | wc -l; }
s0=$(sockets)
mkfifo "$T/hold"
python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
sys.stdin.read()' "$SOCK" <"$T/hold" &
hold_pid=$!
exec 8>"$T/hold"
accepted() { [ "$(sockets)" -gt "$s0" ]; }
check "a client holds uevmd's control thread (its connection was accepted)" \
	wait_for "$WAIT_S" "the control thread to accept the client" accepted
tree_write "$T/tree/ima/policy" <"$T/strict"
expect_match "the tree's rules apply" "^appraise func=FILE_CHECK appraise_type=imasig" \
	"$(cat "$T/tree/ima/policy")"
# The ignore marks placed under the old rules went before the writer's
# close returned: no wait here.
expect_eq "strict rules from the tree: s/hashed, passed before, is refused" EPERM \
	"$(open_result "$MNT/s/hashed")"
check "  audit: op=appraise_data cause=IMA-signature-required res=0" \
	log_has "op=appraise_data cause=IMA-signature-required .*name=\"$MNT/s/hashed\".* res=0"
expect_eq "  s/signed still opens" ok "$(open_result "$MNT/s/signed")"
exec 8>&-
wait "$hold_pid"
check "  uevmd says the tree replaced the policy" \
	log_has "policy replaced through the control tree \(1 rules\)"

# ---- the socket ---------------------------------------------------------------------------
"$UEVM" policy load --socket "$SOCK" "$T/weak" >/dev/null
expect_eq "weak rules loaded again: s/hashed opens" ok "$(open_result "$MNT/s/hashed")"
"$UEVM" policy load --socket "$SOCK" "$T/strict" >/dev/null
expect_eq "strict rules through the socket: s/hashed2, passed before, is refused" EPERM \
	"$(open_result "$MNT/s/hashed2")"
check "  audit: op=appraise_data cause=IMA-signature-required for s/hashed2" \
	log_has "op=appraise_data cause=IMA-signature-required .*name=\"$MNT/s/hashed2\".* res=0"
expect_eq "  s/signed still opens" ok "$(open_result "$MNT/s/signed")"

# ---- a load while a worker hashes under the old rules -----------------------------------
"$UEVM" policy load --socket "$SOCK" "$T/weak" >/dev/null
cat "$MNT/s/big" >/dev/null &
cat_pid=$!
big_open() { held "$cat_pid"; }
if wait_for "$WAIT_S" "s/big's open to wait for uevmd" big_open; then
	"$UEVM" policy load --socket "$SOCK" "$T/strict" >/dev/null
	wait "$cat_pid"
	pass "s/big was being hashed under the weak rules when the strict ones were loaded"
	expect_eq "  its next open is appraised under the strict rules: refused" EPERM \
		"$(open_result "$MNT/s/big")"
else
	wait "$cat_pid"
fi
stop_uevmd

# ---- EVM initialised through the control tree ----------------------------------------
# Before EVM is initialised a file is appraised by its content alone, so one
# whose security.evm is gone passes (and gets an ignore mark); `echo 1 >
# evm` in the tree must take that pass away at once, as `uevm enable` does.
"$UEVM" label --hmac-key "raw:$T/key" "$MNT/s/hashed"
setfattr -x security.evm "$MNT/s/hashed"
cp "$T/weak" "$T/policy"
rm -rf "$T/tree"
write_conf "evm = no" "mode = enforce" "control_tree = $T/tree"
start_uevmd || { fail "uevmd starts with evm = no"; exit 1; }
expect_eq "evm = no: s/hashed without security.evm opens (content only)" ok \
	"$(open_result "$MNT/s/hashed")"
e0=$(status_field events)
cat "$MNT/s/hashed" >/dev/null
expect_eq "  and is cached (its next open is not seen)" "$e0" "$(status_field events)"
printf 1 >"$T/tree/evm"
expect_eq "the tree's evm reads 1" 1 "$(cat "$T/tree/evm")"
expect_eq "  s/hashed, passed before, is refused at once" EPERM "$(open_result "$MNT/s/hashed")"
check "  audit: op=appraise_data cause=missing-HMAC" \
	log_has "cause=missing-HMAC .*name=\"$MNT/s/hashed\".* res=0"
stop_uevmd
