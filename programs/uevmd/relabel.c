// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Keeping labels current after the changes the notifier reports: the
 * rehash after a writer's close (the kernel's ima_file_free) and the HMAC
 * after a chmod, chown or xattr change (integrity_inode_post_change).
 *
 * The notifier only reads events; a rehash can take seconds (a big file),
 * and while it ran no other event was read - a FAN_CREATE among them, which
 * a file's creating open waits for.  So the changes of an inode become
 * jobs, done in order per inode by a relabel thread, and a worker about to
 * appraise an inode first runs that inode's queued jobs itself (or waits
 * for the one in progress): a user's own rehash never waits behind
 * another user's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "uevmd.h"

enum job_kind { JOB_CLOSE_WRITE, JOB_ATTRIB };

struct job {
	struct job *next;
	enum job_kind kind;
	int mount_fd;		/* a watched mount of the inode's filesystem */
	struct integrity_cred cred;
	/* The inode by handle, not by descriptor: a queue of descriptors
	 * would run out of them (and keep deleted files' blocks). */
	struct file_handle fh;	/* followed by its f_handle bytes */
};

/* The jobs of one inode, in order; an inode is worked on by one thread at
 * a time.  Inodes with jobs and nobody working on them wait in the ready
 * list. */
struct inode_jobs {
	struct inode_jobs *hnext;	/* hash chain */
	struct inode_jobs *rnext;	/* ready list */
	dev_t dev;
	ino_t ino;
	struct job *first, **last;
	bool running, ready;
	bool close_queued;		/* a queued rehash covers later closes */
};

/* Jobs beyond this are dropped: their files keep their old labels and
 * fail appraisal (detectably), never pass for content not hashed.  An
 * inode has at most three (a rehash, and attribute updates around it). */
#define MAX_JOBS 65536
#define NBUCKETS 4096
/* Users take turns among the first ready inodes. */
#define FAIR_SCAN 64

static pthread_mutex_t jlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t jcond = PTHREAD_COND_INITIALIZER;	/* queued, or done */
static struct inode_jobs *buckets[NBUCKETS];
static struct inode_jobs *ready_head, **ready_tail = &ready_head;
static unsigned int njobs;
static uint32_t last_uid = (uint32_t)-1;
static bool stopping, started;
static int cancel_hashing;	/* at stop, after STOP_GRACE_SEC */
static pthread_t thread;

#define STOP_GRACE_SEC 10

/* ---- the work ------------------------------------------------------------------------ */

/* The entry's flags (0 when the inode is not in the cache), after
 * setting SET and bringing its writer count into [WMIN, WMAX] (-1: no
 * bound). */
static uint32_t iint_flags(struct integrity_sys *s, const struct uevm_file *f,
			   uint32_t set, int wmin, int wmax)
{
	struct integrity_iint_cache *iint;
	uint32_t gen = 0, flags;
	unsigned int w;

	uevm_file_generation(f, &gen);
	iint = integrity_iint_find(integrity_sys_cache(s), f->st.st_dev, f->st.st_ino, gen);
	if (!iint)
		return 0;
	integrity_iint_lock(iint);
	flags = integrity_iint_flags(iint);
	w = integrity_iint_writers(iint);
	if (wmax >= 0 && w > (unsigned int)wmax)
		integrity_iint_add_writer(iint, -(int)(w - (unsigned int)wmax));
	else if (wmin >= 0 && w < (unsigned int)wmin)
		integrity_iint_add_writer(iint, (int)((unsigned int)wmin - w));
	if (set)
		integrity_iint_set_flags(iint, set, 0);
	integrity_iint_unlock(iint);
	integrity_iint_put(integrity_sys_cache(s), iint);
	return flags;
}

/* Is the file behind FD open for writing anywhere?  1 yes, 0 no, -1 unknown. */
int writers_open(int fd)
{
	if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		return 0;
	}
	return errno == EAGAIN ? 1 : -1;
}

/*
 * The kernel rehashes at the last writer's close, in that close.  Here the
 * close is only reported, after it happened, and the next open (maybe a
 * writer's: it already counts as one) must not find a stale label.  So
 * every writer's close rehashes a file that was good or new when the write
 * open was allowed; while other writers remain (OTHERS: a read lease is
 * refused exactly then, the kernel's i_writecount), the entry keeps
 * expecting their writes.  The library's writer count is made to agree:
 * closes can be merged by fanotify, and write opens go unseen behind
 * ignore marks.
 */
static void relabel_after_writes(struct uevm_file *f, const struct integrity_cred *cred,
				 int others)
{
	struct integrity_event ev = { .file = f, .cred = cred, .filename = f->path,
				      .mask = MAY_WRITE, .written = true };
	uint32_t flags = iint_flags(D->sys, f, 0, -1, 1), keep = 0;

	integrity_file_free(D->sys, &ev);
	if (others != 0 && (flags & (IMA_UPDATE_XATTR | IMA_NEW_FILE)))
		keep = IMA_UPDATE_XATTR;
	/* A writer still open (a read lease refused: the kernel's
	 * i_writecount) still counts for open_writers, as in the kernel,
	 * and with it the violation already reported for it (else each
	 * write, then read, would report one more). */
	if (others == 1)
		iint_flags(D->sys, f, keep | (flags & IMA_EMITTED_OPENWRITERS), 1, -1);
	else if (keep)
		iint_flags(D->sys, f, keep, -1, -1);
	/* Record the status of the labels just written: a chmod that
	 * follows is judged against it (integrity_inode_post_change), and
	 * writes_catch_up() sees that nothing changed since. */
	if (fstat(f->fd, &f->st) == 0)
		evm_verify_current_integrity(D->sys, f);
}

static bool is_pass(enum integrity_status st)
{
	return st == INTEGRITY_PASS || st == INTEGRITY_PASS_IMMUTABLE;
}

/*
 * An open of a file that writers hold open and have changed since its
 * label was last known good: the kernel would still allow it (the status
 * is kept until the last writer's close); here the label is brought up to
 * date first, as that close would.  Only for entries that expect writes
 * (IMA_UPDATE_XATTR: good when the write open was allowed, or new).
 */
void writes_catch_up(struct uevm_file *f, const struct integrity_cred *cred)
{
	struct integrity_cache *c = integrity_sys_cache(D->sys);
	struct integrity_iint_cache *iint;
	struct integrity_stamp now;
	uint32_t gen = 0;
	bool fresh;

	if (!(iint_flags(D->sys, f, 0, -1, -1) & (IMA_UPDATE_XATTR | IMA_NEW_FILE)) ||
	    writers_open(f->fd) != 1)
		return;
	uevm_file_generation(f, &gen);
	integrity_stamp_of(&f->st, &now);
	/* Stamp-checked: a change since the last good status resets it. */
	iint = integrity_iint_get(c, f->st.st_dev, f->st.st_ino, gen, &now);
	if (!iint)
		return;
	integrity_iint_lock(iint);
	fresh = is_pass(integrity_iint_evm_status(iint)) ||
		is_pass(integrity_iint_ima_status(iint, FILE_CHECK)) ||
		is_pass(integrity_iint_ima_status(iint, BPRM_CHECK));
	integrity_iint_unlock(iint);
	integrity_iint_put(c, iint);
	if (!fresh)
		relabel_after_writes(f, cred, 1);
}

static void do_close_write(struct uevm_file *f, const struct integrity_cred *cred)
{
	relabel_after_writes(f, cred, writers_open(f->fd));
	/* The rehash ended what the library expected of writers it did not
	 * see open: later write opens must be seen again. */
	perm_forget_inode(f->fd);
}

static void do_attrib(struct uevm_file *f, const struct integrity_cred *cred)
{
	struct integrity_event ev = { .file = f, .cred = cred, .filename = f->path };

	if (fstat(f->fd, &f->st) < 0)
		return;
	if (integrity_inode_post_change(D->sys, &ev) == 0)
		atomic_fetch_add(&D->st.relabelled, 1);
	else
		atomic_fetch_add(&D->st.relabel_refused, 1);
	/* The next open is appraised again (IMA's results were reset). */
	perm_forget_inode(f->fd);
}

static void job_run(const struct inode_jobs *e, struct job *j)
{
	char path[PATH_MAX];
	struct uevm_file f = { .dirfd = -1, .io = true, .path = path };

	f.fd = open_by_handle_at(j->mount_fd, &j->fh, O_RDONLY | O_NONBLOCK |
				 O_CLOEXEC | O_NOCTTY);
	if (f.fd < 0)
		return;		/* gone meanwhile: nothing to label */
	if (fstat(f.fd, &f.st) == 0 && S_ISREG(f.st.st_mode) && f.st.st_ino == e->ino) {
		fd_path(f.fd, path, sizeof(path));
		if (j->kind == JOB_CLOSE_WRITE)
			do_close_write(&f, &j->cred);
		else
			do_attrib(&f, &j->cred);
		log_flush_local();
	}
	close(f.fd);
}

/* ---- the queue ----------------------------------------------------------------------- */

static struct inode_jobs **slot_of(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev;
	struct inode_jobs **pp = &buckets[(h >> 32) % NBUCKETS];

	while (*pp && ((*pp)->ino != ino || (*pp)->dev != dev))
		pp = &(*pp)->hnext;
	return pp;
}

/* E's last job (E has one): E->last points to its next field. */
static struct job *last_job(struct inode_jobs *e)
{
	return (struct job *)((char *)e->last - offsetof(struct job, next));
}

static void make_ready(struct inode_jobs *e)
{
	if (e->ready || e->running || !e->first)
		return;
	e->ready = true;
	e->rnext = NULL;
	*ready_tail = e;
	ready_tail = &e->rnext;
}

static void unready(struct inode_jobs *e)
{
	struct inode_jobs **pp = &ready_head;

	if (!e->ready)
		return;
	while (*pp != e)
		pp = &(*pp)->rnext;
	*pp = e->rnext;
	if (ready_tail == &e->rnext)
		ready_tail = pp;
	e->ready = false;
}

/* Forget E once it has no job and nobody works on it (under jlock). */
static void maybe_free(struct inode_jobs *e)
{
	struct inode_jobs **pp;

	if (e->first || e->running || e->ready)
		return;
	pp = slot_of(e->dev, e->ino);
	*pp = e->hnext;
	free(e);
}

/* Run E's first job in this thread; E is ours (running) meanwhile. */
static void run_first(struct inode_jobs *e)
{
	struct job *j = e->first;

	e->first = j->next;
	if (!e->first)
		e->last = &e->first;
	if (j->kind == JOB_CLOSE_WRITE)
		e->close_queued = false;
	njobs--;
	pthread_mutex_unlock(&jlock);
	job_run(e, j);
	free(j);
	pthread_mutex_lock(&jlock);
}

static int mount_fd_of(dev_t dev)
{
	for (int i = 0; i < D->nmarks; i++)
		if (D->marks[i].dev == dev)
			return D->marks[i].fd;
	return -1;
}

static void do_now(enum job_kind kind, struct uevm_file *f,
		   const struct integrity_cred *cred)
{
	if (kind == JOB_CLOSE_WRITE)
		do_close_write(f, cred);
	else
		do_attrib(f, cred);
}

static void queue(enum job_kind kind, struct uevm_file *f,
		  const struct integrity_cred *cred)
{
	struct job *j = calloc(1, sizeof(*j) + MAX_HANDLE_SZ);
	int mount_id, mfd = mount_fd_of(f->st.st_dev);
	struct inode_jobs **pp, *e;

	if (!j || mfd < 0) {
		free(j);
		do_now(kind, f, cred);	/* no way to queue it: now, in order */
		return;
	}
	j->fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(f->fd, "", &j->fh, &mount_id, AT_EMPTY_PATH) < 0) {
		free(j);
		do_now(kind, f, cred);
		return;
	}
	j->kind = kind;
	j->mount_fd = mfd;
	j->cred = *cred;
	pthread_mutex_lock(&jlock);
	pp = slot_of(f->st.st_dev, f->st.st_ino);
	e = *pp;
	/* One queued rehash hashes what every later close left; an update
	 * of attributes right after another is the same update. */
	if (e && ((kind == JOB_CLOSE_WRITE && e->close_queued) ||
		  (kind == JOB_ATTRIB && e->first &&
		   last_job(e)->kind == JOB_ATTRIB))) {
		pthread_mutex_unlock(&jlock);
		free(j);
		return;
	}
	if (njobs >= MAX_JOBS || (!e && !(e = calloc(1, sizeof(*e))))) {
		char name[2 * PATH_MAX + 3];

		pthread_mutex_unlock(&jlock);
		free(j);
		atomic_fetch_add(&D->st.relabel_dropped, 1);
		ulog(LOG_WARNING, "too many label updates pending: this one is dropped, "
		     "the file keeps its old labels: %s",
		     log_untrusted(name, sizeof(name), f->path));
		return;
	}
	if (!*pp) {
		e->dev = f->st.st_dev;
		e->ino = f->st.st_ino;
		e->last = &e->first;
		*pp = e;
	}
	*e->last = j;
	e->last = &j->next;
	if (kind == JOB_CLOSE_WRITE)
		e->close_queued = true;
	njobs++;
	make_ready(e);
	pthread_cond_broadcast(&jcond);
	pthread_mutex_unlock(&jlock);
}

void relabel_close_write(struct uevm_file *f, const struct integrity_cred *cred)
{
	queue(JOB_CLOSE_WRITE, f, cred);
}

void relabel_attrib(struct uevm_file *f, const struct integrity_cred *cred)
{
	struct inode_jobs *e;
	bool behind;

	/* After the inode's rehash still to come, in order; otherwise now
	 * (it is quick: an HMAC). */
	pthread_mutex_lock(&jlock);
	e = *slot_of(f->st.st_dev, f->st.st_ino);
	behind = e && (e->first || e->running);
	pthread_mutex_unlock(&jlock);
	if (behind)
		queue(JOB_ATTRIB, f, cred);
	else
		do_attrib(f, cred);
}

bool relabel_settle(const struct uevm_file *f, int64_t until_ns)
{
	struct timespec until = { until_ns / 1000000000LL, until_ns % 1000000000LL };
	bool settled = true;

	pthread_mutex_lock(&jlock);
	for (;;) {
		struct inode_jobs *e = *slot_of(f->st.st_dev, f->st.st_ino);

		if (!e)
			break;
		if (!e->running) {
			/* Its own changes: done by the thread that needs them. */
			unready(e);
			e->running = true;
			while (e->first)
				run_first(e);
			e->running = false;
			maybe_free(e);
			pthread_cond_broadcast(&jcond);
			continue;
		}
		if (pthread_cond_timedwait(&jcond, &jlock, &until)) {
			settled = false;
			break;
		}
	}
	pthread_mutex_unlock(&jlock);
	return settled;
}

/* The next inode to work on: among the first ready ones, one whose next
 * job is another user's than the last served (users take turns, so one
 * user's big rehashes do not hold everyone's back); else the first. */
static struct inode_jobs *next_ready(void)
{
	int n = 0;

	for (struct inode_jobs *e = ready_head; e && n < FAIR_SCAN; e = e->rnext, n++)
		if (e->first->cred.uid != last_uid)
			return e;
	return ready_head;
}

static void *relabel_main(void *arg)
{
	(void)arg;
	own_tid_register();
	log_hold_records();
	uevm_hash_cancel_on(&cancel_hashing);
	pthread_mutex_lock(&jlock);
	for (;;) {
		struct inode_jobs *e = next_ready();

		if (e) {
			unready(e);
			e->running = true;
			last_uid = e->first->cred.uid;
			run_first(e);
			e->running = false;
			make_ready(e);	/* its next job waits its turn */
			maybe_free(e);
			pthread_cond_broadcast(&jcond);
			continue;
		}
		if (stopping && !njobs)
			break;
		pthread_cond_wait(&jcond, &jlock);
	}
	pthread_mutex_unlock(&jlock);
	return NULL;
}

int relabel_start(void)
{
	int ret = pthread_create(&thread, NULL, relabel_main, NULL);

	if (ret)
		return -ret;
	started = true;
	return 0;
}

/* Every queued job is done before the daemon goes. */
void relabel_stop(void)
{
	struct timespec until;

	if (!started)
		return;
	pthread_mutex_lock(&jlock);
	stopping = true;
	pthread_cond_broadcast(&jcond);
	pthread_mutex_unlock(&jlock);
	/* A stop must not wait for hours of rehashing: past the grace time
	 * what is left keeps its old labels (and fails, detectably). */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += STOP_GRACE_SEC;
	if (pthread_timedjoin_np(thread, NULL, &until)) {
		ulog(LOG_WARNING, "%u label updates not done at stop: those files keep "
		     "their old labels", relabel_pending());
		__atomic_store_n(&cancel_hashing, 1, __ATOMIC_RELAXED);
		pthread_join(thread, NULL);
	}
	started = false;
}

unsigned int relabel_pending(void)
{
	unsigned int n;

	pthread_mutex_lock(&jlock);
	n = njobs;
	pthread_mutex_unlock(&jlock);
	return n;
}
