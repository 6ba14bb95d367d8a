// SPDX-License-Identifier: GPL-2.0-or-later
/* Python exclude regexes as POSIX extended regexes (rp_regex.h). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rp_regex.h"

/* A growing output string. */
struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void put(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);

	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t nc = (b->len + n + 1) * 2;
		char *ns = realloc(b->s, nc);

		if (!ns) {
			b->oom = true;
			return;
		}
		b->s = ns;
		b->cap = nc;
	}
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

static void putc_lit(struct sbuf *b, char c)
{
	char one[5] = { c, 0 };

	/* A special character as a literal: in a bracket, where only ']'
	 * and '^' would still be special, or escaped. */
	if (c == '^') {
		put(b, "\\^");
		return;
	}
	if (strchr(".[]()*+?{}|$\\", c)) {
		one[0] = '[';
		one[1] = c;
		one[2] = ']';
	}
	put(b, one);
}

/* The class escapes \d \s \w inside a bracket, or NULL: named classes
 * only rp_nfa.c reads, with Python's meaning (rp_unicode.h). */
static const char *class_body(char c)
{
	switch (c) {
	case 'd': return "[:d:]";
	case 's': return "[:s:]";
	case 'w': return "[:w:]";
	}
	return NULL;
}

/* [...] starting at *P (on the '['); emits an equivalent bracket. */
static int translate_bracket(const char **pp, struct sbuf *b, char *err,
			     size_t errlen)
{
	const char *p = *pp + 1;
	bool neg = false, rb = false, dash = false, caret = false, lb = false;
	struct sbuf items = { 0 };
	bool first = true;

	if (*p == '^') {
		neg = true;
		p++;
	}
	while (*p && (*p != ']' || first)) {
		char c = *p++, lit[4] = { 0 };

		first = false;
		if (c == '\\') {
			const char *body = class_body(*p);

			if (!*p)
				break;
			c = *p++;
			if (body) {
				/* Python: "bad character range \d-z". */
				if (p[0] == '-' && p[1] && p[1] != ']') {
					snprintf(err, errlen, "bad character range "
						 "'\\%c-' in a class", c);
					goto fail;
				}
				put(&items, body);
				continue;
			}
			if (c == 'n')
				c = '\n';
			else if (c == 't')
				c = '\t';
			else if (isalnum((unsigned char)c)) {
				snprintf(err, errlen, "escape '\\%c' inside a class is not supported", c);
				goto fail;
			}
		}
		if (*p == '-' && p[1] && p[1] != ']') {
			char hi = p[1];

			if (hi == '\\' || c == ']' || c == '-' || c == '^' || hi == '[') {
				snprintf(err, errlen, "range '%c-%c' inside a class is not supported", c, hi);
				goto fail;
			}
			lit[0] = c;
			lit[1] = '-';
			lit[2] = hi;
			put(&items, lit);
			p += 2;
			continue;
		}
		if (c == ']')
			rb = true;
		else if (c == '-')
			dash = true;
		else if (c == '^')
			caret = true;
		else if (c == '[')
			lb = true;	/* Python: a literal, never "[:" "[." "[=" */
		else {
			lit[0] = c;
			put(&items, lit);
		}
	}
	if (*p != ']') {
		snprintf(err, errlen, "unterminated character class");
		goto fail;
	}
	*pp = p + 1;
	/* A '^' with nothing before it would negate the class: alone it
	 * is an escaped literal, with a '-' the '-' goes first ("[-^]"). */
	if (caret && !neg && !rb && !items.len && !lb) {
		put(b, dash ? "[-^]" : "\\^");
		free(items.s);
		return 0;
	}
	put(b, neg ? "[^" : "[");
	if (rb)
		put(b, "]");
	if (items.s)
		put(b, items.s);
	/* Last but for '^' and '-': nothing after it can make it open a
	 * POSIX class, collating element or equivalence class. */
	if (lb)
		put(b, "[");
	if (caret)
		put(b, "^");
	if (dash)
		put(b, "-");
	put(b, "]");
	free(items.s);
	return 0;
fail:
	free(items.s);
	return -1;
}

/* "{m}", "{m,}", "{,n}", "{m,n}", "{,}" at P: its length, 0 if not one
 * (Python's reading: "{}" and "{x}" are literals). */
static size_t quantifier_len(const char *p)
{
	const char *q = p + 1;
	bool digits = false, comma = false;

	while (isdigit((unsigned char)*q)) {
		q++;
		digits = true;
	}
	if (*q == ',') {
		q++;
		comma = true;
		while (isdigit((unsigned char)*q)) {
			q++;
			digits = true;
		}
	}
	return (digits || comma) && *q == '}' ? (size_t)(q - p) + 1 : 0;
}

/* An escape outside a class, at P (after the backslash). */
static int translate_escape(char c, struct sbuf *b, char *err, size_t errlen)
{
	switch (c) {
	case 'd': put(b, "[[:d:]]"); return 0;
	case 'D': put(b, "[^[:d:]]"); return 0;
	case 's': put(b, "[[:s:]]"); return 0;
	case 'S': put(b, "[^[:s:]]"); return 0;
	case 'w': put(b, "[[:w:]]"); return 0;
	case 'W': put(b, "[^[:w:]]"); return 0;
	case 'A': put(b, "^"); return 0;
	case 'Z': put(b, "$"); return 0;
	case 'n': putc_lit(b, '\n'); return 0;
	case 't': putc_lit(b, '\t'); return 0;
	}
	if (!c || isalnum((unsigned char)c)) {
		snprintf(err, errlen, c ? "escape '\\%c' is not supported" :
			 "trailing backslash", c);
		return -1;
	}
	putc_lit(b, c);
	return 0;
}

/* The length of the group name at P, up to its '>', or 0 if it is not
 * one Python takes (an identifier: letters, digits not first, '_',
 * non-ASCII). */
static size_t group_name_len(const char *p)
{
	size_t n = 0;

	for (; p[n] && p[n] != '>'; n++) {
		unsigned char c = (unsigned char)p[n];

		if (!(c >= 0x80 || c == '_' || isalpha(c) || (n && isdigit(c))))
			return 0;
	}
	return p[n] == '>' ? n : 0;
}

/* What the last piece written was, for Python's two errors on a
 * quantifier: "nothing to repeat" (at the start, after '(' or '|', after
 * an anchor) and "multiple repeat" (after another quantifier and its
 * lazy or possessive suffix).  Both are refused here too: a policy
 * Keylime's verifier cannot load must not pass this check. */
enum rp_last { LAST_NOTHING, LAST_ATOM, LAST_REPEAT };

static int repeat_ok(enum rp_last last, const char *py, const char *p,
		     char *err, size_t errlen)
{
	if (last == LAST_ATOM)
		return 0;
	snprintf(err, errlen, "%s at byte %zu",
		 last == LAST_NOTHING ? "nothing to repeat" : "multiple repeat",
		 (size_t)(p - py));
	return -1;
}

/* The suffix of a quantifier at *PP: a lazy '?' is skipped (laziness
 * changes which match is found, not whether there is one); a possessive
 * '+' (Python 3.11) is refused, since it does change that: "a*+a" never
 * matches. */
static int lazy_or_possessive(const char **pp, const char *py, char *err,
			      size_t errlen)
{
	if (**pp == '?')
		(*pp)++;
	else if (**pp == '+') {
		snprintf(err, errlen, "possessive quantifier at byte %zu is not "
			 "supported", (size_t)(*pp - py));
		return -1;
	}
	return 0;
}

int rp_regex_translate(const char *py, char **out, char *err, size_t errlen)
{
	struct sbuf b = { 0 };
	const char *p = py;
	enum rp_last last = LAST_NOTHING;

	put(&b, "");
	while (*p) {
		char c = *p, one[2] = { c, 0 };
		size_t q;

		if (c == '\\') {
			if (translate_escape(p[1], &b, err, errlen))
				goto fail;
			last = strchr("AZ", p[1]) ? LAST_NOTHING : LAST_ATOM;
			p += 2;
			continue;
		}
		if (c == '[') {
			if (translate_bracket(&p, &b, err, errlen))
				goto fail;
			last = LAST_ATOM;
			continue;
		}
		if (c == '(' && p[1] == '?') {
			if (p[2] == ':') {
				p += 3;
			} else if (p[2] == 'P' && p[3] == '<' && group_name_len(p + 4)) {
				p += 4 + group_name_len(p + 4) + 1;
			} else if (p[2] == 'P' && p[3] == '<') {
				snprintf(err, errlen, "bad group name at byte %zu",
					 (size_t)(p + 4 - py));
				goto fail;
			} else {
				snprintf(err, errlen, "group '(?%c' is not supported",
					 p[2] ? p[2] : ' ');
				goto fail;
			}
			put(&b, "(");
			last = LAST_NOTHING;
			continue;
		}
		if (c == '{') {
			q = quantifier_len(p);
			if (!q) {
				putc_lit(&b, '{');
				last = LAST_ATOM;
				p++;
				continue;
			}
			if (repeat_ok(last, py, p, err, errlen))
				goto fail;
			if (p[1] == ',')
				put(&b, "{0");
			else
				put(&b, "{");
			for (size_t i = 1; i < q; i++) {
				one[0] = p[i];
				put(&b, one);
			}
			p += q;
			if (lazy_or_possessive(&p, py, err, errlen))
				goto fail;
			last = LAST_REPEAT;
			continue;
		}
		if (c == '}') {
			putc_lit(&b, '}');
			last = LAST_ATOM;
			p++;
			continue;
		}
		if ((c == '*' || c == '+' || c == '?') &&
		    repeat_ok(last, py, p, err, errlen))
			goto fail;
		put(&b, one);
		p++;
		switch (c) {
		case '*': case '+': case '?':
			if (lazy_or_possessive(&p, py, err, errlen))
				goto fail;
			last = LAST_REPEAT;
			break;
		case '(': case '|': case '^': case '$':
			last = LAST_NOTHING;
			break;
		default:
			last = LAST_ATOM;
		}
	}
	if (b.oom) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	*out = b.s;
	return 0;
fail:
	free(b.s);
	return -1;
}

int rp_excludes_compile(struct rp_excludes *x, const char *const *pats,
			size_t n, char *err, size_t errlen)
{
	char **eres, why[200];
	size_t bad = n;
	int ret = -1;

	memset(x, 0, sizeof(*x));
	if (!n)
		return 0;
	eres = calloc(n, sizeof(*eres));
	if (!eres) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (rp_regex_translate(pats[i], &eres[i], why, sizeof(why))) {
			snprintf(err, errlen, "exclude '%s': %s", pats[i], why);
			goto out;
		}
	}
	if (rp_nfa_compile(&x->nfa, (const char *const *)eres, n, &bad, why,
			   sizeof(why))) {
		if (bad < n)
			snprintf(err, errlen, "exclude '%s': %s", pats[bad], why);
		else
			snprintf(err, errlen, "excludes: %s", why);
		goto out;
	}
	x->set = true;
	ret = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(eres[i]);
	free(eres);
	return ret;
}

bool rp_excludes_match(const struct rp_excludes *x, const char *path)
{
	/* Out of memory: not excluded, so that the entry is still checked. */
	return x->set && rp_nfa_match(x->nfa, path) > 0;
}

void rp_excludes_free(struct rp_excludes *x)
{
	rp_nfa_free(x->nfa);
	x->nfa = NULL;
	x->set = false;
}
