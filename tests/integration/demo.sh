#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make demo's script (examples/demo.sh):
#  - with the real uevm it exits 0, reports every tampered object with the
#    expected status and cause, and leaves no mount, loop device or
#    scratch directory behind;
#  - it also works on /var/tmp when no loop device is used (DEMO_NO_LOOP);
#  - it is not a script that always succeeds: with a uevm whose verify
#    reports nothing and exits 0, it exits non-zero.
source "$(dirname "$0")/../lib.sh"

DEMO=$TESTS_DIR/../examples/demo.sh
scratch() { find /var/tmp -maxdepth 1 -name 'uevm-demo.*' | sort; }
loops() { losetup -l -n -O BACK-FILE 2>/dev/null | grep -c 'uevm-demo\.' || true; }

before=$(scratch)
rc=0
out=$(bash "$DEMO" "$UEVM" 2>&1) || rc=$?
expect_eq "demo exits 0 with the real uevm" 0 "$rc"
if losetup -f >/dev/null 2>&1; then
	expect_match "demo used a loop-mounted ext4 image" 'ext4 image on /dev/loop' "$out"
else
	expect_match "demo fell back to /var/tmp (no loop device)" 'no loop-mounted image' "$out"
fi
expect_match "demo: verify after tampering exited 1" 'exit status 1 \(1 = at least one' "$out"
expect_match "demo: content edit is invalid-hash" \
	'^FAIL demo/bin/greet: fail \(invalid-hash\)' "$out"
expect_match "demo: append is invalid-hash" \
	'^FAIL demo/etc/greet.conf: fail \(invalid-hash\)' "$out"
expect_match "demo: removed security.ima is missing-hash" \
	'^FAIL demo/etc/motd: no_label \(missing-hash\)' "$out"
expect_match "demo: chmod is invalid-HMAC" \
	'^FAIL demo/sbin/greetd: fail \(invalid-HMAC\)' "$out"
expect_match "demo: chown is invalid-HMAC" \
	'^FAIL demo/etc/sudoers: fail \(invalid-HMAC\)' "$out"
expect_match "demo: copied security.evm is invalid-HMAC" \
	'^FAIL demo/share/doc/README: fail \(invalid-HMAC\)' "$out"
expect_match "demo: byte-identical copy is invalid-HMAC" \
	'^FAIL demo/lib/libgreet.so.1: fail \(invalid-HMAC\)' "$out"
expect_match "demo: untouched files pass" '^OK demo/share/doc/NEWS: pass$' "$out"
# The uevmfs part: tampered files refused on open, with the audit cause.
expect_eq "demo/uevmfs: tampered content refused on open, audited invalid-hash" \
	'$ cat uevmfs/etc/greet.conf|   Permission denied|   audit: op=appraise_data cause=invalid-hash' \
	"$(grep -A2 'cat uevmfs/etc/greet.conf' <<<"$out" | paste -sd'|')"
expect_eq "demo/uevmfs: chown'ed file refused, audited invalid-HMAC" \
	'$ cat uevmfs/etc/sudoers|   Permission denied|   audit: op=appraise_data cause=invalid-HMAC' \
	"$(grep -A2 'cat uevmfs/etc/sudoers' <<<"$out" | paste -sd'|')"
expect_match "demo/uevmfs: the changed program does not run" \
	'Permission denied \(exec of a changed program\)' "$out"
expect_eq "demo/uevmfs: untouched files open" 3 "$(grep -c '^   opens$' <<<"$out")"
expect_eq "demo: no UNEXPECTED line" "" "$(grep UNEXPECTED <<<"$out")"
expect_eq "demo: its scratch directory is gone" "$before" "$(scratch)"
expect_eq "demo: no loop device left" 0 "$(loops)"
expect_eq "demo: nothing left mounted" 0 "$(grep -c 'uevm-demo\.' /proc/mounts || true)"

rc=0
out=$(DEMO_NO_LOOP=1 bash "$DEMO" "$UEVM" 2>&1) || rc=$?
expect_eq "demo on /var/tmp (DEMO_NO_LOOP) exits 0" 0 "$rc"
expect_match "demo on /var/tmp says so" 'no loop-mounted image' "$out"
expect_eq "demo on /var/tmp: scratch directory gone" "$before" "$(scratch)"

# A kernel older than 6.5 cannot report the filesystem UUID: the demo must
# then pass the image's UUID itself.  Simulated by a uevm that refuses to
# compute an HMAC without --uuid.
cat >"$T/old-kernel-uevm" <<EOF
#!/bin/bash
case "\$1" in label|verify|hmac)
	case " \$* " in *" --uuid "*) ;;
	*) echo "uevm: FS_IOC_GETFSUUID failed (Inappropriate ioctl for device)" >&2; exit 2 ;;
	esac ;;
esac
exec "$UEVM" "\$@"
EOF
chmod +x "$T/old-kernel-uevm"
rc=0
out=$(bash "$DEMO" "$T/old-kernel-uevm" 2>&1) || rc=$?
expect_eq "demo without FS_IOC_GETFSUUID exits 0" 0 "$rc"
expect_match "demo without FS_IOC_GETFSUUID passes --uuid" \
	'cannot report the filesystem UUID: (passing --uuid [0-9a-f-]{36}|using --uuid none)' "$out"
expect_match "demo without FS_IOC_GETFSUUID still detects tampering" \
	'^FAIL demo/etc/sudoers: fail \(invalid-HMAC\)' "$out"

# A uevm that passes everything through except verify, which says nothing.
cat >"$T/lying-uevm" <<EOF
#!/bin/sh
[ "\$1" = verify ] && exit 0
exec "$UEVM" "\$@"
EOF
chmod +x "$T/lying-uevm"
rc=0
out=$(bash "$DEMO" "$T/lying-uevm" 2>&1) || rc=$?
expect_eq "demo fails when verify does not detect tampering" 1 "$rc"
expect_match "demo names what went wrong" 'UNEXPECTED: verify after tampering exited 0' "$out"
expect_eq "failed demo: scratch directory gone" "$before" "$(scratch)"
expect_eq "failed demo: no loop device left" 0 "$(loops)"
