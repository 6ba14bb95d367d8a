// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm verify: appraise labelled files and say which were tampered with. */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "manifest.h"
#include "prog.h"

struct verify_state {
	const struct uevm_ctx *ctx;
	const struct common_opts *o;
	struct progress progress;
	atomic_ulong counts[INTEGRITY_STATUS_COUNT];
	atomic_ulong failed;
	atomic_ulong errors;
	atomic_ulong total;
	atomic_ulong warnings;
	bool first_json;
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

static const char *type_name(mode_t m)
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

static void json_entry(struct verify_state *s, const char *path,
		       const struct uevm_file *f, const struct uevm_verdict *v,
		       bool ok, const char *error, const char *target,
		       const char *leaves, const struct mf_changes *ch)
{
	FILE *fp = stdout;

	fputs(s->first_json ? "\n    " : ",\n    ", fp);
	s->first_json = false;
	fputs("{\"path\": ", fp);
	fput_json_string(fp, path);
	if (error) {
		fputs(", \"error\": ", fp);
		fput_json_string(fp, error);
		fputc('}', fp);
		return;
	}
	fprintf(fp, ", \"type\": \"%s\", \"ok\": %s, \"status\": \"%s\", \"evm_status\": \"%s\"",
		type_name(f->st.st_mode), ok ? "true" : "false",
		integrity_status_name(v->status),
		integrity_status_name(v->evm_status));
	if (S_ISREG(f->st.st_mode))
		fprintf(fp, ", \"ima_status\": \"%s\"", integrity_status_name(v->ima_status));
	fputs(", \"cause\": ", fp);
	if (v->cause)
		fput_json_string(fp, v->cause);
	else
		fputs("null", fp);
	if (v->detail[0]) {
		fputs(", \"detail\": ", fp);
		fput_json_string(fp, v->detail);
	}
	if (leaves) {
		fputs(", \"warning\": \"symlink-leaves-tree\", \"target\": ", fp);
		fput_json_string(fp, target);
		fputs(", \"warning_detail\": ", fp);
		fput_json_string(fp, leaves);
	}
	mf_json_changes(fp, ch);
	fputc('}', fp);
}

/* WARN PATH: symlink to 'TARGET' leaves the tree (WHY) */
static void print_leaves(const char *path, const char *target, const char *why)
{
	fputs("WARN ", stdout);
	fput_path(stdout, path);
	fputs(": symlink to '", stdout);
	fput_text(stdout, target);
	fputs("' leaves the tree (", stdout);
	fput_text(stdout, why);
	fputs(")\n", stdout);
}

static int verify_one(const struct uevm_file *f, const char *path, int err,
		      void *arg)
{
	struct verify_state *s = arg;
	struct uevm_verdict v;
	char target[PATH_MAX], lwhy[PATH_MAX + 32];
	const char *leaves = NULL;
	bool ok;
	int ret;

	struct mf_changes ch = { 0 };
	char why[600] = "";

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
		out_lock_acquire();
		progress_clear_line();
		if (s->o->json) {
			json_entry(s, path, NULL, NULL, false, why, NULL, NULL,
				   NULL);
		} else {
			fputs("ERROR ", stdout);
			fput_path(stdout, path);
			fputs(": cannot verify: ", stdout);
			fput_text(stdout, why);
			putchar('\n');
		}
		out_lock_release();
		mf_changes_free(&ch);
		return 0;
	}
	ok = uevm_verdict_ok(f, &v);
	atomic_fetch_add(&s->counts[v.status], 1);
	atomic_fetch_add(&s->progress.files, 1);
	if (S_ISREG(f->st.st_mode))
		atomic_fetch_add(&s->progress.bytes, (unsigned long)f->st.st_size);
	if (!ok)
		atomic_fetch_add(&s->failed, 1);
	if (S_ISLNK(f->st.st_mode))
		leaves = link_leaves(s, f, path, target, sizeof(target), lwhy,
				     sizeof(lwhy));
	if (leaves)
		atomic_fetch_add(&s->warnings, 1);
	if (ok && !leaves && !s->o->verbose && !ch.n)
		return 0;
	out_lock_acquire();
	progress_clear_line();
	if (s->o->json) {
		json_entry(s, path, f, &v, ok, NULL, target, leaves, &ch);
	} else if (ok && !s->o->verbose) {
		if (leaves)
			print_leaves(path, target, leaves);
		mf_print_changes(path, &ch);
	} else {
		/* STATUS PATH: cause: detail -- one line per file */
		printf("%s ", ok ? "OK" : "FAIL");
		fput_path(stdout, path);
		printf(": %s", integrity_status_name(v.status));
		if (v.cause)
			printf(" (%s)", v.cause);
		/* The detail may quote values read from the file's xattrs. */
		if (v.detail[0]) {
			fputs(": ", stdout);
			fput_text(stdout, v.detail);
		}
		putchar('\n');
		if (leaves)
			print_leaves(path, target, leaves);
		mf_print_changes(path, &ch);
	}
	out_lock_release();
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
		if (s->o->json) {
			fputs(s->first_json ? "\n    " : ",\n    ", stdout);
			s->first_json = false;
			fputs("{\"path\": ", stdout);
			fput_json_string(stdout, path);
			mf_json_changes(stdout, &ch);
			fputc('}', stdout);
		} else {
			mf_print_changes(path, &ch);
		}
		free(path);
		mf_changes_free(&ch);
	}
}

int cmd_verify(const struct command *cmd, int argc, char **argv)
{
	enum { OPT_MANIFEST = OPT_FIRST_CMD };
	static const struct option longopts[] = { COMMON_LONG, SIG_VERIFY_LONG,
		WALK_LONG,
		{ "manifest", required_argument, NULL, OPT_MANIFEST },
		{ NULL, 0, NULL, 0 } };
	const char *mf_file = NULL;
	struct common_opts o;
	struct sig_verify_opts so = { 0 };
	struct verify_state s = { .first_json = true };
	struct uevm_ctx *ctx;
	unsigned long failed, errors;
	int c;

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
		if (sig_verify_opt(&so, c, optarg) > 0)
			continue;
		if (c == '?' || c == 'a') {
			sig_verify_opts_free(&so);
			free(o.extra_xattrs);
			return opt_fail(cmd->name, c, argc, argv, COMMON_SHORT WALK_SHORT, longopts);
		}
		if (common_opt(&o, c, optarg) <= 0) {
			usage(cmd, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		error_msg("verify: no PATH given");
		usage(cmd, stderr);
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
		return EXIT_USAGE;
	}
	sig_verify_opts_free(&so);
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
	if (o.json)
		fputs("{\n  \"results\": [", stdout);
	progress_start(&s.progress, "verifying");
	uevm_walk((const char *const *)argv + optind, (size_t)(argc - optind),
		  &o.walk, verify_one, &s);
	progress_stop(&s.progress);
	if (s.mf)
		report_deleted(&s);
	failed = atomic_load(&s.failed) + atomic_load(&s.changed) +
		 atomic_load(&s.deleted) + atomic_load(&s.added);
	errors = atomic_load(&s.errors);
	if (o.json) {
		fputs("\n  ],\n  \"summary\": {", stdout);
		for (int i = 0; i < INTEGRITY_STATUS_COUNT; i++)
			printf("\"%s\": %lu, ", integrity_status_name(i),
			       atomic_load(&s.counts[i]));
		if (s.mf)
			printf("\"changed\": %lu, \"deleted\": %lu, \"new\": %lu, ",
			       atomic_load(&s.changed), atomic_load(&s.deleted),
			       atomic_load(&s.added));
		printf("\"total\": %lu, \"failed\": %lu, \"errors\": %lu, "
		       "\"warnings\": %lu}\n}\n", atomic_load(&s.total),
		       atomic_load(&s.failed), errors, atomic_load(&s.warnings));
	} else {
		printf("Summary: %lu objects, %lu failed, %lu errors\n",
		       atomic_load(&s.total), atomic_load(&s.failed), errors);
		for (int i = 0; i < INTEGRITY_STATUS_COUNT; i++)
			if (atomic_load(&s.counts[i]))
				printf("  %-15s %lu\n", integrity_status_name(i),
				       atomic_load(&s.counts[i]));
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
	fflush(stdout);
	if (failed)
		return EXIT_VERIFY_FAILED;
	return errors ? EXIT_ERROR : 0;
}
