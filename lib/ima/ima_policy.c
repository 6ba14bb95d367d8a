// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The IMA policy language: parsing a policy text into rules, whole or not
 * at all, with the kernel's grammar and its validity rules
 * (ima_parse_rule, ima_validate_rule).  Where the kernel silently takes
 * something odd, uevm refuses it instead, so that a policy that passes
 * `uevm policy check` also loads into the kernel:
 *  - a repeated keyword (the kernel keeps the last fsname=, pcr=, ...);
 *  - an fsuuid= with trailing characters (the kernel reads 36 and ignores
 *    the rest);
 *  - appraise_flag= values without "blacklist" (older kernels refuse them,
 *    newer ones ignore the option).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "ima_policy_private.h"

const char *const ima_lsm_names[MAX_LSM_RULES] = {
	"obj_user", "obj_role", "obj_type", "subj_user", "subj_role", "subj_type",
};

/* The policy-language spelling of each hook (the kernel's func_tokens). */
static const char *const hook_names[MAX_CHECK] = {
	[NONE] = "NONE",
	[FILE_CHECK] = "FILE_CHECK",
	[MMAP_CHECK] = "MMAP_CHECK",
	[MMAP_CHECK_REQPROT] = "MMAP_CHECK_REQPROT",
	[BPRM_CHECK] = "BPRM_CHECK",
	[CREDS_CHECK] = "CREDS_CHECK",
	[POST_SETATTR] = "POST_SETATTR",
	[MODULE_CHECK] = "MODULE_CHECK",
	[FIRMWARE_CHECK] = "FIRMWARE_CHECK",
	[KEXEC_KERNEL_CHECK] = "KEXEC_KERNEL_CHECK",
	[KEXEC_INITRAMFS_CHECK] = "KEXEC_INITRAMFS_CHECK",
	[POLICY_CHECK] = "POLICY_CHECK",
	[KEXEC_CMDLINE] = "KEXEC_CMDLINE",
	[KEY_CHECK] = "KEY_CHECK",
	[CRITICAL_DATA] = "CRITICAL_DATA",
	[SETXATTR_CHECK] = "SETXATTR_CHECK",
};

UEVM_EXPORT const char *ima_hook_name(enum ima_hooks func)
{
	if ((int)func < 0 || func >= MAX_CHECK)
		return NULL;
	return hook_names[func];
}

UEVM_EXPORT int ima_hook_by_name(const char *name)
{
	/* What func= accepts: not NONE nor POST_SETATTR, plus two aliases. */
	static const struct { const char *name; enum ima_hooks func; } names[] = {
		{ "FILE_CHECK", FILE_CHECK },
		{ "PATH_CHECK", FILE_CHECK },
		{ "MODULE_CHECK", MODULE_CHECK },
		{ "FIRMWARE_CHECK", FIRMWARE_CHECK },
		{ "FILE_MMAP", MMAP_CHECK },
		{ "MMAP_CHECK", MMAP_CHECK },
		{ "MMAP_CHECK_REQPROT", MMAP_CHECK_REQPROT },
		{ "BPRM_CHECK", BPRM_CHECK },
		{ "CREDS_CHECK", CREDS_CHECK },
		{ "KEXEC_KERNEL_CHECK", KEXEC_KERNEL_CHECK },
		{ "KEXEC_INITRAMFS_CHECK", KEXEC_INITRAMFS_CHECK },
		{ "POLICY_CHECK", POLICY_CHECK },
		{ "KEXEC_CMDLINE", KEXEC_CMDLINE },
		{ "KEY_CHECK", KEY_CHECK },
		{ "CRITICAL_DATA", CRITICAL_DATA },
		{ "SETXATTR_CHECK", SETXATTR_CHECK },
	};

	if (!name)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i].name))
			return names[i].func;
	return -1;
}

/* The kernel's built-in templates; template= takes a name or a format. */
static const struct { const char *name, *fmt; } templates[] = {
	{ "ima", "d|n" },
	{ "ima-ng", "d-ng|n-ng" },
	{ "ima-sig", "d-ng|n-ng|sig" },
	{ "ima-ngv2", "d-ngv2|n-ng" },
	{ "ima-sigv2", "d-ngv2|n-ng|sig" },
	{ "ima-buf", "d-ng|n-ng|buf" },
	{ "ima-modsig", "d-ng|n-ng|sig|d-modsig|modsig" },
	{ "evm-sig",
	  "d-ng|n-ng|evmsig|xattrnames|xattrlengths|xattrvalues|iuid|igid|imode" },
};

/* ---- rule storage ------------------------------------------------------ */

static void opt_list_free(struct ima_opt_list *l)
{
	for (size_t i = 0; i < l->count; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->count = 0;
}

static int opt_list_copy(struct ima_opt_list *dst, const struct ima_opt_list *src)
{
	dst->count = 0;
	dst->items = NULL;
	if (!src->count)
		return 0;
	dst->items = calloc(src->count, sizeof(*dst->items));
	if (!dst->items)
		return -ENOMEM;
	for (size_t i = 0; i < src->count; i++) {
		dst->items[i] = strdup(src->items[i]);
		if (!dst->items[i]) {
			dst->count = i;
			opt_list_free(dst);
			return -ENOMEM;
		}
	}
	dst->count = src->count;
	return 0;
}

void ima_rule_release(struct ima_rule_entry *e)
{
	free(e->fsname);
	e->fsname = NULL;
	for (int i = 0; i < MAX_LSM_RULES; i++) {
		free(e->lsm[i]);
		e->lsm[i] = NULL;
	}
	opt_list_free(&e->keyrings);
	opt_list_free(&e->label);
}

int ima_rule_copy(struct ima_rule_entry *dst, const struct ima_rule_entry *src)
{
	*dst = *src;
	dst->fsname = NULL;
	memset(dst->lsm, 0, sizeof(dst->lsm));
	dst->keyrings.items = dst->label.items = NULL;
	dst->keyrings.count = dst->label.count = 0;
	if (src->fsname && !(dst->fsname = strdup(src->fsname)))
		goto nomem;
	for (int i = 0; i < MAX_LSM_RULES; i++)
		if (src->lsm[i] && !(dst->lsm[i] = strdup(src->lsm[i])))
			goto nomem;
	if (opt_list_copy(&dst->keyrings, &src->keyrings) ||
	    opt_list_copy(&dst->label, &src->label))
		goto nomem;
	return 0;
nomem:
	ima_rule_release(dst);
	return -ENOMEM;
}

int ima_policy_reserve(struct ima_policy *p, size_t n)
{
	struct ima_rule_entry *r;
	size_t cap;

	if (p->count + n <= p->cap)
		return 0;
	cap = p->cap ? p->cap : 16;
	while (cap < p->count + n)
		cap *= 2;
	r = realloc(p->rules, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	p->rules = r;
	p->cap = cap;
	return 0;
}

UEVM_EXPORT void ima_policy_free(struct ima_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->count; i++)
		ima_rule_release(&p->rules[i]);
	free(p->rules);
	free(p);
}

UEVM_EXPORT size_t ima_policy_count(const struct ima_policy *p)
{
	return p ? p->count : 0;
}

UEVM_EXPORT unsigned int ima_policy_rule_line(const struct ima_policy *p, size_t i)
{
	return p && i < p->count ? p->rules[i].line : 0;
}

UEVM_EXPORT bool ima_policy_rule_has_lsm(const struct ima_policy *p, size_t i)
{
	if (!p || i >= p->count)
		return false;
	for (int k = 0; k < MAX_LSM_RULES; k++)
		if (p->rules[i].lsm[k])
			return true;
	return false;
}

/* Conditions on the caller (uid=, euid=, gid=, egid=, subj_*) and on the
 * file's owner or label (fowner=, fgroup=, obj_*), which can change with
 * no change of content. */
#define IMA_WHO_FLAGS (IMA_UID | IMA_EUID | IMA_GID | IMA_EGID | IMA_FOWNER | \
		       IMA_FGROUP)

UEVM_EXPORT bool ima_policy_depends_on_caller(const struct ima_policy *p,
					      size_t *rule)
{
	for (size_t i = 0; p && i < p->count; i++)
		if ((p->rules[i].flags & IMA_WHO_FLAGS) ||
		    ima_policy_rule_has_lsm(p, i)) {
			if (rule)
				*rule = i;
			return true;
		}
	return false;
}

UEVM_EXPORT bool ima_policy_depends_on_exec(const struct ima_policy *p,
					    size_t *rule)
{
	for (size_t i = 0; p && i < p->count; i++) {
		const struct ima_rule_entry *r = &p->rules[i];

		/* Measuring programs at exec: a front-end that runs
		 * BPRM_CHECK at the first read of every program measures
		 * each one before it can run (and maybe some that never
		 * do): more than the kernel, never less. */
		bool measure_at_exec = (r->flags & IMA_FUNC) &&
			r->func == BPRM_CHECK &&
			(r->action & (IMA_MEASURE | IMA_DONT_MEASURE)) &&
			!(r->flags & IMA_INMASK) &&
			(!(r->flags & IMA_MASK) || r->mask == MAY_EXEC);

		if (measure_at_exec)
			continue;
		if (((r->flags & IMA_FUNC) &&
		     (r->func == BPRM_CHECK || r->func == CREDS_CHECK)) ||
		    ((r->flags & (IMA_MASK | IMA_INMASK)) && (r->mask & MAY_EXEC))) {
			if (rule)
				*rule = i;
			return true;
		}
	}
	return false;
}

UEVM_EXPORT bool ima_policy_depends_on_exec_open(const struct ima_policy *p,
						 size_t *rule)
{
	for (size_t i = 0; p && i < p->count; i++) {
		const struct ima_rule_entry *r = &p->rules[i];

		if ((r->flags & (IMA_MASK | IMA_INMASK)) && (r->mask & MAY_EXEC) &&
		    (!(r->flags & IMA_FUNC) || r->func == FILE_CHECK)) {
			if (rule)
				*rule = i;
			return true;
		}
	}
	return false;
}

UEVM_EXPORT int ima_policy_append(struct ima_policy *dst,
				  const struct ima_policy *src)
{
	size_t done;

	if (!dst || !src)
		return uevm_err(EINVAL, "no policy");
	if (ima_policy_reserve(dst, src->count))
		return uevm_err(ENOMEM, "out of memory");
	for (done = 0; done < src->count; done++)
		if (ima_rule_copy(&dst->rules[dst->count + done], &src->rules[done]))
			break;
	if (done < src->count) {
		/* All or nothing, like the parser. */
		while (done--)
			ima_rule_release(&dst->rules[dst->count + done]);
		return uevm_err(ENOMEM, "out of memory");
	}
	dst->count += src->count;
	dst->fail_unverifiable_sigs |= src->fail_unverifiable_sigs;
	return 0;
}

/* ---- tokens ------------------------------------------------------------ */

enum kw_id {
	KW_FUNC, KW_MASK, KW_FSMAGIC, KW_FSNAME, KW_FSUUID,
	KW_UID, KW_EUID, KW_GID, KW_EGID, KW_FOWNER, KW_FGROUP,
	KW_OBJ_USER, KW_OBJ_ROLE, KW_OBJ_TYPE,
	KW_SUBJ_USER, KW_SUBJ_ROLE, KW_SUBJ_TYPE,
	KW_DIGEST_TYPE, KW_APPRAISE_TYPE, KW_APPRAISE_FLAG, KW_APPRAISE_ALGOS,
	KW_PERMIT_DIRECTIO, KW_PCR, KW_TEMPLATE, KW_KEYRINGS, KW_LABEL,
	KW__COUNT
};

static const struct keyword {
	const char *name;
	bool cmp;		/* also takes '<' and '>' */
	bool option;		/* an option rather than a condition */
} keywords[KW__COUNT] = {
	[KW_FUNC] = { "func", false, false },
	[KW_MASK] = { "mask", false, false },
	[KW_FSMAGIC] = { "fsmagic", false, false },
	[KW_FSNAME] = { "fsname", false, false },
	[KW_FSUUID] = { "fsuuid", false, false },
	[KW_UID] = { "uid", true, false },
	[KW_EUID] = { "euid", true, false },
	[KW_GID] = { "gid", true, false },
	[KW_EGID] = { "egid", true, false },
	[KW_FOWNER] = { "fowner", true, false },
	[KW_FGROUP] = { "fgroup", true, false },
	[KW_OBJ_USER] = { "obj_user", false, false },
	[KW_OBJ_ROLE] = { "obj_role", false, false },
	[KW_OBJ_TYPE] = { "obj_type", false, false },
	[KW_SUBJ_USER] = { "subj_user", false, false },
	[KW_SUBJ_ROLE] = { "subj_role", false, false },
	[KW_SUBJ_TYPE] = { "subj_type", false, false },
	[KW_DIGEST_TYPE] = { "digest_type", false, true },
	[KW_APPRAISE_TYPE] = { "appraise_type", false, true },
	[KW_APPRAISE_FLAG] = { "appraise_flag", false, true },
	[KW_APPRAISE_ALGOS] = { "appraise_algos", false, true },
	[KW_PERMIT_DIRECTIO] = { "permit_directio", false, true },
	[KW_PCR] = { "pcr", false, true },
	[KW_TEMPLATE] = { "template", false, true },
	[KW_KEYRINGS] = { "keyrings", false, true },
	[KW_LABEL] = { "label", false, true },
};

static const struct { const char *name; int action; } actions[] = {
	{ "measure", IMA_MEASURE },
	{ "dont_measure", IMA_DONT_MEASURE },
	{ "appraise", IMA_APPRAISE },
	{ "dont_appraise", IMA_DONT_APPRAISE },
	{ "audit", IMA_AUDIT },
	{ "hash", IMA_HASH },
	{ "dont_hash", IMA_DONT_HASH },
};

/* One rule being parsed: the entry and, for messages, the token that set
 * each keyword. */
struct rule_parse {
	struct ima_rule_entry *e;
	unsigned int line;
	const char *tok[KW__COUNT];
};

/* Quote a token for a message: control bytes and non-ASCII as \xHH, so a
 * hostile policy cannot forge output lines; long tokens are cut. */
static const char *quote_token(const char *tok, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	for (const unsigned char *s = (const unsigned char *)tok; *s; s++) {
		if (n + 8 >= size) {
			memcpy(buf + n, "...", 3);
			n += 3;
			break;
		}
		if (*s < 0x20 || *s >= 0x7f || *s == '\\') {
			buf[n++] = '\\';
			buf[n++] = 'x';
			buf[n++] = hex[*s >> 4];
			buf[n++] = hex[*s & 15];
		} else {
			buf[n++] = (char)*s;
		}
	}
	buf[n] = '\0';
	return buf;
}

static int rule_err(const struct rule_parse *rp, const char *why,
		    const char *tok)
{
	char q[160];

	return uevm_err(EINVAL, "line %u: %s '%s'", rp->line, why,
			quote_token(tok, q, sizeof(q)));
}

/* kstrtoul: an optional '+', digits of BASE (base 16 may start with 0x),
 * nothing else, no overflow. */
static int parse_ulong(const char *s, int base, uint64_t *out)
{
	uint64_t v = 0;

	if (*s == '+')
		s++;
	if (base == 16 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!*s)
		return -1;
	for (; *s; s++) {
		unsigned int d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = (unsigned int)(tolower((unsigned char)*s) - 'a' + 10);
		else
			return -1;
		if (v > (UINT64_MAX - d) / (unsigned int)base)
			return -1;
		v = v * (unsigned int)base + d;
	}
	*out = v;
	return 0;
}

/* An id as the kernel takes it: decimal, and a valid uid_t/gid_t
 * ((uid_t)-1 is the invalid id). */
static int parse_id(const char *s, uint32_t *out)
{
	uint64_t v;

	if (parse_ulong(s, 10, &v) || v >= UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* uuid_parse: 8-4-4-4-12 hex digits, bytes in string order. */
static int parse_fsuuid(const char *s, uint8_t out[16])
{
	static const int at[16] = { 0, 2, 4, 6, 9, 11, 14, 16,
				    19, 21, 24, 26, 28, 30, 32, 34 };

	if (strlen(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' ||
	    s[23] != '-')
		return -1;
	for (int i = 0; i < 16; i++) {
		const char *p = s + at[i];

		if (!isxdigit((unsigned char)p[0]) || !isxdigit((unsigned char)p[1]))
			return -1;
		out[i] = (uint8_t)((isdigit((unsigned char)p[0]) ? p[0] - '0' :
				    tolower((unsigned char)p[0]) - 'a' + 10) << 4 |
				   (isdigit((unsigned char)p[1]) ? p[1] - '0' :
				    tolower((unsigned char)p[1]) - 'a' + 10));
	}
	return 0;
}

/* keyrings=/label=: '|'-separated, no empty item. */
static int parse_opt_list(const char *s, struct ima_opt_list *l)
{
	size_t n = 1;
	const char *p;

	for (p = s; *p; p++)
		if (*p == '|')
			n++;
	l->items = calloc(n, sizeof(*l->items));
	if (!l->items)
		return -ENOMEM;
	l->count = 0;
	for (p = s;;) {
		size_t len = strcspn(p, "|");

		if (!len) {
			opt_list_free(l);
			return -EINVAL;
		}
		l->items[l->count] = strndup(p, len);
		if (!l->items[l->count]) {
			opt_list_free(l);
			return -ENOMEM;
		}
		l->count++;
		if (!p[len])
			break;
		p += len + 1;
	}
	return 0;
}

/* appraise_algos=: comma-separated kernel names of available algorithms. */
static int parse_algos(const struct rule_parse *rp, const char *tok,
		       const char *s, unsigned int *out)
{
	unsigned int set = 0;

	for (;;) {
		size_t len = strcspn(s, ",");
		int found = -1;

		for (int i = 0; i < UEVM_HASH_ALGO__LAST; i++) {
			const char *name = uevm_hash_algo_name(i);

			if (name && strlen(name) == len && !strncmp(name, s, len)) {
				found = i;
				break;
			}
		}
		if (found < 0)
			return rule_err(rp, "unknown hash algorithm in", tok);
		if (!uevm_hash_algo_available(found))
			return rule_err(rp, "unavailable hash algorithm in", tok);
		set |= 1u << found;
		if (!s[len])
			break;
		s += len + 1;
	}
	*out = set;
	return 0;
}

static int parse_cmp_id(const struct rule_parse *rp, const char *tok,
			const char *val, char op, uint32_t *id, enum ima_cmp *cmp)
{
	if (parse_id(val, id))
		return rule_err(rp, "invalid id (decimal 0-4294967294) in", tok);
	*cmp = op == '>' ? IMA_CMP_GT : op == '<' ? IMA_CMP_LT : IMA_CMP_EQ;
	return 0;
}

/* One "keyword=value" (or "<", ">") token. */
static int parse_keyword(struct rule_parse *rp, enum kw_id kw, const char *tok,
			 char op, const char *val)
{
	struct ima_rule_entry *e = rp->e;
	uint64_t v;
	int ret;

	switch (kw) {
	case KW_FUNC:
		ret = ima_hook_by_name(val);
		if (ret < 0)
			return rule_err(rp, "unknown func", tok);
		e->func = (enum ima_hooks)ret;
		e->flags |= IMA_FUNC;
		return 0;
	case KW_MASK: {
		const char *m = val[0] == '^' ? val + 1 : val;

		if (!strcmp(m, "MAY_EXEC"))
			e->mask = MAY_EXEC;
		else if (!strcmp(m, "MAY_WRITE"))
			e->mask = MAY_WRITE;
		else if (!strcmp(m, "MAY_READ"))
			e->mask = MAY_READ;
		else if (!strcmp(m, "MAY_APPEND"))
			e->mask = MAY_APPEND;
		else
			return rule_err(rp, "invalid mask", tok);
		e->flags |= val[0] == '^' ? IMA_INMASK : IMA_MASK;
		return 0;
	}
	case KW_FSMAGIC:
		if (parse_ulong(val, 16, &v))
			return rule_err(rp, "invalid fsmagic (hex) in", tok);
		e->fsmagic = v;
		e->flags |= IMA_FSMAGIC;
		return 0;
	case KW_FSNAME:
		e->fsname = strdup(val);
		if (!e->fsname)
			return uevm_err(ENOMEM, "out of memory");
		e->flags |= IMA_FSNAME;
		return 0;
	case KW_FSUUID:
		if (parse_fsuuid(val, e->fsuuid))
			return rule_err(rp, "invalid fsuuid", tok);
		e->flags |= IMA_FSUUID;
		return 0;
	case KW_UID:
	case KW_EUID:
		/* The kernel keeps one value for uid and euid. */
		if (e->flags & (IMA_UID | IMA_EUID))
			return rule_err(rp, "only one of uid and euid per rule:", tok);
		ret = parse_cmp_id(rp, tok, val, op, &e->uid, &e->uid_op);
		if (!ret)
			e->flags |= kw == KW_UID ? IMA_UID : IMA_EUID;
		return ret;
	case KW_GID:
	case KW_EGID:
		if (e->flags & (IMA_GID | IMA_EGID))
			return rule_err(rp, "only one of gid and egid per rule:", tok);
		ret = parse_cmp_id(rp, tok, val, op, &e->gid, &e->gid_op);
		if (!ret)
			e->flags |= kw == KW_GID ? IMA_GID : IMA_EGID;
		return ret;
	case KW_FOWNER:
		ret = parse_cmp_id(rp, tok, val, op, &e->fowner, &e->fowner_op);
		if (!ret)
			e->flags |= IMA_FOWNER;
		return ret;
	case KW_FGROUP:
		ret = parse_cmp_id(rp, tok, val, op, &e->fgroup, &e->fgroup_op);
		if (!ret)
			e->flags |= IMA_FGROUP;
		return ret;
	case KW_OBJ_USER:
	case KW_OBJ_ROLE:
	case KW_OBJ_TYPE:
	case KW_SUBJ_USER:
	case KW_SUBJ_ROLE:
	case KW_SUBJ_TYPE:
		e->lsm[kw - KW_OBJ_USER] = strdup(val);
		if (!e->lsm[kw - KW_OBJ_USER])
			return uevm_err(ENOMEM, "out of memory");
		return 0;
	case KW_DIGEST_TYPE:
		/* Order matters in the kernel: digest_type before appraise_type. */
		if (e->flags & IMA_DIGSIG_REQUIRED)
			return rule_err(rp, "digest_type= must come before appraise_type=:",
					tok);
		if (strcmp(val, "verity"))
			return rule_err(rp, "unknown digest_type (only verity)", tok);
		e->flags |= IMA_VERITY_REQUIRED;
		return 0;
	case KW_APPRAISE_TYPE:
		if (!strcmp(val, "imasig") || !strcmp(val, "imasig|modsig")) {
			if (e->flags & IMA_VERITY_REQUIRED)
				return rule_err(rp, "digest_type=verity needs appraise_type=sigv3, not",
						tok);
			e->flags |= IMA_DIGSIG_REQUIRED | IMA_CHECK_BLACKLIST;
			if (val[6])
				e->flags |= IMA_MODSIG_ALLOWED;
		} else if (!strcmp(val, "sigv3")) {
			if (!(e->flags & IMA_VERITY_REQUIRED))
				return rule_err(rp, "sigv3 needs digest_type=verity before it:",
						tok);
			e->flags |= IMA_DIGSIG_REQUIRED | IMA_CHECK_BLACKLIST;
		} else {
			return rule_err(rp, "unknown appraise_type", tok);
		}
		return 0;
	case KW_APPRAISE_FLAG:
		/* Deprecated: every signature check now consults the blacklist. */
		if (!strstr(val, "blacklist"))
			return rule_err(rp, "unknown appraise_flag (only check_blacklist)",
					tok);
		return 0;
	case KW_APPRAISE_ALGOS:
		ret = parse_algos(rp, tok, val, &e->allowed_algos);
		if (!ret)
			e->flags |= IMA_VALIDATE_ALGOS;
		return ret;
	case KW_PERMIT_DIRECTIO:
		return 0;	/* handled by the caller: it takes no value */
	case KW_PCR:
		/* measured_pcrs has one bit per PCR: 0 to 63. */
		if (val[0] == '-' ? parse_ulong(val + 1, 10, &v) || v != 0 :
		    parse_ulong(val, 10, &v) || v > 63)
			return rule_err(rp, "invalid pcr (0-63)", tok);
		e->pcr = (int)v;
		e->flags |= IMA_PCR;
		return 0;
	case KW_TEMPLATE:
		if (e->action != IMA_MEASURE)
			return rule_err(rp, "template= needs the measure action before it:",
					tok);
		for (size_t i = 0; i < ARRAY_SIZE(templates); i++)
			if (!strcmp(val, templates[i].name) ||
			    !strcmp(val, templates[i].fmt)) {
				e->template_name = templates[i].name;
				return 0;
			}
		return rule_err(rp, "unknown template", tok);
	case KW_KEYRINGS:
	case KW_LABEL:
		ret = parse_opt_list(val, kw == KW_KEYRINGS ? &e->keyrings : &e->label);
		if (ret == -ENOMEM)
			return uevm_err(ENOMEM, "out of memory");
		if (ret)
			return rule_err(rp, "empty name in list", tok);
		e->flags |= kw == KW_KEYRINGS ? IMA_KEYRINGS : IMA_LABEL;
		return 0;
	case KW__COUNT:
		break;
	}
	return rule_err(rp, "unknown keyword", tok);
}

static int parse_token(struct rule_parse *rp, const char *tok)
{
	struct ima_rule_entry *e = rp->e;
	size_t name_len = strcspn(tok, "=<>");
	char op = tok[name_len];
	const char *val = op ? tok + name_len + 1 : NULL;
	int kw = -1;

	for (size_t i = 0; i < ARRAY_SIZE(actions); i++)
		if (!strcmp(tok, actions[i].name)) {
			if (e->action)
				return rule_err(rp, "second action", tok);
			e->action = actions[i].action;
			return 0;
		}
	for (int i = 0; i < KW__COUNT; i++)
		if (strlen(keywords[i].name) == name_len &&
		    !strncmp(tok, keywords[i].name, name_len)) {
			kw = i;
			break;
		}
	if (kw < 0)
		return rule_err(rp, "unknown keyword", tok);
	if (kw == KW_PERMIT_DIRECTIO) {
		if (op)
			return rule_err(rp, "permit_directio takes no value:", tok);
	} else if (!op || !*val) {
		return rule_err(rp, "missing value in", tok);
	} else if (op != '=' && !keywords[kw].cmp) {
		return rule_err(rp, "'<' and '>' only go with uid, euid, gid, egid, fowner, fgroup:",
				tok);
	}
	if (rp->tok[kw])
		return rule_err(rp, keywords[kw].option ? "duplicate option" :
				"duplicate condition", tok);
	rp->tok[kw] = tok;
	if (kw == KW_PERMIT_DIRECTIO) {
		e->flags |= IMA_PERMIT_DIRECTIO;
		return 0;
	}
	return parse_keyword(rp, (enum kw_id)kw, tok, op, val);
}

/* The keyword that set one of the rule flags in BITS, for a message. */
static const char *flag_token(const struct rule_parse *rp, unsigned int bits)
{
	static const struct { unsigned int flag; enum kw_id kw; } map[] = {
		{ IMA_FUNC, KW_FUNC }, { IMA_MASK | IMA_INMASK, KW_MASK },
		{ IMA_FSMAGIC, KW_FSMAGIC }, { IMA_FSNAME, KW_FSNAME },
		{ IMA_FSUUID, KW_FSUUID }, { IMA_UID, KW_UID },
		{ IMA_EUID, KW_EUID }, { IMA_GID, KW_GID }, { IMA_EGID, KW_EGID },
		{ IMA_FOWNER, KW_FOWNER }, { IMA_FGROUP, KW_FGROUP },
		{ IMA_PCR, KW_PCR }, { IMA_KEYRINGS, KW_KEYRINGS },
		{ IMA_LABEL, KW_LABEL }, { IMA_VALIDATE_ALGOS, KW_APPRAISE_ALGOS },
		{ IMA_DIGSIG_REQUIRED | IMA_MODSIG_ALLOWED | IMA_CHECK_BLACKLIST,
		  KW_APPRAISE_TYPE },
		{ IMA_PERMIT_DIRECTIO, KW_PERMIT_DIRECTIO },
		{ IMA_VERITY_REQUIRED, KW_DIGEST_TYPE },
	};

	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if ((bits & map[i].flag) && rp->tok[map[i].kw])
			return rp->tok[map[i].kw];
	return "?";
}

static const char *first_lsm_token(const struct rule_parse *rp)
{
	for (int i = KW_OBJ_USER; i <= KW_SUBJ_TYPE; i++)
		if (rp->tok[i])
			return rp->tok[i];
	return NULL;
}

/* The kernel's ima_validate_rule, with a reason for each refusal. */
static int validate_rule(const struct rule_parse *rp, const char *first_tok)
{
	const struct ima_rule_entry *e = rp->e;
	const unsigned int base = IMA_FUNC | IMA_MASK | IMA_FSMAGIC | IMA_UID |
		IMA_FOWNER | IMA_FSUUID | IMA_INMASK | IMA_EUID | IMA_PCR |
		IMA_FSNAME | IMA_GID | IMA_EGID | IMA_FGROUP |
		IMA_DIGSIG_REQUIRED | IMA_PERMIT_DIRECTIO | IMA_VALIDATE_ALGOS |
		IMA_CHECK_BLACKLIST;
	unsigned int allowed;
	int measure_only = 0;
	char why[96];

	if (!e->action)
		return rule_err(rp, "rule has no action (measure, dont_measure, appraise, ...):",
				first_tok);
	if (e->action != IMA_MEASURE && (e->flags & IMA_PCR))
		return rule_err(rp, "pcr= needs the measure action:", rp->tok[KW_PCR]);
	if (e->action != IMA_APPRAISE &&
	    (e->flags & (IMA_DIGSIG_REQUIRED | IMA_MODSIG_ALLOWED |
			 IMA_CHECK_BLACKLIST | IMA_VALIDATE_ALGOS)))
		return rule_err(rp, "option needs the appraise action:",
				flag_token(rp, IMA_DIGSIG_REQUIRED | IMA_MODSIG_ALLOWED |
					   IMA_CHECK_BLACKLIST | IMA_VALIDATE_ALGOS));

	switch (e->func) {
	case NONE:
	case FILE_CHECK:
	case MMAP_CHECK:
	case MMAP_CHECK_REQPROT:
	case BPRM_CHECK:
	case CREDS_CHECK:
	case POST_SETATTR:
	case FIRMWARE_CHECK:
	case POLICY_CHECK:
		allowed = base | IMA_VERITY_REQUIRED;
		break;
	case MODULE_CHECK:
	case KEXEC_KERNEL_CHECK:
	case KEXEC_INITRAMFS_CHECK:
		allowed = base | IMA_MODSIG_ALLOWED;
		break;
	case KEXEC_CMDLINE:
		measure_only = 1;
		allowed = IMA_FUNC | IMA_FSMAGIC | IMA_UID | IMA_FOWNER |
			IMA_FSUUID | IMA_EUID | IMA_PCR | IMA_FSNAME | IMA_GID |
			IMA_EGID | IMA_FGROUP;
		break;
	case KEY_CHECK:
		measure_only = 2;
		allowed = IMA_FUNC | IMA_UID | IMA_GID | IMA_PCR | IMA_KEYRINGS;
		break;
	case CRITICAL_DATA:
		measure_only = 2;
		allowed = IMA_FUNC | IMA_UID | IMA_GID | IMA_PCR | IMA_LABEL;
		break;
	case SETXATTR_CHECK:
		if (e->action != IMA_APPRAISE)
			return rule_err(rp, "func=SETXATTR_CHECK only goes with appraise:",
					rp->tok[KW_FUNC]);
		if (!(e->flags & IMA_VALIDATE_ALGOS))
			return rule_err(rp, "func=SETXATTR_CHECK needs appraise_algos=:",
					rp->tok[KW_FUNC]);
		allowed = IMA_FUNC | IMA_VALIDATE_ALGOS;
		break;
	default:
		return rule_err(rp, "unknown func", rp->tok[KW_FUNC]);
	}
	if (measure_only && !(e->action & (IMA_MEASURE | IMA_DONT_MEASURE))) {
		snprintf(why, sizeof(why), "func=%s only goes with measure and dont_measure:",
			 hook_names[e->func]);
		return rule_err(rp, why, rp->tok[KW_FUNC]);
	}
	if (e->flags & ~allowed) {
		if (e->func == NONE)
			snprintf(why, sizeof(why), "not allowed in a rule without func=:");
		else
			snprintf(why, sizeof(why), "not allowed with func=%s:",
				 hook_names[e->func]);
		return rule_err(rp, why, flag_token(rp, e->flags & ~allowed));
	}
	if (measure_only == 2 && first_lsm_token(rp)) {
		snprintf(why, sizeof(why), "LSM conditions are not allowed with func=%s:",
			 hook_names[e->func]);
		return rule_err(rp, why, first_lsm_token(rp));
	}
	if (e->action == IMA_APPRAISE && (e->flags & IMA_VERITY_REQUIRED) &&
	    !(e->flags & IMA_DIGSIG_REQUIRED))
		return rule_err(rp, "appraising digest_type=verity needs appraise_type=sigv3:",
				rp->tok[KW_DIGEST_TYPE]);
	return 0;
}

/* Parse one non-comment line (modified in place) into E. */
static int parse_rule(char *line, unsigned int lineno, struct ima_rule_entry *e)
{
	struct rule_parse rp = { .e = e, .line = lineno };
	const char *first = NULL;
	char *save = NULL;
	int ret;

	memset(e, 0, sizeof(*e));
	e->line = lineno;
	e->pcr = -1;
	for (char *tok = strtok_r(line, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (tok[0] == '#')	/* the rest of the line is a comment */
			break;
		if (!first)
			first = tok;
		ret = parse_token(&rp, tok);
		if (ret)
			return ret;
	}
	return validate_rule(&rp, first ? first : "");
}

UEVM_EXPORT int ima_policy_parse_lines(const char *text, size_t len,
				       struct ima_policy **out,
				       unsigned int *err_line)
{
	struct ima_policy *p;
	unsigned int lineno = 0;
	size_t pos = 0;
	char *buf = NULL;
	size_t buf_size = 0;
	int ret = 0;

	*out = NULL;
	if (err_line)
		*err_line = 0;
	if (!text && len)
		return uevm_err(EINVAL, "no policy text");
	p = calloc(1, sizeof(*p));
	if (!p)
		return uevm_err(ENOMEM, "out of memory");
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char *s;

		lineno++;
		if (memchr(text + pos, '\0', n)) {
			ret = uevm_err(EINVAL, "line %u: NUL byte in the policy", lineno);
			break;
		}
		if (n + 1 > buf_size) {
			char *nb = realloc(buf, n + 1);

			if (!nb) {
				ret = uevm_err(ENOMEM, "out of memory");
				break;
			}
			buf = nb;
			buf_size = n + 1;
		}
		memcpy(buf, text + pos, n);
		buf[n] = '\0';
		pos += n + (nl ? 1 : 0);

		s = buf + strspn(buf, " \t");
		if (*s == '#' || *s == '\0')
			continue;
		ret = ima_policy_reserve(p, 1);
		if (ret) {
			ret = uevm_err(ENOMEM, "out of memory");
			break;
		}
		ret = parse_rule(s, lineno, &p->rules[p->count]);
		if (ret) {
			ima_rule_release(&p->rules[p->count]);
			break;
		}
		p->count++;
	}
	free(buf);
	if (!ret && !p->count) {
		lineno = 0;
		ret = uevm_err(EINVAL, "the policy has no rules");
	}
	if (ret) {
		if (err_line)
			*err_line = lineno;
		ima_policy_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

UEVM_EXPORT int ima_policy_parse(const char *text, size_t len,
				 struct ima_policy **out)
{
	return ima_policy_parse_lines(text, len, out, NULL);
}
