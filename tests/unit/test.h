/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Minimal unit-test helpers: print PASS/FAIL lines run-tests.sh counts. */
#ifndef UEVM_TEST_H
#define UEVM_TEST_H
#include <stdio.h>
#include <string.h>

static int test_failures;

#define CHECK(name, cond)                                                      \
	do {                                                                   \
		if (cond)                                                      \
			printf("PASS: %s\n", name);                            \
		else {                                                         \
			printf("FAIL: %s: %s (%s:%d)\n", name, #cond, __FILE__, \
			       __LINE__);                                      \
			test_failures++;                                       \
		}                                                              \
	} while (0)

static inline int hex2bin(const char *hex, unsigned char *out, size_t max)
{
	size_t n = strlen(hex) / 2;

	if (n > max)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (unsigned char)v;
	}
	return (int)n;
}

static inline void bin2hex(const unsigned char *in, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", in[i]);
}

#define TEST_EXIT() return test_failures ? 1 : 0
#endif
