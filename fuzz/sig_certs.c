// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Certificate files for the signature keyrings (uevm_certset_add_file's
 * parsing, through the buffer entry sig_certset_add_mem): PEM bundles and
 * DER, key checks (RSA size, ECDSA curve) and keyids from the subject key
 * identifier or the public key.
 */
#include <openssl/err.h>
#include "fuzz.h"
#include "uevm_internal.h"
#include "sig_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uevm_certset *set;
	uint8_t *buf = fuzz_dup(data, size);
	int ret;

	if (uevm_certset_new(&set))
		abort();
	ret = sig_certset_add_mem(set, buf, size, "fuzz");
	if (ret < 0) {
		FUZZ_ASSERT(uevm_last_error()[0] != '\0');
	} else {
		FUZZ_ASSERT(ret >= 1 && (size_t)ret == uevm_certset_count(set));
		for (size_t i = 0; i < uevm_certset_count(set); i++)
			(void)uevm_certset_keyid(set, i);
	}
	uevm_certset_free(set);
	ERR_clear_error();
	free(buf);
	return 0;
}
