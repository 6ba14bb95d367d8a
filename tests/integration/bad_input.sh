#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input: missing paths, unreadable files, bad keys, usage errors and
# malformed security.ima / security.evm values.  Each must give a clear
# error naming the file (or key), the documented exit code (2 for usage and
# operational errors, 1 for files that fail verification), and must leave
# every xattr and ctime as it was.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/ref_evm.sh"

# The non-root runs below need to reach files under $T.
chmod 755 "$T"
KEY=$T/key
make_key "$KEY"
R=$T/tree
mkdir -p "$R/sub"
for f in a b c; do echo "$f" >"$R/$f"; done
echo deep >"$R/sub/d"
"$UEVM" label -r --hmac-key "raw:$KEY" "$R" || fail "label the test tree" "exit $?"

tree_state() { meta_snapshot $(find "$R" | sort); }

# run_err NAME RC PATTERN CMD...: CMD exits RC, its stderr (and stdout)
# matches PATTERN, and the tree is unchanged.
run_err() {
	local name=$1 want=$2 pat=$3 before after out rc
	shift 3
	before=$(tree_state)
	out=$("$@" 2>&1)
	rc=$?
	after=$(tree_state)
	expect_eq "$name: exit $want" "$want" "$rc"
	expect_match "$name: message" "$pat" "$out"
	expect_eq "$name: nothing modified" "$before" "$after"
}

# ---- missing paths ----------------------------------------------------------

for cmd in label verify hmac; do
	run_err "$cmd of a missing path" 2 "^uevm: $T/nope: .*No such file or directory|^ERROR $T/nope: .*No such file" \
		"$UEVM" $cmd --hmac-key "raw:$KEY" "$T/nope"
done
run_err "ima-hash of a missing path" 2 "^uevm: $T/nope: .*No such file or directory" \
	"$UEVM" ima-hash "$T/nope"
run_err "verify -r of a missing path below a good one" 2 "ERROR $T/nope: " \
	"$UEVM" verify -r --hmac-key "raw:$KEY" "$R" "$T/nope"
# A missing path does not stop the others: they are still labelled.
echo new >"$T/new"
out=$("$UEVM" label --hmac-key "raw:$KEY" "$T/nope" "$T/new" 2>&1)
expect_eq "label with one missing path: exit 2" 2 $?
expect_match "label with one missing path: names it" "$T/nope" "$out"
expect_rc "label with one missing path: the other file is labelled" 0 \
	"$UEVM" verify --hmac-key "raw:$KEY" "$T/new"

# ---- bad keys -----------------------------------------------------------------

: >"$T/empty.key"
head -c 129 /dev/urandom >"$T/big.key"
head -c 128 /dev/urandom >"$T/max.key"
chmod 600 "$T/empty.key" "$T/big.key" "$T/max.key"
for cmd in "label -r" "verify -r" hmac; do
	# shellcheck disable=SC2086 # $cmd is a command and its option
	run_err "$cmd with an empty key file" 2 "key file $T/empty.key is empty" \
		"$UEVM" $cmd --hmac-key "raw:$T/empty.key" "$R" "$R/a"
	run_err "$cmd with a 129-byte key file" 2 "key file $T/big.key is larger than 128 bytes" \
		"$UEVM" $cmd --hmac-key "raw:$T/big.key" "$R" "$R/a"
	run_err "$cmd with a nonexistent key file" 2 "cannot open key file $T/no.key: No such file" \
		"$UEVM" $cmd --hmac-key "raw:$T/no.key" "$R" "$R/a"
	run_err "$cmd with a directory as key" 2 "key file $T is not a regular file" \
		"$UEVM" $cmd --hmac-key "raw:$T" "$R" "$R/a"
	run_err "$cmd with a plain key path (no form)" 2 "a plain path does not say the key's form; name the key's form: raw:$T/max.key" \
		"$UEVM" $cmd --hmac-key "$T/max.key" "$R" "$R/a"
	run_err "$cmd with a missing keyring key" 2 "no user key 'uevm-test-absent-$$' owned by uid 0 or root" \
		"$UEVM" $cmd --hmac-key "keyring:uevm-test-absent-$$" "$R" "$R/a"
	run_err "$cmd without a key" 2 "no HMAC key" "$UEVM" $cmd "$R" "$R/a"
done
# 128 bytes is the kernel's maximum and works.
expect_rc "a 128-byte key file is accepted" 0 "$UEVM" hmac --hmac-key "raw:$T/max.key" "$R/a"
chmod 600 "$KEY"
run_err "verify as nobody with a key it cannot read" 2 "cannot open key file $KEY: Permission denied" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$UEVM" verify --hmac-key "raw:$KEY" "$R/a"

# ---- usage errors -------------------------------------------------------------

run_err "no command" 2 "Usage: uevm COMMAND" "$UEVM"
run_err "unknown command" 2 "unknown command 'frobnicate'" "$UEVM" frobnicate "$R"
run_err "unknown option" 2 "unrecognized option '--bogus'" "$UEVM" label --bogus --hmac-key "raw:$KEY" "$R"
run_err "label without PATH" 2 "no PATH given" "$UEVM" label --hmac-key "raw:$KEY"
run_err "verify without PATH" 2 "no PATH given" "$UEVM" verify --hmac-key "raw:$KEY"
run_err "-j 0" 2 "-j needs a number" "$UEVM" label -r -j 0 --hmac-key "raw:$KEY" "$R"
run_err "-j junk" 2 "-j needs a number" "$UEVM" verify -r -j 2x --hmac-key "raw:$KEY" "$R"
run_err "unknown hash algorithm" 2 "hash algorithm 'sha3000' is not supported" \
	"$UEVM" label -a sha3000 --hmac-key "raw:$KEY" "$R/a"
run_err "bad --uuid" 2 "--uuid needs a UUID" "$UEVM" label --uuid 1234 --hmac-key "raw:$KEY" "$R/a"
run_err "--uuid with a bad hex digit" 2 "--uuid needs a UUID" \
	"$UEVM" hmac --uuid 28b23254-9467-44c0-b6ba-34b12e85a26g --hmac-key "raw:$KEY" "$R/a"
run_err "--evm-xattr outside security.*" 2 "'user.foo' is not a security.\* xattr" \
	"$UEVM" label --evm-xattr user.foo --hmac-key "raw:$KEY" "$R/a"

# ---- unreadable files -------------------------------------------------------
# As nobody: a root-only file and a root-only directory.  The error names
# the object; the rest of the tree is still verified.
echo secret >"$R/secret"
mkdir "$R/private"
echo hidden >"$R/private/h"
"$UEVM" label -r --hmac-key "raw:$KEY" "$R"
chmod 600 "$R/secret"
chmod 700 "$R/private"
# A copy of the key that nobody owns (uevm takes a key file only from its
# owner or root).
cp "$KEY" "$T/pub.key"
chown 65534 "$T/pub.key"
chmod 600 "$T/pub.key"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
before=$(tree_state)
out=$("${NOBODY[@]}" "$UEVM" verify -r --hmac-key "raw:$T/pub.key" "$R" 2>&1)
rc=$?
expect_eq "verify -r as nobody with unreadable objects: exit 2" 2 "$rc"
expect_match "unreadable file reported by name" "^ERROR $R/secret: cannot verify: .*Permission denied" "$out"
expect_match "unreadable directory reported by name" "^ERROR $R/private: .*Permission denied" "$out"
expect_match "the readable rest still verified" "Summary: [0-9]+ objects, 0 failed, 2 errors" "$out"
json=$("${NOBODY[@]}" "$UEVM" verify -r --json --hmac-key "raw:$T/pub.key" "$R" 2>/dev/null)
expect_eq "--json lists both unreadable objects with an error" \
	"$R/private $R/secret" \
	"$(jq -r '[.results[] | select(.error) | .path] | sort | join(" ")' <<<"$json")"
run_err "hmac as nobody of an unreadable file" 2 "^uevm: $R/secret: cannot compute the HMAC: .*Permission denied" \
	"${NOBODY[@]}" "$UEVM" hmac --hmac-key "raw:$T/pub.key" "$R/secret"
run_err "ima-hash as nobody of an unreadable file" 2 "^uevm: $R/secret: cannot hash: .*Permission denied" \
	"${NOBODY[@]}" "$UEVM" ima-hash "$R/secret"
expect_eq "nothing modified by the unprivileged runs" "$before" "$(tree_state)"
# As root without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH (but with the
# capabilities security.* writes need): a mode-000 file cannot be read.
chmod 000 "$R/secret"
DROPDAC=(setpriv --bounding-set=-dac_override,-dac_read_search
	--inh-caps=-dac_override,-dac_read_search)
setfattr -x security.ima "$R/secret"
setfattr -x security.evm "$R/secret"
run_err "label as root without DAC override of a mode-000 file" 2 \
	"^uevm: $R/secret: cannot open: .*Permission denied" \
	"${DROPDAC[@]}" "$UEVM" label --hmac-key "raw:$KEY" "$R/secret"
expect_eq "the unreadable file got no security.ima" "" "$(xattr_hex security.ima "$R/secret")"
chmod 755 "$R/private"
rm -rf "$R/secret" "$R/private"

# ---- malformed security.ima / security.evm ------------------------------------
# Values a labeller might find.  security.evm is recomputed over a garbage
# security.ima (as an attacker with the key, or a buggy tool, would do), so
# that the security.ima parser itself is reached.
M=$T/malformed
mkdir "$M"
for f in ima_type ima_short ima_long ima_algo ima_empty ima_sig evm_type evm_short evm_long evm_empty evm_sig; do
	echo "$f" >"$M/$f"
done
"$UEVM" label -r --hmac-key "raw:$KEY" "$M"
set_ima() {	# file hexvalue: set security.ima and re-seal it with the key
	setfattr -n security.ima -v "0x$2" "$M/$1"
	setfattr -n security.evm -v "0x$("$UEVM" hmac --hmac-key "raw:$KEY" "$M/$1" | cut -d' ' -f1)" "$M/$1"
}
set_ima ima_type ff0102030405
set_ima ima_short 0404$(printf '%032d' 0)
set_ima ima_long 0404$(printf '%066d' 0)
set_ima ima_algo 04ee$(printf '%064d' 0)
setfattr -n security.ima -v "" "$M/ima_empty"
setfattr -n security.evm -v "0x$("$UEVM" hmac --hmac-key "raw:$KEY" "$M/ima_empty" | cut -d' ' -f1)" "$M/ima_empty"
set_ima ima_sig 030204aabbccdd0040deadbeef
setfattr -n security.evm -v 0x09$(printf '%040d' 0) "$M/evm_type"
setfattr -n security.evm -v 0x02aabbcc "$M/evm_short"
setfattr -n security.evm -v 0x$(xattr_hex security.evm "$M/evm_long")00 "$M/evm_long"
setfattr -n security.evm -v "" "$M/evm_empty"
setfattr -n security.evm -v 0x030204aabbccdd0040deadbeef "$M/evm_sig"

before=$(meta_snapshot $(find "$M" | sort))
json=$("$UEVM" verify -r -v --json --hmac-key "raw:$KEY" "$M")
expect_eq "verify of malformed values: exit 1" 1 $?
text=$("$UEVM" verify -r --hmac-key "raw:$KEY" "$M")
expect_eq "nothing modified by verify" "$before" "$(meta_snapshot $(find "$M" | sort))"
# expect_bad FILE STATUS CAUSE DETAIL-REGEX
expect_bad() {
	local got
	got=$(jq -r --arg p "$M/$1" '.results[] | select(.path == $p) |
		"\(.status) \(.cause) \(.ok)"' <<<"$json")
	expect_eq "$1: $2 ($3)" "$2 $3 false" "$got"
	expect_match "$1: the text line names the file and says why" \
		"^FAIL $M/$1: $2 \($3\): .*$4" "$text"
}
expect_bad ima_type unknown unknown-ima-data "unknown security.ima type 0xff"
expect_bad ima_short fail invalid-hash "sha256 digest must be 32 bytes"
expect_bad ima_long fail invalid-hash "sha256 digest must be 32 bytes"
expect_bad ima_algo fail invalid-hash "unknown hash algorithm id 238"
expect_bad ima_empty no_label missing-hash "security.ima is empty"
expect_bad ima_sig fail invalid-signature "signature"
expect_bad evm_type fail invalid-HMAC "unknown security.evm type 0x09"
expect_bad evm_short fail invalid-HMAC "HMAC value must be 21 bytes, has 4"
expect_bad evm_long fail invalid-HMAC "HMAC value must be 21 bytes, has 22"
expect_bad evm_empty fail invalid-HMAC "security.evm is empty"
expect_bad evm_sig fail invalid-HMAC "signature size field says 64 bytes, value has 4"
expect_eq "every malformed file fails" 11 "$(jq '.summary.failed' <<<"$json")"

# hmac / ima-hash read the raw values (as the kernel hashes them) and
# change nothing.
out=$("$UEVM" hmac --hmac-key "raw:$KEY" "$M"/* 2>&1)
expect_eq "hmac over malformed values: exit 0" 0 $?
expect_eq "hmac prints one value per file" 11 "$(grep -c '^02[0-9a-f]\{40\}  ' <<<"$out")"
"$UEVM" ima-hash "$M"/* >/dev/null
expect_eq "ima-hash over malformed values: exit 0" 0 $?
expect_eq "hmac / ima-hash modified nothing" "$before" "$(meta_snapshot $(find "$M" | sort))"

# ---- oversized values: no fixed-size buffers ----------------------------------
# A 3000-byte security.selinux (evmctl 1.4 reads at most 1024 bytes).
echo big >"$T/bigsel"
setfattr -n security.selinux -v "0x$(head -c 3000 /dev/urandom | od -An -v -tx1 | tr -d ' \n')" "$T/bigsel"
"$UEVM" label --uuid none --hmac-key "raw:$KEY" "$T/bigsel"
expect_eq "3000-byte security.selinux: HMAC equals the openssl-built reference" \
	"02$(ref_evm_hmac "$KEY" "$T/bigsel" "$(ext4_generation "$T/bigsel")")" \
	"$(xattr_hex security.evm "$T/bigsel")"
expect_rc "3000-byte security.selinux: verifies" 0 \
	"$UEVM" verify --uuid none --hmac-key "raw:$KEY" "$T/bigsel"
