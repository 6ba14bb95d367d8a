// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm ima-hash: print the security.ima value each file would get. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "prog.h"

struct print_state {
	const struct uevm_ctx *ctx;
	int errors;
};

static int print_ima(const struct uevm_file *f, const char *path, int err,
		     void *arg)
{
	struct print_state *s = arg;
	uint8_t val[2 + UEVM_MAX_DIGEST_SIZE];
	char hex[2 * sizeof(val) + 1];
	size_t len;

	if (!err && !S_ISREG(f->st.st_mode)) {
		uevm_clear_last_error();
		err = -EINVAL;
		file_error(path, "not a regular file", err);
		s->errors++;
		return 0;
	}
	if (!err)
		err = uevm_ima_calc_xattr(s->ctx, f, val, &len);
	if (err) {
		file_error(path, "cannot hash", err);
		s->errors++;
		return 0;
	}
	hex_encode(val, len, hex);
	printf("%s  ", hex);
	fput_path(stdout, path);
	putchar('\n');
	return 0;
}

int cmd_ima_hash(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { COMMON_LONG, { NULL, 0, NULL, 0 } };
	struct common_opts o;
	struct print_state s = { 0 };
	struct uevm_ctx *ctx;
	int c;

	common_opts_init(&o);
	while ((c = getopt_long(argc, argv, COMMON_SHORT, longopts, NULL)) != -1) {
		if (c == OPT_HELP)
			return help_show(cmd->name);
		if (c != 'a')
			return opt_fail(cmd->name, c, argc, argv, COMMON_SHORT, longopts);
		if (common_opt(&o, c, optarg) <= 0) {
			usage(cmd, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	if (common_ctx(&o, false, &ctx))
		return EXIT_USAGE;
	s.ctx = ctx;
	o.walk.jobs = 1;
	/* One file per PATH, taken as named: no -r, -P or -d here. */
	o.walk.refuse_dir_roots = false;
	o.walk.no_dereference = true;
	o.walk.allow_leading_links = true;
	uevm_walk((const char *const *)argv + optind, (size_t)(argc - optind),
		  &o.walk, print_ima, &s);
	uevm_ctx_free(ctx);
	return s.errors ? EXIT_ERROR : 0;
}
