// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevmd's configuration file (programs/uevmd/config.c): "key = value" lines.
 * Properties: only the documented error codes; what is accepted stays in
 * the documented ranges; every string is freed by uevmd_config_free.
 */
#include "fuzz.h"
#include "uevmd.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* The parser names each bad line; formatted, then dropped (stderr
	 * stays for the sanitizers' reports). */
	devnull = fopen("/dev/null", "we");
	if (!devnull)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = fuzz_dup(data, size);
	struct uevmd_config c;
	int ret;

	uevmd_config_defaults(&c);
	ret = uevmd_config_load_mem(copy, size, "fuzz.conf", devnull, &c);
	FUZZ_ASSERT(ret == 0 || ret == -EINVAL || ret == -ENOENT || ret == -E2BIG);
	FUZZ_ASSERT(c.nmounts <= UEVMD_MAX_MARKS && c.nfilesystems <= UEVMD_MAX_MARKS &&
		    c.ncerts <= 16);
	FUZZ_ASSERT(c.pcr >= 0 && c.pcr < IMA_ML_NUM_PCRS);
	FUZZ_ASSERT(c.workers >= 0 && c.workers <= 256);
	FUZZ_ASSERT(c.deadline_ms >= 10 && c.deadline_ms <= 600000);
	FUZZ_ASSERT(c.wedged_sec >= 1 && c.wedged_sec <= 86400);
	FUZZ_ASSERT(c.cache_size <= (1UL << 26));
	FUZZ_ASSERT(c.mode <= INTEGRITY_MODE_OFF);
	uevmd_config_free(&c);
	free(copy);
	return 0;
}
