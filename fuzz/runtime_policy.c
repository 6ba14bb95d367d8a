// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Keylime runtime policies as `uevm runtime-policy check` reads them
 * (programs/uevm/rp_json.c, rp_policy.c, rp_regex.c, rp_nfa.c): the JSON
 * reader, the schema checks, the verification-keys keyring, and the
 * translation and matching of the excludes.  Properties: an accepted
 * policy finds every name of its maps again with its own list, each list
 * made of schema digests; the excludes compile or are refused with a
 * reason; the parse of a document does not depend on what follows it in
 * memory.
 */
#include "fuzz.h"
#include "prog.h"
#include "rp_json.h"
#include "rp_policy.h"
#include "rp_regex.h"

static void check_map(const struct rp_map *m)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct jval *l = rp_map_get(m, m->e[i].name);

		FUZZ_ASSERT(l == m->e[i].list);
		FUZZ_ASSERT(l->type == J_ARR && l->n > 0);
		for (size_t j = 0; j < l->n; j++) {
			FUZZ_ASSERT(rp_hex_ok(l->items[j]->s));
			FUZZ_ASSERT(rp_list_has(l, l->items[j]->s));
		}
		FUZZ_ASSERT(i == 0 || strcmp(m->e[i - 1].name, m->e[i].name) < 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	struct rp_policy p;
	struct rp_excludes ex;
	char err[512];
	struct jval *v;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	v = json_parse(buf, size, err, sizeof(err));
	FUZZ_ASSERT(v || err[0]);
	json_free(v);
	if (rp_policy_parse(buf, size, &p, err, sizeof(err))) {
		FUZZ_ASSERT(err[0] != '\0');
		rp_policy_free(&p);
		free(buf);
		return 0;
	}
	check_map(&p.digests);
	check_map(&p.keyrings);
	check_map(&p.ima_buf);
	FUZZ_ASSERT(p.log_hash_algo >= 0 && p.generator >= 0 && p.generator <= 3);
	if (rp_excludes_compile(&ex, p.excludes, p.nexcludes, err, sizeof(err))) {
		FUZZ_ASSERT(err[0] != '\0');
	} else {
		for (size_t i = 0; i < p.digests.n; i++)
			(void)rp_excludes_match(&ex, p.digests.e[i].name);
		rp_excludes_free(&ex);
	}
	free(rp_keyring_to_json(&p.keys));
	rp_policy_free(&p);
	free(buf);
	return 0;
}
