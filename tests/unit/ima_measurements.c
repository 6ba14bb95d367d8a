// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The measurement list with software PCRs: boot_aggregate first, no
 * duplicates, violations, PCR values against a replay computed here with
 * OpenSSL's one-shot SHA1()/SHA256(), persistence across a restart, the
 * owner lock, damaged files, adds from many threads, and the MAC record
 * that protects a persisted list under a key against offline edits.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include "ima.h"
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

/* ---- the MAC record (software PCRs with a key) --------------------------------- */

static void write_all_file(const char *path, const char *buf, size_t len)
{
	FILE *fp = fopen(path, "wb");

	if (fp) {
		fwrite(buf, 1, len, fp);
		fclose(fp);
	}
}

/* Bytes of one ima-ng entry of a file event named NAME. */
static size_t ima_ng_entry_size(const char *name)
{
	return 4 + 20 + 4 + 6 + 4 + (4 + 40) + (4 + strlen(name) + 1);
}

static int reopen(struct ima_ml_config *cfg, struct uevm_ctx *ctx)
{
	struct ima_measurements *ml = NULL;
	int ret;

	cfg->evm_ctx = ctx;
	ret = ima_ml_open(cfg, &ml);
	ima_ml_close(ml);
	return ret;
}

static struct uevm_ctx *ctx_with_key(unsigned char fill)
{
	unsigned char raw[32];
	struct uevm_config ucfg;
	struct uevm_key *key = NULL;
	struct uevm_ctx *ctx = NULL;

	memset(raw, fill, sizeof(raw));
	uevm_config_init(&ucfg);
	if (uevm_key_from_bytes(raw, sizeof(raw), &key) || uevm_ctx_new(&ucfg, key, &ctx))
		return NULL;
	return ctx;
}

static void *mac_adder(void *arg)
{
	for (int i = 0; i < 100; i++) {
		char name[64];
		unsigned char dg[32];
		struct ima_event_data ev;

		snprintf(name, sizeof(name), "/t%ld/file%d", (long)arg, i);
		ev = file_event(name, dg);
		ima_ml_add_file(shared_ml, &ev, NULL, -1);
	}
	return NULL;
}

static void test_mac_list(const char *dir)
{
	struct uevm_ctx *ctx = ctx_with_key(0x5a), *other = ctx_with_key(0xa5);
	struct ima_ml_config cfg;
	struct ima_measurements *ml = NULL;
	char path[256], mpath[300], *file, *mac, *ed;
	size_t filelen, maclen, e1, e2;
	unsigned char dg[32];
	struct ima_event_data ev;
	pthread_t th[4];
	int ret;

	if (!ctx || !other) {
		CHECK("mac: keys", 0);
		return;
	}
	snprintf(path, sizeof(path), "%s/mac-list", dir);
	snprintf(mpath, sizeof(mpath), "%s.mac", path);
	ima_ml_config_init(&cfg);
	cfg.path = path;
	cfg.no_sync = true;
	cfg.evm_ctx = ctx;
	ret = ima_ml_open(&cfg, &ml);
	CHECK("mac: a new list with a key", ret == 0 && !ima_ml_open_warning(ml));
	if (ret)
		goto out;
	ev = file_event("/usr/bin/a", dg);
	ima_ml_add_file(ml, &ev, NULL, -1);
	ev = file_event("/usr/bin/b", dg);
	ima_ml_add_file(ml, &ev, NULL, -1);
	ima_ml_close(ml);
	mac = read_all(mpath, &maclen);
	CHECK("mac: a 64-byte record beside the list", maclen == 64);
	file = read_all(path, &filelen);
	e2 = ima_ng_entry_size("/usr/bin/a");
	e1 = filelen - 2 * e2;			/* boot_aggregate */
	CHECK("mac: reopen with the key: resumed", reopen(&cfg, ctx) == 0);
	ret = reopen(&cfg, NULL);
	CHECK("mac: reopen without a key: refused, naming the record",
	      ret == -EKEYREJECTED && strstr(uevm_last_error(), mpath));
	CHECK("mac: reopen with another key: refused", reopen(&cfg, other) == -EBADMSG);

	ed = malloc(filelen + e2);
	memcpy(ed, file, filelen);
	memcpy(ed + e1, file + e1 + e2, e2);	/* swap entries 2 and 3 */
	memcpy(ed + e1 + e2, file + e1, e2);
	write_all_file(path, ed, filelen);
	ret = reopen(&cfg, ctx);
	CHECK("mac: two entries swapped: refused, naming the list",
	      ret == -EBADMSG && strstr(uevm_last_error(), "does not match its MAC record"));
	write_all_file(path, file, filelen - e2);
	CHECK("mac: the last entry removed: refused", reopen(&cfg, ctx) == -EBADMSG &&
	      strstr(uevm_last_error(), "shorter than its MAC record"));
	write_all_file(path, file, filelen);
	mac[40] ^= 1;
	write_all_file(mpath, mac, maclen);
	CHECK("mac: a damaged record: refused", reopen(&cfg, ctx) == -EBADMSG);
	mac[40] ^= 1;
	write_all_file(mpath, mac, maclen);
	CHECK("mac: restored: resumed", reopen(&cfg, ctx) == 0);

	memcpy(ed, file, filelen);
	memcpy(ed + filelen, file + e1, e2);	/* entry 2 appended again */
	write_all_file(path, ed, filelen + e2);
	cfg.evm_ctx = ctx;
	ret = ima_ml_open(&cfg, &ml);
	CHECK("mac: an appended entry: resumed without it",
	      ret == 0 && ima_ml_open_state(ml) == IMA_ML_DROPPED &&
	      ima_ml_count(ml) == 4 && ima_ml_violations(ml) == 1);
	CHECK("mac: the warning names the list and the dropped entry",
	      ret == 0 && ima_ml_open_warning(ml) &&
	      strstr(ima_ml_open_warning(ml), path) &&
	      strstr(ima_ml_open_warning(ml), "1 entry at the end"));
	if (!ret) {
		shared_ml = ml;
		for (long t = 0; t < 4; t++)
			pthread_create(&th[t], NULL, mac_adder, (void *)t);
		for (int t = 0; t < 4; t++)
			pthread_join(th[t], NULL);
		CHECK("mac: 400 adds from 4 threads", ima_ml_count(ml) == 404);
		ima_ml_close(ml);
	}
	ml = NULL;
	cfg.evm_ctx = ctx;
	ret = ima_ml_open(&cfg, &ml);
	CHECK("mac: after the threads the record covers the whole list",
	      ret == 0 && ima_ml_open_state(ml) == IMA_ML_RESUMED &&
	      ima_ml_count(ml) == 404 && !ima_ml_open_warning(ml));
	ima_ml_close(ml);
	{
		/* A long unproven tail is no add cut short: refused whole. */
		FILE *fp = fopen(path, "ab");

		for (int i = 0; fp && i < 65; i++)
			fwrite(file + e1, 1, e2, fp);
		if (fp)
			fclose(fp);
		ret = reopen(&cfg, ctx);
		CHECK("mac: 65 entries appended: refused, not 65 violations",
		      ret == -EBADMSG && strstr(uevm_last_error(), "65 entries"));
	}
	free(ed);
	free(file);
	free(mac);

	/* Without a key: said, and no record; in memory: nothing to say. */
	snprintf(path, sizeof(path), "%s/nokey-list", dir);
	cfg.path = path;
	cfg.evm_ctx = NULL;
	ml = NULL;
	ret = ima_ml_open(&cfg, &ml);
	CHECK("no key: the warning says the list carries no integrity",
	      ret == 0 && ima_ml_open_warning(ml) &&
	      strstr(ima_ml_open_warning(ml), "no integrity"));
	ima_ml_close(ml);
	snprintf(mpath, sizeof(mpath), "%s.mac", path);
	CHECK("no key: no record", access(mpath, F_OK) != 0);
	cfg.path = NULL;
	ml = NULL;
	ret = ima_ml_open(&cfg, &ml);
	CHECK("in memory: no warning", ret == 0 && !ima_ml_open_warning(ml));
	ima_ml_close(ml);
out:
	uevm_ctx_free(ctx);
	uevm_ctx_free(other);
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
	test_mac_list(dir);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
	}
	TEST_EXIT();
}
