// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Key ids, key checks and file reading for signatures.  The kernel finds
 * the key of a signature by "id:<keyid>", matched against the tail of the
 * certificate's subject key identifier; ima-evm-utils falls back to SHA-1
 * of the public key when a certificate carries no SKID.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include "sig_private.h"

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

const char *sig_ossl_reason(void)
{
	static __thread char buf[200];
	unsigned long e = ERR_peek_error();

	buf[0] = '\0';
	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return buf[0] ? buf : "no further detail from OpenSSL";
}

int sig_keyid_from_pkey(EVP_PKEY *pkey, uint32_t *keyid)
{
	X509_PUBKEY *pk = NULL;
	const unsigned char *bits;
	uint8_t sha1[20];
	int len;

	/* The BIT STRING of SubjectPublicKeyInfo, without its header. */
	if (!X509_PUBKEY_set(&pk, pkey) ||
	    !X509_PUBKEY_get0_param(NULL, &bits, &len, NULL, pk)) {
		X509_PUBKEY_free(pk);
		return uevm_err(EINVAL, "cannot encode the public key: %s",
				sig_ossl_reason());
	}
	if (uevm_hash_buffer(UEVM_HASH_SHA1, bits, (size_t)len, sha1)) {
		X509_PUBKEY_free(pk);
		return -EIO;
	}
	X509_PUBKEY_free(pk);
	*keyid = get_be32(sha1 + 16);
	return 0;
}

int sig_keyid_from_x509(X509 *x, uint32_t *keyid)
{
	const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id(x);
	EVP_PKEY *pkey;

	if (skid && ASN1_STRING_length(skid) >= 4) {
		const uint8_t *d = ASN1_STRING_get0_data(skid);

		*keyid = get_be32(d + ASN1_STRING_length(skid) - 4);
		return 0;
	}
	pkey = X509_get0_pubkey(x);
	if (!pkey)
		return uevm_err(EINVAL, "certificate has no usable public key");
	return sig_keyid_from_pkey(pkey, keyid);
}

int sig_read_file(const char *path, size_t max, bool secure, uint8_t **buf,
		  size_t *len)
{
	struct stat st;
	uint8_t *b;
	size_t n = 0;
	int fd, ret = 0;

	fd = uevm_open_regular(path, secure ? "private key" : "certificate");
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return uevm_err(errno, "cannot examine %s: %m", path);
	}
	/* Whoever can replace a certificate makes their own signatures
	 * pass; whoever can read a private key signs as its owner. */
	ret = uevm_check_file_safety(fd, path, secure ? "private key" :
				     "certificate", secure);
	if (ret) {
		close(fd);
		return ret;
	}
	if ((size_t)st.st_size > max) {
		close(fd);
		return uevm_err(EFBIG, "%s is larger than %zu bytes", path, max);
	}
	b = secure ? uevm_secure_alloc(max) : malloc(max);
	if (!b) {
		close(fd);
		return uevm_err(ENOMEM, "out of memory reading %s", path);
	}
	while (n < max) {
		ssize_t r = read(fd, b + n, max - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = uevm_err(errno, "cannot read %s: %m", path);
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!ret && n == 0)
		ret = uevm_err(EINVAL, "%s is empty", path);
	if (ret) {
		sig_free_file(b, max, secure);
		return ret;
	}
	*buf = b;
	*len = n;
	return 0;
}

void sig_free_file(uint8_t *buf, size_t max, bool secure)
{
	if (!buf)
		return;
	if (secure) {
		uevm_secure_free(buf, max);
	} else {
		free(buf);
	}
}

static enum uevm_key_checks key_checks = UEVM_KEY_CHECKS_REFUSE;

UEVM_EXPORT void uevm_set_key_checks(enum uevm_key_checks mode)
{
	key_checks = mode;
}

/* A key the kernel verifies with little strength, or not everywhere:
 * refused, or with WARN_WEAK and WARN taken with a warning. */
static int weak_key(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int weak_key(const char *name, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (key_checks == UEVM_KEY_CHECKS_REFUSE)
		return uevm_err(EINVAL, "%s; refused unless weak keys are allowed", why);
	uevm_warn("%s: %s", name, why);
	return 0;
}

/* A key the kernel cannot verify at all: taken with a warning only where
 * everything evmctl signs with is (UEVM_KEY_CHECKS_WARN). */
static int foreign_key(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int foreign_key(const char *name, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (key_checks != UEVM_KEY_CHECKS_WARN)
		return uevm_err(EINVAL, "%s", why);
	uevm_warn("%s: %s", name, why);
	return 0;
}

int sig_check_pkey(EVP_PKEY *pkey, const char *name, char *desc,
		   size_t desc_len)
{
	static const struct { const char *name, *label; } curves[] = {
		{ "prime256v1", "P256" }, { "P-256", "P256" },
		{ "secp384r1", "P384" }, { "P-384", "P384" },
		{ "secp521r1", "P521" }, { "P-521", "P521" },
		{ "prime192v1", "P192" }, { "P-192", "P192" },
	};
	const char *type = EVP_PKEY_get0_type_name(pkey);
	char group[64];

	if (EVP_PKEY_is_a(pkey, "RSA")) {
		int bits = EVP_PKEY_get_bits(pkey);

		snprintf(desc, desc_len, "RSA-%d", bits);
		if (bits < 2048)
			return weak_key(name, "RSA key of %d bits is weak: 2048 or more are safe",
					bits);
		if (bits > 8192)
			return foreign_key(name, "RSA key of %d bits: signatures would not fit security.ima",
					   bits);
		return 0;
	}
	if (EVP_PKEY_is_a(pkey, "SM2")) {
		snprintf(desc, desc_len, "SM2");
		return weak_key(name, "SM2 key: not every kernel verifies SM2 signatures, and they need hash sm3");
	}
	if (EVP_PKEY_is_a(pkey, "EC")) {
		if (!EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME,
						    group, sizeof(group), NULL)) {
			snprintf(desc, desc_len, "EC");
			return foreign_key(name, "EC key without a named curve");
		}
		for (size_t i = 0; i < ARRAY_SIZE(curves); i++) {
			if (strcmp(group, curves[i].name))
				continue;
			snprintf(desc, desc_len, "ECDSA-%s", curves[i].label);
			if (!strcmp(curves[i].label, "P192"))
				return weak_key(name, "ECDSA key on NIST P-192 is weak: P-256 or larger are safe");
			return 0;
		}
		snprintf(desc, desc_len, "EC-%s", group);
		return foreign_key(name, "EC curve %s: the kernel verifies ECDSA on NIST P-192, P-256, P-384 and P-521 only",
				   group);
	}
	snprintf(desc, desc_len, "%s", type ?: "unknown");
	return foreign_key(name, "%s keys are not supported: use RSA or ECDSA",
			   type ?: "unknown");
}

UEVM_EXPORT int uevm_keyid_from_cert_file(const char *path, uint32_t *keyid)
{
	struct uevm_certset *set;
	int ret;

	/* The set's loader knows DER and PEM; the first certificate counts. */
	ret = uevm_certset_new(&set);
	if (ret)
		return ret;
	ret = uevm_certset_add_file(set, path);
	if (ret > 0) {
		*keyid = sig_certset_first_keyid(set);
		ret = 0;
	}
	uevm_certset_free(set);
	return ret;
}
