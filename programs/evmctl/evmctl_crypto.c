// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * evmctl mode: content hashes, signing and signature checks with
 * libimaevm's messages.  The private key is loaded once per run (evmctl
 * reads it again for every file); the messages are still printed per
 * signature, as evmctl prints them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include "evmctl.h"

/*
 * libimaevm's names (imaevm_get_hash_algo): exact, lower case.  Its own
 * table (OpenSSL's primary names, the kernel's streebog names), then the
 * kernel's hash_algo_name[] as ima-evm-utils' hash_info.gen derives it
 * from <linux/hash_info.h>: the enum name in lower case without its
 * underscores ("ripemd160", "wp256"; sm3_256 is "sm3").  Kernel headers
 * of Debian 12 (6.1) end at streebog512: no SHA-3 names.
 */
static const struct { const char *name; int algo; } ev_algos[] = {
	{ "md4", UEVM_HASH_MD4 }, { "md5", UEVM_HASH_MD5 },
	{ "sha1", UEVM_HASH_SHA1 }, { "rmd160", UEVM_HASH_RMD160 },
	{ "sha256", UEVM_HASH_SHA256 }, { "sha384", UEVM_HASH_SHA384 },
	{ "sha512", UEVM_HASH_SHA512 }, { "sha224", UEVM_HASH_SHA224 },
	{ "sm3", UEVM_HASH_SM3_256 },
	{ "md_gost12_256", UEVM_HASH_STREEBOG_256 },
	{ "md_gost12_512", UEVM_HASH_STREEBOG_512 },
	{ "streebog256", UEVM_HASH_STREEBOG_256 },
	{ "streebog512", UEVM_HASH_STREEBOG_512 },
	{ "ripemd160", UEVM_HASH_RMD160 }, { "ripemd128", 8 },
	{ "ripemd256", 9 }, { "ripemd320", 10 }, { "wp256", 11 },
	{ "wp384", 12 }, { "wp512", 13 }, { "tgr128", 14 }, { "tgr160", 15 },
	{ "tgr192", 16 },
};

int ev_hash_algo(const char *name)
{
	if (!name)
		return -1;
	for (size_t i = 0; i < sizeof(ev_algos) / sizeof(ev_algos[0]); i++)
		if (!strcmp(name, ev_algos[i].name))
			return ev_algos[i].algo;
	return -1;
}

const char *ev_hash_algo_ossl_name(int algo)
{
	/* imaevm_hash_algo_by_id: OpenSSL's names first. */
	if (algo == UEVM_HASH_STREEBOG_256)
		return "md_gost12_256";
	if (algo == UEVM_HASH_STREEBOG_512)
		return "md_gost12_512";
	return uevm_hash_algo_name(algo);
}

int ev_md_algo(const struct evp_md_st *md)
{
	int nid = md ? EVP_MD_get_type(md) : NID_undef;

	for (int i = 0; nid != NID_undef && i < UEVM_HASH_ALGO__LAST; i++) {
		const char *name = ev_hash_algo_ossl_name(i);
		const EVP_MD *k = name ? EVP_get_digestbyname(name) : NULL;

		if (k && EVP_MD_get_type(k) == nid && uevm_hash_algo_available(i))
			return i;
	}
	return -1;
}

int ev_md_check(const char *name, bool errors)
{
	const EVP_MD *md = EVP_get_digestbyname(name);
	EVP_MD_CTX *ctx;
	bool init;

	if (!md) {
		log_err("EVP_get_digestbyname(%s) failed\n", name);
		if (errors)
			ev_output_openssl_errors();
		return 1;
	}
	ctx = EVP_MD_CTX_new();
	init = ctx && EVP_DigestInit_ex(ctx, md, NULL);
	EVP_MD_CTX_free(ctx);
	if (!init) {
		log_err("EVP_DigestInit() failed\n");
		if (errors)
			ev_output_openssl_errors();
	}
	ERR_clear_error();
	return !init;
}

/* What ima_calc_hash2 does for a digest uevm has no kernel id for, or
 * one OpenSSL names but cannot compute: EVP over the file. */
static int evp_hash_fd(int fd, const EVP_MD *md, uint8_t *hash)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int mdlen = 0;
	uint8_t buf[65536];
	ssize_t n;
	int ret = 1;

	if (!ctx || !EVP_DigestInit_ex(ctx, md, NULL)) {
		log_err("EVP_DigestInit() failed\n");
		ev_output_openssl_errors();
		EVP_MD_CTX_free(ctx);
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_err("fread() failed\n\n");
			ret = -1;
			goto out;
		}
		if (!EVP_DigestUpdate(ctx, buf, (size_t)n)) {
			log_err("EVP_DigestUpdate() failed\n");
			ev_output_openssl_errors();
			goto out;
		}
	}
	if (!EVP_DigestFinal_ex(ctx, hash, &mdlen)) {
		log_err("EVP_DigestFinal() failed\n");
		ev_output_openssl_errors();
		goto out;
	}
	ret = (int)mdlen;
out:
	EVP_MD_CTX_free(ctx);
	return ret;
}

int ev_calc_hash(int dirfd, const char *file, const char *algo_name,
		 uint8_t *hash)
{
	const EVP_MD *md;
	struct uevm_file f;
	struct stat st;
	int algo, ret;

	if (fstatat(dirfd, file, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		ev.err_no = errno;
		log_err("Failed to stat: %s\n", file);
		return -1;
	}
	/* Any name or alias OpenSSL knows, in any case, as evmctl hashes. */
	ERR_clear_error();
	md = EVP_get_digestbyname(algo_name);
	if (!md) {
		log_err("EVP_get_digestbyname(%s) failed\n", algo_name);
		ev_output_openssl_errors();
		return 1;
	}
	algo = ev_md_algo(md);
	if (!S_ISREG(st.st_mode)) {
		log_err("Unsupported file type (0x%x)", st.st_mode & S_IFMT);
		return -1;
	}
	if (uevm_file_openat(&f, dirfd, file, file) || !f.io) {
		ev.err_no = errno;
		if (f.fd >= 0)
			uevm_file_close(&f);
		log_err("Failed to open: %s\n", file);
		return -1;
	}
	if (algo < 0) {
		ret = evp_hash_fd(f.fd, md, hash);
		uevm_file_close(&f);
		return ret;
	}
	ret = uevm_hash_fd(f.fd, algo, hash);
	uevm_file_close(&f);
	if (ret) {
		log_err("fread() failed\n\n");
		return -1;
	}
	return (int)uevm_hash_algo_digest_size(algo);
}

static const char *key_path(void)
{
	return ev.keyfile ? ev.keyfile : EV_DEFAULT_KEY;
}

/* Load the signing key once; evmctl's messages when it cannot be read. */
static int load_signer(void)
{
	const char *key = key_path();
	int fd;

	if (ev.signer)
		return 0;
	if (!strncmp(key, "pkcs11:", 7) && !ev.keyid) {
		log_err("When using a pkcs11 URI you must provide the keyid with an option\n");
		return -1;
	}
	if (!strncmp(key, "pkcs11:", 7)) {
		/* A token's key: through the engine, or libuevm's OSSL_STORE
		 * (a provider). */
		if (ev.engine ? ev_engine_load_signer(ev.engine, key, ev.keypass, &ev.signer)
			      : uevm_signer_load(key, ev.keypass, &ev.signer)) {
			if (!ev.engine) {
				log_err("Failed to load private key %s\n", key);
				log_err("openssl: %s\n", uevm_last_error());
			}
			ev.signer = NULL;
			return -1;
		}
	} else if (uevm_signer_load_ex(key, ev.keypass, UEVM_SIGNER_ASK_PASS, &ev.signer)) {
		fd = open(key, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ev.err_no = errno;
			log_err("Failed to open keyfile: %s\n", key);
		} else {
			close(fd);
			log_err("Failed to PEM_read_PrivateKey key file: %s\n", key);
			log_err("openssl: %s\n", uevm_last_error());
		}
		ev.signer = NULL;
		return -1;
	}
	ev.signer_path = key;
	if (ev.keyid)
		uevm_signer_set_keyid(ev.signer, ev.keyid);
	return 0;
}

/* sign_hash_v2's keyid messages: from a certificate beside the key, or
 * computed from the public key. */
static void log_keyid(void)
{
	uint32_t keyid;

	if (ev.keyid)
		return;
	if (!strncmp(key_path(), "pkcs11:", 7))
		return;
	if (uevm_keyid_from_cert_file(key_path(), &keyid) == 0) {
		log_info("keyid %04x (from %s)\n", keyid, key_path());
		return;
	}
	uevm_clear_last_error();
	if (ev.verbose > EV_LOG_INFO)
		log_info("keyid: %x\n", uevm_signer_keyid(ev.signer));
}

int ev_sign_hash(const char *algo_name, const uint8_t *hash, int size,
		 uint8_t type, int version, uint8_t *sig)
{
	int algo, len;

	if (ev.sigv1) {
		log_info("Signature version 1 deprecated.");
		return -1;
	}
	log_info("hash(%s): ", algo_name);
	ev_log_dump(EV_LOG_INFO, hash, (size_t)size, true);
	if (load_signer())
		return -1;
	algo = ev_hash_algo(algo_name);
	if (algo < 0) {
		log_err("sign_hash_v2: hash algo is unknown: %s\n", algo_name);
		return -1;
	}
	log_keyid();
	if (!EVP_get_digestbyname(algo_name)) {
		/* No OpenSSL error queued: evmctl prints its NULL reason. */
		log_err("sign_hash_v2: signing failed: ((null)) in EVP_get_digestbyname\n");
		return -1;
	}
	if (type == IMA_VERITY_DIGSIG) {
		/* sigv3 over struct ima_file_id; the caller passes that hash. */
		len = uevm_sign_digest_len(ev.signer, EVM_IMA_XATTR_DIGSIG, 2, algo,
					   hash, (size_t)size, sig);
		if (len > 0) {
			sig[0] = IMA_VERITY_DIGSIG;
			sig[1] = 3;
		}
	} else {
		/* A digest of the wrong size: OpenSSL says so, as to evmctl. */
		len = uevm_sign_digest_len(ev.signer, type, version, algo, hash,
					   (size_t)size, sig);
	}
	if (len < 0) {
		/* "signing failed in STEP: error:CODE:LIB::REASON" */
		const char *msg = uevm_last_error(), *in = strstr(msg, " in ");
		const char *colon = in ? strstr(in, ": ") : NULL;
		const char *reason = colon ? strstr(colon, "::") : NULL;

		if (!colon) {
			log_err("sign_hash_v2: signing failed: (%s) in %s\n", msg,
				"EVP_PKEY_sign");
			return -1;
		}
		log_err("sign_hash_v2: signing failed: (%s) in %.*s\n",
			reason ? reason + 2 : "(null)", (int)(colon - in - 4), in + 4);
		if (!strncmp(colon + 2, "error:", 6))
			log_err("openssl: %s\n", colon + 2);
		return -1;
	}
	/* evmctl counts the header without its type byte. */
	log_info("evm/ima signature: %d bytes\n", len - 1);
	return len - 1;
}

/* The certificates of one file, DER (evmctl) or PEM (also accepted). */
static int load_certs(struct uevm_certset *set, const char *keyfile, int *idx)
{
	const uint8_t *d;
	struct stat st;
	size_t before = uevm_certset_count(set);
	X509 *x;
	FILE *fp;
	long len;
	int added;

	fp = fopen(keyfile, "re");
	if (!fp) {
		if (ev.verbose > EV_LOG_INFO)
			log_info("Failed to open keyfile: %s\n", keyfile);
		return 0;
	}
	if (fstat(fileno(fp), &st) < 0 || !S_ISREG(st.st_mode)) {
		if (ev.verbose > EV_LOG_INFO)
			log_err("Key file is not regular file: %s\n", keyfile);
		fclose(fp);
		return 0;
	}
	ERR_clear_error();
	x = d2i_X509_fp(fp, NULL);
	if (!x) {
		/* Not DER: PEM is welcome here, where evmctl stops.  On
		 * failure the queue keeps the DER reasons evmctl prints. */
		ERR_set_mark();
		rewind(fp);
		x = PEM_read_X509(fp, NULL, NULL, NULL);
		if (!x)
			ERR_pop_to_mark();
	}
	fclose(fp);
	if (!x) {
		log_err("Failed to d2i_X509_fp key file: %s\n", keyfile);
		ev_output_openssl_errors();
		return 0;
	}
	ERR_clear_error();
	added = uevm_certset_add_file(set, keyfile);
	if (added <= 0) {
		log_err("Failed to X509_extract_key key file: %s\n", keyfile);
		log_err("openssl: %s\n", uevm_last_error());
		X509_free(x);
		return 0;
	}
	len = 0;
	d = X509_get0_subject_key_id(x) ?
		    ASN1_STRING_get0_data(X509_get0_subject_key_id(x)) : NULL;
	if (d)
		len = ASN1_STRING_length(X509_get0_subject_key_id(x));
	X509_free(x);
	for (size_t i = before; i < uevm_certset_count(set); i++) {
		uint32_t keyid = uevm_certset_keyid(set, i);

		if (i == before) {
			if (!d)
				log_err("read keyid: %s: SKID not found\n", keyfile);
			else if (len < 4)
				log_err("read keyid: %s: SKID too short (len %ld)\n",
					keyfile, len);
			else
				log_info("keyid %04x (from %s)\n", keyid, keyfile);
		}
		log_info("key %d: %x %s\n", (*idx)++, keyid, keyfile);
	}
	return 0;
}

int ev_init_public_keys(const char *keyfiles, struct uevm_certset **set)
{
	char *list, *p, *keyfile;
	int idx = 1;

	if (uevm_certset_new(set))
		return -ENOMEM;
	list = strdup(keyfiles);
	if (!list)
		return -ENOMEM;
	for (p = list; (keyfile = strsep(&p, ", \t")) != NULL;) {
		if (!*keyfile)
			continue;
		load_certs(*set, keyfile, &idx);
	}
	free(list);
	return 0;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Keyids already reported unknown: evmctl adds them to its key list and
 * does not report them again. */
static uint32_t unknown_ids[64];
static size_t n_unknown;

int ev_verify_hash(const struct uevm_certset *set, const char *file, int algo,
		   const uint8_t *hash, int size, const uint8_t *sig, int siglen)
{
	uint32_t keyid;
	const char *reason;
	int ret;

	if (siglen < 2)
		return -1;
	if (sig[1] == 1) {
		log_info("Signature version 1 deprecated.");
		return -1;
	}
	if (sig[1] != 2 && sig[1] != 3)
		return -1;
	if (ev.verbose > EV_LOG_INFO) {
		log_info("hash(%s): ", ev_hash_algo_ossl_name(algo));
		ev_log_dump(EV_LOG_INFO, hash, (size_t)size, true);
	}
	if (siglen < UEVM_SIG_HDR_SIZE)
		return -1;
	keyid = get_be32(sig + 3);
	ERR_clear_error();
	ret = uevm_sig_verify(set, sig, (size_t)siglen, hash, (size_t)size);
	if (ret == -ENOKEY) {
		bool seen = false;

		for (size_t i = 0; i < n_unknown; i++)
			seen |= unknown_ids[i] == keyid;
		if (!seen) {
			log_err("key %zu: %x (unknown keyid)\n",
				uevm_certset_count(set) + n_unknown + 1, keyid);
			if (n_unknown < 64)
				unknown_ids[n_unknown++] = keyid;
		}
		if (ev.verbose > EV_LOG_INFO)
			log_info("%s: verification failed: unknown keyid %x\n", file, keyid);
		return -1;
	}
	if (!ret)
		return 0;
	if (ret == -EKEYREJECTED) {
		reason = ERR_reason_error_string(ERR_get_error());
		log_err("%s: verification failed: %d (%s)\n", file, 0,
			reason ? reason : "(null)");
		ev_output_openssl_errors();
		return 1;
	}
	reason = ERR_reason_error_string(ERR_peek_error());
	log_err("%s: verification failed: %d (%s) in %s\n", file, -1,
		reason ? reason : uevm_last_error(), "EVP_PKEY_verify");
	ev_output_openssl_errors();
	return -1;
}
