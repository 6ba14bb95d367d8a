#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# func=CREDS_CHECK through uevmfs: an exec is checked, after BPRM_CHECK,
# under the ids the program will run with (ima_bprm_check's second check,
# with bprm->cred).  Policy `appraise func=CREDS_CHECK euid=0`: nobody
# runs an unlabelled program as itself, but not an unlabelled setuid-root
# one (it would run as root); root runs neither; a labelled one runs.
# Before, no CREDS_CHECK rule was applied (an attack review found it).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S" "$M"
chmod 711 "$T"	# nobody reaches the mount point
for f in plain suid good; do cp "$(type -P true)" "$S/$f"; done
chmod 4755 "$S/suid"
"$UEVM" label -q --hmac-key "raw:$KEY" "$S/good" >/dev/null
echo "appraise func=CREDS_CHECK euid=0" >"$T/creds.policy"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# run [as_nobody] FILE: ok, or refused
run() { if "$@" >/dev/null 2>&1; then echo ok; else echo refused; fi; }

OPTS="key=raw:$KEY,audit_log=$T/audit.log,nosyslog,ml=none,policy=$T/creds.policy"
# mount_with EXTRA: mount, and say whether a setuid program raises ids there
tried=
for extra in "" ",suid"; do
	ufs_mount "$S" "$M" "$OPTS$extra" || exit 1
	if findmnt -no OPTIONS "$M" | tr ',' '\n' | grep -qx nosuid; then
		how="nosuid mount" want=ok
	else
		how="suid mount" want=refused
	fi
	tried+="$how;"
	for round in first second; do
		expect_eq "$how: nobody runs unlabelled plain as itself ($round): runs" ok \
			"$(run as_nobody "$M/plain")"
		expect_eq "$how: nobody runs unlabelled setuid-root suid ($round): $want" "$want" \
			"$(run as_nobody "$M/suid")"
		expect_eq "$how: root runs unlabelled plain ($round): refused" refused "$(run "$M/plain")"
		expect_eq "$how: root runs labelled good ($round): runs" ok "$(run "$M/good")"
	done
	ufs_umount "$M"
done
expect_eq "both kinds of mount were tried" "nosuid mount;suid mount;" "$tried"
expect_match "root's refused exec is audited (missing-hash)" 'op=appraise_data cause=missing-hash' \
	"$(ufs_records missing-hash "$M/plain" | tr '\n' ' ')"
