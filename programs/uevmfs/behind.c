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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

static void fresh_arm(struct ufs_inode *in, const struct uevm_file *f,
		      const struct ufs_file *owner);

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
		/* A create continued (ufs_own_take_fresh): changed since? */
		else if (in->fresh_expect && !same(&in->own_stamp, &in->fresh_expect_stamp))
			in->own_foreign = true;
		/* Just made (ufs_own_expect_empty): anything in it came
		 * from behind the mount. */
		else if (in->expect_empty && in->own_stamp.size != 0)
			in->own_foreign = true;
	}
	in->fresh_expect = false;
	in->expect_empty = false;
	pthread_mutex_unlock(&in->own_lock);
}

/* IN was just made by an exclusive create, so it is empty: the next
 * ufs_own_add (its first writer) takes a file with content as changed
 * behind the mount.  Between the create and that registration nothing
 * else watches the file (an attack review wrote into it there, at its
 * IN_CREATE, and had the bytes labelled). */
void ufs_own_expect_empty(struct ufs_inode *in)
{
	pthread_mutex_lock(&in->own_lock);
	in->expect_empty = true;
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
	/* Written from start to end through FH alone: its digest is the
	 * content's, no second read (stream.c), which may also find a
	 * change behind the mount.  A file MKNOD just made (no FH, created)
	 * had nothing written or streamed. */
	if ((fh || !h->ev.created) &&
	    ufs_stream_end(in, fh, !in->own_foreign, h->digest)) {
		h->ev.written_digest = h->digest;
		h->ev.written_algo = ufs.hash_algo;
	}
	h->ev.changed_elsewhere = in->own_foreign;
	if (h->ev.changed_elsewhere)
		integrity_audit_msg(ufs.sys, AUDIT_INTEGRITY_DATA, &h->file, h->ev.filename,
				    h->ev.cred, "update_xattr", "changed-behind-mount",
				    -EPERM, false);
	integrity_file_free(ufs.sys, &h->ev);
	/* The creating open relabelled its file early (a FLUSH): its next
	 * write continues the create, if the content is still that. */
	if (fh && fh->created && !in->own_foreign)
		fresh_arm(in, &h->file, fh);
	ufs_own_end(in);
drop:
	pthread_mutex_lock(&in->own_lock);
	if (in->own_writers && --in->own_writers == 0)
		in->own_foreign = false;
	pthread_mutex_unlock(&in->own_lock);
}

/*
 * A new file keeps its creator's standing until that open's last close,
 * as the kernel's IMA_NEW_FILE does: its close rehashes whatever the
 * policy says about the file.  uevmfs ends a writer early -- at the FLUSH
 * of a shell's dup'ed descriptor, after labelling a mknod'ed file -- so
 * the open's next write (a mknod'ed file's first writer) takes that
 * standing over.  Only while the content is still the one labelled then,
 * hashed again: a stamp read after our own relabel would also take in a
 * write made behind the mount just after it (an attack review timed one
 * there with inotify).  From that hash on, own_add's stamp must not move.
 */
static void fresh_arm(struct ufs_inode *in, const struct uevm_file *f,
		      const struct ufs_file *owner)
{
	struct uevm_xattr_value v;
	uint8_t *val = NULL;
	size_t size = 0;
	ssize_t n;

	in->fresh = false;
	n = uevm_getxattr_alloc(f, UEVM_XATTR_IMA, &val, &size);
	uevm_xattr_value_init(&v);
	/* A digest uevmfs wrote; never a signature. */
	if (n > 0 && (val[0] == UEVM_IMA_XATTR_DIGEST || val[0] == UEVM_IMA_XATTR_DIGEST_NG) &&
	    uevm_ima_xattr_parse(val, (size_t)n, &v) == 0 && v.algo >= 0 &&
	    v.digest_len <= sizeof(in->fresh_digest) &&
	    v.digest_len == uevm_hash_algo_digest_size(v.algo)) {
		in->fresh = true;
		in->fresh_owner = owner;
		in->fresh_algo = v.algo;
		memcpy(in->fresh_digest, v.digest, v.digest_len);
	}
	free(val);
}

void ufs_own_fresh(struct ufs_inode *in, const struct uevm_file *f)
{
	pthread_mutex_lock(&in->own_lock);
	fresh_arm(in, f, NULL);
	pthread_mutex_unlock(&in->own_lock);
}

bool ufs_own_take_fresh(struct ufs_inode *in, const struct ufs_file *fh)
{
	uint8_t d[64];
	struct stat a, b;
	bool fresh = false;
	int fd;

	pthread_mutex_lock(&in->own_lock);
	if (!in->fresh || in->fresh_owner != fh) {
		pthread_mutex_unlock(&in->own_lock);
		return false;
	}
	in->fresh = false;
	fd = ufs_reopen(in, O_RDONLY | O_NOCTTY);
	if (fd >= 0 && fstat(fd, &a) == 0 &&
	    uevm_hash_fd(fd, in->fresh_algo, d) == 0 && fstat(fd, &b) == 0) {
		struct integrity_stamp sa, sb;

		integrity_stamp_of(&a, &sa);
		integrity_stamp_of(&b, &sb);
		fresh = same(&sa, &sb) &&
			!memcmp(d, in->fresh_digest, uevm_hash_algo_digest_size(in->fresh_algo));
		in->fresh_expect = fresh;
		in->fresh_expect_stamp = sb;
	}
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(&in->own_lock);
	return fresh;
}

void ufs_own_fresh_drop(struct ufs_inode *in, const struct ufs_file *owner)
{
	pthread_mutex_lock(&in->own_lock);
	if (in->fresh_owner == owner)
		in->fresh = false;
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
