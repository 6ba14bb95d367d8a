// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * security.ima values: uevm_ima_xattr_parse, and uevm_ima_xattr_format
 * giving back the same bytes for the digest forms it writes.
 */
#include "fuzz.h"
#include "uevm_internal.h"

static bool inside(const uint8_t *p, size_t n, const uint8_t *val, size_t len)
{
	return p >= val && n <= len && (size_t)(p - val) <= len - n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *val = fuzz_dup(data, size);
	uint8_t again[2 + UEVM_MAX_DIGEST_SIZE];
	struct uevm_xattr_value v;
	int ret = ima_xattr_parse(val, size, &v);

	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL);
		FUZZ_ASSERT(uevm_last_error()[0] != '\0');
		free(val);
		return 0;
	}
	FUZZ_ASSERT(size > 0 && v.type == val[0]);
	switch (v.type) {
	case IMA_XATTR_DIGEST:
	case IMA_XATTR_DIGEST_NG:
		FUZZ_ASSERT(inside(v.digest, v.digest_len, val, size));
		FUZZ_ASSERT(uevm_hash_algo_name(v.algo) != NULL);
		/* What the kernel writes for a digest comes back unchanged. */
		if ((v.type == IMA_XATTR_DIGEST && v.algo == UEVM_HASH_SHA1) ||
		    (v.type == IMA_XATTR_DIGEST_NG && v.algo != UEVM_HASH_SHA1 &&
		     v.algo != UEVM_HASH_MD5 && v.algo != UEVM_HASH_MD4)) {
			FUZZ_ASSERT(v.digest_len == uevm_hash_algo_digest_size(v.algo));
			ret = uevm_ima_xattr_format(v.algo, v.digest, again);
			FUZZ_ASSERT(ret > 0 && (size_t)ret == size);
			FUZZ_ASSERT(!memcmp(again, val, size));
		}
		break;
	case EVM_IMA_XATTR_DIGSIG:
	case IMA_VERITY_DIGSIG:
		FUZZ_ASSERT(v.sig_version == 2 || v.sig_version == 3);
		FUZZ_ASSERT(v.sig_len > 0 && v.sig_len == size - UEVM_SIG_HDR_SIZE);
		FUZZ_ASSERT(inside(v.sig, v.sig_len, val, size));
		FUZZ_ASSERT(uevm_hash_algo_name(v.algo) != NULL);
		break;
	default:
		FUZZ_ASSERT(!"a type uevm_ima_xattr_parse should refuse");
	}
	free(val);
	return 0;
}
