// SPDX-License-Identifier: GPL-2.0-or-later
/* Privileges a command needs, checked once before it walks a tree. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include "prog.h"

#define CAP_SYS_ADMIN_BIT 21

/* The effective capability set, from /proc/self/status (no libcap). */
static int cap_effective(unsigned long long *caps)
{
	FILE *fp = fopen("/proc/self/status", "re");
	char line[256];
	int ret = -1;

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, "CapEff:", 7)) {
			*caps = strtoull(line + 7, NULL, 16);
			ret = 0;
			break;
		}
	fclose(fp);
	return ret;
}

int need_cap_sys_admin(const char *name, const char *what)
{
	unsigned long long caps;

	/* Unknown (no /proc): let the kernel answer per object. */
	if (cap_effective(&caps) || (caps >> CAP_SYS_ADMIN_BIT) & 1)
		return 0;
	fprintf(stderr, "%s %s: %s security.* attributes needs CAP_SYS_ADMIN, "
		"which this process does not have: run it as root\n", prog_name,
		name, what);
	return -1;
}

static bool mount_root(const char *path)
{
	struct statx stx;

	return statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &stx) == 0 &&
	       (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/*
 * The walk opens a file its directory lists as regular with one open(2)
 * where the directory's mount is nodev, and elsewhere with an O_PATH open,
 * a stat and a reopen through /proc (lib/fs/walk.c, open_item): 3.5 us
 * more a file here, a sixth of the CPU time a 4 KiB file's label takes.
 * The listing may lie (an offline attacker writes a directory entry's
 * type byte; a local user renames another object in after readdir), and
 * an open of a device node can act (a watchdog starts); on a nodev mount
 * the kernel refuses that open before any driver sees it.
 *
 * So a recursive walk by a process that may (CAP_SYS_ADMIN) runs in a
 * thread that first moves into a mount namespace of its own in which
 * every mount is nodev: the same files under the same names, and no
 * device reachable through them.  Nothing is mounted or unmounted; other
 * processes, and this one's other threads (which open what comes after
 * the walk: an output file may be a device), keep their view.  /dev keeps
 * its devices (a TPM, a token reader); the walk takes the O_PATH way
 * there.  Where any step fails, the walk runs as before.  (unshare of a
 * mount namespace, unlike a user namespace's, is a thread's own: it
 * takes a copy of the thread's root and working directory too.)
 */
static bool nodev_namespace_fits(void)
{
	struct statvfs vfs;

	/* "/" and /dev must be mounts (roots of one), and /dev one whose
	 * devices we can give back. */
	return mount_root("/") && mount_root("/dev") && !statvfs("/dev", &vfs) &&
	       !(vfs.f_flag & ST_NODEV);
}

static void private_nodev_mounts(void)
{
	struct mount_attr nodev = { .attr_set = MOUNT_ATTR_NODEV };
	struct mount_attr dev = { .attr_clr = MOUNT_ATTR_NODEV };

	if (unshare(CLONE_NEWNS))
		return;		/* no CAP_SYS_ADMIN, or a seccomp filter */
	/* Our copies receive the host's mount events but send none back. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL))
		return;
	if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &nodev, sizeof(nodev)))
		return;
	mount_setattr(AT_FDCWD, "/dev", 0, &dev, sizeof(dev));
}

struct walk_call {
	const char *const *paths;
	size_t npaths;
	const struct uevm_walk_opts *opts;
	uevm_walk_fn fn;
	void *arg;
	int ret;
};

static void *walk_thread(void *p)
{
	struct walk_call *c = p;

	private_nodev_mounts();
	/* The walk's own threads start from this one: same namespace. */
	c->ret = uevm_walk(c->paths, c->npaths, c->opts, c->fn, c->arg);
	return NULL;
}

int walk_tree(const char *const *paths, size_t npaths,
	      const struct uevm_walk_opts *opts, uevm_walk_fn fn, void *arg)
{
	struct walk_call c = { paths, npaths, opts, fn, arg, 0 };
	pthread_t t;

	if (!opts->recursive || !nodev_namespace_fits() ||
	    pthread_create(&t, NULL, walk_thread, &c))
		return uevm_walk(paths, npaths, opts, fn, arg);
	pthread_join(t, NULL);
	return c.ret;
}
