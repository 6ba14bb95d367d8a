// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * 8 threads hammer the integrity cache and the hooks, on shared and on
 * separate files: opens (appraise + measure), xattr changes, chmods and
 * writes, each through the hooks as a front-end would.  Run under
 * ThreadSanitizer by `make check`.  At the end every file must verify PASS:
 * concurrent legitimate changes never leave a file failing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "integrity.h"
#include "ima.h"
#include "ima_policy.h"
#include "test.h"

#define THREADS 8
#define ITERATIONS 300
#define SHARED 3

static char dir[] = "/var/tmp/uevm-stress.XXXXXX";
static struct integrity_sys *sys;
static struct integrity_cred cred;
static atomic_int denied, allowed, hook_errors;

static void path_of(char *out, size_t len, int idx)
{
	snprintf(out, len, "%s/f%d", dir, idx);
}

static int open_obj(int idx, struct uevm_file *f, char *path, size_t len)
{
	path_of(path, len, idx);
	return uevm_file_openat(f, AT_FDCWD, path, path);
}

/* One legitimate change of a kind chosen by R, through the hooks. */
static void change(int idx, unsigned int r)
{
	struct integrity_event ev = { .cred = &cred };
	struct uevm_file f;
	char path[256], label[32];
	int fd;

	if (open_obj(idx, &f, path, sizeof(path)))
		return;
	ev.file = &f;
	ev.filename = path;
	switch (r % 3) {
	case 0:	/* relabel */
		snprintf(label, sizeof(label), "u:r:t%u:s0", r % 7);
		ev.xattr_name = "security.selinux";
		ev.xattr_value = label;
		ev.xattr_len = strlen(label);
		if (integrity_inode_setxattr(sys, &ev) == 0 &&
		    fsetxattr(f.fd, ev.xattr_name, label, ev.xattr_len, 0) == 0)
			integrity_inode_post_setxattr(sys, &ev);
		break;
	case 1:	/* chmod */
		ev.ia_valid = ATTR_MODE;
		ev.ia_mode = (r & 1) ? 0640 : 0644;
		if (integrity_inode_setattr(sys, &ev) == 0 &&
		    fchmod(f.fd, ev.ia_mode) == 0)
			integrity_inode_post_setattr(sys, &ev);
		break;
	default:	/* append, then the last close */
		ev.mask = MAY_WRITE | MAY_APPEND;
		ev.func = FILE_CHECK;
		if (integrity_file_check(sys, &ev) == 0) {
			fd = open(path, O_WRONLY | O_APPEND);
			if (fd >= 0) {
				if (write(fd, "more\n", 5) != 5)
					atomic_fetch_add(&hook_errors, 1);
				close(fd);
			}
			ev.written = true;
			integrity_file_free(sys, &ev);
		}
		break;
	}
	uevm_file_close(&f);
}

static void open_read(int idx)
{
	struct integrity_event ev = { .cred = &cred, .mask = MAY_READ, .func = FILE_CHECK };
	struct uevm_file f;
	char path[256];

	if (open_obj(idx, &f, path, sizeof(path)))
		return;
	ev.file = &f;
	ev.filename = path;
	if (integrity_file_check(sys, &ev) == 0)
		atomic_fetch_add(&allowed, 1);
	else
		atomic_fetch_add(&denied, 1);
	uevm_file_close(&f);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	unsigned int seed = (unsigned int)id * 2654435761u;
	struct integrity_cache *c = integrity_sys_cache(sys);

	for (int i = 0; i < ITERATIONS; i++) {
		unsigned int r = rand_r(&seed);
		/* Half the time a shared file, otherwise this thread's own. */
		int idx = (r & 1) ? (int)(r / 2 % SHARED) : SHARED + id;

		if (r % 5 == 0)
			change(idx, r / 5);
		else
			open_read(idx);
		/* Churn the cache with entries that force eviction. */
		for (int k = 0; k < 4; k++) {
			struct integrity_stamp st = { k, k, (uint64_t)k };
			struct integrity_iint_cache *e =
				integrity_iint_get(c, 999, (ino_t)(rand_r(&seed) % 5000), 0, &st);

			if (e) {
				integrity_iint_lock(e);
				integrity_iint_set_evm_status(e, INTEGRITY_PASS);
				integrity_iint_unlock(e);
				integrity_iint_put(c, e);
			}
		}
	}
	return NULL;
}

int main(void)
{
	static const char policy[] = "measure func=FILE_CHECK\nappraise func=FILE_CHECK\n";
	struct integrity_sys_config scfg = { .cache_capacity = 1024 };
	struct ima_ml_config mlcfg;
	struct ima_measurements *ml;
	struct ima_policy *pol;
	struct uevm_config cfg;
	struct uevm_key *key;
	struct uevm_ctx *ctx;
	pthread_t tids[THREADS];
	uint8_t raw[32] = { 1, 2, 3, 4 };
	int bad = 0;

	if (!mkdtemp(dir))
		return 1;
	uevm_config_init(&cfg);
	if (uevm_key_from_bytes(raw, sizeof(raw), &key) || uevm_ctx_new(&cfg, key, &ctx) ||
	    integrity_sys_new(&scfg, ctx, &sys) ||
	    ima_policy_parse(policy, strlen(policy), &pol))
		return 1;
	ima_ml_config_init(&mlcfg);
	if (ima_ml_open(&mlcfg, &ml))
		return 1;
	integrity_sys_set_policy(sys, pol);
	integrity_sys_set_measurements(sys, ml);
	integrity_cred_self(&cred);
	cred.cap_effective = ~0ULL;
	if (integrity_sys_evm_write(sys, &cred, EVM_INIT_HMAC))
		return 1;
	for (int i = 0; i < SHARED + THREADS; i++) {
		char path[256];
		struct uevm_file f;
		int fd;

		path_of(path, sizeof(path), i);
		fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
		if (fd < 0 || write(fd, "start\n", 6) != 6)
			return 1;
		close(fd);
		if (uevm_file_openat(&f, AT_FDCWD, path, path) ||
		    uevm_label_file(ctx, &f))
			return 1;
		uevm_file_close(&f);
	}

	for (long i = 0; i < THREADS; i++)
		pthread_create(&tids[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(tids[i], NULL);

	for (int i = 0; i < SHARED + THREADS; i++) {
		char path[256];
		struct uevm_file f;
		struct uevm_verdict v;

		if (open_obj(i, &f, path, sizeof(path)) ||
		    uevm_verify_file(ctx, &f, &v) || v.status != INTEGRITY_PASS) {
			printf("not PASS after the storm: %s (%s)\n", path,
			       v.cause ? v.cause : "?");
			bad++;
		}
		uevm_file_close(&f);
	}
	{
		struct integrity_cache_stats st;

		integrity_cache_stats(integrity_sys_cache(sys), &st);
		printf("opens allowed %d, denied %d; cache: %zu/%zu entries, %llu lookups, "
		       "%llu evictions, %llu invalidations; %zu measurements\n",
		       atomic_load(&allowed), atomic_load(&denied), st.entries, st.capacity,
		       (unsigned long long)st.lookups, (unsigned long long)st.evictions,
		       (unsigned long long)st.invalidations, ima_ml_count(ml));
		CHECK("stress: cache stayed bounded", st.entries <= st.capacity + THREADS);
		CHECK("stress: eviction happened", st.evictions > 0);
	}
	CHECK("stress: every file PASS after concurrent legitimate changes", bad == 0);
	CHECK("stress: opens were served", atomic_load(&allowed) > 0);
	CHECK("stress: no I/O errors", atomic_load(&hook_errors) == 0);
	integrity_sys_free(sys);
	ima_ml_close(ml);
	ima_policy_free(pol);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			return 1;
	}
	TEST_EXIT();
}
