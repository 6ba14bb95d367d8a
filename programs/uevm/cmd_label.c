// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm label: write security.ima (regular files) and then security.evm. */
#include <getopt.h>
#include <pthread.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "manifest.h"
#include "prog.h"
#include "report.h"

struct label_state {
	const struct uevm_ctx *ctx;
	struct report report;
	struct progress progress;
	atomic_ulong total;
	atomic_ulong labelled;
	atomic_ulong skipped;
	atomic_ulong errors;
	struct manifest *mf;	/* --manifest: what the tree looks like */
	const char *root;
};

/* Hard links: one inode reached by several names is labelled once, or two
 * threads would race (one's xattr write moves ctime under the other's hash). */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static void *seen_root;

static int cmp_ino(const void *a, const void *b)
{
	const struct stat *x = a, *y = b;

	if (x->st_dev != y->st_dev)
		return x->st_dev < y->st_dev ? -1 : 1;
	if (x->st_ino != y->st_ino)
		return x->st_ino < y->st_ino ? -1 : 1;
	return 0;
}

static bool first_link(const struct stat *st)
{
	struct stat *key;
	void *found;
	bool first;

	if (S_ISDIR(st->st_mode) || st->st_nlink < 2)
		return true;
	key = malloc(sizeof(*key));
	if (!key)
		return true;
	*key = *st;
	pthread_mutex_lock(&seen_lock);
	found = tsearch(key, &seen_root, cmp_ino);
	first = found && *(struct stat **)found == key;
	pthread_mutex_unlock(&seen_lock);
	if (!first)
		free(key);
	return first;
}

static void manifest_hook(struct label_state *s, const struct uevm_file *f,
			  const char *path, bool alias)
{
	int ret = manifest_add_file(s->mf, s->ctx, f,
				    manifest_rel(s->root, path), alias);

	if (ret) {
		error_msg("%s: not in the manifest: %s", path,
			  manifest_last_error());
		atomic_fetch_add(&s->errors, 1);
	}
}

static int label_one(const struct uevm_file *f, const char *path, int err,
		     void *arg)
{
	struct label_state *s = arg;
	struct report_obj obj = { .path = path, .ok = true };
	int ret;

	atomic_fetch_add(&s->total, 1);
	if (err) {
		report_error(&s->report, &s->errors, path, NULL, "cannot open", err);
		return 0;
	}
	obj.st = &f->st;
	obj.status = "labelled";
	if (!first_link(&f->st)) {
		/* Another name of an inode already labelled.  Which name came
		 * first depends on the threads: all are listed alike. */
		atomic_fetch_add(&s->skipped, 1);
		if (s->mf)
			manifest_hook(s, f, path, true);
		if (s->report.level == REPORT_VERBOSE)
			report_object(&s->report, &obj);
		return 0;
	}
	ret = uevm_label_file(s->ctx, f);
	if (ret) {
		/* No manifest is written for a tree with errors. */
		report_error(&s->report, &s->errors, path, &f->st, "not labelled", ret);
		return 0;
	}
	if (s->mf)
		manifest_hook(s, f, path, false);
	atomic_fetch_add(&s->labelled, 1);
	atomic_fetch_add(&s->progress.files, 1);
	if (S_ISREG(f->st.st_mode))
		atomic_fetch_add(&s->progress.bytes, (unsigned long)f->st.st_size);
	if (s->report.level == REPORT_VERBOSE)
		report_object(&s->report, &obj);
	return 0;
}

int cmd_label(const struct command *cmd, int argc, char **argv)
{
	enum { OPT_MANIFEST = OPT_FIRST_CMD, OPT_SIGN_KEY };
	static const struct option longopts[] = { COMMON_LONG, WALK_LONG,
		{ "manifest", required_argument, NULL, OPT_MANIFEST },
		{ "sign-key", required_argument, NULL, OPT_SIGN_KEY },
		{ NULL, 0, NULL, 0 } };
	const char *mf_file = NULL, *sign_key = NULL;
	struct uevm_signer *signer = NULL;
	struct common_opts o;
	struct label_state s = { 0 };
	struct uevm_ctx *ctx;
	int c, ret;

	common_opts_init(&o);
	while ((c = getopt_long(argc, argv, COMMON_SHORT WALK_SHORT, longopts, NULL)) != -1) {
		int r;

		if (c == OPT_MANIFEST || c == OPT_SIGN_KEY) {
			*(c == OPT_MANIFEST ? &mf_file : &sign_key) = optarg;
			continue;
		}
		if (c == OPT_HELP)
			return help_show(cmd->name);
		r = common_opt(&o, c, optarg);
		if (r == 0) {
			free(o.extra_xattrs);
			return opt_fail(cmd->name, c, argc, argv, COMMON_SHORT WALK_SHORT, longopts);
		}
		if (r < 0) {
			usage(cmd, stderr);
			free(o.extra_xattrs);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		error_msg("label: no PATH given");
		usage(cmd, stderr);
		free(o.extra_xattrs);
		return EXIT_USAGE;
	}
	if (sign_key && !mf_file) {
		error_msg("label: --sign-key signs the manifest: give --manifest");
		free(o.extra_xattrs);
		return EXIT_USAGE;
	}
	if (mf_file && argc - optind != 1) {
		error_msg("label: --manifest describes one tree: give exactly one PATH");
		free(o.extra_xattrs);
		return EXIT_USAGE;
	}
	if (need_cap_sys_admin(cmd->name, "writing")) {
		free(o.extra_xattrs);
		return EXIT_ERROR;
	}
	if (report_check_opts("label", &o)) {
		free(o.extra_xattrs);
		return EXIT_USAGE;
	}
	report_weak_algo("label", o.cfg.hash_algo);
	if (common_ctx(&o, true, &ctx))
		return EXIT_USAGE;
	/* One run, over mounts that outlive it: each filesystem's UUID is
	 * asked once.  Out of memory only costs the cache. */
	uevm_ctx_cache_fsuuid(ctx);
	if (sign_key && uevm_signer_load(sign_key, NULL, &signer)) {
		error_msg("%s: %s", sign_key, uevm_last_error());
		uevm_ctx_free(ctx);
		free(o.extra_xattrs);
		return EXIT_USAGE;
	}
	if (mf_file) {
		o.walk.recursive = true;	/* a manifest is of the whole tree */
		s.root = argv[optind];
		s.mf = manifest_new();
		if (!s.mf) {
			error_msg("out of memory");
			atomic_fetch_add(&s.errors, 1);
		}
	}
	s.ctx = ctx;
	report_init(&s.report, "label", report_format_of(o.json, o.ndjson),
		    report_level_of(&o), (const char *const *)argv + optind,
		    (size_t)(argc - optind), report_status_text, NULL);
	progress_start(&s.progress, "labelling");
	walk_tree((const char *const *)argv + optind, (size_t)(argc - optind),
		  &o.walk, label_one, &s);
	progress_stop(&s.progress);
	/* A manifest of a tree not wholly labelled would vouch for it. */
	if (s.mf && atomic_load(&s.errors))
		error_msg("%s: not written: the tree had errors", mf_file);
	else if (s.mf && (manifest_finish(s.mf) ||
		     manifest_write(s.mf, mf_file, ctx, signer))) {
		error_msg("manifest: %s", manifest_last_error());
		atomic_fetch_add(&s.errors, 1);
	}
	manifest_free(s.mf);
	uevm_signer_free(signer);
	uevm_ctx_free(ctx);
	free(o.extra_xattrs);
	{
		const struct report_count counts[] = {
			{ "total", atomic_load(&s.total) },
			{ "labelled", atomic_load(&s.labelled) },
			{ "skipped", atomic_load(&s.skipped) },
			{ "errors", atomic_load(&s.errors) },
			{ "warnings", 0 },
		};

		ret = report_finish(&s.report, counts, sizeof(counts) / sizeof(counts[0]));
	}
	report_free(&s.report);
	if (!o.quiet && (o.verbose || isatty(STDERR_FILENO)))
		fprintf(stderr, "%s: labelled %lu objects, %lu errors\n", prog_name,
			atomic_load(&s.labelled), atomic_load(&s.errors));
	return atomic_load(&s.errors) || ret ? EXIT_ERROR : 0;
}
