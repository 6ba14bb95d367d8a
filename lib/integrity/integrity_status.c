// SPDX-License-Identifier: LGPL-2.1-or-later
/* Names of enum integrity_status, spelled as the kernel's audit records. */
#include "lib_private.h"

static const char *const status_names[INTEGRITY_STATUS_COUNT] = {
	[INTEGRITY_PASS] = "pass",
	[INTEGRITY_PASS_IMMUTABLE] = "pass_immutable",
	[INTEGRITY_FAIL] = "fail",
	[INTEGRITY_FAIL_IMMUTABLE] = "fail_immutable",
	[INTEGRITY_NOLABEL] = "no_label",
	[INTEGRITY_NOXATTRS] = "no_xattrs",
	[INTEGRITY_UNKNOWN] = "unknown",
};

UEVM_EXPORT const char *integrity_status_name(enum integrity_status s)
{
	if ((unsigned int)s >= INTEGRITY_STATUS_COUNT)
		return "invalid";
	return status_names[s];
}
