// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevm_walk called from a thread with an fd table of its own
 * (unshare(CLONE_FILES)) reads the file it was given.  The main thread
 * holds another file at every fd number the walk may use; a reopen through
 * /proc/self/fd (the main thread's table) would read that one instead.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <uevm/uevm.h>
#include "test.h"

static char dir[] = "/var/tmp/uevm-walk-fdtable.XXXXXX";
static char path_a[300], path_b[300];
static char got[16];
static int seen;

static int cb(const struct uevm_file *f, const char *path, int err, void *arg)
{
	ssize_t n;

	(void)path;
	(void)arg;
	if (err || !f)
		return 0;
	seen++;
	n = pread(uevm_file_fd(f), got, sizeof(got) - 1, 0);
	got[n > 0 ? n : 0] = '\0';
	return 0;
}

static void walk_a(void)
{
	struct uevm_walk_opts o;
	const char *paths[1] = { path_a };

	uevm_walk_opts_init(&o);
	o.jobs = 1;
	seen = 0;
	got[0] = '\0';
	uevm_walk(paths, 1, &o, cb, NULL);
}

static void *own_table(void *arg)
{
	int *ok = arg;

	*ok = unshare(CLONE_FILES) == 0;
	/* Free here; the main thread's table still holds B at each. */
	for (int fd = 3; fd < 200; fd++)
		close(fd);
	if (*ok)
		walk_a();
	return NULL;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

int main(void)
{
	pthread_t t;
	int b, ok = 0;

	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	snprintf(path_a, sizeof(path_a), "%s/a", dir);
	snprintf(path_b, sizeof(path_b), "%s/b", dir);
	CHECK("walk_fdtable: fixtures", write_file(path_a, "AAAA") == 0 &&
	      write_file(path_b, "BBBB") == 0);

	walk_a();
	CHECK("walk_fdtable: the main thread's walk reads a", seen == 1 && !strcmp(got, "AAAA"));

	b = open(path_b, O_RDONLY | O_CLOEXEC);
	for (int fd = 3; b >= 0 && fd < 200; fd++)
		if (fd != b)
			dup2(b, fd);
	pthread_create(&t, NULL, own_table, &ok);
	pthread_join(t, NULL);
	CHECK("walk_fdtable: the thread has an fd table of its own", ok);
	CHECK("walk_fdtable: its walk reads a, not what the main thread holds at that fd",
	      seen == 1 && !strcmp(got, "AAAA"));
	for (int fd = 3; fd < 200; fd++)
		close(fd);

	unlink(path_a);
	unlink(path_b);
	rmdir(dir);
	return test_failures ? 1 : 0;
}
