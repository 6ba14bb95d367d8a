// SPDX-License-Identifier: GPL-2.0-or-later
/* Option handling, messages and output escaping shared by the commands. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include "prog.h"
#include "keys.h"

const char *prog_name = "uevm";
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

void usage(const struct command *cmd, FILE *fp)
{
	fprintf(fp, "Usage: %s %s %s\n", prog_name, cmd->name, cmd->usage);
}

/* Messages quote paths and library errors (which may quote names or
 * values read from files): the whole text is escaped like a path. */
void error_msg(const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&out_lock);
	fprintf(stderr, "%s: ", prog_name);
	fput_text(stderr, n >= 0 ? msg : fmt);
	fputc('\n', stderr);
	pthread_mutex_unlock(&out_lock);
	if (n >= 0)
		free(msg);
}

void file_error(const char *path, const char *what, int err)
{
	const char *why = uevm_last_error();

	pthread_mutex_lock(&out_lock);
	fprintf(stderr, "%s: ", prog_name);
	fput_path(stderr, path);
	fputs(": ", stderr);
	fput_text(stderr, what);
	fputs(": ", stderr);
	fput_text(stderr, *why ? why : strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
	pthread_mutex_unlock(&out_lock);
}

void common_opts_init(struct common_opts *o)
{
	memset(o, 0, sizeof(*o));
	uevm_config_init(&o->cfg);
	uevm_walk_opts_init(&o->walk);
	/* A directory PATH alone is the directory object only with -d. */
	o->walk.refuse_dir_roots = true;
}

bool walk_opt(int c)
{
	return c == 'P' || c == 'd' || c == OPT_ROOT || c == OPT_EXCLUDE ||
	       c == OPT_EXCLUDE_FROM;
}

/* The --exclude globs, and the --exclude-from files' text they point
 * into: kept for the process's life, released at exit. */
static const char **excludes;
static size_t nexcludes;
static char **exclude_bufs;
static size_t nexclude_bufs;

static void excludes_free(void)
{
	for (size_t i = 0; i < nexclude_bufs; i++)
		free(exclude_bufs[i]);
	free(exclude_bufs);
	free(excludes);
}

static int exclude_add(struct common_opts *o, const char *glob)
{
	static bool registered;
	const char **n = realloc(excludes, sizeof(*n) * (nexcludes + 1));

	if (!registered && atexit(excludes_free) == 0)
		registered = true;
	if (!n) {
		error_msg("out of memory");
		return -1;
	}
	excludes = n;
	excludes[nexcludes++] = glob;
	o->walk.exclude = excludes;
	o->walk.nexclude = nexcludes;
	return 0;
}

/* One glob a line; lines starting with '#', and empty ones, ignored. */
static int exclude_from(struct common_opts *o, const char *path)
{
	char **bufs, *text, *line, *next;
	uint8_t *data;
	size_t len;
	int ret = read_file_all(path, 1 << 20, &data, &len);

	if (ret) {
		error_msg("--exclude-from %s: %s", path, ret == -EFBIG ?
			  "larger than 1 MiB" : strerror(-ret));
		return -1;
	}
	text = realloc(data, len + 1);
	bufs = realloc(exclude_bufs, sizeof(*bufs) * (nexclude_bufs + 1));
	if (bufs)
		exclude_bufs = bufs;
	if (!text || !bufs) {
		free(text ? text : (char *)data);
		error_msg("out of memory");
		return -1;
	}
	exclude_bufs[nexclude_bufs++] = text;
	text[len] = '\0';
	if (strlen(text) != len) {
		error_msg("--exclude-from %s: a NUL byte: not a list of globs", path);
		return -1;
	}
	for (line = text; line; line = next) {
		size_t n;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		n = strlen(line);
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		if (exclude_add(o, line))
			return -1;
	}
	return 0;
}

/* --root DIR: a directory that openat2() can resolve beneath. */
static int check_root(const char *dir)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT };
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC), t;

	if (fd < 0) {
		error_msg("--root %s: %s", dir, strerror(errno));
		return -1;
	}
	t = (int)syscall(SYS_openat2, fd, "/", &how, sizeof(how));
	if (t < 0) {
		error_msg("--root %s: %s", dir, errno == ENOSYS ?
			  "this kernel has no openat2() (Linux 5.6 or later), which resolving beneath a root needs" :
			  strerror(errno));
		close(fd);
		return -1;
	}
	close(t);
	close(fd);
	return 0;
}

void hex_encode(const uint8_t *in, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 15];
	}
	out[2 * len] = '\0';
}

int parse_uuid(const char *s, uint8_t out[16])
{
	int n = 0;

	for (const char *p = s; *p; p++) {
		unsigned int v;

		if (*p == '-')
			continue;
		if (n >= 16 || !p[1] || sscanf(p, "%2x", &v) != 1 ||
		    !strchr("0123456789abcdefABCDEF", p[0]) ||
		    !strchr("0123456789abcdefABCDEF", p[1]))
			return -1;
		out[n++] = (uint8_t)v;
		p++;
	}
	return n == 16 ? 0 : -1;
}

int common_opt(struct common_opts *o, int c, const char *arg)
{
	char *end;
	long v;

	switch (c) {
	case 'a':
		v = uevm_hash_algo_by_name(arg);
		if (v < 0 || !uevm_hash_algo_available((int)v)) {
			error_msg("hash algorithm '%s' is not supported here", arg);
			return -1;
		}
		o->cfg.hash_algo = (int)v;
		return 1;
	case 'r':
		o->walk.recursive = true;
		return 1;
	case 'x':
		o->walk.one_fs = true;
		return 1;
	case 'P':
		o->walk.no_dereference = true;
		return 1;
	case 'd':
		o->walk.refuse_dir_roots = false;
		return 1;
	case OPT_ROOT:
		if (check_root(arg))
			return -1;
		o->walk.root = arg;
		return 1;
	case OPT_EXCLUDE:
		return exclude_add(o, arg) ? -1 : 1;
	case OPT_EXCLUDE_FROM:
		return exclude_from(o, arg) ? -1 : 1;
	case 'j':
		v = strtol(arg, &end, 10);
		if (*end || v < 1 || v > 1024) {
			error_msg("-j needs a number of jobs from 1 to 1024, not '%s'", arg);
			return -1;
		}
		o->walk.jobs = (int)v;
		return 1;
	case 'v':
		o->verbose = true;
		return 1;
	case 'q':
		o->quiet = true;
		return 1;
	case 'k':
		o->key_spec = arg;
		return 1;
	case OPT_UUID:
		if (!strcmp(arg, "none")) {
			o->cfg.uuid_mode = UEVM_UUID_NONE;
		} else if (!strcmp(arg, "auto")) {
			o->cfg.uuid_mode = UEVM_UUID_AUTO;
		} else if (parse_uuid(arg, o->cfg.uuid) == 0) {
			o->cfg.uuid_mode = UEVM_UUID_FIXED;
		} else {
			error_msg("--uuid needs a UUID, 'auto' or 'none', not '%s'", arg);
			return -1;
		}
		return 1;
	case OPT_M32:
		o->cfg.m32 = true;
		return 1;
	case OPT_M64:
		o->cfg.m32 = false;
		return 1;
	case OPT_XATTR: {
		const char **n = realloc(o->extra_xattrs,
					 sizeof(char *) * (size_t)(o->nextra + 2));

		if (!n)
			return -1;
		o->extra_xattrs = n;
		n[o->nextra++] = arg;
		n[o->nextra] = NULL;
		o->cfg.extra_xattrs = n;
		return 1;
	}
	case OPT_JSON:
		o->json = true;
		return 1;
	case OPT_NDJSON:
		o->ndjson = true;
		return 1;
	}
	return 0;
}

int common_ctx(struct common_opts *o, bool needs_key, struct uevm_ctx **ctx)
{
	struct uevm_key *key = NULL;
	int ret;

	if (o->key_spec) {
		struct uevm_key_origin origin;
		struct uevm_key_load_opts lo;

		uevm_key_load_opts_init(&lo);
		/* The operator names the form (raw:FILE, tpm:FILE, ...): a
		 * plain path could be a protected key file an offline attacker
		 * replaced by raw bytes of their own (uevm-key(1)). */
		lo.need_form = true;
		lo.origin = &origin;
		ret = uevm_key_load_ex(o->key_spec, &lo, &key, NULL);
		if (ret) {
			error_msg("HMAC key: %s", uevm_last_error());
			goto fail;
		}
		/* Which keyring key was taken is news (the file a user named
		 * is not): with -v, on stderr, out of the results' way. */
		if (o->verbose && origin.form == UEVM_KEY_FORM_KEYRING)
			fprintf(stderr, "%s: HMAC key: %s\n", prog_name, origin.desc);
	} else if (needs_key) {
		error_msg("no HMAC key: give --hmac-key with its form: raw:FILE, "
			  "passphrase:FILE, tpm:FILE, kernel-blob:FILE,master=FILE "
			  "or keyring:NAME");
		ret = -EINVAL;
		goto fail;
	}
	ret = uevm_ctx_new(&o->cfg, key, ctx);
	if (ret) {
		uevm_key_free(key);
		error_msg("%s", uevm_last_error());
		goto fail;
	}
	return 0;
fail:
	/* The callers return at once on failure: release what they would
	 * have freed after the walk. */
	free(o->extra_xattrs);
	o->extra_xattrs = NULL;
	o->cfg.extra_xattrs = NULL;
	o->nextra = 0;
	return ret;
}

/* Length of a valid UTF-8 sequence at s, or 0: the shortest form only
 * (no C0/C1 leads, no E0 80..9F, no F0 80..8F), no surrogates (ED A0..BF)
 * and nothing above U+10FFFF (F4 90.., F5..FF), as RFC 3629 says. */
static int utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

bool str_is_utf8(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		int n = utf8_len(s);

		if (!n)
			return false;
		s += n;
	}
	return true;
}

/* A valid UTF-8 sequence a terminal may still act on: the C1 controls
 * U+0080..U+009F (U+009B is CSI), the bidirectional embeddings and
 * overrides U+202A..U+202E and isolates U+2066..U+2069, which reorder
 * what is shown, and the line and paragraph separators U+2028/U+2029.
 * Returns the code point, or 0 for an ordinary character. */
static unsigned int utf8_control(const unsigned char *s, int n)
{
	unsigned int cp;

	if (n == 2 && s[0] == 0xc2 && s[1] <= 0x9f)
		return s[1];
	if (n != 3 || s[0] != 0xe2)
		return 0;
	cp = 0x2000u | ((unsigned int)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
	if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	    cp == 0x2028 || cp == 0x2029)
		return cp;
	return 0;
}

/* BACKSLASH: double backslashes too, so that a path reads back exactly;
 * messages keep theirs (the library escapes data it quotes that way). */
static void fput_escaped(FILE *fp, const char *str, bool backslash)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		int n = utf8_len(s);

		if (n == 1 && *s >= 0x20 && *s != 0x7f && (*s != '\\' || !backslash)) {
			fputc(*s++, fp);
		} else if (n > 1 && utf8_control(s, n)) {
			fprintf(fp, "\\u%04x", utf8_control(s, n));
			s += n;
		} else if (n > 1) {
			fwrite(s, 1, (size_t)n, fp);
			s += n;
		} else if (*s == '\\') {
			fputs("\\\\", fp);
			s++;
		} else if (*s == '\n') {
			fputs("\\n", fp);
			s++;
		} else if (*s == '\t') {
			fputs("\\t", fp);
			s++;
		} else if (*s == '\r') {
			fputs("\\r", fp);
			s++;
		} else {
			fprintf(fp, "\\x%02x", *s++);
		}
	}
}

void fput_path(FILE *fp, const char *path)
{
	fput_escaped(fp, path, true);
}

void fput_text(FILE *fp, const char *text)
{
	fput_escaped(fp, text, false);
}

void fput_json_string(FILE *fp, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', fp);
	while (*s) {
		int n = utf8_len(s);

		if (n > 1 && utf8_control(s, n)) {
			/* Valid JSON raw, but not for a terminal showing it. */
			fprintf(fp, "\\u%04x", utf8_control(s, n));
			s += n;
		} else if (n > 1) {
			fwrite(s, 1, (size_t)n, fp);
			s += n;
		} else if (n == 1 && *s == '"') {
			fputs("\\\"", fp);
			s++;
		} else if (n == 1 && *s == '\\') {
			fputs("\\\\", fp);
			s++;
		} else if (n == 1 && *s >= 0x20 && *s != 0x7f) {
			fputc(*s++, fp);
		} else if (n == 1) {
			fprintf(fp, "\\u%04x", *s++);
		} else {
			/* Not UTF-8: U+FFFD, so that strict parsers take
			 * it; the exact bytes go elsewhere (path_b64). */
			fputs("\\ufffd", fp);
			s++;
		}
	}
	fputc('"', fp);
}

static pthread_t progress_thread;
static volatile int progress_run;

static void *progress_main(void *arg)
{
	struct progress *p = arg;
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (progress_run) {
		double secs;

		usleep(200000);
		clock_gettime(CLOCK_MONOTONIC, &now);
		secs = (double)(now.tv_sec - t0.tv_sec) +
		       (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
		pthread_mutex_lock(&out_lock);
		fprintf(stderr, "\r%s: %lu files, %.1f MB, %.1f s\033[K", p->verb,
			atomic_load(&p->files),
			(double)atomic_load(&p->bytes) / 1e6, secs);
		fflush(stderr);
		pthread_mutex_unlock(&out_lock);
	}
	return NULL;
}

void progress_start(struct progress *p, const char *verb)
{
	atomic_init(&p->files, 0);
	atomic_init(&p->bytes, 0);
	p->verb = verb;
	p->active = 0;
	if (!isatty(STDERR_FILENO))
		return;
	progress_run = 1;
	if (pthread_create(&progress_thread, NULL, progress_main, p) == 0)
		p->active = 1;
}

void progress_stop(struct progress *p)
{
	if (!p->active)
		return;
	progress_run = 0;
	pthread_join(progress_thread, NULL);
	fprintf(stderr, "\r\033[K");
	p->active = 0;
}

void out_lock_acquire(void)
{
	pthread_mutex_lock(&out_lock);
}

void out_lock_release(void)
{
	pthread_mutex_unlock(&out_lock);
}

void progress_clear_line(void)
{
	if (progress_run)
		fputs("\r\033[K", stderr);
}

/* Read a whole file ("-": standard input) of at most MAX bytes. */
int read_file_all(const char *path, size_t max, uint8_t **out, size_t *len)
{
	size_t size = 0, cap = 0;
	uint8_t *buf = NULL;
	int fd, err = 0;

	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) :
		STDIN_FILENO;
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (size == cap) {
			uint8_t *nb;

			if (cap >= max) {
				err = -EFBIG;
				break;
			}
			cap = cap ? 2 * cap : 65536;
			nb = realloc(buf, cap);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
		}
		n = read(fd, buf + size, cap - size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		size += (size_t)n;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = size;
	return 0;
}
