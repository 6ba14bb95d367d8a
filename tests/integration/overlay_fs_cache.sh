#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Through overlayfs a non-directory reports the st_dev of the layer it is
# on, so a run that walks a plain directory of that filesystem first, then
# the overlay, must not apply the plain filesystem's cached UUID or f_type
# to the overlay's files: a file labelled with others in one run verifies
# alone, and a file labelled alone verifies in such a run.
source "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: overlay_fs_cache needs root (mount)"
	exit 0
fi
KEY=$T/key
make_key "$KEY"
# The layers on different filesystems (lower on a tmpfs), xino off: then
# a file of the upper layer reports the upper filesystem's st_dev, as the
# plain directory does.
mkdir -p "$T/plain" "$T/lower" "$T/upper" "$T/work" "$T/m"
mount -t tmpfs tmpfs "$T/lower" || { fail "tmpfs mount"; exit 1; }
on_exit "umount '$T/lower'"
echo plain >"$T/plain/p"
echo lower >"$T/lower/l"
echo one >"$T/upper/a"
echo two >"$T/upper/b"
if ! mount -t overlay overlay \
	-o "lowerdir=$T/lower,upperdir=$T/upper,workdir=$T/work,xino=off" "$T/m"; then
	fail "overlay mount"
	exit 1
fi
on_exit "umount '$T/m'"	# runs before the tmpfs's
# (Linux 6.18 reports pseudo st_devs of the overlay's own for such files;
# older kernels gave the upper file the upper filesystem's, the case the
# walk guards against: both must give the same verdicts.)
echo "INFO: st_dev plain $(stat -c %d "$T/plain/p"), overlay dir $(stat -c %d "$T/m"), upper file $(stat -c %d "$T/m/a")"

# a: labelled in a run that walked the plain directory first
expect_rc "label plain, then the overlay, in one run" 0 \
	"$UEVM" label -r -j1 --hmac-key "raw:$KEY" "$T/plain" "$T/m"
expect_rc "a overlay file labelled in that run verifies alone" 0 \
	"$UEVM" verify --hmac-key "raw:$KEY" "$T/m/a"
# b: labelled alone, verified in a run that walks the plain directory first
expect_rc "label b alone" 0 "$UEVM" label --hmac-key "raw:$KEY" "$T/m/b"
expect_rc "b verifies in a run that walked the plain directory first" 0 \
	"$UEVM" verify -r -j1 --hmac-key "raw:$KEY" "$T/plain" "$T/m"
