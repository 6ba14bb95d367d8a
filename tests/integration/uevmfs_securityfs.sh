#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The control tree uevmfs serves reads as the kernel's securityfs:
#  - the layout (integrity/evm, integrity/ima, the evm and ima symlinks),
#    owners and modes; evm reads "1" without a newline, is written once
#    and only by CAP_SYS_ADMIN; evm_xattrs lists the protected xattrs;
#  - the measurement files: runtime_measurements_count and the ASCII list
#    agree, an independent reader (tests/ima_ml_ref.py) recomputes every
#    template digest and renders the same ASCII list, the binary list is
#    the persisted list file byte for byte, and Debian's evmctl
#    `ima_measurement` accepts the list read straight from the tree (and
#    rejects a corrupted copy);
#  - ima/policy: read back as the kernel shows it; a bad rule fails the
#    write and nothing is loaded; a second writer is refused; a good
#    policy is loaded once, takes effect, and the file is read-only after;
#  - with -o evm=0, EVM waits for `echo 1 > evm` as after boot.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

command -v evmctl >/dev/null || { fail "evmctl is installed (scripts/install-deps.sh)"; exit 1; }
REF=$TESTS_DIR/ima_ml_ref.py
KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
C=$T/security
chmod 755 "$T"
mkdir -p "$S/bin" "$S/etc"
printf '#!/bin/sh\necho hi\n' >"$S/bin/prog"
chmod 755 "$S/bin/prog"
echo "config" >"$S/etc/conf"
echo "user file" >"$S/etc/users"
chown 1000 "$S/etc/users"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

ufs_mount "$S" "$M" "key=raw:$KEY,ml=$T/ml,securityfs=$C,audit_log=$T/audit.log,nosyslog" || exit 1
check "the control tree is mounted (fuse.uevm-securityfs)" ufs_mounted "$C" fuse.uevm-securityfs

# ---- layout --------------------------------------------------------------------------
expect_eq "evm -> integrity/evm/evm" integrity/evm/evm "$(readlink "$C/evm")"
expect_eq "ima -> integrity/ima" integrity/ima "$(readlink "$C/ima")"
expect_eq "modes and owners as the kernel's" \
"0660 root root integrity/evm/evm
0440 root root integrity/evm/evm_xattrs
0440 root root integrity/ima/ascii_runtime_measurements
0440 root root integrity/ima/binary_runtime_measurements
0600 root root integrity/ima/policy
0440 root root integrity/ima/runtime_measurements_count
0440 root root integrity/ima/violations" \
	"$(cd "$C" && for f in integrity/evm/evm integrity/evm/evm_xattrs \
		integrity/ima/{ascii_runtime_measurements,binary_runtime_measurements,policy,runtime_measurements_count,violations}; do
		stat -c '%a %U %G %n' "$f" | sed 's/^/0/'; done)"

# ---- evm and evm_xattrs ------------------------------------------------------------------
expect_eq "evm reads 1, without a newline (the kernel's \"%d\")" "31" \
	"$(od -An -tx1 "$C/evm" | tr -d ' ')"
err=$(echo 2 2>&1 >"$C/evm")
expect_match "evm is written once: EPERM after the HMAC key" 'Operation not permitted' "$err"
err=$("${NOBODY[@]}" cat "$C/evm" 2>&1)
expect_match "evm: unprivileged read refused (0660)" 'Permission denied' "$err"
expect_eq "evm_xattrs: the kernel's default protected list" \
	"security.selinux security.SMACK64 security.SMACK64EXEC security.SMACK64TRANSMUTE security.SMACK64MMAP security.apparmor security.ima security.capability" \
	"$(paste -sd' ' "$C/evm_xattrs")"

# ---- measurements ------------------------------------------------------------------------
cat "$M/etc/conf" >/dev/null
"$M/bin/prog" >/dev/null
cat "$M/etc/conf" >/dev/null	# measured once
count=$(cat "$C/ima/runtime_measurements_count")
expect_eq "runtime_measurements_count: boot_aggregate, the file read, the program" 3 "$count"
ascii=$(cat "$C/ima/ascii_runtime_measurements")
expect_eq "ascii list: one line per entry" "$count" "$(wc -l <<<"$ascii")"
expect_match "ascii list: boot_aggregate first, ima-ng, PCR 10" \
	'^10 [0-9a-f]{40} ima-ng sha256:0{64} boot_aggregate$' "$(head -n 1 <<<"$ascii")"
expect_match "ascii list: the file under its name on the mount" \
	"^10 [0-9a-f]{40} ima-ng sha256:$(sha256sum "$S/etc/conf" | cut -d' ' -f1) $M/etc/conf\$" "$ascii"
expect_match "ascii list: the executed program" " $M/bin/prog\$" "$ascii"
expect_eq "violations: 0" 0 "$(cat "$C/ima/violations")"
cp "$C/ima/binary_runtime_measurements" "$T/list.bin"
check "binary list: the persisted list file, byte for byte" cmp -s "$T/list.bin" "$T/ml"
if python3 "$REF" "$T/list.bin" "$T/ref.ascii" >"$T/ref.out"; then
	pass "independent reader parses the binary list"
else
	fail "independent reader parses the binary list" "$(cat "$T/ref.out")"
fi
expect_eq "independent reader: every template digest matches" "bad_digests 0" \
	"$(grep bad_digests "$T/ref.out")"
check "independent reader renders the same ASCII list" \
	cmp -s "$T/ref.ascii" <(printf '%s\n' "$ascii")
for bank in sha1 sha256; do
	awk -v b=$bank '$1 == "pcr" && $2 == b { v[$3 + 0] = $4 }
		END { z = (b == "sha1") ? 40 : 64
		      for (i = 0; i < 24; i++) {
			h = (i in v) ? v[i] : sprintf("%0" z "d", 0)
			printf "PCR-%02d: %s\n", i, h } }' "$T/ref.out" >"$T/pcrs-$bank"
done
expect_rc "evmctl ima_measurement accepts the tree's binary list" 0 \
	evmctl ima_measurement --pcrs sha1,"$T/pcrs-sha1" --pcrs sha256,"$T/pcrs-sha256" \
	"$C/ima/binary_runtime_measurements"
python3 -c 'import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[-3] ^= 1; open(sys.argv[1], "wb").write(b)' "$T/list.bin"
expect_rc "evmctl ima_measurement rejects a corrupted copy" 1 \
	evmctl ima_measurement --pcrs sha1,"$T/pcrs-sha1" --pcrs sha256,"$T/pcrs-sha256" "$T/list.bin"
err=$("${NOBODY[@]}" cat "$C/ima/ascii_runtime_measurements" 2>&1)
expect_match "lists: unprivileged read refused (0440)" 'Permission denied' "$err"

# ---- ima/policy --------------------------------------------------------------------------
DEFAULT_POLICY="measure func=BPRM_CHECK mask=MAY_EXEC 
measure func=FILE_CHECK mask=^MAY_READ euid=0 
appraise "
expect_eq "policy reads back as the kernel shows it" "$DEFAULT_POLICY" "$(cat "$C/ima/policy")"
err=$("${NOBODY[@]}" cat "$C/ima/policy" 2>&1)
expect_match "policy: unprivileged read refused" 'Permission denied' "$err"
echo tampered >>"$S/etc/users"	# behind uevmfs's back; owner 1000
expect_match "the default policy appraises every file: refused" 'Permission denied' \
	"$(cat "$M/etc/users" 2>&1)"
err=$(printf 'measure func=FILE_CHECK\nappraise fowner=0 bogus=1\n' 2>&1 >"$C/ima/policy")
expect_match "policy: a bad rule fails the write (EINVAL)" 'Invalid argument' "$err"
expect_eq "  nothing was loaded" "$DEFAULT_POLICY" "$(cat "$C/ima/policy")"
expect_match "  audited op=policy_update cause=invalid-policy, then failed" \
	'cause=invalid-policy.*
.*op=policy_update cause=failed ' "$(grep policy_update "$T/audit.log")"
exec 7>"$C/ima/policy"
err=$(echo 'measure' 2>&1 >"$C/ima/policy")
expect_match "policy: a second writer is refused (EBUSY)" 'Device or resource busy' "$err"
exec 7>&-
# FUSE sends the RELEASE that ends the first session after close()
# returned: retry while it is still busy (WAIT_S at most).
end=$((SECONDS + WAIT_S))
while :; do
	err=$(printf 'measure func=FILE_CHECK\nappraise func=FILE_CHECK fowner=0\n' 2>&1 >"$C/ima/policy") && break
	case $err in *busy*) [ "$SECONDS" -lt "$end" ] && sleep 0.05 && continue ;; esac
	break
done
expect_eq "policy: a good policy loads" "" "$err"
expect_eq "  and reads back" "measure func=FILE_CHECK 
appraise func=FILE_CHECK fowner=0 " "$(cat "$C/ima/policy")"
expect_match "  audited op=policy_update cause=completed res=1" \
	'op=policy_update cause=completed .*res=1' "$(grep policy_update "$T/audit.log")"
check "  takes effect: a file not owned by root is no longer appraised" \
	bash -c 'cat "$1" >/dev/null' _ "$M/etc/users"
expect_eq "  mode 0400 once loaded" 400 "$(stat -c %a "$C/ima/policy")"
err=$(echo 'measure' 2>&1 >"$C/ima/policy")
expect_match "policy: loaded once, no second load" 'Permission denied' "$err"

# A file measured for a reader while a writer holds it open: the kernel's
# open_writers violation (an entry without a digest, PCR 10).
v0=$(cat "$C/ima/violations")
exec 8>>"$M/etc/conf"
cat "$M/etc/conf" >/dev/null
exec 8>&-
expect_eq "violations: a read while open for write counts one" $((v0 + 1)) \
	"$(cat "$C/ima/violations")"
expect_match "  listed with a zero digest under the file's name" \
	"^10 0{40} ima-ng sha256:0{64} $M/etc/conf\$" "$(cat "$C/ima/ascii_runtime_measurements")"
expect_match "  audited op=invalid_pcr cause=open_writers" \
	'op=invalid_pcr cause=open_writers .*res=1' "$(grep invalid_pcr "$T/audit.log")"
# ToMToU: opened for writing while a reader that was measured holds it.
v1=$(cat "$C/ima/violations")
exec 8<"$M/etc/conf"
exec 9>>"$M/etc/conf"
exec 9>&- 8<&-
expect_eq "violations: a write open while a measured reader is open counts one (ToMToU)" \
	$((v1 + 1)) "$(cat "$C/ima/violations")"
expect_match "  audited op=invalid_pcr cause=ToMToU" \
	'op=invalid_pcr cause=ToMToU .*res=1' "$(grep invalid_pcr "$T/audit.log")"

exec 9>>"$M/etc/conf"
exec 9>&-
expect_eq "  reported once: a later write open adds none" $((v1 + 1)) "$(cat "$C/ima/violations")"
ufs_umount "$M"
check "unmounting uevmfs takes the control tree down too" \
	bash -c "! grep -q ' $C ' /proc/mounts"

# ---- evm=0: EVM waits for the write, as after boot ------------------------------------------
echo "good, hash label" >"$S/etc/good0"
echo "bad, hash label" >"$S/etc/bad0"
"$UEVM" label --hmac-key "raw:$KEY" "$S/etc/good0" "$S/etc/bad0" >/dev/null
echo "appended offline" >>"$S/etc/bad0"
ufs_mount "$S" "$M" "key=raw:$KEY,ml=memory,securityfs=$C,evm=0,audit_log=$T/audit2.log,nosyslog" || exit 1
expect_eq "evm=0: evm reads 0" 0 "$(cat "$C/evm")"
# As the kernel before EVM is initialised: IMA appraises the content alone.
expect_eq "evm=0: a file whose content matches its hash opens" "good, hash label" \
	"$(cat "$M/etc/good0" 2>&1)"
expect_match "evm=0: a file whose content does not match is refused" 'Permission denied' \
	"$(cat "$M/etc/bad0" 2>&1)"
err=$("${NOBODY[@]}" bash -c 'echo 1 >"$1"' _ "$C/evm" 2>&1)
expect_match "evm: an unprivileged write is refused" 'Permission denied' "$err"
check "evm: root writes 1" bash -c 'echo 1 >"$1"' _ "$C/evm"
expect_eq "evm now reads 1" 1 "$(cat "$C/evm")"
ufs_umount "$M"
