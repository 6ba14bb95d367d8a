// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Every hook rule of the integrity layer on real files with real security.*
 * xattrs: file status x operation -> allowed or refused, and the audit
 * record emitted.  Needs root (security.* xattrs, chown).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "integrity.h"
#include "ima.h"
#include "ima_policy.h"
#include "test.h"

static char dir[] = "/var/tmp/uevm-hooks.XXXXXX";
static struct integrity_sys *sys;
static char last_audit[2048];
static int audit_count;

static void sink(const struct integrity_audit_record *r, void *arg)
{
	(void)arg;
	snprintf(last_audit, sizeof(last_audit), "%s", r->text);
	audit_count++;
}

static struct integrity_cred root_cred, user_cred;

/* A labelled regular file NAME with CONTENT. */
static void make_file(const char *name, const char *content, bool label)
{
	char path[256];
	struct uevm_file f;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0 || write(fd, content, strlen(content)) < 0)
		abort();
	close(fd);
	if (!label)
		return;
	if (uevm_file_openat(&f, AT_FDCWD, path, path) ||
	    uevm_label_file(integrity_sys_ctx(sys), &f))
		abort();
	uevm_file_close(&f);
}

static void open_obj(const char *name, struct uevm_file *f)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (uevm_file_openat(f, AT_FDCWD, path, path))
		abort();
}

static enum integrity_status verify(const char *name)
{
	struct uevm_file f;
	struct uevm_verdict v;

	open_obj(name, &f);
	if (uevm_verify_file(integrity_sys_ctx(sys), &f, &v))
		v.status = INTEGRITY_UNKNOWN;
	uevm_file_close(&f);
	return v.status;
}

static void xset(const char *name, const char *xname, const void *val, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (setxattr(path, xname, val, len, 0))
		abort();
}

/* Run a setxattr hook as CRED on NAME; returns the hook's answer. */
static int try_setxattr(const char *name, const struct integrity_cred *cred,
			const char *xname, const void *val, size_t len)
{
	struct uevm_file f;
	struct integrity_event ev = { 0 };
	int r;

	open_obj(name, &f);
	ev.file = &f;
	ev.cred = cred;
	ev.filename = name;
	ev.xattr_name = xname;
	ev.xattr_value = val;
	ev.xattr_len = len;
	r = val ? integrity_inode_setxattr(sys, &ev) : integrity_inode_removexattr(sys, &ev);
	uevm_file_close(&f);
	return r;
}

static int try_setattr(const char *name, unsigned int valid, mode_t mode, uid_t uid)
{
	struct uevm_file f;
	struct integrity_event ev = { 0 };
	int r;

	open_obj(name, &f);
	ev.file = &f;
	ev.cred = &root_cred;
	ev.filename = name;
	ev.ia_valid = valid;
	ev.ia_mode = mode;
	ev.ia_uid = uid;
	ev.ia_gid = f.st.st_gid;
	r = integrity_inode_setattr(sys, &ev);
	uevm_file_close(&f);
	return r;
}

static int try_open(const char *name, int mask)
{
	struct uevm_file f;
	struct integrity_event ev = { 0 };
	int r;

	open_obj(name, &f);
	ev.file = &f;
	ev.cred = &root_cred;
	ev.filename = name;
	ev.mask = mask;
	ev.func = FILE_CHECK;
	r = integrity_file_check(sys, &ev);
	uevm_file_close(&f);
	return r;
}

static bool audit_has(const char *needle)
{
	return strstr(last_audit, needle) != NULL;
}

static void states(void)
{
	static const uint8_t hmac_type[21] = { EVM_XATTR_HMAC };

	make_file("pass", "good content\n", true);
	make_file("tampered", "good content\n", true);
	xset("tampered", "security.selinux", "system_u:object_r:evil_t:s0", 27);
	make_file("nolabel", "x\n", true);
	{
		char p[256];

		snprintf(p, sizeof(p), "%s/nolabel", dir);
		removexattr(p, "security.evm");
	}
	make_file("noxattrs", "y\n", false);
	(void)hmac_type;
}

static void test_setxattr_rules(void)
{
	static const uint8_t hmac_val[21] = { EVM_XATTR_HMAC, 1, 2, 3 };
	static const uint8_t sig_val[12] = { EVM_IMA_XATTR_DIGSIG, 2, 4, 0, 0, 0, 1, 0, 3, 9, 9, 9 };
	const char *lbl = "system_u:object_r:etc_t:s0";

	states();
	CHECK("setxattr security.selinux on PASS: allowed",
	      try_setxattr("pass", &root_cred, "security.selinux", lbl, strlen(lbl)) == 0);
	audit_count = 0;
	CHECK("setxattr security.selinux on FAIL: EPERM",
	      try_setxattr("tampered", &root_cred, "security.selinux", lbl, strlen(lbl)) == -EPERM);
	CHECK("  audited op=appraise_metadata cause=fail res=0",
	      audit_count == 1 && audit_has("op=appraise_metadata cause=fail") &&
	      audit_has(" res=0") && audit_has("name=\"tampered\""));
	CHECK("removexattr security.ima on FAIL: EPERM",
	      try_setxattr("tampered", &root_cred, "security.ima", NULL, 0) == -EPERM);
	CHECK("setxattr security.capability on NOLABEL: EPERM",
	      try_setxattr("nolabel", &root_cred, "security.capability", "\1\0\0\2", 4) == -EPERM);
	CHECK("  audited cause=no_label", audit_has("cause=no_label"));
	CHECK("setxattr security.selinux on NOXATTRS (not new): EPERM",
	      try_setxattr("noxattrs", &root_cred, "security.selinux", lbl, strlen(lbl)) == -EPERM);
	CHECK("  audited op=update_metadata cause=no_xattrs",
	      audit_has("op=update_metadata cause=no_xattrs"));
	CHECK("setxattr user.comment on FAIL: allowed (not protected)",
	      try_setxattr("tampered", &root_cred, "user.comment", "hi", 2) == 0);
	CHECK("security.evm HMAC value by root: EPERM (only signatures)",
	      try_setxattr("pass", &root_cred, "security.evm", hmac_val, sizeof(hmac_val)) == -EPERM);
	CHECK("  audited cause=invalid-xattr-type", audit_has("cause=invalid-xattr-type"));
	CHECK("security.evm signature by a user without CAP_SYS_ADMIN: EPERM",
	      try_setxattr("pass", &user_cred, "security.evm", sig_val, sizeof(sig_val)) == -EPERM);
	CHECK("  audited cause=no-CAP_SYS_ADMIN", audit_has("cause=no-CAP_SYS_ADMIN"));
	CHECK("remove security.evm by a user: EPERM",
	      try_setxattr("pass", &user_cred, "security.evm", NULL, 0) == -EPERM);
	CHECK("security.evm signature by CAP_SYS_ADMIN on PASS: allowed",
	      try_setxattr("pass", &root_cred, "security.evm", sig_val, sizeof(sig_val)) == 0);
	CHECK("security.evm empty value: EINVAL",
	      try_setxattr("pass", &root_cred, "security.evm", sig_val, 0) == -EINVAL);
	CHECK("security.ima by a user: EPERM (IMA protects it)",
	      try_setxattr("pass", &user_cred, "security.ima", "\4\4", 2) == -EPERM);
	CHECK("security.ima with type 0: EINVAL",
	      try_setxattr("pass", &root_cred, "security.ima", "\0\4", 2) == -EINVAL);
}

static void test_setattr_rules(void)
{
	states();
	CHECK("chmod on PASS: allowed", try_setattr("pass", ATTR_MODE, 0600, 0) == 0);
	CHECK("chown on FAIL: EPERM", try_setattr("tampered", ATTR_UID, 0, 1000) == -EPERM);
	CHECK("  audited op=appraise_metadata cause=fail", audit_has("op=appraise_metadata cause=fail"));
	CHECK("chmod on NOLABEL: EPERM", try_setattr("nolabel", ATTR_MODE, 0600, 0) == -EPERM);
	CHECK("chmod on NOXATTRS: allowed", try_setattr("noxattrs", ATTR_MODE, 0600, 0) == 0);
	CHECK("truncate (size only) on FAIL: allowed by EVM",
	      try_setattr("tampered", ATTR_SIZE, 0, 0) == 0);
}

static void test_modes(void)
{
	const char *lbl = "x";

	states();
	integrity_sys_set_mode(sys, INTEGRITY_MODE_LOG);
	audit_count = 0;
	CHECK("log mode: FAIL setxattr allowed", try_setxattr("tampered", &root_cred,
	      "security.selinux", lbl, 1) == 0);
	CHECK("log mode: but audited with res=0", audit_count == 1 && audit_has("res=0"));
	integrity_sys_set_mode(sys, INTEGRITY_MODE_FIX);
	CHECK("fix mode: FAIL chown allowed", try_setattr("tampered", ATTR_UID, 0, 0) == 0);
	integrity_sys_set_mode(sys, INTEGRITY_MODE_OFF);
	audit_count = 0;
	CHECK("off mode: nothing checked, nothing audited",
	      try_setattr("tampered", ATTR_UID, 0, 0) == 0 && audit_count == 0);
	integrity_sys_set_mode(sys, INTEGRITY_MODE_ENFORCE);
}

static void post(const char *name, const char *xname, const void *val, size_t len,
		 unsigned int valid)
{
	struct uevm_file f;
	struct integrity_event ev = { 0 };

	open_obj(name, &f);
	ev.file = &f;
	ev.cred = &root_cred;
	ev.filename = name;
	ev.xattr_name = xname;
	ev.xattr_value = val;
	ev.xattr_len = len;
	ev.ia_valid = valid;
	if (valid)
		integrity_inode_post_setattr(sys, &ev);
	else if (val)
		integrity_inode_post_setxattr(sys, &ev);
	else
		integrity_inode_post_removexattr(sys, &ev);
	uevm_file_close(&f);
}

static void test_post_hooks(void)
{
	char p[256];
	const char *lbl = "system_u:object_r:bin_t:s0";

	states();
	snprintf(p, sizeof(p), "%s/pass", dir);
	/* A legitimate change: allowed, performed, then the post hook. */
	CHECK("pre: setxattr on PASS allowed",
	      try_setxattr("pass", &root_cred, "security.selinux", lbl, strlen(lbl)) == 0);
	setxattr(p, "security.selinux", lbl, strlen(lbl), 0);
	CHECK("without the post hook the file would fail", verify("pass") == INTEGRITY_FAIL);
	post("pass", "security.selinux", lbl, strlen(lbl), 0);
	CHECK("post_setxattr: file PASS again", verify("pass") == INTEGRITY_PASS);
	chmod(p, 0640);
	post("pass", NULL, NULL, 0, ATTR_MODE);
	CHECK("post_setattr after chmod: PASS", verify("pass") == INTEGRITY_PASS);
	removexattr(p, "security.selinux");
	post("pass", "security.selinux", NULL, 0, 0);
	CHECK("post_removexattr: PASS", verify("pass") == INTEGRITY_PASS);
	{
		struct uevm_file f;
		struct integrity_event ev = { 0 };
		char q[256];
		int fd;

		snprintf(q, sizeof(q), "%s/new", dir);
		unlink(q);
		fd = open(q, O_CREAT | O_WRONLY, 0644);
		close(fd);
		open_obj("new", &f);
		ev.file = &f;
		ev.cred = &root_cred;
		ev.filename = "new";
		CHECK("post_init on a new file", integrity_inode_post_init(sys, &ev) == 0);
		CHECK("new file without protected xattrs may get its first label",
		      integrity_inode_setxattr(sys, &(struct integrity_event){
			      .file = &f, .cred = &root_cred, .filename = "new",
			      .xattr_name = "security.selinux", .xattr_value = "a",
			      .xattr_len = 1 }) == 0);
		uevm_file_close(&f);
	}
}

static int note_pcr(const struct ima_template_entry *e, void *arg)
{
	*(int *)arg = ima_entry_pcr(e);
	return 0;
}

static int last_entry_pcr(struct ima_measurements *ml)
{
	int pcr = -1;

	ima_ml_for_each(ml, note_pcr, &pcr);
	return pcr;
}

static void test_file_check(struct ima_measurements *ml)
{
	struct ima_policy *pol;
	static const char text[] = "measure func=FILE_CHECK\nappraise func=FILE_CHECK fowner=0\n";
	char p[256];
	size_t before;
	int fd;

	CHECK("policy parses", ima_policy_parse(text, strlen(text), &pol) == 0);
	integrity_sys_set_policy(sys, pol);
	states();
	make_file("content", "original\n", true);
	before = ima_ml_count(ml);
	CHECK("open PASS file: allowed", try_open("content", MAY_READ) == 0);
	CHECK("  and measured", ima_ml_count(ml) == before + 1);
	CHECK("second open: allowed, not measured again",
	      try_open("content", MAY_READ) == 0 && ima_ml_count(ml) == before + 1);
	snprintf(p, sizeof(p), "%s/content", dir);
	fd = open(p, O_WRONLY | O_APPEND);
	if (fd < 0 || write(fd, "evil\n", 5) != 5)
		abort();
	close(fd);
	audit_count = 0;
	CHECK("open after offline append: EACCES", try_open("content", MAY_READ) == -EACCES);
	CHECK("  audited op=appraise_data cause=invalid-hash",
	      audit_has("op=appraise_data cause=invalid-hash") && audit_has("res=0"));
	CHECK("  and the changed content is measured again", ima_ml_count(ml) == before + 2);
	CHECK("open tampered-metadata file: EACCES", try_open("tampered", MAY_READ) == -EACCES);
	CHECK("  cause=invalid-HMAC", audit_has("cause=invalid-HMAC"));
	CHECK("open file without security.ima: EACCES", try_open("noxattrs", MAY_READ) == -EACCES);
	CHECK("  cause=missing-hash", audit_has("cause=missing-hash"));
	CHECK("open file without security.evm: EACCES", try_open("nolabel", MAY_READ) == -EACCES);
	CHECK("  cause=missing-HMAC", audit_has("cause=missing-HMAC"));

	integrity_sys_set_mode(sys, INTEGRITY_MODE_LOG);
	CHECK("log mode: tampered content opens", try_open("content", MAY_READ) == 0);
	integrity_sys_set_mode(sys, INTEGRITY_MODE_FIX);
	CHECK("fix mode: tampered content opens", try_open("content", MAY_READ) == 0);
	CHECK("  and is relabelled (verify PASS)", verify("content") == INTEGRITY_PASS);
	integrity_sys_set_mode(sys, INTEGRITY_MODE_ENFORCE);

	/* A legitimate edit: open for write (appraised PASS), write, last close. */
	make_file("edit", "v1\n", true);
	CHECK("open PASS file for write: allowed", try_open("edit", MAY_WRITE) == 0);
	snprintf(p, sizeof(p), "%s/edit", dir);
	fd = open(p, O_WRONLY | O_APPEND);
	if (fd < 0 || write(fd, "v2\n", 3) != 3)
		abort();
	close(fd);
	{
		struct uevm_file f;
		struct integrity_event ev = { 0 };

		open_obj("edit", &f);
		ev.file = &f;
		ev.cred = &root_cred;
		ev.filename = "edit";
		ev.mask = MAY_WRITE;
		ev.written = true;
		integrity_file_free(sys, &ev);
		uevm_file_close(&f);
	}
	CHECK("file_free rehashes a PASS file: PASS after the edit", verify("edit") == INTEGRITY_PASS);
	CHECK("  and it opens", try_open("edit", MAY_READ) == 0);

	/* ima_rdwr_violation_check: measured for a reader while a writer has
	 * it open: a violation entry, counted, audited invalid_pcr. */
	{
		unsigned long v0 = ima_ml_violations(ml);
		size_t n0 = ima_ml_count(ml);
		struct uevm_file f;
		struct integrity_event ev = { 0 };

		CHECK("violation: the writer's open is allowed", try_open("edit", MAY_WRITE) == 0);
		CHECK("  the writer's own open is no violation", ima_ml_violations(ml) == v0);
		audit_count = 0;
		CHECK("  a reader's open meanwhile is allowed", try_open("edit", MAY_READ) == 0);
		CHECK("  and counted as one violation (open_writers)",
		      ima_ml_violations(ml) == v0 + 1 && ima_ml_count(ml) == n0 + 1);
		CHECK("  in the list's PCR (11), as the kernel's in its IMA PCR",
		      last_entry_pcr(ml) == 11);
		CHECK("  audited op=invalid_pcr cause=open_writers res=1",
		      audit_has("op=invalid_pcr cause=open_writers") && audit_has("res=1"));
		audit_count = 0;
		CHECK("  more readers' opens while that writer stays: no more violations",
		      try_open("edit", MAY_READ) == 0 && try_open("edit", MAY_READ) == 0 &&
		      ima_ml_violations(ml) == v0 + 1 && ima_ml_count(ml) == n0 + 1 &&
		      audit_count == 0);
		open_obj("edit", &f);
		ev.file = &f;
		ev.cred = &root_cred;
		ev.filename = "edit";
		ev.mask = MAY_WRITE;
		integrity_file_free(sys, &ev);
		uevm_file_close(&f);
		CHECK("  after the writer's close a reader's open is no violation",
		      try_open("edit", MAY_READ) == 0 && ima_ml_violations(ml) == v0 + 1);

		/* ToMToU: a write open while that measured reader is open. */
		open_obj("edit", &f);
		memset(&ev, 0, sizeof(ev));
		ev.file = &f;
		ev.cred = &root_cred;
		ev.filename = "edit";
		ev.mask = MAY_WRITE;
		ev.func = FILE_CHECK;
		ev.readers = 1;
		audit_count = 0;
		CHECK("ToMToU: a write open while a measured reader is open is allowed",
		      integrity_file_check(sys, &ev) == 0);
		CHECK("  and counted as a violation",
		      ima_ml_violations(ml) == v0 + 2);
		CHECK("  audited op=invalid_pcr cause=ToMToU",
		      audit_has("op=invalid_pcr cause=ToMToU"));
		integrity_file_free(sys, &ev);
		CHECK("  reported once per reader measurement",
		      integrity_file_check(sys, &ev) == 0 && ima_ml_violations(ml) == v0 + 2);
		integrity_file_free(sys, &ev);
		ev.readers = 0;
		CHECK("  no violation without readers",
		      integrity_file_check(sys, &ev) == 0 && ima_ml_violations(ml) == v0 + 2);
		CHECK("open_writers again once every writer closed: a new writer, then a reader",
		      try_open("edit", MAY_READ) == 0 && ima_ml_violations(ml) == v0 + 3);
		integrity_file_free(sys, &ev);
		uevm_file_close(&f);
	}

	/* A failing file written through the hooks stays failing. */
	make_file("bad", "v1\n", true);
	snprintf(p, sizeof(p), "%s/bad", dir);
	fd = open(p, O_WRONLY | O_APPEND);
	if (fd < 0 || write(fd, "offline\n", 8) != 8)
		abort();
	close(fd);
	CHECK("open tampered file for write: EACCES", try_open("bad", MAY_WRITE) == -EACCES);
	{
		struct uevm_file f;
		struct integrity_event ev = { 0 };

		open_obj("bad", &f);
		ev.file = &f;
		ev.cred = &root_cred;
		ev.filename = "bad";
		ev.mask = MAY_WRITE;
		ev.written = true;
		integrity_file_free(sys, &ev);
		uevm_file_close(&f);
	}
	CHECK("file_free does not launder a failing file", verify("bad") == INTEGRITY_FAIL);
	integrity_sys_set_policy(sys, NULL);
	ima_policy_free(pol);
}

/* Records also go to syslog: a datagram socket standing in for /dev/log. */
static void test_syslog(struct uevm_ctx *ctx2)
{
	struct integrity_sys_config scfg = { 0 };
	struct integrity_sys *s2;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { 2, 0 };
	char buf[2048];
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/log.sock", dir);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		abort();
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	scfg.audit.to_syslog = true;
	scfg.audit.syslog_socket = sa.sun_path;
	if (integrity_sys_new(&scfg, ctx2, &s2))
		abort();
	integrity_sys_evm_write(s2, &root_cred, EVM_INIT_HMAC);
	{
		struct integrity_sys *saved = sys;

		sys = s2;
		states();
		CHECK("syslog: chown of FAIL file refused",
		      try_setattr("tampered", ATTR_UID, 0, 7) == -EPERM);
		sys = saved;
	}
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK("syslog: record received with priority authpriv.notice",
	      n > 0 && !strncmp(buf, "<85>", 4));
	CHECK("syslog: record carries op, cause, name, ino and res",
	      strstr(buf, "op=appraise_metadata cause=fail") && strstr(buf, "name=\"tampered\"") &&
	      strstr(buf, " ino=") && strstr(buf, " res=0"));
	integrity_sys_free(s2);
	close(fd);
}

static void test_evm_securityfs(void)
{
	CHECK("evm reads 1 after init", integrity_sys_evm_read(sys) == EVM_INIT_HMAC);
	CHECK("evm writable once: second write EPERM",
	      integrity_sys_evm_write(sys, &root_cred, EVM_INIT_X509) == -EPERM);
}

/* Without a key: SETUP_COMPLETE written by hand locks the bits as they
 * are (echo 0x80000004 > evm, as the kernel takes it). */
static void test_evm_setup_complete(void)
{
	struct integrity_sys_config scfg = { 0 };
	struct integrity_sys *s;

	if (integrity_sys_new(&scfg, NULL, &s)) {
		CHECK("a keyless integrity_sys is created", false);
		return;
	}
	CHECK("evm: unknown bit refused (EINVAL)",
	      integrity_sys_evm_write(s, &root_cred, 0x10) == -EINVAL);
	CHECK("evm: 0x80000004 accepted without a key",
	      integrity_sys_evm_write(s, &root_cred,
				      EVM_SETUP_COMPLETE | EVM_ALLOW_METADATA_WRITES) == 0);
	CHECK("evm: reads 4 (SETUP_COMPLETE is not shown)",
	      integrity_sys_evm_read(s) == EVM_ALLOW_METADATA_WRITES);
	CHECK("evm: locked after SETUP_COMPLETE (EPERM)",
	      integrity_sys_evm_write(s, &root_cred, EVM_INIT_X509) == -EPERM);
	integrity_sys_free(s);
}

int main(void)
{
	struct uevm_config cfg;
	struct uevm_key *key;
	struct uevm_ctx *ctx;
	struct integrity_sys_config scfg = { 0 };
	struct ima_ml_config mlcfg;
	struct ima_measurements *ml;
	uint8_t raw[32];

	if (geteuid() != 0) {
		printf("FAIL: hooks: needs root\n");
		return 1;
	}
	if (!mkdtemp(dir))
		return 1;
	for (int i = 0; i < 32; i++)
		raw[i] = (uint8_t)(i * 7 + 1);
	uevm_config_init(&cfg);
	if (uevm_key_from_bytes(raw, sizeof(raw), &key) || uevm_ctx_new(&cfg, key, &ctx))
		return 1;
	scfg.audit.sink = sink;
	if (integrity_sys_new(&scfg, ctx, &sys))
		return 1;
	integrity_cred_self(&root_cred);
	root_cred.cap_effective = ~0ULL;
	snprintf(root_cred.comm, sizeof(root_cred.comm), "hooktest");
	user_cred = root_cred;
	user_cred.uid = user_cred.euid = 1000;
	user_cred.cap_effective = 0;
	CHECK("evm init (echo 1 > evm)", integrity_sys_evm_write(sys, &root_cred, EVM_INIT_HMAC) == 0);
	ima_ml_config_init(&mlcfg);
	/* Not the default PCR: entries that must follow the list's show it. */
	mlcfg.pcr = 11;
	CHECK("measurement list opens (software PCRs, PCR 11)", ima_ml_open(&mlcfg, &ml) == 0);
	integrity_sys_set_measurements(sys, ml);

	test_setxattr_rules();
	test_setattr_rules();
	test_modes();
	test_post_hooks();
	test_file_check(ml);
	test_evm_securityfs();
	test_evm_setup_complete();
	{
		struct uevm_ctx *ctx2;
		struct uevm_key *key2;

		if (uevm_key_from_bytes(raw, sizeof(raw), &key2) ||
		    uevm_ctx_new(&cfg, key2, &ctx2))
			return 1;
		test_syslog(ctx2);
	}
	{
		struct integrity_cache_stats st;

		integrity_cache_stats(integrity_sys_cache(sys), &st);
		printf("iint entry: %zu bytes (+ digest), %zu entries cached\n",
		       st.entry_size, st.entries);
		CHECK("iint entry <= 128 bytes", st.entry_size <= 128);
	}
	integrity_sys_free(sys);
	ima_ml_close(ml);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			return 1;
	}
	TEST_EXIT();
}
