// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Parallel tree walk.  Every object is reached with openat() relative to
 * its parent's fd, symlinks are never followed, and work is taken from a
 * LIFO stack so that the number of directories held open stays close to
 * depth x workers rather than the width of the tree.
 *
 * Deep trees would still hold one fd per level, so open directories are
 * kept within a budget: the least recently used idle one is closed
 * ("parked") and reopened by name from its parent when its entries come
 * up, and only if it is still the same directory (device and inode), so
 * that a directory swapped for a symlink or another directory meanwhile
 * is reported, never entered.
 *
 * The PATHs themselves: a symlink PATH is followed unless asked not to
 * (find -H), but a symlink in a PATH's leading components is refused, or,
 * beneath a root directory, resolved inside it (openat2 RESOLVE_IN_ROOT).
 */
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "lib_private.h"

/* An upper bound on directories held open, whatever RLIMIT_NOFILE is. */
#define WALK_MAX_OPEN_DIRS 1024

/* A directory whose entries are queued.  All fields are under fd_lock. */
struct dirref {
	int fd;			/* -1: parked, or not opened yet */
	int err;		/* why it can no longer be reopened, or 0 */
	unsigned int refs;	/* queued items and child dirrefs */
	unsigned int items;	/* queued items, which need fd */
	unsigned int users;	/* threads using fd right now */
	bool known;		/* dev and ino recorded */
	bool follow;		/* no parent: follow a symlink at the end of name */
	bool nodev;		/* its mount is nodev; set before its entries
				 * are queued, then read unlocked */
	dev_t dev;
	ino_t ino;
	struct dirref *parent;	/* NULL: name is a path, opened by root_open */
	char *name;		/* how to reopen it from parent */
	char *display;		/* a root's path as given, or NULL */
	struct dirref *prev, *next;	/* open dirrefs, least recently used first */
};

/* A queued entry.  Only roots keep their path: the others are named
 * from their dirref chain when they come up, so that a deep tree does
 * not hold a full path per queued entry. */
struct item {
	struct item *next;
	struct dirref *parent;
	dev_t root_dev;
	bool follow;		/* roots only: follow a symlink PATH */
	unsigned char dtype;	/* the type readdir gave, DT_UNKNOWN for roots */
	char *path;		/* roots only: as given, its last part is name */
	const char *name;
	char buf[];
};

struct walker {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item *stack;
	size_t pending;		/* queued or being processed */
	int err;		/* first callback failure: stop */
	const struct uevm_walk_opts *opts;
	int rootfd;		/* opts->root, or -1 */
	int procfd;		/* PROC_FDS for the reopens, or -1 */
	int root_err;		/* why opts->root could not be opened */
	uevm_walk_fn fn;
	void *arg;

	pthread_mutex_t fd_lock;
	struct dirref *lru_head, *lru_tail;
	size_t nopen;		/* dirrefs with an open fd */
	size_t budget;		/* how many may stay open */
};

static void lru_remove(struct walker *w, struct dirref *d)
{
	if (d->prev)
		d->prev->next = d->next;
	else
		w->lru_head = d->next;
	if (d->next)
		d->next->prev = d->prev;
	else
		w->lru_tail = d->prev;
	d->prev = d->next = NULL;
}

static void lru_append(struct walker *w, struct dirref *d)
{
	d->prev = w->lru_tail;
	d->next = NULL;
	if (w->lru_tail)
		w->lru_tail->next = d;
	else
		w->lru_head = d;
	w->lru_tail = d;
}

static void dir_close_locked(struct walker *w, struct dirref *d)
{
	if (d->fd < 0)
		return;
	lru_remove(w, d);
	close(d->fd);
	d->fd = -1;
	w->nopen--;
}

/* Park idle directories until at most KEEP are open; returns how many
 * were closed. */
static size_t shrink_locked(struct walker *w, size_t keep)
{
	struct dirref *d = w->lru_head;
	size_t closed = 0;

	while (d && w->nopen > keep) {
		struct dirref *next = d->next;

		if (!d->users) {
			dir_close_locked(w, d);
			closed++;
		}
		d = next;
	}
	return closed;
}

/* Out of fds (EMFILE, ENFILE): park every idle directory and lower the
 * budget, so that the caller can retry once. */
static bool relieve_fd_pressure(struct walker *w, int err)
{
	size_t closed;

	if (err != EMFILE && err != ENFILE)
		return false;
	pthread_mutex_lock(&w->fd_lock);
	closed = shrink_locked(w, 0);
	if (w->budget > 4)
		w->budget = w->nopen + (w->budget - w->nopen) / 2;
	pthread_mutex_unlock(&w->fd_lock);
	return closed > 0;
}

static struct dirref *dirref_new(struct dirref *parent, const char *name)
{
	struct dirref *d = calloc(1, sizeof(*d));

	if (!d || !(d->name = strdup(name))) {
		free(d);
		return NULL;
	}
	d->fd = -1;
	d->refs = 1;
	d->parent = parent;
	if (parent)
		parent->refs++;	/* caller holds fd_lock or is alone */
	return d;
}

/* Drop one reference; a freed dirref drops its parent's, iteratively
 * (a 4096-deep chain must not recurse). */
static void dirref_put_locked(struct walker *w, struct dirref *d)
{
	while (d && --d->refs == 0) {
		struct dirref *parent = d->parent;

		dir_close_locked(w, d);
		free(d->name);
		free(d->display);
		free(d);
		d = parent;
	}
}

static int openat2_fd(int dirfd, const char *path, int flags,
		     unsigned long long resolve)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = resolve,
	};

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/*
 * Open PATH one component at a time, each leading one without following
 * a symlink, so that no link redirects it however the names change; the
 * last one is followed if FOLLOW, else it is a directory checked like
 * the others.  A link met on the way is named.
 */
static int open_no_leading_links(const char *path, int flags, bool follow)
{
	char *copy = strdup(path), *p;
	int fd, nfd, e;

	if (!copy)
		return uevm_err(ENOMEM, "out of memory");
	fd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	e = errno;
	if (fd < 0)
		uevm_err(e, "%s", strerror(e));
	for (p = copy; *p == '/'; p++)
		;
	while (fd >= 0 && *p) {
		char *end = p + strcspn(p, "/"), *next = end, save = *end;
		char target[PATH_MAX];
		struct stat st;
		ssize_t n;

		while (*next == '/')
			next++;
		if (!*next && follow) {	/* the last component */
			*end = '\0';
			nfd = openat(fd, p, flags | O_CLOEXEC);
			e = errno;
			close(fd);
			free(copy);
			return nfd >= 0 ? nfd : uevm_err(e, "%s", strerror(e));
		}
		*end = '\0';
		nfd = openat(fd, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		e = errno;
		close(fd);
		fd = -1;
		if (nfd < 0 || fstat(nfd, &st) < 0) {
			e = nfd < 0 ? e : errno;
			uevm_err(e, "%s: %s", copy, strerror(e));
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			n = readlinkat(nfd, "", target, sizeof(target) - 1);
			target[n > 0 ? n : 0] = '\0';
			uevm_err(ELOOP, "%s is a symbolic link to '%s', and objects are never reached through one: give the resolved path, or --root DIR to resolve it as seen from inside DIR",
				 copy, target);
			close(nfd);
			e = ELOOP;
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			uevm_err(ENOTDIR, "%s: %s", copy, strerror(ENOTDIR));
			close(nfd);
			e = ENOTDIR;
			break;
		}
		fd = nfd;
		*end = save;
		p = next;
	}
	if (fd >= 0) {	/* the directory reached, or "/" */
		nfd = openat(fd, ".", flags | O_CLOEXEC);
		e = errno;
		close(fd);
		free(copy);
		return nfd >= 0 ? nfd : uevm_err(e, "%s", strerror(e));
	}
	free(copy);
	return -e;
}

/* Open a PATH given to the walk (or a directory of it): beneath the root
 * when there is one, else without a symlink in its leading components.
 * Returns an fd, or a negative errno with the reason recorded. */
static int root_open(const struct walker *w, const char *path, int flags,
		     bool follow)
{
	int nofollow = follow ? 0 : O_NOFOLLOW, fd;

	if (w->rootfd >= 0) {
		fd = openat2_fd(w->rootfd, path, flags | nofollow,
				RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
		if (fd < 0 && errno == ENOSYS)
			return uevm_err(ENOSYS, "resolving beneath a root directory needs openat2() (Linux 5.6 or later)");
		return fd >= 0 ? fd : uevm_err(errno, "%s", strerror(errno));
	}
	if (w->opts->allow_leading_links) {
		fd = openat(AT_FDCWD, path, flags | nofollow | O_CLOEXEC);
		return fd >= 0 ? fd : uevm_err(errno, "%s", strerror(errno));
	}
	return open_no_leading_links(path, flags, follow);
}

static int dir_openat(const struct walker *w, const struct dirref *d,
		      int flags)
{
	int fd;

	/* Below the roots nothing is followed. */
	if (!d->parent)
		return root_open(w, d->name, flags, d->follow);
	fd = openat(d->parent->fd, d->name, flags | O_NOFOLLOW);
	return fd >= 0 ? fd : -errno;
}

/* Open D from its (open) parent.  A directory seen before must still be
 * the same one. */
static int dir_open_locked(struct walker *w, struct dirref *d)
{
	int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK;
	struct stat st;
	int fd, e;

	fd = dir_openat(w, d, flags);
	if ((fd == -EMFILE || fd == -ENFILE) && shrink_locked(w, 0))
		fd = dir_openat(w, d, flags);
	if (fd < 0) {
		e = -fd;
		if (!d->known)
			return d->parent ? uevm_err(e, "%s", strerror(e)) : fd;
		if (e == ELOOP || e == ENOTDIR || e == ENOENT)
			return uevm_err(ESTALE, "its directory was moved or replaced during the walk (%s)",
					strerror(e));
		return uevm_err(e, "cannot reopen its directory: %s", strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		return uevm_err(e, "cannot stat its directory: %s", strerror(e));
	}
	/* The same directory, and still on a nodev mount if its entries
	 * were queued as such (a PATH reached again through a symlink may
	 * now lead to a bind mount of it that allows devices): open_item
	 * opens them directly only there. */
	if (d->known && (st.st_dev != d->dev || st.st_ino != d->ino ||
			 (d->nodev && !fd_on_nodev_mount(fd)))) {
		close(fd);
		return uevm_err(ESTALE, "its directory was replaced during the walk");
	}
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->known = true;
	d->fd = fd;
	w->nopen++;
	lru_append(w, d);
	return 0;
}

static bool transient(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM || err == EINTR;
}

/* D's fd for one item's use, reopening D (and the parked directories
 * above it) if needed.  Pair with dirref_release. */
static int dirref_acquire(struct walker *w, struct dirref *d)
{
	struct dirref **chain = NULL;
	size_t n = 0;
	int ret = 0;

	pthread_mutex_lock(&w->fd_lock);
	if (d->fd >= 0)
		goto got;
	for (struct dirref *p = d; p && p->fd < 0; p = p->parent)
		n++;
	chain = malloc(n * sizeof(*chain));
	if (!chain) {
		ret = uevm_err(ENOMEM, "out of memory");
		goto out;
	}
	n = 0;
	for (struct dirref *p = d; p && p->fd < 0; p = p->parent)
		chain[n++] = p;
	/* Top down; each parent is marked in use while its child opens. */
	if (chain[n - 1]->parent)
		chain[n - 1]->parent->users++;
	while (n--) {
		struct dirref *p = chain[n];

		if (p->err) {
			ret = uevm_err(p->err, "%s", p->err == ESTALE ?
				       "its directory was moved or replaced during the walk" :
				       strerror(p->err));
		} else {
			ret = dir_open_locked(w, p);
			if (ret && !transient(-ret))
				p->err = -ret;
		}
		if (p->parent)
			p->parent->users--;
		if (ret)
			goto out;
		p->users++;
		/* A directory opened only to reach the next one is not kept. */
		if (p->parent && !p->parent->items && !p->parent->users)
			dir_close_locked(w, p->parent);
		shrink_locked(w, w->budget);
	}
	d->users--;
got:
	d->users++;
	lru_remove(w, d);
	lru_append(w, d);
	ret = d->fd;
out:
	pthread_mutex_unlock(&w->fd_lock);
	free(chain);
	return ret;
}

static void dirref_release(struct walker *w, struct dirref *d)
{
	pthread_mutex_lock(&w->fd_lock);
	d->users--;
	pthread_mutex_unlock(&w->fd_lock);
}

static struct item *item_new(struct dirref *parent, const char *name,
			     unsigned char dtype, dev_t root_dev)
{
	size_t nl = strlen(name);
	struct item *it = malloc(sizeof(*it) + nl + 1);

	if (!it)
		return NULL;
	memcpy(it->buf, name, nl + 1);
	it->name = it->buf;
	it->path = NULL;
	it->parent = parent;	/* counted by the caller */
	it->root_dev = root_dev;
	it->dtype = dtype;
	it->next = NULL;
	return it;
}

/* The display path of IT: its root's path, then the names down to it.
 * Names and parents of a dirref never change, and IT's reference keeps
 * the chain alive: no lock needed. */
static char *item_path(const struct item *it)
{
	const struct dirref *d, **chain;
	size_t n = 0, len, off;
	char *path;

	if (it->path)
		return strdup(it->path);
	len = strlen(it->name) + 1;
	for (d = it->parent; !d->display; d = d->parent) {
		len += strlen(d->name) + 1;
		n++;
	}
	len += strlen(d->display) + 1;
	chain = malloc((n + 1) * sizeof(*chain));
	path = malloc(len);
	if (!chain || !path) {
		free(chain);
		free(path);
		return NULL;
	}
	off = strlen(d->display);
	memcpy(path, d->display, off);
	/* chain[] from the top down; the last entry stands for IT itself. */
	chain[n] = NULL;
	for (d = it->parent; !d->display; d = d->parent)
		chain[--n] = d;
	for (const struct dirref **c = chain; ; c++) {
		const char *name = *c ? (*c)->name : it->name;
		size_t nl = strlen(name);

		if (off && path[off - 1] != '/')
			path[off++] = '/';
		memcpy(path + off, name, nl);
		off += nl;
		if (!*c)
			break;
	}
	path[off] = '\0';
	free(chain);
	return path;
}

static void item_free(struct walker *w, struct item *it)
{
	struct dirref *d = it->parent;

	pthread_mutex_lock(&w->fd_lock);
	/* The last queued entry done: nobody needs the fd any more. */
	if (--d->items == 0)
		dir_close_locked(w, d);
	dirref_put_locked(w, d);
	pthread_mutex_unlock(&w->fd_lock);
	free(it->path);
	free(it);
}

static void push_list(struct walker *w, struct item *head, struct item *tail,
		      size_t n)
{
	pthread_mutex_lock(&w->lock);
	tail->next = w->stack;
	w->stack = head;
	w->pending += n;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static int report(struct walker *w, const struct uevm_file *f,
		  const char *path, int err)
{
	int r = w->fn(f, path, err, w->arg);

	if (r) {
		pthread_mutex_lock(&w->lock);
		if (!w->err)
			w->err = r;
		pthread_mutex_unlock(&w->lock);
	}
	return r;
}

static void free_list(struct item *head)
{
	while (head) {
		struct item *next = head->next;

		free(head);
		head = next;
	}
}

/*
 * A directory's entries straight from getdents64 into a buffer of our own:
 * fdopendir would add an fstat and two fcntls per directory (the tree of
 * row 1 has one directory for every twelve files).
 */
struct dent_reader {
	int fd;
	size_t pos, len;
	char buf[32768] __attribute__((aligned(8)));	/* dirent64 alignment */
};

/* The next entry, or NULL at the end or on an error (errno then set). */
static struct dirent64 *dent_next(struct dent_reader *r)
{
	struct dirent64 *de;

	if (r->pos >= r->len) {
		ssize_t n = getdents64(r->fd, r->buf, sizeof(r->buf));

		if (n <= 0)
			return NULL;
		r->len = (size_t)n;
		r->pos = 0;
	}
	de = (struct dirent64 *)(r->buf + r->pos);
	r->pos += de->d_reclen;
	return de;
}

/* Queue the entries of directory F (whose fd the new dirref takes over). */
static void expand_dir(struct walker *w, struct uevm_file *f,
		       const struct item *it, const char *path)
{
	struct item *head = NULL, *tail = NULL;
	struct dirref *d;
	struct dent_reader *r;
	struct dirent64 *de;
	size_t n = 0;
	bool nodev;
	int dfd;

	/* Its own fd: d->fd may be parked (closed) by another thread while
	 * this one reads. */
	dfd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0 && relieve_fd_pressure(w, errno))
		dfd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	r = dfd >= 0 ? malloc(sizeof(*r)) : NULL;
	if (!r) {
		int e = dfd >= 0 ? ENOMEM : errno;

		if (dfd >= 0)
			close(dfd);
		uevm_err(e, "cannot list directory: %s", strerror(e));
		report(w, NULL, path, -e);
		return;
	}
	/* On a nodev mount the kernel refuses to open any device node (may_open
	 * fails EACCES before the driver is reached), so an entry can be opened
	 * for reading at once, whoever can write the directory: see open_item.
	 * Asked per directory, not per filesystem: bind mounts of one
	 * filesystem can differ in nodev. */
	nodev = fd_on_nodev_mount(f->fd);
	pthread_mutex_lock(&w->fd_lock);
	/* A PATH's directory is reopened by resolving the PATH again, as it
	 * was (it may have been reached through a symlink PATH). */
	d = it->path ? dirref_new(NULL, it->path) : dirref_new(it->parent, it->name);
	if (d && it->path) {
		d->follow = it->follow;
		if (!(d->display = strdup(it->path))) {
			dirref_put_locked(w, d);
			d = NULL;
		}
	}
	if (d) {
		d->fd = f->fd;	/* now owned by d */
		f->fd = -1;
		d->dev = f->st.st_dev;
		d->ino = f->st.st_ino;
		d->known = true;
		d->nodev = nodev;
		w->nopen++;
		lru_append(w, d);
		shrink_locked(w, w->budget);
	}
	pthread_mutex_unlock(&w->fd_lock);
	r->fd = dfd;
	r->pos = r->len = 0;
	if (!d) {
		close(dfd);
		free(r);
		uevm_err(ENOMEM, "out of memory");
		report(w, NULL, path, -ENOMEM);
		return;
	}
	for (;;) {
		struct item *c;

		errno = 0;
		de = dent_next(r);
		if (!de) {
			if (errno) {
				int e = errno;

				uevm_err(e, "cannot list directory: %s", strerror(e));
				report(w, NULL, path, -e);
			}
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		c = item_new(d, de->d_name, de->d_type, it->root_dev);
		if (!c) {
			uevm_err(ENOMEM, "out of memory");
			report(w, NULL, path, -ENOMEM);
			break;
		}
		if (!head)
			head = tail = c;
		else {
			tail->next = c;
			tail = c;
		}
		n++;
	}
	close(dfd);
	free(r);
	if (n > UINT_MAX / 2)	/* more entries than a counter holds */
		n = 0;
	pthread_mutex_lock(&w->fd_lock);
	d->refs += (unsigned int)n;
	d->items += (unsigned int)n;
	dirref_put_locked(w, d);	/* the creator's reference */
	pthread_mutex_unlock(&w->fd_lock);
	if (n)
		push_list(w, head, tail, n);
	else if (head) {
		free_list(head);
		uevm_err(EOVERFLOW, "too many entries");
		report(w, NULL, path, -EOVERFLOW);
	}
}

/* An object the options leave alone: a glob with a '/' against its whole
 * path, one without against its name. */
static bool excluded(const struct walker *w, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base && base[1] ? base + 1 : path;
	for (size_t i = 0; i < w->opts->nexclude; i++) {
		const char *g = w->opts->exclude[i];

		if (strchr(g, '/') ? !fnmatch(g, path, FNM_PATHNAME)
				   : !fnmatch(g, base, 0))
			return true;
	}
	return false;
}

/* A PATH in its directory DIRFD: a symlink is followed if asked, beneath
 * the root if there is one. */
static int open_root_object(struct walker *w, const struct item *it,
			    int dirfd, struct uevm_file *f, const char *path)
{
	int fd;
	struct stat st;

	/* PATH/.. beneath a root: openat() from the parent would climb out
	 * of the root when the parent is the root itself; RESOLVE_IN_ROOT
	 * keeps ".." of the root at the root, as chroot does. */
	if (w->rootfd >= 0 && !strcmp(it->name, "..")) {
		fd = root_open(w, it->path, O_PATH, false);
		if (fd < 0) {
			memset(f, 0, sizeof(*f));
			f->fd = -1;
			return fd;
		}
		return file_open_fd_via(f, fd, -1, NULL, path, w->procfd);
	}
	fd = openat(dirfd, it->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !it->follow || fstat(fd, &st) < 0 || !S_ISLNK(st.st_mode)) {
		if (fd < 0) {
			memset(f, 0, sizeof(*f));
			f->fd = -1;
			return uevm_err(errno, "%s", strerror(errno));
		}
		return file_open_fd_via(f, fd, dirfd, it->name, path, w->procfd);
	}
	close(fd);
	if (w->rootfd >= 0)
		fd = root_open(w, it->path, O_PATH, true);
	else if ((fd = openat(dirfd, it->name, O_PATH | O_CLOEXEC)) < 0)
		fd = uevm_err(errno, "following the symbolic link: %s",
			      strerror(errno));
	if (fd < 0) {
		memset(f, 0, sizeof(*f));
		f->fd = -1;
		return fd;
	}
	return file_open_fd_via(f, fd, -1, NULL, path, w->procfd);
}

/*
 * An entry is opened without following a symlink, and an object that is
 * not a regular file or a directory is never opened for I/O: opening a
 * device node can act (a tape rewinds, a watchdog starts).  Hence the
 * O_PATH open, then the reopen through /proc of what it found.
 *
 * On a nodev mount an entry readdir listed as a regular file is opened
 * for reading at once (two system calls less per file).  The listing is
 * older than the open, and anyone who can write the directory (a
 * container's root in its rootfs, another client of an NFS export) may
 * have swapped the name for another object meanwhile; but there no device
 * node can be opened, a FIFO opens at once (O_NONBLOCK) and a socket fails
 * ENXIO.  Anything not a regular file then takes the O_PATH way, as does
 * every entry elsewhere.
 */
static int open_item(struct walker *w, const struct item *it, int dirfd,
		     struct uevm_file *f, const char *path)
{
	if (it->path)
		return open_root_object(w, it, dirfd, f, path);
	if (it->dtype == DT_REG && it->parent->nodev &&
	    file_open_listed_regular(f, dirfd, it->name, path) == 0)
		return 0;
	return file_openat_via(f, dirfd, it->name, path, w->procfd);
}

static void process(struct walker *w, struct item *it)
{
	struct uevm_file f;
	int dirfd, ret;
	char *path;

	uevm_clear_last_error();
	path = item_path(it);
	if (!path) {
		uevm_err(ENOMEM, "out of memory");
		report(w, NULL, it->name, -ENOMEM);
		return;
	}
	/* Never a PATH given: an excluded root would make a run that
	 * checked nothing look like a clean one. */
	if (w->opts->nexclude && !it->path && excluded(w, path)) {
		free(path);
		return;
	}
	dirfd = dirref_acquire(w, it->parent);
	if (dirfd < 0) {
		report(w, NULL, path, dirfd);
		free(path);
		return;
	}
	ret = open_item(w, it, dirfd, &f, path);
	if ((ret == -EMFILE || ret == -ENFILE) && relieve_fd_pressure(w, -ret)) {
		uevm_clear_last_error();
		ret = open_item(w, it, dirfd, &f, path);
	}
	if (ret) {
		report(w, NULL, path, ret);
		goto release;
	}
	/* Through overlayfs a non-directory reports the st_dev of the layer
	 * it is on, which another directory of the run may be on too: only
	 * objects on their parent directory's st_dev share its filesystem's
	 * cached facts (UUID, f_type); a PATH's parent is the directory it
	 * was found in. */
	f.fs_cached = S_ISDIR(f.st.st_mode) ||
		      (it->parent->known &&
		       f.st.st_dev == it->parent->dev);
	if (it->root_dev == (dev_t)-1)
		it->root_dev = f.st.st_dev;
	else if (w->opts->one_fs && f.st.st_dev != it->root_dev)
		goto out;	/* -x: another filesystem */
	/* A directory PATH alone would pass for its whole tree. */
	if (it->path && S_ISDIR(f.st.st_mode) && !w->opts->recursive &&
	    w->opts->refuse_dir_roots) {
		report(w, NULL, path, uevm_err(EISDIR, "a directory: give -r for what is in it, or -d (--directory) for the directory object itself"));
		goto out;
	}
	if (report(w, &f, path, 0))
		goto out;
	if (S_ISDIR(f.st.st_mode) && w->opts->recursive)
		expand_dir(w, &f, it, path);
out:
	uevm_file_close(&f);
release:
	dirref_release(w, it->parent);
	free(path);
}

static void *worker(void *arg)
{
	struct walker *w = arg;

	for (;;) {
		struct item *it;

		pthread_mutex_lock(&w->lock);
		while (!w->stack && w->pending)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->stack) {
			pthread_mutex_unlock(&w->lock);
			return NULL;
		}
		it = w->stack;
		w->stack = it->next;
		pthread_mutex_unlock(&w->lock);

		if (!w->err)
			process(w, it);
		item_free(w, it);

		pthread_mutex_lock(&w->lock);
		if (--w->pending == 0)
			pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
	}
}

/* Lift the soft fd limit to the hard one, and keep about half of it for
 * open directories (the rest: files being hashed, the caller's own). */
static size_t dir_budget(int jobs)
{
	size_t reserve = 16 + 4 * (size_t)jobs, budget;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 16;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 2 * WALK_MAX_OPEN_DIRS + reserve)
		return WALK_MAX_OPEN_DIRS;
	budget = rl.rlim_cur > reserve + 8 ? (rl.rlim_cur - reserve) / 2 : 4;
	return budget < 4 ? 4 : budget;
}

/* A root is opened relative to its parent directory (opened when the
 * root comes up), so that a non-openable root (a symlink given by name)
 * still has a dirfd. */
static struct item *root_item(struct walker *w, const char *path)
{
	struct item *it = calloc(1, sizeof(*it));
	struct dirref *d = NULL;
	char *slash, *dir;
	size_t len;

	if (w->opts->root && w->rootfd < 0) {
		free(it);
		report(w, NULL, path, uevm_err(w->root_err, "cannot open the root directory %s: %s",
					     w->opts->root, strerror(w->root_err)));
		return NULL;
	}
	if (w->opts->root && path[0] != '/') {
		free(it);
		report(w, NULL, path, uevm_err(EINVAL, "beneath a root directory, give PATHs as seen from inside it: absolute (/usr/bin)"));
		return NULL;
	}
	if (!it || !(it->path = strdup(path))) {
		free(it);
		uevm_err(ENOMEM, "out of memory");
		report(w, NULL, path, -ENOMEM);
		return NULL;
	}
	len = strlen(it->path);
	/* PATH/ names what a symlink PATH leads to, even with
	 * no_dereference. */
	it->follow = !w->opts->no_dereference ||
		     (len > 1 && it->path[len - 1] == '/');
	while (len > 1 && it->path[len - 1] == '/')
		it->path[--len] = '\0';
	slash = strrchr(it->path, '/');
	if (!slash) {
		dir = strdup(".");
		it->name = it->path;
	} else {
		dir = slash == it->path ? strdup("/")
					: strndup(it->path, (size_t)(slash - it->path));
		it->name = slash[1] ? slash + 1 : ".";
	}
	if (dir)
		d = dirref_new(NULL, dir);
	free(dir);
	if (!d) {
		uevm_err(ENOMEM, "out of memory");
		report(w, NULL, path, -ENOMEM);
		free(it->path);
		free(it);
		return NULL;
	}
	d->items = 1;
	/* The leading components: beneath a root every link in them is
	 * resolved inside it; otherwise none is taken (root_open). */
	d->follow = w->rootfd >= 0 || w->opts->allow_leading_links;
	it->parent = d;
	it->root_dev = (dev_t)-1;
	return it;
}

UEVM_EXPORT void uevm_walk_opts_init_size(struct uevm_walk_opts *opts,
					  size_t size)
{
	struct uevm_walk_opts def;

	memset(&def, 0, sizeof(def));
	uevm_struct_init(opts, size, &def, sizeof(def));
}

UEVM_EXPORT int uevm_walk(const char *const *paths, size_t npaths,
			  const struct uevm_walk_opts *in, uevm_walk_fn fn,
			  void *arg)
{
	struct uevm_walk_opts mine;
	const struct uevm_walk_opts *opts = &mine;
	struct walker w = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.fd_lock = PTHREAD_MUTEX_INITIALIZER,
		.opts = opts, .fn = fn, .arg = arg, .rootfd = -1, .procfd = -1,
	};
	pthread_t *tids;
	int started = 0;
	int jobs;

	memset(&mine, 0, sizeof(mine));
	if (uevm_struct_in(in, sizeof(mine), &mine, sizeof(mine),
			   "struct uevm_walk_opts"))
		return -EINVAL;
	jobs = opts->jobs > 0 ? opts->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);

	if (jobs < 1)
		jobs = 1;
	w.budget = dir_budget(jobs);
	if (opts->root) {
		w.rootfd = open(opts->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		w.root_err = errno;
	}
	/* Kept for this run only (the walk's threads share one fd table):
	 * each file's reopen then looks up one name in it, not four.  Without
	 * /proc, -1: the reopen takes its usual fallback. */
	w.procfd = open(PROC_FDS, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = npaths; i-- > 0;) {
		struct item *it = root_item(&w, paths[i]);

		if (it)
			push_list(&w, it, it, 1);
	}
	tids = calloc((size_t)jobs, sizeof(*tids));
	for (int i = 1; tids && i < jobs; i++)
		if (pthread_create(&tids[started], NULL, worker, &w) == 0)
			started++;
	worker(&w);
	for (int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	free(tids);
	if (w.rootfd >= 0)
		close(w.rootfd);
	if (w.procfd >= 0)
		close(w.procfd);
	return w.err;
}
