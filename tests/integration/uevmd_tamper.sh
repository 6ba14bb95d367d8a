#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmd end to end, the offline attack: a loop-mounted ext4 is labelled,
# uevmd is stopped, every case of the core tamper matrix is applied to a
# data file and to a copy of a small binary, and with uevmd running again
# each tampered file is refused on open (cat) and each tampered binary on
# exec, with the audit cause the kernel's IMA/EVM would give; untouched
# files open and run.  Without uevmd the same tampered files read and run,
# so the refusals are uevmd's.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
write_conf

SEL='system_u:object_r:var_t:s0'
CAPVAL=0x0100000200200000000000000000000000000000
BIN=$(type -P true)
F=$MNT/files
B=$MNT/bin
mkdir -p "$F" "$B" "$MNT/ok"

CASES="c_byte c_append c_trunc ima_changed ima_removed evm_removed evm_corrupt
evm_trunc evm_copied uid gid mode replaced_cp replaced_all cap_added
cap_changed sel_added sel_changed"
declare -A CAUSE=(
	[c_byte]=invalid-hash [c_append]=invalid-hash [c_trunc]=invalid-hash
	[ima_changed]=invalid-HMAC [ima_removed]=missing-hash
	[evm_removed]=missing-HMAC [evm_corrupt]=invalid-HMAC
	[evm_trunc]=invalid-HMAC [evm_copied]=invalid-HMAC [uid]=invalid-HMAC
	[gid]=invalid-HMAC [mode]=invalid-HMAC [replaced_cp]=missing-HMAC
	[replaced_all]=invalid-HMAC [cap_added]=invalid-HMAC
	[cap_changed]=invalid-HMAC [sel_added]=invalid-HMAC [sel_changed]=invalid-HMAC
)
for c in $CASES; do
	{ echo "file $c"; head -c 2250 /dev/urandom | base64 -w 64; } | head -c 3000 >"$F/$c"
	cp "$BIN" "$B/$c"
done
for d in "$F" "$B"; do
	setfattr -n security.capability -v $CAPVAL "$d/cap_changed"
	setfattr -n security.selinux -v "$SEL" "$d/sel_changed"
done
echo "untouched" >"$MNT/ok/plain"
head -c 4096 /dev/urandom >"$MNT/ok/random"
cp "$BIN" "$MNT/ok/true"
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT/files" "$MNT/bin" "$MNT/ok"
expect_eq "the image is labelled" 0 $?

# With uevmd running, the labelled tree is good (and gets ignore marks).
start_uevmd || { fail "uevmd starts"; exit 1; }
pass "uevmd starts on the loop mount"
bad=
for c in $CASES; do
	[ "$(open_result "$F/$c")" = ok ] || bad="$bad $F/$c"
	[ "$(exec_result "$B/$c")" = ok ] || bad="$bad $B/$c"
done
expect_eq "before tampering every file opens and every binary runs" "" "$bad"
stop_uevmd

# ---- offline: uevmd stopped ------------------------------------------------

tamper() {	# dir case
	local d=$1 c=$2 v b last evm ino0 sz
	local p=$d/$c
	case $c in
	c_byte)
		# a byte near the end: in a binary, in the section headers, which
		# neither the kernel nor ld.so reads, so the binary still runs
		sz=$(stat -c %s "$p")
		b=$(od -An -tu1 -j$((sz - 100)) -N1 "$p" | tr -d ' ')
		printf "\\$(printf %03o $(((b + 1) % 256)))" |
			dd of="$p" bs=1 seek=$((sz - 100)) conv=notrunc status=none ;;
	c_append) echo more >>"$p" ;;
	c_trunc) truncate -s -1 "$p" ;;
	ima_changed)
		setfattr -n security.ima -v "0x0404$(echo other | openssl dgst -sha256 -r | cut -d' ' -f1)" "$p" ;;
	ima_removed) setfattr -x security.ima "$p" ;;
	evm_removed) setfattr -x security.evm "$p" ;;
	evm_corrupt)
		v=$(xattr_hex security.evm "$p")
		last=$(printf %02x $((16#${v: -2} ^ 0x01)))
		setfattr -n security.evm -v "0x${v:0:40}$last" "$p" ;;
	evm_trunc)
		v=$(xattr_hex security.evm "$p")
		setfattr -n security.evm -v "0x${v:0:40}" "$p" ;;
	evm_copied) setfattr -n security.evm -v "0x$(xattr_hex security.evm "$d/c_append")" "$p" ;;
	uid) chown 1000 "$p" ;;
	gid) chgrp 1000 "$p" ;;
	mode) chmod 700 "$p" ;;
	replaced_cp)
		cp --preserve=all "$p" "$p.new" && mv "$p.new" "$p" ;;
	replaced_all)
		evm=$(xattr_hex security.evm "$p")
		cp --preserve=all "$p" "$p.new"
		setfattr -n security.evm -v "0x$evm" "$p.new"
		mv "$p.new" "$p" ;;
	cap_added) setfattr -n security.capability -v $CAPVAL "$p" ;;
	cap_changed) setfattr -n security.capability -v 0x0100000200100000000000000000000000000000 "$p" ;;
	sel_added) setfattr -n security.selinux -v "$SEL" "$p" ;;
	sel_changed) setfattr -n security.selinux -v 'system_u:object_r:shadow_t:s0' "$p" ;;
	esac
}
# evm_copied takes c_append's value before c_append is tampered with
for d in "$F" "$B"; do
	tamper "$d" evm_copied
	for c in $CASES; do
		[ "$c" = evm_copied ] || tamper "$d" "$c"
	done
done

# Offline, nothing stops them: the refusals below are uevmd's.
bad=
for c in $CASES; do
	[ "$(open_result "$F/$c")" = ok ] || bad="$bad $F/$c"
	[ "$(exec_result "$B/$c")" = ok ] || bad="$bad $B/$c"
done
expect_eq "without uevmd every tampered file reads and every tampered binary runs" "" "$bad"
json=$("$UEVM" verify --json --hmac-key "raw:$T/key" "$F"/* "$B"/*)
expect_eq "uevm verify: all 36 tampered files fail" 36 \
	"$(jq '[.results[] | select(.ok | not)] | length' <<<"$json")"

# ---- uevmd running again ----------------------------------------------------

: >"$LOG"
start_uevmd || { fail "uevmd restarts"; exit 1; }
for c in $CASES; do
	expect_eq "open refused: $c (${CAUSE[$c]})" EPERM "$(open_result "$F/$c")"
	check "  audit: op=appraise_data cause=${CAUSE[$c]} name=$F/$c" \
		log_has "op=appraise_data cause=${CAUSE[$c]} comm=\"cat\" name=\"$F/$c\" .* res=0"
	expect_eq "exec refused: $c (${CAUSE[$c]})" EPERM "$(exec_result "$B/$c")"
	check "  audit: cause=${CAUSE[$c]} name=$B/$c" \
		log_has "op=appraise_data cause=${CAUSE[$c]} .*name=\"$B/$c\" .* res=0"
done
check "records name the record type" log_has "type=INTEGRITY_DATA pid=[0-9]+ uid=0 "

# Untouched files still open, the untouched binary still runs.
expect_eq "untouched file opens" ok "$(open_result "$MNT/ok/plain")"
expect_eq "untouched 4 KiB file opens" ok "$(open_result "$MNT/ok/random")"
expect_eq "untouched binary runs" ok "$(exec_result "$MNT/ok/true")"
cmp -s "$MNT/ok/random" <(cat "$MNT/ok/random") && pass "untouched content reads back whole" ||
	fail "untouched content reads back whole"
expect_eq "no record for untouched files" "" "$(grep -F "$MNT/ok/" "$LOG")"

# Refused every time, not only the first (no fast path for a failure).
expect_eq "a second open of a tampered file: still refused" EPERM "$(open_result "$F/c_byte")"
expect_eq "a second exec of a tampered binary: still refused" EPERM "$(exec_result "$B/uid")"
denied=$(status_field denied)
check "uevm status counts the denials (>= 38: $denied)" test "$denied" -ge 38
stop_uevmd
check "uevmd exits cleanly on SIGTERM" log_has "uevmd\[[0-9]+\]: stopped"
