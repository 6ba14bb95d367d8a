// SPDX-License-Identifier: LGPL-2.1-or-later
/* xattr access through a file object's fd, for values of any size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include "lib_private.h"

/* O_PATH fds (symlinks, devices) refuse f*xattr; /proc/self/fd/N reaches
 * the very same inode and stops there, without following a symlink. */
#define PROC_FD(f, buf) (snprintf(buf, sizeof(buf), "/proc/self/fd/%d", (f)->fd), buf)

static ssize_t get(const struct uevm_file *f, const char *name, void *buf,
		   size_t size)
{
	char p[40];

	return f->io ? fgetxattr(f->fd, name, buf, size)
		     : getxattr(PROC_FD(f, p), name, buf, size);
}

int xattr_check_support(const struct uevm_file *f)
{
	if (get(f, XATTR_NAME_EVM, NULL, 0) >= 0 || errno != EOPNOTSUPP)
		return 0;
	return uevm_err(EOPNOTSUPP, XATTR_UNSUPPORTED " (%s)",
			strerror(EOPNOTSUPP));
}

UEVM_EXPORT ssize_t uevm_getxattr_alloc(const struct uevm_file *f,
					const char *name, uint8_t **buf,
					size_t *bufsize)
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
