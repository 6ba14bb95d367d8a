#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# On ext4 (and the other filesystems whose listxattr is trusted for
# absence) an object without security.evm is checked for protected xattrs
# with one listxattr, and label skips the removexattr of a security.evm the
# listing does not show.  The verdicts must be those of asking each name:
# a protected xattr listed (on a directory, a symlink, a file) is
# no_label, none is no_xattrs; a stale security.evm on an object with no
# protected xattr is still removed by label.  $T is on /var/tmp (ext4).
source "$(dirname "$0")/../lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: evm_listing needs root (security.* xattrs)"
	exit 0
fi
KEY=$T/key
make_key "$KEY"
SEL=system_u:object_r:etc_t:s0
# Symlinks inside the walked directories (a symlink PATH is followed).
R=$T/r
mkdir -p "$R/dsel" "$R/dnone"
echo data >"$R/fsel"
ln -s ../fsel "$R/dsel/lsel"
ln -s ../fsel "$R/dnone/lnone"
for o in dsel fsel dsel/lsel; do setfattr -h -n security.selinux -v "$SEL" "$R/$o"; done

# security.selinux alone: no security.evm, a protected xattr listed.
out=$("$UEVM" verify -r -v --hmac-key "raw:$KEY" "$R/dsel" 2>&1); rc=$?
expect_eq "verify: a protected xattr without security.evm fails" 1 "$rc"
for o in dsel dsel/lsel; do
	expect_match "verify: $o (security.selinux, no security.evm) is no_label" \
		"$o: no_label" "$out"
done
out=$("$UEVM" verify -r -v --hmac-key "raw:$KEY" "$R/dnone" 2>&1); rc=$?
expect_eq "verify: no protected xattr anywhere passes" 0 "$rc"
for o in dnone dnone/lnone; do
	expect_match "verify: $o (no protected xattr) is no_xattrs" \
		"$o: no_xattrs" "$out"
done

# ima-only file (as left by an interrupted relabel that removed evm):
# security.ima is protected, so no_label, not no_xattrs.
"$UEVM" label --hmac-key "raw:$KEY" "$R/fsel" || fail "label fsel"
setfattr -x security.evm "$R/fsel"
out=$("$UEVM" verify -v --hmac-key "raw:$KEY" "$R/fsel" 2>&1)
expect_match "verify: a file with security.ima and no security.evm is no_label" \
	"fsel: no_label" "$out"

# label: a stale security.evm on an object with no protected xattr is
# removed (the listing shows it); none is written where there was none.
setfattr -h -n security.evm -v 0x02aa "$R/dnone/lnone"
setfattr -n security.evm -v 0x02aa "$R/dnone"
expect_rc "label -r of a directory and a symlink without protected xattrs" 0 \
	"$UEVM" label -r --hmac-key "raw:$KEY" "$R/dnone"
# evm_is WANT OBJ...: security.evm is there (1) or not (0) on each OBJ
evm_is() {
	local want=$1 o has
	shift
	for o in "$@"; do
		has=0
		getfattr -h -n security.evm "$R/$o" >/dev/null 2>&1 && has=1
		expect_eq "label: security.evm on $o: $([ "$want" = 1 ] && echo written || echo removed)" "$want" "$has"
	done
}
evm_is 0 dnone dnone/lnone
expect_rc "label -r again (no security.evm to remove)" 0 \
	"$UEVM" label -r --hmac-key "raw:$KEY" "$R/dnone"
expect_rc "label -r of the objects with security.selinux" 0 \
	"$UEVM" label -r --hmac-key "raw:$KEY" "$R/dsel"
evm_is 1 dsel dsel/lsel
expect_rc "verify -r after label: pass" 0 \
	"$UEVM" verify -r --hmac-key "raw:$KEY" "$R/dsel" "$R/dnone"
