// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Template entries: building one from an event, and its template digests
 * (the kernel's ima_alloc_init_template and ima_calc_field_array_hash).
 *
 * The template digest hashes, for each field, its u32 length (native
 * endian) and then its data.  The 'ima' template is the exception: its
 * digest field goes in without a length and its name field is zero-padded
 * to IMA_EVENT_NAME_LEN_MAX + 1 bytes, also without a length.
 */
#include <stdlib.h>
#include <string.h>
#include "ima_ml_private.h"

int ima_hash(int algo, const void *buf, size_t len, uint8_t *out)
{
	unsigned int size = uevm_hash_algo_digest_size(algo);
	int ret = uevm_hash_buffer(algo, buf, len, out);

	return ret ? ret : (int)size;
}

struct ima_template_entry *ima_entry_alloc(int n)
{
	struct ima_template_entry *e;

	e = calloc(1, sizeof(*e) + (size_t)n * sizeof(e->fields[0]));
	if (!e) {
		uevm_err(ENOMEM, "out of memory for a measurement");
		return NULL;
	}
	e->num_fields = n;
	return e;
}

UEVM_EXPORT void ima_template_entry_free(struct ima_template_entry *e)
{
	if (!e)
		return;
	for (int i = 0; i < e->num_fields; i++)
		free(e->fields[i].data);
	free(e->unknown_name);
	if (e->owned_desc)
		free((char *)e->owned_desc->fmt);
	free(e->owned_desc);
	free(e);
}

bool ima_entry_is_ima_template(const struct ima_template_entry *e)
{
	return e->desc && !strcmp(e->desc->name, IMA_TEMPLATE_IMA_NAME);
}

/* Hash the fields as the kernel's ima_calc_field_array_hash_tfm. */
static int calc_field_array_hash(const struct ima_template_entry *e, int algo,
				 uint8_t *out)
{
	const EVP_MD *md = uevm_hash_md(algo);
	bool ima_tmpl = ima_entry_is_ima_template(e);
	EVP_MD_CTX *ctx;
	unsigned int outlen;
	int ok;

	if (!md)
		return uevm_err(EOPNOTSUPP, "hash algorithm %s is not available",
				uevm_hash_algo_name(algo) ? uevm_hash_algo_name(algo) : "?");
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return uevm_err(ENOMEM, "out of memory for a digest");
	ok = EVP_DigestInit_ex(ctx, md, NULL);
	for (int i = 0; ok && i < e->num_fields; i++) {
		const struct ima_field_data *f = &e->fields[i];
		uint32_t len = f->len;

		if (!ima_tmpl) {
			ok = EVP_DigestUpdate(ctx, &len, sizeof(len)) &&
			     (!len || EVP_DigestUpdate(ctx, f->data, len));
		} else if (!strcmp(e->desc->fields[i]->field_id, "n")) {
			uint8_t name[IMA_EVENT_NAME_LEN_MAX + 1] = { 0 };

			memcpy(name, f->data, len < sizeof(name) ? len : sizeof(name));
			ok = EVP_DigestUpdate(ctx, name, sizeof(name));
		} else {
			ok = !len || EVP_DigestUpdate(ctx, f->data, len);
		}
	}
	ok = ok && EVP_DigestFinal_ex(ctx, out, &outlen);
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return uevm_err(EIO, "OpenSSL failed to hash a template");
	return (int)outlen;
}

int ima_entry_finish(struct ima_template_entry *e)
{
	int ret;

	e->template_data_len = 0;
	for (int i = 0; i < e->num_fields; i++)
		e->template_data_len += (uint32_t)sizeof(uint32_t) + e->fields[i].len;
	if (e->violation) {
		memset(e->digest, 0, sizeof(e->digest));
		memset(e->digest_sha256, 0, sizeof(e->digest_sha256));
		return 0;
	}
	ret = calc_field_array_hash(e, UEVM_HASH_SHA1, e->digest);
	if (ret < 0)
		return ret;
	ret = calc_field_array_hash(e, UEVM_HASH_SHA256, e->digest_sha256);
	return ret < 0 ? ret : 0;
}

UEVM_EXPORT int ima_template_entry_new(const struct ima_template_desc *desc,
				       const struct ima_event_data *ev, int pcr,
				       struct ima_template_entry **out)
{
	struct ima_template_entry *e;
	int ret;

	*out = NULL;
	if (!desc || !ev)
		return uevm_err(EINVAL, "no template or no event");
	if (pcr < 0 || pcr >= IMA_ML_NUM_PCRS)
		return uevm_err(EINVAL, "PCR %d out of range 0-%d", pcr,
				IMA_ML_NUM_PCRS - 1);
	e = ima_entry_alloc(desc->num_fields);
	if (!e)
		return -ENOMEM;
	e->desc = desc;
	e->pcr = pcr;
	e->violation = ev->violation;
	for (int i = 0; i < desc->num_fields; i++) {
		ret = desc->fields[i]->field_init(ev, &e->fields[i]);
		if (ret) {
			ima_template_entry_free(e);
			return ret;
		}
	}
	ret = ima_entry_finish(e);
	if (ret) {
		ima_template_entry_free(e);
		return ret;
	}
	*out = e;
	return 0;
}

UEVM_EXPORT int ima_entry_pcr(const struct ima_template_entry *e)
{
	return e->pcr;
}

UEVM_EXPORT const struct ima_template_desc *ima_entry_desc(const struct ima_template_entry *e)
{
	return e->desc;
}

UEVM_EXPORT const char *ima_entry_template_name(const struct ima_template_entry *e)
{
	return e->desc ? ima_template_desc_list_name(e->desc) : e->unknown_name;
}

UEVM_EXPORT bool ima_entry_is_violation(const struct ima_template_entry *e)
{
	return e->violation;
}

UEVM_EXPORT const uint8_t *ima_entry_digest(const struct ima_template_entry *e)
{
	return e->digest;
}

UEVM_EXPORT int ima_entry_num_fields(const struct ima_template_entry *e)
{
	return e->num_fields;
}

UEVM_EXPORT const char *ima_entry_field_id(const struct ima_template_entry *e, int i)
{
	if (i < 0 || i >= e->num_fields)
		return NULL;
	return e->desc ? e->desc->fields[i]->field_id : "?";
}

UEVM_EXPORT const struct ima_field_data *
ima_entry_field(const struct ima_template_entry *e, int i)
{
	if (i < 0 || i >= e->num_fields)
		return NULL;
	return &e->fields[i];
}

UEVM_EXPORT uint32_t ima_entry_template_data_len(const struct ima_template_entry *e)
{
	return e->template_data_len;
}

UEVM_EXPORT int ima_entry_calc_digest(const struct ima_template_entry *e, int algo,
				      uint8_t *out)
{
	unsigned int size = uevm_hash_algo_digest_size(algo);

	if (!size)
		return uevm_err(EINVAL, "unknown hash algorithm %d", algo);
	if (e->violation) {
		memset(out, 0, size);
		return (int)size;
	}
	if (algo == UEVM_HASH_SHA1) {
		memcpy(out, e->digest, IMA_SHA1_DIGEST_SIZE);
		return IMA_SHA1_DIGEST_SIZE;
	}
	if (algo == UEVM_HASH_SHA256) {
		memcpy(out, e->digest_sha256, sizeof(e->digest_sha256));
		return (int)sizeof(e->digest_sha256);
	}
	return calc_field_array_hash(e, algo, out);
}

UEVM_EXPORT int ima_entry_extend_digest(const struct ima_template_entry *e, int algo,
					uint8_t *out)
{
	unsigned int size = uevm_hash_algo_digest_size(algo);

	if (!size)
		return uevm_err(EINVAL, "unknown hash algorithm %d", algo);
	if (e->violation) {
		/* Violations invalidate the PCR (the kernel's ima_init_digests). */
		memset(out, 0xff, size);
		return (int)size;
	}
	return ima_entry_calc_digest(e, algo, out);
}
