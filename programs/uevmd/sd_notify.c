// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The systemd notification protocol, by hand (no libsystemd): a datagram
 * to $NOTIFY_SOCKET ("@name" is an abstract socket) with "READY=1",
 * "WATCHDOG=1", "STATUS=...", "STOPPING=1", and "FDSTORE=1" with a
 * descriptor for the service manager to keep and give back at a restart
 * ($LISTEN_FDS, $LISTEN_FDNAMES).  Under `uevmd --supervise` the same
 * messages go over a socket pair the keeper made ($UEVMD_NOTIFY_FD): no
 * one else can write to it.  Without either (not started by systemd or
 * by the keeper) every call is a no-op.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "uevmd.h"

/* The keeper's socket pair, or -1. */
/* Our end of the keeper's socket pair: set by the keeper itself in the
 * child it forks (supervise.c), which runs on without an exec.  Never
 * taken from the environment, which a unit file can write. */
int uevmd_keeper_fd = -1;

static int keeper_fd(void)
{
	return uevmd_keeper_fd;
}

/* One datagram to $NOTIFY_SOCKET (or the keeper), with descriptors
 * (SCM_RIGHTS) if any. */
static int notify_send(const char *msg, const int *fds, int nfds)
{
	const char *e = getenv("NOTIFY_SOCKET");
	int kfd = keeper_fd();
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 8)];
	} cm;
	struct iovec iov = { (void *)msg, strlen(msg) };
	struct msghdr mh = { .msg_name = &sa, .msg_iov = &iov, .msg_iovlen = 1 };
	size_t n;
	int fd, ret = 0;

	if (kfd < 0 && (!e || !*e))
		return 0;
	if (nfds > 8)
		return -EINVAL;
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	if (kfd >= 0) {
		mh.msg_name = NULL;
		return sendmsg(kfd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ? -errno : 0;
	}
	n = strlen(e);
	if ((e[0] != '/' && e[0] != '@') || n >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, e, n);
	if (e[0] == '@')
		sa.sun_path[0] = '\0';
	mh.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (e[0] == '/'));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int sd_notifyf(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return notify_send(msg, NULL, 0);
}

int sd_notify_store_fd(const char *name, int fd)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
	return notify_send(msg, &fd, 1);
}

/* Only our own keeper (supervise.c): systemd's store would give the groups
 * back to a uevmd it starts by executing it, and that exec (of a binary
 * on a watched filesystem) would wait for an answer no one can give. */
bool sd_fdstore_available(void)
{
	int fd = keeper_fd();
	struct ucred uc;
	socklen_t l = sizeof(uc);

	/* The keeper that forked us is still there: the pair's other end
	 * is our parent (it re-parents to init when the keeper dies). */
	return fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &l) == 0 &&
	       uc.pid > 1 && uc.pid == getppid();
}

int sd_listen_fd(const char *name)
{
	const char *pid = getenv("LISTEN_PID"), *nfds = getenv("LISTEN_FDS");
	const char *names = getenv("LISTEN_FDNAMES");
	size_t len = strlen(name);
	long n;

	if (!pid || !nfds || !names || strtol(pid, NULL, 10) != (long)getpid())
		return -1;
	n = strtol(nfds, NULL, 10);
	/* LISTEN_FDNAMES: colon-separated, in the order of the fds from 3. */
	for (long i = 0; i < n && names; i++) {
		const char *end = strchr(names, ':');
		size_t l = end ? (size_t)(end - names) : strlen(names);

		if (l == len && !memcmp(names, name, len))
			return (int)(3 + i);
		names = end ? end + 1 : NULL;
	}
	return -1;
}

/* WatchdogSec= as systemd passes it: $WATCHDOG_USEC, for $WATCHDOG_PID. */
uint64_t sd_watchdog_usec(void)
{
	const char *us = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	unsigned long long v;
	char *end;

	if (!us)
		return 0;
	if (pid && strtol(pid, NULL, 10) != (long)getpid())
		return 0;
	errno = 0;
	v = strtoull(us, &end, 10);
	if (errno || *end || !v)
		return 0;
	return v;
}
