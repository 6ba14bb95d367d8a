// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A worker turns one permission event into integrity_file_check() and the
 * library's answer into FAN_ALLOW or FAN_DENY:
 *
 *   FAN_OPEN_EXEC_PERM  -> BPRM_CHECK, MAY_EXEC
 *   FAN_OPEN_PERM       -> FILE_CHECK with the opener's access mask
 *                          (MAY_EXEC for the open inside execve)
 *
 * The file is the event's own descriptor, never a re-open by name.  After
 * the answer: the fast path (an evictable ignore mark when the library
 * says later opens may go unseen), then the audit records the check made.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "uevmd.h"
#include "uevm_internal.h"

#define MAX_WORKER_SLOTS 512

/* Policy swaps: a worker publishes the epoch it started in; a swap waits
 * until no worker still runs in an older one. */
static atomic_ullong epoch = 1;
static atomic_ullong active[MAX_WORKER_SLOTS];
static atomic_int n_active;
static __thread int my_slot = -1;

void uevmd_worker_enter(void)
{
	if (my_slot < 0) {
		my_slot = atomic_fetch_add(&n_active, 1);
		if (my_slot >= MAX_WORKER_SLOTS)
			my_slot = MAX_WORKER_SLOTS;	/* never happens: workers <= 256 */
	}
	if (my_slot < MAX_WORKER_SLOTS)
		atomic_store(&active[my_slot], atomic_load(&epoch));
}

void uevmd_worker_leave(void)
{
	if (my_slot >= 0 && my_slot < MAX_WORKER_SLOTS)
		atomic_store(&active[my_slot], 0);
}

void uevmd_quiesce(void)
{
	unsigned long long e = atomic_fetch_add(&epoch, 1) + 1;
	int n = atomic_load(&n_active);

	for (int i = 0; i < n && i < MAX_WORKER_SLOTS; i++) {
		unsigned long long a;

		while ((a = atomic_load(&active[i])) != 0 && a < e)
			usleep(1000);
	}
}

static bool same_stamp(const struct stat *a, const struct stat *b)
{
	return a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_size == b->st_size && a->st_ino == b->st_ino;
}

/*
 * May an ignore mark stand for this inode?  The kernel drops the mark at
 * the next write(2), truncate or fallocate (FAN_MODIFY), but not for a
 * write through a shared mapping, which it never reports as one: a mark
 * would then serve the new content under the old verdict.  So marks go
 * only on files whose content only root can change (owned by root, not
 * writable by group or others, no ACL); a user's own files are appraised
 * at every open, where the changed stamp is seen.
 */
static bool only_root_writes(const struct uevm_file *f)
{
	return f->st.st_uid == 0 && !(f->st.st_mode & (S_IWGRP | S_IWOTH)) &&
	       fgetxattr(f->fd, "system.posix_acl_access", NULL, 0) < 0 &&
	       errno == ENODATA;
}

/* Keep later opens of this inode out of userspace.  Without
 * FAN_MARK_IGNORED_SURV_MODIFY the kernel drops the mark on the next
 * write; a change since the worker's first look at the file (before the
 * library's check) until the mark stands is caught by comparing the
 * stamps of both moments. */
static void fastpath(const struct integrity_event *ev, enum ima_hooks func,
		     const struct stat *before)
{
	uint64_t bit = func == BPRM_CHECK ? FAN_OPEN_EXEC_PERM : FAN_OPEN_PERM;
	/* An exec mark also stands for CREDS_CHECK, checked with BPRM_CHECK. */
	unsigned int funcs = func == BPRM_CHECK ? (1U << BPRM_CHECK) | (1U << CREDS_CHECK)
						: 1U << func;
	int fd = ev->file->fd;
	unsigned int flags;
	struct stat after;
	/* Before the verdict is read: new rules or EVM bits installed from
	 * here on (which drop every mark, perhaps before ours is placed), or
	 * a walk still making verdicts stale (odd), take our mark away again,
	 * below. */
	uint32_t verdicts = integrity_cache_epoch(integrity_sys_cache(D->sys));

	if (!only_root_writes(ev->file) || !integrity_file_cacheable(D->sys, ev, funcs))
		return;
	for (;;) {
		flags = atomic_load(&D->ignore_flags);
		if (!flags)
			return;
		if (fanotify_mark(D->perm_fd, FAN_MARK_ADD | flags, bit, fd, NULL) == 0)
			break;
		if (errno != EINVAL) {
			atomic_fetch_add(&D->st.marks_failed, 1);
			return;
		}
		/* Older kernels: FAN_MARK_IGNORE is 6.0, EVICTABLE 5.19. */
		if (flags & FAN_MARK_IGNORE)
			flags = FAN_MARK_IGNORED_MASK | FAN_MARK_EVICTABLE;
		else if (flags & FAN_MARK_EVICTABLE)
			flags = FAN_MARK_IGNORED_MASK;
		else
			flags = 0;
		atomic_store(&D->ignore_flags, flags);
	}
	atomic_fetch_add(&D->st.marks_added, 1);
	if (fstat(fd, &after) < 0 || !same_stamp(before, &after) ||
	    (verdicts & 1) || integrity_cache_epoch(integrity_sys_cache(D->sys)) != verdicts)
		perm_forget_inode(fd);
}

static void cred_of(pid_t tid, struct integrity_cred *cred)
{
	if (integrity_cred_from_pid(tid, cred) == 0)
		return;
	/* The opener is gone (killed while waiting): nobody to match. */
	memset(cred, 0, sizeof(*cred));
	cred->pid = tid;
	cred->uid = cred->euid = cred->gid = cred->egid = (uint32_t)-1;
	cred->suid = cred->sgid = (uint32_t)-1;
	cred->auid = cred->ses = (uint32_t)-1;
	snprintf(cred->comm, sizeof(cred->comm), "?");
}

/* readlink gives an unlinked file's name with " (deleted)"; the kernel's
 * IMA records it without (d_absolute_path), and so would a policy. */
static void strip_deleted(char *path, nlink_t nlink)
{
	static const char tag[] = " (deleted)";
	size_t n = strlen(path), t = sizeof(tag) - 1;

	if (nlink == 0 && n > t && !strcmp(path + n - t, tag))
		path[n - t] = '\0';
}

void worker_handle(struct perm_slot *sl)
{
	struct uevm_file f = { .fd = sl->fd, .dirfd = -1, .io = true };
	struct integrity_event ev = { 0 };
	struct integrity_cred cred;
	char path[PATH_MAX];
	struct stat before;
	enum ima_hooks func;
	int mask, oflags = 0, rc;
	bool exec_open, from_memory;

	if (atomic_load(&sl->answered))
		return;		/* the watchdog gave up on this one */
	/* The reader's fstat of this fd, taken while the opener waits: the
	 * "before" stamp (a change since is seen by the later stamps). */
	if (!sl->have_st) {
		perm_answer(sl, true, false);
		return;
	}
	f.st = sl->st;
	/* An empty file is judged by its size (a new file's exemption, the
	 * notifier sync, O_TMPFILE): a write since the reader's stamp must
	 * count there, so take a fresh one. */
	if (f.st.st_size == 0 && fstat(f.fd, &f.st) < 0) {
		perm_answer(sl, true, false);
		return;
	}
	if (!S_ISREG(f.st.st_mode)) {
		perm_answer(sl, true, false);
		return;
	}
	before = f.st;
	uevm_file_pin_generation(&f);
	fd_path(f.fd, path, sizeof(path));
	strip_deleted(path, f.st.st_nlink);
	f.path = path;
	if (sl->have_cred)
		cred = sl->cred;
	else
		cred_of(sl->tid, &cred);
	if (sl->mask & FAN_OPEN_EXEC_PERM) {
		func = BPRM_CHECK;
		mask = MAY_EXEC;
	} else {
		func = FILE_CHECK;
		opener_access(sl->tid, &mask, &oflags, &exec_open, &from_memory);
		if (from_memory)
			opener_confirm_write(f.fd, &mask, &oflags);
		/* Only the open that made the inode creates it (FMODE_CREATED);
		 * a file an O_CREAT open made is known by its FAN_CREATE. */
		ev.created = open_made_tmpfile(&f, oflags, &cred);
	}
	ev.file = &f;
	ev.cred = &cred;
	ev.filename = path;
	ev.mask = mask;
	ev.func = func;

	/* A close queued just before this open may still need its rehash,
	 * and writers still at work may have left the label behind. */
	if (D->notif_fd >= 0) {
		/* An O_CREAT open (or an empty file: mknod) may be the first
		 * open of a file whose FAN_CREATE is still queued. */
		notify_sync(&f, (oflags & O_CREAT) || f.st.st_size == 0);
		writes_catch_up(&f, &cred);
	}
	rc = func == BPRM_CHECK ? integrity_bprm_check(D->sys, &ev, -1)
				: integrity_file_check(D->sys, &ev);
	perm_answer(sl, rc == 0, false);

	/* The stamp from before the check stands for the content it
	 * judged: any change since (a label the check wrote included)
	 * takes the mark away again. */
	if (rc == 0 && atomic_load(&D->ignore_flags))
		fastpath(&ev, func, &before);
	uevm_file_unpin_generation();
	log_flush_local();
}
