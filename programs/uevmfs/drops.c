// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -o fastopen: page drops that wait for the kernel's writes.
 *
 * Dropping a file's cached pages (fuse_lowlevel_notify_inval_inode) writes
 * its dirty pages back first: the drop waits for WRITE requests that only a
 * thread reading the FUSE device can serve.  Two places must not wait so:
 *
 *  - A SETATTR other than a truncation drops the file's pages before its
 *    reply (ops_shared.c tells why), but not in the worker: users who chmod
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
 *  - The stop.  A signal ends libfuse's loop and its workers; drops still
 *    under way (drop threads, the flusher) then wait for WRITEs no one
 *    reads, and uevmfs hung until its connection was aborted (a review).
 *    ufs_drops_finish serves requests in the stopping thread until they are
 *    done -- the users' mapped data reaches SOURCE and is relabelled -- for
 *    at most stop_timeout seconds (a WRITE may wait for a long relabel);
 *    then it aborts the connection, as a kill would: the writes still
 *    pending fail and their data is lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>
#include "uevmfs.h"

struct setattr_drop {
	struct setattr_drop *next;
	fuse_req_t req;
	struct ufs_inode *in;
	int err;
};

/* Under dirty_lock: requests waiting for a drop thread; the most threads
 * at once and the requests queued, told at the stop (tests read them). */
static struct setattr_drop *queue, **queue_tail = &queue;
static unsigned int peak;
static unsigned long queued;

/* Tell a stop waiting in ufs_drops_finish to look again.  Call with
 * dirty_lock held. */
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
		if (d->err)
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

bool ufs_drop_handoff(fuse_req_t req, struct ufs_inode *in, int err)
{
	struct setattr_drop *d;
	bool taken = true;
	pthread_t t;

	if (!(d = calloc(1, sizeof(*d))))
		return false;
	d->req = req;
	d->in = in;
	d->err = err;
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

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Write "1" to DIR/<our connection>/abort. */
static bool abort_in(const char *dir)
{
	char path[PATH_MAX];
	bool ok;
	int fd;

	snprintf(path, sizeof(path), "%s/%u/abort", dir, ufs.conn);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, "1", 1) == 1;
	close(fd);
	return ok;
}

/* Abort our own connection, through the FUSE control filesystem (closing
 * our descriptor would not: a request still unanswered holds a worker's
 * cloned one open).  Mounted where systemd puts it, or else for the moment
 * on a directory of our own. */
static bool drops_abort(void)
{
	char dir[] = "/run/uevmfs-fusectl.XXXXXX";
	bool ok;

	if (!ufs.conn)
		return false;
	if (abort_in("/sys/fs/fuse/connections"))
		return true;
	if (!mkdtemp(dir))
		return false;
	ok = !mount("fusectl", dir, "fusectl", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	if (ok) {
		ok = abort_in(dir);
		umount2(dir, MNT_DETACH);
	}
	rmdir(dir);
	return ok;
}

/* Has the device said the connection is over (libfuse marks the session
 * exited then too, as a signal does)? */
static bool connection_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

/*
 * Called by the stop, after libfuse's loop ended, once the flusher was told
 * to end.  Serves requests in this thread until no drop is under way.  The
 * mount is still there: requests are served as a worker would serve them,
 * except a SETATTR of a regular file, which would start another drop and is
 * refused (ENOTCONN, as every request is once uevmfs has exited): so the
 * drops only end, and users who keep chmodding cannot keep uevmfs up.  A
 * second signal (libfuse's handler marks the session exited) aborts at once.
 */
void ufs_drops_finish(void)
{
	struct fuse_buf buf = { .mem = NULL };
	int64_t end = mono_ns() + (int64_t)(ufs.stop_timeout * 1e9);
	bool aborted = false, gone = false;
	unsigned long served = 0;
	unsigned int drops;
	bool live;
	int fd;

	if (!ufs.se)
		return;
	fd = fuse_session_fd(ufs.se);
	atomic_store(&ufs.stopping, true);
	/* fuse_session_receive_buf throws away what it reads once the
	 * session is marked exited. */
	fuse_session_reset(ufs.se);
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = ufs.drop_wake, .events = POLLIN },
		};
		int64_t left = end - mono_ns();
		uint64_t v;
		int n;

		pthread_mutex_lock(&ufs.dirty_lock);
		/* The flusher may also be relabelling: served on, no limit. */
		drops = ufs.setattr_drops + ufs.flusher_dropping;
		live = drops || ufs.flusher_live;
		if (live && gone)	/* every wait on the device ends */
			pthread_cond_wait(&ufs.dirty_cond, &ufs.dirty_lock);
		pthread_mutex_unlock(&ufs.dirty_lock);
		if (!live)
			break;
		if (gone)
			continue;
		if (fuse_session_exited(ufs.se) && connection_gone(fd)) {
			gone = true;	/* unmounted or aborted meanwhile */
			continue;
		}
		if (drops && !aborted && (left <= 0 || fuse_session_exited(ufs.se))) {
			fprintf(stderr, "uevmfs: stopping: %u page drops still wait "
				"for writes after %lu requests served (%s); aborting "
				"the connection: their mapped data is lost\n",
				drops, served, left <= 0 ? "stop_timeout passed" :
				"a second signal");
			aborted = true;
			if (drops_abort()) {
				gone = true;
				continue;
			}
			fprintf(stderr, "uevmfs: stopping: cannot abort the "
				"connection (%s); serving on\n", strerror(errno));
			end = INT64_MAX;
			fuse_session_reset(ufs.se);
			left = INT64_MAX;
		}
		/* At most a second: a signal may reach another thread. */
		n = poll(p, ufs.drop_wake >= 0 ? 2 : 1,
			 left > 1000000000 ? 1000 : (int)(left / 1000000) + 1);
		if (n > 0 && (p[1].revents & POLLIN) &&
		    read(ufs.drop_wake, &v, sizeof(v)) < 0)
			(void)0;
		if (n > 0 && (p[0].revents & POLLIN) &&
		    fuse_session_receive_buf(ufs.se, &buf) > 0) {
			/* Most stops serve nothing: the flusher just ends. */
			if (!served++)
				fprintf(stderr, "uevmfs: stopping: serving requests "
					"until the page drops under way end (at most "
					"stop_timeout=%g s)\n", ufs.stop_timeout);
			fuse_session_process_buf(ufs.se, &buf);
		}
		if (n > 0 && (p[0].revents & (POLLERR | POLLHUP)))
			gone = true;	/* unmounted or aborted meanwhile */
	}
	if (served)
		fprintf(stderr, "uevmfs: stopping: page drops done, %lu requests "
			"served\n", served);
	if (peak)
		fprintf(stderr, "uevmfs: page drops: at most %u threads at once "
			"(of %u), %lu requests queued for one\n", peak,
			ufs.drop_threads_max, queued);
	free(buf.mem);
	fuse_session_exit(ufs.se);
}
