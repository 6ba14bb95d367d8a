#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What an attestation agent on a host with one TPM-backed list sees
# (issue 13): uevmd and a uevmfs mount append to one host list; an agent
# keeps uevmd's control tree file open (tests/ml_reader.py, the Keylime
# agent's read pattern).  Files opened through uevmfs - the other process -
# appear on that descriptor; both control trees serve the host list as
# it is in the file (binary: byte for byte; ASCII: the same text), and
# after a quote of PCR 10 the list read holds every entry the quote
# covers: its replay (tests/ima_ml_ref.py) equals the quoted PCR.  A
# runtime policy made from the two trees (--map SOURCE=mount point) passes
# `uevm runtime-policy check` on the agent's list; a file changed offline
# under uevmfs fails it as Keylime would ("not in allowlist"/digest).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

for tool in swtpm tpm2_pcrread tpm2_pcrextend python3; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
source "$TESTS_DIR/swtpm-lib.sh"
source "$TESTS_DIR/ml_reader-lib.sh"
REF=$TESTS_DIR/ima_ml_ref.py

start_swtpm || { fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
for i in $(seq 0 9); do tpm_extend "$i" "boot$i"; done
OTCTI=${TCTI//,/\\,}

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
H=$T/host.ml S=$T/src M=$T/mnt1 DC=$T/dtree UC=$T/utree
mkdir -p "$MNT/app" "$S"
for i in 1 2 3 4; do
	echo "daemon file $i" >"$MNT/app/d$i"
	echo "mounted file $i" >"$S/u$i"
done
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT/app" "$S" >/dev/null

write_conf "tpm_tcti = $TCTI" "measurement_list = $H" "kernel_measurements = none" \
	"control_tree = $DC"
start_uevmd || { fail "uevmd starts on the host list"; exit 1; }
ufs_mount "$S" "$M" "key=raw:$T/key,policy=$T/policy,tcti=$OTCTI,kernel_ml=none,ml=$H,securityfs=$UC" ||
	{ fail "uevmfs mounts on the same list"; exit 1; }
pass "uevmd (control tree $DC) and uevmfs (control tree $UC) on one host list"

# The agent opens uevmd's list before anything is measured but boot_aggregate.
start_reader
req open a "$DC/ima/ascii_runtime_measurements"
expect_eq "the agent opens uevmd's ascii_runtime_measurements" ok "$ANS"
req agent a 0 "$T/agent.0"
expect_eq "  and reads one entry, boot_aggregate" "ok 0 1" "$ANS"

cat "$M/u1" "$M/u2" "$MNT/app/d1" "$M/u3" >/dev/null
req agent a 1 "$T/agent.1"
expect_eq "the same descriptor, from entry 1: the 4 entries of both writers (5 in all)" "ok 1 5" "$ANS"
expect_eq "  three of them appended by uevmfs, another process" \
	"$M/u1 $M/u2 $MNT/app/d1 $M/u3" "$(awk '{ print $5 }' "$T/agent.1" | tr '\n' ' ' | sed 's/ $//')"
for C in "$DC" "$UC"; do
	check "$(basename "$C"): binary_runtime_measurements is the host list, byte for byte" \
		cmp -s "$H" <(cat "$C/ima/binary_runtime_measurements")
	expect_eq "$(basename "$C"): runtime_measurements_count" 5 "$(cat "$C/ima/runtime_measurements_count")"
done
check "the two trees' ASCII lists are the same text" \
	cmp -s <(cat "$DC/ima/ascii_runtime_measurements") <(cat "$UC/ima/ascii_runtime_measurements")

# A quote, then the list: every entry the quote covers is in what is read.
cat "$M/u4" "$MNT/app/d2" >/dev/null
pcr_sha256=$(tpm_pcr sha256 10)
req read a 0 "$T/agent.all"
python3 "$REF" <(cat "$DC/ima/binary_runtime_measurements") "$T/ref.ascii" >"$T/ref.out"
expect_eq "PCR 10 (sha256) read after the opens is the replay of the list the tree serves" \
	"$pcr_sha256" "$(awk '$1 == "pcr" && $2 == "sha256" && $3 + 0 == 10 { print $4 }' "$T/ref.out")"
check "  and the agent's descriptor reads that list's text" cmp -s "$T/agent.all" "$T/ref.ascii"

# The runtime policy from the two trees, as the host records them.
BA=$(boot_aggregate_of sha256)
"$UEVM" runtime-policy create --map "$S=$M" --boot-aggregate "$BA" \
	-o "$T/policy.json" "$S" "$MNT/app" 2>"$T/create.err"
check "runtime-policy create from the trees" test -s "$T/policy.json"
req read a 0 "$T/agent.now"
expect_rc "runtime-policy check: the agent's list passes" 0 \
	"$UEVM" runtime-policy check "$T/policy.json" "$T/agent.now"

# Offline change under uevmfs (the mount is down), then a read through it:
# refused by uevmfs, and measured with its new digest.
ufs_umount "$M"
echo "changed offline" >"$S/u4"
ufs_mount "$S" "$M" "key=raw:$T/key,policy=$T/policy,tcti=$OTCTI,kernel_ml=none,ml=$H,securityfs=$UC" ||
	{ fail "uevmfs mounts again"; exit 1; }
expect_rc "the changed file is refused through uevmfs" 1 cat "$M/u4"
echo new >"$M/unknown"
cat "$M/unknown" >/dev/null
req read a 0 "$T/agent.bad"
"$UEVM" runtime-policy check "$T/policy.json" "$T/agent.bad" >"$T/check.out" 2>&1
expect_eq "runtime-policy check on the list after the change: exit 1" 1 "$?"
expect_match "  the changed file fails on its digest" "$M/u4" "$(cat "$T/check.out")"
expect_match "  the unknown file: not in allowlist" "$M/unknown.*not in allowlist" "$(cat "$T/check.out")"
python3 "$REF" "$H" "$T/ref2.ascii" >"$T/ref2.out"
expect_eq "the list still replays to PCR 10" "$(tpm_pcr sha256 10)" \
	"$(awk '$1 == "pcr" && $2 == "sha256" && $3 + 0 == 10 { print $4 }' "$T/ref2.out")"
stop_reader
ufs_umount "$M"
stop_uevmd
