// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Verification of one file, in the order of the kernel's
 * ima_appraise_measurement: security.ima present, then EVM over the
 * metadata (evm_verifyxattr), then the content against security.ima.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib_private.h"
#include "uevm_internal.h"

/* A change stamp to tell whether the content moved while we hashed it. */
bool ima_same_content_stamp(const struct stat *a, const struct stat *b)
{
	return a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Hash F's content, failing with -ESTALE if it changed meanwhile.  The
 * stamp the content had while hashed goes to *HASHED when not NULL.
 * (With multigrain timestamps, Linux 6.13+, a change after our fstat
 * always moves ctime; older kernels can miss a same-size rewrite made
 * within the same clock tick as the first fstat.) */
int ima_collect_stable_from(const struct uevm_file *f, int algo,
			    uint8_t *digest, const struct stat *before,
			    struct stat *hashed)
{
	struct stat now, after;
	int ret;

	if (!before) {
		if (fstat(f->fd, &now) < 0)
			return uevm_err(errno, "stat failed: %m");
		before = &now;
	}
	ret = hash_fd_sized(f->fd, algo, before->st_size, digest);
	if (ret)
		return ret;
	if (fstat(f->fd, &after) < 0)
		return uevm_err(errno, "stat failed: %m");
	if (!ima_same_content_stamp(before, &after))
		return uevm_err(ESTALE, "file changed while it was being hashed "
				"(size %lld -> %lld bytes)", (long long)before->st_size,
				(long long)after.st_size);
	if (hashed)
		*hashed = after;
	return 0;
}

int ima_collect_stable_stat(const struct uevm_file *f, int algo,
			    uint8_t *digest, struct stat *hashed)
{
	return ima_collect_stable_from(f, algo, digest, NULL, hashed);
}

int ima_collect_stable(const struct uevm_file *f, int algo, uint8_t *digest)
{
	return ima_collect_stable_stat(f, algo, digest, NULL);
}

static void set(struct uevm_verdict *v, enum integrity_status st,
		const char *cause)
{
	v->status = st;
	v->cause = cause;
}

/*
 * The kernel's appraisal after security.ima was read and v->evm_status is
 * known: act on the EVM status, then check the value against the content.
 * DIG caches the collected digest: reused when its algorithm fits, filled
 * otherwise, so that a hook measuring the file hashes it only once.
 */
int ima_appraise_value(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       const uint8_t *buf, size_t n, unsigned int flags,
		       struct ima_digest *dig, struct uevm_verdict *v)
{
	struct uevm_xattr_value iv;
	int ret = 0;

	(void)ctx;
	switch (v->evm_status) {
	case INTEGRITY_PASS:
	case INTEGRITY_PASS_IMMUTABLE:
	case INTEGRITY_UNKNOWN:
		break;
	case INTEGRITY_NOXATTRS:
	case INTEGRITY_NOLABEL:
		set(v, v->evm_status, "missing-HMAC");
		return ret;
	case INTEGRITY_FAIL_IMMUTABLE:
		set(v, INTEGRITY_FAIL_IMMUTABLE, "invalid-fail-immutable");
		return ret;
	default:
		set(v, INTEGRITY_FAIL, "invalid-HMAC");
		return ret;
	}
	v->detail[0] = '\0';

	/* Signatures are checked whole, malformed ones included, with the
	 * kernel's causes (lib/sig_appraise.c). */
	if (buf[0] == EVM_IMA_XATTR_DIGSIG)
		return ima_appraise_digsig(ctx, f, buf, n, dig, v);
	if (ima_xattr_parse(buf, (size_t)n, &iv) < 0) {
		/* The kernel's xattr_verify names a bad value by its type. */
		const char *cause = buf[0] == IMA_XATTR_DIGEST ||
				    buf[0] == IMA_XATTR_DIGEST_NG ? "invalid-hash" :
				    buf[0] == EVM_IMA_XATTR_DIGSIG ? "invalid-signature" :
				    buf[0] == IMA_VERITY_DIGSIG ? "invalid-verity-signature" :
				    NULL;

		v->ima_status = cause ? INTEGRITY_FAIL : INTEGRITY_UNKNOWN;
		set(v, v->ima_status, cause ? cause : "unknown-ima-data");
		snprintf(v->detail, sizeof(v->detail), "security.ima: %s",
			 uevm_last_error());
		return ret;
	}
	switch (iv.type) {
	case IMA_XATTR_DIGEST:
	case IMA_XATTR_DIGEST_NG:
		if (flags & IMA_APPRAISE_DIGSIG_REQUIRED &&
		    v->evm_status != INTEGRITY_PASS_IMMUTABLE) {
			v->ima_status = INTEGRITY_FAIL;
			set(v, INTEGRITY_FAIL, "IMA-signature-required");
			snprintf(v->detail, sizeof(v->detail),
				 "the policy requires an IMA signature, security.ima holds a hash");
			return 0;
		}
		if (!uevm_hash_algo_available(iv.algo)) {
			v->ima_status = INTEGRITY_FAIL;
			set(v, INTEGRITY_FAIL, "invalid-hash");
			snprintf(v->detail, sizeof(v->detail),
				 "hash algorithm %s is not available",
				 uevm_hash_algo_name(iv.algo));
			return ret;
		}
		if (dig->algo != iv.algo) {
			ret = ima_collect_stable_from(f, iv.algo, dig->d,
						      dig->before, NULL);
			if (ret)
				return ret;
			dig->algo = iv.algo;
		}
		if (memcmp(dig->d, iv.digest, uevm_hash_algo_digest_size(iv.algo))) {
			v->ima_status = INTEGRITY_FAIL;
			set(v, INTEGRITY_FAIL, "invalid-hash");
			snprintf(v->detail, sizeof(v->detail),
				 "content does not match its %s hash",
				 uevm_hash_algo_name(iv.algo));
			return ret;
		}
		v->ima_status = INTEGRITY_PASS;
		/* An immutable EVM signature keeps its status on success. */
		set(v, v->evm_status == INTEGRITY_PASS_IMMUTABLE ?
			       INTEGRITY_PASS_IMMUTABLE : INTEGRITY_PASS, NULL);
		if (v->evm_status == INTEGRITY_UNKNOWN) {
			set(v, INTEGRITY_UNKNOWN, "unknown");
			snprintf(v->detail, sizeof(v->detail),
				 "content matches but EVM status is unknown");
		}
		break;
	case EVM_IMA_XATTR_DIGSIG:
		ret = ima_appraise_digsig(ctx, f, buf, n, dig, v);
		break;
	default:
		v->ima_status = INTEGRITY_FAIL;
		set(v, INTEGRITY_FAIL, "invalid-verity-signature");
		snprintf(v->detail, sizeof(v->detail),
			 "fs-verity signatures are not supported");
		break;
	}
	return ret;
}

int xattr_value_algo(bool ima, const uint8_t *buf, size_t n)
{
	const char *err = uevm_last_error();
	char saved[sizeof(((struct uevm_verdict *)0)->detail) * 4];
	struct uevm_xattr_value xv;
	int r;

	/* A parse failure words an error: keep the one the caller has. */
	snprintf(saved, sizeof(saved), "%s", err);
	r = ima ? ima_xattr_parse(buf, n, &xv) : evm_xattr_parse(buf, n, &xv);
	if (r) {
		uevm_err(0, "%s", saved);
		return -1;
	}
	/* An HMAC (type 2) is keyed: SHA-1 collisions do not help. */
	return xv.type != EVM_XATTR_HMAC ? xv.algo : -1;
}

static int appraise_regular(const struct uevm_ctx *ctx,
			    const struct uevm_file *f, unsigned int flags,
			    struct uevm_verdict *v)
{
	struct ima_digest dig = { .algo = -1 };
	const struct stat *st = NULL;
	uint8_t *buf = NULL;
	size_t size = 0;
	struct stat now;
	ssize_t n;
	int ret = 0;

	n = uevm_getxattr_alloc(f, XATTR_NAME_IMA, &buf, &size);
	if (n == -ENODATA || n == 0) {
		v->ima_algo = -1;
		set(v, INTEGRITY_NOLABEL, flags & IMA_APPRAISE_DIGSIG_REQUIRED ?
			       "IMA-signature-required" : "missing-hash");
		v->ima_status = INTEGRITY_NOLABEL;
		snprintf(v->detail, sizeof(v->detail), "%s",
			 n ? "no security.ima" : "security.ima is empty");
		/* EVM still tells whether the metadata was touched. */
		v->evm_status = evm_verify_with(ctx, f, NULL, NULL, NULL, 0,
						NULL, 0, &v->evm_algo);
		goto out;
	}
	if (n < 0) {
		set(v, INTEGRITY_UNKNOWN, "unknown");
		v->ima_status = INTEGRITY_UNKNOWN;
		snprintf(v->detail, sizeof(v->detail), "%s: %s",
			 n == -EOPNOTSUPP ? XATTR_UNSUPPORTED : "cannot read security.ima",
			 strerror((int)-n));
		goto out;
	}
	v->ima_algo = xattr_value_algo(true, buf, (size_t)n);

	/*
	 * One stat of the file serves the HMAC's metadata and stands for the
	 * one before hashing, which the stat after it is compared with.  In
	 * a CLI walk (the context caches per filesystem) F was opened and
	 * stat'ed just before: that stat is used.  A caller's F may be older
	 * (a daemon's): a fresh one then.
	 */
	if (ctx->uuid_cache)
		st = &f->st;
	else if (fstat(f->fd, &now) == 0)
		st = &now;
	/* The HMAC over the very security.ima value checked below. */
	v->evm_status = evm_verify_with(ctx, f, st, XATTR_NAME_IMA, buf,
					(size_t)n, v->detail,
					sizeof(v->detail), &v->evm_algo);
	/* Unless a valid EVM signature may just have been replaced by an
	 * HMAC (--fix-evm-sig): that write moved ctime, so the stat before
	 * hashing is taken after it. */
	if (!(ctx->flags & UEVM_CTX_EVM_SIG_TO_HMAC))
		dig.before = st;
	ret = ima_appraise_value(ctx, f, buf, (size_t)n, flags, &dig, v);
out:
	free(buf);
	return ret;
}

static const char *evm_cause(enum integrity_status st)
{
	switch (st) {
	case INTEGRITY_PASS:
	case INTEGRITY_PASS_IMMUTABLE:
	case INTEGRITY_NOXATTRS:
		return NULL;
	case INTEGRITY_NOLABEL:
		return "missing-HMAC";
	case INTEGRITY_FAIL_IMMUTABLE:
		return "invalid-fail-immutable";
	case INTEGRITY_UNKNOWN:
		return "unknown";
	default:
		return "invalid-HMAC";
	}
}

/* EXTRA: UEVM_CTX_* flags of uevm/sig.h for this call (a policy rule's
 * appraise_type=imasig), added to the context's. */
UEVM_EXPORT int uevm_verify_file_flags(const struct uevm_ctx *ctx,
				       const struct uevm_file *f,
				       unsigned int extra,
				       struct uevm_verdict *v)
{
	unsigned int flags = (ctx->flags | extra) & UEVM_CTX_IMASIG_REQUIRED ?
				     IMA_APPRAISE_DIGSIG_REQUIRED : 0;

	memset(v, 0, sizeof(*v));
	v->ima_status = INTEGRITY_UNKNOWN;
	v->ima_algo = v->evm_algo = -2;
	if (S_ISREG(f->st.st_mode))
		return appraise_regular(ctx, f, flags, v);
	v->evm_status = evm_verify_with(ctx, f, NULL, NULL, NULL, 0, v->detail,
					sizeof(v->detail), &v->evm_algo);
	set(v, v->evm_status, evm_cause(v->evm_status));
	return 0;
}

UEVM_EXPORT int uevm_verify_file(const struct uevm_ctx *ctx,
				 const struct uevm_file *f,
				 struct uevm_verdict *v)
{
	return uevm_verify_file_flags(ctx, f, 0, v);
}

UEVM_EXPORT bool uevm_verdict_ok(const struct uevm_file *f,
				 const struct uevm_verdict *v)
{
	if (v->status == INTEGRITY_PASS || v->status == INTEGRITY_PASS_IMMUTABLE)
		return true;
	return v->status == INTEGRITY_NOXATTRS && !S_ISREG(f->st.st_mode);
}

/* The public, opaque verdict: one allocation, reused for many files. */
UEVM_EXPORT int uevm_verdict_new(struct uevm_verdict **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : uevm_err(ENOMEM, "out of memory");
}

UEVM_EXPORT void uevm_verdict_free(struct uevm_verdict *v)
{
	free(v);
}

UEVM_EXPORT enum integrity_status uevm_verdict_status(const struct uevm_verdict *v)
{
	return v->status;
}

UEVM_EXPORT enum integrity_status uevm_verdict_evm_status(const struct uevm_verdict *v)
{
	return v->evm_status;
}

UEVM_EXPORT enum integrity_status uevm_verdict_ima_status(const struct uevm_verdict *v)
{
	return v->ima_status;
}

UEVM_EXPORT const char *uevm_verdict_cause(const struct uevm_verdict *v)
{
	return v->cause;
}

UEVM_EXPORT const char *uevm_verdict_detail(const struct uevm_verdict *v)
{
	return v->detail;
}

/* The security.ima value (OUT, *OUT_LEN) of DIGEST, of the context's
 * algorithm: the common tail of label_hash and ima_calc_xattr_stat. */
static int ima_value_of(const struct uevm_ctx *ctx, const uint8_t *digest,
			uint8_t *out, size_t *out_len)
{
	int ret = uevm_ima_xattr_format(ctx->cfg.hash_algo, digest, out);

	if (ret < 0)
		return ret;
	*out_len = (size_t)ret;
	return 0;
}

/* The security.ima value of F's content, and the stamp it was hashed at. */
static int ima_calc_xattr_stat(const struct uevm_ctx *ctx,
			       const struct uevm_file *f, uint8_t *out,
			       size_t *out_len, const struct stat *before,
			       struct stat *hashed)
{
	uint8_t digest[UEVM_MAX_DIGEST_SIZE];
	int ret;

	if (!S_ISREG(f->st.st_mode) || !f->io)
		return uevm_err(EINVAL, "not a regular file");
	ret = ima_collect_stable_from(f, ctx->cfg.hash_algo, digest, before,
				      hashed);
	if (ret)
		return ret;
	return ima_value_of(ctx, digest, out, out_len);
}

UEVM_EXPORT int uevm_ima_calc_xattr(const struct uevm_ctx *ctx,
				    const struct uevm_file *f, uint8_t *out,
				    size_t *out_len)
{
	return ima_calc_xattr_stat(ctx, f, out, out_len, NULL, NULL);
}

/* Attempts at labelling a file whose content keeps changing. */
#define LABEL_TRIES 3

/* The security.ima value of F's content as hashed now, from the SIZE its
 * stat said before; whether it stayed put is checked by the caller. */
static int label_hash(const struct uevm_ctx *ctx, const struct uevm_file *f,
		      off_t size, uint8_t *out, size_t *out_len)
{
	uint8_t digest[UEVM_MAX_DIGEST_SIZE];
	int ret;

	if (!f->io)
		return uevm_err(EINVAL, "not a regular file");
	ret = hash_fd_sized(f->fd, ctx->cfg.hash_algo, size, digest);
	if (ret)
		return ret;
	return ima_value_of(ctx, digest, out, out_len);
}

static int label_file(const struct uevm_ctx *ctx, const struct uevm_file *f)
{
	uint8_t val[2 + UEVM_MAX_DIGEST_SIZE];
	struct stat st[2];
	const struct stat *before;
	size_t len = 0;
	int ret;

	if (!S_ISREG(f->st.st_mode))
		return uevm_evm_update_evmxattr(ctx, f);
	/* F's stat from its opening stands for the one before hashing: it
	 * is older, so a change since then is seen as well, and only costs
	 * another try.  A file being written is hashed again, a few times
	 * at most: its label must be the hash of content it really had. */
	before = &f->st;
	for (int tries = 1; ; tries++) {
		struct stat *now = &st[tries & 1];

		ret = label_hash(ctx, f, before->st_size, val, &len);
		if (ret)
			return ret;
		/* Crash and failure safety, and the one stat after the hash:
		 * see ima_label_write.c. */
		ret = ima_write_labels_checked(ctx, f, val, len, before, now);
		if (ret <= 0)
			return ret;
		if (tries >= LABEL_TRIES)
			return uevm_err(ESTALE, "file kept changing while it was being "
					"hashed (%d tries)", tries);
		before = now;
	}
}

UEVM_EXPORT int uevm_label_file(const struct uevm_ctx *ctx,
				const struct uevm_file *f)
{
	int ret = label_file(ctx, f);

	/* Without security.* xattrs something fails first (the HMAC's
	 * UUID, a read): name the cause, not that step.  Only on failure,
	 * so labelling costs no extra call. */
	if (ret && xattr_check_support(f))
		return -EOPNOTSUPP;
	return ret;
}
