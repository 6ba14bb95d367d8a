// SPDX-License-Identifier: LGPL-2.1-or-later
/* The EVM HMAC, as the kernel's evm_calc_hmac_or_hash and hmac_add_misc. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/statfs.h>
#include "lib_private.h"

UEVM_EXPORT void uevm_hmac_misc_init_size(struct uevm_hmac_misc *m,
					  size_t size)
{
	struct uevm_hmac_misc def;

	memset(&def, 0, sizeof(def));
	uevm_struct_init(m, size, &def, sizeof(def));
}

/* A caller's struct uevm_hmac_misc as ours (see uevm_struct_in). */
int evm_misc_in(const struct uevm_hmac_misc *in, struct uevm_hmac_misc *out)
{
	memset(out, 0, sizeof(*out));
	return uevm_struct_in(in, sizeof(*out), out, sizeof(*out),
			      "struct uevm_hmac_misc");
}

UEVM_EXPORT size_t uevm_hmac_misc_encode(const struct uevm_hmac_misc *in,
					 uint8_t out[24])
{
	struct uevm_hmac_misc mine;
	const struct uevm_hmac_misc *m = &mine;

	if (evm_misc_in(in, &mine))
		return 0;
	return evm_misc_encode(m, out);
}

size_t evm_misc_encode(const struct uevm_hmac_misc *m, uint8_t out[24])
{
	/* struct h_misc { unsigned long ino; u32 generation; uid_t uid;
	 * gid_t gid; umode_t mode; }, zeroed, native endian.  LP64: 8+4+4+4+2
	 * and 2 bytes of tail padding; 32-bit: 4+4+4+4+2+2. */
	size_t ino_size = m->m32 ? 4 : 8;
	size_t off = 0;

	memset(out, 0, 24);
	if (m->m32) {
		uint32_t ino = (uint32_t)m->ino;

		memcpy(out, &ino, 4);
	} else {
		memcpy(out, &m->ino, 8);
	}
	off = ino_size;
	memcpy(out + off, &m->generation, 4);
	memcpy(out + off + 4, &m->uid, 4);
	memcpy(out + off + 8, &m->gid, 4);
	memcpy(out + off + 12, &m->mode, 2);
	return off + 16;
}

static int add_misc_and_final(struct uevm_hmac *h,
			      const struct uevm_hmac_misc *misc,
			      uint8_t hmac[UEVM_HMAC_SIZE])
{
	uint8_t buf[24];
	size_t n = evm_misc_encode(misc, buf);
	int ret = uevm_hmac_update(h, buf, n);

	if (!ret && misc->has_uuid)
		ret = uevm_hmac_update(h, misc->uuid, 16);
	if (ret) {
		uevm_hmac_abort(h);
		return ret;
	}
	return uevm_hmac_final(h, hmac);
}

UEVM_EXPORT int uevm_evm_calc_hmac_values(const struct uevm_key *key,
					  const struct uevm_xattr_entry *xattrs,
					  size_t n,
					  const struct uevm_hmac_misc *in,
					  uint8_t hmac[UEVM_HMAC_SIZE])
{
	struct uevm_hmac_misc mine;
	const struct uevm_hmac_misc *misc = &mine;
	struct uevm_hmac h;
	int ret;

	ret = evm_misc_in(in, &mine);
	if (ret)
		return ret;
	if (!key)
		return uevm_err(ENOKEY, "no HMAC key loaded");
	ret = uevm_hmac_init(&h, key);
	if (ret)
		return ret;
	/* Raw values only: no names, lengths or separators. */
	for (size_t i = 0; i < n; i++) {
		ret = uevm_hmac_update(&h, xattrs[i].value, xattrs[i].len);
		if (ret) {
			uevm_hmac_abort(&h);
			return ret;
		}
	}
	return add_misc_and_final(&h, misc, hmac);
}

/* Into the caller's struct, of the size it was initialised with. */
UEVM_EXPORT int uevm_hmac_misc_from_file(const struct uevm_ctx *ctx,
					 const struct uevm_file *f,
					 struct uevm_hmac_misc *out)
{
	struct uevm_hmac_misc misc;
	size_t size = out ? out->size : 0;
	int ret;

	if (size < sizeof(misc))
		return uevm_err(EINVAL,
				"struct uevm_hmac_misc: size %zu, not set by uevm_hmac_misc_init",
				size);
	ret = evm_misc_from_file(ctx, f, &misc);
	if (ret)
		return ret;
	memcpy(out, &misc, sizeof(misc));
	out->size = size;
	return 0;
}

/*
 * What was learnt of each filesystem (its UUID, its statfs f_type), by
 * the st_dev of the fd that was asked (uevm_ctx_cache_fsuuid).  Each entry
 * holds a dup of that fd until the cache is freed: the superblock stays
 * alive (an umount fails EBUSY, a lazy one leaves it), so its device
 * number cannot be handed to another filesystem mounted meanwhile and
 * st_dev keeps naming this one.  An attacker who can only rename and
 * replace files cannot change which filesystem an open fd is on.  Only
 * short CLI runs turn this on.
 */
struct evm_uuid_cache {
	pthread_mutex_t lock;
	size_t n;
	struct {
		dev_t dev;
		int pin;	/* keeps the filesystem, and so dev, alive */
		bool has_uuid, has_magic;
		uint8_t uuid[16];
		unsigned long magic;	/* statfs f_type */
	} e[64];
};

int uevm_ctx_cache_fsuuid(struct uevm_ctx *ctx)
{
	struct evm_uuid_cache *c;

	if (ctx->uuid_cache)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return uevm_err(ENOMEM, "out of memory");
	pthread_mutex_init(&c->lock, NULL);
	ctx->uuid_cache = c;
	return 0;
}

void evm_uuid_cache_free(struct evm_uuid_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		close(c->e[i].pin);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* C's entry for F's filesystem, or -1; under c->lock. */
static int cache_find(const struct evm_uuid_cache *c, const struct uevm_file *f)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].dev == f->st.st_dev)
			return (int)i;
	return -1;
}

/* The same, added if missing; under c->lock.  F's own fd is open and
 * on f->st.st_dev (f->st is the fstat of it): the pin is on the very
 * filesystem the facts come from.  No pin, no entry: -1. */
static int cache_get(struct evm_uuid_cache *c, const struct uevm_file *f)
{
	int i = cache_find(c, f), pin;

	if (i >= 0 || c->n >= sizeof(c->e) / sizeof(c->e[0]))
		return i;
	pin = fcntl(f->fd, F_DUPFD_CLOEXEC, 3);
	if (pin < 0)
		return -1;
	i = (int)c->n++;
	memset(&c->e[i], 0, sizeof(c->e[i]));
	c->e[i].dev = f->st.st_dev;
	c->e[i].pin = pin;
	return i;
}

static int fsuuid_cached(const struct uevm_ctx *ctx, const struct uevm_file *f,
			 uint8_t uuid[16])
{
	struct evm_uuid_cache *c = ctx->uuid_cache;
	int ret, i;

	if (!c || !f->fs_cached)
		return uevm_file_fsuuid(f, uuid);
	pthread_mutex_lock(&c->lock);
	i = cache_find(c, f);
	if (i >= 0 && c->e[i].has_uuid) {
		memcpy(uuid, c->e[i].uuid, 16);
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	pthread_mutex_unlock(&c->lock);
	/* f->st is the fstat of F's own fd, the one the ioctl goes to (or,
	 * for an object not opened for I/O, uevm_file_fsuuid checks that its
	 * parent's fd is on the same st_dev).  Errors are not kept. */
	ret = uevm_file_fsuuid(f, uuid);
	if (ret)
		return ret;
	pthread_mutex_lock(&c->lock);
	i = cache_get(c, f);
	if (i >= 0) {
		memcpy(c->e[i].uuid, uuid, 16);
		c->e[i].has_uuid = true;
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

int fs_magic_cached(const struct uevm_ctx *ctx, const struct uevm_file *f,
		    unsigned long *magic)
{
	struct evm_uuid_cache *c = ctx && f->fs_cached ? ctx->uuid_cache : NULL;
	struct statfs sf;
	int i;

	if (c) {
		pthread_mutex_lock(&c->lock);
		i = cache_find(c, f);
		if (i >= 0 && c->e[i].has_magic) {
			*magic = c->e[i].magic;
			pthread_mutex_unlock(&c->lock);
			return 0;
		}
		pthread_mutex_unlock(&c->lock);
	}
	/* F's own fd (O_PATH ones too): its filesystem, that of f->st. */
	if (fstatfs(f->fd, &sf) < 0)
		return -errno;
	*magic = (unsigned long)sf.f_type;
	if (c) {
		pthread_mutex_lock(&c->lock);
		i = cache_get(c, f);
		if (i >= 0) {
			c->e[i].magic = *magic;
			c->e[i].has_magic = true;
		}
		pthread_mutex_unlock(&c->lock);
	}
	return 0;
}

/* struct h_misc from ST, a fresh fstat of F's fd. */
int evm_misc_from_stat(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       const struct stat *st, struct uevm_hmac_misc *misc)
{
	int ret;

	uevm_hmac_misc_init(misc);
	misc->ino = st->st_ino;
	misc->uid = st->st_uid;
	misc->gid = st->st_gid;
	misc->mode = (uint16_t)st->st_mode;
	misc->m32 = ctx->cfg.m32;
	ret = uevm_file_generation(f, &misc->generation);
	if (ret)
		return ret;
	switch (ctx->cfg.uuid_mode) {
	case UEVM_UUID_NONE:
		break;
	case UEVM_UUID_FIXED:
		misc->has_uuid = true;
		memcpy(misc->uuid, ctx->cfg.uuid, 16);
		break;
	default:
		ret = fsuuid_cached(ctx, f, misc->uuid);
		if (ret)
			return ret;
		misc->has_uuid = true;
	}
	return 0;
}

int evm_misc_from_file(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       struct uevm_hmac_misc *misc)
{
	struct stat st;

	/* The object's current metadata: it may have changed (chmod, chown
	 * through a hook) since it was opened. */
	if (fstat(f->fd, &st) < 0)
		return uevm_err(errno, "stat failed: %m");
	return evm_misc_from_stat(ctx, f, &st, misc);
}

/*
 * The protected xattrs as evm_calc_hmac_or_hash walks them; shared by the
 * HMAC and the signature hash so that both cover exactly the same bytes.
 */
int evm_collect_xattrs_listed(const struct uevm_ctx *ctx,
			      const struct uevm_file *f,
			      const struct xattr_names *names,
			      const char *req_name, const uint8_t *req_value,
			      size_t req_len, evm_update_fn update, void *arg,
			      bool *ima_present)
{
	uint8_t *buf = NULL;
	size_t bufsize = 0;
	int found = 0;
	int ret = 0;

	*ima_present = false;
	for (size_t i = 0; i < ctx->nxattrs; i++) {
		const char *name = ctx->xattrs[i];
		const uint8_t *val = req_value;
		size_t len = req_len;

		if (req_name && !strcmp(name, req_name)) {
			/* The value being set replaces the stored one. */
			if (!req_value)
				continue;
		} else if (!xattr_names_has(names, name)) {
			/* Not listed: not there (a failed listing says -1,
			 * and then each name is asked for). */
			continue;
		} else {
			ssize_t n = uevm_getxattr_alloc(f, name, &buf, &bufsize);

			if (n == -ENODATA || n == -EOPNOTSUPP)
				continue;
			if (n < 0) {
				ret = uevm_err((int)-n, "cannot read %s: %s", name,
					       strerror((int)-n));
				break;
			}
			val = buf;
			len = (size_t)n;
		}
		ret = update(arg, val, len);
		if (ret)
			break;
		found++;
		if (!strcmp(name, XATTR_NAME_IMA))
			*ima_present = true;
	}
	free(buf);
	return ret ? ret : found;
}

/*
 * The protected xattrs as evm_calc_hmac_or_hash walks them; shared by the
 * HMAC and the signature hash so that both cover exactly the same bytes.
 * One listxattr tells which are there: only those are read.
 */
int evm_collect_xattrs(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       const char *req_name, const uint8_t *req_value,
		       size_t req_len, evm_update_fn update, void *arg,
		       bool *ima_present)
{
	struct xattr_names names;
	int ret;

	xattr_names_load(ctx, f, &names);
	ret = evm_collect_xattrs_listed(ctx, f, &names, req_name, req_value,
					req_len, update, arg, ima_present);
	xattr_names_free(&names);
	return ret;
}

static int hmac_update_cb(void *arg, const void *data, size_t len)
{
	return uevm_hmac_update(arg, data, len);
}

/* The HMAC with F's metadata from ST (a fresh fstat of its fd) and its
 * xattrs from NAMES (its listing), as uevm_evm_calc_hmac. */
int evm_calc_hmac_with(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       const struct stat *st, const struct xattr_names *names,
		       const char *req_name, const uint8_t *req_value,
		       size_t req_len, uint8_t hmac[UEVM_HMAC_SIZE])
{
	struct uevm_hmac_misc misc;
	struct uevm_hmac h;
	bool ima_present;
	int ret;

	if (!ctx->key)
		return uevm_err(ENOKEY, "no HMAC key loaded");
	ret = st ? evm_misc_from_stat(ctx, f, st, &misc)
		 : evm_misc_from_file(ctx, f, &misc);
	if (ret)
		return ret;
	ret = uevm_hmac_init(&h, ctx->key);
	if (ret)
		return ret;
	ret = evm_collect_xattrs_listed(ctx, f, names, req_name, req_value,
					req_len, hmac_update_cb, &h, &ima_present);
	if (ret <= 0) {
		uevm_hmac_abort(&h);
		return ret ? ret : uevm_err(ENODATA, "no EVM-protected xattr");
	}
	return add_misc_and_final(&h, &misc, hmac);
}

UEVM_EXPORT int uevm_evm_calc_hmac(const struct uevm_ctx *ctx,
				   const struct uevm_file *f,
				   const char *req_name,
				   const uint8_t *req_value, size_t req_len,
				   uint8_t hmac[UEVM_HMAC_SIZE])
{
	struct xattr_names names;
	int ret;

	if (!ctx->key)
		return uevm_err(ENOKEY, "no HMAC key loaded");
	xattr_names_load(ctx, f, &names);
	ret = evm_calc_hmac_with(ctx, f, NULL, &names, req_name, req_value,
				 req_len, hmac);
	xattr_names_free(&names);
	return ret;
}

UEVM_EXPORT int uevm_evm_update_evmxattr(const struct uevm_ctx *ctx,
					 const struct uevm_file *f)
{
	uint8_t val[UEVM_EVM_HMAC_XATTR_SIZE];
	struct xattr_names names;
	bool listed_evm;
	int ret;

	if (!ctx->key)
		return uevm_err(ENOKEY, "no HMAC key loaded");
	xattr_names_load(ctx, f, &names);
	ret = evm_calc_hmac_with(ctx, f, NULL, &names, NULL, NULL, 0, val + 1);
	/* A trusted listing without security.evm: nothing to remove (an
	 * unlabelled directory or symlink saves a removexattr, through a
	 * /proc path for a symlink).  Unknown listing: removed as before. */
	listed_evm = xattr_names_has(&names, XATTR_NAME_EVM) != 0;
	xattr_names_free(&names);
	if (ret == -ENODATA && !listed_evm)
		return 0;
	if (ret == -ENODATA) {
		ret = uevm_removexattr(f, XATTR_NAME_EVM);
		if (ret == -ENODATA)
			ret = 0;
		return ret ? uevm_err(-ret, "cannot remove security.evm: %s",
				      strerror(-ret))
			   : 0;
	}
	if (ret)
		return ret;
	val[0] = EVM_XATTR_HMAC;
	ret = uevm_setxattr(f, XATTR_NAME_EVM, val, sizeof(val));
	explicit_bzero(val, sizeof(val));
	if (ret)
		return uevm_err(-ret, "cannot write security.evm: %s",
				strerror(-ret));
	return 0;
}
