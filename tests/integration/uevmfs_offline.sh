#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The seeds' offline attack, on a real uevmfs mount:
#  - a tree is labelled through the mount (files created through it, and
#    files that were there before labelled by a mode=fix pass), and
#    `uevm verify -r SOURCE` accepts every label uevmfs wrote;
#  - unmounted, SOURCE is tampered with directly in every way of the core
#    issue's matrix (content, security.ima, security.evm, owner, group,
#    mode, replaced inodes, security.capability, security.selinux, a
#    directory's mode);
#  - mounted again: each tampered file is refused on open (and a tampered
#    program on exec) with EACCES and an audit record naming it with the
#    kernel's cause; every untouched file opens with its content;
#  - modes: log lets the tampered file open but still audits, off neither
#    checks nor audits, fix relabels what it reads.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S/legacy"
SEL='system_u:object_r:var_t:s0'
CAPVAL=0x0100000200200000000000000000000000000000
OPTS="key=raw:$KEY,ml=$T/ml,audit_log=$T/audit.log,nosyslog"

# Files that exist before the first mount: no labels at all.
echo "legacy one" >"$S/legacy/one"
head -c 70000 /dev/urandom >"$S/legacy/two"

# ---- labelling through the mount --------------------------------------------------
ufs_mount "$S" "$M" "$OPTS,mode=fix" || exit 1
pass "uevmfs mounts (mode=fix)"
check "fix mode: reading unlabelled files through the mount labels them" \
	bash -c 'cat "$1" "$2" >/dev/null' _ "$M/legacy/one" "$M/legacy/two"

CASES="c_byte c_append c_trunc ima_changed ima_removed evm_removed evm_corrupt
evm_trunc evm_copied uid gid mode replaced_cp replaced_all cap_added
cap_changed sel_added sel_changed exec_bad"
mkdir -p "$M/files" "$M/ok/deep" "$M/dir_mode"
setfattr -n security.selinux -v "$SEL" "$M/dir_mode"
for c in $CASES; do
	{ echo "file $c"; head -c 2250 /dev/urandom | base64 -w 64; } | head -c 3000 >"$M/files/$c"
done
printf '#!/bin/sh\necho program ran\n' >"$M/files/exec_bad"
printf '#!/bin/sh\necho program ran\n' >"$M/ok/exec_ok"
chmod 755 "$M/files/exec_bad" "$M/ok/exec_ok"
setfattr -n security.capability -v $CAPVAL "$M/files/cap_changed"
setfattr -n security.selinux -v "$SEL" "$M/files/sel_changed"
: >"$M/ok/empty"
printf 'x' >"$M/ok/one"
head -c 100000 /dev/urandom >"$M/ok/big"
echo caps >"$M/ok/caps"
setfattr -n security.capability -v $CAPVAL "$M/ok/caps"
echo sel >"$M/ok/sel"
setfattr -n security.selinux -v "$SEL" "$M/ok/sel"
echo deep >"$M/ok/deep/file"
echo touched >"$M/ok/touched"
ln -s ../files/c_byte "$M/ok/link"
echo inside >"$M/dir_mode/file"
ufs_umount "$M"
check "uevmfs exits after the unmount" bash -c "! kill -0 $UFS_PID 2>/dev/null"

json=$("$UEVM" verify -r -v --json --hmac-key "raw:$KEY" "$S")
expect_eq "verify -r SOURCE accepts every label written through the mount" 0 \
	"$(jq '[.results[] | select(.ok | not)] | length' <<<"$json")"
expect_eq "every regular file carries a passing security.ima and security.evm" \
	"$(find "$S" -type f | wc -l)" \
	"$(jq '[.results[] | select(.type == "file" and .status == "pass")] | length' <<<"$json")"
expect_eq "the directory with security.selinux got its HMAC through the mount" pass \
	"$(jq -r --arg p "$S/dir_mode" '.results[] | select(.path == $p) | .status' <<<"$json")"

# ---- the offline attack ---------------------------------------------------------------
F=$S/files
b=$(od -An -tu1 -j100 -N1 "$F/c_byte" | tr -d ' ')
printf "\\$(printf %03o $(((b + 1) % 256)))" |
	dd of="$F/c_byte" bs=1 seek=100 conv=notrunc status=none
echo more >>"$F/c_append"
truncate -s -1 "$F/c_trunc"
setfattr -n security.ima -v "0x0404$(echo other | openssl dgst -sha256 -r | cut -d' ' -f1)" "$F/ima_changed"
setfattr -x security.ima "$F/ima_removed"
setfattr -x security.evm "$F/evm_removed"
v=$(xattr_hex security.evm "$F/evm_corrupt")
setfattr -n security.evm -v "0x${v:0:40}$(printf %02x $((16#${v: -2} ^ 0x01)))" "$F/evm_corrupt"
v=$(xattr_hex security.evm "$F/evm_trunc")
setfattr -n security.evm -v "0x${v:0:40}" "$F/evm_trunc"
setfattr -n security.evm -v "0x$(xattr_hex security.evm "$F/c_append")" "$F/evm_copied"
chown 1000 "$F/uid"
chgrp 1000 "$F/gid"
chmod 600 "$F/mode"
cp --preserve=all "$F/replaced_cp" "$F/replaced_cp.new" && mv "$F/replaced_cp.new" "$F/replaced_cp"
evm=$(xattr_hex security.evm "$F/replaced_all")
cp --preserve=all "$F/replaced_all" "$F/replaced_all.new"
setfattr -n security.evm -v "0x$evm" "$F/replaced_all.new"
mv "$F/replaced_all.new" "$F/replaced_all"
setfattr -n security.capability -v $CAPVAL "$F/cap_added"
setfattr -n security.capability -v 0x0100000200100000000000000000000000000000 "$F/cap_changed"
setfattr -n security.selinux -v "$SEL" "$F/sel_added"
setfattr -n security.selinux -v 'system_u:object_r:shadow_t:s0' "$F/sel_changed"
printf '#!/bin/sh\necho evil\n' >"$F/exec_bad"
chmod 700 "$S/dir_mode"
touch -d '2001-02-03 04:05:06' "$S/ok/touched"

# ---- mounted again: access ----------------------------------------------------------------
: >"$T/audit.log"
ufs_mount "$S" "$M" "$OPTS" || exit 1
pass "uevmfs mounts the tampered tree (enforce)"

declare -A want=(
	[c_byte]=invalid-hash [c_append]=invalid-hash [c_trunc]=invalid-hash
	[ima_changed]=invalid-HMAC [ima_removed]=missing-hash
	[evm_removed]=missing-HMAC [evm_corrupt]=invalid-HMAC
	[evm_trunc]=invalid-HMAC [evm_copied]=invalid-HMAC
	[uid]=invalid-HMAC [gid]=invalid-HMAC [mode]=invalid-HMAC
	[replaced_cp]=missing-HMAC [replaced_all]=invalid-HMAC
	[cap_added]=invalid-HMAC [cap_changed]=invalid-HMAC
	[sel_added]=invalid-HMAC [sel_changed]=invalid-HMAC
)
for c in $(printf '%s\n' "${!want[@]}" | sort); do
	err=$(cat "$M/files/$c" 2>&1 >/dev/null)
	rc=$?
	expect_eq "$c: open refused with EACCES" "1 Permission denied" \
		"$rc $(sed 's/.*: //' <<<"$err")"
	rec=$(ufs_records "${want[$c]}" "$M/files/$c")
	expect_match "$c: audit record op=appraise_data cause=${want[$c]} res=0" \
		'type=INTEGRITY_DATA .* op=appraise_data cause=[^ ]+ comm="cat" .* res=0' "$rec"
done
err=$("$M/files/exec_bad" 2>&1)
expect_match "tampered program: exec refused (EACCES)" 'Permission denied' "$err"
expect_match "tampered program: audit record cause=invalid-hash" ' cause=invalid-hash ' \
	"$(ufs_records invalid-hash "$M/files/exec_bad")"
expect_eq "untouched program runs" "program ran" "$("$M/ok/exec_ok" 2>&1)"

# Untouched files open, with their content.
bad=""
for f in $(cd "$S/ok" && find . -type f | sort); do
	cmp -s "$M/ok/$f" "$S/ok/$f" || bad="$bad $f"
done
expect_eq "every untouched file opens through the mount with its content" "" "$bad"
expect_eq "no audit record names an untouched file" "" "$(grep -F "name=\"$M/ok/" "$T/audit.log")"
expect_eq "the touched (mtime only) file opens" touched "$(cat "$M/ok/touched")"
expect_eq "reading a symlink's target through it opens the target (tampered: refused)" \
	"Permission denied" "$(cat "$M/ok/link" 2>&1 >/dev/null | sed 's/.*: //')"

# A directory: IMA appraises regular files only and EVM checks other
# objects only when their metadata is changed (evm_verify_current_integrity
# treats them as PASS, as the kernel does): access is not refused.
check "tampered directory (mode): still listed, as with the kernel's hooks" \
	bash -c 'ls "$1" >/dev/null' _ "$M/dir_mode"
expect_eq "tampered directory: uevm verify reports it" "fail invalid-HMAC" \
	"$("$UEVM" verify -d --json --hmac-key "raw:$KEY" "$S/dir_mode" | jq -r '.results[0] | "\(.status) \(.cause)"')"

# Appraisal results are cached per inode: the second refusal hashes nothing
# new but is audited again, and nothing passes meanwhile.
cat "$M/files/c_byte" >/dev/null 2>&1
expect_eq "a cached FAIL is refused again" "Permission denied" \
	"$(cat "$M/files/c_byte" 2>&1 >/dev/null | sed 's/.*: //')"
ufs_umount "$M"

# ---- modes ----------------------------------------------------------------------------
: >"$T/audit.log"
ufs_mount "$S" "$M" "$OPTS,mode=log" || exit 1
check "mode=log: the tampered file opens" cmp -s "$M/files/c_append" "$S/files/c_append"
expect_match "mode=log: but the refusal it would have been is audited" ' res=0 ' \
	"$(ufs_records invalid-hash "$M/files/c_append")"
ufs_umount "$M"

: >"$T/audit.log"
ufs_mount "$S" "$M" "$OPTS,mode=off" || exit 1
check "mode=off: the tampered file opens" cmp -s "$M/files/c_byte" "$S/files/c_byte"
expect_eq "mode=off: nothing audited" "" "$(cat "$T/audit.log")"
ufs_umount "$M"

ufs_mount "$S" "$M" "$OPTS,mode=fix" || exit 1
check "mode=fix: the tampered files open" \
	bash -c 'cat "$1" "$2" >/dev/null' _ "$M/files/c_trunc" "$M/files/uid"
ufs_umount "$M"
expect_rc "mode=fix: content tampering relabelled (verify PASS)" 0 \
	"$UEVM" verify --hmac-key "raw:$KEY" "$S/files/c_trunc"
expect_rc "mode=fix: metadata tampering relabelled (verify PASS)" 0 \
	"$UEVM" verify --hmac-key "raw:$KEY" "$S/files/uid"
expect_rc "mode=fix: files not read stay failing" 1 \
	"$UEVM" verify --hmac-key "raw:$KEY" "$S/files/c_byte"
