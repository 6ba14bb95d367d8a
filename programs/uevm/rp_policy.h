/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Keylime runtime policies (schema version 1) for `uevm runtime-policy`:
 * reading and validating one as Keylime's verifier does (the JSON schema
 * of keylime/ima/ima.py, and the IMA keyring schema for the string in
 * "verification-keys"), and the keys that check ima-sig signatures.
 *
 * The format, as Keylime reads it:
 *   meta               {version: int >= 0, generator: int 0..3, [timestamp: str]}
 *   release            int >= 0
 *   digests            {path: [lowercase hex of 40..128 digits, ...]} (non-empty lists)
 *   excludes           [Python regex, ...]
 *   keyrings           {keyring name: [digest of the key's ima-buf entry, ...]}
 *   ima                {ignored_keyrings: [str], log_hash_alg: sha1|sha256|sha384|sha512,
 *                       dm_policy: null}
 *   ima-buf            {buffer name: [digest, ...]}
 *   verification-keys  "" or a JSON text (a string) {keyids: [int], pubkeys: [base64
 *                      DER SubjectPublicKeyInfo]}, keyids[i] naming pubkeys[i]
 * Keylime's verifier takes a policy whose meta.generator is 0 or 1 for
 * an empty one (it expects no IMA list); its own generator writes 3.
 */
#ifndef UEVM_RP_POLICY_H
#define UEVM_RP_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>
#include "rp_json.h"

#define RP_VERSION 1
#define RP_GENERATOR_LEGACY_ALLOWLIST 3	/* what keylime_policy writes */
#define RP_MAX_POLICY_SIZE (1024u << 20)

/* A map {name: [hex, ...]}, its names sorted for lookups. */
struct rp_map_ent {
	const char *name;
	const struct jval *list;
	size_t idx;
};
struct rp_map {
	struct rp_map_ent *e;
	size_t n;
};

struct rp_key {
	uint32_t keyid;
	EVP_PKEY *pkey;
};

/* Keys by keyid, as Keylime's ImaKeyring (one key per keyid). */
struct rp_keyring {
	struct rp_key *keys;
	size_t n;
};

struct rp_policy {
	struct jval *root;
	struct rp_map digests, keyrings, ima_buf;
	const char **excludes;
	size_t nexcludes;
	const char **ignored_keyrings;
	size_t nignored;
	int log_hash_algo;		/* uevm hash id */
	long long generator;
	struct rp_keyring keys;		/* from verification-keys */
};

/* Read and validate the policy in PATH.  0; or -1 with the cause in ERR
 * (-2: the file could not be read). */
int rp_policy_load(const char *path, struct rp_policy *p, char *err,
		   size_t errlen);
/* rp_policy_load on a buffer (the fuzz target's entry). */
int rp_policy_parse(const uint8_t *buf, size_t len, struct rp_policy *p,
		    char *err, size_t errlen);
void rp_policy_free(struct rp_policy *p);
/* NAME's list in M, or NULL. */
const struct jval *rp_map_get(const struct rp_map *m, const char *name);
/* True when HEX is one of the strings of LIST. */
bool rp_list_has(const struct jval *list, const char *hex);

/* Add the key in BUF as Keylime's get_pubkey finds one: an X.509
 * certificate, a public key, a private key (its public half), each DER
 * (all of BUF) then PEM.  Keyid: the last 4 bytes of the certificate's
 * subject key identifier; when none or 0, bytes 16..19 of SHA-1 over
 * PKCS#1 (RSA) or the uncompressed point (EC).  Only RSA and EC keys,
 * as Keylime.  0, 1 when BUF holds no key, -1 with ERR. */
int rp_keyring_add_buf(struct rp_keyring *kr, const uint8_t *buf, size_t len,
		       char *err, size_t errlen);
/* Add the verification-keys JSON text S.  0 or -1 with ERR. */
int rp_keyring_add_json(struct rp_keyring *kr, const char *s, char *err,
			size_t errlen);
/* The verification-keys text of KR ("" when empty); malloc'ed. */
char *rp_keyring_to_json(const struct rp_keyring *kr);
struct rp_key *rp_keyring_find(const struct rp_keyring *kr, uint32_t keyid);
void rp_keyring_free(struct rp_keyring *kr);
/*
 * Check an IMA signature value (signature_v2_hdr and signature) over
 * DIGEST, a digest with the algorithm named DIGEST_ALGO, as Keylime
 * does: type 0x03 or 0x05, version 2 only, the header's hash the
 * digest's, the key found by keyid in one of the NKR keyrings.  0 when
 * it verifies, else -1 with the reason in WHY.
 */
int rp_sig_verify(const struct rp_keyring *const *kr, size_t nkr,
		  const uint8_t *sig, size_t siglen, const uint8_t *digest,
		  size_t dlen, const char *digest_algo, char *why, size_t whylen);
/* True when S is lowercase hex of 40 to 128 digits (the schema's pattern). */
bool rp_hex_ok(const char *s);

#endif
