// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Extended attributes.  setxattr and removexattr go through the hooks as
 * security_inode_setxattr/removexattr and their post hooks place them:
 * the EVM and IMA rules first (security.evm only as a signature and with
 * CAP_SYS_ADMIN, no protected value changed on a failing file), then the
 * change, then the HMAC over the new values.  Reads pass through.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/xattr.h>
#include "uevmfs.h"

static int do_setxattr(const struct ufs_hook *h, struct ufs_inode *in,
		       const char *name, const void *value, size_t size,
		       int flags)
{
	char proc[40];
	int r;

	if (h->file.io) {
		r = fsetxattr(h->file.fd, name, value, size, flags);
	} else {
		ufs_proc_path(in, proc, sizeof(proc));
		r = setxattr(proc, name, value, size, flags);
	}
	return r < 0 ? -errno : 0;
}

static int do_removexattr(const struct ufs_hook *h, struct ufs_inode *in,
			  const char *name)
{
	char proc[40];
	int r;

	if (h->file.io) {
		r = fremovexattr(h->file.fd, name);
	} else {
		ufs_proc_path(in, proc, sizeof(proc));
		r = removexattr(proc, name);
	}
	return r < 0 ? -errno : 0;
}

void ufs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		  const char *value, size_t size, int flags)
{
	struct ufs_inode *in = ufs_inode(ino);
	struct integrity_cred cred;
	struct ufs_hook h;
	int err;

	if (ufs_shared_stopping(req, in))
		return;
	ufs_req_cred(req, &cred);
	err = ufs_hook_begin(in, -1, &cred, &h);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	h.ev.xattr_name = name;
	h.ev.xattr_value = value ? value : "";	/* set, even when empty */
	h.ev.xattr_len = size;
	err = integrity_inode_setxattr(ufs.sys, &h.ev);
	ufs_own_begin(in);
	if (!err)
		err = do_setxattr(&h, in, name, h.ev.xattr_value, size, flags);
	if (!err)
		integrity_inode_post_setxattr(ufs.sys, &h.ev);
	ufs_own_end(in);
	ufs_hook_end(&h);
	if (ufs.fastopen)	/* the cached pages dropped too */
		ufs_shared_xattr_reply(req, in, err);
	else
		fuse_reply_err(req, -err);
}

void ufs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct ufs_inode *in = ufs_inode(ino);
	struct integrity_cred cred;
	struct ufs_hook h;
	int err;

	if (ufs_shared_stopping(req, in))
		return;
	ufs_req_cred(req, &cred);
	err = ufs_hook_begin(in, -1, &cred, &h);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	h.ev.xattr_name = name;
	err = integrity_inode_removexattr(ufs.sys, &h.ev);
	ufs_own_begin(in);
	if (!err)
		err = do_removexattr(&h, in, name);
	if (!err)
		integrity_inode_post_removexattr(ufs.sys, &h.ev);
	ufs_own_end(in);
	ufs_hook_end(&h);
	if (ufs.fastopen)	/* the cached pages dropped too */
		ufs_shared_xattr_reply(req, in, err);
	else
		fuse_reply_err(req, -err);
}

void ufs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	char proc[40], *buf = NULL;
	ssize_t n;

	ufs_proc_path(ufs_inode(ino), proc, sizeof(proc));
	if (size) {
		buf = malloc(size);
		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	n = getxattr(proc, name, buf, size);
	if (n < 0)
		fuse_reply_err(req, errno);
	else if (size)
		fuse_reply_buf(req, buf, (size_t)n);
	else
		fuse_reply_xattr(req, (size_t)n);
	free(buf);
}

void ufs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char proc[40], *buf = NULL;
	ssize_t n;

	ufs_proc_path(ufs_inode(ino), proc, sizeof(proc));
	if (size) {
		buf = malloc(size);
		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	n = listxattr(proc, buf, size);
	if (n < 0)
		fuse_reply_err(req, errno);
	else if (size)
		fuse_reply_buf(req, buf, (size_t)n);
	else
		fuse_reply_xattr(req, (size_t)n);
	free(buf);
}
