/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers shared by the key_*.c files. */
#ifndef UEVM_KEY_PRIVATE_H
#define UEVM_KEY_PRIVATE_H

#include "lib_private.h"
#include "keys.h"

/* Largest key file we read: a sealed or wrapped 128-byte key is ~2 KiB. */
#define UEVM_KEY_FILE_MAX 65536

/* Allocate a secret buffer of CAP bytes (len 0). */
int uevm_secret_alloc(struct uevm_secret *s, size_t cap);

/* Read the whole regular file PATH (1..MAX bytes) into secure memory;
 * WHAT names it in errors ("key file", "master key file"). */
int uevm_secret_read_file(const char *path, size_t max, const char *what,
			  struct uevm_secret *out);

/* Lower-case hex. OUT needs 2 * LEN + 1 bytes. */
void uevm_hex_encode(const uint8_t *in, size_t len, char *out);
/* Exactly 2 * LEN hex digits at IN -> LEN bytes; -EINVAL otherwise. */
int uevm_hex_decode(const char *in, size_t len, uint8_t *out);

/*
 * The small text formats ("NAME VALUE" lines after a magic line).
 * uevm_line_next() returns the value of the next line, which must be NAME,
 * or NULL (with *vlen 0) when the line is missing or named otherwise.
 */
struct uevm_line_reader {
	const char *p, *end;
};
const char *uevm_line_next(struct uevm_line_reader *r, const char *name,
			   size_t *vlen);

/* A growing text buffer for writing those formats. */
struct uevm_text_buf {
	char *s;
	size_t len, cap;
	bool failed;
};
void uevm_text_printf(struct uevm_text_buf *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void uevm_text_hex(struct uevm_text_buf *t, const char *name,
		   const uint8_t *d, size_t n);

/* The passphrase form's entry for uevm_key_load_ex. */
int uevm_key_load_passphrase(const char *path, const struct uevm_secret *file,
			     const struct uevm_key_load_opts *o,
			     struct uevm_key **out);

/* The raw form: 1..128 bytes, with the core's messages. */
int uevm_key_from_raw_file(const char *path, const struct uevm_secret *file,
			   struct uevm_key **out);

/* uevm_key_file_describe for contents already read (the fuzzers' way in). */
int uevm_key_describe_mem(const uint8_t *data, size_t size, char *out,
			  size_t len);

/* Parse a key specification without touching any file or keyring: its
 * form (a plain path is RAW, with PLAIN set), whether it names a keyring
 * key, and the passphrase-fd and burn options (-1 when absent). */
struct uevm_key_spec_info {
	enum uevm_key_form form;
	bool keyring;
	bool plain;
	int passphrase_fd;
	int burn;
	bool has_master, has_tcti;
};
int uevm_key_spec_parse(const char *spec, struct uevm_key_spec_info *info);

/* Overwrite the stack below the caller and the vector registers, where
 * copies of key bytes outlive the calls that made them (key_util.c). */
void uevm_scrub(void);

/* A user key read into a secret (not burnt): keyring:DESC master keys. */
int uevm_keyring_read_secret(const char *desc, size_t max,
			     struct uevm_secret *out);

/* The user key keyring:DESC names: its serial, owner and the keyring it
 * was found on (session keyring or user keyring, or one linked there). */
struct uevm_keyring_hit {
	int32_t serial;
	uint32_t uid;
	char keyring[32];
};
/* uevm_keyring_take, also saying which key it took. */
int uevm_keyring_take_hit(const char *desc, bool burn, struct uevm_key **out,
			  struct uevm_keyring_hit *hit);
/* "user key 'DESC' (serial N) owned by uid U on the user keyring". */
void uevm_keyring_hit_describe(const struct uevm_keyring_hit *hit,
			       const char *desc, char *buf, size_t len);

#endif
