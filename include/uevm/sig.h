/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libuevm signatures: IMA signatures (security.ima type 0x03) and EVM
 * signatures (security.evm type 0x03, and the portable type 0x05), made and
 * checked the way the kernel's digsig_asymmetric.c checks them.
 *
 * A value is the 9-byte signature_v2_hdr -- type, version, hash_algo,
 * keyid (big endian), sig_size (big endian) -- followed by the signature:
 * RSA PKCS#1 v1.5 or DER-encoded ECDSA.  Version 2 signs the digest itself;
 * version 3 signs H(struct ima_file_id) over its first 2 + digest-size
 * bytes: { type, hash_algo, digest }.
 *
 * keyid: the last 4 bytes of the certificate's subject key identifier, or
 * bytes 16..19 of SHA-1 over the public key bit string when the certificate
 * has none (what ima-evm-utils computes).
 */
#ifndef UEVM_SIG_H
#define UEVM_SIG_H

#include "uevm/uevm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest signature value, header included (evmctl's MAX_SIGNATURE_SIZE). */
#define UEVM_MAX_SIG_SIZE 1024

/* ---- key checks -------------------------------------------------------------- */

/*
 * Which public-key algorithms signing keys (uevm_signer_load) and
 * certificates (uevm_certset_add_file) may use.  Always: RSA of 2048 to
 * 8192 bits, ECDSA on NIST P-256, P-384 and P-521.  UEVM_KEY_CHECKS_WARN_WEAK
 * adds, with a warning (uevm_set_warn_handler) for each key, the weak ones
 * the kernel still verifies: RSA under 2048 bits, ECDSA on P-192, SM2
 * (hash sm3).  UEVM_KEY_CHECKS_WARN (evmctl's command line) takes every key
 * OpenSSL loads, with a warning for all but the first kind; signing fails
 * later if OpenSSL cannot sign with it.  Process-wide; the default refuses.
 */
enum uevm_key_checks {
	UEVM_KEY_CHECKS_REFUSE = 0,
	UEVM_KEY_CHECKS_WARN_WEAK,
	UEVM_KEY_CHECKS_WARN,
};
void uevm_set_key_checks(enum uevm_key_checks mode);

/* ---- key ids -------------------------------------------------------------- */

/* The keyid of the certificate in PATH (DER or PEM), as a host-order
 * number (printed %08x, stored big endian). */
int uevm_keyid_from_cert_file(const char *path, uint32_t *keyid);

/* ---- certificate sets (the .ima/.evm keyrings) ----------------------------- */

struct uevm_certset;
int uevm_certset_new(struct uevm_certset **out);
/* Add every X.509 certificate of PATH: DER, or PEM with one or more.
 * Returns the number added (at least 1) or a negative errno. */
int uevm_certset_add_file(struct uevm_certset *set, const char *path);
size_t uevm_certset_count(const struct uevm_certset *set);
/* The keyid of the Ith certificate, in the order they were added. */
uint32_t uevm_certset_keyid(const struct uevm_certset *set, size_t i);
void uevm_certset_free(struct uevm_certset *set);

/* ---- signing keys ------------------------------------------------------------- */

struct uevm_signer;
/*
 * Load a private key once, for any number of signatures from any number of
 * threads.  KEY is a PEM or DER private key file (encrypted ones need PASS),
 * or a URI that OpenSSL's OSSL_STORE opens (pkcs11:... with a PKCS#11
 * provider, file:...).  RSA (2048 bits and more) and ECDSA on NIST P-256,
 * P-384 and P-521 are accepted, others as uevm_set_key_checks says.  The keyid is
 * taken from a certificate found in the same file, else computed from the
 * public key; uevm_signer_set_keyid* override it.
 */
int uevm_signer_load(const char *key, const char *pass,
		     struct uevm_signer **out);
/* uevm_signer_load with FLAGS.  UEVM_SIGNER_ASK_PASS: an encrypted key
 * file without PASS makes OpenSSL ask for its pass phrase on the
 * terminal (/dev/tty; evmctl's behaviour) instead of failing. */
#define UEVM_SIGNER_ASK_PASS 0x1
int uevm_signer_load_ex(const char *key, const char *pass, unsigned int flags,
			struct uevm_signer **out);
void uevm_signer_set_keyid(struct uevm_signer *s, uint32_t keyid);
int uevm_signer_set_keyid_from_cert(struct uevm_signer *s, const char *path);
uint32_t uevm_signer_keyid(const struct uevm_signer *s);
/* "RSA-2048", "ECDSA-P256", ... */
const char *uevm_signer_describe(const struct uevm_signer *s);
void uevm_signer_free(struct uevm_signer *s);

/*
 * Make a signature value of TYPE (UEVM_EVM_IMA_XATTR_DIGSIG or
 * UEVM_EVM_XATTR_PORTABLE_DIGSIG) and VERSION (2 or 3) over DIGEST, computed with
 * ALGO.  OUT needs UEVM_MAX_SIG_SIZE bytes.  Returns the value's length.
 */
int uevm_sign_digest(const struct uevm_signer *s, uint8_t type, int version,
		     int algo, const uint8_t *digest, uint8_t *out);
/* The same with a version 2 DIGEST of DIGEST_LEN bytes, which OpenSSL
 * refuses unless it is ALGO's size (evmctl passes it on so). */
int uevm_sign_digest_len(const struct uevm_signer *s, uint8_t type,
			 int version, int algo, const uint8_t *digest,
			 size_t digest_len, uint8_t *out);

/*
 * Check the signature value (VAL, LEN) over DIGEST against SET, as the
 * kernel's asymmetric_verify: 0 when it verifies; -ENOKEY when no
 * certificate has its keyid; -EKEYREJECTED when it does not verify;
 * -EBADMSG for a malformed value; -ENOPKG for an algorithm this build lacks.
 */
int uevm_sig_verify(const struct uevm_certset *set, const uint8_t *val,
		    size_t len, const uint8_t *digest, size_t digest_len);

/* The version 3 digest: ALGO over {TYPE, ALGO, DIGEST}. */
int uevm_sig_v3_digest(uint8_t type, int algo, const uint8_t *digest,
		       uint8_t *out);

/* ---- the EVM signature's hash ------------------------------------------------ */

/*
 * ALGO over the same data the HMAC covers: the given protected values, then
 * h_misc and the fs UUID as MISC says (portable signatures: ino and
 * generation 0, no UUID -- the caller sets MISC so).
 */
int uevm_evm_calc_hash_values(int algo, const struct uevm_xattr_entry *xattrs,
			      size_t n, const struct uevm_hmac_misc *misc,
			      uint8_t *digest);
/*
 * The kernel's evm_calc_hash for F: TYPE UEVM_EVM_IMA_XATTR_DIGSIG binds
 * ino, generation and (per the context) the fs UUID; the portable type
 * binds none of them and needs security.ima (-EPERM without).  REQ_* as in
 * uevm_evm_calc_hmac.  -ENODATA when no protected xattr exists.
 */
int uevm_evm_calc_hash(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       uint8_t type, int algo, const char *req_name,
		       const uint8_t *req_value, size_t req_len,
		       uint8_t *digest);

/* ---- signing files -------------------------------------------------------------- */

/* Set by uevm_sign_opts_init(), then changed as needed. */
struct uevm_sign_opts {
	size_t size;		/* sizeof(struct uevm_sign_opts) */
	bool ima_sig;		/* security.ima: a signature (else the hash) */
	bool evm_sig;		/* security.evm: a signature */
	bool portable;		/* ... of type 0x05 */
	int version;		/* 2 (default when 0) or 3 */
	int algo;		/* -1: the context's algorithm */
};

/* Zero O, set its size, version 2 and the context's algorithm. */
void uevm_sign_opts_init_size(struct uevm_sign_opts *o, size_t size);
static inline void uevm_sign_opts_init(struct uevm_sign_opts *o)
{
	uevm_sign_opts_init_size(o, sizeof(*o));
}

/* The security.ima signature value for F's content. */
int uevm_ima_sign_calc(const struct uevm_ctx *ctx, const struct uevm_signer *s,
		       const struct uevm_file *f, int algo, int version,
		       uint8_t *out, size_t *out_len);
/* The security.evm signature value for F (REQ_* as uevm_evm_calc_hmac). */
int uevm_evm_sign_calc(const struct uevm_ctx *ctx, const struct uevm_signer *s,
		       const struct uevm_file *f, uint8_t type, int algo,
		       int version, const char *req_name,
		       const uint8_t *req_value, size_t req_len,
		       uint8_t *out, size_t *out_len);
/*
 * Sign F: regular files get security.ima (signature or hash) and then, with
 * evm_sig, security.evm; other objects only security.evm (0x03), when they
 * carry a protected xattr.  Returns 0, -ENODATA when there was nothing to
 * sign (portable signatures need security.ima, so only regular files), or a
 * negative errno.
 */
int uevm_sign_file(const struct uevm_ctx *ctx, const struct uevm_signer *s,
		   const struct uevm_file *f, const struct uevm_sign_opts *o);

/* ---- verification with signatures ------------------------------------------------ */

/* Certificates for the context's signature checks (IMA and EVM alike). */
int uevm_ctx_add_certs(struct uevm_ctx *ctx, const char *path);
const struct uevm_certset *uevm_ctx_certs(const struct uevm_ctx *ctx);

/* appraise_type=imasig: security.ima must be a signature, unless EVM
 * holds a valid portable signature (the kernel's IMA_DIGSIG_REQUIRED). */
#define UEVM_CTX_IMASIG_REQUIRED	0x1
/* Replace a valid 0x03 EVM signature by the HMAC where the kernel's
 * evm_verify_hmac would (writable, not immutable, HMAC key loaded). */
#define UEVM_CTX_EVM_SIG_TO_HMAC	0x2
void uevm_ctx_set_flags(struct uevm_ctx *ctx, unsigned int flags);
unsigned int uevm_ctx_flags(const struct uevm_ctx *ctx);

/* uevm_verify_file with per-call UEVM_CTX_* flags (a policy rule's
 * appraise_type=imasig) added to the context's own. */
int uevm_verify_file_flags(const struct uevm_ctx *ctx,
			   const struct uevm_file *f, unsigned int flags,
			   struct uevm_verdict *v);

#ifdef __cplusplus
}
#endif
#endif /* UEVM_SIG_H */
