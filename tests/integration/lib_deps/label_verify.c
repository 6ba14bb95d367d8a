// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The smallest libuevm user: label or verify one file with an HMAC key,
 * through the public API only.  Built by lib_deps.sh against the shared
 * library and against the installed static one.
 *
 *   label_verify label|verify KEYSPEC FILE    exit 0 ok, 1 failed, 2 error
 */
#define _POSIX_C_SOURCE 200809L	/* AT_FDCWD */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <uevm/uevm.h>

static int fail(const char *what, const char *file)
{
	fprintf(stderr, "label_verify: %s %s: %s\n", what, file, uevm_last_error());
	return 2;
}

int main(int argc, char **argv)
{
	struct uevm_config cfg;
	struct uevm_verdict *v;
	struct uevm_ctx *ctx;
	struct uevm_key *key;
	struct uevm_file *f;
	int ret;

	if (argc != 4 || (strcmp(argv[1], "label") && strcmp(argv[1], "verify"))) {
		fprintf(stderr, "usage: label_verify label|verify KEYSPEC FILE\n");
		return 2;
	}
	if (uevm_key_load(argv[2], &key))
		return fail("key", argv[2]);
	uevm_config_init(&cfg);
	if (uevm_ctx_new(&cfg, key, &ctx))
		return fail("context for", argv[3]);
	if (uevm_file_open(AT_FDCWD, argv[3], argv[3], &f))
		return fail("open", argv[3]);
	if (uevm_verdict_new(&v))
		return fail("verdict for", argv[3]);
	if (!strcmp(argv[1], "label")) {
		ret = uevm_label_file(ctx, f) ? fail("label", argv[3]) : 0;
	} else if (uevm_verify_file(ctx, f, v)) {
		ret = fail("verify", argv[3]);
	} else {
		ret = uevm_verdict_ok(f, v) ? 0 : 1;
		printf("%s: %s\n", argv[3], ret ? "FAILED" : "ok");
	}
	uevm_verdict_free(v);
	uevm_file_free(f);
	uevm_ctx_free(ctx);
	return ret;
}
