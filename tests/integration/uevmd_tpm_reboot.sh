#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmd with a TPM (swtpm, its own instance), as uevmfs_tpm.sh for uevmfs:
#  - pcr = 11: every entry goes to PCR 11 (a policy rule with pcr= to its
#    own), PCR 10 stays in its reset state, PCR 11 equals the replay;
#  - a reboot (swtpm restarted on its state: PCRs reset): by default the
#    list of the previous boot moves to FILE.prev, a new list starts with
#    this boot's boot_aggregate and replays to the TPM, logged and audited;
#    measurement_rotate_stale = no refuses to start instead;
#  - a list edited offline while the TPM was not reset: refused, nothing
#    moved.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

for tool in swtpm tpm2_pcrread tpm2_pcrextend python3 openssl; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
source "$TESTS_DIR/swtpm-lib.sh"
ZERO=$(printf '0%.0s' $(seq 64))
L=$T/ml

conf() { write_conf "tpm_tcti = $TCTI" "measurement_list = $L" "pcr = 11" "$@"; }
read_all() { cat "$MNT"/m/f* "$MNT/m/u" >/dev/null; }
# refused: uevmd exits at start; its output in $T/uevmd.out.
refused() {
	: >"$T/uevmd.out"
	if start_uevmd 2>/dev/null; then
		stop_uevmd
		return 1
	fi
}
daemon_list() { "$UEVM" measurements daemon "$@" --socket "$SOCK"; }

start_swtpm || { fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
boot_pcrs 1
make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
cat >"$T/policy" <<'EOF'
measure func=FILE_CHECK mask=MAY_READ fowner=1000 pcr=12
measure func=FILE_CHECK mask=MAY_READ
appraise func=FILE_CHECK
EOF
mkdir -p "$MNT/m"
for i in 1 2 3; do echo "file $i" >"$MNT/m/f$i"; done
echo "owned by 1000" >"$MNT/m/u"
chown 1000 "$MNT/m/u"
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT/m"

# ---- pcr = 11 ---------------------------------------------------------------------------
conf
start_uevmd || { fail "uevmd starts with pcr = 11"; exit 1; }
read_all
daemon_list --ascii >"$T/ascii"
expect_eq "5 entries: boot_aggregate, 3 files, the file of uid 1000" 5 "$(wc -l <"$T/ascii")"
expect_eq "boot_aggregate and every file go to PCR 11" 4 "$(grep -c '^11 ' "$T/ascii")"
expect_match "the rule with pcr=12 still wins for its file" "^12 .* $MNT/m/u\$" "$(cat "$T/ascii")"
expect_eq "PCR 10 is untouched" "$ZERO" "$(tpm_pcr sha256 10)"
daemon_list --binary >"$T/live.bin"
expect_eq "sha256 PCR 11 = the independent replay" "$(ref_pcr "$T/live.bin" sha256 11)" "$(tpm_pcr sha256 11)"
expect_eq "sha1 PCR 12 = the independent replay" "$(ref_pcr "$T/live.bin" sha1 12)" "$(tpm_pcr sha1 12)"
expect_rc "uevm measurements verify --pcr 11 --pcr 12 accepts the list" 0 \
	"$UEVM" measurements verify --tcti "$TCTI" --pcr 11 --pcr 12 "$T/live.bin"
stop_uevmd
cp "$L" "$T/boot1.ml"

# ---- a reboot ---------------------------------------------------------------------------
reboot_tpm 2
conf
start_uevmd || { fail "uevmd starts after a TPM reset (rotate by default)"; exit 1; }
pass "uevmd starts after a TPM reset (measurement_rotate_stale defaults to yes)"
check "  the log says the TPM was reset and names FILE.prev" \
	log_has "warning: measurement list $L: the TPM was reset .*\(5 entries\) was moved to $L.prev and a new list started"
check "  an audit record names the list" \
	log_has "op=measurement_list cause=tpm-reset-rotated .*name=\"$L\""
check "  the list of the previous boot is FILE.prev, unchanged" cmp -s "$T/boot1.ml" "$L.prev"
expect_eq "  a new list: boot_aggregate only" 1 "$(daemon_list --count)"
expect_match "  its boot_aggregate is this boot's, in PCR 11" \
	"^11 [0-9a-f]{40} ima-ng sha256:$(boot_aggregate_of sha256) boot_aggregate\$" "$(daemon_list --ascii)"
read_all
daemon_list --binary >"$T/live2.bin"
expect_eq "  the new list replays to PCR 11" "$(ref_pcr "$T/live2.bin" sha256 11)" "$(tpm_pcr sha256 11)"
stop_uevmd
expect_rc "  uevm measurements verify accepts it" 0 \
	"$UEVM" measurements verify --tcti "$TCTI" --pcr 11 --pcr 12 "$L"
cp "$L" "$T/boot2.ml"

reboot_tpm 3
conf "measurement_rotate_stale = no"
check "measurement_rotate_stale = no after a TPM reset: uevmd does not start" refused
expect_match "  the error says the TPM was reset" \
	"does not describe the TPM: PCR 1[12] of the sha[0-9]+ bank differs .*the TPM was reset: the list is of a previous boot" \
	"$(cat "$T/uevmd.out")"
expect_rc "  uevmd --check refuses it too" 2 "$UEVMD" -c "$CONF" --check
check "  the list is left as it was" cmp -s "$T/boot2.ml" "$L"
check "  FILE.prev is left as it was" cmp -s "$T/boot1.ml" "$L.prev"

# ---- not a reset: refused ---------------------------------------------------------------
conf
start_uevmd || { fail "uevmd starts on the third boot"; exit 1; }
read_all
stop_uevmd
cp "$L" "$T/boot3.ml"
check "third boot: FILE.prev is the second boot's list, FILE.prev.1 the first's" \
	eval 'cmp -s "$T/boot2.ml" "$L.prev" && cmp -s "$T/boot1.ml" "$L.prev.1"'
python3 "$TESTS_DIR/ima_ml_edit.py" "$L" delete 2
check "an entry deleted offline (TPM not reset): uevmd does not start" refused
expect_match "  the error says the PCR is not in its reset state" \
	"does not describe the TPM: PCR 11 .*not in its reset state: the list was changed, or another writer" \
	"$(cat "$T/uevmd.out")"
check "  nothing was rotated" eval 'cmp -s "$T/boot2.ml" "$L.prev" && test ! -e "$L.prev.2"'
