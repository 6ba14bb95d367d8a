#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Seeds for the targets that feed parsers of the front-ends (pcr_file,
# bios_log, uevmd_control, uevmd_conf, securityfs_write, runtime_policy), called by
# fuzz/gen-corpus.sh.  PCR files come from a software TPM (swtpm) read by
# tpm2_pcrread, in its own form and in the "PCR-NN: HEX" form that evmctl
# reads; the TPM 1.2 BIOS log is built here (no tool writes one without a
# TPM 1.2 machine) with the events firmware logs, each digest the SHA-1 of
# its data; the configuration is programs/uevmd/uevmd.conf.
#   fuzz/gen-corpus-frontends.sh
set -eu

src=$(cd "$(dirname "$0")" && pwd)
C=$src/corpus
T=$(mktemp -d /var/tmp/uevm-fuzz-frontends.XXXXXX)
swtpm_pid=
cleanup() {
	[ -n "$swtpm_pid" ] && kill "$swtpm_pid" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

seed() { mkdir -p "$C/$1"; cat >"$C/$1/$2"; }

# ---- pcr_file: a software TPM's PCRs -------------------------------------------
for tool in swtpm tpm2_startup tpm2_pcrread tpm2_pcrextend; do
	command -v $tool >/dev/null || { echo "gen-corpus-frontends: needs $tool" >&2; exit 1; }
done
port=$((20000 + RANDOM % 20000))
mkdir "$T/tpm"
swtpm socket --tpm2 --tpmstate dir="$T/tpm" --server type=tcp,port=$port,bindaddr=127.0.0.1 \
	--ctrl type=tcp,port=$((port + 1)),bindaddr=127.0.0.1 --flags not-need-init,startup-clear &
swtpm_pid=$!
TCTI=swtpm:host=127.0.0.1,port=$port
for _ in $(seq 50); do
	tpm2_pcrread -T "$TCTI" sha1:0 >/dev/null 2>&1 && break
	sleep 0.1
done
tpm2_pcrextend -T "$TCTI" \
	10:sha1=$(printf 'uevm fuzz' | sha1sum | cut -c1-40),sha256=$(printf 'uevm fuzz' | sha256sum | cut -c1-64)
tpm2_pcrextend -T "$TCTI" 0:sha1=$(printf 'bios' | sha1sum | cut -c1-40)
tpm2_pcrread -T "$TCTI" sha1:0,1,7,10+sha256:0,10 | seed pcr_file tpm2_pcrread-sha1-sha256
tpm2_pcrread -T "$TCTI" "sha384:10" | seed pcr_file tpm2_pcrread-sha384
# evmctl's form, as tests/integration/ima_measurements_tpm.sh makes it
for bank in sha1 sha256; do
	tpm2_pcrread -T "$TCTI" "$bank:$(seq -s, 0 23)" |
		awk '/0x/ { n = $1; sub(/:$/, "", n); h = $NF;
			sub(/.*0x/, "", h); printf "PCR-%02d: %s\n", n, tolower(h) }' |
		seed pcr_file evmctl-$bank
done
# the TPM 1.2 sysfs form (bytes separated by spaces)
sed -n '1,3p' "$C/pcr_file/evmctl-sha1" |
	awk '{ h = toupper($2); o = "";
	       for (i = 1; i <= length(h); i += 2) o = o " " substr(h, i, 2);
	       print $1 o }' | seed pcr_file sysfs-tpm12
printf '# comment\n\nsha256:\n  10: 0x%s\nsha1:\n  10 : 0x%s\n' \
	"$(printf 'x' | sha256sum | cut -c1-64)" "$(printf 'x' | sha1sum | cut -c1-40)" |
	seed pcr_file headings
kill "$swtpm_pid"
wait "$swtpm_pid" 2>/dev/null || true
swtpm_pid=

# ---- bios_log: a TPM 1.2 event log ------------------------------------------------
python3 - "$C" <<'PY'
import hashlib, os, struct, sys
def ev(pcr, typ, data):
    return struct.pack('<II', pcr, typ) + hashlib.sha1(data).digest() + \
        struct.pack('<I', len(data)) + data
EV_POST_CODE, EV_SEPARATOR, EV_S_CRTM_VERSION, EV_ACTION = 1, 4, 8, 5
log = ev(0, EV_S_CRTM_VERSION, b'1.00\0') + ev(0, EV_POST_CODE, b'POST CODE')
log += ev(4, EV_ACTION, b'Calling INT 19h')
for pcr in range(8):
    log += ev(pcr, EV_SEPARATOR, b'\0\0\0\0')
d = os.path.join(sys.argv[1], 'bios_log')
os.makedirs(d, exist_ok=True)
open(os.path.join(d, 'tpm12-boot'), 'wb').write(log)
open(os.path.join(d, 'tpm12-separators'), 'wb').write(
    b''.join(ev(p, EV_SEPARATOR, b'\xff\xff\xff\xff') for p in range(8)))
open(os.path.join(d, 'bad-pcr'), 'wb').write(ev(24, EV_POST_CODE, b'x'))
open(os.path.join(d, 'short-data'), 'wb').write(ev(1, EV_POST_CODE, b'abcdef')[:-3])
PY

# ---- uevmd_conf: the example configuration and one of each key -------------
seed uevmd_conf dist-uevmd.conf <"$src/../programs/uevmd/uevmd.conf"
seed uevmd_conf every-key <<'CONF'
mount = /srv
filesystem = /
cert = /etc/keys/x509_ima.der
policy = builtin:appraise_tcb
key = /etc/uevm/evm.key
hash = sha256
tpm_tcti = none
tcti = device:/dev/tpmrm0
measurement_list = /var/lib/uevm/binary_runtime_measurements
template = ima-ng
control_socket = none
control_tree = /run/uevm/security
syslog_socket = /dev/log
log_file = /var/log/uevmd.log
mode = log
evm = off
measurement_sync = TRUE
measurement_rotate_stale = 0
audit_syslog = yes
audit_auditd = no
integrity_audit = on
log_stderr = false
fastpath = 1
label_updates = no
fanotify_audit = all
on_timeout = allow
on_exit = refuse
pcr = 23
workers = 256
deadline_ms = 10
wedged_sec = 86400
cache_size = 67108864
CONF
printf 'workers = many\n' | seed uevmd_conf bad-value
printf 'colour = blue\n' | seed uevmd_conf unknown-key

# ---- uevmd_control: the requests `uevm` sends -----------------------------------
for r in "status" "policy-show" "measurements binary sha256" "measurements ascii" \
	 "measurements count" "enable" "enable log" "mode enforce" "mode fix" \
	 "policy-load /etc/uevm/policy" "policy-load"; do
	printf '%s\n' "$r" | seed uevmd_control "$(echo "$r" | tr ' /' '_-')"
done

# ---- securityfs_write: byte 0 = node and opener, then writes cut at 0xff --------
sfs() { { printf "\\x$(printf %02x "$1")"; cat; } | seed securityfs_write "$2"; }
printf '1\n' | sfs 4 evm-hmac
printf '0x80000002' | sfs 4 evm-x509-complete
printf '2' | sfs 12 evm-unprivileged
printf 'security.uevmtest\n' | sfs 5 evm_xattrs
printf 'measure func=BPRM_CHECK mask=MAY_EXEC\nappraise fowner=0 appraise_type=imasig\n' |
	sfs 6 policy-two-rules
{ printf 'dont_measure fsmagic=0x9fa0\n'; printf '\xff'; printf 'measure func=FILE_CHECK '; \
  printf '\xff'; printf 'mask=MAY_READ uid=0\n'; } | sfs 6 policy-split-writes
printf 'appraise func=BPRM_CHECK appraise_type=imasig|modsig\n' | sfs 38 policy-release
printf 'measure bogus=1\n' | sfs 6 policy-bad-rule

# ---- runtime_policy: Keylime runtime policies (uevm runtime-policy create) ----
seed runtime_policy edge.json <<'POLICY'
{"digests":{"/a":["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"],"/a":["bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"]},"excludes":[],"keyrings":{".ima":["cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"]},"ima":{"ignored_keyrings":["*"],"log_hash_alg":"sha256","dm_policy":null},"ima-buf":{"x":["dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"]},"meta":{"version":1,"generator":2},"release":0,"verification-keys":"\"{\\\"keyids\\\": [], \\\"pubkeys\\\": []}\"","x\u00e9\ud83d\ude00":[1.5e3,-0,true,false]}POLICY
seed runtime_policy excludes.json <<'POLICY'
{
  "digests": {
    "/usr/bin/a": ["5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"],
    "boot_aggregate": ["0000000000000000000000000000000000000000"]
  },
  "excludes": ["/tmp/.*", "[a-z]{2,}?x", "\\d+\\.(?:log|txt)$"],
  "ima": {"dm_policy": null, "ignored_keyrings": [".evm"], "log_hash_alg": "sha1"},
  "ima-buf": {},
  "keyrings": {},
  "meta": {"generator": 3, "timestamp": "2026-12-06 02:14:29", "version": 1},
  "release": 0,
  "verification-keys": ""
}
POLICY
seed runtime_policy from_list.json <<'POLICY'
{
  "digests": {
    "/usr/bin/a": ["5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"],
    "/usr/sp_ace/b": ["e258d248fda94c63753607f7c4494ee0fcbe92f1a76bfdac795c9d84101eb317"],
    "boot_aggregate": ["0000000000000000000000000000000000000000000000000000000000000000"]
  },
  "excludes": [],
  "ima": {"dm_policy": null, "ignored_keyrings": [], "log_hash_alg": "sha1"},
  "ima-buf": {},
  "keyrings": {},
  "meta": {"generator": 3, "version": 1},
  "release": 0,
  "verification-keys": ""
}
POLICY
seed runtime_policy signed.json <<'POLICY'
{
  "digests": {
    "/usr/bin/a": ["5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"],
    "/usr/sp_ace/b": ["e258d248fda94c63753607f7c4494ee0fcbe92f1a76bfdac795c9d84101eb317"]
  },
  "excludes": [],
  "ima": {"dm_policy": null, "ignored_keyrings": [], "log_hash_alg": "sha1"},
  "ima-buf": {},
  "keyrings": {},
  "meta": {"generator": 3, "version": 1},
  "release": 0,
  "verification-keys": "{\"keyids\": [1056258782], \"pubkeys\": [\"MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvPBLegp990HAvjsu9a72XnTN/NYDVM/6Jd7/yBHam1yoaQBDs69b5pFPp+MO1hBkbE9mpkV53eRErZo7o1reNaEENGRBpp55LXLfV+wwFQXquCKVG0LEK31FdXQ0TvVmQESQFWQK5U62XYjaJXCRGpVNYXoZ7XUqO+/2/bwpiyFGdQgN1xwy39ZhABLl5lSh1SZv6HeDvd6e4t363Ah/LbjspvTtzGLLDltaTl8srWHOZ+mdNNwp6z1Imx9Sz2cKUhvrnoZnYc+lQjYcfjlEpPkNM+VYJC2dBkqytY6XUIDYWVStBtWLibs4v3jzKSWhgpNj/TKRrjCsLOYK530GlQIDAQAB\"]}"
}
POLICY
