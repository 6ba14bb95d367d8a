#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Interoperability with independent implementations:
#  - security.ima written by `uevm label -a ALGO` equals Debian's
#    `evmctl ima_hash -a ALGO` and the `openssl dgst` digest;
#  - security.evm written by `uevm label --uuid none` equals what evmctl 1.4
#    `-a sha1 hmac` writes (1.4 has no fs UUID and uses generation 0 for
#    anything but regular files), and equals an HMAC built with the openssl
#    command line from the kernel's recipe (tests/ref_evm.sh), also with a
#    fs UUID and with real directory generations;
#  - `uevm hmac` / `uevm ima-hash` print the same values and change nothing.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/ref_evm.sh"

if ! command -v evmctl >/dev/null; then
	fail "evmctl is installed (package ima-evm-utils)"
	exit 1
fi

evmctl_hmac_key
KEY=$T/key
cp "$EVMKEY" "$KEY"
chmod 600 "$KEY"

D=$T/d
mkdir "$D"
UUID_GIVEN=28b23254-9467-44c0-b6ba-34b12e85a26f

# ---- security.ima ------------------------------------------------------

: >"$D/size0"
printf 'x' >"$D/size1"
head -c $((1024 * 1024 + 4099)) /dev/urandom >"$D/big"	# 1 MiB + odd
FILES="size0 size1 big"

# ossl_name ALGO: openssl dgst's name for a kernel algorithm name
ossl_name() { case $1 in rmd160) echo ripemd160 ;; *) echo "$1" ;; esac; }
# The security.ima header: 01 for algorithms up to sha1, 04 + id otherwise.
ima_prefix() {
	case $1 in
	md5 | sha1) echo 01 ;;
	rmd160) echo 0403 ;; sha256) echo 0404 ;; sha384) echo 0405 ;;
	sha512) echo 0406 ;; sha224) echo 0407 ;; sm3) echo 0411 ;;
	streebog256) echo 0412 ;; streebog512) echo 0413 ;;
	esac
}

# Which algorithms both evmctl 1.4 and uevm support (the five SHA ones
# must be among them).
probe=$T/probe
echo probe >"$probe"
both=""
for a in sha1 sha224 sha256 sha384 sha512 md5 rmd160 sm3 streebog256 streebog512; do
	if evmctl ima_hash -a "$a" "$probe" >/dev/null 2>&1 &&
		"$UEVM" ima-hash -a "$a" "$probe" >/dev/null 2>&1; then
		both+=" $a"
	fi
done
echo "algorithms supported by both evmctl $(evmctl --version | awk '{print $2}') and uevm:$both"
for a in sha1 sha224 sha256 sha384 sha512; do
	expect_match "$a is supported by both evmctl and uevm" " $a( |\$)" "$both"
done

for a in $both; do
	ok_evmctl=0 ok_openssl=0 ok_print=0 n=0
	for f in $FILES; do
		p=$D/$f
		n=$((n + 1))
		"$UEVM" label -a "$a" --uuid none --hmac-key "raw:$KEY" "$p" ||
			fail "label -a $a $f" "exit $?"
		u=$(xattr_hex security.ima "$p")
		setfattr -x security.ima "$p"
		evmctl ima_hash -a "$a" "$p" >/dev/null 2>&1
		e=$(xattr_hex security.ima "$p")
		o=$(ima_prefix "$a")$(openssl dgst "-$(ossl_name "$a")" -r "$p" | cut -d' ' -f1)
		pr=$("$UEVM" ima-hash -a "$a" "$p" | cut -d' ' -f1)
		if [ -n "$u" ] && [ "$u" = "$e" ]; then ok_evmctl=$((ok_evmctl + 1)); else
			echo "  $a $f: uevm $u, evmctl $e"; fi
		if [ -n "$u" ] && [ "$u" = "$o" ]; then ok_openssl=$((ok_openssl + 1)); else
			echo "  $a $f: uevm $u, openssl $o"; fi
		[ "$u" = "$pr" ] && ok_print=$((ok_print + 1))
	done
	expect_eq "security.ima -a $a equals evmctl ima_hash (0 B, 1 B, 1 MiB+odd)" "$n" "$ok_evmctl"
	expect_eq "security.ima -a $a equals openssl dgst with the kernel header" "$n" "$ok_openssl"
	expect_eq "uevm ima-hash -a $a prints the labelled value" "$n" "$ok_print"
done
# Default algorithm: sha256 (04 04 header).
"$UEVM" label --uuid none --hmac-key "raw:$KEY" "$D/size1"
expect_eq "default algorithm is sha256" \
	"0404$(openssl dgst -sha256 -r "$D/size1" | cut -d' ' -f1)" \
	"$(xattr_hex security.ima "$D/size1")"

# ---- security.evm against evmctl 1.4 `-a sha1 hmac` -------------------

# cmp_evmctl NAME PATH [EVMCTL_OPTS...]: label with uevm, keep the value,
# let evmctl 1.4 write its own, compare.
cmp_evmctl() {
	local name=$1 p=$2 u e
	shift 2
	"$UEVM" label -d --uuid none --hmac-key "raw:$KEY" "$p"
	u=$(xattr_hex security.evm "$p")
	evmctl -a sha1 "$@" hmac "$p" >/dev/null 2>&1
	e=$(xattr_hex security.evm "$p")
	if [ -n "$u" ] && [ "$u" = "$e" ]; then pass "$name"
	else fail "$name" "uevm '$u', evmctl 1.4 '$e'"; fi
}

for f in $FILES; do
	cmp_evmctl "security.evm of a $f file equals evmctl 1.4" "$D/$f"
done

echo sel >"$D/selinux"
setfattr -n security.selinux -v 'system_u:object_r:etc_t:s0' "$D/selinux"
cmp_evmctl "with security.selinux: equals evmctl 1.4" "$D/selinux"

# VFS_CAP_REVISION_2, permitted cap_net_raw: as setcap writes it
CAPVAL=0x0100000200200000000000000000000000000000
echo cap >"$D/caps"
setfattr -n security.capability -v $CAPVAL "$D/caps"
cmp_evmctl "with security.capability: equals evmctl 1.4" "$D/caps"

echo all >"$D/all"
setfattr -n security.selinux -v 'system_u:object_r:bin_t:s0' "$D/all"
setfattr -n security.apparmor -v 'unconfined' "$D/all"
setfattr -n security.capability -v $CAPVAL "$D/all"
cmp_evmctl "with selinux, apparmor, capability: equals evmctl 1.4" "$D/all"

# The kernel also protects SMACK64EXEC/TRANSMUTE/MMAP; 1.4 hashes them only
# with --smack.  Without it 1.4 leaves the value out and must differ.
echo smack >"$D/smack"
setfattr -n security.SMACK64 -v '_' "$D/smack"
setfattr -n security.SMACK64EXEC -v 'exec_label' "$D/smack"
setfattr -n security.SMACK64MMAP -v 'mmap_label' "$D/smack"
cmp_evmctl "with SMACK64, SMACK64EXEC, SMACK64MMAP: equals evmctl 1.4 --smack" \
	"$D/smack" --smack
"$UEVM" label --uuid none --hmac-key "raw:$KEY" "$D/smack"
u=$(xattr_hex security.evm "$D/smack")
evmctl -a sha1 hmac "$D/smack" >/dev/null 2>&1
e=$(xattr_hex security.evm "$D/smack")
check "SMACK64EXEC is hashed (1.4 without --smack differs)" \
	test -n "$u" -a -n "$e" -a "$u" != "$e"

# uid, gid and mode are bound into h_misc.
echo owner >"$D/owner"
chown 1234:5678 "$D/owner"
cmp_evmctl "uid 1234 gid 5678: equals evmctl 1.4" "$D/owner"
chown 4294967294:65534 "$D/owner"
cmp_evmctl "uid 4294967294 gid 65534: equals evmctl 1.4" "$D/owner"
chown 0:0 "$D/owner"
for m in 0000 0600 0755 4755 2711 1777 7777; do
	chmod "$m" "$D/owner"
	cmp_evmctl "mode $m: equals evmctl 1.4" "$D/owner"
done

# ---- the same against the openssl-built reference --------------------

for f in size0 big selinux caps all smack owner; do
	p=$D/$f
	gen=$(ext4_generation "$p")
	"$UEVM" label --uuid none --hmac-key "raw:$KEY" "$p"
	expect_eq "$f: security.evm equals the openssl-built HMAC (no UUID)" \
		"02$(ref_evm_hmac "$KEY" "$p" "$gen")" "$(xattr_hex security.evm "$p")"
	expect_eq "$f: uevm hmac --uuid $UUID_GIVEN equals the openssl-built HMAC" \
		"02$(ref_evm_hmac "$KEY" "$p" "$gen" "$UUID_GIVEN")" \
		"$("$UEVM" hmac --uuid "$UUID_GIVEN" --hmac-key "raw:$KEY" "$p" | cut -d' ' -f1)"
done
check "ext4 generations are not all zero (else the check above is weak)" \
	test "$(ext4_generation "$D/big")" != 0

# ---- directories ---------------------------------------------------------
# The kernel hashes a directory's i_generation; evmctl 1.4 uses 0 for every
# non-regular file.  On ext4 (real generations) they must differ, and uevm
# must equal the reference with the real generation.  On tmpfs, where
# FS_IOC_GETVERSION is not supported and uevm uses 0, they must be equal.
mkdir "$D/dir"
setfattr -n security.selinux -v 'system_u:object_r:var_t:s0' "$D/dir"
dgen=$(ext4_generation "$D/dir")
"$UEVM" label -d --uuid none --hmac-key "raw:$KEY" "$D/dir"
u=$(xattr_hex security.evm "$D/dir")
expect_eq "ext4 directory: security.evm equals the reference with its generation $dgen" \
	"02$(ref_evm_hmac "$KEY" "$D/dir" "$dgen")" "$u"
evmctl -a sha1 hmac "$D/dir" >/dev/null 2>&1
e=$(xattr_hex security.evm "$D/dir")
expect_eq "ext4 directory: evmctl 1.4 equals the reference with generation 0" \
	"02$(ref_evm_hmac "$KEY" "$D/dir" 0)" "$e"
check "ext4 directory with generation $dgen != 0: uevm differs from evmctl 1.4 (1.4 has no directory generation)" \
	test "$dgen" != 0 -a "$u" != "$e"

TM=$T/tmpfs
mkdir "$TM"
if mount -t tmpfs -o size=1m uevm-test "$TM"; then
	on_exit "umount '$TM'"
	mkdir "$TM/dir"
	setfattr -n security.selinux -v 'system_u:object_r:tmp_t:s0' "$TM/dir"
	cmp_evmctl "tmpfs directory (no generation ioctl): equals evmctl 1.4" "$TM/dir"
	# An empty directory without protected xattrs carries no security.evm.
	mkdir "$TM/bare"
	"$UEVM" label -d --uuid none --hmac-key "raw:$KEY" "$TM/bare" || fail "label -d of a bare directory" "exit $?"
	expect_eq "directory without protected xattrs: no security.evm" "" \
		"$(xattr_hex security.evm "$TM/bare")"
else
	fail "mount a tmpfs for the directory comparison"
fi

# ---- uevm hmac / uevm ima-hash change nothing -----------------------------

"$UEVM" label -r --uuid none --hmac-key "raw:$KEY" "$D"
paths=("$D/size0" "$D/big" "$D/selinux" "$D/all" "$D/dir")
before=$(meta_snapshot "${paths[@]}")
# A change must show in ctime: wait until the filesystem's clock (coarse,
# a tick of some ms) has moved past the snapshot, seen on a probe file
# there, rather than sleeping for a tick and hoping.
touch "$D/.tick0"
tick0=$(stat -c %z "$D/.tick0")
clock_moved() { touch "$D/.tick1"; [ "$(stat -c %z "$D/.tick1")" != "$tick0" ]; }
wait_for "$WAIT_S" "the ctime clock to tick" clock_moved
rm -f "$D/.tick0" "$D/.tick1"
hm=$("$UEVM" hmac --uuid none --hmac-key "raw:$KEY" "${paths[@]}")
hm_rc=$?
ih=$("$UEVM" ima-hash "${paths[@]:0:4}")
ih_rc=$?
after=$(meta_snapshot "${paths[@]}")
expect_eq "uevm hmac exits 0" 0 "$hm_rc"
expect_eq "uevm ima-hash exits 0" 0 "$ih_rc"
expect_eq "uevm hmac / ima-hash leave xattrs and ctime unchanged" "$before" "$after"
want=""
for p in "${paths[@]}"; do want+="$(xattr_hex security.evm "$p")  $p"$'\n'; done
expect_eq "uevm hmac prints each file's security.evm, in argument order" "${want%$'\n'}" "$hm"
want=""
for p in "${paths[@]:0:4}"; do want+="$(xattr_hex security.ima "$p")  $p"$'\n'; done
expect_eq "uevm ima-hash prints each file's security.ima, in argument order" "${want%$'\n'}" "$ih"
