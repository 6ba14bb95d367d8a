// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The hash an EVM signature covers: the kernel's evm_calc_hash, i.e.
 * evm_calc_hmac_or_hash with a plain digest (the signature's algorithm)
 * in place of HMAC-SHA1, over the same protected values and h_misc.
 */
#include <string.h>
#include "sig_private.h"

static int md_update_cb(void *arg, const void *data, size_t len)
{
	return EVP_DigestUpdate(arg, data, len) ? 0
						: uevm_err(EIO, "digest update failed");
}

/* h_misc and the UUID, then the digest (hmac_add_misc's tail). */
static int add_misc_final(EVP_MD_CTX *md, const struct uevm_hmac_misc *misc,
			  uint8_t *digest)
{
	uint8_t buf[24];
	size_t n = evm_misc_encode(misc, buf);

	if (!EVP_DigestUpdate(md, buf, n) ||
	    (misc->has_uuid && !EVP_DigestUpdate(md, misc->uuid, 16)) ||
	    !EVP_DigestFinal_ex(md, digest, NULL))
		return uevm_err(EIO, "digest failed");
	return 0;
}

static EVP_MD_CTX *md_start(int algo)
{
	const EVP_MD *type = uevm_hash_md(algo);
	EVP_MD_CTX *md;

	if (!type) {
		uevm_err(ENOPKG, "hash algorithm %s is not available",
			 uevm_hash_algo_name(algo) ?: "(invalid)");
		return NULL;
	}
	md = EVP_MD_CTX_new();
	if (!md || !EVP_DigestInit_ex(md, type, NULL)) {
		EVP_MD_CTX_free(md);
		uevm_err(ENOMEM, "cannot initialise %s", uevm_hash_algo_name(algo));
		return NULL;
	}
	return md;
}

UEVM_EXPORT int uevm_evm_calc_hash_values(int algo,
					  const struct uevm_xattr_entry *xattrs,
					  size_t n,
					  const struct uevm_hmac_misc *in,
					  uint8_t *digest)
{
	struct uevm_hmac_misc misc_buf;
	const struct uevm_hmac_misc *misc = &misc_buf;
	EVP_MD_CTX *md;
	int ret = evm_misc_in(in, &misc_buf);

	if (ret)
		return ret;
	md = md_start(algo);
	if (!md)
		return -ENOPKG;
	for (size_t i = 0; i < n && !ret; i++)
		ret = md_update_cb(md, xattrs[i].value, xattrs[i].len);
	if (!ret)
		ret = add_misc_final(md, misc, digest);
	EVP_MD_CTX_free(md);
	return ret;
}

/* Portable signatures bind neither inode number, generation nor the
 * filesystem: only what survives a copy. */
static void portable_misc(const struct uevm_ctx *ctx, const struct uevm_file *f,
			  struct uevm_hmac_misc *misc)
{
	uevm_hmac_misc_init(misc);
	misc->uid = f->st.st_uid;
	misc->gid = f->st.st_gid;
	misc->mode = (uint16_t)f->st.st_mode;
	misc->m32 = ctx->cfg.m32;
}

UEVM_EXPORT int uevm_evm_calc_hash(const struct uevm_ctx *ctx,
				   const struct uevm_file *f, uint8_t type,
				   int algo, const char *req_name,
				   const uint8_t *req_value, size_t req_len,
				   uint8_t *digest)
{
	struct uevm_hmac_misc misc;
	bool ima_present;
	EVP_MD_CTX *md;
	int ret;

	if (type == EVM_XATTR_PORTABLE_DIGSIG) {
		portable_misc(ctx, f, &misc);
	} else if (type == EVM_IMA_XATTR_DIGSIG) {
		ret = evm_misc_from_file(ctx, f, &misc);
		if (ret)
			return ret;
	} else {
		return uevm_err(EINVAL, "type 0x%02x is not an EVM signature type", type);
	}
	md = md_start(algo);
	if (!md)
		return -ENOPKG;
	ret = evm_collect_xattrs(ctx, f, req_name, req_value, req_len,
				 md_update_cb, md, &ima_present);
	/* As evm_calc_hmac_or_hash: a portable signature must cover an
	 * IMA value, checked before "no protected xattr at all". */
	if (ret >= 0 && type == EVM_XATTR_PORTABLE_DIGSIG && !ima_present)
		ret = uevm_err(EPERM, "a portable EVM signature needs security.ima");
	else if (ret == 0)
		ret = uevm_err(ENODATA, "no EVM-protected xattr");
	else if (ret > 0)
		ret = add_misc_final(md, &misc, digest);
	EVP_MD_CTX_free(md);
	return ret;
}

UEVM_EXPORT int uevm_evm_sign_calc(const struct uevm_ctx *ctx,
				   const struct uevm_signer *s,
				   const struct uevm_file *f, uint8_t type,
				   int algo, int version, const char *req_name,
				   const uint8_t *req_value, size_t req_len,
				   uint8_t *out, size_t *out_len)
{
	uint8_t digest[UEVM_MAX_DIGEST_SIZE];
	int ret;

	ret = uevm_evm_calc_hash(ctx, f, type, algo, req_name, req_value,
				 req_len, digest);
	if (ret)
		return ret;
	ret = uevm_sign_digest(s, type, version, algo, digest, out);
	if (ret < 0)
		return ret;
	*out_len = (size_t)ret;
	return 0;
}

UEVM_EXPORT int uevm_ima_sign_calc(const struct uevm_ctx *ctx,
				   const struct uevm_signer *s,
				   const struct uevm_file *f, int algo,
				   int version, uint8_t *out, size_t *out_len)
{
	uint8_t digest[UEVM_MAX_DIGEST_SIZE];
	int ret;

	(void)ctx;
	if (!S_ISREG(f->st.st_mode) || !f->io)
		return uevm_err(EINVAL, "not a regular file");
	ret = ima_collect_stable(f, algo, digest);
	if (ret)
		return ret;
	ret = uevm_sign_digest(s, EVM_IMA_XATTR_DIGSIG, version, algo, digest, out);
	if (ret < 0)
		return ret;
	*out_len = (size_t)ret;
	return 0;
}

static int set_value(const struct uevm_file *f, const char *name,
		     const uint8_t *val, size_t len)
{
	int ret;

	/* Rewriting an identical value would only churn ctime. */
	if (uevm_xattr_cmp(f, name, val, len) == 0)
		return 0;
	ret = uevm_setxattr(f, name, val, len);
	return ret ? uevm_err(-ret, "cannot write %s: %s", name, strerror(-ret)) : 0;
}

static int sign_file(const struct uevm_ctx *ctx, const struct uevm_signer *s,
		     const struct uevm_file *f, const struct uevm_sign_opts *o)
{
	uint8_t ima[UEVM_MAX_SIG_SIZE], evm[UEVM_MAX_SIG_SIZE];
	int algo = o->algo >= 0 ? o->algo : ctx->cfg.hash_algo;
	int version = o->version ? o->version : 2;
	uint8_t type = o->portable ? EVM_XATTR_PORTABLE_DIGSIG
				   : EVM_IMA_XATTR_DIGSIG;
	const uint8_t *req = NULL;
	size_t ima_len = 0, evm_len;
	int ret;

	if (S_ISREG(f->st.st_mode)) {
		if (o->ima_sig) {
			ret = uevm_ima_sign_calc(ctx, s, f, algo, version, ima, &ima_len);
		} else {
			uint8_t digest[UEVM_MAX_DIGEST_SIZE];

			ret = ima_collect_stable(f, algo, digest);
			if (!ret) {
				ret = uevm_ima_xattr_format(algo, digest, ima);
				ima_len = ret > 0 ? (size_t)ret : 0;
				ret = ret > 0 ? 0 : ret;
			}
		}
		if (ret)
			return ret;
		ret = set_value(f, XATTR_NAME_IMA, ima, ima_len);
		if (ret)
			return ret;
		req = ima;
	} else if (o->portable || !o->evm_sig) {
		/* Only regular files carry security.ima. */
		return uevm_err(ENODATA, "%s",
				o->portable ? "a portable signature needs security.ima: regular files only"
					    : "nothing to sign for a non-regular file without --evm");
	}
	if (!o->evm_sig && !o->portable)
		return 0;
	ret = uevm_evm_sign_calc(ctx, s, f, type, algo, version,
				 req ? XATTR_NAME_IMA : NULL, req, ima_len,
				 evm, &evm_len);
	if (ret)
		return ret;
	return set_value(f, XATTR_NAME_EVM, evm, evm_len);
}

static void sign_opts_defaults(struct uevm_sign_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
	o->version = 2;
	o->algo = -1;
}

UEVM_EXPORT void uevm_sign_opts_init_size(struct uevm_sign_opts *o,
					  size_t size)
{
	struct uevm_sign_opts def;

	sign_opts_defaults(&def);
	uevm_struct_init(o, size, &def, sizeof(def));
}

UEVM_EXPORT int uevm_sign_file(const struct uevm_ctx *ctx,
			       const struct uevm_signer *s,
			       const struct uevm_file *f,
			       const struct uevm_sign_opts *in)
{
	struct uevm_sign_opts o;
	int ret;

	sign_opts_defaults(&o);
	ret = uevm_struct_in(in, sizeof(o), &o, sizeof(o),
			     "struct uevm_sign_opts");
	if (ret)
		return ret;
	ret = sign_file(ctx, s, f, &o);

	/* As uevm_label_file: the filesystem's lack, not the step (an
	 * object with nothing to sign is skipped anyway). */
	if (ret && ret != -ENODATA && xattr_check_support(f))
		return -EOPNOTSUPP;
	return ret;
}
