/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `excludes` of a runtime policy: Python regular expressions that
 * Keylime joins as "(r1)|(r2)|..." and tries with re.match, i.e. anchored
 * at the start of the path and not at its end.  Here each one is
 * translated to a POSIX extended regex, which covers what exclude lists
 * use: literals, '.', classes (with \d \s \w), groups (also (?:...) and
 * (?P<name>...)), alternation, every quantifier (lazy ones too: laziness
 * does not change whether a match exists), ^ $ \A \Z.  Lookarounds,
 * backreferences, \b, inline flags and possessive quantifiers are refused
 * with a message rather than matched differently, and so is what Python
 * refuses ("nothing to repeat", "multiple repeat").  The regexes are run by rp_nfa.c, not by
 * regcomp (see there why), on paths read as UTF-8 text, so that '.' and
 * counts take a character and \d \s \w are Python's Unicode classes, as
 * on the str Keylime matches.
 */
#ifndef UEVM_RP_REGEX_H
#define UEVM_RP_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include "rp_nfa.h"

struct rp_excludes {
	struct rp_nfa *nfa;
	bool set;		/* false: no excludes, nothing matches */
};

/* Translate one Python regex; *OUT is malloc'ed.  0, or -1 with the
 * reason in ERR. */
int rp_regex_translate(const char *py, char **out, char *err, size_t errlen);
/* Compile the N patterns as Keylime combines them.  0, or -1 with ERR
 * naming the pattern at fault. */
int rp_excludes_compile(struct rp_excludes *x, const char *const *pats,
			size_t n, char *err, size_t errlen);
bool rp_excludes_match(const struct rp_excludes *x, const char *path);
void rp_excludes_free(struct rp_excludes *x);

#endif
