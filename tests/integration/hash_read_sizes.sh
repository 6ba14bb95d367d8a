#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Content hashes of files whose sizes sit on either side of the pieces the
# library reads them in (64 KiB, and the 256 KiB it used before) and of the
# size from which it asks for read-ahead (1 MiB), against OpenSSL's and
# coreutils' digests of the same bytes: by `uevm ima-hash` (size unknown
# to the hasher) and in the security.ima that `uevm label` writes (size
# known: the read stops at it), which `uevm verify` must then pass.
source "$(dirname "$0")/../lib.sh"

D=$T/d
mkdir "$D"
sizes=(0 1 4095 65535 65536 65537 131079 262143 262144 262145
	1048575 1048576 1048577 3145733)
head -c 3145733 /dev/urandom >"$T/pool"
for s in "${sizes[@]}"; do
	head -c "$s" "$T/pool" >"$D/f$s"
done

for algo in sha1 sha256 sha512; do
	out=$("$UEVM" ima-hash -0 -a "$algo" "${sizes[@]/#/$D/f}" | tr '\0' '\n')
	for s in "${sizes[@]}"; do
		want=$(openssl dgst -"$algo" -r "$D/f$s" | cut -d' ' -f1)
		got=$(awk -v f="$D/f$s" '$2 == f { print $1 }' <<<"$out")
		expect_match "ima-hash -a $algo, $s bytes: ends in openssl's digest" "$want\$" "$got"
	done
done

key=$T/key
(umask 077 && head -c 32 /dev/urandom >"$key")
expect_rc "label -r of the files: exit 0" 0 "$UEVM" label -r --hmac-key "raw:$key" "$D"
for s in "${sizes[@]}"; do
	want=$(sha256sum "$D/f$s" | cut -d' ' -f1)
	got=$(getfattr --absolute-names -e hex -n security.ima "$D/f$s" 2>/dev/null |
		sed -n 's/^security\.ima=//p')
	expect_eq "label, $s bytes: security.ima is 0404 + sha256sum's digest" "0x0404$want" "$got"
done
out=$("$UEVM" verify -r --json --hmac-key "raw:$key" "$D")
expect_rc "verify -r of the labelled files: exit 0" 0 "$UEVM" verify -r --hmac-key "raw:$key" "$D"
expect_match "verify --json: every file passes" "\"pass\": ${#sizes[@]}," "$out"

# One byte changed on each side of a piece's edge: the label no longer fits.
for at in 65535 65536 262144; do
	cp "$D/f1048577" "$T/c"
	printf 'X' | dd of="$D/f1048577" bs=1 seek="$at" conv=notrunc status=none
	expect_rc "byte $at of the 1 MiB + 1 file changed: verify exits 1" 1 \
		"$UEVM" verify --hmac-key "raw:$key" "$D/f1048577"
	cp "$T/c" "$D/f1048577"
done
expect_rc "restored: verify exits 0" 0 "$UEVM" verify --hmac-key "raw:$key" "$D/f1048577"
