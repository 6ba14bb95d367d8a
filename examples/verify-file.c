// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verify-file: label or verify files with libuevm's public API only.
 *
 *   verify-file [--label] KEYSPEC FILE...
 *
 * KEYSPEC names an EVM HMAC key as uevm_key_load(3) takes it (raw:PATH,
 * keyring:DESC, ...).  Without --label each FILE is verified as the
 * kernel's appraisal would and a line "FILE: pass" or "FILE: fail
 * (cause: detail)" is printed.  Exit status: 0 all passed (or were
 * labelled), 1 a file failed verification, 2 an error.
 *
 * Build against an installed libuevm:
 *   cc -o verify-file verify-file.c $(pkg-config --cflags --libs uevm)
 */
#define _POSIX_C_SOURCE 200809L	/* AT_FDCWD */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <uevm/uevm.h>

static int label(const struct uevm_ctx *ctx, const struct uevm_file *f)
{
	int ret = uevm_label_file(ctx, f);

	if (ret < 0) {
		fprintf(stderr, "verify-file: %s: cannot label: %s\n",
			uevm_file_path(f), uevm_last_error());
		return 2;
	}
	printf("%s: labelled\n", uevm_file_path(f));
	return 0;
}

static int verify(const struct uevm_ctx *ctx, const struct uevm_file *f,
		  struct uevm_verdict *v)
{
	enum uevm_integrity_status st;

	if (uevm_verify_file(ctx, f, v) < 0) {
		fprintf(stderr, "verify-file: %s: cannot verify: %s\n",
			uevm_file_path(f), uevm_last_error());
		return 2;
	}
	st = uevm_verdict_status(v);
	if (uevm_verdict_ok(f, v)) {
		printf("%s: %s\n", uevm_file_path(f), uevm_integrity_status_name(st));
		return 0;
	}
	printf("%s: %s (%s%s%s)\n", uevm_file_path(f),
	       uevm_integrity_status_name(st),
	       uevm_verdict_cause(v) ? uevm_verdict_cause(v) : "",
	       *uevm_verdict_detail(v) ? ": " : "", uevm_verdict_detail(v));
	return 1;
}

int main(int argc, char **argv)
{
	struct uevm_verdict *v = NULL;
	struct uevm_ctx *ctx = NULL;
	struct uevm_key *key = NULL;
	struct uevm_config cfg;
	int do_label = 0, worst = 0, i = 1;

	if (argc > 1 && !strcmp(argv[1], "--label")) {
		do_label = 1;
		i++;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: verify-file [--label] KEYSPEC FILE...\n");
		return 2;
	}
	if (uevm_key_load(argv[i], &key) < 0) {
		fprintf(stderr, "verify-file: %s: %s\n", argv[i], uevm_last_error());
		return 2;
	}
	uevm_config_init(&cfg);
	/* The context owns the key once it exists. */
	if (uevm_ctx_new(&cfg, key, &ctx) < 0) {
		fprintf(stderr, "verify-file: %s\n", uevm_last_error());
		uevm_key_free(key);
		return 2;
	}
	/* One verdict, reused for every file. */
	if (uevm_verdict_new(&v) < 0) {
		fprintf(stderr, "verify-file: %s\n", uevm_last_error());
		uevm_ctx_free(ctx);
		return 2;
	}
	for (i++; i < argc; i++) {
		struct uevm_file *f;
		int rc;

		if (uevm_file_open(AT_FDCWD, argv[i], NULL, &f) < 0) {
			fprintf(stderr, "verify-file: %s: %s\n", argv[i],
				uevm_last_error());
			worst = 2;
			continue;
		}
		rc = do_label ? label(ctx, f) : verify(ctx, f, v);
		if (rc > worst)
			worst = rc;
		uevm_file_free(f);
	}
	uevm_verdict_free(v);
	uevm_ctx_free(ctx);
	return worst;
}
