/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `uevm CMD --help`, `uevm help CMD` and the messages for options a command
 * does not take.  programs/help.c holds, per command and subcommand, a
 * description and a table of every option it accepts; the getopt tables
 * stay in the cmd_*.c files, and tests/integration/cli_help.sh checks that
 * every option they accept is in these tables.
 */
#ifndef UEVM_HELP_H
#define UEVM_HELP_H

#include <getopt.h>
#include <stdio.h>

struct command;

struct help_opt {
	char short_name;	/* 0: none */
	const char *long_name;	/* NULL: none */
	const char *arg;	/* NULL: takes no argument */
	const char *text;	/* one line */
};

struct help_entry {
	const char *name;	/* "label", "key generate", ... */
	const char *usage;	/* NULL: the command table's (programs/uevm.c) */
	const char *about;	/* one paragraph */
	const struct help_opt *opts;	/* ends with a zeroed row; NULL: none */
};

/* The command table (programs/uevm.c). */
const struct command *command_find(const char *name);
void commands_list(FILE *fp);

const struct help_entry *help_find(const char *name);
/* Usage, description and the option table of NAME ("key generate") on
 * stdout; 0, or EXIT_USAGE (message printed) for an unknown name. */
int help_show(const char *name);
/* `uevm help [CMD [SUB]]`. */
int help_main(int argc, char **argv);

/*
 * An option error in command NAME's getopt loop: call it for '?' (with
 * opterr 0) and for an option getopt took but the command refuses (C is
 * then what getopt returned).  -h gets the help (returns 0); an option of
 * other commands is named with them; anything else gets getopt's usual
 * message.  Returns EXIT_USAGE after a message.
 */
int opt_fail(const char *name, int c, int argc, char **argv,
	     const char *shortopts, const struct option *longopts);
/* OPT ("--size", "-k") is not an option of NAME: say so, and where it is. */
int opt_not_here(const char *name, const char *opt);

#endif
