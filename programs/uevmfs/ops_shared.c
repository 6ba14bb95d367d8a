// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -o fastopen: uevmfs answers the first OPEN with ENOSYS, and from then on
 * the kernel opens and closes files of the mount on its own (keeping their
 * page cache), without a round trip.  A cached open then costs what a
 * native one does, and the hooks move to where requests still arrive:
 *
 *  - reads: the first READ of a content (per inode and change stamp) runs
 *    integrity_file_check as an open for reading would (FILE_CHECK, and
 *    BPRM_CHECK as well for a file with an execute bit, since an exec is
 *    not told apart from a read here).  A refusal fails the read, the exec
 *    or the page fault with EACCES; nothing is cached for the kernel to
 *    serve later, since pages enter its cache through replies to reads
 *    that passed -- and through writes, see below.
 *  - writes: the first WRITE registers one writer per inode (FILE_CHECK
 *    with MAY_WRITE) and later ones go through it.  No close is seen, so
 *    the writer ends -- integrity_file_free, security.ima and security.evm
 *    rewritten -- once the file had no write for write_idle seconds, at
 *    fsync, when the kernel forgets the inode and at unmount.  Until then
 *    SOURCE holds new content under old labels: detectably failing, never
 *    PASS for content they do not describe.
 *  - written content is never served unchecked: a READ of a file that
 *    has a writer ends the writer first (the relabel its close would do)
 *    and then checks the content as any first read.  The pages a WRITE
 *    leaves in the kernel's cache are up to date: a read or exec would
 *    take them without asking.  The kernel drops them when it next sees
 *    the file's mtime changed (auto_inval_data), except after a SETATTR,
 *    whose reply brings the new mtime in without dropping anything: so a
 *    SETATTR drops them before its reply, and the flusher drops what each
 *    WRITE wrote right after its reply (for a change within one timestamp
 *    tick; from the flusher, as dropping pages may wait for requests the
 *    workers serve).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "uevmfs.h"

/* CLOCK_MONOTONIC in ns: the flusher's, the share watcher's and the
 * stopper's deadlines. */
int64_t ufs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool same_stamp(const struct integrity_stamp *a,
		       const struct integrity_stamp *b)
{
	return a->ctime_ns == b->ctime_ns && a->mtime_ns == b->mtime_ns &&
	       a->size == b->size;
}

/* ---- the writer of an inode -------------------------------------------------------- */

/* End IN's shared writer, if it has one: the close-time rehash.  IN's lock
 * is held until that rehash is done: a write arriving meanwhile (the
 * writeback of a shared mapping's page) would otherwise open a new writer,
 * which appraises content the old one has not relabelled yet -- and is
 * refused, its data lost with it. */
static void shared_end(struct ufs_inode *in)
{
	struct ufs_file *fh;

	pthread_mutex_lock(&in->lock);
	fh = in->shared;
	if (fh) {
		/* Writes in flight hold the lock shared: wait for them. */
		pthread_rwlock_wrlock(&fh->lock);
		ufs_file_unregister(fh);
		pthread_rwlock_unlock(&fh->lock);
		in->shared = NULL;
	}
	in->read_ok = false;
	pthread_mutex_unlock(&in->lock);
	if (fh)
		ufs_file_destroy(fh);
}

static void dirty_add(struct ufs_inode *in)
{
	pthread_mutex_lock(&ufs.dirty_lock);
	if (!in->dirty) {
		in->dirty = true;
		in->dirty_next = ufs.dirty;
		ufs.dirty = in;
		pthread_cond_broadcast(&ufs.dirty_cond);
	}
	pthread_mutex_unlock(&ufs.dirty_lock);
}

/* Take IN off the dirty list (call with dirty_lock held). */
static void dirty_del(struct ufs_inode *in)
{
	struct ufs_inode **pp;

	if (!in->dirty)
		return;
	for (pp = &ufs.dirty; *pp; pp = &(*pp)->dirty_next)
		if (*pp == in) {
			*pp = in->dirty_next;
			break;
		}
	in->dirty = false;
	in->dirty_next = NULL;
}

/* The pages [OFF, OFF + LEN) of IN were written through the mount: have
 * the flusher tell the kernel to drop them.  (The kernel drops them
 * itself when it next sees the file's mtime changed; this covers a change
 * within one timestamp tick, on filesystems without fine-grained ones.) */
static void inval_add(struct ufs_inode *in, off_t off, size_t len)
{
	/* LEN 0: to the end of the file. */
	off_t end = len ? off + (off_t)len : INT64_MAX;

	pthread_mutex_lock(&ufs.dirty_lock);
	if (!in->inval_queued) {
		in->inval_queued = true;
		in->inval_lo = off;
		in->inval_hi = end;
		in->inval_next = ufs.inval;
		ufs.inval = in;
		pthread_cond_broadcast(&ufs.dirty_cond);
	} else {
		if (off < in->inval_lo)
			in->inval_lo = off;
		if (end > in->inval_hi)
			in->inval_hi = end;
	}
	pthread_mutex_unlock(&ufs.dirty_lock);
}

/*
 * A truncation's reply: its pages are dropped only after it (below), and
 * a reply's mtime is taken as the file's without
 * dropping anything.  Were the pages a write left still cached, an exec
 * right after a truncation that kept the size would be served from them,
 * unappraised (an attack review ran an unsigned program so, the flusher
 * kept busy).  So the reply's mtime is one the file does not have, valid
 * for no time: the next access asks again, sees the mtime "changed" and
 * the kernel drops the pages first (auto_inval_data), in the caller's
 * context, where writes may go out.
 */
static void reply_truncated(fuse_req_t req, struct ufs_inode *in)
{
	struct stat st;

	if (fstatat(in->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		fuse_reply_err(req, errno);
		return;
	}
	if (st.st_mtim.tv_nsec > 0) {
		st.st_mtim.tv_nsec--;
	} else {
		st.st_mtim.tv_sec--;
		st.st_mtim.tv_nsec = 999999999;
	}
	fuse_reply_attr(req, &st, 0);
}

/* No drop thread: drop IN's pages here, or by the flusher when
 * single-threaded, where dropping a dirty page would wait for a WRITE no
 * other worker could serve. */
static void drop_here(struct ufs_inode *in)
{
	if (ufs.singlethread)
		inval_add(in, 0, 0);
	else
		fuse_lowlevel_notify_inval_inode(ufs.se, (fuse_ino_t)(uintptr_t)in, 0, 0);
}

/*
 * Every SETATTR's answer (chmod, utimes, truncate; ERR or IN's attributes).
 * Its reply brings the new mtime into the kernel's attribute cache without
 * dropping any page, and a changed mtime was what made the kernel drop
 * pages a write left (auto_inval_data).  So they are dropped here:
 *  - a truncation's, after the reply: it is answered while the kernel
 *    holds the inode's writes back (FUSE_NOWRITE), and dropping a dirty
 *    page of a shared mapping then waits for a WRITE that cannot be sent
 *    until the reply -- for ever (an attack review hung the mount so, as
 *    any user).  The flusher drops them, as it does after every WRITE; the
 *    kernel itself drops what lies past the new size;
 *  - any other's, before the reply, by a drop thread (drops.c); without
 *    one, here.
 */
void ufs_shared_setattr_reply(fuse_req_t req, struct ufs_inode *in, bool truncate,
			      int err)
{
	fuse_ino_t ino = (fuse_ino_t)(uintptr_t)in;

	if (!S_ISREG(in->type) || !ufs.se) {
		/* no pages */
	} else if (truncate) {
		inval_add(in, 0, 0);
		if (!err) {
			reply_truncated(req, in);
			return;
		}
	} else if (ufs_drop_handoff(req, in, err, true)) {
		return;
	} else {
		drop_here(in);
	}
	if (err)
		fuse_reply_err(req, -err);
	else
		ufs_getattr(req, ino, NULL);
}

/*
 * A change of extended attributes: an ACL's changes the mode bits too
 * (setfacl u::rwx makes a file executable) without a SETATTR and without
 * touching the mtime, and a label's changes what the content may be used
 * for -- an attack review ran an unsigned program from the pages a read
 * had left cached, after a setfacl.  So its pages are dropped before the
 * answer, as a chmod's.
 */
void ufs_shared_xattr_reply(fuse_req_t req, struct ufs_inode *in, int err)
{
	if (S_ISREG(in->type) && ufs.se) {
		if (ufs_drop_handoff(req, in, err, false))
			return;
		drop_here(in);
	}
	fuse_reply_err(req, -err);
}

bool ufs_shared_stopping(fuse_req_t req, struct ufs_inode *in)
{
	/* The stop serves pending drops until they end; such a change would
	 * start another (drops.c).  Refused before anything changes, as
	 * every request is once uevmfs has exited. */
	if (!ufs.fastopen || !S_ISREG(in->type) || !atomic_load(&ufs.stopping))
		return false;
	fuse_reply_err(req, ENOTCONN);
	return true;
}

/* Take IN off the drop queue (call with dirty_lock held). */
static void inval_del(struct ufs_inode *in)
{
	struct ufs_inode **pp;

	if (!in->inval_queued)
		return;
	for (pp = &ufs.inval; *pp; pp = &(*pp)->inval_next)
		if (*pp == in) {
			*pp = in->inval_next;
			break;
		}
	in->inval_queued = false;
	in->inval_next = NULL;
}

/* End IN's writer here and now, or wait until the flusher has ended it
 * (it may hold IN, pinned, off the list). */
static void shared_end_now(struct ufs_inode *in)
{
	pthread_mutex_lock(&ufs.dirty_lock);
	dirty_del(in);
	while (in->pinned)
		pthread_cond_wait(&ufs.dirty_cond, &ufs.dirty_lock);
	pthread_mutex_unlock(&ufs.dirty_lock);
	shared_end(in);
}

/* Returns IN's writer with its lock held shared, creating it as CRED's
 * open for writing would; or an error. */
static int shared_get(fuse_req_t req, struct ufs_inode *in, struct ufs_file **out)
{
	struct integrity_cred cred;
	struct ufs_file *fh;
	struct ufs_hook h;
	int err = 0, fd;

	pthread_mutex_lock(&in->lock);
	fh = in->shared;
	if (!fh) {
		ufs_req_cred(req, &cred);
		err = ufs_hook_begin(in, -1, &cred, &h);
		if (!err) {
			h.ev.mask = MAY_WRITE;
			h.ev.func = FILE_CHECK;
			/* The first writer of a file mknod made continues its
			 * create, to this writer's end (no later one does:
			 * no close is seen to end the create). */
			h.ev.created = ufs_own_take_fresh(in, NULL);
			err = integrity_file_check(ufs.sys, &h.ev);
			if (!err) {
				fd = ufs_reopen(in, O_RDWR | O_CLOEXEC);
				if (fd < 0) {
					err = fd;
					integrity_file_free(ufs.sys, &h.ev);
				} else {
					err = ufs_file_new(in, fd, MAY_WRITE | MAY_READ,
							   false, &cred, &fh);
					if (err) {
						close(fd);
						integrity_file_free(ufs.sys, &h.ev);
					}
				}
			}
			ufs_hook_end(&h);
		}
		if (!err)
			in->shared = fh;
	}
	if (!err)
		pthread_rwlock_rdlock(&fh->lock);
	pthread_mutex_unlock(&in->lock);
	if (err)
		return err;
	atomic_store(&in->last_write_ns, ufs_now_ns());
	dirty_add(in);
	*out = fh;
	return 0;
}

static void shared_put(struct ufs_inode *in, struct ufs_file *fh, bool wrote)
{
	if (wrote)
		atomic_store(&fh->written, true);
	atomic_store(&in->last_write_ns, ufs_now_ns());
	pthread_rwlock_unlock(&fh->lock);
}

void ufs_shared_write(fuse_req_t req, struct ufs_inode *in,
		      struct fuse_bufvec *bufv, off_t off)
{
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(bufv));
	struct ufs_stream *s;
	struct ufs_file *fh;
	ssize_t n;
	int err = shared_get(req, in, &fh);

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = fh->fd;
	out.buf[0].pos = off;
	ufs_own_begin(in);
	s = ufs_stream_claim(in, fh, &bufv, off);
	n = bufv ? fuse_buf_copy(&out, bufv, 0) : -EIO;
	ufs_own_end(in);
	if (n > 0)
		atomic_store(&fh->written, true);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
	/* After the reply, as in ops_file.c; the relabel waits for it. */
	if (s)
		ufs_stream_written(s, bufv, off, n);
	shared_put(in, fh, false);
	if (n < 0)
		return;
	/* The kernel keeps what it just wrote as up-to-date pages: they
	 * must not be read or run before the content is checked. */
	if (n > 0)
		inval_add(in, off, (size_t)n);
}

void ufs_shared_fallocate(fuse_req_t req, struct ufs_inode *in, int mode,
			  off_t offset, off_t length)
{
	struct ufs_file *fh;
	int err = shared_get(req, in, &fh);

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	ufs_own_begin(in);
	ufs_stream_break_locked(in);
	err = fallocate(fh->fd, mode, offset, length) < 0 ? errno : 0;
	ufs_own_end(in);
	shared_put(in, fh, !err);
	fuse_reply_err(req, err);
}

/* A truncation (ftruncate of the kernel's own open, O_TRUNC, truncate(2))
 * is a write: through the inode's writer, as every other write here.  A
 * separate open for writing would appraise content that is still being
 * written, not yet relabelled. */
int ufs_shared_truncate(fuse_req_t req, struct ufs_inode *in, off_t size)
{
	struct ufs_file *fh;
	int err = shared_get(req, in, &fh);

	if (err)
		return err;
	ufs_own_begin(in);
	ufs_stream_truncate(in, fh, size);
	err = ftruncate(fh->fd, size) < 0 ? -errno : 0;
	ufs_own_end(in);
	shared_put(in, fh, !err);
	return err;
}

void ufs_shared_fsync(fuse_req_t req, struct ufs_inode *in, int datasync)
{
	int fd, err = 0;

	/* A program that syncs wants the labels on disk too. */
	shared_end_now(in);
	fd = ufs_reopen(in, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		err = -fd;
	else if ((datasync ? fdatasync(fd) : fsync(fd)) < 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	fuse_reply_err(req, err);
}

/* ---- reads ------------------------------------------------------------------------- */

static uint32_t verdicts_epoch(void);

/* May IN's current content be read under the rules of the library's cache
 * epoch GEN?  A pass is kept for the next READ only under an even epoch:
 * an odd one is a change being applied.  (Call with IN->lock held.) */
static int read_check_gen(fuse_req_t req, struct ufs_inode *in, uint32_t gen)
{
	struct integrity_stamp now;
	struct integrity_cred cred;
	struct ufs_hook h;
	struct stat st;
	int err;

	if (in->rfd < 0) {
		in->rfd = ufs_reopen(in, O_RDONLY | O_CLOEXEC);
		if (in->rfd < 0) {
			err = in->rfd;
			in->rfd = -1;
			return err;
		}
	}
	if (fstat(in->rfd, &st) < 0)
		return -errno;
	integrity_stamp_of(&st, &now);
	if (in->read_ok && in->read_gen == gen && !(gen & 1) &&
	    same_stamp(&in->read_stamp, &now))
		return 0;
	in->read_ok = false;

	ufs_req_cred(req, &cred);
	err = ufs_hook_begin(in, in->rfd, &cred, &h);
	if (err)
		return err;
	h.ev.mask = MAY_READ;
	h.ev.func = FILE_CHECK;
	err = integrity_file_check(ufs.sys, &h.ev);
	if (!err && (st.st_mode & 0111)) {
		/* Its exec may be served from this check: the exec open's
		 * FILE_CHECK too (a rule with mask=MAY_EXEC, refused by the
		 * policy check, would otherwise never match), then bprm. */
		h.ev.mask = MAY_EXEC;
		err = integrity_file_check(ufs.sys, &h.ev);
		if (!err)
			err = integrity_bprm_check(ufs.sys, &h.ev, ufs.nosuid);
	}
	ufs_hook_end(&h);
	/* The check may have relabelled (mode fix): stamp what it left. */
	if (!err && fstat(in->rfd, &st) == 0) {
		integrity_stamp_of(&st, &in->read_stamp);
		in->read_gen = gen;
		in->read_ok = !(gen & 1);
	}
	return err;
}

/* The rules may change while a check hashes: a pass under the old ones is
 * checked again before a READ is answered with it.  The library's epoch
 * moves as the change begins, whoever applies it and however long the
 * mount's own look at it waits (for a relabel in the flusher, say). */
static int read_check(fuse_req_t req, struct ufs_inode *in)
{
	for (;;) {
		uint32_t gen = verdicts_epoch();
		int err = read_check_gen(req, in, gen);

		if (err || verdicts_epoch() == gen)
			return err;
	}
}

/* How often a read ends a writer that writes again at once before it
 * checks the content as it is (then failing, its labels being stale). */
#define READ_END_TRIES	3

void ufs_shared_read(fuse_req_t req, struct ufs_inode *in, size_t size, off_t off)
{
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
	int err, fd;

	/* Being written through the mount: no close will come, so the read
	 * ends the writer -- the relabel its close would do -- and checks
	 * what that left, as an open after the writer's close would.  The
	 * writer's content is never served unchecked. */
	for (int tries = 0;; tries++) {
		pthread_mutex_lock(&in->lock);
		if (!in->shared || tries == READ_END_TRIES)
			break;
		pthread_mutex_unlock(&in->lock);
		shared_end_now(in);
	}
	err = read_check(req, in);
	fd = in->rfd;
	pthread_mutex_unlock(&in->lock);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	/* rfd stays open until the inode is forgotten, which the kernel does
	 * not do while it reads. */
	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = fd;
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
}

/* ---- which policies fastopen can serve ---------------------------------------------- */

/* RULE of P as "policy line N: 'text'" into WHERE. */
static void rule_where(const struct ima_policy *p, size_t i, char *where, size_t len)
{
	char *text = NULL;
	size_t tlen = 0;
	FILE *fp;

	fp = open_memstream(&text, &tlen);
	if (fp) {
		ima_policy_rule_write(p, i, fp);
		fclose(fp);
	}
	while (text && tlen && (text[tlen - 1] == '\n' || text[tlen - 1] == ' '))
		text[--tlen] = '\0';
	if (ima_policy_rule_line(p, i))
		snprintf(where, len, "policy line %u: '%s'", ima_policy_rule_line(p, i),
			 text ? text : "?");
	else
		snprintf(where, len, "policy rule %zu: '%s'", i + 1, text ? text : "?");
	free(text);
}

/*
 * A verdict reached at one caller's first READ serves every later caller
 * and every later open: the kernel hands them its page cache without
 * asking.  That is sound only when every caller gets the same actions for
 * the same content, and when the opens fastopen does not see get the
 * actions of the checks it runs instead (FILE_CHECK MAY_READ, and for a
 * program FILE_CHECK MAY_EXEC and BPRM_CHECK): no FILE_CHECK rule may tell
 * an exec open from a read open.  *CAUSE (may be NULL): the audit cause.
 */
int ufs_shared_policy_check(const struct ima_policy *p, char *why, size_t len,
			    const char **cause)
{
	char where[512];
	size_t i;

	if (ima_policy_depends_on_caller(p, &i)) {
		rule_where(p, i, where, sizeof(where));
		snprintf(why, len, "fastopen: %s depends on the caller or on the "
			 "file's owner (uid=, euid=, gid=, egid=, fowner=, fgroup=, "
			 "subj_*, obj_*): with fastopen one caller's verdict would "
			 "serve every caller; drop the condition or mount without "
			 "fastopen", where);
		if (cause)
			*cause = "caller-dependent-rule";
		return -EPERM;
	}
	if (ima_policy_depends_on_exec_open(p, &i)) {
		rule_where(p, i, where, sizeof(where));
		snprintf(why, len, "fastopen: %s tells an exec from a read at the "
			 "open (mask= with MAY_EXEC on FILE_CHECK): with fastopen "
			 "a file is checked once, at its first read, whoever opens "
			 "it how; use func=BPRM_CHECK for what is executed, or mount "
			 "without fastopen", where);
		if (cause)
			*cause = "exec-dependent-rule";
		return -EPERM;
	}
	return 0;
}

int ufs_shared_policy_gate(const struct ima_policy *p, void *arg, char *why,
			   size_t len, const char **cause)
{
	int err;

	(void)arg;
	err = ufs_shared_policy_check(p, why, len, cause);
	/* The writer sees only EPERM: tell the operator which rule. */
	if (err)
		fprintf(stderr, "uevmfs: ima/policy refused: %s\n", why);
	return err;
}

/* ---- when the rules change --------------------------------------------------------- */

/* The cache epoch last acted on: it moves whenever the library makes its
 * verdicts stale (new rules, EVM initialised). */
static pthread_mutex_t rules_lock = PTHREAD_MUTEX_INITIALIZER;
static bool rules_known;	/* false: everything counts as changed */
static uint32_t rules_epoch;

static uint32_t verdicts_epoch(void)
{
	return integrity_cache_epoch(integrity_sys_cache(ufs.sys));
}

static bool rules_stale(void)
{
	bool stale;

	pthread_mutex_lock(&rules_lock);
	stale = !rules_known || verdicts_epoch() != rules_epoch;
	pthread_mutex_unlock(&rules_lock);
	return stale;
}

/* EVM initialised (echo 1 > evm) or a policy loaded: the reads that passed
 * under the old rules are checked again (read_check sees the epoch move),
 * and since the kernel serves cached pages without asking, it is told to
 * drop them.  Called by the
 * control tree's hook before the writer's close returns (which the
 * library makes wait for appraisals under way), and by the rules watcher's
 * look every RULES_POLL_NS; whichever comes first acts, once. */
bool ufs_shared_rules_check(void)
{
	uint32_t epoch = verdicts_epoch();
	bool done = true;

	pthread_mutex_lock(&rules_lock);
	if (!rules_known || epoch != rules_epoch) {
		fuse_ino_t *inos;
		size_t n = ufs_table_files(&inos);

		for (size_t i = 0; i < n && ufs.se; i++)
			fuse_lowlevel_notify_inval_inode(ufs.se, inos[i], 0, 0);
		free(inos);
		done = inos != NULL;
		if (done) {	/* else the watcher's next look tries again */
			rules_known = true;
			rules_epoch = epoch;
		}
	}
	pthread_mutex_unlock(&rules_lock);
	return done;
}

/* How often the rules watcher looks at the EVM bits and the policy. */
#define RULES_POLL_NS	200000000

/* Until dirty_cond is broadcast or NS from now.  (dirty_lock held) */
static void dirty_wait(int64_t ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ns / 1000000000;
	ts.tv_nsec += ns % 1000000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&ufs.dirty_cond, &ufs.dirty_lock, &ts);
}

/* The rules watcher: drops the kernel's cached pages when the rules
 * change, in a thread of its own.  In the flusher it waited for whatever
 * relabel the flusher was doing (a user's huge file: minutes), while the
 * kernel served pages that passed the old rules. */
static void *rules_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "uevmfs-rules");
	pthread_mutex_lock(&ufs.dirty_lock);
	while (ufs.flusher_run) {
		bool stale;

		/* Not under dirty_lock: the control tree's hook holds
		 * rules_lock while a page drop waits for a WRITE, whose
		 * answer takes dirty_lock (a review deadlocked the mount,
		 * SIGTERM included, with a dirty shared mapping). */
		pthread_mutex_unlock(&ufs.dirty_lock);
		stale = rules_stale();
		pthread_mutex_lock(&ufs.dirty_lock);
		if (stale && ufs.flusher_run) {
			bool done;

			ufs.rules_dropping = true;
			pthread_mutex_unlock(&ufs.dirty_lock);
			done = ufs_shared_rules_check();
			pthread_mutex_lock(&ufs.dirty_lock);
			ufs.rules_dropping = false;
			if (done)
				continue;	/* else waits, then tries again */
		}
		dirty_wait(RULES_POLL_NS);
	}
	ufs.rules_live = false;
	ufs_drops_wake();
	pthread_mutex_unlock(&ufs.dirty_lock);
	return NULL;
}

/* ---- ending idle writers ----------------------------------------------------------- */

static void *flusher_main(void *arg)
{
	int64_t idle = (int64_t)(ufs.write_idle * 1e9);

	(void)arg;
	pthread_mutex_lock(&ufs.dirty_lock);
	while (ufs.flusher_run) {
		int64_t now = ufs_now_ns(), next = now + RULES_POLL_NS;
		struct ufs_inode *in, *due = NULL;

		if (ufs.inval) {
			/* Copied out: IN may be freed once the lock is let go,
			 * and a stale node id only drops someone's cache. */
			fuse_ino_t ino = (fuse_ino_t)(uintptr_t)ufs.inval;
			off_t lo = ufs.inval->inval_lo, hi = ufs.inval->inval_hi;

			inval_del(ufs.inval);
			ufs.flusher_dropping = true;
			pthread_mutex_unlock(&ufs.dirty_lock);
			if (ufs.se)
				fuse_lowlevel_notify_inval_inode(ufs.se, ino, lo,
								 hi == INT64_MAX ? 0 : hi - lo);
			pthread_mutex_lock(&ufs.dirty_lock);
			ufs.flusher_dropping = false;
			continue;
		}
		for (in = ufs.dirty; in; in = in->dirty_next) {
			int64_t at = atomic_load(&in->last_write_ns) + idle;

			if (at <= now) {
				due = in;
				break;
			}
			if (at < next)
				next = at;
		}
		if (due) {
			/* Pinned: ufs_shared_drop waits before freeing it. */
			dirty_del(due);
			due->pinned++;
			ufs.flusher_relabel = true;
			pthread_mutex_unlock(&ufs.dirty_lock);
			shared_end(due);
			pthread_mutex_lock(&ufs.dirty_lock);
			ufs.flusher_relabel = false;
			due->pinned--;
			pthread_cond_broadcast(&ufs.dirty_cond);
			continue;
		}
		dirty_wait(next - now);
	}
	ufs.flusher_live = false;
	ufs_drops_wake();
	pthread_mutex_unlock(&ufs.dirty_lock);
	return NULL;
}

static bool flusher_started;	/* till ufs_shared_stop (main thread) */

int ufs_shared_start(void)
{
	pthread_condattr_t ca;
	int err;

	pthread_mutex_init(&ufs.dirty_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ufs.dirty_cond, &ca);
	pthread_condattr_destroy(&ca);
	/* Without it a stop looks again each second. */
	ufs.drop_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ufs.flusher_run = ufs.flusher_live = true;
	err = ufs_thread_start(&ufs.flusher, flusher_main, NULL, 0, false);
	if (err) {
		ufs.flusher_run = ufs.flusher_live = false;
		return -err;
	}
	ufs.rules_live = true;
	err = ufs_thread_start(&ufs.rules, rules_main, NULL, 0, false);
	if (err) {
		pthread_mutex_lock(&ufs.dirty_lock);
		ufs.flusher_run = ufs.rules_live = false;
		pthread_cond_broadcast(&ufs.dirty_cond);
		pthread_mutex_unlock(&ufs.dirty_lock);
		pthread_join(ufs.flusher, NULL);
		return -err;
	}
	flusher_started = true;
	return 0;
}

void ufs_shared_stop(void)
{
	struct ufs_inode *in;

	pthread_mutex_lock(&ufs.dirty_lock);
	if (!flusher_started) {
		pthread_mutex_unlock(&ufs.dirty_lock);
		return;
	}
	flusher_started = false;
	ufs.flusher_run = false;
	pthread_cond_broadcast(&ufs.dirty_cond);
	/* The session must outlive the replies still to come (the stopper
	 * waited for them while the workers served). */
	ufs_drops_settle();
	pthread_mutex_unlock(&ufs.dirty_lock);
	pthread_join(ufs.flusher, NULL);
	pthread_join(ufs.rules, NULL);
	if (ufs.drop_wake >= 0) {
		int fd = ufs.drop_wake;

		ufs.drop_wake = -1;
		close(fd);
	}
	/* Unmounted: every write is done, relabel what is left. */
	for (;;) {
		pthread_mutex_lock(&ufs.dirty_lock);
		in = ufs.dirty;
		if (in)
			dirty_del(in);
		pthread_mutex_unlock(&ufs.dirty_lock);
		if (!in)
			break;
		shared_end(in);
	}
}

void ufs_shared_drop(struct ufs_inode *in)
{
	pthread_mutex_lock(&ufs.dirty_lock);
	inval_del(in);
	pthread_mutex_unlock(&ufs.dirty_lock);
	shared_end_now(in);
}
