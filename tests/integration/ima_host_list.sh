#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One TPM-backed measurement list per host (issue 13, item 2): uevmd and
# two uevmfs mounts (two SOURCE trees) on one swtpm append to ONE list
# file; opens through the three interleave; PCR 10 (sha1 and sha256) is
# the list's replay computed by an independent reader (tests/ima_ml_ref.py),
# and a quote over sha256:10 made and checked with tpm2-tools (an AK under
# the endorsement hierarchy, tpm2_checkquote with the nonce) carries that
# replay.  A writer restarted, and one killed with SIGKILL, while the
# others keep writing: the list still replays.  An entry in the file that
# the TPM lacks (what a writer killed between its append and its extend
# leaves; written here under the list's lock) is dropped by the next
# writer and recorded as a violation.  A list with software PCRs stays
# single-owner: a second opener is refused with the holder's pid.
# Then the kernel's list (a fixture written from the documented binary
# format, its entries extended into a fresh swtpm's PCR 10): adopted as
# the prefix of a new list, entries the kernel appends later are pulled
# in, the replay equals the PCR; a kernel list that does not replay to the
# TPM is refused, naming both.  After a TPM reset the host list is refused
# (saying the TPM was reset), or with --rotate-stale moved aside through
# FILE.prev, .prev.1, .prev.2 with a warning counting its entries, a
# one-entry list too (never when the PCR is neither reset nor the kernel's
# list: refused, saying so); a writer that waited for the lock while the
# list was moved aside takes the new one; a host list on PCR 11 (uevmfs
# and `uevm measurements add`) keeps PCR 10 untouched and is rotated the
# same; after a reboot on a kernel with IMA, uevmd (measurement_rotate_stale)
# moves it aside (logged, audited) and adopts the new kernel's list.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

for tool in swtpm tpm2_pcrread tpm2_pcrextend tpm2_createek tpm2_createak tpm2_quote \
	tpm2_checkquote tpm2_print tpm2_flushcontext python3 flock; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
source "$TESTS_DIR/swtpm-lib.sh"
REF=$TESTS_DIR/ima_ml_ref.py
FIX=$TESTS_DIR/ima_ml_fixture.py

start_swtpm || { fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
for i in $(seq 0 9); do tpm_extend "$i" "boot$i"; done
# -o splits at commas: the TCTI's own comma is escaped (libfuse's \,).
OTCTI=${TCTI//,/\\,}

# replay_is_pcr LIST [PCR]: the independent replay of LIST equals PCR (10)
# of the swtpm in both banks.
replay_is_pcr() {
	local pcr=${2:-10}
	python3 "$REF" "$1" "$T/ref.ascii" >"$T/ref.out" || return 1
	[ "$(awk -v p="$pcr" '$1 == "pcr" && $2 == "sha1" && $3 + 0 == p { print $4 }' "$T/ref.out")" = \
		"$(tpm_pcr sha1 "$pcr")" ] &&
	[ "$(awk -v p="$pcr" '$1 == "pcr" && $2 == "sha256" && $3 + 0 == p { print $4 }' "$T/ref.out")" = \
		"$(tpm_pcr sha256 "$pcr")" ]
}
# names LIST: the names the list records, one a line (ASCII order kept).
names() { python3 "$REF" "$1" "$T/names.ascii" >/dev/null && awk '{ print $5 }' "$T/names.ascii"; }
# umount_pid MOUNTPOINT PID: unmount one of several uevmfs; it exits 0.
umount_pid() {
	fusermount3 -u "$1" 2>/dev/null || fusermount3 -u -z "$1"
	wait_quiet "$WAIT_S" ufs_gone "$2"
	wait "$2" 2>/dev/null
	local status=$?
	expect_eq "uevmfs on $(basename "$1") exits 0" 0 "$status"
}

# ---- three writers, one list -------------------------------------------------------
make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
H=$T/host.ml
S1=$T/src1 S2=$T/src2 M1=$T/mnt1 M2=$T/mnt2
mkdir -p "$MNT/m" "$S1" "$S2"
for i in 1 2 3 4 5 6 7 8; do
	echo "uevmd file $i" >"$MNT/m/f$i"
	echo "first tree $i" >"$S1/f$i"
	echo "second tree $i" >"$S2/f$i"
done
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT/m" "$S1" "$S2" >/dev/null

write_conf "tpm_tcti = $TCTI" "measurement_list = $H" "kernel_measurements = none"
start_uevmd || { fail "uevmd starts on the host list"; exit 1; }
UOPTS="key=raw:$T/key,policy=$T/policy,tcti=$OTCTI,kernel_ml=none,ml=$H"
ufs_mount "$S1" "$M1" "$UOPTS" || { fail "uevmfs 1 mounts on the host list"; exit 1; }
P1=$UFS_PID
ufs_mount "$S2" "$M2" "$UOPTS" || { fail "uevmfs 2 mounts on the same list"; exit 1; }
P2=$UFS_PID
pass "uevmd and two uevmfs mounts open one list with one TPM"

for i in 1 2 3 4; do
	cat "$M1/f$i" "$MNT/m/f$i" "$M2/f$i" >/dev/null
done
cat "$M2/f1" "$MNT/m/f1" >/dev/null	# measured already: no second entry
expect_eq "one boot_aggregate, then 12 entries from the three writers, none twice" \
	"$(printf 'boot_aggregate\n'; for i in 1 2 3 4; do printf '%s\n' "$M1/f$i" "$MNT/m/f$i" "$M2/f$i"; done)" \
	"$(names "$H")"
check "PCR 10 (sha1 and sha256) is the list's replay" replay_is_pcr "$H"
expect_eq "only the one list file" "" "$(ls /var/lib/uevm/host.ml "$T"/*.ml.prev 2>/dev/null)"

# A quote over sha256:10 by an AK of this TPM, checked with the nonce; its
# PCR digest is the hash of the replayed PCR 10.
(
	cd "$T" &&
	tpm2_createek -T "$TCTI" -c ek.ctx -G rsa -u ek.pub &&
	tpm2_flushcontext -T "$TCTI" -t &&
	tpm2_createak -T "$TCTI" -C ek.ctx -c ak.ctx -G rsa -g sha256 -s rsassa \
		-u ak.pub -f pem -n ak.name &&
	tpm2_flushcontext -T "$TCTI" -t &&
	tpm2_quote -T "$TCTI" -c ak.ctx -l sha256:10 -q c0ffee01 -m quote.msg \
		-s quote.sig -o quote.pcrs -g sha256 &&
	tpm2_checkquote -u ak.pub -m quote.msg -s quote.sig -f quote.pcrs -g sha256 \
		-q c0ffee01
) >"$T/quote.out" 2>&1
check "tpm2_checkquote accepts the quote of PCR 10 with the nonce" \
	grep -q "^pcrs:" "$T/quote.out"
python3 "$REF" "$H" "$T/ref.ascii" >"$T/ref.out"
want=$(python3 -c 'import hashlib, sys; print(hashlib.sha256(bytes.fromhex(sys.argv[1])).hexdigest())' \
	"$(awk '$1 == "pcr" && $2 == "sha256" && $3 + 0 == 10 { print $4 }' "$T/ref.out")")
expect_match "the quote's PCR digest is the hash of the replayed PCR 10" \
	"pcrDigest: *$want" "$(tpm2_print -t TPMS_ATTEST "$T/quote.msg")"
expect_rc "tpm2_checkquote refuses another nonce" 1 \
	tpm2_checkquote -u "$T/ak.pub" -m "$T/quote.msg" -s "$T/quote.sig" \
	-f "$T/quote.pcrs" -g sha256 -q c0ffee02

# ---- a writer restarted, a writer killed ---------------------------------------------
umount_pid "$M2" "$P2"
cat "$M1/f5" "$MNT/m/f5" >/dev/null
ufs_mount "$S2" "$M2" "$UOPTS" || { fail "uevmfs 2 mounts again"; exit 1; }
P2=$UFS_PID
cat "$M2/f5" "$M1/f6" "$MNT/m/f6" "$M2/f6" >/dev/null
check "restarted writer: the list still replays to PCR 10" replay_is_pcr "$H"
expect_eq "  and holds every entry once (boot_aggregate + 18)" 19 "$(names "$H" | sort -u | wc -l)"

{ kill -9 "$P1"; wait "$P1"; } 2>/dev/null
fusermount3 -u -z "$M1" 2>/dev/null
cat "$MNT/m/f7" "$M2/f7" >/dev/null
check "a writer killed with SIGKILL: the others go on, the list replays" replay_is_pcr "$H"

# What a writer killed between append and extend leaves: an entry the TPM
# never saw at the end of the file (written under the list's lock).
flock "$H" python3 "$FIX" "$H" "$T/never-extended" >/dev/null
cat "$MNT/m/f8" >/dev/null
expect_eq "the next add drops the unextended entry and records a violation" \
	"$T/never-extended $MNT/m/f8" "$(names "$H" | tail -n 2 | tr '\n' ' ' | sed 's/ $//')"
expect_match "  the violation: a template digest of zeros" \
	"^10 0{40} ima-ng sha256:0{64} $T/never-extended\$" "$(cat "$T/names.ascii")"
check "  and the list replays to PCR 10" replay_is_pcr "$H"
cat "$M2/f8" >/dev/null
check "uevmfs 2 catches up past the dropped entry: the list replays" replay_is_pcr "$H"
expect_eq "uevmd's list, read through its socket, has the others' entries too" \
	"$(names "$H" | wc -l)" "$("$UEVM" measurements daemon --count --socket "$SOCK")"

# A list with software PCRs has one owner: a second is refused, with its pid.
ufs_mount "$S1" "$M1" "key=raw:$T/key,policy=$T/policy,ml=$T/sw.ml" ||
	{ fail "uevmfs with a software-PCR list mounts"; exit 1; }
P1=$UFS_PID
err=$("$UEVM" measurements add --list "$T/sw.ml" --tcti none "$S1/f1" 2>&1)
expect_match "a second owner of a software-PCR list is refused, naming the file and pid" \
	"$T/sw.ml: in use by another owner .*\\(held by pid $P1\\)" "$err"
umount_pid "$M1" "$P1"
umount_pid "$M2" "$P2"
stop_uevmd

# fresh_swtpm: a TPM reset (a reboot), PCRs 0-9 extended as by firmware.
fresh_swtpm() {
	stop_swtpm
	rm -rf "$TPMSTATE"
	start_swtpm || { fail "a fresh swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
	for i in $(seq 0 9); do tpm_extend "$i" "boot$i"; done
}

# ---- after a TPM reset ---------------------------------------------------------------------
# The rules of a list of a previous boot (as uevmfs_tpm.sh and
# uevmd_tpm_reboot.sh check for uevmfs and uevmd): refused saying the TPM
# was reset, or rotated through FILE.prev, .prev.1, .prev.2 with a warning
# that counts the old list's entries; a one-entry list is rotated too.
n1=$(names "$H" | wc -l)
cp "$H" "$T/boot1.host"
fresh_swtpm
out=$("$UEVM" measurements add --list "$H" --tcti "$TCTI" "$S1/f1" 2>&1)
expect_match "after a TPM reset the host list is refused, naming it" \
	"$H does not describe the TPM: PCR 10 of the sha1 bank differs" "$out"
expect_match "  the error says the TPM was reset" \
	"the TPM was reset: the list is of a previous boot; rotating stale lists would move it aside" "$out"
check "  the list is left as it was" cmp -s "$T/boot1.host" "$H"
out=$("$UEVM" measurements add -v --list "$H" --tcti "$TCTI" --rotate-stale "$S1/f1" 2>&1)
expect_match "  --rotate-stale: moved aside, a new list started" "TPM was reset: old list moved to .prev" "$out"
expect_match "  the warning counts the old list's entries and names FILE.prev" \
	"warning: $H: the TPM was reset \(.*\); the list of the previous boot \($n1 entries\) was moved to $H.prev and a new list started" "$out"
expect_eq "  the new list: boot_aggregate and the file" "boot_aggregate $S1/f1" \
	"$(names "$H" | tr '\n' ' ' | sed 's/ $//')"
check "  it replays to PCR 10" replay_is_pcr "$H"
check "  the old one kept as .prev, unchanged" cmp -s "$T/boot1.host" "$H.prev"
cp "$H" "$T/boot2.host"
tpm_extend 10 "someone else's extend"
out=$("$UEVM" measurements add -v --list "$H" --tcti "$TCTI" --rotate-stale "$S1/f2" 2>&1)
expect_match "a PCR neither reset nor the list's: refused even with --rotate-stale" \
	"$H does not describe the TPM: PCR 10 of the sha1 bank differs" "$out"
expect_match "  the error says the PCR is not in its reset state" \
	"and is not in its reset state: the list was changed, or another writer extended the PCR" "$out"
check "  and the list is left where it was" cmp -s "$T/boot2.host" "$H"
check "  nothing was rotated" eval 'cmp -s "$T/boot1.host" "$H.prev" && test ! -e "$H.prev.1"'

fresh_swtpm
"$UEVM" measurements add --list "$H" --tcti "$TCTI" --rotate-stale 2>"$T/rot.err"
check "a second reboot: FILE.prev is that boot's list, FILE.prev.1 the first's" \
	eval 'cmp -s "$T/boot2.host" "$H.prev" && cmp -s "$T/boot1.host" "$H.prev.1"'
expect_eq "  the new list holds boot_aggregate only" "boot_aggregate" "$(names "$H")"
cp "$H" "$T/boot3.host"
fresh_swtpm
out=$("$UEVM" measurements add --list "$H" --tcti "$TCTI" --rotate-stale "$S1/f3" 2>&1)
expect_match "a one-entry list of a previous boot is rotated, not dropped" \
	"the list of the previous boot \(1 entry\) was moved to $H.prev" "$out"
expect_eq "  the new list: boot_aggregate and the file, no violation" "boot_aggregate $S1/f3" \
	"$(names "$H" | tr '\n' ' ' | sed 's/ $//')"
check "  the chain: .prev, .prev.1, .prev.2 the three previous boots" \
	eval 'cmp -s "$T/boot3.host" "$H.prev" && cmp -s "$T/boot2.host" "$H.prev.1" &&
		cmp -s "$T/boot1.host" "$H.prev.2"'
fresh_swtpm
"$UEVM" measurements add --list "$H" --tcti "$TCTI" --rotate-stale 2>"$T/rot.err"
check "  one more: the oldest goes, three lists of previous boots at most" \
	eval 'cmp -s "$T/boot3.host" "$H.prev.1" && cmp -s "$T/boot2.host" "$H.prev.2" &&
		test ! -e "$H.prev.3"'

# Every front-end starts after a reboot: a writer that opened the list
# while another held its lock to move it aside takes the new list (here
# the test holds the lock and moves the list, as that rotation does).
fresh_swtpm
exec 9<"$H"
flock -x 9
"$UEVM" measurements add --list "$H" --tcti "$TCTI" --rotate-stale "$S1/f4" >"$T/late.out" 2>&1 9<&- &
late=$!
ino=$(stat -c %i "$H")
has_list_open() { stat -L -c %i /proc/"$late"/fd/* 2>/dev/null | grep -qx "$ino"; }
wait_quiet "$WAIT_S" has_list_open
mv "$H" "$T/moved-aside.ml"
exec 9<&-
wait "$late"
expect_eq "a writer that waited while the list was moved aside opens the new one" \
	"0 " "$? $(cat "$T/late.out")"
expect_eq "  the new list: boot_aggregate and its file" "boot_aggregate $S1/f4" \
	"$(names "$H" | tr '\n' ' ' | sed 's/ $//')"
check "  it replays to PCR 10" replay_is_pcr "$H"

# ---- a host list on another PCR -------------------------------------------------------------
# pcr=11: uevmfs and `uevm measurements add --pcr 11` share it; every entry
# (boot_aggregate too) goes to PCR 11, whose value is its replay; PCR 10
# is untouched.  After a reboot it is rotated like any other.
OTCTI=${TCTI//,/\\,}
H11=$T/pcr11.ml
pcr10=$(tpm_pcr sha256 10)
ufs_mount "$S1" "$M1" "key=raw:$T/key,policy=$T/policy,tcti=$OTCTI,kernel_ml=none,ml=$H11,pcr=11" ||
	{ fail "uevmfs mounts a host list on PCR 11"; exit 1; }
P1=$UFS_PID
cat "$M1/f1" >/dev/null
"$UEVM" measurements add --list "$H11" --tcti "$TCTI" --pcr 11 "$S2/f1"
cat "$M1/f2" >/dev/null
expect_eq "pcr=11: both writers' entries in one list" "boot_aggregate $M1/f1 $S2/f1 $M1/f2" \
	"$(names "$H11" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "  every entry in PCR 11" "11 11 11 11" "$(awk '{ print $1 }' "$T/names.ascii" | tr '\n' ' ' | sed 's/ $//')"
check "  PCR 11 is its replay" replay_is_pcr "$H11" 11
expect_eq "  PCR 10 is untouched" "$pcr10" "$(tpm_pcr sha256 10)"
umount_pid "$M1" "$P1"
cp "$H11" "$T/pcr11.boot1"
fresh_swtpm
out=$("$UEVM" measurements add --list "$H11" --tcti "$TCTI" --pcr 11 "$S2/f2" 2>&1)
expect_match "  after a reboot: refused, saying the TPM was reset" \
	"$H11 does not describe the TPM: PCR 11 .*the TPM was reset: the list is of a previous boot" "$out"
out=$("$UEVM" measurements add --list "$H11" --tcti "$TCTI" --pcr 11 --rotate-stale "$S2/f2" 2>&1)
expect_match "  --rotate-stale: rotated, with the warning" \
	"the list of the previous boot \(4 entries\) was moved to $H11.prev" "$out"
check "  FILE.prev is the old list" cmp -s "$T/pcr11.boot1" "$H11.prev"
check "  the new list replays to PCR 11" replay_is_pcr "$H11" 11

# ---- adopting the kernel's list ------------------------------------------------------------
fresh_swtpm
K=$T/kernel_binary_runtime_measurements
kernel_measures() {	# name...: the kernel appends and extends
	python3 "$FIX" "$K" "$@" | while read -r digests; do
		tpm2_pcrextend -T "$TCTI" "10:$digests"
	done
}
kernel_measures boot_aggregate /usr/bin/kernel-measured-1 /etc/kernel-measured-2
OTCTI=${TCTI//,/\\,}

H2=$T/adopted.ml
write_conf "tpm_tcti = $TCTI" "measurement_list = $H2" "kernel_measurements = $K"
start_uevmd || { fail "uevmd starts on a PCR 10 the kernel extended"; exit 1; }
check "the kernel's list is the new list's prefix, byte for byte" \
	cmp -n "$(stat -c %s "$K")" "$K" "$H2"
cat "$MNT/m/f1" >/dev/null
kernel_measures /usr/bin/kernel-measured-later
cat "$MNT/m/f2" >/dev/null
expect_eq "adopted: the kernel's entries, ours, and the kernel's later one pulled in" \
	"boot_aggregate /usr/bin/kernel-measured-1 /etc/kernel-measured-2 $MNT/m/f1 /usr/bin/kernel-measured-later $MNT/m/f2" \
	"$(names "$H2" | tr '\n' ' ' | sed 's/ $//')"
check "  and PCR 10 is its replay" replay_is_pcr "$H2"
ufs_mount "$S1" "$M1" "key=raw:$T/key,policy=$T/policy,tcti=$OTCTI,kernel_ml=$K,ml=$H2" ||
	{ fail "uevmfs joins the adopted list"; exit 1; }
P1=$UFS_PID
kernel_measures /usr/bin/kernel-measured-last
cat "$M1/f1" >/dev/null
expect_eq "uevmfs on the adopted list pulls the kernel's newest entry too" \
	"/usr/bin/kernel-measured-last $M1/f1" "$(names "$H2" | tail -n 2 | tr '\n' ' ' | sed 's/ $//')"
check "  and PCR 10 is its replay" replay_is_pcr "$H2"
umount_pid "$M1" "$P1"
stop_uevmd

# A kernel list that does not replay to the TPM: refused, naming both.
cp "$K" "$T/kernel.bad"
python3 "$FIX" "$T/kernel.bad" /never/extended >/dev/null
mkdir -p "$M2"
out=$("$UEVMFS" "$S2" "$M2" -f -o "securityfs=none,key=raw:$T/key,tcti=$OTCTI,kernel_ml=$T/kernel.bad,ml=$T/refused.ml" 2>&1)
rc=$?
expect_eq "uevmfs refuses to start a list the kernel's list does not explain" 1 "$((rc != 0))"
expect_match "  the error names the PCR, the kernel's list and the cause" \
	"PCR 10 .*not in its reset state.*kernel's list $T/kernel.bad does not replay to the TPM" "$out"
out=$("$UEVMFS" "$S2" "$M2" -f -o "securityfs=none,key=raw:$T/key,tcti=$OTCTI,kernel_ml=none,ml=$T/refused.ml" 2>&1)
expect_match "kernel_ml=none: refused as before" "PCR 10 \\(sha[0-9]*\\) is not in its reset state" "$out"
expect_eq "  and nothing was written to the refused list" 0 "$(stat -c %s "$T/refused.ml" 2>/dev/null || echo 0)"

# A reboot on a kernel with IMA: the TPM holds only the new kernel's list;
# the stale host list is moved aside and the new kernel's list adopted.
n2=$(names "$H2" | wc -l)
fresh_swtpm
mv "$K" "$T/kernel.before-reboot"
kernel_measures boot_aggregate /usr/bin/after-reboot
write_conf "tpm_tcti = $TCTI" "measurement_list = $H2" "kernel_measurements = $K" \
	"measurement_rotate_stale = yes"
start_uevmd || { fail "uevmd starts after the reboot (measurement_rotate_stale)"; exit 1; }
expect_eq "after a reboot: the stale list moved to .prev" "/usr/bin/kernel-measured-last $M1/f1" \
	"$(names "$H2.prev" | tail -n 2 | tr "\\n" " " | sed "s/ $//")"
check "  the new list starts as the new kernel's list" cmp -n "$(stat -c %s "$K")" "$K" "$H2"
check "  the log says the TPM was reset, counts the old list's entries, names FILE.prev" \
	log_has "warning: measurement list $H2: the TPM was reset \(.*kernel's new list: a reboot\); .*\($n2 entries\) was moved to $H2.prev and a new list started"
check "  an audit record names the list" \
	log_has "op=measurement_list cause=tpm-reset-rotated .*name=\"$H2\""
cat "$MNT/m/f3" >/dev/null
check "  followed by ours, replaying to PCR 10" replay_is_pcr "$H2"
stop_uevmd
