// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The EVM hooks, with the kernel's rules (evm_main.c): security.evm is
 * written only as a signature and only with CAP_SYS_ADMIN; a protected
 * xattr or mode/uid/gid may change only while the file's EVM status allows
 * it, so an offline-tampered file cannot be "laundered" by an online
 * change; after a legitimate change the HMAC is recomputed.
 */
#include <stdlib.h>
#include <string.h>
#include "integrity_private.h"

#define CAP_SYS_ADMIN_BIT 21

static bool is_evm(const char *name)
{
	return name && !strcmp(name, XATTR_NAME_EVM);
}

static bool posix_xattr_acl(const char *name)
{
	return name && (!strcmp(name, "system.posix_acl_access") ||
			!strcmp(name, "system.posix_acl_default"));
}

/* The kernel's evm_revalidate_status(): changes that affect EVM. */
static bool evm_revalidate_status(struct integrity_sys *s, const char *name)
{
	return !name || is_evm(name) || posix_xattr_acl(name) ||
	       uevm_ctx_is_protected(s->ctx, name);
}

static bool evm_key_loaded(const struct integrity_sys *s)
{
	return atomic_load(&((struct integrity_sys *)s)->evm_bits) &
	       (EVM_INIT_HMAC | EVM_INIT_X509);
}

/* What a refusal becomes in the current mode: only enforce refuses. */
static int refuse(struct integrity_sys *s, int err)
{
	return integrity_sys_mode(s) == INTEGRITY_MODE_ENFORCE ? err : 0;
}

/* EVM status through the cache (evm_verify_hmac with an iint). */
static enum integrity_status evm_status_cached(struct integrity_sys *s,
					       const struct uevm_file *f,
					       struct integrity_iint_cache *iint)
{
	enum integrity_status st;

	if (iint) {
		integrity_iint_lock(iint);
		st = integrity_iint_evm_status(iint);
		if (st == INTEGRITY_PASS || st == INTEGRITY_PASS_IMMUTABLE) {
			integrity_iint_unlock(iint);
			return st;
		}
	}
	st = uevm_evm_verify(s->ctx, f, NULL, 0);
	if (iint) {
		integrity_iint_set_evm_status(iint, st);
		integrity_iint_unlock(iint);
	}
	return st;
}

UEVM_EXPORT enum integrity_status evm_verifyxattr(struct integrity_sys *s,
						  const struct uevm_file *f,
						  const char *name,
						  const void *value, size_t len)
{
	struct integrity_iint_cache *iint;
	enum integrity_status st;

	(void)value;
	(void)len;
	if (!evm_key_loaded(s) || !name || !uevm_ctx_is_protected(s->ctx, name))
		return INTEGRITY_UNKNOWN;
	iint = integrity_inode_get(s, f);
	st = evm_status_cached(s, f, iint);
	integrity_iint_put(s->cache, iint);
	return st;
}

UEVM_EXPORT enum integrity_status
evm_verify_current_integrity(struct integrity_sys *s, const struct uevm_file *f)
{
	struct integrity_iint_cache *iint;
	enum integrity_status st;

	/* As the kernel: no key, not a regular file, or fix mode: PASS. */
	if (!evm_key_loaded(s) || !S_ISREG(f->st.st_mode) ||
	    integrity_sys_mode(s) == INTEGRITY_MODE_FIX)
		return INTEGRITY_PASS;
	iint = integrity_inode_get(s, f);
	st = evm_status_cached(s, f, iint);
	integrity_iint_put(s->cache, iint);
	return st;
}

/* PASS_IMMUTABLE allows a "change" that leaves the value as it is. */
static bool evm_xattr_change(const struct integrity_event *ev)
{
	if (!ev->xattr_value) {
		uint8_t *buf = NULL;
		size_t size = 0;
		ssize_t n = uevm_getxattr_alloc(ev->file, ev->xattr_name, &buf, &size);

		free(buf);
		return n >= 0;	/* removing an existing value changes it */
	}
	return uevm_xattr_cmp(ev->file, ev->xattr_name, ev->xattr_value,
			      ev->xattr_len) != 0;
}

static bool evm_attr_change(const struct integrity_event *ev)
{
	const struct stat *st = &ev->file->st;

	return ((ev->ia_valid & ATTR_UID) && ev->ia_uid != st->st_uid) ||
	       ((ev->ia_valid & ATTR_GID) && ev->ia_gid != st->st_gid) ||
	       ((ev->ia_valid & ATTR_MODE) &&
		(ev->ia_mode & 07777) != (st->st_mode & 07777));
}

static void audit_metadata(struct integrity_sys *s,
			   const struct integrity_event *ev, const char *op,
			   const char *cause)
{
	integrity_audit_msg(s, AUDIT_INTEGRITY_METADATA, ev->file, ev->filename,
			    ev->cred, op, cause, -EPERM, false);
}

/* The kernel's evm_protect_xattr(). */
static int evm_protect_xattr(struct integrity_sys *s,
			     const struct integrity_event *ev)
{
	enum integrity_status st;

	if (is_evm(ev->xattr_name)) {
		if (!integrity_capable(ev->cred, CAP_SYS_ADMIN_BIT)) {
			audit_metadata(s, ev, "update_metadata", "no-CAP_SYS_ADMIN");
			return refuse(s, -EPERM);
		}
	} else if (!uevm_ctx_is_protected(s->ctx, ev->xattr_name)) {
		if (!posix_xattr_acl(ev->xattr_name))
			return 0;
		st = evm_verify_current_integrity(s, ev->file);
		if (st == INTEGRITY_PASS || st == INTEGRITY_NOXATTRS)
			return 0;
		goto out;
	}

	st = evm_verify_current_integrity(s, ev->file);
	if (st == INTEGRITY_NOXATTRS) {
		struct integrity_iint_cache *iint;
		bool new_file = false;

		/* No HMAC will be computed: nothing to keep consistent. */
		if (evm_hmac_disabled(s))
			return 0;
		iint = integrity_inode_get(s, ev->file);
		if (iint) {
			integrity_iint_lock(iint);
			new_file = integrity_iint_flags(iint) & (IMA_NEW_FILE | EVM_NEW_FILE);
			integrity_iint_unlock(iint);
			integrity_iint_put(s->cache, iint);
		}
		if (new_file)
			return 0;
		audit_metadata(s, ev, "update_metadata", integrity_status_name(st));
	}
out:
	if (evm_hmac_disabled(s) &&
	    (st == INTEGRITY_NOLABEL || st == INTEGRITY_UNKNOWN))
		return 0;
	/* A portable signature never changes: other xattrs may. */
	if (st == INTEGRITY_FAIL_IMMUTABLE)
		return 0;
	if (st == INTEGRITY_PASS_IMMUTABLE && !evm_xattr_change(ev))
		return 0;
	if (st == INTEGRITY_PASS)
		return 0;
	if (st != INTEGRITY_PASS_IMMUTABLE && st != INTEGRITY_NOXATTRS)
		audit_metadata(s, ev, "appraise_metadata", integrity_status_name(st));
	else if (st == INTEGRITY_PASS_IMMUTABLE)
		audit_metadata(s, ev, "appraise_metadata", "immutable-change");
	return refuse(s, -EPERM);
}

UEVM_EXPORT int evm_inode_setxattr(struct integrity_sys *s,
				   const struct integrity_event *ev)
{
	const uint8_t *v = ev->xattr_value;

	if (atomic_load(&s->evm_bits) & EVM_ALLOW_METADATA_WRITES)
		return 0;
	if (is_evm(ev->xattr_name)) {
		if (!ev->xattr_len)
			return refuse(s, -EINVAL);
		/* Userspace may install signatures, never an HMAC. */
		if (v[0] != EVM_IMA_XATTR_DIGSIG && v[0] != EVM_XATTR_PORTABLE_DIGSIG) {
			audit_metadata(s, ev, "update_metadata", "invalid-xattr-type");
			return refuse(s, -EPERM);
		}
	}
	return evm_protect_xattr(s, ev);
}

UEVM_EXPORT int evm_inode_removexattr(struct integrity_sys *s,
				      const struct integrity_event *ev)
{
	if (atomic_load(&s->evm_bits) & EVM_ALLOW_METADATA_WRITES)
		return 0;
	return evm_protect_xattr(s, ev);
}

UEVM_EXPORT int evm_inode_setattr(struct integrity_sys *s,
				  const struct integrity_event *ev)
{
	enum integrity_status st;

	if (!(ev->ia_valid & (ATTR_MODE | ATTR_UID | ATTR_GID)))
		return 0;
	if (atomic_load(&s->evm_bits) & EVM_ALLOW_METADATA_WRITES)
		return 0;
	st = evm_verify_current_integrity(s, ev->file);
	if (st == INTEGRITY_PASS || st == INTEGRITY_NOXATTRS ||
	    st == INTEGRITY_FAIL_IMMUTABLE ||
	    (evm_hmac_disabled(s) &&
	     (st == INTEGRITY_NOLABEL || st == INTEGRITY_UNKNOWN)))
		return 0;
	if (st == INTEGRITY_PASS_IMMUTABLE && !evm_attr_change(ev))
		return 0;
	audit_metadata(s, ev, "appraise_metadata", integrity_status_name(st));
	return refuse(s, -EPERM);
}

/* security.evm holds a portable signature: the kernel never replaces it. */
static bool has_portable_sig(const struct uevm_file *f)
{
	uint8_t *buf = NULL;
	size_t size = 0;
	ssize_t n = uevm_getxattr_alloc(f, XATTR_NAME_EVM, &buf, &size);
	bool portable = n > 0 && buf[0] == EVM_XATTR_PORTABLE_DIGSIG;

	free(buf);
	return portable;
}

/* Recompute security.evm after a change; the caller holds IINT (or NULL). */
void evm_update_locked(struct integrity_sys *s, const struct integrity_event *ev,
		       struct integrity_iint_cache *iint)
{
	int ret;

	if (evm_hmac_disabled(s) || has_portable_sig(ev->file)) {
		if (iint)
			integrity_iint_set_evm_status(iint, INTEGRITY_UNKNOWN);
		return;
	}
	ret = uevm_evm_update_evmxattr(s->ctx, ev->file);
	if (ret)
		integrity_audit_msg(s, AUDIT_INTEGRITY_METADATA, ev->file,
				    ev->filename, ev->cred, "update_evmxattr",
				    uevm_last_error(), ret, false);
	if (iint) {
		/* Our own write moved ctime: keep the entry, and let the
		 * next check verify the status afresh. */
		integrity_iint_set_evm_status(iint, INTEGRITY_UNKNOWN);
		integrity_iint_refresh(iint, ev->file);
	}
}

static void evm_update(struct integrity_sys *s, const struct integrity_event *ev)
{
	struct integrity_iint_cache *iint = integrity_inode_get(s, ev->file);

	if (iint)
		integrity_iint_lock(iint);
	evm_update_locked(s, ev, iint);
	if (iint) {
		integrity_iint_unlock(iint);
		integrity_iint_put(s->cache, iint);
	}
}

UEVM_EXPORT void evm_inode_post_setxattr(struct integrity_sys *s,
					 const struct integrity_event *ev)
{
	if (!evm_revalidate_status(s, ev->xattr_name))
		return;
	if (is_evm(ev->xattr_name)) {
		struct integrity_iint_cache *iint = integrity_inode_get(s, ev->file);

		if (iint) {
			integrity_iint_lock(iint);
			integrity_iint_set_evm_status(iint, INTEGRITY_UNKNOWN);
			integrity_iint_unlock(iint);
			integrity_iint_put(s->cache, iint);
		}
		return;
	}
	evm_update(s, ev);
}

UEVM_EXPORT void evm_inode_post_removexattr(struct integrity_sys *s,
					    const struct integrity_event *ev)
{
	evm_inode_post_setxattr(s, ev);
}

UEVM_EXPORT void evm_inode_post_setattr(struct integrity_sys *s,
					const struct integrity_event *ev)
{
	if (ev->ia_valid & (ATTR_MODE | ATTR_UID | ATTR_GID))
		evm_update(s, ev);
}

UEVM_EXPORT int evm_inode_post_init(struct integrity_sys *s,
				    const struct integrity_event *ev)
{
	struct integrity_iint_cache *iint = integrity_inode_get(s, ev->file);

	if (iint) {
		integrity_iint_lock(iint);
		integrity_iint_set_flags(iint, EVM_NEW_FILE, 0);
		integrity_iint_unlock(iint);
		integrity_iint_put(s->cache, iint);
	}
	/* The initial HMAC over whatever labels the new file has. */
	evm_update(s, ev);
	return 0;
}

const struct integrity_provider_ops evm_provider_ops = {
	.name = "evm",
	.inode_setxattr = evm_inode_setxattr,
	.inode_post_setxattr = evm_inode_post_setxattr,
	.inode_removexattr = evm_inode_removexattr,
	.inode_post_removexattr = evm_inode_post_removexattr,
	.inode_setattr = evm_inode_setattr,
	.inode_post_setattr = evm_inode_post_setattr,
	.inode_post_init = evm_inode_post_init,
};
