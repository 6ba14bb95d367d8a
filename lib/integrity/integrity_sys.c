// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The integrity system and its dispatch, in the manner of the seeds' LIM
 * framework: providers register their operations, front-ends call the
 * integrity_* entry points, which call each provider in order.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "integrity_private.h"
#include "ima_policy.h"

static const char *const mode_names[] = {
	[INTEGRITY_MODE_ENFORCE] = "enforce",
	[INTEGRITY_MODE_LOG] = "log",
	[INTEGRITY_MODE_FIX] = "fix",
	[INTEGRITY_MODE_OFF] = "off",
};

UEVM_EXPORT const char *integrity_mode_name(enum integrity_mode m)
{
	return (unsigned int)m < ARRAY_SIZE(mode_names) ? mode_names[m] : "invalid";
}

UEVM_EXPORT int integrity_mode_parse(const char *str, enum integrity_mode *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(mode_names); i++)
		if (!strcasecmp(str, mode_names[i])) {
			*out = (enum integrity_mode)i;
			return 0;
		}
	return uevm_err(EINVAL, "unknown mode '%s' (enforce, log, fix or off)", str);
}

UEVM_EXPORT int integrity_sys_new(const struct integrity_sys_config *cfg,
				  struct uevm_ctx *ctx,
				  struct integrity_sys **out)
{
	struct integrity_sys *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return uevm_err(ENOMEM, "out of memory");
	ret = integrity_cache_new(cfg->cache_capacity, &s->cache);
	if (ret) {
		free(s);
		return ret;
	}
	s->ctx = ctx;
	atomic_init(&s->mode, cfg->mode);
	atomic_init(&s->evm_bits, 0);
	atomic_init(&s->nproviders, 0);
	s->audit = cfg->audit;
	pthread_mutex_init(&s->lock, NULL);
	ret = integrity_audit_open(s);
	if (ret) {
		integrity_sys_free(s);
		return ret;
	}
	integrity_register_provider(s, &evm_provider_ops);
	integrity_register_provider(s, &ima_provider_ops);
	*out = s;
	return 0;
}

UEVM_EXPORT void integrity_sys_free(struct integrity_sys *s)
{
	if (!s)
		return;
	integrity_audit_close(s);
	integrity_cache_free(s->cache);
	uevm_ctx_free(s->ctx);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

UEVM_EXPORT struct uevm_ctx *integrity_sys_ctx(struct integrity_sys *s)
{
	return s->ctx;
}

UEVM_EXPORT struct integrity_cache *integrity_sys_cache(struct integrity_sys *s)
{
	return s->cache;
}

UEVM_EXPORT enum integrity_mode integrity_sys_mode(const struct integrity_sys *s)
{
	return (enum integrity_mode)atomic_load(&s->mode);
}

UEVM_EXPORT void integrity_sys_set_mode(struct integrity_sys *s,
					enum integrity_mode m)
{
	atomic_store(&s->mode, m);
}

/* New rules: what was appraised under the old ones is appraised again.
 * The kernel keeps IMA_APPRAISED across ima_update_policy, but its policy
 * is loaded once after boot; a daemon's is replaced at run time, and a
 * file that passed a weaker policy (a hash where signatures are now
 * required) must not pass the stricter one from the cache. */
UEVM_EXPORT void integrity_sys_set_policy(struct integrity_sys *s,
					  const struct ima_policy *p)
{
	const struct ima_policy *old = atomic_exchange(&s->policy, p);

	if (old != p && s->cache)
		integrity_cache_invalidate_all(s->cache);
}

UEVM_EXPORT const struct ima_policy *integrity_sys_policy(const struct integrity_sys *s)
{
	return atomic_load(&((struct integrity_sys *)s)->policy);
}

UEVM_EXPORT void integrity_sys_set_measurements(struct integrity_sys *s,
						struct ima_measurements *ml)
{
	atomic_store(&s->ml, ml);
	ima_store_audit_open(s, ml);
}

UEVM_EXPORT struct ima_measurements *
integrity_sys_measurements(const struct integrity_sys *s)
{
	return atomic_load(&((struct integrity_sys *)s)->ml);
}

/* As the kernel: SETUP_COMPLETE may be written, to lock the bits as they are. */
#define EVM_INIT_MASK (EVM_INIT_HMAC | EVM_INIT_X509 | EVM_ALLOW_METADATA_WRITES | \
		       EVM_SETUP_COMPLETE)

/* The rules of the kernel's evm_write_key: CAP_SYS_ADMIN, once setup is
 * complete no more writes, metadata writes never with an HMAC key. */
UEVM_EXPORT int integrity_sys_evm_write(struct integrity_sys *s,
					const struct integrity_cred *cred,
					uint32_t bits)
{
	uint32_t cur;
	int ret = 0;

	if (!integrity_capable(cred, 21 /* CAP_SYS_ADMIN */))
		return uevm_err(EPERM, "writing evm needs CAP_SYS_ADMIN");
	pthread_mutex_lock(&s->lock);
	cur = atomic_load(&s->evm_bits);
	if (cur & EVM_SETUP_COMPLETE) {
		ret = uevm_err(EPERM, "EVM setup is already complete");
		goto out;
	}
	if (!bits || (bits & ~EVM_INIT_MASK)) {
		ret = uevm_err(EINVAL, "invalid evm value 0x%x", bits);
		goto out;
	}
	if ((bits & EVM_ALLOW_METADATA_WRITES) && (cur & EVM_INIT_HMAC)) {
		ret = uevm_err(EPERM, "metadata writes cannot be allowed with an HMAC key");
		goto out;
	}
	if (bits & EVM_INIT_HMAC) {
		if (!s->ctx || !s->ctx->key) {
			ret = uevm_err(ENOKEY, "no HMAC key loaded");
			goto out;
		}
		bits |= EVM_SETUP_COMPLETE;
	}
	cur |= bits;
	if (cur & EVM_INIT_HMAC)
		cur &= ~(uint32_t)EVM_ALLOW_METADATA_WRITES;
	atomic_store(&s->evm_bits, cur);
out:
	pthread_mutex_unlock(&s->lock);
	/* What was appraised without EVM is appraised again, with it. */
	if (!ret && (bits & (EVM_INIT_HMAC | EVM_INIT_X509)) && s->cache)
		integrity_cache_invalidate_all(s->cache);
	return ret;
}

UEVM_EXPORT uint32_t integrity_sys_evm_read(const struct integrity_sys *s)
{
	return atomic_load(&((struct integrity_sys *)s)->evm_bits) &
	       ~(uint32_t)EVM_SETUP_COMPLETE;
}

/* Every bit, EVM_SETUP_COMPLETE too: for the state a verifier pins. */
UEVM_EXPORT uint32_t integrity_sys_evm_bits(const struct integrity_sys *s)
{
	return atomic_load(&((struct integrity_sys *)s)->evm_bits);
}

bool evm_hmac_disabled(const struct integrity_sys *s)
{
	return !(atomic_load(&((struct integrity_sys *)s)->evm_bits) & EVM_INIT_HMAC) ||
	       !s->ctx || !s->ctx->key;
}

UEVM_EXPORT int integrity_register_provider(struct integrity_sys *s,
					    const struct integrity_provider_ops *ops)
{
	int n, ret = 0;

	pthread_mutex_lock(&s->lock);
	n = atomic_load(&s->nproviders);
	if (n >= MAX_PROVIDERS) {
		ret = uevm_err(ENOSPC, "too many integrity providers");
	} else {
		s->providers[n] = ops;
		/* Publish the slot before the count, for lock-free readers. */
		atomic_store(&s->nproviders, n + 1);
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

struct integrity_iint_cache *integrity_inode_get_stat(struct integrity_sys *s,
						      const struct uevm_file *f,
						      struct stat *now, bool *fresh)
{
	struct integrity_stamp st;
	uint32_t gen = 0;

	*fresh = false;
	uevm_file_generation(f, &gen);
	integrity_stamp_of(&f->st, &st);
	/* f->st may be older than the file: take a fresh stamp. */
	if (f->fd >= 0 && fstat(f->fd, now) == 0) {
		integrity_stamp_of(now, &st);
		*fresh = true;
	}
	return integrity_iint_get(s->cache, f->st.st_dev, f->st.st_ino, gen, &st);
}

struct integrity_iint_cache *integrity_inode_get(struct integrity_sys *s,
						 const struct uevm_file *f)
{
	struct stat now;
	bool fresh;

	return integrity_inode_get_stat(s, f, &now, &fresh);
}

struct integrity_iint_cache *integrity_inode_find(struct integrity_sys *s,
						  const struct uevm_file *f)
{
	uint32_t gen = 0;

	uevm_file_generation(f, &gen);
	return integrity_iint_find(s->cache, f->st.st_dev, f->st.st_ino, gen);
}

void integrity_iint_refresh(struct integrity_iint_cache *iint,
			    const struct uevm_file *f)
{
	struct integrity_stamp st;
	struct stat now;

	if (f->fd >= 0 && fstat(f->fd, &now) == 0) {
		integrity_stamp_of(&now, &st);
		integrity_iint_set_stamp(iint, &st);
	}
}

/* Calls one operation of every provider; the first refusal wins. */
#define DISPATCH_INT(op)                                                       \
	UEVM_EXPORT int integrity_##op(struct integrity_sys *s,                \
				       const struct integrity_event *ev)       \
	{                                                                      \
		int n = atomic_load(&s->nproviders);                           \
		if (integrity_sys_mode(s) == INTEGRITY_MODE_OFF)               \
			return 0;                                              \
		for (int i = 0; i < n; i++) {                                  \
			int r = s->providers[i]->op ? s->providers[i]->op(s, ev) : 0; \
			if (r)                                                 \
				return r;                                      \
		}                                                              \
		return 0;                                                      \
	}

#define DISPATCH_VOID(op)                                                      \
	UEVM_EXPORT void integrity_##op(struct integrity_sys *s,               \
					const struct integrity_event *ev)      \
	{                                                                      \
		int n = atomic_load(&s->nproviders);                           \
		if (integrity_sys_mode(s) == INTEGRITY_MODE_OFF)               \
			return;                                                \
		for (int i = 0; i < n; i++)                                    \
			if (s->providers[i]->op)                               \
				s->providers[i]->op(s, ev);                    \
	}

DISPATCH_INT(inode_setxattr)
DISPATCH_VOID(inode_post_setxattr)
DISPATCH_INT(inode_removexattr)
DISPATCH_VOID(inode_post_removexattr)
DISPATCH_INT(inode_setattr)
DISPATCH_VOID(inode_post_setattr)
DISPATCH_INT(inode_post_init)
DISPATCH_INT(file_check)

/* The kernel's ima_bprm_check: BPRM_CHECK as the caller, then CREDS_CHECK
 * with the credentials the program runs with (integrity_cred_for_exec). */
UEVM_EXPORT int integrity_bprm_check(struct integrity_sys *s,
				     const struct integrity_event *ev, int nosuid)
{
	struct integrity_event e = *ev;
	struct integrity_cred runs_as;
	int rc;

	e.func = BPRM_CHECK;
	rc = integrity_file_check(s, &e);
	if (rc)
		return rc;
	integrity_cred_for_exec(e.file, ev->cred, nosuid, &runs_as);
	e.cred = &runs_as;
	e.func = CREDS_CHECK;
	return integrity_file_check(s, &e);
}
DISPATCH_VOID(file_free)
