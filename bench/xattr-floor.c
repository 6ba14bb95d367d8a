// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A floor under `uevm label`'s CPU time, built and run by
 * bench/label-verify.sh:
 *
 *   xattr-floor set LIST THREADS    open every file named in LIST (paths
 *                                   separated by NUL bytes), set
 *                                   security.ima and security.evm with
 *                                   values of their real sizes, close
 *   xattr-floor get LIST THREADS    open every file, read security.ima
 *                                   and security.evm (both must be
 *                                   there), close
 *   xattr-floor open LIST THREADS   only open and close each file
 *
 * What the kernel charges for storing the two labels, or for reading them
 * back, with no hashing and no HMAC: the difference between "set" or "get"
 * and "open".  The values differ from file to file, as real labels do, so
 * no two files can share an ext4 xattr block.  Prints "files N"; exits 1
 * if any open, write or read failed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

static char **paths;
static size_t npaths;
static atomic_size_t next_path;
static atomic_long failed;
static enum { OPEN_ONLY, SET, GET } mode;

static void fill(unsigned char *v, size_t len, size_t seed)
{
	for (size_t i = 0; i < len; i++)
		v[i] = (unsigned char)((seed >> (8 * (i % 8))) ^ (i * 131));
}

static void *worker(void *arg)
{
	/* security.ima: type 4 (digest), sha256, 32 bytes; security.evm:
	 * type 2 (HMAC-SHA1), 20 bytes.  Sizes as `uevm label` writes. */
	unsigned char ima[34], evm[21], got[256];
	size_t i;

	(void)arg;
	while ((i = atomic_fetch_add(&next_path, 1)) < npaths) {
		int fd = open(paths[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
			      O_NOCTTY | O_CLOEXEC);

		if (fd < 0) {
			atomic_fetch_add(&failed, 1);
			continue;
		}
		if (mode == GET) {
			if (fgetxattr(fd, "security.ima", got, sizeof(got)) <= 0 ||
			    fgetxattr(fd, "security.evm", got, sizeof(got)) <= 0)
				atomic_fetch_add(&failed, 1);
		} else if (mode == SET) {
			ima[0] = 4;
			ima[1] = 4;
			fill(ima + 2, 32, i);
			evm[0] = 2;
			fill(evm + 1, 20, ~i);
			if (fsetxattr(fd, "security.ima", ima, sizeof(ima), 0) < 0 ||
			    fsetxattr(fd, "security.evm", evm, sizeof(evm), 0) < 0)
				atomic_fetch_add(&failed, 1);
		}
		close(fd);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	size_t cap = 0, len = 0;
	char *line = NULL;
	pthread_t *t;
	int threads;
	FILE *fp;

	if (argc != 4 || (strcmp(argv[1], "set") && strcmp(argv[1], "get") &&
			  strcmp(argv[1], "open")) || (threads = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: %s set|get|open LIST THREADS\n", argv[0]);
		return 2;
	}
	mode = !strcmp(argv[1], "set") ? SET : !strcmp(argv[1], "get") ? GET : OPEN_ONLY;
	fp = fopen(argv[2], "r");
	if (!fp) {
		perror(argv[2]);
		return 2;
	}
	while (getdelim(&line, &len, '\0', fp) > 0) {
		if (npaths == cap) {
			cap = cap ? 2 * cap : 4096;
			paths = realloc(paths, cap * sizeof(*paths));
			if (!paths)
				return 2;
		}
		if (!(paths[npaths++] = strdup(line)))
			return 2;
	}
	fclose(fp);
	t = calloc((size_t)threads, sizeof(*t));
	if (!t)
		return 2;
	for (int i = 1; i < threads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 2;
	worker(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("files %zu\n", npaths);
	if (atomic_load(&failed)) {
		fprintf(stderr, "xattr-floor: %ld of %zu files failed\n",
			atomic_load(&failed), npaths);
		return 1;
	}
	return 0;
}
