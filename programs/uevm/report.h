/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-object reports of the uevm commands (label, verify, clear, sign,
 * hmac, ima-hash): one record per object, in text, JSON or NDJSON.
 *
 * Text and JSON are collected and printed sorted at the end -- roots in
 * the order given, then each root's objects in the order of a walk that
 * visits every directory's entries sorted by name (byte order) -- so that
 * two reports of one tree compare equal whatever the number of threads.
 * NDJSON prints each object as it completes, for trees too big to wait.
 * The JSON schema is documented in uevm(1), JSON OUTPUT.
 */
#ifndef UEVM_REPORT_H
#define UEVM_REPORT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_NDJSON };

/* Which objects a report lists (the commands' -v and -q). */
enum report_level { REPORT_QUIET = -1, REPORT_NORMAL, REPORT_VERBOSE };

#define REPORT_MAX_WARNINGS 4

struct report_warning {
	const char *code;	/* "symlink-leaves-tree", "weak-digest" */
	const char *detail;
};

/* A difference from a manifest (uevm verify --manifest): CODE a stable
 * keyword ("owner", "content", "deleted", ...), DETAIL in words. */
struct report_change {
	const char *code;
	const char *detail;
};

/* One object's outcome; NULL strings are printed as null.  status,
 * evm_status, ima_status, cause and the warning codes must be static
 * strings (kept by pointer until the end); the others are copied. */
struct report_obj {
	const char *path;
	const struct stat *st;		/* NULL: not examined (type null) */
	bool ok;
	const char *status;
	const char *evm_status;
	const char *ima_status;
	const char *cause;
	const char *detail;
	const char *error;		/* set: could not be handled */
	const char *value;		/* hex: the value computed or written */
	const char *target;		/* a symlink's target */
	struct report_warning warn[REPORT_MAX_WARNINGS];
	int nwarn;
	const struct report_change *changes;	/* copied */
	size_t nchanges;
};

/* Writes OBJ's lines, if any, in the command's text format. */
typedef void (*report_text_fn)(FILE *fp, const struct report_obj *obj,
			       void *arg);

struct report_rec;

struct report {
	const char *command;
	enum report_format format;
	enum report_level level;
	report_text_fn text;
	void *text_arg;
	const char *const *roots;
	size_t nroots;
	pthread_mutex_t lock;
	struct report_rec **recs;
	size_t nrecs, cap;
	unsigned long seq;
	bool failed;			/* out of memory: records lost */
};

/* A summary count ("total": 5). */
struct report_count {
	const char *name;
	unsigned long n;
};

/* Set up a report of COMMAND for the objects under ROOTS. */
void report_init(struct report *r, const char *command,
		 enum report_format format, enum report_level level,
		 const char *const *roots, size_t nroots,
		 report_text_fn text, void *text_arg);
/* Add an object (thread-safe): kept for the end, or printed (NDJSON). */
void report_object(struct report *r, const struct report_obj *obj);
/* Print the records (sorted) and the JSON summary; text summaries are the
 * command's own, printed after this.  Returns 0, or -ENOMEM when records
 * were lost (the caller exits 2). */
int report_finish(struct report *r, const struct report_count *counts,
		  size_t ncounts);
void report_free(struct report *r);

/* The text of label, sign and clear: "STATUS PATH[: DETAIL]" per object
 * (their errors are on stderr already). */
void report_status_text(FILE *fp, const struct report_obj *obj, void *arg);
/* An object that could not be handled: "uevm: PATH: WHAT: why" on stderr,
 * counted in ERRORS, and its record with the error. */
void report_error(struct report *r, atomic_ulong *errors, const char *path,
		  const struct stat *st, const char *what, int err);

/* Pick the format from --json / --ndjson. */
static inline enum report_format report_format_of(bool json, bool ndjson)
{
	return ndjson ? REPORT_NDJSON : json ? REPORT_JSON : REPORT_TEXT;
}

struct common_opts;
/* -v/-q and --json/--ndjson exclude each other: -1 with a message. */
int report_check_opts(const char *command, const struct common_opts *o);
enum report_level report_level_of(const struct common_opts *o);

/* The type name of a mode ("file", "directory", "symlink", ...). */
const char *report_type_name(mode_t m);

/* A JSON string literal of S, and with B64KEY the key/value pair that
 * gives S's exact bytes when S is not valid UTF-8 (else null). */
void report_json_bytes(FILE *fp, const char *key, const char *b64key,
		       const char *s);

/* Flush and close standard output; on a write error say so and return
 * EXIT_ERROR, else RC.  Every command but evmctl's ends with it. */
int report_close_stdout(int rc);

/*
 * Hash algorithm strength, for warnings and --min-hash: md4 < md5 < sha1
 * (collisions found in practice: weak) < the others by collision
 * resistance, half their digest size in bits (rmd160 80, sha224 112,
 * sha256/sm3/streebog256/sha3-256 128, sha384 192, sha512 256).
 */
int hash_strength(int algo);
bool hash_is_weak(int algo);
/* Label or sign with a weak ALGO: one warning on standard error. */
void report_weak_algo(const char *command, int algo);

#endif
