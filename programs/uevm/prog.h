/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared pieces of the uevm command line. */
#ifndef UEVM_PROG_H
#define UEVM_PROG_H

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include "uevm_internal.h"
#include "help.h"

/* Exit codes: 0 success, 1 verification failed, 2 usage or operational error. */
#define EXIT_VERIFY_FAILED 1
#define EXIT_USAGE 2
#define EXIT_ERROR 2

struct command {
	const char *name;
	int (*func)(const struct command *cmd, int argc, char **argv);
	const char *summary;
	const char *usage;
};

extern const char *prog_name;

void usage(const struct command *cmd, FILE *fp);
void error_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "uevm: PATH: what: why" with PATH escaped. */
void file_error(const char *path, const char *what, int err);

/* Options shared by the commands that compute labels. */
struct common_opts {
	struct uevm_config cfg;
	const char *key_spec;
	const char **extra_xattrs;
	int nextra;
	struct uevm_walk_opts walk;
	bool verbose;
	bool quiet;		/* -q: failures and errors only */
	bool json;
	bool ndjson;		/* --ndjson: one object a line, unsorted */
};
void common_opts_init(struct common_opts *o);
/* Handle one option shared by several commands; returns 1 if handled,
 * 0 if not one of them, -1 on a bad argument (message printed). */
int common_opt(struct common_opts *o, int c, const char *arg);
/* Build the context; needs_key says whether a missing key is an error. */
int common_ctx(struct common_opts *o, bool needs_key, struct uevm_ctx **ctx);

/* The long options common_opt understands, and its short letters. */
#define COMMON_SHORT "a:rxj:vqk:"
enum {
	OPT_HMAC_KEY = 1000, OPT_UUID, OPT_M32, OPT_M64, OPT_XATTR, OPT_JSON,
	OPT_HELP, OPT_NDJSON, OPT_FIRST_CMD,
};
#define COMMON_LONG \
	{ "hash-algo", required_argument, NULL, 'a' }, \
	{ "recursive", no_argument, NULL, 'r' }, \
	{ "one-file-system", no_argument, NULL, 'x' }, \
	{ "jobs", required_argument, NULL, 'j' }, \
	{ "verbose", no_argument, NULL, 'v' }, \
	{ "hmac-key", required_argument, NULL, 'k' }, \
	{ "uuid", required_argument, NULL, OPT_UUID }, \
	{ "m32", no_argument, NULL, OPT_M32 }, \
	{ "m64", no_argument, NULL, OPT_M64 }, \
	{ "evm-xattr", required_argument, NULL, OPT_XATTR }, \
	{ "json", no_argument, NULL, OPT_JSON }, \
	{ "ndjson", no_argument, NULL, OPT_NDJSON }, \
	{ "quiet", no_argument, NULL, 'q' }, \
	{ "help", no_argument, NULL, OPT_HELP }

/* How label, verify, clear and sign take their PATHs (common_opt handles
 * these too): -P, -d, --root, --exclude, --exclude-from. */
#define WALK_SHORT "Pd"
enum { OPT_ROOT = 1300, OPT_EXCLUDE, OPT_EXCLUDE_FROM };	/* cmd_sign.c: 1200.. */
#define WALK_LONG \
	{ "no-dereference", no_argument, NULL, 'P' }, \
	{ "directory", no_argument, NULL, 'd' }, \
	{ "root", required_argument, NULL, OPT_ROOT }, \
	{ "exclude", required_argument, NULL, OPT_EXCLUDE }, \
	{ "exclude-from", required_argument, NULL, OPT_EXCLUDE_FROM }
/* True for the options above. */
bool walk_opt(int c);

/* 0 if the process may write security.* xattrs (CAP_SYS_ADMIN); else
 * -1 after one line saying so: better than one EPERM per object
 * (programs/privs.c).  WHAT: "writing", "removing". */
int need_cap_sys_admin(const char *name, const char *what);
/* uevm_walk; a recursive one in a thread whose mount namespace has every
 * mount nodev, where the process may make one (programs/privs.c). */
int walk_tree(const char *const *paths, size_t npaths,
	       const struct uevm_walk_opts *opts, uevm_walk_fn fn, void *arg);
int parse_uuid(const char *s, uint8_t out[16]);
/* A whole file ("-": stdin) of at most MAX bytes; -EFBIG beyond. */
int read_file_all(const char *path, size_t max, uint8_t **out, size_t *len);
void hex_encode(const uint8_t *in, size_t len, char *out);

/* Print a path with control characters, backslashes and invalid UTF-8
 * escaped, so that names cannot forge output lines. */
void fput_path(FILE *fp, const char *path);
/* The same for a message that may quote names or file data (its
 * backslashes are kept). */
void fput_text(FILE *fp, const char *text);
/* Print a JSON string literal: always valid UTF-8, bytes that are not
 * UTF-8 replaced by U+FFFD (report_json_bytes keeps the exact bytes). */
void fput_json_string(FILE *fp, const char *s);
/* True when S is valid UTF-8 (RFC 3629: shortest forms, no surrogates,
 * nothing above U+10FFFF). */
bool str_is_utf8(const char *s);

/* A progress line on stderr, only when stderr is a terminal. */
struct progress {
	atomic_ulong files;
	atomic_ulong bytes;
	const char *verb;
	int active;
};
void progress_start(struct progress *p, const char *verb);
void progress_stop(struct progress *p);

/* Serialise result lines between worker threads. */
void out_lock_acquire(void);
void out_lock_release(void);
/* Clear the progress line before printing a result line. */
void progress_clear_line(void);

int cmd_label(const struct command *, int, char **);
int cmd_verify(const struct command *, int, char **);
int cmd_diff(const struct command *, int, char **);
int cmd_hmac(const struct command *, int, char **);
int cmd_ima_hash(const struct command *, int, char **);
int cmd_clear(const struct command *, int, char **);
int cmd_key(const struct command *, int, char **);
int cmd_policy(const struct command *, int, char **);
int cmd_sign(const struct command *, int, char **);
int cmd_evmctl(const struct command *, int, char **);
int cmd_measurements(const struct command *, int, char **);
int cmd_mount(const struct command *, int, char **);
/* Keylime runtime policies (programs/uevm/cmd_runtime_policy.c). */
int cmd_runtime_policy(const struct command *, int, char **);
/* uevmd's control socket (programs/cmd_uevmd.c). */
int cmd_status(const struct command *, int, char **);
int cmd_enable(const struct command *, int, char **);
int uevmd_policy_load(int argc, char **argv);
int uevmd_measurements(const struct command *, int, char **);

/* Signatures in `uevm verify` (programs/sig_opts.c). */
enum { OPT_SIG_CERT = 1100, OPT_SIG_IMASIG, OPT_SIG_FIX_EVM, OPT_SIG_WEAK };
#define SIG_VERIFY_LONG \
	{ "cert", required_argument, NULL, OPT_SIG_CERT }, \
	{ "allow-weak-keys", no_argument, NULL, OPT_SIG_WEAK }, \
	{ "imasig", no_argument, NULL, OPT_SIG_IMASIG }, \
	{ "fix-evm-sig", no_argument, NULL, OPT_SIG_FIX_EVM }
struct sig_verify_opts {
	const char **certs;
	int ncerts;
	unsigned int flags;
};
struct uevm_ctx;
int sig_verify_opt(struct sig_verify_opts *so, int c, const char *arg);
int sig_verify_apply(struct sig_verify_opts *so, struct uevm_ctx *ctx);
void sig_verify_opts_free(struct sig_verify_opts *so);
/* The evmctl-compatible command line (argv[0] "evmctl", or `uevm evmctl`). */
int evmctl_main(int argc, char **argv);

#endif
