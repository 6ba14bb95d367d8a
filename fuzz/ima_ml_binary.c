// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Binary measurement lists (binary_runtime_measurements): every template
 * (ima, ima-ng, ima-sig, ..., custom formats and unknown names) through
 * ima_ml_parse_binary with the SHA-1 and the SHA-256 template digest, each
 * entry rendered back in the binary and the ASCII formats, and replays.
 *
 * Property: a list accepted with SHA-1 template digests is written back
 * byte for byte (parse then write is the identity), so that what uevm
 * shows and replays is exactly what the list holds.
 */
#include "fuzz.h"
#include "ima.h"

struct state {
	FILE *bin, *ascii;
	size_t entries;
};

static int each(const struct ima_template_entry *e, size_t index,
		bool digest_ok, void *arg)
{
	struct state *s = arg;

	(void)digest_ok;
	FUZZ_ASSERT(index == s->entries);
	s->entries++;
	FUZZ_ASSERT(ima_entry_pcr(e) >= 0 && ima_entry_pcr(e) < IMA_ML_NUM_PCRS);
	FUZZ_ASSERT(ima_entry_template_name(e) != NULL);
	for (int i = 0; i < ima_entry_num_fields(e); i++)
		FUZZ_ASSERT(ima_entry_field(e, i) != NULL);
	if (s->bin)
		FUZZ_ASSERT(ima_entry_write_binary(e, UEVM_HASH_SHA1, s->bin) == 0);
	FUZZ_ASSERT(ima_entry_write_ascii(e, UEVM_HASH_SHA256, s->ascii) == 0);
	return 0;
}

static long parse(const uint8_t *buf, size_t len, int algo, bool rewrite)
{
	char *bin = NULL, *ascii = NULL;
	size_t binlen = 0, asciilen = 0;
	struct state s = { NULL, NULL, 0 };
	long n;

	if (rewrite)
		s.bin = open_memstream(&bin, &binlen);
	s.ascii = open_memstream(&ascii, &asciilen);
	if ((rewrite && !s.bin) || !s.ascii)
		abort();
	n = ima_ml_parse_binary(buf, len, algo, each, &s);
	if (s.bin)
		fclose(s.bin);
	fclose(s.ascii);
	if (n < 0) {
		FUZZ_ASSERT(uevm_last_error()[0] != '\0');
	} else {
		FUZZ_ASSERT((size_t)n == s.entries);
		if (rewrite) {
			FUZZ_ASSERT(binlen == len);
			FUZZ_ASSERT(!memcmp(bin, buf, len));
		}
	}
	free(bin);
	free(ascii);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = fuzz_dup(data, size);
	struct ima_ml_replay r;
	long n1 = parse(buf, size, UEVM_HASH_SHA1, true);

	parse(buf, size, UEVM_HASH_SHA256, false);
	if (n1 >= 0) {
		/* Replays walk the same entries; sha256 with and without
		 * the pre-5.8 padding. */
		FUZZ_ASSERT(ima_ml_replay_binary(buf, size, UEVM_HASH_SHA256, false, &r) == 0);
		FUZZ_ASSERT(r.entries == (unsigned long)n1);
		FUZZ_ASSERT(ima_ml_replay_binary(buf, size, UEVM_HASH_SHA256, true, &r) == 0);
	} else {
		FUZZ_ASSERT(ima_ml_replay_binary(buf, size, UEVM_HASH_SHA1, false, &r) < 0);
	}
	free(buf);
	return 0;
}
