#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A host list adopted from the kernel's: the kernel extends PCR 10 between
# a writer's read of the kernel's list (its catch-up) and that writer's own
# extend.  The TPM then holds the kernel's entry before the writer's; the
# file had them the other way round, so the list no longer replayed and
# every add was refused until a reboot.  Now the writer reads the kernel's
# list again after its extend and writes the order the TPM holds.
# The kernel's extend is put into that window deterministically: a
# preloaded fdatasync (the writer syncs its append before it extends) runs
# the "kernel" once, when armed.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmfs-lib.sh"

for tool in swtpm tpm2_pcrread tpm2_pcrextend python3 cc; do
	command -v "$tool" >/dev/null || { fail "tools" "$tool is missing"; exit 1; }
done
source "$TESTS_DIR/swtpm-lib.sh"
REF=$TESTS_DIR/ima_ml_ref.py
FIX=$TESTS_DIR/ima_ml_fixture.py
KEY=$T/key
make_key "$KEY"
S=$T/src M=$T/mnt H=$T/host.ml K=$T/kernel_list HOOK=$T/hook
mkdir -p "$S" "$M"
for f in a b c; do echo "$f" >"$S/$f"; done
"$UEVM" label -r --hmac-key "raw:$KEY" "$S" >/dev/null
printf 'measure func=FILE_CHECK mask=^MAY_READ\n' >"$T/policy"

# fdatasync on the host list, then (once, when $HOOK exists) run $HOOK.
cat >"$T/shim.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fdatasync(int fd)
{
	int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	const char *hook = getenv("RACE_HOOK");
	char link[64], path[PATH_MAX], run[PATH_MAX + 16];
	ssize_t n;
	int ret = real(fd);

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (ret || n < 0 || !hook)
		return ret;
	path[n] = 0;
	if (strlen(path) < 8 || strcmp(path + strlen(path) - 8, "/host.ml"))
		return ret;
	snprintf(run, sizeof(run), "%s.run", hook);
	if (rename(hook, run) == 0 && system(run) != 0)
		fprintf(stderr, "race hook failed\n");
	return ret;
}
C
cc -shared -fPIC -o "$T/shim.so" "$T/shim.c" -ldl || { fail "the preload shim builds"; exit 1; }

start_swtpm || { fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
for i in $(seq 0 9); do tpm_extend "$i" "boot$i"; done
kernel_measures() {
	python3 "$FIX" "$K" "$@" | while read -r d; do tpm2_pcrextend -T "$TCTI" "10:$d"; done
}
kernel_measures boot_aggregate /usr/bin/kernel-measured
OPTS="key=raw:$KEY,policy=$T/policy,tcti=$TCTI,kernel_ml=$K,ml=$H,audit_log=$T/audit.log,nosyslog"
RACE_HOOK=$HOOK LD_PRELOAD=$T/shim.so \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	ufs_mount "$S" "$M" "$OPTS" || { fail "uevmfs mounts"; exit 1; }
MR=$(realpath "$M")
cat "$M/a" >/dev/null		# caught up with the adopted list
cat >"$HOOK" <<SH
#!/bin/sh
python3 '$FIX' '$K' /usr/bin/kernel-in-the-window |
	while read -r d; do tpm2_pcrextend -T '$TCTI' "10:\$d" || exit 1; done
SH
chmod +x "$HOOK"
check "a read whose add races with the kernel succeeds" cat "$M/b"
check "  the kernel measured inside the window (the hook ran)" test -e "$HOOK.run"
check "the next read succeeds" cat "$M/c"
expect_eq "  no add failed" "" "$(grep -F op=add_measurement "$T/audit.log" 2>/dev/null)"
python3 "$REF" "$H" "$T/ref.ascii" >"$T/ref.out"
expect_eq "  the list replays to PCR 10" "$(tpm_pcr sha256 10)" \
	"$(awk '$1 == "pcr" && $2 == "sha256" && $3 + 0 == 10 { print $4 }' "$T/ref.out")"
expect_eq "  in the TPM's order: the kernel's entry before the racing one" \
	"/usr/bin/kernel-in-the-window $MR/b $MR/c" \
	"$(awk '{ print $5 }' "$T/ref.ascii" | tail -n 3 | tr '\n' ' ' | sed 's/ $//')"
ufs_umount "$M"
