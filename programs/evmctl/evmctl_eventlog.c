// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * evmctl mode: the files ima_measurement and ima_boot_aggregate read that
 * are not measurement lists: PCR files ("PCR-00: <hex>" lines, the TPM 1.2
 * sysfs form) and the TPM 1.2 BIOS event log.  Both come from a stream or
 * a buffer, so that the fuzzers (fuzz/evmctl_pcrs.c, fuzz/bios_log.c) reach
 * them without files; the messages follow evmctl 1.6.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "evmctl.h"

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * COUNT bytes as pairs of hex digits, each pair after an optional space,
 * as evmctl's hex2bin.  It stops at the first pair that is not two hex
 * digits, so that a short value never reads past its line's end (the
 * bytes there are what an earlier, longer line left in the buffer).
 */
int ev_unhex_pcr(uint8_t *dst, const char *src, int count)
{
	for (int i = 0; i < count; i++) {
		int hi, lo;

		if (*src == ' ')
			src++;
		hi = hexval(src[0]);
		lo = hi < 0 ? -1 : hexval(src[1]);
		if (lo < 0)
			return -1;
		dst[i] = (uint8_t)(hi << 4 | lo);
		src += 2;
	}
	return 0;
}

int ev_pcr_lines_read(FILE *fp, int size, uint8_t (*pcr)[UEVM_MAX_DIGEST_SIZE])
{
	char buf[UEVM_MAX_DIGEST_SIZE * 3 + 16], tag[8];
	int i = 0, result = -1;

	while (i < EV_NUM_PCRS && fgets(buf, sizeof(buf), fp)) {
		snprintf(tag, sizeof(tag), "PCR-%2.2d", i);
		if (!strncmp(buf, tag, 6))
			ev_unhex_pcr(pcr[i++], buf + 7, size);
		result = 0;
	}
	return result;
}

/* A buffer as a read-only stream; NULL for an empty one (fmemopen's
 * answer to a zero size differs between C libraries). */
static FILE *mem_stream(const void *buf, size_t len)
{
	return len ? fmemopen((void *)buf, len, "r") : NULL;
}

int ev_pcr_lines_parse(const void *buf, size_t len, int size,
		       uint8_t (*pcr)[UEVM_MAX_DIGEST_SIZE])
{
	FILE *fp = mem_stream(buf, len);
	int ret;

	if (!fp)
		return -1;	/* as a file with no line */
	ret = ev_pcr_lines_read(fp, size, pcr);
	fclose(fp);
	return ret;
}

/* TPM 1.2 event log: {u32 pcr; u32 type; u8 digest[20]; u32 len; data},
 * each digest extended into its SHA-1 PCR. */
int ev_bios_log_read(FILE *fp, uint8_t (*pcr)[UEVM_MAX_DIGEST_SIZE])
{
	struct {
		uint32_t pcr, type;
		uint8_t digest[20];
		uint32_t len;
	} h;
	uint8_t *data, in[40];
	int err = 0;

	data = malloc(200000);
	if (!data)
		return 1;
	while (fread(&h, sizeof(h), 1, fp) == 1) {
		if (ev.verbose > EV_LOG_INFO) {
			log_info("%02u ", h.pcr);
			ev_log_dump(EV_LOG_INFO, h.digest, 20, true);
		}
		if (h.pcr >= EV_NUM_PCRS) {
			log_err("Invalid PCR %d.\n", h.pcr);
			break;
		}
		memcpy(in, pcr[h.pcr], 20);
		memcpy(in + 20, h.digest, 20);
		uevm_hash_buffer(UEVM_HASH_SHA1, in, sizeof(in), pcr[h.pcr]);
		if (h.len > 200000) {
			log_err("Event data event too long.\n");
			err = 1;
			break;
		}
		if (h.len && fread(data, h.len, 1, fp) != 1) {
			log_err("Failed reading event data (short read): errno: %s (%d)\n",
				strerror(errno), errno);
			err = 1;
			break;
		}
	}
	free(data);
	return err;
}

int ev_bios_log_parse(const void *buf, size_t len, uint8_t (*pcr)[UEVM_MAX_DIGEST_SIZE])
{
	FILE *fp = mem_stream(buf, len);
	int ret;

	if (!fp)
		return len ? 1 : 0;	/* an empty log: no events */
	ret = ev_bios_log_read(fp, pcr);
	fclose(fp);
	return ret;
}
