// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The permission group: FAN_CLASS_CONTENT with FAN_OPEN_PERM and
 * FAN_OPEN_EXEC_PERM on the configured mounts or filesystems.
 *
 * The reader only reads: the daemon's own opens and everything in mode
 * "off" are allowed at once, the rest go to a fixed table of slots that
 * the workers take in order.  A slot is answered exactly once - by its
 * worker, or by the watchdog when the deadline passed - and its event fd
 * is closed only by the worker that took it (or by the reader when there
 * was no slot).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "uevmd.h"

#define NSLOTS 1024

static struct perm_slot slots[NSLOTS];
static int free_list[NSLOTS], n_free;
static int ring[NSLOTS], r_head, r_count;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static pthread_t reader;
static pthread_t *workers;
static int n_workers;
static atomic_llong heartbeat;
static bool queue_stop, reader_started;

#define PERM_EVENTS (FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM)

int perm_init(void)
{
	unsigned int base = FAN_CLOEXEC | FAN_NONBLOCK | FAN_CLASS_CONTENT |
			    FAN_UNLIMITED_QUEUE | FAN_UNLIMITED_MARKS | FAN_REPORT_TID;
	unsigned int ev_flags = O_RDONLY | O_LARGEFILE | O_CLOEXEC | O_NOATIME;
	int fd;

	/* FAN_ENABLE_AUDIT needs CAP_AUDIT_WRITE and Linux 4.15. */
	fd = fanotify_init(base | FAN_ENABLE_AUDIT, ev_flags);
	if (fd < 0 && (errno == EINVAL || errno == EPERM))
		fd = fanotify_init(base, ev_flags);
	else if (fd >= 0)
		D->fan_audit = true;
	if (fd < 0 && errno == EINVAL)	/* O_NOATIME in event_f_flags */
		fd = fanotify_init(base, ev_flags & ~(unsigned int)O_NOATIME);
	if (fd < 0) {
		ulog(LOG_ERR, "fanotify_init (permission events): %m%s",
		     errno == EPERM ? " (needs CAP_SYS_ADMIN)" :
		     errno == EINVAL ? " (kernel without CONFIG_FANOTIFY_ACCESS_PERMISSIONS?)" : "");
		return -errno;
	}
	D->perm_fd = fd;
	if (D->cfg.fastpath)
		atomic_store(&D->ignore_flags, FAN_MARK_IGNORE | FAN_MARK_EVICTABLE);
	for (int i = 0; i < NSLOTS; i++) {
		slots[i].fd = -1;
		free_list[n_free++] = NSLOTS - 1 - i;
	}
	return 0;
}

int perm_add_marks(void)
{
	for (int i = 0; i < D->nmarks; i++) {
		const struct uevmd_mark *m = &D->marks[i];

		if (fanotify_mark(D->perm_fd, FAN_MARK_ADD |
				  (m->filesystem ? FAN_MARK_FILESYSTEM : FAN_MARK_MOUNT),
				  PERM_EVENTS, m->fd, NULL) < 0) {
			int e = errno;

			ulog(LOG_ERR, "%s: cannot mark the %s: %s", m->path,
			     m->filesystem ? "filesystem" : "mount", strerror(e));
			return -e;
		}
	}
	return 0;
}

static unsigned int response_bits(bool allow, bool audit)
{
	unsigned int r = allow ? FAN_ALLOW : FAN_DENY;

	if (D->fan_audit && (audit || D->cfg.fanotify_audit == FAN_AUDIT_ALL ||
			     (!allow && D->cfg.fanotify_audit == FAN_AUDIT_DENY)))
		r |= FAN_AUDIT;
	return r;
}

static void respond(int fd, unsigned int response)
{
	struct fanotify_response r = { .fd = fd, .response = response };

	/* Fails only for a bad fd or response: nothing to retry. */
	if (write(D->perm_fd, &r, sizeof(r)) != sizeof(r))
		ulog(LOG_ERR, "fanotify response: %m");
}

bool perm_answer(struct perm_slot *sl, bool allow, bool audit)
{
	if (atomic_exchange(&sl->answered, 1))
		return false;
	respond(sl->fd, response_bits(allow, audit));
	atomic_fetch_add(allow ? &D->st.allowed : &D->st.denied, 1);
	return true;
}

static void dispatch(const struct fanotify_event_metadata *m)
{
	struct perm_slot *sl;

	if (m->mask & FAN_Q_OVERFLOW) {
		atomic_fetch_add(&D->st.overflows, 1);
		return;
	}
	if (m->fd < 0)
		return;
	atomic_fetch_add(&D->st.events, 1);
	if (own_tid(m->pid) || integrity_sys_mode(D->sys) == INTEGRITY_MODE_OFF) {
		respond(m->fd, FAN_ALLOW);
		close(m->fd);
		atomic_fetch_add(&D->st.own, 1);
		return;
	}
	pthread_mutex_lock(&qlock);
	if (!n_free) {
		pthread_mutex_unlock(&qlock);
		/* Every slot is taken (workers stuck): the configured
		 * default now, rather than a host waiting on us. */
		respond(m->fd, response_bits(D->cfg.deadline_allow, true));
		close(m->fd);
		atomic_fetch_add(&D->st.overload, 1);
		return;
	}
	sl = &slots[free_list[--n_free]];
	sl->fd = m->fd;
	sl->tid = m->pid;
	sl->mask = m->mask;
	sl->deadline = mono_ns() + (int64_t)D->cfg.deadline_ms * 1000000LL;
	sl->started = 0;
	atomic_store(&sl->answered, 0);
	sl->state = SLOT_QUEUED;
	ring[(r_head + r_count) % NSLOTS] = (int)(sl - slots);
	r_count++;
	pthread_cond_signal(&qcond);
	pthread_mutex_unlock(&qlock);
}

static void *reader_main(void *arg)
{
	static char buf[64 * 1024] __attribute__((aligned(8)));
	struct pollfd pfd[2] = { { D->perm_fd, POLLIN, 0 }, { D->stop_efd, POLLIN, 0 } };
	bool bad_version = false;

	(void)arg;
	own_tid_register();
	while (!atomic_load(&D->stopping)) {
		int r;

		atomic_store(&heartbeat, mono_ns());
		r = poll(pfd, 2, 500);
		if (r < 0 && errno != EINTR) {
			ulog(LOG_ERR, "poll: %m");
			break;
		}
		if (r <= 0 || (pfd[1].revents & POLLIN))
			continue;
		for (;;) {
			ssize_t len = read(D->perm_fd, buf, sizeof(buf));
			const struct fanotify_event_metadata *m = (void *)buf;

			if (len < 0) {
				if (errno != EAGAIN && errno != EINTR)
					ulog(LOG_ERR, "reading fanotify events: %m");
				break;
			}
			for (; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
				if (m->vers != FANOTIFY_METADATA_VERSION) {
					if (!bad_version)
						ulog(LOG_ERR, "fanotify metadata version %u, expected %u",
						     m->vers, FANOTIFY_METADATA_VERSION);
					bad_version = true;
					if (m->fd >= 0) {
						respond(m->fd, FAN_ALLOW);
						close(m->fd);
					}
					continue;
				}
				dispatch(m);
			}
		}
	}
	return NULL;
}

int64_t perm_reader_heartbeat(void)
{
	return atomic_load(&heartbeat);
}

struct perm_slot *perm_next(void)
{
	struct perm_slot *sl;

	pthread_mutex_lock(&qlock);
	while (!r_count && !queue_stop)
		pthread_cond_wait(&qcond, &qlock);
	if (!r_count) {
		pthread_mutex_unlock(&qlock);
		return NULL;
	}
	sl = &slots[ring[r_head]];
	r_head = (r_head + 1) % NSLOTS;
	r_count--;
	sl->state = SLOT_RUNNING;
	sl->started = mono_ns();
	pthread_mutex_unlock(&qlock);
	return sl;
}

void perm_release(struct perm_slot *sl)
{
	pthread_mutex_lock(&qlock);
	close(sl->fd);
	sl->fd = -1;
	sl->state = SLOT_FREE;
	free_list[n_free++] = (int)(sl - slots);
	pthread_mutex_unlock(&qlock);
}

int64_t perm_expire(int64_t now)
{
	struct { pid_t tid; char path[256]; } late[8];
	int nlate = 0, more = 0;
	int64_t oldest = 0;

	pthread_mutex_lock(&qlock);
	for (int i = 0; i < NSLOTS; i++) {
		struct perm_slot *sl = &slots[i];

		if (sl->state == SLOT_FREE)
			continue;
		if (sl->state == SLOT_RUNNING && now - sl->started > oldest)
			oldest = now - sl->started;
		if (atomic_load(&sl->answered) || sl->deadline > now)
			continue;
		if (!perm_answer(sl, D->cfg.deadline_allow, true))
			continue;
		atomic_fetch_add(&D->st.late, 1);
		if (nlate < 8) {
			late[nlate].tid = sl->tid;
			fd_path(sl->fd, late[nlate].path, sizeof(late[nlate].path));
			nlate++;
		} else {
			more++;
		}
	}
	pthread_mutex_unlock(&qlock);
	/* Logged only now, after every late answer was written. */
	for (int i = 0; i < nlate; i++)
		ulog(LOG_WARNING, "no decision for %s (pid %d) within %u ms: %s",
		     late[i].path, (int)late[i].tid, D->cfg.deadline_ms,
		     D->cfg.deadline_allow ? "allowed" : "denied");
	if (more)
		ulog(LOG_WARNING, "%d more late answers", more);
	return oldest;
}

static void *worker_main(void *arg)
{
	(void)arg;
	own_tid_register();
	log_hold_records();
	for (;;) {
		struct perm_slot *sl = perm_next();

		if (!sl)
			break;
		uevmd_worker_enter();
		worker_handle(sl);
		uevmd_worker_leave();
		perm_release(sl);
	}
	return NULL;
}

int perm_start(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int ret;

	n_workers = D->cfg.workers ? D->cfg.workers :
		    (int)(ncpu < 2 ? 2 : ncpu > 16 ? 16 : ncpu);
	workers = calloc((size_t)n_workers, sizeof(*workers));
	if (!workers)
		return -ENOMEM;
	for (int i = 0; i < n_workers; i++) {
		ret = pthread_create(&workers[i], NULL, worker_main, NULL);
		if (ret) {
			n_workers = i;
			return -ret;
		}
	}
	ret = pthread_create(&reader, NULL, reader_main, NULL);
	reader_started = ret == 0;
	return -ret;
}

bool perm_stop(void)
{
	if (!reader_started)
		return true;
	pthread_join(reader, NULL);
	pthread_mutex_lock(&qlock);
	queue_stop = true;
	pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
	/* A worker stuck in a TPM or a hung filesystem is left behind: the
	 * kernel allows what it holds when the group closes. */
	for (int i = 0; i < n_workers; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 5;
		if (pthread_timedjoin_np(workers[i], NULL, &ts)) {
			ulog(LOG_WARNING, "a worker did not stop; exiting without it");
			return false;
		}
	}
	free(workers);
	/* Anything still queued: allowed as the kernel would on close. */
	for (int i = 0; i < NSLOTS; i++)
		if (slots[i].state != SLOT_FREE && slots[i].fd >= 0) {
			perm_answer(&slots[i], true, false);
			close(slots[i].fd);
			slots[i].fd = -1;
		}
	return true;
}

void perm_flush_ignore_marks(void)
{
	/* FAN_MARK_FLUSH without MOUNT/FILESYSTEM: every inode mark, and the
	 * daemon places inode marks only as ignore marks. */
	if (D->perm_fd >= 0 && fanotify_mark(D->perm_fd, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL) < 0)
		ulog(LOG_WARNING, "cannot flush ignore marks: %m");
}

void perm_forget_inode(int fd)
{
	unsigned int flags = atomic_load(&D->ignore_flags);
	unsigned int kind = flags & (FAN_MARK_IGNORE | FAN_MARK_IGNORED_MASK);

	if (!kind)
		return;
	if (fanotify_mark(D->perm_fd, FAN_MARK_REMOVE | kind, PERM_EVENTS, fd, NULL) == 0)
		atomic_fetch_add(&D->st.marks_undone, 1);
}
