// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The content of a file hashed as it is written through the mount, so that
 * the close of a file written from start to end relabels it without
 * reading it back.
 *
 * What the digest stands for: every byte in [0, hashed) was written by one
 * pwrite of the stream's owner (one open file, the inode's only writer),
 * at the offset where the previous one ended, from the very buffer that
 * was hashed.  It is handed to the relabel only when, in addition, the
 * file's size then equals hashed, the inode never had a second writer
 * meanwhile and nothing changed SOURCE behind the mount (behind.c, checked
 * under the same lock).  Anything else -- a write at another offset, a
 * write through another open file, a truncation, fallocate, an O_APPEND
 * writer, a short or failed write, a write that did not come as one
 * memory buffer -- breaks the stream, and the close rehashes the file as
 * before.  A change behind the mount that the stamps miss (same size,
 * same timestamp tick) leaves content the digest does not describe: the
 * file then fails verification, where a rehash would have labelled it.
 *
 * Ordering: a write claims its range under own_lock (between
 * ufs_own_begin and ufs_own_end), is answered, and then hashes in claim
 * order, so the hash of one write overlaps the transfer of the next.  The
 * relabel takes the open file's lock exclusive, which waits for every
 * write still hashing (they hold it shared).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include "lib_private.h"
#include "uevmfs.h"

struct ufs_stream {
	struct ufs_file *owner;
	off_t next;			/* end of the last claim (own_lock) */
	pthread_mutex_t mu;		/* ok, hashed, md */
	pthread_cond_t cond;
	bool ok;
	off_t hashed;
	EVP_MD_CTX *md;
	off_t base;			/* the size when the writer registered */
};

static _Atomic long stream_stats[2];	/* relabels from a digest, rehashes */

static void stream_free(struct ufs_stream *s)
{
	EVP_MD_CTX_free(s->md);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

void ufs_stream_break_locked(struct ufs_inode *in)
{
	struct ufs_stream *s = in->stream;

	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->ok = false;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->mu);
}

void ufs_stream_start(struct ufs_inode *in, struct ufs_file *fh)
{
	const EVP_MD *md = uevm_hash_md(ufs.hash_algo);
	struct ufs_stream *s;

	pthread_mutex_lock(&in->own_lock);
	/* Only the inode's one writer, and never an appending one (its
	 * pwrite lands at the end of the file, whatever the offset). */
	if (in->stream || in->own_writers != 1 || (fh->mask & MAY_APPEND) || !md)
		goto out;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto out;
	s->md = EVP_MD_CTX_new();
	if (!s->md || !EVP_DigestInit_ex(s->md, md, NULL)) {
		EVP_MD_CTX_free(s->md);
		free(s);
		goto out;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->owner = fh;
	s->ok = true;
	s->base = in->own_stamp.size;	/* own_add's, just taken */
	in->stream = s;
out:
	pthread_mutex_unlock(&in->own_lock);
}

void ufs_stream_break(struct ufs_inode *in)
{
	pthread_mutex_lock(&in->own_lock);
	ufs_stream_break_locked(in);
	pthread_mutex_unlock(&in->own_lock);
}

/* One buffer per worker thread for written data that arrived in a pipe
 * (spliced from the device without a copy): read into it to be hashed. */
static pthread_key_t buf_key;
static pthread_once_t buf_once = PTHREAD_ONCE_INIT;
static __thread struct fuse_bufvec buf_vec;

static void buf_key_init(void)
{
	if (pthread_key_create(&buf_key, free))
		abort();
}

static void *thread_buf(size_t size)
{
	void *p;

	pthread_once(&buf_once, buf_key_init);
	p = pthread_getspecific(buf_key);
	if (!p) {
		p = malloc(UFS_STREAM_BUF);
		if (p && pthread_setspecific(buf_key, p)) {
			free(p);
			p = NULL;
		}
	}
	return size <= UFS_STREAM_BUF ? p : NULL;
}

struct ufs_stream *ufs_stream_claim(struct ufs_inode *in, struct ufs_file *fh,
				    struct fuse_bufvec **bufv, off_t off)
{
	struct ufs_stream *s = in->stream;
	size_t size = fuse_buf_size(*bufv);
	bool in_pipe = (*bufv)->count != 1 || (*bufv)->off != 0 ||
		       ((*bufv)->buf[0].flags & FUSE_BUF_IS_FD);
	void *mem = NULL;

	if (!s)
		return NULL;
	if (s->owner != fh || off != s->next || size > (size_t)(INT64_MAX - off) ||
	    (in_pipe && !(mem = thread_buf(size)))) {
		ufs_stream_break_locked(in);
		return NULL;
	}
	if (in_pipe) {
		/* In a pipe: into memory, hashed from there. */
		buf_vec = (struct fuse_bufvec)FUSE_BUFVEC_INIT(size);
		buf_vec.buf[0].mem = mem;
		if (fuse_buf_copy(&buf_vec, *bufv, FUSE_BUF_NO_SPLICE) != (ssize_t)size) {
			ufs_stream_break_locked(in);
			*bufv = NULL;	/* the data is gone: the write fails */
			return NULL;
		}
		*bufv = &buf_vec;
	}
	s->next = off + (off_t)size;
	return s;
}

void ufs_stream_written(struct ufs_stream *s, const struct fuse_bufvec *bufv,
			off_t off, ssize_t n)
{
	/* S cannot go away meanwhile: the owner's lock is held shared
	 * until this returns, and S ends with it held exclusive. */
	pthread_mutex_lock(&s->mu);
	if (n < 0 || (size_t)n != bufv->buf[0].size)
		s->ok = false;
	while (s->ok && s->hashed != off)
		pthread_cond_wait(&s->cond, &s->mu);
	if (s->ok) {
		if (EVP_DigestUpdate(s->md, bufv->buf[0].mem, (size_t)n))
			s->hashed += n;
		else
			s->ok = false;
		pthread_cond_broadcast(&s->cond);
	}
	pthread_mutex_unlock(&s->mu);
}

void ufs_stream_truncate(struct ufs_inode *in, struct ufs_file *fh, off_t size)
{
	struct ufs_stream *s = in->stream;

	/* Emptied before anything was written: still nothing but our own
	 * writes to come.  Anything else breaks it.  (own_lock held) */
	if (s && !(s->owner == fh && size == 0 && s->next == 0))
		ufs_stream_break_locked(in);
	else if (s)
		s->base = 0;
}

bool ufs_stream_end(struct ufs_inode *in, struct ufs_file *fh, bool use,
		    uint8_t *digest)
{
	struct ufs_stream *s = in->stream;
	bool done = false;
	struct stat st;

	if (!s || s->owner != fh) {
		if (use)
			atomic_fetch_add(&stream_stats[1], 1);
		return false;
	}
	in->stream = NULL;
	/* Every claim was hashed: the owner's lock is held exclusive. */
	if (use && s->ok && s->hashed == s->next && in->own_writers == 1 &&
	    !in->own_foreign && fstatat(in->fd, "", &st, AT_EMPTY_PATH) == 0) {
		/* An unbroken stream is every change made through the mount:
		 * the file is what it wrote over what was there, so any other
		 * size was made behind it (within one of our own writes, where
		 * the stamps cannot tell; a review appended there, timed by
		 * IN_CREATE, and had it labelled).  A prefix written over a
		 * longer file is read again. */
		off_t want = s->base > s->hashed ? s->base : s->hashed;

		if (st.st_size != want)
			in->own_foreign = true;
		else if (st.st_size == s->hashed)
			done = EVP_DigestFinal_ex(s->md, digest, NULL) == 1;
	}
	if (use)
		atomic_fetch_add(&stream_stats[done ? 0 : 1], 1);
	stream_free(s);
	return done;
}

void ufs_stream_drop(struct ufs_inode *in)
{
	if (in->stream)
		stream_free(in->stream);
	in->stream = NULL;
}

void ufs_stream_stats(long *streamed, long *rehashed)
{
	*streamed = atomic_load(&stream_stats[0]);
	*rehashed = atomic_load(&stream_stats[1]);
}
