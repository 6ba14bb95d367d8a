// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Is a file safe to take key material (or a certificate) from?  Whoever
 * can write a key file, or any directory above it, can replace the key by
 * their own and relabel; whoever can read it has the key.  The rule is
 * ssh's StrictModes: the file and every directory from / down to it are
 * owned by root or the caller's euid; no directory is writable by group or
 * others unless sticky (like /tmp: others cannot rename or remove what they
 * do not own); a secret file has no permission bits for group or others, a
 * certificate no write bit for them.  The checks run on the opened
 * descriptor and on the path the kernel resolved it to, so a symlink's
 * final target is what is judged, not the link.
 *
 * Owners and modes are what the filesystem says.  On a FUSE filesystem
 * that is its daemon's word: one mounted by another user (fusermount3,
 * and with user_allow_other visible to root) can claim that root owns
 * every file, mode 0600.  So the file and the directories above it must
 * not be on a FUSE filesystem mounted by anyone but root or the caller.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "lib_private.h"

#define FUSE_SUPER_MAGIC	0x65735546

static enum uevm_file_checks checks_mode = UEVM_FILE_CHECKS_REFUSE;

UEVM_EXPORT void uevm_set_file_checks(enum uevm_file_checks mode)
{
	checks_mode = mode;
}

bool uevm_file_checks_warn_only(void)
{
	return checks_mode == UEVM_FILE_CHECKS_WARN;
}

static bool trusted_uid(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

struct fcheck {
	const char *path, *what;
	char name[PATH_MAX + 64];	/* "key file PATH" or "... PATH (TARGET)" */
	char target[PATH_MAX];		/* the resolved path, or "" */
};

/* The resolved path of FD, from /proc (the kernel's own answer), else
 * from realpath(3) of PATH; "" when neither is known. */
static void resolve(int fd, struct fcheck *c)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), PROC_FDS "/%d", fd);
	n = readlink(proc, c->target, sizeof(c->target) - 1);
	if (n > 0 && c->target[0] == '/') {
		c->target[n] = '\0';
		return;
	}
	if (!c->path || !realpath(c->path, c->target))
		c->target[0] = '\0';
}

/* "key file k (/abs/target)" when the name given is not the target. */
static void name_it(struct fcheck *c)
{
	char abs[PATH_MAX + 2] = "";

	if (c->path && c->path[0] != '/' && getcwd(abs, PATH_MAX))
		strcat(abs, "/");
	if (c->path && strlen(abs) + strlen(c->path) < sizeof(abs))
		strcat(abs, c->path);
	if (!c->path)
		snprintf(c->name, sizeof(c->name), "%s %s", c->what, c->target);
	else if (!c->target[0] || !strcmp(abs, c->target))
		snprintf(c->name, sizeof(c->name), "%s %s", c->what, c->path);
	else
		snprintf(c->name, sizeof(c->name), "%s %s (%s)", c->what,
			 c->path, c->target);
}

/* Refuse with the message, or (evmctl mode) warn and go on. */
static int verdict(int err, const char *msg)
{
	if (uevm_file_checks_warn_only()) {
		uevm_warn("%s", msg);
		return 0;
	}
	return uevm_err(err, "%s", msg);
}

/* The same for a check that could not be made: also never a pass. */
static int unchecked(const struct fcheck *c, int err, const char *why,
		     const char *where)
{
	char msg[3 * PATH_MAX];

	snprintf(msg, sizeof(msg), "%s: %s %s: %s", c->name, why, where,
		 strerror(err));
	return verdict(err, msg);
}

static int check_file(const struct fcheck *c, const struct stat *st,
		      bool secret)
{
	const char *fix = c->target[0] ? c->target : c->path ? c->path : "it";
	char msg[3 * PATH_MAX];
	unsigned int mode = st->st_mode & 07777;

	if (!trusted_uid(st->st_uid)) {
		snprintf(msg, sizeof(msg), "%s is owned by uid %u, not by root or "
			 "uid %u, so its owner can replace it; fix: chown %u %s "
			 "(after checking its contents)", c->name,
			 (unsigned)st->st_uid, (unsigned)geteuid(),
			 (unsigned)geteuid(), fix);
		return verdict(EPERM, msg);
	}
	if (secret && (mode & 077)) {
		snprintf(msg, sizeof(msg), "%s is readable or writable by group or "
			 "others (mode %04o); fix: chmod 600 %s", c->name, mode, fix);
		return verdict(EPERM, msg);
	}
	if (!secret && (mode & 022)) {
		snprintf(msg, sizeof(msg), "%s is writable by group or others "
			 "(mode %04o), so anyone can replace it; fix: chmod go-w %s",
			 c->name, mode, fix);
		return verdict(EPERM, msg);
	}
	return 0;
}

static int check_dir(const struct fcheck *c, const char *dir,
		     const struct stat *st)
{
	char msg[3 * PATH_MAX];
	unsigned int mode = st->st_mode & 07777;

	if (!trusted_uid(st->st_uid)) {
		snprintf(msg, sizeof(msg), "%s: directory %s is owned by uid %u, not "
			 "by root or uid %u, so its owner can replace the file; "
			 "fix: chown %u %s, or keep the file elsewhere", c->name,
			 dir, (unsigned)st->st_uid, (unsigned)geteuid(),
			 (unsigned)geteuid(), dir);
		return verdict(EPERM, msg);
	}
	if ((mode & 022) && !(mode & S_ISVTX)) {
		snprintf(msg, sizeof(msg), "%s: directory %s is writable by group or "
			 "others (mode %04o, no sticky bit), so anyone can replace "
			 "the file; fix: chmod go-w %s, or keep the file elsewhere",
			 c->name, dir, mode, dir);
		return verdict(EPERM, msg);
	}
	return 0;
}

/* The user_id= a FUSE mount was made for, from the super options of
 * mount MNT_ID in this thread's mountinfo; -1 when it cannot be found. */
static long fuse_mount_owner(uint64_t mnt_id)
{
	FILE *fp = fopen("/proc/thread-self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	long owner = -1;

	while (fp && getline(&line, &cap, fp) > 0) {
		unsigned long long id;
		const char *opts;

		if (sscanf(line, "%llu", &id) != 1 || id != mnt_id)
			continue;
		/* "... - fstype source superoptions" */
		opts = strstr(line, " - ");
		opts = opts ? strrchr(opts, ' ') : NULL;
		opts = opts ? strstr(opts, "user_id=") : NULL;
		if (opts)
			owner = strtol(opts + 8, NULL, 10);
		break;
	}
	free(line);
	if (fp)
		fclose(fp);
	return owner;
}

/* FD (the file or a directory above it, named NAME): not on a FUSE
 * filesystem of another user, whose daemon says who owns what. */
static int check_fs(const struct fcheck *c, int fd, const char *name)
{
	char msg[3 * PATH_MAX];
	struct statfs sf;
	struct statx sx;
	long owner;

	if (fstatfs(fd, &sf) < 0)
		return unchecked(c, errno, "cannot examine the filesystem of", name);
	if (sf.f_type != FUSE_SUPER_MAGIC)
		return 0;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0)
		return unchecked(c, errno, "cannot find the mount of", name);
	if (!(sx.stx_mask & STATX_MNT_ID))
		return unchecked(c, EOPNOTSUPP, "cannot find the mount of", name);
	owner = fuse_mount_owner(sx.stx_mnt_id);
	if (owner >= 0 && trusted_uid((uid_t)owner))
		return 0;
	if (owner < 0)
		snprintf(msg, sizeof(msg), "%s: %s is on a FUSE filesystem whose "
			 "owner cannot be found, whose daemon alone says who owns "
			 "its files; keep the file elsewhere", c->name, name);
	else
		snprintf(msg, sizeof(msg), "%s: %s is on a FUSE filesystem mounted "
			 "by uid %ld, whose daemon alone says who owns its files "
			 "(not root or uid %u); keep the file elsewhere", c->name,
			 name, owner, (unsigned)geteuid());
	return verdict(EPERM, msg);
}

/*
 * Walk c->target from / with O_PATH|O_NOFOLLOW, checking each directory,
 * and make sure the walk ends at the file FD has open (dev, ino): then
 * the directories checked are the ones the file really lives in.
 */
static int check_dirs(const struct fcheck *c, const struct stat *fst)
{
	char dir[PATH_MAX], *comp, *next;
	struct stat st;
	int dfd, nfd, ret = 0;

	if (snprintf(dir, sizeof(dir), "%s", c->target) >= (int)sizeof(dir))
		return unchecked(c, ENAMETOOLONG, "cannot check the directories of",
				 c->target);
	dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0) {
		ret = unchecked(c, errno, "cannot check directory", "/");
		goto out;
	}
	ret = check_dir(c, "/", &st);
	if (!ret)
		ret = check_fs(c, dfd, "/");
	comp = dir + 1;
	while (!ret && (next = strchr(comp, '/'))) {
		*next = '\0';
		nfd = *comp ? openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW |
				     O_CLOEXEC) : dup(dfd);
		if (nfd < 0 || fstat(nfd, &st) < 0) {
			ret = unchecked(c, errno, "cannot check directory", dir);
			if (nfd >= 0)
				close(nfd);
			goto out;
		}
		close(dfd);
		dfd = nfd;
		ret = check_dir(c, dir, &st);
		if (!ret)
			ret = check_fs(c, dfd, dir);
		*next = '/';
		comp = next + 1;
	}
	if (ret)
		goto out;
	/* The walk must end at the very file FD has open. */
	if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st.st_dev != fst->st_dev || st.st_ino != fst->st_ino)
		ret = unchecked(c, EAGAIN, "it was moved while its directories "
				"were checked:", c->target);
out:
	if (dfd >= 0)
		close(dfd);
	return ret;
}

int uevm_check_file_safety(int fd, const char *path, const char *what,
			   bool secret)
{
	struct fcheck *c;
	struct stat st;
	int ret;

	if (fstat(fd, &st) < 0)
		return uevm_err(errno, "cannot examine %s %s: %m", what,
				path ? path : "");
	c = calloc(1, sizeof(*c));
	if (!c)
		return uevm_err(ENOMEM, "out of memory");
	c->path = path;
	c->what = what;
	resolve(fd, c);
	name_it(c);
	ret = check_file(c, &st, secret);
	if (!ret)
		ret = check_fs(c, fd, c->target[0] ? c->target : c->path ? c->path : "it");
	/* A file no longer linked anywhere (a shell's here-document) cannot
	 * be replaced through a directory. */
	if (!ret && st.st_nlink > 0) {
		if (!c->target[0])
			ret = unchecked(c, ENOENT, "cannot find the directories of",
					c->path ? c->path : "it");
		else
			ret = check_dirs(c, &st);
	}
	free(c);
	return ret;
}

int uevm_open_regular(const char *path, const char *what)
{
	char proc[64];
	struct stat st, st2;
	int pfd, fd, err;

	/* Looked at first, opened for I/O only once it is a regular file. */
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return uevm_err(errno, "cannot open %s %s: %m", what, path);
	if (fstat(pfd, &st) < 0) {
		err = errno;
		close(pfd);
		return uevm_err(err, "cannot examine %s %s: %m", what, path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		return uevm_err(EINVAL, "%s %s is not a regular file", what, path);
	}
	/* The very inode looked at, through the descriptor's magic link. */
	snprintf(proc, sizeof(proc), PROC_FDS "/%d", pfd);
	fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT)	/* no /proc: by the name again */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	err = errno;
	close(pfd);
	if (fd < 0)
		return uevm_err(err, "cannot open %s %s: %m", what, path);
	if (fstat(fd, &st2) < 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		close(fd);
		return uevm_err(EAGAIN, "%s %s was replaced while it was opened",
				what, path);
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}
