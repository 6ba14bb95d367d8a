// SPDX-License-Identifier: LGPL-2.1-or-later
/* The caller's credentials: uids, gids and capabilities of the process
 * whose operation is checked (not those of the front-end). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "integrity_private.h"

/* Is PID in our user namespace?  Capabilities count only there: CapEff
 * shows what a process holds in its own namespace, and one of a user
 * namespace below ours holds none in ours (the kernel's cap_capable). */
static bool same_user_ns(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if (stat(path, &a) < 0 || stat("/proc/self/ns/user", &b) < 0)
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static uint32_t read_u32_file(const char *path)
{
	FILE *fp = fopen(path, "re");
	unsigned long v = (unsigned long)-1;

	if (fp) {
		if (fscanf(fp, "%lu", &v) != 1)
			v = (unsigned long)-1;
		fclose(fp);
	}
	return (uint32_t)v;
}

UEVM_EXPORT int integrity_cred_from_pid(pid_t pid, struct integrity_cred *cred)
{
	char path[64], line[256];
	int have = 0;
	FILE *fp;

	memset(cred, 0, sizeof(*cred));
	cred->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return uevm_err(errno, "cannot read %s: %m", path);
	while (fgets(line, sizeof(line), fp)) {
		unsigned int r, e, sv, fs;
		uint64_t cap;

		if (sscanf(line, "Uid: %u %u %u %u", &r, &e, &sv, &fs) == 4) {
			cred->uid = r;
			cred->euid = e;
			have |= 1;
		} else if (sscanf(line, "Gid: %u %u %u %u", &r, &e, &sv, &fs) == 4) {
			cred->gid = r;
			cred->egid = e;
			have |= 2;
		} else if (sscanf(line, "CapEff: %" SCNx64, &cap) == 1) {
			cred->cap_effective = cap;
			have |= 4;
		} else if (!strncmp(line, "Name:", 5)) {
			char *p = line + 5;

			p += strspn(p, " \t");
			p[strcspn(p, "\n")] = '\0';
			snprintf(cred->comm, sizeof(cred->comm), "%s", p);
		}
	}
	fclose(fp);
	if (have != 7)
		return uevm_err(ESRCH, "incomplete credentials in %s", path);
	if (!same_user_ns(pid))
		cred->cap_effective = 0;
	snprintf(path, sizeof(path), "/proc/%d/loginuid", (int)pid);
	cred->auid = read_u32_file(path);
	snprintf(path, sizeof(path), "/proc/%d/sessionid", (int)pid);
	cred->ses = read_u32_file(path);
	return 0;
}

UEVM_EXPORT void integrity_cred_self(struct integrity_cred *cred)
{
	if (integrity_cred_from_pid(getpid(), cred) < 0) {
		memset(cred, 0, sizeof(*cred));
		cred->pid = getpid();
		cred->uid = getuid();
		cred->euid = geteuid();
		cred->gid = getgid();
		cred->egid = getegid();
		cred->auid = cred->ses = (uint32_t)-1;
	}
}

UEVM_EXPORT bool integrity_capable(const struct integrity_cred *cred, int cap)
{
	return cap >= 0 && cap < 64 && (cred->cap_effective >> cap) & 1;
}
