// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Writing a regular file's labels: security.ima, then security.evm.
 *
 * Why this order is safe if we are killed between the two writes: EVM's
 * HMAC covers the security.ima value, so the stale security.evm that is
 * left was computed over the old value and fails against the new one
 * (invalid-HMAC), and an unchanged security.ima is never rewritten.  No
 * state in between verifies PASS for content that was not hashed.
 *
 * Why the HMAC is computed before anything is written: with the new
 * security.ima value in place of the stored one, as the kernel's
 * evm_inode_post_setxattr does.  Whatever would stop the security.evm
 * write before it starts (no key, no filesystem UUID, an unreadable
 * protected xattr) then fails with the file untouched.
 *
 * Why the old security.ima is put back when the security.evm write fails
 * (ENOSPC, EDQUOT, EIO, ...): each setxattr is atomic, so that leaves the
 * file exactly as it was, never half-labelled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib_private.h"

/*
 * BEFORE: the stat F's content had before it was hashed into VAL, or NULL
 * (then the HMAC's metadata is a fresh fstat, and nothing is compared).
 * One listxattr says which xattrs there are: the old security.ima and the
 * protected values are read only if listed.
 *
 * With BEFORE, the one fstat taken after the hash is taken here, after
 * the xattrs were read and just before the writes: it sees a change of
 * the content while it was hashed and until now (size, mtime, ctime:
 * ctime also moves on a chmod, a chown or another xattr write), and its
 * metadata is what the HMAC covers.  Nothing is checked after the writes:
 * they move ctime themselves, and a change in the two calls' window leaves
 * a security.ima that does not match, which verify reports.
 */
int ima_write_labels_checked(const struct uevm_ctx *ctx,
			     const struct uevm_file *f, const uint8_t *val,
			     size_t len, const struct stat *before,
			     struct stat *now)
{
	const struct stat *st = NULL;
	uint8_t evm[UEVM_EVM_HMAC_XATTR_SIZE];
	struct xattr_names names;
	uint8_t *old = NULL;
	size_t oldsize = 0;
	ssize_t oldlen = -ENODATA;
	bool changed;
	int ret, undo;

	xattr_names_load(ctx, f, &names);
	if (xattr_names_has(&names, XATTR_NAME_IMA))
		oldlen = uevm_getxattr_alloc(f, XATTR_NAME_IMA, &old, &oldsize);
	if (oldlen < 0 && oldlen != -ENODATA) {
		ret = uevm_err((int)-oldlen, "cannot read security.ima: %s",
			       strerror((int)-oldlen));
		goto out;
	}
	if (before) {
		if (fstat(f->fd, now) < 0) {
			ret = uevm_err(errno, "stat failed: %m");
			goto out;
		}
		if (!ima_same_content_stamp(before, now)) {
			ret = 1;
			goto out;
		}
		st = now;
	}
	ret = evm_calc_hmac_with(ctx, f, st, &names, XATTR_NAME_IMA, val, len,
				 evm + 1);
	if (ret)
		goto out;
	evm[0] = EVM_XATTR_HMAC;

	/* Rewriting an identical value would only churn ctime. */
	changed = oldlen < 0 || (size_t)oldlen != len || memcmp(old, val, len);
	if (changed) {
		ret = uevm_setxattr(f, XATTR_NAME_IMA, val, len);
		if (ret) {
			ret = uevm_err(-ret, "cannot write security.ima: %s",
				       strerror(-ret));
			goto out;
		}
	}
	ret = uevm_setxattr(f, XATTR_NAME_EVM, evm, sizeof(evm));
	if (!ret)
		goto out;
	if (!changed)
		undo = 0;
	else if (oldlen >= 0)
		undo = uevm_setxattr(f, XATTR_NAME_IMA, old, (size_t)oldlen);
	else
		undo = uevm_removexattr(f, XATTR_NAME_IMA);
	if (undo)
		ret = uevm_err(-ret, "cannot write security.evm: %s; the new "
			       "security.ima could not be taken back either: %s",
			       strerror(-ret), strerror(-undo));
	else
		ret = uevm_err(-ret, "cannot write security.evm: %s%s",
			       strerror(-ret), changed ?
			       " (security.ima left as it was)" : "");
out:
	explicit_bzero(evm, sizeof(evm));
	xattr_names_free(&names);
	free(old);
	return ret;
}

int ima_write_labels(const struct uevm_ctx *ctx, const struct uevm_file *f,
		     const uint8_t *val, size_t len)
{
	return ima_write_labels_checked(ctx, f, val, len, NULL, NULL);
}
