/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Pieces shared by `uevm runtime-policy create` and `check`. */
#ifndef UEVM_RP_CMD_H
#define UEVM_RP_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ima.h"

#define RP_MAX_LIST_SIZE (1024u << 20)

/* What Keylime reads of a list entry (ima, ima-ng, ima-sig, ima-buf). */
struct rp_entry {
	const char *tmpl;
	const char *name;		/* path, keyring or buffer name */
	char algo[32];			/* the file digest's algorithm */
	const uint8_t *digest;
	size_t dlen;
	char hex[2 * UEVM_MAX_DIGEST_SIZE + 1];
	const uint8_t *sig;		/* ima-sig: the signature, or NULL */
	size_t siglen;
	const uint8_t *buf;		/* ima-buf: the buffer */
	size_t buflen;
};

/* Fill R from E; -1 (WHY set) for a template Keylime has no parser for
 * or fields it cannot read. */
int rp_entry_read(const struct ima_template_entry *e, struct rp_entry *r,
		  char *why, size_t whylen);
/* The template digest bank of the list in BUF, from its first line's
 * digest length; -1 if that says none. */
int rp_list_bank(const uint8_t *buf, size_t len);

int rp_create(const char *name, int argc, char **argv);
int rp_check(const char *name, int argc, char **argv);

#endif
