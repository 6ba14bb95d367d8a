// SPDX-License-Identifier: LGPL-2.1-or-later
/* The EVM HMAC key in memory; its forms and sources are in key_*.c. */
#include <stdio.h>
#include <string.h>
#include "lib_private.h"
#include "keys.h"

/* The kernel copies the key into a 128-byte zero-padded buffer and HMACs
 * with all 128 bytes; as that exceeds SHA-1's block, HMAC hashes it first.
 * Precomputing K' = SHA1(buffer) and the two pad blocks gives the same
 * result with one SHA-1 block less per file. */
static int key_prepare(struct uevm_key *key)
{
	uint8_t kprime[64] = { 0 };
	const EVP_MD *sha1 = uevm_hash_md(UEVM_HASH_SHA1);

	if (!sha1 || !EVP_Digest(key->raw, UEVM_MAX_KEY_SIZE, kprime, NULL,
				 sha1, NULL))
		return uevm_err(EIO, "SHA-1 is not available");
	for (int i = 0; i < 64; i++) {
		key->ipad[i] = kprime[i] ^ 0x36;
		key->opad[i] = kprime[i] ^ 0x5c;
	}
	explicit_bzero(kprime, sizeof(kprime));
	return 0;
}

UEVM_EXPORT int uevm_key_from_bytes(const void *data, size_t len,
				    struct uevm_key **out)
{
	struct uevm_key *key;
	int ret;

	if (len == 0)
		return uevm_err(EINVAL, "the key is empty");
	if (len > UEVM_MAX_KEY_SIZE)
		return uevm_err(EINVAL, "the key has %zu bytes; at most %d are allowed",
				len, UEVM_MAX_KEY_SIZE);
	key = uevm_secure_alloc(sizeof(*key));
	if (!key)
		return uevm_err(ENOMEM, "cannot allocate locked memory for the key");
	memcpy(key->raw, data, len);
	key->len = len;
	ret = key_prepare(key);
	if (ret) {
		uevm_secure_free(key, sizeof(*key));
		return ret;
	}
	*out = key;
	return 0;
}

/* Every form (raw file, keyring, passphrase, TPM, kernel blob) is handled
 * by uevm_key_load_ex() in key_spec.c. */
UEVM_EXPORT int uevm_key_load(const char *spec, struct uevm_key **out)
{
	return uevm_key_load_ex(spec, NULL, out, NULL);
}

UEVM_EXPORT void uevm_key_free(struct uevm_key *key)
{
	uevm_secure_free(key, sizeof(*key));
}

/* The key's full public identity, for texts a verifier pins (the
 * uevmd-state and uevmfs-state measurements): SHA-256 over a label and the
 * 128-byte padded key, hex.  The 8-byte fingerprint is for people; a
 * second key with the same fingerprint costs about 2^64 hashes to find. */
UEVM_EXPORT int uevm_key_id(const struct uevm_key *key, char out[65])
{
	static const char label[] = "uevm key id";
	const EVP_MD *sha256 = uevm_hash_md(UEVM_HASH_SHA256);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t d[32];
	int ok;

	out[0] = '\0';
	ok = ctx && sha256 && EVP_DigestInit_ex(ctx, sha256, NULL) &&
	     EVP_DigestUpdate(ctx, label, sizeof(label)) &&
	     EVP_DigestUpdate(ctx, key->raw, UEVM_MAX_KEY_SIZE) &&
	     EVP_DigestFinal_ex(ctx, d, NULL);
	EVP_MD_CTX_free(ctx);	/* cleanses its state */
	if (!ok)
		return uevm_err(EIO, "SHA-256 is not available");
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
	explicit_bzero(d, sizeof(d));
	return 0;
}

UEVM_EXPORT void uevm_key_fingerprint(const struct uevm_key *key, char out[17])
{
	uint8_t d[32];

	uevm_hash_buffer(UEVM_HASH_SHA256, key->raw, UEVM_MAX_KEY_SIZE, d);
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
	explicit_bzero(d, sizeof(d));
}
