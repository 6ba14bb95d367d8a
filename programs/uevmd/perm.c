// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The permission group: FAN_CLASS_CONTENT with FAN_OPEN_PERM and
 * FAN_OPEN_EXEC_PERM on the configured mounts or filesystems.
 *
 * The reader only reads: the daemon's own opens and everything in mode
 * "off" are allowed at once, the rest go to a fixed table of slots, each
 * with the opener's credentials and the inode.  Workers take them oldest
 * first, with two limits, so that one user cannot keep everyone else
 * waiting: a user (real uid) holds at most `share` workers, leaving the
 * rest to others; and an inode is appraised by one worker at a time (a
 * second open of a file being hashed waits for that result instead of
 * hashing it again).  Nor can one user take every slot: past
 * USER_SLOTS pending opens, that user's next ones are refused at once
 * (never allowed: they were not appraised), and the rest stay for
 * others.  A slot is answered exactly once - by its worker, or
 * by the watchdog when the deadline passed, which then also stops the
 * worker's hashing if others are waiting - and its event fd is closed only
 * by the worker that took it (or by the reader when there was no slot).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "uevmd.h"

#define NSLOTS 1024
/* Pending opens one user may have; the rest are kept for others. */
#define USER_SLOTS (NSLOTS * 3 / 4)

static struct perm_slot slots[NSLOTS];
static int free_list[NSLOTS], n_free;
static int q_head = -1, q_tail = -1, q_count;	/* queued, oldest first */
static int *running;		/* slot index per worker, -1: idle */
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static pthread_t reader;
static pthread_t *workers;
static int n_workers, share;
static uint32_t last_user = (uint32_t)-1;	/* whose open a worker took last */
static atomic_llong heartbeat;
static bool queue_stop, reader_started;

#define PERM_EVENTS (FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM)

static void slots_init(void)
{
	n_free = 0;
	for (int i = 0; i < NSLOTS; i++) {
		slots[i].fd = -1;
		free_list[n_free++] = NSLOTS - 1 - i;
	}
}

static void *reader_main(void *arg);

/*
 * The permission group kept by a supervisor (or systemd's descriptor
 * store) while the previous uevmd died.  Opens it had read but not
 * answered are still pending in the kernel, known only by their
 * descriptor numbers in the dead process: each number is answered
 * "deny" (no one appraised them) before any new event is read, so none
 * can be mistaken for a new one.  Its ignore marks go too (this daemon
 * has judged nothing yet).  Then the reader starts at once: this
 * daemon's own opens while it starts up are allowed, others wait.
 */
int perm_adopt(int fd)
{
	struct rlimit rl;
	long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (1u << 20) ?
		   (long)rl.rlim_cur : 1L << 20;
	int ret;

	D->perm_fd = fd;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	for (long i = 0; i < max; i++) {
		struct fanotify_response r = { .fd = (int)i, .response = FAN_DENY };

		if (write(fd, &r, sizeof(r)) == (ssize_t)sizeof(r))
			D->stale_denied++;
	}
	fanotify_mark(fd, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL);
	slots_init();
	ret = pthread_create(&reader, NULL, reader_main, NULL);
	reader_started = ret == 0;
	return -ret;
}

int perm_init(void)
{
	unsigned int base = FAN_CLOEXEC | FAN_NONBLOCK | FAN_CLASS_CONTENT |
			    FAN_UNLIMITED_QUEUE | FAN_UNLIMITED_MARKS | FAN_REPORT_TID;
	unsigned int ev_flags = O_RDONLY | O_LARGEFILE | O_CLOEXEC | O_NOATIME;
	int fd;

	if (D->perm_fd >= 0) {
		/* Adopted (perm_adopt): the group and its marks exist. */
		if (D->cfg.fastpath)
			atomic_store(&D->ignore_flags, FAN_MARK_IGNORE | FAN_MARK_EVICTABLE);
		return 0;
	}

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
	slots_init();
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

/* Has user UID its share of the slots already?  (Under qlock; counted
 * only when few are left.) */
static bool user_full(uint32_t uid)
{
	int n = 0;

	if (n_free > NSLOTS - USER_SLOTS)
		return false;
	for (int i = 0; i < NSLOTS; i++)
		n += slots[i].state != SLOT_FREE && slots[i].have_cred &&
		     slots[i].cred.uid == uid;
	return n >= USER_SLOTS;
}

/* Say why opens are refused unseen, at most once a second. */
static void overload_note(const struct fanotify_event_metadata *m, bool full, uint32_t uid)
{
	static int64_t last;
	int64_t now = mono_ns();
	char path[256], name[LOG_NAME_MAX];

	if (now - last < 1000000000LL)
		return;
	last = now;
	fd_path(m->fd, path, sizeof(path));
	log_untrusted(name, sizeof(name), path);
	if (full)
		ulog(LOG_WARNING, "%d opens waiting: this one (pid %d) and others refused "
		     "unseen: %s", NSLOTS, (int)m->pid, name);
	else
		ulog(LOG_WARNING, "user %u has %d opens waiting: this one (pid %d) and "
		     "others refused unseen: %s", uid, USER_SLOTS, (int)m->pid, name);
}

static void dispatch(const struct fanotify_event_metadata *m)
{
	struct integrity_cred cred;
	struct perm_slot *sl;
	bool have_cred, have_st;
	int64_t deadline;
	struct stat st;

	if (m->mask & FAN_Q_OVERFLOW) {
		atomic_fetch_add(&D->st.overflows, 1);
		return;
	}
	if (m->fd < 0)
		return;
	atomic_fetch_add(&D->st.events, 1);
	if (own_tid(m->pid) || (D->sys && integrity_sys_mode(D->sys) == INTEGRITY_MODE_OFF)) {
		respond(m->fd, FAN_ALLOW);
		close(m->fd);
		atomic_fetch_add(&D->st.own, 1);
		return;
	}
	/* Whose open of what: the opener is blocked in it, so this reads
	 * the credentials it opens with.  An opener already gone (or a
	 * stat that fails) is its own user and inode: nothing to share. */
	have_cred = integrity_cred_from_pid(m->pid, &cred) == 0;
	have_st = fstat(m->fd, &st) == 0;
	deadline = mono_ns() + (int64_t)D->cfg.deadline_ms * 1000000LL;
	/* One pass under the lock: take a slot, fill it, queue it. */
	pthread_mutex_lock(&qlock);
	if (!n_free || (have_cred && user_full(cred.uid))) {
		bool full = !n_free;

		pthread_mutex_unlock(&qlock);
		/* Every slot is taken (workers stuck), or this user has
		 * its share of them: the default now, rather than a host
		 * waiting on us. */
		respond(m->fd, response_bits(perm_late_allow(), true));
		overload_note(m, full, have_cred ? cred.uid : (uint32_t)-1);
		close(m->fd);
		atomic_fetch_add(&D->st.overload, 1);
		return;
	}
	sl = &slots[free_list[--n_free]];
	sl->have_cred = have_cred;
	sl->cred = cred;
	sl->fd = m->fd;
	sl->tid = m->pid;
	sl->mask = m->mask;
	sl->deadline = deadline;
	sl->started = 0;
	sl->cancel = 0;
	atomic_store(&sl->answered, 0);
	sl->have_st = have_st;
	sl->st = st;
	sl->dev = have_st ? st.st_dev : 0;
	sl->ino = have_st ? st.st_ino : 0;
	sl->state = SLOT_QUEUED;
	sl->next = -1;
	sl->prev = q_tail;
	if (q_tail >= 0)
		slots[q_tail].next = (int)(sl - slots);
	else
		q_head = (int)(sl - slots);
	q_tail = (int)(sl - slots);
	q_count++;
	pthread_mutex_unlock(&qlock);
	/* After the unlock: the woken worker does not block at once on the
	 * lock the reader still holds.  The queue changed under the lock,
	 * and a worker re-checks it under the lock before waiting again. */
	pthread_cond_signal(&qcond);
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
			/* Back to poll: it says whether more wait, which saves
			 * the read that would end in EAGAIN after each batch
			 * (one event a batch when opens come one at a time). */
			break;
		}
	}
	return NULL;
}

int64_t perm_reader_heartbeat(void)
{
	return atomic_load(&heartbeat);
}

/* The slot's user: its real uid, the one a setuid program cannot change
 * (-1: unknown, a user of its own). */
static uint32_t user_of(const struct perm_slot *sl)
{
	return sl->have_cred ? sl->cred.uid : (uint32_t)-1;
}

/* May a worker take SL now?  (Under qlock.) */
static bool eligible(const struct perm_slot *sl)
{
	int same_user = 0;

	if (atomic_load(&sl->answered))
		return true;	/* answered late: only its fd to close */
	for (int w = 0; w < n_workers; w++) {
		const struct perm_slot *r;

		if (running[w] < 0)
			continue;
		r = &slots[running[w]];
		if (sl->ino && r->ino == sl->ino && r->dev == sl->dev)
			return false;	/* wait for that worker's result */
		if (sl->have_cred && user_of(r) == user_of(sl))
			same_user++;
	}
	return same_user < share;
}

static void unqueue(struct perm_slot *sl)
{
	if (sl->prev >= 0)
		slots[sl->prev].next = sl->next;
	else
		q_head = sl->next;
	if (sl->next >= 0)
		slots[sl->next].prev = sl->prev;
	else
		q_tail = sl->prev;
	q_count--;
}

static void count_wait(const struct perm_slot *sl)
{
	bool inode = false;

	for (int w = 0; w < n_workers && !inode; w++)
		inode = running[w] >= 0 && sl->ino && slots[running[w]].ino == sl->ino &&
			slots[running[w]].dev == sl->dev;
	atomic_fetch_add(inode ? &D->st.inode_waits : &D->st.share_waits, 1);
}

struct perm_slot *perm_next(int worker)
{
	struct perm_slot *sl = NULL;

	pthread_mutex_lock(&qlock);
	running[worker] = -1;
	for (;;) {
		/* Oldest first, but of another user than the one served
		 * last when there is one: a user with hundreds of opens
		 * queued must not go first again each time a worker frees. */
		for (int i = q_head; i >= 0; i = slots[i].next) {
			if (!eligible(&slots[i]))
				continue;
			if (!sl)
				sl = &slots[i];
			if (atomic_load(&slots[i].answered) || user_of(&slots[i]) != last_user ||
			    !slots[i].have_cred) {
				sl = &slots[i];
				break;
			}
		}
		if (sl || (queue_stop && !q_count))
			break;
		if (q_count && !sl)
			count_wait(&slots[q_head]);
		pthread_cond_wait(&qcond, &qlock);
	}
	if (sl) {
		unqueue(sl);
		if (!atomic_load(&sl->answered))
			last_user = user_of(sl);
		sl->state = SLOT_RUNNING;
		sl->started = mono_ns();
		running[worker] = (int)(sl - slots);
	}
	pthread_mutex_unlock(&qlock);
	return sl;
}

void perm_release(int worker, struct perm_slot *sl)
{
	int fd;

	pthread_mutex_lock(&qlock);
	fd = sl->fd;
	sl->fd = -1;
	sl->state = SLOT_FREE;
	free_list[n_free++] = (int)(sl - slots);
	running[worker] = -1;
	/* Its inode's waiters and its user's may go now. */
	if (q_count)
		pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
	/* Closed outside the lock (a close can take long: the file's last
	 * reference).  The slot no longer names the number, and the kernel
	 * cannot hand it to a new event before this close. */
	close(fd);
}

/* Under qlock: the control thread may ask while perm_start() sets them. */
int perm_workers(void)
{
	int n;

	pthread_mutex_lock(&qlock);
	n = n_workers;
	pthread_mutex_unlock(&qlock);
	return n;
}

int perm_share(void)
{
	int n;

	pthread_mutex_lock(&qlock);
	n = share;
	pthread_mutex_unlock(&qlock);
	return n;
}

bool perm_late_allow(void)
{
	/* Never "allow" for content that was not appraised: on_timeout =
	 * allow holds only while no rule of the policy appraises. */
	return D->cfg.deadline_allow &&
	       !(ima_policy_flag(integrity_sys_policy(D->sys)) & IMA_APPRAISE);
}

/*
 * Every worker is held by other users and an open has waited half its
 * deadline: the work that has run longest among theirs stops, so that
 * this one is answered in time.  The stopped open is refused (its content
 * was not appraised) and nothing is cached.  Alone, or waiting only for
 * itself, a user's big file is hashed to the end.  (Under qlock.)
 */
static void unblock_waiters(int64_t now)
{
	int64_t half = (int64_t)D->cfg.deadline_ms * 500000LL;

	for (int i = q_head; i >= 0; i = slots[i].next) {
		const struct perm_slot *q = &slots[i];
		struct perm_slot *victim = NULL;

		if (atomic_load(&q->answered) || q->deadline - now > half)
			continue;
		for (int w = 0; w < n_workers; w++) {
			struct perm_slot *r = running[w] >= 0 ? &slots[running[w]] : NULL;

			if (!r)
				return;		/* a worker is free: nothing to stop */
			if (__atomic_load_n(&r->cancel, __ATOMIC_RELAXED) ||
			    (q->have_cred && r->have_cred && user_of(r) == user_of(q)))
				continue;
			if (!victim || r->started < victim->started)
				victim = r;
		}
		if (victim) {
			__atomic_store_n(&victim->cancel, 1, __ATOMIC_RELAXED);
			atomic_fetch_add(&D->st.cancelled, 1);
		}
	}
}

void perm_load(int *busy, int *queued)
{
	pthread_mutex_lock(&qlock);
	*busy = 0;
	for (int w = 0; running && w < n_workers; w++)
		*busy += running[w] >= 0;
	*queued = q_count;
	pthread_mutex_unlock(&qlock);
}

int64_t perm_expire(int64_t now)
{
	struct { pid_t tid; char path[256]; } late[8];
	int nlate = 0, more = 0;
	int64_t oldest = 0;
	bool allow = perm_late_allow();

	pthread_mutex_lock(&qlock);
	unblock_waiters(now);
	for (int i = 0; i < NSLOTS; i++) {
		struct perm_slot *sl = &slots[i];

		if (sl->state == SLOT_FREE)
			continue;
		if (sl->state == SLOT_RUNNING && now - sl->started > oldest)
			oldest = now - sl->started;
		if (atomic_load(&sl->answered) || sl->deadline > now)
			continue;
		if (!perm_answer(sl, allow, true))
			continue;
		atomic_fetch_add(&D->st.late, 1);
		if (sl->state == SLOT_QUEUED)
			pthread_cond_broadcast(&qcond);	/* only its fd to close */
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
	for (int i = 0; i < nlate; i++) {
		char name[LOG_NAME_MAX];

		ulog(LOG_WARNING, "no decision within %u ms (pid %d): %s: %s",
		     D->cfg.deadline_ms, (int)late[i].tid, allow ? "allowed" : "denied",
		     log_untrusted(name, sizeof(name), late[i].path));
	}
	if (more)
		ulog(LOG_WARNING, "%d more late answers", more);
	return oldest;
}

static void *worker_main(void *arg)
{
	int me = (int)(intptr_t)arg;

	own_tid_register();
	log_hold_records();
	for (;;) {
		struct perm_slot *sl = perm_next(me);

		if (!sl)
			break;
		uevmd_worker_enter();
		uevm_hash_cancel_on(&sl->cancel);
		worker_handle(sl);
		uevm_hash_cancel_on(NULL);
		uevmd_worker_leave();
		perm_release(me, sl);
	}
	return NULL;
}

int perm_start(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int ret, nw, sh, *run;

	/* Twice the CPUs (4 to 16): hashing is CPU-bound, and a worker
	 * held by one user's big file still leaves others some. */
	nw = D->cfg.workers ? D->cfg.workers :
	     (int)(2 * ncpu < 4 ? 4 : 2 * ncpu > 16 ? 16 : 2 * ncpu);
	sh = D->cfg.worker_share ? D->cfg.worker_share : nw - (nw / 4 ? nw / 4 : 1);
	if (sh < 1 || sh > nw)
		sh = sh < 1 ? 1 : nw;
	workers = calloc((size_t)nw, sizeof(*workers));
	run = malloc((size_t)nw * sizeof(*run));
	if (!workers || !run) {
		free(run);
		return -ENOMEM;
	}
	for (int i = 0; i < nw; i++)
		run[i] = -1;
	/* Published under qlock: the control thread (status) and the
	 * reader (already running when the group was adopted) read them. */
	pthread_mutex_lock(&qlock);
	n_workers = nw;
	share = sh;
	running = run;
	pthread_mutex_unlock(&qlock);
	for (int i = 0; i < nw; i++) {
		ret = pthread_create(&workers[i], NULL, worker_main, (void *)(intptr_t)i);
		if (ret) {
			pthread_mutex_lock(&qlock);
			n_workers = i;
			pthread_mutex_unlock(&qlock);
			return -ret;
		}
	}
	if (reader_started)
		return 0;	/* started when the group was adopted */
	ret = pthread_create(&reader, NULL, reader_main, NULL);
	reader_started = ret == 0;
	return -ret;
}

/*
 * At stop, the watchdog is gone: what is still undecided at its deadline
 * is answered here as it would have answered, and its hashing stops
 * (its worker then only closes it).  (The slots' deadlines bound the stop.)
 */
static void stop_late(int64_t now)
{
	perm_expire(now);
	pthread_mutex_lock(&qlock);
	for (int i = 0; i < NSLOTS; i++)
		if (slots[i].state == SLOT_RUNNING && atomic_load(&slots[i].answered))
			__atomic_store_n(&slots[i].cancel, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&qlock);
}

bool perm_stop(void)
{
	int64_t give_up;

	if (!reader_started)
		return true;
	pthread_join(reader, NULL);
	pthread_mutex_lock(&qlock);
	queue_stop = true;
	pthread_cond_broadcast(&qcond);
	pthread_mutex_unlock(&qlock);
	/*
	 * Opens read before the stop get their real answers: the workers
	 * finish the ones they hold and the queue.  (Cancelling the hashing
	 * in progress refused those opens: a good file's legitimate user got
	 * EPERM because the daemon was stopping.)  Only what is late is
	 * stopped, and a worker stuck in a TPM or a hung filesystem is left
	 * behind 5 s after the deadline: the kernel allows what it holds
	 * when the group closes.
	 */
	give_up = mono_ns() + ((int64_t)D->cfg.deadline_ms + 5000) * 1000000LL;
	for (int i = 0; i < n_workers;) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (pthread_timedjoin_np(workers[i], NULL, &ts) == 0) {
			i++;
			continue;
		}
		if (mono_ns() > give_up) {
			ulog(LOG_WARNING, "a worker did not stop; exiting without it");
			return false;
		}
		stop_late(mono_ns());
	}
	free(workers);
	{
		int *run;

		pthread_mutex_lock(&qlock);	/* status may be reading it */
		run = running;
		running = NULL;
		pthread_mutex_unlock(&qlock);
		free(run);
	}
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
