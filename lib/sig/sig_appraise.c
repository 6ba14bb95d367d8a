// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Signatures in verification: the signature branches of the kernel's
 * evm_verify_hmac (EVM_IMA_XATTR_DIGSIG, EVM_XATTR_PORTABLE_DIGSIG) and of
 * ima_appraise's xattr_verify (EVM_IMA_XATTR_DIGSIG), with the kernel's
 * statuses and causes, and the context's certificate set.
 */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statvfs.h>
#include <linux/fs.h>
#include <openssl/err.h>
#include "sig_private.h"

#define DETAIL(...) (detail ? (void)snprintf(detail, detail_len, __VA_ARGS__) : (void)0)

UEVM_EXPORT int uevm_ctx_add_certs(struct uevm_ctx *ctx, const char *path)
{
	int ret;

	if (!ctx->certs) {
		ret = uevm_certset_new(&ctx->certs);
		if (ret)
			return ret;
	}
	ret = uevm_certset_add_file(ctx->certs, path);
	return ret < 0 ? ret : 0;
}

UEVM_EXPORT const struct uevm_certset *uevm_ctx_certs(const struct uevm_ctx *ctx)
{
	return ctx->certs;
}

UEVM_EXPORT void uevm_ctx_set_flags(struct uevm_ctx *ctx, unsigned int flags)
{
	ctx->flags = flags;
}

UEVM_EXPORT unsigned int uevm_ctx_flags(const struct uevm_ctx *ctx)
{
	return ctx->flags;
}

/* The kernel leaves a signature in place on read-only mounts and on
 * immutable inodes (IS_RDONLY, IS_IMMUTABLE). */
static bool can_rewrite(const struct uevm_file *f)
{
	struct statvfs sv;
	int fd = f->io ? f->fd : f->dirfd;
	int flags = 0;

	if (fd < 0 || fstatvfs(fd, &sv) < 0 || (sv.f_flag & ST_RDONLY))
		return false;
	if (f->io && ioctl(f->fd, FS_IOC_GETFLAGS, &flags) == 0 &&
	    (flags & FS_IMMUTABLE_FL))
		return false;
	return true;
}

enum integrity_status evm_verify_digsig(const struct uevm_ctx *ctx,
					const struct uevm_file *f,
					const uint8_t *val, size_t len,
					char *detail, size_t detail_len)
{
	bool portable = val[0] == EVM_XATTR_PORTABLE_DIGSIG;
	enum integrity_status fail = portable ? INTEGRITY_FAIL_IMMUTABLE
					      : INTEGRITY_FAIL;
	uint8_t digest[UEVM_MAX_DIGEST_SIZE];
	struct uevm_xattr_value sv;
	int ret;

	/* "accept xattr with non-empty signature field": shorter is FAIL
	 * before the portable type counts. */
	if (len <= UEVM_SIG_HDR_SIZE) {
		DETAIL("security.evm: signature header truncated (%zu bytes)", len);
		return INTEGRITY_FAIL;
	}
	if (evm_xattr_parse(val, len, &sv) < 0) {
		DETAIL("security.evm: %s", uevm_last_error());
		return fail;
	}
	if (!uevm_certset_count(ctx->certs)) {
		/* No key of either kind: EVM is not initialised at all. */
		DETAIL("EVM signature (type 0x%02x) but no certificate loaded",
		       val[0]);
		return ctx->key ? fail : INTEGRITY_UNKNOWN;
	}
	ret = uevm_evm_calc_hash(ctx, f, val[0], sv.algo, NULL, NULL, 0, digest);
	if (ret == -ENODATA && !portable) {
		DETAIL("security.evm present but no protected xattr");
		return INTEGRITY_NOXATTRS;
	}
	if (ret) {
		DETAIL("%s", uevm_last_error());
		return fail;
	}
	ret = uevm_sig_verify(ctx->certs, val, len, digest,
			      uevm_hash_algo_digest_size(sv.algo));
	ERR_clear_error();
	if (ret) {
		DETAIL("EVM signature: %s", uevm_last_error());
		return fail;
	}
	if (portable)
		return INTEGRITY_PASS_IMMUTABLE;
	/* evm_verify_hmac: "Replace RSA with HMAC if not mounted readonly
	 * and not immutable" -- here only when asked (see sig.h). */
	if ((ctx->flags & UEVM_CTX_EVM_SIG_TO_HMAC) && ctx->key && can_rewrite(f)) {
		ret = uevm_evm_update_evmxattr(ctx, f);
		if (ret)
			DETAIL("EVM signature valid; replacing it by an HMAC failed: %s",
			       uevm_last_error());
		else
			DETAIL("EVM signature valid; replaced by an HMAC");
	}
	return INTEGRITY_PASS;
}

static void set(struct uevm_verdict *v, enum integrity_status st,
		const char *cause)
{
	v->status = st;
	v->cause = cause;
	v->ima_status = st;
}

int ima_appraise_digsig(const struct uevm_ctx *ctx, const struct uevm_file *f,
			const uint8_t *val, size_t len, struct ima_digest *dig,
			struct uevm_verdict *v)
{
	int algo, ret;

	if (len > 1 && val[1] > 3) {
		set(v, INTEGRITY_FAIL, "invalid-signature-version");
		snprintf(v->detail, sizeof(v->detail),
			 "security.ima: signature version %u", val[1]);
		return 0;
	}
	if (len <= UEVM_SIG_HDR_SIZE) {
		set(v, INTEGRITY_FAIL, "invalid-signature");
		snprintf(v->detail, sizeof(v->detail),
			 "security.ima: signature header truncated (%zu bytes)", len);
		return 0;
	}
	if (val[1] < 2) {
		/* Version 1 (RSA "digsig") is not supported; 0 is unknown to
		 * integrity_digsig_verify (-EOPNOTSUPP: status unknown). */
		set(v, val[1] ? INTEGRITY_FAIL : INTEGRITY_UNKNOWN,
		    val[1] ? "invalid-signature" : "unknown");
		snprintf(v->detail, sizeof(v->detail),
			 "security.ima: signature version %u is not supported", val[1]);
		return 0;
	}
	algo = val[2];
	if (!uevm_hash_algo_available(algo)) {
		set(v, INTEGRITY_FAIL, "invalid-signature");
		snprintf(v->detail, sizeof(v->detail),
			 "security.ima: signature hash algorithm id %d is not available",
			 algo);
		return 0;
	}
	if (!uevm_certset_count(ctx->certs)) {
		set(v, INTEGRITY_FAIL, "invalid-signature");
		snprintf(v->detail, sizeof(v->detail),
			 "IMA signature but no certificate loaded");
		return 0;
	}
	/* The content is hashed with the signature's algorithm (the kernel's
	 * ima_get_hash_algo). */
	if (dig->algo != algo) {
		ret = ima_collect_stable_from(f, algo, dig->d, dig->before,
					      NULL);
		if (ret)
			return ret;
		dig->algo = algo;
	}
	ret = uevm_sig_verify(ctx->certs, val, len, dig->d,
			      uevm_hash_algo_digest_size(algo));
	ERR_clear_error();
	if (ret) {
		set(v, INTEGRITY_FAIL, "invalid-signature");
		snprintf(v->detail, sizeof(v->detail), "IMA signature: %s",
			 uevm_last_error());
		return 0;
	}
	v->ima_status = INTEGRITY_PASS;
	/* As the hash branch: an immutable EVM signature keeps its status,
	 * an EVM status nobody could establish stays unknown. */
	v->status = v->evm_status == INTEGRITY_PASS_IMMUTABLE ?
			    INTEGRITY_PASS_IMMUTABLE : INTEGRITY_PASS;
	v->cause = NULL;
	if (v->evm_status == INTEGRITY_UNKNOWN) {
		v->status = INTEGRITY_UNKNOWN;
		v->cause = "unknown";
		snprintf(v->detail, sizeof(v->detail),
			 "IMA signature valid but EVM status is unknown");
	}
	return 0;
}
