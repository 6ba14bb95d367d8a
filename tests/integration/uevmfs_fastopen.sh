#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# uevmfs -o fastopen: the kernel opens files itself (uevmfs answers OPEN
# with ENOSYS), the hooks run at the first read and after the last write.
#  - the offline attack, the legitimate changes and the kill -9 tests run
#    again with every mount in this mode (their own assertions);
#  - what differs: a tampered file opens but its reads and exec fail with
#    EACCES; written content is relabelled after write_idle without writes,
#    at fsync, at unmount and before it is read, and until then SOURCE
#    fails detectably, never PASS for content its labels do not describe;
#  - no OPEN, FLUSH or RELEASE reaches uevmfs after the first OPEN and
#    FLUSH (its debug log).
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

for t in uevmfs_offline uevmfs_changes uevmfs_crash; do
	UFS_EXTRA_OPTS=fastopen,write_idle=0.2 bash "$TESTS_DIR/integration/$t.sh" 2>&1 |
		sed -n 's/^\(PASS\|FAIL\): /\1: fastopen: /p'
done

KEY=$T/key
make_key "$KEY"
S=$T/src
M=$T/mnt
mkdir -p "$S"
echo "good content" >"$S/good"
echo "will be tampered" >"$S/bad"
printf '#!/bin/sh\necho evil\n' >"$S/prog"
chmod 755 "$S/prog"
echo "to be edited" >"$S/edit"
echo "to be synced" >"$S/synced"
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
echo "tampered" >>"$S/bad"
echo "echo more evil" >>"$S/prog"

ufs_mount "$S" "$M" "key=raw:$KEY,ml=$T/ml,audit_log=$T/audit.log,nosyslog,fastopen,write_idle=30" || exit 1

# ---- reads ---------------------------------------------------------------------------------
out=$(python3 - "$M/bad" <<'EOF'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print("opened", end=" ")
try:
    os.read(fd, 10)
    print("read")
except OSError as e:
    print("read-error", e.errno)
EOF
)
expect_eq "tampered file: the open succeeds, the read fails with EACCES" "opened read-error 13" "$out"
expect_match "tampered file: audit record at the read (cause=invalid-hash)" \
	'op=appraise_data cause=invalid-hash comm="python3"' "$(ufs_records invalid-hash "$M/bad")"
expect_match "tampered program: exec fails with EACCES" "Permission denied" "$("$M/prog" 2>&1)"
expect_eq "untouched file: read with its content" "good content" "$(cat "$M/good")"
expect_match "the first read measured the file (ima-ng entry for it)" " ima-ng sha256:[0-9a-f]{64} $M/good\$" \
	"$("$UEVM" measurements show "$T/ml")"

# ---- writes ----------------------------------------------------------------------------------
echo "edited" >"$M/edit"
expect_rc "before write_idle: SOURCE fails detectably (old labels, new content)" 1 \
	"$UEVM" verify --hmac-key "raw:$KEY" "$S/edit"
expect_eq "the edit reads back through the mount" "edited" "$(cat "$M/edit")"
expect_rc "a read of a file being written relabels it first (as its close would)" 0 \
	"$UEVM" verify --hmac-key "raw:$KEY" "$S/edit"
echo "edited again" >"$M/edit"
echo "synced now" >"$M/synced"
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$M/synced"
expect_rc "fsync relabels at once" 0 "$UEVM" verify --hmac-key "raw:$KEY" "$S/synced"

# ---- no round trips ------------------------------------------------------------------------
ufs_umount "$M"
expect_rc "unmount relabels what was still being written" 0 \
	"$UEVM" verify --hmac-key "raw:$KEY" "$S/edit"

: >"$T/uevmfs.stderr"
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,fastopen,-d" || exit 1
for _ in 1 2 3; do cat "$M/good" >/dev/null; done
echo more >>"$M/edit"
ufs_umount "$M"
opens=$(grep -c 'opcode: OPEN' "$T/uevmfs.stderr")
closes=$(grep -cE 'opcode: (FLUSH|RELEASE) ' "$T/uevmfs.stderr")
expect_eq "one OPEN and one FLUSH reached uevmfs for 4 opens and closes (both answered ENOSYS)" \
	"1 1" "$opens $closes"
expect_rc "the append, relabelled at unmount, verifies" 0 "$UEVM" verify --hmac-key "raw:$KEY" "$S/edit"

# ---- rules changing under cached pages ----------------------------------------------------------
# Read before EVM is initialised (the content alone is appraised, as the
# kernel does), then `echo 1 > evm`: the kernel's cached pages are dropped
# and the next read is appraised with EVM.
echo "owner changed offline" >"$S/owner"
"$UEVM" label --hmac-key "raw:$KEY" "$S/owner" >/dev/null
chown 1234 "$S/owner"
C=$T/sec
ufs_mount "$S" "$M" "key=raw:$KEY,ml=none,nosyslog,fastopen,evm=0,securityfs=$C,audit_log=$T/audit3.log" || exit 1
expect_eq "evm=0: the owner-changed file reads (content matches)" "owner changed offline" \
	"$(cat "$M/owner" 2>&1)"
echo 1 >"$C/evm"
owner_refused() { ! cat "$M/owner" >/dev/null 2>&1; }
wait_quiet "$WAIT_S" owner_refused
expect_match "after echo 1 > evm: its cached pages are dropped, the read is refused" \
	'Permission denied' "$(cat "$M/owner" 2>&1)"
expect_match "  audited cause=invalid-HMAC" 'cause=invalid-HMAC' \
	"$(ufs_records invalid-HMAC "$M/owner" "$T/audit3.log")"
ufs_umount "$M"
