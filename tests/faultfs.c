// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faultfs: a FUSE pass-through filesystem over a backing directory that
 * fails chosen operations on chosen files with chosen errnos, for the
 * fault tests (tests/integration/fault_*.sh).  Not part of uevm.
 *
 *   faultfs RULES BACKDIR MOUNTPOINT [--direct-io] [--owner UID] [fuse options]
 *
 * It stays in the foreground.  --direct-io bypasses the page cache, so
 * that a loop device over a file here sees every injected read error.
 * --owner UID reports every object as owned by UID, whoever owns it in
 * BACKDIR: what any FUSE daemon may claim about its files.  MOUNTPOINT
 * may be /dev/fd/N, a /dev/fuse descriptor mounted by someone else.
 *
 * RULES is re-read whenever its mtime changes, so that a test can change
 * the faults without remounting.  One rule a line, '#' starts a comment:
 *
 *   read      NAME ERRNO [OFFSET LENGTH]   reads that touch the byte range
 *   write     NAME ERRNO [OFFSET LENGTH]
 *   open      NAME ERRNO
 *   getxattr  NAME ERRNO XATTR
 *   setxattr  NAME ERRNO XATTR
 *   removexattr NAME ERRNO XATTR
 *   listxattr NAME ERRNO
 *   noxattr   NAME                          every xattr call: EOPNOTSUPP
 *   slowopen  NAME MS                       each open waits likewise (logged
 *                                           as "slowopen NAME")
 *   listhide  NAME XATTR                    listxattr leaves XATTR out,
 *                                           getxattr still returns it
 *   slow      NAME MS                       each read waits MS milliseconds,
 *                                           or until the rule is removed
 *                                           (logged as "slow NAME ? END",
 *                                           END: where the read ends)
 *
 * NAME is a file's last path component or '*'; XATTR a name or '*';
 * ERRNO a symbolic name (EIO, ENOSPC, EDQUOT, EROFS, EOPNOTSUPP, EACCES,
 * EUCLEAN, ENOSYS: the kernel then takes the operation for unimplemented
 * on the whole mount, as with a server that has no handler for it).
 * Every injected failure is logged to RULES.hits, one line
 * "OP NAME ERRNO" each, so a test can tell that the fault was really hit.
 */
#define FUSE_USE_VERSION 35
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define MAX_RULES 64

struct rule {
	char op[16];
	char name[NAME_MAX + 1];
	char xattr[256];
	int err;
	long long off, len;	/* len < 0: the whole file */
};

static const char *rules_path, *back_dir;
static char hits_path[PATH_MAX + 8];
static pthread_mutex_t rules_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rule rules[MAX_RULES];
static int nrules;
static struct timespec rules_mtime;
static bool direct_io;	/* --direct-io: no page cache, every read comes here */
static long owner = -1;	/* --owner UID: the owner every object claims */

static const struct { const char *name; int err; } errnos[] = {
	{ "EIO", EIO }, { "ENOSPC", ENOSPC }, { "EDQUOT", EDQUOT },
	{ "EROFS", EROFS }, { "EOPNOTSUPP", EOPNOTSUPP }, { "ENOTSUP", ENOTSUP },
	{ "EACCES", EACCES }, { "EPERM", EPERM }, { "E2BIG", E2BIG },
	{ "EUCLEAN", EUCLEAN }, { "ENOSYS", ENOSYS },
};

static int errno_by_name(const char *s)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (!strcmp(s, errnos[i].name))
			return errnos[i].err;
	return 0;
}

static const char *errno_name(int err)
{
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
		if (errnos[i].err == err)
			return errnos[i].name;
	return "?";
}

/* Caller holds rules_lock. */
static void reload_rules(void)
{
	struct stat st;
	FILE *fp;
	char line[1024];

	if (stat(rules_path, &st) < 0) {
		nrules = 0;
		return;
	}
	if (st.st_mtim.tv_sec == rules_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == rules_mtime.tv_nsec)
		return;
	rules_mtime = st.st_mtim;
	nrules = 0;
	fp = fopen(rules_path, "r");
	if (!fp)
		return;
	while (nrules < MAX_RULES && fgets(line, sizeof(line), fp)) {
		struct rule *r = &rules[nrules];
		char op[16], name[NAME_MAX + 1], e[32], a1[256], a2[64];
		int n;

		if (line[0] == '#')
			continue;
		n = sscanf(line, "%15s %255s %31s %255s %63s", op, name, e, a1, a2);
		if (n < 2)
			continue;
		memset(r, 0, sizeof(*r));
		snprintf(r->op, sizeof(r->op), "%s", op);
		snprintf(r->name, sizeof(r->name), "%s", name);
		r->len = -1;
		if (!strcmp(op, "slow") || !strcmp(op, "slowopen")) {
			r->off = n >= 3 ? atoll(e) : 0;
			nrules++;
			continue;
		}
		if (!strcmp(op, "listhide") && n >= 3) {
			snprintf(r->xattr, sizeof(r->xattr), "%s", e);
			nrules++;
			continue;
		}
		if (!strcmp(op, "noxattr")) {
			r->err = EOPNOTSUPP;
			strcpy(r->xattr, "*");
			nrules++;
			continue;
		}
		if (n < 3 || !(r->err = errno_by_name(e))) {
			fprintf(stderr, "faultfs: bad rule: %s", line);
			continue;
		}
		if (strstr(op, "xattr")) {
			snprintf(r->xattr, sizeof(r->xattr), "%s", n >= 4 ? a1 : "*");
		} else if (n >= 5) {
			r->off = atoll(a1);
			r->len = atoll(a2);
		}
		nrules++;
	}
	fclose(fp);
}

static void record_hit(const char *op, const char *name, int err)
{
	FILE *fp = fopen(hits_path, "a");

	if (fp) {
		fprintf(fp, "%s %s %s\n", op, name, errno_name(err));
		fclose(fp);
	}
}

/* The errno to fail OP on PATH with (0: no fault).  XATTR and the range
 * [OFF, OFF+LEN) narrow the match where the rule gives them. */
static int fault(const char *op, const char *path, const char *xattr,
		 long long off, long long len)
{
	const char *base = strrchr(path, '/');
	int err = 0;

	base = base ? base + 1 : path;
	pthread_mutex_lock(&rules_lock);
	reload_rules();
	for (int i = 0; i < nrules && !err; i++) {
		const struct rule *r = &rules[i];
		bool xop = strstr(op, "xattr") != NULL;

		if (strcmp(r->op, op) && !(xop && !strcmp(r->op, "noxattr")))
			continue;
		if (strcmp(r->name, "*") && strcmp(r->name, base))
			continue;
		if (xop && xattr && strcmp(r->xattr, "*") && strcmp(r->xattr, xattr))
			continue;
		if (r->len >= 0 && (off + len <= r->off || off >= r->off + r->len))
			continue;
		err = r->err;
	}
	pthread_mutex_unlock(&rules_lock);
	if (err)
		record_hit(op, base, err);
	return err;
}

static void back(const char *path, char *buf)
{
	snprintf(buf, PATH_MAX, "%s%s", back_dir, path);
}

#define BACK(p) char bp[PATH_MAX]; back((p), bp)

static int ff_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	int r;

	if (fi) {
		r = fstat((int)fi->fh, st);
	} else {
		BACK(path);
		r = lstat(bp, st);
	}
	if (r == 0 && owner >= 0)
		st->st_uid = (uid_t)owner;
	return r < 0 ? -errno : 0;
}

static int ff_readlink(const char *path, char *buf, size_t size)
{
	BACK(path);
	ssize_t n = readlink(bp, buf, size - 1);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int ff_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
		      off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	BACK(path);
	DIR *d = opendir(bp);
	struct dirent *de;

	(void)off; (void)fi; (void)flags;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct stat st = { .st_ino = de->d_ino, .st_mode = (mode_t)DTTOIF(de->d_type) };

		if (fill(buf, de->d_name, &st, 0, 0))
			break;
	}
	closedir(d);
	return 0;
}

static long long held_ms(const char *op, const char *path);

static int ff_open(const char *path, struct fuse_file_info *fi)
{
	int err = fault("open", path, NULL, 0, 0);
	int fd;

	long long ms = held_ms("slowopen", path);

	if (err)
		return -err;
	if (ms > 0) {
		/* Logged before the wait: a test acts while the open is held. */
		FILE *fp = fopen(hits_path, "a");

		if (fp) {
			fprintf(fp, "slowopen %s\n", strrchr(path, '/') + 1);
			fclose(fp);
		}
		for (; ms > 0 && held_ms("slowopen", path) > 0; ms -= 10)
			nanosleep(&(struct timespec){ 0, 10 * 1000000 }, NULL);
	}
	{
		BACK(path);
		fd = open(bp, fi->flags & ~O_CREAT);
	}
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int ff_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	BACK(path);
	int fd = open(bp, fi->flags | O_CREAT, mode);

	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

/* The delay of an OP rule ("slow", "slowopen") for PATH, in ms (0: none). */
static long long held_ms(const char *op, const char *path)
{
	const char *base = strrchr(path, '/');
	long long ms = 0;

	base = base ? base + 1 : path;
	pthread_mutex_lock(&rules_lock);
	reload_rules();
	for (int i = 0; i < nrules; i++)
		if (!strcmp(rules[i].op, op) &&
		    (!strcmp(rules[i].name, "*") || !strcmp(rules[i].name, base)))
			ms = rules[i].off;
	pthread_mutex_unlock(&rules_lock);
	return ms;
}

static long long slow_ms(const char *path)
{
	return held_ms("slow", path);
}

/* "slow NAME ? END": END is where the read ends, so that a test can tell
 * how far a reader got (a whole file read: END reached its size). */
static void record_slow(const char *name, off_t end)
{
	FILE *fp = fopen(hits_path, "a");

	if (fp) {
		fprintf(fp, "slow %s ? %lld\n", name, (long long)end);
		fclose(fp);
	}
}

/*
 * Wait MS milliseconds, or less once the rule is gone: a test holds reads
 * with a long delay and releases them by rewriting RULES (an event, not a
 * guess at how long its check takes).
 */
static void slow_wait(const char *path, long long ms)
{
	const struct timespec step = { 0, 10 * 1000000 };

	for (; ms > 0 && slow_ms(path) > 0; ms -= 10)
		nanosleep(&step, NULL);
}

static int ff_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	int err = fault("read", path, NULL, off, (long long)size);
	long long ms = slow_ms(path);
	ssize_t n;

	if (ms > 0) {
		const char *base = strrchr(path, '/');

		record_slow(base ? base + 1 : path, off + (off_t)size);
		slow_wait(path, ms);
	}

	if (err)
		return -err;
	n = pread((int)fi->fh, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int ff_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	int err = fault("write", path, NULL, off, (long long)size);
	ssize_t n;

	if (err)
		return -err;
	n = pwrite((int)fi->fh, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int ff_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	return (datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh)) < 0 ? -errno : 0;
}

static int ff_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close((int)fi->fh);
	return 0;
}

static int ff_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	int r;

	if (fi) {
		r = ftruncate((int)fi->fh, size);
	} else {
		BACK(path);
		r = truncate(bp, size);
	}
	return r < 0 ? -errno : 0;
}

static int ff_unlink(const char *path)
{
	BACK(path);
	return unlink(bp) < 0 ? -errno : 0;
}

static int ff_mkdir(const char *path, mode_t mode)
{
	BACK(path);
	return mkdir(bp, mode) < 0 ? -errno : 0;
}

static int ff_rmdir(const char *path)
{
	BACK(path);
	return rmdir(bp) < 0 ? -errno : 0;
}

static int ff_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)fi;
	BACK(path);
	return chmod(bp, mode) < 0 ? -errno : 0;
}

static int ff_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	(void)fi;
	BACK(path);
	return lchown(bp, uid, gid) < 0 ? -errno : 0;
}

static int ff_utimens(const char *path, const struct timespec tv[2],
		      struct fuse_file_info *fi)
{
	(void)fi;
	BACK(path);
	return utimensat(AT_FDCWD, bp, tv, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int ff_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	return statvfs(back_dir, sv) < 0 ? -errno : 0;
}

static int ff_setxattr(const char *path, const char *name, const char *val,
		       size_t size, int flags)
{
	int err = fault("setxattr", path, name, 0, 0);

	if (err)
		return -err;
	BACK(path);
	return lsetxattr(bp, name, val, size, flags) < 0 ? -errno : 0;
}

static int ff_getxattr(const char *path, const char *name, char *val, size_t size)
{
	int err = fault("getxattr", path, name, 0, 0);
	ssize_t n;

	if (err)
		return -err;
	BACK(path);
	n = lgetxattr(bp, name, val, size);
	return n < 0 ? -errno : (int)n;
}

/* Whether a listhide rule leaves XATTR of PATH out of its listing. */
static bool list_hidden(const char *path, const char *xattr)
{
	const char *base = strrchr(path, '/');
	bool hide = false;

	base = base ? base + 1 : path;
	pthread_mutex_lock(&rules_lock);
	reload_rules();
	for (int i = 0; i < nrules && !hide; i++)
		hide = !strcmp(rules[i].op, "listhide") &&
		       (!strcmp(rules[i].name, "*") || !strcmp(rules[i].name, base)) &&
		       !strcmp(rules[i].xattr, xattr);
	pthread_mutex_unlock(&rules_lock);
	return hide;
}

static int ff_listxattr(const char *path, char *list, size_t size)
{
	int err = fault("listxattr", path, NULL, 0, 0);
	char all[65536];
	ssize_t n, out = 0;

	if (err)
		return -err;
	BACK(path);
	n = llistxattr(bp, all, sizeof(all));
	if (n < 0)
		return -errno;
	for (char *p = all; p < all + n; p += strlen(p) + 1) {
		size_t l = strlen(p) + 1;

		if (list_hidden(path, p))
			continue;
		if (size && (size_t)out + l > size)
			return -ERANGE;
		if (size)
			memcpy(list + out, p, l);
		out += (ssize_t)l;
	}
	return (int)out;
}

static int ff_removexattr(const char *path, const char *name)
{
	int err = fault("removexattr", path, name, 0, 0);

	if (err)
		return -err;
	BACK(path);
	return lremovexattr(bp, name) < 0 ? -errno : 0;
}

/* Kernel inode numbers stay the backing ones (EVM hashes st_ino), and
 * attributes are not cached, so that a change to the backing file shows. */
static void *ff_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 1;
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->direct_io = direct_io;
	return NULL;
}

static const struct fuse_operations ops = {
	.init = ff_init,
	.getattr = ff_getattr,
	.readlink = ff_readlink,
	.readdir = ff_readdir,
	.open = ff_open,
	.create = ff_create,
	.read = ff_read,
	.write = ff_write,
	.fsync = ff_fsync,
	.release = ff_release,
	.truncate = ff_truncate,
	.unlink = ff_unlink,
	.mkdir = ff_mkdir,
	.rmdir = ff_rmdir,
	.chmod = ff_chmod,
	.chown = ff_chown,
	.utimens = ff_utimens,
	.statfs = ff_statfs,
	.setxattr = ff_setxattr,
	.getxattr = ff_getxattr,
	.listxattr = ff_listxattr,
	.removexattr = ff_removexattr,
};

int main(int argc, char **argv)
{
	static char real_back[PATH_MAX], real_rules[PATH_MAX];
	char *fargv[32];
	int fargc = 0;

	if (argc < 4 || argc > 28) {
		fprintf(stderr, "usage: %s RULES BACKDIR MOUNTPOINT [fuse options]\n", argv[0]);
		return 2;
	}
	if (!realpath(argv[2], real_back)) {
		perror(argv[2]);
		return 1;
	}
	/* The rules file may not exist yet: resolve its directory only. */
	if (argv[1][0] == '/')
		snprintf(real_rules, sizeof(real_rules), "%s", argv[1]);
	else if (getcwd(real_rules, sizeof(real_rules)))
		snprintf(real_rules + strlen(real_rules),
			 sizeof(real_rules) - strlen(real_rules), "/%s", argv[1]);
	rules_path = real_rules;
	back_dir = real_back;
	snprintf(hits_path, sizeof(hits_path), "%s.hits", real_rules);
	fargv[fargc++] = argv[0];
	fargv[fargc++] = argv[3];
	fargv[fargc++] = "-f";
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--direct-io"))
			direct_io = true;
		else if (!strcmp(argv[i], "--owner") && i + 1 < argc)
			owner = strtol(argv[++i], NULL, 10);
		else
			fargv[fargc++] = argv[i];
	}
	fargv[fargc] = NULL;
	return fuse_main(fargc, fargv, &ops, NULL);
}
