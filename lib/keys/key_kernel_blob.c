// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's "encrypted" key blobs (security/keys/encrypted-keys/), so
 * that the same EVM key loads into a kernel with
 *   keyctl add encrypted evm-key "load <blob>" @u
 * and into uevm.  As `keyctl pipe` prints it, a blob is
 *
 *   [FORMAT] MASTER-DESC DATALEN HEX(iv[16] 00 encrypted-data hmac[32])
 *
 * The kernel derives two keys from the user master key M:
 *   enc  = SHA-256("ENC_KEY\0"  || M || 00), at least 32 bytes hashed
 *   auth = SHA-256("AUTH_KEY\0" || M),       at least 32 bytes hashed
 * (its buffer is sized for "AUTH_KEY", so ENC_KEY's carries one zero more,
 * and both are zero-padded to 32 bytes).  The data, zero-padded to whole
 * AES blocks, is AES-256-CBC encrypted under enc; HMAC-SHA256 under auth
 * covers the binary datablob "FORMAT\0MASTER-DESC\0DATALEN\0" iv 00 data,
 * starting at MASTER-DESC when the blob named no format.
 */
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>
#include "key_private.h"

#define HASH_SIZE 32
#define AES_BLOCK 16
#define MAX_DATA_SIZE 4096	/* the kernel's limits */

/* One parsed blob: the tokens point into the caller's copy. */
struct kblob {
	struct uevm_kblob_info info;
	char datalen_str[8];
	size_t enc_len;
	uint8_t enc[MAX_DATA_SIZE];
	uint8_t hmac[HASH_SIZE];
};

static size_t round_block(size_t n)
{
	return (n + AES_BLOCK - 1) / AES_BLOCK * AES_BLOCK;
}

static int derive_key(uint8_t out[HASH_SIZE], bool auth, const uint8_t *master,
		      size_t mlen)
{
	const char *label = auth ? "AUTH_KEY" : "ENC_KEY";
	size_t buflen = strlen("AUTH_KEY") + 1 + mlen;
	struct uevm_secret buf;
	int ret;

	if (buflen < HASH_SIZE)
		buflen = HASH_SIZE;
	ret = uevm_secret_alloc(&buf, buflen);
	if (ret)
		return ret;
	/* uevm_secure_alloc memory is zeroed: the padding is in place. */
	memcpy(buf.data, label, strlen(label) + 1);
	memcpy(buf.data + strlen(label) + 1, master, mlen);
	ret = uevm_hash_buffer(UEVM_HASH_SHA256, buf.data, buflen, out);
	uevm_secret_free(&buf);
	return ret < 0 ? ret : 0;
}

/* The binary datablob the HMAC covers. */
static int datablob_hmac(const struct kblob *b, const uint8_t auth[HASH_SIZE],
			 uint8_t out[HASH_SIZE])
{
	size_t flen = strlen(b->info.format), mlen = strlen(b->info.master_desc);
	size_t dlen = strlen(b->datalen_str);
	size_t len = flen + 1 + mlen + 1 + dlen + 1 + UEVM_KBLOB_IV_SIZE + 1 +
		     b->enc_len;
	uint8_t *blob = calloc(1, len), *p = blob;
	unsigned int olen = 0;
	size_t skip = b->info.has_format ? 0 : flen + 1;
	bool ok;

	if (!blob)
		return uevm_err(ENOMEM, "out of memory");
	memcpy(p, b->info.format, flen);
	p += flen + 1;
	memcpy(p, b->info.master_desc, mlen);
	p += mlen + 1;
	memcpy(p, b->datalen_str, dlen);
	p += dlen + 1;
	memcpy(p, b->info.iv, UEVM_KBLOB_IV_SIZE);
	p += UEVM_KBLOB_IV_SIZE + 1;
	memcpy(p, b->enc, b->enc_len);
	ok = HMAC(EVP_sha256(), auth, HASH_SIZE, blob + skip, len - skip, out,
		  &olen) && olen == HASH_SIZE;
	free(blob);
	return ok ? 0 : uevm_err(EIO, "HMAC-SHA256 failed");
}

static int aes_cbc(bool enc, const uint8_t key[HASH_SIZE], const uint8_t *iv,
		   const uint8_t *in, size_t len, uint8_t *out)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0, m = 0, ok;

	if (!c)
		return uevm_err(ENOMEM, "out of memory");
	ok = EVP_CipherInit_ex(c, EVP_aes_256_cbc(), NULL, key, iv, enc) &&
	     EVP_CIPHER_CTX_set_padding(c, 0) &&
	     EVP_CipherUpdate(c, out, &n, in, (int)len) &&
	     EVP_CipherFinal_ex(c, out + n, &m) && (size_t)(n + m) == len;
	EVP_CIPHER_CTX_free(c);	/* cleanses the key schedule */
	return ok ? 0 : uevm_err(EIO, "AES-256-CBC failed");
}

/* Next token separated by a space or tab, as the kernel's strsep. */
static const char *token(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *e = s;

	if (s >= end)
		return NULL;
	while (e < end && *e != ' ' && *e != '\t')
		e++;
	*len = (size_t)(e - s);
	*p = e < end ? e + 1 : e;
	return s;
}

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static int parse(const char *text, size_t len, struct kblob *b)
{
	const char *p = text, *end = text + len, *t, *hex;
	size_t tlen, hexlen, want;
	long dlen;

	memset(b, 0, sizeof(*b));
	/* A file may end with a newline; keyctl's "load" verb may precede. */
	while (end > p && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	t = token(&p, end, &tlen);
	if (t && tlen == 4 && !memcmp(t, "load", 4))
		t = token(&p, end, &tlen);
	if (!t || !tlen)
		return uevm_err(EINVAL, "kernel key blob: empty");
	if ((tlen == 7 && !memcmp(t, "default", 7)) ||
	    (tlen == 5 && !memcmp(t, "enc32", 5))) {
		memcpy(b->info.format, t, tlen);
		b->info.has_format = true;
		t = token(&p, end, &tlen);
	} else if (tlen == 8 && !memcmp(t, "ecryptfs", 8)) {
		return uevm_err(EINVAL, "kernel key blob: the ecryptfs format holds "
				"an eCryptfs token, not an EVM key");
	} else {
		strcpy(b->info.format, "default");
	}
	if (!t || tlen >= sizeof(b->info.master_desc))
		return uevm_err(EINVAL, "kernel key blob: the master key name is missing");
	memcpy(b->info.master_desc, t, tlen);
	if (!strncmp(b->info.master_desc, "trusted:", 8))
		return uevm_err(EINVAL, "kernel key blob: master key '%s' is a trusted "
				"key, which never leaves the TPM; uevm needs a user: "
				"master key", b->info.master_desc);
	if (strncmp(b->info.master_desc, "user:", 5) || tlen == 5 ||
	    memchr(t, '\0', tlen))
		return uevm_err(EINVAL, "kernel key blob: bad master key name '%s'",
				b->info.master_desc);
	t = token(&p, end, &tlen);
	/* The token is not NUL-terminated (it may end the caller's buffer):
	 * only its own TLEN bytes are looked at. */
	if (!t || !tlen || tlen >= sizeof(b->datalen_str) || !all_digits(t, tlen))
		return uevm_err(EINVAL, "kernel key blob: the data length is missing or bad");
	memcpy(b->datalen_str, t, tlen);
	dlen = strtol(b->datalen_str, NULL, 10);
	if (dlen < UEVM_KBLOB_MIN_DATA || dlen > MAX_DATA_SIZE)
		return uevm_err(EINVAL, "kernel key blob: data length %ld is outside "
				"the kernel's %d..%d", dlen, UEVM_KBLOB_MIN_DATA,
				MAX_DATA_SIZE);
	if (!strcmp(b->info.format, "enc32") && dlen != 32)
		return uevm_err(EINVAL, "kernel key blob: enc32 keys have 32 bytes");
	b->info.datalen = (size_t)dlen;
	b->enc_len = round_block(b->info.datalen);

	hex = token(&p, end, &hexlen);
	if (!hex)
		return uevm_err(EINVAL, "kernel key blob: the encrypted data is missing");
	if (p != end)
		return uevm_err(EINVAL, "kernel key blob: unexpected text after the data");
	want = 2 * (UEVM_KBLOB_IV_SIZE + 1 + b->enc_len + HASH_SIZE);
	if (hexlen != want)
		return uevm_err(EINVAL, "kernel key blob: %zu hex digits of data where "
				"%zu belong (truncated or damaged)", hexlen, want);
	/* The byte between IV and data is a separator the kernel skips. */
	if (uevm_hex_decode(hex, UEVM_KBLOB_IV_SIZE, b->info.iv) ||
	    uevm_hex_decode(hex + 2 * UEVM_KBLOB_IV_SIZE + 2, b->enc_len, b->enc) ||
	    uevm_hex_decode(hex + 2 * (UEVM_KBLOB_IV_SIZE + 1 + b->enc_len),
			    HASH_SIZE, b->hmac) ||
	    uevm_hex_decode(hex + 2 * UEVM_KBLOB_IV_SIZE, 1, (uint8_t[1]){ 0 }))
		return uevm_err(EINVAL, "kernel key blob: the data is not hex");
	return 0;
}

UEVM_EXPORT int uevm_kblob_parse(const char *blob, size_t len,
				 struct uevm_kblob_info *info)
{
	struct kblob *b = malloc(sizeof(*b));
	int ret;

	if (!b)
		return uevm_err(ENOMEM, "out of memory");
	ret = parse(blob, len, b);
	if (!ret)
		*info = b->info;
	free(b);
	return ret;
}

UEVM_EXPORT int uevm_kblob_import(const char *blob, size_t len,
				  const void *master, size_t master_len,
				  struct uevm_key **out,
				  struct uevm_kblob_info *info)
{
	struct uevm_secret keys = { 0 }, plain = { 0 };
	uint8_t mac[HASH_SIZE];
	struct kblob *b = malloc(sizeof(*b));
	int ret;

	if (!b)
		return uevm_err(ENOMEM, "out of memory");
	ret = parse(blob, len, b);
	if (ret)
		goto out;
	if (master_len == 0) {
		ret = uevm_err(EINVAL, "the master key is empty");
		goto out;
	}
	if (b->info.datalen > UEVM_MAX_KEY_SIZE) {
		ret = uevm_err(EINVAL, "kernel key blob: a %zu-byte key is longer than "
			       "the %d bytes EVM uses", b->info.datalen,
			       UEVM_MAX_KEY_SIZE);
		goto out;
	}
	/* keys.data: enc key, then auth key. */
	ret = uevm_secret_alloc(&keys, 2 * HASH_SIZE);
	if (!ret)
		ret = uevm_secret_alloc(&plain, b->enc_len);
	if (!ret)
		ret = derive_key(keys.data + HASH_SIZE, true, master, master_len);
	if (!ret)
		ret = datablob_hmac(b, keys.data + HASH_SIZE, mac);
	if (ret)
		goto out;
	if (uevm_memneq(mac, b->hmac, HASH_SIZE)) {
		ret = uevm_err(EKEYREJECTED, "kernel key blob: the HMAC does not match: "
			       "wrong master key for '%s' (or a modified blob)",
			       b->info.master_desc);
		goto out;
	}
	ret = derive_key(keys.data, false, master, master_len);
	if (!ret)
		ret = aes_cbc(false, keys.data, b->info.iv, b->enc, b->enc_len,
			      plain.data);
	if (!ret)
		ret = uevm_key_from_bytes(plain.data, b->info.datalen, out);
	if (!ret && info)
		*info = b->info;
out:
	uevm_secret_free(&keys);
	uevm_secret_free(&plain);
	free(b);
	uevm_scrub();
	return ret;
}

UEVM_EXPORT int uevm_kblob_export(const struct uevm_key *key,
				  const void *master, size_t master_len,
				  const char *master_desc, const uint8_t *iv,
				  char **out)
{
	struct uevm_secret keys = { 0 }, plain = { 0 };
	struct uevm_text_buf t = { 0 };
	struct kblob *b;
	int ret;

	if (!master_desc)
		master_desc = UEVM_KBLOB_DEFAULT_MASTER;
	if (key->len < UEVM_KBLOB_MIN_DATA)
		return uevm_err(EINVAL, "the kernel's encrypted keys hold at least %d "
				"bytes; this key has %zu", UEVM_KBLOB_MIN_DATA,
				key->len);
	if (strncmp(master_desc, "user:", 5) || !master_desc[5] ||
	    strlen(master_desc) >= sizeof(b->info.master_desc) ||
	    strpbrk(master_desc, " \t\n"))
		return uevm_err(EINVAL, "master key name '%s': uevm writes blobs for "
				"user: master keys only (like user:kmk)", master_desc);
	if (master_len == 0)
		return uevm_err(EINVAL, "the master key is empty");
	b = calloc(1, sizeof(*b));
	if (!b)
		return uevm_err(ENOMEM, "out of memory");
	strcpy(b->info.format, "default");
	b->info.has_format = true;
	strcpy(b->info.master_desc, master_desc);
	b->info.datalen = key->len;
	snprintf(b->datalen_str, sizeof(b->datalen_str), "%u",
		 (unsigned int)key->len & 0xfff);	/* at most 128 */
	b->enc_len = round_block(key->len);
	if (iv)
		memcpy(b->info.iv, iv, UEVM_KBLOB_IV_SIZE);
	else if (RAND_bytes(b->info.iv, UEVM_KBLOB_IV_SIZE) != 1) {
		ret = uevm_err(EIO, "cannot get random bytes for the IV");
		goto out;
	}

	ret = uevm_secret_alloc(&keys, 2 * HASH_SIZE);
	if (!ret)
		ret = uevm_secret_alloc(&plain, b->enc_len);
	if (ret)
		goto out;
	memcpy(plain.data, key->raw, key->len);	/* zero-padded, as the kernel */
	ret = derive_key(keys.data, false, master, master_len);
	if (!ret)
		ret = aes_cbc(true, keys.data, b->info.iv, plain.data, b->enc_len,
			      b->enc);
	if (!ret)
		ret = derive_key(keys.data + HASH_SIZE, true, master, master_len);
	if (!ret)
		ret = datablob_hmac(b, keys.data + HASH_SIZE, b->hmac);
	if (ret)
		goto out;

	{
		size_t n = UEVM_KBLOB_IV_SIZE + 1 + b->enc_len + HASH_SIZE;
		uint8_t *bin = calloc(1, n);
		char *hex = malloc(2 * n + 1);

		if (bin && hex) {
			memcpy(bin, b->info.iv, UEVM_KBLOB_IV_SIZE);
			memcpy(bin + UEVM_KBLOB_IV_SIZE + 1, b->enc, b->enc_len);
			memcpy(bin + UEVM_KBLOB_IV_SIZE + 1 + b->enc_len, b->hmac,
			       HASH_SIZE);
			uevm_hex_encode(bin, n, hex);
			uevm_text_printf(&t, "%s %s %s %s", b->info.format,
				    b->info.master_desc, b->datalen_str, hex);
		} else {
			t.failed = true;
		}
		free(bin);
		free(hex);
	}
	if (t.failed) {
		free(t.s);
		ret = uevm_err(ENOMEM, "out of memory");
		goto out;
	}
	*out = t.s;
out:
	uevm_secret_free(&keys);
	uevm_secret_free(&plain);
	free(b);
	uevm_scrub();
	return ret;
}
