/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libuevm - the Linux integrity subsystem (EVM, IMA appraisal) in userspace,
 * bit-compatible with the kernel's security.ima and security.evm formats.
 *
 * Conventions: functions return 0 (or a length) on success and a negative
 * errno on failure; a human-readable reason for the last failure of the
 * calling thread is available from uevm_last_error().
 *
 * ABI: every identifier here starts with uevm_ or UEVM_.  Structs that may
 * grow are either opaque (struct uevm_file, struct uevm_verdict, ...) or
 * begin with a `size_t size` that the matching *_init() function sets and
 * the library checks, so a program built against an older header keeps
 * working with a newer library.  Overview: uevm(3).
 */
#ifndef UEVM_UEVM_H
#define UEVM_UEVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UEVM_VERSION "0.2.0"

/* The version of the library in use (UEVM_VERSION of its build), which may
 * be newer than the header a program was built with. */
const char *uevm_version(void);

/* ---- errors --------------------------------------------------------- */

/* The reason for the calling thread's last failure ("" if none). */
const char *uevm_last_error(void);
/* Forget the calling thread's last failure reason. */
void uevm_clear_last_error(void);

/* Warnings: something accepted or skipped that the user should know of
 * (a keyring key of another owner, a key file evmctl mode takes although
 * it is unsafe).  By default one line "PROGRAM: warning: MSG" on stderr;
 * a daemon sends them to its log instead. */
typedef void (*uevm_warn_fn)(void *arg, const char *msg);
void uevm_set_warn_handler(uevm_warn_fn fn, void *arg);

/*
 * Files that hold key material (HMAC keys in every form, master keys,
 * passphrase files, private signing keys) are refused unless only their
 * owner, root or the caller, can read and replace them, directories above
 * included; certificates are refused when someone else can replace them.
 * evmctl's command line, which never checked, only warns.  Process-wide.
 */
enum uevm_file_checks {
	UEVM_FILE_CHECKS_REFUSE = 0,
	UEVM_FILE_CHECKS_WARN,
};
void uevm_set_file_checks(enum uevm_file_checks mode);

/* ---- integrity status: the kernel's enum integrity_status ----------- */

/* Same order and values as the kernel's enum integrity_status; a later
 * version may add values at the end. */
enum uevm_integrity_status {
	UEVM_INTEGRITY_PASS = 0,
	UEVM_INTEGRITY_PASS_IMMUTABLE,
	UEVM_INTEGRITY_FAIL,
	UEVM_INTEGRITY_FAIL_IMMUTABLE,
	UEVM_INTEGRITY_NOLABEL,
	UEVM_INTEGRITY_NOXATTRS,
	UEVM_INTEGRITY_UNKNOWN,
};

/* The kernel's audit spelling: "pass", "fail", "no_label", ...; "unknown"
 * for a value out of range. */
const char *uevm_integrity_status_name(enum uevm_integrity_status s);

/* ---- hash algorithms: the kernel's enum hash_algo ids --------------- */

enum uevm_hash_algo {
	UEVM_HASH_MD4 = 0,
	UEVM_HASH_MD5 = 1,
	UEVM_HASH_SHA1 = 2,
	UEVM_HASH_RMD160 = 3,
	UEVM_HASH_SHA256 = 4,
	UEVM_HASH_SHA384 = 5,
	UEVM_HASH_SHA512 = 6,
	UEVM_HASH_SHA224 = 7,
	UEVM_HASH_SM3_256 = 17,
	UEVM_HASH_STREEBOG_256 = 18,
	UEVM_HASH_STREEBOG_512 = 19,
	UEVM_HASH_ALGO__LAST = 23,
};
#define UEVM_MAX_DIGEST_SIZE 64

/* Kernel id for a name such as "sha256" (also "sm3", "streebog256"), or -EINVAL. */
int uevm_hash_algo_by_name(const char *name);
/* The kernel's name for an id, or NULL for an id the kernel does not define. */
const char *uevm_hash_algo_name(int algo);
/* Digest size in bytes, or 0 for an unknown id. */
unsigned int uevm_hash_algo_digest_size(int algo);
/* True when this build's OpenSSL can compute the algorithm. */
bool uevm_hash_algo_available(int algo);

/* Hash the contents of an open regular file.  Reads from offset 0 with
 * pread in large blocks; the file offset is not used. */
int uevm_hash_fd(int fd, int algo, uint8_t *digest);
int uevm_hash_buffer(int algo, const void *data, size_t len, uint8_t *digest);
/* Let another thread stop this thread's hashing: while FLAG (NULL: none)
 * is set, uevm_hash_fd in the calling thread fails with -ECANCELED at its
 * next block.  A front-end that gave up waiting for an answer frees the
 * thread this way; nothing incomplete is ever cached. */
void uevm_hash_cancel_on(const volatile int *flag);

/* ---- xattr value formats (the kernel's enum evm_ima_xattr_type) ---- */

/* The first byte of a security.ima / security.evm value. */
enum uevm_xattr_type {
	UEVM_IMA_XATTR_DIGEST = 0x01,
	UEVM_EVM_XATTR_HMAC = 0x02,
	UEVM_EVM_IMA_XATTR_DIGSIG = 0x03,
	UEVM_IMA_XATTR_DIGEST_NG = 0x04,
	UEVM_EVM_XATTR_PORTABLE_DIGSIG = 0x05,
	UEVM_IMA_VERITY_DIGSIG = 0x06,
};

#define UEVM_XATTR_IMA "security.ima"
#define UEVM_XATTR_EVM "security.evm"
#define UEVM_HMAC_SIZE 20
#define UEVM_EVM_HMAC_XATTR_SIZE (1 + UEVM_HMAC_SIZE)
#define UEVM_SIG_HDR_SIZE 9

/* A parsed security.ima or security.evm value; pointers alias the input.
 * Set SIZE with uevm_xattr_value_init() before parsing into it. */
struct uevm_xattr_value {
	size_t size;		/* sizeof(struct uevm_xattr_value) */
	uint8_t type;		/* enum uevm_xattr_type */
	int algo;		/* hash algorithm, -1 when the type has none */
	const uint8_t *digest;	/* digest or HMAC bytes (types 1, 2, 4) */
	size_t digest_len;
	/* signature types 3, 5, 6: the v2/v3 header fields */
	uint8_t sig_version;
	uint32_t keyid;
	const uint8_t *sig;
	size_t sig_len;
};

/* The *_init() functions are inline: they pass the size of the struct as
 * this header declares it, which the library then checks. */
void uevm_xattr_value_init_size(struct uevm_xattr_value *v, size_t size);
static inline void uevm_xattr_value_init(struct uevm_xattr_value *v)
{
	uevm_xattr_value_init_size(v, sizeof(*v));
}

/* Parse security.ima.  On a malformed value returns -EINVAL and
 * uevm_last_error() says what is wrong with it; -EINVAL also when
 * OUT->size is not one this library knows. */
int uevm_ima_xattr_parse(const uint8_t *val, size_t len,
			 struct uevm_xattr_value *out);
/* Parse security.evm likewise. */
int uevm_evm_xattr_parse(const uint8_t *val, size_t len,
			 struct uevm_xattr_value *out);
/* The security.ima value the kernel writes for a digest: 0x01 + digest for
 * SHA-1, 0x04 + algo + digest otherwise.  out needs 2 + digest size bytes.
 * Returns the value's length. */
int uevm_ima_xattr_format(int algo, const uint8_t *digest, uint8_t *out);

/* ---- file objects ---------------------------------------------------- */

/*
 * A file system object opened without following symlinks (opaque).
 * Regular files and directories get a descriptor that can read and ioctl;
 * other types (symlinks, devices, FIFOs, sockets) are only held by an
 * O_PATH descriptor and are never opened for I/O.
 */
struct uevm_file;

/* Open NAME relative to DIRFD (AT_FDCWD for a path).  Never follows a
 * symlink in the last component and never opens FIFOs or devices.
 * DISPLAY_PATH (NULL: NAME) names the file in messages only. */
int uevm_file_open(int dirfd, const char *name, const char *display_path,
		   struct uevm_file **out);
/* Close and free F (NULL is ignored). */
void uevm_file_free(struct uevm_file *f);
/* The descriptor (owned by F): O_RDONLY for regular files and
 * directories, O_PATH for other types. */
int uevm_file_fd(const struct uevm_file *f);
/* The type and permission bits (st_mode) seen at open. */
mode_t uevm_file_mode(const struct uevm_file *f);
/* The name given at open, for messages. */
const char *uevm_file_path(const struct uevm_file *f);
/* Inode generation as EVM hashes it (FS_IOC_GETVERSION; 0 on ENOTTY). */
int uevm_file_generation(const struct uevm_file *f, uint32_t *gen);
/* The filesystem UUID (FS_IOC_GETFSUUID), 16 bytes. */
int uevm_file_fsuuid(const struct uevm_file *f, uint8_t uuid[16]);

/* ---- fd-based xattr helpers (the seeds' vfs_getxattr_alloc) -------- */

/* Read an xattr of any size from a file object (see struct uevm_file);
 * *buf is (re)allocated to fit, *bufsize tracks its capacity.  Returns the
 * value length or a negative errno (-ENODATA when absent). */
ssize_t uevm_getxattr_alloc(const struct uevm_file *f, const char *name,
			    uint8_t **buf, size_t *bufsize);
/* 0 when the stored value equals (val, len), 1 when it differs or is
 * absent, negative errno on error (the seeds' vfs_xattr_cmp). */
int uevm_xattr_cmp(const struct uevm_file *f, const char *name,
		   const void *val, size_t len);
int uevm_setxattr(const struct uevm_file *f, const char *name,
		  const void *val, size_t len);
int uevm_removexattr(const struct uevm_file *f, const char *name);

/* ---- HMAC key -------------------------------------------------------- */

#define UEVM_MAX_KEY_SIZE 128

struct uevm_key;
/*
 * Load an HMAC key.  SPEC is a path to a file of 1..128 raw bytes (also
 * written raw:PATH), "keyring:DESCRIPTION" for a user key owned by the
 * caller or root on the session or user keyring, or a protected form named
 * as uevm/keys.h describes (passphrase:, tpm:, kernel-blob:).  The form is
 * never guessed from the file.  The key is kept in locked memory excluded
 * from core dumps.  A passphrase is asked for on the terminal.
 */
int uevm_key_load(const char *spec, struct uevm_key **out);
int uevm_key_from_bytes(const void *data, size_t len, struct uevm_key **out);
void uevm_key_free(struct uevm_key *key);
/* A short public fingerprint: the first 8 bytes of SHA-256 over the
 * 128-byte padded key, hex. Never reveals the key. */
void uevm_key_fingerprint(const struct uevm_key *key, char out[17]);

/* ---- the EVM HMAC ------------------------------------------------------ */

/* The inode metadata EVM binds into the HMAC (struct h_misc + fs UUID).
 * Filled by uevm_hmac_misc_from_file(), or set SIZE with
 * uevm_hmac_misc_init() before filling it in. */
struct uevm_hmac_misc {
	size_t size;		/* sizeof(struct uevm_hmac_misc) */
	uint64_t ino;
	uint32_t generation;
	uint32_t uid;
	uint32_t gid;
	uint16_t mode;		/* with the S_IFMT bits */
	bool m32;		/* 32-bit h_misc layout (20 bytes) */
	bool has_uuid;
	uint8_t uuid[16];
};

/* One protected xattr value, in list order. */
struct uevm_xattr_entry {
	const char *name;
	const uint8_t *value;
	size_t len;
};

/* Zero M and set its size. */
void uevm_hmac_misc_init_size(struct uevm_hmac_misc *m, size_t size);
static inline void uevm_hmac_misc_init(struct uevm_hmac_misc *m)
{
	uevm_hmac_misc_init_size(m, sizeof(*m));
}

/* Serialise struct h_misc as the kernel lays it out; returns its size
 * (0 when M->size is not one this library knows). */
size_t uevm_hmac_misc_encode(const struct uevm_hmac_misc *m, uint8_t out[24]);

/* HMAC-SHA1 over the given values (absent ones simply not passed) and
 * metadata, exactly as evm_calc_hmac_or_hash + hmac_add_misc. */
int uevm_evm_calc_hmac_values(const struct uevm_key *key,
			      const struct uevm_xattr_entry *xattrs,
			      size_t n, const struct uevm_hmac_misc *misc,
			      uint8_t hmac[UEVM_HMAC_SIZE]);

/* The kernel's default protected list, in order, NULL-terminated. */
const char *const *uevm_evm_default_xattrs(void);

/* ---- context: key, protected list, options ------------------------------ */

enum uevm_uuid_mode {
	UEVM_UUID_AUTO = 0,	/* FS_IOC_GETFSUUID of the file's fs */
	UEVM_UUID_NONE,		/* leave the UUID out (CONFIG_EVM_ATTR_FSUUID=n) */
	UEVM_UUID_FIXED,	/* a given UUID */
};

/* Set by uevm_config_init(), then changed as needed. */
struct uevm_config {
	size_t size;			/* sizeof(struct uevm_config) */
	int hash_algo;			/* for labelling; default sha256 */
	enum uevm_uuid_mode uuid_mode;
	uint8_t uuid[16];		/* for UEVM_UUID_FIXED */
	bool m32;			/* 32-bit h_misc */
	const char *const *extra_xattrs; /* appended to the list, NULL-ended */
};

struct uevm_ctx;
/* Defaults: sha256, the fs UUID of each file, 64-bit h_misc. */
void uevm_config_init_size(struct uevm_config *cfg, size_t size);
static inline void uevm_config_init(struct uevm_config *cfg)
{
	uevm_config_init_size(cfg, sizeof(*cfg));
}
/* The context takes ownership of KEY (may be NULL for hash-only work). */
int uevm_ctx_new(const struct uevm_config *cfg, struct uevm_key *key,
		 struct uevm_ctx **out);
void uevm_ctx_free(struct uevm_ctx *ctx);
/* The protected list in use, NULL-terminated. */
const char *const *uevm_ctx_xattrs(const struct uevm_ctx *ctx);
bool uevm_ctx_is_protected(const struct uevm_ctx *ctx, const char *name);
int uevm_ctx_hash_algo(const struct uevm_ctx *ctx);

/*
 * HMAC-SHA256 over a manifest of a labelled tree (uevm label --manifest),
 * under a key derived from the context's HMAC key for manifests only.
 * -ENOKEY when the context has no HMAC key.  _check compares in constant
 * time: 0 when MAC matches, -EBADMSG when not.
 */
#define UEVM_MANIFEST_MAC_SIZE 32
int uevm_ctx_manifest_mac(const struct uevm_ctx *ctx, const void *data,
			  size_t len, uint8_t out[UEVM_MANIFEST_MAC_SIZE]);
int uevm_ctx_manifest_mac_check(const struct uevm_ctx *ctx, const void *data,
				size_t len,
				const uint8_t mac[UEVM_MANIFEST_MAC_SIZE]);

/* Gather the metadata of F as EVM binds it. */
int uevm_hmac_misc_from_file(const struct uevm_ctx *ctx,
			     const struct uevm_file *f,
			     struct uevm_hmac_misc *misc);

/*
 * Compute the HMAC of a file.  When REQ_NAME is given, REQ_VALUE replaces
 * the stored value of that xattr (NULL value: treat it as removed), as the
 * kernel does during a setxattr.  Returns -ENODATA when the file has no
 * protected xattr at all (then it carries no security.evm).
 */
int uevm_evm_calc_hmac(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       const char *req_name, const uint8_t *req_value,
		       size_t req_len, uint8_t hmac[UEVM_HMAC_SIZE]);

/* Recompute and write security.evm (0x02 + HMAC), or remove it when no
 * protected xattr exists (the kernel's evm_update_evmxattr). */
int uevm_evm_update_evmxattr(const struct uevm_ctx *ctx,
			     const struct uevm_file *f);

/* ---- verification --------------------------------------------------------- */

/* The verdict for one file (opaque): allocate one and reuse it for any
 * number of uevm_verify_file() calls of one thread. */
struct uevm_verdict;
int uevm_verdict_new(struct uevm_verdict **out);
void uevm_verdict_free(struct uevm_verdict *v);
/* Overall, EVM's and IMA's status (IMA: UEVM_INTEGRITY_UNKNOWN for objects
 * that are not regular files). */
enum uevm_integrity_status uevm_verdict_status(const struct uevm_verdict *v);
enum uevm_integrity_status uevm_verdict_evm_status(const struct uevm_verdict *v);
enum uevm_integrity_status uevm_verdict_ima_status(const struct uevm_verdict *v);
/* The kernel's cause string ("invalid-hash", ...), NULL on a pass. */
const char *uevm_verdict_cause(const struct uevm_verdict *v);
/* Why, in words; "" when there is nothing to add.  Valid until V is used
 * again or freed. */
const char *uevm_verdict_detail(const struct uevm_verdict *v);

/* EVM alone: the kernel's evm_verify_hmac for F's stored labels; the
 * reason goes to DETAIL (DETAIL_LEN bytes, may be 0). */
enum uevm_integrity_status uevm_evm_verify(const struct uevm_ctx *ctx,
				      const struct uevm_file *f,
				      char *detail, size_t detail_len);

/*
 * Verify F as the kernel's appraisal would: EVM over the metadata, then,
 * for regular files, security.ima against the content.  Returns 0 with a
 * verdict, or a negative errno when the file could not be examined.
 */
int uevm_verify_file(const struct uevm_ctx *ctx, const struct uevm_file *f,
		     struct uevm_verdict *v);

/* True when the verdict means the file passes (PASS, PASS_IMMUTABLE, and
 * NOXATTRS for objects that are not regular files). */
bool uevm_verdict_ok(const struct uevm_file *f, const struct uevm_verdict *v);

/* ---- labelling ------------------------------------------------------------ */

/*
 * Label F: security.ima (regular files, the context's algorithm) and then
 * security.evm.  Content that changes while it is hashed is not labelled:
 * -ESTALE.  Returns 0 or a negative errno.
 */
int uevm_label_file(const struct uevm_ctx *ctx, const struct uevm_file *f);

/* Compute the security.ima value F would get (regular files only). */
int uevm_ima_calc_xattr(const struct uevm_ctx *ctx, const struct uevm_file *f,
			uint8_t *out, size_t *out_len);

/* ---- walking trees ---------------------------------------------------------- */

/* Set by uevm_walk_opts_init(), then changed as needed. */
struct uevm_walk_opts {
	size_t size;		/* sizeof(struct uevm_walk_opts) */
	bool recursive;
	bool one_fs;		/* -x */
	int jobs;		/* worker threads; <= 0: online CPUs */
	/* How PATHs themselves are taken.  By default a symlink PATH (or
	 * PATH/) is followed, as find -H does, and a symlink in a PATH's
	 * leading components is refused (ELOOP, naming it). */
	bool no_dereference;	/* a symlink PATH is the link object itself */
	bool allow_leading_links;	/* follow leading symlinks silently */
	bool refuse_dir_roots;	/* a directory PATH without recursive: EISDIR */
	/* Resolve the (absolute) PATHs beneath this directory, every symlink
	 * in them inside it (openat2 RESOLVE_IN_ROOT); paths are shown as
	 * seen from inside it. */
	const char *root;
	/* Objects left alone, directories not descended into: a glob with
	 * no '/' matches the object's name, one with a '/' its whole
	 * shown path (fnmatch FNM_PATHNAME).  PATHs themselves included. */
	const char *const *exclude;
	size_t nexclude;
};

/* Defaults: not recursive, one worker per online CPU. */
void uevm_walk_opts_init_size(struct uevm_walk_opts *opts, size_t size);
static inline void uevm_walk_opts_init(struct uevm_walk_opts *opts)
{
	uevm_walk_opts_init_size(opts, sizeof(*opts));
}

/* Called for every object (possibly from several threads at once).
 * Return 0 to continue.  ERR is 0, or a negative errno when the object
 * could not be opened (F is then NULL and PATH names it). */
typedef int (*uevm_walk_fn)(const struct uevm_file *f, const char *path,
			    int err, void *arg);

/* Walk PATHS (never following symlinks below them; see uevm_walk_opts
 * for the PATHs themselves).  Returns 0, or the first negative value a
 * callback returned. */
int uevm_walk(const char *const *paths, size_t npaths,
	      const struct uevm_walk_opts *opts, uevm_walk_fn fn, void *arg);

#ifdef __cplusplus
}
#endif
#endif /* UEVM_UEVM_H */
