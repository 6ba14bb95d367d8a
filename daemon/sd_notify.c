// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The systemd notification protocol, by hand (no libsystemd): a datagram
 * to $NOTIFY_SOCKET ("@name" is an abstract socket) with "READY=1",
 * "WATCHDOG=1", "STATUS=...", "STOPPING=1".  Without the variable (not
 * started by systemd) every call is a no-op.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "uevmd.h"

int sd_notifyf(const char *fmt, ...)
{
	const char *e = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t salen;
	char msg[512];
	va_list ap;
	size_t n;
	int fd, ret = 0;

	if (!e || !*e)
		return 0;
	n = strlen(e);
	if ((e[0] != '/' && e[0] != '@') || n >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, e, n);
	if (e[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (e[0] == '/'));
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT,
		   (struct sockaddr *)&sa, salen) < 0)
		ret = -errno;
	close(fd);
	return ret;
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
