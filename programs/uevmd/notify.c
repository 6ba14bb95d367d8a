// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Keeping labels current: a notification-only fanotify group with file
 * handles (FAN_REPORT_DFID_NAME | FAN_REPORT_FID, and the created object's
 * own handle where the kernel has FAN_REPORT_TARGET_FID) on the marked
 * filesystems.
 *
 *   FAN_CLOSE_WRITE            the kernel's ima_file_free: when no writer
 *                              is left, integrity_file_free rehashes the
 *                              file (only one that was good, or new)
 *   FAN_ATTRIB                 integrity_inode_post_change (the HMAC only
 *                              for a file that was good before), and the
 *                              inode's ignore mark goes
 *   FAN_CREATE                 integrity_inode_post_init for a file the
 *                              kernel created (not a link(): see below)
 *   FAN_MOVED_FROM, _TO        nothing: EVM does not bind names, and a
 *                              rename never makes a file new
 *
 * Objects are opened by handle, never by a path that could be swapped.
 * The daemon's own changes (its xattr writes) are skipped by pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "uevmd.h"

#ifndef FAN_REPORT_TARGET_FID
#define FAN_REPORT_TARGET_FID 0x00001000
#endif

#define NOTIFY_EVENTS (FAN_CLOSE_WRITE | FAN_ATTRIB | FAN_CREATE | \
		       FAN_MOVED_FROM | FAN_MOVED_TO)

static pthread_t notifier;
static atomic_bool started;
static int wake_efd = -1;
static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sync_cond = PTHREAD_COND_INITIALIZER;
static uint64_t req_gen, done_gen;
static bool busy;
static atomic_bool quit;

int notify_init(void)
{
	unsigned int base = FAN_CLOEXEC | FAN_NONBLOCK | FAN_CLASS_NOTIF |
			    FAN_UNLIMITED_QUEUE | FAN_REPORT_DFID_NAME | FAN_REPORT_FID;
	int fd;

	/* Kept by a supervisor across a restart: the changes made meanwhile
	 * wait in it. */
	fd = sd_listen_fd("notif");
	if (fd >= 0) {
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	} else {
		fd = fanotify_init(base | FAN_REPORT_TARGET_FID, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && errno == EINVAL)	/* before Linux 5.17 */
			fd = fanotify_init(base, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		ulog(LOG_ERR, "fanotify_init (notification events with file handles): %m");
		return -errno;
	}
	D->notif_fd = fd;
	wake_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (wake_efd < 0)
		return -errno;
	for (int i = 0; i < D->nmarks; i++) {
		bool dup = false;

		for (int j = 0; j < i; j++)
			dup |= D->marks[j].dev == D->marks[i].dev;
		if (dup)
			continue;
		if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, NOTIFY_EVENTS,
				  D->marks[i].fd, NULL) < 0) {
			ulog(LOG_ERR, "%s: cannot watch the filesystem for changes: %m",
			     D->marks[i].path);
			return -errno;
		}
	}
	return 0;
}

static const struct uevmd_mark *mark_of(const __kernel_fsid_t *fsid)
{
	for (int i = 0; i < D->nmarks; i++)
		if (!memcmp(D->marks[i].fsid, fsid, sizeof(D->marks[i].fsid)))
			return &D->marks[i];
	return NULL;
}

struct fid_ref {
	const struct uevmd_mark *mark;
	struct file_handle *fh;
	const char *name;	/* DFID_NAME only */
};

static int open_handle(const struct fid_ref *r, int flags)
{
	if (!r->mark || !r->fh)
		return -ENOENT;
	return open_by_handle_at(r->mark->fd, r->fh, flags | O_CLOEXEC | O_NOCTTY);
}

/* Open the object an event is about, as a regular file. */
static int open_object(const struct fid_ref *obj, const struct fid_ref *dir,
		       struct uevm_file *f, char *path, size_t pathlen)
{
	int fd = -1;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->dirfd = -1;
	if (obj->fh) {
		fd = open_handle(obj, O_RDONLY | O_NONBLOCK);
	} else if (dir->fh && dir->name) {
		int dfd = open_handle(dir, O_RDONLY | O_DIRECTORY);

		if (dfd >= 0) {
			fd = openat(dfd, dir->name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW |
				    O_CLOEXEC | O_NOCTTY);
			close(dfd);
		}
	}
	if (fd < 0)
		return -errno;	/* gone (ESTALE, ENOENT), or a symlink (ELOOP) */
	if (fstat(fd, &f->st) < 0 || !S_ISREG(f->st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	f->fd = fd;
	f->io = true;
	fd_path(fd, path, pathlen);
	f->path = path;
	return 0;
}

/*
 * Which inodes are new.  A file is new (the kernel's IMA_NEW_FILE: no label
 * yet, labelled at its last writer's close) only when this group saw the
 * kernel create it.  FAN_CREATE also reports link(), which names an old
 * inode; the kernel then sends FAN_ATTRIB for its link count just before
 * the FAN_CREATE, and a created inode has no event before its FAN_CREATE.
 * So the inodes of the latest FAN_ATTRIB events are kept, and a FAN_CREATE
 * of one of them is a link.  (Events are read in order by this thread
 * alone; the few between a link's two events fit in the ring.)
 */
#define RECENT_ATTRIBS 1024

struct inode_key {
	dev_t dev;
	ino_t ino;
	uint32_t gen;
};

static struct inode_key recent_attribs[RECENT_ATTRIBS];
static unsigned int recent_next;

static void key_of(const struct uevm_file *f, struct inode_key *k)
{
	k->dev = f->st.st_dev;
	k->ino = f->st.st_ino;
	k->gen = 0;
	uevm_file_generation(f, &k->gen);
}

static void note_attrib(const struct uevm_file *f)
{
	key_of(f, &recent_attribs[recent_next++ % RECENT_ATTRIBS]);
}

static bool attrib_seen(const struct uevm_file *f)
{
	struct inode_key k;

	key_of(f, &k);
	for (unsigned int i = 0; i < RECENT_ATTRIBS; i++)
		if (recent_attribs[i].ino == k.ino && recent_attribs[i].dev == k.dev &&
		    recent_attribs[i].gen == k.gen)
			return true;
	return false;
}

static void on_create(struct uevm_file *f, const struct integrity_cred *cred)
{
	struct integrity_event ev = { .file = f, .cred = cred, .filename = f->path,
				      .created = true };

	if (attrib_seen(f) || !object_born(f))
		return;		/* a link to an old inode, or not a fresh file */
	if (integrity_inode_post_init(D->sys, &ev) == 0)
		atomic_fetch_add(&D->st.created, 1);
}

/* M: a copy of the event's header; EV: the event in the read buffer
 * (events with file handles are only 4-byte aligned there). */
static void handle_event(const struct fanotify_event_metadata *m, const char *ev)
{
	struct fid_ref obj = { 0 }, dir = { 0 };
	const char *p = ev + m->metadata_len;
	const char *end = ev + m->event_len;
	struct integrity_cred cred;
	char path[PATH_MAX];
	struct uevm_file f;

	if (m->mask & FAN_Q_OVERFLOW) {
		atomic_fetch_add(&D->st.overflows, 1);
		ulog(LOG_WARNING, "change notifications were lost: labels of files "
		     "changed meanwhile may be stale");
		return;
	}
	if (m->pid == D->pid)
		return;		/* our own label writes */
	atomic_fetch_add(&D->st.notify_events, 1);
	while (p + sizeof(struct fanotify_event_info_header) <= end) {
		const struct fanotify_event_info_header *h = (const void *)p;
		const struct fanotify_event_info_fid *fid = (const void *)p;
		struct file_handle *fh;

		if (h->len < sizeof(*h) || p + h->len > end)
			break;
		if (h->info_type == FAN_EVENT_INFO_TYPE_FID ||
		    h->info_type == FAN_EVENT_INFO_TYPE_DFID ||
		    h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
			struct fid_ref *r = h->info_type == FAN_EVENT_INFO_TYPE_FID ? &obj : &dir;

			fh = (struct file_handle *)fid->handle;
			r->mark = mark_of(&fid->fsid);
			r->fh = fh;
			if (h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME)
				r->name = (const char *)(fh->f_handle + fh->handle_bytes);
		}
		p += h->len;
	}
	/* A dirent event's FID (FAN_REPORT_TARGET_FID) is the new object;
	 * without it the object is reached through the directory. */
	if (open_object(&obj, &dir, &f, path, sizeof(path)) < 0)
		return;
	if (integrity_cred_from_pid(m->pid, &cred) < 0) {
		memset(&cred, 0, sizeof(cred));
		cred.pid = m->pid;
		cred.auid = cred.ses = (uint32_t)-1;
		snprintf(cred.comm, sizeof(cred.comm), "?");
	}
	if (m->mask & FAN_CREATE)
		on_create(&f, &cred);
	if (m->mask & FAN_CLOSE_WRITE)
		relabel_close_write(&f, &cred);
	if (m->mask & FAN_ATTRIB) {
		note_attrib(&f);
		relabel_attrib(&f, &cred);
	}
	close(f.fd);
	log_flush_local();
}

static void drain(void)
{
	static char buf[64 * 1024] __attribute__((aligned(8)));

	for (;;) {
		ssize_t len = read(D->notif_fd, buf, sizeof(buf));
		struct fanotify_event_metadata m;
		size_t off = 0;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				ulog(LOG_ERR, "reading change notifications: %m");
			return;
		}
		while (off + sizeof(m) <= (size_t)len) {
			memcpy(&m, buf + off, sizeof(m));
			if (m.event_len < sizeof(m) || off + m.event_len > (size_t)len)
				break;
			if (m.vers == FANOTIFY_METADATA_VERSION)
				handle_event(&m, buf + off);
			off += m.event_len;
		}
	}
}

static void *notifier_main(void *arg)
{
	struct pollfd pfd[3] = { { D->notif_fd, POLLIN, 0 }, { wake_efd, POLLIN, 0 },
				 { D->stop_efd, POLLIN, 0 } };

	(void)arg;
	own_tid_register();
	log_hold_records();
	for (;;) {
		uint64_t start, v;

		if (poll(pfd, 3, 1000) < 0 && errno != EINTR)
			break;
		if (pfd[2].revents & POLLIN)
			break;	/* the permission reader is gone: no more opens */
		if (read(wake_efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			break;
		pthread_mutex_lock(&sync_lock);
		start = req_gen;
		busy = true;
		pthread_mutex_unlock(&sync_lock);
		drain();
		pthread_mutex_lock(&sync_lock);
		done_gen = start;
		busy = false;
		pthread_cond_broadcast(&sync_cond);
		pthread_mutex_unlock(&sync_lock);
		/* Stopping: what was queued before is done; leave. */
		if (atomic_load(&quit))
			break;
	}
	return NULL;
}

/* Only an inode the cache knows can have queued changes that matter to
 * its next open: a close to rehash (good or new files only), a chmod of a
 * file known good.  Others do not wait for the notifier. */
static bool known_inode(const struct uevm_file *f)
{
	struct integrity_iint_cache *iint;
	uint32_t gen = 0;

	uevm_file_generation(f, &gen);
	iint = integrity_iint_find(integrity_sys_cache(D->sys), f->st.st_dev,
				   f->st.st_ino, gen);
	integrity_iint_put(integrity_sys_cache(D->sys), iint);
	return iint != NULL;
}

void notify_sync(const struct uevm_file *f, bool force)
{
	struct pollfd p = { D->notif_fd, POLLIN, 0 };
	uint64_t mine, one = 1;
	struct timespec until;
	/* Half the answer deadline, at most a second: then appraise anyway. */
	unsigned int ms = D->cfg.deadline_ms / 2 < 1000 ? D->cfg.deadline_ms / 2 : 1000;

	if (!started || (!force && !known_inode(f)))
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	until.tv_sec += ms / 1000 + until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&sync_lock);
	if (busy || poll(&p, 1, 0) > 0) {
		/* Events wait to be read: have them read (never a rehash: those
		 * are jobs, see relabel.c). */
		mine = ++req_gen;
		pthread_mutex_unlock(&sync_lock);
		atomic_fetch_add(&D->st.syncs, 1);
		if (write(wake_efd, &one, sizeof(one)) < 0)
			return;
		pthread_mutex_lock(&sync_lock);
		while (done_gen < mine)
			if (pthread_cond_timedwait(&sync_cond, &sync_lock, &until)) {
				atomic_fetch_add(&D->st.sync_timeouts, 1);
				break;
			}
	}
	pthread_mutex_unlock(&sync_lock);
	/* F's own rehash or HMAC update, if one is still to be done. */
	if (!relabel_settle(f, (int64_t)until.tv_sec * 1000000000LL + until.tv_nsec))
		atomic_fetch_add(&D->st.sync_timeouts, 1);
}

int notify_start(void)
{
	int ret = relabel_start();

	if (ret)
		return ret;
	ret = pthread_create(&notifier, NULL, notifier_main, NULL);
	if (ret)
		return -ret;
	started = true;
	return 0;
}

/* Called while the permission reader still runs: the last changes are
 * processed (their files opened by handle) before the daemon goes. */
void notify_stop(void)
{
	uint64_t one = 1;

	if (started) {
		atomic_store(&quit, true);
		if (write(wake_efd, &one, sizeof(one)) < 0)
			ulog(LOG_ERR, "eventfd: %m");
		pthread_join(notifier, NULL);
	}
	relabel_stop();
	started = false;
	/* wake_efd stays open until exit: a worker past notify_sync's
	 * check of `started` may still write to it (workers stop after
	 * this), and a closed number could name another file by then. */
}
