#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `uevm policy check` and `uevm policy show`: exit codes (0 valid, 1 invalid
# with "FILE:LINE: message", 2 usage or unreadable file), the rule count,
# the re-rendered rules, and the built-in policies in the kernel's form.
source "$(dirname "$0")/../lib.sh"

# run NAME RC CMD...: CMD exits RC; its stdout and stderr are left in
# $out and $err.
run() {
	local name=$1 want=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
	expect_eq "$name: exit $want" "$want" "$rc"
}

# ---- a valid policy -----------------------------------------------------------

cat >"$T/good" <<'EOF'
# measure what root reads and every executable
dont_measure fsmagic=0x9fa0

measure func=BPRM_CHECK mask=MAY_EXEC
	measure	func=FILE_CHECK mask=^MAY_READ euid=0   # suffixed comment
measure func=FILE_MMAP mask=MAY_EXEC pcr=11 template=ima-sig
appraise fowner<1000 appraise_type=imasig
audit func=BPRM_CHECK uid>999
EOF
run "valid policy" 0 "$UEVM" policy check "$T/good"
expect_eq "valid policy: summary" "$T/good: valid, 6 rules" "$out"
expect_eq "valid policy: nothing on stderr" "" "$err"

run "valid policy -v" 0 "$UEVM" policy check -v "$T/good"
expect_eq "-v re-renders each rule as the kernel shows it" \
"$T/good: valid, 6 rules
dont_measure fsmagic=0x9fa0 
measure func=BPRM_CHECK mask=MAY_EXEC 
measure func=FILE_CHECK mask=^MAY_READ euid=0 
measure func=MMAP_CHECK mask=MAY_EXEC pcr=11 template=ima-sig 
appraise fowner<1000 appraise_type=imasig 
audit func=BPRM_CHECK uid>999 " "$out"

# The rendering is itself a valid policy with the same rules.
tail -n +2 "$T/out" >"$T/rendered"
run "rendered rules parse back" 0 "$UEVM" policy check -v "$T/rendered"
expect_eq "rendered rules render the same" "$(cat "$T/rendered")" \
	"$(tail -n +2 "$T/out")"

run "policy from stdin" 0 "$UEVM" policy check - <"$T/good"
expect_eq "stdin summary" "-: valid, 6 rules" "$out"

# ---- invalid policies: FILE:LINE: message, nothing else ---------------------------

# bad NAME LINE-TEXT LINE EXPECTED-MESSAGE-REGEX
bad() {
	local name=$1 text=$2 line=$3 re=$4
	printf 'measure func=BPRM_CHECK\n# two lines before\n%s\nappraise fowner=0\n' \
		"$text" >"$T/bad"
	run "$name" 1 "$UEVM" policy check -v "$T/bad"
	expect_match "$name: message" "^$T/bad:$line: $re\$" "$err"
	expect_eq "$name: no rule printed" "" "$out"
}
bad "unknown action" "measur func=FILE_CHECK" 3 "unknown keyword 'measur'"
bad "unknown func" "measure func=FOO" 3 "unknown func 'func=FOO'"
bad "bad mask" "measure mask=MAY_RAED" 3 "invalid mask 'mask=MAY_RAED'"
bad "bad uid" "measure uid=root" 3 ".*'uid=root'"
bad "duplicate condition" "measure fowner=0 fowner=1" 3 "duplicate condition 'fowner=1'"
bad "bad fsuuid" "measure fsuuid=1234" 3 "invalid fsuuid 'fsuuid=1234'"
bad "bad pcr" "measure pcr=99" 3 "invalid pcr \\(0-63\\) 'pcr=99'"
bad "unknown option" "measure frobnicate" 3 "unknown keyword 'frobnicate'"
bad "missing value" "measure fsname=" 3 "missing value in 'fsname='"
bad "option needing another action" "dont_measure template=ima-ng" 3 ".*'template=ima-ng'"
bad "control bytes are escaped" $'measure func=FILE_CHECK\r' 3 \
	"unknown func 'func=FILE_CHECK\\\\x0d'"

printf '# nothing but comments\n\n' >"$T/empty"
run "empty policy" 1 "$UEVM" policy check "$T/empty"
expect_eq "empty policy: message" "$T/empty: the policy has no rules" "$err"

# ---- LSM rules: accepted, with a warning that they never match ---------------------

printf 'measure func=BPRM_CHECK\ndont_appraise obj_type=var_log_t\n' >"$T/lsm"
run "LSM rule" 0 "$UEVM" policy check "$T/lsm"
expect_match "LSM rule: warning names the line" \
	"^$T/lsm:2: warning: LSM conditions .* never match" "$err"
expect_eq "LSM rule: still counted" "$T/lsm: valid, 2 rules" "$out"

# ---- usage and operational errors ------------------------------------------------

run "missing file" 2 "$UEVM" policy check "$T/nope"
expect_match "missing file: message" "^uevm: $T/nope: cannot read: .*No such file" "$err"
run "a directory" 2 "$UEVM" policy check "$T"
expect_match "a directory: message" "^uevm: $T: cannot read: " "$err"
run "no subcommand" 2 "$UEVM" policy
run "no file" 2 "$UEVM" policy check
run "two files" 2 "$UEVM" policy check "$T/good" "$T/good"
run "unknown subcommand" 2 "$UEVM" policy frob x
expect_match "unknown subcommand: message" "unknown policy command 'frob'" "$err"
run "unknown option" 2 "$UEVM" policy check -q "$T/good"
run "help" 0 "$UEVM" policy --help
expect_match "help: usage" "^Usage: uevm policy check" "$out"

# ---- built-in policies ------------------------------------------------------------

run "show tcb" 0 "$UEVM" policy show tcb
expect_eq "tcb: 20 rules" 20 "$(wc -l <"$T/out")"
expect_match "tcb: tmpfs exempt for FILE_CHECK only" \
	"^dont_measure func=FILE_CHECK fsmagic=0x1021994 \$" "$out"
expect_match "tcb: reads by euid 0" "^measure func=FILE_CHECK mask=\\^MAY_READ euid=0 \$" "$out"
cp "$T/out" "$T/tcb"
run "tcb text checks" 0 "$UEVM" policy check "$T/tcb"
expect_eq "tcb text: 20 rules" "$T/tcb: valid, 20 rules" "$out"

run "show appraise_tcb" 0 "$UEVM" policy show appraise_tcb
expect_eq "appraise_tcb: last rules" "appraise func=POLICY_CHECK appraise_type=imasig 
appraise fowner=0 " "$(tail -n 2 "$T/out")"
expect_eq "appraise_tcb: 16 rules" 16 "$(wc -l <"$T/out")"

run "show tcb|appraise_tcb" 0 "$UEVM" policy show 'appraise_tcb|tcb'
expect_eq "combined: 36 rules, measurement first" "36 dont_measure" \
	"$(wc -l <"$T/out") $(head -n 1 "$T/out" | cut -d' ' -f1)"
run "show unknown" 2 "$UEVM" policy show tcp
expect_match "show unknown: message" "unknown built-in policy 'tcp'" "$err"
