// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's own threads.  An open by one of them on a watched mount
 * (the log file, a policy file given to `uevm policy load`, a file opened
 * by handle to rehash it) must be allowed by the reader at once: waiting
 * for a worker could wait for the very thread that opens.  Events carry
 * thread ids (FAN_REPORT_TID), so every thread registers its own.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "uevmd.h"

#define MAX_OWN_TIDS 512

static atomic_int own_tids[MAX_OWN_TIDS];
static atomic_int n_own;

void own_tid_register(void)
{
	int i = atomic_fetch_add(&n_own, 1);

	if (i < MAX_OWN_TIDS)
		atomic_store(&own_tids[i], (int)gettid());
}

bool own_tid(pid_t tid)
{
	int n = atomic_load(&n_own);

	if (n > MAX_OWN_TIDS)
		n = MAX_OWN_TIDS;
	for (int i = 0; i < n; i++)
		if (atomic_load(&own_tids[i]) == tid)
			return true;
	return false;
}

int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void fd_path(int fd, char *buf, size_t len)
{
	char proc[40];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, len - 1);
	if (n < 0)
		snprintf(buf, len, "(fd %d)", fd);
	else
		buf[n] = '\0';
}
