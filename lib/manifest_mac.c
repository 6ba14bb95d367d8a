// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The MAC that authenticates a manifest of a labelled tree (uevm label
 * --manifest).  Its key is derived from the EVM HMAC key with a label of
 * its own, as lib/ima/ima_ml_mac.c does for measurement lists: the EVM key
 * itself never MACs anything but EVM's data, and a manifest MAC cannot be
 * turned into a list record or the other way round.  The derived key only
 * lives in locked memory for the duration of one call.
 */
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <string.h>
#include "lib_private.h"

#define MANIFEST_KEY_LABEL "uevm manifest MAC key v1"

static int manifest_mac(const struct uevm_ctx *ctx, const void *data,
			size_t len, uint8_t out[UEVM_MANIFEST_MAC_SIZE])
{
	unsigned int klen = 0, olen = 0;
	uint8_t *dk;
	bool ok;

	if (!ctx->key)
		return uevm_err(ENOKEY, "no HMAC key to derive the manifest's MAC key from");
	dk = uevm_secure_alloc(UEVM_MANIFEST_MAC_SIZE);
	if (!dk)
		return uevm_err(ENOMEM, "no secure memory for the manifest's MAC key");
	ok = HMAC(EVP_sha256(), ctx->key->raw, (int)ctx->key->len,
		  (const uint8_t *)MANIFEST_KEY_LABEL, strlen(MANIFEST_KEY_LABEL),
		  dk, &klen) && klen == UEVM_MANIFEST_MAC_SIZE &&
	     HMAC(EVP_sha256(), dk, UEVM_MANIFEST_MAC_SIZE, data, len, out,
		  &olen) && olen == UEVM_MANIFEST_MAC_SIZE;
	uevm_secure_free(dk, UEVM_MANIFEST_MAC_SIZE);
	return ok ? 0 : uevm_err(EIO, "HMAC-SHA256 over the manifest failed");
}

UEVM_EXPORT int uevm_ctx_manifest_mac(const struct uevm_ctx *ctx,
				      const void *data, size_t len,
				      uint8_t out[UEVM_MANIFEST_MAC_SIZE])
{
	return manifest_mac(ctx, data, len, out);
}

UEVM_EXPORT int uevm_ctx_manifest_mac_check(const struct uevm_ctx *ctx,
					    const void *data, size_t len,
					    const uint8_t mac[UEVM_MANIFEST_MAC_SIZE])
{
	uint8_t want[UEVM_MANIFEST_MAC_SIZE];
	int ret = manifest_mac(ctx, data, len, want);

	if (ret)
		return ret;
	ret = CRYPTO_memcmp(want, mac, sizeof(want)) ? -EBADMSG : 0;
	OPENSSL_cleanse(want, sizeof(want));
	if (ret)
		return uevm_err(EBADMSG, "the manifest's MAC does not match "
				"(changed, or made with another key)");
	return 0;
}
