#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile trees for `uevm label` and `uevm verify`, part 3: files that
# change while they are hashed.  The result is never PASS, and never a
# label, for content that was not hashed:
#  - a file growing (a writer appending without pause) during label: not
#    labelled, after a bounded number of tries, the error names the file;
#  - the same during verify of a labelled file: an error naming the file,
#    not OK; --json gives an error entry, not "pass";
#  - a file rewritten in place (same size) during verify: never OK;
#  - once the writer stops, label and verify succeed (no lasting false
#    alarm);
#  - a file replaced by rename while label hashes it: the new file is
#    never reported as passing.
source "$(dirname "$0")/../lib.sh"

KEY=$T/key
make_key "$KEY"
B=$T/big
head -c 96M /dev/urandom >"$B"

# writer MODE: appends (grow) or rewrites a block in place (rewrite) in a
# loop until $T/stop exists; after its first write it says so on the FIFO
# $T/started, so the test starts its command while the file changes.
writer() {
	python3 - "$1" "$B" "$T/stop" "$T/started" <<-'EOF'
	import os, sys, random
	mode, path, stop, started = sys.argv[1:]
	fd = os.open(path, os.O_WRONLY | (os.O_APPEND if mode == "grow" else 0))
	size = os.fstat(fd).st_size
	first = True
	while first or not os.path.exists(stop):
	    if mode == "grow":
	        os.write(fd, os.urandom(4096))
	    else:
	        os.pwrite(fd, os.urandom(4096), random.randrange(0, size - 4096))
	    if first:
	        with open(started, "w") as f:
	            f.write("started\n")
	        first = False
	os.close(fd)
	EOF
}
start_writer() {
	rm -f "$T/stop" "$T/started"
	mkfifo "$T/started"
	writer "$1" &
	wpid=$!
	read -r _ <"$T/started"
}
stop_writer() {
	touch "$T/stop"
	wait $wpid
}
on_exit "touch '$T/stop'"

# ---- label of a growing file ----------------------------------------------------------

start_writer grow
out=$("$UEVM" label --hmac-key "raw:$KEY" "$B" 2>&1)
rc=$?
stop_writer
expect_eq "label of a file growing all along: exit 2" 2 "$rc"
expect_match "... the error names the file and says it kept changing" \
	"^uevm: $B: not labelled: file kept changing while it was being (hashed|labelled) \([0-9]+ tries\)" "$out"
expect_eq "... no security.ima was written" "" "$(xattr_hex security.ima "$B")"
expect_rc "once the writer stopped, label succeeds" 0 "$UEVM" label --hmac-key "raw:$KEY" "$B"
expect_rc "... and verify passes" 0 "$UEVM" verify --hmac-key "raw:$KEY" "$B"

# ---- verify of a file growing or rewritten in place ---------------------------------

for mode in grow rewrite; do
	"$UEVM" label --hmac-key "raw:$KEY" "$B"
	start_writer $mode
	out=$("$UEVM" verify -v --hmac-key "raw:$KEY" "$B" 2>&1)
	rc=$?
	json=$("$UEVM" verify --json --hmac-key "raw:$KEY" "$B" 2>/dev/null)
	stop_writer
	check "verify during a $mode: exit 1 or 2, never 0 (rc $rc)" test "$rc" = 1 -o "$rc" = 2
	expect_eq "verify during a $mode: ... never an OK line" "" "$(grep '^OK' <<<"$out")"
	if [ $mode = grow ]; then
		expect_match "verify during a grow: ... an error naming the file: changed while hashed" \
			"^ERROR $B: cannot verify: file changed while it was being hashed" "$out"
	fi
	expect_eq "verify --json during a $mode: the entry is an error or a failure, not a pass" "false" \
		"$(jq -r '.results[0] | .ok // false' <<<"$json")"
	expect_eq "verify --json during a $mode: ... and the JSON is valid" 0 \
		"$(python3 -m json.tool <<<"$json" >/dev/null; echo $?)"
done
"$UEVM" label --hmac-key "raw:$KEY" "$B"
expect_rc "after the writers: label and verify pass" 0 "$UEVM" verify --hmac-key "raw:$KEY" "$B"

# ---- a file replaced by rename while label hashes it ------------------------------------

head -c 1M /dev/urandom >"$T/other"
"$UEVM" label --hmac-key "raw:$KEY" "$B" &
lpid=$!
# Rename only once label holds the file open (or is done with it): a
# rename before its open would just hand it the new file to label.
holds_or_done() {
	local state
	state=$(cut -d' ' -f3 "/proc/$lpid/stat" 2>/dev/null)
	[ -z "$state" ] || [ "$state" = Z ] ||
		readlink /proc/$lpid/fd/* 2>/dev/null | grep -qxF "$B"
}
until holds_or_done; do :; done
mv "$T/other" "$B"		# the label run keeps the inode it opened
wait $lpid
json=$("$UEVM" verify --json --hmac-key "raw:$KEY" "$B")
expect_eq "a file replaced during label: the new file does not pass (no label of its own)" \
	"false no_label" "$(jq -r '.results[0] | "\(.ok) \(.status)"' <<<"$json")"
