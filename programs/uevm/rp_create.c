// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevm runtime-policy create: a Keylime runtime policy from labelled trees
 * and ASCII measurement lists.
 *
 * A file's digest is its security.ima digest when that is a digest made
 * with the wanted algorithm, else the hash of its content (--hash: always
 * the content, and a security.ima digest that disagrees with it is an
 * error).  A file whose security.ima is a version 2 signature by one of
 * the --cert keys is covered by "verification-keys" instead, once the
 * signature is checked against the content.  The output is the same for
 * the same input: names and digests sorted, no timestamp unless asked.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "prog.h"
#include "rp_cmd.h"
#include "rp_policy.h"
#include "rp_regex.h"

/* One name -> digest pair of a map being built. */
struct pair {
	char *name;
	char *hex;
};

struct pairs {
	struct pair *p;
	size_t n, cap;
};

struct map_rule {
	const char *src;
	size_t srclen;
	const char *dst;
};

struct create {
	const char *name;
	int algo;			/* file digests */
	bool hash_content;		/* --hash */
	const char *prefix;
	struct map_rule *maps;
	size_t nmaps;
	const char **excludes;
	size_t nexcludes;
	struct rp_excludes ex;
	const char **ignored;
	size_t nignored;
	struct rp_keyring certs;
	char **roots;			/* the PATHs, absolute */
	size_t nroots;
	struct pairs digests, keyrings, imabuf;
	pthread_mutex_t lock;
	unsigned long files, covered, excluded, errors, bad;
	bool verbose;
};

static int pairs_add(struct pairs *ps, const char *name, const char *hex)
{
	struct pair p = { strdup(name), strdup(hex) };

	if (ps->n == ps->cap) {
		size_t nc = ps->cap ? ps->cap * 2 : 64;
		struct pair *np = realloc(ps->p, nc * sizeof(*np));

		if (!np) {
			free(p.name);
			free(p.hex);
			return -ENOMEM;
		}
		ps->p = np;
		ps->cap = nc;
	}
	if (!p.name || !p.hex) {
		free(p.name);
		free(p.hex);
		return -ENOMEM;
	}
	ps->p[ps->n++] = p;
	return 0;
}

static void pairs_free(struct pairs *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->p[i].name);
		free(ps->p[i].hex);
	}
	free(ps->p);
}

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->hex, y->hex);
}

/* ---- names --------------------------------------------------------------- */

/* PATH made absolute, without "//", "/./" or a trailing '/'. */
static char *absolute(const char *path)
{
	char *cwd = path[0] == '/' ? NULL : getcwd(NULL, 0), *out, *o;
	size_t n = strlen(path) + (cwd ? strlen(cwd) + 1 : 0) + 2;
	const char *s;

	if (path[0] != '/' && !cwd)
		return NULL;
	out = malloc(n);
	if (!out) {
		free(cwd);
		return NULL;
	}
	snprintf(out, n, "%s/%s", cwd ? cwd : "", path);
	free(cwd);
	for (s = out, o = out; *s;) {
		if (s[0] == '/' && s[1] == '/') {
			s++;
		} else if (s[0] == '/' && s[1] == '.' && (s[2] == '/' || !s[2])) {
			s += 2;
		} else {
			*o++ = *s++;
		}
	}
	while (o > out + 1 && o[-1] == '/')
		o--;
	if (o == out)
		*o++ = '/';
	*o = '\0';
	return out;
}

/* How far PATH is below ROOT ("" when equal), or NULL when not. */
static const char *below(const char *path, const char *root, size_t len)
{
	if (len == 1 && root[0] == '/')
		return path[0] == '/' ? path : NULL;
	if (strncmp(path, root, len) || (path[len] && path[len] != '/'))
		return NULL;
	return path + len;
}

/* The name the host records for the tree path PATH (malloc'ed). */
static char *host_name(const struct create *c, const char *path)
{
	const struct map_rule *best = NULL;
	const char *rest = NULL;
	char *out;

	for (size_t i = 0; i < c->nmaps; i++) {
		const char *r = below(path, c->maps[i].src, c->maps[i].srclen);

		if (r && (!best || c->maps[i].srclen > best->srclen)) {
			best = &c->maps[i];
			rest = r;
		}
	}
	if (c->prefix) {
		for (size_t i = 0; i < c->nroots && !rest; i++) {
			const char *r = below(path, c->roots[i], strlen(c->roots[i]));

			/* A FILE operand keeps its name under the prefix. */
			if (r && !*r)
				r = strrchr(c->roots[i], '/');
			rest = r;
		}
	}
	if (asprintf(&out, "%s%s", best ? best->dst : c->prefix && rest ?
		     (strcmp(c->prefix, "/") ? c->prefix : "") : "",
		     rest ? rest : path) < 0)
		return NULL;
	if (!*out) {
		free(out);
		out = strdup("/");
	}
	/* IMA records spaces as '_' (so do its lists). */
	for (char *p = out; p && *p; p++)
		if (*p == ' ')
			*p = '_';
	return out;
}

/* ---- files --------------------------------------------------------------- */

static void add_locked(struct create *c, struct pairs *ps, const char *name,
		       const char *hex)
{
	pthread_mutex_lock(&c->lock);
	if (pairs_add(ps, name, hex))
		c->errors++;
	pthread_mutex_unlock(&c->lock);
}

static void count(struct create *c, unsigned long *n)
{
	pthread_mutex_lock(&c->lock);
	(*n)++;
	pthread_mutex_unlock(&c->lock);
}

/* A signature by a --cert key: 1 covered, 0 not ours (list the digest),
 * -1 does not verify. */
static int signed_by_cert(struct create *c, const struct uevm_file *f,
			  const char *path, const struct uevm_xattr_value *v,
			  const uint8_t *val, size_t len)
{
	const struct rp_keyring *kr = &c->certs;
	uint8_t md[UEVM_MAX_DIGEST_SIZE];
	char why[200];
	int ret;

	if (v->type != UEVM_EVM_IMA_XATTR_DIGSIG || !rp_keyring_find(kr, v->keyid))
		return 0;
	if (v->sig_version != 2) {
		error_msg("warning: %s: a version %u signature, which Keylime does "
			  "not check: its digest is listed", path, v->sig_version);
		return 0;
	}
	ret = uevm_hash_fd(uevm_file_fd(f), v->algo, md);
	if (ret) {
		file_error(path, "cannot hash", ret);
		count(c, &c->errors);
		return -1;
	}
	if (rp_sig_verify(&kr, 1, val, len, md, uevm_hash_algo_digest_size(v->algo),
			  uevm_hash_algo_name(v->algo), why, sizeof(why))) {
		error_msg("%s: security.ima: %s: the content does not match its "
			  "signature", path, why);
		count(c, &c->bad);
		return -1;
	}
	return 1;
}

/* The digest to list for F: from security.ima or its content. */
static int file_digest(struct create *c, const struct uevm_file *f,
		       const char *path, char *hex)
{
	uint8_t *val = NULL, md[UEVM_MAX_DIGEST_SIZE];
	size_t size = 0, dsize = uevm_hash_algo_digest_size(c->algo);
	struct uevm_xattr_value v;
	ssize_t len;
	int ret = 0;

	uevm_xattr_value_init(&v);
	len = uevm_getxattr_alloc(f, UEVM_XATTR_IMA, &val, &size);
	if (len >= 0 && uevm_ima_xattr_parse(val, (size_t)len, &v))
		len = -ENODATA;	/* unreadable value: hashed like none */
	if (len >= 0 && (ret = signed_by_cert(c, f, path, &v, val, (size_t)len))) {
		free(val);
		return ret > 0 ? 1 : -1;
	}
	if (len >= 0 && !c->hash_content && v.digest && v.algo == c->algo &&
	    (v.type == UEVM_IMA_XATTR_DIGEST || v.type == UEVM_IMA_XATTR_DIGEST_NG)) {
		hex_encode(v.digest, dsize, hex);
		free(val);
		return 0;
	}
	ret = uevm_hash_fd(uevm_file_fd(f), c->algo, md);
	if (ret) {
		free(val);
		file_error(path, "cannot hash", ret);
		count(c, &c->errors);
		return -1;
	}
	if (len >= 0 && v.digest && v.algo == c->algo &&
	    (v.type == UEVM_IMA_XATTR_DIGEST || v.type == UEVM_IMA_XATTR_DIGEST_NG) &&
	    memcmp(v.digest, md, dsize)) {
		free(val);
		error_msg("%s: security.ima does not match the content", path);
		count(c, &c->bad);
		return -1;
	}
	free(val);
	hex_encode(md, dsize, hex);
	return 0;
}

static int walk_fn(const struct uevm_file *f, const char *path, int err,
		   void *arg)
{
	struct create *c = arg;
	char hex[2 * UEVM_MAX_DIGEST_SIZE + 1], *name;
	int ret;

	if (err) {
		file_error(path, "cannot open", err);
		count(c, &c->errors);
		return 0;
	}
	if (!S_ISREG(f->st.st_mode))
		return 0;
	name = host_name(c, path);
	if (!name) {
		file_error(path, "cannot name", -ENOMEM);
		count(c, &c->errors);
		return 0;
	}
	if (rp_excludes_match(&c->ex, name)) {
		count(c, &c->excluded);
		free(name);
		return 0;
	}
	if (!str_is_utf8(name)) {
		error_msg("%s: the name is not UTF-8, which a JSON policy cannot "
			  "hold (leave it out with --exclude or --skip)", path);
		count(c, &c->errors);
		free(name);
		return 0;
	}
	ret = file_digest(c, f, path, hex);
	if (ret == 1)
		count(c, &c->covered);
	else if (!ret)
		add_locked(c, &c->digests, name, hex);
	if (ret >= 0)
		count(c, &c->files);
	free(name);
	return 0;
}

/* ---- lists --------------------------------------------------------------- */

struct list_state {
	struct create *c;
	const char *path;
	size_t lineno;
	int failed;
};

static bool ignored_keyring(const struct create *c, const char *name)
{
	for (size_t i = 0; i < c->nignored; i++)
		if (!strcmp(c->ignored[i], "*") || !strcmp(c->ignored[i], name))
			return true;
	return false;
}

static int list_entry(const struct ima_template_entry *e, size_t index,
		      bool digest_ok, void *arg)
{
	struct list_state *ls = arg;
	struct create *c = ls->c;
	const struct rp_keyring *kr = &c->certs;
	struct rp_keyring probe = { 0 };
	struct rp_entry r;
	char why[256];

	ls->lineno = index + 1;
	if (ima_entry_is_violation(e))
		return 0;	/* Keylime does not check these */
	if (!digest_ok) {
		error_msg("%s: line %zu: the template digest does not match the "
			  "entry (a damaged list)", ls->path, ls->lineno);
		return ls->failed = -EBADMSG;
	}
	if (rp_entry_read(e, &r, why, sizeof(why))) {
		error_msg("%s: line %zu: %s", ls->path, ls->lineno, why);
		return ls->failed = -EBADMSG;
	}
	if (!str_is_utf8(r.name)) {
		error_msg("%s: line %zu: a name that is not UTF-8", ls->path, ls->lineno);
		return ls->failed = -EBADMSG;
	}
	if (!strcmp(r.tmpl, "ima-buf")) {
		int key = rp_keyring_add_buf(&probe, r.buf, r.buflen, why, sizeof(why));

		rp_keyring_free(&probe);
		if (key <= 0 && !ignored_keyring(c, r.name))
			return pairs_add(&c->keyrings, r.name, r.hex);
		return key > 0 ? pairs_add(&c->imabuf, r.name, r.hex) : 0;
	}
	if (rp_excludes_match(&c->ex, r.name)) {
		c->excluded++;
		return 0;
	}
	c->files++;
	if (r.sig && !rp_sig_verify(&kr, 1, r.sig, r.siglen, r.digest, r.dlen,
				    r.algo, why, sizeof(why))) {
		c->covered++;
		return 0;
	}
	return pairs_add(&c->digests, r.name, r.hex);
}

static int add_list(struct create *c, const char *path, int *bank)
{
	struct list_state ls = { c, path, 0, 0 };
	uint8_t *buf;
	size_t len;
	long n;
	int ret;

	ret = read_file_all(path, RP_MAX_LIST_SIZE, &buf, &len);
	if (ret) {
		file_error(path, "cannot read", ret);
		return -1;
	}
	if (len && !ima_ml_is_ascii(buf, len)) {
		error_msg("%s: not an ASCII measurement list (uevm measurements "
			  "show converts a binary one)", path);
		free(buf);
		return -1;
	}
	if (*bank < 0)
		*bank = len ? rp_list_bank(buf, len) : UEVM_HASH_SHA1;
	if (*bank < 0) {
		error_msg("%s: line 1: no sha1, sha256, sha384 or sha512 template "
			  "digest", path);
		free(buf);
		return -1;
	}
	uevm_clear_last_error();
	n = ima_ml_parse_ascii(buf, len, *bank, list_entry, &ls);
	free(buf);
	if (n < 0 && !ls.failed) {
		file_error(path, "cannot read the list", (int)n);
		return -1;
	}
	return n < 0 ? -1 : 0;
}

/* ---- output -------------------------------------------------------------- */

static void put_map(FILE *fp, const char *key, struct pairs *ps, bool last)
{
	size_t i = 0;

	if (ps->n)
		qsort(ps->p, ps->n, sizeof(*ps->p), cmp_pair);
	fprintf(fp, "  \"%s\": {", key);
	while (i < ps->n) {
		const char *name = ps->p[i].name;
		const char *prev = NULL;

		fputs(i ? ",\n    " : "\n    ", fp);
		fput_json_string(fp, name);
		fputs(": [", fp);
		for (bool first = true; i < ps->n && !strcmp(ps->p[i].name, name); i++) {
			if (prev && !strcmp(prev, ps->p[i].hex))
				continue;
			fputs(first ? "" : ", ", fp);
			fput_json_string(fp, ps->p[i].hex);
			prev = ps->p[i].hex;
			first = false;
		}
		fputc(']', fp);
	}
	fprintf(fp, "%s}%s\n", ps->n ? "\n  " : "", last ? "" : ",");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void put_strings(FILE *fp, const char **s, size_t n)
{
	if (n)
		qsort(s, n, sizeof(*s), cmp_str);
	fputc('[', fp);
	for (size_t i = 0; i < n; i++) {
		if (i && !strcmp(s[i], s[i - 1]))
			continue;
		fputs(i ? ", " : "", fp);
		fput_json_string(fp, s[i]);
	}
	fputc(']', fp);
}

/* meta.timestamp: SOURCE_DATE_EPOCH when set (reproducible builds),
 * else now; UTC, as Python prints a datetime. */
static int timestamp(char *out, size_t len)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	time_t t = time(NULL);
	struct tm tm;
	char *end;

	if (sde && *sde) {
		long long v = strtoll(sde, &end, 10);

		if (*end || v < 0) {
			error_msg("SOURCE_DATE_EPOCH '%s' is not a number of seconds", sde);
			return -1;
		}
		t = (time_t)v;
	}
	if (!gmtime_r(&t, &tm) || !strftime(out, len, "%Y-%m-%d %H:%M:%S", &tm))
		return -1;
	return 0;
}

static int write_policy(struct create *c, FILE *fp, int log_bank,
			long long release, bool with_time)
{
	char *vk = rp_keyring_to_json(&c->certs), ts[64];

	if (!vk || (with_time && timestamp(ts, sizeof(ts)))) {
		free(vk);
		return -1;
	}
	fputs("{\n", fp);
	put_map(fp, "digests", &c->digests, false);
	fputs("  \"excludes\": ", fp);
	put_strings(fp, c->excludes, c->nexcludes);
	fputs(",\n  \"ima\": {\"dm_policy\": null, \"ignored_keyrings\": ", fp);
	put_strings(fp, c->ignored, c->nignored);
	fprintf(fp, ", \"log_hash_alg\": \"%s\"},\n", uevm_hash_algo_name(log_bank));
	put_map(fp, "ima-buf", &c->imabuf, false);
	put_map(fp, "keyrings", &c->keyrings, false);
	fprintf(fp, "  \"meta\": {\"generator\": %d, ", RP_GENERATOR_LEGACY_ALLOWLIST);
	if (with_time)
		fprintf(fp, "\"timestamp\": \"%s\", ", ts);
	fprintf(fp, "\"version\": %d},\n", RP_VERSION);
	fprintf(fp, "  \"release\": %lld,\n", release);
	fputs("  \"verification-keys\": ", fp);
	fput_json_string(fp, vk);
	fputs("\n}\n", fp);
	free(vk);
	return 0;
}

/* ---- options ------------------------------------------------------------- */

enum {
	OPT_OUT = 'o', OPT_LIST = 2000, OPT_HASH, OPT_PREFIX, OPT_MAP,
	OPT_RX, OPT_RX_FROM, OPT_SKIP, OPT_CERT, OPT_BOOTAGG, OPT_LOGALG,
	OPT_RELEASE, OPT_TIME, OPT_IGNKR, OPT_CHELP,
};

static const struct option create_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "list", required_argument, NULL, OPT_LIST },
	{ "hash-algo", required_argument, NULL, 'a' },
	{ "hash", no_argument, NULL, OPT_HASH },
	{ "prefix", required_argument, NULL, OPT_PREFIX },
	{ "map", required_argument, NULL, OPT_MAP },
	{ "exclude", required_argument, NULL, OPT_RX },
	{ "exclude-from", required_argument, NULL, OPT_RX_FROM },
	{ "skip", required_argument, NULL, OPT_SKIP },
	{ "cert", required_argument, NULL, OPT_CERT },
	{ "boot-aggregate", required_argument, NULL, OPT_BOOTAGG },
	{ "log-hash-alg", required_argument, NULL, OPT_LOGALG },
	{ "release", required_argument, NULL, OPT_RELEASE },
	{ "timestamp", no_argument, NULL, OPT_TIME },
	{ "ignored-keyring", required_argument, NULL, OPT_IGNKR },
	{ "one-file-system", no_argument, NULL, 'x' },
	{ "no-dereference", no_argument, NULL, 'P' },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "jobs", required_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, OPT_CHELP },
	{ NULL, 0, NULL, 0 },
};
#define CREATE_SHORT "o:a:xPj:v"

static int push(const char ***v, size_t *n, const char *s)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -1;
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

/* Regexes from FILE, one a line (kept for the run: they point into it). */
static int excludes_from(struct create *c, const char *path, char **keep)
{
	size_t len;
	char *p;
	int ret = read_file_all(path, 16u << 20, (uint8_t **)keep, &len);

	if (ret) {
		file_error(path, "cannot read", ret);
		return -1;
	}
	p = realloc(*keep, len + 1);
	if (!p)
		return -1;
	p[len] = '\0';
	*keep = p;
	for (char *line = strtok(p, "\n"); line; line = strtok(NULL, "\n")) {
		line[strcspn(line, "\r")] = '\0';
		if (*line && push(&c->excludes, &c->nexcludes, line))
			return -1;
	}
	return 0;
}

static int add_cert(struct create *c, const char *path)
{
	char why[256];
	uint8_t *buf;
	size_t len;
	int ret = read_file_all(path, 1u << 20, &buf, &len);

	if (ret) {
		file_error(path, "cannot read", ret);
		return -1;
	}
	ret = rp_keyring_add_buf(&c->certs, buf, len, why, sizeof(why));
	free(buf);
	if (ret) {
		error_msg("%s: %s", path, ret > 0 ? "not an X.509 certificate or "
			  "public key (PEM or DER)" : why);
		return -1;
	}
	return 0;
}

static int add_map(struct create *c, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct map_rule *nm;
	char *src;

	if (!eq || eq == arg || arg[0] != '/' || eq[1] != '/') {
		error_msg("--map needs SRC=DST, both absolute paths, not '%s'", arg);
		return -1;
	}
	nm = realloc(c->maps, (c->nmaps + 1) * sizeof(*nm));
	if (!nm)
		return -1;
	c->maps = nm;
	src = strndup(arg, (size_t)(eq - arg));
	if (!src)
		return -1;
	nm[c->nmaps].src = absolute(src);
	free(src);
	if (!nm[c->nmaps].src)
		return -1;
	nm[c->nmaps].srclen = strlen(nm[c->nmaps].src);
	/* DST "/" maps onto the root: no prefix at all. */
	nm[c->nmaps].dst = strcmp(eq + 1, "/") ? eq + 1 : "";
	c->nmaps++;
	return 0;
}

static int parse_opts(struct create *c, struct common_opts *o, int argc,
		      char **argv, const char **out, const char ***lists,
		      size_t *nlists, int *log_bank, long long *release,
		      bool *with_time, char **rx_file)
{
	int ch;

	while ((ch = getopt_long(argc, argv, CREATE_SHORT, create_longopts,
				 NULL)) != -1) {
		char *end;

		switch (ch) {
		case OPT_CHELP:
			return help_show(c->name) ? EXIT_ERROR : -1;
		case 'o':
			*out = optarg;
			break;
		case OPT_LIST:
			if (push(lists, nlists, optarg))
				return EXIT_ERROR;
			break;
		case OPT_HASH:
			c->hash_content = true;
			break;
		case OPT_PREFIX:
			if (optarg[0] != '/') {
				error_msg("--prefix needs an absolute path, not '%s'", optarg);
				return EXIT_USAGE;
			}
			c->prefix = optarg;
			break;
		case OPT_MAP:
			if (add_map(c, optarg))
				return EXIT_USAGE;
			break;
		case OPT_RX:
			if (push(&c->excludes, &c->nexcludes, optarg))
				return EXIT_ERROR;
			break;
		case OPT_RX_FROM:
			if (*rx_file) {
				error_msg("--exclude-from is given once");
				return EXIT_USAGE;
			}
			if (excludes_from(c, optarg, rx_file))
				return EXIT_USAGE;
			break;
		case OPT_SKIP:
			if (common_opt(o, OPT_EXCLUDE, optarg) <= 0)
				return EXIT_USAGE;
			break;
		case OPT_CERT:
			if (add_cert(c, optarg))
				return EXIT_USAGE;
			break;
		case OPT_BOOTAGG:
			if (!rp_hex_ok(optarg)) {
				error_msg("--boot-aggregate needs lowercase hex of 40 to "
					  "128 digits, not '%s'", optarg);
				return EXIT_USAGE;
			}
			if (pairs_add(&c->digests, IMA_BOOT_AGGREGATE_NAME, optarg))
				return EXIT_ERROR;
			break;
		case OPT_LOGALG:
			*log_bank = uevm_hash_algo_by_name(optarg);
			if (*log_bank != UEVM_HASH_SHA1 && *log_bank != UEVM_HASH_SHA256 &&
			    *log_bank != UEVM_HASH_SHA384 && *log_bank != UEVM_HASH_SHA512) {
				error_msg("--log-hash-alg is sha1, sha256, sha384 or "
					  "sha512, not '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_RELEASE:
			*release = strtoll(optarg, &end, 10);
			if (*end || !*optarg || *release < 0) {
				error_msg("--release needs a number from 0, not '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_TIME:
			*with_time = true;
			break;
		case OPT_IGNKR:
			if (push(&c->ignored, &c->nignored, optarg))
				return EXIT_ERROR;
			break;
		case 'v':
			c->verbose = true;
			break;
		case 'a': case 'x': case 'P': case 'j': case OPT_ROOT:
			if (common_opt(o, ch, optarg) <= 0)
				return EXIT_USAGE;
			break;
		default:
			/* -h shows the help: then stop with status 0. */
			ch = opt_fail(c->name, ch, argc, argv, CREATE_SHORT,
				      create_longopts);
			return ch ? ch : -1;
		}
	}
	if (c->prefix && c->nmaps) {
		error_msg("--prefix and --map exclude each other");
		return EXIT_USAGE;
	}
	return 0;
}

static int set_roots(struct create *c, const struct common_opts *o, int argc,
		     char **argv)
{
	c->roots = calloc((size_t)argc + 1, sizeof(*c->roots));
	if (!c->roots)
		return -1;
	for (int i = 0; i < argc; i++) {
		/* Beneath --root, PATHs are absolute already. */
		c->roots[i] = o->walk.root ? strdup(argv[i]) : absolute(argv[i]);
		if (!c->roots[i])
			return -1;
		c->nroots++;
	}
	return 0;
}

static int emit(struct create *c, const char *out, int log_bank,
		long long release, bool with_time)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len), *fp;
	int ret;

	if (!mem || write_policy(c, mem, log_bank, release, with_time) || fclose(mem)) {
		error_msg("cannot build the policy: out of memory");
		free(text);
		return EXIT_ERROR;
	}
	/* Nothing is written until the whole policy is there. */
	fp = out && strcmp(out, "-") ? fopen(out, "w") : stdout;
	if (!fp) {
		file_error(out, "cannot create", -errno);
		free(text);
		return EXIT_ERROR;
	}
	ret = fwrite(text, 1, len, fp) == len ? 0 : EXIT_ERROR;
	if (fp != stdout && fclose(fp))
		ret = EXIT_ERROR;
	if (ret && fp != stdout)
		file_error(out, "cannot write", -errno);
	free(text);
	return ret;
}

static void create_free(struct create *c)
{
	pairs_free(&c->digests);
	pairs_free(&c->keyrings);
	pairs_free(&c->imabuf);
	rp_excludes_free(&c->ex);
	rp_keyring_free(&c->certs);
	for (size_t i = 0; i < c->nroots; i++)
		free(c->roots[i]);
	for (size_t i = 0; i < c->nmaps; i++)
		free((char *)c->maps[i].src);
	free(c->roots);
	free(c->maps);
	free(c->excludes);
	free(c->ignored);
	pthread_mutex_destroy(&c->lock);
}

int rp_create(const char *name, int argc, char **argv)
{
	struct create c = { .name = name, .lock = PTHREAD_MUTEX_INITIALIZER };
	const char *out = NULL, **lists = NULL;
	size_t nlists = 0;
	int log_bank = -1, ret;
	long long release = 0;
	bool with_time = false;
	char *rx_file = NULL, err[512];
	struct common_opts o;

	common_opts_init(&o);
	ret = parse_opts(&c, &o, argc, argv, &out, &lists, &nlists, &log_bank,
			 &release, &with_time, &rx_file);
	if (ret) {
		ret = ret < 0 ? 0 : ret;
		goto out;
	}
	c.algo = o.cfg.hash_algo;
	if (optind >= argc && !nlists) {
		error_msg("%s: give a PATH or --list FILE", name);
		ret = EXIT_USAGE;
		goto out;
	}
	if (rp_excludes_compile(&c.ex, c.excludes, c.nexcludes, err, sizeof(err))) {
		error_msg("%s", err);
		ret = EXIT_USAGE;
		goto out;
	}
	ret = EXIT_ERROR;
	for (size_t i = 0; i < nlists; i++)
		if (add_list(&c, lists[i], &log_bank))
			goto out;
	if (log_bank < 0)
		log_bank = UEVM_HASH_SHA1;	/* the kernel's template digest */
	if (set_roots(&c, &o, argc - optind, argv + optind))
		goto out;
	o.walk.recursive = true;
	o.walk.refuse_dir_roots = false;
	if (c.nroots)
		walk_tree((const char *const *)c.roots, c.nroots, &o.walk, walk_fn, &c);
	if (c.verbose)
		fprintf(stderr, "%s: %lu files: %lu digests, %lu covered by "
			"verification-keys, %lu excluded; %lu errors\n", prog_name,
			c.files, c.files - c.covered, c.covered, c.excluded,
			c.errors + c.bad);
	if (c.errors || c.bad) {
		error_msg("%s: no policy written: %lu file(s) failed", name,
			  c.errors + c.bad);
		ret = c.errors ? EXIT_ERROR : EXIT_VERIFY_FAILED;
		goto out;
	}
	ret = emit(&c, out, log_bank, release, with_time);
out:
	create_free(&c);
	free(lists);
	free(rx_file);
	return ret;
}
