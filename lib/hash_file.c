// SPDX-License-Identifier: GPL-2.0-or-later
/* Content hashing through OpenSSL EVP, with large sequential reads. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "lib_private.h"

/* 256 KiB keeps the buffer in L2 while amortising the syscall cost. */
#define HASH_BUF_SIZE (256 * 1024)

static __thread uint8_t *hash_buf;

UEVM_EXPORT int uevm_hash_buffer(int algo, const void *data, size_t len,
				 uint8_t *digest)
{
	const EVP_MD *md = uevm_hash_md(algo);

	if (!md)
		return uevm_err(ENOPKG, "hash algorithm %s is not available",
				uevm_hash_algo_name(algo) ?: "(invalid)");
	if (!EVP_Digest(data, len, digest, NULL, md, NULL))
		return uevm_err(EIO, "OpenSSL digest failed");
	return 0;
}

UEVM_EXPORT int uevm_hash_fd(int fd, int algo, uint8_t *digest)
{
	const EVP_MD *md = uevm_hash_md(algo);
	EVP_MD_CTX *ctx;
	off_t off = 0;
	int ret = 0;

	if (!md)
		return uevm_err(ENOPKG, "hash algorithm %s is not available",
				uevm_hash_algo_name(algo) ?: "(invalid)");
	if (!hash_buf) {
		hash_buf = malloc(HASH_BUF_SIZE);
		if (!hash_buf)
			return uevm_err(ENOMEM, "out of memory");
	}
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, md, NULL)) {
		EVP_MD_CTX_free(ctx);
		return uevm_err(ENOMEM, "cannot initialise %s",
				uevm_hash_algo_name(algo));
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	for (;;) {
		ssize_t n = pread(fd, hash_buf, HASH_BUF_SIZE, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = uevm_err(errno, "read failed: %m");
			break;
		}
		if (n == 0)
			break;
		EVP_DigestUpdate(ctx, hash_buf, (size_t)n);
		off += n;
	}
	if (!ret && !EVP_DigestFinal_ex(ctx, digest, NULL))
		ret = uevm_err(EIO, "OpenSSL digest failed");
	EVP_MD_CTX_free(ctx);
	return ret;
}
