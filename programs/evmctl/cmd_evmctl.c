// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm evmctl ...: evmctl's command line under the uevm command. */
#include <getopt.h>
#include "prog.h"

int cmd_evmctl(const struct command *cmd, int argc, char **argv)
{
	(void)cmd;
	/* argv[0] is "evmctl" here: messages and usage read as evmctl's. */
	argv[0] = (char *)"evmctl";
	opterr = 1;	/* evmctl's getopt messages, as evmctl prints them */
	return evmctl_main(argc, argv);
}
