// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm clear: remove security.ima and security.evm (like evmctl ima_clear). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "prog.h"

static int clear_one(const struct uevm_file *f, const char *path, int err,
		     void *arg)
{
	atomic_ulong *errors = arg;
	static const char *const names[] = { XATTR_NAME_EVM, XATTR_NAME_IMA };

	if (err) {
		file_error(path, "cannot open", err);
		atomic_fetch_add(errors, 1);
		return 0;
	}
	/* security.evm first: a file never keeps an HMAC over a hash that
	 * is gone. */
	for (int i = 0; i < 2; i++) {
		int r = uevm_removexattr(f, names[i]);

		if (r && r != -ENODATA && r != -EOPNOTSUPP) {
			uevm_clear_last_error();
			file_error(path, names[i], r);
			atomic_fetch_add(errors, 1);
			return 0;
		}
	}
	return 0;
}

int cmd_clear(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { COMMON_LONG, WALK_LONG,
						  { NULL, 0, NULL, 0 } };
	struct common_opts o;
	atomic_ulong errors = 0;
	int c;

	common_opts_init(&o);
	while ((c = getopt_long(argc, argv, COMMON_SHORT WALK_SHORT, longopts, NULL)) != -1) {
		if (c == OPT_HELP)
			return help_show(cmd->name);
		if (!(strchr("rxj", c) || walk_opt(c)))
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
	uevm_walk((const char *const *)argv + optind, (size_t)(argc - optind),
		  &o.walk, clear_one, &errors);
	return atomic_load(&errors) ? EXIT_ERROR : 0;
}
