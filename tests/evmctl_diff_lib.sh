# SPDX-License-Identifier: GPL-2.0-or-later
# Differential helpers for evmctl mode: each command line is run with
# Debian's evmctl and with uevm in both of its forms (a link named evmctl,
# and `uevm evmctl`) in the current directory; exit status, stdout and
# stderr must agree.  Where evmctl 1.6.2 (uevm's target) differs from the
# installed 1.4, `as_162` states 1.6.2's result explicitly instead.
# Source after tests/lib.sh.
DEB=$(command -v evmctl)
LINKDIR=$T/bin
mkdir -p "$LINKDIR"
ln -sf "$UEVM" "$LINKDIR/evmctl"

# run_form FORM ARGS...: uevm as FORM: link (named evmctl) or uevm
run_form() {
	local form=$1
	shift
	if [ "$form" = link ]; then
		"$LINKDIR/evmctl" "$@"
	else
		"$UEVM" evmctl "$@"
	fi
}

ONLY_1_6='/^keyid [0-9a-f]* (from /d'
# same NAME FILTER ARGS...: evmctl 1.4 then uevm (both forms) with ARGS in
# the current directory; FILTER (sed) is applied to both outputs.
same() {
	local name=$1 filter=$2 form
	shift 2
	"$DEB" "$@" >"$T/deb.out" 2>"$T/deb.err" </dev/null
	local rc_deb=$?
	for form in link uevm; do
		run_form "$form" "$@" >"$T/u.out" 2>"$T/u.err" </dev/null
		local rc_u=$?
		expect_eq "$name [$form]: exit status" "$rc_deb" "$rc_u"
		expect_eq "$name [$form]: stdout" "$(sed -e "$filter" "$T/deb.out")" \
			"$(sed -e "$filter" "$T/u.out")"
		expect_eq "$name [$form]: stderr" "$(sed -e "$filter" -e "$ONLY_1_6" "$T/deb.err")" \
			"$(sed -e "$filter" -e "$ONLY_1_6" "$T/u.err")"
	done
}
# same_stdin NAME INPUTFILE ARGS...: as same, with stdin from INPUTFILE.
same_stdin() {
	local name=$1 in=$2 form
	shift 2
	"$DEB" "$@" <"$in" >"$T/deb.out" 2>"$T/deb.err"
	local rc_deb=$?
	for form in link uevm; do
		run_form "$form" "$@" <"$in" >"$T/u.out" 2>"$T/u.err"
		local rc_u=$?
		expect_eq "$name [$form]: exit status" "$rc_deb" "$rc_u"
		expect_eq "$name [$form]: stdout" "$(cat "$T/deb.out")" "$(cat "$T/u.out")"
		expect_eq "$name [$form]: stderr" "$(cat "$T/deb.err")" "$(cat "$T/u.err")"
	done
}

# as_162 NAME RC STDOUT STDERR ARGS...: evmctl 1.6.2's result, stated
# (read from its source) where the installed 1.4 differs.
as_162() {
	local name=$1 rc=$2 out=$3 err=$4 form
	shift 4
	for form in link uevm; do
		run_form "$form" "$@" >"$T/u.out" 2>"$T/u.err" </dev/null
		expect_eq "$name [$form]: exit status (1.6.2)" "$rc" "$?"
		expect_eq "$name [$form]: stdout (1.6.2)" "$out" "$(cat "$T/u.out")"
		expect_eq "$name [$form]: stderr (1.6.2)" "$err" "$(cat "$T/u.err")"
	done
}
