// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -o fastopen: page drops that wait for the kernel's writes.
 *
 * Dropping a file's cached pages (fuse_lowlevel_notify_inval_inode) writes
 * its dirty pages back first: the drop waits for WRITE requests that only a
 * thread reading the FUSE device can serve.  Two places must not wait so:
 *
 *  - A SETATTR other than a truncation, and a change of extended
 *    attributes, drop the file's pages before the reply (ops_shared.c tells
 *    why), but not in the worker: users who chmod
 *    files they keep dirtying through shared mappings took every worker so
 *    and hung the mount for everyone (24 processes against 16 workers).  A
 *    drop thread drops the pages and answers; the caller waits for that
 *    answer as before.  (Answering first and leaving the drop to the
 *    kernel's next GETATTR is not enough: a concurrent SETATTR's reply has
 *    the kernel discard that GETATTR's attributes, and an attack review ran
 *    an unsigned program from the pages so.)  At most 4 x max_threads drop
 *    threads run (a review made 304 threads with 300 callers); past that,
 *    requests queue for the next free one.
 *
 *  - The stop.  A signal ended libfuse's loop and its workers; drops
 *    still under way (drop threads, the flusher's) then waited for WRITEs
 *    no one read, and uevmfs hung until its connection was aborted (a
 *    review).  Serving them from the stopping thread instead lost some: a
 *    worker reading a request as the session is marked exited throws it
 *    away, unanswered, and a drop waited for it until the abort.  So with
 *    fastopen a signal is not libfuse's: the stopper thread (below) waits,
 *    while the workers serve on, until the drops and the flusher are done
 *    -- the users' mapped data reaches SOURCE and is relabelled -- and only
 *    then ends the loop, when no drop can be waiting for what it loses.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "uevmfs.h"

struct setattr_drop {
	struct setattr_drop *next;
	fuse_req_t req;
	struct ufs_inode *in;
	int err;
	bool attrs;		/* answered with IN's attributes (SETATTR) */
};

/* Under dirty_lock: requests waiting for a drop thread; the most threads
 * at once and the requests queued, told at the stop (tests read them). */
static struct setattr_drop *queue, **queue_tail = &queue;
static unsigned int peak;
static unsigned long queued;

/* Tell the stopper, or a stop waiting on dirty_cond, to look again.  Call
 * with dirty_lock held. */
void ufs_drops_wake(void)
{
	uint64_t one = 1;

	pthread_cond_broadcast(&ufs.dirty_cond);
	if (ufs.drop_wake >= 0 && write(ufs.drop_wake, &one, sizeof(one)) < 0)
		(void)0;	/* already readable: the stop will look */
}

static void *drop_main(void *arg)
{
	struct setattr_drop *d = arg;

	pthread_setname_np(pthread_self(), "uevmfs-drop");	/* for tests */
	while (d) {
		fuse_ino_t ino = (fuse_ino_t)(uintptr_t)d->in;

		fuse_lowlevel_notify_inval_inode(ufs.se, ino, 0, 0);
		if (d->err || !d->attrs)
			fuse_reply_err(d->req, -d->err);
		else
			ufs_getattr(d->req, ino, NULL);
		free(d);
		pthread_mutex_lock(&ufs.dirty_lock);
		d = queue;
		if (d) {
			queue = d->next;
			if (!queue)
				queue_tail = &queue;
		} else if (--ufs.setattr_drops == 0) {
			ufs_drops_wake();
		}
		pthread_mutex_unlock(&ufs.dirty_lock);
	}
	return NULL;
}

/* Start a detached thread with every signal blocked: the stop waits for
 * signals in the thread that serves. */
int ufs_thread_start(pthread_t *t, void *(*fn)(void *), void *arg,
		     size_t stack, bool detached)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	err = pthread_attr_init(&attr);
	if (err)
		return err;
	if (detached)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (stack)
		pthread_attr_setstacksize(&attr, stack);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return err;
}

bool ufs_drop_handoff(fuse_req_t req, struct ufs_inode *in, int err, bool attrs)
{
	struct setattr_drop *d;
	bool taken = true;
	pthread_t t;

	if (!(d = calloc(1, sizeof(*d))))
		return false;
	d->req = req;
	d->in = in;
	d->err = err;
	d->attrs = attrs;
	pthread_mutex_lock(&ufs.dirty_lock);
	if (ufs.setattr_drops < ufs.drop_threads_max &&
	    !ufs_thread_start(&t, drop_main, d, 256 << 10, true)) {
		if (++ufs.setattr_drops > peak)
			peak = ufs.setattr_drops;
	} else if (ufs.setattr_drops) {
		/* A running thread takes it next. */
		*queue_tail = d;
		queue_tail = &d->next;
		queued++;
	} else {
		taken = false;	/* no thread: the caller's worker drops */
	}
	pthread_mutex_unlock(&ufs.dirty_lock);
	if (!taken)
		free(d);
	return taken;
}

/* Write "1" to DIR/<our connection>/abort (fusectl names a connection by
 * its device number, the kernel's encoding: minor alone for major 0). */
static bool abort_in(const char *dir)
{
	char path[PATH_MAX];
	bool ok;
	int fd, e;

	snprintf(path, sizeof(path), "%s/%u/abort", dir, minor(ufs.conn));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, "1", 1) == 1;
	e = errno;
	close(fd);
	errno = e;
	return ok;
}

/* Abort our own connection (closing our descriptor would not: a request
 * still unanswered holds a worker's cloned one open).  Through the FUSE
 * control filesystem, where systemd mounts it or else for the moment on a
 * directory of our own; failing that, a forced unmount of our mount
 * (umount_begin aborts a FUSE connection), if the mount point still shows
 * it. */
static bool drops_abort(void)
{
	char dir[] = "/run/uevmfs-fusectl.XXXXXX";
	struct statx stx;
	bool ok = false;
	int e;

	if (!ufs.conn) {
		errno = ENODEV;
		return false;
	}
	if (abort_in("/sys/fs/fuse/connections"))
		return true;
	if (mkdtemp(dir)) {
		ok = !mount("fusectl", dir, "fusectl", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			    NULL) && abort_in(dir);
		e = errno;
		umount2(dir, MNT_DETACH);
		rmdir(dir);
		errno = e;
		if (ok)
			return true;
	}
	if (!statx(AT_FDCWD, ufs.mountpoint, AT_STATX_DONT_SYNC | AT_SYMLINK_NOFOLLOW,
		   STATX_TYPE, &stx) &&
	    makedev(stx.stx_dev_major, stx.stx_dev_minor) == ufs.conn) {
		/* EBUSY from the unmount itself: the abort came first. */
		if (!umount2(ufs.mountpoint, MNT_FORCE) || errno == EBUSY)
			return true;
	}
	return false;
}

static volatile sig_atomic_t stop_signals;	/* SIGTERM, SIGINT, SIGHUP */
static volatile sig_atomic_t stopper_quit;	/* the loop ended on its own */
static pthread_t stopper, main_thread;
static bool stopper_run;

/* The stopper's wake-up while it runs, then -1: a signal after the loop
 * only counts (a relabel of files still written follows; a default action
 * would kill it halfway, leaving them failing). */
static volatile sig_atomic_t signal_wake = -1;

static void on_stop_signal(int sig)
{
	uint64_t one = 1;
	int e = errno, fd = signal_wake;

	(void)sig;
	stop_signals++;
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0)
		(void)0;
	errno = e;
}

/* SIGUSR2 from the stopper: the main thread's wait in libfuse's loop is
 * interrupted, and the loop sees the session exited. */
static void on_wake_signal(int sig)
{
	(void)sig;
}

/* Wait on the wake-up eventfd (drops' and the flusher's ends, signals) for
 * at most MS milliseconds (-1: no limit). */
static void stop_wait(int ms)
{
	struct pollfd p = { .fd = ufs.drop_wake, .events = POLLIN };
	uint64_t v;

	if (poll(&p, 1, ms) > 0 && read(ufs.drop_wake, &v, sizeof(v)) < 0)
		(void)0;
}

/*
 * The first signal: changes of regular files' attributes are refused from
 * now on (ENOTCONN, as every request is once uevmfs has exited: each would
 * start another drop, and users who keep chmodding could keep uevmfs up),
 * the flusher is told to end, and the drops under way are waited for while
 * the workers serve their writes.  Once stop_timeout has passed, or at a
 * second signal: every hashing that runs longer than a second is cancelled
 * (a user's huge sparse file in the flusher's relabel held the stop for
 * hours; that file keeps failing), and drops still under way are ended by
 * aborting the connection (their mapped data is lost, as on a kill).
 */
static void stop_quiesce(void)
{
	int64_t start = ufs_now_ns(), end = start + (int64_t)(ufs.stop_timeout * 1e9);
	bool late = false, told = false;

	atomic_store(&ufs.stopping, true);
	pthread_mutex_lock(&ufs.dirty_lock);
	ufs.flusher_run = false;
	pthread_cond_broadcast(&ufs.dirty_cond);
	pthread_mutex_unlock(&ufs.dirty_lock);
	for (;;) {
		int64_t left = end - ufs_now_ns();
		unsigned int drops;
		bool busy, live;

		pthread_mutex_lock(&ufs.dirty_lock);
		drops = ufs.setattr_drops + ufs.flusher_dropping + ufs.rules_dropping;
		busy = drops || ufs.flusher_relabel;
		live = drops || ufs.flusher_live || ufs.rules_live;
		pthread_mutex_unlock(&ufs.dirty_lock);
		if (!live)
			break;
		if (busy && !told) {
			fprintf(stderr, "uevmfs: stopping: waiting for %u page drops%s "
				"to end (at most stop_timeout=%g s)\n", drops,
				ufs.flusher_relabel ? " and a relabel" : "", ufs.stop_timeout);
			told = true;
		}
		if (busy && !late && (stop_signals > 1 || left <= 0)) {
			late = true;
			ufs_share_cancel_long();
			fprintf(stderr, "uevmfs: stopping: %s: long hashing cancelled "
				"(its files keep failing)%s\n",
				stop_signals > 1 ? "a second signal" : "stop_timeout passed",
				drops ? "; aborting the connection: the mapped data "
				"pending drops wait to write is lost" : "");
			if (drops && !drops_abort())
				fprintf(stderr, "uevmfs: stopping: cannot abort the "
					"connection (%s)\n", strerror(errno));
			continue;
		}
		stop_wait(late ? -1 : left > 1000000000 ? 1000 : (int)(left / 1000000) + 1);
	}
	if (told)
		fprintf(stderr, "uevmfs: stopping: page drops done after %.1f s\n",
			(double)(ufs_now_ns() - start) / 1e9);
}

static void *stopper_main(void *arg)
{
	(void)arg;
	while (!stop_signals && !stopper_quit)
		stop_wait(-1);
	if (stopper_quit)
		return NULL;
	stop_quiesce();
	/* Now the loop may end: nothing waits for a request it loses. */
	fuse_session_exit(ufs.se);
	while (!stopper_quit) {
		/* Until it has (a wake-up just before its wait is lost). */
		pthread_kill(main_thread, SIGUSR2);
		stop_wait(200);
	}
	return NULL;
}

int ufs_stopper_start(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	struct sigaction wake = { .sa_handler = on_wake_signal };
	int err;

	if (ufs.drop_wake < 0)
		return -EBADF;
	main_thread = pthread_self();
	signal_wake = ufs.drop_wake;
	err = ufs_thread_start(&stopper, stopper_main, NULL, 0, false);
	if (err)
		return -err;
	stopper_run = true;
	/* No SA_RESTART: the main thread's wait must end. */
	sigemptyset(&sa.sa_mask);
	sigemptyset(&wake.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR2, &wake, NULL);
	return 0;
}

void ufs_stopper_stop(void)
{
	uint64_t one = 1;

	if (peak)
		fprintf(stderr, "uevmfs: page drops: at most %u threads at once "
			"(of %u), %lu requests queued for one\n", peak,
			ufs.drop_threads_max, queued);
	if (!stopper_run)
		return;
	signal_wake = -1;
	stopper_quit = 1;
	if (write(ufs.drop_wake, &one, sizeof(one)) < 0)
		(void)0;
	pthread_join(stopper, NULL);
	stopper_run = false;
}

/*
 * After libfuse's loop, no worker serves.  A drop may still be under way:
 * after an unmount the connection is gone and it ends; after a signal, a
 * chmod that passed the stop's refusal just before it may have started
 * its drop once the stopper had seen none (a review held one so), and it
 * waits for a WRITE no one will read -- the connection is aborted (that
 * mapped data is lost).  Call with dirty_lock held.
 */
void ufs_drops_settle(void)
{
	struct pollfd p = { .fd = ufs.se ? fuse_session_fd(ufs.se) : -1 };
	unsigned int n = ufs.setattr_drops;

	if (!n)
		return;
	pthread_mutex_unlock(&ufs.dirty_lock);
	/* POLLERR: the connection is gone already. */
	if (!(poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)))) {
		fprintf(stderr, "uevmfs: stopping: %u page drops started as the stop "
			"ended; aborting the connection: their mapped data is lost\n", n);
		if (!drops_abort())
			fprintf(stderr, "uevmfs: stopping: cannot abort the "
				"connection (%s)\n", strerror(errno));
	}
	pthread_mutex_lock(&ufs.dirty_lock);
	while (ufs.setattr_drops)
		pthread_cond_wait(&ufs.dirty_cond, &ufs.dirty_lock);
}
