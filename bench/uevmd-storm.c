// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The load generator of bench/uevmd.sh (built by it with cc):
 *
 *   uevmd-storm open LIST PASSES   open, read whole, close every file named
 *                                  in LIST (one path a line), PASSES times
 *   uevmd-storm exec PATH N        fork and execve PATH N times, waiting
 *   uevmd-storm answer DIR         the floor under any fanotify appraiser:
 *                                  take FAN_OPEN_PERM on DIR's filesystem
 *                                  and allow every open at once, reading
 *                                  nothing; prints "ready" once the mark
 *                                  stands, runs until SIGTERM
 *   uevmd-storm costs FILE         what the reads uevmd makes for every
 *                                  event cost here, each timed alone: the
 *                                  /proc files of a thread blocked in a
 *                                  system call (a child waiting on a pipe,
 *                                  as an opener waits for the answer), the
 *                                  name of FILE's fd, its stat and label
 *
 * open and exec print "ns N" (total wall-clock nanoseconds) and "ops N";
 * they exit 1 if any open or exec failed, so that a refused file cannot
 * look fast.  costs prints "cost NAME NANOSECONDS" lines.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int storm_open(const char *list, int passes)
{
	char **paths = NULL, line[4096], buf[65536];
	size_t n = 0, cap = 0;
	long long t0, ops = 0, failed = 0;
	FILE *fp = fopen(list, "r");

	if (!fp) {
		perror(list);
		return 2;
	}
	while (fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = '\0';
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			paths = realloc(paths, cap * sizeof(*paths));
			if (!paths)
				return 2;
		}
		paths[n++] = strdup(line);
	}
	fclose(fp);
	t0 = now_ns();
	for (int p = 0; p < passes; p++)
		for (size_t i = 0; i < n; i++) {
			int fd = open(paths[i], O_RDONLY | O_CLOEXEC);

			ops++;
			if (fd < 0) {
				failed++;
				continue;
			}
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			close(fd);
		}
	printf("ns %lld\nops %lld\nfailed %lld\n", now_ns() - t0, ops, failed);
	return failed ? 1 : 0;
}

static int storm_exec(const char *path, int count)
{
	long long t0 = now_ns(), failed = 0;

	for (int i = 0; i < count; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			execl(path, path, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			failed++;
	}
	printf("ns %lld\nops %d\nfailed %lld\n", now_ns() - t0, count, failed);
	return failed ? 1 : 0;
}

static int answer(const char *dir)
{
	static char buf[4096] __attribute__((aligned(8)));
	int fd = fanotify_init(FAN_CLOEXEC | FAN_CLASS_CONTENT, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
				    FAN_OPEN_PERM, AT_FDCWD, dir) < 0) {
		perror("fanotify");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	signal(SIGTERM, SIG_DFL);
	for (;;) {
		ssize_t len = read(fd, buf, sizeof(buf));
		const struct fanotify_event_metadata *m = (void *)buf;

		if (len < 0)
			return 2;
		for (; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
			struct fanotify_response r = { .fd = m->fd, .response = FAN_ALLOW };

			if (m->fd < 0)
				continue;
			if (write(fd, &r, sizeof(r)) != sizeof(r))
				return 2;
			close(m->fd);
		}
	}
}

/* ns per call of READ_ONE, best of 5 rounds of N calls (the machine's
 * noise only adds). */
#define COST(name, n, stmt)						\
	do {								\
		long long best_ = -1;					\
		for (int r_ = 0; r_ < 5; r_++) {			\
			long long t_ = now_ns();			\
			for (int i_ = 0; i_ < (n); i_++) {		\
				stmt;					\
			}						\
			t_ = (now_ns() - t_) / (n);			\
			if (best_ < 0 || t_ < best_)			\
				best_ = t_;				\
		}							\
		printf("cost %s %lld\n", name, best_);		\
	} while (0)

/* open, read and close one /proc file (exit 1 on failure: a cost of
 * nothing must not pass for a cheap read) */
static void proc_read(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, buf, sizeof(buf)) < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

static int costs(const char *file)
{
	char status[64], loginuid[64], sessionid[64], sysc[64], fdlink[64], name[4096], val[256];
	int pfd[2], fd, st = 0;
	struct stat sb;
	pid_t child;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pipe(pfd) < 0) {
		perror(file);
		return 1;
	}
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {	/* blocked in read until the pipe closes */
		char c;

		close(pfd[1]);
		_exit(read(pfd[0], &c, 1) < 0);
	}
	close(pfd[0]);
	snprintf(status, sizeof(status), "/proc/%d/status", (int)child);
	snprintf(loginuid, sizeof(loginuid), "/proc/%d/loginuid", (int)child);
	snprintf(sessionid, sizeof(sessionid), "/proc/%d/sessionid", (int)child);
	snprintf(sysc, sizeof(sysc), "/proc/%d/syscall", (int)child);
	snprintf(fdlink, sizeof(fdlink), "/proc/self/fd/%d", fd);
	/* Wait until the child sits in its read: /proc/PID/syscall then
	 * shows the call (a running thread shows "running"). */
	for (;;) {
		char buf[64] = "";
		int s = open(sysc, O_RDONLY | O_CLOEXEC);

		if (s < 0 || read(s, buf, sizeof(buf) - 1) < 0)
			return 1;
		close(s);
		if (strncmp(buf, "running", 7))
			break;
		sched_yield();
	}
	COST("proc_status", 2000, proc_read(status));
	COST("proc_loginuid", 2000, proc_read(loginuid));
	COST("proc_sessionid", 2000, proc_read(sessionid));
	COST("proc_syscall", 2000, proc_read(sysc));
	COST("fd_readlink", 2000, if (readlink(fdlink, name, sizeof(name)) < 0) return 1);
	COST("fstat", 20000, if (fstat(fd, &sb) < 0) return 1);
	COST("getxattr_absent", 20000, fgetxattr(fd, "system.posix_acl_access", val, sizeof(val)));
	close(pfd[1]);
	waitpid(child, &st, 0);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "open"))
		return storm_open(argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "exec"))
		return storm_exec(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "answer"))
		return answer(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "costs"))
		return costs(argv[2]);
	fprintf(stderr, "usage: %s open LIST PASSES | exec PATH N | answer DIR | costs FILE\n", argv[0]);
	return 2;
}
