#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A persisted measurement list edited offline between two runs of its owner
# (issue 12, item 17), as an attacker with the disk would edit it:
#  - software PCRs with an HMAC key: an entry deleted, two entries swapped,
#    the list truncated, entries appended, the MAC record removed or
#    damaged, another key: the owner (uevm measurements add, uevmfs,
#    uevmd) refuses the list, naming it, or drops an unproven tail and
#    records it as a violation;
#  - software PCRs without a key: the owner says at start that the list
#    carries no integrity;
#  - a TPM: a forged entry appended at the end is not extended into the
#    TPM (tpm2_pcrread before and after), it is dropped from the list and a
#    violation records it; the message names the list.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/swtpm-lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

for tool in swtpm tpm2_pcrread tpm2_pcrextend evmctl python3; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
EDIT="python3 $TESTS_DIR/ima_ml_edit.py"
REF="$TESTS_DIR/ima_ml_ref.py"
unset UEVM_TCTI
KEY=$T/key
make_key "$KEY"
make_key "$T/otherkey"
for i in 1 2 3 4 5; do printf 'file %s\n' "$i" >"$T/f$i"; done

# ---- software PCRs, a key: uevm measurements add --------------------------------
L=$T/sw.bin
add() { "$UEVM" measurements add -v --hmac-key "raw:$KEY" "$@"; }
check "a new software-PCR list with a key" add --list "$L" "$T/f1" "$T/f2"
"$UEVM" measurements add --hmac-key "raw:$KEY" --list "$L" --pcr 11 "$T/f3"
add --list "$L" "$T/f4" >/dev/null
check "  its MAC record is kept beside it" test -s "$L.mac"
expect_eq "  5 entries: boot_aggregate, f1, f2, f3 (PCR 11), f4" 5 "$($EDIT "$L" count)"
out=$(add --list "$L" 2>&1)
expect_match "an unchanged list resumes" 'resumed \(5 entries, software PCRs\)' "$out"
check "  without a warning" eval '! grep -qi warning <<<"$out"'

# attack EDIT...: edit the list (and its MAC record) offline in place, then
# resume it; the output goes to $out, the status to $rc.  restore puts the
# list and its record back as they were.
cp "$L" "$T/saved.bin"
cp "$L.mac" "$T/saved.mac"
attack() {
	"$@"
	out=$(add --list "$L" 2>&1)
	rc=$?
}
restore() {
	cp "$T/saved.bin" "$L"
	cp "$T/saved.mac" "$L.mac"
}
attack $EDIT "$L" delete 3
expect_eq "an entry deleted offline: refused (exit 2)" 2 "$rc"
expect_match "  the message names the list and its MAC record" \
	"$L: the list is shorter than its MAC record $L.mac says .*entries were removed" "$out"
expect_eq "  the list file is left as the attacker left it" 4 "$($EDIT "$L" count)"
restore
attack $EDIT "$L" swap 2 3
expect_eq "two entries of PCR 10 swapped: refused" 2 "$rc"
expect_match "  names the list" "$L: the list does not match its MAC record $L.mac" "$out"
restore
attack $EDIT "$L" swap 4 5
expect_eq "an entry of PCR 11 moved after one of PCR 10 (same PCR values): refused" 2 "$rc"
restore
attack $EDIT "$L" keep 3
expect_eq "the list truncated to its first 3 entries: refused" 2 "$rc"
expect_match "  says entries were removed" "$L: .*shorter than its MAC record .*5 entries" "$out"
restore
attack eval ': >"$L"'
expect_eq "the list emptied: refused" 2 "$rc"
restore
attack rm -f "$L"
expect_eq "the list removed, its MAC record left: refused" 2 "$rc"
restore
attack rm "$L.mac"
expect_eq "the MAC record removed: refused" 2 "$rc"
expect_match "  says the record is missing" "$L: no MAC record $L.mac" "$out"
restore
# Flip one bit of byte 40: writing a fixed byte there left the record as it
# was whenever the MAC already had that byte (1 run in 256).
attack python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(40); b = f.read(1); f.seek(40); f.write(bytes([b[0] ^ 1]))' "$L.mac"
expect_eq "the MAC record damaged: refused" 2 "$rc"
restore
out=$("$UEVM" measurements add --hmac-key "raw:$T/otherkey" --list "$L" 2>&1)
expect_eq "another key: refused" 2 "$?"
expect_match "  says the key may not be the one" "does not match its MAC record.*key" "$out"
out=$("$UEVM" measurements add --list "$L" 2>&1)
expect_eq "no key for a list with a MAC record: refused" 2 "$?"
expect_match "  says a key is needed" "$L: .*MAC record.*key" "$out"
# Two lists kept with one key (uevmfs keeps one per mount point) swapped.
L2=$T/sw2.bin
add --list "$L2" "$T/f5" >/dev/null
mv "$L" "$T/swap.bin"; mv "$L.mac" "$T/swap.bin.mac"
mv "$L2" "$L"; mv "$L2.mac" "$L.mac"
mv "$T/swap.bin" "$L2"; mv "$T/swap.bin.mac" "$L2.mac"
out=$(add --list "$L" 2>&1)
expect_eq "two lists swapped with their records: refused" 2 "$?"
expect_match "  the message says it may come from another path" \
	"$L: the list does not match its MAC record.*moved from another path" "$out"
restore
out=$(add --list "$L" 2>&1)
expect_match "restored: the list resumes" 'resumed \(5 entries, software PCRs\)' "$out"
# Two appended entries (written with software PCRs and no key on another
# copy): not proven by the record, dropped; each becomes a violation.
cp "$L" "$T/forger.bin"
"$UEVM" measurements add --list "$T/forger.bin" "$T/f5" 2>/dev/null
"$UEVM" measurements add --list "$T/forger.bin" --violation /forged/violation 2>/dev/null
attack eval '$EDIT "$L" append "$T/forger.bin" 6 && $EDIT "$L" append "$T/forger.bin" 7'
expect_eq "two entries appended offline: resumed without them (exit 0)" 0 "$rc"
expect_match "  a warning names the list and the dropped entries" \
	"warning: $L: 2 entries at the end were not proven by its MAC record $L.mac .*dropped" "$out"
shown=$("$UEVM" measurements show "$L")
check "  the appended file is no longer listed with its digest" \
	eval '! grep -q "$(sha256sum "$T/f5" | cut -c1-64)" <<<"$shown"'
expect_match "  a violation names it instead" "^10 0{40} ima-ng sha256:0{64} $T/f5\$" "$shown"
expect_eq "  7 entries: the 5 proven ones and 2 violations" 7 "$($EDIT "$L" count)"
out=$(add --list "$L" 2>&1)
expect_match "  the list then resumes as it is" 'resumed \(7 entries' "$out"

# Without a key: said at start.
N=$T/nokey.bin
out=$("$UEVM" measurements add --list "$N" "$T/f1" 2>&1)
expect_match "no key: the owner warns that the list carries no integrity" \
	"warning: $N: .*software PCRs without a key.*no integrity" "$out"
check "  and keeps no MAC record" test ! -e "$N.mac"
$EDIT "$N" delete 2
out=$("$UEVM" measurements add -v --list "$N" 2>&1)
expect_match "  an edit cannot be detected there, the warning says so again" \
	"warning: $N: .*no integrity" "$out"

# ---- uevmfs: a key, software PCRs ------------------------------------------------------
S=$T/src
M=$T/fmnt
mkdir -p "$S"
echo "one" >"$S/a"
echo "two" >"$S/b"
echo "three" >"$S/c"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
UL=$T/uevmfs.ml
ufs_mount "$S" "$M" "key=raw:$KEY,ml=$UL,policy=tcb,nosyslog,noauditd" || exit 1
cat "$M/a" "$M/b" "$M/c" >/dev/null
ufs_umount "$M"
expect_eq "uevmfs: boot_aggregate and 3 files measured" 4 "$($EDIT "$UL" count)"
check "uevmfs: the list has a MAC record" test -s "$UL.mac"
$EDIT "$UL" delete 3
: >"$T/uevmfs.stderr"
"$UEVMFS" "$S" "$M" -f -o "key=raw:$KEY,ml=$UL,policy=tcb,securityfs=none,nosyslog,noauditd" \
	>>"$T/uevmfs.stderr" 2>&1 &
pid=$!
wait_quiet "$WAIT_S" ufs_up_or_gone "$M" "$pid"
if ufs_mounted "$M" fuse.uevmfs; then
	fail "uevmfs: an entry deleted offline: the mount is refused" "it mounted"
	fusermount3 -u "$M"
	wait "$pid"
else
	wait "$pid"
	expect_eq "uevmfs: an entry deleted offline: the mount is refused (exit 1)" 1 "$?"
fi
expect_match "  stderr names the list and says why" \
	"uevmfs: measurement list $UL: $UL: the list is shorter than its MAC record $UL.mac says .*entries were removed" "$(cat "$T/uevmfs.stderr")"
check "  nothing is mounted" eval '! grep -q " $M " /proc/mounts'
: >"$T/uevmfs.stderr"
ufs_mount "$S" "$M" "ml=$T/uevmfs-nokey.ml,policy=none,nosyslog,noauditd" || exit 1
ufs_umount "$M"
expect_match "uevmfs without a key: a warning on stderr" \
	"uevmfs: warning: $T/uevmfs-nokey.ml: .*no integrity" "$(cat "$T/uevmfs.stderr")"

# ---- uevmd: a key, software PCRs ------------------------------------------------------
make_image || { fail "loop-mounted ext4 image"; exit 1; }
write_policy
mkdir -p "$MNT/d"
for i in 1 2 3; do echo "uevmd file $i" >"$MNT/d/g$i"; done
"$UEVM" label -r --hmac-key "raw:$KEY" "$MNT/d" >/dev/null
DL=$T/uevmd.ml
KEYSPEC=raw:$KEY write_conf "measurement_list = $DL"
start_uevmd || { fail "uevmd starts with a software-PCR list"; exit 1; }
cat "$MNT/d/g1" "$MNT/d/g2" "$MNT/d/g3" >/dev/null
expect_eq "uevmd: boot_aggregate and 3 files measured" 4 \
	"$("$UEVM" measurements daemon --count --socket "$SOCK")"
stop_uevmd
check "uevmd: the list has a MAC record" test -s "$DL.mac"
check "uevmd: no warning about integrity with a key" eval '! grep -q "no integrity" "$LOG"'
$EDIT "$DL" swap 2 3
if start_uevmd 2>/dev/null; then
	fail "uevmd: two entries swapped offline: refused at start" "it started"
	stop_uevmd
else
	pass "uevmd: two entries swapped offline: refused at start"
fi
check "  the log names the list and says why" \
	grep -qE "measurement list $DL: $DL: .*does not match its MAC record" "$LOG"
# Without a key (measurements only): a warning in the log at start.
cat >"$T/mpolicy" <<-'EOF'
	measure func=FILE_CHECK mask=MAY_READ
	EOF
POLICY=$T/mpolicy write_conf "measurement_list = $T/uevmd-nokey.ml"
sed -i '/^key = /d' "$CONF"
start_uevmd || { fail "uevmd starts without a key"; exit 1; }
stop_uevmd
check "uevmd without a key: the log warns that the list carries no integrity" \
	grep -qE "warning.*$T/uevmd-nokey.ml: .*no integrity" "$LOG"

# ---- a TPM: a forged entry appended at the end -----------------------------------------
start_swtpm || { fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
pass "swtpm starts on 127.0.0.1"
TL=$T/tpm.bin
"$UEVM" measurements add --list "$TL" --tcti "$TCTI" "$T/f1" "$T/f2"
before1=$(tpm_pcr sha1 10)
before256=$(tpm_pcr sha256 10)
cp "$TL" "$T/tpm-orig.bin"
# The attacker's entry: measured into a copy with software PCRs.
cp "$TL" "$T/tpm-forger.bin"
"$UEVM" measurements add --list "$T/tpm-forger.bin" --tcti none "$T/f5" 2>/dev/null
$EDIT "$TL" append "$T/tpm-forger.bin" 4
expect_eq "the forged entry is appended to the list" 4 "$($EDIT "$TL" count)"
out=$("$UEVM" measurements add -v --list "$TL" --tcti "$TCTI" 2>&1)
expect_eq "restart with the TPM: the list resumes (exit 0)" 0 "$?"
expect_match "  a warning names the list and the dropped entry" \
	"warning: $TL: 1 entry at the end .*not proven by the TPM.*dropped" "$out"
shown=$("$UEVM" measurements show "$TL")
check "  the forged digest is not in the list" \
	eval '! grep -q "$(sha256sum "$T/f5" | cut -c1-64)" <<<"$shown"'
expect_match "  a violation names the forged file" "^10 0{40} ima-ng sha256:0{64} $T/f5\$" "$shown"
check "  the list starts with the entries the TPM holds" \
	cmp -s "$T/tpm-orig.bin" <(head -c "$(stat -c %s "$T/tpm-orig.bin")" "$TL")
# What the forged entry would have made of PCR 10, and what the TPM holds.
python3 "$REF" "$T/tpm-forger.bin" "$T/ref.ascii" >"$T/ref-forged.out"
forged256=$(awk '$1 == "pcr" && $2 == "sha256" && $3 == "10" { print $4 }' "$T/ref-forged.out")
after256=$(tpm_pcr sha256 10)
check "  the TPM's PCR 10 changed only by the violation (not what the forged entry gives)" \
	test "$after256" != "$forged256" -a "$after256" != "$before256"
python3 "$REF" "$TL" "$T/ref.ascii" >"$T/ref.out"
expect_eq "  sha256 PCR 10 = the reference replay of the resumed list" \
	"$(awk '$1 == "pcr" && $2 == "sha256" && $3 == "10" { print $4 }' "$T/ref.out")" "$after256"
expect_eq "  sha1 PCR 10 = the reference replay of the resumed list" \
	"$(awk '$1 == "pcr" && $2 == "sha1" && $3 == "10" { print $4 }' "$T/ref.out")" "$(tpm_pcr sha1 10)"
check "  sha1 PCR 10 is not what it was before either (the violation)" test "$(tpm_pcr sha1 10)" != "$before1"
expect_rc "  uevm verify accepts the resumed list against the TPM" 0 \
	"$UEVM" measurements verify --tcti "$TCTI" "$TL"
pcr_file sha1 "$T/pcrs-sha1"
pcr_file sha256 "$T/pcrs-sha256"
expect_rc "  evmctl --ignore-violations accepts it too" 0 \
	evmctl ima_measurement --ignore-violations --pcrs sha1,"$T/pcrs-sha1" --pcrs sha256,"$T/pcrs-sha256" "$TL"
out=$("$UEVM" measurements add -v --list "$TL" --tcti "$TCTI" 2>&1)
expect_match "  then it resumes as it is" 'resumed \(4 entries, TPM\)' "$out"
