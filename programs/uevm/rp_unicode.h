/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Python's \d, \s and \w on str (rp_unicode.c, generated): what Keylime's
 * excludes mean by them, which glibc's iswdigit, iswspace and iswalnum do
 * not say (U+00A0 is a space to Python, U+00B2 a word character, U+0663
 * a digit).
 */
#ifndef UEVM_RP_UNICODE_H
#define UEVM_RP_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rp_urange {
	uint32_t lo, hi;
};

struct rp_uclass {
	const struct rp_urange *r;
	size_t n;		/* sorted, disjoint */
};

extern const struct rp_uclass rp_digit, rp_space, rp_word;

static inline bool rp_uclass_has(const struct rp_uclass *c, uint32_t ch)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ch < c->r[mid].lo)
			hi = mid;
		else if (ch > c->r[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

#endif
