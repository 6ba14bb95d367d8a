// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Parallel tree walk.  Every object is reached with openat() relative to
 * its parent's fd, symlinks are never followed, and work is taken from a
 * LIFO stack so that the number of directories held open stays close to
 * depth x workers rather than the width of the tree.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "lib_private.h"

struct dirref {
	int fd;
	atomic_int refs;
};

struct item {
	struct item *next;
	struct dirref *parent;
	dev_t root_dev;
	char *path;		/* for display; the name is its last part */
	const char *name;
};

struct walker {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item *stack;
	size_t pending;		/* queued or being processed */
	int err;		/* first callback failure: stop */
	const struct uevm_walk_opts *opts;
	uevm_walk_fn fn;
	void *arg;
};

static struct dirref *dirref_new(int fd)
{
	struct dirref *d = malloc(sizeof(*d));

	if (!d)
		return NULL;
	d->fd = fd;
	atomic_init(&d->refs, 1);
	return d;
}

static void dirref_put(struct dirref *d)
{
	if (d && atomic_fetch_sub(&d->refs, 1) == 1) {
		close(d->fd);
		free(d);
	}
}

static struct item *item_new(struct dirref *parent, const char *dirpath,
			     const char *name, dev_t root_dev)
{
	size_t dl = strlen(dirpath), nl = strlen(name);
	struct item *it = malloc(sizeof(*it) + 0);

	if (!it)
		return NULL;
	it->path = malloc(dl + nl + 2);
	if (!it->path) {
		free(it);
		return NULL;
	}
	memcpy(it->path, dirpath, dl);
	if (dl && dirpath[dl - 1] != '/')
		it->path[dl++] = '/';
	memcpy(it->path + dl, name, nl + 1);
	it->name = it->path + dl;
	it->parent = parent;
	it->root_dev = root_dev;
	it->next = NULL;
	if (parent)
		atomic_fetch_add(&parent->refs, 1);
	return it;
}

static void item_free(struct item *it)
{
	dirref_put(it->parent);
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

/* Queue the entries of directory F (whose fd the new dirref takes over). */
static void expand_dir(struct walker *w, struct uevm_file *f,
		       const struct item *it)
{
	struct item *head = NULL, *tail = NULL;
	struct dirref *d;
	struct dirent *de;
	size_t n = 0;
	DIR *dir;
	int dfd;

	dfd = dup(f->fd);
	dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!dir) {
		int e = errno;

		if (dfd >= 0)
			close(dfd);
		uevm_err(e, "cannot list directory: %s", strerror(e));
		report(w, NULL, it->path, -e);
		return;
	}
	d = dirref_new(f->fd);
	if (!d) {
		closedir(dir);
		report(w, NULL, it->path, -ENOMEM);
		return;
	}
	f->fd = -1;	/* now owned by d */
	for (;;) {
		struct item *c;

		errno = 0;
		de = readdir(dir);
		if (!de) {
			if (errno) {
				int e = errno;

				uevm_err(e, "cannot list directory: %s", strerror(e));
				report(w, NULL, it->path, -e);
			}
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		c = item_new(d, it->path, de->d_name, it->root_dev);
		if (!c) {
			report(w, NULL, it->path, -ENOMEM);
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
	closedir(dir);
	if (head)
		push_list(w, head, tail, n);
	dirref_put(d);
}

static void process(struct walker *w, struct item *it)
{
	int dirfd = it->parent ? it->parent->fd : AT_FDCWD;
	struct uevm_file f;
	int ret;

	uevm_clear_last_error();
	ret = uevm_file_openat(&f, dirfd, it->name, it->path);
	if (ret) {
		report(w, NULL, it->path, ret);
		return;
	}
	if (it->root_dev == (dev_t)-1)
		it->root_dev = f.st.st_dev;
	else if (w->opts->one_fs && f.st.st_dev != it->root_dev)
		goto out;	/* -x: another filesystem */
	if (report(w, &f, it->path, 0))
		goto out;
	if (S_ISDIR(f.st.st_mode) && w->opts->recursive)
		expand_dir(w, &f, it);
out:
	uevm_file_close(&f);
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
		item_free(it);

		pthread_mutex_lock(&w->lock);
		if (--w->pending == 0)
			pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
	}
}

/* Deep trees hold one fd per level: lift the soft limit to the hard one. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* A root path is opened relative to its parent directory, so that a
 * non-openable root (a symlink given by name) still has a dirfd. */
static struct item *root_item(struct walker *w, const char *path)
{
	struct item *it = calloc(1, sizeof(*it));
	char *slash, *dir;
	struct dirref *d;
	size_t len;
	int fd;

	if (!it || !(it->path = strdup(path))) {
		free(it);
		report(w, NULL, path, -ENOMEM);
		return NULL;
	}
	len = strlen(it->path);
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
	fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	free(dir);
	d = fd >= 0 ? dirref_new(fd) : NULL;
	if (!d) {
		int e = fd < 0 ? errno : ENOMEM;

		if (fd >= 0)
			close(fd);
		uevm_err(e, "%s", strerror(e));
		report(w, NULL, path, -e);
		free(it->path);
		free(it);
		return NULL;
	}
	it->parent = d;
	it->root_dev = (dev_t)-1;
	return it;
}

UEVM_EXPORT int uevm_walk(const char *const *paths, size_t npaths,
			  const struct uevm_walk_opts *opts, uevm_walk_fn fn,
			  void *arg)
{
	struct walker w = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.opts = opts, .fn = fn, .arg = arg,
	};
	int jobs = opts->jobs > 0 ? opts->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t *tids;
	int started = 0;

	if (jobs < 1)
		jobs = 1;
	raise_nofile();
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
	return w.err;
}
