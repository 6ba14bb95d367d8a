// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevm runtime-policy check POLICY LIST: evaluate an ASCII measurement
 * list against a runtime policy the way Keylime's verifier does
 * (keylime/ima/ima.py, ast.py), entry by entry:
 *  - a line Keylime cannot parse fails ("entry"), as does a template
 *    other than ima, ima-ng, ima-sig and ima-buf; ima-sig and ima-buf
 *    fields are split as ast.py does (keylime_fields());
 *  - an entry for a PCR other than 10 fails ("ima_pcr");
 *  - a violation (template digest of zeros) is not checked (Keylime's
 *    default, ignore_tomtou_errors = False);
 *  - the template digest, recomputed with ima.log_hash_alg, must match
 *    ("ima_hash");
 *  - ima, ima-ng: a path matching an exclude passes; else its digest must
 *    be in digests[path] ("not_in_allowlist", "runtime_policy_hash");
 *  - ima-sig: excluded, or a signature that verifies with a key from
 *    verification-keys or one learned from the list, passes; else as
 *    ima-ng;
 *  - ima-buf: a buffer holding a key is checked against keyrings[name]
 *    unless ima.ignored_keyrings has the name or "*", and once accepted
 *    its key verifies later signatures; other buffers against
 *    ima-buf[name].
 * Keylime adds the boot aggregates it computes from the quote's boot log
 * to digests["boot_aggregate"]: --boot-aggregate does that here.  The PCR
 * replay is `uevm measurements verify`'s business.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "prog.h"
#include "rp_cmd.h"
#include "rp_policy.h"
#include "rp_regex.h"

struct failure {
	size_t line;
	char *name;		/* NULL: the line had none */
	const char *reason;	/* "not in allowlist", "digest mismatch", ... */
	const char *event;	/* Keylime's event id */
	char *detail;
};

struct check {
	struct rp_policy pol;
	struct rp_excludes ex;
	struct rp_keyring learned;	/* keys from ima-buf entries */
	const char **boot_aggs;
	size_t nboot;
	struct failure *f;
	size_t nf;
	unsigned long entries, passed, excluded, skipped;
	bool verbose, json;
	size_t lineno;
	bool oom;
	bool sig_dropped;	/* the line's signature field is none to Keylime */
};

static void print_failure(const struct failure *f)
{
	printf("FAIL line %zu: ", f->line);
	if (f->name) {
		fput_path(stdout, f->name);
		fputs(": ", stdout);
	}
	printf("%s (%s): ", f->reason, f->event);
	fput_text(stdout, f->detail ? f->detail : "");
	putchar('\n');
}

static void add_failure(struct check *k, const char *name, const char *reason,
			const char *event, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void add_failure(struct check *k, const char *name, const char *reason,
			const char *event, const char *fmt, ...)
{
	struct failure *nf = realloc(k->f, (k->nf + 1) * sizeof(*nf));
	va_list ap;

	if (!nf) {
		k->oom = true;
		return;
	}
	k->f = nf;
	nf += k->nf++;
	nf->line = k->lineno;
	nf->name = name ? strdup(name) : NULL;
	nf->reason = reason;
	nf->event = event;
	va_start(ap, fmt);
	if (vasprintf(&nf->detail, fmt, ap) < 0)
		nf->detail = NULL;
	va_end(ap);
	/* Text: in list order, among -v's lines. */
	if (!k->json)
		print_failure(nf);
}

static void note_pass(struct check *k, const struct rp_entry *r, const char *how)
{
	k->passed++;
	if (!k->verbose || k->json)
		return;
	printf("ok line %zu: ", k->lineno);
	fput_path(stdout, r->name);
	printf(" (%s)\n", how);
}

/* Keylime's _validate_ima_ng over MAP ("digests", "keyrings", "ima-buf");
 * SIGWHY says why a signature did not do. */
static void check_digest(struct check *k, const struct rp_entry *r,
			 const struct rp_map *map, const char *mapname,
			 const char *sigwhy)
{
	const struct jval *list;

	if (rp_excludes_match(&k->ex, r->name)) {
		k->excluded++;
		note_pass(k, r, "excluded");
		return;
	}
	list = rp_map_get(map, r->name);
	if (!list && map == &k->pol.digests && !strcmp(r->name, IMA_BOOT_AGGREGATE_NAME)) {
		for (size_t i = 0; i < k->nboot; i++)
			if (!strcmp(k->boot_aggs[i], r->hex)) {
				note_pass(k, r, "boot aggregate");
				return;
			}
	}
	if (!list) {
		add_failure(k, r->name, "not in allowlist", "not_in_allowlist",
			    "%s%sthe policy's %s have no entry for it", sigwhy ? sigwhy : "",
			    sigwhy ? "; " : "", mapname);
		return;
	}
	if (rp_list_has(list, r->hex)) {
		note_pass(k, r, "digest");
		return;
	}
	if (!strcmp(r->name, IMA_BOOT_AGGREGATE_NAME))
		for (size_t i = 0; i < k->nboot; i++)
			if (!strcmp(k->boot_aggs[i], r->hex)) {
				note_pass(k, r, "boot aggregate");
				return;
			}
	add_failure(k, r->name, "digest mismatch", "runtime_policy_hash",
		    "%s%s%s:%s is not among its %zu digest(s) in the policy's %s", sigwhy ? sigwhy : "",
		    sigwhy ? "; " : "", r->algo, r->hex, list->n, mapname);
}

static bool keyring_ignored(const struct check *k, const char *name)
{
	for (size_t i = 0; i < k->pol.nignored; i++)
		if (!strcmp(k->pol.ignored_keyrings[i], "*") ||
		    !strcmp(k->pol.ignored_keyrings[i], name))
			return true;
	return false;
}

static void check_buf(struct check *k, const struct rp_entry *r)
{
	struct rp_keyring probe = { 0 };
	unsigned long before = k->nf;
	char why[256];
	int key = rp_keyring_add_buf(&probe, r->buf, r->buflen, why, sizeof(why));

	if (key < 0) {
		add_failure(k, r->name, "invalid key", "invalid_key", "%s", why);
	} else if (key > 0) {
		check_digest(k, r, &k->pol.ima_buf, "ima-buf", NULL);
	} else if (keyring_ignored(k, r->name)) {
		note_pass(k, r, "ignored keyring");
	} else {
		check_digest(k, r, &k->pol.keyrings, "keyrings", NULL);
		/* Learned once accepted: later signatures may use it. */
		if (k->nf == before &&
		    rp_keyring_add_buf(&k->learned, r->buf, r->buflen, why, sizeof(why)))
			k->oom = true;
	}
	rp_keyring_free(&probe);
}

static void check_entry(struct check *k, const struct rp_entry *r)
{
	const struct rp_keyring *rings[2] = { &k->pol.keys, &k->learned };
	char why[256];

	if (!strcmp(r->tmpl, "ima-buf")) {
		check_buf(k, r);
		return;
	}
	if (r->sig) {
		if (rp_excludes_match(&k->ex, r->name)) {
			k->excluded++;
			note_pass(k, r, "excluded");
			return;
		}
		if (!rp_sig_verify(rings, 2, r->sig, r->siglen, r->digest, r->dlen,
				   r->algo, why, sizeof(why))) {
			note_pass(k, r, "signature");
			return;
		}
		/* Keylime then tries the digests. */
		check_digest(k, r, &k->pol.digests, "digests", why);
		return;
	}
	check_digest(k, r, &k->pol.digests, "digests", NULL);
}

/* "line 1: cause" from the parser, without its line number. */
static const char *parser_cause(void)
{
	const char *m = uevm_last_error();

	if (!strncmp(m, "line 1: ", 8))
		return m + 8;
	return *m ? m : "malformed";
}

/* Keylime parses a malformed ima-sig signature as none, which makes the
 * template digest it recomputes differ. */
static bool sig_malformed(const struct rp_entry *r)
{
	return r->sig && (r->siglen < UEVM_SIG_HDR_SIZE ||
			  ((size_t)r->sig[7] << 8 | r->sig[8]) + UEVM_SIG_HDR_SIZE != r->siglen);
}

static int line_fn(const struct ima_template_entry *e, size_t index,
		   bool digest_ok, void *arg)
{
	struct check *k = arg;
	struct rp_entry r;
	char why[256];

	(void)index;
	if (rp_entry_read(e, &r, why, sizeof(why))) {
		add_failure(k, NULL, "not parsable", "entry", "%s", why);
		return 0;
	}
	if (ima_entry_pcr(e) != IMA_ML_DEFAULT_PCR)
		add_failure(k, r.name, "wrong PCR", "ima_pcr",
			    "PCR %d, Keylime attests PCR %d", ima_entry_pcr(e),
			    IMA_ML_DEFAULT_PCR);
	if (ima_entry_is_violation(e)) {
		k->skipped++;
		return 0;
	}
	if (!digest_ok || sig_malformed(&r)) {
		add_failure(k, r.name, "template hash mismatch", "ima_hash",
			    "the %s template digest does not match the entry%s",
			    uevm_hash_algo_name(k->pol.log_hash_algo),
			    digest_ok ? " (a malformed signature)" :
			    k->sig_dropped ? " as Keylime reads it (its fields split at "
			    "single spaces, no valid signature after the name)" : "");
		return 0;
	}
	check_entry(k, &r);
	return 0;
}

static int parse_only(const struct ima_template_entry *e, size_t index,
		      bool digest_ok, void *arg)
{
	(void)e;
	(void)index;
	(void)digest_ok;
	(void)arg;
	return 0;
}

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Python's bytes.fromhex: pairs of hex digits, ASCII whitespace allowed
 * between pairs.  The byte count, or -1. */
static long py_fromhex(const uint8_t *p, size_t len, uint8_t *out)
{
	const uint8_t *end = p + len;
	long n = 0;

	for (;;) {
		int hi, lo;

		while (p < end && strchr(" \t\n\r\v\f", *p) && *p)
			p++;
		if (p == end)
			return n;
		if (end - p < 2)
			return -1;
		hi = hexval(p[0]);
		lo = hexval(p[1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
		p += 2;
	}
}

/* Where the next ' ' of [P, END) is, or NULL. */
static const uint8_t *next_space(const uint8_t *p, const uint8_t *end)
{
	return memchr(p, ' ', (size_t)(end - p));
}

/*
 * Keylime's reading of an ima-sig or ima-buf line (keylime/ima/ast.py):
 * the fields after the template are split at the first two single
 * spaces into digest, name and the rest, so a name holding a space ends
 * at it.  The rest is hex (ima-buf: else the line does not parse;
 * ima-sig: else, or when its signature header does not add up, Keylime
 * takes no signature).  Writes into *OUT the line with those fields as
 * Keylime has them, so that the list parser recomputes the template
 * digest Keylime does.  0 (nothing to do: *OUT NULL), 1 (*OUT, *OUTLEN
 * set), -1 (unparsable, WHY set).  ima and ima-ng take the whole rest as
 * the name, as the list parser does.
 */
static int keylime_fields(const uint8_t *line, size_t len, uint8_t **out,
			  size_t *outlen, bool *sig_dropped, char *why,
			  size_t whylen)
{
	const uint8_t *end = line + len, *t = line, *tmpl, *tail;
	bool sig;
	uint8_t *bin, *o;
	long n;

	*out = NULL;
	*sig_dropped = false;
	for (int i = 0; i < 2 && t; i++) {
		t = next_space(t, end);
		t = t ? t + 1 : NULL;
	}
	if (!t)
		return 0;
	tmpl = t;
	t = next_space(t, end);
	if (!t)
		return 0;
	if ((size_t)(t - tmpl) == 7 && !memcmp(tmpl, "ima-sig", 7))
		sig = true;
	else if ((size_t)(t - tmpl) == 7 && !memcmp(tmpl, "ima-buf", 7))
		sig = false;
	else
		return 0;
	tail = next_space(t + 1, end);		/* after the digest */
	tail = tail ? next_space(tail + 1, end) : NULL;	/* after the name */
	if (!tail) {
		snprintf(why, whylen, "Keylime splits an %s entry at single spaces "
			 "into digest, name and %s: fewer fields", sig ? "ima-sig" :
			 "ima-buf", sig ? "signature" : "buffer");
		return -1;
	}
	tail++;
	bin = malloc((size_t)(end - tail) / 2 + 1);
	if (!bin)
		return -2;
	n = py_fromhex(tail, (size_t)(end - tail), bin);
	if (n < 0 && !sig) {
		free(bin);
		snprintf(why, whylen, "Keylime splits an ima-buf entry at single "
			 "spaces: what follows the name's first word is not hex "
			 "(a name holding a space?)");
		return -1;
	}
	if (sig && (n < UEVM_SIG_HDR_SIZE ||
		    ((long)bin[7] << 8 | bin[8]) + UEVM_SIG_HDR_SIZE != n)) {
		*sig_dropped = tail < end;
		n = 0;
	}
	*outlen = (size_t)(tail - line) + 2 * (size_t)n;
	o = malloc(*outlen + 1);
	if (!o) {
		free(bin);
		return -2;
	}
	memcpy(o, line, (size_t)(tail - line));
	for (long i = 0; i < n; i++)
		sprintf((char *)o + (tail - line) + 2 * i, "%02x", bin[i]);
	free(bin);
	*out = o;
	return 1;
}

static void check_line(struct check *k, const uint8_t *line, size_t len)
{
	uint8_t *buf, *kl;
	size_t kllen;
	char why[300];
	long n;
	int rc;

	k->entries++;
	rc = keylime_fields(line, len, &kl, &kllen, &k->sig_dropped, why, sizeof(why));
	if (rc == -2) {
		k->oom = true;
		return;
	}
	if (rc < 0) {
		add_failure(k, NULL, "not parsable", "entry", "%s", why);
		return;
	}
	if (rc > 0) {
		line = kl;
		len = kllen;
	}
	buf = malloc(len + 1);
	if (!buf) {
		free(kl);
		k->oom = true;
		return;
	}
	memcpy(buf, line, len);
	buf[len] = '\n';
	free(kl);
	uevm_clear_last_error();
	n = ima_ml_parse_ascii(buf, len + 1, k->pol.log_hash_algo, line_fn, k);
	if (n < 0) {
		char cause[300];

		snprintf(cause, sizeof(cause), "%s", parser_cause());
		/* A template digest of another bank: Keylime's recomputed
		 * one cannot match. */
		if (rp_list_bank(buf, len + 1) >= 0 &&
		    rp_list_bank(buf, len + 1) != k->pol.log_hash_algo &&
		    ima_ml_parse_ascii(buf, len + 1, IMA_ML_ASCII_AUTO,
				       parse_only, NULL) >= 0)
			add_failure(k, NULL, "template hash mismatch", "ima_hash",
				    "%s (ima.log_hash_alg is %s)", cause,
				    uevm_hash_algo_name(k->pol.log_hash_algo));
		else
			add_failure(k, NULL, "not parsable", "entry", "%s", cause);
	}
	free(buf);
}

static void check_list(struct check *k, const uint8_t *buf, size_t len)
{
	const uint8_t *p = buf, *end = buf + len;

	while (p < end) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		k->lineno++;
		/* Keylime skips empty lines. */
		if (l)
			check_line(k, p, l);
		p += l + 1;
	}
}

static void print_text(const struct check *k)
{
	printf("%lu entries: %lu passed (%lu excluded), %zu failed, %lu violations "
	       "not checked\n", k->entries, k->passed, k->excluded, k->nf,
	       k->skipped);
}

static void print_json(const struct check *k, const char *policy, const char *list)
{
	fputs("{\"policy\": ", stdout);
	fput_json_string(stdout, policy);
	fputs(", \"list\": ", stdout);
	fput_json_string(stdout, list);
	fputs(", \"failures\": [", stdout);
	for (size_t i = 0; i < k->nf; i++) {
		const struct failure *f = &k->f[i];

		printf("%s\n  {\"line\": %zu, \"name\": ", i ? "," : "", f->line);
		if (f->name)
			fput_json_string(stdout, f->name);
		else
			fputs("null", stdout);
		fputs(", \"reason\": ", stdout);
		fput_json_string(stdout, f->reason);
		fputs(", \"event\": ", stdout);
		fput_json_string(stdout, f->event);
		fputs(", \"detail\": ", stdout);
		fput_json_string(stdout, f->detail ? f->detail : "");
		fputc('}', stdout);
	}
	printf("%s], \"summary\": {\"entries\": %lu, \"passed\": %lu, "
	       "\"excluded\": %lu, \"failed\": %zu, \"violations\": %lu}}\n",
	       k->nf ? "\n" : "", k->entries, k->passed, k->excluded, k->nf,
	       k->skipped);
}

static void check_free(struct check *k)
{
	for (size_t i = 0; i < k->nf; i++) {
		free(k->f[i].name);
		free(k->f[i].detail);
	}
	free(k->f);
	free(k->boot_aggs);
	rp_excludes_free(&k->ex);
	rp_keyring_free(&k->learned);
	rp_policy_free(&k->pol);
}

enum { OPT_K_JSON = 3000, OPT_K_BOOT, OPT_K_HELP };

int rp_check(const char *name, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_K_JSON },
		{ "boot-aggregate", required_argument, NULL, OPT_K_BOOT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, OPT_K_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct check k = { 0 };
	char err[512];
	uint8_t *buf;
	size_t len;
	int c, ret;

	while ((c = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		const char **nb;

		switch (c) {
		case OPT_K_HELP:
			free(k.boot_aggs);
			return help_show(name);
		case OPT_K_JSON:
			k.json = true;
			break;
		case 'v':
			k.verbose = true;
			break;
		case OPT_K_BOOT:
			if (!rp_hex_ok(optarg)) {
				error_msg("--boot-aggregate needs lowercase hex of 40 to "
					  "128 digits, not '%s'", optarg);
				free(k.boot_aggs);
				return EXIT_USAGE;
			}
			nb = realloc(k.boot_aggs, (k.nboot + 1) * sizeof(*nb));
			if (!nb) {
				free(k.boot_aggs);
				return EXIT_ERROR;
			}
			k.boot_aggs = nb;
			nb[k.nboot++] = optarg;
			break;
		default:
			free(k.boot_aggs);
			return opt_fail(name, c, argc, argv, "v", longopts);
		}
	}
	if (argc - optind != 2) {
		error_msg("%s needs POLICY and LIST", name);
		free(k.boot_aggs);
		return EXIT_USAGE;
	}
	ret = rp_policy_load(argv[optind], &k.pol, err, sizeof(err));
	if (ret) {
		error_msg("%s: %s%s", argv[optind], ret == -2 ? "cannot read: " :
			  "not a valid runtime policy: ", err);
		check_free(&k);
		return EXIT_ERROR;
	}
	if (rp_excludes_compile(&k.ex, k.pol.excludes, k.pol.nexcludes, err,
				sizeof(err))) {
		error_msg("%s: %s", argv[optind], err);
		check_free(&k);
		return EXIT_ERROR;
	}
	if (k.pol.generator <= 1)
		error_msg("warning: %s: meta.generator is %lld: Keylime takes the "
			  "policy for an empty one and expects no IMA list",
			  argv[optind], k.pol.generator);
	ret = read_file_all(argv[optind + 1], RP_MAX_LIST_SIZE, &buf, &len);
	if (ret) {
		file_error(argv[optind + 1], "cannot read", ret);
		check_free(&k);
		return EXIT_ERROR;
	}
	if (len && !ima_ml_is_ascii(buf, len)) {
		error_msg("%s: not an ASCII measurement list (Keylime reads "
			  "ascii_runtime_measurements)", argv[optind + 1]);
		free(buf);
		check_free(&k);
		return EXIT_ERROR;
	}
	check_list(&k, buf, len);
	free(buf);
	if (k.oom) {
		error_msg("%s: out of memory", name);
		check_free(&k);
		return EXIT_ERROR;
	}
	if (k.json)
		print_json(&k, argv[optind], argv[optind + 1]);
	else
		print_text(&k);
	ret = k.nf ? EXIT_VERIFY_FAILED : 0;
	check_free(&k);
	return ret;
}
