// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The inode table: one O_PATH fd per SOURCE object the kernel knows,
 * keyed by (device, inode number).  Every operation reaches SOURCE through
 * these fds (*at() calls, /proc/self/fd), never through a SOURCE path that
 * could be swapped meanwhile.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "uevmfs.h"

static size_t bucket_of(dev_t dev, ino_t ino, size_t n)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev;

	h ^= h >> 29;
	return (size_t)(h % n);
}

static int devfd_add(dev_t dev, int dirfd_path)
{
	char proc[40];
	int fd;

	pthread_mutex_lock(&ufs.devfd_lock);
	for (int i = 0; i < ufs.ndevfds; i++)
		if (ufs.devfds[i].dev == dev) {
			pthread_mutex_unlock(&ufs.devfd_lock);
			return 0;
		}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd_path);
	fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && ufs.ndevfds < (int)(sizeof(ufs.devfds) / sizeof(ufs.devfds[0]))) {
		ufs.devfds[ufs.ndevfds].dev = dev;
		ufs.devfds[ufs.ndevfds].fd = fd;
		ufs.ndevfds++;
	} else if (fd >= 0) {
		close(fd);
	}
	pthread_mutex_unlock(&ufs.devfd_lock);
	return 0;
}

int ufs_devfd(dev_t dev)
{
	int fd = -1;

	pthread_mutex_lock(&ufs.devfd_lock);
	for (int i = 0; i < ufs.ndevfds; i++)
		if (ufs.devfds[i].dev == dev)
			fd = ufs.devfds[i].fd;
	pthread_mutex_unlock(&ufs.devfd_lock);
	return fd;
}

/* mountinfo's octal escapes (\040 for a space...) undone in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static uint64_t mount_id_at(int dirfd, const char *path)
{
	struct statx stx;

	if (statx(dirfd, path, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) ||
	    !(stx.stx_mask & STATX_MNT_ID) || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
	    !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return 0;
	return stx.stx_mnt_id;
}

/* The copy's mount IDs (name_copy_mounts; read-only once mounted). */
static uint64_t *copy_ids;
static size_t ncopy_ids;

static int copy_id_add(uint64_t id)
{
	uint64_t *n = realloc(copy_ids, (ncopy_ids + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	copy_ids = n;
	copy_ids[ncopy_ids++] = id;
	return 0;
}

/* Is FD on the private copy of SOURCE's mounts? */
bool ufs_is_copy_fd(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) || !(stx.stx_mask & STATX_MNT_ID))
		return false;
	for (size_t i = 0; i < ncopy_ids; i++)
		if (copy_ids[i] == stx.stx_mnt_id)
			return true;
	return false;
}

/*
 * fsname= rules find a file's type by its mount's ID in mountinfo, and
 * the copy's mounts are in none: each is named here after the mount it
 * copies (SOURCE's own, then those below it, as mountinfo lists them
 * now), found in the copy by the same path: only the top one of mounts
 * stacked on one path, which is the one the copy holds there.  Without
 * this an fsname=btrfs rule matched nothing on the copy (a btrfs file's
 * st_dev is not its mount's, the fallback), and an appraise rule let
 * unlabelled programs run (an attack review); a stacked mount took the
 * name of the one beneath it (another).
 */
static int name_copy_mounts(int copy, const char *source)
{
	size_t slen = strcmp(source, "/") ? strlen(source) : 0;
	struct statx sx;
	uint64_t own = 0;
	char *line = NULL;
	size_t cap = 0;
	FILE *fp;

	if (!statx(AT_FDCWD, source, 0, STATX_MNT_ID, &sx) && (sx.stx_mask & STATX_MNT_ID))
		own = sx.stx_mnt_id;
	fp = fopen("/proc/self/mountinfo", "re");
	if (!fp)
		return -errno;
	while (getline(&line, &cap, fp) > 0) {
		char mp[4096], type[64], *sep = strstr(line, " - ");
		unsigned long long id;
		uint64_t cid = 0;

		if (!sep || sscanf(line, "%llu %*d %*u:%*u %*s %4095s", &id, mp) != 2 ||
		    sscanf(sep + 3, "%63s", type) != 1)
			continue;
		unescape(mp);
		if (id == own) {
			cid = mount_id_at(copy, "");
		} else if (!strncmp(mp, source, slen) && mp[slen] == '/' && mp[slen + 1] &&
			   mount_id_at(AT_FDCWD, mp) == id) {
			struct open_how how = {
				.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
			};
			int fd = (int)syscall(SYS_openat2, copy, mp + slen + 1, &how, sizeof(how));

			if (fd >= 0) {
				cid = mount_id_at(fd, "");
				close(fd);
			}
		}
		if (cid && (integrity_mount_fsname(cid, type) || copy_id_add(cid))) {
			free(line);
			fclose(fp);
			return -ENOMEM;
		}
	}
	free(line);
	fclose(fp);
	return 0;
}

/*
 * SOURCE, held through a private copy of its mount (and of the mounts
 * below it): in no namespace, noexec, nosuid, nodev.  Every descriptor
 * uevmfs holds is a path for root as /proc/PID/fd/N, beneath the mount
 * over SOURCE, and a symlink planted in SOURCE can lead there through
 * stock links (/dev/fd) that no look at its target's text can follow (an
 * attack review ran an unlabelled program that way).  Through the copy
 * nothing runs, as a program or as a library mapped executable; it can
 * still be read (uevmfs(8)).  Without the copy (no CAP_SYS_ADMIN, Linux
 * before 5.12) SOURCE itself, as before.  Names read from the copy's
 * descriptors start at SOURCE's root (hooks.c, display_name).
 */
static int source_open(const char *source, bool *copy)
{
	/* Private: the host's mount events (an unmount below SOURCE) do not
	 * reach it either. */
	struct mount_attr a = {
		.attr_set = MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
		.propagation = MS_PRIVATE,
	};
	int fd = open_tree(AT_FDCWD, source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
			   AT_RECURSIVE);

	*copy = false;
	if (fd >= 0) {
		if (!mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a))) {
			/* Unnamed, fsname= rules would match nothing there. */
			int err = name_copy_mounts(fd, source);

			if (err) {
				close(fd);
				errno = -err;
				return -1;
			}
			*copy = true;
			return fd;
		}
		close(fd);
	}
	return open(source, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int ufs_table_init(struct ufs *fs, const char *source)
{
	struct stat st;

	pthread_mutex_init(&fs->table_lock, NULL);
	pthread_mutex_init(&fs->devfd_lock, NULL);
	fs->nbuckets = 4096;
	fs->buckets = calloc(fs->nbuckets, sizeof(*fs->buckets));
	if (!fs->buckets)
		return -ENOMEM;
	fs->root.fd = source_open(source, &fs->source_copy);
	if (fs->root.fd < 0)
		return -errno;
	if (fstat(fs->root.fd, &st) < 0)
		return -errno;
	fs->root.dev = st.st_dev;
	fs->root.ino = st.st_ino;
	fs->root.type = S_IFDIR;
	fs->root.nlookup = 2;	/* never forgotten */
	fs->root.rfd = -1;
	pthread_mutex_init(&fs->root.lock, NULL);
	pthread_mutex_init(&fs->root.own_lock, NULL);
	devfd_add(st.st_dev, fs->root.fd);
	return ufs_devfd(st.st_dev) >= 0 ? 0 : -EACCES;
}

static void inode_free(struct ufs_inode *in)
{
	close(in->fd);
	if (in->rfd >= 0)
		close(in->rfd);
	ufs_stream_drop(in);
	pthread_mutex_destroy(&in->lock);
	pthread_mutex_destroy(&in->own_lock);
	free(in);
}

void ufs_table_free(struct ufs *fs)
{
	for (size_t b = 0; fs->buckets && b < fs->nbuckets; b++)
		while (fs->buckets[b]) {
			struct ufs_inode *in = fs->buckets[b];

			fs->buckets[b] = in->next;
			inode_free(in);
		}
	free(fs->buckets);
	fs->buckets = NULL;
	if (fs->root.fd >= 0)
		close(fs->root.fd);
	for (int i = 0; i < fs->ndevfds; i++)
		close(fs->devfds[i].fd);
	fs->ndevfds = 0;
}

struct ufs_inode *ufs_inode(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &ufs.root : (struct ufs_inode *)(uintptr_t)ino;
}

static void grow_table(void)
{
	size_t n = ufs.nbuckets * 2;
	struct ufs_inode **nb = calloc(n, sizeof(*nb));

	if (!nb)
		return;	/* longer chains, still correct */
	for (size_t b = 0; b < ufs.nbuckets; b++)
		while (ufs.buckets[b]) {
			struct ufs_inode *in = ufs.buckets[b];
			size_t nbk = bucket_of(in->dev, in->ino, n);

			ufs.buckets[b] = in->next;
			in->next = nb[nbk];
			nb[nbk] = in;
		}
	free(ufs.buckets);
	ufs.buckets = nb;
	ufs.nbuckets = n;
}

/* Find or add the object of ST, whose O_PATH fd is FD (taken: closed when
 * the object is already known).  Raises its lookup count. */
static struct ufs_inode *insert(int fd, const struct stat *st)
{
	struct ufs_inode *in;
	size_t b;

	if (st->st_dev == ufs.root.dev && st->st_ino == ufs.root.ino) {
		close(fd);
		pthread_mutex_lock(&ufs.table_lock);
		ufs.root.nlookup++;
		pthread_mutex_unlock(&ufs.table_lock);
		return &ufs.root;
	}
	pthread_mutex_lock(&ufs.table_lock);
	b = bucket_of(st->st_dev, st->st_ino, ufs.nbuckets);
	for (in = ufs.buckets[b]; in; in = in->next)
		if (in->ino == st->st_ino && in->dev == st->st_dev)
			break;
	if (in) {
		in->nlookup++;
		pthread_mutex_unlock(&ufs.table_lock);
		close(fd);
		return in;
	}
	in = calloc(1, sizeof(*in));
	if (!in) {
		pthread_mutex_unlock(&ufs.table_lock);
		close(fd);
		return NULL;
	}
	in->fd = fd;
	in->dev = st->st_dev;
	in->ino = st->st_ino;
	in->type = st->st_mode & S_IFMT;
	in->nlookup = 1;
	pthread_mutex_init(&in->lock, NULL);
	pthread_mutex_init(&in->own_lock, NULL);
	in->rfd = -1;
	in->next = ufs.buckets[b];
	ufs.buckets[b] = in;
	if (++ufs.count > ufs.nbuckets)
		grow_table();
	pthread_mutex_unlock(&ufs.table_lock);
	/* A directory on a filesystem not seen yet (a submount of SOURCE). */
	if (S_ISDIR(st->st_mode) && st->st_dev != ufs.root.dev)
		devfd_add(st->st_dev, fd);
	return in;
}

static void fill_entry(struct ufs_inode *in, const struct stat *st,
		       struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = in == &ufs.root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)in;
	e->attr = *st;
	e->attr_timeout = ufs.timeout;
	e->entry_timeout = ufs.timeout;
}

int ufs_do_lookup(struct ufs_inode *parent, const char *name,
		  struct fuse_entry_param *e)
{
	struct ufs_inode *in;
	struct stat st;
	int fd;

	fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		int e2 = errno;

		close(fd);
		return -e2;
	}
	in = insert(fd, &st);
	if (!in)
		return -ENOMEM;
	fill_entry(in, &st, e);
	return 0;
}

int ufs_enter_fd(int fd, struct fuse_entry_param *e)
{
	struct ufs_inode *in;
	struct stat st;
	char proc[40];
	int pfd;

	/* Through the magic link (followed: O_NOFOLLOW would open the link
	 * itself) to the very inode FD has open. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	pfd = open(proc, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st) < 0) {
		int e2 = errno;

		close(pfd);
		return -e2;
	}
	in = insert(pfd, &st);
	if (!in)
		return -ENOMEM;
	fill_entry(in, &st, e);
	return 0;
}

struct ufs_inode *ufs_inode_find(dev_t dev, ino_t ino)
{
	struct ufs_inode *in;

	pthread_mutex_lock(&ufs.table_lock);
	for (in = ufs.buckets[bucket_of(dev, ino, ufs.nbuckets)]; in; in = in->next)
		if (in->ino == ino && in->dev == dev) {
			in->nlookup++;
			break;
		}
	pthread_mutex_unlock(&ufs.table_lock);
	return in;
}

void ufs_forget_one(struct ufs_inode *in, uint64_t n)
{
	struct ufs_inode **pp;

	pthread_mutex_lock(&ufs.table_lock);
	in->nlookup = in->nlookup > n ? in->nlookup - n : 0;
	if (in->nlookup || in == &ufs.root) {
		pthread_mutex_unlock(&ufs.table_lock);
		return;
	}
	for (pp = &ufs.buckets[bucket_of(in->dev, in->ino, ufs.nbuckets)]; *pp;
	     pp = &(*pp)->next)
		if (*pp == in) {
			*pp = in->next;
			ufs.count--;
			break;
		}
	pthread_mutex_unlock(&ufs.table_lock);
	if (ufs.fastopen)
		ufs_shared_drop(in);
	inode_free(in);
}

/* The node ids of the regular files the kernel knows.  No inode's lock is
 * taken: a read's check holds it while it hashes, for minutes on a huge
 * file, and waiting for it here, under the table's lock, stopped every
 * lookup meanwhile. */
size_t ufs_table_files(fuse_ino_t **out)
{
	fuse_ino_t *v;
	size_t n = 0;

	pthread_mutex_lock(&ufs.table_lock);
	v = malloc((ufs.count + 1) * sizeof(*v));
	/* Without memory for the list the caller, told by *OUT == NULL,
	 * retries dropping the cached pages. */
	for (size_t b = 0; v && b < ufs.nbuckets; b++)
		for (struct ufs_inode *in = ufs.buckets[b]; in; in = in->next)
			if (S_ISREG(in->type) && n < ufs.count)
				v[n++] = (fuse_ino_t)(uintptr_t)in;
	pthread_mutex_unlock(&ufs.table_lock);
	*out = v;
	return n;
}

void ufs_proc_path(const struct ufs_inode *in, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", in->fd);
}

/* IN's fd as a name for the *at() calls: relative to ufs.proc_fds (a
 * path walk the less), or /proc/self/fd/N before that is open.  Returns
 * the directory fd to go with BUF. */
int ufs_proc_at(const struct ufs_inode *in, char *buf, size_t len)
{
	if (!ufs.have_proc_fds) {
		ufs_proc_path(in, buf, len);
		return AT_FDCWD;
	}
	snprintf(buf, len, "%d", in->fd);
	return ufs.proc_fds;
}

int ufs_reopen(const struct ufs_inode *in, int flags)
{
	char proc[40];
	int dfd = ufs_proc_at(in, proc, sizeof(proc));
	int fd = openat(dfd, proc, flags | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}
