/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers shared by libuevm's files. */
#ifndef UEVM_LIB_PRIVATE_H
#define UEVM_LIB_PRIVATE_H

#include <errno.h>
#include <stdarg.h>
#include <openssl/evp.h>
#include "uevm_internal.h"

#define UEVM_EXPORT __attribute__((visibility("default")))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Record why the current call failed; returns -err so callers can write
 * "return uevm_err(EINVAL, ...)". */
int uevm_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* uevm_file_openat's second half: F from FD, an O_PATH descriptor of the
 * object already resolved (taken over, closed on failure).  DIRFD and
 * NAME are its parent and name when known (-1 and NULL otherwise). */
int file_open_fd(struct uevm_file *f, int fd, int dirfd, const char *name,
		 const char *display_path);
/* The calling thread's fd directory in /proc, for reopening an fd by its
 * magic link.  Not /proc/self/fd: that is the main thread's table, and a
 * thread with a table of its own (unshare(CLONE_FILES)) would reopen
 * whatever the main thread holds at that number. */
#define PROC_FDS "/proc/thread-self/fd"

/* uevm_file_openat and file_open_fd, with PROCFD an open PROC_FDS
 * directory (or -1) for the reopen: the walk keeps one for its run. */
int file_openat_via(struct uevm_file *f, int dirfd, const char *name,
		    const char *display_path, int procfd);
int file_open_fd_via(struct uevm_file *f, int fd, int dirfd, const char *name,
		     const char *display_path, int procfd);

/* Whether FD's mount is nodev: there the kernel refuses to open any device
 * node (may_open fails EACCES before the driver is reached).  False when
 * it cannot be told. */
bool fd_on_nodev_mount(int fd);
/* NAME, listed by readdir as a regular file, opened for reading directly:
 * 0, or 1 when it is not one now (F unset: open it with uevm_file_openat). */
int file_open_listed_regular(struct uevm_file *f, int dirfd, const char *name,
			     const char *display_path);

/* A warning for the process's warning handler (uevm_set_warn_handler):
 * something was accepted, or skipped, that the user should know about. */
void uevm_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Files that key material or certificates are read from must be safe from
 * other users, checked on the open descriptor FD (so a symlink's final
 * target): owned by root or the caller's euid; for SECRET files not
 * readable or writable by group or others, for public ones (certificates)
 * not writable by them; and every directory from / down to the file owned
 * by root or the euid and not writable by group or others unless sticky.
 * PATH and WHAT ("key file", "certificate") name it in the message, which
 * says how to fix it.  Returns 0 or a negative errno; with
 * UEVM_FILE_CHECKS_WARN a failed check is a warning and 0 is returned.
 */
int uevm_check_file_safety(int fd, const char *path, const char *what,
			   bool secret);
/* PATH (symlinks followed) opened for reading if it is a regular file;
 * anything else (a FIFO, whose open would wait for a writer, a device,
 * whose open may act) is refused before it is opened for I/O.  WHAT names
 * it in messages.  A descriptor, or a negative errno. */
int uevm_open_regular(const char *path, const char *what);
/* Whether failed checks only warn (uevm_set_file_checks). */
bool uevm_file_checks_warn_only(void);

/* The OpenSSL digest for a kernel algorithm id (fetched once), or NULL. */
const EVP_MD *uevm_hash_md(int algo);

/* Secure memory for keys: locked, excluded from core dumps, zeroed on free. */
void *uevm_secure_alloc(size_t len);
void uevm_secure_free(void *p, size_t len);

/* The 128-byte padded key and the HMAC-SHA1 state derived from it. */
struct uevm_key {
	size_t len;
	uint8_t raw[UEVM_MAX_KEY_SIZE];	/* zero-padded, as the kernel's buffer */
	uint8_t ipad[64];		/* K' ^ 0x36, K' = SHA1(raw) */
	uint8_t opad[64];		/* K' ^ 0x5c */
};

/* Incremental HMAC with a loaded key. */
struct uevm_hmac {
	EVP_MD_CTX *md;
	const struct uevm_key *key;
};
int uevm_hmac_init(struct uevm_hmac *h, const struct uevm_key *key);
int uevm_hmac_update(struct uevm_hmac *h, const void *data, size_t len);
int uevm_hmac_final(struct uevm_hmac *h, uint8_t out[UEVM_HMAC_SIZE]);
void uevm_hmac_abort(struct uevm_hmac *h);

struct uevm_ctx {
	struct uevm_config cfg;
	struct uevm_key *key;
	const char **xattrs;	/* protected list, NULL-terminated */
	size_t nxattrs;
	struct uevm_certset *certs;	/* signature checks (lib/sig_*.c) */
	unsigned int flags;		/* UEVM_CTX_* of uevm/sig.h */
	struct evm_uuid_cache *uuid_cache;	/* or NULL: ask each file */
};
struct evm_uuid_cache;
void evm_uuid_cache_free(struct evm_uuid_cache *c);
/* The statfs f_type of F's filesystem: kept per filesystem when CTX caches
 * (uevm_ctx_cache_fsuuid), else asked; CTX may be NULL.  0 or -errno. */
int fs_magic_cached(const struct uevm_ctx *ctx, const struct uevm_file *f,
		    unsigned long *magic);

/* A digest collected from a file's content. */
struct ima_digest {
	int algo;		/* -1: none yet */
	uint8_t d[UEVM_MAX_DIGEST_SIZE];
	/* ima_appraise_value, ima_appraise_digsig: a stat of the file from
	 * before the checks, to hash against (its content must not move
	 * from it), or NULL for a new one. */
	const struct stat *before;
};

/* ima_appraise_value flags (the kernel's IMA_DIGSIG_REQUIRED value). */
#define IMA_APPRAISE_DIGSIG_REQUIRED 0x01000000

/* Appraise security.ima (BUF, N) of F given v->evm_status; see
 * ima_appraise.c.  Fills v->status, ima_status, cause and detail. */
int ima_appraise_value(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       const uint8_t *buf, size_t n, unsigned int flags,
		       struct ima_digest *dig, struct uevm_verdict *v);
/* Hash F's content with ALGO; -ESTALE if it changed meanwhile. */
int ima_collect_stable(const struct uevm_file *f, int algo, uint8_t *digest);
/* The same, also giving the stamp (fstat) the content was hashed at. */
int ima_collect_stable_stat(const struct uevm_file *f, int algo,
			    uint8_t *digest, struct stat *hashed);
/* The same, with BEFORE (a stat taken before hashing) instead of a new
 * fstat when not NULL. */
int ima_collect_stable_from(const struct uevm_file *f, int algo,
			    uint8_t *digest, const struct stat *before,
			    struct stat *hashed);
/* Write security.ima = VAL (LEN) and its security.evm HMAC, the file left
 * as it was if security.evm cannot be written (ima_label_write.c). */
int ima_write_labels(const struct uevm_ctx *ctx, const struct uevm_file *f,
		     const uint8_t *val, size_t len);
/* The same for VAL hashed from content with the stamp BEFORE (a stat taken
 * before hashing): once the xattrs are read, a fresh fstat must show the
 * same size, mtime and ctime, else 1 (nothing written: hash again, with
 * *NOW as the next BEFORE).  That fstat gives the HMAC's metadata. */
int ima_write_labels_checked(const struct uevm_ctx *ctx,
			     const struct uevm_file *f, const uint8_t *val,
			     size_t len, const struct stat *before,
			     struct stat *now);
/* The hash algorithm of a digest or signature in value BUF (N > 0) of
 * security.ima (IMA true) or security.evm, or -1 (an HMAC, or a value
 * that does not parse); the thread's last error is left as it was. */
int xattr_value_algo(bool ima, const uint8_t *buf, size_t n);
/* Whether A and B, two stats of one file, show the same content stamp. */
bool ima_same_content_stamp(const struct stat *a, const struct stat *b);
/* uevm_hash_fd knowing the size SIZE the file had just before (or -1):
 * a short read that reaches it is the end, without a read of 0 bytes. */
int hash_fd_sized(int fd, int algo, off_t size, uint8_t *digest);
/* What a filesystem without security.* xattrs (ramfs, some FUSE and network
 * filesystems) makes of every label: the cause, not a hint at --uuid. */
#define XATTR_UNSUPPORTED "the filesystem does not support security.* extended attributes"
/* 0, or -EOPNOTSUPP with that message when F's filesystem has no
 * security.* xattrs at all (xattr.c). */
int xattr_check_support(const struct uevm_file *f);

/* The names of F's xattrs, from one listxattr (xattr.c): a name that is
 * not listed is not there, so that it costs no getxattr to find out.
 * Only on filesystems known to list all they hold (ext*, xfs, btrfs,
 * tmpfs, f2fs); elsewhere, or if the listing fails in any way, len < 0. */
struct xattr_names {
	ssize_t len;		/* bytes of names, or -errno: unknown, ask each */
	char *names;		/* small or heap */
	char *heap;
	char small[1024];
};
void xattr_names_load(const struct uevm_ctx *ctx, const struct uevm_file *f,
		      struct xattr_names *l);
void xattr_names_free(struct xattr_names *l);
/* 1 listed, 0 not, -1 the listing failed: ask with getxattr. */
int xattr_names_has(const struct xattr_names *l, const char *name);

/* Signatures (lib/sig_*.c).  The EVM data walk shared by the HMAC and
 * the signature hash: each protected value of F in list order (REQ_NAME's
 * replaced by REQ_VALUE, dropped when that is NULL) goes to UPDATE.
 * Returns how many were fed; *ima_present says if security.ima was. */
struct uevm_certset;
void uevm_certset_free(struct uevm_certset *set);
/* The Ith certificate of SET in DER (to free()); returns its length. */
int sig_certset_der(const struct uevm_certset *set, size_t i, uint8_t **out);
typedef int (*evm_update_fn)(void *arg, const void *data, size_t len);
int evm_collect_xattrs(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       const char *req_name, const uint8_t *req_value,
		       size_t req_len, evm_update_fn update, void *arg,
		       bool *ima_present);
int evm_collect_xattrs_listed(const struct uevm_ctx *ctx,
			      const struct uevm_file *f,
			      const struct xattr_names *names,
			      const char *req_name, const uint8_t *req_value,
			      size_t req_len, evm_update_fn update, void *arg,
			      bool *ima_present);
int evm_calc_hmac_with(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       const struct stat *st, const struct xattr_names *names,
		       const char *req_name, const uint8_t *req_value,
		       size_t req_len, uint8_t hmac[UEVM_HMAC_SIZE]);
/* uevm_evm_verify with REQ_NAME's value given (evm_main.c); ST: a stat of
 * F for the HMAC's metadata, or NULL for a fresh fstat; *EVM_ALGO (if not
 * NULL) gets xattr_value_algo of security.evm, -1 none, or stays. */
enum integrity_status evm_verify_with(const struct uevm_ctx *ctx,
				      const struct uevm_file *f,
				      const struct stat *st,
				      const char *req_name,
				      const uint8_t *req_value, size_t req_len,
				      char *detail, size_t detail_len,
				      int *evm_algo);
int evm_misc_from_stat(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       const struct stat *st, struct uevm_hmac_misc *misc);
/* evm_verify_hmac for a signature value (types 0x03, 0x05). */
enum integrity_status evm_verify_digsig(const struct uevm_ctx *ctx,
					const struct uevm_file *f,
					const uint8_t *val, size_t len,
					char *detail, size_t detail_len);
/* ima_appraise's EVM_IMA_XATTR_DIGSIG branch: hash F with the
 * signature's algorithm and check the signature; fills V. */
int ima_appraise_digsig(const struct uevm_ctx *ctx, const struct uevm_file *f,
			const uint8_t *val, size_t len,
			struct ima_digest *dig, struct uevm_verdict *v);

/* Constant-time comparison. */
int uevm_memneq(const void *a, const void *b, size_t n);

#endif
