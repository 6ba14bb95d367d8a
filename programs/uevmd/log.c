// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Logging without ever holding up an open.  The integrity layer's audit
 * records reach a sink that only copies them into the calling thread's
 * pending list; the worker hands them on after it has written its fanotify
 * answer; a logger thread alone touches the outputs (a log file, syslog,
 * auditd, stderr).  Outputs that would block are skipped, the queue is
 * bounded, and what does not fit is counted, not waited for: journald or
 * a syslog daemon may itself be waiting for one of our answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <libaudit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include "uevmd.h"

#define LOG_QUEUE 1024
/* An audit record's text whole (a PATH_MAX name in hex), or a message. */
#define LOG_TEXT (INTEGRITY_AUDIT_TEXT_MAX + 64)
#define LOCAL_MAX 16

/* A record owns its text (malloc'd, as long as it is): the queue holds
 * pointers, not LOG_TEXT bytes a slot. */
struct log_rec {
	int prio;
	int type;		/* AUDIT_INTEGRITY_* or 0 for a daemon message */
	bool result_ok;
	char *text;
};

static struct log_rec *queue;
static size_t q_head, q_count;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static pthread_t logger;
static bool logger_started, logger_stop;

static FILE *log_fp;
static int syslog_fd = -1, audit_fd = -1;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static __thread struct log_rec *local[LOCAL_MAX];
static __thread int n_local;
static __thread bool holding;	/* this thread calls log_flush_local() */

static const char *type_name(int type)
{
	switch (type) {
	case AUDIT_INTEGRITY_DATA: return "INTEGRITY_DATA";
	case AUDIT_INTEGRITY_METADATA: return "INTEGRITY_METADATA";
	case AUDIT_INTEGRITY_STATUS: return "INTEGRITY_STATUS";
	case AUDIT_INTEGRITY_HASH: return "INTEGRITY_HASH";
	case AUDIT_INTEGRITY_PCR: return "INTEGRITY_PCR";
	case AUDIT_INTEGRITY_RULE: return "INTEGRITY_RULE";
	case AUDIT_INTEGRITY_EVM_XATTR: return "INTEGRITY_EVM_XATTR";
	case AUDIT_INTEGRITY_POLICY_RULE: return "INTEGRITY_POLICY_RULE";
	}
	return NULL;
}

/* Hands R's text to the queue (or frees it when it is full). */
static void push(struct log_rec *r)
{
	bool queued = false;

	pthread_mutex_lock(&q_lock);
	if (!queue || q_count == LOG_QUEUE || !r->text) {
		atomic_fetch_add(&D->st.log_dropped, 1);
	} else {
		queue[(q_head + q_count) % LOG_QUEUE] = *r;
		q_count++;
		queued = true;
		pthread_cond_signal(&q_cond);
	}
	pthread_mutex_unlock(&q_lock);
	if (!queued)
		free(r->text);
	r->text = NULL;
}

void log_audit_sink(const struct integrity_audit_record *r, void *arg)
{
	struct log_rec *rec;

	(void)arg;
	rec = malloc(sizeof(*rec));
	if (!rec) {
		atomic_fetch_add(&D->st.log_dropped, 1);
		return;
	}
	rec->prio = r->info ? LOG_INFO : LOG_NOTICE;
	rec->type = r->type;
	rec->result_ok = r->result == 0;
	rec->text = strndup(r->text, LOG_TEXT - 1);
	if (!holding || n_local == LOCAL_MAX) {
		/* Threads that do not answer opens (the control tree's) deliver
		 * at once; a full hold delivers early rather than not at all. */
		push(rec);
		free(rec);
		return;
	}
	local[n_local++] = rec;
}

void log_hold_records(void)
{
	holding = true;
}

void log_flush_local(void)
{
	for (int i = 0; i < n_local; i++) {
		push(local[i]);
		free(local[i]);
	}
	n_local = 0;
}

/* Messages quote paths of files being opened, which anyone may name:
 * control characters (C0, DEL, UTF-8 C1) are escaped so that a name
 * cannot forge or colour log lines. */
static void escape_text(char *out, size_t size, const char *in)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t off = 0;

	for (; *s && off + 7 < size; s++) {
		bool c1 = s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f;

		if (c1) {
			off += (size_t)snprintf(out + off, size - off, "\\u%04x", s[1]);
			s++;
		} else if (*s < 0x20 || *s == 0x7f) {
			off += (size_t)snprintf(out + off, size - off, "\\x%02x", *s);
		} else {
			out[off++] = (char)*s;
		}
	}
	out[off] = '\0';
}

/* A name anyone may choose, for a daemon message: as audit records
 * carry one (quoted, or hex), so that it cannot pass for fields of a
 * record ("... type=INTEGRITY_DATA res=0" in a file name). */
const char *log_untrusted(char *buf, size_t size, const char *s)
{
	integrity_audit_untrusted(buf, size, s);
	return buf;
}

void ulog(int prio, const char *fmt, ...)
{
	struct log_rec rec = { .prio = prio };
	char raw[LOG_TEXT], text[LOG_TEXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	escape_text(text, sizeof(text), raw);
	/* Start-up messages also go to the terminal (or journald) at once:
	 * nothing waits for answers yet. */
	if (!logger_started || (!atomic_load(&D->running) && !D->cfg.log_stderr))
		fprintf(stderr, "uevmd: %s\n", text);
	if (logger_started) {
		rec.text = strdup(text);
		push(&rec);
	}
}

static void send_syslog(const struct log_rec *r)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[LOG_TEXT + 128], ts[32];
	time_t now = time(NULL);
	const char *tn = type_name(r->type);
	struct tm tm;
	int n;

	if (syslog_fd < 0)
		return;
	localtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%b %e %H:%M:%S", &tm);
	n = snprintf(msg, sizeof(msg), "<%d>%s uevmd[%d]: %s%s%s", LOG_AUTHPRIV | r->prio,
		     ts, (int)D->pid, tn ? "type=" : "", tn ? tn : "", tn ? " " : "");
	if (n < 0 || (size_t)n >= sizeof(msg))
		return;
	snprintf(msg + n, sizeof(msg) - (size_t)n, "%s", r->text);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s",
		 D->cfg.syslog_socket ? D->cfg.syslog_socket : "/dev/log");
	sendto(syslog_fd, msg, strlen(msg), MSG_DONTWAIT | MSG_NOSIGNAL,
	       (struct sockaddr *)&sa, sizeof(sa));
}

static void deliver(const struct log_rec *r)
{
	const char *tn = type_name(r->type);

	if (r->type && D->cfg.audit_syslog)
		send_syslog(r);
	else if (!r->type && r->prio <= LOG_NOTICE && D->cfg.audit_syslog)
		send_syslog(r);
	if (r->type && audit_fd >= 0) {
		char msg[LOG_TEXT + 32];

		/* Types 1800-1899 belong to the kernel: userspace records go
		 * as trusted-application messages naming them. */
		snprintf(msg, sizeof(msg), "integrity_type=%d %s", r->type, r->text);
		audit_log_user_message(audit_fd, AUDIT_TRUSTED_APP, msg, NULL, NULL,
				       NULL, r->result_ok);
	}
	pthread_mutex_lock(&out_lock);
	if (log_fp) {
		char ts[40];
		struct timespec now;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &now);
		localtime_r(&now.tv_sec, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(log_fp, "%s.%06ld uevmd[%d]: %s%s%s%s\n", ts,
			now.tv_nsec / 1000, (int)D->pid, tn ? "type=" : "",
			tn ? tn : "", tn ? " " : "", r->text);
		fflush(log_fp);
	}
	pthread_mutex_unlock(&out_lock);
	if (D->cfg.log_stderr) {
		char line[LOG_TEXT + 64];
		int n = snprintf(line, sizeof(line), "uevmd: %s%s%s%s\n", tn ? "type=" : "",
				 tn ? tn : "", tn ? " " : "", r->text);

		/* stderr may be journald's stream: never wait for it. */
		if (n > 0 && write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n
									       : sizeof(line) - 1) < 0)
			atomic_fetch_add(&D->st.log_dropped, 1);
	}
}

static void *logger_main(void *arg)
{
	(void)arg;
	own_tid_register();
	pthread_mutex_lock(&q_lock);
	for (;;) {
		struct log_rec r;

		while (!q_count && !logger_stop)
			pthread_cond_wait(&q_cond, &q_lock);
		if (!q_count && logger_stop)
			break;
		r = queue[q_head];
		q_head = (q_head + 1) % LOG_QUEUE;
		q_count--;
		pthread_mutex_unlock(&q_lock);
		deliver(&r);
		free(r.text);
		pthread_mutex_lock(&q_lock);
	}
	pthread_mutex_unlock(&q_lock);
	return NULL;
}

int log_reopen(void)
{
	FILE *fp = NULL;

	if (D->cfg.log_file) {
		int fd = open(D->cfg.log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
			      O_NOFOLLOW | O_NOCTTY, 0640);

		if (fd < 0 || !(fp = fdopen(fd, "a"))) {
			int e = errno;

			if (fd >= 0)
				close(fd);
			fprintf(stderr, "uevmd: %s: %s\n", D->cfg.log_file, strerror(e));
			return -e;
		}
	}
	pthread_mutex_lock(&out_lock);
	if (log_fp)
		fclose(log_fp);
	log_fp = fp;
	pthread_mutex_unlock(&out_lock);
	return 0;
}

int log_start(void)
{
	int ret;

	queue = calloc(LOG_QUEUE, sizeof(*queue));
	if (!queue)
		return -ENOMEM;
	ret = log_reopen();
	if (ret)
		return ret;
	if (D->cfg.audit_syslog)
		syslog_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	/* Only when auditd collects records (else the kernel would print
	 * them to its ring buffer). */
	if (D->cfg.audit_auditd && access("/run/auditd.pid", F_OK) == 0) {
		audit_fd = audit_open();
		if (audit_fd >= 0 && audit_is_enabled(audit_fd) <= 0) {
			audit_close(audit_fd);
			audit_fd = -1;
		}
	}
	if (D->cfg.log_stderr) {
		int fl = fcntl(STDERR_FILENO, F_GETFL);

		if (fl >= 0)
			fcntl(STDERR_FILENO, F_SETFL, fl | O_NONBLOCK);
	}
	ret = pthread_create(&logger, NULL, logger_main, NULL);
	if (ret)
		return -ret;
	logger_started = true;
	return 0;
}

void log_stop(void)
{
	if (logger_started) {
		log_flush_local();
		pthread_mutex_lock(&q_lock);
		logger_stop = true;
		pthread_cond_signal(&q_cond);
		pthread_mutex_unlock(&q_lock);
		pthread_join(logger, NULL);
		logger_started = false;
	}
	if (log_fp)
		fclose(log_fp);
	log_fp = NULL;
	if (syslog_fd >= 0)
		close(syslog_fd);
	if (audit_fd >= 0)
		audit_close(audit_fd);
	syslog_fd = audit_fd = -1;
	/* Under the lock: a worker stuck past the stop may still push. */
	pthread_mutex_lock(&q_lock);
	for (; queue && q_count; q_count--, q_head = (q_head + 1) % LOG_QUEUE)
		free(queue[q_head].text);
	free(queue);
	queue = NULL;
	pthread_mutex_unlock(&q_lock);
}
