// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Signature checks, in the order of the kernel's integrity_digsig_verify
 * and asymmetric_verify: header and size, version, algorithm, the key by
 * keyid, then the public-key operation (PKCS#1 v1.5 for RSA, X9.62 DER
 * for ECDSA, both what OpenSSL's EVP_PKEY_verify takes).
 */
#include <string.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include "sig_private.h"

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

UEVM_EXPORT int uevm_sig_v3_digest(uint8_t type, int algo,
				   const uint8_t *digest, uint8_t *out)
{
	/* struct ima_file_id { u8 hash_type; u8 hash_algorithm;
	 * u8 hash[HASH_MAX_DIGESTSIZE]; }: only the used part is hashed. */
	uint8_t file_id[2 + UEVM_MAX_DIGEST_SIZE];
	unsigned int size = uevm_hash_algo_digest_size(algo);

	if (!size)
		return uevm_err(EINVAL, "unknown hash algorithm id %d", algo);
	if (type != EVM_IMA_XATTR_DIGSIG && type != EVM_XATTR_PORTABLE_DIGSIG &&
	    type != IMA_VERITY_DIGSIG)
		return uevm_err(EINVAL, "signature version 3 is not defined for type 0x%02x",
				type);
	file_id[0] = type;
	file_id[1] = (uint8_t)algo;
	memcpy(file_id + 2, digest, size);
	return uevm_hash_buffer(algo, file_id, 2 + size, out);
}

/* One public-key check; 1 good, 0 bad, negative on an OpenSSL error. */
static int pkey_verify(EVP_PKEY *pkey, const EVP_MD *md, const uint8_t *sig,
		       size_t sig_len, const uint8_t *digest, size_t digest_len)
{
	EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new(pkey, NULL);
	int ret = -1;

	if (pctx && EVP_PKEY_verify_init(pctx) > 0 &&
	    (!EVP_PKEY_is_a(pkey, "RSA") ||
	     EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) > 0) &&
	    EVP_PKEY_CTX_set_signature_md(pctx, md) > 0)
		ret = EVP_PKEY_verify(pctx, sig, sig_len, digest, digest_len);
	EVP_PKEY_CTX_free(pctx);
	return ret;
}

UEVM_EXPORT int uevm_sig_verify(const struct uevm_certset *set,
				const uint8_t *val, size_t len,
				const uint8_t *digest, size_t digest_len)
{
	uint8_t v3[UEVM_MAX_DIGEST_SIZE];
	const uint8_t *tbs = digest;
	const EVP_MD *md;
	uint32_t keyid;
	size_t sig_size;
	int algo, ret = -ENOKEY;
	bool tried = false;

	if (len <= UEVM_SIG_HDR_SIZE)
		return uevm_err(EBADMSG, "signature header truncated (%zu bytes)", len);
	sig_size = (size_t)val[SIG_HDR_SIZE] << 8 | val[SIG_HDR_SIZE + 1];
	if (sig_size != len - UEVM_SIG_HDR_SIZE)
		return uevm_err(EBADMSG, "signature size field says %zu bytes, value has %zu",
				sig_size, len - UEVM_SIG_HDR_SIZE);
	if (val[SIG_HDR_VERSION] != 2 && val[SIG_HDR_VERSION] != 3)
		return uevm_err(EOPNOTSUPP, "unsupported signature version %u",
				val[SIG_HDR_VERSION]);
	algo = val[SIG_HDR_ALGO];
	md = uevm_hash_md(algo);
	if (!md)
		return uevm_err(ENOPKG, "hash algorithm id %d is not available", algo);
	if (digest_len != uevm_hash_algo_digest_size(algo))
		return uevm_err(EINVAL, "digest of %zu bytes for %s", digest_len,
				uevm_hash_algo_name(algo));
	if (val[SIG_HDR_VERSION] == 3) {
		ret = uevm_sig_v3_digest(val[SIG_HDR_TYPE], algo, digest, v3);
		if (ret)
			return ret;
		tbs = v3;
		ret = -ENOKEY;
	}
	keyid = get_be32(val + SIG_HDR_KEYID);
	for (size_t i = 0;; i++) {
		EVP_PKEY *pkey = sig_certset_find(set, keyid, i);
		int r;

		if (!pkey)
			break;
		tried = true;
		r = pkey_verify(pkey, md, val + UEVM_SIG_HDR_SIZE, sig_size, tbs,
				digest_len);
		if (r == 1) {
			/* A failed attempt with a same-keyid certificate
			 * must not leave its reason behind. */
			ERR_clear_error();
			return 0;
		}
		ret = -EKEYREJECTED;
	}
	if (!tried)
		return uevm_err(ENOKEY, "no certificate with keyid %08x", keyid);
	/* OpenSSL's error queue is kept: evmctl's messages print it. */
	return uevm_err(-ret, "signature does not verify with the certificate of keyid %08x",
			keyid);
}
