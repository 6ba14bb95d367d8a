// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The securityfs-like control tree (evm, evm_xattrs, ima/policy, the
 * measurement lists, counts), served by the library's own module
 * (lib/securityfs/securityfs.h, shared with uevmfs) at control_tree, default
 * /run/uevm/security.
 *
 * A policy written to ima/policy is installed by that module directly;
 * the daemon notices the new rules (tree_check_policy, from the control
 * thread) and drops the ignore marks placed under the old ones.
 */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "securityfs_fuse.h"
#include "securityfs.h"
#include "uevmd.h"

static struct uevm_securityfs *sfs;
static const struct ima_policy *seen;
static uint32_t seen_epoch;	/* the cache's: moves when verdicts go stale */
/* The control thread and a reload (the main thread) both look. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * A change through the tree is measured as one through the socket, by the
 * control thread (tree_measure_changes, woken at once): the tree's one
 * serve thread never waits on state_lock (held while workers drain), and
 * the list is appended to by uevmd's own threads only.  Every other
 * change records a pending one first (tree_record_locked), and teardown
 * records what came last, so none is lost.  A policy written here counts
 * only if it is still the one applied: a socket load or a reload may have
 * replaced it between its install and now (it was then applied for no
 * longer than that, and the list shows its successor).
 */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static bool pending;
static const struct ima_policy *pending_policy;
static uint8_t pending_sha256[32];
static int wake_fd = -1;	/* an eventfd in the control thread's poll */

static void tree_changed(const char *what, const char *text, size_t len,
			 const struct ima_policy *p, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pending_lock);
	if (!strcmp(what, "policy")) {
		if (uevm_hash_buffer(UEVM_HASH_SHA256, text, len, pending_sha256))
			memset(pending_sha256, 0xff, sizeof(pending_sha256));
		pending_policy = p;
	}
	pending = true;
	pthread_mutex_unlock(&pending_lock);
	/* The files that passed under the old rules opened unseen (ignore
	 * marks) until the control thread got to them: drop the marks now,
	 * before the writer's close returns.  One call, no wait; the control
	 * thread still drains the workers and drops what they marked since
	 * (tree_check_policy). */
	if (!strcmp(what, "policy") || !strcmp(what, "evm"))
		perm_flush_ignore_marks();
	if (wake_fd >= 0 && write(wake_fd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		ulog(LOG_ERR, "eventfd: %m");
}

int tree_wake_fd(void)
{
	return wake_fd;
}

void tree_record_locked(void)
{
	const struct ima_policy *p;
	uint8_t sha256[32];

	pthread_mutex_lock(&pending_lock);
	if (!pending) {
		pthread_mutex_unlock(&pending_lock);
		return;
	}
	pending = false;
	p = pending_policy;
	pending_policy = NULL;
	memcpy(sha256, pending_sha256, sizeof(sha256));
	pthread_mutex_unlock(&pending_lock);
	if (p && p == integrity_sys_policy(D->sys)) {
		pthread_mutex_lock(&D->policy_lock);
		memcpy(D->policy_sha256, sha256, sizeof(sha256));
		D->policy_from_tree = true;
		pthread_mutex_unlock(&D->policy_lock);
	}
	uevmd_measure_state();
}

void tree_measure_changes(void)
{
	uint64_t v;

	if (wake_fd >= 0 && read(wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		ulog(LOG_ERR, "eventfd: %m");
	pthread_mutex_lock(&D->state_lock);
	tree_record_locked();
	pthread_mutex_unlock(&D->state_lock);
}

int tree_start(void)
{
	const char *path = D->cfg.control_tree ? D->cfg.control_tree : UEVMD_DEFAULT_TREE;
	int ret;

	seen = integrity_sys_policy(D->sys);
	seen_epoch = integrity_cache_epoch(integrity_sys_cache(D->sys));
	if (!*path || !strcmp(path, "none"))
		return 0;
	wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (wake_fd < 0) {
		ulog(LOG_ERR, "eventfd: %m");
		return -errno;
	}
	ret = uevm_securityfs_new(D->sys, &sfs);
	if (!ret) {
		uevm_securityfs_set_change_hook(sfs, tree_changed, NULL);
		ret = uevm_securityfs_mount(sfs, path, NULL);
	}
	if (ret) {
		ulog(LOG_ERR, "control tree at %s: %s", path, uevm_last_error());
		uevm_securityfs_free(sfs);
		sfs = NULL;
	}
	return ret;
}

void tree_check_policy(void)
{
	const struct ima_policy *p;
	uint32_t epoch;
	bool rules;

	pthread_mutex_lock(&seen_lock);
	p = integrity_sys_policy(D->sys);
	epoch = integrity_cache_epoch(integrity_sys_cache(D->sys));
	if (p == seen && epoch == seen_epoch) {
		pthread_mutex_unlock(&seen_lock);
		return;
	}
	rules = p != seen;
	seen = p;
	seen_epoch = epoch;
	/* Workers still on the old rules (or EVM bits: the epoch moved)
	 * finish, then their marks go. */
	uevmd_quiesce();
	perm_flush_ignore_marks();
	pthread_mutex_unlock(&seen_lock);
	if (rules && p != D->policy)
		ulog(LOG_NOTICE, "policy replaced through the control tree (%zu rules)",
		     p ? ima_policy_count(p) : 0);
}

const char *tree_mountpoint(void)
{
	return sfs ? uevm_securityfs_mountpoint(sfs) : NULL;
}

void tree_unmount(void)
{
	if (sfs)
		uevm_securityfs_unmount(sfs);
}

/* After integrity_sys_free: the tree owns a policy written to it. */
void tree_free(void)
{
	uevm_securityfs_free(sfs);
	sfs = NULL;
	if (wake_fd >= 0)
		close(wake_fd);
	wake_fd = -1;
}
