#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# How label, verify, clear and sign take the PATHs given (issue 16): a
# symlink PATH (and PATH/) is followed, -P keeps the link object; a
# directory PATH needs -r or -d; a symlink among a PATH's leading
# components is refused, naming it; --root resolves PATHs inside a disk
# image, absolute and climbing links included, never reaching the host;
# --exclude and --exclude-from leave objects alone and do not descend into
# excluded directories.  Real files, links and xattrs under $T.
source "$(dirname "$0")/../lib.sh"
source "$TESTS_DIR/sig_ref.sh"

command -v jq >/dev/null || { fail "jq is installed (scripts/install-deps.sh)"; exit 1; }

KEY=$T/key
make_key "$KEY"
HK=(--hmac-key "raw:$KEY")
SEL='system_u:object_r:var_t:s0'

# The paths verify -r -v --json reports, sorted; and those that failed.
vpaths() { jq -r '.results[].path' | sort; }
vfailed() { jq -r '.results[] | select(.ok == false) | .path' | sort; }
lines() { printf '%s\n' "$@" | sort; }

# ---- a symlink PATH is followed ----------------------------------------------

mkdir -p "$T/real/sub"
echo a >"$T/real/a"
echo b >"$T/real/sub/b"
ln -s real "$T/link"
out=$("$UEVM" label -r -v "${HK[@]}" "$T/link" 2>&1)
expect_eq "label -r LINK (a symlink to a directory): exit 0" 0 $?
expect_match "... labels the 4 objects of its target, not the link alone" \
	"labelled 4 objects, 0 errors" "$out"
check "... real/a got security.ima" test -n "$(xattr_hex security.ima "$T/real/a")"
check "... real/sub/b got security.evm" test -n "$(xattr_hex security.evm "$T/real/sub/b")"

json=$("$UEVM" verify -r -v --json "${HK[@]}" "$T/link")
expect_eq "verify -r LINK: exit 0" 0 $?
expect_eq "... walks the target, paths shown under the name given" \
	"$(lines "$T/link" "$T/link/a" "$T/link/sub" "$T/link/sub/b")" "$(vpaths <<<"$json")"
echo tampered >>"$T/real/sub/b"
json=$("$UEVM" verify -r -v --json "${HK[@]}" "$T/link")
expect_eq "verify -r LINK after tampering under its target: exit 1" 1 $?
expect_eq "... names the tampered file" "$T/link/sub/b" "$(vfailed <<<"$json")"
json=$("$UEVM" verify -r -v --json "${HK[@]}" "$T/link/")
expect_eq "verify -r LINK/ (trailing slash): exit 1" 1 $?
expect_eq "... the same tampered file found" "$T/link/sub/b" "$(vfailed <<<"$json")"

# LINK/ for label, on a fresh unlabelled tree.
mkdir -p "$T/real2/d"
echo c >"$T/real2/c"
echo e >"$T/real2/d/e"
ln -s "$T/real2" "$T/link2"
out=$("$UEVM" label -r -v "${HK[@]}" "$T/link2/" 2>&1)
expect_eq "label -r LINK/ (absolute link): exit 0" 0 $?
expect_match "... labels the 4 objects of its target" "labelled 4 objects, 0 errors" "$out"
check "... real2/d/e got security.ima" test -n "$(xattr_hex security.ima "$T/real2/d/e")"

# -P: the link object itself, as before.
"$UEVM" clear -r "$T/real2"
setfattr -h -n security.selinux -v "$SEL" "$T/link2"	# so that EVM labels the link
out=$("$UEVM" label -r -P -v "${HK[@]}" "$T/link2" 2>&1)
expect_eq "label -r -P LINK: exit 0" 0 $?
expect_match "... labels one object" "labelled 1 objects, 0 errors" "$out"
check "... the link itself got security.evm" test -n "$(xattr_hex security.evm "$T/link2")"
check "... its target was not labelled" test -z "$(xattr_hex security.ima "$T/real2/c")"
json=$("$UEVM" verify -r -P -v --json "${HK[@]}" "$T/link2")
expect_eq "verify -r -P LINK: exit 0" 0 $?
expect_eq "... checks the link object alone" "$T/link2 symlink pass" \
	"$(jq -r '.results[] | "\(.path) \(.type) \(.status)"' <<<"$json")"
json=$("$UEVM" verify -r -P -v --json "${HK[@]}" "$T/link")
expect_eq "verify -r -P of the link to the tampered tree: exit 0 (the link only)" 0 $?
expect_eq "... one object, the link" "$T/link" "$(vpaths <<<"$json")"

# ---- a directory PATH needs -r or -d --------------------------------------------

K=$T/keys
mkdir "$K"
SIG_KEYS="rsa2048" make_sig_keys "$K"
for cmd in "verify ${HK[*]}" "label ${HK[*]}" "clear" "sign --imasig -k $K/rsa2048.key"; do
	out=$(eval "\"\$UEVM\" $cmd \"\$T/real2\"" 2>&1)
	rc=$?
	name=${cmd%% *}
	expect_eq "$name DIR without -r: exit 2" 2 "$rc"
	expect_match "... the message names DIR and says -r or -d" \
		"$T/real2: .*directory.*give -r .*-d \(--directory\)" "$out"
done
check "... and nothing in DIR was labelled or signed" \
	test -z "$(xattr_hex security.ima "$T/real2/c")"

setfattr -n security.selinux -v "$SEL" "$T/real2"	# so that EVM labels the dir
out=$("$UEVM" label -d -v "${HK[@]}" "$T/real2" 2>&1)
expect_eq "label -d DIR: exit 0" 0 $?
expect_match "... labels the directory object alone" "labelled 1 objects, 0 errors" "$out"
check "... the directory got security.evm" test -n "$(xattr_hex security.evm "$T/real2")"
check "... what is in it did not" test -z "$(xattr_hex security.ima "$T/real2/c")"
json=$("$UEVM" verify -d -v --json "${HK[@]}" "$T/real2")
expect_eq "verify --directory DIR: exit 0" 0 $?
expect_eq "... checks the directory object" "$T/real2 directory pass" \
	"$(jq -r '.results[] | "\(.path) \(.type) \(.status)"' <<<"$json")"
setfattr -n user.x -v 1 "$T/real2"
chmod 0700 "$T/real2"
"$UEVM" verify -d "${HK[@]}" "$T/real2" >/dev/null
expect_eq "verify -d of the directory after chmod: exit 1" 1 $?
expect_rc "clear -d DIR: exit 0" 0 "$UEVM" clear -d "$T/real2"
check "... removed the directory's security.evm" test -z "$(xattr_hex security.evm "$T/real2")"
expect_rc "sign -d --imasig DIR: exit 0" 0 "$UEVM" sign -d --imasig -k "$K/rsa2048.key" "$T/real2"
check "... signed nothing in it" test -z "$(xattr_hex security.ima "$T/real2/c")"

# ---- a symlink among a PATH's leading components is refused -------------------------

before=$(stat -c %Z "$T/real/a")
out=$("$UEVM" label "${HK[@]}" "$T/link/a" 2>&1)
expect_eq "label LINK/a (a link in the leading components): exit 2" 2 $?
expect_match "... the message names the link and its target" \
	"$T/link/a: .*$T/link is a symbolic link to 'real'.*give the resolved path, or --root" "$out"
expect_eq "... real/a untouched (ctime)" "$before" "$(stat -c %Z "$T/real/a")"
out=$("$UEVM" verify -r "${HK[@]}" "$T/link/sub" 2>&1)
expect_eq "verify -r LINK/sub: exit 2, not 1 (nothing checked through the link)" 2 $?
expect_match "... names the link" "$T/link is a symbolic link" "$out"
mkdir -p "$T/d1"
ln -s ../real "$T/d1/up"
out=$("$UEVM" clear -r "$T/d1/up/sub" 2>&1)
expect_eq "clear -r through a link deeper in the path: exit 2" 2 $?
expect_match "... names that link" "$T/d1/up is a symbolic link to '../real'" "$out"
check "... and cleared nothing" test -n "$(xattr_hex security.evm "$T/real/sub/b")"
out=$("$UEVM" verify -r "${HK[@]}" "$T/real/sub" 2>&1)
expect_eq "verify -r of the resolved path instead: exit 1 (the tampering found)" 1 $?

# ---- --root: PATHs resolved inside a disk image -------------------------------------

# The image's /opt/app is an absolute link to $T/decoy: the same path exists
# on the host (a decoy) and inside the image (the real target).
IMG=$T/img
HOSTD=$T/decoy
INIMG=$IMG$HOSTD
mkdir -p "$IMG/opt" "$HOSTD/bin" "$INIMG/bin"
echo "host decoy" >"$HOSTD/bin/tool"
echo "decoy" >"$HOSTD/bin/decoy-only"
echo "image tool" >"$INIMG/bin/tool"
echo "image other" >"$INIMG/bin/other"
ln -s "$HOSTD" "$IMG/opt/app"
rel=$(printf '../%.0s' $(seq 1 12))${HOSTD#/}		# climbs far above the image
ln -s "$rel" "$IMG/opt/rel"

out=$("$UEVM" verify -r "${HK[@]}" "$IMG/opt/app/bin" 2>&1)
expect_eq "without --root, IMG/opt/app/bin (an absolute link inside): exit 2" 2 $?
expect_match "... names the link and its target" "$IMG/opt/app is a symbolic link to '$HOSTD'" "$out"

expect_rc "label -r --root IMG /opt/app/bin: exit 0" 0 \
	"$UEVM" label -r --root "$IMG" "${HK[@]}" /opt/app/bin
check "... labelled the image's target" test -n "$(xattr_hex security.ima "$INIMG/bin/tool")"
check "... not the host's decoy" test -z "$(xattr_hex security.ima "$HOSTD/bin/tool")"
"$UEVM" label -r "${HK[@]}" "$HOSTD"		# the decoy would pass if checked
json=$("$UEVM" verify -r -v --json --root "$IMG" "${HK[@]}" /opt/app/bin)
expect_eq "verify -r --root IMG /opt/app/bin: exit 0" 0 $?
expect_eq "... the image's files, shown as inside the image" \
	"$(lines /opt/app/bin /opt/app/bin/other /opt/app/bin/tool)" "$(vpaths <<<"$json")"
echo tampered >>"$INIMG/bin/tool"
json=$("$UEVM" verify -r -v --json --root "$IMG" "${HK[@]}" /opt/app/bin)
expect_eq "verify -r --root after tampering in the image: exit 1" 1 $?
expect_eq "... flags the image's file" "/opt/app/bin/tool" "$(vfailed <<<"$json")"
check "... no host decoy file in the output" test -z "$(grep -F decoy-only <<<"$json")"
json=$("$UEVM" verify -r -v --json --root "$IMG" "${HK[@]}" /opt/rel/bin)
expect_eq "verify -r --root through a relative link climbing 12 levels: exit 1" 1 $?
expect_eq "... stays inside the image: the image's tampered file flagged" \
	"/opt/rel/bin/tool" "$(vfailed <<<"$json")"
check "... no host decoy file in the output" test -z "$(grep -F decoy-only <<<"$json")"
out=$("$UEVM" verify -r --root "$IMG" "${HK[@]}" "$HOSTD" 2>&1)
expect_eq "verify -r --root IMG HOSTPATH (the decoy's path): exit 1, the image's copy checked" 1 $?
check "... no host decoy file in the output" test -z "$(grep -F decoy-only <<<"$out")"

# verify's warning: beneath --root, an absolute target is a path in the image.
json=$("$UEVM" verify -r -P -v --json --root "$IMG" "${HK[@]}" /)
expect_eq "verify -r --root IMG /: no leaves-the-tree warning for /opt/app (absolute, inside the image)" \
	"" "$(jq -r '.results[] | select(.path == "/opt/app") | .warning // empty' <<<"$json")"
check "... the image's tampered file found at its own path" \
	grep -qF "\"$HOSTD/bin/tool\"" <<<"$(jq -c '[.results[] | select(.ok == false) | .path]' <<<"$json")"
json=$("$UEVM" verify -r -v --json --root "$IMG" "${HK[@]}" /opt)
expect_eq "verify -r --root IMG /opt: /opt/app leads out of /opt: warned" \
	"symlink-leaves-tree" "$(jq -r '.results[] | select(.path == "/opt/app") | .warning' <<<"$json")"
json=$("$UEVM" verify -r -v --json "${HK[@]}" "$IMG/opt")
expect_eq "without --root, the absolute target is still said to leave the tree" \
	"symlink-leaves-tree" "$(jq -r --arg p "$IMG/opt/app" '.results[] | select(.path == $p) | .warning' <<<"$json")"

out=$("$UEVM" verify -r --root "$IMG" "${HK[@]}" opt 2>&1)
expect_eq "--root with a relative PATH: exit 2" 2 $?
expect_match "... says PATHs are absolute beneath a root" "absolute" "$out"
out=$("$UEVM" verify -r --root "$T/nonexistent" "${HK[@]}" / 2>&1)
expect_eq "--root of a missing directory: exit 2" 2 $?
expect_match "... names it" "$T/nonexistent" "$out"

# A PATH ending in ".." beneath --root: ".." of the root is the root (the
# parent directory used to open it from is the root itself).
R=$T/rootesc
mkdir -p "$R/img/in"
echo outside >"$R/secret"
echo inside >"$R/img/in/f"
out=$("$UEVM" label -r -v --root "$R/img" "${HK[@]}" /.. 2>&1)
expect_eq "label -r --root IMG /..: exit 0" 0 $?
check "... labelled the image's file" test -n "$(xattr_hex security.ima "$R/img/in/f")"
check "... not the file beside the image" test -z "$(xattr_hex security.ima "$R/secret")"
check "... nor the image's parent directory" test -z "$(xattr_hex security.evm "$R")"
expect_rc "label -d --root IMG /in/../../..: exit 0" 0 \
	"$UEVM" label -d --root "$R/img" "${HK[@]}" /in/../../..
check "... labelled no directory outside the image" test -z "$(xattr_hex security.evm "$R")"

# ---- --exclude, --exclude-from ------------------------------------------------------

E=$T/ex
mkdir -p "$E/cache/deep" "$E/sub"
for f in keep.txt a.log cache/inner.txt cache/deep/x sub/a.log sub/keep2 "#keep"; do
	echo "$f" >"$E/$f"
done
"$UEVM" label -r "${HK[@]}" "$E"
for f in keep.txt a.log cache/inner.txt sub/a.log "#keep"; do
	echo tampered >>"$E/$f"
done

json=$("$UEVM" verify -r -v --json --exclude '*.log' "${HK[@]}" "$E")
expect_eq "--exclude '*.log' (a name glob): exit 1" 1 $?
expect_eq "... no .log at any depth checked, the other tampered files found" \
	"$(lines "$E/#keep" "$E/cache/inner.txt" "$E/keep.txt")" "$(vfailed <<<"$json")"
expect_eq "... and nothing ending in .log visited" "" "$(vpaths <<<"$json" | grep '\.log$')"

json=$("$UEVM" verify -r -v --json --exclude "$E/cache" "${HK[@]}" "$E")
expect_eq "--exclude DIR's path: exit 1" 1 $?
expect_eq "... the excluded directory is not descended into (its tampered file not reported)" \
	"$(lines "$E/#keep" "$E/a.log" "$E/keep.txt" "$E/sub/a.log")" "$(vfailed <<<"$json")"
expect_eq "... nothing under it visited, nor itself" "" "$(vpaths <<<"$json" | grep /cache)"

json=$("$UEVM" verify -r -v --json --exclude "$E/*/a.log" "${HK[@]}" "$E")
expect_eq "--exclude with a '/': * does not match '/' (FNM_PATHNAME)" \
	"$(lines "$E/#keep" "$E/a.log" "$E/cache/inner.txt" "$E/keep.txt")" "$(vfailed <<<"$json")"

printf '# caches and logs\n\n*.log\n#keep\ncache\n' >"$T/excl"
json=$("$UEVM" verify -r -v --json --exclude-from "$T/excl" "${HK[@]}" "$E")
expect_eq "--exclude-from FILE: exit 1" 1 $?
expect_eq "... its globs applied, comment lines (#keep) and empty ones ignored" \
	"$(lines "$E/#keep" "$E/keep.txt")" "$(vfailed <<<"$json")"

json=$("$UEVM" verify -r -v --json --exclude ex "${HK[@]}" "$E")
expect_eq "a PATH given is never excluded (a run that checked nothing must not look clean): exit 1" 1 $?
expect_eq "... every tampered file below it is still reported" \
	"$(lines "$E/#keep" "$E/a.log" "$E/cache/inner.txt" "$E/keep.txt" "$E/sub/a.log")" "$(vfailed <<<"$json")"

"$UEVM" clear -r --exclude cache "$E"
check "clear -r --exclude cache: cache/deep/x keeps its labels" \
	test -n "$(xattr_hex security.ima "$E/cache/deep/x")"
check "... and sub/keep2 was cleared" test -z "$(xattr_hex security.ima "$E/sub/keep2")"
"$UEVM" label -r --exclude '*.log' "${HK[@]}" "$E"
check "label -r --exclude '*.log': sub/a.log not labelled" \
	test -z "$(xattr_hex security.ima "$E/sub/a.log")"
check "... sub/keep2 labelled" test -n "$(xattr_hex security.ima "$E/sub/keep2")"
"$UEVM" sign -r --imasig --exclude-from "$T/excl" -k "$K/rsa2048.key" "$E"
check "sign -r --exclude-from: keep.txt signed (0x03)" \
	test "$(xattr_hex security.ima "$E/keep.txt" | cut -c1-2)" = 03
check "... cache/inner.txt not (it keeps its HMAC-era digest, 0x04)" \
	test "$(xattr_hex security.ima "$E/cache/inner.txt" | cut -c1-2)" = 04

out=$("$UEVM" verify -r --exclude-from "$T/missing" "${HK[@]}" "$E" 2>&1)
expect_eq "--exclude-from a missing file: exit 2" 2 $?
expect_match "... names it and the cause" "$T/missing: No such file" "$out"
