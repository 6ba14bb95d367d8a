/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * For targets that link programs/evmctl/evmctl_eventlog.c: the evmctl mode's
 * state and logging, which live in programs/evmctl/evmctl_compat.c with the rest
 * of the command line.  Messages are formatted (so that a bad format or
 * argument still trips the sanitizers) and dropped.
 */
#ifndef UEVM_FUZZ_EVMCTL_STUBS_H
#define UEVM_FUZZ_EVMCTL_STUBS_H

#include <stdarg.h>
#include "evmctl.h"

struct evmctl ev;

void ev_log(int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	(void)level;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
}

void ev_log_dump(int level, const void *p, size_t len, bool newline)
{
	char hex[3];

	(void)level;
	(void)newline;
	/* Read every byte, as the real dump does. */
	for (size_t i = 0; i < len; i++)
		snprintf(hex, sizeof(hex), "%02x", ((const uint8_t *)p)[i]);
}

#endif
