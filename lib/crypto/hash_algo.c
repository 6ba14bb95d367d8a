// SPDX-License-Identifier: LGPL-2.1-or-later
/* The kernel's hash algorithm ids, names and sizes, mapped onto OpenSSL. */
#include <pthread.h>
#include <string.h>
#include <strings.h>
#include "lib_private.h"

struct algo_info {
	const char *name;	/* the kernel's hash_algo_name[] */
	const char *ossl;	/* OpenSSL's name for EVP_MD_fetch */
	unsigned int size;
};

static const struct algo_info algos[UEVM_HASH_ALGO__LAST] = {
	[UEVM_HASH_MD4] = { "md4", "MD4", 16 },
	[UEVM_HASH_MD5] = { "md5", "MD5", 16 },
	[UEVM_HASH_SHA1] = { "sha1", "SHA1", 20 },
	[UEVM_HASH_RMD160] = { "rmd160", "RIPEMD160", 20 },
	[UEVM_HASH_SHA256] = { "sha256", "SHA256", 32 },
	[UEVM_HASH_SHA384] = { "sha384", "SHA384", 48 },
	[UEVM_HASH_SHA512] = { "sha512", "SHA512", 64 },
	[UEVM_HASH_SHA224] = { "sha224", "SHA224", 28 },
	[8] = { "rmd128", NULL, 16 },
	[9] = { "rmd256", NULL, 32 },
	[10] = { "rmd320", NULL, 40 },
	[11] = { "wp256", NULL, 32 },
	[12] = { "wp384", NULL, 48 },
	[13] = { "wp512", NULL, 64 },
	[14] = { "tgr128", NULL, 16 },
	[15] = { "tgr160", NULL, 20 },
	[16] = { "tgr192", NULL, 24 },
	[UEVM_HASH_SM3_256] = { "sm3", "SM3", 32 },
	[UEVM_HASH_STREEBOG_256] = { "streebog256", "streebog256", 32 },
	[UEVM_HASH_STREEBOG_512] = { "streebog512", "streebog512", 64 },
	[20] = { "sha3-256", "SHA3-256", 32 },
	[21] = { "sha3-384", "SHA3-384", 48 },
	[22] = { "sha3-512", "SHA3-512", 64 },
};

static EVP_MD *fetched[UEVM_HASH_ALGO__LAST];
static pthread_once_t fetch_once = PTHREAD_ONCE_INIT;

/* Fetching once avoids OpenSSL's per-call provider lookup on hot paths. */
static void fetch_all(void)
{
	for (int i = 0; i < UEVM_HASH_ALGO__LAST; i++)
		if (algos[i].ossl)
			fetched[i] = EVP_MD_fetch(NULL, algos[i].ossl, NULL);
}

const EVP_MD *uevm_hash_md(int algo)
{
	if (algo < 0 || algo >= UEVM_HASH_ALGO__LAST)
		return NULL;
	pthread_once(&fetch_once, fetch_all);
	return fetched[algo];
}

UEVM_EXPORT int uevm_hash_algo_by_name(const char *name)
{
	if (!name)
		return -EINVAL;
	if (!strcasecmp(name, "sm3-256"))
		return UEVM_HASH_SM3_256;
	for (int i = 0; i < UEVM_HASH_ALGO__LAST; i++)
		if (algos[i].name && !strcasecmp(name, algos[i].name))
			return i;
	return uevm_err(EINVAL, "unknown hash algorithm '%s'", name);
}

UEVM_EXPORT const char *uevm_hash_algo_name(int algo)
{
	if (algo < 0 || algo >= UEVM_HASH_ALGO__LAST)
		return NULL;
	return algos[algo].name;
}

UEVM_EXPORT unsigned int uevm_hash_algo_digest_size(int algo)
{
	if (algo < 0 || algo >= UEVM_HASH_ALGO__LAST)
		return 0;
	return algos[algo].size;
}

UEVM_EXPORT bool uevm_hash_algo_available(int algo)
{
	return uevm_hash_md(algo) != NULL;
}
