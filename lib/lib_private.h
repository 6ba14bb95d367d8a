/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Internal helpers shared by libuevm's files. */
#ifndef UEVM_LIB_PRIVATE_H
#define UEVM_LIB_PRIVATE_H

#include <errno.h>
#include <stdarg.h>
#include <openssl/evp.h>
#include "uevm/uevm.h"

#define UEVM_EXPORT __attribute__((visibility("default")))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Record why the current call failed; returns -err so callers can write
 * "return uevm_err(EINVAL, ...)". */
int uevm_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The OpenSSL digest for a kernel algorithm id (fetched once), or NULL. */
const EVP_MD *uevm_hash_md(int algo);

/* Secure memory for keys: locked, excluded from core dumps, zeroed on free. */
void *uevm_secure_alloc(size_t len);
void uevm_secure_free(void *p, size_t len);

/* The 128-byte padded key and the HMAC-SHA1 state derived from it. */
struct uevm_key {
	size_t len;
	uint8_t raw[UEVM_MAX_KEY_SIZE];	/* zero-padded, as the kernel's buffer */
	uint8_t ipad[64];		/* K' ^ 0x36, K' = SHA1(raw) */
	uint8_t opad[64];		/* K' ^ 0x5c */
};

/* Incremental HMAC with a loaded key. */
struct uevm_hmac {
	EVP_MD_CTX *md;
	const struct uevm_key *key;
};
int uevm_hmac_init(struct uevm_hmac *h, const struct uevm_key *key);
int uevm_hmac_update(struct uevm_hmac *h, const void *data, size_t len);
int uevm_hmac_final(struct uevm_hmac *h, uint8_t out[UEVM_HMAC_SIZE]);
void uevm_hmac_abort(struct uevm_hmac *h);

struct uevm_ctx {
	struct uevm_config cfg;
	struct uevm_key *key;
	const char **xattrs;	/* protected list, NULL-terminated */
	size_t nxattrs;
};

/* Constant-time comparison. */
int uevm_memneq(const void *a, const void *b, size_t n);

#endif
