// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading binary measurement lists back (as the kernel restores one after
 * kexec, and as evmctl ima_measurement reads one), and replaying them into
 * PCR values.  Input is untrusted: every length is checked against what
 * is left before it is used.
 */
#include <stdlib.h>
#include <string.h>
#include "ima_ml_private.h"

/* A template data length beyond this is taken as damage, not data. */
#define TEMPLATE_DATA_MAX (64u << 20)

struct cursor {
	const uint8_t *p;
	size_t left;
};

static bool take(struct cursor *c, void *out, size_t n)
{
	if (c->left < n)
		return false;
	if (out)
		memcpy(out, c->p, n);
	c->p += n;
	c->left -= n;
	return true;
}

static int set_field(struct ima_field_data *f, const uint8_t *data,
		     uint32_t len, bool add_nul)
{
	f->data = calloc(1, (size_t)len + 1);
	if (!f->data)
		return uevm_err(ENOMEM, "out of memory reading a list");
	if (len)
		memcpy(f->data, data, len);
	f->len = len + (add_nul ? 1 : 0);
	return 0;
}

/* The 'ima' template: 20-byte digest, then {u32 strlen, name}. */
static int parse_ima_template(struct cursor *c, const struct ima_template_desc *d,
			      struct ima_template_entry **out)
{
	const uint8_t *digest = c->p, *name;
	struct ima_template_entry *e;
	uint32_t nlen;

	if (!take(c, NULL, IMA_SHA1_DIGEST_SIZE) || !take(c, &nlen, sizeof(nlen)))
		return -ENODATA;
	if (nlen > IMA_EVENT_NAME_LEN_MAX)
		return uevm_err(EBADMSG, "'ima' entry name of %u bytes", nlen);
	name = c->p;
	if (!take(c, NULL, nlen))
		return -ENODATA;
	/* The kernel writes this name up to its first NUL (and hashes it
	 * zero-padded); bytes after a NUL would be hashed but never shown. */
	if (memchr(name, '\0', nlen))
		return uevm_err(EBADMSG, "'ima' entry name contains a NUL byte");
	e = ima_entry_alloc(d->num_fields);
	if (!e)
		return -ENOMEM;
	e->desc = d;
	if (set_field(&e->fields[0], digest, IMA_SHA1_DIGEST_SIZE, false) ||
	    set_field(&e->fields[1], name, nlen, true)) {
		ima_template_entry_free(e);
		return -ENOMEM;
	}
	*out = e;
	return 0;
}

/* Fields as {u32 length, data} filling exactly the template data. */
static int parse_fields(const uint8_t *data, uint32_t len,
			const struct ima_template_desc *d, const char *name,
			struct ima_template_entry **out)
{
	struct cursor c = { data, len };
	struct ima_template_entry *e;
	int n = 0;

	/* Count the fields first: an unknown template has as many as fit. */
	while (c.left) {
		uint32_t flen;

		if (!take(&c, &flen, sizeof(flen)) || !take(&c, NULL, flen))
			return uevm_err(EBADMSG, "template '%s': a field runs past "
					"the template data", name);
		n++;
	}
	if (d && n != d->num_fields)
		return uevm_err(EBADMSG, "template '%s' has %d fields, the "
				"entry %d", name, d->num_fields, n);
	e = ima_entry_alloc(n);
	if (!e)
		return -ENOMEM;
	e->desc = d;
	if (!d && !(e->unknown_name = strdup(name))) {
		ima_template_entry_free(e);
		return uevm_err(ENOMEM, "out of memory reading a list");
	}
	c.p = data;
	c.left = len;
	for (int i = 0; i < n; i++) {
		uint32_t flen = 0;

		take(&c, &flen, sizeof(flen));
		if (set_field(&e->fields[i], c.p, flen, false)) {
			ima_template_entry_free(e);
			return -ENOMEM;
		}
		take(&c, NULL, flen);
	}
	*out = e;
	return 0;
}

bool ima_ml_all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

void ima_ml_desc_free_owned(struct ima_template_desc *d)
{
	if (d)
		free((char *)d->fmt);
	free(d);
}

/*
 * The descriptor for a template name read from a list: a built-in name, or
 * a custom format (which lists record as its name).  Nothing is registered,
 * so a hostile list cannot grow the registry.  NULL: unknown template.
 */
const struct ima_template_desc *ima_ml_desc_for_name(const char *name,
						   struct ima_template_desc **owned)
{
	const struct ima_template_desc *d = ima_template_builtin(name);
	struct ima_template_desc *o;

	*owned = NULL;
	if (d)
		return d;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->name = "";
	o->fmt = strdup(name);
	if (!o->fmt || ima_template_fmt_parse(o->fmt, o)) {
		ima_ml_desc_free_owned(o);
		uevm_clear_last_error();
		return NULL;
	}
	*owned = o;
	return o;
}

/* Parse one entry at C; -ENODATA when the input ends inside it. */
static int parse_entry(struct cursor *c, int digest_algo,
		       struct ima_template_entry **out, bool *digest_ok)
{
	unsigned int dsize = uevm_hash_algo_digest_size(digest_algo);
	uint8_t stored[UEVM_MAX_DIGEST_SIZE], calc[UEVM_MAX_DIGEST_SIZE];
	const struct ima_template_desc *d;
	struct ima_template_desc *owned;
	struct ima_template_entry *e = NULL;
	char name[IMA_EVENT_NAME_LEN_MAX + 1];
	uint32_t pcr, nlen, tlen;
	int ret;

	if (!take(c, &pcr, sizeof(pcr)) || !take(c, stored, dsize) ||
	    !take(c, &nlen, sizeof(nlen)))
		return -ENODATA;
	if (pcr >= IMA_ML_NUM_PCRS)
		return uevm_err(EBADMSG, "PCR %u out of range", pcr);
	if (!nlen || nlen > IMA_EVENT_NAME_LEN_MAX)
		return uevm_err(EBADMSG, "template name of %u bytes", nlen);
	if (!take(c, name, nlen))
		return -ENODATA;
	name[nlen] = '\0';
	if (strlen(name) != nlen)
		return uevm_err(EBADMSG, "template name contains a NUL byte");
	d = ima_ml_desc_for_name(name, &owned);
	if (d && !strcmp(d->name, IMA_TEMPLATE_IMA_NAME)) {
		ret = parse_ima_template(c, d, &e);
	} else {
		const uint8_t *data;

		if (!take(c, &tlen, sizeof(tlen)))
			ret = -ENODATA;
		else if (tlen > TEMPLATE_DATA_MAX)
			ret = uevm_err(EBADMSG, "template data of %u bytes", tlen);
		else if (data = c->p, !take(c, NULL, tlen))
			ret = -ENODATA;
		else
			ret = parse_fields(data, tlen, d, name, &e);
	}
	if (ret) {
		ima_ml_desc_free_owned(owned);
		return ret;
	}
	e->owned_desc = owned;
	e->pcr = (int)pcr;
	e->violation = ima_ml_all_zero(stored, dsize);
	ret = ima_entry_finish(e);
	if (ret) {
		ima_template_entry_free(e);
		return ret;
	}
	*digest_ok = true;
	if (!e->violation) {
		ret = ima_entry_calc_digest(e, digest_algo, calc);
		if (ret < 0) {
			ima_template_entry_free(e);
			return ret;
		}
		*digest_ok = !memcmp(calc, stored, dsize);
		/* Keep what the list says, so that renderings show it. */
		if (digest_algo == UEVM_HASH_SHA1)
			memcpy(e->digest, stored, dsize);
		else if (digest_algo == UEVM_HASH_SHA256)
			memcpy(e->digest_sha256, stored, dsize);
	}
	*out = e;
	return 0;
}

long ima_ml_parse_owned(const uint8_t *buf, size_t len, int digest_algo,
			ima_ml_parse_owned_fn fn, void *arg, size_t *good_len)
{
	struct cursor c = { buf, len };
	size_t index = 0;

	if (!uevm_hash_algo_digest_size(digest_algo))
		return uevm_err(EINVAL, "unknown template digest algorithm %d",
				digest_algo);
	if (good_len)
		*good_len = 0;
	while (c.left) {
		size_t off = len - c.left;
		struct ima_template_entry *e = NULL;
		bool ok = false;
		int ret = parse_entry(&c, digest_algo, &e, &ok);

		if (ret == -ENODATA)
			return uevm_err(ENODATA, "entry %zu at offset %zu is cut "
					"short", index + 1, off);
		if (ret) {
			char why[256];

			snprintf(why, sizeof(why), "%s", uevm_last_error());
			return uevm_err(-ret, "entry %zu at offset %zu: %s",
					index + 1, off, why);
		}
		ret = fn(e, index, ok, arg);
		if (ret)
			return ret;
		index++;
		if (good_len)
			*good_len = len - c.left;
	}
	return (long)index;
}

struct parse_wrap {
	ima_ml_parse_fn fn;
	void *arg;
};

static int free_after(struct ima_template_entry *e, size_t index, bool ok,
		      void *arg)
{
	struct parse_wrap *w = arg;
	int ret = w->fn(e, index, ok, w->arg);

	ima_template_entry_free(e);
	return ret;
}

UEVM_EXPORT long ima_ml_parse_binary(const uint8_t *buf, size_t len,
				     int digest_algo, ima_ml_parse_fn fn,
				     void *arg)
{
	struct parse_wrap w = { fn, arg };
	long n = ima_ml_parse_owned(buf, len, digest_algo, free_after, &w, NULL);

	/* To a reader a list cut short is as malformed as any other. */
	return n == -ENODATA ? -EBADMSG : n;
}

/* ---- replay ------------------------------------------------------------------- */

int ima_replay_extend(struct ima_ml_replay *r, const struct ima_template_entry *e,
		      bool padded_sha1, bool digest_ok)
{
	unsigned int size = uevm_hash_algo_digest_size(r->algo);
	uint8_t buf[2 * UEVM_MAX_DIGEST_SIZE];
	int ret;

	if (padded_sha1) {
		/* Older kernels: the SHA-1 digest (0xff.. for a violation)
		 * zero-padded to the bank's size. */
		memset(buf + size, 0, size);
		if (e->violation)
			memset(buf + size, 0xff, IMA_SHA1_DIGEST_SIZE);
		else
			memcpy(buf + size, e->digest, IMA_SHA1_DIGEST_SIZE);
	} else {
		ret = ima_entry_extend_digest(e, r->algo, buf + size);
		if (ret < 0)
			return ret;
	}
	memcpy(buf, r->pcr[e->pcr], size);
	ret = ima_hash(r->algo, buf, 2 * (size_t)size, r->pcr[e->pcr]);
	if (ret < 0)
		return ret;
	r->pcr_mask |= 1u << e->pcr;
	r->entries++;
	if (e->violation)
		r->violations++;
	if (!digest_ok)
		r->bad_digests++;
	return 0;
}

int ima_replay_entry(const struct ima_template_entry *e, size_t index,
		     bool ok, void *arg)
{
	struct ima_replay_args *a = arg;

	(void)index;
	return ima_replay_extend(a->r, e, a->padded, ok);
}

void ima_replay_init(struct ima_ml_replay *r, int algo)
{
	memset(r, 0, sizeof(*r));
	r->algo = algo;
}

int ima_replay_begin(struct ima_ml_replay *r, int algo)
{
	if (!uevm_hash_md(algo) || uevm_hash_algo_digest_size(algo) > UEVM_MAX_DIGEST_SIZE)
		return uevm_err(EOPNOTSUPP, "cannot replay bank %s",
				uevm_hash_algo_name(algo) ? uevm_hash_algo_name(algo) : "?");
	ima_replay_init(r, algo);
	return 0;
}

UEVM_EXPORT int ima_ml_replay_binary(const uint8_t *buf, size_t len, int algo,
				     bool padded_sha1, struct ima_ml_replay *out)
{
	struct ima_replay_args a = { out, padded_sha1 };
	int ret = ima_replay_begin(out, algo);
	long n;

	if (ret)
		return ret;
	n = ima_ml_parse_binary(buf, len, UEVM_HASH_SHA1, ima_replay_entry, &a);
	return n < 0 ? (int)n : 0;
}
