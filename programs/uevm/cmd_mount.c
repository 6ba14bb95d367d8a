// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm mount: run uevmfs(8), the FUSE filesystem that enforces EVM and IMA. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "prog.h"

/* uevmfs beside this uevm (a build directory, or the same bin/), else
 * from PATH. */
static void find_uevmfs(char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, len, "%s/uevmfs", self);
			if (access(out, X_OK) == 0)
				return;
		}
	}
	snprintf(out, len, "uevmfs");
}

int cmd_mount(const struct command *cmd, int argc, char **argv)
{
	char path[PATH_MAX + 16];
	char **args;

	if (argc < 2) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	/* -h anywhere (not as the value of -o): uevm's help, not uevmfs's. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o")) {
			i++;
			continue;
		}
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return help_show(cmd->name);
	}
	find_uevmfs(path, sizeof(path));
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args) {
		error_msg("out of memory");
		return EXIT_ERROR;
	}
	args[0] = "uevmfs";
	for (int i = 1; i < argc; i++)
		args[i] = argv[i];
	if (strchr(path, '/'))
		execv(path, args);
	else
		execvp(path, args);
	error_msg("cannot run %s: %s", path, strerror(errno));
	free(args);
	return EXIT_ERROR;
}
