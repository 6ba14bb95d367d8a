/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The IMA measurement list: templates and their fields, template digests,
 * the list with its PCR extension (a TPM 2.0 through tpm2-tss, or software
 * PCRs), persistence, and the renderings of
 * /sys/kernel/security/ima/{binary,ascii}_runtime_measurements.
 *
 * Everything here follows the kernel's security/integrity/ima/ byte for
 * byte; numbers in lists are native endian, as the kernel writes them
 * without ima_canonical_fmt.  Functions return 0 (or a count) on success
 * and a negative errno on failure, with the reason in uevm_last_error().
 */
#ifndef UEVM_MEASURE_H
#define UEVM_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "uevm_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMA_EVENT_NAME_LEN_MAX		255	/* the 'n' field's limit */
#define IMA_TEMPLATE_NUM_FIELDS_MAX	15
#define IMA_TEMPLATE_IMA_NAME		"ima"
#define IMA_BOOT_AGGREGATE_NAME		"boot_aggregate"
#define IMA_SHA1_DIGEST_SIZE		20	/* the list's template digest */
#define IMA_ML_DEFAULT_PCR		10	/* CONFIG_IMA_MEASURE_PCR_IDX */
#define IMA_ML_NUM_PCRS			24

/* ---- events: what a measurement is made of (struct ima_event_data) ------ */

struct ima_event_data {
	const char *filename;		/* name recorded in the list */
	int algo;			/* algorithm of DIGEST */
	const uint8_t *digest;		/* the file (or buffer) digest */
	size_t digest_len;
	/* SHA-1 of the same content, for the 'ima' template's 'd' field when
	 * ALGO is neither sha1 nor md5; NULL: hashed from FILE if given. */
	const uint8_t *sha1_digest;
	const uint8_t *xattr_value;	/* security.ima ('sig' when a signature) */
	size_t xattr_len;
	const uint8_t *evm_value;	/* security.evm ('evmsig', 'sig' fallback) */
	size_t evm_len;
	const uint8_t *buf;		/* 'buf' field (ima-buf) */
	size_t buf_len;
	const uint8_t *modsig;		/* appended signature ('modsig') */
	size_t modsig_len;
	int modsig_algo;		/* 'd-modsig': digest the modsig covers */
	const uint8_t *modsig_digest;
	size_t modsig_digest_len;
	/* The file, when open: 'd' rehash, security.evm, iuid/igid/imode. */
	const struct uevm_file *file;
	bool verity;			/* DIGEST is an fs-verity digest (d-ngv2) */
	bool violation;			/* a ToMToU/open-writers violation */
	/* Filled in by the list (ima_ml_add_*): the list's hash algorithm,
	 * which sizes a violation's d-ng digest. */
	int ima_hash_algo;
};

/* ---- template fields and descriptors ----------------------------------------- */

/* How a field is shown (the kernel's enum ima_show_type). */
enum ima_show_type {
	IMA_SHOW_BINARY,
	IMA_SHOW_BINARY_NO_FIELD_LEN,
	IMA_SHOW_BINARY_OLD_STRING_FMT,
	IMA_SHOW_ASCII,
};

struct ima_field_data {
	uint8_t *data;
	uint32_t len;
};

/* A template field registers its operations: init builds the field's bytes
 * from an event, show prints them (struct ima_template_field). */
struct ima_template_field {
	const char *field_id;
	int (*field_init)(const struct ima_event_data *ev,
			  struct ima_field_data *out);
	void (*field_show)(FILE *fp, enum ima_show_type show,
			   const struct ima_field_data *fd);
};

struct ima_template_desc {
	const char *name;	/* "" for a custom format: lists show FMT */
	const char *fmt;	/* "d-ng|n-ng|sig" */
	int num_fields;
	const struct ima_template_field *fields[IMA_TEMPLATE_NUM_FIELDS_MAX];
};

/* The field with this id (d, n, d-ng, d-ngv2, n-ng, sig, buf, d-modsig,
 * modsig, evmsig, iuid, igid, imode), or NULL. */
const struct ima_template_field *ima_template_field_lookup(const char *id);
/*
 * A template by name (ima, ima-ng, ima-sig, ima-ngv2, ima-sigv2, ima-buf,
 * ima-modsig) or by format string ("d-ng|n-ng|sig"): a format no built-in
 * template has is registered as a custom descriptor (name "", shown as its
 * format, as the kernel does for ima_template_fmt=).  Descriptors live until
 * the process exits.  NULL with uevm_last_error() naming the bad field.
 */
const struct ima_template_desc *ima_template_desc_lookup(const char *name_or_fmt);
/* The name a list records: NAME, or FMT for a custom descriptor. */
const char *ima_template_desc_list_name(const struct ima_template_desc *d);

/* ---- template entries ------------------------------------------------------------ */

struct ima_template_entry;

/* Build an entry: every field's init, then the SHA-1 template digest (and
 * the SHA-256 one) as ima_calc_field_array_hash does; a violation keeps an
 * all-zero digest. */
int ima_template_entry_new(const struct ima_template_desc *desc,
			   const struct ima_event_data *ev, int pcr,
			   struct ima_template_entry **out);
void ima_template_entry_free(struct ima_template_entry *e);

int ima_entry_pcr(const struct ima_template_entry *e);
const struct ima_template_desc *ima_entry_desc(const struct ima_template_entry *e);
/* The template name as lists record it. */
const char *ima_entry_template_name(const struct ima_template_entry *e);
bool ima_entry_is_violation(const struct ima_template_entry *e);
/* The SHA-1 template digest stored in the list (zeros for a violation). */
const uint8_t *ima_entry_digest(const struct ima_template_entry *e);
int ima_entry_num_fields(const struct ima_template_entry *e);
/* Field I: its id ("?" for a template this build does not know) and data. */
const char *ima_entry_field_id(const struct ima_template_entry *e, int i);
const struct ima_field_data *ima_entry_field(const struct ima_template_entry *e,
					     int i);
/* Sum over the fields of (4 + length): the binary list's template data length. */
uint32_t ima_entry_template_data_len(const struct ima_template_entry *e);
/* The template digest with ALGO (sha1, sha256, sha384, sha512, sm3) computed
 * from the fields, as the kernel does for each TPM bank; for a violation
 * all zeros.  Returns the digest size. */
int ima_entry_calc_digest(const struct ima_template_entry *e, int algo,
			  uint8_t *out);
/* What a PCR of bank ALGO is extended with for this entry: the digest above,
 * or 0xff... for a violation.  Returns the digest size. */
int ima_entry_extend_digest(const struct ima_template_entry *e, int algo,
			    uint8_t *out);

/* One entry in a list's binary form (bank ALGO's template digest; sha1 for
 * binary_runtime_measurements, sha256 for binary_runtime_measurements_sha256). */
int ima_entry_write_binary(const struct ima_template_entry *e, int algo, FILE *fp);
/* One line of ascii_runtime_measurements (or its _ALGO variant). */
int ima_entry_write_ascii(const struct ima_template_entry *e, int algo, FILE *fp);

/* ---- parsing and replaying lists ---------------------------------------------------- */

/* Called for each entry parsed; DIGEST_OK says whether the SHA-1 template
 * digest recomputed from the data equals the stored one (always true for a
 * violation).  A non-zero return stops the parse and is returned. */
typedef int (*ima_ml_parse_fn)(const struct ima_template_entry *e,
			       size_t index, bool digest_ok, void *arg);

/*
 * Parse a binary list (binary_runtime_measurements, native endian).
 * DIGEST_ALGO is the template digest's bank (sha1 for the classic file).
 * Fields are split by the template's descriptor; an unknown template's data
 * is split into its {u32 length, data} fields.  Returns the number of entries
 * or a negative errno (-EBADMSG naming the entry and offset when malformed).
 */
long ima_ml_parse_binary(const uint8_t *buf, size_t len, int digest_algo,
			 ima_ml_parse_fn fn, void *arg);

/* PCR values obtained by replaying a list, per bank. */
struct ima_ml_replay {
	int algo;
	uint32_t pcr_mask;		/* bit N: PCR N was extended */
	unsigned long entries;
	unsigned long violations;
	unsigned long bad_digests;	/* template digest does not match data */
	uint8_t pcr[IMA_ML_NUM_PCRS][UEVM_MAX_DIGEST_SIZE];
};

/*
 * Replay the binary list BUF into bank ALGO, starting from zeroed PCRs:
 * PCR = H(PCR || template digest of ALGO) per entry, 0xff.. for violations.
 * With PADDED_SHA1 the SHA-1 template digest zero-padded to the bank size is
 * extended instead (what kernels before 5.8 did for non-SHA-1 banks).
 */
int ima_ml_replay_binary(const uint8_t *buf, size_t len, int algo,
			 bool padded_sha1, struct ima_ml_replay *out);

/* digest_algo for ima_ml_parse_ascii: each line's template digest length
 * says its bank (40 hex digits sha1, 64 sha256, 96 sha384, 128 sha512). */
#define IMA_ML_ASCII_AUTO (-1)

/*
 * Parse an ASCII list (ascii_runtime_measurements or an _ALGO variant):
 * lines "%2d <template digest> <template name> <field>..." as the kernel
 * prints them, for every template the binary parser knows.  The binary
 * template data is rebuilt from the fields, so DIGEST_OK and other banks'
 * digests work as for a binary list.  A name may contain spaces (it takes
 * what the other fields leave); a name with a newline cannot be read back
 * (its line fails the digest check).  INDEX is the line number - 1.
 * Returns the number of entries or a negative errno (-EBADMSG with
 * "line N: cause" for a malformed line, including a last line without its
 * newline).
 */
long ima_ml_parse_ascii(const uint8_t *buf, size_t len, int digest_algo,
			ima_ml_parse_fn fn, void *arg);
/* ima_ml_replay_binary for an ASCII list (any template digest bank). */
int ima_ml_replay_ascii(const uint8_t *buf, size_t len, int algo,
			bool padded_sha1, struct ima_ml_replay *out);
/* True when BUF starts as an ASCII list does (' ' or a digit), which a
 * binary list, starting with a PCR number below 24 as a u32, never does. */
bool ima_ml_is_ascii(const uint8_t *buf, size_t len);

/* ---- the measurement list ---------------------------------------------------------- */

struct ima_ml_config {
	/* Persistence: the list is kept in this file in the binary list format
	 * (readable by evmctl ima_measurement); NULL: in memory only. */
	const char *path;
	int pcr;			/* default PCR (10) */
	const char *template_name;	/* default template ("ima-ng") */
	int hash_algo;			/* ima_hash_algo (sha256) */
	/* TCTI configuration for a TPM 2.0 ("swtpm:host=127.0.0.1,port=2321",
	 * "device:/dev/tpmrm0"); NULL: software PCRs kept in the list. */
	const char *tcti;
	bool no_sync;			/* no fdatasync after each append */
	/* A host list (TPM and file) on reopen: when the TPM was reset
	 * (every PCR the file extends, and cfg.pcr, in its reset state, or
	 * holding exactly the kernel's new list), move FILE to FILE.prev
	 * (older ones to FILE.prev.1, .2) and start a new list
	 * (IMA_ML_ROTATED, with a warning) instead of refusing.  A one-entry
	 * list of a previous boot is rotated too. */
	bool rotate_stale;
	/* The EVM context whose HMAC key (if it has one) protects a persisted
	 * list with software PCRs: a MAC record, FILE.mac, with a key derived
	 * from it.  NULL or no key: such a list carries no integrity
	 * (ima_ml_open_warning says so). */
	const struct uevm_ctx *evm_ctx;
	/* With a TPM and a file (a host list): the kernel's binary list,
	 * adopted as the prefix of a new list when the PCR is not in its
	 * reset state and the list replays to it.  NULL: IMA_ML_KERNEL_LIST;
	 * "none": never. */
	const char *kernel_path;
};

/* The host list's usual place: uevmd and uevmfs with a TPM share it. */
#define IMA_ML_HOST_LIST "/var/lib/uevm/host.ml"
#define IMA_ML_KERNEL_LIST "/sys/kernel/security/ima/binary_runtime_measurements"

void ima_ml_config_init(struct ima_ml_config *cfg);

/* How ima_ml_open found the list. */
enum ima_ml_open_state {
	IMA_ML_CREATED,		/* new list: boot_aggregate added */
	IMA_ML_RESUMED,		/* file replayed; PCRs matched it */
	IMA_ML_DROPPED,		/* resumed without trailing entries that
				   neither the TPM nor the MAC record proves
				   (an add cut short, or written offline);
				   each became a violation */
	IMA_ML_ROTATED,		/* host list of a previous boot moved to
				   FILE.prev; new list */
	IMA_ML_ADOPTED,		/* new host list: the kernel's list is its
				   prefix (no boot_aggregate of ours) */
};

struct ima_measurements;

/*
 * Open (or create) a measurement list.  A new list starts with the
 * boot_aggregate entry.  With a file and software PCRs, the process holds
 * an exclusive lock on it (-EBUSY when another owner has it).  With a file
 * and a TPM the list is the host's: every process that opens it is one of
 * its writers, each add (and ima_ml_refresh) taking the file's lock to
 * read what the others appended first; a new one on a PCR that is not in
 * its reset state starts from the kernel's list (kernel_path) when that
 * replays to the TPM (IMA_ML_ADOPTED), else is refused (-EBUSY).
 *
 * Reopening a file (the owner restarted) replays it:
 *  - with a TPM, nothing is extended again when the TPM's PCRs equal the
 *    replay; when they equal the replay without the last entry (an add
 *    cut short between the append and the extend - or an entry appended
 *    offline: the two look the same), that entry is dropped from the file,
 *    never extended, and a violation under its name takes its place;
 *    anything else is refused with -EBADMSG (the file does not describe the
 *    TPM: it was changed, or the TPM was reset - see rotate_stale; the
 *    message says which);
 *  - with software PCRs and a key (evm_ctx), FILE.mac must prove the list:
 *    a list that does not match it (entries changed, deleted, reordered,
 *    cut short), or has none, is refused with -EBADMSG; entries after what
 *    it covers are dropped and become violations, as above;
 *  - with software PCRs and no key the file is taken as it is.
 * Entries whose stored template digest does not match their data, and files
 * with damage before their last entry, are refused (-EBADMSG); a torn last
 * entry (crash during a write) is cut off.
 */
int ima_ml_open(const struct ima_ml_config *cfg, struct ima_measurements **out);
void ima_ml_close(struct ima_measurements *ml);
enum ima_ml_open_state ima_ml_open_state(const struct ima_measurements *ml);
/* A host list: take in what the other writers (and the kernel, for an
 * adopted list) appended since this process last looked, so that the
 * count and renderings are the list as it is now.  0 (nothing to do for
 * other lists), or -errno (the list no longer replays to the TPM, or was
 * replaced: the message says). */
int ima_ml_refresh(struct ima_measurements *ml);
/* What the owner must tell its operator after ima_ml_open, or NULL: a
 * persisted list with software PCRs and no key carries no integrity;
 * entries were dropped at resume.  The text names the list. */
const char *ima_ml_open_warning(const struct ima_measurements *ml);

/*
 * Measure an event with TEMPLATE_NAME (NULL: the default; a name or a format
 * string) into PCR (-1: the default).  Returns 0 when added, 1 when an
 * identical entry (same template digest, same PCR) is already in the list
 * and nothing was added, or a negative errno.  The entry is appended to the
 * file before the PCRs are extended (and the MAC record rewritten); when the
 * TPM extend (or the record's write) fails the entry stays in the list (as
 * in the kernel) and -EIO is returned.
 * Safe to call from many threads.
 */
int ima_ml_add_file(struct ima_measurements *ml, const struct ima_event_data *ev,
		    const char *template_name, int pcr);
/* Record a violation for FILENAME (the kernel's ima_add_violation): an
 * all-zero template digest in the list, 0xff.. extended. */
int ima_ml_add_violation(struct ima_measurements *ml, const char *filename,
			 const char *template_name, int pcr);
/* Measure a buffer (the kernel's process_buffer_measurement): the digest
 * of BUF with the list's algorithm, EVENTNAME as the name, BUF in 'buf'. */
int ima_ml_add_buffer(struct ima_measurements *ml, const char *eventname,
		      const void *buf, size_t len, const char *template_name,
		      int pcr);

/* runtime_measurements_count and violations */
size_t ima_ml_count(const struct ima_measurements *ml);
unsigned long ima_ml_violations(const struct ima_measurements *ml);
bool ima_ml_has_tpm(const struct ima_measurements *ml);
/* The PCR an add with PCR -1 extends (ima_ml_config.pcr). */
int ima_ml_default_pcr(const struct ima_measurements *ml);
/* The list's file, or NULL when it is kept in memory. */
const char *ima_ml_path(const struct ima_measurements *ml);

/* Call FN for each entry in list order, entries added meanwhile excluded;
 * stops at (and returns) the first non-zero return. */
int ima_ml_for_each(struct ima_measurements *ml,
		    int (*fn)(const struct ima_template_entry *e, void *arg),
		    void *arg);

/* A reader's place in the list, e.g. an open measurement file's: the
 * entries before it were visited.  Zeroed: the start.  The list is
 * append-only, so a cursor stays valid as long as the list. */
struct ima_ml_cursor {
	const void *last;	/* the last entry visited (the list's own) */
	size_t count;		/* entries visited */
};
/* ima_ml_for_each from C on: each entry after C up to the list's end as
 * it is now, C moved past every entry FN returned 0 for. */
int ima_ml_for_each_from(struct ima_measurements *ml, struct ima_ml_cursor *c,
			 int (*fn)(const struct ima_template_entry *e, void *arg),
			 void *arg);

/* binary_runtime_measurements / ascii_runtime_measurements (ALGO sha1), or
 * their _ALGO variants with bank ALGO's template digests. */
int ima_ml_write_binary(struct ima_measurements *ml, int algo, FILE *fp);
int ima_ml_write_ascii(struct ima_measurements *ml, int algo, FILE *fp);

/* The current value of PCR in bank ALGO: the TPM's, or the software PCR
 * (banks sha1 and sha256) when there is no TPM.  Returns the size. */
int ima_ml_pcr_read(struct ima_measurements *ml, int pcr, int algo,
		    uint8_t *out);

/* ---- a TPM 2.0, for callers that check lists against one ------------------------ */

struct ima_tpm;
int ima_tpm_open(const char *tcti, struct ima_tpm **out);
void ima_tpm_close(struct ima_tpm *tpm);
/* True when the TPM has an allocated PCR bank for ALGO. */
bool ima_tpm_has_bank(struct ima_tpm *tpm, int algo);
int ima_tpm_pcr_read(struct ima_tpm *tpm, int pcr, int algo, uint8_t *out);

#ifdef __cplusplus
}
#endif
#endif /* UEVM_MEASURE_H */
