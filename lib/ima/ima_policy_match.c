// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Policy decisions: the kernel's ima_match_rules() and ima_match_policy().
 * Rules are walked in order; a rule counts only while its action family is
 * still undecided, and the first matching rule of a family decides it.
 */
#include <string.h>
#include "ima_policy_private.h"

static bool cmp_id(enum ima_cmp op, uint32_t have, uint32_t rule)
{
	switch (op) {
	case IMA_CMP_GT:
		return have > rule;
	case IMA_CMP_LT:
		return have < rule;
	case IMA_CMP_EQ:
		break;
	}
	return have == rule;
}

static bool opt_list_has(const struct ima_opt_list *l, const char *s)
{
	for (size_t i = 0; i < l->count; i++)
		if (!strcmp(l->items[i], s))
			return true;
	return false;
}

/* KEY_CHECK and CRITICAL_DATA rules look only at uid= and at the keyring or
 * label name (gid= is accepted by the parser but, as in the kernel, not
 * looked at here). */
static bool match_rule_data(const struct ima_rule_entry *r,
			    const struct ima_match_input *in)
{
	const struct ima_opt_list *l;

	if ((r->flags & IMA_UID) && !cmp_id(r->uid_op, in->uid, r->uid))
		return false;
	switch (r->func) {
	case KEY_CHECK:
		l = &r->keyrings;
		break;
	case CRITICAL_DATA:
		l = &r->label;
		break;
	default:
		return false;
	}
	if (!l->count)
		return true;
	return in->keyrings_or_label && opt_list_has(l, in->keyrings_or_label);
}

static bool match_rule(const struct ima_rule_entry *r,
		       const struct ima_match_input *in)
{
	static const uint8_t no_uuid[16];
	enum ima_hooks func = in->func;

	/* POST_SETATTR re-evaluates a file for every hook: func= and mask=
	 * do not restrict it. */
	if ((r->flags & IMA_FUNC) && r->func != func && func != POST_SETATTR)
		return false;
	if (func == KEY_CHECK || func == CRITICAL_DATA)
		return r->func == func && match_rule_data(r, in);
	if ((r->flags & IMA_MASK) && r->mask != in->mask && func != POST_SETATTR)
		return false;
	if ((r->flags & IMA_INMASK) && !(r->mask & in->mask) &&
	    func != POST_SETATTR)
		return false;
	if ((r->flags & IMA_FSMAGIC) && r->fsmagic != in->fsmagic)
		return false;
	if ((r->flags & IMA_FSNAME) &&
	    (!in->fsname || strcmp(r->fsname, in->fsname)))
		return false;
	if ((r->flags & IMA_FSUUID) &&
	    memcmp(r->fsuuid, in->has_fsuuid ? in->fsuuid : no_uuid, 16))
		return false;
	if ((r->flags & IMA_UID) && !cmp_id(r->uid_op, in->uid, r->uid))
		return false;
	if (r->flags & IMA_EUID) {
		/* With CAP_SETUID the caller could switch to its saved or
		 * real uid at will: any of them matches. */
		if (in->cap_setuid) {
			if (!cmp_id(r->uid_op, in->euid, r->uid) &&
			    !cmp_id(r->uid_op, in->suid, r->uid) &&
			    !cmp_id(r->uid_op, in->uid, r->uid))
				return false;
		} else if (!cmp_id(r->uid_op, in->euid, r->uid)) {
			return false;
		}
	}
	if ((r->flags & IMA_GID) && !cmp_id(r->gid_op, in->gid, r->gid))
		return false;
	if (r->flags & IMA_EGID) {
		if (in->cap_setgid) {
			if (!cmp_id(r->gid_op, in->egid, r->gid) &&
			    !cmp_id(r->gid_op, in->sgid, r->gid) &&
			    !cmp_id(r->gid_op, in->gid, r->gid))
				return false;
		} else if (!cmp_id(r->gid_op, in->egid, r->gid)) {
			return false;
		}
	}
	if ((r->flags & IMA_FOWNER) && !cmp_id(r->fowner_op, in->fowner, r->fowner))
		return false;
	if ((r->flags & IMA_FGROUP) && !cmp_id(r->fgroup_op, in->fgroup, r->fgroup))
		return false;
	/* No LSM here: a label condition is never satisfied, like a label
	 * the kernel's LSM does not know. */
	for (int i = 0; i < MAX_LSM_RULES; i++)
		if (r->lsm[i])
			return false;
	return true;
}

/* Which per-hook appraisal status an appraise rule sets. */
static int get_subaction(const struct ima_rule_entry *r, enum ima_hooks func)
{
	if (!(r->flags & IMA_FUNC))
		return IMA_FILE_APPRAISE;
	switch (func) {
	case MMAP_CHECK:
	case MMAP_CHECK_REQPROT:
		return IMA_MMAP_APPRAISE;
	case BPRM_CHECK:
		return IMA_BPRM_APPRAISE;
	case CREDS_CHECK:
		return IMA_CREDS_APPRAISE;
	case FILE_CHECK:
	case POST_SETATTR:
		return IMA_FILE_APPRAISE;
	default:
		return IMA_READ_APPRAISE;
	}
}

UEVM_EXPORT void ima_match_policy(const struct ima_policy *p,
				  const struct ima_match_input *in, int wanted,
				  struct ima_policy_result *out)
{
	/* An action bit and the dont_ bit just above it form a family. */
	int actmask = wanted | (wanted << 1);
	int action = 0;

	memset(out, 0, sizeof(*out));
	out->pcr = -1;
	if (!p)
		return;
	for (size_t i = 0; i < p->count && actmask; i++) {
		const struct ima_rule_entry *r = &p->rules[i];

		if (!(r->action & actmask))
			continue;
		if (!match_rule(r, in))
			continue;
		out->flags |= r->flags & IMA_NONACTION_FLAGS;
		action |= r->action & IMA_DO_MASK;
		if (r->action & IMA_APPRAISE) {
			out->subaction |= get_subaction(r, in->func);
			/* Appraisal collects the hash itself. */
			action &= ~IMA_HASH;
			if (p->fail_unverifiable_sigs)
				out->flags |= IMA_FAIL_UNVERIFIABLE_SIGS;
			if (r->flags & IMA_VALIDATE_ALGOS)
				out->allowed_algos = r->allowed_algos;
		}
		/* This family is decided. */
		if (r->action & IMA_DO_MASK)
			actmask &= ~(r->action | r->action << 1);
		else
			actmask &= ~(r->action | r->action >> 1);
		if (r->flags & IMA_PCR)
			out->pcr = r->pcr;
		if (r->template_name)
			out->template_name = r->template_name;
	}
	out->action = action;
}

UEVM_EXPORT int ima_policy_flag(const struct ima_policy *p)
{
	int flag = 0;

	if (!p)
		return 0;
	for (size_t i = 0; i < p->count; i++) {
		/* SETXATTR_CHECK rules only restrict xattr writes. */
		if (p->rules[i].func == SETXATTR_CHECK)
			continue;
		flag |= p->rules[i].action & IMA_DO_MASK;
	}
	return flag;
}

unsigned int ima_policy_conditions(const struct ima_policy *p)
{
	unsigned int flags = 0;

	for (size_t i = 0; p && i < p->count; i++)
		flags |= p->rules[i].flags;
	return flags;
}

UEVM_EXPORT unsigned int ima_policy_setxattr_algos(const struct ima_policy *p)
{
	if (!p)
		return 0;
	/* Only the first SETXATTR_CHECK rule counts, as in the kernel. */
	for (size_t i = 0; i < p->count; i++)
		if (p->rules[i].func == SETXATTR_CHECK)
			return p->rules[i].allowed_algos;
	return 0;
}
