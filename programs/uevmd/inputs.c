// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevmd's own inputs: its configuration, its policy file and its
 * certificates.  They usually live on the very disk uevmd protects, where
 * an offline attacker could edit them ("dont_appraise ...", "mode = log",
 * their own certificate) and so switch enforcement off.  As the kernel
 * appraises a policy file it is given (POLICY_CHECK), every input that
 * lies on a watched filesystem, or carries labels wherever it lies, must
 * pass appraisal with the loaded key before uevmd starts - and it is the
 * bytes uevmd read that must pass: each input is read and appraised
 * through one descriptor, and a change in between refuses it too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "uevmd.h"

#define INPUT_MAX (16u << 20)

int input_open(struct uevmd_input *in, const char *path, const char *what)
{
	memset(in, 0, sizeof(*in));
	in->what = what;
	in->path = path;
	/* O_NONBLOCK: a FIFO planted at PATH (offline) opens at once and is
	 * refused below, instead of holding the start or a reload in open(2)
	 * with the stop signals waiting (they are taken by sigwaitinfo). */
	in->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (in->fd < 0)
		return -errno;
	if (fstat(in->fd, &in->st) < 0) {
		int e = errno;

		input_close(in);
		return -e;
	}
	if (!S_ISREG(in->st.st_mode)) {
		input_close(in);
		return -EINVAL;
	}
	fcntl(in->fd, F_SETFL, fcntl(in->fd, F_GETFL) & ~O_NONBLOCK);
	return 0;
}

int input_read(struct uevmd_input *in, char **out, size_t *len)
{
	size_t size = (size_t)in->st.st_size, done = 0;
	char *buf;

	if (in->st.st_size < 0 || size > INPUT_MAX)
		return -EFBIG;
	buf = malloc(size + 1);
	if (!buf)
		return -ENOMEM;
	while (done < size) {
		ssize_t n = pread(in->fd, buf + done, size - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EIO;
		}
		done += (size_t)n;
	}
	buf[size] = '\0';
	*out = buf;
	*len = size;
	return 0;
}

static bool on_watched_fs(dev_t dev)
{
	struct stat st;

	for (int i = 0; i < D->cfg.nfilesystems; i++)
		if (stat(D->cfg.filesystems[i], &st) == 0 && st.st_dev == dev)
			return true;
	for (int i = 0; i < D->cfg.nmounts; i++)
		if (stat(D->cfg.mounts[i], &st) == 0 && st.st_dev == dev)
			return true;
	return false;
}

static bool has_label(int fd)
{
	return fgetxattr(fd, XATTR_NAME_IMA, NULL, 0) >= 0 ||
	       fgetxattr(fd, XATTR_NAME_EVM, NULL, 0) >= 0;
}

int input_appraise(struct uevmd_input *in, const struct uevm_ctx *ctx)
{
	struct uevm_file f = { .fd = in->fd, .dirfd = -1, .io = true, .path = in->path };
	struct uevm_verdict v;
	struct stat now;
	int ret;

	if (!on_watched_fs(in->st.st_dev) && !has_label(in->fd)) {
		ulog(LOG_NOTICE, "%s %s is not on a watched filesystem and has no "
		     "labels: not appraised", in->what, in->path);
		return 0;
	}
	/* Without a key (the shipped mode = log configuration) nothing could
	 * be labelled for it, and nothing is enforced on its word. */
	if (!D->key_fpr[0] && !has_label(in->fd)) {
		ulog(LOG_WARNING, "%s %s has no labels and no key is configured: not "
		     "appraised (set 'key' before enforcing, see uevmd(8))", in->what, in->path);
		return 0;
	}
	f.st = in->st;
	ret = uevm_verify_file(ctx, &f, &v);
	if (ret || !uevm_verdict_ok(&f, &v)) {
		ulog(LOG_ERR, "%s %s: op=appraise_data cause=%s: %s; refusing to %s "
		     "(label it with the daemon's key: uevm label --hmac-key KEY %s)",
		     in->what, in->path, ret ? "unknown" : v.cause ? v.cause : "unknown",
		     ret ? uevm_last_error() : v.detail[0] ? v.detail :
		     integrity_status_name(v.status),
		     atomic_load(&D->running) ? "reload" : "start", in->path);
		return -EPERM;
	}
	/* What was appraised is what was read. */
	if (fstat(in->fd, &now) < 0 || now.st_ino != in->st.st_ino ||
	    now.st_size != in->st.st_size ||
	    now.st_mtim.tv_sec != in->st.st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != in->st.st_mtim.tv_nsec ||
	    now.st_ctim.tv_sec != in->st.st_ctim.tv_sec ||
	    now.st_ctim.tv_nsec != in->st.st_ctim.tv_nsec) {
		ulog(LOG_ERR, "%s %s changed while it was read; refusing to %s",
		     in->what, in->path, atomic_load(&D->running) ? "reload" : "start");
		return -ESTALE;
	}
	ulog(LOG_INFO, "%s %s: appraised (%s)", in->what, in->path,
	     integrity_status_name(v.status));
	return 0;
}

void input_close(struct uevmd_input *in)
{
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
}
