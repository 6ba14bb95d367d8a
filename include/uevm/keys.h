/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libuevm keys: the forms an EVM HMAC key is kept in, and plain keys.
 *
 *   raw          1..128 plain bytes in a file
 *   passphrase   wrapped with XChaCha20-Poly1305 under an Argon2id key
 *   tpm          sealed to a TPM 2.0, optionally to PCRs
 *   kernel-blob  the kernel's "encrypted" key type format, so the same key
 *                loads with keyctl into a kernel with EVM
 *   keyring      a user key on the kernel keyring
 *
 * uevm_key_load() (uevm/uevm.h) loads any of them from a specification
 * that names its form ("tpm:/etc/uevm/evm.key.tpm").  Plain key bytes never
 * leave locked, non-dumpable memory except through uevm_key_write_plain().
 * See uevm_key_load(3).
 */
#ifndef UEVM_KEYS_H
#define UEVM_KEYS_H

#include <stddef.h>
#include "uevm/uevm.h"

#ifdef __cplusplus
extern "C" {
#endif

enum uevm_key_form {
	UEVM_KEY_FORM_UNKNOWN = 0,
	UEVM_KEY_FORM_RAW,		/* 1..128 plain bytes */
	UEVM_KEY_FORM_PASSPHRASE,	/* "uevm-key-passphrase v1" file */
	UEVM_KEY_FORM_TPM,		/* "uevm-key-tpm v1" file */
	UEVM_KEY_FORM_KERNEL_BLOB,	/* "default user:kmk 32 <hex>" */
	UEVM_KEY_FORM_KEYRING,		/* a user key on the keyring */
};

/* "raw", "passphrase", "tpm", "kernel-blob", "keyring" or "unknown". */
const char *uevm_key_form_name(enum uevm_key_form form);

/* What a key file's contents look like, for descriptions and to refuse a
 * file given in one form that holds another; never to choose the form a
 * key is used in (the operator names it). */
enum uevm_key_form uevm_key_detect(const void *data, size_t len);

/* Describe the key file PATH in words (form, size, parameters) into OUT
 * (LEN bytes) without unwrapping it.  Returns its enum uevm_key_form, or
 * a negative errno. */
int uevm_key_file_describe(const char *path, char *out, size_t len);

/* The form SPEC names (a plain path: UEVM_KEY_FORM_RAW), without opening
 * anything; a negative errno for a spec uevm_key_load() would refuse as
 * written. */
int uevm_key_spec_form(const char *spec, enum uevm_key_form *form);

/* A new random key of LEN (1..128) bytes from the kernel's CSPRNG. */
int uevm_key_generate(size_t len, struct uevm_key **out);
/* The key's length in bytes (before the kernel's zero padding). */
size_t uevm_key_size(const struct uevm_key *key);
/* Write the plain key to a new file PATH: mode 0600, never overwriting
 * (O_EXCL), not following symlinks.  The only way key bytes reach a file. */
int uevm_key_write_plain(const struct uevm_key *key, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* UEVM_KEYS_H */
