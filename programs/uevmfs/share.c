// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One user must not hold every worker.  A hook call can hash for as long as
 * its file is big: a user who makes many-GB sparse files of their own and
 * opens them all at once would otherwise keep every FUSE worker hashing,
 * and every other user's requests would wait in the kernel's queue.  The
 * kernel hashes in each caller's own context; here the workers are shared.
 *
 * So every worker's hook calls are registered (ufs_hook_begin/end), with
 * the caller's uid, the time they began and a flag that cancels their
 * hashing (uevm_hash_cancel_on).  A call running longer than LONG_NS is
 * long.  At most max_threads - 1 long calls may run, so that one worker is
 * always left to take the next request:
 *  - a watcher thread cancels, while more run, the newest long call of
 *    the user who holds the most of them;
 *  - a call that begins while that many run, for a user who already holds
 *    one of them, is cancelled at once (its queued flood then fails fast
 *    instead of waiting a second each).
 * A cancelled call fails as an unreadable file does: an open is refused,
 * a relabel is not made (the file keeps failing); audited op=worker_share
 * naming the file, the user and the cause.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "uevmfs.h"

#define LONG_NS		1000000000LL	/* a call running this long is long */
#define WATCH_NS	100000000LL	/* how often the watcher looks */

struct busy {
	struct busy *next;
	uid_t uid;
	int64_t since;
	int depth;			/* nested hook calls */
	volatile int cancel;		/* hashing stops while set */
	bool active;
};

static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_cond;
static struct busy *busy_list;
static unsigned int long_max;		/* long calls allowed at once */
static bool watch_run;
static pthread_t watcher;
static pthread_key_t busy_key;
static pthread_once_t busy_once = PTHREAD_ONCE_INIT;
static bool busy_keyed;
static bool stop_long;			/* ufs_share_cancel_long was called */
static __thread struct busy *self;

static bool is_long(const struct busy *b, int64_t now)
{
	return b->active && !b->cancel && now - b->since >= LONG_NS;
}

/* A thread's record goes with the thread. */
static void busy_free(void *arg)
{
	struct busy *b = arg, **pp;

	pthread_mutex_lock(&busy_lock);
	for (pp = &busy_list; *pp; pp = &(*pp)->next)
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	pthread_mutex_unlock(&busy_lock);
	free(b);
}

static void busy_key_make(void)
{
	busy_keyed = pthread_key_create(&busy_key, busy_free) == 0;
}

static struct busy *busy_self(void)
{
	if (self)
		return self;
	pthread_once(&busy_once, busy_key_make);
	if (!busy_keyed)
		return NULL;
	self = calloc(1, sizeof(*self));
	if (!self)
		return NULL;
	pthread_setspecific(busy_key, self);
	uevm_hash_cancel_on(&self->cancel);
	pthread_mutex_lock(&busy_lock);
	self->next = busy_list;
	busy_list = self;
	pthread_mutex_unlock(&busy_lock);
	return self;
}

void ufs_share_enter(uid_t uid)
{
	struct busy *b = busy_self(), *o;
	unsigned int nlong = 0;
	bool holds = false;
	int64_t now;

	if (!b || b->depth++)
		return;
	now = ufs_now_ns();
	pthread_mutex_lock(&busy_lock);
	for (o = busy_list; o; o = o->next)
		if (is_long(o, now)) {
			nlong++;
			holds |= o->uid == uid;
		}
	b->uid = uid;
	b->since = now;
	b->cancel = long_max && nlong >= long_max && holds ? SHARE_HOLDS : 0;
	b->active = true;
	pthread_mutex_unlock(&busy_lock);
}

int ufs_share_leave(void)
{
	struct busy *b = self;
	int cancelled;

	if (!b || !b->depth || --b->depth)
		return 0;
	pthread_mutex_lock(&busy_lock);
	cancelled = b->cancel;
	b->active = false;
	b->cancel = 0;
	pthread_mutex_unlock(&busy_lock);
	return cancelled;
}

/* Cancel long calls while more than long_max run: each time the newest of
 * the user who holds the most.  (Call with busy_lock held.) */
static void trim(void)
{
	int64_t now = ufs_now_ns();

	if (stop_long) {
		struct busy *o;

		for (o = busy_list; o; o = o->next)
			if (is_long(o, now))
				o->cancel = SHARE_STOPPING;
	}

	for (;;) {
		struct busy *o, *p, *victim = NULL;
		unsigned int nlong = 0, most = 0;

		for (o = busy_list; o; o = o->next)
			nlong += is_long(o, now);
		if (nlong <= long_max)
			return;
		for (o = busy_list; o; o = o->next) {
			unsigned int n = 0;

			if (!is_long(o, now))
				continue;
			for (p = busy_list; p; p = p->next)
				n += is_long(p, now) && p->uid == o->uid;
			if (n > most || (n == most && o->since > victim->since)) {
				most = n;
				victim = o;
			}
		}
		victim->cancel = SHARE_HOLDS;
	}
}

static void *watch_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&busy_lock);
	while (watch_run) {
		struct timespec ts;

		trim();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += WATCH_NS;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&watch_cond, &busy_lock, &ts);
	}
	pthread_mutex_unlock(&busy_lock);
	return NULL;
}

/* A stop that may not wait any longer: every hook call that runs long,
 * now or later, is cancelled (a relabel is not made: its file keeps
 * failing), short ones go on (the relabels of files written are made). */
void ufs_share_cancel_long(void)
{
	pthread_mutex_lock(&busy_lock);
	stop_long = true;
	trim();
	if (watch_run)
		pthread_cond_broadcast(&watch_cond);
	else	/* one worker: no watcher yet */
		watch_run = !pthread_create(&watcher, NULL, watch_main, NULL);
	pthread_mutex_unlock(&busy_lock);
}

int ufs_share_start(unsigned int max_threads)
{
	pthread_condattr_t ca;
	int err;

	pthread_mutex_lock(&busy_lock);
	long_max = max_threads > 1 ? max_threads - 1 : 0;
	pthread_mutex_unlock(&busy_lock);
	pthread_once(&busy_once, busy_key_make);
	if (!busy_keyed)
		return -ENOMEM;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&watch_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (!long_max)
		return 0;	/* one worker: nothing to leave free */
	watch_run = true;
	err = pthread_create(&watcher, NULL, watch_main, NULL);
	if (err)
		watch_run = false;
	return -err;
}

void ufs_share_stop(void)
{
	pthread_mutex_lock(&busy_lock);
	if (watch_run) {
		watch_run = false;
		pthread_cond_broadcast(&watch_cond);
		pthread_mutex_unlock(&busy_lock);
		pthread_join(watcher, NULL);
	} else {
		pthread_mutex_unlock(&busy_lock);
	}
	/* The calling (main) thread's record: no thread exit frees it. */
	if (self && busy_keyed) {
		uevm_hash_cancel_on(NULL);
		pthread_setspecific(busy_key, NULL);
		busy_free(self);
		self = NULL;
	}
}
