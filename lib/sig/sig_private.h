/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal pieces shared by lib/sig_*.c. */
#ifndef UEVM_SIG_PRIVATE_H
#define UEVM_SIG_PRIVATE_H

#include <openssl/x509.h>
#include "lib_private.h"
#include "uevm_internal.h"

/* struct signature_v2_hdr, as the kernel lays it out (packed, 9 bytes). */
#define SIG_HDR_TYPE	0
#define SIG_HDR_VERSION	1
#define SIG_HDR_ALGO	2
#define SIG_HDR_KEYID	3
#define SIG_HDR_SIZE	7

/* Bytes 16..19 of SHA-1 over the public key bit string, host order. */
int sig_keyid_from_pkey(EVP_PKEY *pkey, uint32_t *keyid);
/* The last 4 bytes of the SKID, else the public key's keyid. */
int sig_keyid_from_x509(X509 *x, uint32_t *keyid);
/* Read a whole regular file of at most MAX bytes; SECURE: into locked
 * memory (private keys).  Free with sig_free_file(buf, max, secure). */
int sig_read_file(const char *path, size_t max, bool secure, uint8_t **buf,
		  size_t *len);
void sig_free_file(uint8_t *buf, size_t max, bool secure);
/* Keys by uevm_set_key_checks: RSA of 2048 bits and more and ECDSA on
 * NIST P-256, P-384 and P-521 always; weak ones (RSA under 2048 bits,
 * P-192, SM2) and those the kernel cannot verify as the mode says, a
 * warning naming NAME when taken.  DESC gets "RSA-2048", "ECDSA-P256"... */
int sig_check_pkey(EVP_PKEY *pkey, const char *name, char *desc,
		   size_t desc_len);
/* uevm_certset_add_file for a buffer; NAME is what errors call it. */
int sig_certset_add_mem(struct uevm_certset *set, const uint8_t *buf,
			size_t len, const char *name);
/* The keyid of the first certificate added to SET. */
uint32_t sig_certset_first_keyid(const struct uevm_certset *set);
/* The public key of the Nth certificate with KEYID, or NULL. */
EVP_PKEY *sig_certset_find(const struct uevm_certset *set, uint32_t keyid,
			   size_t nth);
/* Drop OpenSSL's queued errors, keeping the first reason in a string. */
const char *sig_ossl_reason(void);

#endif
