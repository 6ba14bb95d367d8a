/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by the libFuzzer targets (fuzz/TARGET.c).  Each target is
 * one C file defining LLVMFuzzerTestOneInput; see fuzz/README.md.
 */
#ifndef UEVM_FUZZ_H
#define UEVM_FUZZ_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "uevm_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/*
 * A property the parser must keep (beyond "does not crash"): when it does
 * not hold, abort so that libFuzzer records the input as a crash.
 */
#define FUZZ_ASSERT(cond)                                                    \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: property failed: %s\n",      \
				__FILE__, __LINE__, #cond);                  \
			abort();                                             \
		}                                                            \
	} while (0)

/* The input as a NUL-terminated string (parsers taking C strings); the
 * copy is exactly SIZE + 1 bytes so that ASan catches reads past it.
 * Returns NULL if the input has an embedded NUL (a C string cannot). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s;

	if (memchr(data, '\0', size))
		return NULL;
	s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* An exact-size heap copy: libFuzzer's own buffer is exact-size too, but a
 * copy lets a target hand out a non-const buffer. */
static inline uint8_t *fuzz_dup(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);

	if (!p)
		abort();
	if (size)
		memcpy(p, data, size);
	return p;
}

#endif
