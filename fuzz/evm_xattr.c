// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * security.evm values: the HMAC (type 2), the signature (type 3) and the
 * portable signature (type 5) through uevm_evm_xattr_parse.
 */
#include "fuzz.h"
#include "uevm_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *val = fuzz_dup(data, size);
	struct uevm_xattr_value v;
	int ret = evm_xattr_parse(val, size, &v);

	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL);
		FUZZ_ASSERT(uevm_last_error()[0] != '\0');
		free(val);
		return 0;
	}
	FUZZ_ASSERT(size > 0 && v.type == val[0]);
	switch (v.type) {
	case EVM_XATTR_HMAC:
		FUZZ_ASSERT(size == UEVM_EVM_HMAC_XATTR_SIZE);
		FUZZ_ASSERT(v.digest == val + 1 && v.digest_len == UEVM_HMAC_SIZE);
		break;
	case EVM_IMA_XATTR_DIGSIG:
	case EVM_XATTR_PORTABLE_DIGSIG:
		FUZZ_ASSERT(v.sig_version == 2 || v.sig_version == 3);
		FUZZ_ASSERT(v.sig == val + UEVM_SIG_HDR_SIZE);
		FUZZ_ASSERT(v.sig_len > 0 && v.sig_len == size - UEVM_SIG_HDR_SIZE);
		FUZZ_ASSERT(uevm_hash_algo_name(v.algo) != NULL);
		FUZZ_ASSERT(v.keyid == ((uint32_t)val[3] << 24 | (uint32_t)val[4] << 16 |
					(uint32_t)val[5] << 8 | val[6]));
		break;
	default:
		FUZZ_ASSERT(!"a type uevm_evm_xattr_parse should refuse");
	}
	free(val);
	return 0;
}
