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
 *
 * A list with software PCRs has one owner, which holds an exclusive flock
 * on the file for its lifetime: its PCRs live in that process.
 *
 * A list with a TPM and a file is the host's (the TPM's PCR can hold the
 * replay of one list only, and a verifier such as Keylime attests PCR 10
 * alone): every process that opens the path is one of its writers (uevmd,
 * each uevmfs mount, `uevm measurements add`).  There is no lifetime lock;
 * each add takes the flock for: catch up (read what the others appended
 * since this process last looked, parse it, check it against the TPM,
 * link it and replay it into the software banks), the duplicate check,
 * append, extend, release.  Under the lock exactly one entry is in
 * flight, as with a single owner, so the rule for a resume holds for
 * every catch-up: the TPM may lack the file's last entry only, when its
 * writer died between append and extend (or after a failed extend).  A
 * catch-up that read anything compares the replay with the TPM (one read
 * per bank; nothing is read when nobody else appended): equal, the
 * entries are linked; equal without the file's last entry, that entry is
 * cut from the file and a violation under its name takes its place (as
 * at a resume: the same on disk as an entry written by someone else);
 * anything else is refused, and every add fails, naming the list.  Entries
 * are linked only after that check: readers walk the list without locks,
 * so nothing linked is ever taken back.
 * ima_ml_refresh is a catch-up without an add, for readers of the list.
 *
 * An add that fails on the host list (lock, catch-up refused, append,
 * extend) leaves an access in no list; the front-ends allow it anyway, as
 * the kernel does, so the failure must show in the TPM instead:
 * host_invalidate extends the entry's PCR and the list's with zeros,
 * which no list replays (an entry extends a hash, a violation 0xff..),
 * and the add returns ENOTRECOVERABLE (audited as host-list-invalidated,
 * naming the file).  From then on until a reboot no verifier passes the
 * list.  A failed extend leaves its entry in the file, as the kernel
 * leaves it listed: if the TPM took neither, the next catch-up finds the
 * TPM lacking the last entry and records a violation under its name.
 *
 * The kernel's list: a new host list on a PCR that is not in its reset
 * state starts with a copy of the kernel's binary list (byte for byte, its
 * own boot_aggregate first) when its replay equals the TPM in every bank.
 * A list whose first entry is the kernel's first one is adopted; every
 * catch-up reads the kernel's list from the offset taken so far and
 * appends what the kernel added since: the kernel extended those already.
 * Copies the other writers made are recognised by their bytes, in order;
 * but a uevm entry of a file the kernel measured too can be the same
 * bytes as the kernel's (ima-ng, same path and digest), so the bytes give
 * only the most copies there can be.  The TPM decides: the catch-up tries
 * that many, then one fewer (the kernel's entry still to pull), and so on
 * (KERNEL_TWINS at most), and takes the first that replays.
 * The kernel can extend between a writer's read of its list and that
 * writer's extend; the TPM then has the kernel's entries before ours and
 * the file after it.  So after its extend a writer reads the kernel's
 * list again (host_reorder); when it grew, the TPM decides where ours
 * went among the new entries, and the file is rewritten in that order
 * (its tail only, under the lock) before anything is linked.  A kernel
 * extend during the catch-up itself is harmless (read again, up to three
 * times).  What remains: a crash between that cut and the rewrite leaves
 * a list the TPM does not match, refused until a TPM reset (fail closed).
 *
 * A reboot: a list that does not describe the TPM at open is of a
 * previous boot when every PCR it extends (and cfg.pcr) is in its reset
 * state, or holds exactly the kernel's new list (tpm_was_reset); with
 * rotate_stale it is moved aside (the FILE.prev chain, shift_prev) and a
 * new list started, with a warning.  Anything else is refused, whatever
 * rotate_stale says; the two refusals say which it is (stale_error).
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
	off_t file_size;		/* bytes of it linked here */
	/* One host list (TPM and a file): several writers, the file's
	 * flock taken per add (ima_queue_host.c in this file's bottom). */
	bool shared;
	int flock_depth;
	char *kernel_path;		/* the kernel's binary list, or NULL */
	enum { KERNEL_UNKNOWN, KERNEL_OFF, KERNEL_ON } kernel;
	off_t kernel_off;		/* bytes of it in our list */
	/* At open, a host list that does not describe the TPM: its entries,
	 * the PCRs they extend, and where the TPM differs. */
	size_t stale_n;
	uint32_t stale_pcrs;
	char stale_why[96];
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

static int host_lock(struct ima_measurements *ml, bool bounded);
static int lock_error(struct ima_measurements *ml, int err, const char *what);
static void host_unlock(struct ima_measurements *ml);
static int host_catch_up(struct ima_measurements *ml, bool *stale);
static int host_extend(struct ima_measurements *ml, struct ima_template_entry *e,
		       off_t before);

/* Add a built entry (takes ownership) under the mutex (and, for a host
 * list, its file's lock): 0 added, 1 duplicate, -errno. */
static int add_locked(struct ima_measurements *ml, struct ima_template_entry *e)
{
	off_t before = ml->file_size;
	int ret, pcr = e->pcr;

	if (!e->violation && lookup_digest_entry(ml, e)) {
		ima_template_entry_free(e);
		return 1;
	}
	ret = persist_entry(ml, e);
	if (ret) {
		ima_template_entry_free(e);
		return ret;
	}
	if (ml->shared)
		return host_extend(ml, e, before);
	ret = link_entry(ml, e);
	if (!ret && ml->tpm)
		ret = ima_tpm_extend(ml->tpm, pcr, e);
	if (!ret && ml->mac)
		ret = write_mac(ml);
	return ret;
}

static int host_invalidate(struct ima_measurements *ml, int pcr, int err);

static int add_template_entry(struct ima_measurements *ml,
			      struct ima_template_entry *e)
{
	int ret = 0, pcr = e->pcr;

	pthread_mutex_lock(&ml->lock);
	if (ml->shared) {
		ret = host_lock(ml, false);
		if (!ret) {
			ret = host_catch_up(ml, NULL);
			if (ret)
				host_unlock(ml);
		}
		if (ret) {
			ret = host_invalidate(ml, pcr, ret);
			pthread_mutex_unlock(&ml->lock);
			ima_template_entry_free(e);
			return ret;
		}
	}
	ret = add_locked(ml, e);
	if (ml->shared)
		host_unlock(ml);
	if (ret < 0 && ml->shared)
		ret = host_invalidate(ml, pcr, ret);
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

UEVM_EXPORT int ima_ml_default_pcr(const struct ima_measurements *ml)
{
	return ml->cfg.pcr;
}

UEVM_EXPORT const char *ima_ml_path(const struct ima_measurements *ml)
{
	return ml->path;
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
	free(ml->kernel_path);
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
	if (flock(ml->fd, LOCK_EX | LOCK_NB))
		return lock_error(ml, errno, "in use by another owner (a list "
				  "with software PCRs has one)");
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

#define PREV_KEEP	3	/* FILE.prev, FILE.prev.1, FILE.prev.2 */

/* Name of the Ith previous list: FILE.prev, then FILE.prev.I. */
static char *prev_name(const char *path, int i)
{
	char *s;

	if ((i ? asprintf(&s, "%s.prev.%d", path, i)
	       : asprintf(&s, "%s.prev", path)) < 0)
		return NULL;
	return s;
}

/* Move the list at PATH aside as PATH.prev; older ones shift to
 * PATH.prev.1 ..., the oldest beyond PREV_KEEP goes. */
static int shift_prev(const char *path)
{
	char *from = NULL, *to = NULL;
	int ret = 0;

	for (int i = PREV_KEEP - 1; i >= 0 && !ret; i--) {
		from = i ? prev_name(path, i - 1) : strdup(path);
		to = prev_name(path, i);
		if (!from || !to)
			ret = uevm_err(ENOMEM, "out of memory");
		else if (rename(from, to) && (errno != ENOENT || !i))
			ret = uevm_err(errno, "%s: cannot move to %s: %s", from, to,
				       strerror(errno));
		free(from);
		free(to);
	}
	return ret;
}

/* What both kinds of list say when the list of a previous boot (N
 * entries) was moved aside; HOW: what showed the reset. */
static void set_rotated(struct ima_measurements *ml, size_t n, const char *how)
{
	ml->state = IMA_ML_ROTATED;
	snprintf(ml->warning, sizeof(ml->warning),
		 "%s: the TPM was reset (%s: a reboot); the list of the previous "
		 "boot (%zu %s) was moved to %s.prev and a new list started",
		 ml->path, how, n, n == 1 ? "entry" : "entries", ml->path);
}

/* The refusal of a list that does not describe the TPM; RESET: the TPM
 * was reset (a list of a previous boot), or it holds something else. */
static int stale_error(const struct ima_measurements *ml, const char *why,
		       bool reset)
{
	return uevm_err(EBADMSG, "%s does not describe the TPM: %s differs from "
			"the list's replay (%s)", ml->path, why,
			reset ? "the TPM was reset: the list is of a previous "
				"boot; rotating stale lists would move it aside"
			      : "and is not in its reset state: the list was "
				"changed, or another writer extended the PCR");
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
				"its MAC record");
	ret = cut_file(ml, proven);
	if (ret)
		return ret;
	free_entries(ml);
	ret = load_entries(ml, buf, proven, &k, &l);
	if (ret)
		return ret;
	snprintf(ml->warning, sizeof(ml->warning),
		 "%s: %zu %s at the end %s not proven by its MAC record %s.mac "
		 "(an add cut short, or written offline): dropped, and "
		 "recorded as %s",
		 ml->path, ml->ndropped, ml->ndropped == 1 ? "entry" : "entries",
		 ml->ndropped == 1 ? "was" : "were", ml->path,
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

/* Open the file of a list with software PCRs (with a TPM a file is the
 * host list, host_open) and take back what its MAC record proves. */
static int open_list(struct ima_measurements *ml)
{
	uint8_t *buf = NULL;
	size_t keep = 0, last = 0, proven;
	int ret = open_file(ml);

	if (!ret)
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
	if (ret)
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

/* ---- the host list: one TPM-backed list, several writers -------------------- */

#define HOST_LOCK_WAIT_MS	30000	/* at open: another writer's open or add */

/* The pid holding a flock on FD's file (from /proc/locks), or 0. */
static long lock_holder(int fd)
{
	struct stat st;
	char line[256];
	long pid = 0;
	FILE *fp;

	if (fstat(fd, &st) || !(fp = fopen("/proc/locks", "re")))
		return 0;
	while (!pid && fgets(line, sizeof(line), fp)) {
		unsigned long long ino;
		unsigned int maj, min;
		char kind[16];
		long p;

		/* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a waiter
		 * reads "1: -> FLOCK ..." and is skipped. */
		if (sscanf(line, "%*[^:]: %15s %*s %*s %ld %x:%x:%llu", kind, &p,
			   &maj, &min, &ino) == 5 && !strcmp(kind, "FLOCK") &&
		    ino == (unsigned long long)st.st_ino && p != (long)getpid())
			pid = p;
	}
	fclose(fp);
	return pid;
}

static int lock_error(struct ima_measurements *ml, int err, const char *what)
{
	long pid = err == EWOULDBLOCK ? lock_holder(ml->fd) : 0;
	char who[48] = "";

	if (pid)
		snprintf(who, sizeof(who), " (held by pid %ld)", pid);
	return uevm_err(err == EWOULDBLOCK ? EBUSY : err, "%s: %s%s: %s", ml->path,
			what, who, strerror(err));
}

/* The file's lock for one add, a catch-up or the open; nests (the open
 * adds its first entries under the lock it holds).  BOUNDED: at open,
 * give up after HOST_LOCK_WAIT_MS (a single-owner list holds its lock
 * for life). */
static int host_lock(struct ima_measurements *ml, bool bounded)
{
	for (int waited = 0; !ml->flock_depth;) {
		if (!flock(ml->fd, LOCK_EX | (bounded ? LOCK_NB : 0)))
			break;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK || waited >= HOST_LOCK_WAIT_MS)
			return lock_error(ml, errno, "cannot lock the host list");
		usleep(10000);
		waited += 10;
	}
	ml->flock_depth++;
	return 0;
}

static void host_unlock(struct ima_measurements *ml)
{
	if (ml->flock_depth && !--ml->flock_depth)
		flock(ml->fd, LOCK_UN);
}

/*
 * An add to the host's list failed (ERR): the access it records may be in
 * no list, and a list that replays would hide that.  Extend the entry's
 * PCR and the list's with a value no list replays (ima_tpm_invalidate):
 * from now on until a reboot the list never matches the TPM, so every
 * verifier fails it.  -ENOTRECOVERABLE when done (the caller audits it),
 * ERR when the TPM refused that too.
 */
static int host_invalidate(struct ima_measurements *ml, int pcr, int err)
{
	char why[384];
	int ret;

	snprintf(why, sizeof(why), "%s", uevm_last_error());
	ret = ima_tpm_invalidate(ml->tpm, pcr);
	if (!ret && pcr != ml->cfg.pcr)
		ret = ima_tpm_invalidate(ml->tpm, ml->cfg.pcr);
	if (ret)
		return uevm_err(-err, "%s (and PCR %d could not be invalidated: "
				"%s)", why, pcr, uevm_last_error());
	return uevm_err(ENOTRECOVERABLE, "%s; PCR %d invalidated: %s no longer "
			"replays to the TPM until a reboot", why, pcr, ml->path);
}

/* Our entry is in the file: extend, then link.  When the extend fails
 * the entry stays in the file (as the kernel keeps it listed) and the add
 * fails (host_invalidate).  Either way FILE_SIZE stays at BEFORE unless
 * linked, so a failure is read back by the next catch-up. */
static int host_reorder(struct ima_measurements *ml,
			const struct ima_template_entry *e, off_t *before,
			off_t *after);

static int host_extend(struct ima_measurements *ml, struct ima_template_entry *e,
		       off_t before)
{
	off_t after = ml->file_size;
	int ret = ima_tpm_extend(ml->tpm, e->pcr, e);

	if (ret) {
		ml->file_size = before;
		ima_template_entry_free(e);
		return ret;
	}
	if (ml->kernel == KERNEL_ON && ml->kernel_path) {
		ret = host_reorder(ml, e, &before, &after);
		if (ret) {
			ima_template_entry_free(e);
			return ret;
		}
	}
	ml->file_size = before;
	ret = link_entry(ml, e);
	if (!ret)
		ml->file_size = after;
	return ret;
}

/* Entries read but not linked yet. */
struct pend {
	struct ima_template_entry *e;
	size_t start, end;	/* in the buffer they were read from */
};

/* How many fewer copies of kernel entries than their bytes suggest a
 * catch-up tries (each try reads the TPM); past that it fails closed. */
#define KERNEL_TWINS 8

struct pend_list {
	struct pend *v;
	size_t n, cap;
	const size_t *good;
};

static int pend_one(struct ima_template_entry *e, size_t index, bool ok, void *arg)
{
	struct pend_list *p = arg;

	if (!ok) {
		ima_template_entry_free(e);
		return uevm_err(EBADMSG, "entry %zu: the template digest does not "
				"match its data", index + 1);
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct pend *v = realloc(p->v, cap * sizeof(*v));

		if (!v) {
			ima_template_entry_free(e);
			return uevm_err(ENOMEM, "out of memory");
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = (struct pend){ .e = e, .start = *p->good };
	return 0;
}

static void pend_free(struct pend_list *p)
{
	for (size_t i = 0; i < p->n; i++)
		ima_template_entry_free(p->v[i].e);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* Parse BUF[0:LEN] (read from PATH at BASE) into P; *GOOD: the end of the
 * last complete entry (a torn one at the end is left out). */
static int pend_parse(const char *path, off_t base, const uint8_t *buf,
		      size_t len, struct pend_list *p, size_t *good)
{
	long n;

	p->good = good;
	n = ima_ml_parse_owned(buf, len, UEVM_HASH_SHA1, pend_one, p, good);
	if (n < 0 && n != -ENODATA) {
		char why[384];

		snprintf(why, sizeof(why), "%s", uevm_last_error());
		return uevm_err((int)-n, "%s (from byte %lld): %s", path,
				(long long)base, why);
	}
	for (size_t i = 0; i < p->n; i++)
		p->v[i].end = i + 1 < p->n ? p->v[i + 1].start : *good;
	return 0;
}

static int read_at(int fd, off_t off, uint8_t *buf, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = pread(fd, buf + done, len - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* The kernel's binary list from byte OFF to its end (a securityfs file
 * has no size: read until EOF). */
static int read_kernel(const char *path, off_t off, uint8_t **out, size_t *len)
{
	size_t cap = 65536, n = 0;
	uint8_t *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	*out = NULL;
	*len = 0;
	if (fd < 0 || !buf || (off && lseek(fd, off, SEEK_SET) != off)) {
		err = !buf ? ENOMEM : errno;
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			uint8_t *b = realloc(buf, cap *= 2);

			if (!b) {
				err = ENOMEM;
				goto out;
			}
			buf = b;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			goto out;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
out:
	if (fd >= 0)
		close(fd);
	if (err) {
		free(buf);
		return -err;
	}
	*out = buf;
	*len = n;
	return 0;
}

static bool same_bytes(const uint8_t *a, const struct pend *pa,
		       const uint8_t *b, const struct pend *pb)
{
	return pa->end - pa->start == pb->end - pb->start &&
	       !memcmp(a + pa->start, b + pb->start, pa->end - pa->start);
}

/*
 * Compare the TPM with the list as it would be with P's entries (all but
 * SKIP) and K's from KI linked: every bank of the TPM, every PCR used,
 * the list's own (cfg.pcr) and EXTRA.  1 equal, 0 different (WHY says
 * where), -errno.
 */
static int host_matches(struct ima_measurements *ml, const struct pend_list *p,
			const struct pend_list *k, size_t ki, size_t skip,
			uint32_t extra, char *why, size_t why_len)
{
	uint32_t banks = ima_tpm_banks(ml->tpm);
	uint32_t used = ml->sw[SW_SHA1].pcr_mask | extra | 1u << ml->cfg.pcr;

	for (size_t i = 0; i < p->n; i++)
		used |= 1u << p->v[i].e->pcr;
	for (size_t i = ki; i < k->n; i++)
		used |= 1u << k->v[i].e->pcr;
	for (int algo = 0; algo < 32; algo++) {
		unsigned int size = uevm_hash_algo_digest_size(algo);
		struct ima_ml_replay r;
		int ret = 0;

		if (!(banks & (1u << algo)))
			continue;
		if (algo == UEVM_HASH_SHA1)
			r = ml->sw[SW_SHA1];
		else if (algo == UEVM_HASH_SHA256)
			r = ml->sw[SW_SHA256];
		else
			ret = replay_prefix(ml, ima_ml_count(ml), algo, &r);
		for (size_t i = 0; i < p->n && !ret; i++)
			if (i != skip)
				ret = ima_replay_extend(&r, p->v[i].e, false, true);
		for (size_t i = ki; i < k->n && !ret; i++)
			ret = ima_replay_extend(&r, k->v[i].e, false, true);
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

/* Link P's entries from FROM on (all but SKIP), read from the file at
 * BASE; FILE_SIZE follows, so a failure is read again next time. */
static int link_pend(struct ima_measurements *ml, struct pend_list *p,
		     size_t from, off_t base, size_t skip)
{
	for (size_t i = from; i < p->n; i++) {
		struct ima_template_entry *e = p->v[i].e;
		int ret;

		if (i == skip)
			continue;
		p->v[i].e = NULL;
		ret = link_entry(ml, e);
		if (ret) {
			ml->file_size = base + (off_t)p->v[i].start;
			return ret;
		}
		ml->file_size = base + (off_t)p->v[i].end;
	}
	return 0;
}

/* Append K's entries from KI (bytes of KBUF, the kernel's list read from
 * KBASE) to the file and link them: the kernel extended them already. */
static int pull_kernel(struct ima_measurements *ml, struct pend_list *k,
		       size_t ki, const uint8_t *kbuf, off_t kbase)
{
	size_t from = k->v[ki].start, to = k->v[k->n - 1].end;
	off_t base = ml->file_size - (off_t)from;
	int ret = write_all(ml->fd, kbuf + from, to - from);

	if (!ret && !ml->cfg.no_sync && fdatasync(ml->fd))
		ret = -errno;
	if (ret) {
		if (ftruncate(ml->fd, ml->file_size))
			ret = uevm_err(-ret, "%s: cannot append the kernel's entries: "
				       "%s (and cannot cut back: %s)", ml->path,
				       strerror(-ret), strerror(errno));
		else
			ret = uevm_err(-ret, "%s: cannot append the kernel's "
				       "entries: %s", ml->path, strerror(-ret));
		return ret;
	}
	ml->kernel_off = kbase + (off_t)to;
	return link_pend(ml, k, ki, base, SIZE_MAX);
}

/* Where our entry E went among the kernel's new entries K (read from
 * kernel_off): after the first J of them, the one order that replays.
 * 1 found, 0 none, -errno. */
static int reorder_find(struct ima_measurements *ml,
			const struct ima_template_entry *e,
			const struct pend_list *k, size_t *j)
{
	struct pend_list p = { 0 };
	char why[96];
	int ret = 0;

	p.v = calloc(k->n + 1, sizeof(*p.v));
	if (!p.v)
		return uevm_err(ENOMEM, "out of memory");
	for (*j = 0; *j <= k->n && !ret; ++*j) {
		p.n = 0;
		for (size_t i = 0; i < *j; i++)
			p.v[p.n++].e = k->v[i].e;
		p.v[p.n++].e = (struct ima_template_entry *)e;
		ret = host_matches(ml, &p, k, *j, SIZE_MAX, 0, why, sizeof(why));
	}
	--*j;
	free(p.v);	/* the entries are K's and the caller's */
	return ret;
}

/*
 * The kernel may extend between our catch-up's read of its list and our
 * extend: the TPM then holds its entries before ours, the file after.
 * Read its list again; when it grew, find the order that replays
 * (reorder_find) and write the file in that order (we hold its lock),
 * the kernel's entries before ours linked as pulled.  *BEFORE, *AFTER:
 * where E's bytes are in the file, then and now.
 */
static int host_reorder(struct ima_measurements *ml,
			const struct ima_template_entry *e, off_t *before,
			off_t *after)
{
	struct pend_list k = { 0 };
	uint8_t *kbuf = NULL, *ebuf = NULL;
	size_t kgood = 0, klen = 0, elen = (size_t)(*after - *before), j = 0, n;
	off_t base;
	int ret = 0;

	/* The kernel may extend again while we compare: read it again. */
	for (int tries = 0; tries < 3 && !ret; tries++) {
		pend_free(&k);
		free(kbuf);
		kbuf = NULL;
		if (read_kernel(ml->kernel_path, ml->kernel_off, &kbuf, &klen))
			goto out;	/* as at a catch-up: nothing to pull */
		ret = pend_parse(ml->kernel_path, ml->kernel_off, kbuf, klen,
				 &k, &kgood);
		if (ret || !k.n)
			goto out;
		ret = reorder_find(ml, e, &k, &j);
	}
	if (ret <= 0 || !j)
		goto out;	/* in order already, or the next catch-up refuses */
	ebuf = malloc(elen);
	ret = ebuf ? read_at(ml->fd, *before, ebuf, elen) : -ENOMEM;
	if (!ret && ftruncate(ml->fd, *before))
		ret = -errno;
	if (!ret)
		ret = write_all(ml->fd, kbuf, k.v[j - 1].end);
	if (!ret)
		ret = write_all(ml->fd, ebuf, elen);
	if (!ret && !ml->cfg.no_sync && fdatasync(ml->fd))
		ret = -errno;
	if (ret) {
		ret = uevm_err(-ret, "%s: cannot put the kernel's entries before "
			       "ours (it extended during our add): %s", ml->path,
			       strerror(-ret));
		goto out;
	}
	base = *before;
	n = k.n;
	k.n = j;
	ret = link_pend(ml, &k, 0, base, SIZE_MAX);
	k.n = n;
	if (ret)
		goto out;
	ml->kernel_off += (off_t)k.v[j - 1].end;
	*before = ml->file_size;
	*after = *before + (off_t)elen;
out:
	pend_free(&k);
	free(kbuf);
	free(ebuf);
	return ret < 0 ? ret : 0;
}

/* A violation in place of an entry the TPM never saw (under both locks). */
static int add_violation_locked(struct ima_measurements *ml,
				const struct ima_template_entry *dropped)
{
	char *name = entry_event_name(dropped);
	struct ima_event_data ev = { .violation = true };
	struct ima_template_entry *e;
	int ret;

	if (!name)
		return uevm_err(ENOMEM, "out of memory");
	ev.filename = name;
	ev.ima_hash_algo = ml->cfg.hash_algo;
	ret = ima_template_entry_new(ml->default_desc, &ev, dropped->pcr, &e);
	if (!ret)
		ret = add_locked(ml, e);
	if (!ret)
		snprintf(ml->warning, sizeof(ml->warning),
			 "%s: 1 entry at the end was not proven by the TPM (an "
			 "add cut short, or written offline): %s dropped, and "
			 "recorded as a violation", ml->path, name);
	free(name);
	return ret < 0 ? ret : 0;
}

/*
 * Under the file's lock: take in what other writers appended since this
 * process last looked (the whole file at open), and what the kernel
 * measured since (an adopted list).  What was read is linked only once
 * the TPM agrees (readers walk the list without locks: nothing linked is
 * ever taken back).  *STALE (at open): the file does not describe the TPM.
 */
static int catch_up_once(struct ima_measurements *ml, bool *stale, bool *kernel_moved)
{
	struct pend_list p = { 0 }, k = { 0 };
	uint8_t *buf = NULL, *kbuf = NULL;
	size_t good = 0, kgood = 0, klen = 0, ki, skip = SIZE_MAX, len;
	size_t kmax = 0, kmax_last = 0, kmin;
	off_t base = ml->file_size, kbase = ml->kernel_off;
	struct stat st, pst;
	char why[96] = "";
	int ret;

	if (fstat(ml->fd, &st))
		return uevm_err(errno, "%s: %s", ml->path, strerror(errno));
	if (stat(ml->path, &pst) || pst.st_dev != st.st_dev || pst.st_ino != st.st_ino)
		return uevm_err(ESTALE, "%s: the list this process appends to was "
				"moved aside or replaced (another writer started a "
				"new one after a TPM reset?): restart it", ml->path);
	if (st.st_size < base)
		return uevm_err(EBADMSG, "%s: the list shrank from %lld to %lld "
				"bytes under its writers: it was changed outside "
				"uevm", ml->path, (long long)base,
				(long long)st.st_size);
	len = (size_t)(st.st_size - base);
	if (len) {
		buf = malloc(len);
		if (!buf) {
			ret = uevm_err(ENOMEM, "out of memory");
			goto out;
		}
		ret = read_at(ml->fd, base, buf, len);
		if (ret)
			ret = uevm_err(-ret, "%s: cannot read: %s", ml->path,
				       strerror(-ret));
		if (!ret)
			ret = pend_parse(ml->path, base, buf, len, &p, &good);
		if (ret)
			goto out;
	}
	if (ml->kernel != KERNEL_OFF && ml->kernel_path &&
	    read_kernel(ml->kernel_path, kbase, &kbuf, &klen) == 0) {
		ret = pend_parse(ml->kernel_path, kbase, kbuf, klen, &k, &kgood);
		if (ret)
			goto out;
		/* Adopted: the list starts with the kernel's first entry. */
		if (ml->kernel == KERNEL_UNKNOWN && p.n)
			ml->kernel = k.n && same_bytes(buf, &p.v[0], kbuf, &k.v[0]) ?
				KERNEL_ON : KERNEL_OFF;
		/* Copies of the kernel's entries, in its order, may be in
		 * the file already (pulled by another writer): at most
		 * KMAX of them, KMAX_LAST before the file's last entry. */
		for (size_t i = 0; ml->kernel == KERNEL_ON && i < p.n && kmax < k.n; i++)
			if (same_bytes(buf, &p.v[i], kbuf, &k.v[kmax]) && ++kmax &&
			    i + 1 < p.n)
				kmax_last = kmax;
	}
	if (ml->kernel == KERNEL_UNKNOWN && p.n)
		ml->kernel = KERNEL_OFF;
	if (ml->kernel != KERNEL_ON)
		kmax = kmax_last = k.n;	/* nothing to pull */
	kmin = kmax > KERNEL_TWINS ? kmax - KERNEL_TWINS : 0;
	ki = kmax;
	if (!p.n && ki == k.n)
		goto commit;
	/* Bytes cannot tell a copy of a kernel entry from a uevm entry of
	 * the same file: the TPM decides how many are copies (most first). */
	for (;;) {
		ret = host_matches(ml, &p, &k, ki, SIZE_MAX, 0, why, sizeof(why));
		if (ret || ki <= kmin)
			break;
		ki--;
	}
	/* The TPM may lack the file's last entry: its writer stopped between
	 * append and extend (or someone else wrote it).  One entry only. */
	if (!ret && p.n) {
		char why1[96];

		for (ki = kmax_last < kmax ? kmax_last : kmax;; ki--) {
			ret = host_matches(ml, &p, &k, ki, p.n - 1, 0, why1,
					   sizeof(why1));
			if (ret || ki <= kmin)
				break;
		}
		if (ret > 0)
			skip = p.n - 1;
		/* A one-entry list without it is the reset state: a reboot
		 * as much as an add cut short; rotated when that is asked. */
		if (ret > 0 && stale && !base && p.n == 1 && ml->cfg.rotate_stale)
			ret = 0;
	}
	if (ret < 0)
		goto out;
	if (!ret) {
		if (stale) {
			*stale = true;
			ml->stale_n = p.n;
			ml->stale_pcrs = 0;
			for (size_t i = 0; i < p.n; i++)
				ml->stale_pcrs |= 1u << p.v[i].e->pcr;
			snprintf(ml->stale_why, sizeof(ml->stale_why), "%s", why);
		}
		*kernel_moved = ml->kernel == KERNEL_ON;
		ret = uevm_err(EBADMSG, "%s does not describe the TPM: %s differs "
			       "from the list's replay (the TPM was reset, the "
			       "list was changed, or the kernel extended while "
			       "a uevm entry was in flight)", ml->path, why);
		goto out;
	}
commit:
	if (skip != SIZE_MAX)
		good = p.v[skip].start;
	if (base + (off_t)good < st.st_size) {
		ret = cut_file(ml, (size_t)base + good);	/* torn, or dropped */
		ml->file_size = base;
		if (ret)
			goto out;
	}
	ret = link_pend(ml, &p, 0, base, skip);
	if (!ret && ki < k.n)
		ret = pull_kernel(ml, &k, ki, kbuf, kbase);
	else if (!ret && ki)
		ml->kernel_off = kbase + (off_t)k.v[ki - 1].end;
	if (!ret && skip != SIZE_MAX)
		ret = add_violation_locked(ml, p.v[skip].e);
out:
	pend_free(&p);
	pend_free(&k);
	free(buf);
	free(kbuf);
	return ret;
}

/* The kernel may extend between our read of its list and our PCR read:
 * read both again (nothing was linked). */
static int host_catch_up(struct ima_measurements *ml, bool *stale)
{
	int ret = 0;

	for (int i = 0; i < 3; i++) {
		bool kernel_moved = false;

		if (stale)
			*stale = false;
		ret = catch_up_once(ml, stale, &kernel_moved);
		if (!kernel_moved)
			break;
	}
	return ret;
}

/* Move a stale host list aside (under its lock) and lock a new file at
 * its path; other writers still on the old one stop at their next add. */
static int host_rotate(struct ima_measurements *ml)
{
	int fd, ret = shift_prev(ml->path);

	if (ret)
		return ret;
	fd = open(ml->path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return uevm_err(errno, "%s: cannot open: %s", ml->path, strerror(errno));
	close(ml->fd);		/* drops the old file's lock */
	ml->fd = fd;
	ml->flock_depth = 0;
	ml->file_size = 0;
	return host_lock(ml, true);
}

/* A new host list on a PCR that is not in its reset state: the kernel's
 * list is its prefix when it replays to the TPM. */
static int host_adopt(struct ima_measurements *ml, const char *busy)
{
	struct pend_list p = { 0 }, k = { 0 };
	uint8_t *kbuf = NULL;
	size_t kgood = 0, klen = 0;
	char why[96] = "";
	int ret;

	ret = ml->kernel_path ? read_kernel(ml->kernel_path, 0, &kbuf, &klen) : -ENOENT;
	if (ret) {
		ret = uevm_err(EBUSY, "%s%s%s%s%s", busy, ml->kernel_path ?
			       "; the kernel's list " : "", ml->kernel_path ?
			       ml->kernel_path : "", ml->kernel_path ?
			       " cannot be read: " : "",
			       ml->kernel_path ? strerror(-ret) : "");
		goto out;
	}
	ret = pend_parse(ml->kernel_path, 0, kbuf, klen, &k, &kgood);
	if (ret)
		goto out;
	ret = k.n ? host_matches(ml, &p, &k, 0, SIZE_MAX, 0, why, sizeof(why)) : 0;
	if (ret < 0)
		goto out;
	if (!ret) {
		ret = uevm_err(EBUSY, "%s; the kernel's list %s %s%s%s: not adopted",
			       busy, ml->kernel_path, k.n ? "does not replay to "
			       "the TPM (" : "is empty", k.n ? why : "",
			       k.n ? " differs)" : "");
		goto out;
	}
	ret = pull_kernel(ml, &k, 0, kbuf, 0);
	if (!ret) {
		ml->kernel = KERNEL_ON;
		ml->state = IMA_ML_ADOPTED;
	}
out:
	pend_free(&k);
	free(kbuf);
	return ret;
}

/* An empty host list: our boot_aggregate on PCRs in their reset state, or
 * the kernel's list as the prefix. */
static int host_start(struct ima_measurements *ml)
{
	char busy[256];
	int ret = check_fresh_pcr(ml);

	if (!ret) {
		ml->kernel = KERNEL_OFF;
		ml->state = IMA_ML_CREATED;
		return add_boot_aggregate(ml);
	}
	if (ret != -EBUSY)
		return ret;
	snprintf(busy, sizeof(busy), "%s", uevm_last_error());
	return host_adopt(ml, busy);
}

/* After a reboot: every PCR the stale list extends (and the list's own)
 * is in its reset state, or holds exactly the kernel's list.  *HOW says
 * which.  1 yes, 0 no (a list changed is refused, never rotated), -errno. */
static int tpm_was_reset(struct ima_measurements *ml, const char **how)
{
	struct pend_list p = { 0 }, k = { 0 };
	uint8_t *kbuf = NULL;
	size_t kgood, klen;
	char why[96];
	int ret;

	*how = "the PCRs the list extends are in their reset state";
	ret = host_matches(ml, &p, &k, 0, SIZE_MAX, ml->stale_pcrs, why,
			   sizeof(why));
	if (ret)
		return ret;
	if (!ml->kernel_path || read_kernel(ml->kernel_path, 0, &kbuf, &klen))
		return 0;
	ret = pend_parse(ml->kernel_path, 0, kbuf, klen, &k, &kgood);
	if (!ret && k.n)
		ret = host_matches(ml, &p, &k, 0, SIZE_MAX, ml->stale_pcrs, why,
				   sizeof(why));
	pend_free(&k);
	free(kbuf);
	*how = "the PCRs the list extends hold exactly the kernel's new list";
	return ret > 0;
}

/* Open the host list's file and take its lock.  Another writer may
 * have moved the list aside (a rotation after a reboot: every front-end
 * starts then) while this one waited: then take the file now at PATH. */
static int host_open_locked(struct ima_measurements *ml)
{
	for (int tries = 0;; tries++) {
		struct stat st, pst;
		int ret;

		ml->fd = open(ml->path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC |
			      O_NOFOLLOW, 0600);
		if (ml->fd < 0)
			return uevm_err(errno, "%s: cannot open: %s", ml->path,
					strerror(errno));
		if (fstat(ml->fd, &st))
			return uevm_err(errno, "%s: %s", ml->path, strerror(errno));
		if (!S_ISREG(st.st_mode))
			return uevm_err(EINVAL, "%s: not a regular file", ml->path);
		ret = host_lock(ml, true);
		if (ret)
			return ret;
		if (!stat(ml->path, &pst) && pst.st_dev == st.st_dev &&
		    pst.st_ino == st.st_ino)
			return 0;
		if (tries == 3)
			return uevm_err(ESTALE, "%s: replaced again and again while "
					"opening it", ml->path);
		host_unlock(ml);
		close(ml->fd);
		ml->fd = -1;
	}
}

/*
 * Open a host list: take in the file as it is (checked against the TPM,
 * as a catch-up from nothing), start it when it is empty.
 */
static int host_open(struct ima_measurements *ml)
{
	bool stale = false, rotated = false;
	const char *how = NULL;
	size_t n = 0;
	int ret = host_open_locked(ml);

	if (ret)
		return ret;
	for (;;) {
		int reset;

		ret = host_catch_up(ml, &stale);
		if (!ret || !stale || rotated)
			break;
		/* Rotated only when the TPM was reset: a list of a previous
		 * boot can never be verified again; anything else is a
		 * changed list or another writer. */
		reset = tpm_was_reset(ml, &how);
		if (reset < 0 || !reset || !ml->cfg.rotate_stale) {
			ret = reset < 0 ? reset :
			      stale_error(ml, ml->stale_why, reset);
			break;
		}
		n = ml->stale_n;
		ret = host_rotate(ml);
		if (ret)
			break;
		rotated = true;
		stale = false;
	}
	if (!ret && !ima_ml_count(ml))
		ret = host_start(ml);
	else if (!ret)
		ml->state = ml->warning[0] ? IMA_ML_DROPPED : IMA_ML_RESUMED;
	if (!ret && rotated)
		set_rotated(ml, n, how);
	host_unlock(ml);
	return ret;
}

UEVM_EXPORT int ima_ml_refresh(struct ima_measurements *ml)
{
	int ret;

	if (!ml || !ml->shared)
		return 0;
	pthread_mutex_lock(&ml->lock);
	ret = host_lock(ml, false);
	if (!ret) {
		ret = host_catch_up(ml, NULL);
		host_unlock(ml);
	}
	pthread_mutex_unlock(&ml->lock);
	return ret;
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
	if (ml->path && ml->tpm) {
		/* One list per host: several writers, each add under the
		 * file's lock. */
		ml->shared = true;
		if (!cfg->kernel_path)
			ml->kernel_path = dup_opt(IMA_ML_KERNEL_LIST, &ret);
		else if (strcmp(cfg->kernel_path, "none"))
			ml->kernel_path = dup_opt(cfg->kernel_path, &ret);
		ml->cfg.kernel_path = ml->kernel_path;
		if (!ret)
			ret = host_open(ml);
		if (ret)
			goto fail;
	} else if (ml->path) {
		ret = open_list(ml);
		if (ret)
			goto fail;
	}
	if (!ml->shared && !ima_ml_count(ml)) {
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
