// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm verify: appraise labelled files and say which were tampered with. */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "manifest.h"
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
	struct manifest *mf;		/* --manifest */
	atomic_ulong changed, deleted, added;
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

/* Append the components of REL to the absolute path RES (of size LEN),
 * lexically: "." is nothing, ".." drops one, and never above "/". */
static bool path_append(char *res, size_t len, const char *rel)
{
	for (const char *p = rel; *p;) {
		size_t c = strcspn(p, "/"), n = strlen(res);

		if (c == 2 && p[0] == '.' && p[1] == '.') {
			char *slash = strrchr(res, '/');

			slash[slash == res] = '\0';
		} else if (c && !(c == 1 && p[0] == '.')) {
			if (n + c + 2 > len)
				return false;
			if (n > 1)
				res[n++] = '/';
			memcpy(res + n, p, c);
			res[n + c] = '\0';
		}
		p += c;
		while (*p == '/')
			p++;
	}
	return true;
}

/*
 * Beneath --root every target, an absolute one too, resolves inside the
 * root as on the booted system: the link leaves the tree when its target,
 * taken lexically from the link's directory, is not under the PATH the
 * link was reached from (for a link given as PATH, its directory).
 */
static const char *leaves_in_root(const struct verify_state *s,
				  const char *path, const char *target,
				  char *why, size_t wlen)
{
	char tree[PATH_MAX], res[PATH_MAX];
	size_t tl = 0, n;

	tree[0] = '\0';
	for (size_t i = 0; i < s->nroots; i++) {
		const char *r = s->roots[i];

		n = strlen(r);
		while (n > 1 && r[n - 1] == '/')
			n--;
		if (n >= sizeof(tree) || n < tl)
			continue;
		if (!strncmp(path, r, n) &&
		    (n == 1 || path[n] == '/' || path[n] == '\0')) {
			memcpy(tree, r, n);
			tree[n] = '\0';
			tl = n;
		}
	}
	strcpy(res, "/");
	if (!tl || !strcmp(tree, path)) {
		if (!path_append(res, sizeof(res), path))
			return NULL;
		path_append(res, sizeof(res), "..");
		snprintf(tree, sizeof(tree), "%s", res);
		tl = strlen(tree);
		strcpy(res, "/");
	}
	if (target[0] != '/' &&
	    (!path_append(res, sizeof(res), path) ||
	     !path_append(res, sizeof(res), "..")))
		return NULL;
	if (!path_append(res, sizeof(res), target))
		return NULL;
	if (tl == 1 || (!strncmp(res, tree, tl) &&
			(res[tl] == '/' || res[tl] == '\0')))
		return NULL;
	snprintf(why, wlen, "resolves to %s in the root, outside %s", res, tree);
	return why;
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
	if (s->o->walk.root)
		return leaves_in_root(s, path, target, why, wlen);
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
			evm_xattr_parse(buf, (size_t)n, &xv) :
			ima_xattr_parse(buf, (size_t)n, &xv);

		/* An HMAC (type 2) is keyed: SHA-1 collisions do not help. */
		if (!r && xv.type != EVM_XATTR_HMAC)
			algo = xv.algo;
	}
	free(buf);
	uevm_clear_last_error();
	return algo;
}

/* The manifest's view of F: what changed since it was labelled. */
static int check_manifest(struct verify_state *s, const struct uevm_file *f,
			  const char *path, struct mf_changes *ch)
{
	int ret = manifest_check_file(s->mf, s->ctx, f,
				      manifest_rel(s->roots[0], path), ch);

	if (ret || !ch->n)
		return ret;
	if (!strcmp(ch->v[0].code, "new"))
		atomic_fetch_add(&s->added, 1);
	else
		atomic_fetch_add(&s->changed, 1);
	return 0;
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
		/* The verdict's, from the values it read; else a read. */
		algo = i == 0 ? v->ima_algo : v->evm_algo;
		if (algo == -2)
			algo = xattr_algo(f, names[i]);
		else
			uevm_clear_last_error();
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
	/* No status: an object only the manifest knows (deleted). */
	if (o->status && (!o->ok || s->report.level == REPORT_VERBOSE)) {
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
	report_print_changes(fp, o);
}

static int verify_one(const struct uevm_file *f, const char *path, int err,
		      void *arg)
{
	struct verify_state *s = arg;
	struct report_obj obj = { .path = path };
	struct uevm_verdict v;
	char target[PATH_MAX], lwhy[PATH_MAX + 32], wwhy[REPORT_MAX_WARNINGS][64];
	struct mf_changes ch = { 0 };
	struct report_change *rc = NULL;
	const char *leaves = NULL;
	char why[600] = "";
	bool ok;
	int ret;

	atomic_fetch_add(&s->total, 1);
	if (!err) {
		ret = uevm_verify_file(s->ctx, f, &v);
		if (ret)
			err = ret;
	}
	if (err)
		snprintf(why, sizeof(why), "%s", *uevm_last_error() ?
			 uevm_last_error() : strerror(-err));
	/* Also for an object that could not be opened: it was not deleted. */
	if (s->mf && (ret = check_manifest(s, err ? NULL : f, path, &ch)) &&
	    !err) {
		err = ret;
		snprintf(why, sizeof(why), "manifest: %s", manifest_last_error());
	}
	if (err) {
		atomic_fetch_add(&s->errors, 1);
		obj.error = why;
		report_object(&s->report, &obj);
		mf_changes_free(&ch);
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
	/* Failures and differences always; warnings unless -q; the rest
	 * with -v. */
	if (ok && !ch.n && !(obj.nwarn && s->report.level != REPORT_QUIET) &&
	    s->report.level != REPORT_VERBOSE)
		return 0;
	obj.st = &f->st;
	obj.ok = ok;	/* the labels' verdict; differences come apart */
	obj.status = integrity_status_name(v.status);
	obj.evm_status = integrity_status_name(v.evm_status);
	if (S_ISREG(f->st.st_mode))
		obj.ima_status = integrity_status_name(v.ima_status);
	obj.cause = v.cause;
	obj.detail = v.detail;
	if (ch.n && !(rc = report_changes(&ch, &obj)))
		atomic_fetch_add(&s->errors, 1);
	report_object(&s->report, &obj);
	free(rc);
	mf_changes_free(&ch);
	return 0;
}

/* After the walk: the manifest's entries it never reached. */
static void report_deleted(struct verify_state *s)
{
	const char *root = s->roots[0];
	size_t rl = strlen(root);

	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	for (size_t i = 0; i < s->mf->n; i++) {
		const struct mf_entry *e = s->mf->e[i];
		struct report_obj obj = { 0 };
		struct report_change *rc;
		struct mf_changes ch;
		char *path;

		if (manifest_entry_seen(e))
			continue;
		atomic_fetch_add(&s->deleted, 1);
		if (manifest_deleted(e, &ch) ||
		    asprintf(&path, "%.*s%s%s", (int)rl, root,
			     root[rl - 1] == '/' ? "" : "/", e->path) < 0) {
			error_msg("out of memory");
			atomic_fetch_add(&s->errors, 1);
			return;
		}
		obj.path = path;
		rc = report_changes(&ch, &obj);
		if (rc)
			report_object(&s->report, &obj);
		else
			atomic_fetch_add(&s->errors, 1);
		free(rc);
		free(path);
		mf_changes_free(&ch);
	}
}

int cmd_verify(const struct command *cmd, int argc, char **argv)
{
	enum { OPT_MANIFEST = OPT_FIRST_CMD };
	static const struct option longopts[] = { COMMON_LONG, SIG_VERIFY_LONG,
		WALK_LONG,
		{ "min-hash", required_argument, NULL, OPT_MIN_HASH },
		{ "manifest", required_argument, NULL, OPT_MANIFEST },
		{ NULL, 0, NULL, 0 } };
	const char *mf_file = NULL;
	struct common_opts o;
	struct sig_verify_opts so = { 0 };
	struct verify_state s = { .min_hash = -1 };
	struct report_count counts[INTEGRITY_STATUS_COUNT + 7];
	size_t ncounts = 0;
	struct uevm_ctx *ctx;
	unsigned long failed, errors;
	int c, ret;

	common_opts_init(&o);
	while ((c = getopt_long(argc, argv, COMMON_SHORT WALK_SHORT, longopts, NULL)) != -1) {
		if (c == OPT_HELP) {
			sig_verify_opts_free(&so);
			return help_show(cmd->name);
		}
		if (c == OPT_MANIFEST) {
			mf_file = optarg;
			continue;
		}
		if (c == OPT_MIN_HASH) {
			s.min_hash = uevm_hash_algo_by_name(optarg);
			if (s.min_hash < 0) {
				error_msg("--min-hash: unknown hash algorithm '%s'",
					  optarg);
				sig_verify_opts_free(&so);
				free(o.extra_xattrs);
				return EXIT_USAGE;
			}
			continue;
		}
		if (sig_verify_opt(&so, c, optarg) > 0)
			continue;
		if (c == '?' || c == 'a') {
			sig_verify_opts_free(&so);
			free(o.extra_xattrs);
			return opt_fail(cmd->name, c, argc, argv, COMMON_SHORT WALK_SHORT, longopts);
		}
		if (common_opt(&o, c, optarg) <= 0) {
			usage(cmd, stderr);
			sig_verify_opts_free(&so);
			free(o.extra_xattrs);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		error_msg("verify: no PATH given");
		usage(cmd, stderr);
		sig_verify_opts_free(&so);
		free(o.extra_xattrs);
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
	/* One run, over mounts that outlive it: each filesystem's UUID is
	 * asked once.  Out of memory only costs the cache. */
	uevm_ctx_cache_fsuuid(ctx);
	if (mf_file && argc - optind != 1) {
		error_msg("verify: --manifest describes one tree: give exactly one PATH");
		uevm_ctx_free(ctx);
		free(o.extra_xattrs);
		return EXIT_USAGE;
	}
	/* Nothing is reported from a manifest that is not authentic. */
	if (mf_file && manifest_load(mf_file, ctx, uevm_ctx_certs(ctx), &s.mf)) {
		error_msg("manifest %s", manifest_last_error());
		uevm_ctx_free(ctx);
		free(o.extra_xattrs);
		return EXIT_ERROR;
	}
	if (mf_file)
		o.walk.recursive = true;
	s.ctx = ctx;
	s.o = &o;
	s.roots = (const char *const *)argv + optind;
	s.nroots = (size_t)(argc - optind);
	report_init(&s.report, "verify", report_format_of(o.json, o.ndjson),
		    report_level_of(&o), s.roots, s.nroots, verify_text, &s);
	progress_start(&s.progress, "verifying");
	walk_tree(s.roots, s.nroots, &o.walk, verify_one, &s);
	progress_stop(&s.progress);
	if (s.mf)
		report_deleted(&s);
	failed = atomic_load(&s.failed);
	errors = atomic_load(&s.errors);
	for (int i = 0; i < INTEGRITY_STATUS_COUNT; i++)
		counts[ncounts++] = (struct report_count){
			integrity_status_name(i), atomic_load(&s.counts[i]) };
	if (s.mf) {
		counts[ncounts++] = (struct report_count){ "changed", atomic_load(&s.changed) };
		counts[ncounts++] = (struct report_count){ "deleted", atomic_load(&s.deleted) };
		counts[ncounts++] = (struct report_count){ "new", atomic_load(&s.added) };
	}
	counts[ncounts++] = (struct report_count){ "total", atomic_load(&s.total) };
	counts[ncounts++] = (struct report_count){ "failed", failed };
	counts[ncounts++] = (struct report_count){ "errors", errors };
	counts[ncounts++] = (struct report_count){ "warnings", atomic_load(&s.warnings) };
	ret = report_finish(&s.report, counts, ncounts);
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
		if (s.mf)
			printf("  %-15s %lu\n  %-15s %lu\n  %-15s %lu\n",
			       "changed", atomic_load(&s.changed), "deleted",
			       atomic_load(&s.deleted), "new", atomic_load(&s.added));
	}
	manifest_free(s.mf);
	uevm_ctx_free(ctx);
	free(o.extra_xattrs);
	/* A difference from the manifest fails the check as a bad label does. */
	if (failed || atomic_load(&s.changed) || atomic_load(&s.deleted) ||
	    atomic_load(&s.added))
		return EXIT_VERIFY_FAILED;
	return errors || ret ? EXIT_ERROR : 0;
}
