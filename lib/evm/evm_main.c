// SPDX-License-Identifier: LGPL-2.1-or-later
/* EVM verification: the kernel's evm_verify_hmac for one file object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib_private.h"

/*
 * Is any protected xattr there?  As the kernel's evm_find_protected_xattrs:
 * 1 yes, 0 none, or the error of one that cannot be read (-EUCLEAN from a
 * damaged EA inode, -EIO): that is not "absent", or a file whose labels are
 * unreadable would pass as one that never had any.
 */
static int find_protected_xattr(const struct uevm_ctx *ctx,
				const struct uevm_file *f, const char **bad)
{
	struct xattr_names names;
	uint8_t *buf = NULL;
	size_t size = 0;
	int found = 0;

	/* One listing instead of a getxattr per protected name: an unlabelled
	 * directory or symlink cost nine calls.  Where the listing is not
	 * trusted for absence (or failed), xattr_names_has says -1 and every
	 * name is still asked for; a listed one is read, so that an unreadable
	 * value is still an error, not "absent". */
	xattr_names_load(ctx, f, &names);
	for (size_t i = 0; i < ctx->nxattrs && !found; i++) {
		ssize_t n;

		if (!xattr_names_has(&names, ctx->xattrs[i]))
			continue;
		n = uevm_getxattr_alloc(f, ctx->xattrs[i], &buf, &size);
		if (n >= 0) {
			found = 1;
		} else if (n != -ENODATA && n != -EOPNOTSUPP) {
			*bad = ctx->xattrs[i];
			found = (int)n;
		}
	}
	free(buf);
	xattr_names_free(&names);
	return found;
}

#define DETAIL(...) (detail ? (void)snprintf(detail, detail_len, __VA_ARGS__) : (void)0)

/*
 * As the kernel's evm_verifyxattr(dentry, XATTR_NAME_IMA, value, len): the
 * HMAC is checked over REQ_VALUE, the security.ima value the caller read
 * and is about to check the content against, not over a second read of
 * it, which could differ (and costs a call).  REQ_NAME NULL: read all.
 */
enum integrity_status evm_verify_with(const struct uevm_ctx *ctx,
				      const struct uevm_file *f,
				      const struct stat *st_in,
				      const char *req_name,
				      const uint8_t *req_value, size_t req_len,
				      char *detail, size_t detail_len,
				      int *evm_algo)
{
	struct uevm_xattr_value v;
	uint8_t hmac[UEVM_HMAC_SIZE];
	uint8_t *buf = NULL;
	size_t size = 0;
	enum integrity_status st;
	ssize_t n;
	int ret;

	if (detail && detail_len)
		detail[0] = '\0';
	n = uevm_getxattr_alloc(f, XATTR_NAME_EVM, &buf, &size);
	/* For the caller's weak-hash check, which then needs no read. */
	if (evm_algo && (n == -ENODATA || n == 0))
		*evm_algo = -1;
	else if (evm_algo && n > 0)
		*evm_algo = xattr_value_algo(false, buf, (size_t)n);
	if (n == -ENODATA) {
		const char *bad = NULL;
		int found = find_protected_xattr(ctx, f, &bad);

		if (found < 0) {
			st = INTEGRITY_FAIL;
			DETAIL("cannot read %s: %s", bad, strerror(-found));
		} else {
			st = found ? INTEGRITY_NOLABEL : INTEGRITY_NOXATTRS;
			DETAIL("%s", found ? "no security.evm" : "no EVM-protected xattr");
		}
		goto out;
	}
	if (n == -EOPNOTSUPP) {
		st = INTEGRITY_UNKNOWN;
		DETAIL(XATTR_UNSUPPORTED ": %s", strerror(EOPNOTSUPP));
		goto out;
	}
	if (n <= 0) {
		st = INTEGRITY_FAIL;
		DETAIL("security.evm %s", n == 0 ? "is empty" : strerror((int)-n));
		goto out;
	}
	if (buf[0] == EVM_IMA_XATTR_DIGSIG || buf[0] == EVM_XATTR_PORTABLE_DIGSIG) {
		st = evm_verify_digsig(ctx, f, buf, (size_t)n, detail, detail_len);
		goto out;
	}
	if (evm_xattr_parse(buf, (size_t)n, &v) < 0) {
		st = INTEGRITY_FAIL;
		DETAIL("security.evm: %s", uevm_last_error());
		goto out;
	}
	switch (v.type) {
	case EVM_XATTR_HMAC:
		if (!ctx->key) {
			st = INTEGRITY_UNKNOWN;
			DETAIL("no HMAC key loaded");
			break;
		}
		if (st_in) {
			struct xattr_names names;

			xattr_names_load(ctx, f, &names);
			ret = evm_calc_hmac_with(ctx, f, st_in, &names, req_name,
						 req_value, req_len, hmac);
			xattr_names_free(&names);
		} else {
			ret = uevm_evm_calc_hmac(ctx, f, req_name, req_value,
						 req_len, hmac);
		}
		if (ret == -ENODATA) {
			st = INTEGRITY_NOXATTRS;
			DETAIL("security.evm present but no protected xattr");
		} else if (ret < 0) {
			st = INTEGRITY_FAIL;
			DETAIL("%s", uevm_last_error());
		} else if (uevm_memneq(hmac, v.digest, UEVM_HMAC_SIZE)) {
			st = INTEGRITY_FAIL;
			DETAIL("HMAC mismatch: metadata or protected xattrs changed");
		} else {
			st = INTEGRITY_PASS;
		}
		explicit_bzero(hmac, sizeof(hmac));
		break;
	default:
		/* Signature types went to evm_verify_digsig above. */
		st = INTEGRITY_FAIL;
		DETAIL("security.evm: unexpected type 0x%02x", v.type);
		break;
	}
out:
	free(buf);
	return st;
}

UEVM_EXPORT enum integrity_status uevm_evm_verify(const struct uevm_ctx *ctx,
						  const struct uevm_file *f,
						  char *detail,
						  size_t detail_len)
{
	return evm_verify_with(ctx, f, NULL, NULL, NULL, 0, detail, detail_len,
			       NULL);
}
