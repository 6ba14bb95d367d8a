/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's own view of its public API (not installed): lib/ and the
 * in-tree front-ends (programs/, tests, fuzz) include this instead of
 * <uevm/uevm.h>.
 *
 * 1. Kernel names.  The public headers spell everything uevm_/UEVM_, so
 *    that they coexist with <imaevm.h> and with an application's own NONE
 *    or FILE_CHECK.  Inside the tree the kernel's names help a reader find
 *    the twin of each line in security/integrity/, so they are kept here as
 *    plain aliases of the public names: `enum integrity_status` *is* enum
 *    uevm_integrity_status (a macro, not a second enum, so values pass
 *    between library and callers without conversions), INTEGRITY_PASS is
 *    UEVM_INTEGRITY_PASS, and so on.
 * 2. The layout of the public opaque structs, for code that keeps them on
 *    the stack (the walk and the CLI's hot path: no allocation per file),
 *    and the in-tree functions behind the public ones.
 */
#ifndef UEVM_INTERNAL_H
#define UEVM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include "uevm/uevm.h"
#include "uevm/keys.h"
#include "uevm/sig.h"

/* ---- kernel names for the public types ------------------------------- */

#define integrity_status		uevm_integrity_status
#define INTEGRITY_PASS			UEVM_INTEGRITY_PASS
#define INTEGRITY_PASS_IMMUTABLE	UEVM_INTEGRITY_PASS_IMMUTABLE
#define INTEGRITY_FAIL			UEVM_INTEGRITY_FAIL
#define INTEGRITY_FAIL_IMMUTABLE	UEVM_INTEGRITY_FAIL_IMMUTABLE
#define INTEGRITY_NOLABEL		UEVM_INTEGRITY_NOLABEL
#define INTEGRITY_NOXATTRS		UEVM_INTEGRITY_NOXATTRS
#define INTEGRITY_UNKNOWN		UEVM_INTEGRITY_UNKNOWN
#define INTEGRITY_STATUS_COUNT		7
#define integrity_status_name		uevm_integrity_status_name

#define evm_ima_xattr_type		uevm_xattr_type
#define IMA_XATTR_DIGEST		UEVM_IMA_XATTR_DIGEST
#define EVM_XATTR_HMAC			UEVM_EVM_XATTR_HMAC
#define EVM_IMA_XATTR_DIGSIG		UEVM_EVM_IMA_XATTR_DIGSIG
#define IMA_XATTR_DIGEST_NG		UEVM_IMA_XATTR_DIGEST_NG
#define EVM_XATTR_PORTABLE_DIGSIG	UEVM_EVM_XATTR_PORTABLE_DIGSIG
#define IMA_VERITY_DIGSIG		UEVM_IMA_VERITY_DIGSIG

/* <linux/xattr.h> has the same two. */
#ifndef XATTR_NAME_IMA
#define XATTR_NAME_IMA			UEVM_XATTR_IMA
#endif
#ifndef XATTR_NAME_EVM
#define XATTR_NAME_EVM			UEVM_XATTR_EVM
#endif

/* ---- file objects (public: struct uevm_file, opaque) ------------------- */

struct uevm_file {
	int fd;			/* O_PATH, or O_RDONLY for regular/dir */
	int dirfd;		/* parent directory (not owned), or -1 */
	bool io;		/* fd allows read/ioctl/f*xattr */
	bool fs_cached;		/* its filesystem's facts may come from the
				 * per-st_dev cache (the walk decides) */
	struct stat st;
	const char *path;	/* for messages only; never used to open */
};

/* uevm_file_open into caller-provided storage (no allocation). */
int uevm_file_openat(struct uevm_file *f, int dirfd, const char *name,
		     const char *display_path);
void uevm_file_close(struct uevm_file *f);
/* Until unpinned, this thread's uevm_file_generation() of F (same fd and
 * inode) answers the value read now, without asking the filesystem again. */
void uevm_file_pin_generation(const struct uevm_file *f);
void uevm_file_unpin_generation(void);

/* ---- verdicts (public: struct uevm_verdict, opaque) --------------------- */

struct uevm_verdict {
	enum integrity_status status;	/* overall */
	enum integrity_status evm_status;
	enum integrity_status ima_status; /* INTEGRITY_UNKNOWN when not regular */
	const char *cause;	/* the kernel's cause string, NULL on PASS */
	char detail[160];	/* why, in words ("" when nothing to add) */
	/* The hash algorithm of the digest or signature that security.ima
	 * and security.evm hold, as read for this verdict (an HMAC has
	 * none): -1 none, -2 not read (ask the file). */
	int ima_algo, evm_algo;
};

/* ---- xattr formats: the parsers without the public size check ------------ */

int ima_xattr_parse(const uint8_t *val, size_t len, struct uevm_xattr_value *out);
int evm_xattr_parse(const uint8_t *val, size_t len, struct uevm_xattr_value *out);

/* ---- EVM: struct h_misc without the public size check ---------------------- */

size_t evm_misc_encode(const struct uevm_hmac_misc *m, uint8_t out[24]);
int evm_misc_from_file(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       struct uevm_hmac_misc *misc);
/* Keep each filesystem's UUID once read, by st_dev, for CTX's lifetime:
 * for a run that does not outlive the mounts it walks (uevm label,
 * verify); a daemon asks each time. */
int uevm_ctx_cache_fsuuid(struct uevm_ctx *ctx);
int evm_misc_in(const struct uevm_hmac_misc *in, struct uevm_hmac_misc *out);

/* ---- signatures ----------------------------------------------------------- */

/*
 * A signer around a private key the caller already holds (an OpenSSL
 * EVP_PKEY, such as one an engine loaded from a token): the signer takes
 * its own reference and uses it one operation at a time.  The keyid is
 * computed from the public key.  (Internal: it exposes an OpenSSL type.)
 */
struct evp_pkey_st;
int uevm_signer_from_pkey(struct evp_pkey_st *pkey, struct uevm_signer **out);

/*
 * The public structs that carry their size.  A caller's struct is at
 * least the first version's size (MIN) and may be larger (a newer header)
 * or smaller (an older one, once the struct grew).
 *
 * uevm_struct_init: copy our initialised DEF (OURS bytes) into OBJ of the
 * caller's SIZE, zero-filling beyond ours, and record SIZE in it.
 * uevm_struct_in: a caller's input OBJ as ours into OUT (OURS bytes,
 * already holding defaults): refused (-EINVAL, the reason recorded) when
 * its size is below MIN, or when it is larger and sets members this
 * library does not know.
 */
void uevm_struct_init(void *obj, size_t size, const void *def, size_t ours);
int uevm_struct_in(const void *obj, size_t min, void *out, size_t ours,
		   const char *what);

#endif /* UEVM_INTERNAL_H */
