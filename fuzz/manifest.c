// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Manifests of labelled trees (programs/uevm/manifest.c): what `uevm verify
 * --manifest` and `uevm diff` read before (the trailer) and after (the
 * entries) authenticating them.  Properties: the entries of an accepted
 * manifest serialise back to exactly the bytes the trailer covers (one
 * canonical form: no two spellings of a name), and a manifest compared
 * with itself has no difference.
 */
#include "fuzz.h"
#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1), *auth = NULL;
	struct manifest *m = NULL;
	size_t body = 0, alen = 0, len = 0;
	bool is_sig = false;
	char *text = NULL;
	int ret;

	if (!buf)
		abort();
	memcpy(buf, data, size);
	ret = manifest_parse(buf, size, &m, &body, &is_sig, &auth, &alen);
	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL || ret == -ENOMEM);
		FUZZ_ASSERT(manifest_last_error()[0] != '\0');
		FUZZ_ASSERT(!m && !auth);
		free(buf);
		return 0;
	}
	FUZZ_ASSERT(body < size && alen > 0);
	FUZZ_ASSERT(is_sig || alen == UEVM_MANIFEST_MAC_SIZE);
	FUZZ_ASSERT(manifest_serialise(m, &text, &len) == 0);
	FUZZ_ASSERT(len == body && !memcmp(text, buf, len));
	for (size_t i = 0; i < m->n; i++) {
		struct mf_changes ch;

		FUZZ_ASSERT(manifest_find(m, m->e[i]->path) == m->e[i]);
		FUZZ_ASSERT(manifest_compare(m, m->e[i], m->e[i], &ch) == 0);
		FUZZ_ASSERT(ch.n == 0);
	}
	free(text);
	free(auth);
	manifest_free(m);
	free(buf);
	return 0;
}
