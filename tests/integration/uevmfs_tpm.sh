#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmfs with a TPM (swtpm, its own instance):
#  - -o pcr=11: every entry (boot_aggregate, files) goes to PCR 11, PCR 10
#    stays in its reset state, PCR 11 equals the list's replay (an
#    independent reader and `uevm measurements verify`); a policy rule
#    with pcr= still sends its files to its own PCR;
#  - the TCTI inside -o: "tcti=swtpm:host=H,port=P" as written, and the
#    libfuse escape "host=H\,port=P";
#  - a reboot (swtpm restarted with its state: the PCRs reset): the list of
#    the previous boot goes to FILE.prev (older ones to .prev.1, .prev.2,
#    no more), a new list starts with the new boot_aggregate and replays
#    to the TPM, with a warning and an audit record; norotate_stale
#    refuses instead;
#  - a list edited offline, or a PCR extended by another writer, while the
#    TPM was not reset: refused, nothing moved.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

for tool in swtpm tpm2_pcrread tpm2_pcrextend python3 openssl; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
source "$TESTS_DIR/swtpm-lib.sh"
EDIT=$TESTS_DIR/ima_ml_edit.py
ZERO=$(printf '0%.0s' $(seq 64))
KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
C=$T/security
ML=$T/ml
chmod 755 "$T"
mkdir -p "$S"
for i in 1 2 3 4; do echo "file $i" >"$S/f$i"; done
echo "owned by 1000" >"$S/u"
chown 1000 "$S/u"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
cat >"$T/policy" <<'EOF'
measure func=FILE_CHECK mask=^MAY_READ fowner=1000 pcr=12
measure func=FILE_CHECK mask=^MAY_READ
appraise
EOF

mount_tpm() {	# extra options
	ufs_mount "$S" "$M" "key=raw:$KEY,ml=$ML,tcti=$TCTI,pcr=11,policy=$T/policy,securityfs=$C,audit_log=$T/audit.log,nosyslog${1:+,$1}"
}
read_all() { cat "$M"/f* "$M/u" >/dev/null; }
# refused OPTIONS: uevmfs must exit 1 without mounting (its output in $T/refused.out);
# were it to mount, it is unmounted and this fails.
refused() {
	"$UEVMFS" "$S" "$M" -f -o "$1" >"$T/refused.out" 2>&1 &
	local pid=$!
	UFS_PIDS+=("$pid")
	wait_quiet "$WAIT_S" ufs_up_or_gone "$M" "$pid"
	if ufs_mounted "$M" fuse.uevmfs; then
		fusermount3 -u "$M"
		wait "$pid"
		return 1
	fi
	wait "$pid"
	# Exit 1 (set up failed), with no sanitizer report.
	[ $? = 1 ] && ! grep -qE "runtime error|Sanitizer" "$T/refused.out"
}

start_swtpm || { fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
boot_pcrs 1

# ---- -o pcr=11, the TCTI as written --------------------------------------------------
mount_tpm || exit 1
pass "-o tcti=swtpm:host=127.0.0.1,port=P,pcr=11: mounted (the TCTI's comma needs no escape)"
read_all
ascii=$(cat "$C/ima/ascii_runtime_measurements")
expect_eq "6 entries: boot_aggregate, 4 files, the file of uid 1000" 6 "$(wc -l <<<"$ascii")"
expect_eq "boot_aggregate and every file go to PCR 11" 5 "$(grep -c '^11 ' <<<"$ascii")"
expect_match "boot_aggregate in PCR 11, the kernel's digest of this TPM's PCRs 0-9" \
	"^11 [0-9a-f]{40} ima-ng sha256:$(boot_aggregate_of sha256) boot_aggregate\$" "$(head -n 1 <<<"$ascii")"
expect_match "the rule with pcr=12 still wins for its file" "^12 [0-9a-f]{40} ima-ng sha256:[0-9a-f]{64} $M/u\$" "$ascii"
expect_eq "PCR 10 is untouched (sha256)" "$ZERO" "$(tpm_pcr sha256 10)"
expect_eq "PCR 10 is untouched (sha1)" "${ZERO:0:40}" "$(tpm_pcr sha1 10)"
cp "$C/ima/binary_runtime_measurements" "$T/live.bin"
for b in sha1 sha256; do
	expect_eq "$b PCR 11 = the independent replay" "$(ref_pcr "$T/live.bin" $b 11)" "$(tpm_pcr $b 11)"
	expect_eq "$b PCR 12 = the independent replay" "$(ref_pcr "$T/live.bin" $b 12)" "$(tpm_pcr $b 12)"
done
expect_rc "uevm measurements verify --pcr 11 --pcr 12 accepts the list" 0 \
	"$UEVM" measurements verify --tcti "$TCTI" --pcr 11 --pcr 12 "$T/live.bin"
ufs_umount "$M"
check "the persisted list is the list served" cmp -s "$T/live.bin" "$ML"

# ---- the escaped form, and the rule -----------------------------------------------------
port=${TCTI##*port=}
mkdir -p "$T/m2"
UFS_MOUNTS+=("$T/m2")
"$UEVMFS" "$S" "$T/m2" -o "key=raw:$KEY,ml=memory,pcr=13,tcti=swtpm:host=127.0.0.1\\,port=$port,securityfs=none,nosyslog" \
	2>"$T/esc.err" &
UFS_PID=$!
UFS_PIDS+=("$UFS_PID")
wait_quiet "$WAIT_S" ufs_up_or_gone "$T/m2" "$UFS_PID"
check "-o tcti=swtpm:host=127.0.0.1\\,port=P: mounted (the libfuse escape)" ufs_mounted "$T/m2" fuse.uevmfs
check "  its boot_aggregate extended PCR 13 of that TPM" test "$(tpm_pcr sha256 13)" != "$ZERO"
ufs_umount "$T/m2"
# (ml=none: no TPM is opened, so a TCTI left without its port never
# reaches swtpm's default port 2321, maybe another test's.)
check "port= not right after tcti=: not mounted" \
	refused "key=raw:$KEY,ml=none,port=$port,tcti=swtpm:host=127.0.0.1,securityfs=none"
expect_match "  and the error names it" "port=$port" "$(cat "$T/refused.out")"

# ---- resume, then reboots ----------------------------------------------------------------
mount_tpm || exit 1
expect_eq "remount, same boot: the list resumes" 6 "$(cat "$C/ima/runtime_measurements_count")"
ufs_umount "$M"
cp "$ML" "$T/boot1.ml"

reboot_tpm 2
mount_tpm || exit 1
pass "after a TPM reset: mounted (rotate_stale is the default)"
check "  the warning says the TPM was reset and names FILE.prev" \
	grep -q "warning: $ML: the TPM was reset .*(6 entries) was moved to $ML.prev and a new list started" "$T/uevmfs.stderr"
check "  an audit record names the list" \
	grep -q "op=measurement_list cause=tpm-reset-rotated .*name=\"$ML\"" "$T/audit.log"
check "  the list of the previous boot is FILE.prev, unchanged" cmp -s "$T/boot1.ml" "$ML.prev"
expect_eq "  a new list: boot_aggregate only" 1 "$(cat "$C/ima/runtime_measurements_count")"
expect_match "  its boot_aggregate is this boot's" \
	"^11 [0-9a-f]{40} ima-ng sha256:$(boot_aggregate_of sha256) boot_aggregate\$" \
	"$(cat "$C/ima/ascii_runtime_measurements")"
read_all
cp "$C/ima/binary_runtime_measurements" "$T/live2.bin"
expect_eq "  the new list replays to PCR 11" "$(ref_pcr "$T/live2.bin" sha256 11)" "$(tpm_pcr sha256 11)"
expect_rc "  uevm measurements verify accepts it" 0 \
	"$UEVM" measurements verify --tcti "$TCTI" --pcr 11 --pcr 12 "$T/live2.bin"
ufs_umount "$M"
cp "$ML" "$T/boot2.ml"

# norotate_stale: refused, nothing moved.
reboot_tpm 3
check "norotate_stale after a TPM reset: not mounted" \
	refused "key=raw:$KEY,ml=$ML,tcti=$TCTI,pcr=11,securityfs=none,nosyslog,norotate_stale"
expect_match "  the error says the TPM was reset" \
	"$ML does not describe the TPM: PCR 1[12] of the sha[0-9]+ bank differs .*the TPM was reset: the list is of a previous boot" \
	"$(cat "$T/refused.out")"
check "  the list is left as it was" cmp -s "$T/boot2.ml" "$ML"
check "  FILE.prev is left as it was" cmp -s "$T/boot1.ml" "$ML.prev"

# Two more reboots: the older lists shift to .prev.1, .prev.2, and no further.
mount_tpm || exit 1
ufs_umount "$M"
cp "$ML" "$T/boot3.ml"
check "third boot: FILE.prev.1 is the first boot's list" cmp -s "$T/boot1.ml" "$ML.prev.1"
check "  FILE.prev the second's" cmp -s "$T/boot2.ml" "$ML.prev"
reboot_tpm 4
mount_tpm || exit 1
ufs_umount "$M"
cp "$ML" "$T/boot4.ml"
reboot_tpm 5
mount_tpm || exit 1
# The fourth boot's list held boot_aggregate only: without it the TPM is
# in its reset state, which a reboot and an add cut short both leave.
expect_eq "a one-entry list of a previous boot is rotated too: a new list of one entry" \
	1 "$(cat "$C/ima/runtime_measurements_count")"
expect_eq "  and no violation (its entry was not dropped as unproven)" 0 "$(cat "$C/ima/violations")"
read_all
ufs_umount "$M"
check "fifth boot: FILE.prev is the fourth boot's list" cmp -s "$T/boot4.ml" "$ML.prev"
check "  FILE.prev.1 the third's" cmp -s "$T/boot3.ml" "$ML.prev.1"
check "  FILE.prev.2 the second's" cmp -s "$T/boot2.ml" "$ML.prev.2"
check "  and no FILE.prev.3: three lists of previous boots at most" test ! -e "$ML.prev.3"
check "  the first boot's list is gone" \
	bash -c '! cmp -s "$1" "$2.prev" && ! cmp -s "$1" "$2.prev.1" && ! cmp -s "$1" "$2.prev.2"' _ "$T/boot1.ml" "$ML"

# ---- not a reset: refused, whatever rotate_stale says ------------------------------------
cp "$ML" "$T/boot5.ml"
cp -p "$ML.prev" "$T/prev5"
python3 "$EDIT" "$ML" delete 2
check "an entry deleted offline (TPM not reset): not mounted" \
	refused "key=raw:$KEY,ml=$ML,tcti=$TCTI,pcr=11,securityfs=none,nosyslog"
expect_match "  the error says the PCR is not in its reset state" \
	"does not describe the TPM: PCR 11 .*not in its reset state: the list was changed, or another writer" \
	"$(cat "$T/refused.out")"
check "  nothing was rotated" cmp -s "$T/prev5" "$ML.prev"
cp "$T/boot5.ml" "$ML"
tpm_extend 11 "another writer"
check "PCR 11 extended by another writer: not mounted" \
	refused "key=raw:$KEY,ml=$ML,tcti=$TCTI,pcr=11,securityfs=none,nosyslog"
expect_match "  the error says so" "PCR 11 .*not in its reset state" "$(cat "$T/refused.out")"
check "  the list is left as it was" cmp -s "$T/boot5.ml" "$ML"
check "  nothing was rotated" cmp -s "$T/prev5" "$ML.prev"
