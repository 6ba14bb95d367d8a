// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The control tree's nodes and their semantics, as the kernel's
 * evm_secfs.c and ima_fs.c define them: contents, modes, and who may
 * write what, when.  Independent of how the tree is served.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "securityfs_private.h"
#include "ima.h"
#include "ima_policy.h"

#define CAP_DAC_OVERRIDE_BIT	1
#define CAP_DAC_READ_SEARCH_BIT	2
#define CAP_SYS_ADMIN_BIT	21
/* A policy is text of a few kilobytes; bound what one writer may send. */
#define POLICY_MAX_SIZE		(4u << 20)

enum node_kind {
	K_DIR, K_LINK, K_EVM, K_EVM_XATTRS, K_POLICY, K_ASCII, K_BINARY,
	K_COUNT, K_VIOLATIONS,
};

struct node {
	const char *name;
	int parent;
	enum node_kind kind;
	mode_t mode;		/* permission bits (kernel's) */
	const char *target;	/* K_LINK */
	int algo;		/* K_ASCII, K_BINARY: the template digest bank */
};

/* Ids are indexes.  Modes are the kernel's: directories 0755, evm 0660,
 * the lists 0440, policy 0600 (0400 once loaded); evm_xattrs is shown as
 * the kernel shows it after "." locked the list (0440), since uevm's
 * protected list is fixed when the context is made. */
static const struct node nodes[] = {
	[0] = { "", 0, K_DIR, 0755, NULL, 0 },
	[1] = { "integrity", 0, K_DIR, 0755, NULL, 0 },
	[2] = { "evm", 1, K_DIR, 0755, NULL, 0 },
	[3] = { "evm", 2, K_EVM, 0660, NULL, 0 },
	[4] = { "evm_xattrs", 2, K_EVM_XATTRS, 0440, NULL, 0 },
	[5] = { "ima", 1, K_DIR, 0755, NULL, 0 },
	[6] = { "policy", 5, K_POLICY, 0600, NULL, 0 },
	[7] = { "ascii_runtime_measurements", 5, K_ASCII, 0440, NULL, UEVM_HASH_SHA1 },
	[8] = { "binary_runtime_measurements", 5, K_BINARY, 0440, NULL, UEVM_HASH_SHA1 },
	[9] = { "runtime_measurements_count", 5, K_COUNT, 0440, NULL, 0 },
	[10] = { "violations", 5, K_VIOLATIONS, 0440, NULL, 0 },
	[11] = { "ascii_runtime_measurements_sha1", 5, K_ASCII, 0440, NULL, UEVM_HASH_SHA1 },
	[12] = { "binary_runtime_measurements_sha1", 5, K_BINARY, 0440, NULL, UEVM_HASH_SHA1 },
	[13] = { "ascii_runtime_measurements_sha256", 5, K_ASCII, 0440, NULL, UEVM_HASH_SHA256 },
	[14] = { "binary_runtime_measurements_sha256", 5, K_BINARY, 0440, NULL, UEVM_HASH_SHA256 },
	[15] = { "evm", 0, K_LINK, 0777, "integrity/evm/evm", 0 },
	[16] = { "evm_xattrs", 0, K_LINK, 0777, "integrity/evm/evm_xattrs", 0 },
	[17] = { "ima", 0, K_LINK, 0777, "integrity/ima", 0 },
};
#define NNODES ((int)ARRAY_SIZE(nodes))

struct uevm_securityfs_file {
	struct uevm_securityfs *sfs;
	int id;
	int accmode;
	struct integrity_cred cred;
	/* What reads return: rendered at open, or for the measurement files
	 * brought up to date by the reads (list_extend, value_render). */
	pthread_mutex_t lock;
	char *data;
	size_t len, cap;
	/* The lists: the list rendered in DATA and the entry it stopped at. */
	struct ima_measurements *ml;
	struct ima_ml_cursor cur;
	/* ima/policy write session */
	bool writer;
	bool invalid;
	bool flushed;
	char *wbuf;
	size_t wlen, wcap;
};

UEVM_EXPORT int uevm_securityfs_new(struct integrity_sys *sys,
				    struct uevm_securityfs **out)
{
	struct uevm_securityfs *sfs;

	if (!sys)
		return uevm_err(EINVAL, "no integrity system for the control tree");
	sfs = calloc(1, sizeof(*sfs));
	if (!sfs)
		return uevm_err(ENOMEM, "out of memory");
	sfs->sys = sys;
	pthread_mutex_init(&sfs->lock, NULL);
	*out = sfs;
	return 0;
}

UEVM_EXPORT void uevm_securityfs_free(struct uevm_securityfs *sfs)
{
	if (!sfs)
		return;
	uevm_securityfs_set_change_hook(sfs, NULL, NULL);	/* as unmount */
	if (sfs->mount_destroy)
		sfs->mount_destroy(sfs);
	ima_policy_free(sfs->loaded);
	pthread_mutex_destroy(&sfs->lock);
	free(sfs);
}

UEVM_EXPORT void uevm_securityfs_set_policy_gate(struct uevm_securityfs *sfs,
						uevm_securityfs_policy_gate gate,
						void *arg)
{
	pthread_mutex_lock(&sfs->lock);
	sfs->gate = gate;
	sfs->gate_arg = arg;
	pthread_mutex_unlock(&sfs->lock);
}

UEVM_EXPORT void uevm_securityfs_set_change_hook(struct uevm_securityfs *sfs,
						uevm_securityfs_change_hook hook,
						void *arg)
{
	pthread_mutex_lock(&sfs->lock);
	sfs->changed = hook;
	sfs->changed_arg = arg;
	pthread_mutex_unlock(&sfs->lock);
}

static void tell_change(struct uevm_securityfs *sfs, const char *what,
			const char *text, size_t len, const struct ima_policy *p)
{
	uevm_securityfs_change_hook hook;
	void *arg;

	pthread_mutex_lock(&sfs->lock);
	hook = sfs->changed;
	arg = sfs->changed_arg;
	pthread_mutex_unlock(&sfs->lock);
	if (hook)
		hook(what, text, len, p, arg);
}

/* The front-end's veto on P: 0, or the error (reason in WHY, audit cause
 * in *CAUSE). */
static int gate_check(struct uevm_securityfs *sfs, const struct ima_policy *p,
		      char *why, size_t len, const char **cause)
{
	uevm_securityfs_policy_gate gate;
	void *arg;
	int ret;

	pthread_mutex_lock(&sfs->lock);
	gate = sfs->gate;
	arg = sfs->gate_arg;
	pthread_mutex_unlock(&sfs->lock);
	*cause = "failed";
	if (!gate)
		return 0;
	if (len < 3)
		return -EINVAL;
	why[0] = ':';
	why[1] = ' ';
	why[2] = '\0';
	ret = gate(p, arg, why + 2, len - 2, cause);
	if (ret && !*cause)
		*cause = "refused";
	if (!ret)
		why[0] = '\0';
	return ret;
}

/* ---- nodes -------------------------------------------------------------------- */

static bool valid_id(int id)
{
	return id >= 0 && id < NNODES;
}

UEVM_EXPORT int uevm_securityfs_info(struct uevm_securityfs *sfs, int id,
				     struct uevm_securityfs_info *out)
{
	const struct node *n;
	mode_t type;

	if (!valid_id(id))
		return uevm_err(ENOENT, "no control node %d", id);
	n = &nodes[id];
	type = n->kind == K_DIR ? S_IFDIR : n->kind == K_LINK ? S_IFLNK : S_IFREG;
	memset(out, 0, sizeof(*out));
	out->id = id;
	out->parent = n->parent;
	out->name = n->name;
	out->mode = type | n->mode;
	if (n->kind == K_POLICY) {
		pthread_mutex_lock(&sfs->lock);
		if (sfs->policy_loaded)
			out->mode = type | 0400;
		pthread_mutex_unlock(&sfs->lock);
	}
	out->target = n->target;
	return 0;
}

UEVM_EXPORT int uevm_securityfs_lookup(struct uevm_securityfs *sfs, int dir,
				       const char *name)
{
	(void)sfs;
	if (!valid_id(dir))
		return uevm_err(ENOENT, "no control node %d", dir);
	if (nodes[dir].kind != K_DIR)
		return uevm_err(ENOTDIR, "%s is not a directory", nodes[dir].name);
	if (!strcmp(name, "."))
		return dir;
	if (!strcmp(name, ".."))
		return nodes[dir].parent;
	for (int i = 1; i < NNODES; i++)
		if (nodes[i].parent == dir && !strcmp(nodes[i].name, name))
			return i;
	return uevm_err(ENOENT, "no control file '%s'", name);
}

UEVM_EXPORT int uevm_securityfs_next(struct uevm_securityfs *sfs, int dir, int prev)
{
	(void)sfs;
	if (!valid_id(dir) || nodes[dir].kind != K_DIR)
		return uevm_err(ENOTDIR, "not a directory");
	for (int i = prev < 0 ? 1 : prev + 1; i < NNODES; i++)
		if (nodes[i].parent == dir)
			return i;
	return -ENOENT;
}

/* Walk PATH from DIR, following symlinks up to DEPTH more times. */
static int resolve_from(struct uevm_securityfs *sfs, int dir, const char *path,
			int depth)
{
	char comp[64];
	const char *p = path;
	int cur = dir;

	while (*p) {
		size_t len = strcspn(p, "/");
		int id;

		if (len == 0) {
			p++;
			continue;
		}
		if (len >= sizeof(comp))
			return uevm_err(ENAMETOOLONG, "name too long in '%s'", path);
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		id = uevm_securityfs_lookup(sfs, cur, comp);
		if (id < 0)
			return id;
		if (nodes[id].kind == K_LINK) {
			if (depth <= 0)
				return uevm_err(ELOOP, "too many symlinks in '%s'", path);
			id = resolve_from(sfs, nodes[id].parent, nodes[id].target, depth - 1);
			if (id < 0)
				return id;
		}
		cur = id;
	}
	return cur;
}

UEVM_EXPORT int uevm_securityfs_resolve(struct uevm_securityfs *sfs, const char *path)
{
	return resolve_from(sfs, UEVM_SECURITYFS_ROOT, path, 8);
}

/* ---- opening ---------------------------------------------------------------------- */

/* The DAC check of generic_permission for MAY_READ (4) / MAY_WRITE (2). */
static bool dac_allows(const struct uevm_securityfs_info *in,
		       const struct integrity_cred *cred, int want)
{
	mode_t bits;

	if (integrity_capable(cred, CAP_DAC_OVERRIDE_BIT))
		return true;
	if (want == 4 && integrity_capable(cred, CAP_DAC_READ_SEARCH_BIT))
		return true;
	if (cred->euid == in->uid)
		bits = (in->mode >> 6) & 7;
	else if (cred->egid == in->gid)
		bits = (in->mode >> 3) & 7;
	else
		bits = in->mode & 7;
	return (bits & (mode_t)want) == (mode_t)want;
}

/* Render a read snapshot with FN into F->data. */
static int snapshot(struct uevm_securityfs_file *f,
		    int (*fn)(struct uevm_securityfs_file *f, FILE *fp))
{
	FILE *fp = open_memstream(&f->data, &f->len);
	int ret;

	if (!fp)
		return uevm_err(ENOMEM, "out of memory");
	ret = fn(f, fp);
	if (fclose(fp) != 0 && !ret)
		ret = uevm_err(ENOMEM, "out of memory");
	f->cap = f->len;
	return ret;
}

static int show_evm(struct uevm_securityfs_file *f, FILE *fp)
{
	/* evm_read_key: "%d", no newline. */
	fprintf(fp, "%d", (int)integrity_sys_evm_read(f->sfs->sys));
	return 0;
}

static int show_evm_xattrs(struct uevm_securityfs_file *f, FILE *fp)
{
	const char *const *x = uevm_ctx_xattrs(integrity_sys_ctx(f->sfs->sys));

	for (; x && *x; x++)
		fprintf(fp, "%s\n", *x);
	return 0;
}

static int show_policy(struct uevm_securityfs_file *f, FILE *fp)
{
	const struct ima_policy *p = integrity_sys_policy(f->sfs->sys);

	return p ? ima_policy_write(p, fp) : 0;
}

/* ---- the measurement files: live, as the kernel's seq_file ---------------------- */

/*
 * The lists are append-only, so the rendering of a prefix never changes:
 * an open file keeps what it rendered and the entry it stopped at, and a
 * read that reaches past the end renders only the entries added since.
 * A read at offset N returns the bytes at N of the list as it is at the
 * read; the counts are formatted anew at each read.
 */

/* The list as it is now: every read of a measurement file that needs more
 * than it rendered asks here, once, before it looks at the list (the place
 * to catch up with entries other processes appended to a shared list). */
static struct ima_measurements *current_list(struct uevm_securityfs_file *f)
{
	struct ima_measurements *ml = integrity_sys_measurements(f->sfs->sys);

	/* A host list: take in what the other writers appended, so that the
	 * list read after a quote holds every entry the quote covers.  It
	 * waits for an add in progress; on failure (a list the TPM no longer
	 * matches) the entries already taken in are served. */
	if (ml)
		(void)ima_ml_refresh(ml);
	return ml;
}

/* Room for LEN more bytes in F->data. */
static int data_reserve(struct uevm_securityfs_file *f, size_t len)
{
	size_t cap = f->cap ? f->cap : 4096;
	char *nd;

	if (f->len + len <= f->cap)
		return 0;
	while (cap < f->len + len)
		cap *= 2;
	nd = realloc(f->data, cap);
	if (!nd)
		return uevm_err(ENOMEM, "out of memory");
	f->data = nd;
	f->cap = cap;
	return 0;
}

struct render_args {
	FILE *fp;
	int algo;
	bool ascii;
	long done;	/* bytes of the entries rendered whole */
};

static int render_entry(const struct ima_template_entry *e, void *arg)
{
	struct render_args *r = arg;
	int ret = r->ascii ? ima_entry_write_ascii(e, r->algo, r->fp)
			   : ima_entry_write_binary(e, r->algo, r->fp);

	if (!ret)
		r->done = ftell(r->fp);
	return ret;
}

/* Append the entries added since F's last read to its rendering. */
static int list_extend(struct uevm_securityfs_file *f)
{
	struct ima_measurements *ml = current_list(f);
	struct render_args r = { NULL, nodes[f->id].algo, nodes[f->id].kind == K_ASCII, 0 };
	struct ima_ml_cursor cur;
	char *buf = NULL;
	size_t blen = 0;
	int ret;

	/* Another list (or fewer entries: not ours): start over. */
	if (ml != f->ml || (ml && ima_ml_count(ml) < f->cur.count)) {
		f->ml = ml;
		f->len = 0;
		memset(&f->cur, 0, sizeof(f->cur));
	}
	if (!ml || ima_ml_count(ml) == f->cur.count)
		return 0;
	r.fp = open_memstream(&buf, &blen);
	if (!r.fp)
		return uevm_err(ENOMEM, "out of memory");
	cur = f->cur;
	ret = ima_ml_for_each_from(ml, &cur, render_entry, &r);
	if (fclose(r.fp) != 0) {
		free(buf);
		return uevm_err(ENOMEM, "out of memory");
	}
	/* Keep the entries rendered whole, up to a failing one. */
	if (r.done > 0 && !f->len) {
		free(f->data);
		f->data = buf;
		f->len = (size_t)r.done;
		f->cap = blen;
		buf = NULL;
	} else if (r.done > 0) {
		int err = data_reserve(f, (size_t)r.done);

		if (err) {
			free(buf);
			return err;
		}
		memcpy(f->data + f->len, buf, (size_t)r.done);
		f->len += (size_t)r.done;
	}
	free(buf);
	f->cur = cur;
	return ret;
}

/* runtime_measurements_count and violations: the value now. */
static int value_render(struct uevm_securityfs_file *f)
{
	struct ima_measurements *ml = current_list(f);
	unsigned long v = 0;
	char tmp[32];
	int n, ret;

	if (ml)
		v = nodes[f->id].kind == K_COUNT ? (unsigned long)ima_ml_count(ml)
						 : ima_ml_violations(ml);
	n = snprintf(tmp, sizeof(tmp), "%lu\n", v);
	f->len = 0;
	ret = data_reserve(f, (size_t)n);
	if (ret)
		return ret;
	memcpy(f->data, tmp, (size_t)n);
	f->len = (size_t)n;
	return 0;
}

/* Bring F's rendering up to date for a read of SIZE bytes at OFF. */
static int file_update(struct uevm_securityfs_file *f, size_t size, off_t off)
{
	switch (nodes[f->id].kind) {
	case K_ASCII:
	case K_BINARY:
		/* A read within what is rendered needs nothing new. */
		if ((size_t)off <= f->len && size <= f->len - (size_t)off)
			return 0;
		return list_extend(f);
	case K_COUNT:
	case K_VIOLATIONS:
		return value_render(f);
	default:
		return 0;	/* rendered at open */
	}
}

/* The kernel's ima_open_policy, plus "loaded once". */
static int open_policy(struct uevm_securityfs_file *f)
{
	struct uevm_securityfs *sfs = f->sfs;
	int ret = 0;

	if (f->accmode != O_WRONLY) {
		if (f->accmode != O_RDONLY)
			return uevm_err(EACCES, "ima/policy is read or written, not both");
		if (!integrity_capable(&f->cred, CAP_SYS_ADMIN_BIT))
			return uevm_err(EPERM, "reading ima/policy needs CAP_SYS_ADMIN");
		return snapshot(f, show_policy);
	}
	pthread_mutex_lock(&sfs->lock);
	if (sfs->policy_loaded)
		ret = uevm_err(EACCES, "a policy was already loaded; it is loaded once");
	else if (sfs->policy_busy)
		ret = uevm_err(EBUSY, "ima/policy is being written by another opener");
	else
		sfs->policy_busy = f->writer = true;
	pthread_mutex_unlock(&sfs->lock);
	return ret;
}

UEVM_EXPORT int uevm_securityfs_open(struct uevm_securityfs *sfs, int id,
				     const struct integrity_cred *cred, int flags,
				     struct uevm_securityfs_file **out)
{
	struct uevm_securityfs_info in;
	struct uevm_securityfs_file *f;
	int accmode = flags & O_ACCMODE, ret;

	ret = uevm_securityfs_info(sfs, id, &in);
	if (ret)
		return ret;
	if (S_ISDIR(in.mode))
		return uevm_err(EISDIR, "%s is a directory", in.name);
	if (S_ISLNK(in.mode))
		return uevm_err(ELOOP, "%s is a symlink", in.name);
	if ((accmode != O_WRONLY && !dac_allows(&in, cred, 4)) ||
	    (accmode != O_RDONLY && !dac_allows(&in, cred, 2)))
		return uevm_err(EACCES, "%s: permission denied (mode %04o)", in.name,
				(unsigned int)(in.mode & 07777));
	f = calloc(1, sizeof(*f));
	if (!f)
		return uevm_err(ENOMEM, "out of memory");
	f->sfs = sfs;
	f->id = id;
	f->accmode = accmode;
	f->cred = *cred;

	switch (nodes[id].kind) {
	case K_EVM:
		ret = accmode == O_WRONLY ? 0 : snapshot(f, show_evm);
		break;
	case K_EVM_XATTRS:
		ret = accmode == O_WRONLY ? 0 : snapshot(f, show_evm_xattrs);
		break;
	case K_POLICY:
		ret = open_policy(f);
		break;
	case K_ASCII:
	case K_BINARY:
	case K_COUNT:
	case K_VIOLATIONS:
		/* Rendered by the reads. */
		if (accmode != O_RDONLY)
			ret = uevm_err(EACCES, "%s is read-only", in.name);
		break;
	default:
		ret = uevm_err(EINVAL, "not a file");
	}
	if (ret) {
		free(f->data);
		free(f);
		return ret;
	}
	pthread_mutex_init(&f->lock, NULL);
	*out = f;
	return 0;
}

UEVM_EXPORT ssize_t uevm_securityfs_file_read(struct uevm_securityfs_file *f,
					      void *buf, size_t size, off_t off)
{
	int ret;

	if (f->accmode == O_WRONLY)
		return uevm_err(EBADF, "not open for reading");
	if (off < 0)
		return uevm_err(EINVAL, "negative offset");
	pthread_mutex_lock(&f->lock);
	ret = file_update(f, size, off);
	if (ret) {
		pthread_mutex_unlock(&f->lock);
		return ret;
	}
	if ((size_t)off >= f->len)
		size = 0;
	else if (size > f->len - (size_t)off)
		size = f->len - (size_t)off;
	if (size)
		memcpy(buf, f->data + off, size);
	pthread_mutex_unlock(&f->lock);
	return (ssize_t)size;
}

/* ---- writing ---------------------------------------------------------------------- */

/* The kernel's kstrtouint(s, 0, &v) on a write: one optional trailing
 * newline, "0x" hex, leading-0 octal or decimal, nothing else. */
static int parse_uint(const void *buf, size_t size, unsigned int *out)
{
	char s[32], *end;
	unsigned long long v;
	size_t n = size;

	if (n && ((const char *)buf)[n - 1] == '\n')
		n--;
	if (n == 0 || n >= sizeof(s))
		return -EINVAL;
	memcpy(s, buf, n);
	s[n] = '\0';
	if (s[0] == '-' || s[0] == ' ' || s[0] == '\t')
		return -EINVAL;
	errno = 0;
	v = strtoull(s[0] == '+' ? s + 1 : s, &end, 0);
	if (errno || *end || end == s || v > UINT32_MAX)
		return errno == ERANGE || v > UINT32_MAX ? -ERANGE : -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

/* evm_write_key: CAP_SYS_ADMIN and setup not complete, then the value. */
static ssize_t write_evm(struct uevm_securityfs_file *f, const void *buf, size_t size)
{
	struct integrity_sys *sys = f->sfs->sys;
	unsigned int v;
	int ret;

	if (!integrity_capable(&f->cred, CAP_SYS_ADMIN_BIT))
		return uevm_err(EPERM, "writing evm needs CAP_SYS_ADMIN");
	/* An HMAC key completes the setup: the kernel checks this first. */
	if (integrity_sys_evm_read(sys) & EVM_INIT_HMAC)
		return uevm_err(EPERM, "EVM setup is already complete");
	ret = parse_uint(buf, size, &v);
	if (ret)
		return uevm_err(-ret, "evm takes a number (1, 0x2, ...)");
	ret = integrity_sys_evm_write(sys, &f->cred, v);
	if (ret)
		return ret;
	tell_change(f->sfs, "evm", NULL, 0, NULL);
	return (ssize_t)size;
}

/* evm_write_xattrs: the list is locked (see the node table). */
static ssize_t write_evm_xattrs(struct uevm_securityfs_file *f)
{
	if (!integrity_capable(&f->cred, CAP_SYS_ADMIN_BIT))
		return uevm_err(EPERM, "writing evm_xattrs needs CAP_SYS_ADMIN");
	return uevm_err(EPERM, "the protected xattr list is fixed while mounted "
			"(give extra names when starting the front-end)");
}

/* Append to the session and check everything written so far, so that a
 * bad rule fails the write that brought it, as in the kernel. */
static ssize_t write_policy(struct uevm_securityfs_file *f, const void *buf,
			    size_t size)
{
	struct ima_policy *p = NULL;
	unsigned int line = 0;
	int ret;

	if (f->invalid)
		return uevm_err(EINVAL, "an earlier write to ima/policy was refused");
	if (f->flushed)
		return uevm_err(EINVAL, "this ima/policy write session was closed");
	if (f->wlen + size + 1 > POLICY_MAX_SIZE)
		return uevm_err(EFBIG, "policy larger than %u bytes", POLICY_MAX_SIZE);
	if (f->wlen + size + 1 > f->wcap) {
		size_t cap = f->wcap ? f->wcap : 4096;
		char *nb;

		while (cap < f->wlen + size + 1)
			cap *= 2;
		nb = realloc(f->wbuf, cap);
		if (!nb)
			return uevm_err(ENOMEM, "out of memory");
		f->wbuf = nb;
		f->wcap = cap;
	}
	memcpy(f->wbuf + f->wlen, buf, size);
	f->wlen += size;
	f->wbuf[f->wlen] = '\0';
	ret = ima_policy_parse_lines(f->wbuf, f->wlen, &p, &line);
	if (!ret) {
		const char *cause;
		char why[512];

		ret = gate_check(f->sfs, p, why, sizeof(why), &cause);
		ima_policy_free(p);
		if (ret) {
			f->invalid = true;
			integrity_audit_msg(f->sfs->sys, AUDIT_INTEGRITY_STATUS, NULL,
					    NULL, &f->cred, "policy_update", cause,
					    ret, false);
			return uevm_err(-ret, "ima/policy%s", why);
		}
		return (ssize_t)size;
	}
	ima_policy_free(p);
	/* No rule yet (only comments so far) is not an error until close. */
	if (ret && line) {
		char why[512];

		snprintf(why, sizeof(why), "%s", uevm_last_error());
		f->invalid = true;
		integrity_audit_msg(f->sfs->sys, AUDIT_INTEGRITY_STATUS, NULL, NULL,
				    &f->cred, "policy_update", "invalid-policy", ret, false);
		return uevm_err(-ret, "ima/policy: %s", why);
	}
	return (ssize_t)size;
}

UEVM_EXPORT ssize_t uevm_securityfs_file_write(struct uevm_securityfs_file *f,
					       const void *buf, size_t size, off_t off)
{
	(void)off;	/* securityfs files ignore the position */
	if (f->accmode == O_RDONLY)
		return uevm_err(EBADF, "not open for writing");
	switch (nodes[f->id].kind) {
	case K_EVM:
		return write_evm(f, buf, size);
	case K_EVM_XATTRS:
		return write_evm_xattrs(f);
	case K_POLICY:
		return write_policy(f, buf, size);
	default:
		return uevm_err(EINVAL, "%s cannot be written", nodes[f->id].name);
	}
}

/* The kernel's ima_release_policy: install the whole policy or nothing. */
static int commit_policy(struct uevm_securityfs_file *f)
{
	struct uevm_securityfs *sfs = f->sfs;
	struct ima_policy *p = NULL;
	unsigned int line = 0;
	char why[512] = "";
	const char *cause = "failed";
	int ret = -EINVAL;

	if (!f->invalid) {
		ret = ima_policy_parse_lines(f->wbuf ? f->wbuf : "", f->wlen, &p, &line);
		if (ret)
			snprintf(why, sizeof(why), ": %s", uevm_last_error());
		else if (gate_check(sfs, p, why, sizeof(why), &cause)) {
			ret = -EINVAL;
			ima_policy_free(p);
			p = NULL;
		}
	}
	pthread_mutex_lock(&sfs->lock);
	if (!ret) {
		integrity_sys_set_policy(sfs->sys, p);
		sfs->loaded = p;
		sfs->policy_loaded = true;
	}
	sfs->policy_busy = false;
	pthread_mutex_unlock(&sfs->lock);
	integrity_audit_msg(sfs->sys, AUDIT_INTEGRITY_STATUS, NULL, NULL, &f->cred,
			    "policy_update", ret ? cause : "completed",
			    ret ? 1 : 0, false);
	if (ret)
		return uevm_err(EINVAL, "ima/policy: nothing loaded%s", why);
	tell_change(sfs, "policy", f->wbuf ? f->wbuf : "", f->wlen, p);
	return 0;
}

UEVM_EXPORT bool uevm_securityfs_file_writes_policy(const struct uevm_securityfs_file *f)
{
	return f->writer && !f->flushed;
}

UEVM_EXPORT int uevm_securityfs_file_flush_by(struct uevm_securityfs_file *f,
					      pid_t closer_tgid)
{
	/* The kernel installs at the last close (ima_release_policy); a
	 * FUSE close of one descriptor among several cannot tell that, and
	 * the release comes after close() returned.  So the opener's own
	 * close installs, and not a child's that inherited the descriptor
	 * and exited between two writes of its parent ({ cat a; cmd;
	 * cat b; } > ima/policy): that once installed only what came
	 * before, a weaker policy.  Nor a close of the opener's while it
	 * holds another copy (CLOSER_TGID < 0: "echo RULE >&3" in a shell
	 * closes its dup).  Unknown on either side: the old way. */
	if (f->writer && (closer_tgid < 0 ||
			  (f->cred.tgid > 0 && closer_tgid > 0 && closer_tgid != f->cred.tgid)))
		return 0;
	return uevm_securityfs_file_flush(f);
}

UEVM_EXPORT int uevm_securityfs_file_flush(struct uevm_securityfs_file *f)
{
	/* Nothing written yet: a close of a dup'ed descriptor before the
	 * writes (as shells do); the session stays open. */
	if (f->flushed || !f->writer || (!f->wlen && !f->invalid))
		return 0;
	f->flushed = true;
	return commit_policy(f);
}

UEVM_EXPORT void uevm_securityfs_file_release(struct uevm_securityfs_file *f)
{
	if (!f)
		return;
	if (f->writer && !f->flushed) {
		f->flushed = true;
		commit_policy(f);	/* an empty session: refused, audited */
	}
	pthread_mutex_destroy(&f->lock);
	free(f->data);
	free(f->wbuf);
	free(f);
}

/* ---- whole files -------------------------------------------------------------------- */

UEVM_EXPORT int uevm_securityfs_read(struct uevm_securityfs *sfs, const char *path,
				     const struct integrity_cred *cred, char **out,
				     size_t *len)
{
	struct uevm_securityfs_file *f;
	int id = uevm_securityfs_resolve(sfs, path), ret;

	if (id < 0)
		return id;
	ret = uevm_securityfs_open(sfs, id, cred, O_RDONLY, &f);
	if (ret)
		return ret;
	ret = file_update(f, SIZE_MAX, 0);
	if (ret) {
		uevm_securityfs_file_release(f);
		return ret;
	}
	*out = malloc(f->len + 1);
	if (!*out) {
		uevm_securityfs_file_release(f);
		return uevm_err(ENOMEM, "out of memory");
	}
	if (f->len)
		memcpy(*out, f->data, f->len);
	(*out)[f->len] = '\0';
	*len = f->len;
	uevm_securityfs_file_release(f);
	return 0;
}

UEVM_EXPORT int uevm_securityfs_write(struct uevm_securityfs *sfs, const char *path,
				      const struct integrity_cred *cred,
				      const void *data, size_t len)
{
	struct uevm_securityfs_file *f;
	int id = uevm_securityfs_resolve(sfs, path), ret;
	ssize_t n;

	if (id < 0)
		return id;
	ret = uevm_securityfs_open(sfs, id, cred, O_WRONLY, &f);
	if (ret)
		return ret;
	n = uevm_securityfs_file_write(f, data, len, 0);
	if (n < 0) {
		char why[512];

		/* The close must not hide why the write failed. */
		snprintf(why, sizeof(why), "%s", uevm_last_error());
		uevm_securityfs_file_release(f);
		return uevm_err((int)-n, "%s", why);
	}
	ret = uevm_securityfs_file_flush(f);
	uevm_securityfs_file_release(f);
	return ret;
}
