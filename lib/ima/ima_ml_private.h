/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internals shared by the measurement-list files (ima_template*.c,
 * ima_entry.c, ima_queue.c, ima_fs_render.c, ima_tpm.c, ima_init.c). */
#ifndef UEVM_IMA_ML_PRIVATE_H
#define UEVM_IMA_ML_PRIVATE_H

#include "lib_private.h"
#include "ima.h"

/* One measurement (the kernel's struct ima_template_entry).  The field
 * array is allocated with the entry; field data are separate buffers. */
struct ima_template_entry {
	int pcr;
	bool violation;
	uint8_t digest[IMA_SHA1_DIGEST_SIZE];	/* SHA-1 template digest */
	uint8_t digest_sha256[32];		/* duplicate-detection key */
	const struct ima_template_desc *desc;	/* NULL: unknown template */
	char *unknown_name;			/* its name, when desc is NULL */
	struct ima_template_desc *owned_desc;	/* a custom format read from a list */
	uint32_t template_data_len;
	int num_fields;
	struct ima_field_data fields[];
};

/* An entry with room for N empty fields. */
struct ima_template_entry *ima_entry_alloc(int n);
/* Compute digest and digest_sha256 from the fields (zeros for violations). */
int ima_entry_finish(struct ima_template_entry *e);
/* True for the 'ima' template, whose binary form and digest are special. */
bool ima_entry_is_ima_template(const struct ima_template_entry *e);

/* A built-in template by name only; NULL for others. */
const struct ima_template_desc *ima_template_builtin(const char *name);
/* Fill D's fields from FMT (D's name and fmt are left to the caller). */
int ima_template_fmt_parse(const char *fmt, struct ima_template_desc *d);

/* Field show helpers (ima_template_lib.c). */
void ima_show_hex(FILE *fp, const uint8_t *p, size_t len);

/* Digest of BUF with a kernel algorithm id; returns the size or -errno. */
int ima_hash(int algo, const void *buf, size_t len, uint8_t *out);

/* ---- parsing and replay (ima_ml_parse.c, ima_ml_ascii.c) ---- */

/* Like ima_ml_parse_binary, but FN owns (and must free) each entry, and
 * GOOD_LEN gets the end of the last complete entry (updated after FN
 * returns, so that FN finds there where its own entry starts).  A list
 * cut short inside an entry gives -ENODATA. */
typedef int (*ima_ml_parse_owned_fn)(struct ima_template_entry *e,
				     size_t index, bool digest_ok, void *arg);
long ima_ml_parse_owned(const uint8_t *buf, size_t len, int digest_algo,
			ima_ml_parse_owned_fn fn, void *arg, size_t *good_len);
void ima_replay_init(struct ima_ml_replay *r, int algo);
/* ima_replay_init after checking that ALGO's bank can be replayed. */
int ima_replay_begin(struct ima_ml_replay *r, int algo);
/* An ima_ml_parse_fn extending ARG's bank (struct ima_replay_args). */
struct ima_replay_args {
	struct ima_ml_replay *r;
	bool padded;
};
int ima_replay_entry(const struct ima_template_entry *e, size_t index,
		     bool ok, void *arg);
/* Shared by the binary and ASCII readers: a template digest of zeros
 * (a violation); the descriptor for a template name read from a list
 * (built-in, or a custom format owned by the caller, freed with
 * ima_ml_desc_free_owned; NULL: unknown). */
bool ima_ml_all_zero(const uint8_t *p, size_t n);
const struct ima_template_desc *ima_ml_desc_for_name(const char *name,
						   struct ima_template_desc **owned);
void ima_ml_desc_free_owned(struct ima_template_desc *d);
/* Extend R's bank with one entry. */
int ima_replay_extend(struct ima_ml_replay *r, const struct ima_template_entry *e,
		      bool padded_sha1, bool digest_ok);

/* ---- the MAC record of a software-PCR list (ima_ml_mac.c) ---- */

struct ima_ml_mac;
/* KEY: the EVM HMAC key, or NULL: then *OUT stays NULL, and a list that
 * has a record is refused (it could not be kept up to date). */
int ima_ml_mac_open(const struct uevm_key *key, const char *list_path,
		    struct ima_ml_mac **out);
void ima_ml_mac_free(struct ima_ml_mac *m);
/* Check the record against the list's LEN bytes at BUF: *PROVEN gets the
 * bytes it covers (0 for a new list without a record); -EBADMSG naming the
 * list when entries were removed, changed or reordered, or the record is
 * missing.  The running digest then covers BUF[0:*PROVEN]. */
int ima_ml_mac_check(struct ima_ml_mac *m, const char *list_path,
		     const uint8_t *buf, size_t len, size_t *proven);
/* The running digest: restart it over BUF, or feed it appended bytes. */
int ima_ml_mac_reset(struct ima_ml_mac *m, const uint8_t *buf, size_t len);
int ima_ml_mac_update(struct ima_ml_mac *m, const void *bytes, size_t len);
/* Write the record for COUNT entries, SIZE bytes and the software banks. */
int ima_ml_mac_write(struct ima_ml_mac *m, uint64_t count, uint64_t size,
		     const struct ima_ml_replay *sha1,
		     const struct ima_ml_replay *sha256, bool sync);

/* ---- TPM 2.0 access (ima_tpm.c); calls are serialised by the caller ---- */

/* The TPM's banks this build can extend: sha1, sha256, sha384, sha512, sm3. */
int ima_tpm_extend(struct ima_tpm *tpm, int pcr,
		   const struct ima_template_entry *e);
/* Extend PCR with a value no list replays (a failed host-list add). */
int ima_tpm_invalidate(struct ima_tpm *tpm, int pcr);
/* Bit (1 << algo) for each allocated bank this build can compute. */
uint32_t ima_tpm_banks(struct ima_tpm *tpm);

/* The boot_aggregate event's digest (ima_init.c): with a TPM, over PCRs
 * 0-7 (0-9 for banks other than SHA-1) of the preferred bank; zeros without. */
int ima_calc_boot_aggregate(struct ima_tpm *tpm, int ima_hash_algo,
			    int *algo, uint8_t *digest, uint8_t sha1[20]);

#endif
