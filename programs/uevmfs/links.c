// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Symlinks whose target leads around the mount.  The kernel resolves a
 * link's target in the caller's view, not in SOURCE: a link planted in
 * SOURCE that names SOURCE itself (absolutely, by climbing out of the
 * mount with "..", or through a /proc magic link) would open the unchecked
 * tree directly.  READLINK refuses such targets.  Mounted over SOURCE
 * (the default), no name leads to SOURCE any more, but another process's
 * magic link still does: uevmfs's own /proc/PID/fd/N is SOURCE beneath the
 * mount (an attack review ran an unlabelled program that way), so those
 * are refused there too; the caller's own (/proc/self/fd, behind /dev/fd)
 * are not.
 *
 * The check is lexical, from the link's place under MOUNTPOINT: it cannot
 * see intermediate symlinks outside the mount (stock ones too: /dev/fd,
 * /var/run), nor a caller that reaches the mount through a bind mount or
 * another mount namespace.  Against uevmfs's own descriptors the kernel
 * holds: they are on a private noexec copy of SOURCE's mount (inode.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "uevmfs.h"

/* Remove "//", "." and ".." from the absolute PATH, in place, as a walk
 * without symlinks would ("/.." stays "/").  True if a ".." climbed out of
 * /proc/thread-self, a symlink two levels deeper than its name (PID/task/
 * TID): the kernel's walk then lands elsewhere than this one. */
static bool normalise(char *path)
{
	static const char ts[] = "/proc/thread-self";
	bool climbed = false;
	char *out = path, *in = path;

	while (*in) {
		char *end;
		size_t n;

		while (*in == '/')
			in++;
		if (!*in)
			break;
		end = strchrnul(in, '/');
		n = (size_t)(end - in);
		if (n == 2 && in[0] == '.' && in[1] == '.') {
			if ((size_t)(out - path) == sizeof(ts) - 1 &&
			    !memcmp(path, ts, sizeof(ts) - 1))
				climbed = true;
			while (out > path && *--out != '/')
				;
		} else if (!(n == 1 && in[0] == '.')) {
			*out++ = '/';
			memmove(out, in, n);
			out += n;
		}
		in = end;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
	return climbed;
}

static bool path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1)
		return true;	/* "/" */
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Does the normalised PATH go through a /proc magic link that leads
 * anywhere: /proc/{self,thread-self,PID}[/task/TID]/{root,cwd,fd,map_files}?
 * With OTHERS, only another process's (a PID): the caller's own lead
 * through the mount over SOURCE (short of what uevmfs names at start). */
static bool proc_jump(const char *path, bool others)
{
	static const char *const jumps[] = { "root", "cwd", "fd", "map_files" };
	const char *p;
	size_t n;

	if (strncmp(path, "/proc/", 6))
		return false;
	p = path + 6;
	n = strcspn(p, "/");
	if (others ? !all_digits(p, n) :
	    !(n == 4 && !strncmp(p, "self", 4)) &&
	    !(n == 11 && !strncmp(p, "thread-self", 11)) && !all_digits(p, n))
		return false;
	p += n;
	if (!strncmp(p, "/task/", 6)) {
		p += 6;
		n = strcspn(p, "/");
		if (!all_digits(p, n))
			return false;
		p += n;
	}
	if (*p++ != '/')
		return false;
	n = strcspn(p, "/");
	for (size_t i = 0; i < sizeof(jumps) / sizeof(jumps[0]); i++)
		if (strlen(jumps[i]) == n && !strncmp(p, jumps[i], n))
			return true;
	return false;
}

/* Where TARGET of the link named NAME (under MOUNTPOINT) leads, lexically:
 * the cause of a refusal, or NULL.  Over SOURCE, SOURCE's names are the
 * mount's. */
static const char *target_cause(const char *name, const char *target)
{
	char *path, *slash;
	const char *cause = NULL;
	size_t nlen = strlen(name), tlen = strlen(target);

	if (!tlen)
		return NULL;
	path = malloc(nlen + tlen + 3);
	if (!path)
		return "out-of-memory";
	if (target[0] == '/') {
		memcpy(path, target, tlen + 1);
	} else {
		/* Relative: from the link's directory under MOUNTPOINT. */
		memcpy(path, name, nlen + 1);
		slash = strrchr(path, '/');
		if (slash)
			slash[1] = '\0';
		strcat(path, target);
	}
	if (normalise(path) || proc_jump(path, ufs.over_source))
		cause = "target-through-proc";
	else if (!ufs.over_source && path_under(path, ufs.source))
		cause = "target-in-source";
	free(path);
	return cause;
}

int ufs_link_check(fuse_req_t req, struct ufs_inode *in, const char *target)
{
	enum integrity_mode mode = integrity_sys_mode(ufs.sys);
	struct integrity_cred cred;
	struct ufs_hook h;
	const char *cause;
	int err;

	/* Over SOURCE the text is looked at only for /proc magic links,
	 * which a target can reach lexically only by naming /proc (uevmfs
	 * is never under it): the rest is answered without a look at the
	 * caller.  (A chain of stock links hides them; there the copy of
	 * SOURCE's mounts holds, inode.c.) */
	if (mode == INTEGRITY_MODE_OFF || (ufs.over_source && !strstr(target, "proc")))
		return 0;
	ufs_req_cred(req, &cred);
	err = ufs_hook_begin(in, -1, &cred, &h);
	if (err)
		return err;
	cause = strncmp(h.name, ufs.mountpoint, strlen(ufs.mountpoint)) &&
			target[0] != '/' ? "link-outside-mount" :
			target_cause(h.name, target);
	if (cause)
		integrity_audit_msg(ufs.sys, AUDIT_INTEGRITY_DATA, &h.file, h.ev.filename,
				    &cred, "follow_link", cause, -EACCES, false);
	ufs_hook_end(&h);
	return cause && mode == INTEGRITY_MODE_ENFORCE ? -EACCES : 0;
}
