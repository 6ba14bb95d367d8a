#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# open_writers violations are reported once while a file stays open for
# writing, as the kernel's IMA_EMITTED_OPENWRITERS has it.  The attacker
# is a local unprivileged user who keeps a few of their own files open for
# writing and reads them in a loop: each read used to add a violation to
# the measurement list (and a PCR extend, and an audit record), 80,000 in
# 8 seconds in an attack review, growing the list and the log without
# bound.  Once every writer has closed, a new writer and reader are a new
# case and are reported again.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/uevmd_lib.sh"

make_image || { fail "loop-mounted ext4 image"; exit 1; }
make_key "$T/key"
write_policy
write_conf "mode = enforce"
chmod 711 "$T"		# nobody reaches the mount, not the key
mkdir -m 1777 "$MNT/pub"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
FILES=8
READS=20

# violations: the daemon's count (the list's entries are added before the
# reader's open is answered, so no waiting)
violations() {
	"$UEVM" status --socket "$SOCK" | sed -n 's/^measurements: [0-9]* entries, \([0-9]*\) violations.*/\1/p'
}
records() { grep -c 'op=invalid_pcr cause=open_writers' "$LOG" 2>/dev/null; }
records_reach() { [ "$(records)" -ge "$1" ]; }

start_uevmd || { fail "uevmd starts"; exit 1; }
# The user's own new files (labelled by the daemon at their close).
"${NOBODY[@]}" sh -c "cd '$MNT/pub' && for i in \$(seq $FILES); do echo data >f\$i; done"
for i in $(seq "$FILES"); do
	expect_eq "pub/f$i opens (labelled at its creation)" ok "$(open_result "$MNT/pub/f$i")"
done
v0=$(violations)
r0=$(records)

# Writers held open (fds 10..), readers in a loop, as the user.
flood() {
	"${NOBODY[@]}" bash -c '
		cd "$1" || exit 1
		for i in $(seq "$2"); do eval "exec $((9 + i))>>f$i" || exit 1; done
		for r in $(seq "$3"); do
			for i in $(seq "$2"); do cat "f$i" >/dev/null || exit 1; done
		done' flood "$MNT/pub" "$FILES" "$READS"
}
flood
expect_eq "the user's $((FILES * READS)) reads with the files open for writing all read" 0 $?
expect_eq "one open_writers violation per file, not one per read" $((v0 + FILES)) "$(violations)"
check "... and one audit record each (op=invalid_pcr cause=open_writers)" \
	wait_quiet "$WAIT_S" records_reach $((r0 + FILES))
expect_eq "... no more than one each" $((r0 + FILES)) "$(records)"

# The writers above closed when their shell exited: new ones are a new case.
flood
expect_eq "the second round's reads all read" 0 $?
expect_eq "new writers after every writer closed: reported again, once per file" \
	$((v0 + 2 * FILES)) "$(violations)"
check "... audited again" wait_quiet "$WAIT_S" records_reach $((r0 + 2 * FILES))

# A writer that wrote still counts: uevmd relabels the file before the
# read (as the kernel would at the last close), and the writer it took
# off the count for that is put back while the file stays open for
# writing.  The kernel reports both reads below; uevmd once reported
# neither (an attack review of this test's first version).
v=$(violations)
"${NOBODY[@]}" bash -c 'cd "$1" && exec 3>>f1 && echo more >&3 && cat f1 >/dev/null &&
	cat f1 >/dev/null' sh "$MNT/pub"
expect_eq "written by a writer still open, then read twice: one violation" $((v + 1)) "$(violations)"
"${NOBODY[@]}" bash -c 'cd "$1" && exec 3>>f2 4>>f2 && echo more >&3 && exec 3>&- &&
	cat f2 >/dev/null' sh "$MNT/pub"
expect_eq "two writers, one written and closed, a read while the other stays: a violation" \
	$((v + 2)) "$(violations)"
check "the file read meanwhile has its new content's label" \
	test "$(open_result "$MNT/pub/f2")" = ok
v0=$((v0 + 2))

# A record about a file whose path is near PATH_MAX comes whole: the name
# (in hex, for its space: 7,600 characters) and every field after it.
# Records were cut at 1,536 bytes, so a user could hide the result (res=)
# of any record about their files behind a long enough path.
seg=$(printf '%0250d' 0)
deep=$MNT/pub
for _ in $(seq 15); do deep=$deep/$seg; done
"${NOBODY[@]}" mkdir -p "$deep"
"${NOBODY[@]}" sh -c 'echo data >"$1"' sh "$deep/x y"
expect_eq "the file's path is long (> 3,700 bytes)" 1 "$(( ${#deep} > 3700 ))"
"${NOBODY[@]}" bash -c 'exec 9>>"$1" && cat "$1" >/dev/null' sh "$deep/x y"
hex=$(printf '%s' "$deep/x y" | xxd -p | tr -d '\n' | tr a-f A-F)
check "its open_writers record has the whole name and the fields after it" \
	log_has "op=invalid_pcr cause=open_writers comm=\"cat\" name=$hex dev=\"[^\"]+\" ino=[0-9]+ res=1 errno=0\$"

# A reader with no writer is no violation at all.
for i in $(seq "$FILES"); do cat "$MNT/pub/f$i" >/dev/null; done
expect_eq "reads with no writer: no violation" $((v0 + 2 * FILES + 1)) "$(violations)"
check "uevmd still running" uevmd_running
stop_uevmd
