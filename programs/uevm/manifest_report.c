// SPDX-License-Identifier: GPL-2.0-or-later
/* Manifest differences as uevm verify and uevm diff print them. */
#include <stdlib.h>
#include <string.h>
#include "manifest.h"
#include "prog.h"
#include "report.h"

/* , "changes": [{"code": ..., "detail": ...}, ...] */
void mf_json_changes(FILE *fp, const struct mf_changes *ch)
{
	if (!ch || !ch->n)
		return;
	fputs(", \"changes\": [", fp);
	for (size_t i = 0; i < ch->n; i++) {
		fputs(i ? ", {\"code\": " : "{\"code\": ", fp);
		fput_json_string(fp, ch->v[i].code);
		fputs(", \"detail\": ", fp);
		fput_json_string(fp, ch->v[i].detail);
		fputc('}', fp);
	}
	fputc(']', fp);
}

/* CHANGED PATH: DETAIL, NEW PATH: DETAIL, DELETED PATH -- one a line. */
void mf_print_changes(const char *path, const struct mf_changes *ch)
{
	for (size_t i = 0; ch && i < ch->n; i++) {
		const char *code = ch->v[i].code;

		if (!strcmp(code, "deleted")) {
			fputs("DELETED ", stdout);
			fput_path(stdout, path);
			putchar('\n');
			continue;
		}
		fputs(!strcmp(ch->v[0].code, "new") ? "NEW " : "CHANGED ", stdout);
		fput_path(stdout, path);
		fputs(": ", stdout);
		fput_text(stdout, ch->v[i].detail);
		putchar('\n');
	}
}

struct report_change *report_changes(const struct mf_changes *ch,
				     struct report_obj *obj)
{
	struct report_change *rc = calloc(ch->n ? ch->n : 1, sizeof(*rc));

	if (!rc)
		return NULL;
	for (size_t i = 0; i < ch->n; i++) {
		rc[i].code = ch->v[i].code;
		rc[i].detail = ch->v[i].detail;
	}
	obj->changes = rc;
	obj->nchanges = ch->n;
	return rc;
}

void report_print_changes(FILE *fp, const struct report_obj *o)
{
	for (size_t i = 0; i < o->nchanges; i++) {
		const char *code = o->changes[i].code;

		if (!strcmp(code, "deleted")) {
			fputs("DELETED ", fp);
			fput_path(fp, o->path);
			fputc('\n', fp);
			continue;
		}
		fputs(!strcmp(o->changes[0].code, "new") ? "NEW " : "CHANGED ", fp);
		fput_path(fp, o->path);
		fputs(": ", fp);
		fput_text(fp, o->changes[i].detail);
		fputc('\n', fp);
	}
}
