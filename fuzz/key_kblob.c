// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's encrypted-key blobs ("[load] [default|enc32] user:NAME LEN
 * HEX", as `keyctl pipe` prints them): uevm_kblob_parse, then
 * uevm_kblob_import under the master key the corpus was made with, which
 * checks the HMAC and decrypts.  A blob that imports is exported again
 * with its IV and must come out the same (but for the spelling the HMAC
 * does not cover: separators, hex case, the byte after the IV).
 */
#include "fuzz.h"
#include "keys.h"

/* The user:kmk master key of fuzz/corpus/key_kblob/ (see gen-corpus.sh). */
#define FUZZ_MASTER "uevm fuzz kernel-blob master key"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *blob = (char *)fuzz_dup(data, size), *again = NULL;
	struct uevm_kblob_info info, info2;
	struct uevm_key *key = NULL;
	int ret;

	ret = uevm_kblob_parse(blob, size, &info);
	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL);
		FUZZ_ASSERT(uevm_last_error()[0] != '\0');
		free(blob);
		return 0;
	}
	FUZZ_ASSERT(info.datalen >= UEVM_KBLOB_MIN_DATA && info.datalen <= 4096);
	FUZZ_ASSERT(!strncmp(info.master_desc, "user:", 5));
	FUZZ_ASSERT(!strcmp(info.format, "default") || !strcmp(info.format, "enc32"));
	ret = uevm_kblob_import(blob, size, FUZZ_MASTER, strlen(FUZZ_MASTER),
				&key, &info2);
	FUZZ_ASSERT(ret == 0 || ret == -EKEYREJECTED || ret == -EINVAL);
	if (!ret) {
		FUZZ_ASSERT(uevm_key_size(key) == info.datalen);
		FUZZ_ASSERT(!memcmp(info2.iv, info.iv, sizeof(info.iv)));
		if (info.has_format && !strcmp(info.format, "default")) {
			char *hex;
			size_t n, end = size;

			FUZZ_ASSERT(uevm_kblob_export(key, FUZZ_MASTER,
						      strlen(FUZZ_MASTER),
						      info.master_desc, info.iv,
						      &again) == 0);
			/* The input may carry "load " and a final newline,
			 * tabs for spaces and upper-case hex digits. */
			n = strlen(again);
			for (size_t i = 0; i < size; i++)
				if (blob[i] == '\t')
					blob[i] = ' ';
			while (end > 0 && memchr(" \r\n", blob[end - 1], 3))
				end--;	/* parse accepts one space after the data */
			hex = memrchr(blob, ' ', end);
			FUZZ_ASSERT(hex && (size_t)(hex - blob) + 35 <= size);
			for (char *c = hex; c < blob + size; c++)
				if (*c >= 'A' && *c <= 'F')
					*c = (char)(*c - 'A' + 'a');
			/* The byte between IV and data is not covered by the
			 * HMAC; the kernel skips it, export writes 00. */
			hex[1 + 32] = hex[1 + 33] = '0';
			FUZZ_ASSERT(memmem(blob, size, again, n) != NULL);
			free(again);
		}
		uevm_key_free(key);
	}
	free(blob);
	return 0;
}
