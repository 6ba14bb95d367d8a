// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the fuzzers (fuzz/) found, each with the clear error it now gets,
 * and the seed corpus checked against the parsers: the seeds were made by
 * evmctl, openssl, the kernel (keyctl) and uevm (fuzz/gen-corpus.sh), so
 * they must be accepted -- signatures verify, blobs and wrapped keys open,
 * lists parse with matching template digests.
 *
 * Buffers are exact-size heap copies, so that the ASan build catches any
 * read past an input's end.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "uevm_internal.h"
#include "keys.h"
#include "ima.h"
#include "ima_policy.h"
#include "sig_private.h"
#include "test.h"
#include "../../fuzz/test_certs.h"

#define CORPUS "fuzz/corpus/"
#define FUZZ_PASSPHRASE "uevm fuzz passphrase"
#define FUZZ_MASTER "uevm fuzz kernel-blob master key"

static uint8_t *dup_exact(const void *p, size_t n)
{
	uint8_t *d = malloc(n ? n : 1);

	if (d && n)
		memcpy(d, p, n);
	return d;
}

static uint8_t *read_seed(const char *dir, const char *name, size_t *len)
{
	char path[512];
	uint8_t buf[65536];
	FILE *fp;

	snprintf(path, sizeof(path), CORPUS "%s/%s", dir, name);
	fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	*len = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	return dup_exact(buf, *len);
}

/* ---- bugs found ------------------------------------------------------------ */

/* key_kernel_blob.c checked the data length token with strspn(), which
 * reads on to a NUL: past the end of a blob that ends with that token. */
static void kblob_length_at_end(void)
{
	static const char *const cases[] = {
		"enc32 user:f 2",	/* key_file target's input */
		"user:\n 0",		/* key_kblob target's input */
		"default user:kmk 32",
	};
	struct uevm_kblob_info info;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *b = (char *)dup_exact(cases[i], strlen(cases[i]));
		int ret = uevm_kblob_parse(b, strlen(cases[i]), &info);
		char name[96];

		snprintf(name, sizeof(name), "kblob: blob ending in its length (%zu) is refused", i);
		CHECK(name, ret == -EINVAL);
		snprintf(name, sizeof(name), "kblob: ... with a clear reason (%zu)", i);
		CHECK(name, strstr(uevm_last_error(), i == 2 ? "encrypted data is missing"
							     : "outside the kernel's"));
		free(b);
	}
}

static int count_bad(const struct ima_template_entry *e, size_t i, bool ok, void *arg)
{
	(void)e;
	(void)i;
	if (!ok)
		++*(int *)arg;
	return 0;
}

/* The 'ima' template name is shown up to its first NUL, but was hashed
 * in full: an entry could hide bytes.  Such names are now refused. */
static void ml_ima_name_nul(void)
{
	uint8_t list[4 + 20 + 4 + 3 + 20 + 4 + 8] = { 0 }, *b;
	size_t off = 0;
	uint32_t v;
	int bad = 0;
	long n;

	v = 10;
	memcpy(list + off, &v, 4), off += 4;
	memset(list + off, 0x11, 20), off += 20;	/* template digest */
	v = 3;
	memcpy(list + off, &v, 4), off += 4;
	memcpy(list + off, "ima", 3), off += 3;
	memset(list + off, 0x22, 20), off += 20;	/* d field */
	v = 8;
	memcpy(list + off, &v, 4), off += 4;
	memcpy(list + off, "ab\0hide!", 8), off += 8;
	b = dup_exact(list, off);
	n = ima_ml_parse_binary(b, off, UEVM_HASH_SHA1, count_bad, &bad);
	CHECK("ml: 'ima' entry whose name holds a NUL is refused", n == -EBADMSG);
	CHECK("ml: ... saying so", strstr(uevm_last_error(), "contains a NUL byte") != NULL);
	/* The same entry with a plain name is accepted (the check is not
	 * refusing the whole template). */
	memcpy(b + off - 8, "abcdefgh", 8);
	n = ima_ml_parse_binary(b, off, UEVM_HASH_SHA1, count_bad, &bad);
	CHECK("ml: the same entry with a plain name parses", n == 1);
	free(b);
}

/* ---- the seed corpus ---------------------------------------------------------- */

typedef void (*seed_fn)(const char *name, uint8_t *data, size_t len, void *arg);

static int for_each_seed(const char *dir, seed_fn fn, void *arg)
{
	char path[256];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), CORPUS "%s", dir);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		uint8_t *data;
		size_t len;

		/* regress-* crashed once, edge-* are odd on purpose. */
		if (de->d_name[0] == '.' || !strncmp(de->d_name, "regress-", 8) ||
		    !strncmp(de->d_name, "edge-", 5))
			continue;
		data = read_seed(dir, de->d_name, &len);
		if (!data)
			continue;
		fn(de->d_name, data, len, arg);
		free(data);
		n++;
	}
	closedir(d);
	return n;
}

static void sig_seed(const char *name, uint8_t *data, size_t len, void *arg)
{
	struct uevm_certset *set = arg;
	char what[160];
	size_t dlen = data[0];
	int ret;

	ret = uevm_sig_verify(set, data + 1 + dlen, len - 1 - dlen, data + 1, dlen);
	snprintf(what, sizeof(what), "corpus: signature %s verifies", name);
	CHECK(what, ret == 0);
	data[1] ^= 1;
	ret = uevm_sig_verify(set, data + 1 + dlen, len - 1 - dlen, data + 1, dlen);
	snprintf(what, sizeof(what), "corpus: signature %s fails for another digest", name);
	CHECK(what, ret == -EKEYREJECTED);
}

static void kblob_seed(const char *name, uint8_t *data, size_t len, void *arg)
{
	struct uevm_key *key = NULL;
	char what[160];
	int ret;

	(void)arg;
	ret = uevm_kblob_import((char *)data, len, FUZZ_MASTER, strlen(FUZZ_MASTER),
				&key, NULL);
	snprintf(what, sizeof(what), "corpus: kernel blob %s imports", name);
	CHECK(what, ret == 0 && uevm_key_size(key) >= 20);
	uevm_key_free(key);
	ret = uevm_kblob_import((char *)data, len, "another master", 14, &key, NULL);
	snprintf(what, sizeof(what), "corpus: kernel blob %s refuses another master", name);
	CHECK(what, ret == -EKEYREJECTED);
}

static void pp_seed(const char *name, uint8_t *data, size_t len, void *arg)
{
	struct uevm_kdf_params kdf;
	struct uevm_key *key = NULL;
	size_t keylen = 0;
	char what[160];
	int ret;

	(void)arg;
	ret = uevm_key_passphrase_info(data, len, &kdf, &keylen);
	snprintf(what, sizeof(what), "corpus: passphrase file %s parses", name);
	CHECK(what, ret == 0 && keylen > 0);
	if (ret || kdf.memlimit > (8u << 20))
		return;
	ret = uevm_key_unwrap_passphrase(data, len, FUZZ_PASSPHRASE,
					 strlen(FUZZ_PASSPHRASE), &key);
	snprintf(what, sizeof(what), "corpus: passphrase file %s opens", name);
	CHECK(what, ret == 0 && uevm_key_size(key) == keylen);
	uevm_key_free(key);
}

static void ml_seed(const char *name, uint8_t *data, size_t len, void *arg)
{
	char what[160];
	int bad = 0;
	long n;

	(void)arg;
	n = ima_ml_parse_binary(data, len, UEVM_HASH_SHA1, count_bad, &bad);
	snprintf(what, sizeof(what), "corpus: list %s %s", name,
		 strcmp(name, "cut-short") ? "parses, digests match" : "is refused");
	CHECK(what, strcmp(name, "cut-short") ? n >= 2 && bad == 0 : n == -EBADMSG);
}

static void policy_seed(const char *name, uint8_t *data, size_t len, void *arg)
{
	struct ima_policy *p = NULL;
	char what[160];
	bool bad = !strncmp(name, "bad-", 4);
	int ret;

	(void)arg;
	ret = ima_policy_parse((const char *)data, len, &p);
	snprintf(what, sizeof(what), "corpus: policy %s %s", name,
		 bad ? "is refused" : "parses");
	CHECK(what, bad ? ret == -EINVAL : ret == 0 && ima_policy_count(p) > 0);
	ima_policy_free(p);
}

static void corpus(void)
{
	struct uevm_certset *set = NULL;

	CHECK("corpus: the test certificates load",
	      !uevm_certset_new(&set) &&
	      sig_certset_add_mem(set, fuzz_cert_rsa, sizeof(fuzz_cert_rsa), "rsa") == 1 &&
	      sig_certset_add_mem(set, fuzz_cert_ec, sizeof(fuzz_cert_ec), "ec") == 1);
	CHECK("corpus: signatures present", for_each_seed("sig_verify", sig_seed, set) >= 9);
	uevm_certset_free(set);
	CHECK("corpus: kernel blobs present", for_each_seed("key_kblob", kblob_seed, NULL) >= 4);
	CHECK("corpus: passphrase files present",
	      for_each_seed("key_passphrase", pp_seed, NULL) >= 2);
	CHECK("corpus: lists present", for_each_seed("ima_ml_binary", ml_seed, NULL) >= 6);
	CHECK("corpus: policies present", for_each_seed("ima_policy", policy_seed, NULL) >= 5);
}

int main(void)
{
	kblob_length_at_end();
	ml_ima_name_nul();
	corpus();
	return test_failures ? 1 : 0;
}
