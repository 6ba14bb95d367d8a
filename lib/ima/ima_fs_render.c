// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The renderings of securityfs's measurement files (the kernel's ima_fs.c):
 *
 * binary_runtime_measurements, per entry, native endian:
 *   u32 pcr | template digest | u32 name length | name |
 *   u32 template data length | fields as {u32 length, data}
 * except for the 'ima' template: no template data length, the digest
 * without a length and the name as {u32 strlen, name without its NUL}.
 *
 * ascii_runtime_measurements: "%2d <digest hex> <template> <field> ...",
 * each field preceded by a space even when it is empty.
 *
 * The plain files carry the SHA-1 template digest; the _<algo> variants
 * (Linux 6.10 and later) carry that bank's template digest.
 */
#include <string.h>
#include "ima_ml_private.h"

static void show_entry_field(const struct ima_template_entry *e, int i,
			     enum ima_show_type show, FILE *fp)
{
	if (e->desc)
		e->desc->fields[i]->field_show(fp, show, &e->fields[i]);
	else if (show == IMA_SHOW_ASCII)
		ima_show_hex(fp, e->fields[i].data, e->fields[i].len);
	else {
		fwrite(&e->fields[i].len, sizeof(uint32_t), 1, fp);
		if (e->fields[i].len)
			fwrite(e->fields[i].data, 1, e->fields[i].len, fp);
	}
}

UEVM_EXPORT int ima_entry_write_binary(const struct ima_template_entry *e,
				       int algo, FILE *fp)
{
	const char *name = ima_entry_template_name(e);
	bool ima_tmpl = ima_entry_is_ima_template(e);
	uint8_t digest[UEVM_MAX_DIGEST_SIZE];
	uint32_t pcr = (uint32_t)e->pcr, namelen = (uint32_t)strlen(name);
	int dlen = ima_entry_calc_digest(e, algo, digest);

	if (dlen < 0)
		return dlen;
	fwrite(&pcr, sizeof(pcr), 1, fp);
	fwrite(digest, 1, (size_t)dlen, fp);
	fwrite(&namelen, sizeof(namelen), 1, fp);
	fwrite(name, 1, namelen, fp);
	if (!ima_tmpl)
		fwrite(&e->template_data_len, sizeof(uint32_t), 1, fp);
	for (int i = 0; i < e->num_fields; i++) {
		enum ima_show_type show = IMA_SHOW_BINARY;

		if (ima_tmpl && !strcmp(e->desc->fields[i]->field_id, "d"))
			show = IMA_SHOW_BINARY_NO_FIELD_LEN;
		else if (ima_tmpl && !strcmp(e->desc->fields[i]->field_id, "n"))
			show = IMA_SHOW_BINARY_OLD_STRING_FMT;
		show_entry_field(e, i, show, fp);
	}
	return ferror(fp) ? uevm_err(EIO, "cannot write the measurement list") : 0;
}

UEVM_EXPORT int ima_entry_write_ascii(const struct ima_template_entry *e,
				      int algo, FILE *fp)
{
	uint8_t digest[UEVM_MAX_DIGEST_SIZE];
	int dlen = ima_entry_calc_digest(e, algo, digest);

	if (dlen < 0)
		return dlen;
	fprintf(fp, "%2d ", e->pcr);
	ima_show_hex(fp, digest, (size_t)dlen);
	fprintf(fp, " %s", ima_entry_template_name(e));
	for (int i = 0; i < e->num_fields; i++) {
		fputc(' ', fp);
		if (e->fields[i].len)
			show_entry_field(e, i, IMA_SHOW_ASCII, fp);
	}
	fputc('\n', fp);
	return ferror(fp) ? uevm_err(EIO, "cannot write the measurement list") : 0;
}

struct write_args {
	int algo;
	FILE *fp;
	bool ascii;
};

static int write_one(const struct ima_template_entry *e, void *arg)
{
	struct write_args *w = arg;

	return w->ascii ? ima_entry_write_ascii(e, w->algo, w->fp)
			: ima_entry_write_binary(e, w->algo, w->fp);
}

UEVM_EXPORT int ima_ml_write_binary(struct ima_measurements *ml, int algo, FILE *fp)
{
	struct write_args w = { algo, fp, false };

	return ima_ml_for_each(ml, write_one, &w);
}

UEVM_EXPORT int ima_ml_write_ascii(struct ima_measurements *ml, int algo, FILE *fp)
{
	struct write_args w = { algo, fp, true };

	return ima_ml_for_each(ml, write_one, &w);
}
