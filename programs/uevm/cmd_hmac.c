// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm hmac: print the security.evm value each file would get. */
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

static const char none_detail[] =
	"no EVM-protected xattr: security.evm would be removed";

/* Text: VALUE  PATH, or (none)  PATH  # why; errors went to stderr. */
static void hmac_text(FILE *fp, const struct report_obj *o, void *arg)
{
	(void)arg;
	if (o->error)
		return;
	fprintf(fp, "%s  ", o->value ? o->value : "(none)");
	fput_path(fp, o->path);
	if (!o->value)
		fprintf(fp, "  # %s", none_detail);
	fputc('\n', fp);
}

static int print_hmac(const struct uevm_file *f, const char *path, int err,
		      void *arg)
{
	struct print_state *s = arg;
	struct report_obj obj = { .path = path, .st = f ? &f->st : NULL };
	uint8_t hmac[UEVM_HMAC_SIZE];
	char hex[2 * UEVM_HMAC_SIZE + 3], why[600];

	s->total++;
	if (!err)
		err = uevm_evm_calc_hmac(s->ctx, f, NULL, NULL, 0, hmac);
	if (err == -ENODATA) {
		obj.ok = true;
		obj.status = "none";
		obj.detail = none_detail;
		report_object(&s->report, &obj);
		return 0;
	}
	if (err) {
		snprintf(why, sizeof(why), "cannot compute the HMAC: %s",
			 *uevm_last_error() ? uevm_last_error() : strerror(-err));
		file_error(path, "cannot compute the HMAC", err);
		s->errors++;
		obj.error = why;
		report_object(&s->report, &obj);
		return 0;
	}
	snprintf(hex, 3, "%02x", EVM_XATTR_HMAC);
	hex_encode(hmac, sizeof(hmac), hex + 2);
	explicit_bzero(hmac, sizeof(hmac));
	s->computed++;
	obj.ok = true;
	obj.status = "computed";
	obj.value = hex;
	report_object(&s->report, &obj);
	return 0;
}

int cmd_hmac(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { COMMON_LONG, { NULL, 0, NULL, 0 } };
	struct common_opts o;
	struct print_state s = { 0 };
	struct uevm_ctx *ctx;
	int c, ret;

	common_opts_init(&o);
	while ((c = getopt_long(argc, argv, COMMON_SHORT, longopts, NULL)) != -1) {
		if (c == OPT_HELP)
			return help_show(cmd->name);
		if (c == '?' || strchr("arxjvq", c)) {
			free(o.extra_xattrs);
			return opt_fail(cmd->name, c, argc, argv, COMMON_SHORT, longopts);
		}
		if (common_opt(&o, c, optarg) <= 0) {
			usage(cmd, stderr);
			free(o.extra_xattrs);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(cmd, stderr);
		free(o.extra_xattrs);
		return EXIT_USAGE;
	}
	if (report_check_opts("hmac", &o)) {
		free(o.extra_xattrs);
		return EXIT_USAGE;
	}
	if (common_ctx(&o, true, &ctx))
		return EXIT_USAGE;
	s.ctx = ctx;
	report_init(&s.report, "hmac", report_format_of(o.json, o.ndjson),
		    REPORT_VERBOSE, (const char *const *)argv + optind,
		    (size_t)(argc - optind), hmac_text, NULL);
	o.walk.jobs = 1;	/* keep the order of the arguments */
	/* One file per PATH, taken as named: no -r, -P or -d here. */
	o.walk.refuse_dir_roots = false;
	o.walk.no_dereference = true;
	o.walk.allow_leading_links = true;
	walk_tree((const char *const *)argv + optind, (size_t)(argc - optind),
		  &o.walk, print_hmac, &s);
	uevm_ctx_free(ctx);
	free(o.extra_xattrs);
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
