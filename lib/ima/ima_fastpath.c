// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fast path of front-ends that can keep opens out of userspace (the
 * fanotify daemon's ignore marks): may later opens of a file go unseen?
 *
 * Only when no caller, with no open mask, could get an action that is not
 * already done for the file's current content.  The policy is walked as
 * ima_match_policy walks it, but with the caller unknown: a rule whose
 * caller conditions (uid=, euid=, gid=, egid=) or fsname= cannot be decided
 * here "may match" - it adds its action if it is a positive one, and never
 * decides its family (another caller may not match it).  That
 * over-approximates what any caller could be asked for, which is the safe
 * side: a file is cached only when all of it is done.
 */
#include <string.h>
#include <sys/statfs.h>
#include "integrity_private.h"
#include "ima_policy_private.h"
#include "ima.h"

enum may { MATCH_NO, MATCH_YES, MATCH_MAYBE };

/* What the rules may look at about the file (not the caller). */
struct file_facts {
	uint32_t uid, gid;
	uint64_t fsmagic;
	bool has_fsuuid;
	uint8_t fsuuid[16];
};

/* Every access mask a FILE_CHECK open can carry (acc_mode of open(2) with
 * O_APPEND/O_TRUNC, and MAY_EXEC for the open inside execve). */
static const int file_masks[] = {
	MAY_READ, MAY_WRITE, MAY_READ | MAY_WRITE,
	MAY_READ | MAY_APPEND, MAY_WRITE | MAY_APPEND,
	MAY_READ | MAY_WRITE | MAY_APPEND, MAY_EXEC,
};
static const int exec_masks[] = { MAY_EXEC };

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

static enum may rule_may_match(const struct ima_rule_entry *r,
			       const struct file_facts *ff,
			       enum ima_hooks func, int mask)
{
	static const uint8_t no_uuid[16];
	enum may m = MATCH_YES;

	for (int i = 0; i < MAX_LSM_RULES; i++)
		if (r->lsm[i])
			return MATCH_NO;	/* never matches without an LSM */
	if ((r->flags & IMA_FUNC) && r->func != func)
		return MATCH_NO;
	if ((r->flags & IMA_MASK) && r->mask != mask)
		return MATCH_NO;
	if ((r->flags & IMA_INMASK) && !(r->mask & mask))
		return MATCH_NO;
	if ((r->flags & IMA_FSMAGIC) && r->fsmagic != ff->fsmagic)
		return MATCH_NO;
	if ((r->flags & IMA_FSUUID) &&
	    memcmp(r->fsuuid, ff->has_fsuuid ? ff->fsuuid : no_uuid, 16))
		return MATCH_NO;
	if ((r->flags & IMA_FOWNER) && !cmp_id(r->fowner_op, ff->uid, r->fowner))
		return MATCH_NO;
	if ((r->flags & IMA_FGROUP) && !cmp_id(r->fgroup_op, ff->gid, r->fgroup))
		return MATCH_NO;
	if (r->flags & (IMA_UID | IMA_EUID | IMA_GID | IMA_EGID | IMA_FSNAME))
		m = MATCH_MAYBE;
	return m;
}

/* What any caller could be asked to do for (FUNC, MASK). */
struct wanted {
	int action;		/* IMA_MEASURE | IMA_APPRAISE | IMA_AUDIT | IMA_HASH */
	uint64_t pcrs;		/* PCRs a measure rule could name */
	int default_pcr;	/* the list's, for rules without pcr= */
	unsigned int flags;	/* IMA_DIGSIG_REQUIRED, ... of appraise rules */
	bool has_algos;		/* one of them has appraise_algos= */
	unsigned int algos;	/* the algorithms all of those allow */
};

static void possible_actions(const struct ima_policy *p,
			     const struct file_facts *ff, enum ima_hooks func,
			     int mask, struct wanted *w)
{
	int decided = 0;

	for (size_t i = 0; p && i < p->count; i++) {
		const struct ima_rule_entry *r = &p->rules[i];
		int family = r->action & IMA_DO_MASK ? r->action | r->action << 1
						     : r->action | r->action >> 1;
		enum may m;

		if (!(r->action & (IMA_MEASURE | IMA_DONT_MEASURE | IMA_APPRAISE |
				   IMA_DONT_APPRAISE | IMA_AUDIT | IMA_HASH |
				   IMA_DONT_HASH)) ||
		    (family & decided))
			continue;
		m = rule_may_match(r, ff, func, mask);
		if (m == MATCH_NO)
			continue;
		if (r->action & IMA_DO_MASK) {
			w->action |= r->action & (IMA_MEASURE | IMA_APPRAISE | IMA_AUDIT |
						  IMA_HASH);
			if (r->action & IMA_MEASURE)
				w->pcrs |= 1ULL << ((r->flags & IMA_PCR) ? r->pcr
									 : w->default_pcr);
			if (r->action & IMA_APPRAISE) {
				w->flags |= r->flags & IMA_NONACTION_FLAGS;
				if (r->flags & IMA_VALIDATE_ALGOS) {
					w->algos = w->has_algos ? w->algos & r->allowed_algos
								: r->allowed_algos;
					w->has_algos = true;
				}
			}
		}
		if (m == MATCH_YES)
			decided |= family;
	}
}

/* The filesystem's magic and UUID only when a rule of P tests them. */
static void file_facts_of(const struct ima_policy *p, const struct uevm_file *f,
			  struct file_facts *ff)
{
	static const uint8_t zero[16];
	unsigned int conds = ima_policy_conditions(p);
	struct statfs sfs;

	memset(ff, 0, sizeof(*ff));
	ff->uid = f->st.st_uid;
	ff->gid = f->st.st_gid;
	if ((conds & IMA_FSMAGIC) && fstatfs(f->fd, &sfs) == 0)
		ff->fsmagic = (uint64_t)sfs.f_type;
	if ((conds & IMA_FSUUID) && uevm_file_fsuuid(f, ff->fsuuid) == 0)
		ff->has_fsuuid = memcmp(ff->fsuuid, zero, 16) != 0;
}

static bool is_pass(enum integrity_status st)
{
	return st == INTEGRITY_PASS || st == INTEGRITY_PASS_IMMUTABLE;
}

/* Is everything W asks for done in IINT for FUNC? (IINT locked) */
static bool all_done(const struct integrity_iint_cache *iint,
		     enum ima_hooks func, int mask, const struct wanted *w)
{
	uint32_t flags = integrity_iint_flags(iint);

	if (w->action & IMA_APPRAISE) {
		/* A write open of a signed file is refused (ima_file_check):
		 * it must be seen, so no mark may stand for one. */
		if ((mask & MAY_WRITE) && (flags & (IMA_DIGSIG | IMA_NEW_FILE)) == IMA_DIGSIG)
			return false;
		if (!is_pass(integrity_iint_ima_status(iint, func)))
			return false;
		if ((w->flags & IMA_DIGSIG_REQUIRED) && !(flags & IMA_DIGSIG))
			return false;
		/* digest_type=verity refuses every file (ima_file_check): a
		 * pass under another rule must not let it go unseen. */
		if (w->flags & IMA_VERITY_REQUIRED)
			return false;
		/* appraise_algos=: the label's algorithm (the one its digest
		 * was collected with) must be allowed, or every open is
		 * checked, where ima_file_check denies it. */
		if (w->has_algos) {
			uint8_t d[UEVM_MAX_DIGEST_SIZE];
			int algo;

			if (integrity_iint_digest(iint, d, &algo) < 0 || algo < 0 ||
			    algo >= 32 || !(w->algos & (1U << algo)))
				return false;
		}
	}
	/* A hash rule rehashes at a writer's close only content that passed
	 * appraisal (ima_file_check): until that is known, writers must be
	 * seen. */
	if ((w->action & IMA_HASH) && (mask & (MAY_WRITE | MAY_APPEND)) &&
	    !is_pass(integrity_iint_ima_status(iint, func)))
		return false;
	if ((w->action & IMA_MEASURE) &&
	    (integrity_iint_measured_pcrs(iint) & w->pcrs) != w->pcrs)
		return false;
	if ((w->action & IMA_AUDIT) && !(flags & IMA_AUDITED))
		return false;
	return true;
}

UEVM_EXPORT bool integrity_file_cacheable(struct integrity_sys *s,
					  const struct integrity_event *ev,
					  unsigned int funcs)
{
	const struct ima_policy *p = integrity_sys_policy(s);
	const struct uevm_file *f = ev->file;
	struct integrity_iint_cache *iint;
	struct integrity_stamp stamp;
	struct file_facts ff;
	bool ok = true, rehash = false;

	const unsigned int known = (1U << FILE_CHECK) | (1U << BPRM_CHECK) | (1U << CREDS_CHECK);

	if (integrity_sys_mode(s) == INTEGRITY_MODE_OFF || !f->io ||
	    !S_ISREG(f->st.st_mode) || !(funcs & known) || (funcs & ~known))
		return false;
	file_facts_of(p, f, &ff);
	/* Stamp-checked against f->st, not a fresh stat: the caller compares
	 * f->st with a stat taken after its mark stands (a change until then
	 * takes the mark away), so a fresh stat here would add nothing.  A
	 * file changed since it was appraised is not done. */
	integrity_stamp_of(&f->st, &stamp);
	iint = integrity_inode_find(s, f);
	if (!iint)
		return false;
	integrity_iint_lock(iint);
	if (!integrity_iint_stamp_is(iint, &stamp) || integrity_iint_writers(iint) > 0)
		ok = false;
	for (int func = FILE_CHECK; ok && func <= CREDS_CHECK; func++) {
		bool exec = func == BPRM_CHECK || func == CREDS_CHECK;
		const int *masks = exec ? exec_masks : file_masks;
		size_t n = exec ? ARRAY_SIZE(exec_masks) : ARRAY_SIZE(file_masks);

		if (!(funcs & (1U << func)))
			continue;
		for (size_t i = 0; ok && i < n; i++) {
			struct wanted w = { .default_pcr = ima_store_default_pcr(s) };

			possible_actions(p, &ff, (enum ima_hooks)func, masks[i], &w);
			ok = all_done(iint, (enum ima_hooks)func, masks[i], &w);
			if (!exec && (masks[i] & (MAY_WRITE | MAY_APPEND)) &&
			    (w.action & (IMA_APPRAISE | IMA_HASH)))
				rehash = true;
		}
	}
	/* Write opens will not be seen: mark the rehash at the last close
	 * that one would have asked for -- under an appraise or a hash rule
	 * (this content passed appraisal), as ima_file_check does.  A file
	 * no such rule covers keeps its label, seen or not. */
	if (ok && rehash && (funcs & (1U << FILE_CHECK)))
		integrity_iint_set_flags(iint, IMA_UPDATE_XATTR, 0);
	integrity_iint_unlock(iint);
	integrity_iint_put(s->cache, iint);
	return ok;
}
