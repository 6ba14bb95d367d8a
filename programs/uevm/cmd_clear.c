// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm clear: remove security.ima and security.evm (like evmctl ima_clear). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "prog.h"
#include "report.h"

struct clear_state {
	struct report report;
	atomic_ulong total;
	atomic_ulong cleared;
	atomic_ulong errors;
};

static int clear_one(const struct uevm_file *f, const char *path, int err,
		     void *arg)
{
	static const char *const names[] = { XATTR_NAME_EVM, XATTR_NAME_IMA };
	struct clear_state *s = arg;
	struct report_obj obj = { .path = path, .ok = true, .status = "cleared" };

	atomic_fetch_add(&s->total, 1);
	if (err) {
		report_error(&s->report, &s->errors, path, NULL, "cannot open", err);
		return 0;
	}
	/* security.evm first: a file never keeps an HMAC over a hash that
	 * is gone. */
	for (int i = 0; i < 2; i++) {
		int r = uevm_removexattr(f, names[i]);

		if (r && r != -ENODATA && r != -EOPNOTSUPP) {
			uevm_clear_last_error();
			report_error(&s->report, &s->errors, path, &f->st, names[i], r);
			return 0;
		}
	}
	atomic_fetch_add(&s->cleared, 1);
	obj.st = &f->st;
	if (s->report.level == REPORT_VERBOSE)
		report_object(&s->report, &obj);
	return 0;
}

int cmd_clear(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { COMMON_LONG, WALK_LONG,
						  { NULL, 0, NULL, 0 } };
	struct common_opts o;
	struct clear_state s = { 0 };
	int c, ret;

	common_opts_init(&o);
	while ((c = getopt_long(argc, argv, COMMON_SHORT WALK_SHORT, longopts, NULL)) != -1) {
		if (c == OPT_HELP)
			return help_show(cmd->name);
		if (!(strchr("rxjvq", c) || c == OPT_JSON || c == OPT_NDJSON || walk_opt(c)))
			return opt_fail(cmd->name, c, argc, argv, COMMON_SHORT WALK_SHORT, longopts);
		if (common_opt(&o, c, optarg) <= 0) {
			usage(cmd, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	if (need_cap_sys_admin(cmd->name, "removing"))
		return EXIT_ERROR;
	if (report_check_opts("clear", &o))
		return EXIT_USAGE;
	report_init(&s.report, "clear", report_format_of(o.json, o.ndjson),
		    report_level_of(&o), (const char *const *)argv + optind,
		    (size_t)(argc - optind), report_status_text, NULL);
	walk_tree((const char *const *)argv + optind, (size_t)(argc - optind),
		  &o.walk, clear_one, &s);
	{
		const struct report_count counts[] = {
			{ "total", atomic_load(&s.total) },
			{ "cleared", atomic_load(&s.cleared) },
			{ "errors", atomic_load(&s.errors) },
			{ "warnings", 0 },
		};

		ret = report_finish(&s.report, counts, sizeof(counts) / sizeof(counts[0]));
	}
	report_free(&s.report);
	return atomic_load(&s.errors) || ret ? EXIT_ERROR : 0;
}
