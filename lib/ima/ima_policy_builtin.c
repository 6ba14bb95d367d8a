// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's built-in policies (ima_policy=tcb|appraise_tcb|secure_boot|
 * critical_data|fail_securely, and ima_tcb), rule for rule as the kernel's
 * rule tables hold them today: since the kernel commit "ima: limit the
 * builtin 'tcb' dont_measure tmpfs policy rule" (2025), tmpfs is exempt
 * from measurement only for FILE_CHECK, so executables on tmpfs are
 * measured.  appraise_tcb is the variant built with CONFIG_IMA_WRITE_POLICY=y
 * and without CONFIG_IMA_APPRAISE_SIGNED_INIT.
 */
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include "ima_policy_private.h"

#define DONT(act, magic) { .action = (act), .fsmagic = (magic), .flags = IMA_FSMAGIC }

static const struct ima_rule_entry dont_measure_rules[] = {
	DONT(IMA_DONT_MEASURE, PROC_SUPER_MAGIC),
	DONT(IMA_DONT_MEASURE, SYSFS_MAGIC),
	DONT(IMA_DONT_MEASURE, DEBUGFS_MAGIC),
	{ .action = IMA_DONT_MEASURE, .fsmagic = TMPFS_MAGIC, .func = FILE_CHECK,
	  .flags = IMA_FSMAGIC | IMA_FUNC },
	DONT(IMA_DONT_MEASURE, DEVPTS_SUPER_MAGIC),
	DONT(IMA_DONT_MEASURE, BINFMTFS_MAGIC),
	DONT(IMA_DONT_MEASURE, SECURITYFS_MAGIC),
	DONT(IMA_DONT_MEASURE, SELINUX_MAGIC),
	DONT(IMA_DONT_MEASURE, SMACK_MAGIC),
	DONT(IMA_DONT_MEASURE, CGROUP_SUPER_MAGIC),
	DONT(IMA_DONT_MEASURE, CGROUP2_SUPER_MAGIC),
	DONT(IMA_DONT_MEASURE, NSFS_MAGIC),
	DONT(IMA_DONT_MEASURE, EFIVARFS_MAGIC),
};

/* ima_tcb: the original measurement rules. */
static const struct ima_rule_entry original_measurement_rules[] = {
	{ .action = IMA_MEASURE, .func = MMAP_CHECK, .mask = MAY_EXEC,
	  .flags = IMA_FUNC | IMA_MASK },
	{ .action = IMA_MEASURE, .func = BPRM_CHECK, .mask = MAY_EXEC,
	  .flags = IMA_FUNC | IMA_MASK },
	{ .action = IMA_MEASURE, .func = FILE_CHECK, .mask = MAY_READ, .uid = 0,
	  .flags = IMA_FUNC | IMA_MASK | IMA_UID },
	{ .action = IMA_MEASURE, .func = MODULE_CHECK, .flags = IMA_FUNC },
	{ .action = IMA_MEASURE, .func = FIRMWARE_CHECK, .flags = IMA_FUNC },
};

/* tcb: reads by root counted by euid too, and mask as a bit test. */
static const struct ima_rule_entry default_measurement_rules[] = {
	{ .action = IMA_MEASURE, .func = MMAP_CHECK, .mask = MAY_EXEC,
	  .flags = IMA_FUNC | IMA_MASK },
	{ .action = IMA_MEASURE, .func = BPRM_CHECK, .mask = MAY_EXEC,
	  .flags = IMA_FUNC | IMA_MASK },
	{ .action = IMA_MEASURE, .func = FILE_CHECK, .mask = MAY_READ, .uid = 0,
	  .flags = IMA_FUNC | IMA_INMASK | IMA_EUID },
	{ .action = IMA_MEASURE, .func = FILE_CHECK, .mask = MAY_READ, .uid = 0,
	  .flags = IMA_FUNC | IMA_INMASK | IMA_UID },
	{ .action = IMA_MEASURE, .func = MODULE_CHECK, .flags = IMA_FUNC },
	{ .action = IMA_MEASURE, .func = FIRMWARE_CHECK, .flags = IMA_FUNC },
	{ .action = IMA_MEASURE, .func = POLICY_CHECK, .flags = IMA_FUNC },
};

static const struct ima_rule_entry default_appraise_rules[] = {
	DONT(IMA_DONT_APPRAISE, PROC_SUPER_MAGIC),
	DONT(IMA_DONT_APPRAISE, SYSFS_MAGIC),
	DONT(IMA_DONT_APPRAISE, DEBUGFS_MAGIC),
	DONT(IMA_DONT_APPRAISE, TMPFS_MAGIC),
	DONT(IMA_DONT_APPRAISE, RAMFS_MAGIC),
	DONT(IMA_DONT_APPRAISE, DEVPTS_SUPER_MAGIC),
	DONT(IMA_DONT_APPRAISE, BINFMTFS_MAGIC),
	DONT(IMA_DONT_APPRAISE, SECURITYFS_MAGIC),
	DONT(IMA_DONT_APPRAISE, SELINUX_MAGIC),
	DONT(IMA_DONT_APPRAISE, SMACK_MAGIC),
	DONT(IMA_DONT_APPRAISE, NSFS_MAGIC),
	DONT(IMA_DONT_APPRAISE, EFIVARFS_MAGIC),
	DONT(IMA_DONT_APPRAISE, CGROUP_SUPER_MAGIC),
	DONT(IMA_DONT_APPRAISE, CGROUP2_SUPER_MAGIC),
	{ .action = IMA_APPRAISE, .func = POLICY_CHECK,
	  .flags = IMA_FUNC | IMA_DIGSIG_REQUIRED },
	{ .action = IMA_APPRAISE, .fowner = 0, .flags = IMA_FOWNER },
};

static const struct ima_rule_entry secure_boot_rules[] = {
	{ .action = IMA_APPRAISE, .func = MODULE_CHECK,
	  .flags = IMA_FUNC | IMA_DIGSIG_REQUIRED },
	{ .action = IMA_APPRAISE, .func = FIRMWARE_CHECK,
	  .flags = IMA_FUNC | IMA_DIGSIG_REQUIRED },
	{ .action = IMA_APPRAISE, .func = KEXEC_KERNEL_CHECK,
	  .flags = IMA_FUNC | IMA_DIGSIG_REQUIRED },
	{ .action = IMA_APPRAISE, .func = POLICY_CHECK,
	  .flags = IMA_FUNC | IMA_DIGSIG_REQUIRED },
};

static const struct ima_rule_entry critical_data_rules[] = {
	{ .action = IMA_MEASURE, .func = CRITICAL_DATA, .flags = IMA_FUNC },
};

static int add_rules(struct ima_policy *p, const struct ima_rule_entry *rules,
		     size_t n)
{
	if (ima_policy_reserve(p, n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		/* Static entries own no memory: a plain copy, with the
		 * kernel's pcr default. */
		p->rules[p->count] = rules[i];
		p->rules[p->count].pcr = -1;
		p->count++;
	}
	return 0;
}

enum { TCB_NONE, TCB_ORIGINAL, TCB_DEFAULT };

UEVM_EXPORT int ima_policy_builtin(const char *name, struct ima_policy **out)
{
	bool appraise_tcb = false, secure_boot = false, critical_data = false;
	bool fail_securely = false;
	int tcb = TCB_NONE;
	struct ima_policy *p;
	const char *s = name;
	int ret = 0;

	*out = NULL;
	if (!name || !*name)
		return uevm_err(EINVAL, "no built-in policy name");
	/* Names separated by '|' (or spaces), as in ima_policy=. */
	while (*s) {
		size_t n = strcspn(s, "| ");

		if (n == 3 && !strncmp(s, "tcb", n)) {
			if (tcb == TCB_NONE)
				tcb = TCB_DEFAULT;
		} else if (n == 7 && !strncmp(s, "ima_tcb", n)) {
			if (tcb == TCB_NONE)
				tcb = TCB_ORIGINAL;
		} else if (n == 12 && !strncmp(s, "appraise_tcb", n)) {
			appraise_tcb = true;
		} else if (n == 11 && !strncmp(s, "secure_boot", n)) {
			secure_boot = true;
		} else if (n == 13 && !strncmp(s, "critical_data", n)) {
			critical_data = true;
		} else if (n == 13 && !strncmp(s, "fail_securely", n)) {
			fail_securely = true;
		} else if (n) {
			return uevm_err(EINVAL,
					"unknown built-in policy '%.*s' (tcb, ima_tcb, appraise_tcb, secure_boot, critical_data, fail_securely)",
					(int)n, s);
		}
		s += n;
		if (*s)
			s++;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return uevm_err(ENOMEM, "out of memory");
	p->fail_unverifiable_sigs = fail_securely;
	/* The order of the kernel's ima_init_policy(). */
	if (tcb != TCB_NONE)
		ret = add_rules(p, dont_measure_rules, ARRAY_SIZE(dont_measure_rules));
	if (!ret && tcb == TCB_ORIGINAL)
		ret = add_rules(p, original_measurement_rules,
				ARRAY_SIZE(original_measurement_rules));
	if (!ret && tcb == TCB_DEFAULT)
		ret = add_rules(p, default_measurement_rules,
				ARRAY_SIZE(default_measurement_rules));
	if (!ret && secure_boot)
		ret = add_rules(p, secure_boot_rules, ARRAY_SIZE(secure_boot_rules));
	if (!ret && appraise_tcb)
		ret = add_rules(p, default_appraise_rules,
				ARRAY_SIZE(default_appraise_rules));
	if (!ret && critical_data)
		ret = add_rules(p, critical_data_rules, ARRAY_SIZE(critical_data_rules));
	if (ret) {
		ima_policy_free(p);
		return uevm_err(ENOMEM, "out of memory");
	}
	*out = p;
	return 0;
}
