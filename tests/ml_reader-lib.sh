# SPDX-License-Identifier: GPL-2.0-or-later
# A long-lived reader of control-tree measurement files (tests/ml_reader.py,
# source after lib.sh): start_reader starts it on two FIFOs under $T,
# req sends one command and leaves the answer in $ANS ("" if the reader
# died); it is stopped on exit.
READER_PID=

start_reader() {
	rm -f "$T/cmd" "$T/reply"
	mkfifo "$T/cmd" "$T/reply"
	python3 "$TESTS_DIR/ml_reader.py" "$T/cmd" "$T/reply" &
	READER_PID=$!
	exec 7>"$T/cmd" 8<"$T/reply"
}
stop_reader() {
	[ -n "$READER_PID" ] || return 0
	echo quit >&7
	exec 7>&- 8<&-
	wait "$READER_PID"
	READER_PID=
}
on_exit stop_reader
req() {
	ANS=
	echo "$*" >&7
	read -r -t "$WAIT_S" -u 8 ANS
}
