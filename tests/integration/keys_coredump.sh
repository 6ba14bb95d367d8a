#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# No plaintext key in a consumer's core dump: key memory is MADV_DONTDUMP.
# A helper that loads a key exactly as uevm does is made to dump core
# (SIGABRT, core_pattern pointed into our scratch dir, restored after);
# with "leak" it also copies the key to the heap: the positive control.
# The real uevm binary is dumped with gdb's gcore once it has loaded (and
# burnt) its key.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../keys_lib.sh"
cd "$T" || exit 1
FAST=(--kdf-ops 1 --kdf-mem 8)
PASSPHRASE="uevm-coredump-passphrase-$$-$RANDOM"

mkdir cores
old_pattern=$(cat /proc/sys/kernel/core_pattern)
restore_pattern() { printf '%s\n' "$old_pattern" >/proc/sys/kernel/core_pattern; }
on_exit restore_pattern
echo "$T/cores/core.%p" >/proc/sys/kernel/core_pattern
ulimit -c unlimited

# hold_ready PID: key_hold PID said "ready PID", or has exited.
hold_ready() {
	[ "$(head -1 "$T/hold.out" 2>/dev/null)" = "ready $1" ] || ! kill -0 "$1" 2>/dev/null
}

# dump_core SPEC [leak]: run the helper, abort it; CORE is the core's path.
dump_core() {
	local fifo=$T/fifo.$RANDOM pid line
	CORE=
	mkfifo "$fifo"
	# (the shell opens hold.out only once the FIFO has a writer: a stale
	# one from the previous dump must not pass for this one's)
	rm -f "$T/hold.out"
	"$KEY_HOLD" hold "$@" <"$fifo" >"$T/hold.out" 2>"$T/hold.err" 3<<<"$PASSPHRASE" &
	pid=$!
	exec 8>"$fifo"
	wait_for "$WAIT_S" "key_hold to say it holds the key" hold_ready "$pid"
	line=$(head -1 "$T/hold.out" 2>/dev/null)
	kill -ABRT "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	exec 8>&-
	rm -f "$fifo"
	if [ "$line" = "ready $pid" ] && [ -s "$T/cores/core.$pid" ]; then
		CORE=$T/cores/core.$pid
	fi
}

# in_core NAME KEYFILE SPEC: a core of a consumer holding that key has
# no copy of the key; CORE is left set for further checks.
in_core() {
	local name=$1 key=$2
	shift 2
	dump_core "$@"
	if [ -z "$CORE" ]; then
		fail "$name" "no core dump ($(cat "$T/hold.err"))"
		return
	fi
	expect_eq "$name" 0 "$(occurrences "$CORE" "$(hex "$key")")"
}

"$UEVM" key generate "${FAST[@]}" --out k.pp --plain k.plain --passphrase-fd 3 3<<<"$PASSPHRASE" >/dev/null 2>&1

dump_core raw:k.plain leak
expect_match "positive control: the helper dumps core" "core\.[0-9]+$" "$CORE"
[ -n "$CORE" ] && expect_match "positive control: a heap copy of the key is found in the core" \
	'^[1-9]' "$(occurrences "$CORE" "$(hex k.plain)")"

in_core "raw key file: no key in the core" k.plain raw:k.plain
in_core "passphrase file: no key in the core" k.plain "passphrase:k.pp,passphrase-fd=3"
printf '%s' "$PASSPHRASE" >pass.txt
[ -n "$CORE" ] && expect_eq "passphrase file: no passphrase in the core" 0 "$(occurrences "$CORE" "$(hex pass.txt)")"

head -c 32 /dev/urandom >kmk
chmod 600 kmk
"$UEVM" key export --kernel-blob --master-key kmk --out k.blob raw:k.plain
in_core "kernel blob: no key in the core" k.plain "kernel-blob:k.blob,master=kmk"
[ -n "$CORE" ] && expect_eq "kernel blob: no master key in the core" 0 "$(occurrences "$CORE" "$(hex kmk)")"

"$UEVM" key load --keyring @s raw:k.plain >/dev/null 2>&1
in_core "keyring (read and burnt): no key in the core" k.plain keyring:evm-key
expect_rc "keyring: the consumer burnt evm-key" 1 keyctl search @s user evm-key

if swtpm_start; then
	"$UEVM" key import --tpm --tcti "$TPM_TCTI" --out k.tpm raw:k.plain >/dev/null 2>&1
	in_core "TPM-sealed: no key in the core" k.plain "tpm:k.tpm,tcti=$TPM_TCTI"
	swtpm_stop
else
	fail "swtpm starts" "$(cat "$T/swtpm/log" 2>/dev/null)"
fi

# The real uevm, stopped right after it built its context (key loaded
# and, for keyring:evm-key, burnt), dumped by gdb's gcore, which honours
# MADV_DONTDUMP like the kernel.  Not for ASan builds: gcore would write
# the multi-terabyte shadow mappings.
if nm "$UEVM" 2>/dev/null | grep -q __asan_init; then
	echo "note: ASan build of uevm: the gcore check runs for the default build only"
else
	gdb_dump() {	# OUT EXCLUDED(on|off) UEVM-ARGS...
		local out=$1 excl=$2
		shift 2
		gdb -q -batch -ex 'set debuginfod enabled off' \
			-ex "set dump-excluded-mappings $excl" \
			-ex 'break uevm_ctx_new' -ex run -ex finish \
			-ex "gcore $out" -ex kill --args "$UEVM" "$@" \
			>"$out.log" 2>&1 3<<<"$PASSPHRASE"
		[ -s "$out" ]
	}
	check "gcore of uevm hmac (passphrase key)" \
		gdb_dump "$T/g1" off hmac --hmac-key "passphrase:k.pp,passphrase-fd=3" "$KEYS_PROBE"
	expect_eq "uevm (passphrase key): no key in its core" 0 "$(occurrences "$T/g1" "$(hex k.plain)")"
	expect_eq "uevm (passphrase key): no passphrase in its core" 0 "$(occurrences "$T/g1" "$(hex pass.txt)")"
	gdb_dump "$T/g2" on hmac --hmac-key "passphrase:k.pp,passphrase-fd=3" "$KEYS_PROBE"
	expect_match "control: the key is in uevm's excluded memory (dump-excluded-mappings on)" \
		'^[1-9]' "$(occurrences "$T/g2" "$(hex k.plain)")"
	rm -f "$T/g2"
	"$UEVM" key load --keyring @s raw:k.plain >/dev/null 2>&1
	check "gcore of uevm hmac (keyring:evm-key)" \
		gdb_dump "$T/g3" off hmac --hmac-key keyring:evm-key "$KEYS_PROBE"
	expect_eq "uevm (keyring:evm-key): no key in its core" 0 "$(occurrences "$T/g3" "$(hex k.plain)")"
	expect_rc "uevm (keyring:evm-key): burnt before the dump" 1 keyctl search @s user evm-key
fi
[ -n "${KEEP_CORES:-}" ] && cp -r "$T" /tmp/kdev/keep
rm -f "$T"/cores/core.* "$T"/g[0-9]
