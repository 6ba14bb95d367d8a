// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket's request line: "VERB [ARG]...", words split by
 * spaces, at most CONTROL_MAX_ARGS of them; what follows the first newline
 * is ignored.  Apart from control.c so that a fuzzer can call it on a
 * buffer, without a socket or a running daemon.
 */
#include <string.h>
#include "uevmd.h"

void control_request_parse(char *buf, size_t len, struct control_request *r)
{
	char *save = NULL;

	memset(r, 0, sizeof(*r));
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (char *t = strtok_r(buf, " ", &save); t && r->argc < CONTROL_MAX_ARGS;
	     t = strtok_r(NULL, " ", &save))
		r->argv[r->argc++] = t;
	if (!r->argc)
		r->verb = CTL_EMPTY;
	else if (!strcmp(r->argv[0], "status"))
		r->verb = CTL_STATUS;
	else if (!strcmp(r->argv[0], "measurements") && r->argc >= 2)
		r->verb = CTL_MEASUREMENTS;
	else if (!strcmp(r->argv[0], "policy-show"))
		r->verb = CTL_POLICY_SHOW;
	else if (!strcmp(r->argv[0], "enable"))
		r->verb = CTL_ENABLE;
	else if (!strcmp(r->argv[0], "mode"))
		r->verb = CTL_MODE;
	else if (!strcmp(r->argv[0], "policy-load"))
		r->verb = CTL_POLICY_LOAD;
	else
		r->verb = CTL_UNKNOWN;
}

bool control_verb_privileged(enum control_verb verb)
{
	return verb != CTL_EMPTY && verb != CTL_STATUS && verb != CTL_MEASUREMENTS &&
	       verb != CTL_POLICY_SHOW;
}
