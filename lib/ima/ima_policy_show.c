// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rendering rules as the kernel's ima/policy file shows them
 * (ima_policy_show): the same keyword order, each item followed by a
 * space, "0x%lx" magics, "^MAY_READ" for bit tests.  Two differences: ids
 * above 2^31 print unsigned (the kernel prints them with %d, as negative
 * numbers it would not parse back), and rules with LSM conditions are
 * shown with them (the kernel hides rules whose label its LSM lacks).
 */
#include <inttypes.h>
#include "ima_policy_private.h"

static const char *cmp_sym(enum ima_cmp op)
{
	return op == IMA_CMP_GT ? ">" : op == IMA_CMP_LT ? "<" : "=";
}

static void show_list(FILE *fp, const char *key, const struct ima_opt_list *l)
{
	fprintf(fp, "%s=", key);
	for (size_t i = 0; i < l->count; i++)
		fprintf(fp, "%s%s", i ? "|" : "", l->items[i]);
	fputc(' ', fp);
}

static void show_rule(FILE *fp, const struct ima_rule_entry *e)
{
	static const struct { int bit; const char *name; } masks[] = {
		{ MAY_EXEC, "MAY_EXEC" }, { MAY_WRITE, "MAY_WRITE" },
		{ MAY_READ, "MAY_READ" }, { MAY_APPEND, "MAY_APPEND" },
	};
	static const struct { int bit; const char *name; } acts[] = {
		{ IMA_MEASURE, "measure" }, { IMA_DONT_MEASURE, "dont_measure" },
		{ IMA_APPRAISE, "appraise" }, { IMA_DONT_APPRAISE, "dont_appraise" },
		{ IMA_AUDIT, "audit" }, { IMA_HASH, "hash" },
		{ IMA_DONT_HASH, "dont_hash" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(acts); i++)
		if (e->action & acts[i].bit)
			fputs(acts[i].name, fp);
	fputc(' ', fp);

	if (e->flags & IMA_FUNC) {
		const char *name = ima_hook_name(e->func);

		if (name && e->func != NONE)
			fprintf(fp, "func=%s ", name);
		else
			fprintf(fp, "func=%d ", (int)e->func);
	}
	if (e->flags & (IMA_MASK | IMA_INMASK)) {
		const char *caret = (e->flags & IMA_MASK) ? "" : "^";

		for (size_t i = 0; i < ARRAY_SIZE(masks); i++)
			if (e->mask & masks[i].bit)
				fprintf(fp, "mask=%s%s", caret, masks[i].name);
		fputc(' ', fp);
	}
	if (e->flags & IMA_FSMAGIC)
		fprintf(fp, "fsmagic=0x%" PRIx64 " ", e->fsmagic);
	if (e->flags & IMA_FSNAME)
		fprintf(fp, "fsname=%s ", e->fsname);
	if (e->flags & IMA_KEYRINGS)
		show_list(fp, "keyrings", &e->keyrings);
	if (e->flags & IMA_LABEL)
		show_list(fp, "label", &e->label);
	if (e->flags & IMA_PCR)
		fprintf(fp, "pcr=%d ", e->pcr);
	if (e->flags & IMA_FSUUID) {
		const uint8_t *u = e->fsuuid;

		fprintf(fp, "fsuuid=%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
			"%02x%02x%02x%02x%02x%02x ",
			u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8],
			u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	}
	if (e->flags & IMA_UID)
		fprintf(fp, "uid%s%" PRIu32 " ", cmp_sym(e->uid_op), e->uid);
	if (e->flags & IMA_EUID)
		fprintf(fp, "euid%s%" PRIu32 " ", cmp_sym(e->uid_op), e->uid);
	if (e->flags & IMA_GID)
		fprintf(fp, "gid%s%" PRIu32 " ", cmp_sym(e->gid_op), e->gid);
	if (e->flags & IMA_EGID)
		fprintf(fp, "egid%s%" PRIu32 " ", cmp_sym(e->gid_op), e->gid);
	if (e->flags & IMA_FOWNER)
		fprintf(fp, "fowner%s%" PRIu32 " ", cmp_sym(e->fowner_op), e->fowner);
	if (e->flags & IMA_FGROUP)
		fprintf(fp, "fgroup%s%" PRIu32 " ", cmp_sym(e->fgroup_op), e->fgroup);
	if (e->flags & IMA_VALIDATE_ALGOS) {
		int n = 0;

		fputs("appraise_algos=", fp);
		for (int i = 0; i < UEVM_HASH_ALGO__LAST; i++)
			if (e->allowed_algos & (1u << i))
				fprintf(fp, "%s%s", n++ ? "," : "",
					uevm_hash_algo_name(i));
		fputc(' ', fp);
	}
	for (int i = 0; i < MAX_LSM_RULES; i++)
		if (e->lsm[i])
			fprintf(fp, "%s=%s ", ima_lsm_names[i], e->lsm[i]);
	if (e->template_name)
		fprintf(fp, "template=%s ", e->template_name);
	if (e->flags & IMA_DIGSIG_REQUIRED) {
		if (e->flags & IMA_VERITY_REQUIRED)
			fputs("appraise_type=sigv3 ", fp);
		else if (e->flags & IMA_MODSIG_ALLOWED)
			fputs("appraise_type=imasig|modsig ", fp);
		else
			fputs("appraise_type=imasig ", fp);
	}
	if (e->flags & IMA_VERITY_REQUIRED)
		fputs("digest_type=verity ", fp);
	if (e->flags & IMA_PERMIT_DIRECTIO)
		fputs("permit_directio ", fp);
	fputc('\n', fp);
}

UEVM_EXPORT int ima_policy_rule_write(const struct ima_policy *p, size_t i,
				      FILE *fp)
{
	if (!p || i >= p->count)
		return uevm_err(EINVAL, "no rule %zu", i);
	show_rule(fp, &p->rules[i]);
	return ferror(fp) ? uevm_err(EIO, "write error") : 0;
}

UEVM_EXPORT int ima_policy_write(const struct ima_policy *p, FILE *fp)
{
	if (!p)
		return uevm_err(EINVAL, "no policy");
	for (size_t i = 0; i < p->count; i++)
		show_rule(fp, &p->rules[i]);
	return ferror(fp) ? uevm_err(EIO, "write error") : 0;
}
