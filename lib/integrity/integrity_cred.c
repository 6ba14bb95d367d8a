// SPDX-License-Identifier: LGPL-2.1-or-later
/* The caller's credentials: uids, gids and capabilities of the process
 * whose operation is checked (not those of the front-end). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "integrity_private.h"

/* Our own user namespace, looked up once.  It cannot change under the
 * callers that ask about other processes (uevmd, uevmfs): the kernel
 * refuses unshare(CLONE_NEWUSER) and setns() into a user namespace to a
 * process with more than one thread.  And a single-threaded caller that
 * moved into a new namespace since only errs on the safe side: the one
 * remembered is an ancestor of it, where capabilities hold in the new one
 * too, and a process in the new one has its capabilities ignored.
 *
 * A namespace is known by its link's text, "user:[INUM]": the inode
 * number nsfs gives it, unique among the namespaces that exist, and ours
 * exists while we run.  readlink() costs half a stat() of the link, which
 * pins the namespace's dentry, on every permission event of a process
 * with capabilities. */
static char self_ns[64];
static pthread_once_t self_ns_once = PTHREAD_ONCE_INIT;
static bool self_ns_ok;

static bool ns_link(const char *path, char *buf, size_t size)
{
	ssize_t n = readlink(path, buf, size - 1);

	if (n <= 0 || (size_t)n >= size - 1)
		return false;
	buf[n] = '\0';
	return !strncmp(buf, "user:[", 6);
}

static void self_ns_init(void)
{
	self_ns_ok = ns_link("/proc/self/ns/user", self_ns, sizeof(self_ns));
}

/* Is PID in our user namespace?  Capabilities count only there: CapEff
 * shows what a process holds in its own namespace, and one of a user
 * namespace below ours holds none in ours (the kernel's cap_capable). */
static bool same_user_ns(pid_t pid)
{
	char path[64], ns[64];

	pthread_once(&self_ns_once, self_ns_init);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	return self_ns_ok && ns_link(path, ns, sizeof(ns)) && !strcmp(ns, self_ns);
}

/* One read of a small /proc file: open, read, close (no stdio: its
 * fstat and extra reads were a third of a permission event's calls). */
static uint32_t read_u32_file(const char *path)
{
	char buf[32], *end;
	unsigned long v;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return (uint32_t)-1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return (uint32_t)-1;
	buf[n] = '\0';
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (end == buf || errno)
		return (uint32_t)-1;
	return (uint32_t)v;
}

/* One line of /proc/PID/status (NUL-terminated, without its newline).
 * The kernel escapes control characters in Name, so a line is a line. */
static void status_line(char *line, struct integrity_cred *cred, int *have)
{
	unsigned int r, e, sv, fs;
	uint64_t cap;

	if (!strncmp(line, "Uid:", 4)) {
		if (sscanf(line + 4, "%u %u %u %u", &r, &e, &sv, &fs) == 4) {
			cred->uid = r;
			cred->euid = e;
			cred->suid = sv;
			*have |= 1;
		}
	} else if (!strncmp(line, "Gid:", 4)) {
		if (sscanf(line + 4, "%u %u %u %u", &r, &e, &sv, &fs) == 4) {
			cred->gid = r;
			cred->egid = e;
			cred->sgid = sv;
			*have |= 2;
		}
	} else if (!strncmp(line, "NoNewPrivs:", 11)) {
		cred->no_new_privs = strtoul(line + 11, NULL, 10) != 0;
		*have |= 8;
	} else if (!strncmp(line, "CapEff:", 7)) {
		if (sscanf(line + 7, "%" SCNx64, &cap) == 1) {
			cred->cap_effective = cap;
			*have |= 4;
		}
	} else if (!strncmp(line, "Tgid:", 5)) {
		cred->tgid = (pid_t)strtol(line + 5, NULL, 10);
	} else if (!strncmp(line, "Name:", 5)) {
		char *p = line + 5;

		p += strspn(p, " \t");
		snprintf(cred->comm, sizeof(cred->comm), "%s", p);
	}
}

/* Parse /proc/PID/status from FD line by line through a fixed buffer; a
 * line longer than the buffer (Groups: of a process in thousands of
 * groups) is skipped whole.  Name comes first, then Tgid, CapEff after Uid and Gid,
 * NoNewPrivs (Linux 4.10 on) after CapEff: once all are in, the rest is
 * not read. */
static int read_status(int fd, struct integrity_cred *cred)
{
	char buf[4096];
	size_t have = 0;
	bool skipping = false;
	int got = 0;

	while (got != 15) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *line, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		line = buf;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			*nl = '\0';
			if (!skipping)
				status_line(line, cred, &got);
			skipping = false;
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		if (have == sizeof(buf) - 1) {
			skipping = true;	/* no newline in a full buffer */
			have = 0;
		} else {
			memmove(buf, line, have);
		}
	}
	if (got != 15 && have && !skipping) {
		buf[have] = '\0';
		status_line(buf, cred, &got);
	}
	return got;
}

static int cred_status(pid_t pid, struct integrity_cred *cred)
{
	char path[64];
	int have, fd;

	memset(cred, 0, sizeof(*cred));
	cred->pid = pid;
	cred->auid = cred->ses = (uint32_t)-1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return uevm_err(errno, "cannot read %s: %m", path);
	have = read_status(fd, cred);
	close(fd);
	if ((have & 7) != 7)
		return uevm_err(ESRCH, "incomplete credentials in %s", path);
	return 0;
}

/* Capabilities count only in our user namespace (no stat when none). */
static void cred_ns(struct integrity_cred *cred)
{
	if (cred->cap_effective && !same_user_ns(cred->pid))
		cred->cap_effective = 0;
}

/* Read with the rest, while the task is surely the one that called:
 * read later (for an audit record only), a task killed in its wait
 * leaves -1, or its reused pid another login's ids (an attack review
 * made a refused open's record name no one that way). */
static void cred_ids(struct integrity_cred *cred)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/loginuid", (int)cred->pid);
	cred->auid = read_u32_file(path);
	snprintf(path, sizeof(path), "/proc/%d/sessionid", (int)cred->pid);
	cred->ses = read_u32_file(path);
}

UEVM_EXPORT int integrity_cred_from_pid(pid_t pid, struct integrity_cred *cred)
{
	int ret = cred_status(pid, cred);

	if (ret == 0) {
		cred_ns(cred);
		cred_ids(cred);
	}
	return ret;
}

UEVM_EXPORT void integrity_cred_self(struct integrity_cred *cred)
{
	if (integrity_cred_from_pid(getpid(), cred) < 0) {
		memset(cred, 0, sizeof(*cred));
		cred->pid = getpid();
		uid_t r, e, sv;
		gid_t gr, ge, gsv;

		getresuid(&r, &e, &sv);
		getresgid(&gr, &ge, &gsv);
		cred->uid = r;
		cred->euid = e;
		cred->suid = sv;
		cred->gid = gr;
		cred->egid = ge;
		cred->sgid = gsv;
		cred->auid = cred->ses = (uint32_t)-1;
	}
}

UEVM_EXPORT bool integrity_capable(const struct integrity_cred *cred, int cap)
{
	return cap >= 0 && cap < 64 && (cred->cap_effective >> cap) & 1;
}

UEVM_EXPORT void integrity_cred_for_exec(const struct uevm_file *f,
					 const struct integrity_cred *cur, int nosuid,
					 struct integrity_cred *out)
{
	struct statvfs sv;
	mode_t m = f->st.st_mode;
	bool setuid = m & S_ISUID, setgid = (m & S_ISGID) && (m & S_IXGRP);

	*out = *cur;
	if (nosuid < 0)	/* an unreadable mount flag counts as suid */
		nosuid = fstatvfs(f->fd, &sv) == 0 && (sv.f_flag & ST_NOSUID);
	if ((setuid || setgid) && !nosuid) {
		if (cur->no_new_privs) {
			/* cap_bprm_creds_from_file: no more than the caller had */
			out->euid = cur->uid;
			out->egid = cur->gid;
		} else {
			if (setuid)
				out->euid = f->st.st_uid;
			if (setgid)
				out->egid = f->st.st_gid;
		}
	}
	out->suid = out->euid;
	out->sgid = out->egid;
}
