# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for tests/integration/keys_*.sh; source after lib.sh.
: "${UEVM_BUILD:=$(dirname "$UEVM")}"
KEY_HOLD="$UEVM_BUILD/tests/key_hold"

# A private session keyring for this script and its children, so that
# keys never meet those of other tests or users.
keyctl new_session >/dev/null

# hex FILE: the file's bytes as lower-case hex.
hex() { od -An -tx1 -v "$1" | tr -d ' \n'; }

# occurrences FILE HEX: how often the bytes HEX occur in FILE.
occurrences() { "$KEY_HOLD" search "$1" "$2"; }

# no_key_in NAME KEYFILE FILE...: passes when neither the key's bytes nor
# their hex spelling (either case) occur in any FILE.
no_key_in() {
	local name=$1 key=$2 kh f found=""
	shift 2
	kh=$(hex "$key")
	for f in "$@"; do
		if [ "$(occurrences "$f" "$kh")" != 0 ] ||
		   grep -qiF "$kh" "$f"; then
			found="$found $f"
		fi
	done
	if [ -z "$found" ]; then pass "$name"; else fail "$name" "key found in:$found"; fi
}

# A file to compute HMACs over; the same key gives the same value.
KEYS_PROBE=$T/probe
echo "uevm keys probe" >"$KEYS_PROBE"
# An IMA hash (any value) so that the probe has a protected xattr.
setfattr -n security.ima -v 0x01aabbccddeeff00112233445566778899aabbccdd "$KEYS_PROBE"
# hmac_of SPEC: the security.evm value uevm computes with that key.  SPEC
# names the key's form (raw:FILE, passphrase:FILE, ...): uevm refuses a
# plain path.  A refusal is a FAIL line (on stderr, which the test log
# keeps), so that two refused keys never compare equal unnoticed.
hmac_of() {
	local out
	if out=$("$UEVM" hmac --uuid none --hmac-key "$1" "$KEYS_PROBE" 2>"$T/hmac_of.err"); then
		cut -d' ' -f1 <<<"$out"
	else
		echo "FAIL: hmac_of $1: $(head -n 3 "$T/hmac_of.err")" >&2
		return 1
	fi
}

# Start a private swtpm on 127.0.0.1 (random high port); sets TPM_TCTI.
swtpm_start() {
	local dir=$T/swtpm port try
	mkdir -p "$dir"
	for try in 1 2 3 4 5 6 7 8; do
		port=$((20000 + RANDOM % 40000))
		rm -f "$dir/pid"
		swtpm socket --tpm2 --tpmstate dir="$dir" \
			--server type=tcp,port=$port,bindaddr=127.0.0.1 \
			--ctrl type=tcp,port=$((port + 1)),bindaddr=127.0.0.1 \
			--flags startup-clear,not-need-init --pid file="$dir/pid" \
			-d 2>>"$dir/log" || continue
		# swtpm -d returned: its pid file comes right after.
		wait_quiet "$WAIT_S" test -s "$dir/pid"
		[ -s "$dir/pid" ] || continue
		SWTPM_PID=$(cat "$dir/pid")
		on_exit swtpm_stop
		TPM_TCTI="swtpm:host=127.0.0.1,port=$port"
		tpm2_pcrread -T "$TPM_TCTI" sha256:0 >/dev/null 2>&1 && return 0
		swtpm_stop
	done
	return 1
}
_swtpm_gone() { ! kill -0 "$SWTPM_PID" 2>/dev/null; }
swtpm_stop() {
	[ -n "${SWTPM_PID:-}" ] || return 0
	kill "$SWTPM_PID" 2>/dev/null
	wait_quiet "$WAIT_S" _swtpm_gone
	SWTPM_PID=
}
