// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The template fields: how each one is built from an event and shown
 * (the kernel's ima_template_lib.c), byte for byte.
 *
 * Field data formats:
 *   digest            d: the raw digest (SHA-1, 20 bytes)
 *   digest with algo  d-ng, d-modsig: "<algo>:" NUL digest
 *   with type too     d-ngv2: "<ima|verity>:<algo>:" NUL digest
 *   string            n, n-ng: the name with spaces turned into '_', NUL
 *   hex               sig, buf, modsig, evmsig: raw bytes
 *   uint              iuid, igid (u32), imode (u16): native endian
 */
#include <stdlib.h>
#include <string.h>
#include "ima_ml_private.h"

enum data_formats {
	DATA_FMT_DIGEST = 0,
	DATA_FMT_DIGEST_WITH_ALGO,
	DATA_FMT_DIGEST_WITH_TYPE_AND_ALGO,
	DATA_FMT_STRING,
	DATA_FMT_HEX,
	DATA_FMT_UINT,
};

/* Copy DATA into the field; strings get a NUL and lose their spaces, so a
 * name cannot split the ASCII list's space-separated columns. */
static int write_field_data(const void *data, uint32_t datalen,
			    enum data_formats fmt, struct ima_field_data *out)
{
	uint32_t buflen = datalen + (fmt == DATA_FMT_STRING ? 1 : 0);
	uint8_t *buf = calloc(1, buflen ? buflen : 1);

	if (!buf)
		return uevm_err(ENOMEM, "out of memory for a template field");
	if (datalen)
		memcpy(buf, data, datalen);
	if (fmt == DATA_FMT_STRING)
		for (uint32_t i = 0; i < datalen; i++)
			if (buf[i] == ' ')
				buf[i] = '_';
	out->data = buf;
	out->len = buflen;
	return 0;
}

void ima_show_hex(FILE *fp, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		fprintf(fp, "%02x", p[i]);
}

/* ---- show ----------------------------------------------------------------- */

static void show_ascii(FILE *fp, enum data_formats fmt,
		       const struct ima_field_data *fd)
{
	const uint8_t *p = fd->data;
	size_t len = fd->len;
	const uint8_t *colon = NULL;

	switch (fmt) {
	case DATA_FMT_DIGEST_WITH_ALGO:
	case DATA_FMT_DIGEST_WITH_TYPE_AND_ALGO:
		/* Print the prefix up to its ':', then the digest after the
		 * ':' and the NUL.  A field without that shape (a damaged
		 * list) is printed as hex. */
		for (size_t i = 0; i < len && p[i]; i++)
			if (p[i] == ':')
				colon = p + i;
		if (!colon || colon + 1 >= p + len || colon[1] != '\0') {
			ima_show_hex(fp, p, len);
			break;
		}
		fwrite(p, 1, (size_t)(colon - p) + 1, fp);
		p = colon + 2;
		len -= (size_t)(p - fd->data);
		/* fall through */
	case DATA_FMT_DIGEST:
	case DATA_FMT_HEX:
		ima_show_hex(fp, p, len);
		break;
	case DATA_FMT_STRING:
		fwrite(p, 1, strnlen((const char *)p, len), fp);
		break;
	case DATA_FMT_UINT:
		if (len == 1) {
			fprintf(fp, "%u", p[0]);
		} else if (len == 2) {
			uint16_t v;

			memcpy(&v, p, 2);
			fprintf(fp, "%u", v);
		} else if (len == 4) {
			uint32_t v;

			memcpy(&v, p, 4);
			fprintf(fp, "%u", v);
		} else if (len == 8) {
			unsigned long long v;

			memcpy(&v, p, 8);
			fprintf(fp, "%llu", v);
		}
		break;
	}
}

static void show_binary(FILE *fp, enum ima_show_type show,
			const struct ima_field_data *fd)
{
	uint32_t len = fd->len;

	if (show == IMA_SHOW_BINARY_OLD_STRING_FMT)
		len = fd->data ? (uint32_t)strnlen((const char *)fd->data, fd->len) : 0;
	if (show != IMA_SHOW_BINARY_NO_FIELD_LEN)
		fwrite(&len, sizeof(len), 1, fp);
	if (len)
		fwrite(fd->data, 1, len, fp);
}

static void show_field(FILE *fp, enum ima_show_type show,
		       enum data_formats fmt, const struct ima_field_data *fd)
{
	if (show == IMA_SHOW_ASCII)
		show_ascii(fp, fmt, fd);
	else
		show_binary(fp, show, fd);
}

static void ima_show_template_digest(FILE *fp, enum ima_show_type show,
				     const struct ima_field_data *fd)
{
	show_field(fp, show, DATA_FMT_DIGEST, fd);
}

static void ima_show_template_digest_ng(FILE *fp, enum ima_show_type show,
					const struct ima_field_data *fd)
{
	show_field(fp, show, DATA_FMT_DIGEST_WITH_ALGO, fd);
}

static void ima_show_template_digest_ngv2(FILE *fp, enum ima_show_type show,
					  const struct ima_field_data *fd)
{
	show_field(fp, show, DATA_FMT_DIGEST_WITH_TYPE_AND_ALGO, fd);
}

static void ima_show_template_string(FILE *fp, enum ima_show_type show,
				     const struct ima_field_data *fd)
{
	show_field(fp, show, DATA_FMT_STRING, fd);
}

static void ima_show_template_sig(FILE *fp, enum ima_show_type show,
				  const struct ima_field_data *fd)
{
	show_field(fp, show, DATA_FMT_HEX, fd);
}

static void ima_show_template_uint(FILE *fp, enum ima_show_type show,
				   const struct ima_field_data *fd)
{
	show_field(fp, show, DATA_FMT_UINT, fd);
}

/* ---- init ----------------------------------------------------------------- */

/*
 * Lay out a digest field.  A violation has no digest: its place is left
 * zeroed, sized by the algorithm (20 bytes for the plain 'd' format).
 */
static int digest_field(const uint8_t *digest, size_t digestsize,
			const char *type, int algo, struct ima_field_data *out)
{
	uint8_t buffer[64 + UEVM_MAX_DIGEST_SIZE] = { 0 };
	enum data_formats fmt = DATA_FMT_DIGEST;
	const char *aname = algo >= 0 ? uevm_hash_algo_name(algo) : NULL;
	uint32_t offset = 0;
	int n;

	if (algo >= 0 && !aname)
		return uevm_err(EINVAL, "hash algorithm %d has no kernel name", algo);
	if (type && aname) {
		fmt = DATA_FMT_DIGEST_WITH_TYPE_AND_ALGO;
		n = snprintf((char *)buffer, 64, "%s:%s:", type, aname);
		offset = (uint32_t)n + 1;
	} else if (aname) {
		fmt = DATA_FMT_DIGEST_WITH_ALGO;
		n = snprintf((char *)buffer, 64, "%s:", aname);
		offset = (uint32_t)n + 1;
	}
	if (digest) {
		if (digestsize > UEVM_MAX_DIGEST_SIZE)
			return uevm_err(EINVAL, "digest of %zu bytes is too long",
					digestsize);
		memcpy(buffer + offset, digest, digestsize);
		offset += (uint32_t)digestsize;
	} else {
		offset += aname ? uevm_hash_algo_digest_size(algo)
				: IMA_SHA1_DIGEST_SIZE;
	}
	return write_field_data(buffer, offset, fmt, out);
}

static int check_digest(const struct ima_event_data *ev)
{
	if (!ev->digest || ev->digest_len != uevm_hash_algo_digest_size(ev->algo))
		return uevm_err(EINVAL, "%s: event has no %s digest of the right size",
				ev->filename ? ev->filename : "(event)",
				uevm_hash_algo_name(ev->algo) ?
				uevm_hash_algo_name(ev->algo) : "known");
	return 0;
}

/* 'd': the SHA-1 digest (20 bytes).  A digest of another algorithm is
 * replaced by the content's SHA-1, as the kernel rehashes the file.  (The
 * kernel also lets an MD5 digest through; it is rehashed here so that every
 * 'ima' entry has the 20 bytes list parsers expect.) */
static int ima_eventdigest_init(const struct ima_event_data *ev,
				struct ima_field_data *out)
{
	uint8_t sha1[IMA_SHA1_DIGEST_SIZE];
	int ret;

	if (ev->violation)
		return digest_field(NULL, 0, NULL, -1, out);
	ret = check_digest(ev);
	if (ret)
		return ret;
	if (ev->algo == UEVM_HASH_SHA1)
		return digest_field(ev->digest, ev->digest_len, NULL, -1, out);
	if (ev->sha1_digest)
		return digest_field(ev->sha1_digest, IMA_SHA1_DIGEST_SIZE, NULL, -1, out);
	if (!ev->file || !ev->file->io)
		return uevm_err(EINVAL, "%s: the 'd' field needs a SHA-1 digest "
				"or the open file to compute it",
				ev->filename ? ev->filename : "(event)");
	ret = uevm_hash_fd(ev->file->fd, UEVM_HASH_SHA1, sha1);
	if (ret)
		return ret;
	return digest_field(sha1, sizeof(sha1), NULL, -1, out);
}

/* 'd-ng': "<algo>:" NUL digest, any algorithm. */
static int ima_eventdigest_ng_init(const struct ima_event_data *ev,
				   struct ima_field_data *out)
{
	int ret;

	if (ev->violation)
		return digest_field(NULL, 0, NULL, ev->ima_hash_algo, out);
	ret = check_digest(ev);
	if (ret)
		return ret;
	return digest_field(ev->digest, ev->digest_len, NULL, ev->algo, out);
}

/* 'd-ngv2': "<ima|verity>:<algo>:" NUL digest. */
static int ima_eventdigest_ngv2_init(const struct ima_event_data *ev,
				     struct ima_field_data *out)
{
	int ret;

	if (ev->violation)
		return digest_field(NULL, 0, "ima", ev->ima_hash_algo, out);
	ret = check_digest(ev);
	if (ret)
		return ret;
	return digest_field(ev->digest, ev->digest_len,
			    ev->verity ? "verity" : "ima", ev->algo, out);
}

/* 'd-modsig': the digest an appended signature covers; empty without one. */
static int ima_eventdigest_modsig_init(const struct ima_event_data *ev,
				       struct ima_field_data *out)
{
	if (!ev->modsig)
		return 0;
	if (ev->violation)
		return digest_field(NULL, 0, NULL, UEVM_HASH_SHA1, out);
	if (!ev->modsig_digest || !ev->modsig_digest_len ||
	    ev->modsig_digest_len != uevm_hash_algo_digest_size(ev->modsig_algo))
		return uevm_err(EINVAL, "modsig without its digest");
	return digest_field(ev->modsig_digest, ev->modsig_digest_len, NULL,
			    ev->modsig_algo, out);
}

static int eventname_init(const struct ima_event_data *ev,
			  struct ima_field_data *out, bool size_limit)
{
	const char *name = ev->filename;
	size_t len;

	if (!name)
		return uevm_err(EINVAL, "event has no name");
	len = strlen(name);
	if (size_limit && len > IMA_EVENT_NAME_LEN_MAX) {
		/* The kernel falls back to the dentry's own name, or cuts
		 * the path when it has no file. */
		const char *base = strrchr(name, '/');

		if (ev->file && base && strlen(base + 1) <= IMA_EVENT_NAME_LEN_MAX) {
			name = base + 1;
			len = strlen(name);
		} else {
			len = IMA_EVENT_NAME_LEN_MAX;
		}
	}
	if (len > UINT32_MAX - 1)
		return uevm_err(EINVAL, "event name too long");
	return write_field_data(name, (uint32_t)len, DATA_FMT_STRING, out);
}

/* 'n': the name, at most 255 bytes. */
static int ima_eventname_init(const struct ima_event_data *ev,
			      struct ima_field_data *out)
{
	return eventname_init(ev, out, true);
}

/* 'n-ng': the name, any length. */
static int ima_eventname_ng_init(const struct ima_event_data *ev,
				 struct ima_field_data *out)
{
	return eventname_init(ev, out, false);
}

/* 'evmsig': security.evm when it is a portable signature. */
static int ima_eventevmsig_init(const struct ima_event_data *ev,
				struct ima_field_data *out)
{
	uint8_t *buf = NULL;
	size_t bufsize = 0;
	ssize_t n;
	int ret;

	if (ev->evm_value) {
		if (ev->evm_len < 1 || ev->evm_value[0] != EVM_XATTR_PORTABLE_DIGSIG ||
		    ev->evm_len > UINT32_MAX)
			return 0;
		return write_field_data(ev->evm_value, (uint32_t)ev->evm_len,
					DATA_FMT_HEX, out);
	}
	if (!ev->file)
		return 0;
	n = uevm_getxattr_alloc(ev->file, XATTR_NAME_EVM, &buf, &bufsize);
	if (n <= 0 || buf[0] != EVM_XATTR_PORTABLE_DIGSIG) {
		free(buf);
		return 0;	/* absent or not portable: an empty field */
	}
	ret = write_field_data(buf, (uint32_t)n, DATA_FMT_HEX, out);
	free(buf);
	return ret;
}

/* 'sig': security.ima when it is a signature (types 3 and 6), else the
 * portable EVM signature, else empty. */
static int ima_eventsig_init(const struct ima_event_data *ev,
			     struct ima_field_data *out)
{
	const uint8_t *x = ev->xattr_value;

	if (!x || ev->xattr_len < 1 ||
	    (x[0] != EVM_IMA_XATTR_DIGSIG && x[0] != IMA_VERITY_DIGSIG))
		return ima_eventevmsig_init(ev, out);
	if (ev->xattr_len > UINT32_MAX)
		return uevm_err(EINVAL, "security.ima value too long");
	return write_field_data(x, (uint32_t)ev->xattr_len, DATA_FMT_HEX, out);
}

/* 'buf': the measured buffer itself (ima-buf). */
static int ima_eventbuf_init(const struct ima_event_data *ev,
			     struct ima_field_data *out)
{
	if (!ev->buf || !ev->buf_len)
		return 0;
	if (ev->buf_len > UINT32_MAX)
		return uevm_err(EINVAL, "buffer too long to measure");
	return write_field_data(ev->buf, (uint32_t)ev->buf_len, DATA_FMT_HEX, out);
}

/* 'modsig': the raw appended signature. */
static int ima_eventmodsig_init(const struct ima_event_data *ev,
				struct ima_field_data *out)
{
	if (!ev->modsig || !ev->modsig_len)
		return 0;
	if (ev->modsig_len > UINT32_MAX)
		return uevm_err(EINVAL, "modsig too long");
	return write_field_data(ev->modsig, (uint32_t)ev->modsig_len,
				DATA_FMT_HEX, out);
}

/* 'iuid', 'igid': the file's owner as an unsigned int. */
static int ima_eventinodeuid_init(const struct ima_event_data *ev,
				  struct ima_field_data *out)
{
	unsigned int id;

	if (!ev->file)
		return 0;
	id = ev->file->st.st_uid;
	return write_field_data(&id, sizeof(id), DATA_FMT_UINT, out);
}

static int ima_eventinodegid_init(const struct ima_event_data *ev,
				  struct ima_field_data *out)
{
	unsigned int id;

	if (!ev->file)
		return 0;
	id = ev->file->st.st_gid;
	return write_field_data(&id, sizeof(id), DATA_FMT_UINT, out);
}

/* 'imode': the file's i_mode, 16 bits. */
static int ima_eventinodemode_init(const struct ima_event_data *ev,
				   struct ima_field_data *out)
{
	uint16_t mode;

	if (!ev->file)
		return 0;
	mode = (uint16_t)ev->file->st.st_mode;
	return write_field_data(&mode, sizeof(mode), DATA_FMT_UINT, out);
}

/* The registered fields (the kernel's supported_fields[]). */
static const struct ima_template_field supported_fields[] = {
	{ "d", ima_eventdigest_init, ima_show_template_digest },
	{ "n", ima_eventname_init, ima_show_template_string },
	{ "d-ng", ima_eventdigest_ng_init, ima_show_template_digest_ng },
	{ "d-ngv2", ima_eventdigest_ngv2_init, ima_show_template_digest_ngv2 },
	{ "n-ng", ima_eventname_ng_init, ima_show_template_string },
	{ "sig", ima_eventsig_init, ima_show_template_sig },
	{ "buf", ima_eventbuf_init, ima_show_template_sig },
	{ "d-modsig", ima_eventdigest_modsig_init, ima_show_template_digest_ng },
	{ "modsig", ima_eventmodsig_init, ima_show_template_sig },
	{ "evmsig", ima_eventevmsig_init, ima_show_template_sig },
	{ "iuid", ima_eventinodeuid_init, ima_show_template_uint },
	{ "igid", ima_eventinodegid_init, ima_show_template_uint },
	{ "imode", ima_eventinodemode_init, ima_show_template_uint },
};

UEVM_EXPORT const struct ima_template_field *ima_template_field_lookup(const char *id)
{
	if (!id)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(supported_fields); i++)
		if (!strcmp(supported_fields[i].field_id, id))
			return &supported_fields[i];
	return NULL;
}
