// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How the uevm commands print names from the disk (programs/uevm/prog_util.c,
 * programs/uevm/report.c).  Properties, for any bytes:
 *  - str_is_utf8 agrees with a decoder written from RFC 3629;
 *  - fput_path's text decodes back to the exact bytes (\\ \n \t \r \xHH
 *    \uXXXX), with no raw control byte;
 *  - fput_json_string gives valid UTF-8 without raw controls;
 *  - report_json_bytes' *_b64 is null exactly for UTF-8, and decodes back.
 */
#include "fuzz.h"
#include "prog.h"
#include "report.h"

/* RFC 3629, by code point: the reference for str_is_utf8. */
static bool ref_utf8(const unsigned char *s)
{
	while (*s) {
		unsigned int cp, n, min;

		if (*s < 0x80) {
			s++;
			continue;
		}
		if ((*s & 0xe0) == 0xc0)
			n = 2, cp = *s & 0x1f, min = 0x80;
		else if ((*s & 0xf0) == 0xe0)
			n = 3, cp = *s & 0x0f, min = 0x800;
		else if ((*s & 0xf8) == 0xf0)
			n = 4, cp = *s & 0x07, min = 0x10000;
		else
			return false;
		for (unsigned int i = 1; i < n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		s += n;
	}
	return true;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Undo fput_path into OUT; returns its length, or -1 on a bad escape. */
static long unescape(const char *t, size_t len, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned int cp = 0;

		FUZZ_ASSERT((unsigned char)t[i] >= 0x20 && t[i] != 0x7f);
		if (t[i] != '\\') {
			out[o++] = t[i];
			continue;
		}
		if (++i >= len)
			return -1;
		switch (t[i]) {
		case '\\': out[o++] = '\\'; break;
		case 'n': out[o++] = '\n'; break;
		case 't': out[o++] = '\t'; break;
		case 'r': out[o++] = '\r'; break;
		case 'x':
			if (i + 2 >= len || hexval(t[i + 1]) < 0 || hexval(t[i + 2]) < 0)
				return -1;
			out[o++] = (char)(hexval(t[i + 1]) << 4 | hexval(t[i + 2]));
			i += 2;
			break;
		case 'u':
			if (i + 4 >= len)
				return -1;
			for (int k = 1; k <= 4; k++) {
				if (hexval(t[i + k]) < 0)
					return -1;
				cp = cp << 4 | (unsigned int)hexval(t[i + k]);
			}
			i += 4;
			if (cp < 0x800) {
				out[o++] = (char)(0xc0 | cp >> 6);
			} else {
				out[o++] = (char)(0xe0 | cp >> 12);
				out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			}
			out[o++] = (char)(0x80 | (cp & 0x3f));
			break;
		default:
			return -1;
		}
	}
	return (long)o;
}

static int b64val(char c)
{
	const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = c ? strchr(tab, c) : NULL;

	return p ? (int)(p - tab) : -1;
}

static void check_b64(const char *json, const char *s)
{
	const char *p = strstr(json, "\"b\": ");
	size_t n = 0, slen = strlen(s);
	char *out;

	FUZZ_ASSERT(p);
	p += 5;
	if (str_is_utf8(s)) {
		FUZZ_ASSERT(!strcmp(p, "null"));
		return;
	}
	FUZZ_ASSERT(*p++ == '"');
	out = malloc(slen + 3);
	if (!out)
		abort();
	while (*p != '"') {
		int v[4];

		for (int k = 0; k < 4; k++)
			v[k] = p[k] == '=' ? 0 : b64val(p[k]);
		FUZZ_ASSERT(v[0] >= 0 && v[1] >= 0 && v[2] >= 0 && v[3] >= 0);
		out[n++] = (char)(v[0] << 2 | v[1] >> 4);
		if (p[2] != '=')
			out[n++] = (char)(v[1] << 4 | v[2] >> 2);
		if (p[3] != '=')
			out[n++] = (char)(v[2] << 6 | v[3]);
		p += 4;
		FUZZ_ASSERT(n <= slen);
	}
	FUZZ_ASSERT(n == slen && !memcmp(out, s, n));
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = strndup((const char *)data, size), *buf = NULL, *back;
	size_t len = 0;
	FILE *fp;

	if (!s)
		abort();
	FUZZ_ASSERT(str_is_utf8(s) == ref_utf8((const unsigned char *)s));

	fp = open_memstream(&buf, &len);
	fput_path(fp, s);
	fclose(fp);
	back = malloc(len + 1);
	if (!back)
		abort();
	FUZZ_ASSERT(unescape(buf, len, back) == (long)strlen(s));
	FUZZ_ASSERT(!memcmp(back, s, strlen(s)));
	free(back);
	free(buf);

	buf = NULL;
	fp = open_memstream(&buf, &len);
	fput_json_string(fp, s);
	fclose(fp);
	FUZZ_ASSERT(str_is_utf8(buf));
	for (size_t i = 0; i < len; i++)
		FUZZ_ASSERT((unsigned char)buf[i] >= 0x20 && buf[i] != 0x7f);
	free(buf);

	buf = NULL;
	fp = open_memstream(&buf, &len);
	report_json_bytes(fp, "a", "b", s);
	fclose(fp);
	check_b64(buf, s);
	free(buf);
	free(s);
	return 0;
}
