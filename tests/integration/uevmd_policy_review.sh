#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Policy keywords an attack review found accepted but not enforced as the
# kernel enforces them, each performed against the running daemon (and
# `uevmd --check` where it applies):
#  - a signed file opened for writing under an appraise rule is refused
#    (process_measurement's out_locked: IMA_DIGSIG and not new), for root
#    and for the file's own user, read before or not; its signature is
#    never replaced by a hash label the daemon makes (before, the write
#    went through and the close relabelled it);
#  - where the write open is not appraised (mask=MAY_READ), the write goes
#    through, the signature stays, and the changed file is then refused;
#  - digest_type=verity: uevm cannot read fs-verity digests, so a rule
#    that requires one refuses every file (no-verity-digest), an ordinary
#    signature included, and such a measure rule records nothing, as the
#    kernel does for a file without fs-verity; a pass under another rule
#    puts no ignore mark on such a file;
#  - func=CREDS_CHECK at exec, with the ids the program runs with (setuid
#    owner; the real ids under no_new_privs) and the caller's capabilities,
#    also under a dont_appraise rule and for root's exec of a program
#    setuid to another user;
#  - euid= with CAP_SETUID: the saved and real uids count.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"
source "$TESTS_DIR/sig_ref.sh"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
mkdir -p "$T/sig"
SIG_KEYS="rsa2048" make_sig_keys "$T/sig" || { fail "openssl makes the certificates"; exit 1; }
H=(--hmac-key "raw:$T/key")
SIGN=(sign -q --imasig --evm -k "$T/sig/rsa2048.key" --keyid-from-cert "$T/sig/rsa2048.der")
mkdir -p "$MNT/s" "$MNT/u"
chmod 711 "$T"
chmod 755 "$MNT/u"
for f in read_first never_read later; do echo "signed $f" >"$MNT/s/$f"; done
echo "the user's own" >"$MNT/u/own"
chown 1000:1000 "$MNT/u/own"
"$UEVM" "${SIGN[@]}" "$MNT/s/read_first" "$MNT/s/never_read" "$MNT/s/later" "$MNT/u/own" >/dev/null 2>&1
echo "hashed" >"$MNT/s/hashed"
"$UEVM" label -q "${H[@]}" "$MNT/s/hashed" >/dev/null
ima_of() { getfattr -n security.ima -e hex --only-values "$1" 2>/dev/null | xxd -p | tr -d '\n'; }
declare -A before
for f in s/read_first s/never_read s/later u/own; do
	before[$f]=$(ima_of "$MNT/$f")
	expect_eq "$f carries a signature" 030204 "${before[$f]:0:6}"
done

# write_result FILE [AS_UID]: append a line; ok, or the errno's name
write_result() {
	local err cmd="echo more >>'$1'"
	if [ -n "${2:-}" ]; then
		err=$(setpriv --reuid "$2" --regid "$2" --clear-groups sh -c "$cmd" 2>&1) && { echo ok; return; }
	else
		err=$(sh -c "$cmd" 2>&1) && { echo ok; return; }
	fi
	case $err in
	*"Permission denied"*) echo EACCES ;;
	*"Operation not permitted"*) echo EPERM ;;
	*) echo "other: $err" ;;
	esac
}

# ---- appraise_type=imasig: no write open of a signed file --------------------------
echo "appraise func=FILE_CHECK appraise_type=imasig" >"$T/policy"
write_conf "cert = $T/sig/rsa2048.der" "mode = enforce"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "root reads s/read_first" ok "$(open_result "$MNT/s/read_first")"
expect_eq "root's write to s/read_first (read before): refused" EPERM "$(write_result "$MNT/s/read_first")"
expect_eq "root's write to s/never_read: refused" EPERM "$(write_result "$MNT/s/never_read")"
expect_eq "uid 1000's write to its own signed u/own: refused" EPERM "$(write_result "$MNT/u/own" 1000)"
for f in s/read_first s/never_read u/own; do
	expect_eq "$f: content unchanged" 1 "$(wc -l <"$MNT/$f")"
	expect_eq "$f: the signature is still there" "${before[$f]}" "$(ima_of "$MNT/$f")"
	expect_eq "$f still opens" ok "$(open_result "$MNT/$f")"
done
check "audit: op=appraise_data cause=write-to-signed-file for u/own" \
	log_has "op=appraise_data cause=write-to-signed-file .*name=\"$MNT/u/own\".* res=0"
stop_uevmd

# ---- a rule for reads only: the write goes through, the signature stays -------------
echo "appraise func=FILE_CHECK mask=MAY_READ appraise_type=imasig" >"$T/policy"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "mask=MAY_READ: s/later reads" ok "$(open_result "$MNT/s/later")"
n0=$(status_field notifications)
expect_eq "mask=MAY_READ: root's write to s/later is not appraised: allowed" ok \
	"$(write_result "$MNT/s/later")"
# A relabel (if any) follows the close uevmd is notified of, as a job.
settled() { [ "$(status_field notifications)" -gt "$n0" ] && [ "$(status_field relabel_pending)" = 0 ]; }
wait_for "$WAIT_S" "uevmd to take the close of s/later" settled
expect_eq "s/later: the signature was not replaced by a hash" "${before[s/later]}" \
	"$(ima_of "$MNT/s/later")"
expect_eq "s/later changed under its signature: now refused" EPERM "$(open_result "$MNT/s/later")"
stop_uevmd

# ---- digest_type=verity: no file passes or is measured on another digest -----------
echo "appraise func=FILE_CHECK digest_type=verity appraise_type=sigv3" >"$T/policy"
out=$("$UEVMD" -c "$CONF" --check --under "$MNT/s" 2>&1)
expect_eq "verity appraise rule: --check exits 1" 1 $?
for f in never_read hashed; do
	expect_match "--check refuses s/$f: no-verity-digest" \
		"^refused: $MNT/s/$f \(no-verity-digest\)$" "$out"
done
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "verity appraise rule: an ordinary signature is refused" EPERM \
	"$(open_result "$MNT/s/never_read")"
expect_eq "verity appraise rule: a hash label is refused" EPERM "$(open_result "$MNT/s/hashed")"
check "audit: op=collect_data cause=no-verity-digest for s/never_read" \
	log_has "op=collect_data cause=no-verity-digest .*name=\"$MNT/s/never_read\""
stop_uevmd

ML=$T/ml
entries() { "$UEVM" measurements daemon --ascii --socket "$SOCK" | grep -c " $1\$"; }
printf '%s\n' "measure func=FILE_CHECK mask=MAY_READ digest_type=verity" >"$T/policy"
write_conf "cert = $T/sig/rsa2048.der" "mode = enforce" "measurement_list = $ML"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "verity measure rule: the read is allowed" ok "$(open_result "$MNT/s/hashed")"
expect_eq "... and not measured (no fs-verity digest)" 0 "$(entries "$MNT/s/hashed")"
stop_uevmd
rm -f "$ML" "$ML".*
printf '%s\n' "measure func=FILE_CHECK mask=MAY_READ" >"$T/policy"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "without digest_type=verity: the read is allowed" ok "$(open_result "$MNT/s/hashed")"
expect_eq "... and measured once" 1 "$(entries "$MNT/s/hashed")"
stop_uevmd

# ---- func=CREDS_CHECK: checked at exec, under the ids the program runs with ---------
# (ima_bprm_check's second process_measurement, with bprm->cred: a setuid
# program's owner as euid.)  Before, no CREDS_CHECK rule was ever applied.
mkdir -p "$MNT/x"
chmod 755 "$MNT/x"
for f in plain suid good; do cp "$(type -P true)" "$MNT/x/$f"; done
chmod 4755 "$MNT/x/suid"
"$UEVM" label -q "${H[@]}" "$MNT/x/good" >/dev/null
# exec_as UID FILE [SETPRIV OPTION]: run FILE from a shell of UID (which
# holds no capability then, as setpriv itself still does at its exec)
exec_as() {
	local err
	if err=$(setpriv --reuid "$1" --regid "$1" --clear-groups ${3:-} sh -c '"$0"' "$2" 2>&1 >/dev/null); then
		echo ok
		return
	fi
	case $err in
	*"Permission denied"*) echo EACCES ;;
	*"Operation not permitted"*) echo EPERM ;;
	*) echo "other: $err" ;;
	esac
}
echo "appraise func=CREDS_CHECK euid=0" >"$T/policy"
write_conf "cert = $T/sig/rsa2048.der" "mode = enforce"
out=$("$UEVMD" -c "$CONF" --check --under "$MNT/x" 2>&1)
expect_eq "CREDS_CHECK euid=0: --check (as root) exits 1" 1 $?
for f in plain suid; do
	expect_match "--check refuses x/$f (unlabelled, runs as root)" \
		"^refused: $MNT/x/$f \(missing-hash\)$" "$out"
done
expect_eq "--check passes x/good" 0 "$(grep -c "refused: $MNT/x/good " <<<"$out")"
start_uevmd || { fail "uevmd starts"; exit 1; }
for round in first second; do
	expect_eq "uid 1000 runs unlabelled x/plain as itself ($round): allowed" ok \
		"$(exec_as 1000 "$MNT/x/plain")"
	expect_eq "uid 1000 runs unlabelled setuid-root x/suid ($round): refused" EPERM \
		"$(exec_as 1000 "$MNT/x/suid")"
	expect_eq "root runs unlabelled x/plain ($round): refused" EPERM \
		"$(exec_result "$MNT/x/plain")"
	expect_eq "root runs labelled x/good ($round): allowed" ok "$(exec_result "$MNT/x/good")"
done
check "audit: op=appraise_data cause=missing-hash for x/suid" \
	log_has "op=appraise_data cause=missing-hash .*name=\"$MNT/x/suid\""
stop_uevmd

# The capabilities are the caller's, the ids those after exec (the
# kernel's ima_match_rules with bprm->cred): root runs a program setuid to
# uid 1000; with CAP_SETUID its real uid 0 still matches euid=0.
cp "$(type -P true)" "$MNT/x/suid1000"
chown 1000 "$MNT/x/suid1000"
chmod 4755 "$MNT/x/suid1000"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "root runs unlabelled x/suid1000 (CAP_SETUID, real uid 0): refused" EPERM \
	"$(exec_result "$MNT/x/suid1000")"
stop_uevmd
# A dont_appraise rule on the caller's uid does not cover a program that
# runs as root: uid 1000 (no CAP_SETUID) runs setuid-root x/suid.
printf '%s\n' "dont_appraise func=CREDS_CHECK euid=1000" "appraise func=CREDS_CHECK" >"$T/policy"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "dont_appraise euid=1000: uid 1000 runs unlabelled x/plain" ok "$(exec_as 1000 "$MNT/x/plain")"
expect_eq "... but not setuid-root x/suid (runs as root)" EPERM "$(exec_as 1000 "$MNT/x/suid")"
stop_uevmd
# no_new_privs: a setuid exec raises nothing (the kernel keeps the real ids).
echo "appraise func=CREDS_CHECK euid=1000" >"$T/policy"
start_uevmd || { fail "uevmd starts"; exit 1; }
expect_eq "euid=1000: uid 1000 runs setuid-root x/suid (runs as root): not this rule's" ok \
	"$(exec_as 1000 "$MNT/x/suid")"
expect_eq "euid=1000: with no_new_privs the same exec keeps uid 1000: refused" EPERM \
	"$(exec_as 1000 "$MNT/x/suid" --no-new-privs)"
stop_uevmd

# ---- euid= with CAP_SETUID: the saved and real uids count too ------------------------
# A root process keeps its capabilities (SECBIT_NO_SETUID_FIXUP) and sets
# its real and effective uid to 1000, keeping 0 as saved uid: it can be
# root again at will, so the kernel's euid=0 rule matches it.
for f in kept dropped; do echo "read by $f" >"$MNT/u/$f"; chmod 644 "$MNT/u/$f"; done
"$UEVM" label -q "${H[@]}" "$MNT/u/kept" "$MNT/u/dropped" >/dev/null
printf '%s\n' "measure func=FILE_CHECK mask=MAY_READ euid=0" >"$T/policy"
rm -f "$ML" "$ML".*
start_uevmd || { fail "uevmd starts"; exit 1; }
python3 - "$MNT/u/kept" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP = 28, 1 << 2
if libc.prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP, 0, 0, 0) != 0:
    sys.exit("prctl: %s" % os.strerror(ctypes.get_errno()))
os.setresuid(1000, 1000, 0)
open(sys.argv[1], "rb").read()
PY
expect_eq "the reader kept CAP_SETUID with uids 1000/1000/0" 0 $?
expect_eq "euid=0 rule: its read is measured (saved uid 0, CAP_SETUID)" 1 "$(entries "$MNT/u/kept")"
setpriv --reuid 1000 --regid 1000 --clear-groups cat "$MNT/u/dropped" >/dev/null
expect_eq "euid=0 rule: a plain uid 1000 read is not" 0 "$(entries "$MNT/u/dropped")"
stop_uevmd

# ---- digest_type=verity: a pass under another rule puts no ignore mark -------------
printf '%s\n' "appraise func=FILE_CHECK mask=MAY_READ uid=0" \
	"appraise func=FILE_CHECK mask=MAY_READ digest_type=verity appraise_type=sigv3" >"$T/policy"
echo "signed for root" >"$MNT/s/rootread"
chmod 644 "$MNT/s/rootread"
"$UEVM" "${SIGN[@]}" "$MNT/s/rootread" >/dev/null 2>&1
start_uevmd || { fail "uevmd starts"; exit 1; }
nobody_read() { if setpriv --reuid 65534 --regid 65534 --clear-groups cat "$1" >/dev/null 2>&1; then echo ok; else echo refused; fi; }
expect_eq "verity rule: nobody's read of s/rootread is refused" refused "$(nobody_read "$MNT/s/rootread")"
expect_eq "root's read under the other rule passes" ok "$(open_result "$MNT/s/rootread")"
expect_eq "then nobody's read is still refused (seen, no ignore mark)" refused \
	"$(nobody_read "$MNT/s/rootread")"
stop_uevmd
