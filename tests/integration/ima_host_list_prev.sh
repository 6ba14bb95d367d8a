#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Review finding (issue 13, host list rotation): a TPM-backed list is a host
# list (shared), and its rotation (host_rotate) renames FILE to FILE.prev
# only, overwriting the previous boot's FILE.prev; the documented and
# single-owner behaviour (rotate_file) keeps FILE.prev, .prev.1, .prev.2.
# Two reboots here: the first boot's list must survive as FILE.prev.1.
source "$(dirname "$0")/../lib.sh"
for tool in swtpm tpm2_pcrread tpm2_pcrextend; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
source "$TESTS_DIR/swtpm-lib.sh"
H=$T/host.ml
echo one >"$T/f"
boot() { local i; for i in $(seq 0 9); do tpm_extend "$i" "boot $1 pcr $i"; done; }
start_swtpm || { fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
boot 1
"$UEVM" measurements add --list "$H" --tcti "$TCTI" "$T/f" >/dev/null 2>&1
cp "$H" "$T/boot1.ml"
for n in 2 3; do
	stop_swtpm
	start_swtpm || { fail "swtpm restarts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
	boot "$n"
	"$UEVM" measurements add --list "$H" --tcti "$TCTI" --rotate-stale "$T/f" >"$T/out$n" 2>&1
	expect_eq "boot $n: the add succeeds (stale list rotated)" 0 "$?"
	cp "$H" "$T/boot$n.ml"
done
check "FILE.prev is the second boot's list" cmp -s "$T/boot2.ml" "$H.prev"
check "FILE.prev.1 is the first boot's list (not overwritten)" cmp -s "$T/boot1.ml" "$H.prev.1"
