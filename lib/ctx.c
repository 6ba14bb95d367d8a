// SPDX-License-Identifier: LGPL-2.1-or-later
/* A context: the key, the protected xattr list and the labelling options. */
#include <stdlib.h>
#include <string.h>
#include "lib_private.h"

/* The kernel's evm_config_default_xattrnames, in its order. */
static const char *const evm_default_xattrs[] = {
	"security.selinux",
	"security.SMACK64",
	"security.SMACK64EXEC",
	"security.SMACK64TRANSMUTE",
	"security.SMACK64MMAP",
	"security.apparmor",
	"security.ima",
	"security.capability",
	NULL,
};

/* A function, not the array: an array's size would be part of the ABI. */
UEVM_EXPORT const char *const *uevm_evm_default_xattrs(void)
{
	return evm_default_xattrs;
}

static void config_defaults(struct uevm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	cfg->hash_algo = UEVM_HASH_SHA256;
	cfg->uuid_mode = UEVM_UUID_AUTO;
}

UEVM_EXPORT void uevm_config_init_size(struct uevm_config *cfg, size_t size)
{
	struct uevm_config def;

	config_defaults(&def);
	uevm_struct_init(cfg, size, &def, sizeof(def));
}

UEVM_EXPORT int uevm_ctx_new(const struct uevm_config *in,
			     struct uevm_key *key, struct uevm_ctx **out)
{
	struct uevm_config mine;
	const struct uevm_config *cfg = &mine;
	struct uevm_ctx *ctx;
	size_t n = 0, extra = 0;
	int ret;

	config_defaults(&mine);
	ret = uevm_struct_in(in, sizeof(mine), &mine, sizeof(mine),
			     "struct uevm_config");
	if (ret)
		return ret;

	if (!uevm_hash_algo_available(cfg->hash_algo))
		return uevm_err(ENOPKG, "hash algorithm %s is not available",
				uevm_hash_algo_name(cfg->hash_algo) ?: "(invalid)");
	while (cfg->extra_xattrs && cfg->extra_xattrs[extra])
		extra++;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return uevm_err(ENOMEM, "out of memory");
	ctx->cfg = *cfg;
	ctx->cfg.extra_xattrs = NULL;
	ctx->xattrs = calloc(ARRAY_SIZE(evm_default_xattrs) + extra,
			     sizeof(char *));
	if (!ctx->xattrs) {
		free(ctx);
		return uevm_err(ENOMEM, "out of memory");
	}
	for (size_t i = 0; evm_default_xattrs[i]; i++)
		ctx->xattrs[n++] = evm_default_xattrs[i];
	/* Run-time additions go to the tail, as writes to evm_xattrs do;
	 * a name already listed is not hashed twice. */
	for (size_t i = 0; i < extra; i++) {
		const char *name = cfg->extra_xattrs[i];
		size_t j;

		if (strncmp(name, "security.", 9)) {
			free(ctx->xattrs);
			free(ctx);
			return uevm_err(EINVAL, "'%s' is not a security.* xattr", name);
		}
		for (j = 0; j < n && strcmp(ctx->xattrs[j], name); j++)
			;
		if (j == n)
			ctx->xattrs[n++] = name;
	}
	ctx->nxattrs = n;
	ctx->key = key;
	*out = ctx;
	return 0;
}

UEVM_EXPORT void uevm_ctx_free(struct uevm_ctx *ctx)
{
	if (!ctx)
		return;
	uevm_key_free(ctx->key);
	uevm_certset_free(ctx->certs);
	evm_uuid_cache_free(ctx->uuid_cache);
	free(ctx->xattrs);
	free(ctx);
}

UEVM_EXPORT const char *const *uevm_ctx_xattrs(const struct uevm_ctx *ctx)
{
	return ctx->xattrs;
}

UEVM_EXPORT bool uevm_ctx_is_protected(const struct uevm_ctx *ctx,
				       const char *name)
{
	for (size_t i = 0; i < ctx->nxattrs; i++)
		if (!strcmp(ctx->xattrs[i], name))
			return true;
	return false;
}

UEVM_EXPORT int uevm_ctx_hash_algo(const struct uevm_ctx *ctx)
{
	return ctx->cfg.hash_algo;
}
