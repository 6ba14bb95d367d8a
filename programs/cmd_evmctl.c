// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm evmctl ...: evmctl's command line under the uevm command. */
#include "prog.h"

int cmd_evmctl(const struct command *cmd, int argc, char **argv)
{
	(void)cmd;
	/* argv[0] is "evmctl" here: messages and usage read as evmctl's. */
	argv[0] = (char *)"evmctl";
	return evmctl_main(argc, argv);
}
