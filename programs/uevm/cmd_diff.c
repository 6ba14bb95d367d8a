// SPDX-License-Identifier: GPL-2.0-or-later
/* uevm diff: what changed between two labelled releases, from their
 * manifests (uevm label --manifest). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "manifest.h"
#include "prog.h"

struct diff_counts {
	unsigned long changed, deleted, added;
	bool first;
};

static int show(const struct common_opts *o, struct diff_counts *n,
		const char *path, struct mf_changes *ch)
{
	if (!ch->n)
		return 0;
	if (!strcmp(ch->v[0].code, "new"))
		n->added++;
	else if (!strcmp(ch->v[0].code, "deleted"))
		n->deleted++;
	else
		n->changed++;
	if (o->json) {
		fputs(n->first ? "\n    {\"path\": " : ",\n    {\"path\": ", stdout);
		n->first = false;
		fput_json_string(stdout, path);
		mf_json_changes(stdout, ch);
		fputc('}', stdout);
	} else {
		mf_print_changes(path, ch);
	}
	mf_changes_free(ch);
	return 0;
}

/* Both lists are sorted by path: one merge. */
static int diff(const struct common_opts *o, const struct manifest *a,
		const struct manifest *b, struct diff_counts *n)
{
	size_t i = 0, j = 0;

	while (i < a->n || j < b->n) {
		int c = i == a->n ? 1 : j == b->n ? -1 :
			strcmp(a->e[i]->path, b->e[j]->path);
		struct mf_changes ch;
		const char *path;
		int ret;

		if (c < 0) {
			path = a->e[i]->path;
			ret = manifest_deleted(a->e[i++], &ch);
		} else if (c > 0) {
			path = b->e[j]->path;
			ret = manifest_compare(a, NULL, b->e[j++], &ch);
		} else {
			path = b->e[j]->path;
			ret = manifest_compare(a, a->e[i++], b->e[j++], &ch);
		}
		if (ret) {
			error_msg("diff: %s", manifest_last_error());
			return ret;
		}
		show(o, n, path, &ch);
	}
	return 0;
}

int cmd_diff(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hmac-key", required_argument, NULL, 'k' },
		{ "cert", required_argument, NULL, OPT_SIG_CERT },
		{ "allow-weak-keys", no_argument, NULL, OPT_SIG_WEAK },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 } };
	struct diff_counts n = { .first = true };
	struct sig_verify_opts so = { 0 };
	struct manifest *m[2] = { NULL, NULL };
	struct common_opts o;
	struct uevm_ctx *ctx;
	int c, ret = EXIT_ERROR;

	common_opts_init(&o);
	while ((c = getopt_long(argc, argv, "k:", longopts, NULL)) != -1) {
		if (c == OPT_HELP) {
			sig_verify_opts_free(&so);
			return help_show(cmd->name);
		}
		if ((c == OPT_SIG_CERT || c == OPT_SIG_WEAK) &&
		    sig_verify_opt(&so, c, optarg) > 0)
			continue;
		if (c != 'k' && c != OPT_JSON) {
			sig_verify_opts_free(&so);
			return opt_fail(cmd->name, c, argc, argv, "k:", longopts);
		}
		if (common_opt(&o, c, optarg) <= 0) {
			sig_verify_opts_free(&so);
			usage(cmd, stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		error_msg("diff: give two manifests");
		sig_verify_opts_free(&so);
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	if (!o.key_spec && !so.ncerts) {
		error_msg("diff: the manifests are authenticated: give --hmac-key "
			  "or --cert");
		sig_verify_opts_free(&so);
		return EXIT_USAGE;
	}
	if (common_ctx(&o, false, &ctx)) {
		sig_verify_opts_free(&so);
		return EXIT_USAGE;
	}
	if (sig_verify_apply(&so, ctx)) {
		sig_verify_opts_free(&so);
		uevm_ctx_free(ctx);
		return EXIT_USAGE;
	}
	sig_verify_opts_free(&so);
	for (int k = 0; k < 2; k++)
		if (manifest_load(argv[optind + k], ctx, uevm_ctx_certs(ctx), &m[k])) {
			error_msg("manifest %s", manifest_last_error());
			goto out;
		}
	if (o.json)
		fputs("{\n  \"results\": [", stdout);
	if (diff(&o, m[0], m[1], &n))
		goto out;
	if (o.json)
		printf("\n  ],\n  \"summary\": {\"changed\": %lu, \"deleted\": %lu, "
		       "\"new\": %lu}\n}\n", n.changed, n.deleted, n.added);
	else
		printf("Summary: %lu changed, %lu deleted, %lu new\n", n.changed,
		       n.deleted, n.added);
	ret = n.changed || n.deleted || n.added ? EXIT_VERIFY_FAILED : 0;
out:
	manifest_free(m[0]);
	manifest_free(m[1]);
	uevm_ctx_free(ctx);
	free(o.extra_xattrs);
	fflush(stdout);
	return ret;
}
