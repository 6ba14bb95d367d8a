// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm label: write security.ima (regular files) and then security.evm. */
#include <getopt.h>
#include <pthread.h>
#include <search.h>
#include <stdlib.h>
#include <unistd.h>
#include "prog.h"

struct label_state {
	const struct uevm_ctx *ctx;
	struct progress progress;
	atomic_ulong labelled;
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

static int label_one(const struct uevm_file *f, const char *path, int err,
		     void *arg)
{
	struct label_state *s = arg;
	int ret;

	if (err) {
		file_error(path, "cannot open", err);
		atomic_fetch_add(&s->errors, 1);
		return 0;
	}
	if (!first_link(&f->st))
		return 0;	/* another name of an inode already labelled */
	ret = uevm_label_file(s->ctx, f);
	if (ret) {
		file_error(path, "not labelled", ret);
		atomic_fetch_add(&s->errors, 1);
		return 0;
	}
	atomic_fetch_add(&s->labelled, 1);
	atomic_fetch_add(&s->progress.files, 1);
	if (S_ISREG(f->st.st_mode))
		atomic_fetch_add(&s->progress.bytes, (unsigned long)f->st.st_size);
	return 0;
}

int cmd_label(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = { COMMON_LONG, { NULL, 0, NULL, 0 } };
	struct common_opts o;
	struct label_state s = { 0 };
	struct uevm_ctx *ctx;
	int c;

	common_opts_init(&o);
	while ((c = getopt_long(argc, argv, COMMON_SHORT, longopts, NULL)) != -1) {
		int r = c == OPT_HELP ? 0 : common_opt(&o, c, optarg);

		if (c == OPT_HELP)
			return help_show(cmd->name);
		if (r == 0 || c == OPT_JSON) {
			free(o.extra_xattrs);
			return opt_fail(cmd->name, c, argc, argv, COMMON_SHORT, longopts);
		}
		if (r < 0) {
			usage(cmd, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		error_msg("label: no PATH given");
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	if (need_cap_sys_admin(cmd->name, "writing")) {
		free(o.extra_xattrs);
		return EXIT_ERROR;
	}
	if (common_ctx(&o, true, &ctx))
		return EXIT_USAGE;
	s.ctx = ctx;
	progress_start(&s.progress, "labelling");
	uevm_walk((const char *const *)argv + optind, (size_t)(argc - optind),
		  &o.walk, label_one, &s);
	progress_stop(&s.progress);
	uevm_ctx_free(ctx);
	free(o.extra_xattrs);
	if (o.verbose || isatty(STDERR_FILENO))
		fprintf(stderr, "%s: labelled %lu objects, %lu errors\n", prog_name,
			atomic_load(&s.labelled), atomic_load(&s.errors));
	return atomic_load(&s.errors) ? EXIT_ERROR : 0;
}
