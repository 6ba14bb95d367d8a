// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The measurement list (the kernel's ima_queue.c): an append-only list of
 * template entries, a hash table of template digests so that an identical
 * entry is never added twice to the same PCR, PCR extension (TPM or
 * software banks), and a file that keeps the list across restarts of its
 * owner.
 *
 * Adding takes one mutex (the kernel's ima_extend_list_mutex) around the
 * duplicate check, the append to the file, the extend and the link; the
 * entry itself is built and hashed before, without it.  Readers walk the
 * list without the mutex: entries are only ever appended, and published
 * with release stores after they are complete.
 *
 * What a reopened file is taken back for: the TPM proves it, or with
 * software PCRs a MAC record under a key derived from the EVM key
 * (ima_ml_mac.c); entries past what either proves are never trusted.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ima_ml_private.h"

#define IMA_HASH_BITS	10
#define DROP_MAX	64	/* unproven trailing entries dropped, at most */
#define IMA_HTABLE_SIZE	(1u << IMA_HASH_BITS)

struct ima_queue_entry {
	struct ima_template_entry *entry;
	_Atomic(struct ima_queue_entry *) later;
	struct ima_queue_entry *hnext;		/* hash chain, under the mutex */
};

/* Software banks, kept for every list: with a TPM they hold what the TPM
 * should hold; without one they are the PCRs. */
enum { SW_SHA1, SW_SHA256, SW_BANKS };
static const int sw_algo[SW_BANKS] = { UEVM_HASH_SHA1, UEVM_HASH_SHA256 };

struct ima_measurements {
	struct ima_ml_config cfg;	/* strings below are our copies */
	char *path, *template_name, *tcti;
	const struct ima_template_desc *default_desc;
	pthread_mutex_t lock;
	_Atomic(struct ima_queue_entry *) head;
	struct ima_queue_entry *tail;
	atomic_size_t count;
	atomic_ulong violations;
	struct ima_queue_entry *htable[IMA_HTABLE_SIZE];
	struct ima_ml_replay sw[SW_BANKS];
	struct ima_tpm *tpm;
	struct ima_ml_mac *mac;		/* software PCRs with a key */
	int fd;				/* the list's file, or -1 */
	off_t file_size;
	enum ima_ml_open_state state;
	char warning[768];		/* for ima_ml_open_warning */
	/* Entries dropped at open, recorded as violations once it is done. */
	struct dropped_entry {
		char *name;
		int pcr;
	} *dropped;
	size_t ndropped;
};

UEVM_EXPORT void ima_ml_config_init(struct ima_ml_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pcr = IMA_ML_DEFAULT_PCR;
	cfg->template_name = "ima-ng";
	cfg->hash_algo = UEVM_HASH_SHA256;
}

static unsigned int hash_key(const uint8_t *digest)
{
	return (digest[0] | (unsigned int)digest[1] << 8) % IMA_HTABLE_SIZE;
}

/* The kernel's ima_lookup_digest_entry: same template digest, same PCR. */
static bool lookup_digest_entry(struct ima_measurements *ml,
				const struct ima_template_entry *e)
{
	for (struct ima_queue_entry *qe = ml->htable[hash_key(e->digest_sha256)];
	     qe; qe = qe->hnext)
		if (qe->entry->pcr == e->pcr &&
		    !memcmp(qe->entry->digest_sha256, e->digest_sha256,
			    sizeof(e->digest_sha256)))
			return true;
	return false;
}

/* Link E into the list, the hash table and the software banks (under the
 * mutex, or before the list is shared).  Takes ownership of E. */
static int link_entry(struct ima_measurements *ml, struct ima_template_entry *e)
{
	struct ima_queue_entry *qe = calloc(1, sizeof(*qe));
	unsigned int key = hash_key(e->digest_sha256);
	int ret;

	if (!qe) {
		ima_template_entry_free(e);
		return uevm_err(ENOMEM, "out of memory for a measurement");
	}
	for (int b = 0; b < SW_BANKS; b++) {
		ret = ima_replay_extend(&ml->sw[b], e, false, true);
		if (ret) {
			free(qe);
			ima_template_entry_free(e);
			return ret;
		}
	}
	qe->entry = e;
	qe->hnext = ml->htable[key];
	ml->htable[key] = qe;
	if (ml->tail)
		atomic_store_explicit(&ml->tail->later, qe, memory_order_release);
	else
		atomic_store_explicit(&ml->head, qe, memory_order_release);
	ml->tail = qe;
	if (e->violation)
		atomic_fetch_add(&ml->violations, 1);
	atomic_fetch_add_explicit(&ml->count, 1, memory_order_release);
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Append E in the binary list format and make it durable. */
static int persist_entry(struct ima_measurements *ml,
			 const struct ima_template_entry *e)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int ret;

	if (ml->fd < 0)
		return 0;
	mem = open_memstream(&buf, &len);
	if (!mem)
		return uevm_err(ENOMEM, "out of memory for a measurement");
	ret = ima_entry_write_binary(e, UEVM_HASH_SHA1, mem);
	if (fclose(mem) && !ret)
		ret = uevm_err(ENOMEM, "out of memory for a measurement");
	if (!ret) {
		ret = write_all(ml->fd, buf, len);
		if (!ret && !ml->cfg.no_sync && fdatasync(ml->fd))
			ret = -errno;
		if (!ret && ml->mac)
			ret = ima_ml_mac_update(ml->mac, buf, len);
		if (ret) {
			/* Leave no torn entry behind for the next open. */
			if (ftruncate(ml->fd, ml->file_size))
				ret = uevm_err(-ret, "%s: cannot append: %s (and "
					       "cannot cut back: %s)", ml->path,
					       strerror(-ret), strerror(errno));
			else
				ret = uevm_err(-ret, "%s: cannot append: %s",
					       ml->path, strerror(-ret));
		} else {
			ml->file_size += (off_t)len;
		}
	}
	free(buf);
	return ret;
}

/* The MAC record for the list as it is now; after the entry it covers is
 * on disk, so that it never covers more than the file holds. */
static int write_mac(struct ima_measurements *ml)
{
	int ret = ima_ml_mac_write(ml->mac, ima_ml_count(ml), (uint64_t)ml->file_size,
				   &ml->sw[SW_SHA1], &ml->sw[SW_SHA256],
				   !ml->cfg.no_sync);

	/* Listed but not covered: as a failed TPM extend. */
	return ret ? -EIO : 0;
}

/* Add a built entry (takes ownership): 0 added, 1 duplicate, -errno. */
static int add_template_entry(struct ima_measurements *ml,
			      struct ima_template_entry *e)
{
	int ret, pcr = e->pcr;

	pthread_mutex_lock(&ml->lock);
	if (!e->violation && lookup_digest_entry(ml, e)) {
		pthread_mutex_unlock(&ml->lock);
		ima_template_entry_free(e);
		return 1;
	}
	ret = persist_entry(ml, e);
	if (ret) {
		pthread_mutex_unlock(&ml->lock);
		ima_template_entry_free(e);
		return ret;
	}
	ret = link_entry(ml, e);
	if (!ret && ml->tpm)
		ret = ima_tpm_extend(ml->tpm, pcr, e);
	if (!ret && ml->mac)
		ret = write_mac(ml);
	pthread_mutex_unlock(&ml->lock);
	return ret;
}

static int resolve_pcr(const struct ima_measurements *ml, int pcr)
{
	if (pcr < 0)
		return ml->cfg.pcr;
	if (pcr >= IMA_ML_NUM_PCRS)
		return uevm_err(EINVAL, "PCR %d out of range 0-%d", pcr,
				IMA_ML_NUM_PCRS - 1);
	return pcr;
}

static int add_event(struct ima_measurements *ml, const struct ima_event_data *ev,
		     const struct ima_template_desc *desc, int pcr)
{
	struct ima_event_data ev2 = *ev;
	struct ima_template_entry *e;
	int ret;

	if (!desc)
		return -EINVAL;
	pcr = resolve_pcr(ml, pcr);
	if (pcr < 0)
		return pcr;
	ev2.ima_hash_algo = ml->cfg.hash_algo;
	ret = ima_template_entry_new(desc, &ev2, pcr, &e);
	if (ret)
		return ret;
	return add_template_entry(ml, e);
}

UEVM_EXPORT int ima_ml_add_file(struct ima_measurements *ml,
				const struct ima_event_data *ev,
				const char *template_name, int pcr)
{
	const struct ima_template_desc *d = template_name ?
		ima_template_desc_lookup(template_name) : ml->default_desc;

	if (!ev)
		return uevm_err(EINVAL, "no event to measure");
	return add_event(ml, ev, d, pcr);
}

UEVM_EXPORT int ima_ml_add_violation(struct ima_measurements *ml,
				     const char *filename,
				     const char *template_name, int pcr)
{
	const struct ima_template_desc *d = template_name ?
		ima_template_desc_lookup(template_name) : ml->default_desc;
	struct ima_event_data ev = { .filename = filename, .violation = true };

	return add_event(ml, &ev, d, pcr);
}

UEVM_EXPORT int ima_ml_add_buffer(struct ima_measurements *ml,
				  const char *eventname, const void *buf,
				  size_t len, const char *template_name, int pcr)
{
	const struct ima_template_desc *d =
		ima_template_desc_lookup(template_name ? template_name : "ima-buf");
	uint8_t digest[UEVM_MAX_DIGEST_SIZE];
	struct ima_event_data ev = {
		.filename = eventname,
		.algo = ml->cfg.hash_algo,
		.digest = digest,
		.digest_len = uevm_hash_algo_digest_size(ml->cfg.hash_algo),
		.buf = buf,
		.buf_len = len,
	};
	uint8_t sha1[IMA_SHA1_DIGEST_SIZE];
	int ret;

	ret = uevm_hash_buffer(ml->cfg.hash_algo, buf, len, digest);
	if (!ret)
		ret = uevm_hash_buffer(UEVM_HASH_SHA1, buf, len, sha1);
	if (ret)
		return ret;
	ev.sha1_digest = sha1;
	return add_event(ml, &ev, d, pcr);
}

UEVM_EXPORT size_t ima_ml_count(const struct ima_measurements *ml)
{
	return atomic_load_explicit(&ml->count, memory_order_acquire);
}

UEVM_EXPORT unsigned long ima_ml_violations(const struct ima_measurements *ml)
{
	return atomic_load(&ml->violations);
}

UEVM_EXPORT bool ima_ml_has_tpm(const struct ima_measurements *ml)
{
	return ml->tpm != NULL;
}

UEVM_EXPORT enum ima_ml_open_state ima_ml_open_state(const struct ima_measurements *ml)
{
	return ml->state;
}

UEVM_EXPORT const char *ima_ml_open_warning(const struct ima_measurements *ml)
{
	return ml->warning[0] ? ml->warning : NULL;
}

UEVM_EXPORT int ima_ml_for_each_from(struct ima_measurements *ml,
				     struct ima_ml_cursor *c,
				     int (*fn)(const struct ima_template_entry *e,
					       void *arg),
				     void *arg)
{
	/* The count first: entries are linked before they are counted. */
	size_t n = atomic_load_explicit(&ml->count, memory_order_acquire);
	struct ima_queue_entry *qe;

	if (c->last)
		qe = atomic_load_explicit(&((struct ima_queue_entry *)c->last)->later,
					  memory_order_acquire);
	else
		qe = atomic_load_explicit(&ml->head, memory_order_acquire);
	while (c->count < n && qe) {
		int ret = fn(qe->entry, arg);

		if (ret)
			return ret;
		c->last = qe;
		c->count++;
		qe = atomic_load_explicit(&qe->later, memory_order_acquire);
	}
	return 0;
}

UEVM_EXPORT int ima_ml_for_each(struct ima_measurements *ml,
				int (*fn)(const struct ima_template_entry *e, void *arg),
				void *arg)
{
	struct ima_ml_cursor c = { NULL, 0 };

	return ima_ml_for_each_from(ml, &c, fn, arg);
}

UEVM_EXPORT int ima_ml_pcr_read(struct ima_measurements *ml, int pcr, int algo,
				uint8_t *out)
{
	unsigned int size = uevm_hash_algo_digest_size(algo);

	if (pcr < 0 || pcr >= IMA_ML_NUM_PCRS)
		return uevm_err(EINVAL, "PCR %d out of range", pcr);
	if (ml->tpm)
		return ima_tpm_pcr_read(ml->tpm, pcr, algo, out);
	for (int b = 0; b < SW_BANKS; b++)
		if (sw_algo[b] == algo) {
			pthread_mutex_lock(&ml->lock);
			memcpy(out, ml->sw[b].pcr[pcr], size);
			pthread_mutex_unlock(&ml->lock);
			return (int)size;
		}
	return uevm_err(EOPNOTSUPP, "no software PCR bank %s (only sha1, sha256)",
			uevm_hash_algo_name(algo) ? uevm_hash_algo_name(algo) : "?");
}

/* ---- open, reload, close ------------------------------------------------------ */

static void free_dropped(struct ima_measurements *ml)
{
	for (size_t i = 0; i < ml->ndropped; i++)
		free(ml->dropped[i].name);
	free(ml->dropped);
	ml->dropped = NULL;
	ml->ndropped = 0;
}

static void free_entries(struct ima_measurements *ml)
{
	struct ima_queue_entry *qe = atomic_load(&ml->head);

	while (qe) {
		struct ima_queue_entry *next = atomic_load(&qe->later);

		ima_template_entry_free(qe->entry);
		free(qe);
		qe = next;
	}
	atomic_store(&ml->head, NULL);
	ml->tail = NULL;
	atomic_store(&ml->count, 0);
	atomic_store(&ml->violations, 0);
	memset(ml->htable, 0, sizeof(ml->htable));
	for (int b = 0; b < SW_BANKS; b++)
		ima_replay_init(&ml->sw[b], sw_algo[b]);
}

UEVM_EXPORT void ima_ml_close(struct ima_measurements *ml)
{
	if (!ml)
		return;
	free_entries(ml);
	free_dropped(ml);
	ima_ml_mac_free(ml->mac);
	ima_tpm_close(ml->tpm);
	if (ml->fd >= 0)
		close(ml->fd);	/* also drops the lock */
	pthread_mutex_destroy(&ml->lock);
	free(ml->path);
	free(ml->template_name);
	free(ml->tcti);
	free(ml);
}

static int add_boot_aggregate(struct ima_measurements *ml)
{
	uint8_t digest[UEVM_MAX_DIGEST_SIZE], sha1[IMA_SHA1_DIGEST_SIZE];
	struct ima_event_data ev = { .filename = IMA_BOOT_AGGREGATE_NAME };
	int algo, ret;

	ret = ima_calc_boot_aggregate(ml->tpm, ml->cfg.hash_algo, &algo, digest, sha1);
	if (ret)
		return ret;
	ev.algo = algo;
	ev.digest = digest;
	ev.digest_len = uevm_hash_algo_digest_size(algo);
	ev.sha1_digest = sha1;
	ret = add_event(ml, &ev, ml->default_desc, ml->cfg.pcr);
	return ret < 0 ? ret : 0;
}

/* Open and lock the list's file; -EBUSY when another owner holds it. */
static int open_file(struct ima_measurements *ml)
{
	struct stat st;

	ml->fd = open(ml->path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
		      0600);
	if (ml->fd < 0)
		return uevm_err(errno, "%s: cannot open: %s", ml->path, strerror(errno));
	if (flock(ml->fd, LOCK_EX | LOCK_NB)) {
		int err = errno == EWOULDBLOCK ? EBUSY : errno;

		return uevm_err(err, "%s: in use by another owner: %s", ml->path,
				strerror(errno));
	}
	if (fstat(ml->fd, &st))
		return uevm_err(errno, "%s: %s", ml->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return uevm_err(EINVAL, "%s: not a regular file", ml->path);
	ml->file_size = st.st_size;
	return 0;
}

static int read_file(struct ima_measurements *ml, uint8_t **buf)
{
	size_t len = (size_t)ml->file_size, done = 0;

	*buf = malloc(len ? len : 1);
	if (!*buf)
		return uevm_err(ENOMEM, "%s: out of memory reading the list", ml->path);
	while (done < len) {
		ssize_t n = pread(ml->fd, *buf + done, len - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return uevm_err(n < 0 ? errno : EIO, "%s: cannot read: %s",
					ml->path, n < 0 ? strerror(errno) : "file shrank");
		done += (size_t)n;
	}
	return 0;
}

struct load_args {
	struct ima_measurements *ml;
	const size_t *good;	/* ima_ml_parse_owned's GOOD_LEN */
	size_t last;		/* where the last entry linked starts */
};

static int load_one(struct ima_template_entry *e, size_t index, bool ok, void *arg)
{
	struct load_args *a = arg;

	if (!ok) {
		ima_template_entry_free(e);
		return uevm_err(EBADMSG, "%s: entry %zu: the template digest does "
				"not match its data", a->ml->path, index + 1);
	}
	a->last = *a->good;
	return link_entry(a->ml, e);
}

/*
 * Link the entries of BUF[0:LEN].  *KEEP: the end of the last complete one
 * (a torn last entry, from a crash during a write, is left out); *LAST:
 * where that entry starts.
 */
static int load_entries(struct ima_measurements *ml, const uint8_t *buf,
			size_t len, size_t *keep, size_t *last)
{
	struct load_args a = { ml, keep, 0 };
	long n = ima_ml_parse_owned(buf, len, UEVM_HASH_SHA1, load_one, &a, keep);

	if (n == -ENODATA)
		n = 0;
	*last = a.last;
	if (n < 0 && strncmp(uevm_last_error(), ml->path, strlen(ml->path))) {
		char why[384];

		/* A parse error does not name the file yet. */
		snprintf(why, sizeof(why), "%s", uevm_last_error());
		return uevm_err((int)-n, "%s: %s", ml->path, why);
	}
	return n < 0 ? (int)n : 0;
}

/* Cut the file back to its first LEN bytes. */
static int cut_file(struct ima_measurements *ml, size_t len)
{
	if (ftruncate(ml->fd, (off_t)len) ||
	    (!ml->cfg.no_sync && fdatasync(ml->fd)))
		return uevm_err(errno, "%s: cannot cut the list back to %zu bytes: %s",
				ml->path, len, strerror(errno));
	ml->file_size = (off_t)len;
	return 0;
}

/* Replay the first N entries into bank ALGO. */
static int replay_prefix(struct ima_measurements *ml, size_t n, int algo,
			 struct ima_ml_replay *r)
{
	struct ima_queue_entry *qe = atomic_load(&ml->head);

	ima_replay_init(r, algo);
	for (size_t i = 0; i < n && qe; i++, qe = atomic_load(&qe->later)) {
		int ret = ima_replay_extend(r, qe->entry, false, true);

		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Compare the TPM with the replay of the first N entries, for every bank
 * this build can compute and every PCR the whole list uses.  1 equal,
 * 0 different, -errno.  N = 0 asks whether those PCRs are in their reset
 * state.
 */
static int tpm_matches(struct ima_measurements *ml, size_t n,
		       char *why, size_t why_len)
{
	uint32_t banks = ima_tpm_banks(ml->tpm);
	uint32_t used = ml->sw[SW_SHA1].pcr_mask;

	for (int algo = 0; algo < 32; algo++) {
		struct ima_ml_replay r;
		unsigned int size = uevm_hash_algo_digest_size(algo);
		int ret;

		if (!(banks & (1u << algo)))
			continue;
		ret = replay_prefix(ml, n, algo, &r);
		if (ret)
			return ret;
		for (int pcr = 0; pcr < IMA_ML_NUM_PCRS; pcr++) {
			uint8_t tpm[UEVM_MAX_DIGEST_SIZE];

			if (!(used & (1u << pcr)))
				continue;
			ret = ima_tpm_pcr_read(ml->tpm, pcr, algo, tpm);
			if (ret < 0)
				return ret;
			if (memcmp(tpm, r.pcr[pcr], size)) {
				snprintf(why, why_len, "PCR %d of the %s bank", pcr,
					 uevm_hash_algo_name(algo));
				return 0;
			}
		}
	}
	return 1;
}

/* Move a stale file aside and start a new one. */
static int rotate_file(struct ima_measurements *ml)
{
	size_t len = strlen(ml->path) + sizeof(".prev");
	char *prev = malloc(len);
	int ret = 0;

	if (!prev)
		return uevm_err(ENOMEM, "out of memory");
	snprintf(prev, len, "%s.prev", ml->path);
	if (rename(ml->path, prev))
		ret = uevm_err(errno, "%s: cannot move to %s: %s", ml->path, prev,
			       strerror(errno));
	free(prev);
	if (ret)
		return ret;
	close(ml->fd);
	ml->fd = -1;
	free_entries(ml);
	return open_file(ml);
}

/*
 * A reopened list and the TPM.  An entry is appended to the file, then
 * extended, and only then is the open it measures answered; so the TPM may
 * lack at most the last entry, whose open was never answered (or was, after
 * a failed extend, when the TPM never saw it either).  Such an entry is
 * not completed: an offline attacker can append an entry of their choice
 * to the file, and nothing tells it from an add cut short.  *PROVEN gets
 * the bytes the TPM vouches for (KEEP, or LAST without the last entry).
 */
static int reconcile_tpm(struct ima_measurements *ml, size_t keep, size_t last,
			 size_t *proven)
{
	size_t n = ima_ml_count(ml);
	char why[96] = "", why0[96];
	int ret;

	ret = tpm_matches(ml, n, why, sizeof(why));
	if (ret < 0)
		return ret;
	if (ret) {
		*proven = keep;
		return 0;
	}
	ret = tpm_matches(ml, n - 1, why0, sizeof(why0));
	if (ret < 0)
		return ret;
	if (ret) {
		*proven = last;
		return 0;
	}
	if (ml->cfg.rotate_stale) {
		ret = tpm_matches(ml, 0, why0, sizeof(why0));
		if (ret < 0)
			return ret;
		if (ret) {
			ret = rotate_file(ml);
			if (ret)
				return ret;
			ml->state = IMA_ML_ROTATED;
			return add_boot_aggregate(ml);
		}
	}
	return uevm_err(EBADMSG, "%s does not describe the TPM: %s differs from "
			"the list's replay (the TPM was reset or the list was "
			"changed)", ml->path, why);
}

/* The name an entry records ('n-ng' or 'n'), for its violation. */
static char *entry_event_name(const struct ima_template_entry *e)
{
	for (int i = 0; i < ima_entry_num_fields(e); i++) {
		const char *id = ima_entry_field_id(e, i);
		const struct ima_field_data *f = ima_entry_field(e, i);

		if (!strcmp(id, "n-ng") || !strcmp(id, "n"))
			return strndup((const char *)f->data, f->len);
	}
	return strdup("(an entry of an unknown template)");
}

static int note_dropped(struct ima_template_entry *e, size_t index, bool ok,
			void *arg)
{
	struct ima_measurements *ml = arg;
	struct dropped_entry *d = realloc(ml->dropped,
					  (ml->ndropped + 1) * sizeof(*d));
	char *name = d ? entry_event_name(e) : NULL;
	int pcr = e->pcr;

	(void)index;
	(void)ok;
	ima_template_entry_free(e);
	if (d)
		ml->dropped = d;
	if (!name)
		return uevm_err(ENOMEM, "out of memory");
	d[ml->ndropped].name = name;
	d[ml->ndropped++].pcr = pcr;
	return 0;
}

/*
 * Take the list back without its entries past PROVEN (up to KEEP), which
 * nothing vouches for: cut them from the file, keep their names for the
 * violations ima_ml_open records, and say so.
 */
static int drop_tail(struct ima_measurements *ml, const uint8_t *buf,
		     size_t proven, size_t keep)
{
	size_t k, l;
	long n = ima_ml_parse_owned(buf + proven, keep - proven, UEVM_HASH_SHA1,
				    note_dropped, ml, NULL);
	int ret;

	if (n < 0)
		return (int)n;
	/* An add cut short leaves one entry (a few if record writes failed):
	 * a long tail was written by someone else, and each violation costs
	 * a synchronous append. */
	if (ml->ndropped > DROP_MAX)
		return uevm_err(EBADMSG, "%s: %zu entries at the end are not proven "
				"by %s: far more than an add cut short leaves; "
				"the list was changed", ml->path, ml->ndropped,
				ml->tpm ? "the TPM" : "its MAC record");
	ret = cut_file(ml, proven);
	if (ret)
		return ret;
	free_entries(ml);
	ret = load_entries(ml, buf, proven, &k, &l);
	if (ret)
		return ret;
	snprintf(ml->warning, sizeof(ml->warning),
		 "%s: %zu %s at the end %s not proven by %s%s%s (an add cut "
		 "short, or written offline): dropped, and recorded as %s",
		 ml->path, ml->ndropped, ml->ndropped == 1 ? "entry" : "entries",
		 ml->ndropped == 1 ? "was" : "were",
		 ml->tpm ? "the TPM" : "its MAC record ", ml->tpm ? "" : ml->path,
		 ml->tpm ? "" : ".mac",
		 ml->ndropped == 1 ? "a violation" : "violations");
	return 0;
}

/* Record each dropped entry as a violation: its PCR can no longer be
 * trusted to say whether that file was opened. */
static int add_dropped_violations(struct ima_measurements *ml)
{
	int ret = 0;

	for (size_t i = 0; i < ml->ndropped && !ret; i++) {
		ret = ima_ml_add_violation(ml, ml->dropped[i].name, NULL,
					   ml->dropped[i].pcr);
		ret = ret < 0 ? ret : 0;
	}
	free_dropped(ml);
	return ret;
}

/* With software PCRs: a MAC record when there is a key, a warning when
 * there is none. */
static int setup_mac(struct ima_measurements *ml)
{
	const struct uevm_ctx *ctx = ml->cfg.evm_ctx;
	int ret = ima_ml_mac_open(ctx ? ctx->key : NULL, ml->path, &ml->mac);

	if (!ret && !ml->mac)
		snprintf(ml->warning, sizeof(ml->warning),
			 "%s: software PCRs without a key: the list carries no "
			 "integrity (an entry deleted, reordered or added while "
			 "its owner is stopped cannot be detected, and nothing "
			 "shows the software PCRs)", ml->path);
	return ret;
}

/* Open the list's file and take back what the TPM or the MAC proves. */
static int open_list(struct ima_measurements *ml)
{
	uint8_t *buf = NULL;
	size_t keep = 0, last = 0, proven;
	int ret = open_file(ml);

	if (!ret && !ml->tpm)
		ret = setup_mac(ml);
	if (!ret)
		ret = read_file(ml, &buf);
	if (!ret)
		ret = load_entries(ml, buf, (size_t)ml->file_size, &keep, &last);
	if (ret)
		goto out;
	proven = keep;
	if (ml->mac)
		ret = ima_ml_mac_check(ml->mac, ml->path, buf, keep, &proven);
	else if (ml->tpm && ima_ml_count(ml))
		ret = reconcile_tpm(ml, keep, last, &proven);
	if (ret || ml->state == IMA_ML_ROTATED)
		goto out;
	if (proven < keep)
		ret = drop_tail(ml, buf, proven, keep);
	else if (keep < (size_t)ml->file_size)
		ret = cut_file(ml, keep);
	if (!ret && ima_ml_count(ml))
		ml->state = ml->ndropped ? IMA_ML_DROPPED : IMA_ML_RESUMED;
out:
	free(buf);
	return ret;
}

/* A new list must start from PCRs in their reset state, or it could
 * never be verified. */
static int check_fresh_pcr(struct ima_measurements *ml)
{
	uint32_t banks = ima_tpm_banks(ml->tpm);

	for (int algo = 0; algo < 32; algo++) {
		uint8_t v[UEVM_MAX_DIGEST_SIZE], zero[UEVM_MAX_DIGEST_SIZE] = { 0 };
		int ret;

		if (!(banks & (1u << algo)))
			continue;
		ret = ima_tpm_pcr_read(ml->tpm, ml->cfg.pcr, algo, v);
		if (ret < 0)
			return ret;
		if (memcmp(v, zero, (size_t)ret))
			return uevm_err(EBUSY, "TPM PCR %d (%s) is not in its reset "
					"state: a new list extended there could "
					"never be verified (another list uses it?)",
					ml->cfg.pcr, uevm_hash_algo_name(algo));
	}
	return 0;
}

static int check_config(const struct ima_ml_config *cfg)
{
	if (cfg->pcr < 0 || cfg->pcr >= IMA_ML_NUM_PCRS)
		return uevm_err(EINVAL, "PCR %d out of range 0-%d", cfg->pcr,
				IMA_ML_NUM_PCRS - 1);
	if (!uevm_hash_algo_available(cfg->hash_algo) ||
	    uevm_hash_algo_digest_size(cfg->hash_algo) > UEVM_MAX_DIGEST_SIZE)
		return uevm_err(EINVAL, "hash algorithm %d is not available",
				cfg->hash_algo);
	return 0;
}

static char *dup_opt(const char *s, int *ret)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*ret = uevm_err(ENOMEM, "out of memory");
	return d;
}

UEVM_EXPORT int ima_ml_open(const struct ima_ml_config *cfg,
			    struct ima_measurements **out)
{
	struct ima_measurements *ml;
	int ret = check_config(cfg);

	*out = NULL;
	if (ret)
		return ret;
	ml = calloc(1, sizeof(*ml));
	if (!ml)
		return uevm_err(ENOMEM, "out of memory for a measurement list");
	ml->fd = -1;
	pthread_mutex_init(&ml->lock, NULL);
	for (int b = 0; b < SW_BANKS; b++)
		ima_replay_init(&ml->sw[b], sw_algo[b]);
	ml->cfg = *cfg;
	ml->path = dup_opt(cfg->path, &ret);
	ml->template_name = dup_opt(cfg->template_name ? cfg->template_name
				    : "ima-ng", &ret);
	ml->tcti = dup_opt(cfg->tcti, &ret);
	if (ret)
		goto fail;
	ml->cfg.path = ml->path;
	ml->cfg.template_name = ml->template_name;
	ml->cfg.tcti = ml->tcti;
	ml->default_desc = ima_template_desc_lookup(ml->template_name);
	if (!ml->default_desc) {
		ret = -EINVAL;
		goto fail;
	}
	if (ml->tcti) {
		ret = ima_tpm_open(ml->tcti, &ml->tpm);
		if (ret)
			goto fail;
	}
	if (ml->path) {
		ret = open_list(ml);
		if (ret)
			goto fail;
	}
	if (!ima_ml_count(ml)) {
		ret = ml->tpm ? check_fresh_pcr(ml) : 0;
		if (!ret)
			ret = add_boot_aggregate(ml);
		ml->state = IMA_ML_CREATED;
	}
	if (!ret)
		ret = add_dropped_violations(ml);
	if (ret)
		goto fail;
	ml->cfg.evm_ctx = NULL;		/* needed for the open only */
	*out = ml;
	return 0;
fail:
	ima_ml_close(ml);
	return ret;
}
