/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libuevm keys, the library's internal interface (not installed; the
 * public part is include/uevm/keys.h): the EVM HMAC key in protected forms.
 *
 *   passphrase   wrapped with XChaCha20-Poly1305 under an Argon2id key
 *   TPM          sealed to a TPM 2.0 (tpm2-tss ESYS), optionally to PCRs
 *   kernel blob  the kernel's "encrypted" key type format (default format,
 *                AES-256-CBC + HMAC-SHA256 under a user master key), so the
 *                same key loads with keyctl into a kernel with EVM
 *   keyring      a user key on the kernel keyring, put there by
 *                `uevm key load`, read once and burnt by the consumer
 *
 * Plain key bytes never leave locked, non-dumpable memory (struct uevm_key,
 * struct uevm_secret) except through uevm_key_write_plain().
 */
#ifndef UEVM_LIB_KEYS_H
#define UEVM_LIB_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "uevm/keys.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- forms and key specifications ---------------------------------- */



/* A secret that is not an HMAC key (passphrase, master key, file contents):
 * kept in memory from uevm_secure_alloc.  len bytes of data are valid. */
struct uevm_secret {
	uint8_t *data;
	size_t len;
	size_t cap;
};
void uevm_secret_free(struct uevm_secret *s);

/* Where a passphrase comes from when a key spec needs one. */
typedef int (*uevm_passphrase_fn)(void *arg, const char *prompt,
				  bool confirm, struct uevm_secret *out);

/* Read a passphrase on the controlling terminal without echo (asks twice
 * when CONFIRM).  A uevm_passphrase_fn; ARG is unused. */
int uevm_passphrase_from_tty(void *arg, const char *prompt, bool confirm,
			     struct uevm_secret *out);
/* Read a passphrase from file descriptor *(int *)ARG: everything up to the
 * first newline or end of file.  A uevm_passphrase_fn. */
int uevm_passphrase_from_fd(void *arg, const char *prompt, bool confirm,
			    struct uevm_secret *out);

/* Read a secret (e.g. a master key): a file of 1..MAX bytes, or
 * "keyring:DESC" for a user key (read, not burnt). */
int uevm_secret_load(const char *spec, size_t max, struct uevm_secret *out);

/* Where a loaded key came from, in words for logs and -v:
 * "TPM-sealed key file /etc/uevm/evm.key.tpm", "user key 'evm-key'
 * (serial 123) owned by uid 0 on the user keyring". */
struct uevm_key_origin {
	enum uevm_key_form form;
	char desc[384];
};

struct uevm_key_load_opts {
	uevm_passphrase_fn passphrase;	/* NULL: ask on the terminal */
	void *passphrase_arg;
	const char *master_key;		/* kernel blobs: file or keyring:DESC */
	const char *tcti;		/* NULL: uevm_tpm_default_tcti() */
	int burn;			/* keyring: -1 the default rule, 0 keep, 1 burn */
	/* Refuse a plain PATH: the spec must name the form.  For daemons,
	 * whose configuration may predate the rule that a plain path is a
	 * raw key, and may have meant a protected file an attacker has
	 * since replaced by raw bytes. */
	bool need_form;
	struct uevm_key_origin *origin;	/* filled on success, may be NULL */
};
void uevm_key_load_opts_init(struct uevm_key_load_opts *o);

/*
 * Load an HMAC key from a specification that names its form:
 *
 *   raw:PATH                      1..128 plain bytes
 *   passphrase:PATH[,passphrase-fd=N]
 *   tpm:PATH[,tcti=TCTI]          TCTI: the rest of the spec, commas too
 *   kernel-blob:PATH[,master=MASTER]   MASTER: a file or keyring:DESC
 *   keyring:DESC[,burn|,keep]     a user key owned by the caller's euid or
 *                                 root, from the session keyring, then
 *                                 the user keyring; burnt after reading
 *                                 with ",burn", or by default when DESC
 *                                 is "evm-key" (the name `uevm key load`
 *                                 uses)
 *   PATH                          a raw key file, exactly as raw:PATH
 *                                 (refused with O->need_form)
 *
 * The form is never guessed from the file: a file that does not hold what
 * its form says is refused, and so is a raw key file whose contents look
 * like a protected one.  "file:" (which used to guess) is refused.  Every
 * file read must be safe from other users (see uevm_set_file_checks).
 * Options in SPEC override O (which may be NULL); an option of another
 * form than the spec's is refused.  uevm_key_load() is this with O = NULL.
 * *FORM (may be NULL) receives the form that was loaded.
 */
int uevm_key_load_ex(const char *spec, const struct uevm_key_load_opts *o,
		     struct uevm_key **out, enum uevm_key_form *form);


/* The key's full public identity, 64 hex digits (SHA-256 over a label and
 * the padded key): for texts a verifier pins, where the 16-digit
 * fingerprint is too short. */
int uevm_key_id(const struct uevm_key *key, char out[65]);

/* ---- plain key bytes ---------------------------------------------------- */

/* Write DATA to a new file PATH (mode 0600, O_EXCL); removed on failure. */
int uevm_write_new_file(const char *path, const void *data, size_t len);

/* ---- passphrase form ---------------------------------------------------- */

#define UEVM_PASSPHRASE_MAGIC "uevm-key-passphrase v1\n"

/* Argon2id cost: passes and memory in bytes (libsodium's limits apply). */
struct uevm_kdf_params {
	uint64_t opslimit;
	size_t memlimit;
};
/* libsodium's "moderate" cost: 3 passes over 256 MiB. */
void uevm_kdf_params_default(struct uevm_kdf_params *p);

/* Wrap KEY under PASS; *OUT is a malloc'ed text file image (no secrets). */
int uevm_key_wrap_passphrase(const struct uevm_key *key, const void *pass,
			     size_t passlen, const struct uevm_kdf_params *p,
			     char **out, size_t *outlen);
/* Unwrap; a wrong passphrase (or a modified file) gives -EKEYREJECTED. */
int uevm_key_unwrap_passphrase(const void *file, size_t len,
			       const void *pass, size_t passlen,
			       struct uevm_key **out);
/* The recorded parameters and key size, without the passphrase. */
int uevm_key_passphrase_info(const void *file, size_t len,
			     struct uevm_kdf_params *p, size_t *keylen);

/* ---- the kernel's "encrypted" key blobs ---------------------------------- */

#define UEVM_KBLOB_IV_SIZE 16
#define UEVM_KBLOB_MIN_DATA 20		/* the kernel's MIN_DATA_SIZE */
#define UEVM_KBLOB_DEFAULT_MASTER "user:kmk"

struct uevm_kblob_info {
	char format[16];		/* "default" or "enc32" */
	bool has_format;		/* the blob named its format */
	char master_desc[128];		/* "user:kmk" */
	size_t datalen;			/* decrypted data length */
	uint8_t iv[UEVM_KBLOB_IV_SIZE];
};

/* Parse a blob ("[FORMAT] MASTER LEN HEX", as `keyctl pipe` prints it)
 * without decrypting it. */
int uevm_kblob_parse(const char *blob, size_t len, struct uevm_kblob_info *info);

/* Encrypt KEY (at least 20 bytes) as the kernel's encrypted_read() does,
 * under the user master key MASTER, described as MASTER_DESC (NULL: user:kmk).
 * IV NULL: a random IV.  *OUT: a malloc'ed NUL-terminated blob, no newline. */
int uevm_kblob_export(const struct uevm_key *key, const void *master,
		      size_t master_len, const char *master_desc,
		      const uint8_t *iv, char **out);
/* Verify and decrypt a blob as the kernel's encrypted_key_decrypt() does.
 * A wrong master key gives -EKEYREJECTED.  INFO may be NULL. */
int uevm_kblob_import(const char *blob, size_t len, const void *master,
		      size_t master_len, struct uevm_key **out,
		      struct uevm_kblob_info *info);

/* ---- TPM 2.0 sealing ------------------------------------------------------ */

#define UEVM_TPM_MAGIC "uevm-key-tpm v1\n"

/* The TCTI from the environment: UEVM_TCTI, TPM2TOOLS_TCTI or TSS2_TCTI;
 * NULL lets tpm2-tss choose (the TPM device, then a simulator). */
const char *uevm_tpm_default_tcti(void);
/* "0,7,16-18" -> bit mask of sha256 PCRs (0..23). */
int uevm_tpm_parse_pcrs(const char *list, uint32_t *mask);

/* Seal KEY under the owner hierarchy's storage primary key; when PCR_MASK
 * is not 0, only a policy session with those sha256 PCRs at their current
 * values can unseal it.  *OUT: a malloc'ed text file image. */
int uevm_key_tpm_seal(const struct uevm_key *key, const char *tcti,
		      uint32_t pcr_mask, char **out, size_t *outlen);
/* Unseal (in a short-lived child process, so no tpm2-tss buffer with the
 * key stays in this process).  PCRs that changed give -EKEYREJECTED. */
int uevm_key_tpm_unseal(const void *file, size_t len, const char *tcti,
			struct uevm_key **out);
/* The PCR mask and key size recorded in a sealed file. */
int uevm_key_tpm_info(const void *file, size_t len, uint32_t *pcr_mask,
		      size_t *keylen);

/* ---- the kernel keyring ------------------------------------------------- */

#define UEVM_KEYRING_DEFAULT_NAME "evm-key"

/* "@u", "@s", "@us", "@p", "@t" or a serial number -> keyring id. */
int uevm_keyring_parse(const char *s, int32_t *id);

/* Add KEY as user key DESC to KEYRING (replacing one of that name);
 * SOURCE (may be NULL) is recorded, with the fingerprint, in a companion
 * user key "uevm-info:DESC" for `uevm key status`. */
int uevm_keyring_put(const struct uevm_key *key, const char *desc,
		     int32_t keyring, const char *source, int32_t *serial);
/* Read user key DESC (found as keyring:DESC finds it); when BURN, then
 * overwrite it with zeros, invalidate it (it leaves every keyring) and
 * fail if that is not possible. */
int uevm_keyring_take(const char *desc, bool burn, struct uevm_key **out);

struct uevm_keyring_status {
	int32_t serial;			/* 0 when no such key */
	uint32_t uid;			/* its owner */
	char keyring[32];		/* "session keyring", "user keyring", ... */
	size_t len;			/* payload size */
	char fingerprint[17];		/* of the key, "" when absent */
	char info[256];			/* the uevm-info companion, "" if none */
};
/* Look at user key DESC, found as keyring:DESC finds it, without burning
 * it.  Keys of that name owned by others are skipped with a warning. */
int uevm_keyring_status(const char *desc, struct uevm_keyring_status *st);

#ifdef __cplusplus
}
#endif
#endif /* UEVM_LIB_KEYS_H */
