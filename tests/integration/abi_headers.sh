#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The installed headers (make install DESTDIR=...) are a clean public API:
#  - each alone, and all together, compile as C11 and as C++17 with
#    -Wall -Wextra -pedantic -Werror;
#  - together with <imaevm.h> (ima-evm-utils) and with an application's
#    own NONE, FILE_CHECK, MAY_READ, INTEGRITY_PASS, XATTR_NAME_IMA ...;
#  - they declare nothing outside uevm_/UEVM_: every macro, function,
#    variable, typedef, struct/union/enum tag and enum constant they add is
#    found by comparing clang's AST and gcc's macro list with and without
#    them; the same scan flags a header with kernel names (and, in a git
#    checkout, the headers before the namespacing).
source "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$TESTS_DIR/.." && pwd)
: "${UEVM_BUILD:=$ROOT/build/default}"
for tool in gcc g++ clang jq; do
	command -v $tool >/dev/null || { fail "$tool is installed (scripts/install-deps.sh)"; exit 1; }
done

# Install into a scratch root, as a packager does (the build is current).
case "$(basename "$UEVM_BUILD")" in
san) mk=(SANITIZE=1) ;;
tsan) mk=(SANITIZE=thread) ;;
*) mk=() ;;
esac
make -s -C "$ROOT" "${mk[@]}" install DESTDIR="$T/root" PREFIX=/usr >"$T/install.log" 2>&1
check "make install DESTDIR=... PREFIX=/usr" test -f "$T/root/usr/include/uevm/uevm.h"
INC=$T/root/usr/include
mapfile -t hdrs < <(cd "$INC" && ls uevm/*.h)
expect_match "headers installed" 'uevm/uevm.h' "${hdrs[*]}"
for h in integrity measure policy securityfs; do
	check "uevm/$h.h (kernel vocabulary) is not installed" test ! -e "$INC/uevm/$h.h"
done

CFLAGS_C=(-std=c11 -Wall -Wextra -pedantic -Werror -I"$INC")
CFLAGS_CXX=(-std=c++17 -Wall -Wextra -pedantic -Werror -I"$INC")
# compiles NAME EXT SOURCE: C (EXT c) or C++ (EXT cc) TU compiles clean.
compiles() {
	local f=$T/tu.$2 out
	printf '%s\n' "$3" >"$f"
	if [ "$2" = c ]; then
		out=$(gcc "${CFLAGS_C[@]}" -c -o "$T/tu.o" "$f" 2>&1)
	else
		out=$(g++ "${CFLAGS_CXX[@]}" -c -o "$T/tu.o" "$f" 2>&1)
	fi
	if [ $? -eq 0 ] && [ -z "$out" ]; then pass "$1"; else fail "$1" "$out"; fi
}
includes() { local h; for h in "$@"; do echo "#include <$h>"; done; }

use='int main(void) { return uevm_version() == 0; }'
for h in "${hdrs[@]}"; do
	compiles "$h alone, C11" c "$(includes "$h")
$use"
	compiles "$h alone, C++17" cc "$(includes "$h")
$use"
done
compiles "all headers, C11" c "$(includes "${hdrs[@]}")
$use"
compiles "all headers, C++17" cc "$(includes "${hdrs[@]}")
$use"
# imaevm.h's own includes (OpenSSL) first, as its users do.
imaevm="#include <imaevm.h>"
compiles "all headers with <imaevm.h> after them, C" c "$(includes "${hdrs[@]}")
$imaevm
$use"
compiles "all headers with <imaevm.h> before them, C" c "$imaevm
$(includes "${hdrs[@]}")
int main(void) { return (int)IMA_XATTR_DIGEST_NG == (int)UEVM_IMA_XATTR_DIGEST_NG ? 0 : uevm_version() == 0; }"
app='enum app_hook { NONE, FILE_CHECK, MMAP_CHECK, BPRM_CHECK, MAX_CHECK };
enum app_status { INTEGRITY_PASS, INTEGRITY_FAIL, INTEGRITY_UNKNOWN };
enum app_type { IMA_XATTR_DIGEST = 7, EVM_XATTR_HMAC };
#define MAY_READ 0x4
#define IMA_MEASURE 1
#define XATTR_NAME_IMA "user.mine"
#define AUDIT_INTEGRITY_DATA 7
#define ATTR_MODE 1
struct integrity_iint_cache { int x; };
struct ima_policy { int y; };
static int ima_hook_name(int h) { return h + MAY_READ; }
int integrity_status_name(void);
int integrity_status_name(void) { return FILE_CHECK; }'
compiles "an application's own NONE, FILE_CHECK, MAY_READ, INTEGRITY_PASS, ima_* names, C" c \
	"$(includes "${hdrs[@]}")
$app
int main(void) { return ima_hook_name(NONE) + integrity_status_name() - INTEGRITY_PASS - (int)UEVM_INTEGRITY_PASS; }"
compiles "... and as C++" cc "$app
$(includes "${hdrs[@]}")
int main(void) { return ima_hook_name(NONE) + integrity_status_name() - INTEGRITY_PASS - (int)UEVM_INTEGRITY_PASS; }"

# The kernel's values (the public enums are the kernel's, renamed).
cat >"$T/values.c" <<'EOF'
#include <uevm/uevm.h>
_Static_assert(UEVM_INTEGRITY_PASS == 0 && UEVM_INTEGRITY_PASS_IMMUTABLE == 1 &&
	       UEVM_INTEGRITY_FAIL == 2 && UEVM_INTEGRITY_FAIL_IMMUTABLE == 3 &&
	       UEVM_INTEGRITY_NOLABEL == 4 && UEVM_INTEGRITY_NOXATTRS == 5 &&
	       UEVM_INTEGRITY_UNKNOWN == 6, "enum integrity_status");
_Static_assert(UEVM_IMA_XATTR_DIGEST == 1 && UEVM_EVM_XATTR_HMAC == 2 &&
	       UEVM_EVM_IMA_XATTR_DIGSIG == 3 && UEVM_IMA_XATTR_DIGEST_NG == 4 &&
	       UEVM_EVM_XATTR_PORTABLE_DIGSIG == 5 && UEVM_IMA_VERITY_DIGSIG == 6,
	       "enum evm_ima_xattr_type");
int main(void) { return 0; }
EOF
check "public enums have the kernel's values" gcc "${CFLAGS_C[@]}" -c -o "$T/v.o" "$T/values.c"

# ---- the namespace scan ----------------------------------------------------
# foreign DIR HEADER...: the identifiers HEADERs (under DIR) add to the
# global namespace that do not start with uevm_/UEVM_, one a line.  Base:
# the system headers they include.
base='#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>'
decls() {	# decls FILE: top-level declared names (and enum constants)
	clang -std=c11 -fsyntax-only -Xclang -ast-dump=json -I"$2" "$1" 2>/dev/null |
		jq -r '.inner[]? | select(.isImplicit != true) |
			(.name // empty), ((.inner // [])[] | select(.kind == "EnumConstantDecl") | .name)'
}
foreign() {
	local dir=$1 h
	shift
	printf '%s\n' "$base" >"$T/base.c"
	{ printf '%s\n' "$base"; for h in "$@"; do echo "#include <$h>"; done; } >"$T/with.c"
	{
		comm -13 <(decls "$T/base.c" "$dir" | sort -u) <(decls "$T/with.c" "$dir" | sort -u)
		comm -13 <(gcc -E -dM -I"$dir" "$T/base.c" | awk '{ sub(/\(.*/, "", $2); print $2 }' | sort -u) \
			 <(gcc -E -dM -I"$dir" "$T/with.c" | awk '{ sub(/\(.*/, "", $2); print $2 }' | sort -u)
	} | grep -vE '^(uevm_|UEVM_)' | sort -u
}
bad=$(foreign "$INC" "${hdrs[@]}")
expect_eq "installed headers declare only uevm_/UEVM_ names" "" "$bad"
# The scan must see what it is looking for: a header with kernel names...
mkdir -p "$T/bad/uevm"
cat >"$T/bad/uevm/bad.h" <<'EOF'
#define XATTR_NAME_IMA "security.ima"
#define UEVM_OK 1
enum ima_hooks { NONE, FILE_CHECK };
enum uevm_ok { UEVM_A, INTEGRITY_PASS };
struct integrity_iint_cache;
typedef int ima_fn(void);
int ima_file_check(int);
extern int evm_initialized;
int uevm_fine(struct uevm_file *f);
EOF
got=$(foreign "$T/bad" uevm/bad.h | tr '\n' ' ')
expect_eq "the scan flags every kind of foreign name" \
	"FILE_CHECK INTEGRITY_PASS NONE XATTR_NAME_IMA evm_initialized ima_file_check ima_fn ima_hooks integrity_iint_cache " "$got"
# ... and the headers as they were before the namespacing (git checkouts).
old=d963207
if git -C "$ROOT" cat-file -e "$old^{commit}" 2>/dev/null; then
	mkdir -p "$T/old/uevm"
	for h in uevm integrity measure policy securityfs keys sig; do
		git -C "$ROOT" show "$old:include/uevm/$h.h" >"$T/old/uevm/$h.h"
	done
	got=$(foreign "$T/old" uevm/uevm.h uevm/integrity.h uevm/measure.h uevm/policy.h \
		uevm/securityfs.h uevm/keys.h uevm/sig.h)
	expect_match "the scan flags the old headers' NONE" '^NONE$' "$got"
	expect_match "... INTEGRITY_PASS" '^INTEGRITY_PASS$' "$got"
	expect_match "... XATTR_NAME_IMA" '^XATTR_NAME_IMA$' "$got"
	expect_match "... MAY_READ" '^MAY_READ$' "$got"
	expect_match "... integrity_sys_new" '^integrity_sys_new$' "$got"
	echo "old headers: $(wc -l <<<"$got") foreign names"
	out=$(printf '#include <uevm/uevm.h>\n#include <uevm/policy.h>\n#include <imaevm.h>\nint main(void) { return 0; }\n' |
		gcc -std=c11 -I"$T/old" -x c -c -o /dev/null - 2>&1)
	expect_match "the old headers and <imaevm.h> clash (what this fixes)" 'error' "$out"
fi

# Every function the headers declare is exported by the installed library
# (the inline *_init() are not functions of the library; what they call is).
{ for h in "${hdrs[@]}"; do echo "#include <$h>"; done; } >"$T/all.c"
clang -std=c11 -fsyntax-only -Xclang -ast-dump=json -I"$INC" "$T/all.c" 2>/dev/null |
	jq -r '.inner[] | select(.kind == "FunctionDecl" and .storageClass != "static") | .name' |
	sort -u >"$T/declared"
# (the installed library, wherever LIBDIR put it; nm shows NAME@@UEVM_0)
so=$(find "$T/root" -name libuevm.so.0 | head -n 1)
nm -D --defined-only "$so" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$T/exported"
expect_match "the headers declare the API's functions" '^uevm_verify_file$' "$(cat "$T/declared")"
expect_eq "every declared function is exported by libuevm.so" "" "$(comm -23 "$T/declared" "$T/exported")"
echo "public functions: $(wc -l <"$T/declared"); exported uevm_* not declared (internal): $(comm -13 "$T/declared" "$T/exported" | grep -c '^uevm_')"
