// SPDX-License-Identifier: GPL-2.0-or-later
/* Per-object reports: records, their order, text, JSON and NDJSON. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "prog.h"
#include "report.h"

/*
 * One object, compact: the static strings by pointer, the others (path
 * first) packed after the header, those present in STRS order.  Formatted
 * only when printed, so that the path is held once.
 */
enum { S_DETAIL, S_ERROR, S_VALUE, S_TARGET, S_WARN };	/* bits of strs */

struct report_rec {
	unsigned long seq;	/* completion order: ties only */
	uint32_t root;
	uint32_t mode;
	uint8_t has_st, ok, nwarn, strs;
	uint32_t nchanges;	/* code and detail strings after the rest */
	const char *status, *evm_status, *ima_status, *cause;
	const char *warn_code[REPORT_MAX_WARNINGS];
	char data[];		/* path, then the strings present */
};

void report_init(struct report *r, const char *command,
		 enum report_format format, enum report_level level,
		 const char *const *roots, size_t nroots,
		 report_text_fn text, void *text_arg)
{
	memset(r, 0, sizeof(*r));
	r->command = command;
	r->format = format;
	r->level = level;
	r->roots = roots;
	r->nroots = nroots;
	r->text = text;
	r->text_arg = text_arg;
	pthread_mutex_init(&r->lock, NULL);
}

int report_check_opts(const char *command, const struct common_opts *o)
{
	if (o->verbose && o->quiet) {
		error_msg("%s: -v and -q exclude each other", command);
		return -1;
	}
	if (o->json && o->ndjson) {
		error_msg("%s: --json and --ndjson exclude each other", command);
		return -1;
	}
	return 0;
}

enum report_level report_level_of(const struct common_opts *o)
{
	return o->quiet ? REPORT_QUIET : o->verbose ? REPORT_VERBOSE :
		REPORT_NORMAL;
}

const char *report_type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return "file";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symlink";
	case S_IFCHR: return "char-device";
	case S_IFBLK: return "block-device";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	}
	return "unknown";
}

static void put_b64(FILE *fp, const unsigned char *s, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	fputc('"', fp);
	for (size_t i = 0; i < n; i += 3) {
		unsigned int v = (unsigned int)s[i] << 16;

		if (i + 1 < n)
			v |= (unsigned int)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		fputc(tab[v >> 18], fp);
		fputc(tab[(v >> 12) & 63], fp);
		fputc(i + 1 < n ? tab[(v >> 6) & 63] : '=', fp);
		fputc(i + 2 < n ? tab[v & 63] : '=', fp);
	}
	fputc('"', fp);
}

static void json_str(FILE *fp, const char *s)
{
	if (s)
		fput_json_string(fp, s);
	else
		fputs("null", fp);
}

void report_json_bytes(FILE *fp, const char *key, const char *b64key,
		       const char *s)
{
	fprintf(fp, "\"%s\": ", key);
	json_str(fp, s);
	fprintf(fp, ", \"%s\": ", b64key);
	if (s && !str_is_utf8(s))
		put_b64(fp, (const unsigned char *)s, strlen(s));
	else
		fputs("null", fp);
}

/* Every object has every key, null where it does not apply. */
static void json_obj(FILE *fp, const struct report_obj *o)
{
	fputs("{", fp);
	report_json_bytes(fp, "path", "path_b64", o->path);
	fputs(", \"type\": ", fp);
	json_str(fp, o->st ? report_type_name(o->st->st_mode) : NULL);
	fprintf(fp, ", \"ok\": %s", o->ok ? "true" : "false");
	fputs(", \"status\": ", fp);
	json_str(fp, o->status);
	fputs(", \"evm_status\": ", fp);
	json_str(fp, o->evm_status);
	fputs(", \"ima_status\": ", fp);
	json_str(fp, o->ima_status);
	fputs(", \"cause\": ", fp);
	json_str(fp, o->cause);
	fputs(", \"detail\": ", fp);
	json_str(fp, o->detail && *o->detail ? o->detail : NULL);
	fputs(", \"error\": ", fp);
	json_str(fp, o->error);
	fputs(", \"value\": ", fp);
	json_str(fp, o->value);
	fputs(", ", fp);
	report_json_bytes(fp, "target", "target_b64", o->target);
	/* The first warning also under the keys of verify's first schema. */
	fputs(", \"warning\": ", fp);
	json_str(fp, o->nwarn ? o->warn[0].code : NULL);
	fputs(", \"warning_detail\": ", fp);
	json_str(fp, o->nwarn ? o->warn[0].detail : NULL);
	fputs(", \"warnings\": [", fp);
	for (int i = 0; i < o->nwarn; i++) {
		fputs(i ? ", {\"code\": " : "{\"code\": ", fp);
		json_str(fp, o->warn[i].code);
		fputs(", \"detail\": ", fp);
		json_str(fp, o->warn[i].detail);
		fputc('}', fp);
	}
	fputs("], \"changes\": [", fp);
	for (size_t i = 0; i < o->nchanges; i++) {
		fputs(i ? ", {\"code\": " : "{\"code\": ", fp);
		json_str(fp, o->changes[i].code);
		fputs(", \"detail\": ", fp);
		json_str(fp, o->changes[i].detail);
		fputc('}', fp);
	}
	fputs("]}", fp);
}

/* The index of the root PATH was reached from: the longest given path
 * it starts with (a root named twice: the first). */
static uint32_t root_index(const struct report *r, const char *path)
{
	uint32_t best = 0;
	size_t blen = 0;
	bool found = false;

	for (size_t i = 0; i < r->nroots; i++) {
		const char *root = r->roots[i];
		size_t n = strlen(root);

		while (n > 1 && root[n - 1] == '/')
			n--;
		if (strncmp(path, root, n) ||
		    !(path[n] == '/' || path[n] == '\0' || root[n - 1] == '/'))
			continue;
		if (!found || n > blen) {
			best = (uint32_t)i;
			blen = n;
			found = true;
		}
	}
	return found ? best : (uint32_t)r->nroots;
}

static size_t str_size(const char *str)
{
	return str ? strlen(str) + 1 : 0;
}

static char *put_str(char *p, const char *str)
{
	size_t n = strlen(str) + 1;

	memcpy(p, str, n);
	return p + n;
}

static struct report_rec *rec_new(const struct report_obj *o)
{
	const char *opt[S_WARN] = { o->detail && *o->detail ? o->detail : NULL,
				    o->error, o->value, o->target };
	size_t size = sizeof(struct report_rec) + strlen(o->path) + 1;
	struct report_rec *rec;
	char *p;

	for (int i = 0; i < S_WARN; i++)
		size += str_size(opt[i]);
	for (int i = 0; i < o->nwarn; i++)
		size += str_size(o->warn[i].detail);
	for (size_t i = 0; i < o->nchanges; i++)
		size += str_size(o->changes[i].code ? o->changes[i].code : "") +
			str_size(o->changes[i].detail ? o->changes[i].detail : "");
	rec = calloc(1, size);
	if (!rec)
		return NULL;
	rec->mode = o->st ? (uint32_t)o->st->st_mode : 0;
	rec->has_st = !!o->st;
	rec->ok = o->ok;
	rec->nwarn = (uint8_t)o->nwarn;
	rec->status = o->status;
	rec->evm_status = o->evm_status;
	rec->ima_status = o->ima_status;
	rec->cause = o->cause;
	p = put_str(rec->data, o->path);
	for (int i = 0; i < S_WARN; i++) {
		if (!opt[i])
			continue;
		rec->strs |= (uint8_t)(1u << i);
		p = put_str(p, opt[i]);
	}
	for (int i = 0; i < o->nwarn; i++) {
		rec->warn_code[i] = o->warn[i].code;
		if (o->warn[i].detail) {
			rec->strs |= (uint8_t)(1u << (S_WARN + i));
			p = put_str(p, o->warn[i].detail);
		}
	}
	rec->nchanges = (uint32_t)o->nchanges;
	for (size_t i = 0; i < o->nchanges; i++) {
		p = put_str(p, o->changes[i].code ? o->changes[i].code : "");
		p = put_str(p, o->changes[i].detail ? o->changes[i].detail : "");
	}
	return rec;
}

/* The object REC holds, its strings pointing into REC; CH has room for
 * its rec->nchanges differences. */
static void rec_obj(const struct report_rec *rec, struct stat *st,
		    struct report_obj *o, struct report_change *ch)
{
	const char **opt[S_WARN] = { &o->detail, &o->error, &o->value, &o->target };
	const char *p = rec->data;

	memset(o, 0, sizeof(*o));
	if (rec->has_st) {
		memset(st, 0, sizeof(*st));
		st->st_mode = rec->mode;
		o->st = st;
	}
	o->ok = rec->ok;
	o->status = rec->status;
	o->evm_status = rec->evm_status;
	o->ima_status = rec->ima_status;
	o->cause = rec->cause;
	o->path = p;
	p += strlen(p) + 1;
	for (int i = 0; i < S_WARN; i++) {
		if (!(rec->strs & (1u << i)))
			continue;
		*opt[i] = p;
		p += strlen(p) + 1;
	}
	o->nwarn = rec->nwarn;
	for (int i = 0; i < rec->nwarn; i++) {
		o->warn[i].code = rec->warn_code[i];
		if (rec->strs & (1u << (S_WARN + i))) {
			o->warn[i].detail = p;
			p += strlen(p) + 1;
		}
	}
	for (uint32_t i = 0; i < rec->nchanges; i++) {
		ch[i].code = p;
		p += strlen(p) + 1;
		ch[i].detail = p;
		p += strlen(p) + 1;
	}
	o->changes = ch;
	o->nchanges = rec->nchanges;
}

static void add_rec(struct report *r, const struct report_obj *obj)
{
	struct report_rec *rec = rec_new(obj);

	if (!rec) {
		pthread_mutex_lock(&r->lock);
		r->failed = true;
		pthread_mutex_unlock(&r->lock);
		return;
	}
	rec->root = root_index(r, obj->path);
	pthread_mutex_lock(&r->lock);
	if (r->nrecs == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 1024;
		struct report_rec **n = realloc(r->recs, cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&r->lock);
			free(rec);
			r->failed = true;
			return;
		}
		r->recs = n;
		r->cap = cap;
	}
	rec->seq = r->seq++;
	r->recs[r->nrecs++] = rec;
	pthread_mutex_unlock(&r->lock);
}

void report_object(struct report *r, const struct report_obj *obj)
{
	if (r->format == REPORT_NDJSON) {
		/* Straight out, one line per object, in completion order. */
		out_lock_acquire();
		progress_clear_line();
		json_obj(stdout, obj);
		fputc('\n', stdout);
		out_lock_release();
		return;
	}
	add_rec(r, obj);
}

/* Byte order, with '/' below every other byte: "a" < "a/x" < "a-b", the
 * order of a walk that sorts each directory's entries by name. */
static int path_cmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a;
	const unsigned char *y = (const unsigned char *)b;

	for (;; x++, y++) {
		int cx = *x == '/' ? 1 : *x ? *x + 1 : 0;
		int cy = *y == '/' ? 1 : *y ? *y + 1 : 0;

		if (cx != cy)
			return cx - cy;
		if (!cx)
			return 0;
	}
}

static int rec_cmp(const void *pa, const void *pb)
{
	const struct report_rec *a = *(struct report_rec *const *)pa;
	const struct report_rec *b = *(struct report_rec *const *)pb;
	int c;

	if (a->root != b->root)
		return a->root < b->root ? -1 : 1;
	c = path_cmp(a->data, b->data);
	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void json_summary(FILE *fp, const struct report_count *c, size_t n)
{
	fputs("{", fp);
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "%s\"%s\": %lu", i ? ", " : "", c[i].name, c[i].n);
	fputs("}", fp);
}

int report_finish(struct report *r, const struct report_count *counts,
		  size_t ncounts)
{
	if (r->format == REPORT_NDJSON) {
		printf("{\"command\": \"%s\", \"summary\": ", r->command);
		json_summary(stdout, counts, ncounts);
		fputs("}\n", stdout);
		return r->failed ? -ENOMEM : 0;
	}
	if (r->nrecs)
		qsort(r->recs, r->nrecs, sizeof(*r->recs), rec_cmp);
	if (r->format == REPORT_JSON)
		printf("{\n  \"command\": \"%s\",\n  \"results\": [", r->command);
	for (size_t i = 0; i < r->nrecs; i++) {
		struct report_change *ch = NULL;
		struct report_obj obj;
		struct stat st;

		if (r->recs[i]->nchanges) {
			ch = calloc(r->recs[i]->nchanges, sizeof(*ch));
			if (!ch) {
				r->failed = true;
				continue;
			}
		}
		rec_obj(r->recs[i], &st, &obj, ch);
		if (r->format == REPORT_JSON) {
			fputs(i ? ",\n    " : "\n    ", stdout);
			json_obj(stdout, &obj);
		} else {
			r->text(stdout, &obj, r->text_arg);
		}
		free(ch);
	}
	if (r->format == REPORT_JSON) {
		fputs("\n  ],\n  \"summary\": ", stdout);
		json_summary(stdout, counts, ncounts);
		fputs("\n}\n", stdout);
	}
	if (r->failed)
		error_msg("%s: out of memory: the report is incomplete", r->command);
	return r->failed ? -ENOMEM : 0;
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->nrecs; i++)
		free(r->recs[i]);
	free(r->recs);
	r->recs = NULL;
	r->nrecs = r->cap = 0;
	pthread_mutex_destroy(&r->lock);
}

int report_close_stdout(int rc)
{
	bool had_error = ferror(stdout);
	int err = 0;

	errno = 0;
	if (fflush(stdout))
		err = errno;
	else if (had_error)
		err = -1;	/* failed before; the cause is gone */
	if (fclose(stdout) && !err && errno != EBADF)
		err = errno;
	if (!err)
		return rc;
	if (err > 0)
		error_msg("write error: %s", strerror(err));
	else
		error_msg("write error");
	return EXIT_ERROR;
}

int hash_strength(int algo)
{
	switch (algo) {
	case UEVM_HASH_MD4:
		return 1;
	case UEVM_HASH_MD5:
		return 2;
	case UEVM_HASH_SHA1:
		return 3;
	case 9:		/* rmd256: no more than rmd128 */
		return 64;
	case 10:	/* rmd320: no more than rmd160 */
		return 80;
	}
	return (int)uevm_hash_algo_digest_size(algo) * 4;
}

bool hash_is_weak(int algo)
{
	int s = hash_strength(algo);

	return s >= 1 && s <= 3;
}

void report_weak_algo(const char *command, int algo)
{
	if (hash_is_weak(algo))
		error_msg("%s: warning: %s is a weak digest: colliding files "
			  "can be made, and one swapped for its twin without "
			  "changing the label; use sha256 or stronger",
			  command, uevm_hash_algo_name(algo));
}

/* label, sign, clear: "STATUS PATH[: DETAIL]"; errors went to stderr. */
void report_status_text(FILE *fp, const struct report_obj *o, void *arg)
{
	(void)arg;
	if (o->error)
		return;
	fprintf(fp, "%s ", o->status);
	fput_path(fp, o->path);
	if (o->detail) {
		fputs(": ", fp);
		fput_text(fp, o->detail);
	}
	fputc('\n', fp);
}

void report_error(struct report *r, atomic_ulong *errors, const char *path,
		  const struct stat *st, const char *what, int err)
{
	struct report_obj obj = { .path = path, .st = st };
	const char *why = uevm_last_error();
	char msg[600];

	snprintf(msg, sizeof(msg), "%s: %s", what, *why ? why : strerror(-err));
	obj.error = msg;
	file_error(path, what, err);
	atomic_fetch_add(errors, 1);
	report_object(r, &obj);
}
