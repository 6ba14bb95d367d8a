// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Passphrase-wrapped key files ("uevm-key-passphrase v1"): the header
 * parser (uevm_key_passphrase_info) on everything, and the unwrap with
 * the passphrase the corpus files were made with when the file asks for
 * the cheapest Argon2id cost (so that the AEAD and the key checks after
 * the KDF are reached without making every run cost a real KDF).
 */
#include "fuzz.h"
#include "keys.h"

/* The passphrase of fuzz/corpus/key_passphrase/ (see gen-corpus.sh). */
#define FUZZ_PASSPHRASE "uevm fuzz passphrase"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = fuzz_dup(data, size);
	struct uevm_kdf_params kdf;
	struct uevm_key *key = NULL;
	size_t keylen = 0;
	int ret;

	ret = uevm_key_passphrase_info(buf, size, &kdf, &keylen);
	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL);
		FUZZ_ASSERT(uevm_last_error()[0] != '\0');
		free(buf);
		return 0;
	}
	FUZZ_ASSERT(keylen <= UEVM_MAX_KEY_SIZE);
	FUZZ_ASSERT(kdf.opslimit >= 1 && kdf.memlimit >= 8192);
	if (kdf.opslimit == 1 && kdf.memlimit <= (1u << 20)) {
		ret = uevm_key_unwrap_passphrase(buf, size, FUZZ_PASSPHRASE,
						 strlen(FUZZ_PASSPHRASE), &key);
		FUZZ_ASSERT(ret == 0 || ret == -EKEYREJECTED || ret == -EINVAL);
		if (!ret) {
			FUZZ_ASSERT(uevm_key_size(key) == keylen);
			uevm_key_free(key);
		}
	}
	free(buf);
	return 0;
}
