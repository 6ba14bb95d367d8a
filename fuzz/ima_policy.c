// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The IMA policy language: ima_policy_parse_lines on arbitrary text, then
 * for an accepted policy its rendering (the kernel's ima/policy file) and
 * a few decisions.
 *
 * Property: the rendering of an accepted policy parses again and renders
 * the same (what `uevm policy` prints can be loaded back unchanged, but
 * for the kernel's own sigv3 quirk, see reorder_sigv3).
 */
#include "fuzz.h"
#include "ima_policy.h"

static char *render(const struct ima_policy *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (!fp)
		abort();
	FUZZ_ASSERT(ima_policy_write(p, fp) == 0);
	fclose(fp);
	return buf;
}

/*
 * The kernel shows "appraise_type=sigv3 digest_type=verity" but parses
 * sigv3 only after digest_type=verity, so its own rendering of such a rule
 * does not load again; uevm renders and parses exactly as the kernel does.
 * Swap the two (same length) before parsing the rendering again.
 */
static void reorder_sigv3(char *s)
{
	/* With the spaces around: whole options, not a label that ends
	 * in "appraise_type=sigv3". */
	static const char shown[] = " appraise_type=sigv3 digest_type=verity ";
	static const char loads[] = " digest_type=verity appraise_type=sigv3 ";

	while ((s = strstr(s, shown)) != NULL) {
		memcpy(s, loads, sizeof(loads) - 1);
		s += sizeof(loads) - 2;	/* its final space starts the next */
	}
}

static void decide(const struct ima_policy *p)
{
	static const struct ima_match_input inputs[] = {
		{ .func = FILE_CHECK, .mask = MAY_READ, .fsmagic = 0xef53,
		  .fsname = "ext4", .uid = 0, .euid = 0 },
		{ .func = BPRM_CHECK, .mask = MAY_EXEC, .uid = 1000, .euid = 1000,
		  .fowner = 1000, .fsname = "tmpfs", .fsmagic = 0x01021994 },
		{ .func = KEY_CHECK, .keyrings_or_label = ".ima" },
		{ .func = CRITICAL_DATA, .keyrings_or_label = "selinux" },
		{ .func = MMAP_CHECK, .mask = MAY_EXEC, .has_fsuuid = true,
		  .fsuuid = { 1, 2, 3 }, .cap_setuid = true, .suid = 0 },
	};
	struct ima_policy_result r;

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		ima_match_policy(p, &inputs[i], IMA_MEASURE | IMA_APPRAISE |
				 IMA_AUDIT | IMA_HASH, &r);
		FUZZ_ASSERT(!(r.action & ~(IMA_MEASURE | IMA_APPRAISE |
					    IMA_AUDIT | IMA_HASH)));
		FUZZ_ASSERT(r.pcr >= -1 && r.pcr < 64);
	}
	(void)ima_policy_flag(p);
	(void)ima_policy_setxattr_algos(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = (char *)fuzz_dup(data, size);
	struct ima_policy *p = NULL, *q = NULL;
	unsigned int line = 0;
	char *r1, *r2;
	int ret;

	ret = ima_policy_parse_lines(text, size, &p, &line);
	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL || ret == -ENOMEM);
		FUZZ_ASSERT(p == NULL);
		FUZZ_ASSERT(uevm_last_error()[0] != '\0');
		free(text);
		return 0;
	}
	FUZZ_ASSERT(p && ima_policy_count(p) > 0);
	decide(p);
	for (size_t i = 0; i < ima_policy_count(p); i++)
		(void)ima_policy_rule_has_lsm(p, i);

	r1 = render(p);
	reorder_sigv3(r1);
	ret = ima_policy_parse(r1, strlen(r1), &q);
	if (ret)
		fprintf(stderr, "rendered policy does not parse: %s\n%s",
			uevm_last_error(), r1);
	FUZZ_ASSERT(ret == 0);
	FUZZ_ASSERT(ima_policy_count(q) == ima_policy_count(p));
	r2 = render(q);
	reorder_sigv3(r2);
	if (strcmp(r1, r2))
		fprintf(stderr, "renderings differ:\n%s---\n%s", r1, r2);
	FUZZ_ASSERT(!strcmp(r1, r2));
	FUZZ_ASSERT(ima_policy_append(q, p) == 0);
	FUZZ_ASSERT(ima_policy_count(q) == 2 * ima_policy_count(p));

	free(r1);
	free(r2);
	ima_policy_free(p);
	ima_policy_free(q);
	free(text);
	return 0;
}
