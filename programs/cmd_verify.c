// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm verify: appraise labelled files and say which were tampered with. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "prog.h"

struct verify_state {
	const struct uevm_ctx *ctx;
	const struct common_opts *o;
	struct progress progress;
	atomic_ulong counts[INTEGRITY_STATUS_COUNT];
	atomic_ulong failed;
	atomic_ulong errors;
	atomic_ulong total;
	bool first_json;
};

static const char *type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return "file";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symlink";
	case S_IFCHR: return "char-device";
	case S_IFBLK: return "block-device";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	}
	return "unknown";
}

static void json_entry(struct verify_state *s, const char *path,
		       const struct uevm_file *f, const struct uevm_verdict *v,
		       bool ok, const char *error)
{
	FILE *fp = stdout;

	fputs(s->first_json ? "\n    " : ",\n    ", fp);
	s->first_json = false;
	fputs("{\"path\": ", fp);
	fput_json_string(fp, path);
	if (error) {
		fputs(", \"error\": ", fp);
		fput_json_string(fp, error);
		fputc('}', fp);
		return;
	}
	fprintf(fp, ", \"type\": \"%s\", \"ok\": %s, \"status\": \"%s\", \"evm_status\": \"%s\"",
		type_name(f->st.st_mode), ok ? "true" : "false",
		integrity_status_name(v->status),
		integrity_status_name(v->evm_status));
	if (S_ISREG(f->st.st_mode))
		fprintf(fp, ", \"ima_status\": \"%s\"", integrity_status_name(v->ima_status));
	fputs(", \"cause\": ", fp);
	if (v->cause)
		fput_json_string(fp, v->cause);
	else
		fputs("null", fp);
	if (v->detail[0]) {
		fputs(", \"detail\": ", fp);
		fput_json_string(fp, v->detail);
	}
	fputc('}', fp);
}

static int verify_one(const struct uevm_file *f, const char *path, int err,
		      void *arg)
{
	struct verify_state *s = arg;
	struct uevm_verdict v;
	bool ok;
	int ret;

	atomic_fetch_add(&s->total, 1);
	if (!err) {
		ret = uevm_verify_file(s->ctx, f, &v);
		if (ret)
			err = ret;
	}
	if (err) {
		char why[600];

		snprintf(why, sizeof(why), "%s", *uevm_last_error() ?
			 uevm_last_error() : strerror(-err));
		atomic_fetch_add(&s->errors, 1);
		out_lock_acquire();
		progress_clear_line();
		if (s->o->json) {
			json_entry(s, path, NULL, NULL, false, why);
		} else {
			fputs("ERROR ", stdout);
			fput_path(stdout, path);
			fputs(": cannot verify: ", stdout);
			fput_text(stdout, why);
			putchar('\n');
		}
		out_lock_release();
		return 0;
	}
	ok = uevm_verdict_ok(f, &v);
	atomic_fetch_add(&s->counts[v.status], 1);
	atomic_fetch_add(&s->progress.files, 1);
	if (S_ISREG(f->st.st_mode))
		atomic_fetch_add(&s->progress.bytes, (unsigned long)f->st.st_size);
	if (!ok)
		atomic_fetch_add(&s->failed, 1);
	if (ok && !s->o->verbose)
		return 0;
	out_lock_acquire();
	progress_clear_line();
	if (s->o->json) {
		json_entry(s, path, f, &v, ok, NULL);
	} else {
		/* STATUS PATH: cause: detail -- one line per file */
		printf("%s ", ok ? "OK" : "FAIL");
		fput_path(stdout, path);
		printf(": %s", integrity_status_name(v.status));
		if (v.cause)
			printf(" (%s)", v.cause);
		/* The detail may quote values read from the file's xattrs. */
		if (v.detail[0]) {
			fputs(": ", stdout);
			fput_text(stdout, v.detail);
		}
		putchar('\n');
	}
	out_lock_release();
	return 0;
}

int cmd_verify(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { COMMON_LONG, SIG_VERIFY_LONG,
						  { NULL, 0, NULL, 0 } };
	struct common_opts o;
	struct sig_verify_opts so = { 0 };
	struct verify_state s = { .first_json = true };
	struct uevm_ctx *ctx;
	unsigned long failed, errors;
	int c;

	common_opts_init(&o);
	while ((c = getopt_long(argc, argv, COMMON_SHORT, longopts, NULL)) != -1) {
		if (c == OPT_HELP) {
			usage(cmd, stdout);
			return 0;
		}
		if (sig_verify_opt(&so, c, optarg) > 0)
			continue;
		if (common_opt(&o, c, optarg) <= 0 || c == 'a') {
			usage(cmd, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		error_msg("verify: no PATH given");
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	/* Certificates alone are enough for signed trees. */
	if (common_ctx(&o, so.ncerts == 0, &ctx))
		return EXIT_USAGE;
	if (sig_verify_apply(&so, ctx)) {
		uevm_ctx_free(ctx);
		return EXIT_USAGE;
	}
	sig_verify_opts_free(&so);
	s.ctx = ctx;
	s.o = &o;
	if (o.json)
		fputs("{\n  \"results\": [", stdout);
	progress_start(&s.progress, "verifying");
	uevm_walk((const char *const *)argv + optind, (size_t)(argc - optind),
		  &o.walk, verify_one, &s);
	progress_stop(&s.progress);
	failed = atomic_load(&s.failed);
	errors = atomic_load(&s.errors);
	if (o.json) {
		fputs("\n  ],\n  \"summary\": {", stdout);
		for (int i = 0; i < INTEGRITY_STATUS_COUNT; i++)
			printf("\"%s\": %lu, ", integrity_status_name(i),
			       atomic_load(&s.counts[i]));
		printf("\"total\": %lu, \"failed\": %lu, \"errors\": %lu}\n}\n",
		       atomic_load(&s.total), failed, errors);
	} else {
		printf("Summary: %lu objects, %lu failed, %lu errors\n",
		       atomic_load(&s.total), failed, errors);
		for (int i = 0; i < INTEGRITY_STATUS_COUNT; i++)
			if (atomic_load(&s.counts[i]))
				printf("  %-15s %lu\n", integrity_status_name(i),
				       atomic_load(&s.counts[i]));
		if (errors)
			printf("  %-15s %lu\n", "error", errors);
	}
	uevm_ctx_free(ctx);
	free(o.extra_xattrs);
	fflush(stdout);
	if (failed)
		return EXIT_VERIFY_FAILED;
	return errors ? EXIT_ERROR : 0;
}
