// SPDX-License-Identifier: LGPL-2.1-or-later
/* xattr access through a file object's fd, for values of any size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/xattr.h>
#include <linux/magic.h>
#include "lib_private.h"

/* O_PATH fds (symlinks, devices) refuse f*xattr; PROC_FDS/N reaches
 * the very same inode and stops there, without following a symlink. */
#define PROC_FD(f, buf) (snprintf(buf, sizeof(buf), PROC_FDS "/%d", (f)->fd), buf)

static ssize_t get(const struct uevm_file *f, const char *name, void *buf,
		   size_t size)
{
	char p[40];

	return f->io ? fgetxattr(f->fd, name, buf, size)
		     : getxattr(PROC_FD(f, p), name, buf, size);
}

static ssize_t list(const struct uevm_file *f, char *buf, size_t size)
{
	char p[40];

	/* listxattr, not llistxattr: like getxattr in get(), it follows the
	 * /proc magic link to the very object and no further. */
	return f->io ? flistxattr(f->fd, buf, size)
		     : listxattr(PROC_FD(f, p), buf, size);
}

/*
 * Filesystems whose listxattr names every xattr their getxattr returns,
 * from the same store, so that a name not listed is not there.  Anywhere
 * else (FUSE, whose server may list less than it returns; network and
 * stacked filesystems; anything unknown) the listing is not trusted for
 * absence and each protected name is asked for, as the kernel's EVM does.
 */
static bool listing_complete(const struct uevm_ctx *ctx,
			      const struct uevm_file *f)
{
	unsigned long magic;

	/* Once per filesystem in a CLI run (its cache entry is pinned). */
	if (fs_magic_cached(ctx, f, &magic) < 0)
		return false;
	switch (magic) {
	case EXT4_SUPER_MAGIC:		/* also ext2 and ext3 */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case F2FS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

void xattr_names_load(const struct uevm_ctx *ctx, const struct uevm_file *f,
		      struct xattr_names *l)
{
	l->heap = NULL;
	l->names = l->small;
	if (!listing_complete(ctx, f)) {
		/* Not asked: its listing could not be trusted for absence. */
		l->len = -EOPNOTSUPP;
		return;
	}
	l->len = list(f, l->small, sizeof(l->small));
	for (int tries = 0; l->len < 0 && errno == ERANGE && tries < 8; tries++) {
		/* A long list: ask its size, then read it (it can grow). */
		ssize_t want = list(f, NULL, 0);
		char *nb;

		if (want < 0)
			break;
		nb = realloc(l->heap, (size_t)want + 1);
		if (!nb)
			break;
		l->heap = l->names = nb;
		l->len = list(f, nb, (size_t)want + 1);
	}
	if (l->len < 0)
		/* Any failure of the listing, EOPNOTSUPP and ENOSYS included
		 * (a FUSE server with no listxattr handler says so while its
		 * getxattr works): unknown, every protected name is asked. */
		l->len = -(errno ? errno : EIO);
	if (l->len >= 0)
		return;
	free(l->heap);
	l->heap = NULL;
	l->names = l->small;
}

void xattr_names_free(struct xattr_names *l)
{
	free(l->heap);
	l->heap = NULL;
}

int xattr_names_has(const struct xattr_names *l, const char *name)
{
	const char *p = l->names, *end = l->names + (l->len > 0 ? l->len : 0);

	if (l->len < 0)
		return -1;
	while (p < end) {
		size_t n = strnlen(p, (size_t)(end - p));

		if (!strncmp(p, name, n) && name[n] == '\0')
			return 1;
		p += n + 1;
	}
	return 0;
}

int xattr_check_support(const struct uevm_file *f)
{
	if (get(f, XATTR_NAME_EVM, NULL, 0) >= 0 || errno != EOPNOTSUPP)
		return 0;
	return uevm_err(EOPNOTSUPP, XATTR_UNSUPPORTED " (%s)",
			strerror(EOPNOTSUPP));
}

/* Labels are small (security.ima 34 bytes with SHA-256, security.evm 21):
 * a first buffer of this size reads most values in one call, with no
 * size query before it. */
#define XATTR_FIRST_BUF 256

static ssize_t getxattr_alloc(const struct uevm_file *f, const char *name,
			      uint8_t **buf, size_t *bufsize)
{
	for (int tries = 0; tries < 8; tries++) {
		ssize_t n;

		if (*buf && *bufsize) {
			n = get(f, name, *buf, *bufsize);
			if (n >= 0)
				return n;
			if (errno != ERANGE)
				return -errno;
		}
		/* Too small or no buffer yet: ask the size, then retry (the
		 * value can grow between the two calls). */
		n = get(f, name, NULL, 0);
		if (n < 0)
			return -errno;
		if (n == 0 && *buf)
			return 0;
		{
			size_t want = (size_t)n + 1;
			uint8_t *nb = realloc(*buf, want);

			if (!nb)
				return -ENOMEM;
			*buf = nb;
			*bufsize = want;
		}
	}
	return -ERANGE;
}

UEVM_EXPORT ssize_t uevm_getxattr_alloc(const struct uevm_file *f,
					const char *name, uint8_t **buf,
					size_t *bufsize)
{
	bool mine = !*buf;
	ssize_t n;

	if (mine) {
		*buf = malloc(XATTR_FIRST_BUF);
		if (!*buf)
			return -ENOMEM;
		*bufsize = XATTR_FIRST_BUF;
	}
	n = getxattr_alloc(f, name, buf, bufsize);
	/* A failed call leaves no buffer it allocated (ENODATA is common,
	 * and callers may return without freeing). */
	if (n < 0 && mine) {
		free(*buf);
		*buf = NULL;
		*bufsize = 0;
	}
	return n;
}

UEVM_EXPORT int uevm_xattr_cmp(const struct uevm_file *f, const char *name,
			       const void *val, size_t len)
{
	uint8_t *buf = NULL;
	size_t size = 0;
	ssize_t n = uevm_getxattr_alloc(f, name, &buf, &size);
	int ret;

	if (n == -ENODATA)
		return 1;
	if (n < 0)
		return (int)n;
	ret = ((size_t)n != len || memcmp(buf, val, len)) ? 1 : 0;
	free(buf);
	return ret;
}

UEVM_EXPORT int uevm_setxattr(const struct uevm_file *f, const char *name,
			      const void *val, size_t len)
{
	char p[40];
	int r = f->io ? fsetxattr(f->fd, name, val, len, 0)
		      : setxattr(PROC_FD(f, p), name, val, len, 0);

	return r < 0 ? -errno : 0;
}

UEVM_EXPORT int uevm_removexattr(const struct uevm_file *f, const char *name)
{
	char p[40];
	int r = f->io ? fremovexattr(f->fd, name)
		      : removexattr(PROC_FD(f, p), name);

	return r < 0 ? -errno : 0;
}
