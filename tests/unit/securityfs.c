// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control tree without FUSE, as a front-end embeds it: nodes, modes,
 * the kernel's rules for evm, evm_xattrs and ima/policy with each kind of
 * caller, the audit records of a policy update, and the measurement files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "integrity.h"
#include "ima.h"
#include "ima_policy.h"
#include "securityfs.h"
#include "test.h"

static char audit[8192];

static void sink(const struct integrity_audit_record *r, void *arg)
{
	size_t n = strlen(audit);

	(void)arg;
	snprintf(audit + n, sizeof(audit) - n, "%s\n", r->text);
}

static struct uevm_securityfs *sfs;
static struct integrity_cred root, user, root_nocap;

/* Read PATH as CRED: the text, or "E<errno>". */
static const char *rd(const char *path, const struct integrity_cred *cred)
{
	static char out[4096];
	size_t len;
	char *buf;
	int ret = uevm_securityfs_read(sfs, path, cred, &buf, &len);

	if (ret) {
		snprintf(out, sizeof(out), "E%d", -ret);
		return out;
	}
	snprintf(out, sizeof(out), "%s", buf);
	free(buf);
	return out;
}

static int wr(const char *path, const struct integrity_cred *cred, const char *s)
{
	return uevm_securityfs_write(sfs, path, cred, s, strlen(s));
}

static void test_nodes(void)
{
	struct uevm_securityfs_info in;
	char names[256] = "";
	int id, evm = uevm_securityfs_resolve(sfs, "integrity/evm/evm");

	CHECK("evm symlink resolves to integrity/evm/evm",
	      evm >= 0 && uevm_securityfs_resolve(sfs, "evm") == evm);
	CHECK("ima/policy resolves through the ima symlink",
	      uevm_securityfs_resolve(sfs, "ima/policy") ==
	      uevm_securityfs_resolve(sfs, "integrity/ima/policy"));
	CHECK("unknown name: ENOENT", uevm_securityfs_resolve(sfs, "ima/nope") == -ENOENT);
	CHECK("a file is not a directory",
	      uevm_securityfs_resolve(sfs, "evm/x") == -ENOTDIR);
	for (id = uevm_securityfs_next(sfs, UEVM_SECURITYFS_ROOT, -1); id >= 0;
	     id = uevm_securityfs_next(sfs, UEVM_SECURITYFS_ROOT, id)) {
		uevm_securityfs_info(sfs, id, &in);
		strcat(names, in.name);
		strcat(names, " ");
	}
	CHECK("root lists integrity, evm, evm_xattrs, ima",
	      !strcmp(names, "integrity evm evm_xattrs ima "));
	uevm_securityfs_info(sfs, uevm_securityfs_lookup(sfs, UEVM_SECURITYFS_ROOT, "ima"), &in);
	CHECK("ima is a symlink to integrity/ima",
	      S_ISLNK(in.mode) && !strcmp(in.target, "integrity/ima"));
	uevm_securityfs_info(sfs, evm, &in);
	CHECK("evm: root:root 0660", in.mode == (S_IFREG | 0660) && in.uid == 0 && in.gid == 0);
	uevm_securityfs_info(sfs, uevm_securityfs_resolve(sfs, "ima/binary_runtime_measurements"), &in);
	CHECK("binary_runtime_measurements: 0440", in.mode == (S_IFREG | 0440));
	uevm_securityfs_info(sfs, uevm_securityfs_resolve(sfs, "ima/policy"), &in);
	CHECK("policy: 0600 before a load", in.mode == (S_IFREG | 0600));
}

static void test_evm(struct integrity_sys *sys)
{
	CHECK("evm reads \"0\" before setup (no newline)", !strcmp(rd("evm", &root), "0"));
	CHECK("evm: a user cannot read it (0660)", !strcmp(rd("evm", &user), "E13"));
	CHECK("evm: a user cannot write it", wr("evm", &user, "1") == -EACCES);
	CHECK("evm: uid 0 without CAP_SYS_ADMIN: EPERM", wr("evm", &root_nocap, "1") == -EPERM);
	CHECK("evm: not a number: EINVAL", wr("evm", &root, "one") == -EINVAL);
	CHECK("evm: unknown bits: EINVAL", wr("evm", &root, "0x10") == -EINVAL);
	CHECK("evm: zero: EINVAL", wr("evm", &root, "0") == -EINVAL);
	CHECK("evm: \"1\\n\" by CAP_SYS_ADMIN loads the HMAC key", wr("evm", &root, "1\n") == 0);
	CHECK("evm reads \"1\" (SETUP_COMPLETE hidden)", !strcmp(rd("evm", &root), "1"));
	CHECK("integrity_sys sees it", integrity_sys_evm_read(sys) == EVM_INIT_HMAC);
	CHECK("evm: written once (EPERM after setup)", wr("evm", &root, "2") == -EPERM);
}

static void test_evm_xattrs(void)
{
	CHECK("evm_xattrs lists the protected xattrs in order",
	      !strcmp(rd("evm_xattrs", &root),
		      "security.selinux\nsecurity.SMACK64\nsecurity.SMACK64EXEC\n"
		      "security.SMACK64TRANSMUTE\nsecurity.SMACK64MMAP\nsecurity.apparmor\n"
		      "security.ima\nsecurity.capability\nsecurity.uevmtest\n"));
	CHECK("evm_xattrs: locked, writes EPERM", wr("evm_xattrs", &root, "security.x\n") == -EPERM);
	CHECK("evm_xattrs: a user cannot read it (0440)", !strcmp(rd("evm_xattrs", &user), "E13"));
}

static void test_policy(struct integrity_sys *sys, const struct ima_policy *initial)
{
	struct uevm_securityfs_file *f1, *f2;
	struct uevm_securityfs_info in;
	int id = uevm_securityfs_resolve(sfs, "ima/policy");

	CHECK("policy read back as the kernel shows it",
	      !strcmp(rd("ima/policy", &root), "measure func=BPRM_CHECK mask=MAY_EXEC \n"));
	CHECK("policy: a user cannot read it (0600)", !strcmp(rd("ima/policy", &user), "E13"));
	CHECK("policy: uid 0 without CAP_SYS_ADMIN cannot read it",
	      !strcmp(rd("ima/policy", &root_nocap), "E1"));
	CHECK("policy: O_RDWR refused (EACCES)",
	      uevm_securityfs_open(sfs, id, &root, O_RDWR, &f1) == -EACCES);

	CHECK("policy: open for writing", uevm_securityfs_open(sfs, id, &root, O_WRONLY, &f1) == 0);
	CHECK("policy: a second writer: EBUSY",
	      uevm_securityfs_open(sfs, id, &root, O_WRONLY, &f2) == -EBUSY);
	audit[0] = '\0';
	CHECK("policy: a bad rule fails its write (EINVAL)",
	      uevm_securityfs_file_write(f1, "measure func=BOGUS\n", 19, 0) == -EINVAL);
	CHECK("  with the line and token in the reason",
	      strstr(uevm_last_error(), "line 1") && strstr(uevm_last_error(), "BOGUS"));
	CHECK("policy: the close reports that nothing was loaded",
	      uevm_securityfs_file_flush(f1) == -EINVAL);
	uevm_securityfs_file_release(f1);
	CHECK("  audited op=policy_update cause=invalid-policy, then cause=failed res=0",
	      strstr(audit, "op=policy_update cause=invalid-policy") &&
	      strstr(audit, "op=policy_update cause=failed") && strstr(audit, " res=0"));
	CHECK("  the policy in force is unchanged", integrity_sys_policy(sys) == initial);
	CHECK("policy: a close before any write ends nothing (a shell's dup)",
	      uevm_securityfs_open(sfs, id, &root, O_WRONLY, &f1) == 0 &&
	      uevm_securityfs_file_flush(f1) == 0);
	audit[0] = '\0';
	uevm_securityfs_file_release(f1);
	CHECK("policy: an empty write session loads nothing, audited as failed",
	      strstr(audit, "op=policy_update cause=failed") &&
	      integrity_sys_policy(sys) == initial);

	CHECK("policy: open again after a failure", uevm_securityfs_open(sfs, id, &root, O_WRONLY, &f1) == 0);
	CHECK("policy: rules in several writes",
	      uevm_securityfs_file_write(f1, "# comment only\n", 15, 0) == 15 &&
	      uevm_securityfs_file_write(f1, "measure func=FILE_CHECK\n", 24, 0) == 24 &&
	      uevm_securityfs_file_write(f1, "appraise fowner=0\n", 18, 0) == 18);
	audit[0] = '\0';
	CHECK("policy: another process's close (a child that inherited the fd) installs nothing",
	      uevm_securityfs_file_flush_by(f1, root.tgid + 1) == 0 &&
	      integrity_sys_policy(sys) == initial && !audit[0]);
	CHECK("  the session goes on: a later write is taken",
	      uevm_securityfs_file_write(f1, "\n", 1, 0) == 1);
	CHECK("policy: the opener's close installs it", uevm_securityfs_file_flush_by(f1, root.tgid) == 0);
	uevm_securityfs_file_release(f1);
	CHECK("  audited op=policy_update cause=completed res=1",
	      strstr(audit, "op=policy_update cause=completed") && strstr(audit, " res=1"));
	CHECK("  the new policy is in force",
	      integrity_sys_policy(sys) != initial && ima_policy_count(integrity_sys_policy(sys)) == 2);
	CHECK("  and reads back", !strcmp(rd("ima/policy", &root),
					  "measure func=FILE_CHECK \nappraise fowner=0 \n"));
	CHECK("policy: loaded once: no more writers (EACCES)",
	      uevm_securityfs_open(sfs, id, &root, O_WRONLY, &f1) == -EACCES);
	uevm_securityfs_info(sfs, id, &in);
	CHECK("policy: mode 0400 after the load", in.mode == (S_IFREG | 0400));
}

static int entry_ok(const struct ima_template_entry *e, size_t index,
		    bool digest_ok, void *arg)
{
	(void)e, (void)index;
	if (!digest_ok)
		(*(int *)arg)++;
	return 0;
}

static void test_measurements(struct ima_measurements *ml)
{
	struct uevm_securityfs_file *f;
	char *buf;
	size_t len;
	long n = -1;
	int bad = 0;

	CHECK("runtime_measurements_count: \"1\\n\" (boot_aggregate)",
	      !strcmp(rd("ima/runtime_measurements_count", &root), "1\n"));
	ima_ml_add_buffer(ml, "test-event", "abc", 3, NULL, -1);
	CHECK("count follows the list", !strcmp(rd("ima/runtime_measurements_count", &root), "2\n"));
	CHECK("violations: \"0\\n\"", !strcmp(rd("ima/violations", &root), "0\n"));
	CHECK("ascii list: two lines on PCR 10, boot_aggregate first",
	      !strncmp(rd("ima/ascii_runtime_measurements", &root), "10 ", 3) &&
	      strstr(rd("ima/ascii_runtime_measurements", &root), " boot_aggregate\n10 "));
	if (uevm_securityfs_read(sfs, "ima/binary_runtime_measurements", &root, &buf, &len) == 0) {
		n = ima_ml_parse_binary((const uint8_t *)buf, len, UEVM_HASH_SHA1, entry_ok, &bad);
		free(buf);
	}
	CHECK("binary list: two entries that parse", n == 2);
	if (uevm_securityfs_read(sfs, "ima/binary_runtime_measurements_sha256", &root, &buf, &len) == 0) {
		n = ima_ml_parse_binary((const uint8_t *)buf, len, UEVM_HASH_SHA256, entry_ok, &bad);
		free(buf);
	}
	CHECK("binary list of the sha256 bank: two entries", n == 2);
	CHECK("  every template digest matches its data", bad == 0);
	CHECK("lists: a user cannot read them (0440)",
	      !strcmp(rd("ima/ascii_runtime_measurements", &user), "E13"));
	CHECK("lists: not writable",
	      uevm_securityfs_open(sfs, uevm_securityfs_resolve(sfs, "ima/violations"),
				   &root, O_WRONLY, &f) == -EACCES);
	CHECK("reads at offsets",
	      uevm_securityfs_open(sfs, uevm_securityfs_resolve(sfs, "ima/violations"),
				   &root, O_RDONLY, &f) == 0 &&
	      uevm_securityfs_file_read(f, audit, 10, 1) == 1 &&
	      audit[0] == '\n' && uevm_securityfs_file_read(f, audit, 10, 2) == 0);
	uevm_securityfs_file_release(f);
}

/* Read F from OFF to its end (as cat would, in small reads). */
static size_t rd_all(struct uevm_securityfs_file *f, off_t off, char *out, size_t max)
{
	size_t got = 0;
	ssize_t n;

	while (got < max && (n = uevm_securityfs_file_read(f, out + got,
				got + 7 < max ? 7 : max - got, off + (off_t)got)) > 0)
		got += (size_t)n;
	return got;
}

/* The measurement files read as a seq_file: each read sees the list as it
 * is then, on a file opened before the entries were added. */
static void test_live(struct ima_measurements *ml)
{
	static char a[65536], b[65536];
	struct uevm_securityfs_file *fa, *fb, *fc;
	size_t la, lb, end, lines = 0;
	char cnt[16];
	char *fresh;
	size_t flen;
	int ok;

	if (uevm_securityfs_open(sfs, uevm_securityfs_resolve(sfs, "ima/ascii_runtime_measurements"),
				 &root, O_RDONLY, &fa) ||
	    uevm_securityfs_open(sfs, uevm_securityfs_resolve(sfs, "ima/binary_runtime_measurements_sha256"),
				 &root, O_RDONLY, &fb) ||
	    uevm_securityfs_open(sfs, uevm_securityfs_resolve(sfs, "ima/runtime_measurements_count"),
				 &root, O_RDONLY, &fc)) {
		CHECK("live: the measurement files open", 0);
		return;
	}
	la = rd_all(fa, 0, a, sizeof(a));
	lb = rd_all(fb, 0, b, sizeof(b));
	end = la;
	CHECK("live: a read at the end returns 0", uevm_securityfs_file_read(fa, a, 10, (off_t)la) == 0);
	CHECK("live: the count read before",
	      uevm_securityfs_file_read(fc, cnt, 10, 0) == 2 && !memcmp(cnt, "2\n", 2));
	ima_ml_add_buffer(ml, "live-1", "x", 1, NULL, -1);
	ima_ml_add_buffer(ml, "live-2", "y", 1, NULL, -1);
	CHECK("live: the same open count file reads the new count at offset 0",
	      uevm_securityfs_file_read(fc, cnt, 10, 0) == 2 && !memcmp(cnt, "4\n", 2));
	la = rd_all(fa, (off_t)end, a + end, sizeof(a) - end - 1);
	a[end + la] = '\0';
	for (size_t i = end; i < end + la; i++)
		lines += a[i] == '\n';
	CHECK("live: reading on from the old end returns exactly the two new lines",
	      lines == 2 && a[end + la - 1] == '\n' && !strncmp(a + end, "10 ", 3) &&
	      strstr(a + end, " live-1 78\n10 ") && strstr(a + end, " live-2 79\n"));
	ok = uevm_securityfs_read(sfs, "ima/ascii_runtime_measurements", &root, &fresh, &flen) == 0;
	CHECK("live: old prefix + appended bytes == a fresh open's content",
	      ok && flen == end + la && !memcmp(fresh, a, flen));
	if (ok)
		free(fresh);
	la = rd_all(fa, 0, a, sizeof(a));
	ok = uevm_securityfs_read(sfs, "ima/ascii_runtime_measurements", &root, &fresh, &flen) == 0;
	CHECK("live: read again from 0 on the same file: a fresh open's content",
	      ok && flen == la && !memcmp(fresh, a, flen));
	if (ok)
		free(fresh);
	end = lb;
	lb = rd_all(fb, 0, b, sizeof(b));
	ok = uevm_securityfs_read(sfs, "ima/binary_runtime_measurements_sha256", &root, &fresh, &flen) == 0;
	CHECK("live: binary sha256 list on the old file: two entries more, as a fresh open",
	      ok && lb > end && flen == lb && !memcmp(fresh, b, flen) &&
	      ima_ml_parse_binary((const uint8_t *)b, lb, UEVM_HASH_SHA256, entry_ok, &(int){ 0 }) == 4);
	if (ok)
		free(fresh);
	uevm_securityfs_file_release(fa);
	uevm_securityfs_file_release(fb);
	uevm_securityfs_file_release(fc);
}

int main(void)
{
	static const char *const extra[] = { "security.uevmtest", NULL };
	struct integrity_sys_config scfg = { 0 };
	struct integrity_sys *sys;
	struct ima_measurements *ml;
	struct ima_ml_config mlcfg;
	struct ima_policy *initial;
	struct uevm_config cfg;
	struct uevm_key *key;
	struct uevm_ctx *ctx;
	uint8_t raw[32];

	for (int i = 0; i < 32; i++)
		raw[i] = (uint8_t)(3 * i + 5);
	uevm_config_init(&cfg);
	cfg.extra_xattrs = extra;
	scfg.audit.sink = sink;
	if (uevm_key_from_bytes(raw, sizeof(raw), &key) || uevm_ctx_new(&cfg, key, &ctx) ||
	    integrity_sys_new(&scfg, ctx, &sys) || uevm_securityfs_new(sys, &sfs))
		return 1;
	ima_ml_config_init(&mlcfg);
	if (ima_ml_open(&mlcfg, &ml) ||
	    ima_policy_parse("measure func=BPRM_CHECK mask=MAY_EXEC\n", 38, &initial))
		return 1;
	integrity_sys_set_measurements(sys, ml);
	integrity_sys_set_policy(sys, initial);

	memset(&root, 0, sizeof(root));
	root.cap_effective = ~0ULL;
	root.auid = root.ses = (uint32_t)-1;
	snprintf(root.comm, sizeof(root.comm), "sfstest");
	root.tgid = getpid();	/* the opener's process, for closes */
	user = root;
	user.uid = user.euid = user.gid = user.egid = 1000;
	user.cap_effective = 0;
	root_nocap = root;
	root_nocap.cap_effective = 0;

	test_nodes();
	test_evm(sys);
	test_evm_xattrs();
	test_policy(sys, initial);
	test_measurements(ml);
	test_live(ml);

	/* The tree owns the policy it loaded; the system goes first. */
	integrity_sys_free(sys);
	uevm_securityfs_free(sfs);
	ima_policy_free(initial);
	ima_ml_close(ml);
	TEST_EXIT();
}
