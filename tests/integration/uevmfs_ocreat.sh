#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A file made with open(O_RDONLY|O_CREAT) through the mount must not stay
# "new" (issue 12, item 7): it is labelled at its creation, so content
# written into SOURCE behind the mount afterwards is refused on read and
# exec (invalid-hash), audited, in both modes (per-open, and fastopen
# where the kernel creates through MKNOD).  A touch-created file, and one
# created for writing, behave as before.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S"

for mode in per-open fastopen; do
	extra=
	[ $mode = fastopen ] && extra=,fastopen
	: >"$T/audit.log"
	# timeout=0: the kernel sees the size the file has in SOURCE at once.
	ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,audit_log=$T/audit.log,nosyslog,timeout=0$extra" || exit 1
	python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_CREAT, 0o755))' \
		"$M/made-$mode"
	touch "$M/touched-$mode"
	chmod 755 "$M/touched-$mode"
	printf '#!/bin/sh\necho written through the mount\n' >"$M/written-$mode"
	chmod 755 "$M/written-$mode"
	expect_rc "$mode: the O_RDONLY|O_CREAT file is labelled at once (verify passes)" 0 \
		"$UEVM" verify --hmac-key "raw:$KEY" "$S/made-$mode"

	# The attack: content written directly into SOURCE, behind the mount.
	for f in made touched; do
		printf '#!/bin/sh\necho PLANTED RAN\n' >"$S/$f-$mode"
	done
	for f in made touched; do
		out=$(cat "$M/$f-$mode" 2>&1)
		expect_match "$mode: $f: the planted content is refused on read" "Permission denied" "$out"
		out=$("$M/$f-$mode" 2>&1)
		expect_match "$mode: $f: ... and on exec" "Permission denied" "$out"
		expect_eq "$mode: $f: the planted program did not run" "" "$(grep PLANTED <<<"$out")"
		expect_match "$mode: $f: audit record names it (cause=invalid-hash)" \
			"op=appraise_data cause=invalid-hash" "$(ufs_records invalid-hash "$M/$f-$mode")"
	done
	expect_eq "$mode: a file written through the mount still runs" "written through the mount" \
		"$("$M/written-$mode")"
	ufs_umount "$M"
done
