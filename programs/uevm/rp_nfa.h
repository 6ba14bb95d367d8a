/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The matcher behind a runtime policy's excludes (rp_nfa.c): it reads the
 * POSIX extended regexes rp_regex.c writes (literals, '.', brackets with
 * [:d:], [:s:] and [:w:] for Python's \d \s \w, groups, '|', '*' '+' '?' and counts, '^' '$'),
 * and tells whether one of them matches a prefix of a path, as Keylime's
 * re.match of "(r1)|(r2)|..." does.  Paths and patterns are read as UTF-8,
 * a character at a time; compiling is linear in the patterns and a match
 * costs at most the program's size per character.
 */
#ifndef UEVM_RP_NFA_H
#define UEVM_RP_NFA_H

#include <stdbool.h>
#include <stddef.h>

/* What counted repetitions may add to all the excludes together, beyond
 * the first copy of each: 2 * RP_NFA_COPIES instructions, which is
 * "a{65536}" or "a{0,32768}" (an optional copy takes two). */
#define RP_NFA_COPIES 32768

struct rp_nfa;

/* Compile the N regexes as alternatives of one program.  0, or -1 with
 * ERR and *BAD the index of the regex at fault (N if none is). */
int rp_nfa_compile(struct rp_nfa **out, const char *const *eres, size_t n,
		   size_t *bad, char *err, size_t errlen);
/* 1 if one of the regexes matches a prefix of S, 0 if none does, or
 * -ENOMEM.  Safe to call from several threads at once. */
int rp_nfa_match(struct rp_nfa *nfa, const char *s);
void rp_nfa_free(struct rp_nfa *nfa);

#endif
