// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm label: write security.ima (regular files) and then security.evm. */
#include <getopt.h>
#include <pthread.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

/* Text: errors went to standard error; -v lists the rest. */
static void label_text(FILE *fp, const struct report_obj *o, void *arg)
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

static void label_error(struct label_state *s, const char *path,
			const struct stat *st, const char *what, int err)
{
	struct report_obj obj = { .path = path, .st = st };
	const char *why = uevm_last_error();
	char msg[600];

	snprintf(msg, sizeof(msg), "%s: %s", what, *why ? why : strerror(-err));
	obj.error = msg;
	file_error(path, what, err);
	atomic_fetch_add(&s->errors, 1);
	report_object(&s->report, &obj);
}

static int label_one(const struct uevm_file *f, const char *path, int err,
		     void *arg)
{
	struct label_state *s = arg;
	struct report_obj obj = { .path = path, .ok = true };
	int ret;

	atomic_fetch_add(&s->total, 1);
	if (err) {
		label_error(s, path, NULL, "cannot open", err);
		return 0;
	}
	obj.st = &f->st;
	obj.status = "labelled";
	if (!first_link(&f->st)) {
		/* Another name of an inode already labelled.  Which name came
		 * first depends on the threads: all are listed alike. */
		atomic_fetch_add(&s->skipped, 1);
		if (s->report.level == REPORT_VERBOSE)
			report_object(&s->report, &obj);
		return 0;
	}
	ret = uevm_label_file(s->ctx, f);
	if (ret) {
		label_error(s, path, &f->st, "not labelled", ret);
		return 0;
	}
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
	static const struct option longopts[] = { COMMON_LONG, { NULL, 0, NULL, 0 } };
	struct common_opts o;
	struct label_state s = { 0 };
	struct uevm_ctx *ctx;
	int c, ret;

	common_opts_init(&o);
	while ((c = getopt_long(argc, argv, COMMON_SHORT, longopts, NULL)) != -1) {
		int r = c == OPT_HELP ? 0 : common_opt(&o, c, optarg);

		if (c == OPT_HELP) {
			usage(cmd, stdout);
			return 0;
		}
		if (r <= 0) {
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
	if (report_check_opts("label", &o)) {
		free(o.extra_xattrs);
		return EXIT_USAGE;
	}
	report_weak_algo("label", o.cfg.hash_algo);
	if (common_ctx(&o, true, &ctx))
		return EXIT_USAGE;
	s.ctx = ctx;
	report_init(&s.report, "label", report_format_of(o.json, o.ndjson),
		    report_level_of(&o), (const char *const *)argv + optind,
		    (size_t)(argc - optind), label_text, NULL);
	progress_start(&s.progress, "labelling");
	uevm_walk((const char *const *)argv + optind, (size_t)(argc - optind),
		  &o.walk, label_one, &s);
	progress_stop(&s.progress);
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
