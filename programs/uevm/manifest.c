// SPDX-License-Identifier: GPL-2.0-or-later
/* Manifests of labelled trees: build, write, parse, compare (manifest.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "manifest.h"

#define MF_MAGIC "uevm-manifest 1\n"
#define MF_HMAC "hmac-sha256 "
#define MF_SIG "signature "
#define MF_MAX_FILE (1024UL * 1024 * 1024)

static __thread char mf_err[640];
static pthread_mutex_t mf_lock = PTHREAD_MUTEX_INITIALIZER;

const char *manifest_last_error(void)
{
	return mf_err;
}

static int fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(mf_err, sizeof(mf_err), fmt, ap);
	va_end(ap);
	return -err;
}

/* ---- entries ------------------------------------------------------------ */

void mf_entry_free(struct mf_entry *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nx; i++)
		free(e->x[i].name);
	free(e->x);
	free(e->path);
	free(e->target);
	free(e);
}

struct manifest *manifest_new(void)
{
	return calloc(1, sizeof(struct manifest));
}

void manifest_free(struct manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		mf_entry_free(m->e[i]);
	free(m->e);
	free(m->by_ino);
	free(m->by_evm);
	free(m);
}

void mf_changes_free(struct mf_changes *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].detail);
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

static char type_letter(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return 'f';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	case S_IFIFO: return 'p';
	case S_IFSOCK: return 's';
	}
	return 0;
}

static const char *type_word(char t)
{
	switch (t) {
	case 'f': return "file";
	case 'd': return "directory";
	case 'l': return "symlink";
	case 'c': return "char-device";
	case 'b': return "block-device";
	case 'p': return "fifo";
	}
	return "socket";
}

const char *manifest_rel(const char *root, const char *path)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (strncmp(path, root, n))
		return path;
	path += n;
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

static int cmp_xattr(const void *a, const void *b)
{
	return strcmp(((const struct mf_xattr *)a)->name,
		      ((const struct mf_xattr *)b)->name);
}

/* The xattrs a manifest records: the protected list, security.evm and the
 * POSIX ACLs (which EVM protects through the mode it binds, partly). */
static int collect_xattrs(const struct uevm_ctx *ctx, const struct uevm_file *f,
			  struct mf_entry *e)
{
	static const char *const more[] = { XATTR_NAME_EVM,
		"system.posix_acl_access", "system.posix_acl_default", NULL };
	const char *const *prot = uevm_ctx_xattrs(ctx);
	uint8_t *buf = NULL;
	size_t bufsize = 0;
	int ret = 0;

	for (int pass = 0; pass < 2 && !ret; pass++) {
		const char *const *list = pass ? more : prot;

		for (size_t i = 0; list[i]; i++) {
			ssize_t n = uevm_getxattr_alloc(f, list[i], &buf, &bufsize);
			struct mf_xattr *x;

			if (n == -ENODATA || n == -EOPNOTSUPP)
				continue;
			if (n < 0) {
				ret = fail((int)-n, "cannot read %s: %s", list[i],
					   strerror((int)-n));
				break;
			}
			x = realloc(e->x, (e->nx + 1) * sizeof(*x));
			if (!x) {
				ret = -ENOMEM;
				break;
			}
			e->x = x;
			x += e->nx;
			x->name = strdup(list[i]);
			if (!x->name ||
			    uevm_hash_buffer(UEVM_HASH_SHA256, buf, (size_t)n, x->d)) {
				free(x->name);
				ret = fail(ENOMEM, "cannot hash %s", list[i]);
				break;
			}
			e->nx++;
		}
	}
	free(buf);
	if (!ret && e->nx > 1)
		qsort(e->x, e->nx, sizeof(*e->x), cmp_xattr);
	/* A name in the protected list twice (--evm-xattr) counts once. */
	for (size_t i = 1; !ret && i < e->nx;) {
		if (strcmp(e->x[i].name, e->x[i - 1].name)) {
			i++;
			continue;
		}
		free(e->x[i].name);
		memmove(&e->x[i], &e->x[i + 1], (e->nx - i - 1) * sizeof(*e->x));
		e->nx--;
	}
	return ret;
}

int mf_entry_from_file(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       const char *rel, struct mf_entry **out)
{
	struct mf_entry *e = calloc(1, sizeof(*e));
	char target[PATH_MAX + 1];
	int ret;

	if (!e || !(e->path = strdup(rel))) {
		free(e);
		return fail(ENOMEM, "out of memory");
	}
	e->type = type_letter(f->st.st_mode);
	e->ino = f->st.st_ino;
	e->uid = f->st.st_uid;
	e->gid = f->st.st_gid;
	e->mode = f->st.st_mode & 07777;
	if (e->type == 'c' || e->type == 'b')
		e->rdev = f->st.st_rdev;
	ret = uevm_file_generation(f, &e->gen);
	if (ret) {
		ret = fail(-ret, "cannot read the generation: %s", uevm_last_error());
		goto out;
	}
	if (e->type == 'f') {
		ret = uevm_hash_fd(f->fd, UEVM_HASH_SHA256, e->sha);
		if (ret) {
			ret = fail(-ret, "cannot hash the content: %s",
				   uevm_last_error());
			goto out;
		}
		e->has_sha = true;
	} else if (e->type == 'l') {
		ssize_t n = readlinkat(f->fd, "", target, sizeof(target) - 1);

		if (n <= 0) {
			ret = fail(n < 0 ? errno : EINVAL, "cannot read the symlink");
			goto out;
		}
		target[n] = '\0';
		if (!(e->target = strdup(target))) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = collect_xattrs(ctx, f, e);
out:
	if (ret) {
		mf_entry_free(e);
		return ret;
	}
	*out = e;
	return 0;
}

static int push(struct manifest *m, struct mf_entry *e)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		struct mf_entry **v = realloc(m->e, cap * sizeof(*v));

		if (!v)
			return fail(ENOMEM, "out of memory");
		m->e = v;
		m->cap = cap;
	}
	m->e[m->n++] = e;
	return 0;
}

int manifest_add(struct manifest *m, struct mf_entry *e)
{
	int ret;

	pthread_mutex_lock(&mf_lock);
	ret = push(m, e);
	pthread_mutex_unlock(&mf_lock);
	if (ret)
		mf_entry_free(e);
	return ret;
}

int manifest_add_alias(struct manifest *m, const char *rel,
		       const struct stat *st)
{
	struct mf_entry *e = calloc(1, sizeof(*e));

	if (!e || !(e->path = strdup(rel))) {
		free(e);
		return fail(ENOMEM, "out of memory");
	}
	e->alias = true;
	e->ino = st->st_ino;
	return manifest_add(m, e);
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp((*(struct mf_entry *const *)a)->path,
		      (*(struct mf_entry *const *)b)->path);
}

static int copy_entry(struct mf_entry *to, const struct mf_entry *from)
{
	char *path = to->path;

	*to = *from;
	to->path = path;
	to->target = NULL;
	to->x = NULL;
	to->nx = 0;
	if (from->target && !(to->target = strdup(from->target)))
		return -ENOMEM;
	if (from->nx) {
		to->x = calloc(from->nx, sizeof(*to->x));
		if (!to->x)
			return -ENOMEM;
		for (size_t i = 0; i < from->nx; i++, to->nx++) {
			to->x[i] = from->x[i];
			if (!(to->x[i].name = strdup(from->x[i].name)))
				return -ENOMEM;
		}
	}
	return 0;
}

static int manifest_index(struct manifest *m);
static const struct mf_entry *labelled_name(const struct manifest *m,
					    const struct mf_entry *alias);

int manifest_finish(struct manifest *m)
{
	qsort(m->e, m->n, sizeof(*m->e), cmp_path);
	if (manifest_index(m))
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		struct mf_entry *a = m->e[i];
		const struct mf_entry *from;

		if (i && !strcmp(a->path, m->e[i - 1]->path))
			return fail(EINVAL, "%s: reached twice", a->path);
		if (!a->alias)
			continue;
		from = labelled_name(m, a);
		if (!from)
			return fail(ENOENT, "%s: no labelled name of its inode",
				    a->path);
		if (copy_entry(a, from))
			return fail(ENOMEM, "out of memory");
	}
	m->complete = true;
	free(m->by_ino);
	free(m->by_evm);
	m->by_ino = m->by_evm = NULL;
	m->nevm = 0;
	return 0;
}

struct mf_entry *manifest_find(const struct manifest *m, const char *path)
{
	struct mf_entry key = { .path = (char *)path }, *k = &key, **r;

	if (!m->n)
		return NULL;
	r = bsearch(&k, m->e, m->n, sizeof(*m->e), cmp_path);
	return r ? *r : NULL;
}

/* ---- text form ------------------------------------------------------------ */

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (b->len + n + 1 > cap)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static bool raw_ok(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != '%' && c != ':';
}

static void sb_escaped(struct sbuf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };

		if (raw_ok(*p))
			sb_add(b, (const char *)p, 1);
		else
			sb_add(b, e, 3);
	}
}

static void sb_hex(struct sbuf *b, const uint8_t *d, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		char h[2] = { hex[d[i] >> 4], hex[d[i] & 15] };

		sb_add(b, h, 2);
	}
}

static void sb_entry(struct sbuf *b, const struct mf_entry *e)
{
	sb_add(b, "o ", 2);
	sb_escaped(b, e->path);
	sb_printf(b, " %c %" PRIu64 " %" PRIu32 " %" PRIu32 " %" PRIu32 " %04o",
		  e->type, e->ino, e->gen, e->uid, e->gid, e->mode);
	if (e->type == 'c' || e->type == 'b')
		sb_printf(b, " rdev=%" PRIu64, e->rdev);
	if (e->has_sha) {
		sb_add(b, " sha256=", 8);
		sb_hex(b, e->sha, MF_DIGEST);
	}
	if (e->target) {
		sb_add(b, " target=", 8);
		sb_escaped(b, e->target);
	}
	for (size_t i = 0; i < e->nx; i++) {
		sb_add(b, " x=", 3);
		sb_escaped(b, e->x[i].name);
		sb_add(b, ":", 1);
		sb_hex(b, e->x[i].d, MF_DIGEST);
	}
	sb_add(b, "\n", 1);
}

int manifest_serialise(const struct manifest *m, char **out, size_t *len)
{
	struct sbuf b = { 0 };

	sb_add(&b, MF_MAGIC, strlen(MF_MAGIC));
	for (size_t i = 0; i < m->n; i++)
		sb_entry(&b, m->e[i]);
	if (b.oom) {
		free(b.p);
		return fail(ENOMEM, "out of memory");
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

/*
 * What a manifest's signature signs: SHA-256 over a label and the SHA-256
 * of the manifest's bytes, not the SHA-256 of the bytes themselves.  The
 * signature has security.ima's format (type 3, v2), and one over the
 * digest of the bytes would also be a valid IMA signature of a file
 * holding them: a signed manifest would give anyone a "signed" file.
 * The label keeps the two apart, as the kernel's sigv3 does with its
 * ima_file_id.
 */
#define MF_SIG_LABEL "uevm manifest signature v1\n"

static int manifest_sig_digest(const void *body, size_t len,
			       uint8_t d[MF_DIGEST])
{
	uint8_t msg[sizeof(MF_SIG_LABEL) - 1 + MF_DIGEST];
	int ret;

	memcpy(msg, MF_SIG_LABEL, sizeof(MF_SIG_LABEL) - 1);
	ret = uevm_hash_buffer(UEVM_HASH_SHA256, body, len,
			       msg + sizeof(MF_SIG_LABEL) - 1);
	return ret ? ret : uevm_hash_buffer(UEVM_HASH_SHA256, msg,
					    sizeof(msg), d);
}

int manifest_write(const struct manifest *m, const char *file,
		   const struct uevm_ctx *ctx, const struct uevm_signer *signer)
{
	uint8_t mac[UEVM_MANIFEST_MAC_SIZE], sig[UEVM_MAX_SIG_SIZE];
	struct sbuf b = { 0 };
	char *tmp = NULL;
	size_t len;
	int ret, fd = -1;

	ret = manifest_serialise(m, &b.p, &len);
	if (ret)
		return ret;
	b.len = b.cap = len;
	if (signer) {
		uint8_t d[MF_DIGEST];
		int n;

		ret = manifest_sig_digest(b.p, len, d);
		n = ret ? ret : uevm_sign_digest(signer, EVM_IMA_XATTR_DIGSIG, 2,
						UEVM_HASH_SHA256, d, sig);
		if (n < 0) {
			ret = fail(-n, "%s: cannot sign: %s", file, uevm_last_error());
			goto out;
		}
		sb_add(&b, MF_SIG, strlen(MF_SIG));
		sb_hex(&b, sig, (size_t)n);
	} else {
		ret = uevm_ctx_manifest_mac(ctx, b.p, len, mac);
		if (ret) {
			ret = fail(-ret, "%s: %s", file, uevm_last_error());
			goto out;
		}
		sb_add(&b, MF_HMAC, strlen(MF_HMAC));
		sb_hex(&b, mac, sizeof(mac));
	}
	sb_add(&b, "\n", 1);
	if (b.oom || asprintf(&tmp, "%s.tmpXXXXXX", file) < 0) {
		tmp = NULL;
		ret = fail(ENOMEM, "out of memory");
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = fail(errno, "%s: cannot create: %s", tmp, strerror(errno));
		goto out;
	}
	for (size_t off = 0; off < b.len;) {
		ssize_t w = write(fd, b.p + off, b.len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ret = fail(w < 0 ? errno : EIO, "%s: cannot write: %s",
				   tmp, strerror(w < 0 ? errno : EIO));
			goto out;
		}
		off += (size_t)w;
	}
	/* Nothing secret inside (xattr values are digests): readable. */
	if (fchmod(fd, 0644) || fsync(fd)) {
		ret = fail(errno, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd)) {
		fd = -1;
		ret = fail(errno, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, file))
		ret = fail(errno, "%s: cannot rename into place: %s", file,
			   strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	if (ret && tmp)
		unlink(tmp);
	free(tmp);
	free(b.p);
	return ret;
}

/* ---- parsing -------------------------------------------------------------- */

struct cursor {
	const char *p, *end;	/* one line, without its '\n' */
	size_t lineno;
};

/* The next space-separated token; false at the end of the line. */
static bool token(struct cursor *c, const char **t, size_t *n)
{
	const char *s;

	if (c->p >= c->end)
		return false;
	s = memchr(c->p, ' ', (size_t)(c->end - c->p));
	*t = c->p;
	*n = (size_t)((s ? s : c->end) - c->p);
	c->p = s ? s + 1 : c->end;
	/* A separator must be followed by a token. */
	return *n > 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode an escaped token of N bytes, canonical form only. */
static char *unescape(const char *t, size_t n)
{
	char *s = malloc(n + 1), *o = s;

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t[i];
		int hi, lo;

		if (c != '%') {
			if (!raw_ok(c))
				goto bad;
			*o++ = (char)c;
			continue;
		}
		if (i + 2 >= n)
			goto bad;
		hi = hexval(t[i + 1]);
		lo = hexval(t[i + 2]);
		if (hi < 0 || lo < 0)
			goto bad;
		c = (unsigned char)(hi << 4 | lo);
		/* NUL never; a byte that could stand raw must. */
		if (!c || raw_ok(c))
			goto bad;
		*o++ = (char)c;
		i += 2;
	}
	*o = '\0';
	return s;
bad:
	free(s);
	return NULL;
}

static bool parse_u64(const char *t, size_t n, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	if (!n || n > 20 || (n > 1 && t[0] == '0'))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (t[i] < '0' || t[i] > '9')
			return false;
		if (x > (UINT64_MAX - (uint64_t)(t[i] - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(t[i] - '0');
	}
	if (x > max)
		return false;
	*v = x;
	return true;
}

static bool parse_hex(const char *t, size_t n, uint8_t *out, size_t len)
{
	if (n != 2 * len)
		return false;
	for (size_t i = 0; i < len; i++) {
		int v[2];

		for (int k = 0; k < 2; k++) {
			char c = t[2 * i + k];

			v[k] = c >= '0' && c <= '9' ? c - '0' :
			       c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
			if (v[k] < 0)
				return false;
		}
		out[i] = (uint8_t)(v[0] << 4 | v[1]);
	}
	return true;
}

static bool valid_path(const char *p)
{
	if (!strcmp(p, "."))
		return true;
	if (!*p || strlen(p) >= PATH_MAX)
		return false;
	for (const char *s = p;;) {
		size_t c = strcspn(s, "/");

		if (!c || (c == 1 && s[0] == '.') ||
		    (c == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += c;
		if (!*s)
			return true;
		s++;
	}
}

static bool has_prefix(const char *t, size_t n, const char *pfx, size_t *plen)
{
	*plen = strlen(pfx);
	return n > *plen && !memcmp(t, pfx, *plen);
}

#define BAD(msg) do { *why = (msg); goto bad; } while (0)

/* One entry line; on failure *WHY says what is wrong with it. */
static int parse_entry(struct cursor *c, struct mf_entry **out,
		       const char **why)
{
	struct mf_entry *e = calloc(1, sizeof(*e));
	const char *t;
	size_t n, pl;
	uint64_t v;
	int stage = 0;	/* optional fields: 1 rdev, 2 sha256, 3 target, 4 x */
	bool has_rdev = false;

	if (!e)
		return -ENOMEM;
	/* One space between tokens, none at the end. */
	if (c->end > c->p && c->end[-1] == ' ')
		BAD("a space at the end");
	if (!token(c, &t, &n) || n != 1 || t[0] != 'o')
		BAD("no 'o' at the start");
	if (!token(c, &t, &n) || !(e->path = unescape(t, n)) || !valid_path(e->path))
		BAD("a malformed path");
	if (!token(c, &t, &n) || n != 1 || !strchr("fdlcbps", t[0]))
		BAD("a malformed type");
	e->type = t[0];
	if (!token(c, &t, &n) || !parse_u64(t, n, UINT64_MAX, &e->ino))
		BAD("a malformed inode number");
	if (!token(c, &t, &n) || !parse_u64(t, n, UINT32_MAX, &v))
		BAD("a malformed generation");
	e->gen = (uint32_t)v;
	if (!token(c, &t, &n) || !parse_u64(t, n, UINT32_MAX, &v))
		BAD("a malformed uid");
	e->uid = (uint32_t)v;
	if (!token(c, &t, &n) || !parse_u64(t, n, UINT32_MAX, &v))
		BAD("a malformed gid");
	e->gid = (uint32_t)v;
	if (!token(c, &t, &n) || n != 4)
		BAD("a malformed mode");
	for (size_t i = 0; i < 4; i++) {
		if (t[i] < '0' || t[i] > '7')
			BAD("a malformed mode");
		e->mode = e->mode << 3 | (uint32_t)(t[i] - '0');
	}
	while (token(c, &t, &n)) {
		if (has_prefix(t, n, "rdev=", &pl) && stage < 1) {
			stage = 1;
			has_rdev = true;
			if (!parse_u64(t + pl, n - pl, UINT64_MAX, &e->rdev))
				BAD("a malformed rdev=");
		} else if (has_prefix(t, n, "sha256=", &pl) && stage < 2) {
			stage = 2;
			if (!parse_hex(t + pl, n - pl, e->sha, MF_DIGEST))
				BAD("a malformed sha256=");
			e->has_sha = true;
		} else if (has_prefix(t, n, "target=", &pl) && stage < 3) {
			stage = 3;
			if (!(e->target = unescape(t + pl, n - pl)) ||
			    !*e->target || strlen(e->target) >= PATH_MAX)
				BAD("a malformed target=");
		} else if (has_prefix(t, n, "x=", &pl)) {
			const char *colon = memchr(t, ':', n);
			struct mf_xattr *x;

			stage = 4;
			if (!colon || colon == t + pl)
				BAD("a malformed x=");
			x = realloc(e->x, (e->nx + 1) * sizeof(*x));
			if (!x)
				BAD("out of memory");
			e->x = x;
			x += e->nx;
			x->name = unescape(t + pl, (size_t)(colon - t) - pl);
			if (!x->name)
				BAD("a malformed x= name");
			e->nx++;
			if (strlen(x->name) > 255 ||
			    !parse_hex(colon + 1, (size_t)(t + n - colon - 1),
				       x->d, MF_DIGEST) ||
			    (e->nx > 1 && strcmp(x[-1].name, x->name) >= 0))
				BAD("a malformed or unsorted x=");
		} else {
			BAD("an unknown or misplaced field");
		}
	}
	/* Every token consumed (no empty one), the fields the type has. */
	if (c->p != c->end)
		BAD("an empty field");
	if ((e->type == 'c' || e->type == 'b') != has_rdev)
		BAD("rdev= missing or not for this type");
	if ((e->type == 'f') != e->has_sha || (e->type == 'l') != !!e->target)
		BAD("sha256= or target= missing or not for this type");
	*out = e;
	return 0;
bad:
	mf_entry_free(e);
	return -EINVAL;
}

int manifest_split(const uint8_t *buf, size_t len, size_t *body_len,
		   bool *is_sig, uint8_t **auth, size_t *auth_len)
{
	const char *s = (const char *)buf, *end = s + len, *last, *p;
	size_t ml = strlen(MF_MAGIC), n;

	*auth = NULL;

	if (len < ml || memcmp(s, MF_MAGIC, ml))
		return fail(EINVAL, "not a uevm manifest (version 1)");
	if (memchr(s, '\0', len))
		return fail(EINVAL, "a NUL byte");
	if (s[len - 1] != '\n')
		return fail(EINVAL, "cut short: no MAC or signature line at the end");
	/* The last line is the trailer. */
	for (last = end - 1; last > s && last[-1] != '\n'; last--)
		;
	if (last < s + ml)
		return fail(EINVAL, "no MAC or signature line");
	n = (size_t)(end - 1 - last);
	if (n > strlen(MF_HMAC) && !memcmp(last, MF_HMAC, strlen(MF_HMAC))) {
		*is_sig = false;
		p = last + strlen(MF_HMAC);
	} else if (n > strlen(MF_SIG) && !memcmp(last, MF_SIG, strlen(MF_SIG))) {
		*is_sig = true;
		p = last + strlen(MF_SIG);
	} else {
		return fail(EINVAL, "cut short: the last line is no MAC or signature line");
	}
	n = (size_t)(end - 1 - p);
	if (n % 2 || !n || n / 2 > UEVM_MAX_SIG_SIZE ||
	    (!*is_sig && n / 2 != UEVM_MANIFEST_MAC_SIZE))
		return fail(EINVAL, "the last line: a malformed %s",
			    *is_sig ? "signature" : "MAC");
	*auth_len = n / 2;
	*auth = malloc(*auth_len);
	if (!*auth)
		return fail(ENOMEM, "out of memory");
	if (!parse_hex(p, n, *auth, *auth_len)) {
		free(*auth);
		*auth = NULL;
		return fail(EINVAL, "a malformed %s", *is_sig ? "signature" : "MAC");
	}
	*body_len = (size_t)(last - s);
	return 0;
}

int manifest_parse(const uint8_t *buf, size_t len, struct manifest **out,
		   size_t *body_len, bool *is_sig, uint8_t **auth,
		   size_t *auth_len)
{
	const char *s = (const char *)buf, *last, *p;
	struct manifest *m;
	size_t lineno = 1, ml = strlen(MF_MAGIC);
	int ret;

	ret = manifest_split(buf, len, body_len, is_sig, auth, auth_len);
	if (ret)
		return ret;
	last = s + *body_len;
	m = manifest_new();
	if (!m) {
		ret = fail(ENOMEM, "out of memory");
		goto out;
	}
	for (p = s + ml; p < last; ) {
		const char *nl = memchr(p, '\n', (size_t)(last - p));
		struct cursor c = { p, nl, ++lineno };
		struct mf_entry *e;
		const char *why = "malformed";

		ret = parse_entry(&c, &e, &why);
		if (ret) {
			ret = fail(-ret, "line %zu: %s", lineno, why);
			goto out;
		}
		if (m->n && strcmp(m->e[m->n - 1]->path, e->path) >= 0) {
			mf_entry_free(e);
			ret = fail(EINVAL, "line %zu: out of order or repeated", lineno);
			goto out;
		}
		ret = push(m, e);
		if (ret) {
			mf_entry_free(e);
			goto out;
		}
		p = nl + 1;
	}
	m->complete = true;
	ret = manifest_index(m);
out:
	if (ret) {
		manifest_free(m);
		free(*auth);
		*auth = NULL;
		return ret;
	}
	*out = m;
	return 0;
}

static int read_all(const char *file, uint8_t **buf, size_t *len)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	struct stat st;
	uint8_t *b;
	size_t off = 0;

	if (fd < 0)
		return fail(errno, "%s: %s", file, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > MF_MAX_FILE) {
		close(fd);
		return fail(EINVAL, "%s: not a regular file of at most 1 GiB", file);
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		return fail(ENOMEM, "out of memory");
	}
	while (off < (size_t)st.st_size) {
		ssize_t r = read(fd, b + off, (size_t)st.st_size - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	close(fd);
	*buf = b;
	*len = off;
	return 0;
}

int manifest_load(const char *file, const struct uevm_ctx *ctx,
		  const struct uevm_certset *certs, struct manifest **out)
{
	uint8_t *buf = NULL, *auth = NULL, d[MF_DIGEST];
	struct manifest *m = NULL;
	size_t len = 0, body = 0, alen = 0;
	bool is_sig;
	int ret;

	ret = read_all(file, &buf, &len);
	if (ret)
		return ret;
	/* Only authenticated bytes reach the entry parser. */
	ret = manifest_split(buf, len, &body, &is_sig, &auth, &alen);
	if (ret) {
		char why[sizeof(mf_err)];

		snprintf(why, sizeof(why), "%s", mf_err);
		ret = fail(-ret, "%s: rejected: %s", file, why);
		goto out;
	}
	if (!is_sig) {
		ret = uevm_ctx_manifest_mac_check(ctx, buf, body, auth);
		if (ret == -ENOKEY)
			ret = fail(ENOKEY, "%s: authenticated by an HMAC: give "
				   "--hmac-key", file);
		else if (ret)
			ret = fail(-ret, "%s: rejected: %s", file, uevm_last_error());
	} else if (!certs || !uevm_certset_count(certs)) {
		ret = fail(ENOKEY, "%s: signed: give --cert", file);
	} else {
		ret = manifest_sig_digest(buf, body, d);
		if (!ret)
			ret = uevm_sig_verify(certs, auth, alen, d, sizeof(d));
		if (ret)
			ret = fail(-ret, "%s: rejected: its signature does not "
				   "verify (%s)", file, ret == -ENOKEY ?
				   "no certificate has its keyid" : uevm_last_error());
	}
	free(auth);
	auth = NULL;
	if (!ret && (ret = manifest_parse(buf, len, &m, &body, &is_sig, &auth,
					  &alen))) {
		char why[sizeof(mf_err)];

		/* Authentic but malformed: written by a broken tool. */
		snprintf(why, sizeof(why), "%s", mf_err);
		ret = fail(-ret, "%s: rejected: %s", file, why);
	}
out:
	free(buf);
	free(auth);
	if (ret) {
		manifest_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

/* ---- comparing ------------------------------------------------------------ */

static int add_change(struct mf_changes *c, const char *code,
		      const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int add_change(struct mf_changes *c, const char *code,
		      const char *fmt, ...)
{
	struct mf_change *v = realloc(c->v, (c->n + 1) * sizeof(*v));
	va_list ap;
	int r;

	if (!v)
		return -ENOMEM;
	c->v = v;
	va_start(ap, fmt);
	r = vasprintf(&v[c->n].detail, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	v[c->n++].code = code;
	return 0;
}

/* A name quoted in a change's detail, its backslashes doubled: details are
 * printed as text (fput_text) that leaves backslashes alone, so that a
 * name holding a backslash and an n must not read as one holding a
 * newline. */
static char *quote_name(const char *name)
{
	size_t n = strlen(name) + 1;
	char *q, *o;

	for (const char *p = name; *p; p++)
		n += *p == '\\';
	q = o = malloc(n);
	if (!q)
		return NULL;
	for (const char *p = name; *p; p++) {
		if (*p == '\\')
			*o++ = '\\';
		*o++ = *p;
	}
	*o = '\0';
	return q;
}

/* add_change() for a detail naming one object (NAME, quoted). */
static int add_change_name(struct mf_changes *c, const char *code,
			   const char *prefix, const char *name)
{
	char *q = quote_name(name);
	int ret = q ? add_change(c, code, "%s%s", prefix, q) : -ENOMEM;

	free(q);
	return ret;
}

static void short_hex(const uint8_t *d, char out[17])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < 8; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[16] = '\0';
}

static const struct mf_xattr *find_x(const struct mf_entry *e, const char *name)
{
	for (size_t i = 0; i < e->nx; i++)
		if (!strcmp(e->x[i].name, name))
			return &e->x[i];
	return NULL;
}

static bool is_acl(const char *name)
{
	return !strncmp(name, "system.posix_acl_", 17);
}

static const uint8_t *evm_of(const struct mf_entry *e)
{
	const struct mf_xattr *x = find_x(e, XATTR_NAME_EVM);

	return x ? x->d : NULL;
}

static int cmp_ino(const void *a, const void *b)
{
	const struct mf_entry *x = *(struct mf_entry *const *)a;
	const struct mf_entry *y = *(struct mf_entry *const *)b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int cmp_evm(const void *a, const void *b)
{
	return memcmp(evm_of(*(struct mf_entry *const *)a),
		      evm_of(*(struct mf_entry *const *)b), MF_DIGEST);
}

/* Built once, before the walk's threads read the manifest: "hard link
 * of" and "copied from" look-ups stay logarithmic on large trees. */
static int manifest_index(struct manifest *m)
{
	m->by_ino = malloc((m->n ? m->n : 1) * sizeof(*m->by_ino));
	m->by_evm = malloc((m->n ? m->n : 1) * sizeof(*m->by_evm));
	if (!m->by_ino || !m->by_evm)
		return fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < m->n; i++) {
		m->by_ino[i] = m->e[i];
		if (evm_of(m->e[i]))
			m->by_evm[m->nevm++] = m->e[i];
	}
	qsort(m->by_ino, m->n, sizeof(*m->by_ino), cmp_ino);
	qsort(m->by_evm, m->nevm, sizeof(*m->by_evm), cmp_evm);
	return 0;
}

/* The range of V[0..N) that compares equal to KEY under CMP. */
static size_t equal_range(struct mf_entry **v, size_t n, const void *key,
			  int (*cmp)(const void *, const void *), size_t *end)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp(&v[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (*end = lo; *end < n && !cmp(&v[*end], key); (*end)++)
		;
	return lo;
}

/* The labelled name of ALIAS's inode (manifest_finish). */
static const struct mf_entry *labelled_name(const struct manifest *m,
					    const struct mf_entry *alias)
{
	const struct mf_entry *k = alias;
	size_t i, end;

	for (i = equal_range(m->by_ino, m->n, &k, cmp_ino, &end); i < end; i++)
		if (!m->by_ino[i]->alias)
			return m->by_ino[i];
	return NULL;
}

/* The entry of REF other than SELF whose security.evm is D. */
static const struct mf_entry *evm_owner(const struct manifest *ref,
					const struct mf_entry *self,
					const struct mf_entry *cur,
					const uint8_t *d)
{
	struct mf_xattr kx = { .name = (char *)XATTR_NAME_EVM };
	struct mf_entry key = { .x = &kx, .nx = 1 }, *k = &key;
	size_t i, end;

	if (!ref || !ref->by_evm)
		return NULL;
	memcpy(kx.d, d, MF_DIGEST);
	for (i = equal_range(ref->by_evm, ref->nevm, &k, cmp_evm, &end);
	     i < end; i++) {
		const struct mf_entry *o = ref->by_evm[i];

		/* Hard links share one value, and an inode moved to another
		 * name keeps its own: neither is a copy. */
		if (o != self && (!self || o->ino != self->ino) &&
		    o->ino != cur->ino)
			return o;
	}
	return NULL;
}

/* The name an inode had in REF, other than SELF. */
static const struct mf_entry *ino_owner(const struct manifest *ref,
					const struct mf_entry *self,
					const struct mf_entry *cur)
{
	struct mf_entry key = { .ino = cur->ino }, *k = &key;
	size_t i, end;

	if (!ref || !ref->by_ino)
		return NULL;
	for (i = equal_range(ref->by_ino, ref->n, &k, cmp_ino, &end);
	     i < end; i++) {
		const struct mf_entry *o = ref->by_ino[i];

		if (o != self && o->gen == cur->gen && o->type == cur->type &&
		    o->type != 'd')
			return o;
	}
	return NULL;
}

/* One xattr's change: NAME in OLD and CUR (either may lack it). */
static int xattr_change(const struct manifest *ref, const struct mf_entry *old,
			const struct mf_entry *cur, const char *name,
			struct mf_changes *c)
{
	const struct mf_xattr *a = find_x(old, name), *b = find_x(cur, name);
	const struct mf_entry *from;
	bool acl = is_acl(name);
	const char *what = acl ? (strstr(name, "default") ? "default ACL" :
				  "ACL") : name;

	if (a && b && !memcmp(a->d, b->d, MF_DIGEST))
		return 0;
	if (b && !strcmp(name, XATTR_NAME_EVM) &&
	    (from = evm_owner(ref, old, cur, b->d)))
		return add_change_name(c, "evm-copied",
				       "security.evm copied from ", from->path);
	if (!a)
		return add_change(c, acl ? "acl-added" : "xattr-added",
				  "%s added", what);
	if (!b)
		return add_change(c, acl ? "acl-removed" : "xattr-removed",
				  "%s removed", what);
	return add_change(c, acl ? "acl-changed" : "xattr-changed",
			  "%s changed", what);
}

static int compare_xattrs(const struct manifest *ref, const struct mf_entry *old,
			  const struct mf_entry *cur, struct mf_changes *c)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < old->nx; i++)
		ret = xattr_change(ref, old, cur, old->x[i].name, c);
	for (size_t i = 0; !ret && i < cur->nx; i++)
		if (!find_x(old, cur->x[i].name))
			ret = xattr_change(ref, old, cur, cur->x[i].name, c);
	return ret;
}

static int compare_new(const struct manifest *ref, const struct mf_entry *cur,
		       struct mf_changes *c)
{
	const struct mf_xattr *x = find_x(cur, XATTR_NAME_EVM);
	const struct mf_entry *from;
	int ret;

	ret = add_change(c, "new", "new, not in the manifest");
	if (!ret && (from = ino_owner(ref, NULL, cur)))
		ret = add_change_name(c, "hard-link", "hard link of ",
				      from->path);
	if (!ret && x && (from = evm_owner(ref, NULL, cur, x->d)))
		ret = add_change_name(c, "evm-copied",
				      "security.evm copied from ", from->path);
	return ret;
}

int manifest_compare(const struct manifest *ref, struct mf_entry *old,
		     const struct mf_entry *cur, struct mf_changes *c)
{
	char h1[17], h2[17];
	int ret = 0;

	c->v = NULL;
	c->n = 0;
	if (!old)
		ret = compare_new(ref, cur, c);
	else
		__atomic_store_n(&old->seen, true, __ATOMIC_RELAXED);
	if (!old)
		goto out;
	if (old->type != cur->type)
		ret = add_change(c, "type", "type %s → %s", type_word(old->type),
				 type_word(cur->type));
	if (!ret && old->ino != cur->ino) {
		const struct mf_entry *was = ino_owner(ref, old, cur);
		char *q = quote_name(was ? was->path : "");

		ret = q ? add_change(c, "inode", "replaced by another inode "
				     "(inode %" PRIu64 " → %" PRIu64 "%s%s)",
				     old->ino, cur->ino, was ? ", was " : "",
				     q) : -ENOMEM;
		free(q);
	}
	else if (!ret && old->gen != cur->gen)
		ret = add_change(c, "inode", "replaced by another inode "
				 "(generation %" PRIu32 " → %" PRIu32 ")",
				 old->gen, cur->gen);
	if (!ret && old->uid != cur->uid)
		ret = add_change(c, "owner", "owner %" PRIu32 " → %" PRIu32,
				 old->uid, cur->uid);
	if (!ret && old->gid != cur->gid)
		ret = add_change(c, "group", "group %" PRIu32 " → %" PRIu32,
				 old->gid, cur->gid);
	if (!ret && old->mode != cur->mode)
		ret = add_change(c, "mode", "mode %04o → %04o", old->mode, cur->mode);
	if (!ret && old->type == cur->type && old->rdev != cur->rdev)
		ret = add_change(c, "rdev", "device %u:%u → %u:%u",
				 major(old->rdev), minor(old->rdev),
				 major(cur->rdev), minor(cur->rdev));
	if (!ret && old->has_sha && cur->has_sha &&
	    memcmp(old->sha, cur->sha, MF_DIGEST)) {
		short_hex(old->sha, h1);
		short_hex(cur->sha, h2);
		ret = add_change(c, "content", "content changed (sha256 %s → %s)",
				 h1, h2);
	}
	if (!ret && old->target && cur->target && strcmp(old->target, cur->target))
	{
		char *q1 = quote_name(old->target), *q2 = quote_name(cur->target);

		ret = q1 && q2 ? add_change(c, "symlink-target",
					    "symlink target '%s' → '%s'",
					    q1, q2) : -ENOMEM;
		free(q1);
		free(q2);
	}
	if (!ret)
		ret = compare_xattrs(ref, old, cur, c);
out:
	if (ret) {
		mf_changes_free(c);
		return fail(ENOMEM, "out of memory");
	}
	return 0;
}

int manifest_deleted(const struct mf_entry *old, struct mf_changes *c)
{
	(void)old;
	c->v = NULL;
	c->n = 0;
	if (add_change(c, "deleted", "deleted")) {
		mf_changes_free(c);
		return fail(ENOMEM, "out of memory");
	}
	return 0;
}

/* ---- the front-ends' hooks ------------------------------------------------ */

int manifest_add_file(struct manifest *m, const struct uevm_ctx *ctx,
		      const struct uevm_file *f, const char *rel, bool alias)
{
	struct mf_entry *e;
	int ret;

	if (alias)
		return manifest_add_alias(m, rel, &f->st);
	ret = mf_entry_from_file(ctx, f, rel, &e);
	return ret ? ret : manifest_add(m, e);
}

int manifest_check_file(struct manifest *m, const struct uevm_ctx *ctx,
			const struct uevm_file *f, const char *rel,
			struct mf_changes *c)
{
	struct mf_entry *cur, *old = manifest_find(m, rel);
	int ret;

	c->v = NULL;
	c->n = 0;
	if (old)
		__atomic_store_n(&old->seen, true, __ATOMIC_RELAXED);
	if (!f)
		return 0;	/* could not be opened: not deleted either */
	ret = mf_entry_from_file(ctx, f, rel, &cur);
	if (ret)
		return ret;
	ret = manifest_compare(m, old, cur, c);
	mf_entry_free(cur);
	return ret;
}

bool manifest_entry_seen(const struct mf_entry *e)
{
	return __atomic_load_n(&e->seen, __ATOMIC_RELAXED);
}
