// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The measurement list with software PCRs: boot_aggregate first, no
 * duplicates, violations, PCR values against a replay computed here with
 * OpenSSL's one-shot SHA1()/SHA256(), persistence across a restart, the
 * owner lock, damaged files, and adds from many threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include "uevm/measure.h"
#include "test.h"

/* Software model of the two banks, fed by this test. */
struct model {
	unsigned char sha1[24][20];
	unsigned char sha256[24][32];
};

static void model_extend(struct model *m, int pcr, const unsigned char *d1,
			 const unsigned char *d256)
{
	unsigned char buf[64];

	memcpy(buf, m->sha1[pcr], 20);
	memcpy(buf + 20, d1, 20);
	SHA1(buf, 40, m->sha1[pcr]);
	memcpy(buf, m->sha256[pcr], 32);
	memcpy(buf + 32, d256, 32);
	SHA256(buf, 64, m->sha256[pcr]);
}

/* ima-ng digests of (name, sha256 digest), laid out here. */
static void ima_ng_digests(const char *name, const unsigned char *digest,
			   unsigned char d1[20], unsigned char d256[32])
{
	unsigned char buf[512];
	size_t n = 0, nl = strlen(name) + 1;
	uint32_t len = 40;

	memcpy(buf + n, &len, 4);
	n += 4;
	memcpy(buf + n, "sha256:", 8);
	memcpy(buf + n + 8, digest, 32);
	n += 40;
	len = (uint32_t)nl;
	memcpy(buf + n, &len, 4);
	memcpy(buf + n + 4, name, nl);
	n += 4 + nl;
	SHA1(buf, n, d1);
	SHA256(buf, n, d256);
}

static bool pcr_is(struct ima_measurements *ml, int pcr, const struct model *m)
{
	unsigned char v1[20], v256[32];

	return ima_ml_pcr_read(ml, pcr, UEVM_HASH_SHA1, v1) == 20 &&
	       ima_ml_pcr_read(ml, pcr, UEVM_HASH_SHA256, v256) == 32 &&
	       !memcmp(v1, m->sha1[pcr], 20) && !memcmp(v256, m->sha256[pcr], 32);
}

static struct ima_event_data file_event(const char *name, unsigned char *digest)
{
	struct ima_event_data ev = {
		.filename = name, .algo = UEVM_HASH_SHA256,
		.digest = digest, .digest_len = 32,
	};

	SHA256((const unsigned char *)name, strlen(name), digest);
	return ev;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf = malloc(1 << 20);

	*len = fp ? fread(buf, 1, 1 << 20, fp) : 0;
	if (fp)
		fclose(fp);
	return buf;
}

static void test_software_list(const char *dir)
{
	struct ima_ml_config cfg;
	struct ima_measurements *ml;
	struct model m = { 0 };
	unsigned char zero32[32] = { 0 }, ff[32], d1[20], d256[32], dg[32];
	struct ima_event_data ev;
	char path[256], *mem = NULL, *file;
	size_t memlen = 0, filelen;
	FILE *fp;
	int ret;

	memset(ff, 0xff, sizeof(ff));
	snprintf(path, sizeof(path), "%s/list", dir);
	ima_ml_config_init(&cfg);
	cfg.path = path;
	cfg.no_sync = true;
	ret = ima_ml_open(&cfg, &ml);
	CHECK("open: new list", ret == 0 && ima_ml_open_state(ml) == IMA_ML_CREATED);
	if (ret)
		return;
	CHECK("boot_aggregate is the first and only entry", ima_ml_count(ml) == 1);
	ima_ng_digests("boot_aggregate", zero32, d1, d256);
	model_extend(&m, 10, d1, d256);
	CHECK("boot_aggregate without a TPM: zero digest, PCR 10", pcr_is(ml, 10, &m));

	ev = file_event("/usr/bin/a", dg);
	CHECK("add: first measurement added", ima_ml_add_file(ml, &ev, NULL, -1) == 0);
	ima_ng_digests("/usr/bin/a", dg, d1, d256);
	model_extend(&m, 10, d1, d256);
	CHECK("add: the same measurement again is not added",
	      ima_ml_add_file(ml, &ev, NULL, -1) == 1 && ima_ml_count(ml) == 2);
	CHECK("add: into PCR 11 it is a new entry",
	      ima_ml_add_file(ml, &ev, NULL, 11) == 0 && ima_ml_count(ml) == 3);
	model_extend(&m, 11, d1, d256);
	CHECK("PCR 10 and 11 equal the model", pcr_is(ml, 10, &m) && pcr_is(ml, 11, &m));

	CHECK("violation: recorded",
	      ima_ml_add_violation(ml, "/tmp/written", NULL, -1) == 0 &&
	      ima_ml_violations(ml) == 1 && ima_ml_count(ml) == 4);
	model_extend(&m, 10, ff, ff);
	CHECK("violation: PCR 10 extended with 0xff..", pcr_is(ml, 10, &m));
	CHECK("violation: a second identical one is recorded too",
	      ima_ml_add_violation(ml, "/tmp/written", NULL, -1) == 0 &&
	      ima_ml_count(ml) == 5 && ima_ml_violations(ml) == 2);
	model_extend(&m, 10, ff, ff);

	CHECK("buffer: ima-buf measurement",
	      ima_ml_add_buffer(ml, "kexec-cmdline", "ro quiet", 8, NULL, -1) == 0);
	CHECK("bad template name refused",
	      ima_ml_add_file(ml, &ev, "no-such-template", -1) < 0 && ima_ml_count(ml) == 6);
	CHECK("bad PCR refused", ima_ml_add_file(ml, &ev, NULL, 24) == -EINVAL);

	fp = open_memstream(&mem, &memlen);
	ima_ml_write_binary(ml, UEVM_HASH_SHA1, fp);
	fclose(fp);
	file = read_all(path, &filelen);
	CHECK("the file holds the binary list", filelen == memlen && !memcmp(file, mem, memlen));
	free(file);
	{
		struct ima_ml_replay r1, r256;

		ima_ml_replay_binary((uint8_t *)mem, memlen, UEVM_HASH_SHA1, false, &r1);
		ima_ml_replay_binary((uint8_t *)mem, memlen, UEVM_HASH_SHA256, false, &r256);
		CHECK("replaying the binary list gives the list's PCRs",
		      r1.entries == 6 && r1.violations == 2 && r1.bad_digests == 0 &&
		      !memcmp(r1.pcr[11], m.sha1[11], 20) &&
		      !memcmp(r256.pcr[11], m.sha256[11], 32));
	}

	/* A second owner is refused while the first holds the list. */
	{
		struct ima_measurements *ml2 = NULL;

		CHECK("a second owner gets EBUSY", ima_ml_open(&cfg, &ml2) == -EBUSY && !ml2);
	}
	ima_ml_close(ml);

	/* Restart: the same entries, the same PCRs. */
	ret = ima_ml_open(&cfg, &ml);
	CHECK("reopen: resumed", ret == 0 && ima_ml_open_state(ml) == IMA_ML_RESUMED);
	if (ret) {
		free(mem);
		return;
	}
	CHECK("reopen: same count and violations",
	      ima_ml_count(ml) == 6 && ima_ml_violations(ml) == 2);
	CHECK("reopen: PCR 11 replayed", pcr_is(ml, 11, &m));
	CHECK("reopen: an entry from before is still a duplicate",
	      ima_ml_add_file(ml, &ev, NULL, -1) == 1);
	ima_ml_close(ml);

	/* A torn last entry (a crash in mid-write) is cut off. */
	{
		int fd = open(path, O_WRONLY | O_APPEND);

		CHECK("tear: append a partial entry", fd >= 0 && write(fd, mem, 30) == 30);
		close(fd);
	}
	ret = ima_ml_open(&cfg, &ml);
	CHECK("tear: reopened with the torn entry cut off",
	      ret == 0 && ima_ml_count(ml) == 6);
	ima_ml_close(ml);
	file = read_all(path, &filelen);
	CHECK("tear: the file is back to its entries", filelen == memlen);

	/* A changed byte in the middle is refused. */
	file[60] ^= 0x01;
	fp = fopen(path, "wb");
	fwrite(file, 1, filelen, fp);
	fclose(fp);
	ml = NULL;
	ret = ima_ml_open(&cfg, &ml);
	CHECK("tamper: a changed entry is refused", ret == -EBADMSG && !ml &&
	      strstr(uevm_last_error(), path) != NULL);
	free(file);
	free(mem);
}

/* ---- many threads ----------------------------------------------------------- */

#define THREADS 8
#define PER_THREAD 200

static struct ima_measurements *shared_ml;
static atomic_int added, dups;

static void *adder(void *arg)
{
	long t = (long)arg;

	for (int i = 0; i < PER_THREAD; i++) {
		char name[64];
		unsigned char dg[32];
		struct ima_event_data ev;
		int ret;

		/* Even i: a name of this thread's own; odd i: shared by all. */
		if (i % 2 == 0)
			snprintf(name, sizeof(name), "/t%ld/file%d", t, i);
		else
			snprintf(name, sizeof(name), "/shared/file%d", i);
		ev = file_event(name, dg);
		ret = ima_ml_add_file(shared_ml, &ev, NULL, -1);
		if (ret == 0)
			atomic_fetch_add(&added, 1);
		else if (ret == 1)
			atomic_fetch_add(&dups, 1);
		if (i % 50 == 0) {
			char *buf = NULL;
			size_t len = 0;
			FILE *fp = open_memstream(&buf, &len);

			ima_ml_write_ascii(shared_ml, UEVM_HASH_SHA1, fp);
			fclose(fp);
			free(buf);
		}
	}
	return NULL;
}

static void test_threads(void)
{
	struct ima_ml_config cfg;
	pthread_t th[THREADS];
	char *buf = NULL;
	size_t len = 0;
	struct ima_ml_replay r;
	unsigned char v[32];
	FILE *fp;

	ima_ml_config_init(&cfg);
	if (ima_ml_open(&cfg, &shared_ml)) {
		CHECK("threads: open", 0);
		return;
	}
	for (long t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, adder, (void *)t);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	CHECK("threads: each distinct event added once",
	      added == THREADS * PER_THREAD / 2 + PER_THREAD / 2 &&
	      dups == (THREADS - 1) * PER_THREAD / 2);
	CHECK("threads: count", ima_ml_count(shared_ml) == (size_t)added + 1);
	fp = open_memstream(&buf, &len);
	ima_ml_write_binary(shared_ml, UEVM_HASH_SHA1, fp);
	fclose(fp);
	CHECK("threads: the list replays to the software PCR",
	      ima_ml_replay_binary((uint8_t *)buf, len, UEVM_HASH_SHA256, false, &r) == 0 &&
	      r.entries == ima_ml_count(shared_ml) &&
	      ima_ml_pcr_read(shared_ml, 10, UEVM_HASH_SHA256, v) == 32 &&
	      !memcmp(v, r.pcr[10], 32));
	free(buf);
	ima_ml_close(shared_ml);
}

int main(void)
{
	char dir[] = "/tmp/uevm-ima-ml.XXXXXX";

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_software_list(dir);
	test_threads();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	TEST_EXIT();
}
