/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The evmctl-compatible command line: state shared by its files.  The
 * messages, their streams (results on stdout, log lines on stderr at
 * evmctl's default level LOG_INFO) and the exit codes follow ima-evm-utils'
 * evmctl 1.6; the values written follow the kernel.
 */
#ifndef UEVM_EVMCTL_H
#define UEVM_EVMCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "prog.h"
#include "uevm_internal.h"

/* syslog levels, as evmctl's imaevm_params.verbose counts them */
#define EV_LOG_ERR 3
#define EV_LOG_INFO 6
#define EV_LOG_DEBUG 7

#define EV_DEFAULT_KEY "/etc/keys/privkey_evm.pem"
#define EV_DEFAULT_CERT "/etc/keys/x509_evm.der"
#define EV_DEFAULT_HMAC_KEY "/etc/keys/evm-key-plain"
#define EV_MAX_SIG 1024		/* evmctl's MAX_SIGNATURE_SIZE */
#define EV_NUM_PCRS 24

struct ev_command;

struct evmctl {
	int verbose;
	bool xattr;		/* write xattrs (-n clears) */
	bool sigdump;
	bool digest, digsig, sigfile;
	bool recursive;
	bool check_xattr;	/* -t x */
	bool portable, immutable;
	bool veritysig, hwtpm, verify_list_sig, ignore_violations;
	bool smack;
	bool sigv1;		/* --rsa: deprecated, refused */
	bool no_uuid;
	bool caps_set;
	int msize;		/* 0, 32, 64 */
	dev_t fs_dev;
	const char *uuid_str, *ino_str, *uid_str, *gid_str, *mode_str;
	const char *generation_str, *caps_str, *ima_str, *selinux_str;
	const char *search_type;
	const char *hash_algo;
	const char *keypass, *keyfile, *hmackeyfile;
	const char *xattr_ima, *xattr_evm;
	const char *pcrfile[2];
	int npcrfile;
	const char *verify_bank;
	uint32_t keyid;
	/* "errno" as evmctl would have left it, printed on failure */
	int err_no;
	/* argument vector, as evmctl's g_argv/optind */
	char **argv;
	int argc, optind;
	/* loaded once: the signing key and its file */
	struct uevm_signer *signer;
	const char *signer_path;
	struct uevm_ctx *ctx;	/* the kernel's protected list, no key */
	/* What serves pkcs11: key URIs: an OpenSSL engine (ENGINE *) or a
	 * provider (then libuevm's OSSL_STORE path). */
	void *engine;
	bool provider;
};

extern struct evmctl ev;

/* evmctl's logging: stderr, by level. */
void ev_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_err(...) ev_log(EV_LOG_ERR, __VA_ARGS__)
#define log_info(...) ev_log(EV_LOG_INFO, __VA_ARGS__)
#define log_debug(...) ev_log(EV_LOG_DEBUG, __VA_ARGS__)
/* Hex dump: to stderr at LEVEL (log_dump), or to stdout (imaevm_hexdump). */
void ev_log_dump(int level, const void *p, size_t len, bool newline);
void ev_hexdump(const void *p, size_t len);
/* "... (errno: %s)\n" and errno cleared: evmctl's log_errno_reset. */
void ev_log_errno_reset(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The queued OpenSSL errors, one "openssl: ..." line each. */
void ev_output_openssl_errors(void);

struct ev_command {
	const char *name;
	int (*func)(const struct ev_command *cmd);
	const char *arg;
	const char *msg;
};
void ev_print_usage(const struct ev_command *cmd);
const char *ev_next_arg(void);

/* evmctl's do_cmd: the first path, or a tree of it with -r. */
typedef int (*ev_file_fn)(int dirfd, const char *name);
int ev_do_cmd(const struct ev_command *cmd, ev_file_fn fn);

/* Hash algorithms by libimaevm's names: exact, lower case; -1 else. */
int ev_hash_algo(const char *name);
/* The name libimaevm gives a kernel id (OpenSSL's for streebog). */
const char *ev_hash_algo_ossl_name(int algo);
/* Whether OpenSSL hashes with NAME (any of its names): 0, or 1 after
 * evmctl's message for why not (with the OpenSSL errors if ERRORS). */
int ev_md_check(const char *name, bool errors);
/* The kernel id of an OpenSSL digest (EVP_get_digestbyname), or -1. */
struct evp_md_st;
int ev_md_algo(const struct evp_md_st *md);

/* Hash a file's content as ima_calc_hash2, with its messages.  Returns
 * the digest size, or <= 1 as evmctl's functions do on failure. */
int ev_calc_hash(int dirfd, const char *file, const char *algo_name,
		 uint8_t *hash);
/* Sign a digest as sign_hash_v2, with its messages; returns the value's
 * length without the type byte (as evmctl counts), or -1. */
int ev_sign_hash(const char *algo_name, const uint8_t *hash, int size,
		 uint8_t type, int version, uint8_t *sig);
/* The public keys as imaevm_init_public_keys, with its messages. */
int ev_init_public_keys(const char *keyfiles, struct uevm_certset **set);
/* imaevm_verify_hash's outcome: 0 good, 1 bad, -1 error. */
int ev_verify_hash(const struct uevm_certset *set, const char *file,
		   int algo, const uint8_t *hash, int size,
		   const uint8_t *sig, int siglen);

/* ima_verify_signature2: SIG over DIGEST (from a measurement list) or,
 * when DIGEST is NULL, over FILE's content. */
int ev_ima_verify_signature2(const struct uevm_certset *set, const char *file,
			     const uint8_t *sig, int len, const uint8_t *digest,
			     int digest_len);

/* The EVM data of FILE, with evmctl's overrides and messages: the
 * signature hash (HMAC_KEY NULL) or the HMAC (HMAC_KEY given).  ALGO -1
 * for the hash: ev.hash_algo has no kernel id, evmctl's messages for it. */
int ev_calc_evm(int dirfd, const char *file, int algo, bool hmac,
		const struct uevm_key *hmac_key, uint8_t *out);

/* evmctl_eventlog.c: "PCR-NN: <hex>" lines (sysfs or --pcrs files) and
 * the TPM 1.2 BIOS event log, from a stream or a buffer.  The PCR lines:
 * 0, or -1 for no line at all; the log: 0, or 1 on a bad event (as
 * evmctl's read_binary_bios_measurements). */
int ev_unhex_pcr(uint8_t *dst, const char *src, int count);
int ev_pcr_lines_read(FILE *fp, int size, uint8_t (*pcr)[UEVM_MAX_DIGEST_SIZE]);
int ev_pcr_lines_parse(const void *buf, size_t len, int size,
		       uint8_t (*pcr)[UEVM_MAX_DIGEST_SIZE]);
int ev_bios_log_read(FILE *fp, uint8_t (*pcr)[UEVM_MAX_DIGEST_SIZE]);
int ev_bios_log_parse(const void *buf, size_t len, uint8_t (*pcr)[UEVM_MAX_DIGEST_SIZE]);

/* evmctl_engine.c: an OpenSSL engine by id (NULL, with evmctl's
 * messages, when it cannot be had), and a signer from its key URI. */
void *ev_engine_setup(const char *id);
void ev_engine_release(void *engine);
int ev_engine_load_signer(void *engine, const char *uri, const char *pass,
			  struct uevm_signer **out);

int ev_cmd_hash_ima(const struct ev_command *cmd);
int ev_cmd_sign_ima(const struct ev_command *cmd);
int ev_cmd_sign_hash(const struct ev_command *cmd);
int ev_cmd_sign_evm(const struct ev_command *cmd);
int ev_cmd_verify_evm(const struct ev_command *cmd);
int ev_cmd_verify_ima(const struct ev_command *cmd);
int ev_cmd_setxattr_ima(const struct ev_command *cmd);
int ev_cmd_hmac_evm(const struct ev_command *cmd);
int ev_cmd_ima_fix(const struct ev_command *cmd);
int ev_cmd_ima_clear(const struct ev_command *cmd);
int ev_cmd_import(const struct ev_command *cmd);
int ev_cmd_ima_measurement(const struct ev_command *cmd);
int ev_cmd_ima_bootaggr(const struct ev_command *cmd);

#endif
