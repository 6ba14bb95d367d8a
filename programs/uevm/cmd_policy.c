// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm policy: check an IMA policy file, print a built-in policy. */
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "prog.h"
#include "ima_policy.h"

/* Policies are small; a bound keeps a wrong argument (a disk image, a
 * pipe that never ends) from eating memory. */
#define POLICY_MAX_SIZE (16u << 20)

static int read_all(const char *path, char **out, size_t *len)
{
	return read_file_all(path, POLICY_MAX_SIZE, (uint8_t **)out, len);
}

/* "FILE:LINE: message", the form editors jump to. */
static void report_parse_error(const char *path, unsigned int line)
{
	const char *msg = uevm_last_error();
	const char *rest = line ? strstr(msg, ": ") : NULL;

	fput_path(stderr, path);
	/* The message may quote the policy text: escaped like a path. */
	if (line && rest) {
		fprintf(stderr, ":%u: ", line);
		fput_text(stderr, rest + 2);
	} else {
		fputs(": ", stderr);
		fput_text(stderr, msg);
	}
	fputc('\n', stderr);
}

static int policy_check(const char *path, bool verbose)
{
	struct ima_policy *p;
	unsigned int line;
	size_t len = 0, n;
	char *text = NULL;
	int ret;

	uevm_clear_last_error();
	ret = read_all(path, &text, &len);
	if (ret) {
		file_error(path, "cannot read", ret);
		return EXIT_ERROR;
	}
	ret = ima_policy_parse_lines(text, len, &p, &line);
	free(text);
	if (ret == -ENOMEM) {
		file_error(path, "cannot parse", ret);
		return EXIT_ERROR;
	}
	if (ret) {
		report_parse_error(path, line);
		return EXIT_VERIFY_FAILED;
	}
	n = ima_policy_count(p);
	for (size_t i = 0; i < n; i++)
		if (ima_policy_rule_has_lsm(p, i)) {
			fput_path(stderr, path);
			fprintf(stderr, ":%u: warning: LSM conditions (obj_*, subj_*) "
				"never match in uevm: this rule has no effect\n",
				ima_policy_rule_line(p, i));
		}
	fput_path(stdout, path);
	printf(": valid, %zu rule%s\n", n, n == 1 ? "" : "s");
	if (verbose)
		ima_policy_write(p, stdout);
	ima_policy_free(p);
	return fflush(stdout) ? EXIT_ERROR : 0;
}

static int policy_show(const char *name)
{
	struct ima_policy *p;

	if (ima_policy_builtin(name, &p)) {
		error_msg("%s", uevm_last_error());
		return EXIT_USAGE;
	}
	ima_policy_write(p, stdout);
	ima_policy_free(p);
	return fflush(stdout) ? EXIT_ERROR : 0;
}

int cmd_policy(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	bool verbose = false;
	const char *sub;
	char name[64];
	int c;

	if (argc < 2) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	sub = argv[1];
	if (!strcmp(sub, "load"))	/* into the running uevmd: cmd_uevmd.c */
		return uevmd_policy_load(argc - 1, argv + 1);
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h"))
		return help_show(cmd->name);
	argc--;
	argv++;
	snprintf(name, sizeof(name), "policy %s", sub);
	if (strcmp(sub, "check") && strcmp(sub, "show")) {
		error_msg("unknown policy command '%s'", sub);
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	while ((c = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		if (c == OPT_HELP)
			return help_show(name);
		/* -v prints what check parsed; show has nothing to add. */
		if (c != 'v' || !strcmp(sub, "show"))
			return opt_fail(name, c, argc, argv, "v", longopts);
		verbose = true;
	}
	if (!strcmp(sub, "check") && optind == argc - 1)
		return policy_check(argv[optind], verbose);
	if (!strcmp(sub, "show") && optind == argc - 1)
		return policy_show(argv[optind]);
	usage(cmd, stderr);
	return EXIT_USAGE;
}
