// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ASCII measurement lists (ascii_runtime_measurements and its _<algo>
 * variants) through ima_ml_parse_ascii, with each line's template digest
 * bank told by its length and with sha1 forced; replays.
 *
 * Properties:
 *  - a list that parses is written back byte for byte by
 *    ima_entry_write_ascii with each line's bank (what uevm shows is what
 *    the list says).  The exception is a sha384/sha512 line whose digest
 *    does not match its data: entries keep only their sha1 and sha256
 *    digests as listed, other banks are computed;
 *  - its entries written as a binary list parse back (ima_ml_parse_binary)
 *    to entries with the same ASCII rendering;
 *  - the replay sees as many entries as the parse, and a refused list is
 *    refused by the replay too, always with a reason.
 */
#include "fuzz.h"
#include "ima.h"

struct state {
	const uint8_t *in;	/* the input, to find each line */
	size_t in_len, pos;
	FILE *bin, *ascii1;	/* every entry as binary and ASCII (sha1) */
	size_t entries;
};

/* The bank of a line's template digest, from its length (as the parser). */
static int line_algo(const uint8_t *l, size_t len)
{
	const uint8_t *sp = len > 3 ? memchr(l + 3, ' ', len - 3) : NULL;
	size_t n = sp ? (size_t)(sp - l) - 3 : len - 3;

	return n == 40 ? UEVM_HASH_SHA1 : n == 64 ? UEVM_HASH_SHA256 :
	       n == 96 ? UEVM_HASH_SHA384 : UEVM_HASH_SHA512;
}

static int each(const struct ima_template_entry *e, size_t index,
		bool digest_ok, void *arg)
{
	struct state *s = arg;
	const uint8_t *l = s->in + s->pos;
	const uint8_t *nl = memchr(l, '\n', s->in_len - s->pos);
	size_t llen, outlen = 0;
	char *out = NULL;
	FILE *fp;
	int algo;

	FUZZ_ASSERT(index == s->entries);
	FUZZ_ASSERT(nl != NULL);
	s->entries++;
	llen = (size_t)(nl - l) + 1;
	s->pos += llen;
	algo = line_algo(l, llen);
	FUZZ_ASSERT(ima_entry_pcr(e) >= 0 && ima_entry_pcr(e) < IMA_ML_NUM_PCRS);
	fp = open_memstream(&out, &outlen);
	if (!fp)
		abort();
	FUZZ_ASSERT(ima_entry_write_ascii(e, algo, fp) == 0);
	fclose(fp);
	if (digest_ok || algo == UEVM_HASH_SHA1 || algo == UEVM_HASH_SHA256) {
		FUZZ_ASSERT(outlen == llen);
		FUZZ_ASSERT(!memcmp(out, l, llen));
	}
	free(out);
	FUZZ_ASSERT(ima_entry_write_binary(e, UEVM_HASH_SHA1, s->bin) == 0);
	FUZZ_ASSERT(ima_entry_write_ascii(e, UEVM_HASH_SHA1, s->ascii1) == 0);
	return 0;
}

static int render_ascii(const struct ima_template_entry *e, size_t index,
			bool digest_ok, void *arg)
{
	(void)index;
	(void)digest_ok;
	FUZZ_ASSERT(ima_entry_write_ascii(e, UEVM_HASH_SHA1, arg) == 0);
	return 0;
}

static int count(const struct ima_template_entry *e, size_t index,
		 bool digest_ok, void *arg)
{
	(void)e;
	(void)index;
	(void)digest_ok;
	(*(size_t *)arg)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = fuzz_dup(data, size);
	char *bin = NULL, *a1 = NULL, *a2 = NULL;
	size_t binlen = 0, a1len = 0, a2len = 0;
	struct state s = { buf, size, 0, NULL, NULL, 0 };
	struct ima_ml_replay r;
	FILE *fp;
	long n;

	s.bin = open_memstream(&bin, &binlen);
	s.ascii1 = open_memstream(&a1, &a1len);
	if (!s.bin || !s.ascii1)
		abort();
	n = ima_ml_parse_ascii(buf, size, IMA_ML_ASCII_AUTO, each, &s);
	fclose(s.bin);
	fclose(s.ascii1);
	if (n < 0) {
		FUZZ_ASSERT(n == -EBADMSG);
		FUZZ_ASSERT(!strncmp(uevm_last_error(), "line ", 5));
		FUZZ_ASSERT(ima_ml_replay_ascii(buf, size, UEVM_HASH_SHA256, false, &r) < 0);
	} else {
		FUZZ_ASSERT((size_t)n == s.entries && s.pos == size);
		/* The binary form of the same entries reads back the same. */
		fp = open_memstream(&a2, &a2len);
		if (!fp)
			abort();
		FUZZ_ASSERT(ima_ml_parse_binary((uint8_t *)bin, binlen, UEVM_HASH_SHA1,
						render_ascii, fp) == n);
		fclose(fp);
		FUZZ_ASSERT(a1len == a2len && !memcmp(a1, a2, a1len));
		FUZZ_ASSERT(ima_ml_replay_ascii(buf, size, UEVM_HASH_SHA256, false, &r) == 0);
		FUZZ_ASSERT(r.entries == (unsigned long)n);
		FUZZ_ASSERT(ima_ml_replay_ascii(buf, size, UEVM_HASH_SHA1, true, &r) == 0);
	}
	/* With sha1 forced: a subset of what is accepted, never more. */
	if (ima_ml_parse_ascii(buf, size, UEVM_HASH_SHA1, count, &s.entries) >= 0)
		FUZZ_ASSERT(n >= 0);
	free(bin);
	free(a1);
	free(a2);
	free(buf);
	return 0;
}
