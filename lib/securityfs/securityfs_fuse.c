// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Serving the control tree as a small FUSE filesystem, from a thread of
 * its own, so that any front-end (uevmfs, uevmd) can show it with one
 * call.  Each request runs as the requesting process: its credentials
 * come from /proc/PID/status, and the tree's own rules decide.  Built into
 * libuevm-fuse.a, which only those front-ends link: libuevm itself does not
 * need libfuse3.
 */
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "securityfs_private.h"
#include "securityfs_fuse.h"

/* An open file, on the mount's list (touched by the serving thread only). */
struct sfs_open_file {
	struct uevm_securityfs_file *f;
	struct sfs_open_file *prev, *next;
};

struct sfs_mount {
	struct uevm_securityfs *sfs;
	/* Released by the kernel's RELEASE, or at the end when the connection
	 * ended first (a reader still held them). */
	struct sfs_open_file *files;
	struct fuse_session *se;
	pthread_t thread;
	bool thread_started;
	int wake[2];		/* a byte here stops the serving thread */
	char *mountpoint;
	struct timespec mounted;
};

static struct sfs_mount *mount_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* FUSE inode numbers: node id + 1 (the root is FUSE_ROOT_ID). */
static int id_of(fuse_ino_t ino)
{
	return ino >= 1 && ino <= INT_MAX ? (int)ino - 1 : -1;
}

/* The requester's credentials.  When /proc cannot tell them (the process
 * is gone, or its ids do not match the request's), it gets the request's
 * ids and no capability at all. */
static void req_cred(fuse_req_t req, struct integrity_cred *cred)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	pid_t tgid = 0;

	if (ctx->pid > 0 && integrity_cred_from_pid(ctx->pid, cred) == 0) {
		if (cred->euid == ctx->uid && cred->egid == ctx->gid)
			return;
		tgid = cred->tgid;	/* the process, for its closes (fsuid) */
	}
	memset(cred, 0, sizeof(*cred));
	cred->tgid = tgid;
	cred->uid = cred->euid = ctx->uid;
	cred->gid = cred->egid = ctx->gid;
	cred->pid = ctx->pid;
	cred->auid = cred->ses = (uint32_t)-1;
	snprintf(cred->comm, sizeof(cred->comm), "?");
}

static int fill_attr(struct sfs_mount *m, int id, struct stat *st)
{
	struct uevm_securityfs_info in;
	int ret = uevm_securityfs_info(m->sfs, id, &in);

	if (ret)
		return ret;
	memset(st, 0, sizeof(*st));
	st->st_ino = (ino_t)id + 1;
	st->st_mode = in.mode;
	st->st_nlink = S_ISDIR(in.mode) ? 2 : 1;
	st->st_uid = in.uid;
	st->st_gid = in.gid;
	/* securityfs files have size 0; reads go to us (direct I/O). */
	st->st_size = in.target ? (off_t)strlen(in.target) : 0;
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = m->mounted;
	return 0;
}

static void sfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct sfs_mount *m = mount_of(req);
	struct fuse_entry_param e;
	int id = uevm_securityfs_lookup(m->sfs, id_of(parent), name);

	if (id < 0) {
		fuse_reply_err(req, -id);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = (fuse_ino_t)id + 1;
	e.entry_timeout = 3600;	/* the tree's shape never changes */
	e.attr_timeout = 0;	/* ima/policy's mode does */
	if (fill_attr(m, id, &e.attr)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fuse_reply_entry(req, &e);
}

static void sfs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int ret = fill_attr(mount_of(req), id_of(ino), &st);

	(void)fi;
	if (ret)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_attr(req, &st, 0);
}

/* Only an O_TRUNC open's truncation (ignored, as securityfs does). */
static void sfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			int to_set, struct fuse_file_info *fi)
{
	(void)fi;
	if (to_set != FUSE_SET_ATTR_SIZE || attr->st_size != 0) {
		fuse_reply_err(req, EPERM);
		return;
	}
	sfs_getattr(req, ino, NULL);
}

static void sfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct uevm_securityfs_info in;

	if (uevm_securityfs_info(mount_of(req)->sfs, id_of(ino), &in) || !in.target)
		fuse_reply_err(req, EINVAL);
	else
		fuse_reply_readlink(req, in.target);
}

static void sfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	struct sfs_mount *m = mount_of(req);
	int dir = id_of(ino), child = -1;
	char *buf = calloc(1, size ? size : 1);
	size_t used = 0;
	off_t pos = 0;

	(void)fi;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* Offsets: 0 ".", 1 "..", then the children in table order. */
	for (;;) {
		struct uevm_securityfs_info in;
		struct stat st;
		const char *name;
		size_t n;

		if (pos == 0) {
			name = ".";
			child = dir;
		} else if (pos == 1) {
			name = "..";
			uevm_securityfs_info(m->sfs, dir, &in);
			child = in.parent;
		} else {
			child = uevm_securityfs_next(m->sfs, dir, pos == 2 ? -1 : child);
			if (child < 0)
				break;
			uevm_securityfs_info(m->sfs, child, &in);
			name = in.name;
		}
		pos++;
		if (pos <= off)
			continue;
		if (fill_attr(m, child, &st))
			break;
		n = fuse_add_direntry(req, buf + used, size - used, name, &st, pos);
		if (n > size - used)
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void sfs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		       mode_t mode, struct fuse_file_info *fi)
{
	(void)parent, (void)name, (void)mode, (void)fi;
	fuse_reply_err(req, EACCES);
}

static void sfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct sfs_mount *m = mount_of(req);
	struct sfs_open_file *of = calloc(1, sizeof(*of));
	struct integrity_cred cred;
	int ret;

	if (!of) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	req_cred(req, &cred);
	ret = uevm_securityfs_open(m->sfs, id_of(ino), &cred, fi->flags, &of->f);
	if (ret) {
		free(of);
		fuse_reply_err(req, -ret);
		return;
	}
	of->next = m->files;
	if (m->files)
		m->files->prev = of;
	m->files = of;
	fi->fh = (uint64_t)(uintptr_t)of;
	fi->direct_io = 1;	/* sizes are 0: never read through the cache */
	fi->keep_cache = 0;
	fuse_reply_open(req, fi);
}

static struct sfs_open_file *open_file_of(struct fuse_file_info *fi)
{
	return (struct sfs_open_file *)(uintptr_t)fi->fh;
}

static struct uevm_securityfs_file *file_of(struct fuse_file_info *fi)
{
	return open_file_of(fi)->f;
}

static void close_file(struct sfs_mount *m, struct sfs_open_file *of)
{
	if (of->prev)
		of->prev->next = of->next;
	else
		m->files = of->next;
	if (of->next)
		of->next->prev = of->prev;
	uevm_securityfs_file_release(of->f);
	free(of);
}

static void sfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	char *buf = malloc(size ? size : 1);
	ssize_t n;

	(void)ino;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = uevm_securityfs_file_read(file_of(fi), buf, size, off);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void sfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		      size_t size, off_t off, struct fuse_file_info *fi)
{
	ssize_t n = uevm_securityfs_file_write(file_of(fi), buf, size, off);

	(void)ino;
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

/* Does process TGID still hold a descriptor of this tree's ima/policy?
 * The one being closed is out of its table already; another is a copy
 * (a shell's dup for a builtin's redirect, "echo RULE >&3") whose close
 * is not the last.  Read as names (readlink makes no request of ours;
 * a stat through the link would wait for this very thread). */
static bool holds_policy(const struct sfs_mount *m, pid_t tgid)
{
	char dir[64], want[PATH_MAX], got[PATH_MAX];
	struct dirent *d;
	bool found = false;
	DIR *dp;
	int n;

	n = snprintf(want, sizeof(want), "%s/integrity/ima/policy", m->mountpoint);
	if (n < 0 || (size_t)n >= sizeof(want))
		return false;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)tgid);
	dp = opendir(dir);
	if (!dp)
		return false;	/* exiting: its other copies close too */
	while (!found && (d = readdir(dp))) {
		ssize_t len = readlinkat(dirfd(dp), d->d_name, got, sizeof(got) - 1);

		if (len > 0) {
			got[len] = '\0';
			found = !strcmp(got, want);
		}
	}
	closedir(dp);
	return found;
}

/* close() reports what the flush returns: the opener's last close installs
 * the policy here. */
static void sfs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct integrity_cred closer;
	pid_t tgid = 0;

	(void)ino;
	/* Readers of the lists close often (a verifier polling them): only
	 * a policy writer's close asks /proc who closes. */
	if (uevm_securityfs_file_writes_policy(file_of(fi)) && ctx->pid > 0 &&
	    integrity_cred_from_pid(ctx->pid, &closer) == 0)
		tgid = closer.tgid;
	if (tgid > 0 && holds_policy(mount_of(req), tgid))
		tgid = -1;	/* not its last descriptor */
	fuse_reply_err(req, -uevm_securityfs_file_flush_by(file_of(fi), tgid));
}

static void sfs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	close_file(mount_of(req), open_file_of(fi));
	fuse_reply_err(req, 0);
}

static void sfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	(void)ino;
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = sv.f_frsize = 4096;
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops sfs_ops = {
	.lookup = sfs_lookup,
	.getattr = sfs_getattr,
	.setattr = sfs_setattr,
	.readlink = sfs_readlink,
	.readdir = sfs_readdir,
	.create = sfs_create,
	.open = sfs_open,
	.read = sfs_read,
	.write = sfs_write,
	.flush = sfs_flush,
	.release = sfs_release,
	.statfs = sfs_statfs,
};

/*
 * fuse_session_loop, but also stopped by a byte on m->wake: a tree that a
 * reader keeps open (an attestation agent does) is only detached by the
 * unmount, so its connection lives on and nothing else would end the
 * thread's read.  Its end closes the connection: the reader's next
 * request fails with ENOTCONN.
 */
static void *serve(void *arg)
{
	struct sfs_mount *m = arg;
	struct fuse_buf fbuf = { .mem = NULL };
	sigset_t all;

	/* Signals are for the front-end's threads, not this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	while (!fuse_session_exited(m->se)) {
		struct pollfd p[2] = {
			{ .fd = fuse_session_fd(m->se), .events = POLLIN },
			{ .fd = m->wake[0], .events = POLLIN },
		};
		int res;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents || (p[0].revents & (POLLERR | POLLHUP)))
			break;	/* stopped, or unmounted */
		if (!(p[0].revents & POLLIN))
			continue;
		res = fuse_session_receive_buf(m->se, &fbuf);
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res <= 0)
			break;
		fuse_session_process_buf(m->se, &fbuf);
	}
	free(fbuf.mem);
	return NULL;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf))
		return uevm_err(EINVAL, "bad mount point '%s'", path);
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return uevm_err(errno, "cannot create %s: %m", buf);
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return uevm_err(errno, "cannot create %s: %m", buf);
	return 0;
}

static void sfs_mount_destroy(struct uevm_securityfs *sfs);

/* PATH is where a control tree is mounted. */
static bool is_tree_mount(const char *path)
{
	FILE *fp = setmntent("/proc/self/mounts", "r");
	struct mntent *me;
	bool found = false;

	if (!fp)
		return false;
	while (!found && (me = getmntent(fp)))
		found = !strcmp(me->mnt_dir, path) &&
			!strcmp(me->mnt_type, "fuse.uevm-securityfs");
	endmntent(fp);
	return found;
}

/* A tree left mounted by a front-end that was killed: its connection is
 * gone (ENOTCONN) and nothing can be mounted over it.  Detached, so that
 * the restarted front-end serves the tree again. */
static void detach_dead_tree(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 || errno != ENOTCONN || !is_tree_mount(path))
		return;
	umount2(path, MNT_DETACH);
}

static void mount_free(struct sfs_mount *m)
{
	if (!m)
		return;
	if (m->se)
		fuse_session_destroy(m->se);
	if (m->wake[0] >= 0) {
		close(m->wake[0]);
		close(m->wake[1]);
	}
	free(m->mountpoint);
	free(m);
}

int uevm_securityfs_mount(struct uevm_securityfs *sfs, const char *mountpoint,
			  const char *options)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct sfs_mount *m;
	char *opts = NULL;
	int ret;

	if (sfs->mount)
		return uevm_err(EBUSY, "the control tree is already mounted at %s",
				sfs->mount->mountpoint);
	ret = mkdir_p(mountpoint);
	if (ret)
		return ret;
	m = calloc(1, sizeof(*m));
	if (!m)
		return uevm_err(ENOMEM, "out of memory");
	m->sfs = sfs;
	if (pipe2(m->wake, O_CLOEXEC) < 0) {
		m->wake[0] = m->wake[1] = -1;
		ret = uevm_err(errno, "cannot make a pipe: %m");
		goto fail;
	}
	m->mountpoint = realpath(mountpoint, NULL);
	if (!m->mountpoint) {
		ret = uevm_err(errno, "%s: %m", mountpoint);
		goto fail;
	}
	detach_dead_tree(m->mountpoint);
	clock_gettime(CLOCK_REALTIME, &m->mounted);
	if (asprintf(&opts, "allow_other,default_permissions,fsname=uevm-securityfs,"
		     "subtype=uevm-securityfs%s%s", options ? "," : "",
		     options ? options : "") < 0) {
		opts = NULL;
		ret = uevm_err(ENOMEM, "out of memory");
		goto fail;
	}
	if (fuse_opt_add_arg(&args, "uevm-securityfs") ||
	    fuse_opt_add_arg(&args, "-o") || fuse_opt_add_arg(&args, opts)) {
		ret = uevm_err(ENOMEM, "out of memory");
		goto fail;
	}
	m->se = fuse_session_new(&args, &sfs_ops, sizeof(sfs_ops), m);
	if (!m->se) {
		ret = uevm_err(EINVAL, "cannot start a FUSE session (options '%s')", opts);
		goto fail;
	}
	if (fuse_session_mount(m->se, m->mountpoint) != 0) {
		ret = uevm_err(EIO, "cannot mount the control tree at %s", m->mountpoint);
		fuse_session_destroy(m->se);
		m->se = NULL;
		goto fail;
	}
	ret = pthread_create(&m->thread, NULL, serve, m);
	if (ret) {
		fuse_session_unmount(m->se);
		ret = uevm_err(ret, "cannot start the control tree's thread");
		goto fail;
	}
	m->thread_started = true;
	sfs->mount = m;
	sfs->mount_destroy = sfs_mount_destroy;
	fuse_opt_free_args(&args);
	free(opts);
	return 0;
fail:
	fuse_opt_free_args(&args);
	free(opts);
	mount_free(m);
	return ret;
}

static void sfs_mount_destroy(struct uevm_securityfs *sfs)
{
	struct sfs_mount *m = sfs->mount;

	if (!m)
		return;
	sfs->mount = NULL;
	sfs->mount_destroy = NULL;
	fuse_session_exit(m->se);
	/* Busy (a reader holds a file open): detached; the thread is stopped
	 * below and the connection closed with the session. */
	if (umount2(m->mountpoint, 0) < 0)
		umount2(m->mountpoint, MNT_DETACH);
	if (write(m->wake[1], "", 1) < 0) {
		/* cannot happen (an empty pipe of our own); the join tells */
	}
	if (m->thread_started)
		pthread_join(m->thread, NULL);
	fuse_session_unmount(m->se);
	while (m->files)
		close_file(m, m->files);
	mount_free(m);
}

int uevm_securityfs_unmount(struct uevm_securityfs *sfs)
{
	if (!sfs->mount)
		return uevm_err(EINVAL, "the control tree is not mounted");
	/* A write session the unmount ends is not a change to measure. */
	uevm_securityfs_set_change_hook(sfs, NULL, NULL);
	sfs_mount_destroy(sfs);
	return 0;
}

const char *uevm_securityfs_mountpoint(const struct uevm_securityfs *sfs)
{
	return sfs->mount ? sfs->mount->mountpoint : NULL;
}
