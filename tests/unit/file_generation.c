// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevm_file_pin_generation: while pinned, the thread's lookups of that fd
 * and inode answer the value read at the pin, without asking the
 * filesystem (shown by closing the fd: the lookup still answers); any
 * other file, or the same fd number on another inode, is asked as before;
 * unpinned, the closed fd is an error again.  Needs a filesystem with
 * inode generations (ext4 /var/tmp).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>
#include "uevm_internal.h"
#include "test.h"

static char dir[] = "/var/tmp/uevm-file-gen.XXXXXX";
static char p1[300], p2[300];

static int open_file(const char *path, struct uevm_file *f)
{
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	f->dirfd = -1;
	f->io = true;
	f->path = path;
	return f->fd < 0 || fstat(f->fd, &f->st) < 0 ? -1 : 0;
}

static int make_file(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	return close(fd);
}

static uint32_t real_gen(int fd)
{
	unsigned int v = 0;

	return ioctl(fd, FS_IOC_GETVERSION, &v) == 0 ? v : 0;
}

int main(void)
{
	struct uevm_file f1, f2, f3;
	uint32_t g1, g, g2;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(p1, sizeof(p1), "%s/one", dir);
	snprintf(p2, sizeof(p2), "%s/two", dir);
	if (make_file(p1) || make_file(p2) || open_file(p1, &f1) || open_file(p2, &f2)) {
		perror("fixture");
		return 1;
	}
	g1 = real_gen(f1.fd);
	g2 = real_gen(f2.fd);
	CHECK("unpinned: the filesystem's generation",
	      uevm_file_generation(&f1, &g) == 0 && g == g1);

	uevm_file_pin_generation(&f1);
	CHECK("pinned: the same value", uevm_file_generation(&f1, &g) == 0 && g == g1);
	CHECK("pinned: another file is asked for its own",
	      uevm_file_generation(&f2, &g) == 0 && g == g2);
	close(f1.fd);
	CHECK("pinned: answered without the filesystem (its fd closed)",
	      uevm_file_generation(&f1, &g) == 0 && g == g1);

	/* The lowest free number: f1's, now on another inode. */
	if (open_file(p2, &f3) || f3.fd != f1.fd) {
		printf("FAIL: fixture: the same fd number on another inode\n");
		return 1;
	}
	CHECK("pinned: the same fd number on another inode is asked",
	      uevm_file_generation(&f3, &g) == 0 && g == g2);
	close(f3.fd);

	uevm_file_unpin_generation();
	CHECK("unpinned: a closed fd is an error again",
	      uevm_file_generation(&f1, &g) == -EBADF);

	close(f2.fd);
	unlink(p1);
	unlink(p2);
	rmdir(dir);
	TEST_EXIT();
}
