// SPDX-License-Identifier: GPL-2.0-or-later
/* A small JSON reader for runtime policies (rp_json.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rp_json.h"

struct jparser {
	const uint8_t *p, *start, *end;
	char *err;
	size_t errlen;
	bool failed;
};

static void jerr(struct jparser *jp, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void jerr(struct jparser *jp, const char *fmt, ...)
{
	size_t line = 1, col = 1;
	va_list ap;
	int n;

	if (jp->failed)
		return;
	jp->failed = true;
	for (const uint8_t *q = jp->start; q < jp->p && q < jp->end; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	n = snprintf(jp->err, jp->errlen, "line %zu, column %zu: ", line, col);
	if (n < 0 || (size_t)n >= jp->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(jp->err + n, jp->errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static void skip_ws(struct jparser *jp)
{
	while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' ||
				   *jp->p == '\n' || *jp->p == '\r'))
		jp->p++;
}

static struct jval *jnew(struct jparser *jp, enum jtype t)
{
	struct jval *v = calloc(1, sizeof(*v));

	if (!v)
		jerr(jp, "out of memory");
	else
		v->type = t;
	return v;
}

static bool lit(struct jparser *jp, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, word, n))
		return false;
	jp->p += n;
	return true;
}

static int hex4(const uint8_t *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		int c = p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	return v;
}

static size_t put_utf8(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Length of the UTF-8 sequence at P (RFC 3629), 0 if invalid. */
static size_t utf8_len(const uint8_t *p, const uint8_t *end)
{
	uint32_t cp, min;
	size_t n;

	if (*p < 0x80)
		return 1;
	if ((*p & 0xe0) == 0xc0)
		n = 2, cp = *p & 0x1f, min = 0x80;
	else if ((*p & 0xf0) == 0xe0)
		n = 3, cp = *p & 0x0f, min = 0x800;
	else if ((*p & 0xf8) == 0xf0)
		n = 4, cp = *p & 0x07, min = 0x10000;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* An escape after the backslash; appends to OUT, advances JP. */
static bool parse_escape(struct jparser *jp, char *out, size_t *o)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *k;
	int cp, lo;

	if (jp->p >= jp->end) {
		jerr(jp, "unterminated string");
		return false;
	}
	k = strchr(from, *jp->p);
	if (*jp->p && k) {
		out[(*o)++] = to[k - from];
		jp->p++;
		return true;
	}
	if (*jp->p != 'u' || jp->end - jp->p < 5 || (cp = hex4(jp->p + 1)) < 0) {
		jerr(jp, "bad escape in string");
		return false;
	}
	jp->p += 5;
	if (cp >= 0xd800 && cp <= 0xdbff && jp->end - jp->p >= 6 &&
	    jp->p[0] == '\\' && jp->p[1] == 'u' &&
	    (lo = hex4(jp->p + 2)) >= 0xdc00 && lo <= 0xdfff) {
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		jp->p += 6;
	} else if (cp >= 0xd800 && cp <= 0xdfff) {
		jerr(jp, "lone surrogate \\u%04x in string", cp);
		return false;
	}
	if (!cp) {
		jerr(jp, "\\u0000 in string");
		return false;
	}
	*o += put_utf8((uint32_t)cp, out + *o);
	return true;
}

static char *parse_string_raw(struct jparser *jp)
{
	const uint8_t *q = ++jp->p;
	size_t o = 0;
	char *out;

	/* The decoded string is never longer than its source. */
	while (q < jp->end && *q != '"')
		q += *q == '\\' && q + 1 < jp->end ? 2 : 1;
	out = malloc((size_t)(q - jp->p) + 1);
	if (!out) {
		jerr(jp, "out of memory");
		return NULL;
	}
	while (jp->p < jp->end && *jp->p != '"') {
		size_t n;

		if (*jp->p == '\\') {
			jp->p++;
			if (!parse_escape(jp, out, &o))
				goto fail;
			continue;
		}
		if (*jp->p < 0x20) {
			jerr(jp, "control character in string");
			goto fail;
		}
		n = utf8_len(jp->p, jp->end);
		if (!n) {
			jerr(jp, "invalid UTF-8 in string");
			goto fail;
		}
		memcpy(out + o, jp->p, n);
		o += n;
		jp->p += n;
	}
	if (jp->p >= jp->end) {
		jerr(jp, "unterminated string");
		goto fail;
	}
	jp->p++;
	out[o] = '\0';
	return out;
fail:
	free(out);
	return NULL;
}

static void parse_number(struct jparser *jp, struct jval *v)
{
	const uint8_t *s = jp->p;
	bool frac = false, neg = false, digits = false;
	unsigned long long u = 0;

	if (*jp->p == '-') {
		neg = true;
		jp->p++;
	}
	if (jp->p < jp->end && *jp->p == '0') {
		jp->p++;
		digits = true;
	} else {
		while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9') {
			unsigned int d = (unsigned int)(*jp->p++ - '0');

			if (u > (ULLONG_MAX - d) / 10)
				v->int_overflow = true;
			else
				u = u * 10 + d;
			digits = true;
		}
	}
	if (!digits) {
		jp->p = s;
		jerr(jp, "bad number");
		return;
	}
	if (jp->p < jp->end && *jp->p == '.') {
		frac = true;
		jp->p++;
		if (jp->p >= jp->end || *jp->p < '0' || *jp->p > '9') {
			jerr(jp, "bad number");
			return;
		}
		while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9')
			jp->p++;
	}
	if (jp->p < jp->end && (*jp->p == 'e' || *jp->p == 'E')) {
		frac = true;
		jp->p++;
		if (jp->p < jp->end && (*jp->p == '+' || *jp->p == '-'))
			jp->p++;
		if (jp->p >= jp->end || *jp->p < '0' || *jp->p > '9') {
			jerr(jp, "bad number");
			return;
		}
		while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9')
			jp->p++;
	}
	v->is_int = !frac;
	if (v->is_int && u > (unsigned long long)LLONG_MAX)
		v->int_overflow = true;
	if (v->is_int && !v->int_overflow)
		v->i = neg ? -(long long)u : (long long)u;
}

static struct jval *parse_value(struct jparser *jp, int depth);

static bool grow(struct jparser *jp, struct jval *v, size_t *cap, bool keys)
{
	size_t nc = *cap ? *cap * 2 : 8;
	struct jval **items;

	if (v->n < *cap)
		return true;
	items = realloc(v->items, nc * sizeof(*items));
	if (!items) {
		jerr(jp, "out of memory");
		return false;
	}
	v->items = items;
	if (keys) {
		char **k = realloc(v->keys, nc * sizeof(*k));

		if (!k) {
			jerr(jp, "out of memory");
			return false;
		}
		v->keys = k;
	}
	*cap = nc;
	return true;
}

/* "[" or "{" seen; items separated by ',' up to CLOSE. */
static struct jval *parse_container(struct jparser *jp, int depth, bool obj)
{
	struct jval *v = jnew(jp, obj ? J_OBJ : J_ARR);
	char close = obj ? '}' : ']';
	size_t cap = 0;

	if (!v)
		return NULL;
	jp->p++;
	skip_ws(jp);
	if (jp->p < jp->end && *jp->p == close) {
		jp->p++;
		return v;
	}
	for (;;) {
		char *key = NULL;
		struct jval *item;

		skip_ws(jp);
		if (obj) {
			if (jp->p >= jp->end || *jp->p != '"') {
				jerr(jp, "expected a string key");
				break;
			}
			key = parse_string_raw(jp);
			if (!key)
				break;
			skip_ws(jp);
			if (jp->p >= jp->end || *jp->p != ':') {
				free(key);
				jerr(jp, "expected ':'");
				break;
			}
			jp->p++;
		}
		item = parse_value(jp, depth + 1);
		if (!item || !grow(jp, v, &cap, obj)) {
			free(key);
			json_free(item);
			break;
		}
		if (obj)
			v->keys[v->n] = key;
		v->items[v->n++] = item;
		skip_ws(jp);
		if (jp->p < jp->end && *jp->p == ',') {
			jp->p++;
			continue;
		}
		if (jp->p < jp->end && *jp->p == close) {
			jp->p++;
			return v;
		}
		jerr(jp, "expected ',' or '%c'", close);
		break;
	}
	json_free(v);
	return NULL;
}

static struct jval *parse_value(struct jparser *jp, int depth)
{
	struct jval *v;

	skip_ws(jp);
	if (depth > JSON_MAX_DEPTH) {
		jerr(jp, "nested deeper than %d levels", JSON_MAX_DEPTH);
		return NULL;
	}
	if (jp->p >= jp->end) {
		jerr(jp, "unexpected end of input");
		return NULL;
	}
	switch (*jp->p) {
	case '{':
		return parse_container(jp, depth, true);
	case '[':
		return parse_container(jp, depth, false);
	case '"':
		v = jnew(jp, J_STR);
		if (v && !(v->s = parse_string_raw(jp))) {
			free(v);
			return NULL;
		}
		return v;
	}
	if (lit(jp, "null"))
		return jnew(jp, J_NULL);
	if (lit(jp, "true") || lit(jp, "false")) {
		v = jnew(jp, J_BOOL);
		if (v)
			v->b = jp->p[-1] == 'e' && jp->p[-2] == 'u';	/* "true" */
		return v;
	}
	if (*jp->p == '-' || (*jp->p >= '0' && *jp->p <= '9')) {
		v = jnew(jp, J_NUM);
		if (!v)
			return NULL;
		parse_number(jp, v);
		if (jp->failed) {
			free(v);
			return NULL;
		}
		return v;
	}
	jerr(jp, "unexpected character");
	return NULL;
}

struct jval *json_parse(const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	struct jparser jp = { buf, buf, buf + len, err, errlen, false };
	struct jval *v;

	if (errlen)
		err[0] = '\0';
	/* A UTF-8 byte order mark, which Python's json refuses too. */
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) {
		jerr(&jp, "byte order mark before the document");
		return NULL;
	}
	v = parse_value(&jp, 0);
	if (!v)
		return NULL;
	skip_ws(&jp);
	if (jp.p < jp.end) {
		jerr(&jp, "trailing data after the document");
		json_free(v);
		return NULL;
	}
	return v;
}

void json_free(struct jval *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->s);
	free(v);
}

const struct jval *json_get(const struct jval *o, const char *key)
{
	if (!o || o->type != J_OBJ)
		return NULL;
	for (size_t i = o->n; i-- > 0;)
		if (!strcmp(o->keys[i], key))
			return o->items[i];
	return NULL;
}

const char *json_type_name(enum jtype t)
{
	static const char *const names[] = {
		"null", "boolean", "number", "string", "array", "object",
	};

	return names[t];
}
