// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Filesystem conditions (fsmagic=, fsuuid=, fsname=) decided through the
 * open hook: the hook looks the filesystem up only when a rule can test
 * it, so each condition is checked matching and not matching, with an
 * unlabelled file that "appraise" alone refuses.  Needs root and an
 * ext4 (or other UUID-carrying) /var/tmp.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "integrity.h"
#include "ima.h"
#include "ima_policy.h"
#include "test.h"

static char dir[] = "/var/tmp/uevm-policy-fs.XXXXXX";
static struct integrity_sys *sys;
static struct integrity_cred cred;
static int nfile;

/* Open a new unlabelled file under POLICY (rules + "appraise"); the hook's
 * answer. */
static int open_under(const char *rules)
{
	char text[512], path[300];
	struct ima_policy *pol;
	struct integrity_event ev = { 0 };
	struct uevm_file f;
	int fd, r;

	snprintf(text, sizeof(text), "%sappraise func=FILE_CHECK\n", rules);
	if (ima_policy_parse(text, strlen(text), &pol))
		return -EINVAL - 1000;
	integrity_sys_set_policy(sys, pol);
	snprintf(path, sizeof(path), "%s/f%d", dir, nfile++);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "data\n", 5) != 5)
		abort();
	close(fd);
	if (uevm_file_openat(&f, AT_FDCWD, path, path))
		abort();
	ev.file = &f;
	ev.cred = &cred;
	ev.filename = path;
	ev.mask = MAY_READ;
	ev.func = FILE_CHECK;
	r = integrity_file_check(sys, &ev);
	uevm_file_close(&f);
	integrity_sys_set_policy(sys, NULL);
	ima_policy_free(pol);
	return r;
}

int main(void)
{
	struct integrity_sys_config scfg = { .mode = INTEGRITY_MODE_ENFORCE };
	struct uevm_config cfg;
	struct uevm_key *key;
	struct uevm_ctx *ctx;
	struct statfs sfs;
	struct uevm_file f;
	uint8_t raw[32], u[16];
	char rule[200], uuid[40];
	int fd;

	if (geteuid() != 0) {
		printf("FAIL: ima_policy_fs: needs root\n");
		return 1;
	}
	if (!mkdtemp(dir))
		return 1;
	for (int i = 0; i < 32; i++)
		raw[i] = (uint8_t)(i * 5 + 3);
	uevm_config_init(&cfg);
	if (uevm_key_from_bytes(raw, sizeof(raw), &key) || uevm_ctx_new(&cfg, key, &ctx) ||
	    integrity_sys_new(&scfg, ctx, &sys))
		return 1;
	integrity_cred_self(&cred);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || fstatfs(fd, &sfs) < 0)
		return 1;
	close(fd);
	if (uevm_file_openat(&f, AT_FDCWD, dir, dir) || uevm_file_fsuuid(&f, u))
		return 1;
	uevm_file_close(&f);
	snprintf(uuid, sizeof(uuid),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		 u[12], u[13], u[14], u[15]);

	CHECK("fs: an unlabelled file is refused by appraise alone",
	      open_under("") == -EACCES);
	snprintf(rule, sizeof(rule), "dont_appraise fsmagic=0x%lx\n", (unsigned long)sfs.f_type);
	CHECK("fs: dont_appraise fsmagic= of this filesystem lets it open",
	      open_under(rule) == 0);
	snprintf(rule, sizeof(rule), "dont_appraise fsmagic=0x%lx\n",
		 (unsigned long)sfs.f_type ^ 0x1);
	CHECK("fs: dont_appraise fsmagic= of another filesystem does not",
	      open_under(rule) == -EACCES);
	snprintf(rule, sizeof(rule), "dont_appraise fsuuid=%s\n", uuid);
	CHECK("fs: dont_appraise fsuuid= of this filesystem lets it open",
	      open_under(rule) == 0);
	uuid[0] = uuid[0] == '0' ? '1' : '0';
	snprintf(rule, sizeof(rule), "dont_appraise fsuuid=%s\n", uuid);
	CHECK("fs: dont_appraise fsuuid= of another filesystem does not",
	      open_under(rule) == -EACCES);
	if (sfs.f_type == 0xEF53) {
		CHECK("fs: dont_appraise fsname=ext4 lets it open",
		      open_under("dont_appraise fsname=ext4\n") == 0);
		CHECK("fs: dont_appraise fsname=xfs does not",
		      open_under("dont_appraise fsname=xfs\n") == -EACCES);
	}
	integrity_sys_free(sys);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			test_failures++;
	}
	return test_failures ? 1 : 0;
}
