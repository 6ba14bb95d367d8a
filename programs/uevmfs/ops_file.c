// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening, reading, writing, closing.  The hooks: integrity_file_check
 * when a file is opened (FILE_CHECK, and BPRM_CHECK for execve's open),
 * before any truncation, as do_open() orders it; integrity_file_free when
 * an open that was checked for writing is closed, so that the last writer
 * leaves security.ima and security.evm describing the new content.
 *
 * The close-time rehash runs at the first FLUSH after the content changed
 * (close() waits for it), not at RELEASE (which the kernel sends after
 * close() returned): a program that writes, closes and exits leaves
 * labelled files behind.  A file written again through the same open file
 * (a dup'ed descriptor, a shared mapping) is checked for writing again
 * first.  An open whose content never changed ends at RELEASE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "uevmfs.h"

static struct ufs_file *file_of(struct fuse_file_info *fi)
{
	return (struct ufs_file *)(uintptr_t)fi->fh;
}

static bool writer_mask(int mask)
{
	return mask & (MAY_WRITE | MAY_APPEND);
}

/* FH's fd serves the hooks when it can read; otherwise they open one. */
static int hook_fd(const struct ufs_file *fh)
{
	return (fh->mask & MAY_READ) ? fh->fd : -1;
}

/* Count FH as a writer again (call with FH->lock held exclusive). */
static int file_register(struct ufs_file *fh)
{
	struct ufs_hook h;
	int err = ufs_hook_begin(fh->inode, hook_fd(fh), &fh->cred, &h);

	if (err)
		return err;
	h.ev.mask = fh->mask;
	h.ev.func = FILE_CHECK;
	/* The creating open, writing again after its FLUSH relabelled the
	 * file: still the create (behind.c, ufs_own_take_fresh). */
	h.ev.created = fh->created && ufs_own_take_fresh(fh->inode, fh);
	err = integrity_file_check(ufs.sys, &h.ev);
	ufs_hook_end(&h);
	if (!err) {
		fh->registered = true;
		atomic_store(&fh->written, false);
		ufs_own_add(fh->inode);
		ufs_stream_start(fh->inode, fh);
	}
	return err;
}

void ufs_file_unregister(struct ufs_file *fh)
{
	struct ufs_hook h;

	if (!fh->registered)
		return;
	fh->registered = false;
	if (ufs_hook_begin(fh->inode, hook_fd(fh), &fh->cred, &h)) {
		/* Cannot reach the file any more: nothing to rehash. */
		ufs_own_free(NULL, fh->inode, fh);
		return;
	}
	h.ev.mask = fh->mask;
	h.ev.func = FILE_CHECK;
	h.ev.written = atomic_exchange(&fh->written, false);
	ufs_own_free(&h, fh->inode, fh);
	ufs_hook_end(&h);
}

/* Returns with FH->lock held shared and FH counted as a writer, or an
 * error without the lock. */
static int write_begin(struct ufs_file *fh)
{
	for (;;) {
		int err = 0;

		pthread_rwlock_rdlock(&fh->lock);
		if (fh->registered)
			return 0;
		pthread_rwlock_unlock(&fh->lock);
		pthread_rwlock_wrlock(&fh->lock);
		if (!fh->registered)
			err = file_register(fh);
		pthread_rwlock_unlock(&fh->lock);
		if (err)
			return err;
	}
}

static void write_end(struct ufs_file *fh, bool wrote)
{
	if (wrote)
		atomic_store(&fh->written, true);
	pthread_rwlock_unlock(&fh->lock);
}

int ufs_truncate(struct ufs_inode *in, struct ufs_file *fh, off_t size,
		 const struct integrity_cred *cred)
{
	struct ufs_hook h;
	int err, fd;

	if (fh && writer_mask(fh->mask)) {
		err = write_begin(fh);
		if (err)
			return err;
		ufs_own_begin(in);
		ufs_stream_truncate(in, fh, size);
		err = ftruncate(fh->fd, size) < 0 ? -errno : 0;
		ufs_own_end(in);
		write_end(fh, !err);
		return err;
	}
	/* truncate(2) by name: an open for write, the truncation, a close. */
	err = ufs_hook_begin(in, -1, cred, &h);
	if (err)
		return err;
	h.ev.mask = MAY_WRITE;
	h.ev.readers = atomic_load(&in->readers);
	h.ev.func = FILE_CHECK;
	err = integrity_file_check(ufs.sys, &h.ev);
	if (err) {
		ufs_hook_end(&h);
		return err;
	}
	ufs_own_add(in);
	ufs_own_begin(in);
	fd = ufs_reopen(in, O_WRONLY | O_NONBLOCK);
	if (fd < 0) {
		err = fd;
	} else {
		if (ftruncate(fd, size) < 0)
			err = -errno;
		close(fd);
	}
	ufs_own_end(in);
	h.ev.written = !err;
	ufs_own_free(&h, in, NULL);
	ufs_hook_end(&h);
	return err;
}

/* Whether the kernel's page cache of IN may be kept: the content has the
 * same stamp as when it was last opened through us.  ST: a stat of FD
 * taken during this open, or NULL to take one. */
static bool cache_keep(struct ufs_inode *in, int fd, const struct stat *st)
{
	struct integrity_stamp now;
	struct stat own;
	bool keep;

	if (!st) {
		if (fstat(fd, &own) < 0)
			return false;
		st = &own;
	}
	integrity_stamp_of(st, &now);
	pthread_mutex_lock(&in->lock);
	keep = in->cache_valid && in->cache_stamp.ctime_ns == now.ctime_ns &&
	       in->cache_stamp.mtime_ns == now.mtime_ns &&
	       in->cache_stamp.size == now.size;
	in->cache_stamp = now;
	in->cache_valid = true;
	pthread_mutex_unlock(&in->lock);
	return keep;
}

/* The flags of the SOURCE open: the caller's, without what only the
 * mount's side means. */
static int source_flags(int flags)
{
	return (flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_NOFOLLOW | O_DIRECT |
			  UFS_FMODE_EXEC)) | O_CLOEXEC;
}

/* WRITTEN: the open itself changed the content (created, O_TRUNC). */
int ufs_file_new(struct ufs_inode *in, int fd, int mask, bool written,
		    const struct integrity_cred *cred, struct ufs_file **out)
{
	struct ufs_file *fh = calloc(1, sizeof(*fh));

	if (!fh)
		return -ENOMEM;
	fh->fd = fd;
	fh->mask = mask;
	fh->inode = in;
	fh->cred = *cred;
	fh->registered = writer_mask(mask);
	/* The kernel's i_readcount, for ToMToU: opens for reading only. */
	fh->reader = !writer_mask(mask);
	if (fh->reader)
		atomic_fetch_add(&in->readers, 1);
	atomic_init(&fh->written, written && fh->registered);
	pthread_rwlock_init(&fh->lock, NULL);
	if (fh->registered) {
		ufs_own_add(in);
		ufs_stream_start(in, fh);
	}
	*out = fh;
	return 0;
}

void ufs_file_destroy(struct ufs_file *fh)
{
	if (fh->reader)
		atomic_fetch_sub(&fh->inode->readers, 1);
	close(fh->fd);
	pthread_rwlock_destroy(&fh->lock);
	free(fh);
}

/* Open the existing IN as the request asks, through the hooks.  *STAMPED
 * says whether *ST is a stat of the new open's own fd. */
static int open_existing(fuse_req_t req, struct ufs_inode *in,
			 struct fuse_file_info *fi, struct ufs_file **out,
			 struct stat *st, bool *stamped)
{
	int flags = fi->flags, mask = ufs_open_mask(flags), fd = -1, err;
	bool writer = writer_mask(mask);
	struct integrity_cred cred;
	struct ufs_hook h;

	*stamped = false;
	ufs_req_cred(req, &cred);
	if (!writer) {
		/* A reader's own fd serves the hooks as well. */
		fd = ufs_reopen(in, source_flags(flags));
		if (fd < 0)
			return fd;
	}
	err = ufs_hook_begin(in, fd, &cred, &h);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	h.ev.mask = mask;
	h.ev.func = FILE_CHECK;
	h.ev.readers = atomic_load(&in->readers);
	/* The first writer of a file mknod made continues its create. */
	h.ev.created = writer && ufs_own_take_fresh(in, NULL);
	err = integrity_file_check(ufs.sys, &h.ev);
	if (!err && (flags & UFS_FMODE_EXEC))
		err = integrity_bprm_check(ufs.sys, &h.ev, ufs.nosuid);
	if (!err && writer) {
		/* After the check, as in do_open(): O_TRUNC happens here. */
		ufs_own_begin(in);
		fd = ufs_reopen(in, source_flags(flags));
		ufs_own_end(in);
		if (fd < 0) {
			err = fd;
			h.ev.written = false;
			integrity_file_free(ufs.sys, &h.ev);	/* not a writer after all */
		}
	}
	/* A reader's fd is the hooks' one: their stat (taken as the open
	 * began, so never newer than the content the open sees) also
	 * stamps the page cache.  A writer's fd is opened after the check
	 * (O_TRUNC): reply_opened stats it. */
	if (!writer) {
		*st = h.file.st;
		*stamped = true;
	}
	ufs_hook_end(&h);
	/* Emptied by this open: content at the writer's registration came
	 * from behind the mount (behind.c). */
	if (!err && writer && (flags & O_TRUNC))
		ufs_own_expect_empty(in);
	if (!err)
		err = ufs_file_new(in, fd, mask, flags & O_TRUNC, &cred, out);
	if (!err)
		(*out)->created = h.ev.created;
	if (err && fd >= 0)
		close(fd);
	return err;
}

/* FH's last writer close (FH->lock held exclusive).  A create ends with
 * its open: no later write continues it. */
static void file_end(struct ufs_file *fh)
{
	bool created = fh->created;

	fh->created = false;
	ufs_file_unregister(fh);
	if (created)
		ufs_own_fresh_drop(fh->inode, fh);
}

/* ST: a stat of FH's fd from this open, or NULL. */
static void reply_opened(fuse_req_t req, struct ufs_file *fh,
			 struct fuse_file_info *fi, const struct fuse_entry_param *e,
			 const struct stat *st)
{
	int r;

	fi->fh = (uint64_t)(uintptr_t)fh;
	fi->keep_cache = cache_keep(fh->inode, fh->fd, st);
	/* Only writers need the close-time FLUSH. */
	fi->noflush = !writer_mask(fh->mask);
	fi->direct_io = 0;
	r = e ? fuse_reply_create(req, e, fi) : fuse_reply_open(req, fi);
	if (r == -ENOENT) {
		/* The caller was interrupted: no release will come. */
		pthread_rwlock_wrlock(&fh->lock);
		file_end(fh);
		pthread_rwlock_unlock(&fh->lock);
		if (e)
			ufs_forget_one(fh->inode, 1);
		ufs_file_destroy(fh);
	}
}

void ufs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct ufs_file *fh;
	struct stat st;
	bool stamped;
	int err;

	if (ufs.fastopen) {
		/* The kernel then opens every file itself, from now on. */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	err = open_existing(req, ufs_inode(ino), fi, &fh, &st, &stamped);

	if (err)
		fuse_reply_err(req, -err);
	else
		reply_opened(req, fh, fi, NULL, stamped ? &st : NULL);
}

/* A file created by an open that cannot write (O_RDONLY|O_CREAT) is
 * labelled at once, as an open for writing and its close would: it is
 * "new" only while its creator may still write it, never afterwards, when
 * content could only come from around the mount. */
static void label_new(struct ufs_hook *h, struct ufs_inode *in)
{
	h->ev.created = true;
	h->ev.mask = MAY_WRITE;
	h->ev.func = FILE_CHECK;
	/* A writer from the create on (behind.c): what is written into it
	 * behind the mount meanwhile is not labelled. */
	ufs_own_add(in);
	if (integrity_file_check(ufs.sys, &h->ev) == 0) {
		h->ev.written = false;
		ufs_own_free(h, in, NULL);
	} else {
		ufs_own_free(NULL, in, NULL);
	}
	fstat(h->file.fd, &h->file.st);
}

void ufs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		mode_t mode, struct fuse_file_info *fi)
{
	struct ufs_inode *dir = ufs_inode(parent), *in;
	struct fuse_entry_param e;
	struct integrity_cred cred;
	struct ufs_file *fh;
	struct ufs_hook h;
	int flags = fi->flags, mask = ufs_open_mask(flags), fd, err;

	if (ufs.fastopen) {
		/* The kernel falls back to MKNOD and its own open. */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	ufs_as_caller(req);
	fd = openat(dir->fd, name, source_flags(flags) | O_CREAT | O_EXCL,
		    ufs_create_mode(req, mode));
	err = fd < 0 ? -errno : 0;
	ufs_as_daemon();
	if (err == -EEXIST && !(flags & O_EXCL)) {
		/* Created meanwhile in SOURCE: an open of an existing file. */
		err = ufs_do_lookup(dir, name, &e);
		if (!err) {
			in = ufs_inode(e.ino);
			struct stat st;
			bool stamped;

			err = open_existing(req, in, fi, &fh, &st, &stamped);
			if (err)
				ufs_forget_one(in, 1);
			else
				reply_opened(req, fh, fi, &e, stamped ? &st : NULL);
		}
		if (err)
			fuse_reply_err(req, -err);
		return;
	}
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	err = ufs_enter_fd(fd, &e);
	if (err) {
		close(fd);
		fuse_reply_err(req, -err);
		return;
	}
	in = ufs_inode(e.ino);
	/* Empty as made: content at its first writer's registration came
	 * from behind the mount (behind.c). */
	ufs_own_expect_empty(in);
	ufs_req_cred(req, &cred);
	err = ufs_hook_begin(in, (mask & MAY_READ) ? fd : -1, &cred, &h);
	if (!err) {
		/* The new file's initial labels, then the open's check. */
		integrity_inode_post_init(ufs.sys, &h.ev);
		if (!writer_mask(mask))
			label_new(&h, in);
		h.ev.created = writer_mask(mask);
		h.ev.mask = mask;
		h.ev.func = FILE_CHECK;
		err = integrity_file_check(ufs.sys, &h.ev);
		ufs_hook_end(&h);
	}
	if (!err)
		err = ufs_file_new(in, fd, mask, true, &cred, &fh);
	if (!err)
		fh->created = writer_mask(mask);
	if (err) {
		close(fd);
		ufs_forget_one(in, 1);
		fuse_reply_err(req, -err);
		return;
	}
	/* One stat of the new file serves the reply and the cache stamp. */
	if (fstat(fd, &e.attr) < 0)
		reply_opened(req, fh, fi, &e, NULL);
	else
		reply_opened(req, fh, fi, &e, &e.attr);
}

void ufs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	      struct fuse_file_info *fi)
{
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
	struct ufs_file *fh = file_of(fi);

	if (!fh) {
		ufs_shared_read(req, ufs_inode(ino), size, off);
		return;
	}
	/* The kernel orders reads before the release; the shared lock
	 * states that order where thread checkers can see it. */
	pthread_rwlock_rdlock(&fh->lock);
	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = fh->fd;
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
	pthread_rwlock_unlock(&fh->lock);
}

void ufs_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in_buf,
		   off_t off, struct fuse_file_info *fi)
{
	struct ufs_file *fh = file_of(fi);
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(fuse_buf_size(in_buf));
	struct ufs_stream *s;
	ssize_t n;
	int err;

	if (!fh) {
		ufs_shared_write(req, ufs_inode(ino), in_buf, off);
		return;
	}
	err = write_begin(fh);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	out.buf[0].fd = fh->fd;
	out.buf[0].pos = off;
	ufs_own_begin(fh->inode);
	s = ufs_stream_claim(fh->inode, fh, &in_buf, off);
	n = in_buf ? fuse_buf_copy(&out, in_buf, 0) : -EIO;
	ufs_own_end(fh->inode);
	/* Before the reply: a FLUSH may follow it at once. */
	if (n > 0)
		atomic_store(&fh->written, true);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
	/* Hashed after the reply, overlapping the next write's transfer;
	 * the relabel waits for it (FH's lock, held shared). */
	if (s)
		ufs_stream_written(s, in_buf, off, n);
	write_end(fh, false);
}

void ufs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct ufs_file *fh = file_of(fi);

	(void)ino;
	if (!fh) {
		/* Not opened through us: the kernel stops sending FLUSH. */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	/* Only once the content changed: shells and dd close a dup'ed
	 * descriptor before they write; the release ends the rest. */
	if (writer_mask(fh->mask) && atomic_load(&fh->written)) {
		pthread_rwlock_wrlock(&fh->lock);
		if (atomic_load(&fh->written))
			ufs_file_unregister(fh);
		pthread_rwlock_unlock(&fh->lock);
	}
	fuse_reply_err(req, 0);
}

void ufs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct ufs_file *fh = file_of(fi);

	(void)ino;
	if (!fh) {
		fuse_reply_err(req, 0);
		return;
	}
	pthread_rwlock_wrlock(&fh->lock);
	file_end(fh);
	pthread_rwlock_unlock(&fh->lock);
	ufs_file_destroy(fh);
	fuse_reply_err(req, 0);
}

void ufs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
	       struct fuse_file_info *fi)
{
	struct ufs_file *fh = file_of(fi);
	int err;

	if (!fh) {
		ufs_shared_fsync(req, ufs_inode(ino), datasync);
		return;
	}
	pthread_rwlock_rdlock(&fh->lock);
	err = (datasync ? fdatasync(fh->fd) : fsync(fh->fd)) < 0 ? errno : 0;
	pthread_rwlock_unlock(&fh->lock);
	fuse_reply_err(req, err);
}

void ufs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
		   off_t length, struct fuse_file_info *fi)
{
	struct ufs_file *fh = file_of(fi);
	int err;

	if (!fh) {
		ufs_shared_fallocate(req, ufs_inode(ino), mode, offset, length);
		return;
	}
	err = write_begin(fh);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	ufs_own_begin(fh->inode);
	ufs_stream_break_locked(fh->inode);
	err = fallocate(fh->fd, mode, offset, length) < 0 ? errno : 0;
	ufs_own_end(fh->inode);
	write_end(fh, !err);
	fuse_reply_err(req, err);
}
