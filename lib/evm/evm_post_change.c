// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Changes a front-end learns of only after they were made.  The kernel
 * checks a chmod, chown or setxattr in evm_inode_setattr/setxattr before
 * it happens; a fanotify front-end has no such hook and is told afterwards
 * (FAN_ATTRIB).  The same rule still holds: a protected change may be
 * blessed with a new HMAC only if the file was good before it.  "Before"
 * is the status the cache holds from the last check, read without the
 * change stamp (which the change itself has moved).
 */
#include "integrity_private.h"

static bool is_pass(enum integrity_status st)
{
	return st == INTEGRITY_PASS || st == INTEGRITY_PASS_IMMUTABLE;
}

UEVM_EXPORT int integrity_inode_post_change(struct integrity_sys *s,
					    const struct integrity_event *ev)
{
	const struct uevm_file *f = ev->file;
	enum integrity_status before = INTEGRITY_UNKNOWN, now;
	enum integrity_mode mode = integrity_sys_mode(s);
	struct integrity_iint_cache *iint;
	uint32_t flags = 0, gen = 0;
	bool allowed;

	if (mode == INTEGRITY_MODE_OFF || evm_hmac_disabled(s) || !f->io ||
	    !S_ISREG(f->st.st_mode))
		return 0;
	if (uevm_file_generation(f, &gen) < 0)
		return -EIO;
	iint = integrity_iint_find(s->cache, f->st.st_dev, f->st.st_ino, gen);
	if (iint) {
		integrity_iint_lock(iint);
		before = integrity_iint_evm_status(iint);
		flags = integrity_iint_flags(iint);
		integrity_iint_unlock(iint);
		integrity_iint_put(s->cache, iint);
	}

	/* Timestamps, link counts and unprotected xattrs leave the HMAC valid. */
	now = uevm_evm_verify(s->ctx, f, NULL, 0);
	if (is_pass(now) || now == INTEGRITY_NOXATTRS ||
	    now == INTEGRITY_FAIL_IMMUTABLE)
		return 0;

	allowed = is_pass(before) || (flags & (IMA_NEW_FILE | EVM_NEW_FILE)) ||
		  mode == INTEGRITY_MODE_FIX;
	if (!allowed) {
		/* No laundering: what failed (or was never seen) keeps failing. */
		integrity_audit_msg(s, AUDIT_INTEGRITY_METADATA, f, ev->filename,
				    ev->cred, "update_metadata",
				    integrity_status_name(before), -EPERM, false);
		return -EPERM;
	}

	/* The changed stamp drops IMA's results: the next open appraises. */
	iint = integrity_inode_get(s, f);
	if (iint)
		integrity_iint_lock(iint);
	evm_update_locked(s, ev, iint);
	if (iint) {
		/* Our own new HMAC: record its status, so that a further
		 * change (chmod after chown) is judged against it. */
		integrity_iint_set_evm_status(iint, uevm_evm_verify(s->ctx, f, NULL, 0));
		integrity_iint_unlock(iint);
		integrity_iint_put(s->cache, iint);
	}
	return 0;
}
