// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /etc/uevm/uevmd.conf: "key = value" lines, '#' comments.  The file is
 * read once, before any mark is placed, so reading it can never wait for
 * the daemon itself.  uevmd(8) lists the keys.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "uevmd.h"

void uevmd_config_defaults(struct uevmd_config *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = INTEGRITY_MODE_ENFORCE;
	c->evm_init = true;
	c->pcr = IMA_ML_DEFAULT_PCR;
	c->ml_sync = true;
	c->ml_rotate_stale = true;	/* a reboot must not stop the list */
	c->audit_syslog = true;
	c->fanotify_audit = FAN_AUDIT_DENY;
	c->deadline_ms = 5000;
	c->wedged_sec = 120;
	c->fail_open_ok = true;
	c->fastpath = true;
	c->label_updates = true;
}

static int set_str(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int add_str(char **arr, int *n, int max, const char *v)
{
	if (*n >= max)
		return -E2BIG;
	arr[*n] = strdup(v);
	if (!arr[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1") ||
	    !strcasecmp(v, "on")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0") ||
	    !strcasecmp(v, "off")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

static int parse_uint(const char *v, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || n > max || v[0] == '-')
		return -EINVAL;
	*out = n;
	return 0;
}

int uevmd_config_set(struct uevmd_config *c, const char *k, const char *v)
{
	unsigned long n;
	int ret;

	if (!strcmp(k, "mount"))
		return add_str(c->mounts, &c->nmounts, UEVMD_MAX_MARKS, v);
	if (!strcmp(k, "filesystem"))
		return add_str(c->filesystems, &c->nfilesystems, UEVMD_MAX_MARKS, v);
	if (!strcmp(k, "cert"))
		return add_str(c->certs, &c->ncerts, 16, v);
	if (!strcmp(k, "policy"))
		return set_str(&c->policy, v);
	if (!strcmp(k, "key"))
		return set_str(&c->key, v);
	if (!strcmp(k, "hash"))
		return set_str(&c->hash, v);
	if (!strcmp(k, "tpm_tcti") || !strcmp(k, "tcti"))
		return strcmp(v, "none") ? set_str(&c->tcti, v) : (free(c->tcti), c->tcti = NULL, 0);
	if (!strcmp(k, "measurement_list"))
		return set_str(&c->measurements, v);
	if (!strcmp(k, "kernel_measurements"))
		return set_str(&c->kernel_ml, v);
	if (!strcmp(k, "template"))
		return set_str(&c->template_name, v);
	if (!strcmp(k, "control_socket"))
		return set_str(&c->control_socket, v);
	if (!strcmp(k, "control_tree"))
		return set_str(&c->control_tree, v);
	if (!strcmp(k, "syslog_socket"))
		return set_str(&c->syslog_socket, v);
	if (!strcmp(k, "log_file"))
		return set_str(&c->log_file, v);
	if (!strcmp(k, "mode"))
		return integrity_mode_parse(v, &c->mode) ? -EINVAL : 0;
	if (!strcmp(k, "evm"))
		return parse_bool(v, &c->evm_init);
	if (!strcmp(k, "measurement_sync"))
		return parse_bool(v, &c->ml_sync);
	if (!strcmp(k, "measurement_rotate_stale"))
		return parse_bool(v, &c->ml_rotate_stale);
	if (!strcmp(k, "audit_syslog"))
		return parse_bool(v, &c->audit_syslog);
	if (!strcmp(k, "audit_auditd"))
		return parse_bool(v, &c->audit_auditd);
	if (!strcmp(k, "integrity_audit"))
		return parse_bool(v, &c->integrity_audit);
	if (!strcmp(k, "log_stderr"))
		return parse_bool(v, &c->log_stderr);
	if (!strcmp(k, "fastpath"))
		return parse_bool(v, &c->fastpath);
	if (!strcmp(k, "label_updates"))
		return parse_bool(v, &c->label_updates);
	if (!strcmp(k, "fanotify_audit")) {
		if (!strcmp(v, "none"))
			c->fanotify_audit = FAN_AUDIT_NONE;
		else if (!strcmp(v, "deny"))
			c->fanotify_audit = FAN_AUDIT_DENY;
		else if (!strcmp(v, "all"))
			c->fanotify_audit = FAN_AUDIT_ALL;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(k, "on_timeout")) {
		if (!strcmp(v, "allow"))
			c->deadline_allow = true;
		else if (!strcmp(v, "deny"))
			c->deadline_allow = false;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(k, "on_exit")) {
		/* What the kernel does to pending and later opens when the
		 * daemon exits is always "allow"; "refuse" makes the daemon
		 * refuse to start where that is unacceptable. */
		if (!strcmp(v, "allow"))
			c->fail_open_ok = true;
		else if (!strcmp(v, "refuse"))
			c->fail_open_ok = false;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(k, "pcr")) {
		if ((ret = parse_uint(v, IMA_ML_NUM_PCRS - 1, &n)))
			return ret;
		c->pcr = (int)n;
		return 0;
	}
	if (!strcmp(k, "workers")) {
		if ((ret = parse_uint(v, 256, &n)) || n == 0)
			return -EINVAL;
		c->workers = (int)n;
		return 0;
	}
	if (!strcmp(k, "worker_share")) {
		if ((ret = parse_uint(v, 256, &n)))
			return -EINVAL;
		c->worker_share = (int)n;
		return 0;
	}
	if (!strcmp(k, "deadline_ms")) {
		if ((ret = parse_uint(v, 600000, &n)) || n < 10)
			return -EINVAL;
		c->deadline_ms = (unsigned int)n;
		return 0;
	}
	if (!strcmp(k, "wedged_sec")) {
		if ((ret = parse_uint(v, 86400, &n)) || n == 0)
			return -EINVAL;
		c->wedged_sec = (unsigned int)n;
		return 0;
	}
	if (!strcmp(k, "cache_size")) {
		if ((ret = parse_uint(v, 1UL << 26, &n)))
			return ret;
		c->cache_size = n;
		return 0;
	}
	return -ENOENT;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int uevmd_config_load_fp(FILE *fp, const char *path, FILE *errfp,
			 struct uevmd_config *c)
{
	char line[PATH_MAX + 64];
	unsigned int lineno = 0;
	int ret = 0;

	while (fgets(line, sizeof(line), fp)) {
		char *k, *v, *eq;

		lineno++;
		if (!strchr(line, '\n') && !feof(fp)) {
			fprintf(errfp, "uevmd: %s:%u: line too long\n", path, lineno);
			ret = -EINVAL;
			break;
		}
		k = trim(line);
		if (!*k || *k == '#')
			continue;
		eq = strchr(k, '=');
		if (!eq) {
			fprintf(errfp, "uevmd: %s:%u: expected 'key = value'\n", path, lineno);
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		k = trim(k);
		v = trim(eq + 1);
		ret = uevmd_config_set(c, k, v);
		if (ret == -ENOENT)
			fprintf(errfp, "uevmd: %s:%u: unknown key '%s'\n", path, lineno, k);
		else if (ret == -E2BIG)
			fprintf(errfp, "uevmd: %s:%u: too many '%s' entries\n", path, lineno, k);
		else if (ret)
			fprintf(errfp, "uevmd: %s:%u: invalid value '%s' for '%s'\n",
				path, lineno, v, k);
		if (ret)
			break;
	}
	return ret;
}

int uevmd_config_load_mem(const void *buf, size_t len, const char *name,
			  FILE *errfp, struct uevmd_config *c)
{
	FILE *fp;
	int ret;

	if (!len)
		return 0;	/* an empty file sets nothing */
	fp = fmemopen((void *)buf, len, "r");
	if (!fp)
		return -errno;
	ret = uevmd_config_load_fp(fp, name, errfp, c);
	fclose(fp);
	return ret;
}

void uevmd_config_free(struct uevmd_config *c)
{
	for (int i = 0; i < c->nmounts; i++)
		free(c->mounts[i]);
	for (int i = 0; i < c->nfilesystems; i++)
		free(c->filesystems[i]);
	for (int i = 0; i < c->ncerts; i++)
		free(c->certs[i]);
	free(c->policy);
	free(c->key);
	free(c->hash);
	free(c->tcti);
	free(c->measurements);
	free(c->kernel_ml);
	free(c->template_name);
	free(c->control_socket);
	free(c->control_tree);
	free(c->syslog_socket);
	free(c->log_file);
	memset(c, 0, sizeof(*c));
}
