# SPDX-License-Identifier: GPL-2.0-or-later
# bench/run.sh's table: reads the "key value" lines the parts wrote
# (results.txt) and prints issue 17's rows in Markdown, each with uevm's
# figure, its peer's from the same run, the ratio, the target and whether
# it is met.  A row whose figures are missing (its part failed) says error.

{ v[$1] = $2 }

function has(k) { return (k in v) && v[k] != "" }
function wall(k) { return v[k] < 1e-6 ? 1e-6 : v[k] }
function mbs(n, t) { return v[n ".bytes"] / 1e6 / wall(n "." t ".wall") }
function fps(n, t) { return v[n ".files"] / wall(n "." t ".wall") }
function trees(n) {
	return sprintf("%d files, %.0f MB", v[n ".files"], v[n ".bytes"] / 1e6)
}
# row WORK UEVM PEER RATIO TARGET OK: OK is 1 (met), 0 (NOT met), -1 (error)
function row(work, u, p, r, target, ok) {
	nrow++
	if (ok < 0) { u = "-"; p = "-"; r = "-" }
	printf "| %d | %s | %s | %s | %s | %s | %s |\n", nrow, work, u, p, r, target,
		ok < 0 ? "error" : ok ? "met" : "NOT met"
}
function need(a, b, c, d) {
	return has(a) && (b == "" || has(b)) && (c == "" || has(c)) && (d == "" || has(d))
}
# label/verify of tree N against one openssl process, ratio >= T
function tree_row(work, n, t, tool, T,    ok, r) {
	ok = need(n "." t ".wall", n ".openssl.wall", n ".bytes") ? 1 : -1
	if (ok > 0) {
		r = wall(n ".openssl.wall") / wall(n "." t ".wall")
		ok = r >= T
	}
	row(work, sprintf("%.0f MB/s", mbs(n, t)),
	    sprintf("openssl dgst -sha256, one process: %.0f MB/s", mbs(n, "openssl")),
	    sprintf("%.2fx", r), sprintf(">= %.1fx", T), ok)
}
function small_row(t,    ok) {
	ok = need("small4k." t ".wall", "small4k.openssl.wall", "small4k.files") ? 1 : -1
	if (ok > 0)
		ok = fps("small4k", t) >= 90000
	row(sprintf("%s, %d files of 4 KiB (1000 a directory)", t, v["small4k.files"]),
	    sprintf("%.0f files/s", fps("small4k", t)),
	    sprintf("openssl dgst -sha256, one process: %.0f files/s", fps("small4k", "openssl")),
	    sprintf("%.2fx", wall("small4k.openssl.wall") / wall("small4k." t ".wall")),
	    ">= 90000 files/s", ok)
}
function ns_row(work, u, n, peer, absmax, rmax,    ok, r) {
	ok = need("uevmd." u "_ns", "uevmd." n "_ns") ? 1 : -1
	if (ok > 0) {
		r = v["uevmd." u "_ns"] / (v["uevmd." n "_ns"] > 0 ? v["uevmd." n "_ns"] : 1)
		ok = absmax ? v["uevmd." u "_ns"] <= absmax * 1000 : r <= rmax
	}
	row(work, sprintf("%.1f us", v["uevmd." u "_ns"] / 1000),
	    sprintf("%s: %.1f us", peer, v["uevmd." n "_ns"] / 1000), sprintf("%.2fx", r),
	    absmax ? sprintf("<= %d us", absmax) : sprintf("<= %.2fx", rmax), ok)
}
# uevmfs row K: ratio uevmfs/native against ">= T" (MB/s) or "<= T" (us)
function fs_row(work, k, unit, op, T,    ok, r, n, u) {
	n = "uevmfs." k ".native"; u = "uevmfs." k ".uevmfs"
	ok = need(n, u) ? 1 : -1
	if (ok > 0) {
		r = v[u] / (v[n] > 0 ? v[n] : 1e-9)
		ok = op == ">=" ? r >= T : r <= T
	}
	row(work, sprintf("%s %s", v[u], unit), sprintf("native: %s %s", v[n], unit),
	    sprintf("%.2fx", r), sprintf("%s %.2fx", op, T), ok)
}
function aide_row(work, t, a, T,    ok, r) {
	ok = need("usr." t ".wall", "usr." a ".wall", "usr.bytes") ? 1 : -1
	if (ok > 0) {
		r = wall("usr." a ".wall") / wall("usr." t ".wall")
		ok = r >= T
	}
	row(work, sprintf("%.0f MB/s", mbs("usr", t)),
	    sprintf("aide --%s: %.0f MB/s", a == "aide_init" ? "init" : "check", mbs("usr", a)),
	    sprintf("%.2fx", r), sprintf(">= %.0fx", T), ok)
}
function cpu_row(work, n, t,    f) {
	if (!need(n "." t ".cpu", n ".openssl.cpu", n ".files"))
		return
	f = v[n ".files"] > 0 ? v[n ".files"] : 1
	printf "| %s | %.2f s, %.1f us/file | %.2f s, %.1f us/file |\n", work,
		v[n "." t ".cpu"], v[n "." t ".cpu"] * 1e6 / f,
		v[n ".openssl.cpu"], v[n ".openssl.cpu"] * 1e6 / f
}

# The estimated ceiling of TOOL (label or verify) on tree N, as
# label-verify.sh worked it out (openssl's CPU for the hashing plus the
# labels' own cost, over every CPU, against openssl's wall time); in files/s
# it is that ratio times openssl's files/s.
function ceiling_row(work, n, tool, T, fps_target,    x, r, f) {
	if (!need(n "." tool ".ceiling", n "." tool ".labels_cpu", n ".openssl.wall", n "." tool ".wall") ||
	    !need(n ".files"))
		return
	f = v[n ".files"] > 0 ? v[n ".files"] : 1
	x = v[n "." tool ".labels_cpu"]; r = v[n "." tool ".ceiling"]
	if (fps_target)
		printf "| %s | %.2f s, %.1f us/file | %.0f files/s | %.0f files/s | >= %d files/s |\n",
			work, x, x * 1e6 / f, r * fps(n, "openssl"), fps(n, tool), fps_target
	else
		printf "| %s | %.2f s, %.1f us/file | %.2fx | %.2fx | >= %.1fx |\n", work, x,
			x * 1e6 / f, r, wall(n ".openssl.wall") / wall(n "." tool ".wall"), T
}

# Row 6 split (bench/uevmd.sh): the same storm under policies that do less.
function split_row(work, k, c) {
	printf "| %s | %.1f us | %s |\n", work, v["uevmd." k "_ns"] / 1000,
		has("uevmd." c "_ns") ? sprintf("%.1f us", v["uevmd." c "_ns"] / 1000) : "-"
}
function split_table() {
	if (!need("uevmd.bare_open_ns", "uevmd.other_open_ns", "uevmd.measure_open_ns",
		  "uevmd.appraise_open_ns") || !need("uevmd.first_open_ns", "uevmd.cost_reads_ns"))
		return
	print ""
	print "Row 6 split: the same first-appraisal storm under policies that do less (a fresh"
	print "daemon each, median of 3 runs), and what the reads uevmd makes for every event cost"
	print "here, each timed alone (bench/uevmd-storm.c costs):"
	print ""
	print "| uevmd first appraisal of a 4 KiB file | latency an open | uevmd CPU an event |"
	print "|---|---|---|"
	split_row("the fanotify round trip alone (a responder allowing all)", "bare_open", "")
	split_row("event path only: the policy's one rule is another user's (credentials, open flags, name; nothing hashed)",
		  "other_open", "other_cpu")
	split_row("measurement alone", "measure_open", "measure_cpu")
	split_row("appraisal alone", "appraise_open", "appraise_cpu")
	split_row("both (row 6)", "first_open", "first_cpu")
	printf "| reads of every event, each alone: /proc/PID/status %.1f, loginuid %.1f, sessionid %.1f, syscall %.1f, the fd's name %.1f | %.1f us (with the round trip: %.1f us) | - |\n",
		v["uevmd.cost.proc_status"] / 1000, v["uevmd.cost.proc_loginuid"] / 1000,
		v["uevmd.cost.proc_sessionid"] / 1000, v["uevmd.cost.proc_syscall"] / 1000,
		v["uevmd.cost.fd_readlink"] / 1000, v["uevmd.cost_reads_ns"] / 1000,
		(v["uevmd.cost_reads_ns"] + v["uevmd.bare_open_ns"]) / 1000
}

END {
	mb = has("uevmfs.size_mb") ? v["uevmfs.size_mb"] " MiB" : "large"
	print "| # | work | uevm | peer (same run) | ratio | target | status |"
	print "|---|---|---|---|---|---|---|"
	tree_row("label, copy of /usr/lib/x86_64-linux-gnu + /usr/share (" trees("usr") ")",
		 "usr", "label", "label", 1.8)
	tree_row("verify, same tree", "usr", "verify", "verify", 1.8)
	tree_row("label, copy of /usr/lib (" trees("lib") ")", "lib", "label", "label", 1.9)
	small_row("label")
	small_row("verify")
	ns_row("uevmd: first appraisal of a 4 KiB file (open+read+close)", "first_open",
	       "native_open", "native", 60, 0)
	ns_row("uevmd: open+read+close, cached", "cached_open", "native_open", "native", 0, 1.10)
	ns_row("uevmd: fork+exec+wait of a small binary, cached", "cached_exec", "native_exec",
	       "native", 0, 1.05)
	fs_row("uevmfs: write + close (relabel), " mb " file", "write", "MB/s", ">=", 0.6)
	fs_row("uevmfs: open+close, default policy (per-open hooks)", "open", "us", "<=", 2)
	fs_row("uevmfs: open+close, caller-independent policy (automatic fast path)",
	       "open_auto", "us", "<=", 2)
	fs_row("uevmfs: sequential read, cold from disk, " mb " file", "read_cold", "MB/s",
	       ">=", 0.85)
	aide_row("label against AIDE init, tree of row 1 (sha256 + metadata + xattrs)",
		 "label", "aide_init", 6)
	aide_row("verify against AIDE check, same tree", "verify", "aide_check", 10)
	print ""
	print "CPU time (user + sys, best run; changes little with the machine's load):"
	print ""
	print "| work | uevm | openssl dgst -sha256, one process |"
	print "|---|---|---|"
	cpu_row("label, row 1's tree", "usr", "label")
	cpu_row("verify, row 1's tree", "usr", "verify")
	cpu_row("label, /usr/lib copy", "lib", "label")
	cpu_row("label, 4 KiB files", "small4k", "label")
	cpu_row("verify, 4 KiB files", "small4k", "verify")
	split_table()
	if (!has("usr.label.ceiling") && !has("lib.label.ceiling") && !has("small4k.label.ceiling") &&
	    !has("uevmfs.write.ceiling") && !has("uevmd.bare_open_ns"))
		exit
	print ""
	print "Ceilings here (estimates): storing security.ima and security.evm alone, or reading"
	print "them back (bench/xattr-floor.c: values of their real sizes, no hashing, CPU time"
	print "less a plain open and close), plus openssl's CPU time for the hashing, on every CPU;"
	print "for uevmd, the bare fanotify round trip; for uevmfs's write + close, one file's"
	print "SHA-256 against the native write.  Estimates, not bounds: uevm hashes a file for"
	print "less CPU than a whole openssl dgst run spends on it, so label can pass its figure a little:"
	print ""
	print "| work | the labels alone | estimated ceiling | measured | target |"
	print "|---|---|---|---|---|"
	ceiling_row("label, row 1's tree", "usr", "label", 1.8, 0)
	ceiling_row("verify, row 1's tree", "usr", "verify", 1.8, 0)
	ceiling_row("label, /usr/lib copy", "lib", "label", 1.9, 0)
	ceiling_row("label, 4 KiB files", "small4k", "label", 0, 90000)
	ceiling_row("verify, 4 KiB files", "small4k", "verify", 0, 90000)
	if (need("uevmd.bare_open_ns", "uevmd.first_open_ns"))
		printf "| uevmd: first appraisal of a 4 KiB file (a responder that allows every open at once, reading nothing: the fanotify round trip) | - | %.1f us | %.1f us | <= 60 us |\n",
			v["uevmd.bare_open_ns"] / 1000, v["uevmd.first_open_ns"] / 1000
	if (need("uevmfs.write.hash", "uevmfs.write.ceiling", "uevmfs.write.native", "uevmfs.write.uevmfs"))
		printf "| uevmfs: write + close, %s file (close waits for the file's SHA-256, one stream: %.0f MB/s) | - | %.2fx | %.2fx | >= 0.60x |\n",
			mb, v["uevmfs.write.hash"], v["uevmfs.write.ceiling"],
			v["uevmfs.write.uevmfs"] / (v["uevmfs.write.native"] > 0 ? v["uevmfs.write.native"] : 1)
}
