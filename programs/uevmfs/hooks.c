// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a hook call is made of: the caller's credentials (from the FUSE
 * request and /proc/PID/status, never uevmfs's own), the SOURCE object as
 * a struct uevm_file reached through its inode's fd, and its name as the
 * caller sees it (MOUNTPOINT/...) for audit records and measurements.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <unistd.h>
#include "uevmfs.h"

void ufs_req_cred(fuse_req_t req, struct integrity_cred *cred)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	/* FUSE gives the caller's fsuid/fsgid; /proc gives the rest.  When
	 * the two disagree (the process is gone and its pid reused, or it
	 * uses setfsuid), nothing from /proc is trusted: no capabilities. */
	if (ctx->pid > 0 && integrity_cred_from_pid(ctx->pid, cred) == 0 &&
	    cred->euid == ctx->uid && cred->egid == ctx->gid)
		return;
	memset(cred, 0, sizeof(*cred));
	cred->uid = cred->euid = ctx->uid;
	cred->gid = cred->egid = ctx->gid;
	cred->pid = ctx->pid;
	cred->auid = cred->ses = (uint32_t)-1;
	snprintf(cred->comm, sizeof(cred->comm), "?");
}

/* readlink gives an unlinked file's name with " (deleted)"; the kernel's
 * IMA records it without (d_absolute_path), and so would a policy. */
static void strip_deleted(char *path, nlink_t nlink)
{
	static const char tag[] = " (deleted)";
	size_t n = strlen(path), t = sizeof(tag) - 1;

	if (nlink == 0 && n > t && !strcmp(path + n - t, tag))
		path[n - t] = '\0';
}

/*
 * The name the caller knows the object by: SOURCE/x becomes MOUNTPOINT/x,
 * the path the application opened, as the kernel would record it.  FUSE
 * does not say through which bind mount or namespace the caller came:
 * MOUNTPOINT as uevmfs saw it at start stands for all of them.  SRC gets
 * SOURCE/x (for -o measure_path=source).
 */
static void display_name(const struct ufs_inode *in, nlink_t nlink, char *out,
			 char *src, size_t len)
{
	char proc[40];
	int dfd = ufs_proc_at(in, proc, sizeof(proc));
	ssize_t n = readlinkat(dfd, proc, src, len - 1);

	if (n <= 0) {
		snprintf(out, len, "%s/?", ufs.mountpoint);
		snprintf(src, len, "%s/?", ufs.source);
		return;
	}
	src[n] = '\0';
	strip_deleted(src, nlink);
	/* The private copy of SOURCE's mount is in no namespace: its names
	 * start at SOURCE's root. */
	if (ufs.source_copy && src[0] == '/' && strcmp(ufs.source, "/")) {
		size_t rl = strlen(src);

		/* "/" is also what the kernel gives for an object moved out
		 * of SOURCE (outside the copy's root): only the root is
		 * SOURCE's root. */
		if (rl == 1 && in->dev == ufs.root.dev && in->ino == ufs.root.ino)
			snprintf(src, len, "%s", ufs.source);
		else if (rl == 1)
			snprintf(src, len, "%s/?", ufs.source);
		else if (ufs.source_len + rl < len) {
			memmove(src + ufs.source_len, src, rl + 1);
			memcpy(src, ufs.source, ufs.source_len);
		} else {
			snprintf(src, len, "%s/?", ufs.source);
		}
	}
	if (!strncmp(src, ufs.source, ufs.source_len) &&
	    (src[ufs.source_len] == '/' || src[ufs.source_len] == '\0')) {
		const char *rest = src + ufs.source_len;

		snprintf(out, len, "%s%s", strcmp(ufs.mountpoint, "/") || !*rest ?
			 ufs.mountpoint : "", rest);
	} else {
		snprintf(out, len, "%s", src);
	}
}

int ufs_hook_begin(struct ufs_inode *in, int iofd,
		   const struct integrity_cred *cred, struct ufs_hook *h)
{
	struct uevm_file *f = &h->file;

	memset(f, 0, sizeof(*f));
	memset(&h->ev, 0, sizeof(h->ev));
	h->own_fd = false;
	h->shared = false;
	f->fd = -1;
	f->dirfd = ufs_devfd(in->dev);
	if (S_ISREG(in->type) || S_ISDIR(in->type)) {
		if (iofd >= 0) {
			f->fd = iofd;
		} else {
			int fd = ufs_reopen(in, O_RDONLY | O_NOCTTY | O_NONBLOCK |
					    O_NOATIME |
					    (S_ISDIR(in->type) ? O_DIRECTORY : 0));

			if (fd < 0)
				return fd;
			f->fd = fd;
			h->own_fd = true;
		}
		f->io = true;
	} else {
		/* Symlinks, devices, FIFOs, sockets: never opened for I/O. */
		f->fd = in->fd;
	}
	/* The object's identity, type, link count and metadata for the
	 * hooks; on an open for reading, also its page-cache stamp (the
	 * library takes the change stamp it caches verdicts by itself,
	 * integrity_inode_get). */
	if (fstat(f->fd, &f->st) < 0) {
		int e = errno;

		ufs_hook_end(h);
		return -e;
	}
	display_name(in, f->st.st_nlink, h->name, h->src_name, sizeof(h->name));
	f->path = h->name;
	h->cred = *cred;
	h->ev.file = f;
	h->ev.cred = &h->cred;
	/* What measurements and audit records call it. */
	h->ev.filename = ufs.source_names ? h->src_name : h->name;
	ufs_share_enter(cred->uid);
	h->shared = true;
	return 0;
}

void ufs_hook_end(struct ufs_hook *h)
{
	if (h->shared) {
		int why = ufs_share_leave();

		h->shared = false;
		if (why)
			integrity_audit_msg(ufs.sys, AUDIT_INTEGRITY_DATA, &h->file,
					    h->ev.filename, &h->cred, "worker_share",
					    why == SHARE_STOPPING ? "uevmfs-stopping" :
					    "user-holds-the-workers", -EBUSY, false);
	}
	if (h->own_fd && h->file.fd >= 0)
		close(h->file.fd);
	h->file.fd = -1;
	h->own_fd = false;
}

int ufs_open_mask(int flags)
{
	int acc = flags & O_ACCMODE, mask = 0;

	/* execve's open asks for MAY_EXEC alone (do_open_execat). */
	if (flags & UFS_FMODE_EXEC)
		return MAY_EXEC;
	/* build_open_flags: ACC_MODE, O_TRUNC writes, O_APPEND appends. */
	if (acc == O_RDONLY || acc == O_RDWR || acc == O_ACCMODE)
		mask |= MAY_READ;
	if (acc == O_WRONLY || acc == O_RDWR || acc == O_ACCMODE)
		mask |= MAY_WRITE;
	if (flags & O_TRUNC)
		mask |= MAY_WRITE;
	if (flags & O_APPEND)
		mask |= MAY_APPEND;
	return mask;
}

/* This thread's umask is its own (CLONE_FS unshared). */
static __thread bool own_umask;

void ufs_as_caller(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	/* Per thread (the raw syscalls); the capabilities stay, because
	 * SECBIT_NO_SETUID_FIXUP is set: the kernel's default_permissions
	 * already checked the caller's access on the mount. */
	setfsgid(ctx->gid);
	setfsuid(ctx->uid);
	/* With POSIX ACLs the kernel sends the mode unmasked and the
	 * caller's umask apart (FUSE_CAP_DONT_MASK): SOURCE's filesystem
	 * applies a default ACL of the directory, or else this umask. */
	if (ufs.dont_mask) {
		if (!own_umask)
			own_umask = unshare(CLONE_FS) == 0;
		if (own_umask)
			umask(ctx->umask);
	}
}

void ufs_as_daemon(void)
{
	setfsuid(0);
	setfsgid(0);
	if (own_umask)
		umask(0);
}

mode_t ufs_create_mode(fuse_req_t req, mode_t mode)
{
	/* No umask of our own to set: the caller's, applied here (a
	 * default ACL then meets the masked mode, the safe side). */
	if (ufs.dont_mask && !own_umask)
		return mode & ~fuse_req_ctx(req)->umask;
	return mode;
}
