// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm: the command table and dispatch. */
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <getopt.h>
#include "help.h"
#include "prog.h"
#include "report.h"

static const struct command commands[] = {
	{ "label", cmd_label, "write security.ima and security.evm",
	  "[-r|-d] [-P] [--root DIR] [--exclude GLOB]... [--exclude-from FILE] [-x] [-j N] [-v|-q] [--json|--ndjson] [-a ALGO] [--uuid UUID|none] [--m32] --hmac-key KEY [--manifest FILE [--sign-key KEY]] PATH..." },
	{ "verify", cmd_verify, "check labels; report tampered files",
	  "[-r|-d] [-P] [--root DIR] [--exclude GLOB]... [--exclude-from FILE] [-x] [-j N] [-v|-q] [--json|--ndjson] [--min-hash ALGO] [--uuid UUID|none] [--m32] [--imasig] [--fix-evm-sig] [--hmac-key KEY] [--cert CERT]... [--allow-weak-keys] [--manifest FILE] PATH..." },
	{ "diff", cmd_diff, "what changed between two manifests of labelled trees",
	  "[--json] [--hmac-key KEY] [--cert CERT]... [--allow-weak-keys] MANIFEST1 MANIFEST2" },
	{ "hmac", cmd_hmac, "print the security.evm value a file would get",
	  "[--json|--ndjson] [--uuid UUID|none] [--m32] --hmac-key KEY FILE..." },
	{ "ima-hash", cmd_ima_hash, "print the security.ima value a file would get",
	  "[--json|--ndjson|-0] [-a ALGO] FILE..." },
	{ "sign", cmd_sign, "write IMA/EVM signatures (no HMAC key needed)",
	  "[-r|-d] [-P] [--root DIR] [--exclude GLOB]... [--exclude-from FILE] [-x] [-j N] [-v|-q] [--json|--ndjson] [--imasig] [--evm] [--portable] [--sigv3] -k KEY [--pass-file FILE] [--keyid-from-cert CERT|--keyid HEX] [-a ALGO] [--uuid UUID|none] [--allow-weak-keys] PATH..." },
	{ "evmctl", cmd_evmctl, "evmctl-compatible command line (see uevm-evmctl(1))",
	  "COMMAND [OPTION...]" },
	{ "clear", cmd_clear, "remove security.ima and security.evm",
	  "[-r|-d] [-P] [--root DIR] [--exclude GLOB]... [--exclude-from FILE] [-x] [-j N] [-v|-q] [--json|--ndjson] PATH..." },
	{ "key", cmd_key, "generate, protect, load and inspect the HMAC key",
	  "generate|load|status|export|import [OPTION...] (see uevm-key(1))" },
	{ "policy", cmd_policy, "check an IMA policy file, print a built-in policy",
	  "check [-v] FILE | show tcb|appraise_tcb|secure_boot|... | load [--socket PATH] FILE" },
	{ "measurements", cmd_measurements, "show, replay, verify and add to IMA measurement lists",
	  "show|replay|verify|add [OPTION...] LIST | daemon [OPTION...] (see uevm-measurements(1))" },
	{ "mount", cmd_mount, "mount a tree through uevmfs(8): EVM and IMA on every access",
	  "SOURCE [MOUNTPOINT] [-o OPTION[,OPTION...]] [-f] [-d] [-s] [--hmac-key KEY]" },
	{ "runtime-policy", cmd_runtime_policy, "make a Keylime runtime policy, check a list against one",
	  "create [OPTION...] [PATH...] | check [OPTION...] POLICY LIST (see uevm-runtime-policy(1))" },
	{ "status", cmd_status, "what the running uevmd(8) enforces, and its counters",
	  "[--policy] [--socket PATH]" },
	{ "enable", cmd_enable, "initialise EVM in uevmd(8) (echo 1 > evm), set its mode",
	  "[--mode enforce|log|fix|off] [--socket PATH]" },
};

const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

void commands_list(FILE *fp)
{
	fprintf(fp, "Usage: %s COMMAND [OPTION...] [ARG...]\n\nCommands:\n",
		prog_name);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(fp, "  %-14s %s\n", commands[i].name, commands[i].summary);
	fprintf(fp, "\n'%s COMMAND --help' (or -h, or '%s help COMMAND') shows a "
		"command's options;\n'%s --version' (-V) its version; man uevm has "
		"the details.\n", prog_name, prog_name, prog_name);
}

static int run(int argc, char **argv)
{
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		commands_list(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "help"))
		return help_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
	    !strcmp(argv[1], "version")) {
		printf("uevm %s\n", UEVM_VERSION);
		return 0;
	}
	/* The commands say what is wrong with an option themselves
	 * (opt_fail in programs/help.c), naming the commands that have it. */
	opterr = 0;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].func(&commands[i], argc - 1, argv + 1);
	error_msg("unknown command '%s'", argv[1]);
	commands_list(stderr);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	/* The HMAC key lives in this process: no core dumps, no ptrace by
	 * other users' processes. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

	/* Installed as (a link named) evmctl: evmctl's command line. */
	if (argc > 0 && !strcmp(strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1
						       : argv[0], "evmctl"))
		return evmctl_main(argc, argv);

	if (argc < 2) {
		commands_list(stderr);
		return EXIT_USAGE;
	}
	/* evmctl's command line stays evmctl's, write errors included. */
	if (!strcmp(argv[1], "evmctl"))
		return cmd_evmctl(NULL, argc - 1, argv + 1);
	/* A report lost to a full disk or a closed pipe is an error. */
	return report_close_stdout(run(argc, argv));
}
