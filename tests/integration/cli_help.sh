#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The command line's help and option errors:
#  - `uevm CMD --help`, `uevm CMD -h` and `uevm help CMD` print the same
#    help (usage, description, options) on stdout and exit 0, for every
#    command and subcommand; `uevm help`, `--help` and `-h` list the
#    commands; `-V` and `--version` print the version;
#  - every long option a command's getopt table holds (read from the
#    preprocessed source) and the command accepts is described in its
#    help, and every option its help describes is accepted;
#  - an option of other commands is refused naming them (exit 2); an
#    unknown option gets getopt's usual message.
source "$(dirname "$0")/../lib.sh"

ROOT=$(cd "$TESTS_DIR/.." && pwd)
PENDING=" $(grep -v '^#' "$TESTS_DIR/cli_pending.txt" | tr '\n' ' ') "

# ---- the command list and the version ----------------------------------------
list=$("$UEVM" --help); rc=$?
expect_eq "uevm --help exits 0" 0 $rc
expect_eq "uevm -h prints what --help does" "$list" "$("$UEVM" -h)"
expect_eq "uevm help prints what --help does" "$list" "$("$UEVM" help)"
cmds=$(awk '/^Commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }' <<<"$list")
expect_match "the list names key, policy, measurements" 'key' "$(grep -x -e key -e policy -e measurements <<<"$cmds" | tr '\n' ' ')"
ver=$("$UEVM" --version)
expect_match "uevm --version prints the version" '^uevm [0-9]+\.[0-9]+' "$ver"
expect_eq "uevm -V prints what --version does" "$ver" "$("$UEVM" -V)"
"$UEVM" help no-such-command >/dev/null 2>"$T/err"
expect_eq "uevm help NOSUCH exits 2" 2 $?
expect_match "uevm help NOSUCH says so" "no command 'no-such-command'" "$(cat "$T/err")"

# ---- help for every command and subcommand -----------------------------------
# same_help NAME...: --help, -h and help NAME agree, exit 0, say something.
same_help() {
	local name="$*" h1 h2 h3 r1 r2 r3
	h1=$("$UEVM" "$@" --help 2>"$T/err1"); r1=$?
	h2=$("$UEVM" "$@" -h 2>"$T/err2"); r2=$?
	h3=$("$UEVM" help "$@" 2>"$T/err3"); r3=$?
	expect_eq "$name: --help, -h and help exit 0" "0 0 0" "$r1 $r2 $r3"
	expect_eq "$name: nothing on stderr" "" "$(cat "$T/err1" "$T/err2" "$T/err3")"
	expect_eq "$name: -h prints what --help does" "$h1" "$h2"
	expect_eq "$name: help $name prints what --help does" "$h1" "$h3"
	HELP=$h1
}
subs_of() {	# the subcommands a command's help lists
	awk -v c="$1" '/^Subcommands/ { on = 1; next } on && NF == 0 { exit }
		on && $2 == c { print $3 }' <<<"$2"
}
all=() DISPATCH=" "
for c in $cmds; do
	same_help "$c"
	if [ "$c" = evmctl ]; then
		# evmctl's own help: as evmctl 1.6 prints it.
		expect_match "evmctl: its help is evmctl's" '^Usage: evmctl' "$HELP"
		continue
	fi
	expect_match "$c: help starts with its usage" "^Usage: uevm $c " "$HELP"
	expect_match "$c: help has an option table" '^Options:' "$HELP"
	expect_match "$c: help describes -h, --help" '^  -h, --help ' "$HELP"
	all+=("$c")
	subs=$(subs_of "$c" "$HELP")
	[ -z "$subs" ] || DISPATCH+=" $c "
	for s in $subs; do
		same_help "$c" "$s"
		expect_match "$c $s: help starts with its usage" "^Usage: uevm $c $s" "$HELP"
		expect_match "$c $s: help describes --help" '--help ' "$HELP"
		all+=("$c $s")
	done
done
expect_match "key, policy and measurements have subcommands" \
	'key generate.*policy check.*measurements add' "${all[*]}"

# ---- every accepted option is described, every described one accepted -----
# Where each command's getopt table is: new commands need a line here.
declare -A SRC=(
	[label]=uevm/cmd_label.c [verify]=uevm/cmd_verify.c [hmac]=uevm/cmd_hmac.c
	[ima-hash]=uevm/cmd_ima_hash.c [sign]=uevm/cmd_sign.c [clear]=uevm/cmd_clear.c [diff]=uevm/cmd_diff.c
	[key]=uevm/cmd_key.c [policy]=uevm/cmd_policy.c [policy load]=uevm/cmd_uevmd.c
	[measurements]=uevm/cmd_measurements.c [measurements daemon]=uevm/cmd_uevmd.c
	[status]=uevm/cmd_uevmd.c [enable]=uevm/cmd_uevmd.c [mount]=uevmfs/main.c
	[runtime-policy create]=uevm/rp_create.c [runtime-policy check]=uevm/rp_check.c
)
# long_opts FILE: "name has_arg" for every struct option entry, macros
# (COMMON_LONG, SIG_VERIFY_LONG) and no_argument (0) expanded by the
# preprocessor.
long_opts() {
	[ -f "$T/opts.${1//\//_}" ] || long_opts_cc "$1" >"$T/opts.${1//\//_}"
	cat "$T/opts.${1//\//_}"
}
long_opts_cc() {
	# shellcheck disable=SC2046
	cc -E -P -std=gnu11 -D_GNU_SOURCE -I"$ROOT/include" $(find "$ROOT/lib" -type d -printf '-I%p ') \
		-I"$ROOT/programs/uevm" -I"$ROOT/programs/evmctl" \
		$(pkg-config --cflags fuse3) "$ROOT/programs/$1" |
		grep -oE '\{ *"[a-z0-9-]+", *[012],' |
		sed -E 's/\{ *"([a-z0-9-]+)", *0,/\1 no/; s/\{ *"([a-z0-9-]+)", *[12],/\1 arg/' |
		sort -u
}
# documented HELP: the option forms of its table, one a line.
documented() {
	sed -n '/^Options:/,$p' <<<"$1" | awk -F'  +' '/^ +-/ { print $2 }'
}
# accepted NAME... -- OPT: does the command take OPT?  Another option that
# nobody has follows it, so nothing is run either way.
mkdir "$T/probe"
declare -A PROBED
accepted() {
	local args=() opt key
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	opt=$2 key="${args[*]}|$2"
	[ -z "${PROBED[$key]:-}" ] || return "${PROBED[$key]}"
	err=$(cd "$T/probe" && UEVMD_SOCKET=$T/probe/no.sock "$UEVM" "${args[@]}" \
		"$opt" --zz-no-such-option </dev/null 2>&1 >/dev/null)
	! grep -qE -- "(${opt%%=*} is not an option of|unrecognized option '${opt%%=*}')" <<<"$err"
	PROBED[$key]=$?
	return "${PROBED[$key]}"
}
for cmd in "${all[@]}"; do
	[ "$cmd" = mount ] && continue	# uevmfs's own parser: below
	# A dispatcher's options are its subcommands'.
	case "$DISPATCH" in *" $cmd "*) continue ;; esac
	src=${SRC[$cmd]:-${SRC[${cmd%% *}]:-}}
	if [ -z "$src" ]; then
		fail "cli_help.sh knows where '$cmd' parses its options (SRC)"
		continue
	fi
	help=$("$UEVM" $cmd --help)
	forms=$(documented "$help")
	missing="" wrong=""
	expect_match "$cmd: its getopt table is found in programs/$src" ' (no|arg)$' \
		"$(long_opts "$src")"
	while read -r name has; do
		[ -n "$name" ] || continue
		opt=--$name
		[ "$has" = no ] || opt="--$name=x"
		accepted $cmd -- "$opt" || continue
		# getopt takes a unique prefix: --ascii for --ascii-input.
		grep -qE -- "(^|, )--$name[a-z0-9-]" <<<"$forms" && continue
		grep -qE -- "(^|, )--$name( |$)" <<<"$forms" || missing="$missing --$name"
	done < <(long_opts "$src")
	expect_eq "$cmd: its help describes every option it accepts" "" "$missing"
	# The other way: every long option described is accepted.
	for name in $(grep -oE -- '--[a-z0-9][a-z0-9-]*' <<<"$forms" | sort -u); do
		case "$PENDING" in *" $cmd:$name "*) continue ;; esac
		arg=$(grep -E -- "(^|, )$name " <<<"$forms" | head -1)
		opt=$name
		[ "${arg#*$name }" = "$arg" ] || opt="$name=x"
		accepted $cmd -- "$opt" || wrong="$wrong $name"
	done
	expect_eq "$cmd: every option its help describes is accepted" "" "$wrong"
done

# mount: uevmfs's fuse_opt table: --long, -s(hort) and -o name[=value].
help=$("$UEVM" mount --help)
forms=$(documented "$help")
missing=""
for o in $(grep -oE 'OPT\("[^" %]+' "$ROOT/programs/uevmfs/main.c" | sed 's/OPT("//' | sort -u); do
	case "$o" in
	--*) grep -qE -- "(^|, )${o%=}( |$)" <<<"$forms" || missing="$missing $o" ;;
	-?) grep -qE -- "(^|, )$o( |$|,)" <<<"$forms" || missing="$missing $o" ;;
	*) grep -qE -- "(^|[ (])${o%=}([= ]|$)" <<<"$help" || missing="$missing -o $o" ;;
	esac
done
expect_eq "mount: its help describes every uevmfs option" "" "$missing"

# ---- options of other commands, unknown options ------------------------------
# refused NAME EXPECTED-REGEX CMD...: exit 2, one message and the hint.
refused() {
	local name=$1 want=$2 err rc
	shift 2
	err=$(cd "$T/probe" && "$UEVM" "$@" 2>&1 >/dev/null); rc=$?
	expect_eq "$name: exit 2" 2 $rc
	expect_match "$name: says why" "$want" "$err"
	expect_eq "$name: two lines (the message, the --help hint)" 2 "$(wc -l <<<"$err")"
}
refused "clear --hmac-key" \
	"^uevm clear: --hmac-key is not an option of 'clear' \(it is one of: label, verify, hmac, " \
	clear --hmac-key K x
refused "clear --hmac (a prefix)" "^uevm clear: --hmac-key is not an option of 'clear'" \
	clear --hmac K x
refused "hmac -r" "^uevm hmac: -r is not an option of 'hmac' \(it is one of: label, verify, .*sign" \
	hmac -r --hmac-key K x
refused "ima-hash --uuid" "^uevm ima-hash: --uuid is not an option of 'ima-hash' \(it is one of: label, " \
	ima-hash --uuid none x
refused "status --cert" "^uevm status: --cert is not an option of 'status' \(it is one of: verify, (runtime-policy create, )?diff\)" \
	status --cert c
refused "key load --size" "^uevm key load: --size is not an option of 'key load' \(it is one of: key generate\)" \
	key load --size 3 x
refused "policy show -v" "^uevm policy show: -v is not an option of 'policy show' \(it is one of: .*policy check" \
	policy show -v tcb
refused "measurements show --hmac-key" \
	"^uevm measurements show: --hmac-key is not an option of 'measurements show' \(it is one of: .*measurements add" \
	measurements show --hmac-key K list
refused "an unknown long option" "^uevm label: unrecognized option '--no-such-option'" \
	label --no-such-option x
refused "an unknown short option" "^uevm verify: unrecognized option '-Z'" verify -Z x
refused "a missing argument" "^uevm label: option '--hmac-key' needs an argument" label --hmac-key
refused "an argument to a flag" "^uevm label: option '--m32' does not take an argument" label --m32=1 x
refused "an ambiguous prefix" "^uevm label: option '--m' is ambiguous" label --m x
expect_match "the hint names the command's help" "Try 'uevm clear --help'" \
	"$("$UEVM" clear --hmac-key K x 2>&1)"
