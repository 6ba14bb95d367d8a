// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Changes made in SOURCE behind the mount while a file is written through
 * it.  The last writer's close relabels the file; it must label only what
 * came through the mount.  So while a file has writers here, every change
 * uevmfs makes to it (writes, truncations, fallocate, chmod/chown/utimes,
 * xattrs, links and renames, the relabel itself) is bracketed: before it,
 * the file's change stamp must still be the one our previous change left;
 * after it, the new stamp is remembered.  A stamp that moved in between
 * was moved by someone else: the file is then not relabelled, the refusal
 * is audited (op=update_xattr cause=changed-behind-mount) and the file
 * stays failing.
 *
 * The stamp is ctime, mtime and size: a change behind the mount that
 * lands within the same timestamp tick as one of ours and keeps the size
 * is not seen (see uevmfs(8)).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include "uevmfs.h"

static bool stamp_now(struct ufs_inode *in, struct integrity_stamp *out)
{
	struct stat st;

	if (fstatat(in->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	integrity_stamp_of(&st, out);
	return true;
}

static bool same(const struct integrity_stamp *a, const struct integrity_stamp *b)
{
	return a->ctime_ns == b->ctime_ns && a->mtime_ns == b->mtime_ns &&
	       a->size == b->size;
}

void ufs_own_add(struct ufs_inode *in)
{
	pthread_mutex_lock(&in->own_lock);
	/* A second writer: the close no longer relabels from one stream. */
	if (in->own_writers)
		ufs_stream_break_locked(in);
	if (in->own_writers++ == 0) {
		in->own_foreign = false;
		/* Unreadable: nothing to compare with, assume the worst. */
		if (!stamp_now(in, &in->own_stamp))
			in->own_foreign = true;
	}
	pthread_mutex_unlock(&in->own_lock);
}

void ufs_own_begin(struct ufs_inode *in)
{
	struct integrity_stamp now;

	pthread_mutex_lock(&in->own_lock);
	if (in->own_writers && !in->own_foreign &&
	    (!stamp_now(in, &now) || !same(&now, &in->own_stamp)))
		in->own_foreign = true;
}

void ufs_own_end(struct ufs_inode *in)
{
	if (in->own_writers && !stamp_now(in, &in->own_stamp))
		in->own_foreign = true;
	pthread_mutex_unlock(&in->own_lock);
}

void ufs_own_free(struct ufs_hook *h, struct ufs_inode *in, struct ufs_file *fh)
{
	if (!h) {
		/* The file cannot be reached: nothing to relabel. */
		pthread_mutex_lock(&in->own_lock);
		ufs_stream_end(in, fh, false, NULL);
		pthread_mutex_unlock(&in->own_lock);
		goto drop;
	}
	ufs_own_begin(in);
	h->ev.changed_elsewhere = in->own_foreign;
	/* Written from start to end through FH alone: its digest is the
	 * content's, no second read (stream.c). */
	if (ufs_stream_end(in, fh, !in->own_foreign, h->digest)) {
		h->ev.written_digest = h->digest;
		h->ev.written_algo = ufs.hash_algo;
	}
	if (h->ev.changed_elsewhere)
		integrity_audit_msg(ufs.sys, AUDIT_INTEGRITY_DATA, &h->file, h->ev.filename,
				    h->ev.cred, "update_xattr", "changed-behind-mount",
				    -EPERM, false);
	integrity_file_free(ufs.sys, &h->ev);
	ufs_own_end(in);
drop:
	pthread_mutex_lock(&in->own_lock);
	if (in->own_writers && --in->own_writers == 0)
		in->own_foreign = false;
	pthread_mutex_unlock(&in->own_lock);
}

/* The regular file NAME of directory DIR, if the kernel knows it: with a
 * reference, dropped by ufs_forget_one(in, 1). */
struct ufs_inode *ufs_own_by_name(struct ufs_inode *dir, const char *name)
{
	struct stat st;

	if (fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode))
		return NULL;
	return ufs_inode_find(st.st_dev, st.st_ino);
}

void ufs_own_put(struct ufs_inode *in)
{
	if (in)
		ufs_forget_one(in, 1);
}
