// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The boot_aggregate digest, the first entry of every list (the kernel's
 * ima_calc_boot_aggregate and ima_add_boot_aggregate): a hash over the
 * boot-time PCRs 0-7, and 8-9 as well for banks other than SHA-1.  The bank
 * used is the list's algorithm when the TPM has it, else SHA-256, else
 * SHA-1.  Without a TPM the digest is all zeros.
 */
#include <string.h>
#include "ima_ml_private.h"

/* H(PCR0 || ... || PCRn) with bank ALGO; -errno or the digest size. */
static int aggregate(struct ima_tpm *tpm, int algo, uint8_t *out)
{
	unsigned int size = uevm_hash_algo_digest_size(algo);
	int last = algo == UEVM_HASH_SHA1 ? 8 : 10;
	uint8_t buf[10 * UEVM_MAX_DIGEST_SIZE];

	for (int i = 0; i < last; i++) {
		int ret = ima_tpm_pcr_read(tpm, i, algo, buf + (size_t)i * size);

		if (ret < 0)
			return ret;
	}
	return ima_hash(algo, buf, (size_t)last * size, out);
}

int ima_calc_boot_aggregate(struct ima_tpm *tpm, int ima_hash_algo,
			    int *algo, uint8_t *digest, uint8_t sha1[20])
{
	int bank = -1, ret;

	*algo = ima_hash_algo;
	memset(digest, 0, uevm_hash_algo_digest_size(ima_hash_algo));
	memset(sha1, 0, IMA_SHA1_DIGEST_SIZE);
	if (!tpm)
		return 0;
	if (ima_tpm_has_bank(tpm, ima_hash_algo))
		bank = ima_hash_algo;
	else if (ima_tpm_has_bank(tpm, UEVM_HASH_SHA256))
		bank = UEVM_HASH_SHA256;
	else if (ima_tpm_has_bank(tpm, UEVM_HASH_SHA1))
		bank = UEVM_HASH_SHA1;
	if (bank >= 0) {
		ret = aggregate(tpm, bank, digest);
		if (ret < 0)
			return ret;
		*algo = bank;
	}
	/* The 'ima' template's 'd' field wants SHA-1 over the SHA-1 bank;
	 * without that bank the kernel records zeros. */
	if (ima_tpm_has_bank(tpm, UEVM_HASH_SHA1)) {
		ret = aggregate(tpm, UEVM_HASH_SHA1, sha1);
		if (ret < 0)
			return ret;
	}
	return 0;
}
