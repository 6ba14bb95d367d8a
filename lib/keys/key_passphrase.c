// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The passphrase form: the key sealed with XChaCha20-Poly1305 under a key
 * that Argon2id derives from a passphrase.  The file is text:
 *
 *   uevm-key-passphrase v1
 *   kdf argon2id ops=3 mem=268435456
 *   salt <16 bytes hex>
 *   aead xchacha20poly1305
 *   nonce <24 bytes hex>
 *   size <key length>
 *   data <hex of the sealed key and its 16-byte tag>
 *
 * Everything before the data line is the AEAD's associated data, so a
 * changed parameter fails authentication like a wrong passphrase does.
 */
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "key_private.h"
#include "dlopen_private.h"

#define KEK_SIZE crypto_aead_xchacha20poly1305_ietf_KEYBYTES
#define TAG_SIZE crypto_aead_xchacha20poly1305_ietf_ABYTES
#define NONCE_SIZE crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define SALT_SIZE crypto_pwhash_SALTBYTES

/* Bounds on what a file may ask for: a hostile file must not make the
 * loader allocate without limit. */
#define OPS_MAX 64
#define MEM_MAX ((size_t)4 << 30)

struct pp_file {
	struct uevm_kdf_params kdf;
	uint8_t salt[SALT_SIZE];
	uint8_t nonce[NONCE_SIZE];
	size_t keylen;
	const uint8_t *ad;	/* the header, authenticated */
	size_t adlen;
	uint8_t sealed[UEVM_MAX_KEY_SIZE + TAG_SIZE];
};

/* libsodium, loaded at first use (dlopen_private.h); its constants are
 * macros, compiled in. */
#define SODIUM "libsodium.so.23"
static struct {
	__typeof__(sodium_init) *sodium_init;
	__typeof__(randombytes_buf) *randombytes_buf;
	__typeof__(crypto_pwhash) *crypto_pwhash;
	__typeof__(crypto_aead_xchacha20poly1305_ietf_encrypt) *encrypt;
	__typeof__(crypto_aead_xchacha20poly1305_ietf_decrypt) *decrypt;
} sodium;

static const struct uevm_dl_sym sodium_syms[] = {
	{ SODIUM, "sodium_init", (void **)&sodium.sodium_init },
	{ SODIUM, "randombytes_buf", (void **)&sodium.randombytes_buf },
	{ SODIUM, "crypto_pwhash", (void **)&sodium.crypto_pwhash },
	{ SODIUM, "crypto_aead_xchacha20poly1305_ietf_encrypt",
	  (void **)&sodium.encrypt },
	{ SODIUM, "crypto_aead_xchacha20poly1305_ietf_decrypt",
	  (void **)&sodium.decrypt },
};

static struct uevm_dl sodium_dl = UEVM_DL_INIT("passphrase key support", sodium_syms);

static int sodium_ready(void)
{
	int ret = uevm_dl_load(&sodium_dl);

	if (ret)
		return ret;
	if (sodium.sodium_init() < 0)
		return uevm_err(EIO, "libsodium cannot be initialised");
	return 0;
}

UEVM_EXPORT void uevm_kdf_params_default(struct uevm_kdf_params *p)
{
	p->opslimit = crypto_pwhash_OPSLIMIT_MODERATE;
	p->memlimit = crypto_pwhash_MEMLIMIT_MODERATE;
}

static int kdf_check(const struct uevm_kdf_params *p)
{
	if (p->opslimit < crypto_pwhash_OPSLIMIT_MIN || p->opslimit > OPS_MAX)
		return uevm_err(EINVAL, "Argon2id passes must be %u to %u, not %" PRIu64,
				(unsigned)crypto_pwhash_OPSLIMIT_MIN, OPS_MAX,
				p->opslimit);
	if (p->memlimit < crypto_pwhash_MEMLIMIT_MIN || p->memlimit > MEM_MAX ||
	    p->memlimit % 1024)
		return uevm_err(EINVAL, "Argon2id memory must be a multiple of 1 KiB "
				"from %u bytes to 4 GiB, not %zu",
				(unsigned)crypto_pwhash_MEMLIMIT_MIN, p->memlimit);
	return 0;
}

static int derive(uint8_t *kek, const void *pass, size_t passlen,
		  const uint8_t *salt, const struct uevm_kdf_params *p)
{
	if (sodium.crypto_pwhash(kek, KEK_SIZE, pass, passlen, salt, p->opslimit,
			     p->memlimit, crypto_pwhash_ALG_ARGON2ID13))
		return uevm_err(ENOMEM, "Argon2id needs %zu MiB of memory it cannot get",
				p->memlimit >> 20);
	return 0;
}

static int parse_hex_line(struct uevm_line_reader *r, const char *name,
			  uint8_t *out, size_t n)
{
	size_t vlen;
	const char *v = uevm_line_next(r, name, &vlen);

	if (!v)
		return uevm_err(EINVAL, "passphrase key file: the '%s' line is missing "
				"(truncated or not a key file)", name);
	if (vlen != 2 * n || uevm_hex_decode(v, n, out))
		return uevm_err(EINVAL, "passphrase key file: '%s' must be %zu hex bytes",
				name, n);
	return 0;
}

static int parse_file(const void *file, size_t len, struct pp_file *f)
{
	struct uevm_line_reader r = { file, (const char *)file + len };
	const char *v, *data_line;
	char buf[96], canon[96];
	unsigned long long ops;
	size_t vlen, mem, keylen;
	int ret;

	if (len < strlen(UEVM_PASSPHRASE_MAGIC) ||
	    memcmp(file, UEVM_PASSPHRASE_MAGIC, strlen(UEVM_PASSPHRASE_MAGIC)))
		return uevm_err(EINVAL, "not a uevm passphrase key file");
	r.p += strlen(UEVM_PASSPHRASE_MAGIC);

	v = uevm_line_next(&r, "kdf", &vlen);
	if (!v)
		return uevm_err(EINVAL, "passphrase key file: the 'kdf' line is missing "
				"(truncated or not a key file)");
	if (vlen >= sizeof(buf))
		return uevm_err(EINVAL, "passphrase key file: bad 'kdf' line");
	memcpy(buf, v, vlen);
	buf[vlen] = '\0';
	if (sscanf(buf, "argon2id ops=%llu mem=%zu", &ops, &mem) != 2)
		return uevm_err(EINVAL, "passphrase key file: unknown KDF '%s'", buf);
	/* Only the canonical spelling: one file, one meaning. */
	snprintf(canon, sizeof(canon), "argon2id ops=%llu mem=%zu", ops, mem);
	if (strcmp(buf, canon))
		return uevm_err(EINVAL, "passphrase key file: bad 'kdf' line '%s'", buf);
	f->kdf.opslimit = ops;
	f->kdf.memlimit = mem;
	ret = kdf_check(&f->kdf);
	if (ret)
		return ret;

	ret = parse_hex_line(&r, "salt", f->salt, SALT_SIZE);
	if (ret)
		return ret;
	v = uevm_line_next(&r, "aead", &vlen);
	if (!v || vlen != strlen("xchacha20poly1305") ||
	    memcmp(v, "xchacha20poly1305", vlen))
		return uevm_err(EINVAL, "passphrase key file: the 'aead' line is missing "
				"or names an unknown cipher");
	ret = parse_hex_line(&r, "nonce", f->nonce, NONCE_SIZE);
	if (ret)
		return ret;
	v = uevm_line_next(&r, "size", &vlen);
	if (!v || vlen == 0 || vlen > 3 || v[0] == '0' ||
	    strspn(v, "0123456789") < vlen)
		return uevm_err(EINVAL, "passphrase key file: the 'size' line is missing or bad");
	keylen = 0;
	for (size_t i = 0; i < vlen; i++)
		keylen = keylen * 10 + (size_t)(v[i] - '0');
	if (keylen > UEVM_MAX_KEY_SIZE)
		return uevm_err(EINVAL, "passphrase key file: key size %zu is over %d",
				keylen, UEVM_MAX_KEY_SIZE);
	f->keylen = keylen;

	data_line = r.p;
	ret = parse_hex_line(&r, "data", f->sealed, keylen + TAG_SIZE);
	if (ret)
		return ret;
	if (r.p != r.end)
		return uevm_err(EINVAL, "passphrase key file: unexpected text after 'data'");
	f->ad = file;
	f->adlen = (size_t)(data_line - (const char *)file);
	return 0;
}

UEVM_EXPORT int uevm_key_passphrase_info(const void *file, size_t len,
					 struct uevm_kdf_params *p,
					 size_t *keylen)
{
	struct pp_file f;
	int ret = parse_file(file, len, &f);

	if (ret)
		return ret;
	if (p)
		*p = f.kdf;
	if (keylen)
		*keylen = f.keylen;
	return 0;
}

UEVM_EXPORT int uevm_key_wrap_passphrase(const struct uevm_key *key,
					 const void *pass, size_t passlen,
					 const struct uevm_kdf_params *p,
					 char **out, size_t *outlen)
{
	struct uevm_kdf_params def;
	struct uevm_text_buf t = { 0 };
	uint8_t salt[SALT_SIZE], nonce[NONCE_SIZE];
	uint8_t sealed[UEVM_MAX_KEY_SIZE + TAG_SIZE];
	unsigned long long slen;
	struct uevm_secret kek = { 0 };
	int ret;

	if (!p) {
		uevm_kdf_params_default(&def);
		p = &def;
	}
	if (passlen == 0)
		return uevm_err(EINVAL, "the passphrase is empty");
	ret = sodium_ready();
	if (!ret)
		ret = kdf_check(p);
	if (!ret)
		ret = uevm_secret_alloc(&kek, KEK_SIZE);
	if (ret)
		return ret;
	sodium.randombytes_buf(salt, sizeof(salt));
	sodium.randombytes_buf(nonce, sizeof(nonce));
	ret = derive(kek.data, pass, passlen, salt, p);
	if (ret)
		goto out;

	uevm_text_printf(&t, "%s", UEVM_PASSPHRASE_MAGIC);
	uevm_text_printf(&t, "kdf argon2id ops=%" PRIu64 " mem=%zu\n", p->opslimit,
		    p->memlimit);
	uevm_text_hex(&t, "salt", salt, sizeof(salt));
	uevm_text_printf(&t, "aead xchacha20poly1305\n");
	uevm_text_hex(&t, "nonce", nonce, sizeof(nonce));
	uevm_text_printf(&t, "size %zu\n", key->len);
	if (t.failed) {
		ret = uevm_err(ENOMEM, "out of memory");
		goto out;
	}
	sodium.encrypt(sealed, &slen, key->raw, key->len, (uint8_t *)t.s, t.len,
		   NULL, nonce, kek.data);
	uevm_text_hex(&t, "data", sealed, (size_t)slen);
	if (t.failed) {
		ret = uevm_err(ENOMEM, "out of memory");
		goto out;
	}
	*out = t.s;
	*outlen = t.len;
	t.s = NULL;
out:
	free(t.s);
	uevm_secret_free(&kek);
	uevm_scrub();
	return ret;
}

UEVM_EXPORT int uevm_key_unwrap_passphrase(const void *file, size_t len,
					   const void *pass, size_t passlen,
					   struct uevm_key **out)
{
	struct uevm_secret kek = { 0 }, plain = { 0 };
	unsigned long long plen;
	struct pp_file f;
	int ret;

	ret = sodium_ready();
	if (!ret)
		ret = parse_file(file, len, &f);
	if (ret)
		return ret;
	if (f.keylen == 0)
		return uevm_err(EINVAL, "passphrase key file: the key is empty");
	ret = uevm_secret_alloc(&kek, KEK_SIZE);
	if (!ret)
		ret = uevm_secret_alloc(&plain, UEVM_MAX_KEY_SIZE);
	if (!ret)
		ret = derive(kek.data, pass, passlen, f.salt, &f.kdf);
	if (ret)
		goto out;
	if (sodium.decrypt(plain.data, &plen, NULL, f.sealed, f.keylen + TAG_SIZE,
		       f.ad, f.adlen, f.nonce, kek.data)) {
		ret = uevm_err(EKEYREJECTED,
			       "wrong passphrase (or the key file was modified)");
		goto out;
	}
	ret = uevm_key_from_bytes(plain.data, (size_t)plen, out);
out:
	uevm_secret_free(&kek);
	uevm_secret_free(&plain);
	uevm_scrub();
	return ret;
}

int uevm_key_load_passphrase(const char *path, const struct uevm_secret *file,
			     const struct uevm_key_load_opts *o,
			     struct uevm_key **out)
{
	struct uevm_secret pass = { 0 };
	uevm_passphrase_fn ask = o->passphrase ?: uevm_passphrase_from_tty;
	char prompt[256];
	int ret;

	/* Check the file before asking anyone for a passphrase. */
	ret = uevm_key_passphrase_info(file->data, file->len, NULL, NULL);
	if (ret)
		return ret;
	snprintf(prompt, sizeof(prompt), "Passphrase for %s: ", path);
	ret = ask(o->passphrase_arg, prompt, false, &pass);
	if (ret)
		return ret;
	ret = uevm_key_unwrap_passphrase(file->data, file->len, pass.data,
					 pass.len, out);
	uevm_secret_free(&pass);
	return ret;
}
