/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PCR value files for `uevm measurements verify --pcrs`: the parser on a
 * stream or on a buffer (the libFuzzer target fuzz/pcr_file.c uses the
 * latter), without messages; the caller names the file.
 */
#ifndef UEVM_PCR_FILE_H
#define UEVM_PCR_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "uevm_internal.h"
#include "ima.h"

/*
 * Read the values of bank ALGO into PCR[], setting bit N of *HAVE for each
 * PCR N given.  Returns 0, or -1 with *LINENO the line that is not a PCR
 * line of that bank.  An empty result (*HAVE == 0) is for the caller.
 */
int pcr_file_read(FILE *fp, int algo, uint8_t (*pcr)[UEVM_MAX_DIGEST_SIZE],
		  uint32_t *have, unsigned int *lineno);
/* The same on LEN bytes at BUF; -1 with *LINENO 0 if no stream can be made. */
int pcr_file_parse(const void *buf, size_t len, int algo,
		   uint8_t (*pcr)[UEVM_MAX_DIGEST_SIZE], uint32_t *have,
		   unsigned int *lineno);

#endif
