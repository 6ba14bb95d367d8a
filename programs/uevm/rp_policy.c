// SPDX-License-Identifier: GPL-2.0-or-later
/* Keylime runtime policies: validation and signature keys (rp_policy.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include "prog.h"
#include "rp_policy.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

bool rp_hex_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 40 || n > 128)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* ---- the schema ---------------------------------------------------------- */

static int want_type(const struct jval *v, enum jtype t, const char *what,
		     char *err, size_t errlen)
{
	if (!v)
		return fail(err, errlen, "%s is missing", what);
	if (v->type != t)
		return fail(err, errlen, "%s is a %s, not a%s %s", what,
			    json_type_name(v->type), t == J_ARR || t == J_OBJ ? "n" : "",
			    json_type_name(t));
	return 0;
}

static int want_int(const struct jval *v, const char *what, long long min,
		    long long max, long long *out, char *err, size_t errlen)
{
	if (!v)
		return fail(err, errlen, "%s is missing", what);
	if (v->type != J_NUM || !v->is_int)
		return fail(err, errlen, "%s is not an integer", what);
	if (v->int_overflow || v->i < min || v->i > max)
		return fail(err, errlen, "%s is out of range (%lld to %lld)", what,
			    min, max);
	*out = v->i;
	return 0;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct rp_map_ent *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct rp_map_ent *)a)->name,
		      ((const struct rp_map_ent *)b)->name);
}

/* The digests-object definition: {name: [hex, ...], ...}, lists non-empty. */
static int load_map(const struct jval *root, const char *key, struct rp_map *m,
		    char *err, size_t errlen)
{
	const struct jval *o = json_get(root, key);
	char what[64];
	size_t n = 0;

	snprintf(what, sizeof(what), "\"%s\"", key);
	if (want_type(o, J_OBJ, what, err, errlen))
		return -1;
	m->e = calloc(o->n + 1, sizeof(*m->e));
	if (!m->e)
		return fail(err, errlen, "out of memory");
	for (size_t i = 0; i < o->n; i++) {
		const struct jval *l = o->items[i];

		if (l->type != J_ARR || !l->n)
			return fail(err, errlen, "\"%s\": \"%s\" is not a non-empty "
				    "array", key, o->keys[i]);
		for (size_t j = 0; j < l->n; j++)
			if (l->items[j]->type != J_STR || !rp_hex_ok(l->items[j]->s))
				return fail(err, errlen, "\"%s\": \"%s\": item %zu is "
					    "not lowercase hex of 40 to 128 digits",
					    key, o->keys[i], j);
	}
	for (size_t i = 0; i < o->n; i++) {
		m->e[i].name = o->keys[i];
		m->e[i].list = o->items[i];
		m->e[i].idx = i;
	}
	qsort(m->e, o->n, sizeof(*m->e), cmp_ent);
	/* Of a name given twice the last one counts, as in Python. */
	for (size_t i = 0; i < o->n; i++) {
		if (i + 1 < o->n && !strcmp(m->e[i].name, m->e[i + 1].name))
			continue;
		m->e[n++] = m->e[i];
	}
	m->n = n;
	return 0;
}

const struct jval *rp_map_get(const struct rp_map *m, const char *name)
{
	struct rp_map_ent key = { name, NULL, 0 }, *hit;

	if (!m->n)
		return NULL;
	hit = bsearch(&key, m->e, m->n, sizeof(*m->e), cmp_name);
	return hit ? hit->list : NULL;
}

bool rp_list_has(const struct jval *list, const char *hex)
{
	for (size_t i = 0; list && i < list->n; i++)
		if (!strcmp(list->items[i]->s, hex))
			return true;
	return false;
}

static int load_strings(const struct jval *v, const char *what,
			const char ***out, size_t *n, char *err, size_t errlen)
{
	if (want_type(v, J_ARR, what, err, errlen))
		return -1;
	*out = calloc(v->n + 1, sizeof(**out));
	if (!*out)
		return fail(err, errlen, "out of memory");
	for (size_t i = 0; i < v->n; i++) {
		if (v->items[i]->type != J_STR)
			return fail(err, errlen, "%s: item %zu is not a string", what, i);
		(*out)[i] = v->items[i]->s;
	}
	*n = v->n;
	return 0;
}

static int load_meta(const struct jval *root, struct rp_policy *p, char *err,
		     size_t errlen)
{
	const struct jval *meta = json_get(root, "meta"), *ts;
	long long v;

	if (want_type(meta, J_OBJ, "\"meta\"", err, errlen) ||
	    want_int(json_get(meta, "version"), "meta.version", 0, LLONG_MAX, &v,
		     err, errlen) ||
	    want_int(json_get(meta, "generator"), "meta.generator", 0, 3,
		     &p->generator, err, errlen))
		return -1;
	ts = json_get(meta, "timestamp");
	if (ts && ts->type != J_STR)
		return fail(err, errlen, "meta.timestamp is not a string");
	return want_int(json_get(root, "release"), "\"release\"", 0, LLONG_MAX,
			&v, err, errlen);
}

static int load_ima(const struct jval *root, struct rp_policy *p, char *err,
		    size_t errlen)
{
	static const char *const algos[] = { "sha1", "sha256", "sha384", "sha512" };
	const struct jval *ima = json_get(root, "ima"), *alg, *dm;

	if (want_type(ima, J_OBJ, "\"ima\"", err, errlen) ||
	    load_strings(json_get(ima, "ignored_keyrings"), "ima.ignored_keyrings",
			 &p->ignored_keyrings, &p->nignored, err, errlen))
		return -1;
	alg = json_get(ima, "log_hash_alg");
	if (want_type(alg, J_STR, "ima.log_hash_alg", err, errlen))
		return -1;
	p->log_hash_algo = -1;
	for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++)
		if (!strcmp(alg->s, algos[i]))
			p->log_hash_algo = uevm_hash_algo_by_name(algos[i]);
	if (p->log_hash_algo < 0)
		return fail(err, errlen, "ima.log_hash_alg \"%s\" is not sha1, "
			    "sha256, sha384 or sha512", alg->s);
	dm = json_get(ima, "dm_policy");
	if (!dm)
		return fail(err, errlen, "ima.dm_policy is missing");
	if (dm->type != J_NULL)
		return fail(err, errlen, "ima.dm_policy is not null (Keylime's "
			    "schema allows only null)");
	return 0;
}

static int validate(struct rp_policy *p, char *err, size_t errlen)
{
	const struct jval *root = p->root, *vk;

	if (root->type != J_OBJ)
		return fail(err, errlen, "the document is a %s, not an object",
			    json_type_name(root->type));
	if (json_get(root, "payload"))
		return fail(err, errlen, "a signed (DSSE) policy: check its "
			    "payload, the policy inside");
	if (load_meta(root, p, err, errlen) ||
	    load_map(root, "digests", &p->digests, err, errlen) ||
	    load_strings(json_get(root, "excludes"), "\"excludes\"", &p->excludes,
			 &p->nexcludes, err, errlen) ||
	    load_map(root, "keyrings", &p->keyrings, err, errlen) ||
	    load_ima(root, p, err, errlen) ||
	    load_map(root, "ima-buf", &p->ima_buf, err, errlen))
		return -1;
	vk = json_get(root, "verification-keys");
	if (want_type(vk, J_STR, "\"verification-keys\"", err, errlen))
		return -1;
	if (*vk->s && rp_keyring_add_json(&p->keys, vk->s, err, errlen))
		return -1;
	return 0;
}

int rp_policy_parse(const uint8_t *buf, size_t len, struct rp_policy *p,
		    char *err, size_t errlen)
{
	char why[256];

	memset(p, 0, sizeof(*p));
	p->root = json_parse(buf, len, why, sizeof(why));
	if (!p->root)
		return fail(err, errlen, "not valid JSON: %s", why);
	return validate(p, err, errlen);
}

int rp_policy_load(const char *path, struct rp_policy *p, char *err,
		   size_t errlen)
{
	uint8_t *buf;
	size_t len;
	int ret;

	memset(p, 0, sizeof(*p));
	ret = read_file_all(path, RP_MAX_POLICY_SIZE, &buf, &len);
	if (ret) {
		fail(err, errlen, "%s", ret == -EFBIG ? "larger than 1 GiB" :
		     strerror(-ret));
		return -2;
	}
	ret = rp_policy_parse(buf, len, p, err, errlen);
	free(buf);
	return ret;
}

static void map_free(struct rp_map *m)
{
	free(m->e);
}

void rp_policy_free(struct rp_policy *p)
{
	map_free(&p->digests);
	map_free(&p->keyrings);
	map_free(&p->ima_buf);
	free(p->excludes);
	free(p->ignored_keyrings);
	rp_keyring_free(&p->keys);
	json_free(p->root);
	memset(p, 0, sizeof(*p));
}

/* ---- keys ------------------------------------------------------------------ */

/* The public key bytes Keylime's keyid is a hash of: PKCS#1 DER for RSA
 * (the SubjectPublicKeyInfo's bit string), the uncompressed point for EC
 * (whatever form the key came in).  OPENSSL_malloc'ed, or NULL. */
static unsigned char *keyid_bytes(EVP_PKEY *pkey, size_t *len)
{
	unsigned char *out = NULL;
	EVP_PKEY *ec;

	if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA) {
		int n = i2d_PublicKey(pkey, &out);

		*len = n > 0 ? (size_t)n : 0;
		return n > 0 ? out : NULL;
	}
	ec = EVP_PKEY_dup(pkey);
	if (ec && EVP_PKEY_set_utf8_string_param(ec,
			OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, "uncompressed")) {
		*len = EVP_PKEY_get1_encoded_public_key(ec, &out);
		if (!*len) {
			OPENSSL_free(out);
			out = NULL;
		}
	}
	EVP_PKEY_free(ec);
	return out;
}

/* Bytes 16..19 of SHA-1 over keyid_bytes(), as the kernel and Keylime
 * compute it. */
static int keyid_of_pkey(EVP_PKEY *pkey, uint32_t *keyid)
{
	unsigned char *pk;
	uint8_t md[20];
	size_t pklen = 0;
	int ok;

	pk = keyid_bytes(pkey, &pklen);
	ERR_clear_error();
	if (!pk)
		return -1;
	ok = uevm_hash_buffer(UEVM_HASH_SHA1, pk, pklen, md) >= 0;
	OPENSSL_free(pk);
	if (!ok)
		return -1;
	*keyid = (uint32_t)md[16] << 24 | (uint32_t)md[17] << 16 |
		 (uint32_t)md[18] << 8 | md[19];
	return 0;
}

static int keyring_put(struct rp_keyring *kr, EVP_PKEY *pkey, uint32_t keyid,
		       char *err, size_t errlen)
{
	struct rp_key *k = rp_keyring_find(kr, keyid), *nk;

	/* One key per keyid: a later one replaces it, as in Keylime. */
	if (k) {
		EVP_PKEY_free(k->pkey);
		k->pkey = pkey;
		return 0;
	}
	nk = realloc(kr->keys, (kr->n + 1) * sizeof(*nk));
	if (!nk) {
		EVP_PKEY_free(pkey);
		return fail(err, errlen, "out of memory");
	}
	kr->keys = nk;
	kr->keys[kr->n].keyid = keyid;
	kr->keys[kr->n++].pkey = pkey;
	return 0;
}

static bool key_type_ok(EVP_PKEY *pkey)
{
	int id = EVP_PKEY_get_base_id(pkey);

	return id == EVP_PKEY_RSA || id == EVP_PKEY_EC;
}

/* The DER loaders, each taking all of BUF or nothing (Keylime's loaders,
 * python3-cryptography's, refuse trailing bytes).  A private key gives
 * its public half. */
static EVP_PKEY *der_cert(const uint8_t *buf, size_t len, X509 **cert)
{
	const unsigned char *p = buf;

	*cert = d2i_X509(NULL, &p, (long)len);
	if (*cert && p == buf + len)
		return X509_get_pubkey(*cert);
	X509_free(*cert);
	*cert = NULL;
	return NULL;
}

static EVP_PKEY *der_pub(const uint8_t *buf, size_t len)
{
	const unsigned char *p = buf;
	EVP_PKEY *pkey = d2i_PUBKEY(NULL, &p, (long)len);

	if (pkey && p == buf + len)
		return pkey;
	EVP_PKEY_free(pkey);
	/* A bare PKCS#1 RSAPublicKey, which Keylime's loader takes too. */
	p = buf;
	pkey = d2i_PublicKey(EVP_PKEY_RSA, NULL, &p, (long)len);
	if (pkey && p == buf + len)
		return pkey;
	EVP_PKEY_free(pkey);
	return NULL;
}

static EVP_PKEY *der_priv(const uint8_t *buf, size_t len)
{
	const unsigned char *p = buf;
	EVP_PKEY *priv = d2i_AutoPrivateKey(NULL, &p, (long)len), *pub = NULL;
	unsigned char *der = NULL;
	int n;

	if (priv && p == buf + len) {
		n = i2d_PUBKEY(priv, &der);
		p = der;
		pub = n > 0 ? d2i_PUBKEY(NULL, &p, n) : NULL;
		OPENSSL_free(der);
	}
	EVP_PKEY_free(priv);
	return pub;
}

/* A passphrase callback that has none: an encrypted key is no key. */
static int no_pass(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/* The DER of BUF's first PEM block of type PEM_NAME (as OpenSSL matches
 * names: "CERTIFICATE" also takes "X509 CERTIFICATE", "ANY PRIVATE KEY"
 * every private key), OPENSSL_malloc'ed; or NULL. */
static unsigned char *pem_der(const uint8_t *buf, size_t len, const char *pem_name,
			      long *dlen)
{
	BIO *bio = BIO_new_mem_buf(buf, (int)len);
	unsigned char *der = NULL;

	if (bio && !PEM_bytes_read_bio(&der, dlen, NULL, pem_name, bio, no_pass, NULL))
		der = NULL;
	BIO_free(bio);
	return der;
}

/* One of der_pub and der_priv on BUF's first PEM block of type PEM_NAME. */
static EVP_PKEY *pem_key(const uint8_t *buf, size_t len, const char *pem_name,
			 EVP_PKEY *(*der)(const uint8_t *, size_t))
{
	long dlen;
	unsigned char *d = pem_der(buf, len, pem_name, &dlen);
	EVP_PKEY *pkey = d && dlen > 0 ? der(d, (size_t)dlen) : NULL;

	OPENSSL_free(d);
	return pkey;
}

/* Keylime's get_pubkey: certificate, public key, private key, each DER
 * then PEM; the first that loads. */
static EVP_PKEY *load_key(const uint8_t *buf, size_t len, X509 **cert)
{
	EVP_PKEY *pkey;
	unsigned char *d;
	long dlen;

	pkey = der_cert(buf, len, cert);
	if (pkey || *cert)
		return pkey;
	d = pem_der(buf, len, PEM_STRING_X509, &dlen);
	pkey = d && dlen > 0 ? der_cert(d, (size_t)dlen, cert) : NULL;
	OPENSSL_free(d);
	if (pkey || *cert)
		return pkey;
	pkey = der_pub(buf, len);
	if (!pkey)
		pkey = pem_key(buf, len, PEM_STRING_PUBLIC, der_pub);
	if (!pkey)
		pkey = pem_key(buf, len, PEM_STRING_RSA_PUBLIC, der_pub);
	if (!pkey)
		pkey = der_priv(buf, len);
	if (!pkey)
		pkey = pem_key(buf, len, PEM_STRING_EVP_PKEY, der_priv);
	return pkey;
}

/* The last 4 bytes of CERT's subject key identifier, 0 if it has none
 * of 4 bytes or more. */
static uint32_t keyid_of_cert(X509 *cert)
{
	const ASN1_OCTET_STRING *skid = cert ? X509_get0_subject_key_id(cert) : NULL;
	const unsigned char *d;

	if (!skid || ASN1_STRING_length(skid) < 4)
		return 0;
	d = ASN1_STRING_get0_data(skid) + ASN1_STRING_length(skid) - 4;
	return (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
}

int rp_keyring_add_buf(struct rp_keyring *kr, const uint8_t *buf, size_t len,
		       char *err, size_t errlen)
{
	X509 *cert = NULL;
	EVP_PKEY *pkey;
	uint32_t keyid;

	if (len > INT32_MAX)
		return 1;
	pkey = load_key(buf, len, &cert);
	ERR_clear_error();
	if (!pkey) {
		X509_free(cert);
		return 1;
	}
	if (!key_type_ok(pkey)) {
		X509_free(cert);
		EVP_PKEY_free(pkey);
		return fail(err, errlen, "a key of type %s (Keylime takes RSA and "
			    "EC keys)", OBJ_nid2sn(EVP_PKEY_get_base_id(pkey)));
	}
	/* Keylime takes a keyid of 0 (an identifier ending in 00000000)
	 * for none and computes it from the key. */
	keyid = keyid_of_cert(cert);
	if (!keyid && keyid_of_pkey(pkey, &keyid))
		keyid = 0;
	X509_free(cert);
	return keyring_put(kr, pkey, keyid, err, errlen);
}

int rp_keyring_add_json(struct rp_keyring *kr, const char *s, char *err,
			size_t errlen)
{
	const struct jval *ids, *keys, *o;
	struct jval *doc, *inner = NULL;
	char why[200];
	int ret = -1;

	doc = json_parse((const uint8_t *)s, strlen(s), why, sizeof(why));
	if (!doc)
		return fail(err, errlen, "\"verification-keys\": not valid JSON: %s", why);
	o = doc;
	/* A keyring stored as a JSON string of JSON, as Keylime accepts. */
	if (o->type == J_STR) {
		inner = json_parse((const uint8_t *)o->s, strlen(o->s), why, sizeof(why));
		if (!inner) {
			fail(err, errlen, "\"verification-keys\": not valid JSON: %s", why);
			goto out;
		}
		o = inner;
	}
	if (o->type != J_OBJ) {
		fail(err, errlen, "\"verification-keys\" is not a JSON object");
		goto out;
	}
	ids = json_get(o, "keyids");
	keys = json_get(o, "pubkeys");
	if (want_type(ids, J_ARR, "verification-keys: keyids", err, errlen) ||
	    want_type(keys, J_ARR, "verification-keys: pubkeys", err, errlen))
		goto out;
	for (size_t i = 0; i < ids->n; i++)
		if (ids->items[i]->type != J_NUM || !ids->items[i]->is_int) {
			fail(err, errlen, "verification-keys: keyids: item %zu is "
			     "not an integer", i);
			goto out;
		}
	for (size_t i = 0; i < keys->n; i++) {
		const struct jval *k = keys->items[i];
		size_t n = k->type == J_STR ? strlen(k->s) : 0;
		const unsigned char *p;
		unsigned char *der;
		EVP_PKEY *pkey;
		uint32_t keyid = 0;
		int len;

		if (k->type != J_STR) {
			fail(err, errlen, "verification-keys: pubkeys: item %zu is "
			     "not a string", i);
			goto out;
		}
		der = malloc(n / 4 * 3 + 3);
		if (!der) {
			fail(err, errlen, "out of memory");
			goto out;
		}
		len = n % 4 || n > INT32_MAX ? -1 :
		      EVP_DecodeBlock(der, (const unsigned char *)k->s, (int)n);
		if (len >= 0)
			len -= (n && k->s[n - 1] == '=') + (n > 1 && k->s[n - 2] == '=');
		p = der;
		pkey = len > 0 ? d2i_PUBKEY(NULL, &p, len) : NULL;
		free(der);
		ERR_clear_error();
		if (!pkey || !key_type_ok(pkey)) {
			EVP_PKEY_free(pkey);
			fail(err, errlen, "verification-keys: pubkeys: item %zu is "
			     "not a base64 DER RSA or EC public key", i);
			goto out;
		}
		/* keyids[i] names pubkeys[i]; 0 or none: computed.  One
		 * beyond 32 bits names no signature's key: left out. */
		if (i < ids->n && (ids->items[i]->int_overflow ||
				   ids->items[i]->i < 0 || ids->items[i]->i > UINT32_MAX)) {
			EVP_PKEY_free(pkey);
			continue;
		}
		if (i < ids->n)
			keyid = (uint32_t)ids->items[i]->i;
		if (!keyid && keyid_of_pkey(pkey, &keyid))
			keyid = 0;
		if (keyring_put(kr, pkey, keyid, err, errlen))
			goto out;
	}
	ret = 0;
out:
	json_free(inner);
	json_free(doc);
	return ret;
}

static int cmp_key(const void *a, const void *b)
{
	const struct rp_key *x = a, *y = b;

	return x->keyid < y->keyid ? -1 : x->keyid > y->keyid;
}

char *rp_keyring_to_json(const struct rp_keyring *kr)
{
	struct rp_key *sorted;
	char *out = NULL;
	size_t len = 0;
	FILE *fp;

	if (!kr->n)
		return strdup("");
	sorted = malloc(kr->n * sizeof(*sorted));
	fp = sorted ? open_memstream(&out, &len) : NULL;
	if (!fp) {
		free(sorted);
		return NULL;
	}
	memcpy(sorted, kr->keys, kr->n * sizeof(*sorted));
	qsort(sorted, kr->n, sizeof(*sorted), cmp_key);
	fputs("{\"keyids\": [", fp);
	for (size_t i = 0; i < kr->n; i++)
		fprintf(fp, "%s%u", i ? ", " : "", sorted[i].keyid);
	fputs("], \"pubkeys\": [", fp);
	for (size_t i = 0; i < kr->n; i++) {
		unsigned char *der = NULL, *b64;
		int n = i2d_PUBKEY(sorted[i].pkey, &der);

		b64 = n > 0 ? malloc((size_t)n / 3 * 4 + 5) : NULL;
		if (b64) {
			EVP_EncodeBlock(b64, der, n);
			fprintf(fp, "%s\"%s\"", i ? ", " : "", b64);
		}
		free(b64);
		OPENSSL_free(der);
		if (!b64) {
			fclose(fp);
			free(out);
			free(sorted);
			return NULL;
		}
	}
	fputs("]}", fp);
	free(sorted);
	if (fclose(fp)) {
		free(out);
		return NULL;
	}
	return out;
}

struct rp_key *rp_keyring_find(const struct rp_keyring *kr, uint32_t keyid)
{
	for (size_t i = 0; i < kr->n; i++)
		if (kr->keys[i].keyid == keyid)
			return &kr->keys[i];
	return NULL;
}

void rp_keyring_free(struct rp_keyring *kr)
{
	for (size_t i = 0; i < kr->n; i++)
		EVP_PKEY_free(kr->keys[i].pkey);
	free(kr->keys);
	kr->keys = NULL;
	kr->n = 0;
}

/* The hashes Keylime verifies signatures with, by kernel hash id. */
static const char *sig_hash_name(int id)
{
	switch (id) {
	case UEVM_HASH_MD5: return "md5";
	case UEVM_HASH_SHA1: return "sha1";
	case UEVM_HASH_SHA256: return "sha256";
	case UEVM_HASH_SHA384: return "sha384";
	case UEVM_HASH_SHA512: return "sha512";
	case UEVM_HASH_SHA224: return "sha224";
	case UEVM_HASH_STREEBOG_256: return "streebog256";
	case UEVM_HASH_STREEBOG_512: return "streebog512";
	}
	return NULL;
}

int rp_sig_verify(const struct rp_keyring *const *kr, size_t nkr,
		  const uint8_t *sig, size_t siglen, const uint8_t *digest,
		  size_t dlen, const char *digest_algo, char *why, size_t whylen)
{
	const struct rp_key *key = NULL;
	const char *hname;
	const EVP_MD *md;
	EVP_PKEY_CTX *ctx;
	uint32_t keyid;
	int ok;

	if (siglen < 2)
		return fail(why, whylen, "signature too short");
	if (sig[0] != UEVM_EVM_IMA_XATTR_DIGSIG &&
	    sig[0] != UEVM_EVM_XATTR_PORTABLE_DIGSIG)
		return fail(why, whylen, "signature of type 0x%02x", sig[0]);
	if (sig[1] != 2)
		return fail(why, whylen, "signature version %u (Keylime checks "
			    "version 2 only)", sig[1]);
	if (siglen < UEVM_SIG_HDR_SIZE ||
	    ((size_t)sig[7] << 8 | sig[8]) != siglen - UEVM_SIG_HDR_SIZE)
		return fail(why, whylen, "malformed signature header");
	hname = sig_hash_name(sig[2]);
	if (!hname)
		return fail(why, whylen, "signature hash %u not supported", sig[2]);
	if (strcmp(hname, digest_algo))
		return fail(why, whylen, "signature made with %s, the entry's "
			    "digest is %s", hname, digest_algo);
	keyid = (uint32_t)sig[3] << 24 | (uint32_t)sig[4] << 16 |
		(uint32_t)sig[5] << 8 | sig[6];
	for (size_t i = 0; i < nkr && !key; i++)
		key = rp_keyring_find(kr[i], keyid);
	if (!key)
		return fail(why, whylen, "no key with keyid %08x", keyid);
	md = EVP_get_digestbyname(hname);
	ctx = md ? EVP_PKEY_CTX_new(key->pkey, NULL) : NULL;
	ok = ctx && EVP_PKEY_verify_init(ctx) > 0 &&
	     (EVP_PKEY_get_base_id(key->pkey) != EVP_PKEY_RSA ||
	      EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0) &&
	     EVP_PKEY_CTX_set_signature_md(ctx, md) > 0 &&
	     EVP_PKEY_verify(ctx, sig + UEVM_SIG_HDR_SIZE,
			     siglen - UEVM_SIG_HDR_SIZE, digest, dlen) == 1;
	EVP_PKEY_CTX_free(ctx);
	ERR_clear_error();
	if (!ok)
		return fail(why, whylen, "signature invalid (key %08x)", keyid);
	return 0;
}
