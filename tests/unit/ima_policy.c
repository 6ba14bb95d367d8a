// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The IMA policy language against the kernel's own definitions: the
 * examples of Documentation/ABI/testing/ima_policy, the built-in tcb and
 * appraise_tcb rule tables of security/integrity/ima/ima_policy.c, and
 * decisions worked out by hand from the kernel's ima_match_rules() and
 * ima_match_policy() (each expected value below says why).
 */
#include <errno.h>
#include <stdlib.h>
#include "uevm_internal.h"
#include "ima_policy.h"
#include "test.h"

/* Kernel values, typed from include/uapi/linux/magic.h and
 * crypto/hash_info.h, not taken from the code under test. */
#define EXT4_MAGIC	0xef53
#define PROC_MAGIC	0x9fa0
#define TMPFS_MAGIC_K	0x01021994
#define SYSFS_MAGIC_K	0x62656572
#define ALGO_SHA256	4
#define ALGO_SHA512	6

static struct ima_policy *parse(const char *text)
{
	struct ima_policy *p = NULL;

	if (ima_policy_parse(text, strlen(text), &p)) {
		printf("  parse error: %s\n", uevm_last_error());
		return NULL;
	}
	return p;
}

static char *render(const struct ima_policy *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (!fp)
		return NULL;
	if (ima_policy_write(p, fp)) {
		fclose(fp);
		free(buf);
		return NULL;
	}
	fclose(fp);
	return buf;
}

static struct ima_policy_result decide(const struct ima_policy *p,
				       struct ima_match_input in, int wanted)
{
	struct ima_policy_result r;

	ima_match_policy(p, &in, wanted, &r);
	return r;
}

#define ALL (IMA_MEASURE | IMA_APPRAISE | IMA_AUDIT | IMA_HASH)

/* Parse, and check that rendering and parsing again gives the same text. */
static void check_roundtrip(const char *name, const char *text, size_t nrules)
{
	struct ima_policy *p = parse(text), *q = NULL;
	char *a = NULL, *b = NULL, label[200];

	snprintf(label, sizeof(label), "%s: parses, %zu rules", name, nrules);
	CHECK(label, p && ima_policy_count(p) == nrules);
	if (p)
		a = render(p);
	if (a && !ima_policy_parse(a, strlen(a), &q))
		b = render(q);
	snprintf(label, sizeof(label), "%s: re-rendered text parses to the same rules",
		 name);
	CHECK(label, a && b && !strcmp(a, b));
	free(a);
	free(b);
	ima_policy_free(p);
	ima_policy_free(q);
}

/* ---- the documented examples ------------------------------------------ */

static const char doc_default_policy[] =
	"# PROC_SUPER_MAGIC\n"
	"dont_measure fsmagic=0x9fa0\n"
	"dont_appraise fsmagic=0x9fa0\n"
	"# SYSFS_MAGIC\n"
	"dont_measure fsmagic=0x62656572\n"
	"dont_appraise fsmagic=0x62656572\n"
	"# DEBUGFS_MAGIC\n"
	"dont_measure fsmagic=0x64626720\n"
	"dont_appraise fsmagic=0x64626720\n"
	"# TMPFS_MAGIC\n"
	"dont_measure fsmagic=0x01021994\n"
	"dont_appraise fsmagic=0x01021994\n"
	"# RAMFS_MAGIC\n"
	"dont_appraise fsmagic=0x858458f6\n"
	"# DEVPTS_SUPER_MAGIC\n"
	"dont_measure fsmagic=0x1cd1\n"
	"dont_appraise fsmagic=0x1cd1\n"
	"# BINFMTFS_MAGIC\n"
	"dont_measure fsmagic=0x42494e4d\n"
	"dont_appraise fsmagic=0x42494e4d\n"
	"# SECURITYFS_MAGIC\n"
	"dont_measure fsmagic=0x73636673\n"
	"dont_appraise fsmagic=0x73636673\n"
	"# SELINUX_MAGIC\n"
	"dont_measure fsmagic=0xf97cff8c\n"
	"dont_appraise fsmagic=0xf97cff8c\n"
	"# CGROUP_SUPER_MAGIC\n"
	"dont_measure fsmagic=0x27e0eb\n"
	"dont_appraise fsmagic=0x27e0eb\n"
	"# NSFS_MAGIC\n"
	"dont_measure fsmagic=0x6e736673\n"
	"dont_appraise fsmagic=0x6e736673\n"
	"\n"
	"measure func=BPRM_CHECK\n"
	"measure func=FILE_MMAP mask=MAY_EXEC\n"
	"measure func=FILE_CHECK mask=MAY_READ uid=0\n"
	"measure func=MODULE_CHECK\n"
	"measure func=FIRMWARE_CHECK\n"
	"appraise fowner=0\n";

/* The other examples, continuation lines joined.  Left out: the
 * documentation's "template=ima-sigv3", a template the kernel does not
 * define (builtin_templates has no ima-sigv3), refused below. */
static const char doc_examples[] =
	"dont_measure obj_type=var_log_t\n"
	"dont_appraise obj_type=var_log_t\n"
	"dont_measure obj_type=auditd_log_t\n"
	"dont_appraise obj_type=auditd_log_t\n"
	"measure subj_user=system_u func=FILE_CHECK mask=MAY_READ\n"
	"measure subj_role=system_r func=FILE_CHECK mask=MAY_READ\n"
	"measure subj_user=_ func=FILE_CHECK mask=MAY_READ\n"
	"measure func=KEXEC_KERNEL_CHECK pcr=4\n"
	"measure func=KEXEC_INITRAMFS_CHECK pcr=5\n"
	"appraise func=KEXEC_KERNEL_CHECK appraise_type=imasig|modsig\n"
	"measure func=KEY_CHECK\n"
	"measure func=KEY_CHECK keyrings=.builtin_trusted_keys|.ima\n"
	"appraise func=SETXATTR_CHECK appraise_algos=sha256,sha384,sha512\n"
	"measure func=FILE_CHECK digest_type=verity template=ima-ngv2\n"
	"measure func=CRITICAL_DATA label=selinux\n"
	"measure func=BPRM_CHECK fsuuid=8bcbe394-4f13-4144-be8e-5aa9ea2ce2f6\n";

static void test_documented_examples(void)
{
	struct ima_policy *p;
	char *text;

	check_roundtrip("doc default policy", doc_default_policy, 27);
	check_roundtrip("doc examples", doc_examples, 16);

	/* The kernel shows a sigv3 rule with appraise_type= before
	 * digest_type=, an order its own parser refuses: the documented rule
	 * loads, its rendering does not load back. */
	p = parse("appraise func=BPRM_CHECK digest_type=verity appraise_type=sigv3\n");
	text = p ? render(p) : NULL;
	CHECK("doc sigv3 example: parses, rendered in the kernel's order",
	      text && !strcmp(text, "appraise func=BPRM_CHECK appraise_type=sigv3 "
			      "digest_type=verity \n"));
	ima_policy_free(p);
	p = (struct ima_policy *)&p;
	CHECK("doc sigv3 example: the kernel's rendering does not parse back",
	      text && ima_policy_parse(text, strlen(text), &p) == -EINVAL && !p);
	free(text);

	/* Aliases render with the kernel's canonical names. */
	p = parse("measure func=FILE_MMAP mask=MAY_EXEC\n"
		  "measure func=PATH_CHECK mask=^MAY_READ\n"
		  "measure fsmagic=0X01021994\n"
		  "measure func=FILE_CHECK template=d-ng|n-ng|sig\n"
		  "measure fsuuid=8BCBE394-4F13-4144-BE8E-5AA9EA2CE2F6\n"
		  "appraise func=SETXATTR_CHECK appraise_algos=sha512,sha256\n"
		  "measure fowner>1000 fgroup<100 egid=5 pcr=11\n"
		  "appraise func=FILE_CHECK appraise_type=imasig appraise_flag=check_blacklist permit_directio\n");
	text = p ? render(p) : NULL;
	CHECK("rendered like the kernel's ima/policy file", text && !strcmp(text,
	      "measure func=MMAP_CHECK mask=MAY_EXEC \n"
	      "measure func=FILE_CHECK mask=^MAY_READ \n"
	      "measure fsmagic=0x1021994 \n"
	      "measure func=FILE_CHECK template=ima-sig \n"
	      "measure fsuuid=8bcbe394-4f13-4144-be8e-5aa9ea2ce2f6 \n"
	      "appraise func=SETXATTR_CHECK appraise_algos=sha256,sha512 \n"
	      "measure pcr=11 egid=5 fowner>1000 fgroup<100 \n"
	      "appraise func=FILE_CHECK appraise_type=imasig permit_directio \n"));
	free(text);
	ima_policy_free(p);

	p = parse(doc_examples);
	CHECK("LSM rules are kept and flagged",
	      p && ima_policy_rule_has_lsm(p, 0) && ima_policy_rule_has_lsm(p, 6) &&
	      !ima_policy_rule_has_lsm(p, 7));
	CHECK("rule line numbers", p && ima_policy_rule_line(p, 0) == 1 &&
	      ima_policy_rule_line(p, 15) == 16);
	/* The only SETXATTR_CHECK rule: sha256 (4), sha384 (5), sha512 (6). */
	CHECK("SETXATTR_CHECK algorithms",
	      p && ima_policy_setxattr_algos(p) == ((1u << 4) | (1u << 5) | (1u << 6)));
	ima_policy_free(p);
}

/* ---- the built-in policies --------------------------------------------- */

/* From the kernel's dont_measure_rules[] and default_measurement_rules[]
 * (tmpfs exempt only for FILE_CHECK since the kernel's 2025 commit "ima:
 * limit the builtin 'tcb' dont_measure tmpfs policy rule"). */
static const char tcb_expected[] =
	"dont_measure fsmagic=0x9fa0 \n"
	"dont_measure fsmagic=0x62656572 \n"
	"dont_measure fsmagic=0x64626720 \n"
	"dont_measure func=FILE_CHECK fsmagic=0x1021994 \n"
	"dont_measure fsmagic=0x1cd1 \n"
	"dont_measure fsmagic=0x42494e4d \n"
	"dont_measure fsmagic=0x73636673 \n"
	"dont_measure fsmagic=0xf97cff8c \n"
	"dont_measure fsmagic=0x43415d53 \n"
	"dont_measure fsmagic=0x27e0eb \n"
	"dont_measure fsmagic=0x63677270 \n"
	"dont_measure fsmagic=0x6e736673 \n"
	"dont_measure fsmagic=0xde5e81e4 \n"
	"measure func=MMAP_CHECK mask=MAY_EXEC \n"
	"measure func=BPRM_CHECK mask=MAY_EXEC \n"
	"measure func=FILE_CHECK mask=^MAY_READ euid=0 \n"
	"measure func=FILE_CHECK mask=^MAY_READ uid=0 \n"
	"measure func=MODULE_CHECK \n"
	"measure func=FIRMWARE_CHECK \n"
	"measure func=POLICY_CHECK \n";

/* default_appraise_rules[] with CONFIG_IMA_WRITE_POLICY=y. */
static const char appraise_tcb_expected[] =
	"dont_appraise fsmagic=0x9fa0 \n"
	"dont_appraise fsmagic=0x62656572 \n"
	"dont_appraise fsmagic=0x64626720 \n"
	"dont_appraise fsmagic=0x1021994 \n"
	"dont_appraise fsmagic=0x858458f6 \n"
	"dont_appraise fsmagic=0x1cd1 \n"
	"dont_appraise fsmagic=0x42494e4d \n"
	"dont_appraise fsmagic=0x73636673 \n"
	"dont_appraise fsmagic=0xf97cff8c \n"
	"dont_appraise fsmagic=0x43415d53 \n"
	"dont_appraise fsmagic=0x6e736673 \n"
	"dont_appraise fsmagic=0xde5e81e4 \n"
	"dont_appraise fsmagic=0x27e0eb \n"
	"dont_appraise fsmagic=0x63677270 \n"
	"appraise func=POLICY_CHECK appraise_type=imasig \n"
	"appraise fowner=0 \n";

static void test_builtins(void)
{
	struct ima_policy *tcb = NULL, *atcb = NULL, *both = NULL, *sb = NULL;
	struct ima_policy *bad = (struct ima_policy *)&bad;
	char *t;

	CHECK("builtin tcb", !ima_policy_builtin("tcb", &tcb) && tcb);
	CHECK("builtin appraise_tcb", !ima_policy_builtin("appraise_tcb", &atcb) && atcb);
	CHECK("builtin tcb|appraise_tcb",
	      !ima_policy_builtin("tcb|appraise_tcb", &both) && both &&
	      ima_policy_count(both) == 20 + 16);
	CHECK("builtin secure_boot", !ima_policy_builtin("secure_boot", &sb) &&
	      sb && ima_policy_count(sb) == 4);
	CHECK("unknown builtin refused",
	      ima_policy_builtin("tcbx", &bad) == -EINVAL && !bad &&
	      strstr(uevm_last_error(), "tcbx"));
	if (!tcb || !atcb || !both)
		return;
	t = render(tcb);
	CHECK("tcb is the kernel's rule table", t && !strcmp(t, tcb_expected));
	free(t);
	t = render(atcb);
	CHECK("appraise_tcb is the kernel's rule table",
	      t && !strcmp(t, appraise_tcb_expected));
	free(t);
	check_roundtrip("tcb text", tcb_expected, 20);
	check_roundtrip("appraise_tcb text", appraise_tcb_expected, 16);
	CHECK("tcb asks only for measurement", ima_policy_flag(tcb) == IMA_MEASURE);
	CHECK("appraise_tcb asks only for appraisal",
	      ima_policy_flag(atcb) == IMA_APPRAISE);

	/* tcb decisions.  bprm_check passes MAY_EXEC only, and the BPRM rule
	 * compares the whole mask (IMA_MASK), so MAY_EXEC|MAY_READ does not
	 * match it. */
	struct ima_match_input ext4 = { .fsmagic = EXT4_MAGIC, .fsname = "ext4",
					.uid = 1000, .euid = 1000, .fowner = 1000 };
	struct ima_match_input in;

	in = ext4; in.func = BPRM_CHECK; in.mask = MAY_EXEC;
	CHECK("tcb: exec is measured", decide(tcb, in, ALL).action == IMA_MEASURE);
	in.mask = MAY_EXEC | MAY_READ;
	CHECK("tcb: mask=MAY_EXEC is an equality test", decide(tcb, in, ALL).action == 0);
	in = ext4; in.func = MMAP_CHECK; in.mask = MAY_EXEC; in.fsmagic = PROC_MAGIC;
	CHECK("tcb: procfs is not measured", decide(tcb, in, ALL).action == 0);
	in.fsmagic = TMPFS_MAGIC_K;
	CHECK("tcb: mmap exec on tmpfs is measured (tmpfs rule is FILE_CHECK only)",
	      decide(tcb, in, ALL).action == IMA_MEASURE);
	in = ext4; in.func = FILE_CHECK; in.mask = MAY_READ; in.uid = in.euid = 0;
	in.fsmagic = TMPFS_MAGIC_K;
	CHECK("tcb: root read on tmpfs is not measured", decide(tcb, in, ALL).action == 0);
	in.fsmagic = EXT4_MAGIC; in.mask = MAY_READ | MAY_WRITE;
	CHECK("tcb: mask=^MAY_READ is a bit test",
	      decide(tcb, in, ALL).action == IMA_MEASURE);
	in.mask = MAY_WRITE;
	CHECK("tcb: root write without read is not measured",
	      decide(tcb, in, ALL).action == 0);
	in = ext4; in.func = FILE_CHECK; in.mask = MAY_READ; in.euid = 0;
	CHECK("tcb: read with euid 0 is measured",
	      decide(tcb, in, ALL).action == IMA_MEASURE);
	in.euid = 1000; in.uid = 0;
	CHECK("tcb: read with uid 0 is measured",
	      decide(tcb, in, ALL).action == IMA_MEASURE);
	in.uid = 1000; in.suid = 0;
	CHECK("tcb: saved uid 0 without CAP_SETUID is not measured",
	      decide(tcb, in, ALL).action == 0);
	in.cap_setuid = true;
	CHECK("tcb: saved uid 0 with CAP_SETUID counts for euid=0",
	      decide(tcb, in, ALL).action == IMA_MEASURE);
	in = ext4; in.func = MODULE_CHECK; in.mask = MAY_READ;
	CHECK("tcb: modules are measured", decide(tcb, in, ALL).action == IMA_MEASURE);
	in.func = POLICY_CHECK;
	CHECK("tcb: policy files are measured", decide(tcb, in, ALL).action == IMA_MEASURE);
	in.func = KEXEC_KERNEL_CHECK;
	CHECK("tcb: kexec kernels are not", decide(tcb, in, ALL).action == 0);
	/* POST_SETATTR ignores func= and mask=: the MMAP rule matches. */
	in = ext4; in.func = POST_SETATTR; in.mask = 0;
	CHECK("tcb: POST_SETATTR matches any func= rule",
	      decide(tcb, in, ALL).action == IMA_MEASURE);
	in.fsmagic = TMPFS_MAGIC_K;
	CHECK("tcb: POST_SETATTR on tmpfs meets the FILE_CHECK tmpfs rule",
	      decide(tcb, in, ALL).action == 0);
	in = ext4; in.func = BPRM_CHECK; in.mask = MAY_EXEC;
	CHECK("tcb: nothing when only appraisal is wanted",
	      decide(tcb, in, IMA_APPRAISE).action == 0);

	/* appraise_tcb decisions. */
	struct ima_policy_result r;

	in = ext4; in.func = FILE_CHECK; in.mask = MAY_READ; in.fowner = 0;
	r = decide(atcb, in, ALL);
	CHECK("appraise_tcb: root-owned file is appraised",
	      r.action == IMA_APPRAISE && r.subaction == IMA_FILE_APPRAISE &&
	      r.flags == 0 && r.pcr == -1 && !r.template_name);
	in.fowner = 1000;
	CHECK("appraise_tcb: user-owned file is not", decide(atcb, in, ALL).action == 0);
	in.fowner = 0; in.func = BPRM_CHECK; in.mask = MAY_EXEC;
	r = decide(atcb, in, ALL);
	CHECK("appraise_tcb: a rule without func= gives the FILE sub-action",
	      r.action == IMA_APPRAISE && r.subaction == IMA_FILE_APPRAISE);
	in.func = POLICY_CHECK; in.fowner = 1000;
	r = decide(atcb, in, ALL);
	CHECK("appraise_tcb: policy needs a signature (READ sub-action)",
	      r.action == IMA_APPRAISE && r.flags == IMA_DIGSIG_REQUIRED &&
	      r.subaction == IMA_READ_APPRAISE);
	in.fsmagic = PROC_MAGIC;
	CHECK("appraise_tcb: dont_appraise procfs comes first",
	      decide(atcb, in, ALL).action == 0);
	in = ext4; in.func = FILE_CHECK; in.mask = MAY_READ; in.fowner = 0;
	in.fsmagic = SYSFS_MAGIC_K;
	CHECK("appraise_tcb: sysfs is not appraised", decide(atcb, in, ALL).action == 0);

	in = ext4; in.func = FILE_CHECK; in.mask = MAY_READ; in.uid = 0; in.fowner = 0;
	CHECK("tcb|appraise_tcb: both families decided",
	      decide(both, in, ALL).action == (IMA_MEASURE | IMA_APPRAISE));

	ima_policy_free(tcb);
	ima_policy_free(atcb);
	ima_policy_free(both);
	ima_policy_free(sb);
}

/* ---- first match per family --------------------------------------------- */

static void test_first_match(void)
{
	struct ima_policy *p = parse(
		"dont_measure fsmagic=0x9fa0\n"				/* 1 */
		"measure func=FILE_CHECK mask=^MAY_WRITE pcr=11 template=ima-sig\n"
		"measure func=FILE_CHECK pcr=12\n"
		"dont_appraise fsuuid=11111111-2222-3333-4444-555555555555\n"
		"appraise func=FILE_CHECK appraise_type=imasig\n"	/* 5 */
		"appraise fowner=0 permit_directio\n"
		"audit fowner>1000\n"
		"dont_hash fsname=tmpfs\n"
		"hash func=FILE_CHECK\n"
		"appraise func=FILE_CHECK appraise_algos=sha256\n");	/* 10 */
	struct ima_match_input in;
	struct ima_policy_result r;

	CHECK("family policy parses", p && ima_policy_count(p) == 10);
	if (!p)
		return;
	/* Rule 2 decides measure (pcr 11, ima-sig), rule 3 is not reached;
	 * rule 5 decides appraise and clears nothing yet; rule 9 then adds
	 * hash; rule 10 is never reached (appraise already decided). */
	in = (struct ima_match_input){ .func = FILE_CHECK, .mask = MAY_READ | MAY_WRITE,
				       .fsmagic = EXT4_MAGIC, .fsname = "ext4" };
	r = decide(p, in, ALL);
	CHECK("first measure rule wins: its pcr and template",
	      r.pcr == 11 && r.template_name && !strcmp(r.template_name, "ima-sig"));
	CHECK("first appraise rule wins: its flags, not later ones",
	      r.flags == (IMA_DIGSIG_REQUIRED | IMA_CHECK_BLACKLIST) &&
	      r.allowed_algos == 0 && r.subaction == IMA_FILE_APPRAISE);
	CHECK("a later hash rule adds hash after appraise",
	      r.action == (IMA_MEASURE | IMA_APPRAISE | IMA_HASH));
	r = decide(p, in, IMA_MEASURE);
	CHECK("unwanted families are skipped", r.action == IMA_MEASURE &&
	      r.flags == 0 && r.pcr == 11);

	/* No write bit: rule 3 (pcr 12, default template); owner 2000 is
	 * audited; dont_hash on tmpfs decides hash with nothing. */
	in = (struct ima_match_input){ .func = FILE_CHECK, .mask = MAY_READ,
				       .fsmagic = TMPFS_MAGIC_K, .fsname = "tmpfs",
				       .fowner = 2000 };
	r = decide(p, in, ALL);
	CHECK("second measure rule when the first does not match",
	      r.pcr == 12 && !r.template_name);
	CHECK("dont_hash stops the hash family",
	      r.action == (IMA_MEASURE | IMA_APPRAISE | IMA_AUDIT));

	/* procfs and the listed fsuuid: both dont_ rules decide. */
	in = (struct ima_match_input){ .func = BPRM_CHECK, .mask = MAY_EXEC,
				       .fsmagic = PROC_MAGIC, .fsname = "proc",
				       .has_fsuuid = true,
				       .fsuuid = { 0x11, 0x11, 0x11, 0x11, 0x22, 0x22,
						   0x33, 0x33, 0x44, 0x44, 0x55, 0x55,
						   0x55, 0x55, 0x55, 0x55 } };
	r = decide(p, in, ALL);
	CHECK("dont_ rules decide a family with no action",
	      r.action == 0 && r.flags == 0 && r.pcr == -1);

	/* exec of a root-owned file on ext4: only rule 6. */
	in = (struct ima_match_input){ .func = BPRM_CHECK, .mask = MAY_EXEC,
				       .fsmagic = EXT4_MAGIC, .fsname = "ext4" };
	r = decide(p, in, ALL);
	CHECK("appraise without func=: FILE sub-action, permit_directio",
	      r.action == IMA_APPRAISE && r.flags == IMA_PERMIT_DIRECTIO &&
	      r.subaction == IMA_FILE_APPRAISE);
	ima_policy_free(p);

	/* Hash before appraise: the appraise rule clears the hash action. */
	p = parse("hash func=FILE_CHECK\nappraise func=FILE_CHECK\n");
	in = (struct ima_match_input){ .func = FILE_CHECK, .mask = MAY_READ };
	CHECK("appraise after hash clears hash",
	      p && decide(p, in, ALL).action == IMA_APPRAISE);
	CHECK("hash alone when appraisal is not wanted",
	      p && decide(p, in, IMA_HASH).action == IMA_HASH);
	ima_policy_free(p);

	/* An LSM rule never matches: the next rule decides. */
	p = parse("dont_measure obj_type=var_log_t\nmeasure func=FILE_CHECK\n");
	in = (struct ima_match_input){ .func = FILE_CHECK, .mask = MAY_READ };
	CHECK("LSM conditions never match",
	      p && decide(p, in, ALL).action == IMA_MEASURE);
	ima_policy_free(p);

	/* appraise_algos reaches the result. */
	p = parse("appraise func=FILE_CHECK appraise_algos=sha256,sha512\n");
	r = p ? decide(p, in, ALL) : (struct ima_policy_result){ 0 };
	CHECK("allowed algorithms of the appraise rule",
	      r.allowed_algos == ((1u << ALGO_SHA256) | (1u << ALGO_SHA512)));
	ima_policy_free(p);
}

/* ---- condition matrix --------------------------------------------------- */

static void test_matrix(void)
{
	struct ima_policy *p;
	struct ima_match_input in;
	char name[128];

	/* uid: > on FILE_CHECK, < on MMAP_CHECK, = on BPRM_CHECK. */
	p = parse("measure func=FILE_CHECK uid>1000\n"
		  "measure func=MMAP_CHECK uid<1000\n"
		  "measure func=BPRM_CHECK uid=1000\n"
		  "appraise fowner<500\n"
		  "audit fgroup>20\n"
		  "hash gid<10\n");
	CHECK("operator policy parses", p != NULL);
	if (p) {
		static const struct { enum ima_hooks f; uint32_t uid; int want; } u[] = {
			{ FILE_CHECK, 999, 0 }, { FILE_CHECK, 1000, 0 },
			{ FILE_CHECK, 1001, IMA_MEASURE },
			{ MMAP_CHECK, 999, IMA_MEASURE }, { MMAP_CHECK, 1000, 0 },
			{ MMAP_CHECK, 1001, 0 },
			{ BPRM_CHECK, 999, 0 }, { BPRM_CHECK, 1000, IMA_MEASURE },
			{ BPRM_CHECK, 1001, 0 },
			/* a uid above 2^31 compares unsigned, as kuid_t does */
			{ FILE_CHECK, 4000000000u, IMA_MEASURE },
		};
		for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
			in = (struct ima_match_input){ .func = u[i].f, .mask = MAY_READ,
						       .uid = u[i].uid, .fowner = 1000,
						       .fgroup = 0, .gid = 100 };
			snprintf(name, sizeof(name), "uid %s %u -> %d", ima_hook_name(u[i].f),
				 u[i].uid, u[i].want);
			CHECK(name, decide(p, in, IMA_MEASURE).action == u[i].want);
		}
		static const struct { uint32_t v; int want; } fo[] = {
			{ 0, IMA_APPRAISE }, { 499, IMA_APPRAISE }, { 500, 0 }, { 501, 0 },
		};
		for (size_t i = 0; i < sizeof(fo) / sizeof(fo[0]); i++) {
			in = (struct ima_match_input){ .func = FILE_CHECK, .fowner = fo[i].v };
			snprintf(name, sizeof(name), "fowner<500 with %u", fo[i].v);
			CHECK(name, decide(p, in, IMA_APPRAISE).action == fo[i].want);
		}
		static const struct { uint32_t fgroup, gid; int want; } g[] = {
			{ 20, 10, 0 }, { 21, 10, IMA_AUDIT }, { 20, 9, IMA_HASH },
			{ 21, 9, IMA_AUDIT | IMA_HASH },
		};
		for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
			in = (struct ima_match_input){ .func = FILE_CHECK,
						       .fgroup = g[i].fgroup, .gid = g[i].gid };
			snprintf(name, sizeof(name), "fgroup>20 gid<10 with %u, %u",
				 g[i].fgroup, g[i].gid);
			CHECK(name, decide(p, in, IMA_AUDIT | IMA_HASH).action == g[i].want);
		}
		ima_policy_free(p);
	}

	/* euid/egid and the CAP_SETUID/CAP_SETGID widening. */
	p = parse("measure euid>999\nappraise egid=0\n");
	if (p) {
		in = (struct ima_match_input){ .func = FILE_CHECK, .uid = 1000,
					       .euid = 0, .suid = 0, .egid = 5,
					       .sgid = 0, .gid = 0 };
		CHECK("euid>999 looks at the effective uid only",
		      decide(p, in, ALL).action == 0);
		in.cap_setuid = true;
		CHECK("euid>999 with CAP_SETUID also takes the real uid",
		      decide(p, in, ALL).action == IMA_MEASURE);
		in.cap_setgid = true;
		CHECK("egid=0 with CAP_SETGID also takes the saved gid",
		      decide(p, in, ALL).action == (IMA_MEASURE | IMA_APPRAISE));
		in.cap_setgid = false;
		CHECK("egid=0 without CAP_SETGID: effective gid 5",
		      decide(p, in, ALL).action == IMA_MEASURE);
	}
	CHECK("euid/egid policy parses", p != NULL);
	ima_policy_free(p);

	/* mask: equality versus bit test, every mask value. */
	p = parse("measure func=FILE_CHECK mask=MAY_READ\n"
		  "appraise func=FILE_CHECK mask=^MAY_READ\n");
	if (p) {
		static const struct { int mask, want; } m[] = {
			{ MAY_READ, IMA_MEASURE | IMA_APPRAISE },
			{ MAY_READ | MAY_WRITE, IMA_APPRAISE },
			{ MAY_READ | MAY_EXEC, IMA_APPRAISE },
			{ MAY_WRITE, 0 }, { MAY_APPEND | MAY_WRITE, 0 }, { 0, 0 },
		};
		for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
			in = (struct ima_match_input){ .func = FILE_CHECK, .mask = m[i].mask };
			snprintf(name, sizeof(name), "mask=MAY_READ / ^MAY_READ with 0x%x",
				 m[i].mask);
			CHECK(name, decide(p, in, ALL).action == m[i].want);
		}
		in = (struct ima_match_input){ .func = BPRM_CHECK, .mask = MAY_READ };
		CHECK("func= restricts the mask rules", decide(p, in, ALL).action == 0);
	}
	ima_policy_free(p);

	/* fsmagic, fsuuid, fsname. */
	p = parse("measure fsmagic=0xEF53\n"
		  "appraise fsuuid=8bcbe394-4f13-4144-be8e-5aa9ea2ce2f6\n"
		  "audit fsname=ext4\n"
		  "hash fsuuid=00000000-0000-0000-0000-000000000000\n");
	if (p) {
		static const uint8_t uuid[16] = { 0x8b, 0xcb, 0xe3, 0x94, 0x4f, 0x13,
						   0x41, 0x44, 0xbe, 0x8e, 0x5a, 0xa9,
						   0xea, 0x2c, 0xe2, 0xf6 };
		in = (struct ima_match_input){ .func = FILE_CHECK, .fsmagic = EXT4_MAGIC,
					       .fsname = "ext4", .has_fsuuid = true };
		memcpy(in.fsuuid, uuid, 16);
		CHECK("fsmagic, fsuuid and fsname all match",
		      decide(p, in, ALL).action == (IMA_MEASURE | IMA_APPRAISE | IMA_AUDIT));
		in.fsmagic = 0x9123683e;	/* btrfs */
		in.fsuuid[15] ^= 1;
		in.fsname = "btrfs";
		CHECK("other fs: nothing", decide(p, in, ALL).action == 0);
		in.fsname = NULL;
		in.has_fsuuid = false;
		CHECK("no fs uuid matches the all-zero fsuuid (like the kernel's s_uuid)",
		      decide(p, in, ALL).action == IMA_HASH);
	}
	CHECK("fs policy parses", p != NULL);
	ima_policy_free(p);

	/* KEY_CHECK and CRITICAL_DATA look at the keyring or label. */
	p = parse("measure func=KEY_CHECK keyrings=.ima|.builtin_trusted_keys uid=0\n"
		  "measure func=CRITICAL_DATA label=selinux\n"
		  "measure\n");
	if (p) {
		in = (struct ima_match_input){ .func = KEY_CHECK, .keyrings_or_label = ".ima" };
		CHECK("KEY_CHECK: listed keyring", decide(p, in, ALL).action == IMA_MEASURE);
		in.uid = 5;
		CHECK("KEY_CHECK: uid= applies", decide(p, in, ALL).action == 0);
		in.uid = 0;
		in.keyrings_or_label = ".evm";
		CHECK("KEY_CHECK: unlisted keyring, and the generic rule does not match keys",
		      decide(p, in, ALL).action == 0);
		in.keyrings_or_label = NULL;
		CHECK("KEY_CHECK: no keyring name", decide(p, in, ALL).action == 0);
		in.func = CRITICAL_DATA;
		in.keyrings_or_label = "selinux";
		CHECK("CRITICAL_DATA: listed label", decide(p, in, ALL).action == IMA_MEASURE);
		in.keyrings_or_label = "kernel_info";
		CHECK("CRITICAL_DATA: other label", decide(p, in, ALL).action == 0);
		in = (struct ima_match_input){ .func = FILE_CHECK };
		CHECK("generic rule matches files", decide(p, in, ALL).action == IMA_MEASURE);
	}
	ima_policy_free(p);
	p = parse("measure func=KEY_CHECK\n");
	in = (struct ima_match_input){ .func = KEY_CHECK, .keyrings_or_label = ".evm" };
	CHECK("KEY_CHECK without keyrings= takes every key",
	      p && decide(p, in, ALL).action == IMA_MEASURE);
	ima_policy_free(p);

	/* POST_SETATTR and MMAP_CHECK_REQPROT. */
	p = parse("appraise func=BPRM_CHECK mask=MAY_EXEC\n"
		  "measure func=MMAP_CHECK_REQPROT\n");
	if (p) {
		struct ima_policy_result r;

		in = (struct ima_match_input){ .func = POST_SETATTR };
		r = decide(p, in, ALL);
		CHECK("POST_SETATTR passes func= and mask=, FILE sub-action",
		      r.action == (IMA_APPRAISE | IMA_MEASURE) &&
		      r.subaction == IMA_FILE_APPRAISE);
		in.func = MMAP_CHECK;
		CHECK("MMAP_CHECK is not MMAP_CHECK_REQPROT", decide(p, in, ALL).action == 0);
		in.func = MMAP_CHECK_REQPROT;
		CHECK("MMAP_CHECK_REQPROT", decide(p, in, ALL).action == IMA_MEASURE);
	}
	ima_policy_free(p);

	CHECK("a NULL policy decides nothing", ({
		struct ima_policy_result r0;
		in = (struct ima_match_input){ .func = FILE_CHECK };
		ima_match_policy(NULL, &in, ALL, &r0);
		r0.action == 0 && r0.pcr == -1;
	}));
}

/* ---- malformed rules ---------------------------------------------------- */

static void expect_refused(const char *rule, const char *want)
{
	char text[512], label[600];
	struct ima_policy *p = (struct ima_policy *)&p;
	unsigned int line = 0;
	int ret;

	/* Two good rules, a comment and a blank line before: line 5. */
	snprintf(text, sizeof(text),
		 "measure func=BPRM_CHECK\n# comment\n\n  appraise fowner=0\n%s\n", rule);
	ret = ima_policy_parse_lines(text, strlen(text), &p, &line);
	snprintf(label, sizeof(label), "refused: %s -> line 5: ...%s", rule, want);
	CHECK(label, ret == -EINVAL && p == NULL && line == 5 &&
	      !strncmp(uevm_last_error(), "line 5: ", 8) &&
	      strstr(uevm_last_error(), want));
	if (ret != -EINVAL || !strstr(uevm_last_error(), want))
		printf("  got %d: %s\n", ret, uevm_last_error());
	ima_policy_free(ret ? NULL : p);
}

static void expect_accepted(const char *rule)
{
	struct ima_policy *p = NULL;
	char label[300];

	snprintf(label, sizeof(label), "accepted: %s", rule);
	CHECK(label, !ima_policy_parse(rule, strlen(rule), &p) && p &&
	      ima_policy_count(p) == 1);
	if (!p)
		printf("  error: %s\n", uevm_last_error());
	ima_policy_free(p);
}

static void test_malformed(void)
{
	/* unknown action / keyword */
	expect_refused("measur func=FILE_CHECK", "unknown keyword 'measur'");
	expect_refused("measure foo=bar", "unknown keyword 'foo=bar'");
	expect_refused("measure appraise", "second action 'appraise'");
	expect_refused("func=FILE_CHECK mask=MAY_READ", "no action");
	/* unknown func */
	expect_refused("measure func=FOO_CHECK", "unknown func 'func=FOO_CHECK'");
	expect_refused("measure func=POST_SETATTR", "'func=POST_SETATTR'");
	expect_refused("measure func=file_check", "'func=file_check'");
	/* bad mask */
	expect_refused("measure mask=MAY_READX", "invalid mask 'mask=MAY_READX'");
	expect_refused("measure mask=^^MAY_READ", "'mask=^^MAY_READ'");
	expect_refused("measure mask=MAY_READ|MAY_WRITE", "'mask=MAY_READ|MAY_WRITE'");
	/* bad ids */
	expect_refused("measure uid=abc", "'uid=abc'");
	expect_refused("measure uid=-1", "'uid=-1'");
	expect_refused("measure euid=4294967295", "'euid=4294967295'");
	expect_refused("measure fowner=4294967296", "'fowner=4294967296'");
	expect_refused("measure fgroup=0x10", "'fgroup=0x10'");
	expect_refused("measure gid<1 egid>2", "'egid>2'");
	/* duplicate conditions */
	expect_refused("measure uid=0 uid=1", "duplicate condition 'uid=1'");
	expect_refused("measure uid=0 euid=0", "'euid=0'");
	expect_refused("measure func=FILE_CHECK func=BPRM_CHECK",
		       "duplicate condition 'func=BPRM_CHECK'");
	expect_refused("measure mask=MAY_READ mask=^MAY_EXEC", "duplicate condition");
	expect_refused("measure fsname=a fsname=b", "duplicate condition 'fsname=b'");
	expect_refused("measure pcr=4 pcr=5", "duplicate option 'pcr=5'");
	/* bad fsuuid */
	expect_refused("measure fsuuid=8bcbe394-4f13-4144-be8e-5aa9ea2ce2f",
		       "invalid fsuuid 'fsuuid=8bcbe394-4f13-4144-be8e-5aa9ea2ce2f'");
	expect_refused("measure fsuuid=8bcbe394x4f13-4144-be8e-5aa9ea2ce2f6", "invalid fsuuid");
	expect_refused("measure fsuuid=8bcbe394-4f13-4144-be8e-5aa9ea2ce2fg", "invalid fsuuid");
	expect_refused("measure fsuuid=8bcbe394-4f13-4144-be8e-5aa9ea2ce2f6a", "invalid fsuuid");
	/* bad fsmagic */
	expect_refused("measure fsmagic=0x", "'fsmagic=0x'");
	expect_refused("measure fsmagic=proc", "'fsmagic=proc'");
	expect_refused("measure fsmagic=0x10000000000000000", "'fsmagic=0x10000000000000000'");
	/* bad pcr */
	expect_refused("measure pcr=64", "invalid pcr (0-63) 'pcr=64'");
	expect_refused("measure pcr=-1", "'pcr=-1'");
	expect_refused("measure pcr=ten", "'pcr=ten'");
	expect_refused("appraise pcr=10", "needs the measure action: 'pcr=10'");
	/* unknown option, bad values */
	expect_refused("measure permit_directio=1", "'permit_directio=1'");
	expect_refused("appraise appraise_type=rsa", "unknown appraise_type 'appraise_type=rsa'");
	expect_refused("appraise appraise_flag=foo", "'appraise_flag=foo'");
	expect_refused("measure digest_type=sha256", "'digest_type=sha256'");
	expect_refused("measure template=ima-sigv3", "unknown template 'template=ima-sigv3'");
	expect_refused("template=ima-ng measure", "'template=ima-ng'");
	expect_refused("appraise template=ima-ng", "'template=ima-ng'");
	expect_refused("appraise appraise_algos=sha256,nope", "'appraise_algos=sha256,nope'");
	expect_refused("appraise appraise_algos=sha256,", "'appraise_algos=sha256,'");
	/* missing '=' value */
	expect_refused("measure uid=", "missing value in 'uid='");
	expect_refused("measure func", "missing value in 'func'");
	expect_refused("measure fsname=", "'fsname='");
	expect_refused("measure fsmagic<5", "'fsmagic<5'");
	/* ima_validate_rule */
	expect_refused("measure appraise_type=imasig", "needs the appraise action");
	expect_refused("appraise func=FILE_CHECK appraise_type=imasig|modsig",
		       "not allowed with func=FILE_CHECK: 'appraise_type=imasig|modsig'");
	expect_refused("measure func=KEY_CHECK mask=MAY_READ",
		       "not allowed with func=KEY_CHECK: 'mask=MAY_READ'");
	expect_refused("appraise func=KEY_CHECK", "only goes with measure");
	expect_refused("measure keyrings=.ima", "without func=: 'keyrings=.ima'");
	expect_refused("measure func=KEY_CHECK keyrings=.ima||.evm", "'keyrings=.ima||.evm'");
	expect_refused("measure func=KEY_CHECK obj_type=foo", "'obj_type=foo'");
	expect_refused("appraise func=SETXATTR_CHECK", "needs appraise_algos");
	expect_refused("appraise func=SETXATTR_CHECK appraise_algos=sha256 fowner=0",
		       "'fowner=0'");
	expect_refused("appraise digest_type=verity", "'digest_type=verity'");
	expect_refused("appraise appraise_type=sigv3", "'appraise_type=sigv3'");
	expect_refused("appraise appraise_type=imasig digest_type=verity",
		       "'digest_type=verity'");
	expect_refused("measure func=MODULE_CHECK digest_type=verity", "'digest_type=verity'");
	/* a carriage return is not a separator; the message escapes it */
	expect_refused("measure func=FILE_CHECK\r", "'func=FILE_CHECK\\x0d'");

	expect_accepted("measure uid=4294967294");
	expect_accepted("measure pcr=63");
	expect_accepted("measure pcr=+0");
	expect_accepted("measure fsmagic=+ef53");
	expect_accepted("appraise func=MODULE_CHECK appraise_type=imasig|modsig");
	expect_accepted("\t measure\tfunc=BPRM_CHECK \t mask=MAY_EXEC # a suffixed comment");
	expect_accepted("appraise func=FILE_CHECK appraise_flag=check_blacklist");
	expect_accepted("measure func=FILE_CHECK mask=MAY_APPEND fsname=ext4 gid>5 fgroup<6");
}

/* ---- whole or nothing ---------------------------------------------------- */

static void test_all_or_nothing(void)
{
	static const char bad[] =
		"measure func=BPRM_CHECK\n"
		"measure func=FILE_CHECK uid=0\n"
		"appraise fowner=0\n"
		"measure func=MMAP_CHECK mask=MAY_EXECUTE\n"
		"appraise func=BPRM_CHECK\n";
	struct ima_policy *p = (struct ima_policy *)&p, *q = NULL;
	unsigned int line = 0;
	const char nul[] = "measure\n\0appraise\n";

	CHECK("one bad line loads nothing",
	      ima_policy_parse_lines(bad, strlen(bad), &p, &line) == -EINVAL &&
	      p == NULL && line == 4 &&
	      strstr(uevm_last_error(), "'mask=MAY_EXECUTE'"));
	CHECK("an empty policy is refused",
	      ima_policy_parse_lines("", 0, &p, &line) == -EINVAL && !p && line == 0);
	CHECK("a policy of comments is refused",
	      ima_policy_parse("# x\n\n   # y\n", 12, &p) == -EINVAL && !p &&
	      strstr(uevm_last_error(), "no rules"));
	CHECK("a NUL byte is refused",
	      ima_policy_parse(nul, sizeof(nul) - 1, &p) == -EINVAL && !p &&
	      strstr(uevm_last_error(), "line 2"));
	CHECK("last line without newline",
	      !ima_policy_parse("measure\nappraise", 16, &p) && ima_policy_count(p) == 2);

	/* Appending (later writes to the policy file). */
	if (!ima_policy_parse("dont_measure fsmagic=0x9fa0\n", 28, &q) && p) {
		struct ima_match_input in = { .func = FILE_CHECK, .fsmagic = PROC_MAGIC };

		CHECK("before append: measured", decide(p, in, ALL).action ==
		      (IMA_MEASURE | IMA_APPRAISE));
		CHECK("append", !ima_policy_append(q, p) && ima_policy_count(q) == 3);
		CHECK("after append: earlier dont_measure wins",
		      decide(q, in, ALL).action == IMA_APPRAISE);
	} else {
		CHECK("append setup", 0);
	}
	ima_policy_free(p);
	ima_policy_free(q);
}

static void test_hook_names(void)
{
	CHECK("hook names", !strcmp(ima_hook_name(FILE_CHECK), "FILE_CHECK") &&
	      !strcmp(ima_hook_name(SETXATTR_CHECK), "SETXATTR_CHECK") &&
	      ima_hook_name(MAX_CHECK) == NULL);
	CHECK("hook values are the kernel's", MMAP_CHECK_REQPROT == 3 &&
	      POST_SETATTR == 6 && KEXEC_CMDLINE == 12 && SETXATTR_CHECK == 15 &&
	      MAX_CHECK == 16);
	CHECK("hook aliases", ima_hook_by_name("FILE_MMAP") == MMAP_CHECK &&
	      ima_hook_by_name("PATH_CHECK") == FILE_CHECK &&
	      ima_hook_by_name("POST_SETATTR") == -1);
}

/* A verdict may be shared between callers only without rules on the
 * caller or the file's owner (uevmfs -o fastopen). */
static void test_depends_on_caller(void)
{
	static const struct { const char *text; bool dep; size_t rule; } cases[] = {
		{ "appraise\nmeasure func=BPRM_CHECK mask=MAY_EXEC\n", false, 0 },
		{ "dont_appraise fsmagic=0x9fa0\nappraise func=FILE_CHECK euid=0\n", true, 1 },
		{ "measure func=FILE_CHECK mask=^MAY_READ uid=0\n", true, 0 },
		{ "appraise gid=100\n", true, 0 },
		{ "appraise egid>100\n", true, 0 },
		{ "appraise fowner=0\n", true, 0 },
		{ "appraise fgroup<1000\n", true, 0 },
		{ "measure subj_type=init_t\n", true, 0 },
		{ "appraise fsuuid=6a1c2e4f-0000-4000-8000-000000000000 fsname=ext4\n", false, 0 },
	};
	struct ima_policy *p = NULL;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t rule = 99;
		char label[160];

		snprintf(label, sizeof(label), "depends_on_caller: %.60s", cases[i].text);
		for (char *c = label; *c; c++)
			if (*c == '\n')
				*c = ';';
		p = NULL;
		if (ima_policy_parse(cases[i].text, strlen(cases[i].text), &p)) {
			CHECK(label, 0);
			continue;
		}
		CHECK(label, ima_policy_depends_on_caller(p, &rule) == cases[i].dep &&
		      (!cases[i].dep || rule == cases[i].rule));
		ima_policy_free(p);
	}
	CHECK("depends_on_caller: no policy", !ima_policy_depends_on_caller(NULL, NULL));
	if (!ima_policy_builtin("tcb", &p)) {
		CHECK("depends_on_caller: tcb (uid=0 rules)", ima_policy_depends_on_caller(p, NULL));
		ima_policy_free(p);
	}
}

/* uevmfs -o fastopen checks a file at its first read (FILE_CHECK MAY_READ,
 * and BPRM_CHECK for programs): a rule telling an exec open from a read
 * open at FILE_CHECK is one it cannot serve; BPRM_CHECK and mmap rules it
 * can (or never sees). */
static void test_depends_on_exec_open(void)
{
	static const struct { const char *text; bool dep; size_t rule; } cases[] = {
		{ "appraise func=FILE_CHECK mask=MAY_EXEC\n", true, 0 },
		{ "measure func=FILE_CHECK mask=^MAY_READ\nappraise func=FILE_CHECK mask=^MAY_EXEC\n", true, 1 },
		{ "dont_appraise fsmagic=0x9fa0\nappraise mask=MAY_EXEC\n", true, 1 },
		{ "appraise func=BPRM_CHECK mask=MAY_EXEC\n", false, 0 },
		{ "measure func=MMAP_CHECK mask=MAY_EXEC\n", false, 0 },
		{ "measure func=FILE_CHECK mask=^MAY_READ\nappraise\n", false, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ima_policy *p = NULL;
		size_t rule = 99;
		char label[160];

		snprintf(label, sizeof(label), "depends_on_exec_open: %.60s", cases[i].text);
		for (char *c = label; *c; c++)
			if (*c == '\n')
				*c = ';';
		if (ima_policy_parse(cases[i].text, strlen(cases[i].text), &p)) {
			CHECK(label, 0);
			continue;
		}
		CHECK(label, ima_policy_depends_on_exec_open(p, &rule) == cases[i].dep &&
		      (!cases[i].dep || rule == cases[i].rule));
		ima_policy_free(p);
	}
	CHECK("depends_on_exec_open: no policy", !ima_policy_depends_on_exec_open(NULL, NULL));
}

int main(void)
{
	test_depends_on_caller();
	test_depends_on_exec_open();
	test_hook_names();
	test_documented_examples();
	test_builtins();
	test_first_match();
	test_matrix();
	test_malformed();
	test_all_or_nothing();
	TEST_EXIT();
}
