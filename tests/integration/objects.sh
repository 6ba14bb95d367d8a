#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# File system objects and labelling options:
#  - symlinks, device nodes, FIFOs and sockets are labelled without being
#    opened for I/O (strace shows O_PATH only; a FIFO never blocks);
#  - symlinks are never followed (their targets stay untouched);
#  - -x stays on one filesystem (a tmpfs mounted inside the tree);
#  - --uuid UUID / none / auto give different HMACs that verify only with
#    the same setting; on a loop-mounted ext4 the auto UUID is blkid's;
#  - the HMACs of every object type on ext4 equal the openssl-built
#    reference with the inode generation debugfs reports;
#  - --hmac-key keyring:NAME gives the same labels as the key file;
#  - -j 1 and -j 4 give identical labels.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/ref_evm.sh"

for tool in jq strace debugfs blkid perl; do
	command -v $tool >/dev/null || { fail "$tool is installed (scripts/install-deps.sh)"; exit 1; }
done
KEY=$T/key
make_key "$KEY"
SEL='system_u:object_r:device_t:s0'
R=$T/tree
mkdir -p "$R/sub" "$T/outside/dir"

# mksock PATH: a bound unix socket file (the process exits, the node stays)
mksock() { perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => $ARGV[0], Listen => 1) or die "$!\n"' "$1"; }

# make_objects DIR: one object of each type, each with a security.selinux
# label so that EVM has something to protect (and keeps a security.evm).
make_objects() {
	local d=$1
	echo regular >"$d/file"
	mkfifo "$d/fifo"
	mknod "$d/chr" c 1 3		# /dev/null: harmless, but it must not be opened
	mknod "$d/blk" b 240 250	# major 240: local/experimental, no driver
	mksock "$d/sock"
	ln -s ../outside/target "$d/link"
	for o in file fifo chr blk sock link; do
		setfattr -h -n security.selinux -v "$SEL" "$d/$o"
	done
}
echo "target outside the tree" >"$T/outside/target"
echo "inside a directory outside the tree" >"$T/outside/dir/f"
make_objects "$R"
ln -s ../../outside/dir "$R/sub/dirlink"
setfattr -h -n security.selinux -v "$SEL" "$R/sub/dirlink"
ln -s "$T/outside/target" "$R/sub/abslink"	# no protected xattr: no security.evm

outside_before=$(meta_snapshot "$T/outside/target" "$T/outside/dir" "$T/outside/dir/f")

# ---- special objects: labelled, never opened for I/O ----------------------

# strace -y prints the path behind every fd an open returns, so reopens
# through /proc/self/fd are caught too; -ff keeps each thread's calls whole.
mkdir "$T/strace"
# (LeakSanitizer cannot run under ptrace: off for this run of an ASan build.)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	timeout 120 strace -y -ff -qq -e trace=open,openat,openat2 -o "$T/strace/t" \
	"$UEVM" label -r -j 2 --hmac-key "raw:$KEY" "$R"
rc=$?
strace_log=$(cat "$T"/strace/t.*)
expect_eq "label -r of a tree with a FIFO finishes (no blocking open) and exits 0" 0 "$rc"
for o in fifo chr blk sock link sub/dirlink; do
	check "$o: labelled (security.evm written)" test -n "$(xattr_hex security.evm "$R/$o")"
	check "$o: no security.ima (only regular files get one)" test -z "$(xattr_hex security.ima "$R/$o")"
done
check "a symlink without protected xattrs gets no security.evm" \
	test -z "$(xattr_hex security.evm "$R/sub/abslink")"
special="= [0-9]+<$R/(fifo|chr|blk|sock|link|sub/dirlink|sub/abslink)>"
expect_eq "special objects are only ever opened with O_PATH" "" \
	"$(grep -E "$special" <<<"$strace_log" | grep -v O_PATH)"
check "strace saw all 7 special objects being opened (the check above is not vacuous)" \
	test "$(grep -E "$special" <<<"$strace_log" | grep -c O_PATH)" -ge 7
check "strace saw the regular file reopened for reading" \
	test -n "$(grep -E "= [0-9]+<$R/file>" <<<"$strace_log" | grep -v O_PATH)"
check "nothing outside the tree was opened (symlinks not followed)" \
	test -z "$(grep -F "$T/outside" <<<"$strace_log")"
expect_eq "symlink targets outside the tree untouched" "$outside_before" \
	"$(meta_snapshot "$T/outside/target" "$T/outside/dir" "$T/outside/dir/f")"

# A FIFO given directly: label, verify, hmac must not block either.
expect_rc "label of a FIFO given by name does not block" 0 \
	timeout 120 "$UEVM" label --hmac-key "raw:$KEY" "$R/fifo"
expect_rc "hmac of a FIFO does not block" 0 \
	timeout 120 "$UEVM" hmac --hmac-key "raw:$KEY" "$R/fifo"
# A symlink given by name with -P is itself labelled, not its target
# (without -P it is followed: cli_paths.sh).
expect_rc "label -P of a symlink given by name" 0 "$UEVM" label -P --hmac-key "raw:$KEY" "$R/link"
expect_eq "... leaves the target alone" "$outside_before" \
	"$(meta_snapshot "$T/outside/target" "$T/outside/dir" "$T/outside/dir/f")"

json=$(timeout 120 "$UEVM" verify -r -v --json --hmac-key "raw:$KEY" "$R")
expect_eq "verify -r of all object types exits 0" 0 $?
for o in fifo chr blk sock link; do
	t=$(case $o in fifo) echo fifo ;; chr) echo char-device ;; blk) echo block-device ;;
		sock) echo socket ;; link) echo symlink ;; esac)
	expect_eq "$o: verifies as a $t with status pass" "$t pass" \
		"$(jq -r --arg p "$R/$o" '.results[] | select(.path == $p) | "\(.type) \(.status)"' <<<"$json")"
done
expect_eq "no path outside the tree was visited" "" \
	"$(jq -r '.results[].path' <<<"$json" | grep -v "^$R")"
expect_eq "the symlinked directory was not descended into" "" \
	"$(jq -r '.results[].path' <<<"$json" | grep "dirlink/")"

# The HMAC binds their metadata: offline changes are caught.
chmod 600 "$R/fifo"
chown -h 1000 "$R/link"
chown 1000 "$R/chr"
setfattr -h -n security.selinux -v 'system_u:object_r:other_t:s0' "$R/sock"
json=$(timeout 120 "$UEVM" verify -r --json --hmac-key "raw:$KEY" "$R")
expect_eq "tampered special objects: exit 1" 1 $?
expect_eq "tampered special objects: each fails with invalid-HMAC" \
	"$R/chr fail invalid-HMAC|$R/fifo fail invalid-HMAC|$R/link fail invalid-HMAC|$R/sock fail invalid-HMAC" \
	"$(jq -r '.results[] | select(.ok | not) | "\(.path) \(.status) \(.cause)"' <<<"$json" | sort | paste -sd'|')"
expect_eq "  and the links that leave the tree are reported as warnings" \
	"$R/link|$R/sub/abslink|$R/sub/dirlink" \
	"$(jq -r '.results[] | select(.warning) | .path' <<<"$json" | sort | paste -sd'|')"

# ---- -j 1 and -j 4 give identical labels --------------------------------------

J=$T/jobs
mkdir -p "$J"
for i in $(seq 1 8); do
	mkdir -p "$J/d$i/e"
	setfattr -n security.selinux -v "$SEL" "$J/d$i"
	for k in $(seq 1 12); do
		head -c $((i * 997 + k * 31)) /dev/urandom >"$J/d$i/f$k"
	done
	echo x >"$J/d$i/e/g"
	setfattr -n security.capability -v 0x0100000200200000000000000000000000000000 "$J/d$i/f1"
done
"$UEVM" label -r -j 1 --hmac-key "raw:$KEY" "$J"
dump1=$(cd "$J" && getfattr -R -h -d -m - -e hex . | sort)
"$UEVM" clear -r "$J" >/dev/null
check "clear -r removed the labels" test -z "$(cd "$J" && getfattr -R -h -d -m 'security.(ima|evm)' . 2>/dev/null)"
"$UEVM" label -r -j 4 --hmac-key "raw:$KEY" "$J"
dump4=$(cd "$J" && getfattr -R -h -d -m - -e hex . | sort)
expect_eq "-j 1 and -j 4 write identical labels" "$dump1" "$dump4"
check "the -j comparison covers every file" \
	test "$(grep -c '^security.evm=' <<<"$dump4")" -ge 104

# ---- --hmac-key keyring:NAME ---------------------------------------------------

KNAME="uevm-test-$$"
if kid=$(keyctl padd user "$KNAME" @u <"$KEY"); then
	on_exit "keyctl unlink $kid @u >/dev/null 2>&1"
	expect_eq "keyring key: hmac equals the file key's" \
		"$("$UEVM" hmac --hmac-key "raw:$KEY" "$R/file" "$R/fifo" "$J/d3/f1")" \
		"$("$UEVM" hmac --hmac-key "keyring:$KNAME" "$R/file" "$R/fifo" "$J/d3/f1")"
	expect_rc "keyring key: verifies a tree labelled with the file key" 0 \
		"$UEVM" verify -r --hmac-key "keyring:$KNAME" "$J"
	"$UEVM" clear -r "$J" >/dev/null
	"$UEVM" label -r --hmac-key "keyring:$KNAME" "$J"
	expect_eq "keyring key: label -r writes the same labels as the file key" \
		"$dump1" "$(cd "$J" && getfattr -R -h -d -m - -e hex . | sort)"
	keyctl unlink "$kid" @u >/dev/null
	expect_rc "keyring key: gone after unlink -> exit 2" 2 \
		"$UEVM" verify --hmac-key "keyring:$KNAME" "$J/d1/f1"
else
	fail "keyctl padd user $KNAME @u"
fi

# ---- --uuid and -x on a loop-mounted ext4 with a tmpfs inside ------------------

IMG=$T/ext4.img
MNT=$T/mnt
mkdir "$MNT"
truncate -s 16M "$IMG"
mkfs.ext4 -q -F -O ^has_journal "$IMG"
if mount -o loop "$IMG" "$MNT"; then
	on_exit "umount -R '$MNT'"
	LOOPDEV=$(findmnt -n -o SOURCE "$MNT")
	FSUUID=$(blkid -s UUID -o value "$IMG")
	make_objects "$MNT"
	mkdir "$MNT/outside" && echo t >"$MNT/outside/target"
	mkdir "$MNT/inner"
	setfattr -n security.selinux -v "$SEL" "$MNT/inner"
	echo same-fs >"$MNT/samefs"
	setfattr -n security.selinux -v "$SEL" "$MNT/samefs"
	if mount -t tmpfs -o size=1m uevm-test "$MNT/inner"; then
		echo on-tmpfs >"$MNT/inner/t"
		mkdir "$MNT/inner/d" && echo deeper >"$MNT/inner/d/u"
	else
		fail "mount a tmpfs inside the tree"
	fi

	# auto == blkid's UUID, != none, != another UUID
	auto=$("$UEVM" hmac --hmac-key "raw:$KEY" "$MNT/samefs" | cut -d' ' -f1)
	given=$("$UEVM" hmac --uuid "$FSUUID" --hmac-key "raw:$KEY" "$MNT/samefs" | cut -d' ' -f1)
	none=$("$UEVM" hmac --uuid none --hmac-key "raw:$KEY" "$MNT/samefs" | cut -d' ' -f1)
	other=$("$UEVM" hmac --uuid 28b23254-9467-44c0-b6ba-34b12e85a26f --hmac-key "raw:$KEY" "$MNT/samefs" | cut -d' ' -f1)
	expect_eq "loop ext4: auto UUID HMAC equals --uuid <blkid UUID $FSUUID>" "$given" "$auto"
	check "loop ext4: auto, none and another UUID give three different HMACs" \
		test -n "$auto" -a "$auto" != "$none" -a "$auto" != "$other" -a "$none" != "$other"
	expect_eq "loop ext4: the HMAC with the UUID equals the openssl-built reference" \
		"02$(ref_evm_hmac "$KEY" "$MNT/samefs" "$(ext4_generation "$MNT/samefs")" "$FSUUID")" "$auto"
	# labelled with one setting, verified with each
	for lab in auto none "$FSUUID" 28b23254-9467-44c0-b6ba-34b12e85a26f; do
		"$UEVM" label --uuid "$lab" --hmac-key "raw:$KEY" "$MNT/samefs"
		for ver in auto none 28b23254-9467-44c0-b6ba-34b12e85a26f; do
			want=1
			[ "$lab" = "$ver" ] && want=0
			[ "$lab" = "$FSUUID" ] && [ "$ver" = auto ] && want=0
			expect_rc "labelled --uuid $lab, verified --uuid $ver: exit $want" $want \
				"$UEVM" verify --uuid "$ver" --hmac-key "raw:$KEY" "$MNT/samefs"
		done
	done

	# Every object type against the reference, with debugfs's generation.
	"$UEVM" label -r -x --uuid none --hmac-key "raw:$KEY" "$MNT" ||
		fail "label -r -x of the ext4 image" "exit $?"
	sync -f "$MNT/file"
	for o in file fifo chr blk sock link; do
		ino=$(stat -c %i "$MNT/$o")
		gen=$(debugfs -R "stat <$ino>" "$LOOPDEV" 2>/dev/null | sed -n 's/.*Generation: *\([0-9]*\).*/\1/p')
		if [ -z "$gen" ]; then
			fail "$o: debugfs reports the generation of inode $ino"
			continue
		fi
		expect_eq "ext4 $o (generation $gen): security.evm equals the openssl-built reference" \
			"02$(ref_evm_hmac "$KEY" "$MNT/$o" "$gen")" "$(xattr_hex security.evm "$MNT/$o")"
	done
	check "debugfs generations are not all zero" \
		test "$(debugfs -R "stat <$(stat -c %i "$MNT/fifo")>" "$LOOPDEV" 2>/dev/null |
			sed -n 's/.*Generation: *\([0-9]*\).*/\1/p')" != 0

	# -x: the tmpfs inside was not labelled, and verify -x does not visit it
	expect_eq "-x: files on the inner tmpfs were not labelled" "" \
		"$(getfattr -R -d -m 'security.(ima|evm)' "$MNT/inner" 2>/dev/null)"
	json=$("$UEVM" verify -r -x -v --json --uuid none --hmac-key "raw:$KEY" "$MNT")
	expect_eq "-x: verify of the ext4 tree exits 0" 0 $?
	expect_eq "-x: verify does not visit the inner tmpfs" "" \
		"$(jq -r '.results[].path' <<<"$json" | grep "^$MNT/inner/")"
	check "-x: verify visited the ext4 files" \
		test "$(jq -r '.results[].path' <<<"$json" | grep -c "^$MNT/")" -ge 8
	# Without -x the walk crosses into the tmpfs (and its files are unlabelled).
	json=$("$UEVM" verify -r --json --uuid none --hmac-key "raw:$KEY" "$MNT")
	expect_eq "without -x: verify crosses into the tmpfs and fails its unlabelled files" \
		"$MNT/inner/d/u missing-hash|$MNT/inner/t missing-hash" \
		"$(jq -r '.results[] | select(.path | startswith($m)) | "\(.path) \(.cause)"' \
			--arg m "$MNT/inner/" <<<"$json" | sort | paste -sd'|')"
	"$UEVM" label -r --hmac-key "raw:$KEY" "$MNT/inner"
	expect_rc "without -x: label -r, then verify -r of the tmpfs passes (auto tmpfs UUID)" 0 \
		"$UEVM" verify -r --hmac-key "raw:$KEY" "$MNT/inner"
else
	fail "mount a loop ext4 image"
fi
