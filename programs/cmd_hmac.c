// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm hmac: print the security.evm value each file would get. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "prog.h"

struct print_state {
	const struct uevm_ctx *ctx;
	int errors;
};

static int print_hmac(const struct uevm_file *f, const char *path, int err,
		      void *arg)
{
	struct print_state *s = arg;
	uint8_t hmac[UEVM_HMAC_SIZE];
	char hex[2 * UEVM_HMAC_SIZE + 1];

	if (!err)
		err = uevm_evm_calc_hmac(s->ctx, f, NULL, NULL, 0, hmac);
	if (err == -ENODATA) {
		fputs("(none)  ", stdout);
		fput_path(stdout, path);
		fputs("  # no EVM-protected xattr: security.evm would be removed\n", stdout);
		return 0;
	}
	if (err) {
		file_error(path, "cannot compute the HMAC", err);
		s->errors++;
		return 0;
	}
	hex_encode(hmac, sizeof(hmac), hex);
	printf("%02x%s  ", EVM_XATTR_HMAC, hex);
	fput_path(stdout, path);
	putchar('\n');
	explicit_bzero(hmac, sizeof(hmac));
	return 0;
}

int cmd_hmac(const struct command *cmd, int argc, char **argv)
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
		if (c == '?' || strchr("arxjv", c) || c == OPT_JSON) {
			free(o.extra_xattrs);
			return opt_fail(cmd->name, c, argc, argv, COMMON_SHORT, longopts);
		}
		if (common_opt(&o, c, optarg) <= 0) {
			usage(cmd, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	if (common_ctx(&o, true, &ctx))
		return EXIT_USAGE;
	s.ctx = ctx;
	o.walk.jobs = 1;	/* keep the order of the arguments */
	/* One file per PATH, taken as named: no -r, -P or -d here. */
	o.walk.refuse_dir_roots = false;
	o.walk.no_dereference = true;
	o.walk.allow_leading_links = true;
	uevm_walk((const char *const *)argv + optind, (size_t)(argc - optind),
		  &o.walk, print_hmac, &s);
	uevm_ctx_free(ctx);
	free(o.extra_xattrs);
	return s.errors ? EXIT_ERROR : 0;
}
