// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Certificate sets: what the kernel keeps on its .ima and .evm keyrings.
 * Certificates are loaded once, then only read (by many threads at once);
 * a signature finds its certificate by keyid.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include "sig_private.h"

#define CERT_FILE_MAX (16u << 20)

struct cert_entry {
	X509 *x509;
	EVP_PKEY *pkey;		/* owned by x509 */
	uint32_t keyid;
};

struct uevm_certset {
	struct cert_entry *v;
	size_t n, cap;
};

UEVM_EXPORT int uevm_certset_new(struct uevm_certset **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : uevm_err(ENOMEM, "out of memory");
}

UEVM_EXPORT void uevm_certset_free(struct uevm_certset *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		X509_free(set->v[i].x509);
	free(set->v);
	free(set);
}

UEVM_EXPORT size_t uevm_certset_count(const struct uevm_certset *set)
{
	return set ? set->n : 0;
}

UEVM_EXPORT uint32_t uevm_certset_keyid(const struct uevm_certset *set,
				       size_t i)
{
	return set && i < set->n ? set->v[i].keyid : 0;
}

uint32_t sig_certset_first_keyid(const struct uevm_certset *set)
{
	return set->n ? set->v[0].keyid : 0;
}

/* Takes X on success. */
static int add_x509(struct uevm_certset *set, X509 *x, const char *path)
{
	struct cert_entry e = { .x509 = x };
	char desc[32];
	int ret;

	e.pkey = X509_get0_pubkey(x);
	if (!e.pkey)
		return uevm_err(EINVAL, "%s: certificate without a usable public key: %s",
				path, sig_ossl_reason());
	ret = sig_check_pkey(e.pkey, path, desc, sizeof(desc));
	if (ret) {
		/* uevm_err writes the buffer uevm_last_error() reads: copy. */
		char why[256];

		snprintf(why, sizeof(why), "%s", uevm_last_error());
		return uevm_err(-ret, "%s: %s", path, why);
	}
	ret = sig_keyid_from_x509(x, &e.keyid);
	if (ret)
		return ret;
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 4;
		struct cert_entry *v = realloc(set->v, cap * sizeof(*v));

		if (!v)
			return uevm_err(ENOMEM, "out of memory");
		set->v = v;
		set->cap = cap;
	}
	set->v[set->n++] = e;
	return 0;
}

static bool looks_pem(const uint8_t *buf, size_t len)
{
	static const char tag[] = "-----BEGIN";

	return memmem(buf, len, tag, sizeof(tag) - 1) != NULL;
}

/* Drop what a failed call added, so that the set is as it was before. */
static void certset_truncate(struct uevm_certset *set, size_t n)
{
	while (set->n > n)
		X509_free(set->v[--set->n].x509);
}

int sig_certset_add_mem(struct uevm_certset *set, const uint8_t *buf,
			size_t len, const char *name)
{
	size_t before = set->n;
	int added = 0, ret = 0;

	/* BIO_new_mem_buf and d2i_X509 take int and long lengths. */
	if (len == 0 || len > CERT_FILE_MAX)
		return uevm_err(EINVAL, "%s: %zu bytes is no certificate", name, len);
	ERR_clear_error();
	if (looks_pem(buf, len)) {
		BIO *bio = BIO_new_mem_buf(buf, (int)len);
		X509 *x;

		while (bio && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
			ret = add_x509(set, x, name);
			if (ret) {
				X509_free(x);
				break;
			}
			added++;
		}
		BIO_free(bio);
		/* The loop ends with "no start line": not an error. */
		ERR_clear_error();
	} else {
		const unsigned char *p = buf;
		X509 *x = d2i_X509(NULL, &p, (long)len);

		if (!x) {
			ret = uevm_err(EINVAL, "%s: not an X.509 certificate (DER or PEM): %s",
				       name, sig_ossl_reason());
		} else if ((ret = add_x509(set, x, name)) != 0) {
			X509_free(x);
		} else {
			added = 1;
		}
	}
	if (ret) {
		/* All or nothing: a bundle with one bad certificate adds none. */
		certset_truncate(set, before);
		return ret;
	}
	if (!added)
		return uevm_err(EINVAL, "%s: no certificate found", name);
	return added;
}

UEVM_EXPORT int uevm_certset_add_file(struct uevm_certset *set,
				      const char *path)
{
	uint8_t *buf;
	size_t len;
	int ret;

	ret = sig_read_file(path, CERT_FILE_MAX, false, &buf, &len);
	if (ret)
		return ret;
	ret = sig_certset_add_mem(set, buf, len, path);
	free(buf);
	return ret;
}

/* The Ith certificate in DER, as the kernel's keyring holds it (the
 * payload of its key): *OUT to free().  Returns the length. */
int sig_certset_der(const struct uevm_certset *set, size_t i, uint8_t **out)
{
	unsigned char *p;
	int len;

	*out = NULL;
	if (!set || i >= set->n)
		return -ENOENT;
	len = i2d_X509(set->v[i].x509, NULL);
	if (len <= 0)
		return uevm_err(EINVAL, "certificate %zu: no DER form: %s", i,
				sig_ossl_reason());
	*out = malloc((size_t)len);
	if (!*out)
		return uevm_err(ENOMEM, "out of memory");
	p = *out;
	if (i2d_X509(set->v[i].x509, &p) != len) {
		free(*out);
		*out = NULL;
		return uevm_err(EINVAL, "certificate %zu: no DER form", i);
	}
	return len;
}

EVP_PKEY *sig_certset_find(const struct uevm_certset *set, uint32_t keyid,
			   size_t nth)
{
	for (size_t i = 0; set && i < set->n; i++)
		if (set->v[i].keyid == keyid && nth-- == 0)
			return set->v[i].pkey;
	return NULL;
}
