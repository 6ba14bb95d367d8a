// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the opener asked for.  fanotify hands the listener a new O_RDONLY
 * descriptor for the object, not the opener's file: its flags are the
 * listener's.  The opener's thread is blocked inside its open syscall
 * until we answer, so /proc/TID/syscall shows that call and its arguments
 * (open, openat, creat, openat2 through its struct open_how,
 * open_by_handle_at, execve).  The access mask is then built as the
 * kernel's build_open_flags() builds acc_mode for ima_file_check().
 *
 * The registers are the call's own, but openat2's flags live in the
 * opener's memory, which the kernel copied at the call: another thread of
 * the opener can rewrite them while the open waits for us.  What they
 * claim beyond a read is believed only when the kernel confirms it (see
 * opener_confirm_write).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "uevmd.h"

/* The kernel's ACC_MODE() plus O_TRUNC and O_APPEND, as do_open passes. */
static int acc_mode(long flags)
{
	static const int acc[4] = { MAY_READ, MAY_WRITE, MAY_READ | MAY_WRITE,
				    MAY_READ | MAY_WRITE };
	int mask = acc[flags & O_ACCMODE];

	if (flags & O_TRUNC)
		mask |= MAY_WRITE;
	if (flags & O_APPEND)
		mask |= MAY_APPEND;
	return mask;
}

static bool read_open_how(pid_t tid, uint64_t addr, uint64_t *flags)
{
	struct open_how how;
	struct iovec local = { &how, sizeof(how.flags) };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(how.flags) };

	if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(how.flags))
		return false;
	*flags = how.flags;
	return true;
}

int opener_access(pid_t tid, int *mask, int *oflags, bool *exec, bool *from_memory)
{
	char path[48], buf[512];
	unsigned long long a[6] = { 0 };
	long nr;
	ssize_t n;
	int fd, k;

	*mask = MAY_READ;	/* unknown: appraised as a read (never skipped) */
	*oflags = 0;
	*exec = false;
	*from_memory = false;
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	/* The event can reach us before the opener has gone to sleep waiting
	 * for the answer; until it does, the kernel shows "running". */
	for (int tries = 0;; tries++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return -EIO;
		buf[n] = '\0';
		if (strncmp(buf, "running", 7) || tries == 200)
			break;
		usleep(tries < 20 ? 0 : 50);
	}
	k = sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2],
		   &a[3], &a[4], &a[5]);
	if (k < 4)
		return -ENOENT;	/* still running, or not in a syscall */
	switch (nr) {
#ifdef SYS_open
	case SYS_open:
		*oflags = (int)a[1];
		break;
#endif
#ifdef SYS_creat
	case SYS_creat:
		*oflags = O_CREAT | O_WRONLY | O_TRUNC;
		break;
#endif
	case SYS_openat:
		*oflags = (int)a[2];
		break;
#ifdef SYS_openat2
	case SYS_openat2: {
		uint64_t f;

		if (!read_open_how(tid, a[2], &f))
			return -EIO;
		*oflags = (int)f;
		*from_memory = true;
		break;
	}
#endif
#ifdef SYS_open_by_handle_at
	case SYS_open_by_handle_at:
		*oflags = (int)a[2];
		break;
#endif
	case SYS_execve:
#ifdef SYS_execveat
	case SYS_execveat:
#endif
#ifdef SYS_uselib
	case SYS_uselib:
#endif
		*exec = true;
		*mask = MAY_EXEC;	/* do_open_execat's acc_mode */
		return 0;
	default:
		return -ENOENT;	/* io_uring, an in-kernel open, ... */
	}
	*mask = acc_mode(*oflags);
	return 0;
}

static bool has_xattr(int fd, const char *name)
{
	/* An error other than "absent" counts as present, as the kernel's
	 * evm_find_protected_xattrs() counts it. */
	return fgetxattr(fd, name, NULL, 0) >= 0 || errno != ENODATA;
}

/*
 * Could F be the inode a creation just made?  Called for FAN_CREATE only,
 * which the kernel sends when it creates a file (or links one: the caller
 * rules that out).  A new file is a regular file with a single link and no
 * label: a file that carries security.ima, security.evm or
 * security.capability was not created empty of them.  Nothing on the disk
 * (birth time, emptiness) is taken as a sign of newness: an offline
 * attacker writes those.
 */
bool object_born(const struct uevm_file *f)
{
	return S_ISREG(f->st.st_mode) && f->st.st_nlink == 1 &&
	       !has_xattr(f->fd, XATTR_NAME_IMA) && !has_xattr(f->fd, XATTR_NAME_EVM) &&
	       !has_xattr(f->fd, "security.capability");
}

/*
 * Flags read from the opener's memory that claim more than a read (write
 * access, O_TMPFILE, which implies it) hold only if the inode has a writer
 * now: the kernel takes the open's write access before it reports the
 * open.  Otherwise the open is a read (the claim was rewritten after the
 * kernel copied the flags).  A writer that is not this open leaves the
 * claim standing; what it could still win is checked where it is used.
 */
void opener_confirm_write(int fd, int *mask, int *oflags)
{
	if (!(*mask & (MAY_WRITE | MAY_APPEND)) && (*oflags & O_TMPFILE) != O_TMPFILE)
		return;
	if (writers_open(fd) == 1)
		return;
	*mask = MAY_READ;
	*oflags = O_RDONLY;
}

/*
 * An O_TMPFILE open makes its inode (no name, no link yet): the one open
 * the kernel reports while the new inode has no link.  A file unlinked
 * while someone holds it (an O_PATH descriptor, opened again through
 * /proc/self/fd) has no link either, so the inode must also look just
 * made: empty, no label, owned by the opener (CRED: its euid, the fsuid
 * of nearly every process).
 */
bool open_made_tmpfile(const struct uevm_file *f, int oflags,
		       const struct integrity_cred *cred)
{
	return (oflags & O_TMPFILE) == O_TMPFILE && S_ISREG(f->st.st_mode) &&
	       f->st.st_nlink == 0 && f->st.st_size == 0 && f->st.st_uid == cred->euid &&
	       !has_xattr(f->fd, XATTR_NAME_IMA) && !has_xattr(f->fd, XATTR_NAME_EVM) &&
	       !has_xattr(f->fd, "security.capability");
}
