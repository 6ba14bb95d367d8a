// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Audit records with the fields of the kernel's integrity_audit_msg, sent to
 * syslog (a datagram to /dev/log or a configured socket), to the Linux
 * audit log through libaudit when auditd runs, and to a registered sink.
 * libaudit is loaded only then (dlopen_private.h).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <libaudit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "integrity_private.h"
#include "dlopen_private.h"

#define LIBAUDIT "libaudit.so.1"
static struct {
	__typeof__(audit_open) *open;
	__typeof__(audit_close) *close;
	__typeof__(audit_is_enabled) *is_enabled;
	__typeof__(audit_log_user_message) *log_user_message;
} audit;

static const struct uevm_dl_sym audit_syms[] = {
	{ LIBAUDIT, "audit_open", (void **)&audit.open },
	{ LIBAUDIT, "audit_close", (void **)&audit.close },
	{ LIBAUDIT, "audit_is_enabled", (void **)&audit.is_enabled },
	{ LIBAUDIT, "audit_log_user_message", (void **)&audit.log_user_message },
};

static struct uevm_dl audit_dl = UEVM_DL_INIT("auditd support", audit_syms);

/* The kernel's audit_string_contains_control(): such strings are logged
 * as hex so that a file name cannot forge fields. */
static bool needs_hex(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p == '"' || *p < 0x21 || *p > 0x7e)
			return true;
	return false;
}

/* Each put_* writes at OFF of BUF (SIZE > 0) and returns the new end,
 * never past SIZE - 1: what does not fit is cut, and the next put finds
 * no room rather than an offset beyond the buffer. */
static size_t put_fmt(char *buf, size_t size, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static size_t put_fmt(char *buf, size_t size, size_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (off >= size - 1)
		return size - 1;
	va_start(ap, fmt);
	n = vsnprintf(buf + off, size - off, fmt, ap);
	va_end(ap);
	if (n < 0)
		return off;
	return off + (size_t)n < size ? off + (size_t)n : size - 1;
}

static size_t put_untrusted(char *buf, size_t size, size_t off, const char *s)
{
	if (!needs_hex(s))
		return put_fmt(buf, size, off, "\"%s\"", s);
	for (const unsigned char *p = (const unsigned char *)s; *p && off + 3 < size; p++)
		off = put_fmt(buf, size, off, "%02X", *p);
	return off;
}

UEVM_EXPORT size_t integrity_audit_untrusted(char *buf, size_t size, const char *s)
{
	if (!size)
		return 0;
	buf[0] = '\0';
	put_untrusted(buf, size, 0, s);
	return strlen(buf);
}

UEVM_EXPORT int integrity_put_untrusted_field(FILE *fp, const char *name,
					     const char *value)
{
	size_t size = 2 * strlen(value) + 3;	/* hex, or quoted, and the NUL */
	char *buf = malloc(size);
	int ret;

	if (!buf)
		return -ENOMEM;
	integrity_audit_untrusted(buf, size, value);
	ret = fprintf(fp, " %s=%s", name, buf) < 0 ? -EIO : 0;
	free(buf);
	return ret;
}

/* The kernel prints the superblock's s_id (e.g. "vda", "loop0"). */
static void dev_name(dev_t dev, char *out, size_t len)
{
	char path[64], link[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		char *base;

		link[n] = '\0';
		base = strrchr(link, '/');
		snprintf(out, len, "%s", base ? base + 1 : link);
		return;
	}
	snprintf(out, len, "%u:%u", major(dev), minor(dev));
}

static void send_syslog(struct integrity_sys *s, const char *text, bool info)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[INTEGRITY_AUDIT_TEXT_MAX + 128], ts[32];
	time_t now = time(NULL);
	struct tm tm;
	/* LOG_AUTHPRIV (10) with LOG_NOTICE (5) or LOG_INFO (6). */
	int pri = 10 * 8 + (info ? 6 : 5);
	int n;

	if (s->syslog_fd < 0)
		return;
	localtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%b %e %H:%M:%S", &tm);
	n = snprintf(msg, sizeof(msg), "<%d>%s uevm[%d]: %s", pri, ts,
		     (int)getpid(), text);
	if (n < 0)
		return;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", s->syslog_path);
	/* Never block the caller (it may be a blocked opener): drop instead. */
	sendto(s->syslog_fd, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1,
	       MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa, sizeof(sa));
}

UEVM_EXPORT void integrity_audit_msg(struct integrity_sys *s, int type,
				     const struct uevm_file *f,
				     const char *fname,
				     const struct integrity_cred *cred,
				     const char *op, const char *cause,
				     int result, bool info)
{
	struct integrity_audit_record r = {
		.type = type, .op = op, .cause = cause, .name = fname,
		.result = result < 0 ? -result : result, .info = info,
		.cred = cred,
	};
	struct integrity_cred self;
	char text[INTEGRITY_AUDIT_TEXT_MAX], tail[640], dev[272];
	size_t off, toff = 0, room;

	if (info && !s->audit.integrity_audit)
		return;
	if (!cred) {
		integrity_cred_self(&self);
		cred = r.cred = &self;
	}
	/* The fields after the name first: a name too long for the record
	 * (past PATH_MAX: `uevmd --check` walks any depth) is cut, never
	 * dev=, ino= or res=. */
	tail[0] = '\0';
	if (f) {
		r.dev = f->st.st_dev;
		r.ino = f->st.st_ino;
		dev_name(f->st.st_dev, dev, sizeof(dev));
		toff = put_fmt(tail, sizeof(tail), toff, " dev=");
		toff = put_untrusted(tail, sizeof(tail), toff, dev);
		toff = put_fmt(tail, sizeof(tail), toff, " ino=%lu", (unsigned long)f->st.st_ino);
	}
	toff = put_fmt(tail, sizeof(tail), toff, " res=%d errno=0", result == 0);
	room = sizeof(text) - toff;
	off = put_fmt(text, room, 0, "pid=%d uid=%u auid=%u ses=%u op=%s cause=%s comm=",
		      (int)cred->pid, cred->uid, cred->auid, cred->ses,
		      op, cause ? cause : "unknown");
	off = put_untrusted(text, room, off, cred->comm);
	if (fname) {
		off = put_fmt(text, room, off, " name=");
		off = put_untrusted(text, room, off, fname);
	}
	memcpy(text + off, tail, toff + 1);
	r.text = text;

	if (s->audit.sink)
		s->audit.sink(&r, s->audit.sink_arg);
	if (s->audit.to_syslog)
		send_syslog(s, text, info);
	if (s->auditd_fd >= 0) {
		char msg[INTEGRITY_AUDIT_TEXT_MAX + 32];

		/* The kernel keeps types 1800-1899 for itself; userspace
		 * records go as trusted-application messages naming them. */
		snprintf(msg, sizeof(msg), "integrity_type=%d %s", type, text);
		audit.log_user_message(s->auditd_fd, AUDIT_TRUSTED_APP, msg,
				       NULL, NULL, NULL, result == 0);
	}
}

int integrity_audit_open(struct integrity_sys *s)
{
	s->syslog_fd = -1;
	s->auditd_fd = -1;
	if (s->audit.to_syslog) {
		s->syslog_path = strdup(s->audit.syslog_socket ?
					s->audit.syslog_socket : "/dev/log");
		if (!s->syslog_path)
			return uevm_err(ENOMEM, "out of memory");
		s->syslog_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	}
	/* Only when auditd actually collects records; otherwise the kernel
	 * would print them to its log, which is not what the user asked. */
	if (s->audit.to_auditd && access("/run/auditd.pid", F_OK) == 0) {
		int fd;

		/* Records still go to syslog and the sink without it. */
		if (uevm_dl_load(&audit_dl)) {
			uevm_warn("no records for auditd: %s", uevm_last_error());
			return 0;
		}
		fd = audit.open();
		if (fd >= 0 && audit.is_enabled(fd) > 0)
			s->auditd_fd = fd;
		else if (fd >= 0)
			audit.close(fd);
	}
	return 0;
}

void integrity_audit_close(struct integrity_sys *s)
{
	if (s->syslog_fd >= 0)
		close(s->syslog_fd);
	if (s->auditd_fd >= 0)
		audit.close(s->auditd_fd);
	free(s->syslog_path);
	s->syslog_fd = s->auditd_fd = -1;
	s->syslog_path = NULL;
}
