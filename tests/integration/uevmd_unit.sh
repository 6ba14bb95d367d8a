#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The hardened systemd unit: systemd-analyze verify accepts the generated
# unit, it carries the hardening directives, and its exposure score is at
# most 3.2 (7.8 before hardening).  systemd is not PID 1 on the test
# machines, so the unit's confinement is reproduced by hand: uevmd runs
# with the unit's CapabilityBoundingSet only, no new privileges, and in a
# mount namespace of its own where the watched filesystem's directories
# are read-only bind mounts (as ProtectSystem=full makes /usr and /etc),
# and still enforces (a tampered file refused, a good one and a binary
# allowed) and keeps labels current after a legitimate write under such a
# read-only bind (through file handles on the writable mount).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

UNIT=${UEVM_BUILD:-$TESTS_DIR/../build/default}/uevmd.service
[ -f "$UNIT" ] || { fail "the unit is built" "$UNIT is missing"; exit 1; }
u=$(cat "$UNIT")

# ---- the unit file -----------------------------------------------------------------------------
for d in ProtectSystem=full ProtectHome=read-only PrivateTmp=yes ProtectKernelModules=yes \
	ProtectKernelTunables=yes ProtectKernelLogs=yes ProtectControlGroups=yes \
	ProtectHostname=yes LockPersonality=yes RestrictRealtime=yes RestrictNamespaces=yes \
	"RestrictAddressFamilies=AF_UNIX AF_NETLINK" SystemCallArchitectures=native \
	MemoryDenyWriteExecute=yes NoNewPrivileges=yes PrivateMounts=yes \
	"SystemCallFilter=@system-service .*fanotify_init fanotify_mark open_by_handle_at" \
	"ExecReload=/bin/kill -HUP \\\$MAINPID"; do
	expect_match "the unit has $d" "^$d" "$u"
done
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
expect_eq "the capability bounding set is narrow" \
	"CAP_SYS_ADMIN CAP_SYS_PTRACE CAP_DAC_READ_SEARCH CAP_FOWNER CAP_LEASE CAP_AUDIT_WRITE" "$caps"
expect_match "ConditionPathExists names the configuration ExecStart reads" \
	"$(sed -n 's/^ConditionPathExists=//p' "$UNIT")\$" "$(grep '^ExecStart=' "$UNIT")"

if command -v systemd-analyze >/dev/null; then
	sed "s|^ExecStart=[^ ]*|ExecStart=$UEVMD|" "$UNIT" >"$T/uevmd.service"
	out=$(systemd-analyze verify --man=no "$T/uevmd.service" 2>&1)
	expect_eq "systemd-analyze verify accepts the unit" "" "$out"
	out=$(systemd-analyze security --offline=yes "$T/uevmd.service" 2>&1)
	score=$(sed -n 's/.*Overall exposure level for uevmd.service: \([0-9.]*\).*/\1/p' <<<"$out")
	if [ -z "$score" ] && grep -q "offline" <<<"$out"; then
		echo "SKIP: systemd-analyze security --offline is not supported here: $out" | head -n 2
	else
		check "systemd-analyze security: exposure ${score:-?} <= 3.2 (was 7.8)" \
			awk -v s="${score:-99}" 'BEGIN { exit !(s <= 3.2) }'
	fi
else
	echo "SKIP: systemd-analyze is not installed: the unit is not verified or scored"
fi

# ---- uevmd confined as the unit confines it ---------------------------------------------------
make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
mkdir -p "$MNT/usr/bin" "$MNT/etc"
echo good >"$MNT/usr/good"
echo tampered >"$MNT/usr/tampered"
echo config >"$MNT/etc/file"
cp "$(type -P true)" "$MNT/usr/bin/true"
"$UEVM" label -r --hmac-key "raw:$T/key" "$MNT/usr" "$MNT/etc"
echo changed >>"$MNT/usr/tampered"
write_conf

setpriv_caps=$(tr ' ' '\n' <<<"$caps" | sed 's/^CAP_//' | tr 'A-Z' 'a-z' | sed 's/^/+/' | paste -sd,)
cat >"$T/confined.in" <<CONFINED
#!/bin/sh
# Read-only binds of the watched filesystem's directories, as ProtectSystem=full
# makes /usr and /etc; then the unit's capabilities only.
mount --make-rslave / &&
mount --bind -o ro "$MNT/usr" "$MNT/usr" &&
mount --bind -o ro "$MNT/etc" "$MNT/etc" &&
exec setpriv --bounding-set=-all,$setpriv_caps --inh-caps=-all --no-new-privs "$UEVMD" "\$@"
CONFINED
printf '#!/bin/sh\nexec unshare -m %s "$@"\n' "$T/confined.in" >"$T/confined"
chmod 755 "$T/confined" "$T/confined.in"
UEVMD=$T/confined
start_uevmd || { fail "uevmd starts with the unit's capabilities in its own mount namespace"; exit 1; }
pass "uevmd starts with the unit's capabilities in its own mount namespace"
expect_eq "  its bounding set is the unit's" \
	"$(printf '%x' $(( (1<<21) | (1<<19) | (1<<2) | (1<<3) | (1<<28) | (1<<29) )))" \
	"$(sed -n 's/^CapBnd:\t0*//p' /proc/"$UEVMD_PID"/status)"
check "  in a mount namespace other than ours" \
	test "$(readlink /proc/"$UEVMD_PID"/ns/mnt)" != "$(readlink /proc/self/ns/mnt)"
expect_eq "  the tampered file is refused" EPERM "$(open_result "$MNT/usr/tampered")"
expect_eq "  the good file reads" ok "$(open_result "$MNT/usr/good")"
expect_eq "  the binary runs" ok "$(exec_result "$MNT/usr/bin/true")"
# A legitimate write (from outside its namespace, where the mount is
# writable): uevmd relabels the file, under its own read-only bind.
echo "more" >>"$MNT/usr/good"
echo "new" >"$MNT/etc/new"
expect_eq "  the rewritten file still reads (relabelled)" ok "$(open_result "$MNT/usr/good")"
expect_eq "  the new file reads" ok "$(open_result "$MNT/etc/new")"
stop_uevmd	# pending label updates are finished first
json=$("$UEVM" verify -v --json --hmac-key "raw:$T/key" "$MNT/usr/good" "$MNT/etc/new")
expect_eq "  offline, both verify with the key (labels written under the read-only binds)" \
	"pass pass" "$(jq -r '[.results[].status] | join(" ")' <<<"$json")"
check "  the log has no EROFS or EPERM from relabelling" \
	bash -c "! grep -E 'Read-only file system|Operation not permitted' '$LOG'"
