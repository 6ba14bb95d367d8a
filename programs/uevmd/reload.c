// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SIGHUP (systemctl reload): the configuration and the policy read again.
 *
 * The new state is built whole beside the running one - the configuration
 * parsed and appraised with the running key, the policy loaded as at
 * start - and swapped in only when all of it loaded; otherwise the
 * running configuration stays, and the log says which file failed and
 * why.  The swap is one pointer under the policy lock, so every open is
 * decided by the old rules or the new ones, never by none.
 *
 * Only the policy, the mode and the log file change this way.  The rest
 * is held by threads, descriptors and marks set up at start (the watches,
 * the key, the measurement list, the sockets, the engine): a change to
 * any of it refuses the whole reload, naming the key, and needs a
 * restart.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "uevmd.h"

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool list_eq(char *const *a, int na, char *const *b, int nb)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

/* The first key that differs and cannot change without a restart. */
static const char *restart_key(const struct uevmd_config *o, const struct uevmd_config *n)
{
	if (!list_eq(o->filesystems, o->nfilesystems, n->filesystems, n->nfilesystems))
		return "filesystem";
	if (!list_eq(o->mounts, o->nmounts, n->mounts, n->nmounts))
		return "mount";
	if (!list_eq(o->certs, o->ncerts, n->certs, n->ncerts))
		return "cert";
#define SAME_STR(f, name) if (!str_eq(o->f, n->f)) return name
#define SAME(f, name) if (o->f != n->f) return name
	SAME_STR(key, "key");
	SAME_STR(hash, "hash");
	SAME_STR(tcti, "tpm_tcti");
	SAME_STR(measurements, "measurement_list");
	SAME_STR(kernel_ml, "kernel_measurements");
	SAME_STR(template_name, "template");
	SAME_STR(control_socket, "control_socket");
	SAME_STR(control_tree, "control_tree");
	SAME_STR(syslog_socket, "syslog_socket");
	SAME(evm_init, "evm");
	SAME(pcr, "pcr");
	SAME(ml_sync, "measurement_sync");
	SAME(ml_rotate_stale, "measurement_rotate_stale");
	SAME(audit_syslog, "audit_syslog");
	SAME(audit_auditd, "audit_auditd");
	SAME(integrity_audit, "integrity_audit");
	SAME(log_stderr, "log_stderr");
	SAME(fanotify_audit, "fanotify_audit");
	SAME(workers, "workers");
	SAME(worker_share, "worker_share");
	SAME(deadline_ms, "deadline_ms");
	SAME(deadline_allow, "on_timeout");
	SAME(wedged_sec, "wedged_sec");
	SAME(fail_open_ok, "on_exit");
	SAME(fastpath, "fastpath");
	SAME(label_updates, "label_updates");
	SAME(cache_size, "cache_size");
#undef SAME
#undef SAME_STR
	return NULL;
}

/* The parser's messages ("uevmd: FILE:LINE: why"), one log line each. */
static void log_lines(char *text)
{
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
		ulog(LOG_ERR, "reload refused: %s; the running configuration stays",
		     strncmp(l, "uevmd: ", 7) ? l : l + 7);
}

static int build(struct uevmd_config *nc, struct ima_policy **np, uint8_t pol_sha256[32])
{
	const struct uevm_ctx *ctx = integrity_sys_ctx(D->sys);
	struct uevmd_input in = { .fd = -1 };
	char *msgs = NULL;
	size_t msglen = 0;
	const char *k;
	FILE *errfp;
	int ret;

	errfp = open_memstream(&msgs, &msglen);
	if (!errfp)
		return -errno;
	ret = uevmd_config_read(D->config_path, &in, errfp, nc);
	fclose(errfp);
	if (ret) {
		log_lines(msgs);
		free(msgs);
		return ret;
	}
	free(msgs);
	/* As at start: a configuration on a watched filesystem, or with
	 * labels, passes appraisal with the running key or is not used. */
	ret = input_appraise(&in, ctx);
	input_close(&in);
	if (ret) {
		ulog(LOG_ERR, "reload refused: configuration %s did not pass appraisal; "
		     "the running configuration stays", D->config_path);
		return ret;
	}
	if ((k = restart_key(&D->cfg, nc))) {
		ulog(LOG_ERR, "reload refused: %s: '%s' changed, which needs a restart "
		     "(systemctl restart uevmd); the running configuration stays",
		     D->config_path, k);
		return -EINVAL;
	}
	if (!nc->nmounts && !nc->nfilesystems)
		return -EINVAL;		/* not reached: the watches are unchanged */
	if (nc->nmounts && nc->mode == INTEGRITY_MODE_ENFORCE) {
		ulog(LOG_ERR, "reload refused: %s: mode = enforce with mount = %s: %s; "
		     "the running configuration stays", D->config_path, nc->mounts[0],
		     uevmd_mount_mark_caveat);
		return -EINVAL;
	}
	ret = uevmd_policy_load(nc, ctx, np, pol_sha256);
	if (ret) {
		ulog(LOG_ERR, "reload refused: policy %s did not load (above); the running "
		     "configuration stays", nc->policy ? nc->policy : "builtin:appraise_tcb");
		return ret;
	}
	return 0;
}

int uevmd_reload(void)
{
	struct uevmd_config nc;
	struct ima_policy *np = NULL;
	uint8_t pol_sha256[32] = { 0 };
	char *src, *old_log;
	int ret;

	ulog(LOG_NOTICE, "SIGHUP: reloading %s", D->config_path);
	uevmd_config_defaults(&nc);
	ret = build(&nc, &np, pol_sha256);
	if (!ret && !(src = strdup(nc.policy ? nc.policy : "builtin:appraise_tcb")))
		ret = -ENOMEM;
	if (ret) {
		ima_policy_free(np);
		uevmd_config_free(&nc);
		log_reopen();	/* what SIGHUP always did */
		return ret;
	}
	/* The log file last before the swap: a new one that cannot be
	 * opened refuses the reload too (log_reopen keeps the old one). */
	old_log = D->cfg.log_file;
	D->cfg.log_file = nc.log_file;
	if (log_reopen()) {
		D->cfg.log_file = old_log;
		ulog(LOG_ERR, "reload refused: log_file = %s cannot be opened; the running "
		     "configuration stays", nc.log_file);
		free(src);
		ima_policy_free(np);
		uevmd_config_free(&nc);
		return -EIO;
	}
	nc.log_file = old_log;
	/* The rules first, then the mode: either order keeps enforcing
	 * whatever both configurations enforce. */
	pthread_mutex_lock(&D->state_lock);
	tree_record_locked();
	pthread_mutex_lock(&D->policy_lock);
	memcpy(D->policy_sha256, pol_sha256, sizeof(pol_sha256));
	memcpy(D->cfg.sha256, nc.sha256, sizeof(nc.sha256));
	D->policy_from_tree = false;
	pthread_mutex_unlock(&D->policy_lock);
	uevmd_policy_install(np, src);
	integrity_sys_set_mode(D->sys, nc.mode);
	D->cfg.mode = nc.mode;
	free(D->cfg.policy);
	D->cfg.policy = nc.policy;
	nc.policy = NULL;
	uevmd_config_free(&nc);
	ulog(LOG_NOTICE, "reloaded %s: mode %s, policy %s (%zu rules)", D->config_path,
	     integrity_mode_name(D->cfg.mode),
	     D->policy_source, ima_policy_count(np));
	sd_notifyf("STATUS=enforcing %d watch(es), mode %s", D->nmarks,
		   integrity_mode_name(D->cfg.mode));
	uevmd_measure_state();
	pthread_mutex_unlock(&D->state_lock);
	return 0;
}
