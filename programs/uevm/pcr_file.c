// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * PCR value files, as `uevm measurements verify --pcrs` reads them: lines
 * as evmctl takes them ("PCR-10: <hex>", the TPM 1.2 sysfs form) or as
 * tpm2_pcrread prints them ("  10: 0x<hex>", under a "sha256:" heading;
 * other banks' sections are skipped).  Kept apart from the command so
 * that a fuzzer can call it on a buffer.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "pcr_file.h"

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Hex with optional 0x and single spaces between bytes; exactly SIZE bytes. */
static bool parse_hex(const char *s, uint8_t *out, unsigned int size)
{
	unsigned int n = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	while (*s && *s != '\n' && *s != '\r') {
		int hi, lo;

		if (*s == ' ') {
			s++;
			continue;
		}
		hi = hexval(s[0]);
		lo = hi < 0 ? -1 : hexval(s[1]);
		if (lo < 0 || n == size)
			return false;
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
	}
	return n == size;
}

int pcr_file_read(FILE *fp, int algo, uint8_t (*pcr_out)[UEVM_MAX_DIGEST_SIZE],
		  uint32_t *have, unsigned int *lineno)
{
	unsigned int size = uevm_hash_algo_digest_size(algo);
	const char *section = NULL;
	char line[512], cur[32] = "";

	*lineno = 0;
	while (fgets(line, sizeof(line), fp)) {
		char *p = line, *end;
		long pcr;

		(*lineno)++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n' || *p == '#')
			continue;
		end = p + strcspn(p, " \t\r\n");
		if (end > p && end[-1] == ':' && !end[strspn(end, " \t\r\n")] &&
		    (p[0] < '0' || p[0] > '9') && (size_t)(end - p) < sizeof(cur)) {
			/* a "sha256:" heading */
			memcpy(cur, p, (size_t)(end - p - 1));
			cur[end - p - 1] = '\0';
			section = cur;
			continue;
		}
		if (section && uevm_hash_algo_by_name(section) != algo)
			continue;
		if (!strncmp(p, "PCR-", 4))
			p += 4;
		pcr = strtol(p, &end, 10);
		if (end == p || pcr < 0 || pcr >= IMA_ML_NUM_PCRS)
			return -1;
		while (*end == ' ')
			end++;
		if (*end != ':' || !parse_hex(end + 1, pcr_out[pcr], size))
			return -1;
		*have |= 1u << pcr;
	}
	return 0;
}

int pcr_file_parse(const void *buf, size_t len, int algo,
		   uint8_t (*pcr)[UEVM_MAX_DIGEST_SIZE], uint32_t *have,
		   unsigned int *lineno)
{
	FILE *fp;
	int ret;

	*lineno = 0;
	if (!len)
		return 0;	/* an empty file: no lines */
	fp = fmemopen((void *)buf, len, "r");
	if (!fp)
		return -1;
	ret = pcr_file_read(fp, algo, pcr, have, lineno);
	fclose(fp);
	return ret;
}
