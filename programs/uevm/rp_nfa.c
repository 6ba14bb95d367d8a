// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The excludes' matcher (rp_nfa.h): the POSIX-style regexes rp_regex.c
 * writes, compiled to a program of a few instructions per piece and run
 * by keeping the set of live instructions per character of the path (a
 * Thompson NFA: no backtracking, so no path takes longer than the
 * program's size per character).
 *
 * Why not regcomp and regexec: glibc's compiler stores, per state, every
 * state it can reach without reading a character, and recomputes these
 * sets around loops.  Shapes any Keylime policy may carry cost it
 * exponential time ("((((a|)+|)+|)+...": ten levels, over a minute) or
 * quadratic memory ("a{0,30000}": 7 GB).  Here compiling is linear in
 * the program, whose size counted repetitions bound (RP_NFA_COPIES).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rp_nfa.h"
#include "rp_unicode.h"

enum op {
	OP_CHAR,	/* arg: a code point */
	OP_ANY,		/* any character but '\n' (Python's '.') */
	OP_CLASS,	/* arg: index in classes */
	OP_BOL,		/* at the start of the path only */
	OP_EOL,		/* at its end only */
	OP_SPLIT,	/* go on at x and at y */
	OP_JMP,		/* go on at x */
	OP_MATCH,
};

struct inst {
	uint8_t op;
	uint32_t arg, x, y;
};

struct cls {
	bool neg, digit, space, word;	/* Python's \d \s \w */
	struct rp_uclass set;		/* the rest: sorted, merged */
};

/* A parsed regex: the pieces the program is made of. */
enum node_type { N_EMPTY, N_CHAR, N_ANY, N_CLASS, N_BOL, N_EOL, N_CAT, N_ALT, N_REP };

struct node {
	enum node_type type;
	uint32_t arg;			/* N_CHAR, N_CLASS */
	uint32_t min, max;		/* N_REP; max UINT32_MAX: no bound */
	struct node *a, *b;		/* N_CAT, N_ALT: both; N_REP: a */
};

struct rp_nfa {
	struct inst *prog;
	size_t n, cap;
	size_t limit;		/* see rp_nfa_compile */
	size_t copied;		/* instructions counts added, in all */
	struct cls *cls;
	size_t ncls;
	pthread_mutex_t lock;		/* for pool */
	struct state *pool;		/* states no match is using */
};

/* What one match works with, sized to the program: the instructions
 * live before and after a character, a stack, and marks of those seen at
 * this step (mark[pc] == gen). */
struct state {
	uint32_t *cur, *next, *stack, *mark;
	uint32_t gen;
	struct state *more;
};

/* Nesting depth of groups: the parser recurses once per level. */
#define RP_NFA_MAX_DEPTH 1000

struct parser {
	const unsigned char *p;
	struct rp_nfa *nfa;
	unsigned depth;
	const char *err;
};

/* One character of UTF-8 at *P; a byte that does not start a valid
 * sequence is taken alone, as 0xDC00 + byte (Python's surrogateescape). */
static uint32_t utf8_next(const unsigned char **pp)
{
	const unsigned char *p = *pp;
	uint32_t c = p[0], min;
	int len, i;

	if (c < 0x80) {
		*pp = p + 1;
		return c;
	}
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, c &= 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, c &= 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, c &= 0x07, min = 0x10000;
	else
		goto bad;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			goto bad;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		goto bad;
	*pp = p + len;
	return c;
bad:
	*pp = p + 1;
	return 0xdc00 + p[0];
}

static struct node *node_new(struct parser *ps, enum node_type t)
{
	struct node *n = calloc(1, sizeof(*n));

	if (!n)
		ps->err = "out of memory";
	else
		n->type = t;
	return n;
}

static void node_free(struct node *n)
{
	/* Iterative along the right spine: a long sequence is a long
	 * chain of N_CAT. */
	while (n) {
		struct node *next = n->b;

		node_free(n->a);
		free(n);
		n = next;
	}
}

static int range_cmp(const void *a, const void *b)
{
	const struct rp_urange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* "[...]" at ps->p (on the '['), as rp_regex.c writes it. */
static struct node *parse_class(struct parser *ps)
{
	struct rp_nfa *nfa = ps->nfa;
	struct cls c = { 0 }, *nc;
	struct rp_urange *r = NULL, *nr;
	size_t n = 0, m = 0;
	struct node *node;
	bool first = true;

	ps->p++;
	if (*ps->p == '^') {
		c.neg = true;
		ps->p++;
	}
	while (*ps->p && (*ps->p != ']' || first)) {
		uint32_t lo, hi;

		first = false;
		if (!strncmp((const char *)ps->p, "[:d:]", 5) ||
		    !strncmp((const char *)ps->p, "[:s:]", 5) ||
		    !strncmp((const char *)ps->p, "[:w:]", 5)) {
			c.digit |= ps->p[2] == 'd';
			c.space |= ps->p[2] == 's';
			c.word |= ps->p[2] == 'w';
			ps->p += 5;
			continue;
		}
		lo = hi = utf8_next(&ps->p);
		if (ps->p[0] == '-' && ps->p[1] && ps->p[1] != ']') {
			ps->p++;
			hi = utf8_next(&ps->p);
			if (hi < lo) {
				ps->err = "a range's end is before its start";
				goto fail;
			}
		}
		nr = realloc(r, (n + 1) * sizeof(*r));
		if (!nr) {
			ps->err = "out of memory";
			goto fail;
		}
		r = nr;
		r[n++] = (struct rp_urange){ lo, hi };
	}
	if (*ps->p != ']') {
		ps->err = "unterminated character class";
		goto fail;
	}
	ps->p++;
	/* Sorted and merged, for a binary search per character: a class
	 * of a thousand characters costs ten steps, not a thousand. */
	if (n)
		qsort(r, n, sizeof(*r), range_cmp);
	for (size_t i = 0; i < n; i++) {
		if (m && r[i].lo <= r[m - 1].hi + 1) {
			if (r[i].hi > r[m - 1].hi)
				r[m - 1].hi = r[i].hi;
		} else {
			r[m++] = r[i];
		}
	}
	c.set.r = r;
	c.set.n = m;
	nc = realloc(nfa->cls, (nfa->ncls + 1) * sizeof(*nfa->cls));
	if (!nc) {
		ps->err = "out of memory";
		goto fail;
	}
	nfa->cls = nc;
	node = node_new(ps, N_CLASS);
	if (!node)
		goto fail;
	node->arg = (uint32_t)nfa->ncls;
	nfa->cls[nfa->ncls++] = c;
	return node;
fail:
	free(r);
	return NULL;
}

static struct node *parse_alt(struct parser *ps);

static struct node *parse_atom(struct parser *ps)
{
	struct node *n;

	switch (*ps->p) {
	case '(':
		if (++ps->depth > RP_NFA_MAX_DEPTH) {
			ps->err = "groups nest too deep";
			return NULL;
		}
		ps->p++;
		n = parse_alt(ps);
		if (!n)
			return NULL;
		if (*ps->p != ')') {
			node_free(n);
			ps->err = "unbalanced parenthesis";
			return NULL;
		}
		ps->p++;
		ps->depth--;
		return n;
	case '[':
		return parse_class(ps);
	case '.':
		ps->p++;
		return node_new(ps, N_ANY);
	case '^':
		ps->p++;
		return node_new(ps, N_BOL);
	case '$':
		ps->p++;
		return node_new(ps, N_EOL);
	case '\\':
		ps->p++;
		if (!*ps->p) {
			ps->err = "trailing backslash";
			return NULL;
		}
		break;
	case '*': case '+': case '?': case '{':
		ps->err = "nothing to repeat";
		return NULL;
	}
	n = node_new(ps, N_CHAR);
	if (n)
		n->arg = utf8_next(&ps->p);
	return n;
}

/* "{m}", "{m,}", "{m,n}" at ps->p, past the '{'. */
static int parse_count(struct parser *ps, uint32_t *min, uint32_t *max)
{
	char *end;
	unsigned long m, n;

	errno = 0;
	m = strtoul((const char *)ps->p, &end, 10);
	n = m;
	if (*end == ',') {
		if (end[1] == '}')
			n = UINT32_MAX, end++;
		else
			n = strtoul(end + 1, &end, 10);
	}
	if (*end != '}' || errno || m > 2 * RP_NFA_COPIES ||
	    (n != UINT32_MAX && n > 2 * RP_NFA_COPIES)) {
		ps->err = *end != '}' ? "unterminated count" :
			  "a count over 65536";
		return -1;
	}
	if (n < m) {
		ps->err = "a count's maximum is below its minimum";
		return -1;
	}
	ps->p = (const unsigned char *)end + 1;
	*min = (uint32_t)m;
	*max = (uint32_t)n;
	return 0;
}

static struct node *parse_seq(struct parser *ps)
{
	struct node *head = NULL, **tail = &head;

	while (*ps->p && *ps->p != '|' && *ps->p != ')') {
		struct node *a = parse_atom(ps), *r, *cat;

		if (!a)
			goto fail;
		while (*ps->p == '*' || *ps->p == '+' || *ps->p == '?' ||
		       *ps->p == '{') {
			r = node_new(ps, N_REP);
			if (!r) {
				node_free(a);
				goto fail;
			}
			r->a = a;
			a = r;
			switch (*ps->p++) {
			case '*': r->min = 0; r->max = UINT32_MAX; break;
			case '+': r->min = 1; r->max = UINT32_MAX; break;
			case '?': r->min = 0; r->max = 1; break;
			default:
				if (parse_count(ps, &r->min, &r->max)) {
					node_free(a);
					goto fail;
				}
			}
		}
		cat = node_new(ps, N_CAT);
		if (!cat) {
			node_free(a);
			goto fail;
		}
		cat->a = a;
		*tail = cat;
		tail = &cat->b;
	}
	return head ? head : node_new(ps, N_EMPTY);
fail:
	node_free(head);
	return NULL;
}

static struct node *parse_alt(struct parser *ps)
{
	struct node *head = parse_seq(ps), **tail = &head;

	while (head && *ps->p == '|') {
		struct node *alt = node_new(ps, N_ALT), *s;

		ps->p++;
		s = alt ? parse_seq(ps) : NULL;
		if (!s) {
			free(alt);
			node_free(head);
			return NULL;
		}
		/* Build (first | (second | ...)) along the right spine. */
		alt->a = *tail;
		alt->b = s;
		*tail = alt;
		tail = &alt->b;
	}
	return head;
}

/* ---- code generation ---------------------------------------------- */

static long emit(struct rp_nfa *nfa, enum op op, uint32_t arg, const char **err)
{
	if (nfa->n == nfa->limit) {
		*err = "counted repetitions too large (in all the excludes "
		       "together, at most a{65536} or a{0,32768})";
		return -1;
	}
	if (nfa->n == nfa->cap) {
		size_t nc = nfa->cap ? nfa->cap * 2 : 64;
		struct inst *np = realloc(nfa->prog, nc * sizeof(*np));

		if (!np) {
			*err = "out of memory";
			return -1;
		}
		nfa->prog = np;
		nfa->cap = nc;
	}
	nfa->prog[nfa->n] = (struct inst){ .op = (uint8_t)op, .arg = arg };
	return (long)nfa->n++;
}

static int gen(struct rp_nfa *nfa, const struct node *n, const char **err);

/* Jumps whose target is the end of what is being written, not known
 * while writing it: each one's y (or x) holds the next one's index + 1,
 * CHAIN the last one's.  Point them all at the next instruction. */
static void resolve(struct rp_nfa *nfa, uint32_t chain, bool via_y)
{
	while (chain) {
		struct inst *in = &nfa->prog[chain - 1];
		uint32_t *to = via_y ? &in->y : &in->x;

		chain = *to;
		*to = (uint32_t)nfa->n;
	}
}

/* One copy of X, for a count.  For the first one, its size goes to
 * r->one and the copies its own counts made to r->inner (the other
 * copies' are in what the count adds beyond the first). */
struct rep {
	size_t start, one, copied, inner;
};

static int gen_copy(struct rp_nfa *nfa, const struct node *x, struct rep *r,
		    const char **err)
{
	size_t at = nfa->n;

	if (gen(nfa, x, err))
		return -1;
	if (r->one == SIZE_MAX) {
		r->one = nfa->n - at;
		r->inner = nfa->copied - r->copied;
	}
	return 0;
}

/* X{min,max}: min copies, then max - min optional ones (each skipped
 * copy skips the rest), or X looping for no bound.  Past the first copy
 * and two instructions, what a count writes is copies, and the copies of
 * all the excludes together are bounded, so that a long policy does not
 * buy more of them. */
static int gen_rep(struct rp_nfa *nfa, const struct node *n, const char **err)
{
	struct rep r = { nfa->n, SIZE_MAX, nfa->copied, 0 };
	size_t extra;
	uint32_t fixed, chain = 0;	/* chain: the optional copies' SPLITs */
	long split, loop;

	/* The copies every match needs; for "x{m,}" with m > 0 the last
	 * of them loops back on itself below (one more copy for an "x*"
	 * would double the program at each level of "((x+)+)+"). */
	fixed = n->max == UINT32_MAX && n->min ? n->min - 1 : n->min;
	for (uint32_t i = 0; i < fixed; i++)
		if (gen_copy(nfa, n->a, &r, err))
			return -1;
	if (n->max == UINT32_MAX && n->min) {
		loop = (long)nfa->n;
		if (gen_copy(nfa, n->a, &r, err) ||
		    (split = emit(nfa, OP_SPLIT, 0, err)) < 0)
			return -1;
		nfa->prog[split].x = (uint32_t)loop;
		nfa->prog[split].y = (uint32_t)split + 1;
	} else if (n->max == UINT32_MAX) {
		loop = emit(nfa, OP_SPLIT, 0, err);
		if (loop < 0 || gen_copy(nfa, n->a, &r, err) ||
		    emit(nfa, OP_JMP, 0, err) < 0)
			return -1;
		nfa->prog[nfa->n - 1].x = (uint32_t)loop;
		nfa->prog[loop].x = (uint32_t)loop + 1;
		nfa->prog[loop].y = (uint32_t)nfa->n;
	} else {
		for (uint32_t i = n->min; i < n->max; i++) {
			split = emit(nfa, OP_SPLIT, 0, err);
			if (split < 0)
				return -1;
			nfa->prog[split].x = (uint32_t)split + 1;
			nfa->prog[split].y = chain;
			chain = (uint32_t)split + 1;
			if (gen_copy(nfa, n->a, &r, err))
				return -1;
		}
		/* Skipping a copy skips the rest. */
		resolve(nfa, chain, true);
	}
	extra = nfa->n - r.start - (r.one == SIZE_MAX ? 0 : r.one);
	nfa->copied = r.copied + r.inner;
	if (extra > 2) {
		nfa->copied += extra;
		if (nfa->copied > 2 * (size_t)RP_NFA_COPIES) {
			*err = "counted repetitions too large (in all the "
			       "excludes together, at most a{65536} or a{0,32768})";
			return -1;
		}
	}
	return 0;
}

/* (a | (b | (c ...))): a SPLIT before each branch but the last, a JMP
 * after each to the end. */
static int gen_alt(struct rp_nfa *nfa, const struct node *n, const char **err)
{
	uint32_t chain = 0;
	long split, jmp;

	for (; n->type == N_ALT; n = n->b) {
		split = emit(nfa, OP_SPLIT, 0, err);
		if (split < 0 || gen(nfa, n->a, err))
			return -1;
		jmp = emit(nfa, OP_JMP, 0, err);
		if (jmp < 0)
			return -1;
		nfa->prog[jmp].x = chain;
		chain = (uint32_t)jmp + 1;
		nfa->prog[split].x = (uint32_t)split + 1;
		nfa->prog[split].y = (uint32_t)nfa->n;
	}
	if (gen(nfa, n, err))
		return -1;
	resolve(nfa, chain, false);
	return 0;
}

static int gen(struct rp_nfa *nfa, const struct node *n, const char **err)
{
	/* A sequence is a right spine of N_CAT: walked in a loop, not by
	 * recursion, since a long pattern is a long spine. */
	for (; n && n->type == N_CAT; n = n->b)
		if (gen(nfa, n->a, err))
			return -1;
	if (!n)
		return 0;
	switch (n->type) {
	case N_CHAR:
		return emit(nfa, OP_CHAR, n->arg, err) < 0 ? -1 : 0;
	case N_ANY:
		return emit(nfa, OP_ANY, 0, err) < 0 ? -1 : 0;
	case N_CLASS:
		return emit(nfa, OP_CLASS, n->arg, err) < 0 ? -1 : 0;
	case N_BOL:
		return emit(nfa, OP_BOL, 0, err) < 0 ? -1 : 0;
	case N_EOL:
		return emit(nfa, OP_EOL, 0, err) < 0 ? -1 : 0;
	case N_REP:
		return gen_rep(nfa, n, err);
	case N_ALT:
		return gen_alt(nfa, n, err);
	default:	/* N_EMPTY */
		return 0;
	}
}

/* ---- the API ------------------------------------------------------- */

static void state_free(struct state *st)
{
	if (!st)
		return;
	free(st->cur);
	free(st->next);
	free(st->stack);
	free(st->mark);
	free(st);
}

void rp_nfa_free(struct rp_nfa *nfa)
{
	if (!nfa)
		return;
	for (size_t i = 0; i < nfa->ncls; i++)
		free((void *)nfa->cls[i].set.r);
	while (nfa->pool) {
		struct state *st = nfa->pool;

		nfa->pool = st->more;
		state_free(st);
	}
	pthread_mutex_destroy(&nfa->lock);
	free(nfa->cls);
	free(nfa->prog);
	free(nfa);
}

/* Parse one regex into its node tree; NULL with *ERR. */
static struct node *parse(struct rp_nfa *nfa, const char *ere, const char **err)
{
	struct parser ps = { .p = (const unsigned char *)ere, .nfa = nfa };
	struct node *n = parse_alt(&ps);

	if (n && *ps.p) {	/* only an unmatched ')' stops the parse */
		node_free(n);
		n = NULL;
		ps.err = "unbalanced parenthesis";
	}
	*err = ps.err;
	return n;
}

int rp_nfa_compile(struct rp_nfa **out, const char *const *eres, size_t n,
		   size_t *bad, char *err, size_t errlen)
{
	struct rp_nfa *nfa = calloc(1, sizeof(*nfa));
	const char *why = "out of memory";
	long split = -1;

	*bad = n;
	if (!nfa)
		goto fail;
	pthread_mutex_init(&nfa->lock, NULL);
	/* Two instructions per character written at most, plus the
	 * copies of counted repetitions. */
	nfa->limit = 2 * RP_NFA_COPIES + 2;
	for (size_t i = 0; i < n; i++)
		nfa->limit += 2 * strlen(eres[i]) + 2;
	/* "(r1)|(r2)|...": a SPLIT before every alternative but the last;
	 * each ends in its own MATCH. */
	for (size_t i = 0; i < n; i++) {
		struct node *t;

		*bad = i;
		if (i + 1 < n && (split = emit(nfa, OP_SPLIT, 0, &why)) < 0)
			goto fail;
		t = parse(nfa, eres[i], &why);
		if (!t)
			goto fail;
		if (gen(nfa, t, &why) || emit(nfa, OP_MATCH, 0, &why) < 0) {
			node_free(t);
			goto fail;
		}
		node_free(t);
		if (i + 1 < n) {
			nfa->prog[split].x = (uint32_t)split + 1;
			nfa->prog[split].y = (uint32_t)nfa->n;
		}
	}
	*bad = n;
	if (!n && emit(nfa, OP_JMP, 0, &why) < 0)	/* matches nothing */
		goto fail;
	*out = nfa;
	return 0;
fail:
	snprintf(err, errlen, "%s", why);
	rp_nfa_free(nfa);
	return -1;
}

static bool class_has(const struct cls *c, uint32_t ch)
{
	bool in = rp_uclass_has(&c->set, ch) ||
		  (c->digit && rp_uclass_has(&rp_digit, ch)) ||
		  (c->space && rp_uclass_has(&rp_space, ch)) ||
		  (c->word && rp_uclass_has(&rp_word, ch));

	return in != c->neg;
}

/* Add PC and all it reaches without reading to LIST (marked with the
 * step's gen); true if one of them is MATCH. */
static bool add(const struct rp_nfa *nfa, struct state *st, uint32_t *list,
		size_t *len, uint32_t pc, bool at_start, bool at_end)
{
	size_t sp = 0;

	if (st->mark[pc] == st->gen)
		return false;
	st->mark[pc] = st->gen;
	st->stack[sp++] = pc;
	while (sp) {
		uint32_t at = st->stack[--sp], to[2];
		const struct inst *in = &nfa->prog[at];
		int nto = 0;

		switch (in->op) {
		case OP_MATCH:
			return true;
		case OP_JMP:
			to[nto++] = in->x;
			break;
		case OP_SPLIT:
			to[nto++] = in->x;
			to[nto++] = in->y;
			break;
		case OP_BOL:
			if (at_start)
				to[nto++] = at + 1;
			break;
		case OP_EOL:
			if (at_end)
				to[nto++] = at + 1;
			break;
		default:	/* reads a character: live for the next one */
			list[(*len)++] = at;
			break;
		}
		for (int i = 0; i < nto; i++) {
			if (st->mark[to[i]] == st->gen)
				continue;
			st->mark[to[i]] = st->gen;
			st->stack[sp++] = to[i];
		}
	}
	return false;
}

static void next_gen(const struct rp_nfa *nfa, struct state *st)
{
	if (++st->gen == 0) {	/* wrapped: forget every old mark */
		memset(st->mark, 0, nfa->n * sizeof(*st->mark));
		st->gen = 1;
	}
}

static struct state *state_get(struct rp_nfa *nfa)
{
	struct state *st;

	pthread_mutex_lock(&nfa->lock);
	st = nfa->pool;
	if (st)
		nfa->pool = st->more;
	pthread_mutex_unlock(&nfa->lock);
	if (st)
		return st;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->cur = calloc(nfa->n, sizeof(*st->cur));
	st->next = calloc(nfa->n, sizeof(*st->next));
	st->stack = calloc(nfa->n, sizeof(*st->stack));
	st->mark = calloc(nfa->n, sizeof(*st->mark));
	if (!st->cur || !st->next || !st->stack || !st->mark) {
		state_free(st);
		return NULL;
	}
	return st;
}

static void state_put(struct rp_nfa *nfa, struct state *st)
{
	pthread_mutex_lock(&nfa->lock);
	st->more = nfa->pool;
	nfa->pool = st;
	pthread_mutex_unlock(&nfa->lock);
}

static bool run(const struct rp_nfa *nfa, struct state *st, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t ncur = 0, nnext;
	uint32_t *t;

	next_gen(nfa, st);
	if (add(nfa, st, st->cur, &ncur, 0, true, !*p))
		return true;
	while (*p && ncur) {
		uint32_t ch = utf8_next(&p);

		next_gen(nfa, st);
		nnext = 0;
		for (size_t i = 0; i < ncur; i++) {
			const struct inst *in = &nfa->prog[st->cur[i]];
			bool ok;

			switch (in->op) {
			case OP_CHAR:
				ok = in->arg == ch;
				break;
			case OP_ANY:
				ok = ch != '\n';
				break;
			case OP_CLASS:
				ok = class_has(&nfa->cls[in->arg], ch);
				break;
			default:
				ok = false;
			}
			if (ok && add(nfa, st, st->next, &nnext, st->cur[i] + 1,
				      false, !*p))
				return true;
		}
		t = st->cur;
		st->cur = st->next;
		st->next = t;
		ncur = nnext;
	}
	return false;
}

int rp_nfa_match(struct rp_nfa *nfa, const char *s)
{
	struct state *st = state_get(nfa);
	bool m;

	if (!st)
		return -ENOMEM;
	m = run(nfa, st, s);
	state_put(nfa, st);
	return m;
}
