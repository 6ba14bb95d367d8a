// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -o audit_log=FILE: every integrity audit record as a line of an audit
 * log, "type=INTEGRITY_DATA msg=audit(SECONDS.MILLIS:SERIAL): pid=...",
 * in the layout auditd writes, so that records can be read (and tested)
 * without auditd or a syslog daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "uevmfs.h"

static FILE *log_fp;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long serial;

int ufs_audit_log_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -errno;
	log_fp = fdopen(fd, "a");
	if (!log_fp) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

static const char *type_name(int type)
{
	static const char *const names[] = {
		"INTEGRITY_DATA", "INTEGRITY_METADATA", "INTEGRITY_STATUS",
		"INTEGRITY_HASH", "INTEGRITY_PCR", "INTEGRITY_RULE",
		"INTEGRITY_EVM_XATTR", "INTEGRITY_POLICY_RULE",
	};

	if (type >= AUDIT_INTEGRITY_DATA && type <= AUDIT_INTEGRITY_POLICY_RULE)
		return names[type - AUDIT_INTEGRITY_DATA];
	return "UNKNOWN";
}

void ufs_audit_log_sink(const struct integrity_audit_record *r, void *arg)
{
	struct timespec ts;

	(void)arg;
	if (!log_fp)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	pthread_mutex_lock(&log_lock);
	fprintf(log_fp, "type=%s msg=audit(%lld.%03ld:%lu): %s\n", type_name(r->type),
		(long long)ts.tv_sec, ts.tv_nsec / 1000000, ++serial, r->text);
	fflush(log_fp);
	pthread_mutex_unlock(&log_lock);
}

void ufs_audit_log_close(void)
{
	pthread_mutex_lock(&log_lock);
	if (log_fp)
		fclose(log_fp);
	log_fp = NULL;
	pthread_mutex_unlock(&log_lock);
}
