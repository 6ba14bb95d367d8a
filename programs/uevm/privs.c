// SPDX-License-Identifier: GPL-2.0-or-later
/* Privileges a command needs, checked once before it walks a tree. */
#include <stdlib.h>
#include <string.h>
#include "prog.h"

#define CAP_SYS_ADMIN_BIT 21

/* The effective capability set, from /proc/self/status (no libcap). */
static int cap_effective(unsigned long long *caps)
{
	FILE *fp = fopen("/proc/self/status", "re");
	char line[256];
	int ret = -1;

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, "CapEff:", 7)) {
			*caps = strtoull(line + 7, NULL, 16);
			ret = 0;
			break;
		}
	fclose(fp);
	return ret;
}

int need_cap_sys_admin(const char *name, const char *what)
{
	unsigned long long caps;

	/* Unknown (no /proc): let the kernel answer per object. */
	if (cap_effective(&caps) || (caps >> CAP_SYS_ADMIN_BIT) & 1)
		return 0;
	fprintf(stderr, "%s %s: %s security.* attributes needs CAP_SYS_ADMIN, "
		"which this process does not have: run it as root\n", prog_name,
		name, what);
	return -1;
}
