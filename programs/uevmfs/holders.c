// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Processes that reached SOURCE before uevmfs was mounted over it keep
 * reaching it around the mount: a working directory, a root directory or
 * an open file taken before the mount still lead to SOURCE's own inodes,
 * and paths relative to them never pass through uevmfs (a service started
 * before the mount runs ./bin/x unchecked; a user who sat in a directory
 * of SOURCE reads and writes behind the mount).  Nothing in userspace can
 * take them back, so they are named at start: warned on stderr and
 * audited (op=mount cause=source-held-open), one record per process.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "uevmfs.h"

#define HOLDERS_SHOWN	16	/* named on stderr; the rest are counted */

/* Does the magic link LINK lead into SOURCE itself (its filesystem, a path
 * under it), not through the mount?  Its target in *PATH.  The name first:
 * stat follows the link into its filesystem, and a hung FUSE server
 * elsewhere (another process's open file on it) would hang us too. */
static bool into_source(const char *link, char *path, size_t len)
{
	struct stat st;
	ssize_t n;

	n = readlink(link, path, len - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	if (strncmp(path, ufs.source, ufs.source_len) ||
	    (path[ufs.source_len] != '/' && path[ufs.source_len] != '\0' &&
	     ufs.source_len != 0))
		return false;
	return stat(link, &st) == 0 && st.st_dev == ufs.root.dev;
}

/* The first of PID's cwd, root and open files that leads into SOURCE
 * (PID and the fd names are short numbers from /proc). */
static bool holds_source(const char *pid, char *what, size_t wlen, char *path,
			 size_t plen)
{
	static const char *const dirs[] = { "cwd", "root" };
	char link[64 + 2 * NAME_MAX];
	struct dirent *de;
	bool found = false;
	DIR *d;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(link, sizeof(link), "/proc/%s/%s", pid, dirs[i]);
		if (into_source(link, path, plen)) {
			snprintf(what, wlen, "%s", dirs[i]);
			return true;
		}
	}
	snprintf(link, sizeof(link), "/proc/%s/fd", pid);
	d = opendir(link);
	while (d && !found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/proc/%s/fd/%s", pid, de->d_name);
		if (into_source(link, path, plen)) {
			snprintf(what, wlen, "open file (fd %.16s)", de->d_name);
			found = true;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* Is PATH (a magic link's text in our own namespace) SOURCE or below it,
 * whatever mount it is on (a sub-mount of SOURCE counts)? */
static bool path_in_source(const char *path)
{
	return !strncmp(path, ufs.source, ufs.source_len) &&
	       (path[ufs.source_len] == '/' || path[ufs.source_len] == '\0');
}

/* FD, which leads into SOURCE at PATH, replaced (same number, access
 * mode, offset, close-on-exec) by the same object opened through the
 * private copy; closed when that cannot be done.  False if closed. */
static bool reopen_in_copy(int fd, const char *path)
{
	const char *rel = path + ufs.source_len;
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD), nfd = -1;
	struct open_how how = {
		.flags = (uint64_t)((fl & (O_ACCMODE | O_APPEND | O_PATH | O_DIRECTORY |
					   O_NONBLOCK | O_NOATIME)) |
				    O_NOFOLLOW | O_NOCTTY | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct stat a, b;

	while (*rel == '/')
		rel++;
	if (fl >= 0 && fstat(fd, &a) == 0) {
		nfd = (int)syscall(SYS_openat2, ufs.root.fd, *rel ? rel : ".", &how,
				   sizeof(how));
		if (nfd >= 0 && (fstat(nfd, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino)) {
			close(nfd);
			nfd = -1;
		}
	}
	if (nfd >= 0 && !(fl & O_PATH))
		lseek(nfd, lseek(fd, 0, SEEK_CUR), SEEK_SET);
	if (nfd >= 0 && dup2(nfd, fd) == fd) {
		close(nfd);
		fcntl(fd, F_SETFD, fdfl >= 0 ? fdfl : FD_CLOEXEC);
		return true;
	}
	if (nfd >= 0)
		close(nfd);
	fprintf(stderr, "uevmfs: warning: closing fd %d (%s): it leads into SOURCE "
		"around the mount, and it cannot be reopened through uevmfs's copy\n",
		fd, path);
	close(fd);
	return false;
}

/*
 * uevmfs itself, once it mounts over SOURCE: root may follow its
 * /proc/PID/cwd and /proc/PID/fd/N, and a symlink planted in SOURCE can
 * name them (through /dev/fd, which no look at the link's text sees).  Its
 * descriptors of SOURCE are on a noexec copy (inode.c); its working
 * directory, the descriptors a parent left open to it and the files it
 * opened itself by name (an audit log, a measurement list in SOURCE:
 * a review mapped a library planted as the audit log executable through
 * it) were not.  So: the working directory becomes /, and every other
 * descriptor into SOURCE (stdin to stderr, sub-mounts included) is
 * replaced by the same object opened through the copy.
 */
void ufs_leave_source(void)
{
	char link[64], path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (chdir("/") < 0)
		fprintf(stderr, "uevmfs: warning: cannot leave the working directory: %m\n");
	if (!ufs.over_source || !ufs.source_copy || ufs.source_len <= 1 ||
	    !(d = opendir("/proc/self/fd")))
		return;
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);
		ssize_t n;

		if (de->d_name[0] == '.' || fd == dirfd(d) || fd == ufs.root.fd ||
		    fd == ufs.proc_fds || ufs_is_copy_fd(fd))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		if (n <= 0)
			continue;
		path[n] = '\0';
		if (path_in_source(path))
			reopen_in_copy(fd, path);
	}
	closedir(d);
}

void ufs_warn_source_holders(void)
{
	char self[16], what[48], path[PATH_MAX];
	unsigned int n = 0;
	struct dirent *de;
	DIR *proc;

	if (!ufs.over_source)
		return;	/* SOURCE stays reachable by its path anyway */
	proc = opendir("/proc");
	if (!proc)
		return;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	while ((de = readdir(proc))) {
		struct integrity_cred cred;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    !strcmp(de->d_name, self))
			continue;
		if (!holds_source(de->d_name, what, sizeof(what), path, sizeof(path)))
			continue;
		if (integrity_cred_from_pid(atoi(de->d_name), &cred) < 0)
			continue;	/* gone meanwhile */
		if (n++ < HOLDERS_SHOWN)
			fprintf(stderr, "uevmfs: warning: process %s (%s, uid %u) has "
				"%s %s in SOURCE from before the mount: it reaches "
				"SOURCE around uevmfs, unchecked, until it lets go\n",
				de->d_name, cred.comm, (unsigned int)cred.uid, what, path);
		integrity_audit_msg(ufs.sys, AUDIT_INTEGRITY_STATUS, NULL, path, &cred,
				    "mount", "source-held-open", -EBUSY, false);
	}
	closedir(proc);
	if (n > HOLDERS_SHOWN)
		fprintf(stderr, "uevmfs: warning: %u more processes reach SOURCE "
			"from before the mount (see the audit records)\n",
			n - HOLDERS_SHOWN);
}
