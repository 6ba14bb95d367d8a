// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libuevm signatures through the public API, checked against OpenSSL
 * called directly: sign/verify round trips for RSA and ECDSA, the kernel's
 * failure codes for malformed values, the version 3 digest, key ids with
 * and without a SKID, and the EVM signature hash over explicit values.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include "uevm_internal.h"
#include "test.h"

static char dir[] = "/tmp/uevm-sig-api.XXXXXX";

/* A key and a self-signed certificate (with or without SKID) on disk. */
static EVP_PKEY *make_key(const char *name, bool rsa, bool skid, X509 **out)
{
	char path[256];
	EVP_PKEY *pkey = rsa ? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)
			     : EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509 *x = X509_new();
	X509V3_CTX v3;
	FILE *fp;

	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, pkey);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
				   (const unsigned char *)name, -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	if (skid) {
		X509_EXTENSION *ext;

		X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
		ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_key_identifier,
					  "0011223344556677889900aabbccddeeff123456");
		X509_add_ext(x, ext, -1);
		X509_EXTENSION_free(ext);
	}
	X509_sign(x, pkey, EVP_sha256());
	snprintf(path, sizeof(path), "%s/%s.key", dir, name);
	fp = fopen(path, "w");
	/* A private key others could read is refused (uevm-key(1)). */
	fchmod(fileno(fp), 0600);
	PEM_write_PrivateKey(fp, pkey, NULL, NULL, 0, NULL, NULL);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/%s.pem", dir, name);
	fp = fopen(path, "w");
	PEM_write_X509(fp, x);
	fclose(fp);
	*out = x;
	return pkey;
}

static void path_of(char *buf, const char *name, const char *ext)
{
	snprintf(buf, 256, "%s/%s.%s", dir, name, ext);
}

static void roundtrip(const char *name, bool rsa)
{
	char keyp[256], certp[256], label[128];
	uint8_t digest[32], sig[UEVM_MAX_SIG_SIZE], bad[UEVM_MAX_SIG_SIZE];
	struct uevm_certset *set;
	struct uevm_signer *s = NULL;
	EVP_PKEY *pkey;
	uint32_t keyid;
	X509 *x;
	int len;

	pkey = make_key(name, rsa, false, &x);
	path_of(keyp, name, "key");
	path_of(certp, name, "pem");
	for (int i = 0; i < 32; i++)
		digest[i] = (uint8_t)(i * 7);
	snprintf(label, sizeof(label), "%s: signer loads", name);
	CHECK(label, uevm_signer_load(keyp, NULL, &s) == 0);
	if (!s) {
		fprintf(stderr, "%s: %s\n", keyp, uevm_last_error());
		return;
	}
	uevm_certset_new(&set);
	snprintf(label, sizeof(label), "%s: certificate loads", name);
	CHECK(label, uevm_certset_add_file(set, certp) == 1);

	/* keyid without SKID: SHA-1 of the public key bit string, which
	 * OpenSSL's X509_pubkey_digest computes independently. */
	{
		unsigned char md[20];
		unsigned int mdlen;

		X509_pubkey_digest(x, EVP_sha1(), md, &mdlen);
		keyid = (uint32_t)md[16] << 24 | (uint32_t)md[17] << 16 |
			(uint32_t)md[18] << 8 | md[19];
		snprintf(label, sizeof(label), "%s: keyid = SHA-1(public key)[16..19]", name);
		CHECK(label, uevm_signer_keyid(s) == keyid && uevm_certset_keyid(set, 0) == keyid);
	}

	len = uevm_sign_digest(s, EVM_IMA_XATTR_DIGSIG, 2, UEVM_HASH_SHA256, digest, sig);
	snprintf(label, sizeof(label), "%s: v2 signature verifies", name);
	CHECK(label, len > UEVM_SIG_HDR_SIZE &&
	      uevm_sig_verify(set, sig, (size_t)len, digest, 32) == 0);
	/* OpenSSL's own check of the same bytes. */
	{
		EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(pkey, NULL);
		int ok = c && EVP_PKEY_verify_init(c) > 0 &&
			 EVP_PKEY_CTX_set_signature_md(c, EVP_sha256()) > 0 &&
			 EVP_PKEY_verify(c, sig + 9, (size_t)len - 9, digest, 32) == 1;

		EVP_PKEY_CTX_free(c);
		snprintf(label, sizeof(label), "%s: OpenSSL verifies the signature body", name);
		CHECK(label, ok);
	}
	snprintf(label, sizeof(label), "%s: header type, version, algo, size", name);
	CHECK(label, sig[0] == 3 && sig[1] == 2 && sig[2] == UEVM_HASH_SHA256 &&
	      ((size_t)sig[7] << 8 | sig[8]) == (size_t)len - 9);

	memcpy(bad, sig, (size_t)len);
	bad[len - 1] ^= 0x01;
	snprintf(label, sizeof(label), "%s: corrupted -> -EKEYREJECTED", name);
	CHECK(label, uevm_sig_verify(set, bad, (size_t)len, digest, 32) == -EKEYREJECTED);
	memcpy(bad, sig, (size_t)len);
	bad[3] ^= 0xff;
	snprintf(label, sizeof(label), "%s: unknown keyid -> -ENOKEY", name);
	CHECK(label, uevm_sig_verify(set, bad, (size_t)len, digest, 32) == -ENOKEY);
	snprintf(label, sizeof(label), "%s: truncated header -> -EBADMSG", name);
	CHECK(label, uevm_sig_verify(set, sig, 9, digest, 32) == -EBADMSG);
	snprintf(label, sizeof(label), "%s: size field mismatch -> -EBADMSG", name);
	CHECK(label, uevm_sig_verify(set, sig, (size_t)len - 1, digest, 32) == -EBADMSG);
	memcpy(bad, sig, (size_t)len);
	bad[1] = 4;
	snprintf(label, sizeof(label), "%s: version 4 -> -EOPNOTSUPP", name);
	CHECK(label, uevm_sig_verify(set, bad, (size_t)len, digest, 32) == -EOPNOTSUPP);
	digest[0] ^= 1;
	snprintf(label, sizeof(label), "%s: other digest -> -EKEYREJECTED", name);
	CHECK(label, uevm_sig_verify(set, sig, (size_t)len, digest, 32) == -EKEYREJECTED);
	digest[0] ^= 1;

	/* version 3: the signature covers H(type, algo, digest) */
	len = uevm_sign_digest(s, EVM_XATTR_PORTABLE_DIGSIG, 3, UEVM_HASH_SHA256, digest, sig);
	snprintf(label, sizeof(label), "%s: v3 signature verifies", name);
	CHECK(label, len > 0 && sig[0] == 5 && sig[1] == 3 &&
	      uevm_sig_verify(set, sig, (size_t)len, digest, 32) == 0);
	memcpy(bad, sig, (size_t)len);
	bad[1] = 2;
	snprintf(label, sizeof(label), "%s: v3 read as v2 fails", name);
	CHECK(label, uevm_sig_verify(set, bad, (size_t)len, digest, 32) == -EKEYREJECTED);

	uevm_signer_free(s);
	uevm_certset_free(set);
	X509_free(x);
	EVP_PKEY_free(pkey);
}

int main(void)
{
	uint8_t digest[64], v3[64], ref[64], file_id[2 + 64];
	char keyp[256], certp[256];
	struct uevm_signer *s;
	uint32_t keyid;
	EVP_PKEY *pkey;
	X509 *x;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	roundtrip("rsa", true);
	roundtrip("ec", false);

	/* With a SKID the keyid is its last 4 bytes. */
	pkey = make_key("skid", false, true, &x);
	path_of(certp, "skid", "pem");
	CHECK("keyid from the SKID's last 4 bytes",
	      uevm_keyid_from_cert_file(certp, &keyid) == 0 && keyid == 0xff123456);
	path_of(keyp, "skid", "key");
	CHECK("signer with --keyid-from-cert", uevm_signer_load(keyp, NULL, &s) == 0 &&
	      uevm_signer_set_keyid_from_cert(s, certp) == 0 &&
	      uevm_signer_keyid(s) == 0xff123456);
	uevm_signer_free(s);
	X509_free(x);
	EVP_PKEY_free(pkey);

	/* The v3 digest, recomputed with OpenSSL over {0x03, 5, digest}. */
	for (int i = 0; i < 48; i++)
		digest[i] = (uint8_t)(0xa0 ^ i);
	file_id[0] = 0x03;
	file_id[1] = UEVM_HASH_SHA384;
	memcpy(file_id + 2, digest, 48);
	EVP_Digest(file_id, 50, ref, NULL, EVP_sha384(), NULL);
	CHECK("v3 digest = SHA-384 of the used part of ima_file_id",
	      uevm_sig_v3_digest(0x03, UEVM_HASH_SHA384, digest, v3) == 0 &&
	      !memcmp(v3, ref, 48));
	CHECK("v3 digest refuses the HMAC type", uevm_sig_v3_digest(0x02, UEVM_HASH_SHA384,
								    digest, v3) < 0);

	/* The EVM signature hash over explicit values: SHA-256 over the value,
	 * the reference h_misc and the UUID, recomputed with OpenSSL. */
	{
		static const uint8_t ima[] = { 0x04, 0x04, 1, 2, 3 };
		static const uint8_t misc_bytes[24] = {
			0x69, 0x82, 0xa7, 0, 0, 0, 0, 0, 0x66, 0x3f, 0x7c, 0x1e,
			0, 0, 0, 0, 0, 0, 0, 0, 0xa4, 0x81, 0, 0,
		};
		struct uevm_hmac_misc misc = { .size = sizeof(misc),
			.ino = 10977897, .generation = 511459174, .mode = 0100644,
			.has_uuid = true,
		};
		struct uevm_xattr_entry x1 = { "security.ima", ima, sizeof(ima) };
		uint8_t buf[sizeof(ima) + 24 + 16], out[32];

		memset(misc.uuid, 0x5a, 16);
		memcpy(buf, ima, sizeof(ima));
		memcpy(buf + sizeof(ima), misc_bytes, 24);
		memset(buf + sizeof(ima) + 24, 0x5a, 16);
		EVP_Digest(buf, sizeof(buf), ref, NULL, EVP_sha256(), NULL);
		CHECK("EVM signature hash = SHA-256(values || h_misc || uuid)",
		      uevm_evm_calc_hash_values(UEVM_HASH_SHA256, &x1, 1, &misc, out) == 0 &&
		      !memcmp(out, ref, 32));
	}

	CHECK("a missing key file is an error naming it",
	      uevm_signer_load("/nonexistent/key.pem", NULL, &s) < 0 &&
	      strstr(uevm_last_error(), "/nonexistent/key.pem"));
	{
		struct uevm_certset *set;

		uevm_certset_new(&set);
		path_of(keyp, "rsa", "key");
		CHECK("a private key is not a certificate", uevm_certset_add_file(set, keyp) < 0);
		uevm_certset_free(set);
	}
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			return 1;
	}
	TEST_EXIT();
}
