// SPDX-License-Identifier: LGPL-2.1-or-later
/* Per-thread "why did that fail" text, so errors name their cause. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
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

static uevm_warn_fn warn_fn;
static void *warn_arg;

UEVM_EXPORT void uevm_set_warn_handler(uevm_warn_fn fn, void *arg)
{
	warn_fn = fn;
	warn_arg = arg;
}

void uevm_warn(const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (warn_fn)
		warn_fn(warn_arg, msg);
	else
		fprintf(stderr, "%s: warning: %s\n", program_invocation_short_name, msg);
}

UEVM_EXPORT const char *uevm_version(void)
{
	return UEVM_VERSION;
}

/* Structs that carry their size start with it (see uevm/uevm.h). */
void uevm_struct_init(void *obj, size_t size, const void *def, size_t ours)
{
	size_t n = size < ours ? size : ours;

	memcpy(obj, def, n);
	if (size > ours)
		memset((uint8_t *)obj + ours, 0, size - ours);
	if (size >= sizeof(size_t))
		memcpy(obj, &size, sizeof(size_t));
}

int uevm_struct_in(const void *obj, size_t min, void *out, size_t ours,
		   const char *what)
{
	size_t size;

	if (!obj)
		return uevm_err(EINVAL, "%s: NULL", what);
	memcpy(&size, obj, sizeof(size));
	if (size < min)
		return uevm_err(EINVAL,
				"%s: size %zu, not set by its init function",
				what, size);
	for (size_t i = ours; i < size; i++)
		if (((const uint8_t *)obj)[i])
			return uevm_err(EINVAL,
					"%s: sets members this library (%s) does not know",
					what, UEVM_VERSION);
	memcpy(out, obj, size < ours ? size : ours);
	return 0;
}
