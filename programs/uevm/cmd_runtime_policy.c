// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevm runtime-policy: make Keylime runtime policies (create, rp_create.c)
 * and evaluate a measurement list against one as Keylime's verifier does
 * (check, rp_check.c).  The policy format: rp_policy.h.
 */
#include <string.h>
#include "prog.h"
#include "rp_cmd.h"

/* The field named ID of E, or NULL. */
static const struct ima_field_data *field(const struct ima_template_entry *e,
					  const char *id)
{
	for (int i = 0; i < ima_entry_num_fields(e); i++)
		if (!strcmp(ima_entry_field_id(e, i), id))
			return ima_entry_field(e, i);
	return NULL;
}

/* "<algo>:" NUL digest (d-ng) into R. */
static int read_dng(const struct ima_field_data *d, struct rp_entry *r,
		    char *why, size_t whylen)
{
	const uint8_t *colon = d ? memchr(d->data, ':', d->len) : NULL;
	size_t plen;

	if (!colon || (size_t)(colon - d->data) + 2 > d->len ||
	    colon[1] != '\0' || (size_t)(colon - d->data) >= sizeof(r->algo)) {
		snprintf(why, whylen, "digest field without '<algo>:'");
		return -1;
	}
	plen = (size_t)(colon - d->data);
	memcpy(r->algo, d->data, plen);
	r->algo[plen] = '\0';
	r->digest = colon + 2;
	r->dlen = d->len - plen - 2;
	return 0;
}

int rp_entry_read(const struct ima_template_entry *e, struct rp_entry *r,
		  char *why, size_t whylen)
{
	const struct ima_field_data *d, *n, *x = NULL;
	bool legacy;

	memset(r, 0, sizeof(*r));
	r->tmpl = ima_entry_template_name(e);
	legacy = !strcmp(r->tmpl, "ima");
	if (!legacy && strcmp(r->tmpl, "ima-ng") && strcmp(r->tmpl, "ima-sig") &&
	    strcmp(r->tmpl, "ima-buf")) {
		snprintf(why, whylen, "template '%s': Keylime reads ima, ima-ng, "
			 "ima-sig and ima-buf only", r->tmpl);
		return -1;
	}
	d = field(e, legacy ? "d" : "d-ng");
	n = field(e, legacy ? "n" : "n-ng");
	if (!d || !n || !n->len || n->data[n->len - 1] != '\0') {
		snprintf(why, whylen, "template '%s' without its fields", r->tmpl);
		return -1;
	}
	r->name = (const char *)n->data;
	if (legacy) {
		/* Keylime names a bare digest by its length. */
		if (d->len != 20 && d->len != 16) {
			snprintf(why, whylen, "'ima' digest of %u bytes", d->len);
			return -1;
		}
		strcpy(r->algo, d->len == 20 ? "sha1" : "md5");
		r->digest = d->data;
		r->dlen = d->len;
	} else if (read_dng(d, r, why, whylen)) {
		return -1;
	}
	if (r->dlen > UEVM_MAX_DIGEST_SIZE) {
		snprintf(why, whylen, "digest of %zu bytes", r->dlen);
		return -1;
	}
	hex_encode(r->digest, r->dlen, r->hex);
	if (!strcmp(r->tmpl, "ima-sig"))
		x = field(e, "sig");
	if (x && x->len) {
		r->sig = x->data;
		r->siglen = x->len;
	}
	if (!strcmp(r->tmpl, "ima-buf") && (x = field(e, "buf"))) {
		r->buf = x->data;
		r->buflen = x->len;
	}
	return 0;
}

int rp_list_bank(const uint8_t *buf, size_t len)
{
	const uint8_t *sp = len > 3 ? memchr(buf + 3, ' ', len - 3) : NULL;

	switch (sp ? sp - (buf + 3) : 0) {
	case 40: return UEVM_HASH_SHA1;
	case 64: return UEVM_HASH_SHA256;
	case 96: return UEVM_HASH_SHA384;
	case 128: return UEVM_HASH_SHA512;
	}
	return -1;
}

int cmd_runtime_policy(const struct command *cmd, int argc, char **argv)
{
	if (argc < 2) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return help_show(cmd->name);
	if (!strcmp(argv[1], "create"))
		return rp_create("runtime-policy create", argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return rp_check("runtime-policy check", argc - 1, argv + 1);
	error_msg("runtime-policy: unknown subcommand '%s' (create, check)", argv[1]);
	usage(cmd, stderr);
	return EXIT_USAGE;
}
