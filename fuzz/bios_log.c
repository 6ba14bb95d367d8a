// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The TPM 1.2 BIOS event log as evmctl's ima_boot_aggregate reads it
 * (programs/evmctl/evmctl_eventlog.c).  Property: the replay is deterministic
 * (same PCRs twice, so nothing depends on uninitialised memory) and agrees
 * with a replay done here on the raw records while they are well formed.
 */
#include "fuzz.h"
#include "evmctl_stubs.h"

static uint8_t a[EV_NUM_PCRS][UEVM_MAX_DIGEST_SIZE], b[EV_NUM_PCRS][UEVM_MAX_DIGEST_SIZE];
static uint8_t c[EV_NUM_PCRS][UEVM_MAX_DIGEST_SIZE];

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);	/* the log is in the host's byte order */
	return v;
}

/* An independent replay: 1 if the log is well formed to the end. */
static int replay(const uint8_t *d, size_t n)
{
	size_t off = 0;

	while (n - off >= 32) {
		uint32_t pcr = get32(d + off), len = get32(d + off + 28);
		uint8_t in[40];

		if (pcr >= EV_NUM_PCRS)
			return 0;
		memcpy(in, c[pcr], 20);
		memcpy(in + 20, d + off + 8, 20);
		uevm_hash_buffer(UEVM_HASH_SHA1, in, sizeof(in), c[pcr]);
		if (len > n - off - 32)
			return 0;
		off += 32 + len;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = fuzz_dup(data, size);
	int r1, r2, whole;

	ev.verbose = size && (data[0] & 1) ? EV_LOG_DEBUG : 0;
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	memset(c, 0, sizeof(c));
	r1 = ev_bios_log_parse(copy, size, a);
	r2 = ev_bios_log_parse(copy, size, b);
	FUZZ_ASSERT(r1 == r2 && (r1 == 0 || r1 == 1));
	FUZZ_ASSERT(!memcmp(a, b, sizeof(a)));
	whole = replay(copy, size);
	if (whole) {
		/* A well-formed log replays the same here (the reader ignores
		 * a trailing partial header, as fread does). */
		FUZZ_ASSERT(r1 == 0);
		for (int i = 0; i < EV_NUM_PCRS; i++)
			FUZZ_ASSERT(!memcmp(a[i], c[i], 20));
	}
	free(copy);
	return 0;
}
