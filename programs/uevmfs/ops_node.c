// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Name and attribute operations.  Hooks sit where the kernel has them:
 * setattr (evm_inode_setattr before, the HMAC rewritten after), and
 * mkdir/mknod/symlink (the new object's initial labels after it exists).
 * Renames and links need none: the HMAC binds the inode, not its names.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "uevmfs.h"

void ufs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int err = ufs_do_lookup(ufs_inode(parent), name, &e);

	if (err == -ENOENT) {
		/* A negative entry, cached like a positive one. */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = ufs.timeout;
		fuse_reply_entry(req, &e);
	} else if (err) {
		fuse_reply_err(req, -err);
	} else {
		fuse_reply_entry(req, &e);
	}
}

void ufs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	ufs_forget_one(ufs_inode(ino), nlookup);
	fuse_reply_none(req);
}

void ufs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *f)
{
	for (size_t i = 0; i < count; i++)
		ufs_forget_one(ufs_inode(f[i].ino), f[i].nlookup);
	fuse_reply_none(req);
}

void ufs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (fstatat(ufs_inode(ino)->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_attr(req, &st, ufs.timeout);
}

static int set_times(struct ufs_inode *in, struct ufs_file *fh,
		     const struct stat *attr, int to_set)
{
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };
	char proc[40];
	int r;

	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		ts[0].tv_nsec = UTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_ATIME)
		ts[0] = attr->st_atim;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		ts[1].tv_nsec = UTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_MTIME)
		ts[1] = attr->st_mtim;
	if (fh) {
		r = futimens(fh->fd, ts);
	} else if (S_ISLNK(in->type)) {
		r = utimensat(in->fd, "", ts, AT_EMPTY_PATH);
	} else {
		ufs_proc_path(in, proc, sizeof(proc));
		r = utimensat(AT_FDCWD, proc, ts, 0);
	}
	return r < 0 ? -errno : 0;
}

void ufs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		 struct fuse_file_info *fi)
{
	struct ufs_inode *in = ufs_inode(ino);
	struct ufs_file *fh = fi ? (struct ufs_file *)(uintptr_t)fi->fh : NULL;
	struct integrity_cred cred;
	struct ufs_hook h;
	unsigned int valid = 0;
	char proc[40];
	int err = 0;

	if (ufs_shared_stopping(req, in))
		return;
	if (to_set & FUSE_SET_ATTR_MODE)
		valid |= ATTR_MODE;
	if (to_set & FUSE_SET_ATTR_UID)
		valid |= ATTR_UID;
	if (to_set & FUSE_SET_ATTR_GID)
		valid |= ATTR_GID;
	ufs_req_cred(req, &cred);

	if (valid) {
		/* evm_inode_setattr: may this metadata change now? */
		err = ufs_hook_begin(in, -1, &cred, &h);
		if (err) {
			fuse_reply_err(req, -err);
			return;
		}
		h.ev.ia_valid = valid;
		h.ev.ia_mode = (valid & ATTR_MODE) ? attr->st_mode : h.file.st.st_mode;
		h.ev.ia_uid = (valid & ATTR_UID) ? attr->st_uid : h.file.st.st_uid;
		h.ev.ia_gid = (valid & ATTR_GID) ? attr->st_gid : h.file.st.st_gid;
		err = integrity_inode_setattr(ufs.sys, &h.ev);
		if (err) {
			ufs_hook_end(&h);
			fuse_reply_err(req, -err);
			return;
		}
	}

	if ((to_set & FUSE_SET_ATTR_SIZE) && !fh && ufs.fastopen)
		err = ufs_shared_truncate(req, in, attr->st_size);
	else if (to_set & FUSE_SET_ATTR_SIZE)
		err = ufs_truncate(in, fh, attr->st_size, &cred);
	ufs_own_begin(in);
	if (!err && (valid & ATTR_MODE)) {
		if (fh) {
			err = fchmod(fh->fd, attr->st_mode & 07777);
		} else if (S_ISLNK(in->type)) {
			err = -1;
			errno = EOPNOTSUPP;
		} else {
			ufs_proc_path(in, proc, sizeof(proc));
			err = chmod(proc, attr->st_mode & 07777);
		}
		err = err < 0 ? -errno : 0;
	}
	if (!err && (valid & (ATTR_UID | ATTR_GID))) {
		uid_t uid = (valid & ATTR_UID) ? attr->st_uid : (uid_t)-1;
		gid_t gid = (valid & ATTR_GID) ? attr->st_gid : (gid_t)-1;

		if (fchownat(in->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			err = -errno;
	}
	if (!err && (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
			       FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW)))
		err = set_times(in, fh, attr, to_set);

	if (valid) {
		/* evm_inode_post_setattr: the HMAC over the new metadata.  Also
		 * after a partial failure: whatever changed is covered. */
		fstat(h.file.fd, &h.file.st);
		integrity_inode_post_setattr(ufs.sys, &h.ev);
		ufs_hook_end(&h);
	}
	ufs_own_end(in);
	if (ufs.fastopen)	/* the cached pages dropped too */
		ufs_shared_setattr_reply(req, in, to_set & FUSE_SET_ATTR_SIZE, err);
	else if (err)
		fuse_reply_err(req, -err);
	else
		ufs_getattr(req, ino, NULL);
}

void ufs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX + 1];
	ssize_t n = readlinkat(ufs_inode(ino)->fd, "", buf, sizeof(buf));
	int err;

	if (n < 0) {
		fuse_reply_err(req, errno);
	} else if (n == (ssize_t)sizeof(buf)) {
		fuse_reply_err(req, ENAMETOOLONG);
	} else {
		buf[n] = '\0';
		/* The kernel follows the text in the caller's view. */
		err = ufs_link_check(req, ufs_inode(ino), buf);
		if (err)
			fuse_reply_err(req, -err);
		else
			fuse_reply_readlink(req, buf);
	}
}

/* After a new object exists: enter it and give it its initial labels
 * (evm_inode_post_init).  A regular file made by mknod is then handled
 * as an open for write and close of a new file, so it gets security.ima
 * at once, as an O_CREAT open would. */
static void new_object(fuse_req_t req, struct ufs_inode *dir, const char *name,
		       int op_err, int fd)
{
	struct fuse_entry_param e;
	struct integrity_cred cred;
	struct ufs_inode *in;
	struct ufs_hook h;
	int err;

	if (op_err) {
		fuse_reply_err(req, op_err);
		return;
	}
	/* FD: the object made, entered as it is (a lookup by NAME could find
	 * another file renamed over it in SOURCE meanwhile). */
	if (fd >= 0) {
		err = ufs_enter_fd(fd, &e);
		close(fd);
	} else {
		err = ufs_do_lookup(dir, name, &e);
	}
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	ufs_req_cred(req, &cred);
	in = ufs_inode(e.ino);
	err = ufs_hook_begin(in, -1, &cred, &h);
	if (!err) {
		integrity_inode_post_init(ufs.sys, &h.ev);
		if (S_ISREG(h.file.st.st_mode)) {
			h.ev.created = true;
			h.ev.mask = MAY_WRITE;
			h.ev.func = FILE_CHECK;
			/* A writer from the create on (behind.c): what is
			 * written into it behind the mount is not labelled. */
			if (fd >= 0)
				ufs_own_expect_empty(in);
			ufs_own_add(in);
			if (integrity_file_check(ufs.sys, &h.ev) == 0) {
				ufs_own_free(&h, in, NULL);
				/* Its first writer continues the create. */
				ufs_own_fresh(in, &h.file);
			} else {
				ufs_own_free(NULL, in, NULL);
			}
		}
		ufs_hook_end(&h);
		fstatat(ufs_inode(e.ino)->fd, "", &e.attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	}
	fuse_reply_entry(req, &e);
}

void ufs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       dev_t rdev)
{
	struct ufs_inode *dir = ufs_inode(parent);
	int r, fd = -1;

	ufs_as_caller(req);
	if (S_ISREG(mode)) {
		/* Made by an exclusive open, which holds the very file made:
		 * new_object labels that one.  (A regular file's mknod is an
		 * O_CREAT|O_EXCL open of nothing.) */
		fd = openat(dir->fd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_NOCTTY | O_CLOEXEC, ufs_create_mode(req, mode) & 07777);
		r = fd < 0 ? errno : 0;
	} else {
		r = mknodat(dir->fd, name, ufs_create_mode(req, mode), rdev);
		r = r < 0 ? errno : 0;
	}
	ufs_as_daemon();
	new_object(req, dir, name, r, fd);
}

void ufs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct ufs_inode *dir = ufs_inode(parent);
	int r;

	ufs_as_caller(req);
	r = mkdirat(dir->fd, name, ufs_create_mode(req, mode));
	r = r < 0 ? errno : 0;
	ufs_as_daemon();
	new_object(req, dir, name, r, -1);
}

void ufs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		 const char *name)
{
	struct ufs_inode *dir = ufs_inode(parent);
	int r;

	ufs_as_caller(req);
	r = symlinkat(link, dir->fd, name);
	r = r < 0 ? errno : 0;
	ufs_as_daemon();
	new_object(req, dir, name, r, -1);
}

void ufs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
	      const char *newname)
{
	struct ufs_inode *dir = ufs_inode(newparent), *in = ufs_inode(ino);
	struct fuse_entry_param e;
	int err;

	/* A new link changes the inode's ctime: ours. */
	ufs_own_begin(in);
	err = linkat(in->fd, "", dir->fd, newname, AT_EMPTY_PATH) < 0 ? errno : 0;
	ufs_own_end(in);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	err = ufs_do_lookup(dir, newname, &e);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_entry(req, &e);
}

/* An unlink or rename changes the ctime of the files it touches: ours,
 * when they are being written through the mount. */
static void own_begin_name(struct ufs_inode *dir, const char *name,
			   struct ufs_inode **out)
{
	*out = ufs_own_by_name(dir, name);
	if (*out)
		ufs_own_begin(*out);
}

static void own_end_name(struct ufs_inode *in)
{
	if (in) {
		ufs_own_end(in);
		ufs_own_put(in);
	}
}

void ufs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct ufs_inode *dir = ufs_inode(parent), *in;
	int err;

	own_begin_name(dir, name, &in);
	err = unlinkat(dir->fd, name, 0) < 0 ? errno : 0;
	own_end_name(in);
	fuse_reply_err(req, err);
}

void ufs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, unlinkat(ufs_inode(parent)->fd, name, AT_REMOVEDIR) < 0 ?
		       errno : 0);
}

void ufs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct ufs_inode *a = ufs_own_by_name(ufs_inode(parent), name);
	struct ufs_inode *b = ufs_own_by_name(ufs_inode(newparent), newname);
	int r;

	if (a == b) {
		ufs_own_put(b);	/* two links of one inode: one bracket */
		b = NULL;
	} else if (a && b && a > b) {
		struct ufs_inode *t = a;	/* lock order: by address */

		a = b;
		b = t;
	}
	if (a)
		ufs_own_begin(a);
	if (b)
		ufs_own_begin(b);
	r = renameat2(ufs_inode(parent)->fd, name, ufs_inode(newparent)->fd,
		      newname, flags);
	r = r < 0 ? errno : 0;
	own_end_name(b);
	own_end_name(a);
	fuse_reply_err(req, r);
}

void ufs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	if (fstatvfs(ufs_inode(ino)->fd, &sv) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &sv);
}

/* ---- directories ------------------------------------------------------------ */

struct ufs_dir {
	DIR *dp;
	struct dirent *entry;
	off_t offset;
};

void ufs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct ufs_dir *d = calloc(1, sizeof(*d));
	int fd;

	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fd = openat(ufs_inode(ino)->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d->dp = fdopendir(fd))) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		free(d);
		fuse_reply_err(req, e);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->cache_readdir = 0;
	if (fuse_reply_open(req, fi) == -ENOENT) {
		closedir(d->dp);
		free(d);
	}
}

static bool is_dot(const char *n)
{
	return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct ufs_dir *d = (struct ufs_dir *)(uintptr_t)fi->fh;
	char *buf = calloc(1, size ? size : 1), *p = buf;
	size_t rem = size;
	int err = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (off != d->offset) {
		seekdir(d->dp, off);
		d->entry = NULL;
		d->offset = off;
	}
	for (;;) {
		struct fuse_entry_param e;
		const char *name;
		size_t n;
		off_t next;

		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				err = errno;
				break;
			}
		}
		name = d->entry->d_name;
		next = d->entry->d_off;
		if (plus && !is_dot(name)) {
			err = -ufs_do_lookup(ufs_inode(ino), name, &e);
			if (err == ENOENT) {	/* gone meanwhile */
				err = 0;
				d->entry = NULL;
				d->offset = next;
				continue;
			}
			if (err)
				break;
			n = fuse_add_direntry_plus(req, p, rem, name, &e, next);
			if (n > rem) {
				ufs_forget_one(ufs_inode(e.ino), 1);
				break;
			}
		} else if (plus) {
			memset(&e, 0, sizeof(e));
			e.attr.st_ino = d->entry->d_ino;
			e.attr.st_mode = (mode_t)d->entry->d_type << 12;
			n = fuse_add_direntry_plus(req, p, rem, name, &e, next);
			if (n > rem)
				break;
		} else {
			struct stat st;

			memset(&st, 0, sizeof(st));
			st.st_ino = d->entry->d_ino;
			st.st_mode = (mode_t)d->entry->d_type << 12;
			n = fuse_add_direntry(req, p, rem, name, &st, next);
			if (n > rem)
				break;
		}
		p += n;
		rem -= n;
		d->entry = NULL;
		d->offset = next;
	}
	/* An error after some entries: return those; the next call sees it. */
	if (err && rem == size)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, size - rem);
	free(buf);
}

void ufs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

void ufs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

void ufs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct ufs_dir *d = (struct ufs_dir *)(uintptr_t)fi->fh;

	(void)ino;
	closedir(d->dp);
	free(d);
	fuse_reply_err(req, 0);
}

void ufs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
		  struct fuse_file_info *fi)
{
	struct ufs_dir *d = (struct ufs_dir *)(uintptr_t)fi->fh;
	int fd = dirfd(d->dp);

	(void)ino;
	fuse_reply_err(req, (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? errno : 0);
}
