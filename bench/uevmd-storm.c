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
 *
 * open and exec print "ns N" (total wall-clock nanoseconds) and "ops N";
 * they exit 1 if any open or exec failed, so that a refused file cannot
 * look fast.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
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

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "open"))
		return storm_open(argv[2], atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "exec"))
		return storm_exec(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "answer"))
		return answer(argv[2]);
	fprintf(stderr, "usage: %s open LIST PASSES | exec PATH N | answer DIR\n", argv[0]);
	return 2;
}
