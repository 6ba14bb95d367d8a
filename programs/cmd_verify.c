// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm verify: appraise labelled files and say which were tampered with. */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "prog.h"
#include "report.h"

enum { OPT_MIN_HASH = OPT_FIRST_CMD + 300 };

struct verify_state {
	const struct uevm_ctx *ctx;
	const struct common_opts *o;
	struct report report;
	struct progress progress;
	atomic_ulong counts[INTEGRITY_STATUS_COUNT];
	atomic_ulong failed;
	atomic_ulong errors;
	atomic_ulong total;
	atomic_ulong warnings;
	int min_hash;			/* --min-hash, or -1 */
	const char *const *roots;	/* the PATHs given */
	size_t nroots;
};

/* The root PATH was reached from: the longest given path it starts with. */
static const char *root_of(const struct verify_state *s, const char *path)
{
	const char *best = NULL;
	size_t blen = 0;

	for (size_t i = 0; i < s->nroots; i++) {
		const char *r = s->roots[i];
		size_t n = strlen(r);

		while (n > 1 && r[n - 1] == '/')
			n--;
		if (!strncmp(path, r, n) && (path[n] == '/' || path[n] == '\0') &&
		    n >= blen) {
			best = r;
			blen = n;
		}
	}
	return best;
}

/* Components of PATH below ROOT before its last one (the link's depth). */
static int depth_below(const char *root, const char *path)
{
	const char *p = path + strlen(root);
	int n = 0;

	while (*p) {
		while (*p == '/')
			p++;
		if (*p)
			n++;
		p += strcspn(p, "/");
	}
	return n > 0 ? n - 1 : 0;
}

/*
 * A symlink whose target leaves the tree being verified, lexically: an
 * absolute target, or one whose ".." climb above the root it was reached
 * from.  Its label says nothing about what it leads to, and through a
 * mount of the tree such a link can reach files nobody checks (uevmfs(8)).
 * NULL when the link stays inside; otherwise what to say, in WHY.
 */
static const char *link_leaves(const struct verify_state *s,
			       const struct uevm_file *f, const char *path,
			       char *target, size_t tlen, char *why, size_t wlen)
{
	const char *root = root_of(s, path), *p;
	ssize_t n = readlinkat(f->fd, "", target, tlen - 1);
	int depth;

	if (n < 0)
		return NULL;
	target[n] = '\0';
	if (target[0] == '/') {
		snprintf(why, wlen, "absolute target");
		return why;
	}
	/* The link given by name: its directory is the tree. */
	depth = root && strcmp(root, path) ? depth_below(root, path) : 0;
	for (p = target; *p;) {
		size_t c = strcspn(p, "/");

		if (c == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0) {
				snprintf(why, wlen, "climbs out of %s",
					 root && strcmp(root, path) ? root : "its directory");
				return why;
			}
		} else if (c && !(c == 1 && p[0] == '.')) {
			depth++;
		}
		p += c;
		while (*p == '/')
			p++;
	}
	return NULL;
}

/* The hash algorithm of a digest or signature in xattr NAME, or -1. */
static int xattr_algo(const struct uevm_file *f, const char *name)
{
	struct uevm_xattr_value xv;
	uint8_t *buf = NULL;
	size_t size = 0;
	ssize_t n = uevm_getxattr_alloc(f, name, &buf, &size);
	int algo = -1;

	if (n > 0) {
		int r = strcmp(name, XATTR_NAME_IMA) ?
			uevm_evm_xattr_parse(buf, (size_t)n, &xv) :
			uevm_ima_xattr_parse(buf, (size_t)n, &xv);

		/* An HMAC (type 2) is keyed: SHA-1 collisions do not help. */
		if (!r && xv.type != EVM_XATTR_HMAC)
			algo = xv.algo;
	}
	free(buf);
	uevm_clear_last_error();
	return algo;
}

/*
 * Digests with md4, md5 or sha1 can be swapped for a colliding twin: a
 * warning, or with --min-hash a failure when weaker than asked.
 */
static void check_digests(struct verify_state *s, const struct uevm_file *f,
			  struct uevm_verdict *v, bool *ok,
			  struct report_obj *obj, char why[][64])
{
	static const char *const names[] = { XATTR_NAME_IMA, XATTR_NAME_EVM };

	for (int i = 0; i < 2; i++) {
		const char *name;
		int algo;

		if (i == 0 && !S_ISREG(f->st.st_mode))
			continue;
		algo = xattr_algo(f, names[i]);
		name = algo >= 0 ? uevm_hash_algo_name(algo) : NULL;
		if (!name)
			continue;	/* none, or one the check itself refuses */
		if (s->min_hash >= 0 &&
		    hash_strength(algo) < hash_strength(s->min_hash)) {
			if (*ok) {
				*ok = false;
				v->status = INTEGRITY_FAIL;
				v->cause = "weak-hash";
				snprintf(v->detail, sizeof(v->detail),
					 "%s uses %s, weaker than --min-hash %s",
					 names[i], name,
					 uevm_hash_algo_name(s->min_hash));
			}
			continue;
		}
		if (!hash_is_weak(algo) || obj->nwarn >= REPORT_MAX_WARNINGS)
			continue;
		snprintf(why[obj->nwarn], 64, "weak digest %s in %s", name,
			 names[i]);
		obj->warn[obj->nwarn].code = "weak-digest";
		obj->warn[obj->nwarn].detail = why[obj->nwarn];
		obj->nwarn++;
	}
}

/* Text: FAIL/OK PATH: status (cause): detail, then its WARN lines. */
static void verify_text(FILE *fp, const struct report_obj *o, void *arg)
{
	const struct verify_state *s = arg;

	if (o->error) {
		fputs("ERROR ", fp);
		fput_path(fp, o->path);
		fputs(": cannot verify: ", fp);
		fput_text(fp, o->error);
		fputc('\n', fp);
		return;
	}
	if (!o->ok || s->report.level == REPORT_VERBOSE) {
		fprintf(fp, "%s ", o->ok ? "OK" : "FAIL");
		fput_path(fp, o->path);
		fprintf(fp, ": %s", o->status);
		if (o->cause)
			fprintf(fp, " (%s)", o->cause);
		/* The detail may quote values read from the file's xattrs. */
		if (o->detail && o->detail[0]) {
			fputs(": ", fp);
			fput_text(fp, o->detail);
		}
		fputc('\n', fp);
	}
	for (int i = 0; i < o->nwarn; i++) {
		fputs("WARN ", fp);
		fput_path(fp, o->path);
		if (!strcmp(o->warn[i].code, "symlink-leaves-tree")) {
			/* WARN PATH: symlink to 'TARGET' leaves the tree (WHY) */
			fputs(": symlink to '", fp);
			fput_path(fp, o->target);
			fputs("' leaves the tree (", fp);
			fput_text(fp, o->warn[i].detail);
			fputs(")\n", fp);
		} else {
			fputs(": ", fp);
			fput_text(fp, o->warn[i].detail);
			fputc('\n', fp);
		}
	}
}

static int verify_one(const struct uevm_file *f, const char *path, int err,
		      void *arg)
{
	struct verify_state *s = arg;
	struct report_obj obj = { .path = path };
	struct uevm_verdict v;
	char target[PATH_MAX], lwhy[PATH_MAX + 32], wwhy[REPORT_MAX_WARNINGS][64];
	const char *leaves = NULL;
	bool ok;
	int ret;

	atomic_fetch_add(&s->total, 1);
	if (!err) {
		ret = uevm_verify_file(s->ctx, f, &v);
		if (ret)
			err = ret;
	}
	if (err) {
		char why[600];

		snprintf(why, sizeof(why), "%s", *uevm_last_error() ?
			 uevm_last_error() : strerror(-err));
		atomic_fetch_add(&s->errors, 1);
		obj.error = why;
		report_object(&s->report, &obj);
		return 0;
	}
	ok = uevm_verdict_ok(f, &v);
	atomic_fetch_add(&s->progress.files, 1);
	if (S_ISREG(f->st.st_mode))
		atomic_fetch_add(&s->progress.bytes, (unsigned long)f->st.st_size);
	if (S_ISLNK(f->st.st_mode)) {
		target[0] = '\0';
		leaves = link_leaves(s, f, path, target, sizeof(target), lwhy,
				     sizeof(lwhy));
		obj.target = target[0] ? target : NULL;
	}
	if (leaves) {
		obj.warn[0].code = "symlink-leaves-tree";
		obj.warn[0].detail = leaves;
		obj.nwarn = 1;
	}
	check_digests(s, f, &v, &ok, &obj, wwhy);
	atomic_fetch_add(&s->counts[v.status], 1);
	if (!ok)
		atomic_fetch_add(&s->failed, 1);
	if (obj.nwarn)
		atomic_fetch_add(&s->warnings, 1);
	/* Failures always; warnings unless -q; the rest with -v. */
	if (ok && !(obj.nwarn && s->report.level != REPORT_QUIET) &&
	    s->report.level != REPORT_VERBOSE)
		return 0;
	obj.st = &f->st;
	obj.ok = ok;
	obj.status = integrity_status_name(v.status);
	obj.evm_status = integrity_status_name(v.evm_status);
	if (S_ISREG(f->st.st_mode))
		obj.ima_status = integrity_status_name(v.ima_status);
	obj.cause = v.cause;
	obj.detail = v.detail;
	report_object(&s->report, &obj);
	return 0;
}

int cmd_verify(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { COMMON_LONG, SIG_VERIFY_LONG,
		{ "min-hash", required_argument, NULL, OPT_MIN_HASH },
		{ NULL, 0, NULL, 0 } };
	struct common_opts o;
	struct sig_verify_opts so = { 0 };
	struct verify_state s = { .min_hash = -1 };
	struct report_count counts[INTEGRITY_STATUS_COUNT + 4];
	struct uevm_ctx *ctx;
	unsigned long failed, errors;
	int c, ret;

	common_opts_init(&o);
	while ((c = getopt_long(argc, argv, COMMON_SHORT, longopts, NULL)) != -1) {
		if (c == OPT_HELP) {
			usage(cmd, stdout);
			return 0;
		}
		if (c == OPT_MIN_HASH) {
			s.min_hash = uevm_hash_algo_by_name(optarg);
			if (s.min_hash < 0) {
				error_msg("--min-hash: unknown hash algorithm '%s'",
					  optarg);
				sig_verify_opts_free(&so);
				return EXIT_USAGE;
			}
			continue;
		}
		if (sig_verify_opt(&so, c, optarg) > 0)
			continue;
		if (common_opt(&o, c, optarg) <= 0 || c == 'a') {
			usage(cmd, stderr);
			sig_verify_opts_free(&so);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		error_msg("verify: no PATH given");
		usage(cmd, stderr);
		sig_verify_opts_free(&so);
		return EXIT_USAGE;
	}
	if (report_check_opts("verify", &o)) {
		sig_verify_opts_free(&so);
		free(o.extra_xattrs);
		return EXIT_USAGE;
	}
	/* Certificates alone are enough for signed trees. */
	if (common_ctx(&o, so.ncerts == 0, &ctx)) {
		sig_verify_opts_free(&so);
		return EXIT_USAGE;
	}
	if (sig_verify_apply(&so, ctx)) {
		sig_verify_opts_free(&so);
		uevm_ctx_free(ctx);
		free(o.extra_xattrs);
		return EXIT_USAGE;
	}
	sig_verify_opts_free(&so);
	s.ctx = ctx;
	s.o = &o;
	s.roots = (const char *const *)argv + optind;
	s.nroots = (size_t)(argc - optind);
	report_init(&s.report, "verify", report_format_of(o.json, o.ndjson),
		    report_level_of(&o), s.roots, s.nroots, verify_text, &s);
	progress_start(&s.progress, "verifying");
	uevm_walk(s.roots, s.nroots, &o.walk, verify_one, &s);
	progress_stop(&s.progress);
	failed = atomic_load(&s.failed);
	errors = atomic_load(&s.errors);
	for (int i = 0; i < INTEGRITY_STATUS_COUNT; i++) {
		counts[i].name = integrity_status_name(i);
		counts[i].n = atomic_load(&s.counts[i]);
	}
	counts[INTEGRITY_STATUS_COUNT] = (struct report_count){ "total", atomic_load(&s.total) };
	counts[INTEGRITY_STATUS_COUNT + 1] = (struct report_count){ "failed", failed };
	counts[INTEGRITY_STATUS_COUNT + 2] = (struct report_count){ "errors", errors };
	counts[INTEGRITY_STATUS_COUNT + 3] =
		(struct report_count){ "warnings", atomic_load(&s.warnings) };
	ret = report_finish(&s.report, counts, INTEGRITY_STATUS_COUNT + 4);
	report_free(&s.report);
	if (!o.json && !o.ndjson && !o.quiet) {
		printf("Summary: %lu objects, %lu failed, %lu errors\n",
		       atomic_load(&s.total), failed, errors);
		for (int i = 0; i < INTEGRITY_STATUS_COUNT; i++)
			if (counts[i].n)
				printf("  %-15s %lu\n", counts[i].name, counts[i].n);
		if (errors)
			printf("  %-15s %lu\n", "error", errors);
		if (atomic_load(&s.warnings))
			printf("  %-15s %lu\n", "warnings", atomic_load(&s.warnings));
	}
	uevm_ctx_free(ctx);
	free(o.extra_xattrs);
	if (failed)
		return EXIT_VERIFY_FAILED;
	return errors || ret ? EXIT_ERROR : 0;
}
