// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The library helpers of front-ends that see some operations only
 * afterwards (uevmd): integrity_file_cacheable (may later opens go unseen?)
 * and integrity_inode_post_change (a chmod/chown/setxattr reported after
 * the fact: relabel only what was good before).  Real files with real
 * security.* xattrs; needs root.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "integrity.h"
#include "ima.h"
#include "ima_policy.h"
#include "test.h"

static char dir[] = "/var/tmp/uevm-notify.XXXXXX";
static struct integrity_sys *sys;
static struct integrity_cred root_cred, user_cred;
static char last_audit[2048];
static int audit_count;

static void sink(const struct integrity_audit_record *r, void *arg)
{
	(void)arg;
	snprintf(last_audit, sizeof(last_audit), "%s", r->text);
	audit_count++;
}

static const char *path_of(const char *name)
{
	static char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static void make_file(const char *name, bool label)
{
	struct uevm_file f;
	int fd;

	unlink(path_of(name));
	fd = open(path_of(name), O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0 || write(fd, name, strlen(name)) < 0)
		abort();
	close(fd);
	if (label && (uevm_file_openat(&f, AT_FDCWD, path_of(name), NULL) ||
		      uevm_label_file(integrity_sys_ctx(sys), &f)))
		abort();
	if (label)
		uevm_file_close(&f);
}

static int file_check(const char *name, const struct integrity_cred *cred, int mask,
		      int func, unsigned int cacheable_funcs, bool *cacheable)
{
	struct integrity_event ev = { 0 };
	struct uevm_file f;
	int r;

	if (uevm_file_openat(&f, AT_FDCWD, path_of(name), NULL))
		abort();
	ev.file = &f;
	ev.cred = cred;
	ev.filename = name;
	ev.mask = mask;
	ev.func = func;
	r = integrity_file_check(sys, &ev);
	if (cacheable)
		*cacheable = r == 0 && integrity_file_cacheable(sys, &ev, cacheable_funcs);
	uevm_file_close(&f);
	return r;
}

static bool cacheable_after(const char *name, const struct integrity_cred *cred, int mask)
{
	bool c = false;

	file_check(name, cred, mask, FILE_CHECK, 1U << FILE_CHECK, &c);
	return c;
}

static int post_change(const char *name)
{
	struct integrity_event ev = { 0 };
	struct uevm_file f;
	int r;

	if (uevm_file_openat(&f, AT_FDCWD, path_of(name), NULL))
		abort();
	ev.file = &f;
	ev.cred = &root_cred;
	ev.filename = name;
	r = integrity_inode_post_change(sys, &ev);
	uevm_file_close(&f);
	return r;
}

static enum integrity_status verify(const char *name)
{
	struct uevm_file f;
	struct uevm_verdict v;

	if (uevm_file_openat(&f, AT_FDCWD, path_of(name), NULL))
		abort();
	if (uevm_verify_file(integrity_sys_ctx(sys), &f, &v))
		v.status = INTEGRITY_UNKNOWN;
	uevm_file_close(&f);
	return v.status;
}

static struct ima_policy *load(const char *text)
{
	struct ima_policy *p;

	if (ima_policy_parse(text, strlen(text), &p))
		abort();
	integrity_sys_set_policy(sys, p);
	return p;
}

static void test_cacheable(void)
{
	struct ima_policy *p;
	bool c;

	/* Measured only for root's reads: a user's open leaves that undone. */
	p = load("measure func=FILE_CHECK mask=MAY_READ uid=0\nappraise func=FILE_CHECK\n");
	make_file("a", true);
	CHECK("uid-dependent measure: after a user's read, not cacheable",
	      !cacheable_after("a", &user_cred, MAY_READ));
	CHECK("  after root's read (measured): cacheable",
	      cacheable_after("a", &root_cred, MAY_READ));
	integrity_sys_set_policy(sys, NULL);
	ima_policy_free(p);

	/* A user-specific dont_appraise does not decide for other callers. */
	p = load("dont_appraise uid=1000\nappraise func=FILE_CHECK\n");
	make_file("b", true);
	CHECK("dont_appraise uid=1000: the user's open appraises nothing, not cacheable",
	      !cacheable_after("b", &user_cred, MAY_READ));
	CHECK("  root's open appraises (PASS): cacheable",
	      cacheable_after("b", &root_cred, MAY_READ));
	integrity_sys_set_policy(sys, NULL);
	ima_policy_free(p);

	/* A rule for writes only: a read leaves the write's measure undone. */
	p = load("measure func=FILE_CHECK mask=MAY_WRITE pcr=11\nappraise func=FILE_CHECK\n");
	make_file("c", true);
	CHECK("measure of writes into PCR 11: a read does not make it cacheable",
	      !cacheable_after("c", &root_cred, MAY_READ));
	integrity_sys_set_policy(sys, NULL);
	ima_policy_free(p);

	p = load("appraise func=FILE_CHECK\nappraise func=BPRM_CHECK appraise_type=imasig\n");
	make_file("d", true);
	c = false;
	CHECK("exec hook needing a signature, file has a hash: refused",
	      file_check("d", &root_cred, MAY_EXEC, BPRM_CHECK, 1U << BPRM_CHECK, &c) == -EACCES);
	CHECK("  and never cacheable for exec", !c);
	CHECK("  FILE_CHECK passes and is cacheable for opens",
	      cacheable_after("d", &root_cred, MAY_READ));
	make_file("e", true);
	CHECK("a write open counts as a writer: not cacheable",
	      !cacheable_after("e", &root_cred, MAY_WRITE));
	make_file("f", false);
	CHECK("an unlabelled file: refused, not cacheable",
	      file_check("f", &root_cred, MAY_READ, FILE_CHECK, 1U << FILE_CHECK, &c) == -EACCES && !c);
	make_file("g", true);
	CHECK("a cached file expects unseen writes", cacheable_after("g", &root_cred, MAY_READ));
	{
		/* ... so the close of a write it did not see rehashes it. */
		struct integrity_event ev = { 0 };
		struct uevm_file f;
		int fd = open(path_of("g"), O_WRONLY | O_APPEND);

		if (fd < 0 || write(fd, "more", 4) != 4)
			abort();
		close(fd);
		if (uevm_file_openat(&f, AT_FDCWD, path_of("g"), NULL))
			abort();
		ev.file = &f;
		ev.cred = &root_cred;
		ev.filename = "g";
		ev.mask = MAY_WRITE;
		ev.written = true;
		integrity_file_free(sys, &ev);
		uevm_file_close(&f);
		CHECK("  the unseen write's close rehashed it: PASS", verify("g") == INTEGRITY_PASS);
	}
	integrity_sys_set_mode(sys, INTEGRITY_MODE_OFF);
	CHECK("off mode: nothing is cacheable", !cacheable_after("d", &root_cred, MAY_READ));
	integrity_sys_set_mode(sys, INTEGRITY_MODE_ENFORCE);
	integrity_sys_set_policy(sys, NULL);
	ima_policy_free(p);
}

static void test_post_change(void)
{
	struct ima_policy *p = load("appraise func=FILE_CHECK\n");

	make_file("good", true);
	CHECK("a good file opens", file_check("good", &root_cred, MAY_READ, FILE_CHECK, 0, NULL) == 0);
	chmod(path_of("good"), 0600);
	CHECK("chmod of a file known good: relabelled", post_change("good") == 0);
	CHECK("  verifies PASS", verify("good") == INTEGRITY_PASS);
	if (chown(path_of("good"), 0, 5))
		abort();
	CHECK("a second change (chgrp) after the first: relabelled", post_change("good") == 0);
	CHECK("  verifies PASS", verify("good") == INTEGRITY_PASS);
	audit_count = 0;
	{
		struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };

		utimensat(AT_FDCWD, path_of("good"), ts, 0);
	}
	CHECK("a timestamp change needs nothing (and says nothing)",
	      post_change("good") == 0 && audit_count == 0);

	make_file("offline", true);
	if (chown(path_of("offline"), 4321, 0))
		abort();
	CHECK("a file changed offline is refused on open",
	      file_check("offline", &root_cred, MAY_READ, FILE_CHECK, 0, NULL) == -EACCES);
	chmod(path_of("offline"), 0600);
	audit_count = 0;
	CHECK("  then chmod'ed: not relabelled (-EPERM)", post_change("offline") == -EPERM);
	CHECK("  audited op=update_metadata cause=fail",
	      audit_count == 1 && strstr(last_audit, "op=update_metadata cause=fail") &&
	      strstr(last_audit, " res=0"));
	CHECK("  still fails", verify("offline") == INTEGRITY_FAIL);

	make_file("unseen", true);
	chmod(path_of("unseen"), 0600);
	CHECK("a change of a file never seen: not relabelled", post_change("unseen") == -EPERM);
	CHECK("  audited cause=unknown", strstr(last_audit, "cause=unknown") != NULL);

	make_file("new", false);
	{
		struct integrity_event ev = { 0 };
		struct uevm_file f;

		if (uevm_file_openat(&f, AT_FDCWD, path_of("new"), NULL))
			abort();
		ev.file = &f;
		ev.cred = &root_cred;
		ev.filename = "new";
		integrity_inode_post_init(sys, &ev);
		uevm_file_close(&f);
	}
	if (setxattr(path_of("new"), "security.selinux", "x", 1, 0))
		abort();
	CHECK("a new file's first label (setxattr after create): relabelled",
	      post_change("new") == 0);
	{
		struct uevm_file f;

		if (uevm_file_openat(&f, AT_FDCWD, path_of("new"), NULL))
			abort();
		CHECK("  its HMAC covers the label (EVM PASS)",
		      uevm_evm_verify(integrity_sys_ctx(sys), &f, NULL, 0) == INTEGRITY_PASS);
		uevm_file_close(&f);
	}

	integrity_sys_set_mode(sys, INTEGRITY_MODE_FIX);
	CHECK("fix mode: the offline-changed file is relabelled", post_change("offline") == 0);
	integrity_sys_set_mode(sys, INTEGRITY_MODE_ENFORCE);
	CHECK("  and verifies PASS (its content was never changed)",
	      verify("offline") == INTEGRITY_PASS);
	integrity_sys_set_policy(sys, NULL);
	ima_policy_free(p);
}

static void test_invalidate_all(void)
{
	struct integrity_cache_stats st;
	struct ima_policy *p = load("appraise func=FILE_CHECK\n");
	uint64_t before;

	make_file("inv", true);
	file_check("inv", &root_cred, MAY_READ, FILE_CHECK, 0, NULL);
	integrity_cache_stats(integrity_sys_cache(sys), &st);
	before = st.invalidations;
	integrity_cache_invalidate_all(integrity_sys_cache(sys));
	integrity_cache_stats(integrity_sys_cache(sys), &st);
	CHECK("integrity_cache_invalidate_all makes every entry stale",
	      st.invalidations >= before + st.entries && st.entries > 0);
	CHECK("  a good file still opens afterwards",
	      file_check("inv", &root_cred, MAY_READ, FILE_CHECK, 0, NULL) == 0);
	integrity_sys_set_policy(sys, NULL);
	ima_policy_free(p);
}

/* New rules make every cached verdict stale: a file with a hash label
 * that passed "appraise" is refused once signatures are required. */
static void test_policy_change(void)
{
	struct integrity_cache_stats st;
	struct ima_policy *weak = load("appraise func=FILE_CHECK\n");
	struct ima_policy *strict = load("appraise func=FILE_CHECK appraise_type=imasig\n");
	uint64_t before;

	integrity_sys_set_policy(sys, weak);	/* load() installed each */
	make_file("tighten", true);
	CHECK("weak rules: a hashed file opens",
	      file_check("tighten", &root_cred, MAY_READ, FILE_CHECK, 0, NULL) == 0);
	integrity_sys_set_policy(sys, strict);
	audit_count = 0;
	CHECK("strict rules: the same file, passed before, is refused",
	      file_check("tighten", &root_cred, MAY_READ, FILE_CHECK, 0, NULL) == -EACCES);
	CHECK("  audited cause=IMA-signature-required",
	      audit_count == 1 && strstr(last_audit, "cause=IMA-signature-required"));
	integrity_cache_stats(integrity_sys_cache(sys), &st);
	before = st.invalidations;
	integrity_sys_set_policy(sys, strict);
	integrity_cache_stats(integrity_sys_cache(sys), &st);
	CHECK("the same rules set again: nothing made stale", st.invalidations == before);
	integrity_sys_set_policy(sys, weak);
	CHECK("weak rules again: it opens",
	      file_check("tighten", &root_cred, MAY_READ, FILE_CHECK, 0, NULL) == 0);
	integrity_sys_set_policy(sys, NULL);
	ima_policy_free(weak);
	ima_policy_free(strict);
}

static atomic_int invalidated, invalidator_tid;
static struct integrity_cache *lookup_cache;

static void *invalidate_thread(void *arg)
{
	atomic_store(&invalidator_tid, (int)syscall(SYS_gettid));
	integrity_cache_invalidate_all(arg);
	atomic_store(&invalidated, 1);
	return NULL;
}

static void *lookup_thread(void *arg)
{
	bool *all = arg;

	for (ino_t i = 2; i <= 4096; i++) {
		struct integrity_iint_cache *e = integrity_iint_find(lookup_cache, 7, i, 0);

		*all = *all && e;
		integrity_iint_put(lookup_cache, e);
	}
	return NULL;
}

/* Is thread TID of this process asleep in a futex (a lock it waits for)? */
static bool in_futex(int tid)
{
	char path[64], buf[64];
	FILE *f;
	long nr = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return sscanf(buf, "%ld", &nr) == 1 && nr == SYS_futex;
}

/* An entry busy with an appraisal (its lock held for a whole hash) must
 * not hold up other lookups while the cache is invalidated: before, the
 * walk waited for it under its shard's lock, so every open of a file in
 * that shard waited for the hash (a user's big sparse file) too. */
static void test_invalidate_busy_entry(void)
{
	struct integrity_stamp stamp = { 1, 1, 1 };
	struct integrity_iint_cache *busy;
	struct timespec ts;
	pthread_t t, l;
	bool all = true, looked;

	if (integrity_cache_new(0, &lookup_cache))
		abort();
	/* 4096 inodes: the busy one shares its shard (1 of 256) with some. */
	for (ino_t i = 1; i <= 4096; i++)
		integrity_iint_put(lookup_cache, integrity_iint_get(lookup_cache, 7, i, 0, &stamp));
	busy = integrity_iint_get(lookup_cache, 7, 1, 0, &stamp);
	integrity_iint_lock(busy);
	if (pthread_create(&t, NULL, invalidate_thread, lookup_cache))
		abort();
	/* Until the invalidation waits for the busy entry's lock. */
	while (!atomic_load(&invalidator_tid) || !in_futex(atomic_load(&invalidator_tid)))
		sched_yield();
	if (pthread_create(&l, NULL, lookup_thread, &all))
		abort();
	/* 60 s only bounds lookups stuck behind the shard's lock (the old
	 * code); they take microseconds. */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 60;
	looked = pthread_timedjoin_np(l, NULL, &ts) == 0;
	CHECK("invalidate_all waiting for an entry busy with an appraisal: every other "
	      "inode is looked up meanwhile, those of its shard too", looked && all);
	CHECK("  while the invalidation still waits", !atomic_load(&invalidated));
	integrity_iint_set_ima_status(busy, FILE_CHECK, INTEGRITY_PASS);
	integrity_iint_unlock(busy);
	pthread_join(t, NULL);
	if (!looked)
		pthread_join(l, NULL);
	integrity_iint_lock(busy);
	CHECK("  then it is made stale too",
	      integrity_iint_ima_status(busy, FILE_CHECK) == INTEGRITY_UNKNOWN);
	integrity_iint_unlock(busy);
	integrity_iint_put(lookup_cache, busy);
	integrity_cache_free(lookup_cache);
}

/* New rules keep a file's digest (nothing is hashed again), but not while
 * it has writers: a store through a shared mapping changes the content
 * and no stamp. */
static void test_invalidate_keeps_digest(void)
{
	struct integrity_cache *c;
	struct integrity_stamp stamp = { 1, 1, 1 };
	struct integrity_iint_cache *idle, *written;
	uint8_t d[UEVM_MAX_DIGEST_SIZE] = { 1, 2, 3 };
	int algo;

	if (integrity_cache_new(0, &c))
		abort();
	idle = integrity_iint_get(c, 9, 1, 0, &stamp);
	written = integrity_iint_get(c, 9, 2, 0, &stamp);
	integrity_iint_lock(idle);
	integrity_iint_set_digest(idle, UEVM_HASH_SHA256, d);
	integrity_iint_unlock(idle);
	integrity_iint_lock(written);
	integrity_iint_set_digest(written, UEVM_HASH_SHA256, d);
	integrity_iint_add_writer(written, 1);
	integrity_iint_unlock(written);
	integrity_cache_invalidate_all(c);
	integrity_iint_lock(idle);
	CHECK("invalidate_all keeps the digest of a file without writers",
	      integrity_iint_digest(idle, d, &algo) == 0 && algo == UEVM_HASH_SHA256);
	integrity_iint_unlock(idle);
	integrity_iint_lock(written);
	CHECK("  and drops that of a file open for writing",
	      integrity_iint_digest(written, d, &algo) < 0 || algo < 0);
	integrity_iint_add_writer(written, -1);
	integrity_iint_unlock(written);
	integrity_iint_put(c, idle);
	integrity_iint_put(c, written);
	integrity_cache_free(c);
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
	char cmd[300];

	if (geteuid() != 0) {
		printf("FAIL: notify_hooks: needs root\n");
		return 1;
	}
	if (!mkdtemp(dir))
		return 1;
	for (int i = 0; i < 32; i++)
		raw[i] = (uint8_t)(i * 5 + 3);
	uevm_config_init(&cfg);
	if (uevm_key_from_bytes(raw, sizeof(raw), &key) || uevm_ctx_new(&cfg, key, &ctx))
		return 1;
	scfg.audit.sink = sink;
	if (integrity_sys_new(&scfg, ctx, &sys))
		return 1;
	integrity_cred_self(&root_cred);
	root_cred.cap_effective = ~0ULL;
	user_cred = root_cred;
	user_cred.uid = user_cred.euid = 1000;
	user_cred.cap_effective = 0;
	if (integrity_sys_evm_write(sys, &root_cred, EVM_INIT_HMAC))
		return 1;
	ima_ml_config_init(&mlcfg);
	if (ima_ml_open(&mlcfg, &ml))
		return 1;
	integrity_sys_set_measurements(sys, ml);

	test_cacheable();
	test_post_change();
	test_invalidate_all();
	test_policy_change();
	test_invalidate_busy_entry();
	test_invalidate_keeps_digest();

	integrity_sys_free(sys);
	ima_ml_close(ml);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	TEST_EXIT();
}
