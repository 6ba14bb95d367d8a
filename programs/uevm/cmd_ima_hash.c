// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm ima-hash: print the security.ima value each file would get. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "prog.h"
#include "report.h"

struct print_state {
	const struct uevm_ctx *ctx;
	struct report report;
	unsigned long total, computed, errors;
};

/* Text: VALUE  PATH; errors went to standard error.  With -0 the path's
 * exact bytes and a NUL after each record, for xargs -0 and scripts. */
static void ima_text(FILE *fp, const struct report_obj *o, void *arg)
{
	const bool *nul = arg;

	if (o->error)
		return;
	fprintf(fp, "%s  ", o->value);
	if (*nul) {
		fputs(o->path, fp);
		fputc('\0', fp);
		return;
	}
	fput_path(fp, o->path);
	fputc('\n', fp);
}

static int print_ima(const struct uevm_file *f, const char *path, int err,
		     void *arg)
{
	struct print_state *s = arg;
	struct report_obj obj = { .path = path, .st = f ? &f->st : NULL };
	uint8_t val[2 + UEVM_MAX_DIGEST_SIZE];
	char hex[2 * sizeof(val) + 1], why[600];
	const char *what = "cannot hash";
	size_t len;

	s->total++;
	if (!err && !S_ISREG(f->st.st_mode)) {
		uevm_clear_last_error();
		err = -EINVAL;
		what = "not a regular file";
	}
	if (!err)
		err = uevm_ima_calc_xattr(s->ctx, f, val, &len);
	if (err) {
		snprintf(why, sizeof(why), "%s: %s", what,
			 *uevm_last_error() ? uevm_last_error() : strerror(-err));
		file_error(path, what, err);
		s->errors++;
		obj.error = why;
		report_object(&s->report, &obj);
		return 0;
	}
	hex_encode(val, len, hex);
	s->computed++;
	obj.ok = true;
	obj.status = "computed";
	obj.value = hex;
	report_object(&s->report, &obj);
	return 0;
}

int cmd_ima_hash(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		COMMON_LONG,
		{ "null", no_argument, NULL, '0' },
		{ NULL, 0, NULL, 0 },
	};
	struct common_opts o;
	struct print_state s = { 0 };
	struct uevm_ctx *ctx;
	bool nul = false;
	int c, ret;

	common_opts_init(&o);
	while ((c = getopt_long(argc, argv, COMMON_SHORT "0", longopts, NULL)) != -1) {
		if (c == OPT_HELP)
			return help_show(cmd->name);
		if (c == '0') {
			nul = true;
			continue;
		}
		if (c != 'a' && c != OPT_JSON && c != OPT_NDJSON)
			return opt_fail(cmd->name, c, argc, argv, COMMON_SHORT "0", longopts);
		if (common_opt(&o, c, optarg) <= 0) {
			usage(cmd, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	if (report_check_opts("ima-hash", &o))
		return EXIT_USAGE;
	if (nul && (o.json || o.ndjson)) {
		error_msg("ima-hash: -0 and --json/--ndjson exclude each other");
		return EXIT_USAGE;
	}
	if (common_ctx(&o, false, &ctx))
		return EXIT_USAGE;
	s.ctx = ctx;
	report_init(&s.report, "ima-hash", report_format_of(o.json, o.ndjson),
		    REPORT_VERBOSE, (const char *const *)argv + optind,
		    (size_t)(argc - optind), ima_text, &nul);
	o.walk.jobs = 1;
	/* One file per PATH, taken as named: no -r, -P or -d here. */
	o.walk.refuse_dir_roots = false;
	o.walk.no_dereference = true;
	o.walk.allow_leading_links = true;
	walk_tree((const char *const *)argv + optind, (size_t)(argc - optind),
		  &o.walk, print_ima, &s);
	uevm_ctx_free(ctx);
	{
		const struct report_count counts[] = {
			{ "total", s.total },
			{ "computed", s.computed },
			{ "errors", s.errors },
			{ "warnings", 0 },
		};

		ret = report_finish(&s.report, counts, sizeof(counts) / sizeof(counts[0]));
	}
	report_free(&s.report);
	return s.errors || ret ? EXIT_ERROR : 0;
}
