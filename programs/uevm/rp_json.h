/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small JSON reader (RFC 8259) for runtime policies: the whole document
 * becomes a tree of values.  Strings are UTF-8 and NUL-terminated (a
 * \u0000 in one is refused: no policy field can hold it); numbers keep
 * whether they were written as integers; a key given twice keeps its last
 * value, as Python's json module does.  Input is untrusted: nesting is
 * limited and every error names the line and column.
 */
#ifndef UEVM_RP_JSON_H
#define UEVM_RP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype type;
	bool b;
	bool is_int;		/* J_NUM written without fraction or exponent */
	long long i;		/* is_int: its value (when it fits) */
	bool int_overflow;	/* is_int but beyond long long */
	char *s;		/* J_STR */
	size_t n;		/* J_ARR, J_OBJ: number of items */
	struct jval **items;	/* J_ARR, J_OBJ values */
	char **keys;		/* J_OBJ keys */
};

#define JSON_MAX_DEPTH 64

/* Parse BUF (LEN bytes).  On error returns NULL and writes "line L,
 * column C: cause" into ERR. */
struct jval *json_parse(const uint8_t *buf, size_t len, char *err,
			size_t errlen);
void json_free(struct jval *v);
/* The value of KEY in object O (the last one given), or NULL. */
const struct jval *json_get(const struct jval *o, const char *key);
const char *json_type_name(enum jtype t);

#endif
