// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `uevmd --supervise`: a keeper of uevmd's fanotify groups, for hosts
 * without systemd's descriptor store.
 *
 * When the process that holds a fanotify permission group dies, the kernel
 * closes the group and allows every pending and later open: a killed uevmd
 * fails open.  A group lives as long as any process holds it, though.  So
 * this small process forks the daemon, keeps a copy of the groups the
 * daemon hands it (the systemd protocol: FDSTORE=1, over a socket pair of
 * its own, $UEVMD_NOTIFY_FD in the daemon), and
 * when the daemon dies restarts it at once, giving the groups back
 * ($LISTEN_FDS).  Meanwhile opens wait in the kernel instead of being
 * allowed; the new daemon refuses those its predecessor had taken but not
 * answered, and answers the rest.
 *
 * The keeper opens no file after it started (a restart is a fork, not an
 * exec: nothing is loaded from a watched filesystem while no one answers;
 * for the same reason systemd's own store cannot be used, since systemd
 * restarts a service by executing it), and trusts only messages from its
 * own child, as root.  The channel is a socket pair, not a named socket:
 * a socket others can reach can be flooded, and the child's pings lost in
 * the flood made the keeper kill a healthy daemon.  The daemon pings it (WATCHDOG=1): one that stops
 * is killed and restarted.  It gives up - closing the groups, so the
 * kernel allows opens again - when the daemon fails three times in a row
 * before it is ready, or restarts more than five times in ten seconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "uevmd.h"

#define MAX_STORED 4

static struct { char name[32]; int fd; } stored[MAX_STORED];
static int nstored;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "uevmd[%d] (supervisor): %s\n", (int)getpid(), msg);
}

static void store(const char *name, int fd)
{
	for (int i = 0; i < nstored; i++)
		if (!strcmp(stored[i].name, name)) {
			if (stored[i].fd != fd)
				close(stored[i].fd);
			stored[i].fd = fd;
			return;
		}
	if (nstored == MAX_STORED) {
		close(fd);
		return;
	}
	snprintf(stored[nstored].name, sizeof(stored[nstored].name), "%s", name);
	stored[nstored++].fd = fd;
}

static void drop_all(void)
{
	for (int i = 0; i < nstored; i++)
		close(stored[i].fd);
	nstored = 0;
}

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t last_ping;	/* the child's last WATCHDOG=1 */

/* One message from the notify socket.  Returns true on READY=1. */
static bool receive(int sock, pid_t child)
{
	char buf[1024], name[32] = "";
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int) * 8) + CMSG_SPACE(sizeof(struct ucred))];
	} cm;
	struct iovec iov = { buf, sizeof(buf) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b,
			     .msg_controllen = sizeof(cm.b) };
	struct ucred *cred = NULL;
	int fds[8], nfds = 0;
	bool ready = false, fdstore = false;
	ssize_t n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (n < 0)
		return false;
	buf[n] = '\0';
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_RIGHTS) {
			nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t)nfds);
		} else if (c->cmsg_type == SCM_CREDENTIALS) {
			cred = (struct ucred *)CMSG_DATA(c);
		}
	}
	/* Only the child we started, as root, may hand us anything. */
	if (!cred || cred->pid != child || cred->uid != 0) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return false;
	}
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strcmp(line, "READY=1"))
			ready = true;
		else if (!strcmp(line, "WATCHDOG=1"))
			last_ping = mono_us();
		else if (!strcmp(line, "FDSTORE=1"))
			fdstore = true;
		else if (!strncmp(line, "FDNAME=", 7))
			snprintf(name, sizeof(name), "%s", line + 7);
	}
	if (fdstore && nfds == 1 && name[0])
		store(name, fds[0]);
	else
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
	return ready;
}

/* In the child: the stored groups become descriptors 3, 4, ... and the
 * environment says so, as systemd does at a restart. */
static void child_setup(int sock, int child_end, int sfd, const sigset_t *old,
			uint64_t wd_usec)
{
	char names[256] = "", num[32];
	int tmp[MAX_STORED];

	int end;

	close(sock);
	close(sfd);
	sigprocmask(SIG_SETMASK, old, NULL);
	/* Moved out of the way first: 3.. may be taken by the copies. */
	end = fcntl(child_end, F_DUPFD_CLOEXEC, 64);
	close(child_end);
	child_end = end;
	for (int i = 0; i < nstored; i++)
		tmp[i] = fcntl(stored[i].fd, F_DUPFD_CLOEXEC, 64);
	for (int i = 0; i < nstored; i++) {
		close(stored[i].fd);
		dup2(tmp[i], 3 + i);	/* dup2 clears close-on-exec */
		close(tmp[i]);
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ":" : "", stored[i].name);
	}
	/* Our end of the pair, not our manager's socket (ours alone). */
	unsetenv("NOTIFY_SOCKET");
	uevmd_keeper_fd = child_end;
	snprintf(num, sizeof(num), "%d", child_end);
	setenv("UEVMD_NOTIFY_FD", num, 1);
	setenv("FDSTORE", "4", 1);
	setenv("UEVMD_SUPERVISED", "1", 1);
	/* The daemon pings us; one that stops (a reader that stopped, a
	 * worker stuck for wedged_sec) is killed and restarted. */
	snprintf(num, sizeof(num), "%llu", (unsigned long long)wd_usec);
	setenv("WATCHDOG_USEC", num, 1);
	snprintf(num, sizeof(num), "%d", (int)getpid());
	setenv("WATCHDOG_PID", num, 1);
	if (nstored) {
		snprintf(num, sizeof(num), "%d", (int)getpid());
		setenv("LISTEN_PID", num, 1);
		snprintf(num, sizeof(num), "%d", nstored);
		setenv("LISTEN_FDS", num, 1);
		setenv("LISTEN_FDNAMES", names, 1);
	} else {
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_FDNAMES");
	}
	nstored = 0;
}

static int64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

int supervise(void)
{
	int64_t restarts_at[6] = { 0 };
	int sock = -1, sfd, one = 1, failures = 0, nrestarts = 0, status = 0;
	bool stopping = false, ready = false, told_ready = false;
	/* Our own manager's watchdog (systemd's WatchdogSec), else 30 s for
	 * the daemon's pings to us. */
	uint64_t own_wd = sd_watchdog_usec(), wd = own_wd ? own_wd : 30000000;
	int64_t last_own_ping = 0;
	sigset_t set, old;
	pid_t child;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		say("cannot set up: %m");
		exit(1);
	}
	/* Last to be killed for memory: it is what keeps opens waiting. */
	{
		FILE *fp = fopen("/proc/self/oom_score_adj", "we");

		if (fp) {
			fputs("-1000\n", fp);
			fclose(fp);
		}
	}
	for (;;) {
		int pair[2];

		/* A new pair for each child: nothing an old one left queued. */
		if (sock >= 0)
			close(sock);
		if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) < 0 ||
		    setsockopt(pair[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
			say("cannot set up: %m");
			break;
		}
		sock = pair[0];
		child = fork();
		if (child < 0) {
			say("cannot start uevmd: %m");
			break;
		}
		if (child == 0) {
			child_setup(sock, pair[1], sfd, &old, wd);
			return 0;
		}
		close(pair[1]);
		ready = false;
		last_ping = mono_us();
		for (;;) {
			struct pollfd p[2] = { { sock, POLLIN, 0 }, { sfd, POLLIN, 0 } };
			struct signalfd_siginfo si;

			if (poll(p, 2, (int)(wd / 4000)) < 0 && errno != EINTR)
				break;
			/* The keeper itself is well: ping our manager, every half
			 * of its interval (the loop also wakes for messages). */
			if (own_wd && mono_us() - last_own_ping >= (int64_t)own_wd / 2) {
				sd_notifyf("WATCHDOG=1");
				last_own_ping = mono_us();
			}
			if (ready && !stopping && mono_us() - last_ping > (int64_t)wd) {
				say("uevmd (pid %d) stopped answering its watchdog; killing it",
				    (int)child);
				kill(child, SIGKILL);
				last_ping = mono_us();
			}
			if (p[0].revents & POLLIN && receive(sock, child)) {
				ready = true;
				failures = 0;
				if (!told_ready) {
					sd_notifyf("READY=1");	/* to our own manager, if any */
					told_ready = true;
				}
			}
			if (!(p[1].revents & POLLIN) || read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
				stopping = true;
				kill(child, (int)si.ssi_signo);
			} else if (si.ssi_signo == SIGHUP || si.ssi_signo == SIGUSR1) {
				/* A reload, a log reopen: the daemon's. */
				kill(child, (int)si.ssi_signo);
			} else if (si.ssi_signo == SIGCHLD &&
				   waitpid(child, &status, WNOHANG) == child) {
				break;
			}
		}
		/* Our own stop, or the daemon's own clean exit: a stop. */
		if (stopping || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
			drop_all();
			exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
		}
		if (WIFSIGNALED(status))
			say("uevmd (pid %d) was killed by signal %d; restarting it, opens wait",
			    (int)child, WTERMSIG(status));
		else
			say("uevmd (pid %d) exited with status %d; restarting it, opens wait",
			    (int)child, WEXITSTATUS(status));
		failures += !ready;
		memmove(restarts_at + 1, restarts_at, sizeof(restarts_at) - sizeof(restarts_at[0]));
		restarts_at[0] = now_s();
		nrestarts++;
		if (failures >= 3 ||
		    (nrestarts >= 6 && restarts_at[0] - restarts_at[5] < 10)) {
			say("uevmd keeps failing: giving up; the kernel now allows "
			    "every open of the watched filesystems");
			break;
		}
	}
	drop_all();
	exit(1);
}
