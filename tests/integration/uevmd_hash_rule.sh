#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmd and the rehash at a writer's close, under a policy that appraises
# only what runs (appraise func=BPRM_CHECK).  As in the kernel, a write
# open no appraise or hash rule covers does not move the label: an
# existing program changed in place keeps its old label and is refused --
# whether or not uevmd had stopped seeing its opens (an ignore mark after
# it ran; the mark once made every later writer's close rehash, so the
# change ran).  A new program is labelled with what was written (checked
# against sha256sum) and runs.  With `hash func=FILE_CHECK` (the kernel's
# IMA_HASH) a change in place is labelled and runs (writers are seen until
# the content is known to pass: no ignore mark stands for them); content
# changed offline is not labelled by a writer's close (it must pass
# appraisal first, unlike the kernel's hash rule), and stays refused.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
printf 'appraise func=BPRM_CHECK\n' >"$T/policy"
printf 'appraise func=BPRM_CHECK\nhash func=FILE_CHECK\n' >"$T/policy_hash"
B=$MNT/bin
mkdir -p "$B"

sha_label() { echo "0404$(sha256sum <"$1" | cut -c1-64)"; }
is_content() { [ "$(xattr_hex security.ima "$1")" = "$(sha_label "$1")" ]; }

for pol in policy policy_hash; do
	for f in cached uncached; do
		printf '#!/bin/sh\necho %s\n' "$f" >"$B/$f-$pol"
		chmod 755 "$B/$f-$pol"
	done
	"$UEVM" label --hmac-key "raw:$T/key" "$B"/*-"$pol" >/dev/null ||
		fail "fixture: the programs are labelled"
	POLICY=$T/$pol write_conf
	start_uevmd || { fail "uevmd starts"; exit 1; }

	expect_eq "$pol: the labelled program runs" ok "$(exec_result "$B/cached-$pol")"
	e0=$(status_field events)
	"$B/cached-$pol" >/dev/null; "$B/cached-$pol" >/dev/null
	# Under a hash rule a writer must be seen until its content is known
	# to pass (ima_fastpath.c): no mark.
	if [ "$pol" = policy ]; then
		expect_eq "$pol: ... and is not seen again (an ignore mark)" "$e0" \
			"$(status_field events)"
	else
		check "$pol: ... and is seen again (no mark: writers must be seen)" \
			test "$(status_field events)" -gt "$e0"
	fi
	for f in cached uncached; do
		before=$(xattr_hex security.ima "$B/$f-$pol")
		echo 'echo changed' >>"$B/$f-$pol"
		r=$(exec_result "$B/$f-$pol")
		if [ "$pol" = policy ]; then
			expect_eq "$pol: $f, changed in place: refused, as under the kernel" EPERM "$r"
			expect_eq "$pol: ... its label did not move" "$before" \
				"$(xattr_hex security.ima "$B/$f-$pol")"
		else
			expect_eq "$pol: $f, changed in place: runs" ok "$r"
			check "$pol: ... labelled with its content" is_content "$B/$f-$pol"
		fi
	done

	printf '#!/bin/sh\necho new\n' >"$B/new-$pol"
	chmod 755 "$B/new-$pol"
	expect_eq "$pol: a new program runs" ok "$(exec_result "$B/new-$pol")"
	check "$pol: ... labelled with its content" is_content "$B/new-$pol"
	if [ "$pol" = policy_hash ]; then
		# Planted in place while uevmd is stopped (offline): a writer's
		# close under the hash rule does not label it.
		stop_uevmd
		before=$(xattr_hex security.ima "$B/cached-$pol")
		printf '#!/bin/sh\necho PLANTED\n' >"$B/cached-$pol"
		start_uevmd || { fail "uevmd starts again"; exit 1; }
		: >>"$B/cached-$pol"
		expect_eq "$pol: an offline change is not labelled by a writer's close" \
			"$before" "$(xattr_hex security.ima "$B/cached-$pol")"
		expect_eq "$pol: ... and it is refused" EPERM "$(exec_result "$B/cached-$pol")"
		check "$pol: ... the refused rehash is audited" \
			log_has "op=update_xattr cause=invalid-hash"
	fi
	stop_uevmd
done
