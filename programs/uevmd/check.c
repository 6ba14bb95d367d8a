// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `uevmd --check`: would switching to mode = enforce refuse anything?
 *
 * The configuration, key, certificates and policy are loaded exactly as
 * the daemon loads them (main.c), then every file the watched marks
 * cover is put through the daemon's own decision, integrity_file_check(),
 * in mode enforce, with no measurement list and no fanotify group: as an
 * open for reading by root and, for an executable, as an execution.  What
 * that refuses is what uevmd would refuse.  The library's audit records,
 * caught in the checking thread, say why.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "uevmd.h"

#define CHECK_MAX_CAUSES 32

struct refusal {
	char *path;
	const char *cause;	/* one of causes[] */
};

static struct {
	pthread_mutex_t lock;
	struct integrity_cred cred;
	unsigned long long files, refused, unreadable;
	struct { char *name; unsigned long long n; } causes[CHECK_MAX_CAUSES];
	int ncauses;
	struct refusal *list;
	size_t nlist, max_list;
} C = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The cause of the last refusal the checking thread saw. */
static __thread char last_cause[64];

void check_audit_sink(const struct integrity_audit_record *r, void *arg)
{
	(void)arg;
	if (r->result && r->cause && !last_cause[0])
		snprintf(last_cause, sizeof(last_cause), "%s", r->cause);
}

/* The interned name of CAUSE, counted once more (under C.lock). */
static const char *count_cause(const char *cause)
{
	int i;

	for (i = 0; i < C.ncauses; i++)
		if (!strcmp(C.causes[i].name, cause))
			break;
	if (i == C.ncauses) {
		if (i == CHECK_MAX_CAUSES)
			i--;	/* the last bucket takes the rest */
		else if (!(C.causes[C.ncauses].name = strdup(cause)))
			return "unknown";
		else
			C.ncauses++;
	}
	C.causes[i].n++;
	return C.causes[i].name;
}

static void note_refusal(const char *path, const char *cause)
{
	const char *c;

	pthread_mutex_lock(&C.lock);
	C.refused++;
	c = count_cause(cause);
	if (C.nlist < C.max_list) {
		C.list[C.nlist].path = strdup(path);
		C.list[C.nlist].cause = c;
		if (C.list[C.nlist].path)
			C.nlist++;
	}
	pthread_mutex_unlock(&C.lock);
}

/* One hook, as the daemon's worker makes it: 0, or the refusal's cause. */
static const char *decide(const struct uevm_file *f, const char *path, int func, int mask)
{
	struct integrity_event ev = { 0 };
	int rc;

	ev.file = f;
	ev.cred = &C.cred;
	ev.filename = path;
	ev.func = func;
	ev.mask = mask;
	last_cause[0] = '\0';
	rc = func == BPRM_CHECK ? integrity_bprm_check(D->sys, &ev, -1)
				: integrity_file_check(D->sys, &ev);
	if (rc == 0)
		return NULL;
	return last_cause[0] ? last_cause : "unknown";
}

static int check_one(const struct uevm_file *f, const char *path, int err, void *arg)
{
	const char *cause;

	(void)arg;
	if (err) {
		char why[96];

		snprintf(why, sizeof(why), "unreadable (%s)", strerror(-err));
		pthread_mutex_lock(&C.lock);
		C.unreadable++;
		pthread_mutex_unlock(&C.lock);
		note_refusal(path, why);
		return 0;
	}
	if (!S_ISREG(f->st.st_mode) || !f->io)
		return 0;
	pthread_mutex_lock(&C.lock);
	C.files++;
	pthread_mutex_unlock(&C.lock);
	cause = decide(f, path, FILE_CHECK, MAY_READ);
	if (!cause && (f->st.st_mode & 0111))
		cause = decide(f, path, BPRM_CHECK, MAY_EXEC);
	if (cause)
		note_refusal(path, cause);
	return 0;
}

/* The top of the mount holding PATH: its ancestors on the same device. */
static char *mount_top(const char *path)
{
	char *p = realpath(path, NULL);
	struct stat st, up;

	if (!p || stat(p, &st) < 0) {
		free(p);
		return NULL;
	}
	while (strcmp(p, "/")) {
		char *slash = strrchr(p, '/');
		char keep = slash[slash == p];

		slash[slash == p] = '\0';	/* "/a/b" -> "/a", "/a" -> "/" */
		if (stat(p, &up) < 0 || up.st_dev != st.st_dev) {
			slash[slash == p] = keep;
			break;
		}
	}
	return p;
}

/* Does PATH lie on a watched filesystem or mount? */
static bool watched(const char *path)
{
	struct stat st, m;

	if (stat(path, &st) < 0)
		return false;
	for (int i = 0; i < D->cfg.nfilesystems + D->cfg.nmounts; i++)
		if (stat(i < D->cfg.nfilesystems ? D->cfg.filesystems[i] :
			 D->cfg.mounts[i - D->cfg.nfilesystems], &m) == 0 &&
		    m.st_dev == st.st_dev)
			return true;
	return false;
}

static void json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(fp, "\\%c", *c);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(fp, "\\u%04x", *c);
		else
			fputc(*c, fp);
	}
	fputc('"', fp);
}

static void report_text(char **roots, int nroots)
{
	printf("uevmd: %s: configuration, key and policy load (%zu rules, mode %s)\n",
	       D->config_path, ima_policy_count(D->policy), integrity_mode_name(D->cfg.mode));
	for (int i = 0; i < nroots; i++)
		printf("checked: %s\n", roots[i]);
	printf("files: %llu, would be refused if enforcing: %llu\n", C.files + C.unreadable,
	       C.refused);
	for (int i = 0; i < C.ncauses; i++)
		printf("  %s: %llu\n", C.causes[i].name, C.causes[i].n);
	for (size_t i = 0; i < C.nlist; i++)
		printf("refused: %s (%s)\n", C.list[i].path, C.list[i].cause);
	if (C.refused > C.nlist)
		printf("refused: ... and %llu more\n", C.refused - C.nlist);
	if (C.refused)
		printf("Label them (uevm label -r --hmac-key KEY PATH...), or keep mode = log; "
		       "see uevmd(8), \"Switching to enforce\".\n");
	else
		printf("Nothing would be refused: mode = enforce is safe for these files.\n");
}

static void report_json(char **roots, int nroots)
{
	printf("{\"config\":");
	json_str(stdout, D->config_path);
	printf(",\"policy\":");
	json_str(stdout, D->policy_source ? D->policy_source : "");
	printf(",\"rules\":%zu,\"mode\":\"%s\",\"roots\":[", ima_policy_count(D->policy),
	       integrity_mode_name(D->cfg.mode));
	for (int i = 0; i < nroots; i++) {
		printf(i ? "," : "");
		json_str(stdout, roots[i]);
	}
	printf("],\"files\":%llu,\"refused\":%llu,\"unreadable\":%llu,\"causes\":{",
	       C.files + C.unreadable, C.refused, C.unreadable);
	for (int i = 0; i < C.ncauses; i++) {
		printf(i ? "," : "");
		json_str(stdout, C.causes[i].name);
		printf(":%llu", C.causes[i].n);
	}
	printf("},\"paths\":[");
	for (size_t i = 0; i < C.nlist; i++) {
		printf("%s{\"path\":", i ? "," : "");
		json_str(stdout, C.list[i].path);
		printf(",\"cause\":");
		json_str(stdout, C.list[i].cause);
		printf("}");
	}
	printf("],\"truncated\":%s}\n", C.refused > C.nlist ? "true" : "false");
}

int check_run(const struct check_opts *o)
{
	struct uevm_walk_opts wo;
	char *roots[2 * UEVMD_MAX_MARKS + 1];
	int nroots = 0, ret = 0;

	uevm_walk_opts_init(&wo);
	wo.recursive = true;
	wo.one_fs = true;

	integrity_cred_self(&C.cred);
	C.cred.uid = C.cred.euid = C.cred.gid = C.cred.egid = 0;
	C.max_list = o->list;
	C.list = calloc(o->list ? o->list : 1, sizeof(*C.list));
	if (!C.list)
		return 2;
	/* Decide as if enforcing; measure nothing, and write nothing. */
	integrity_sys_set_measurements(D->sys, NULL);
	integrity_sys_set_mode(D->sys, INTEGRITY_MODE_ENFORCE);
	if (o->under) {
		roots[nroots] = realpath(o->under, NULL);
		if (!roots[nroots]) {
			fprintf(stderr, "uevmd: --under %s: %s\n", o->under, strerror(errno));
			ret = 2;
			goto out;
		}
		if (!watched(roots[nroots++])) {
			fprintf(stderr, "uevmd: --under %s: not on a watched filesystem\n",
				o->under);
			ret = 2;
			goto out;
		}
	} else {
		for (int i = 0; i < D->cfg.nfilesystems + D->cfg.nmounts; i++) {
			const char *m = i < D->cfg.nfilesystems ? D->cfg.filesystems[i] :
				       D->cfg.mounts[i - D->cfg.nfilesystems];
			char *top = mount_top(m);
			bool dup = false;

			if (!top) {
				fprintf(stderr, "uevmd: %s: %s\n", m, strerror(errno));
				ret = 2;
				goto out;
			}
			for (int j = 0; j < nroots; j++)
				dup |= !strcmp(roots[j], top);
			if (dup)
				free(top);
			else
				roots[nroots++] = top;
		}
	}
	if (uevm_walk((const char *const *)roots, (size_t)nroots, &wo, check_one, NULL)) {
		fprintf(stderr, "uevmd: walking the watched files: %s\n", uevm_last_error());
		ret = 2;
		goto out;
	}
	if (o->json)
		report_json(roots, nroots);
	else
		report_text(roots, nroots);
	ret = C.refused ? 1 : 0;
out:
	for (int i = 0; i < nroots; i++)
		free(roots[i]);
	for (size_t i = 0; i < C.nlist; i++)
		free(C.list[i].path);
	free(C.list);
	for (int i = 0; i < C.ncauses; i++)
		free(C.causes[i].name);
	return ret;
}
