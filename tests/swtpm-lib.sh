# SPDX-License-Identifier: GPL-2.0-or-later
# A private swtpm for a test (source after lib.sh): start_swtpm starts one
# on a free random port pair (or a given one) with its state under $T and sets TCTI; it is
# stopped on exit.  tpm_pcr and pcr_file read its PCRs with tpm2_pcrread.

TPMSTATE=$T/tpmstate
SWTPM_PID=
TCTI=

stop_swtpm() {
	if [ -n "$SWTPM_PID" ]; then
		kill -CONT "$SWTPM_PID" 2>/dev/null
		kill "$SWTPM_PID" 2>/dev/null
		wait "$SWTPM_PID" 2>/dev/null
		SWTPM_PID=
	fi
}
on_exit stop_swtpm

_swtpm_up() { tpm2_pcrread -T "$TCTI" sha1:0 >/dev/null 2>&1; }
_swtpm_up_or_gone() { _swtpm_up || ! kill -0 "$SWTPM_PID" 2>/dev/null; }

# start_swtpm [PORT]: with PORT, on PORT and PORT+1 only (returns 2 when
# either is taken), as for the TSS loader's default swtpm TCTI (2321).
start_swtpm() {
	local try port fixed=${1:-} tries=20
	mkdir -p "$TPMSTATE"
	[ -n "$fixed" ] && tries=1
	for try in $(seq 1 "$tries"); do
		port=${fixed:-$((20000 + RANDOM % 30000))}
		if ss -ltn | grep -qE ":($port|$((port + 1)))\b"; then
			[ -n "$fixed" ] && return 2
			continue
		fi
		swtpm socket --tpm2 \
			--server type=tcp,port=$port,bindaddr=127.0.0.1 \
			--ctrl type=tcp,port=$((port + 1)),bindaddr=127.0.0.1 \
			--tpmstate dir="$TPMSTATE" --flags not-need-init,startup-clear \
			>>"$T/swtpm.log" 2>&1 &
		SWTPM_PID=$!
		TCTI="swtpm:host=127.0.0.1,port=$port"
		wait_quiet "$WAIT_S" _swtpm_up_or_gone && _swtpm_up && return 0
		stop_swtpm
	done
	return 1
}

tpm_pcr() {	# bank pcr -> lower-case hex
	tpm2_pcrread -T "$TCTI" "$1:$2" | awk '/0x/ { sub(/.*0x/, ""); print tolower($0) }'
}

# PCRs 0-23 of a bank in the form evmctl's --pcrs reads ("PCR-NN: HEX").
pcr_file() {	# bank out
	tpm2_pcrread -T "$TCTI" "$1:$(seq -s, 0 23)" |
		awk '/^ *[0-9]+ *: *0x/ { n = $1; sub(/:.*/, "", n); h = $0;
			sub(/.*0x/, "", h); printf "PCR-%02d: %s\n", n, tolower(h) }' >"$2"
}

tpm_extend() {	# pcr text: extend PCR in both banks with digests of TEXT
	tpm2_pcrextend -T "$TCTI" "$1:sha1=$(printf '%s' "$2" | sha1sum | cut -c1-40),sha256=$(printf '%s' "$2" | sha256sum | cut -c1-64)"
}

tpm_extend_banks() {	# pcr text: as tpm_extend, in the sha1, sha256, sha384 and sha512 banks
	local b spec=
	for b in sha1 sha256 sha384 sha512; do
		spec="$spec${spec:+,}$b=$(printf '%s' "$2" | openssl dgst -"$b" -r | cut -d' ' -f1)"
	done
	tpm2_pcrextend -T "$TCTI" "$1:$spec"
}

# boot_aggregate_of BANK: the kernel's boot_aggregate from this TPM's PCRs
# (tpm2_pcrread), computed here: BANK's hash over PCRs 0-7 for sha1, 0-9
# for the other banks; lower-case hex.
boot_aggregate_of() {
	tpm2_pcrread -T "$TCTI" "$1:0,1,2,3,4,5,6,7,8,9" | python3 -c '
import hashlib, re, sys
bank, pcrs = sys.argv[1], {}
for line in sys.stdin:
    m = re.match(r"\s*(\d+)\s*:\s*0x([0-9A-Fa-f]+)\s*$", line)
    if m:
        pcrs[int(m.group(1))] = bytes.fromhex(m.group(2))
last = 8 if bank == "sha1" else 10
print(hashlib.new(bank, b"".join(pcrs[i] for i in range(last))).hexdigest())' "$1"
}

# boot_pcrs N: PCRs 0-9 as a firmware leaves them, different at each "boot" N.
boot_pcrs() {
	local i
	for i in $(seq 0 9); do tpm_extend_banks "$i" "boot $1 pcr $i"; done
}
# reboot_tpm N: swtpm restarted on its state (startup-clear resets the
# PCRs), then boot N's PCRs 0-9.
reboot_tpm() {
	stop_swtpm
	start_swtpm || { fail "swtpm restarts" "$(tail -n 5 "$T/swtpm.log")"; exit 1; }
	boot_pcrs "$1"
}
# ref_pcr LIST BANK PCR: PCR of BANK replayed from the binary LIST by the
# independent reader (tests/ima_ml_ref.py).
ref_pcr() {
	python3 "$TESTS_DIR/ima_ml_ref.py" "$1" /dev/null |
		awk -v b="$2" -v p="$3" '$1 == "pcr" && $2 == b && $3 == p { print $4 }'
}
