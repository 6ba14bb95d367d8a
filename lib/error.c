// SPDX-License-Identifier: GPL-2.0-or-later
/* Per-thread "why did that fail" text, so errors name their cause. */
#include <stdio.h>
#include "lib_private.h"

static __thread char last_error[512];

int uevm_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return -err;
}

UEVM_EXPORT void uevm_clear_last_error(void)
{
	last_error[0] = '\0';
}

UEVM_EXPORT const char *uevm_last_error(void)
{
	return last_error;
}
