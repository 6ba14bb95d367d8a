/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The IMA policy language, as the kernel's security/ima/policy file takes
 * it: one rule a line, "action [condition ...] [option ...]".  A policy is
 * parsed whole or not at all; matching follows the kernel's
 * ima_match_policy(): rules are walked in order and the first matching rule
 * of each action family (measure/dont_measure, appraise/dont_appraise,
 * audit, hash/dont_hash) decides that family.
 *
 * Constants carry the kernel's names and values so that the hook layer can
 * mirror the kernel's code paths.  A parsed policy is immutable and may be
 * matched from many threads at once.
 */
#ifndef UEVM_POLICY_H
#define UEVM_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel's enum ima_hooks, same order and values. */
enum ima_hooks {
	NONE = 0,
	FILE_CHECK,
	MMAP_CHECK,
	MMAP_CHECK_REQPROT,
	BPRM_CHECK,
	CREDS_CHECK,
	POST_SETATTR,
	MODULE_CHECK,
	FIRMWARE_CHECK,
	KEXEC_KERNEL_CHECK,
	KEXEC_INITRAMFS_CHECK,
	POLICY_CHECK,
	KEXEC_CMDLINE,
	KEY_CHECK,
	CRITICAL_DATA,
	SETXATTR_CHECK,
	MAX_CHECK
};

/* The policy-language name of a hook ("FILE_CHECK"), NULL if out of range. */
const char *ima_hook_name(enum ima_hooks func);
/* A hook by its policy-language name, including the aliases the kernel
 * accepts (FILE_MMAP, PATH_CHECK); -1 if unknown. */
int ima_hook_by_name(const char *name);

/* Access mask bits (the kernel's MAY_*). */
#define UEVM_MAY_EXEC	0x00000001
#define UEVM_MAY_WRITE	0x00000002
#define UEVM_MAY_READ	0x00000004
#define UEVM_MAY_APPEND	0x00000008
#ifndef MAY_EXEC
#define MAY_EXEC	UEVM_MAY_EXEC
#endif
#ifndef MAY_WRITE
#define MAY_WRITE	UEVM_MAY_WRITE
#endif
#ifndef MAY_READ
#define MAY_READ	UEVM_MAY_READ
#endif
#ifndef MAY_APPEND
#define MAY_APPEND	UEVM_MAY_APPEND
#endif

/* Actions (the kernel's iint action bits). */
#define IMA_MEASURE		0x00000001
#define IMA_DONT_MEASURE	0x00000002
#define IMA_APPRAISE		0x00000004
#define IMA_DONT_APPRAISE	0x00000008
#define IMA_AUDIT		0x00000040
#define IMA_HASH		0x00000100
#define IMA_DONT_HASH		0x00000200

/* Appraisal sub-actions: which per-hook appraisal status applies. */
#define IMA_FILE_APPRAISE	0x00001000
#define IMA_MMAP_APPRAISE	0x00004000
#define IMA_BPRM_APPRAISE	0x00010000
#define IMA_READ_APPRAISE	0x00040000
#define IMA_CREDS_APPRAISE	0x00100000

/* Rule flags carried into a decision (the kernel's IMA_NONACTION_FLAGS). */
#define IMA_DIGSIG_REQUIRED		0x01000000
#define IMA_PERMIT_DIRECTIO		0x02000000
#define IMA_FAIL_UNVERIFIABLE_SIGS	0x10000000
#define IMA_MODSIG_ALLOWED		0x20000000
#define IMA_CHECK_BLACKLIST		0x40000000
#define IMA_VERITY_REQUIRED		0x80000000u

/* What a hook knows about the access being decided. */
struct ima_match_input {
	enum ima_hooks func;
	int mask;			/* MAY_* bits of the access */
	uint32_t uid, euid, gid, egid;	/* the caller's credentials */
	uint32_t fowner, fgroup;	/* the file's owner and group */
	uint64_t fsmagic;		/* statfs f_type of the file's fs */
	const char *fsname;		/* fs type name ("ext4"), may be NULL */
	bool has_fsuuid;		/* false: the fs has no UUID (all zero) */
	uint8_t fsuuid[16];
	/* KEY_CHECK: the keyring; CRITICAL_DATA: the label; may be NULL. */
	const char *keyrings_or_label;
	/* For euid=/egid= the kernel also accepts the saved and real ids when
	 * the caller has CAP_SETUID / CAP_SETGID; left zero, only the
	 * effective ids count. */
	bool cap_setuid, cap_setgid;
	uint32_t suid, sgid;
};

/* A decision. */
struct ima_policy_result {
	int action;		/* IMA_MEASURE | IMA_APPRAISE | IMA_AUDIT | IMA_HASH */
	int subaction;		/* IMA_*_APPRAISE when action has IMA_APPRAISE */
	unsigned int flags;	/* IMA_DIGSIG_REQUIRED, IMA_PERMIT_DIRECTIO, ... */
	int pcr;		/* -1: the default PCR */
	const char *template_name; /* NULL: the default template */
	unsigned int allowed_algos; /* bit N: hash algo id N allowed; 0: any */
};

struct ima_policy;

/* Parse a whole policy.  On error nothing is loaded, -EINVAL (or -ENOMEM)
 * is returned and uevm_last_error() reads "line N: why 'token'".  A text
 * without any rule is refused, as the kernel refuses such a policy. */
int ima_policy_parse(const char *text, size_t len, struct ima_policy **out);
/* The same, also reporting the failing line (0 when not line-specific). */
int ima_policy_parse_lines(const char *text, size_t len,
			   struct ima_policy **out, unsigned int *err_line);

/* A built-in policy, as the kernel's ima_policy= boot option builds it:
 * "tcb", "ima_tcb" (the original rules), "appraise_tcb", "secure_boot",
 * "critical_data", and "fail_securely"; several may be joined with '|'
 * ("tcb|appraise_tcb") and are then ordered as the kernel orders them. */
int ima_policy_builtin(const char *name, struct ima_policy **out);

/* Append copies of SRC's rules to DST (writing more rules to the kernel's
 * policy file after the first policy). */
int ima_policy_append(struct ima_policy *dst, const struct ima_policy *src);

/* Decide for IN.  WANTED is the set of actions to consider (e.g.
 * IMA_MEASURE | IMA_APPRAISE | IMA_AUDIT | IMA_HASH). */
void ima_match_policy(const struct ima_policy *p,
		      const struct ima_match_input *in, int wanted,
		      struct ima_policy_result *out);

/* The actions any rule of the policy can ask for (the kernel's
 * ima_policy_flag): a quick "nothing to do" test for the hooks. */
int ima_policy_flag(const struct ima_policy *p);
/* The conditions (IMA_FSMAGIC, IMA_FSUUID, IMA_FSNAME, ...) some rule of
 * the policy has: what the hooks need to look up about a file. */
unsigned int ima_policy_conditions(const struct ima_policy *p);
/* The hash algorithms the first "appraise func=SETXATTR_CHECK" rule
 * allows for security.ima writes (bit N = algo id N); 0: no restriction. */
unsigned int ima_policy_setxattr_algos(const struct ima_policy *p);

/* Render the rules as the kernel's ima/policy file shows them. */
int ima_policy_write(const struct ima_policy *p, FILE *fp);
int ima_policy_rule_write(const struct ima_policy *p, size_t i, FILE *fp);
size_t ima_policy_count(const struct ima_policy *p);
/* The source line of rule I (0 for built-in rules). */
unsigned int ima_policy_rule_line(const struct ima_policy *p, size_t i);
/* True if rule I has an LSM condition (obj_*, subj_*): uevm has no LSM,
 * so such a rule never matches (as in the kernel when the LSM does not
 * know the label). */
bool ima_policy_rule_has_lsm(const struct ima_policy *p, size_t i);

/* Whether some rule's decision depends on who opens the file or who owns
 * it: uid=, euid=, gid=, egid=, fowner=, fgroup= or an LSM condition
 * (subj_*, obj_*).  Without such a rule every caller gets the same actions
 * for the same content (and the same hook and mask), so a verdict may be
 * shared between callers.  *RULE (may be NULL): the first such rule. */
bool ima_policy_depends_on_caller(const struct ima_policy *p, size_t *rule);
/* Whether some rule's decision depends on how the file is opened: for an
 * exec or a read (func=BPRM_CHECK, func=CREDS_CHECK, a mask= with
 * MAY_EXEC).  A front-end that cannot tell an exec from a read would
 * answer such a policy differently from the kernel.  A measure or
 * dont_measure rule on func=BPRM_CHECK (mask=MAY_EXEC at most) does not
 * count: run at the first read of each program it measures more, never
 * less.  *RULE as above. */
bool ima_policy_depends_on_exec(const struct ima_policy *p, size_t *rule);
/* Narrower: whether some rule that can match an open (func=FILE_CHECK or no
 * func=) tells an open for exec from one for reading (a mask= or ^ with
 * MAY_EXEC).  A front-end that checks a file once at its first read, and
 * runs BPRM_CHECK itself for programs, still misses such a rule.  *RULE as
 * above. */
bool ima_policy_depends_on_exec_open(const struct ima_policy *p, size_t *rule);

void ima_policy_free(struct ima_policy *p);

#ifdef __cplusplus
}
#endif
#endif /* UEVM_POLICY_H */
