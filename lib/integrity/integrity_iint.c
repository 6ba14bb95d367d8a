// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The integrity cache: what is known about an inode's integrity, keyed by
 * (device, inode, generation) and valid while the file's change stamp
 * (ctime, mtime, size) stays the same.  The table is split in shards with
 * a lock each, so lookups of different inodes rarely meet; each entry has
 * its own mutex so one inode is appraised by one thread at a time.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "lib_private.h"
#include "integrity.h"

#define NSHARDS 256
#define DEFAULT_CAPACITY 65536
#define IMA_STATUS_SLOTS 4

struct integrity_iint_cache {
	struct integrity_iint_cache *next;	/* shard chain */
	uint64_t dev;
	uint64_t ino;
	uint32_t generation;
	uint32_t flags;
	uint64_t measured_pcrs;
	struct integrity_stamp stamp;
	uint8_t *digest;		/* collected digest, digest_algo's size */
	atomic_uint refs;
	uint32_t lru;			/* last use, from cache->clock */
	uint8_t evm_status;
	uint8_t ima_status[IMA_STATUS_SLOTS];	/* file, mmap, bprm, creds */
	int8_t digest_algo;
	uint16_t writers;		/* opens for write not yet closed */
	pthread_mutex_t lock;
};

_Static_assert(sizeof(struct integrity_iint_cache) <= 128,
	       "an iint entry must stay within 128 bytes");

struct shard {
	pthread_mutex_t lock;
	struct integrity_iint_cache **buckets;
	size_t nbuckets;
	size_t count;
};

struct integrity_cache {
	struct shard shards[NSHARDS];
	size_t per_shard;
	atomic_uint clock;
	atomic_uint epoch;		/* bumped by integrity_cache_invalidate_all */
	pthread_mutex_t inval_lock;	/* one invalidation at a time: odd = walking */
	atomic_ullong lookups, hits, inserts, evictions, invalidations;
};

static uint64_t mix(uint64_t dev, uint64_t ino, uint32_t gen)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ULL ^ dev * 0xc2b2ae3d27d4eb4fULL ^ gen;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 29);
}

UEVM_EXPORT int integrity_cache_new(size_t capacity,
				    struct integrity_cache **out)
{
	struct integrity_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return uevm_err(ENOMEM, "out of memory");
	if (!capacity)
		capacity = DEFAULT_CAPACITY;
	c->per_shard = capacity / NSHARDS ? capacity / NSHARDS : 1;
	pthread_mutex_init(&c->inval_lock, NULL);
	for (int i = 0; i < NSHARDS; i++) {
		struct shard *s = &c->shards[i];

		pthread_mutex_init(&s->lock, NULL);
		/* Load factor about 1 when full. */
		s->nbuckets = c->per_shard < 8 ? 8 : c->per_shard;
		s->buckets = calloc(s->nbuckets, sizeof(*s->buckets));
		if (!s->buckets) {
			c->shards[i].nbuckets = 0;
			integrity_cache_free(c);
			return uevm_err(ENOMEM, "out of memory");
		}
	}
	*out = c;
	return 0;
}

static void iint_free(struct integrity_iint_cache *e)
{
	pthread_mutex_destroy(&e->lock);
	free(e->digest);
	free(e);
}

UEVM_EXPORT void integrity_cache_free(struct integrity_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < NSHARDS; i++) {
		struct shard *s = &c->shards[i];

		for (size_t b = 0; b < s->nbuckets && s->buckets; b++) {
			struct integrity_iint_cache *e = s->buckets[b], *n;

			for (; e; e = n) {
				n = e->next;
				iint_free(e);
			}
		}
		free(s->buckets);
		pthread_mutex_destroy(&s->lock);
	}
	pthread_mutex_destroy(&c->inval_lock);
	free(c);
}

static void reset_results(struct integrity_iint_cache *e)
{
	/* What survives a change: facts about how the file came to be. */
	e->flags &= IMA_NEW_FILE | EVM_NEW_FILE | IMA_UPDATE_XATTR | IMA_MUST_MEASURE |
		    IMA_EMITTED_OPENWRITERS;
	e->measured_pcrs = 0;
	e->evm_status = INTEGRITY_UNKNOWN;
	for (int i = 0; i < IMA_STATUS_SLOTS; i++)
		e->ima_status[i] = INTEGRITY_UNKNOWN;
	e->digest_algo = -1;
}

/* Evict the least recently used unreferenced entry of a full shard. */
static void evict_one(struct integrity_cache *c, struct shard *s)
{
	struct integrity_iint_cache **victim = NULL;
	uint32_t now = atomic_load(&c->clock), best_age = 0;

	for (size_t b = 0; b < s->nbuckets; b++)
		for (struct integrity_iint_cache **pp = &s->buckets[b]; *pp;
		     pp = &(*pp)->next) {
			uint32_t age = now - (*pp)->lru;

			/* In use, or open for writing: its state matters. */
			if (atomic_load(&(*pp)->refs) == 0 && !(*pp)->writers &&
			    (!victim || age > best_age)) {
				victim = pp;
				best_age = age;
			}
		}
	if (victim) {
		struct integrity_iint_cache *e = *victim;

		*victim = e->next;
		s->count--;
		atomic_fetch_add(&c->evictions, 1);
		iint_free(e);
	}
}

static struct integrity_iint_cache *lookup(struct integrity_cache *c,
					   dev_t dev, ino_t ino, uint32_t gen,
					   bool create)
{
	uint64_t h = mix(dev, ino, gen);
	struct shard *s = &c->shards[h % NSHARDS];
	size_t b = (h / NSHARDS) % s->nbuckets;
	struct integrity_iint_cache *e;

	atomic_fetch_add(&c->lookups, 1);
	pthread_mutex_lock(&s->lock);
	for (e = s->buckets[b]; e; e = e->next)
		if (e->ino == ino && e->dev == dev && e->generation == gen)
			break;
	if (e) {
		atomic_fetch_add(&c->hits, 1);
	} else if (create) {
		if (s->count >= c->per_shard)
			evict_one(c, s);
		e = calloc(1, sizeof(*e));
		if (e) {
			e->dev = dev;
			e->ino = ino;
			e->generation = gen;
			reset_results(e);
			e->stamp.size = UINT64_MAX;	/* never matches: fill on first use */
			pthread_mutex_init(&e->lock, NULL);
			e->next = s->buckets[b];
			s->buckets[b] = e;
			s->count++;
			atomic_fetch_add(&c->inserts, 1);
		}
	}
	if (e) {
		atomic_fetch_add(&e->refs, 1);
		e->lru = atomic_fetch_add(&c->clock, 1);
	}
	pthread_mutex_unlock(&s->lock);
	return e;
}

static bool same_stamp(const struct integrity_stamp *a,
		       const struct integrity_stamp *b)
{
	return a->ctime_ns == b->ctime_ns && a->mtime_ns == b->mtime_ns &&
	       a->size == b->size;
}

UEVM_EXPORT struct integrity_iint_cache *
integrity_iint_get(struct integrity_cache *c, dev_t dev, ino_t ino,
		   uint32_t generation, const struct integrity_stamp *st)
{
	struct integrity_iint_cache *e = lookup(c, dev, ino, generation, true);

	if (!e || !st)
		return e;
	pthread_mutex_lock(&e->lock);
	if (!same_stamp(&e->stamp, st)) {
		/* The file changed since we last looked: nothing cached holds. */
		if (e->stamp.size != UINT64_MAX)
			atomic_fetch_add(&c->invalidations, 1);
		reset_results(e);
		e->stamp = *st;
	}
	pthread_mutex_unlock(&e->lock);
	return e;
}

UEVM_EXPORT struct integrity_iint_cache *
integrity_iint_find(struct integrity_cache *c, dev_t dev, ino_t ino,
		    uint32_t generation)
{
	return lookup(c, dev, ino, generation, false);
}

UEVM_EXPORT void integrity_iint_put(struct integrity_cache *c,
				    struct integrity_iint_cache *iint)
{
	(void)c;
	if (iint)
		atomic_fetch_sub(&iint->refs, 1);
}

UEVM_EXPORT void integrity_iint_forget(struct integrity_cache *c, dev_t dev,
				       ino_t ino, uint32_t generation)
{
	uint64_t h = mix(dev, ino, generation);
	struct shard *s = &c->shards[h % NSHARDS];
	size_t b = (h / NSHARDS) % s->nbuckets;

	pthread_mutex_lock(&s->lock);
	for (struct integrity_iint_cache **pp = &s->buckets[b]; *pp;
	     pp = &(*pp)->next) {
		struct integrity_iint_cache *e = *pp;

		if (e->ino != ino || e->dev != dev || e->generation != generation)
			continue;
		if (atomic_load(&e->refs) == 0) {
			*pp = e->next;
			s->count--;
			iint_free(e);
		} else {
			/* In use: make its results stale instead. */
			pthread_mutex_lock(&e->lock);
			reset_results(e);
			e->stamp.size = UINT64_MAX;
			pthread_mutex_unlock(&e->lock);
		}
		break;
	}
	pthread_mutex_unlock(&s->lock);
}

UEVM_EXPORT void integrity_cache_stats(struct integrity_cache *c,
				       struct integrity_cache_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (int i = 0; i < NSHARDS; i++) {
		pthread_mutex_lock(&c->shards[i].lock);
		st->entries += c->shards[i].count;
		pthread_mutex_unlock(&c->shards[i].lock);
	}
	st->capacity = c->per_shard * NSHARDS;
	st->lookups = atomic_load(&c->lookups);
	st->hits = atomic_load(&c->hits);
	st->inserts = atomic_load(&c->inserts);
	st->evictions = atomic_load(&c->evictions);
	st->invalidations = atomic_load(&c->invalidations);
	st->entry_size = sizeof(struct integrity_iint_cache);
}

UEVM_EXPORT void integrity_iint_lock(struct integrity_iint_cache *iint)
{
	pthread_mutex_lock(&iint->lock);
}

UEVM_EXPORT void integrity_iint_unlock(struct integrity_iint_cache *iint)
{
	pthread_mutex_unlock(&iint->lock);
}

UEVM_EXPORT enum integrity_status
integrity_iint_evm_status(const struct integrity_iint_cache *iint)
{
	return (enum integrity_status)iint->evm_status;
}

UEVM_EXPORT void integrity_iint_set_evm_status(struct integrity_iint_cache *iint,
					       enum integrity_status s)
{
	iint->evm_status = (uint8_t)s;
}

/* The kernel keeps one status per hook family. */
static int ima_slot(int func)
{
	switch (func) {
	case 2: /* MMAP_CHECK */
	case 3: /* MMAP_CHECK_REQPROT */
		return 1;
	case 4: /* BPRM_CHECK */
		return 2;
	case 5: /* CREDS_CHECK */
		return 3;
	default:
		return 0;
	}
}

UEVM_EXPORT enum integrity_status
integrity_iint_ima_status(const struct integrity_iint_cache *iint, int func)
{
	return (enum integrity_status)iint->ima_status[ima_slot(func)];
}

UEVM_EXPORT void integrity_iint_set_ima_status(struct integrity_iint_cache *iint,
					       int func, enum integrity_status s)
{
	iint->ima_status[ima_slot(func)] = (uint8_t)s;
}

UEVM_EXPORT uint32_t integrity_iint_flags(const struct integrity_iint_cache *iint)
{
	return iint->flags;
}

UEVM_EXPORT void integrity_iint_set_flags(struct integrity_iint_cache *iint,
					  uint32_t set, uint32_t clear)
{
	iint->flags = (iint->flags & ~clear) | set;
}

UEVM_EXPORT uint64_t
integrity_iint_measured_pcrs(const struct integrity_iint_cache *iint)
{
	return iint->measured_pcrs;
}

UEVM_EXPORT void integrity_iint_set_measured_pcr(struct integrity_iint_cache *iint,
						 int pcr)
{
	if (pcr >= 0 && pcr < 64)
		iint->measured_pcrs |= 1ULL << pcr;
}

UEVM_EXPORT int integrity_iint_digest(const struct integrity_iint_cache *iint,
				      uint8_t *digest, int *algo)
{
	*algo = iint->digest_algo;
	if (iint->digest_algo < 0 || !iint->digest)
		return -ENODATA;
	memcpy(digest, iint->digest, uevm_hash_algo_digest_size(iint->digest_algo));
	return 0;
}

UEVM_EXPORT int integrity_iint_set_digest(struct integrity_iint_cache *iint,
					  int algo, const uint8_t *digest)
{
	unsigned int size = uevm_hash_algo_digest_size(algo);
	uint8_t *d;

	if (!size)
		return uevm_err(EINVAL, "unknown hash algorithm %d", algo);
	d = iint->digest_algo >= 0 &&
		    uevm_hash_algo_digest_size(iint->digest_algo) == size ?
		    iint->digest : realloc(iint->digest, size);
	if (!d)
		return uevm_err(ENOMEM, "out of memory");
	memcpy(d, digest, size);
	iint->digest = d;
	iint->digest_algo = (int8_t)algo;
	return 0;
}

UEVM_EXPORT unsigned int integrity_iint_writers(const struct integrity_iint_cache *iint)
{
	return iint->writers;
}

UEVM_EXPORT void integrity_iint_add_writer(struct integrity_iint_cache *iint,
					   int delta)
{
	if (delta < 0 && iint->writers == 0)
		return;	/* a close we did not see opening: saturate */
	if (delta > 0 && iint->writers == UINT16_MAX)
		return;
	iint->writers = (uint16_t)(iint->writers + delta);
	/* The writers are gone: the next ones are a new open_writers case. */
	if (!iint->writers)
		iint->flags &= ~(uint32_t)IMA_EMITTED_OPENWRITERS;
}

UEVM_EXPORT void integrity_iint_reset(struct integrity_iint_cache *iint)
{
	reset_results(iint);
}

UEVM_EXPORT bool integrity_iint_stamp_is(const struct integrity_iint_cache *iint,
					 const struct integrity_stamp *st)
{
	return same_stamp(&iint->stamp, st);
}

UEVM_EXPORT void integrity_iint_set_stamp(struct integrity_iint_cache *iint,
					  const struct integrity_stamp *st)
{
	iint->stamp = *st;
}

UEVM_EXPORT void integrity_stamp_of(const struct stat *st,
				    struct integrity_stamp *out)
{
	out->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
	out->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
	out->size = (uint64_t)st->st_size;
}

/* New rules (or EVM initialised): the verdicts go, the facts about the
 * content stay - its digest and the stamp it was taken under, the
 * writers, how the file came to be.  The next use appraises again, from
 * the cached digest. */
static void reset_verdicts(struct integrity_iint_cache *e)
{
	e->flags &= IMA_NEW_FILE | EVM_NEW_FILE | IMA_UPDATE_XATTR | IMA_MUST_MEASURE |
		    IMA_EMITTED_OPENWRITERS | IMA_DIGSIG;
	e->measured_pcrs = 0;
	e->evm_status = INTEGRITY_UNKNOWN;
	for (int i = 0; i < IMA_STATUS_SLOTS; i++)
		e->ima_status[i] = INTEGRITY_UNKNOWN;
	/* A writer may hold a shared mapping: stores through it change the
	 * content and no stamp; the digest is taken again from what the file
	 * holds now. */
	if (e->writers)
		e->digest_algo = -1;
}

/* Every entry's verdicts go stale (EVM initialised after files were
 * appraised without it, a new policy): each is appraised afresh on its
 * next use.  The epoch moves first: an appraisal that began before it
 * (under the old rules) stores no verdict when it ends (ima_file_check
 * compares integrity_cache_epoch), and it is odd until the walk is done:
 * an entry not yet walked still shows its old verdict (uevmd's fastpath
 * takes back a mark placed meanwhile).  An entry busy with an appraisal (its
 * lock held for a whole hash) is not waited for under the shard's lock,
 * which every lookup of the shard takes: it is done after the walk. */
UEVM_EXPORT void integrity_cache_invalidate_all(struct integrity_cache *c)
{
	struct integrity_iint_cache **busy = NULL;
	size_t nbusy = 0, cap = 0;

	pthread_mutex_lock(&c->inval_lock);
	atomic_fetch_add(&c->epoch, 1);
	for (int i = 0; i < NSHARDS; i++) {
		struct shard *s = &c->shards[i];

		pthread_mutex_lock(&s->lock);
		for (size_t b = 0; b < s->nbuckets; b++)
			for (struct integrity_iint_cache *e = s->buckets[b]; e; e = e->next) {
				atomic_fetch_add(&c->invalidations, 1);
				if (pthread_mutex_trylock(&e->lock) == 0) {
					reset_verdicts(e);
					pthread_mutex_unlock(&e->lock);
					continue;
				}
				if (nbusy == cap) {
					size_t ncap = cap ? 2 * cap : 16;
					void *n = realloc(busy, ncap * sizeof(*busy));

					if (!n) {	/* no memory: wait here */
						pthread_mutex_lock(&e->lock);
						reset_verdicts(e);
						pthread_mutex_unlock(&e->lock);
						continue;
					}
					busy = n;
					cap = ncap;
				}
				atomic_fetch_add(&e->refs, 1);	/* not evicted meanwhile */
				busy[nbusy++] = e;
			}
		pthread_mutex_unlock(&s->lock);
	}
	for (size_t i = 0; i < nbusy; i++) {
		pthread_mutex_lock(&busy[i]->lock);
		reset_verdicts(busy[i]);
		pthread_mutex_unlock(&busy[i]->lock);
		atomic_fetch_sub(&busy[i]->refs, 1);
	}
	free(busy);
	atomic_fetch_add(&c->epoch, 1);	/* even again: walked */
	pthread_mutex_unlock(&c->inval_lock);
}

uint32_t integrity_cache_epoch(struct integrity_cache *c)
{
	return atomic_load(&c->epoch);
}
