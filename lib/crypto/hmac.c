// SPDX-License-Identifier: LGPL-2.1-or-later
/* HMAC-SHA1 (RFC 2104) with a key whose pads were computed at load time. */
#include <string.h>
#include "lib_private.h"

int uevm_hmac_init(struct uevm_hmac *h, const struct uevm_key *key)
{
	const EVP_MD *sha1 = uevm_hash_md(UEVM_HASH_SHA1);

	h->key = key;
	h->md = EVP_MD_CTX_new();
	if (!h->md || !sha1 || !EVP_DigestInit_ex(h->md, sha1, NULL) ||
	    !EVP_DigestUpdate(h->md, key->ipad, sizeof(key->ipad))) {
		EVP_MD_CTX_free(h->md);
		h->md = NULL;
		return uevm_err(ENOMEM, "cannot initialise HMAC-SHA1");
	}
	return 0;
}

int uevm_hmac_update(struct uevm_hmac *h, const void *data, size_t len)
{
	if (len && !EVP_DigestUpdate(h->md, data, len))
		return uevm_err(EIO, "HMAC update failed");
	return 0;
}

int uevm_hmac_final(struct uevm_hmac *h, uint8_t out[UEVM_HMAC_SIZE])
{
	const EVP_MD *sha1 = uevm_hash_md(UEVM_HASH_SHA1);
	uint8_t inner[UEVM_HMAC_SIZE];
	int ok;

	ok = EVP_DigestFinal_ex(h->md, inner, NULL) &&
	     EVP_DigestInit_ex(h->md, sha1, NULL) &&
	     EVP_DigestUpdate(h->md, h->key->opad, sizeof(h->key->opad)) &&
	     EVP_DigestUpdate(h->md, inner, sizeof(inner)) &&
	     EVP_DigestFinal_ex(h->md, out, NULL);
	explicit_bzero(inner, sizeof(inner));
	/* EVP_MD_CTX_free cleanses the digest state. */
	EVP_MD_CTX_free(h->md);
	h->md = NULL;
	return ok ? 0 : uevm_err(EIO, "HMAC final failed");
}

void uevm_hmac_abort(struct uevm_hmac *h)
{
	EVP_MD_CTX_free(h->md);
	h->md = NULL;
}
