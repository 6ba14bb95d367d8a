// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Signing keys.  A key is loaded once and then used by every signing
 * thread: the file is read into locked memory, decoded into OpenSSL's
 * secure heap (locked, kept out of core dumps, wiped on free), and the
 * file buffer is wiped at once.  Keys behind an OSSL_STORE URI (PKCS#11
 * tokens) are used one operation at a time.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/provider.h>
#include <openssl/rsa.h>
#include <openssl/store.h>
#include <openssl/ui.h>
#include "sig_private.h"

#define KEY_FILE_MAX (64u << 10)
#define KEY_POOL_MAX 64

struct uevm_signer {
	EVP_PKEY *pkey;
	uint32_t keyid;
	bool serialize;
	pthread_mutex_t lock;
	/* Copies of the key, one per concurrent signer: a single RSA key
	 * shared by threads serialises them on OpenSSL's blinding state. */
	EVP_PKEY *pool[KEY_POOL_MAX];
	size_t npool;
	char desc[32];
};

/* A key for one signing operation; store-backed keys are one at a time. */
static EVP_PKEY *key_get(struct uevm_signer *s)
{
	EVP_PKEY *k = NULL;

	pthread_mutex_lock(&s->lock);
	if (s->serialize)
		return s->pkey;		/* unlocked by key_put */
	if (s->npool)
		k = s->pool[--s->npool];
	pthread_mutex_unlock(&s->lock);
	if (!k)
		k = EVP_PKEY_dup(s->pkey);
	/* Out of secure heap: the shared key still works, only slower. */
	return k ? k : s->pkey;
}

static void key_put(struct uevm_signer *s, EVP_PKEY *k)
{
	if (s->serialize) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	if (!k || k == s->pkey)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->npool < KEY_POOL_MAX) {
		s->pool[s->npool++] = k;
		k = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	EVP_PKEY_free(k);
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Private key numbers decoded by OpenSSL land in its secure heap once it
 * exists; a failure to lock it only loses the locking. */
static void secure_heap_once(void)
{
	if (!CRYPTO_secure_malloc_initialized())
		CRYPTO_secure_malloc_init(1024 * 1024, 32);
}

/* "scheme:" followed by something that is not an existing file. */
static bool is_uri(const char *key)
{
	const char *p = key;

	if (!isalpha((unsigned char)*p))
		return false;
	while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
		p++;
	return *p == ':' && access(key, F_OK) != 0;
}

/* The keyid of a certificate stored beside the key (evmctl's habit of
 * key files that end with the certificate), when it matches the key. */
static int keyid_from_pem_cert(EVP_PKEY *pkey, const uint8_t *buf, size_t len,
			       const char *path, uint32_t *keyid)
{
	BIO *bio = BIO_new_mem_buf(buf, (int)len);
	X509 *x = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
	int ret = 1;

	BIO_free(bio);
	ERR_clear_error();
	if (!x)
		return 1;
	if (EVP_PKEY_eq(X509_get0_pubkey(x), pkey) != 1)
		ret = uevm_err(EINVAL, "%s: the certificate in it does not match its private key",
			       path);
	else
		ret = sig_keyid_from_x509(x, keyid);
	X509_free(x);
	return ret;
}

/* An encrypted private key: PEM that says so (PKCS#8 "ENCRYPTED PRIVATE
 * KEY", or a traditional key's Proc-Type), or DER PKCS#8
 * EncryptedPrivateKeyInfo. */
static bool looks_encrypted(const uint8_t *buf, size_t len)
{
	const unsigned char *p = buf;
	X509_SIG *p8;

	if (memmem(buf, len, "-----BEGIN", 10))
		return memmem(buf, len, "ENCRYPTED", 9) != NULL;
	p8 = d2i_X509_SIG(NULL, &p, (long)len);
	X509_SIG_free(p8);
	ERR_clear_error();
	return p8 != NULL;
}

static int load_file(struct uevm_signer *s, const char *path, const char *pass,
		     bool ask)
{
	uint8_t *buf;
	size_t len;
	int ret;

	ret = sig_read_file(path, KEY_FILE_MAX, true, &buf, &len);
	if (ret)
		return ret;
	ERR_clear_error();
	if (memmem(buf, len, "-----BEGIN", 10)) {
		BIO *bio = BIO_new_mem_buf(buf, (int)len);

		/* Skips other PEM blocks (a certificate) to the key. */
		/* No pass phrase: "" fails an encrypted key at once; NULL
		 * makes OpenSSL ask on the terminal. */
		s->pkey = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL,
							(void *)(pass ? pass :
								 ask ? NULL : ""))
			      : NULL;
		BIO_free(bio);
	} else {
		const unsigned char *data = buf;
		size_t dlen = len;
		OSSL_DECODER_CTX *dctx =
			OSSL_DECODER_CTX_new_for_pkey(&s->pkey, "DER", NULL, NULL,
						      EVP_PKEY_KEYPAIR, NULL, NULL);

		if (dctx && pass)
			OSSL_DECODER_CTX_set_passphrase(dctx, (const unsigned char *)pass,
							strlen(pass));
		else if (dctx && ask)
			OSSL_DECODER_CTX_set_passphrase_ui(dctx, UI_get_default_method(),
							   NULL);
		if (dctx)
			OSSL_DECODER_from_data(dctx, &data, &dlen);
		OSSL_DECODER_CTX_free(dctx);
	}
	if (!s->pkey && !looks_encrypted(buf, len)) {
		/* A pass phrase would not help: say what the file is not. */
		ret = uevm_err(EINVAL, "%s: not a private key OpenSSL can read "
			       "(PEM or DER; %s)", path, sig_ossl_reason());
	} else if (!s->pkey) {
		ret = uevm_err(EINVAL, "%s: cannot read the encrypted private key (%s)%s",
			       path, sig_ossl_reason(),
			       pass ? "" : "; it needs its pass phrase (--pass-file, "
			       "or $UEVM_KEY_PASSWORD)");
	} else {
		ret = keyid_from_pem_cert(s->pkey, buf, len, path, &s->keyid);
		if (ret == 1)
			ret = sig_keyid_from_pkey(s->pkey, &s->keyid);
	}
	sig_free_file(buf, KEY_FILE_MAX, true);
	return ret;
}

static int ui_reader(UI *ui, UI_STRING *uis)
{
	return UI_set_result(ui, uis, UI_get0_user_data(ui)) == 0;
}

static int load_store(struct uevm_signer *s, const char *uri, const char *pass)
{
	UI_METHOD *ui = NULL;
	OSSL_STORE_CTX *store;
	OSSL_STORE_INFO *info;
	X509 *cert = NULL;
	int ret;

	/* pkcs11: URIs need a PKCS#11 provider; load it if it is installed
	 * but not configured (as evmctl does). */
	if (!strncmp(uri, "pkcs11:", 7) && !OSSL_PROVIDER_available(NULL, "pkcs11"))
		OSSL_PROVIDER_try_load(NULL, "pkcs11", 1);
	if (pass) {
		ui = UI_create_method("uevm PIN");
		if (!ui)
			return uevm_err(ENOMEM, "out of memory");
		UI_method_set_reader(ui, ui_reader);
	}
	ERR_clear_error();
	store = OSSL_STORE_open_ex(uri, NULL, NULL, ui, (void *)pass, NULL, NULL,
				   NULL);
	if (!store) {
		ret = uevm_err(ENOPKG, "no OpenSSL store opens '%.*s' URIs here (%s)%s",
			       (int)(strchr(uri, ':') - uri), uri, sig_ossl_reason(),
			       strncmp(uri, "pkcs11:", 7) ? "" :
			       "; a PKCS#11 provider must be installed and configured");
		UI_destroy_method(ui);
		return ret;
	}
	while (!OSSL_STORE_eof(store) && (!s->pkey || !cert)) {
		info = OSSL_STORE_load(store);
		if (!info)
			continue;
		if (OSSL_STORE_INFO_get_type(info) == OSSL_STORE_INFO_PKEY && !s->pkey)
			s->pkey = OSSL_STORE_INFO_get1_PKEY(info);
		else if (OSSL_STORE_INFO_get_type(info) == OSSL_STORE_INFO_CERT && !cert)
			cert = OSSL_STORE_INFO_get1_CERT(info);
		OSSL_STORE_INFO_free(info);
	}
	OSSL_STORE_close(store);
	UI_destroy_method(ui);
	if (!s->pkey) {
		X509_free(cert);
		return uevm_err(ENOKEY, "%s: no private key found (%s)", uri,
				sig_ossl_reason());
	}
	if (cert && EVP_PKEY_eq(X509_get0_pubkey(cert), s->pkey) == 1)
		ret = sig_keyid_from_x509(cert, &s->keyid);
	else
		ret = sig_keyid_from_pkey(s->pkey, &s->keyid);
	X509_free(cert);
	s->serialize = true;
	return ret;
}

UEVM_EXPORT int uevm_signer_load(const char *key, const char *pass,
				 struct uevm_signer **out)
{
	return uevm_signer_load_ex(key, pass, 0, out);
}

UEVM_EXPORT int uevm_signer_load_ex(const char *key, const char *pass,
				    unsigned int flags, struct uevm_signer **out)
{
	struct uevm_signer *s;
	int ret;

	if (!key || !*key)
		return uevm_err(EINVAL, "no signing key given");
	s = calloc(1, sizeof(*s));
	if (!s)
		return uevm_err(ENOMEM, "out of memory");
	pthread_mutex_init(&s->lock, NULL);
	secure_heap_once();
	ret = is_uri(key) ? load_store(s, key, pass)
			  : load_file(s, key, pass, flags & UEVM_SIGNER_ASK_PASS);
	if (!ret)
		ret = sig_check_pkey(s->pkey, key, s->desc, sizeof(s->desc));
	if (ret) {
		uevm_signer_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

int uevm_signer_from_pkey(EVP_PKEY *pkey, struct uevm_signer **out)
{
	struct uevm_signer *s;
	int ret;

	if (!pkey)
		return uevm_err(EINVAL, "no signing key given");
	s = calloc(1, sizeof(*s));
	if (!s)
		return uevm_err(ENOMEM, "out of memory");
	pthread_mutex_init(&s->lock, NULL);
	if (!EVP_PKEY_up_ref(pkey)) {
		uevm_signer_free(s);
		return uevm_err(ENOMEM, "out of memory");
	}
	s->pkey = pkey;
	/* A key behind a token cannot be copied: one operation at a time. */
	s->serialize = true;
	ret = sig_keyid_from_pkey(s->pkey, &s->keyid);
	if (!ret)
		ret = sig_check_pkey(s->pkey, "the engine's key", s->desc, sizeof(s->desc));
	if (ret) {
		uevm_signer_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

UEVM_EXPORT void uevm_signer_free(struct uevm_signer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->npool; i++)
		EVP_PKEY_free(s->pool[i]);
	EVP_PKEY_free(s->pkey);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

UEVM_EXPORT void uevm_signer_set_keyid(struct uevm_signer *s, uint32_t keyid)
{
	s->keyid = keyid;
}

UEVM_EXPORT int uevm_signer_set_keyid_from_cert(struct uevm_signer *s,
						const char *path)
{
	return uevm_keyid_from_cert_file(path, &s->keyid);
}

UEVM_EXPORT uint32_t uevm_signer_keyid(const struct uevm_signer *s)
{
	return s->keyid;
}

UEVM_EXPORT const char *uevm_signer_describe(const struct uevm_signer *s)
{
	return s->desc;
}

UEVM_EXPORT int uevm_sign_digest(const struct uevm_signer *s, uint8_t type,
				 int version, int algo, const uint8_t *digest,
				 uint8_t *out)
{
	return uevm_sign_digest_len(s, type, version, algo, digest,
				    uevm_hash_algo_digest_size(algo), out);
}

UEVM_EXPORT int uevm_sign_digest_len(const struct uevm_signer *s, uint8_t type,
				     int version, int algo, const uint8_t *digest,
				     size_t digest_len, uint8_t *out)
{
	uint8_t v3[UEVM_MAX_DIGEST_SIZE];
	const uint8_t *tbs = digest;
	const EVP_MD *md = uevm_hash_md(algo);
	size_t dsize = uevm_hash_algo_digest_size(algo);
	size_t sig_len = UEVM_MAX_SIG_SIZE - UEVM_SIG_HDR_SIZE;
	/* The signer is shared; only its pool of key copies changes. */
	struct uevm_signer *ms = (struct uevm_signer *)s;
	EVP_PKEY_CTX *pctx;
	const char *step;
	EVP_PKEY *key;
	int ok, ret;

	if (!md)
		return uevm_err(ENOPKG, "hash algorithm %s is not available",
				uevm_hash_algo_name(algo) ?: "(invalid)");
	if (type != EVM_IMA_XATTR_DIGSIG && type != EVM_XATTR_PORTABLE_DIGSIG)
		return uevm_err(EINVAL, "type 0x%02x is not a signature type", type);
	if (version == 3) {
		ret = uevm_sig_v3_digest(type, algo, digest, v3);
		if (ret)
			return ret;
		tbs = v3;
		digest_len = dsize;
	} else if (version != 2) {
		return uevm_err(EINVAL, "signature version %d: 2 or 3 are defined",
				version);
	}
	ERR_clear_error();
	key = key_get(ms);
	/* The step that failed names the failure (evmctl prints it). */
	step = "EVP_PKEY_CTX_new";
	pctx = key ? EVP_PKEY_CTX_new(key, NULL) : NULL;
	ok = pctx && (step = "EVP_PKEY_sign_init", EVP_PKEY_sign_init(pctx) > 0) &&
	     (!EVP_PKEY_is_a(key, "RSA") ||
	      (step = "EVP_PKEY_CTX_set_rsa_padding",
	       EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) > 0)) &&
	     (step = "EVP_PKEY_CTX_set_signature_md",
	      EVP_PKEY_CTX_set_signature_md(pctx, md) > 0) &&
	     (step = "EVP_PKEY_sign",
	      EVP_PKEY_sign(pctx, out + UEVM_SIG_HDR_SIZE, &sig_len, tbs,
			    digest_len) > 0);
	EVP_PKEY_CTX_free(pctx);
	key_put(ms, key);
	explicit_bzero(v3, sizeof(v3));
	if (!ok)
		return uevm_err(EIO, "signing failed in %s: %s", step, sig_ossl_reason());
	out[SIG_HDR_TYPE] = type;
	out[SIG_HDR_VERSION] = (uint8_t)version;
	out[SIG_HDR_ALGO] = (uint8_t)algo;
	put_be32(out + SIG_HDR_KEYID, s->keyid);
	out[SIG_HDR_SIZE] = (uint8_t)(sig_len >> 8);
	out[SIG_HDR_SIZE + 1] = (uint8_t)sig_len;
	return (int)(UEVM_SIG_HDR_SIZE + sig_len);
}
