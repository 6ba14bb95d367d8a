/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The IMA policy's rule representation, shared by the parser, the matcher
 * and the renderer (lib/ima_policy*.c). */
#ifndef UEVM_IMA_POLICY_PRIVATE_H
#define UEVM_IMA_POLICY_PRIVATE_H

#include "lib_private.h"
#include "ima_policy.h"

/* Which conditions a rule has (the kernel's rule flags; the high byte
 * holds the public IMA_DIGSIG_REQUIRED... flags). */
#define IMA_FUNC		0x0001
#define IMA_MASK		0x0002
#define IMA_FSMAGIC		0x0004
#define IMA_UID			0x0008
#define IMA_FOWNER		0x0010
#define IMA_FSUUID		0x0020
#define IMA_INMASK		0x0040
#define IMA_EUID		0x0080
#define IMA_PCR			0x0100
#define IMA_FSNAME		0x0200
#define IMA_KEYRINGS		0x0400
#define IMA_LABEL		0x0800
#define IMA_VALIDATE_ALGOS	0x1000
#define IMA_GID			0x2000
#define IMA_EGID		0x4000
#define IMA_FGROUP		0x8000

#define IMA_NONACTION_FLAGS	0xff000000u
#define IMA_DO_MASK		(IMA_MEASURE | IMA_APPRAISE | IMA_AUDIT | IMA_HASH)

/* Comparison of a credential or owner id with the rule's value. */
enum ima_cmp { IMA_CMP_EQ = 0, IMA_CMP_GT, IMA_CMP_LT };

/* LSM conditions, in the kernel's order. */
enum ima_lsm_cond {
	LSM_OBJ_USER, LSM_OBJ_ROLE, LSM_OBJ_TYPE,
	LSM_SUBJ_USER, LSM_SUBJ_ROLE, LSM_SUBJ_TYPE,
	MAX_LSM_RULES
};

/* keyrings= and label=: '|'-separated names. */
struct ima_opt_list {
	size_t count;
	char **items;
};

struct ima_rule_entry {
	int action;			/* exactly one IMA_* action bit */
	unsigned int flags;		/* IMA_FUNC... | IMA_DIGSIG_REQUIRED... */
	enum ima_hooks func;
	int mask;
	uint64_t fsmagic;
	uint8_t fsuuid[16];
	uint32_t uid;			/* uid= or euid= (one per rule) */
	uint32_t gid;			/* gid= or egid= (one per rule) */
	uint32_t fowner, fgroup;
	enum ima_cmp uid_op, gid_op, fowner_op, fgroup_op;
	int pcr;
	unsigned int allowed_algos;
	const char *template_name;	/* static string; NULL: default */
	char *fsname;
	char *lsm[MAX_LSM_RULES];	/* the label, never matched */
	struct ima_opt_list keyrings, label;
	unsigned int line;		/* source line, 0 for built-ins */
};

struct ima_policy {
	struct ima_rule_entry *rules;
	size_t count, cap;
	bool fail_unverifiable_sigs;	/* ima_policy=fail_securely */
};

extern const char *const ima_lsm_names[MAX_LSM_RULES];

/* Grow P to hold N more rules. */
int ima_policy_reserve(struct ima_policy *p, size_t n);
/* Deep copy / release of one rule's allocated members. */
int ima_rule_copy(struct ima_rule_entry *dst, const struct ima_rule_entry *src);
void ima_rule_release(struct ima_rule_entry *e);

#endif
