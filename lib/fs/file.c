// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * File objects: opened once, without following symlinks, and then only
 * reached through their fd, so that a path swapped under us cannot
 * redirect a read or a label to another inode.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include "lib_private.h"

#ifndef FS_IOC_GETFSUUID
struct fsuuid2 {
	uint8_t len;
	uint8_t uuid[16];
};
#define FS_IOC_GETFSUUID _IOR(0x15, 0, struct fsuuid2)
#endif

/* One test for the walk (per directory) and for reopen_rdonly below. */
bool fd_on_nodev_mount(int fd)
{
	struct statvfs sv;

	return fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_NODEV);
}

/*
 * Reopen an O_PATH fd for reading through /proc: the magic link resolves
 * to the fd's own dentry, hence the same inode, with no second lookup of
 * the name.  Without /proc the name is looked up again (*BYNAME is set:
 * the caller compares what it got), but only where that cannot open a
 * device node swapped in meanwhile: a directory (O_DIRECTORY) or on a
 * nodev mount.  Elsewhere it fails.
 */
static int reopen_rdonly(const struct uevm_file *f, int dirfd, const char *name,
			 int procfd, bool *byname)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	int at = AT_FDCWD;
	char proc[40];
	int fd;

	*byname = false;
	if (S_ISDIR(f->st.st_mode))
		flags |= O_DIRECTORY;
	/* PROCFD (the walk's PROC_FDS) saves the lookup of three path
	 * components per file; the magic link it resolves is the same. */
	if (procfd >= 0) {
		at = procfd;
		snprintf(proc, sizeof(proc), "%d", f->fd);
	} else {
		snprintf(proc, sizeof(proc), PROC_FDS "/%d", f->fd);
	}
	fd = openat(at, proc, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM)	/* O_NOATIME needs ownership */
		fd = openat(at, proc, flags);
	if (fd >= 0 || errno != ENOENT || !name)
		return fd;
	if (!S_ISDIR(f->st.st_mode) && !fd_on_nodev_mount(f->fd)) {
		errno = ENOENT;	/* reported as: /proc is needed */
		return -1;
	}
	*byname = true;
	fd = openat(dirfd, name, flags | O_NOFOLLOW | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = openat(dirfd, name, flags | O_NOFOLLOW);
	return fd;
}

int uevm_file_openat(struct uevm_file *f, int dirfd, const char *name,
		     const char *display_path)
{
	return file_openat_via(f, dirfd, name, display_path, -1);
}

int file_openat_via(struct uevm_file *f, int dirfd, const char *name,
		    const char *display_path, int procfd)
{
	int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		memset(f, 0, sizeof(*f));
		f->fd = -1;
		return uevm_err(errno, "%m");
	}
	return file_open_fd_via(f, fd, dirfd, name,
				display_path ? display_path : name, procfd);
}

/* openat() of NAME in DIRFD that stays on DIRFD's mount: a mount over
 * NAME (a device node bind-mounted over a file) fails EXDEV. */
static int openat_same_mount(int dirfd, const char *name, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)flags,
		.resolve = RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS,
	};

	return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
}

/*
 * NAME, which its directory listed as a regular file, opened for reading
 * at once (the walk decides when that is safe: walk.c, open_item).  What
 * is there now may be another object: O_NOFOLLOW fails on a symlink,
 * O_NONBLOCK keeps a FIFO from waiting for a writer, a socket fails
 * ENXIO, O_NOCTTY keeps a terminal from becoming ours.  The directory's
 * mount is nodev, but a mount over NAME has its own flags (a device
 * bind-mounted over a file, in a container's /dev, or by the host in the
 * middle of a walk): the open does not cross into it.  0 with F open, or
 * 1 when it is not a regular file now or the open failed (EXDEV, ENOSYS
 * before Linux 5.6 included): F is left unset and the caller takes the
 * O_PATH way, which handles (and words the errors for) every kind of
 * object.
 */
int file_open_listed_regular(struct uevm_file *f, int dirfd, const char *name,
			     const char *display_path)
{
	int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	int fd = openat_same_mount(dirfd, name, flags | O_NOATIME);

	if (fd < 0 && errno == EPERM)	/* O_NOATIME needs ownership */
		fd = openat_same_mount(dirfd, name, flags);
	if (fd < 0)
		return 1;
	if (fstat(fd, &f->st) < 0 || !S_ISREG(f->st.st_mode)) {
		close(fd);
		return 1;
	}
	f->fd = fd;
	f->dirfd = dirfd;
	f->io = true;
	f->fs_cached = false;
	f->path = display_path;
	return 0;
}

int file_open_fd(struct uevm_file *f, int fd, int dirfd, const char *name,
		 const char *display_path)
{
	return file_open_fd_via(f, fd, dirfd, name, display_path, -1);
}

int file_open_fd_via(struct uevm_file *f, int fd, int dirfd, const char *name,
		     const char *display_path, int procfd)
{
	struct stat st2;
	bool byname;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->dirfd = dirfd;
	f->path = display_path;
	if (fstat(fd, &f->st) < 0) {
		int e = errno;

		close(fd);
		return uevm_err(e, "stat failed: %m");
	}
	f->fd = fd;
	if (!S_ISREG(f->st.st_mode) && !S_ISDIR(f->st.st_mode))
		return 0;	/* never opened for I/O */

	fd = reopen_rdonly(f, dirfd, name, procfd, &byname);
	if (fd < 0) {
		int e = errno;

		uevm_file_close(f);
		if (e == ENOENT)
			return uevm_err(e, "cannot open for reading: %m (is /proc mounted?)");
		return uevm_err(e, "cannot open for reading: %m");
	}
	if (byname && (fstat(fd, &st2) < 0 || st2.st_ino != f->st.st_ino ||
		       st2.st_dev != f->st.st_dev)) {
		close(fd);
		uevm_file_close(f);
		return uevm_err(ESTALE, "replaced while being opened");
	}
	close(f->fd);
	f->fd = fd;
	f->io = true;
	return 0;
}

void uevm_file_close(struct uevm_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	f->io = false;
}

/* ext4, ext2/3 and others encode FILEID_INO32_GEN handles as {ino, gen}:
 * the only way to read a symlink's or a device node's generation without
 * opening it.  Trusted only when the handle's inode number matches. */
static int generation_from_handle(const struct uevm_file *f, uint32_t *gen)
{
	struct {
		struct file_handle fh;
		uint32_t words[32];
	} h;
	int mnt;

	h.fh.handle_bytes = sizeof(h.words);
	if (name_to_handle_at(f->fd, "", &h.fh, &mnt, AT_EMPTY_PATH) < 0)
		return -errno;
	if (h.fh.handle_type != 1 || h.fh.handle_bytes != 8)
		return -EOPNOTSUPP;
	if ((uint32_t)h.words[0] != (uint32_t)f->st.st_ino)
		return -EOPNOTSUPP;
	*gen = h.words[1];
	return 0;
}

/* The public, opaque file object around uevm_file_openat. */
UEVM_EXPORT int uevm_file_open(int dirfd, const char *name,
			       const char *display_path, struct uevm_file **out)
{
	struct uevm_file *f = calloc(1, sizeof(*f));
	int ret;

	*out = NULL;
	if (!f)
		return uevm_err(ENOMEM, "out of memory");
	ret = uevm_file_openat(f, dirfd, name, display_path ? display_path : name);
	if (ret) {
		free(f);
		return ret;
	}
	*out = f;
	return 0;
}

UEVM_EXPORT void uevm_file_free(struct uevm_file *f)
{
	if (!f)
		return;
	uevm_file_close(f);
	free(f);
}

UEVM_EXPORT int uevm_file_fd(const struct uevm_file *f)
{
	return f->fd;
}

UEVM_EXPORT mode_t uevm_file_mode(const struct uevm_file *f)
{
	return f->st.st_mode;
}

UEVM_EXPORT const char *uevm_file_path(const struct uevm_file *f)
{
	return f->path;
}

/*
 * One event's generation, read once (uevm_file_pin_generation): a daemon's
 * check asks for it several times (cache key, EVM HMAC), and it is one
 * ioctl each.  Per thread, for one fd and inode only, until unpinned.  A
 * change of the generation (FS_IOC_SETVERSION) also changes ctime, which
 * the stamps taken around the check see.
 */
static __thread struct {
	bool on;
	int fd;
	dev_t dev;
	ino_t ino;
	uint32_t gen;
	int ret;
} gen_pin;

static int generation_read(const struct uevm_file *f, uint32_t *gen);

void uevm_file_pin_generation(const struct uevm_file *f)
{
	gen_pin.on = false;
	gen_pin.ret = generation_read(f, &gen_pin.gen);
	gen_pin.fd = f->fd;
	gen_pin.dev = f->st.st_dev;
	gen_pin.ino = f->st.st_ino;
	gen_pin.on = true;
}

void uevm_file_unpin_generation(void)
{
	gen_pin.on = false;
}

UEVM_EXPORT int uevm_file_generation(const struct uevm_file *f, uint32_t *gen)
{
	if (gen_pin.on && f->io && f->fd == gen_pin.fd &&
	    f->st.st_dev == gen_pin.dev && f->st.st_ino == gen_pin.ino) {
		*gen = gen_pin.gen;
		return gen_pin.ret;
	}
	return generation_read(f, gen);
}

static int generation_read(const struct uevm_file *f, uint32_t *gen)
{
	unsigned int v = 0;

	*gen = 0;
	if (f->io) {
		if (ioctl(f->fd, FS_IOC_GETVERSION, &v) == 0) {
			*gen = v;
			return 0;
		}
		if (errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL)
			return 0;	/* the fs has no generation: 0 */
		return uevm_err(errno, "FS_IOC_GETVERSION failed: %m");
	}
	/* Not openable: ask the parent whether the fs keeps generations. */
	if (f->dirfd >= 0 && ioctl(f->dirfd, FS_IOC_GETVERSION, &v) < 0)
		return 0;
	if (generation_from_handle(f, gen) < 0)
		*gen = 0;
	return 0;
}

UEVM_EXPORT int uevm_file_fsuuid(const struct uevm_file *f, uint8_t uuid[16])
{
	struct fsuuid2 u = { .len = 16 };
	int fd = f->io ? f->fd : f->dirfd;
	struct stat st;

	if (fd < 0)
		return uevm_err(EOPNOTSUPP, "no open directory to ask for the filesystem UUID");
	/* A non-openable object borrows its parent's fd: same filesystem? */
	if (!f->io && (fstat(fd, &st) < 0 || st.st_dev != f->st.st_dev))
		return uevm_err(EXDEV, "cannot read the filesystem UUID of a mount-point object; give --uuid");
	if (ioctl(fd, FS_IOC_GETFSUUID, &u) < 0) {
		/* No such ioctl here (before Linux 6.5, or this filesystem). */
		if (errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL)
			return uevm_err(errno, "the filesystem reports no UUID "
					"(FS_IOC_GETFSUUID: %m); give --uuid UUID "
					"(the one EVM uses) or --uuid none");
		return uevm_err(errno, "FS_IOC_GETFSUUID failed (%m); give --uuid UUID or --uuid none");
	}
	if (u.len != 16)
		return uevm_err(EINVAL, "filesystem UUID has %u bytes, not 16", u.len);
	memcpy(uuid, u.uuid, 16);
	return 0;
}
