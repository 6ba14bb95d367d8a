// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * PCR value files: `uevm measurements verify --pcrs` (programs/uevm/pcr_file.c,
 * every bank) and evmctl's ima_measurement --pcrs and sysfs form
 * (programs/evmctl/evmctl_eventlog.c, SHA-1 and SHA-256).  Property: what
 * pcr_file_parse accepts, written back as "PCR-NN: <hex>" lines, parses
 * to the same values.
 */
#include "fuzz.h"
#include "pcr_file.h"
#include "evmctl_stubs.h"

static void check_bank(const uint8_t *data, size_t size, int algo)
{
	static uint8_t pcr[IMA_ML_NUM_PCRS][UEVM_MAX_DIGEST_SIZE];
	static uint8_t again[IMA_ML_NUM_PCRS][UEVM_MAX_DIGEST_SIZE];
	unsigned int dsize = uevm_hash_algo_digest_size(algo), lineno = 0;
	uint32_t have = 0, have2 = 0;
	char *text, *p;
	int ret;

	memset(pcr, 0, sizeof(pcr));
	ret = pcr_file_parse(data, size, algo, pcr, &have, &lineno);
	FUZZ_ASSERT(ret == 0 || ret == -1);
	FUZZ_ASSERT(ret == 0 || lineno > 0);
	if (ret || !have)
		return;
	text = malloc((size_t)IMA_ML_NUM_PCRS * (8 + 2 * dsize + 1) + 1);
	if (!text)
		abort();
	p = text;
	for (int i = 0; i < IMA_ML_NUM_PCRS; i++) {
		if (!(have & (1u << i)))
			continue;
		p += sprintf(p, "PCR-%02d: ", i);
		for (unsigned int j = 0; j < dsize; j++)
			p += sprintf(p, "%02x", pcr[i][j]);
		*p++ = '\n';
	}
	memset(again, 0, sizeof(again));
	ret = pcr_file_parse(text, (size_t)(p - text), algo, again, &have2, &lineno);
	FUZZ_ASSERT(ret == 0 && have2 == have);
	for (int i = 0; i < IMA_ML_NUM_PCRS; i++)
		if (have & (1u << i))
			FUZZ_ASSERT(!memcmp(pcr[i], again[i], dsize));
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int algos[] = { UEVM_HASH_SHA1, UEVM_HASH_SHA256,
				     UEVM_HASH_SHA384, UEVM_HASH_SHA512 };
	static uint8_t ev_pcr[EV_NUM_PCRS][UEVM_MAX_DIGEST_SIZE];
	uint8_t *copy = fuzz_dup(data, size);

	for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++)
		check_bank(copy, size, algos[i]);
	/* evmctl's banks: sha1 and sha256 */
	for (int dsize = 20; dsize <= 32; dsize += 12) {
		int ret = ev_pcr_lines_parse(copy, size, dsize, ev_pcr);

		FUZZ_ASSERT(ret == 0 || ret == -1);
	}
	free(copy);
	return 0;
}
