// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading ASCII measurement lists (ascii_runtime_measurements and its
 * _<algo> variants) back into template entries, and replaying them.
 *
 * A line is "%2d <template digest hex> <template name>" followed by one
 * " <field>" per template field, shown as the kernel's field_show does:
 * digests with their "<algo>:" prefix, names as they are (%s: up to the
 * first NUL, nothing escaped), signatures and buffers in hex, ids and
 * modes in decimal, an empty field as nothing at all.  The binary template
 * data is rebuilt from the fields so that each line's template digest is
 * checked and other banks' digests can be computed for a replay.
 *
 * What the ASCII form cannot say, and how it is read here:
 *  - a name may contain spaces (the kernel turns them into '_' when it
 *    measures, but a list restored across kexec, or written by someone
 *    else, keeps them): the name field takes what the fields before it
 *    (split from the left) and after it (split from the right, none of
 *    which can contain a space) leave;
 *  - a name containing a newline splits its line in two: the first half
 *    fails its digest check, the second half is refused as malformed;
 *  - an empty name, an empty field and a field the kernel cannot show
 *    all print as nothing: a name is taken as "" plus its NUL (what the
 *    kernel records), other empty fields as no bytes;
 *  - iuid/igid are rebuilt as 32-bit and imode as 16-bit numbers.
 * The digest check tells whether a line was read back as it was measured.
 *
 * Input is untrusted: a malformed line stops the parse with -EBADMSG
 * naming the line and the cause.
 */
#include <stdlib.h>
#include <string.h>
#include "ima_ml_private.h"

/* Twice the binary parser's template data limit, as hex: beyond it, a
 * line is damage (and field lengths stay far below 4 GiB). */
#define LINE_MAX_LEN (128u << 20)

/* What a field's ASCII form is, from its id. */
enum ascii_kind {
	ASCII_RAW_HEX,		/* d, sig, buf, modsig, evmsig; unknown templates */
	ASCII_ALGO_DIGEST,	/* d-ng, d-ngv2, d-modsig: "<prefix>:<hex>" */
	ASCII_STRING,		/* n, n-ng */
	ASCII_U32,		/* iuid, igid */
	ASCII_U16,		/* imode */
};

static enum ascii_kind field_kind(const char *id)
{
	if (!strcmp(id, "n") || !strcmp(id, "n-ng"))
		return ASCII_STRING;
	if (!strcmp(id, "d-ng") || !strcmp(id, "d-ngv2") || !strcmp(id, "d-modsig"))
		return ASCII_ALGO_DIGEST;
	if (!strcmp(id, "iuid") || !strcmp(id, "igid"))
		return ASCII_U32;
	if (!strcmp(id, "imode"))
		return ASCII_U16;
	return ASCII_RAW_HEX;
}

/* A piece of the line (not NUL-terminated). */
struct span {
	const char *p;
	size_t len;
};

static int hexval(char c)
{
	/* The kernel prints lowercase; anything else is not its output. */
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decode S into OUT (room for s.len / 2 bytes); false if not hex. */
static bool unhex(struct span s, uint8_t *out)
{
	if (s.len % 2)
		return false;
	for (size_t i = 0; i < s.len; i += 2) {
		int hi = hexval(s.p[i]), lo = hexval(s.p[i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

/* Why S is not hex, for the message. */
static const char *hex_problem(struct span s)
{
	for (size_t i = 0; i < s.len; i++) {
		if (s.p[i] >= 'A' && s.p[i] <= 'F')
			return "uppercase hex digit";
		if (s.p[i] == '\r')
			return "carriage return (DOS line endings?)";
		if (hexval(s.p[i]) < 0)
			return "not a hex digit";
	}
	return "odd number of hex digits";
}

/* Parsing state for the line being read, for error messages. */
struct line_ctx {
	size_t lineno;
	const char *tmpl;
};

#define line_err(lc, fmt, ...) \
	uevm_err(EBADMSG, "line %zu: " fmt, (lc)->lineno, ##__VA_ARGS__)

static int field_hex(const struct line_ctx *lc, const char *id, struct span s,
		     struct ima_field_data *f)
{
	f->data = malloc(s.len / 2 + 1);
	if (!f->data)
		return uevm_err(ENOMEM, "out of memory reading a list");
	if (!unhex(s, f->data))
		return line_err(lc, "template '%s', field '%s': %s", lc->tmpl, id,
				hex_problem(s));
	f->len = (uint32_t)(s.len / 2);
	return 0;
}

/* "<prefix>:<hex>" to "<prefix>:" NUL digest; the last ':' ends the prefix
 * (a d-ngv2 prefix has two). */
static int field_algo_digest(const struct line_ctx *lc, const char *id,
			     struct span s, struct ima_field_data *f)
{
	const char *colon = NULL;
	struct span hex;
	size_t plen;

	if (!s.len)
		return 0;	/* d-modsig without a modsig */
	for (size_t i = 0; i < s.len; i++)
		if (s.p[i] == ':')
			colon = s.p + i;
	if (!colon)
		return line_err(lc, "template '%s', field '%s': no '<algo>:' "
				"before the digest", lc->tmpl, id);
	plen = (size_t)(colon - s.p) + 1;
	hex.p = colon + 1;
	hex.len = s.len - plen;
	f->data = malloc(plen + 1 + hex.len / 2 + 1);
	if (!f->data)
		return uevm_err(ENOMEM, "out of memory reading a list");
	memcpy(f->data, s.p, plen);
	f->data[plen] = '\0';
	if (!unhex(hex, f->data + plen + 1))
		return line_err(lc, "template '%s', field '%s': digest: %s",
				lc->tmpl, id, hex_problem(hex));
	f->len = (uint32_t)(plen + 1 + hex.len / 2);
	return 0;
}

/* A name: its bytes and the NUL the kernel records with it. */
static int field_string(const struct line_ctx *lc, bool ima_tmpl, struct span s,
			struct ima_field_data *f)
{
	if (ima_tmpl && s.len > IMA_EVENT_NAME_LEN_MAX)
		return line_err(lc, "'ima' entry name of %zu bytes (at most %d)",
				s.len, IMA_EVENT_NAME_LEN_MAX);
	f->data = malloc(s.len + 1);
	if (!f->data)
		return uevm_err(ENOMEM, "out of memory reading a list");
	memcpy(f->data, s.p, s.len);
	f->data[s.len] = '\0';
	f->len = (uint32_t)(s.len + 1);
	return 0;
}

/* Decimal as the kernel prints it (%u: no sign, no leading zero). */
static int field_uint(const struct line_ctx *lc, const char *id, struct span s,
		      unsigned int size, struct ima_field_data *f)
{
	uint64_t max = size == 2 ? UINT16_MAX : UINT32_MAX, v = 0;

	if (!s.len)
		return 0;
	if (s.len > 1 && s.p[0] == '0')
		return line_err(lc, "template '%s', field '%s': leading zero",
				lc->tmpl, id);
	for (size_t i = 0; i < s.len; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return line_err(lc, "template '%s', field '%s': not a "
					"decimal number", lc->tmpl, id);
		v = v * 10 + (uint64_t)(s.p[i] - '0');
		if (v > max)
			return line_err(lc, "template '%s', field '%s': more "
					"than %u bits", lc->tmpl, id, size * 8);
	}
	f->data = malloc(size);
	if (!f->data)
		return uevm_err(ENOMEM, "out of memory reading a list");
	if (size == 2) {
		uint16_t v16 = (uint16_t)v;

		memcpy(f->data, &v16, 2);
	} else {
		uint32_t v32 = (uint32_t)v;

		memcpy(f->data, &v32, 4);
	}
	f->len = size;
	return 0;
}

static int parse_field(const struct line_ctx *lc, const struct ima_template_entry *e,
		       int i, struct span s, struct ima_field_data *f)
{
	const char *id = e->desc ? e->desc->fields[i]->field_id : "?";

	if (!e->desc)
		return field_hex(lc, id, s, f);
	switch (field_kind(id)) {
	case ASCII_STRING:
		return field_string(lc, ima_entry_is_ima_template(e), s, f);
	case ASCII_ALGO_DIGEST:
		return field_algo_digest(lc, id, s, f);
	case ASCII_U32:
		return field_uint(lc, id, s, 4, f);
	case ASCII_U16:
		return field_uint(lc, id, s, 2, f);
	case ASCII_RAW_HEX:
		break;
	}
	if (ima_entry_is_ima_template(e) && s.len != 2 * IMA_SHA1_DIGEST_SIZE)
		return line_err(lc, "'ima' entry digest of %zu hex digits (want %d)",
				s.len, 2 * IMA_SHA1_DIGEST_SIZE);
	return field_hex(lc, id, s, f);
}

/* The next space-separated word of *REST (up to a space or the end). */
static struct span next_word(struct span *rest)
{
	const char *sp = memchr(rest->p, ' ', rest->len);
	struct span w = { rest->p, sp ? (size_t)(sp - rest->p) : rest->len };

	rest->p += w.len;
	rest->len -= w.len;
	return w;
}

static int count_spaces(struct span s)
{
	int n = 0;

	for (size_t i = 0; i < s.len; i++)
		n += s.p[i] == ' ';
	return n;
}

/*
 * Split " f0 f1 ... fn-1" into the entry's fields.  The name field (the
 * first string field) may hold spaces: the fields before it are taken
 * from the left, those after it from the right, and it gets the rest.
 * Without a string field the last field gets the rest (and a space in it
 * is refused by its own parser).  An unknown template has one hex field
 * per space (its entry was sized that way).
 */
static int split_fields(const struct line_ctx *lc, struct ima_template_entry *e,
			struct span rest)
{
	struct span w[IMA_TEMPLATE_NUM_FIELDS_MAX];
	int n = e->num_fields, mid = n - 1, ret;

	if (!e->desc) {
		for (int i = 0; i < n; i++) {
			rest.p++;	/* the space before each field */
			rest.len--;
			ret = parse_field(lc, e, i, next_word(&rest), &e->fields[i]);
			if (ret)
				return ret;
		}
		return 0;
	}
	for (int i = 0; i < n; i++)
		if (field_kind(e->desc->fields[i]->field_id) == ASCII_STRING) {
			mid = i;
			break;
		}
	if (count_spaces(rest) < n)
		return line_err(lc, "template '%s' has %d fields, the line fewer",
				lc->tmpl, n);
	/* REST starts with a space: the word before it stopped there. */
	for (int i = 0; i < mid; i++) {
		rest.p++;
		rest.len--;
		w[i] = next_word(&rest);
	}
	for (int i = n - 1; i > mid; i--) {
		const char *sp = rest.p + rest.len;

		/* Enough spaces were counted for every field, so this stops
		 * after the space before field MID at the latest. */
		while (sp[-1] != ' ')
			sp--;
		w[i].p = sp;
		w[i].len = (size_t)(rest.p + rest.len - sp);
		rest.len -= w[i].len + 1;
	}
	w[mid].p = rest.p + 1;
	w[mid].len = rest.len - 1;
	for (int i = 0; i < n; i++) {
		ret = parse_field(lc, e, i, w[i], &e->fields[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* The bank of a template digest of HEXLEN digits, for an _<algo> list. */
static int algo_by_hex_len(size_t hexlen)
{
	switch (hexlen) {
	case 2 * 20: return UEVM_HASH_SHA1;
	case 2 * 32: return UEVM_HASH_SHA256;
	case 2 * 48: return UEVM_HASH_SHA384;
	case 2 * 64: return UEVM_HASH_SHA512;
	}
	return -1;
}

/* Parse the line L (without its newline) into *OUT. */
static int parse_line(const struct line_ctx *lc0, struct span l, int digest_algo,
		      struct ima_template_entry **out, bool *digest_ok, int *line_algo)
{
	struct line_ctx lc = *lc0;
	uint8_t stored[UEVM_MAX_DIGEST_SIZE], calc[UEVM_MAX_DIGEST_SIZE];
	const struct ima_template_desc *d;
	struct ima_template_desc *owned;
	struct ima_template_entry *e;
	char name[IMA_EVENT_NAME_LEN_MAX + 1];
	struct span rest = l, w;
	unsigned int dsize;
	int pcr, algo, n, ret;

	if (l.len > LINE_MAX_LEN)
		return line_err(&lc, "longer than %u bytes", LINE_MAX_LEN);
	if (memchr(l.p, '\0', l.len))
		return line_err(&lc, "contains a NUL byte");
	/* "%2d ": " 0".." 9", then "10".."23". */
	if (l.len < 3 || l.p[2] != ' ' ||
	    !(l.p[0] == ' ' || (l.p[0] >= '1' && l.p[0] <= '9')) ||
	    l.p[1] < '0' || l.p[1] > '9')
		return line_err(&lc, "does not start with a PCR number ('%%2d ')");
	pcr = (l.p[0] == ' ' ? 0 : l.p[0] - '0') * 10 + (l.p[1] - '0');
	if (pcr >= IMA_ML_NUM_PCRS)
		return line_err(&lc, "PCR %d out of range (0-%d)", pcr,
				IMA_ML_NUM_PCRS - 1);
	rest.p += 3;
	rest.len -= 3;

	w = next_word(&rest);
	algo = digest_algo >= 0 ? digest_algo : algo_by_hex_len(w.len);
	dsize = algo >= 0 ? uevm_hash_algo_digest_size(algo) : 0;
	if (!w.len)
		return line_err(&lc, "no template digest");
	if (!dsize || w.len != 2 * (size_t)dsize) {
		if (digest_algo >= 0)
			return line_err(&lc, "template digest of %zu hex digits "
					"(a %s digest has %u)", w.len,
					uevm_hash_algo_name(digest_algo), 2 * dsize);
		return line_err(&lc, "template digest of %zu hex digits (not "
				"sha1, sha256, sha384 or sha512)", w.len);
	}
	if (!unhex(w, stored))
		return line_err(&lc, "template digest: %s", hex_problem(w));

	if (!rest.len)
		return line_err(&lc, "no template name");
	rest.p++;
	rest.len--;
	w = next_word(&rest);
	if (!w.len || w.len > IMA_EVENT_NAME_LEN_MAX)
		return line_err(&lc, "template name of %zu bytes", w.len);
	memcpy(name, w.p, w.len);
	name[w.len] = '\0';
	lc.tmpl = name;

	d = ima_ml_desc_for_name(name, &owned);
	/* An unknown template is sized by the line: one field per space (no
	 * more than a kernel template can have). */
	n = d ? d->num_fields : count_spaces(rest);
	if (!d && n > IMA_TEMPLATE_NUM_FIELDS_MAX)
		return line_err(&lc, "unknown template '%s' with %d fields (at "
				"most %d)", name, n, IMA_TEMPLATE_NUM_FIELDS_MAX);
	e = ima_entry_alloc(n);
	if (!e) {
		ima_ml_desc_free_owned(owned);
		return -ENOMEM;
	}
	e->desc = d;
	e->owned_desc = owned;
	e->pcr = pcr;
	if (!d && !(e->unknown_name = strdup(name))) {
		ima_template_entry_free(e);
		return uevm_err(ENOMEM, "out of memory reading a list");
	}
	ret = split_fields(&lc, e, rest);
	if (!ret) {
		e->violation = ima_ml_all_zero(stored, dsize);
		ret = ima_entry_finish(e);
	}
	if (ret) {
		ima_template_entry_free(e);
		return ret;
	}
	*digest_ok = true;
	if (!e->violation) {
		ret = ima_entry_calc_digest(e, algo, calc);
		if (ret < 0) {
			ima_template_entry_free(e);
			return ret;
		}
		*digest_ok = !memcmp(calc, stored, dsize);
		/* Keep what the list says, so that renderings show it. */
		if (algo == UEVM_HASH_SHA1)
			memcpy(e->digest, stored, dsize);
		else if (algo == UEVM_HASH_SHA256)
			memcpy(e->digest_sha256, stored, dsize);
	}
	*line_algo = algo;
	*out = e;
	return 0;
}

UEVM_EXPORT long ima_ml_parse_ascii(const uint8_t *buf, size_t len,
				    int digest_algo, ima_ml_parse_fn fn,
				    void *arg)
{
	const char *p = (const char *)buf, *end = p + len;
	struct line_ctx lc = { 0, NULL };

	if (digest_algo != IMA_ML_ASCII_AUTO &&
	    !uevm_hash_algo_digest_size(digest_algo))
		return uevm_err(EINVAL, "unknown template digest algorithm %d",
				digest_algo);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct span l = { p, nl ? (size_t)(nl - p) : (size_t)(end - p) };
		struct ima_template_entry *e = NULL;
		bool ok = false;
		int algo, ret;

		lc.lineno++;
		if (!nl)
			return uevm_err(EBADMSG, "line %zu: no newline at its end "
					"(the list is cut short)", lc.lineno);
		ret = parse_line(&lc, l, digest_algo, &e, &ok, &algo);
		if (ret)
			return ret;
		ret = fn(e, lc.lineno - 1, ok, arg);
		ima_template_entry_free(e);
		if (ret)
			return ret;
		p = nl + 1;
	}
	return (long)lc.lineno;
}

UEVM_EXPORT bool ima_ml_is_ascii(const uint8_t *buf, size_t len)
{
	/* A binary list starts with its first PCR number as a u32: a byte
	 * below 24 in either byte order; an ASCII one with "%2d". */
	return len > 0 && (buf[0] == ' ' || (buf[0] >= '0' && buf[0] <= '9'));
}

UEVM_EXPORT int ima_ml_replay_ascii(const uint8_t *buf, size_t len, int algo,
				    bool padded_sha1, struct ima_ml_replay *out)
{
	struct ima_replay_args a = { out, padded_sha1 };
	int ret = ima_replay_begin(out, algo);
	long n;

	if (ret)
		return ret;
	n = ima_ml_parse_ascii(buf, len, IMA_ML_ASCII_AUTO, ima_replay_entry, &a);
	return n < 0 ? (int)n : 0;
}
