// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * evmctl mode: the file commands -- ima_hash, ima_sign, sign, verify,
 * ima_verify, ima_setxattr, sign_hash, hmac, ima_fix, ima_clear, import --
 * in evmctl's flow, with its messages and return values.
 */
#include <ctype.h>
#include <fcntl.h>
#include <keyutils.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include "evmctl.h"

/* A path for the l*xattr calls that reaches NAME in directory DFD
 * without following a symlink in its last component. */
static void at_path(int dfd, const char *name, char *buf, size_t size)
{
	if (dfd == AT_FDCWD || name[0] == '/')
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "/proc/self/fd/%d/%s", dfd, name);
}

static int set_xattr(int dfd, const char *file, const char *name,
		     const void *val, size_t len)
{
	char p[4096 + 64];

	at_path(dfd, file, p, sizeof(p));
	return lsetxattr(p, name, val, len, 0) < 0 ? -errno : 0;
}

static ssize_t get_xattr(int dfd, const char *file, const char *name,
			 void *val, size_t len)
{
	char p[4096 + 64];

	at_path(dfd, file, p, sizeof(p));
	return lgetxattr(p, name, val, len);
}

/* ---- ima_hash --------------------------------------------------------------- */

static int hash_ima(int dfd, const char *file)
{
	uint8_t hash[UEVM_MAX_DIGEST_SIZE + 2];
	int algo = ev_hash_algo(ev.hash_algo);
	int len, off, err;

	if (algo < 0) {
		log_err("Unknown hash algo: %s\n", ev.hash_algo);
		return -1;
	}
	/* md4, md5 and sha1 keep the legacy 0x01 form. */
	if (algo > UEVM_HASH_SHA1) {
		hash[0] = IMA_XATTR_DIGEST_NG;
		hash[1] = (uint8_t)algo;
		off = 2;
	} else {
		hash[0] = IMA_XATTR_DIGEST;
		off = 1;
	}
	len = ev_calc_hash(dfd, file, ev.hash_algo, hash + off);
	if (len <= 1)
		return len;
	len += off;
	if (ev.verbose >= EV_LOG_INFO)
		log_info("hash(%s): ", ev.hash_algo);
	if (ev.sigdump || ev.verbose >= EV_LOG_INFO)
		ev_hexdump(hash, (size_t)len);
	if (ev.xattr) {
		err = set_xattr(dfd, file, ev.xattr_ima, hash, (size_t)len);
		if (err) {
			ev_log_errno_reset(-err, "Setting IMA hash xattr failed: %s", file);
			return -1;
		}
	}
	return 0;
}

int ev_cmd_hash_ima(const struct ev_command *cmd)
{
	return ev_do_cmd(cmd, hash_ima);
}

/* ---- ima_sign ----------------------------------------------------------------- */

/* FILE.sig beside FILE: in a tree walk FILE is named relative to DFD,
 * as evmctl's chdir-based walk names it. */
static int write_sigfile(int dfd, const char *file, const uint8_t *sig, size_t len)
{
	char name[4096 + 8];
	FILE *fp = NULL;
	int fd;

	snprintf(name, sizeof(name), "%s.sig", file);
	log_info("Writing to %s\n", name);
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd >= 0 && !(fp = fdopen(fd, "w")))
		close(fd);
	if (!fp) {
		log_err("Failed to open: %s\n", name);
		return -1;
	}
	fwrite(sig, len, 1, fp);
	fclose(fp);
	return 0;
}

static int sign_ima(int dfd, const char *file)
{
	uint8_t hash[UEVM_MAX_DIGEST_SIZE], sig[EV_MAX_SIG];
	int len, err;

	len = ev_calc_hash(dfd, file, ev.hash_algo, hash);
	if (len <= 1)
		return len;
	len = ev_sign_hash(ev.hash_algo, hash, len, EVM_IMA_XATTR_DIGSIG, 2, sig);
	if (len <= 1)
		return len;
	len++;	/* the type byte */
	if (ev.sigdump || ev.verbose >= EV_LOG_INFO)
		ev_hexdump(sig, (size_t)len);
	if (ev.sigfile)
		write_sigfile(dfd, file, sig, (size_t)len);
	if (ev.xattr) {
		err = set_xattr(dfd, file, ev.xattr_ima, sig, (size_t)len);
		if (err) {
			ev_log_errno_reset(-err, "Setting IMA sig xattr failed: %s", file);
			return -1;
		}
	}
	return 0;
}

int ev_cmd_sign_ima(const struct ev_command *cmd)
{
	return ev_do_cmd(cmd, sign_ima);
}

/* ---- sign (EVM) ------------------------------------------------------------------ */

static int sign_evm(int dfd, const char *file)
{
	uint8_t hash[UEVM_MAX_DIGEST_SIZE], sig[EV_MAX_SIG];
	/* calc_evm_hash takes any OpenSSL name, sign_hash_v2 then only
	 * libimaevm's (ev_sign_hash); -1: ev_calc_evm says why not. */
	int algo = ev_md_algo(EVP_get_digestbyname(ev.hash_algo));
	int len, err;

	len = ev_calc_evm(dfd, file, algo, false, NULL, hash);
	if (len <= 1)
		return len;
	len = ev_sign_hash(ev.hash_algo, hash, len,
			   ev.portable ? EVM_XATTR_PORTABLE_DIGSIG : EVM_IMA_XATTR_DIGSIG,
			   2, sig);
	if (len <= 1)
		return len;
	len++;
	/* -i: evmctl relabels the version-2 signature over its immutable
	 * hash (no inode, generation or UUID) as version 3.  The kernel
	 * hashes the full metadata for type 3 and so rejects it. */
	if (ev.immutable)
		sig[1] = 3;
	if (ev.sigdump || ev.verbose >= EV_LOG_INFO)
		ev_hexdump(sig, (size_t)len);
	if (ev.xattr) {
		err = set_xattr(dfd, file, ev.xattr_evm, sig, (size_t)len);
		if (err) {
			ev_log_errno_reset(-err, "Setting EVM xattr failed: %s", file);
			return -1;
		}
	}
	return 0;
}

static int sign_evm_path(int dfd, const char *file)
{
	int err;

	if (ev.digsig) {
		err = sign_ima(dfd, file);
		if (err)
			return err;
	}
	if (ev.digest) {
		err = hash_ima(dfd, file);
		if (err)
			return err;
	}
	return sign_evm(dfd, file);
}

int ev_cmd_sign_evm(const struct ev_command *cmd)
{
	return ev_do_cmd(cmd, sign_evm_path);
}

/* ---- verify (EVM) and ima_verify -------------------------------------------------- */

static const char *cert_path(void)
{
	return ev.keyfile ? ev.keyfile : EV_DEFAULT_CERT;
}

static int verify_evm(const struct uevm_certset *set, const char *file)
{
	uint8_t hash[UEVM_MAX_DIGEST_SIZE], sig[EV_MAX_SIG];
	ssize_t len;
	int algo, mdlen;

	len = get_xattr(AT_FDCWD, file, ev.xattr_evm, sig, sizeof(sig));
	if (len < 0) {
		ev.err_no = errno;
		log_err("getxattr failed: %s\n", file);
		return -1;
	}
	if (len < 3 || (sig[0] != EVM_IMA_XATTR_DIGSIG &&
			sig[0] != EVM_XATTR_PORTABLE_DIGSIG)) {
		log_err("%s has no signature\n", ev.xattr_evm);
		return -1;
	}
	if (sig[0] == EVM_XATTR_PORTABLE_DIGSIG) {
		/* evmctl 1.6 takes version 2 only; the kernel also 3. */
		if (sig[1] != 2 && sig[1] != 3) {
			log_err("Portable sig: invalid type\n");
			return -1;
		}
		ev.portable = true;
	}
	algo = (sig[1] == 2 || sig[1] == 3) && uevm_hash_algo_name(sig[2]) ? sig[2] : -1;
	if (algo < 0) {
		log_err("unknown hash algo: %s\n", file);
		return -1;
	}
	/* A hash this OpenSSL cannot compute leaves nothing verified: a
	 * failure (evmctl's calc_evm_hash returns 1 there), never "OK". */
	if (!uevm_hash_algo_available(algo)) {
		log_err("EVP_get_digestbyname(%s) failed\n", uevm_hash_algo_name(algo));
		return 1;
	}
	mdlen = ev_calc_evm(AT_FDCWD, file, algo, false, NULL, hash);
	if (mdlen <= 1)
		return mdlen < 0 ? mdlen : 1;
	if (sig[0] == EVM_IMA_XATTR_DIGSIG && sig[1] == 3) {
		/* What sign -i writes: evmctl's imaevm_verify_hash takes
		 * version 3 for sigv3, which it computes for fs-verity only. */
		log_err("Only fsverity supports signature format v3 (sigv3)\n");
		return -1;
	}
	return ev_verify_hash(set, file, algo, hash, mdlen, sig, (int)len);
}

int ev_cmd_verify_evm(const struct ev_command *cmd)
{
	struct uevm_certset *set = NULL;
	const char *file = ev_next_arg();
	int err;

	if (!file) {
		log_err("Parameters missing\n");
		ev_print_usage(cmd);
		return -1;
	}
	if (ev.sigv1) {
		log_info("Signature version 1 deprecated.");
		return -1;
	}
	err = ev_init_public_keys(cert_path(), &set);
	if (err < 0) {
		log_info("Failed loading public keys");
		return err;
	}
	err = verify_evm(set, file);
	if (!err && ev.verbose >= EV_LOG_INFO)
		log_info("%s: verification is OK\n", file);
	uevm_certset_free(set);
	return err;
}

static uint8_t *file2bin(const char *file, const char *ext, size_t *size)
{
	char name[4096 + 8];
	struct stat st;
	uint8_t *data;
	FILE *fp;

	if (ext)
		snprintf(name, sizeof(name), "%s.%s", file, ext);
	else
		snprintf(name, sizeof(name), "%s", file);
	log_info("Reading to %s\n", name);
	fp = fopen(name, "re");
	if (!fp) {
		ev.err_no = errno;
		log_err("Failed to open: %s\n", name);
		return NULL;
	}
	if (fstat(fileno(fp), &st) < 0) {
		log_err("Failed to fstat: %s (%s)\n", name, strerror(errno));
		fclose(fp);
		return NULL;
	}
	data = malloc((size_t)st.st_size + 1);
	if (!data || fread(data, (size_t)st.st_size, 1, fp) != 1) {
		log_err("Failed to fread %zu bytes: %s\n", (size_t)st.st_size, name);
		fclose(fp);
		free(data);
		return NULL;
	}
	fclose(fp);
	*size = (size_t)st.st_size;
	return data;
}

static int verify_ima(const struct uevm_certset *set, const char *file)
{
	uint8_t sig[EV_MAX_SIG];
	ssize_t len;

	if (ev.sigfile) {
		size_t n;
		uint8_t *tmp = file2bin(file, "sig", &n);

		if (!tmp) {
			log_err("Failed reading: %s\n", file);
			return -1;
		}
		if (n > sizeof(sig)) {
			log_err("Signature file is too big: %s\n", file);
			free(tmp);
			return -1;
		}
		memcpy(sig, tmp, n);
		free(tmp);
		len = (ssize_t)n;
	} else {
		len = get_xattr(AT_FDCWD, file, ev.xattr_ima, sig, sizeof(sig));
		if (len < 0) {
			ev.err_no = errno;
			log_err("getxattr failed: %s\n", file);
			return -1;
		}
	}
	return ev_ima_verify_signature2(set, file, sig, (int)len, NULL, 0);
}

int ev_ima_verify_signature2(const struct uevm_certset *set, const char *file,
			     const uint8_t *sig, int len, const uint8_t *digest,
			     int digest_len)
{
	uint8_t hash[UEVM_MAX_DIGEST_SIZE];
	int algo, hashlen;

	if (len < 1 || (sig[0] != EVM_IMA_XATTR_DIGSIG && sig[0] != IMA_VERITY_DIGSIG)) {
		log_err("%s: xattr ima has no signature\n", file);
		return -1;
	}
	if (!digest && sig[0] == IMA_VERITY_DIGSIG) {
		log_err("%s: calculating the fs-verity digest is not supported\n", file);
		return -1;
	}
	algo = len >= 3 && (sig[1] == 2 || sig[1] == 3) && uevm_hash_algo_name(sig[2]) ?
		       sig[2] : -1;
	if (algo < 0) {
		log_err("%s: Invalid signature\n", file);
		return -1;
	}
	/* The digest a measurement list recorded, or the file's own. */
	if (digest && digest_len > 0)
		return ev_verify_hash(set, file, algo, digest, digest_len, sig, len);
	hashlen = ev_calc_hash(AT_FDCWD, file, ev_hash_algo_ossl_name(algo), hash);
	if (hashlen <= 1)
		return hashlen < 0 ? hashlen : 1;	/* nothing hashed: never "OK" */
	return ev_verify_hash(set, file, algo, hash, hashlen, sig, len);
}

int ev_cmd_verify_ima(const struct ev_command *cmd)
{
	struct uevm_certset *set = NULL;
	const char *file = ev_next_arg();
	int err, fails = 0;

	if (!file) {
		log_err("Parameters missing\n");
		ev_print_usage(cmd);
		return -1;
	}
	if (ev.sigv1) {
		log_info("Signature version 1 deprecated.");
		return 1;
	}
	err = ev_init_public_keys(cert_path(), &set);
	if (err < 0) {
		log_info("Failed loading public keys");
		return err;
	}
	do {
		err = verify_ima(set, file);
		if (err)
			fails++;
		if (!err && ev.verbose >= EV_LOG_INFO)
			log_info("%s: verification is OK\n", file);
	} while ((file = ev_next_arg()));
	uevm_certset_free(set);
	return fails > 0;
}

/* ---- ima_setxattr ------------------------------------------------------------------- */

int ev_cmd_setxattr_ima(const struct ev_command *cmd)
{
	const char *file, *sigpath = NULL;
	uint8_t *sig;
	size_t len;
	int err;

	if (ev.sigfile)
		sigpath = ev_next_arg();
	file = ev_next_arg();
	if (!file) {
		log_err("Parameters missing\n");
		ev_print_usage(cmd);
		return -1;
	}
	sig = sigpath ? file2bin(sigpath, NULL, &len) : file2bin(file, "sig", &len);
	if (!sig)
		return 0;
	err = set_xattr(AT_FDCWD, file, ev.xattr_ima, sig, len);
	free(sig);
	if (err) {
		ev_log_errno_reset(-err, "Setting IMA sig xattr failed: %s", file);
		return -1;
	}
	return 0;
}

/* ---- sign_hash ------------------------------------------------------------------------ */

/*
 * The hex digest of a sign_hash line: N digits (an odd last one is
 * ignored, as evmctl ignores it).  evmctl converts without checking: an
 * over-long digest trips its assert (abort), a non-hex one is signed with
 * whatever its buffer held.  uevm stops instead (exit 125).
 */
static int xval(char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static int line_hash(const char *s, size_t n, uint8_t *out)
{
	if (n / 2 > UEVM_MAX_DIGEST_SIZE) {
		log_err("sign_hash_v2: hash is too long: %zu hex digits\n", n);
		return -1;
	}
	memset(out, 0, UEVM_MAX_DIGEST_SIZE);
	for (size_t i = 0; i < n / 2; i++) {
		if (!isxdigit((unsigned char)s[2 * i]) ||
		    !isxdigit((unsigned char)s[2 * i + 1])) {
			log_err("sign_hash_v2: hash is not hexadecimal\n");
			return -1;
		}
		out[i] = (uint8_t)(xval(s[2 * i]) << 4 | xval(s[2 * i + 1]));
	}
	return (int)(n / 2);
}

/* "<algo>:<hex digest> <path>", as fsverity digest prints it: sigv3.
 * The signature's length, 0 to skip the line (evmctl's "continue"), or
 * -1 to stop. */
static int sign_verity_line(char *line, uint8_t *sig, int *hashlen)
{
	uint8_t hash[UEVM_MAX_DIGEST_SIZE], v3[UEVM_MAX_DIGEST_SIZE];
	char *colon = strchr(line, ':'), *tok;
	char algo_name[7];
	int algo;

	if (!colon || colon == line || colon - line >= (long)sizeof(algo_name)) {
		log_err("Missing/invalid fsverity hash algorithm\n");
		return 0;
	}
	memcpy(algo_name, line, (size_t)(colon - line));
	algo_name[colon - line] = '\0';
	tok = strchr(line, ' ');
	if (!tok || tok <= colon + 1) {
		log_err("Missing fsverity hash\n");
		return 0;
	}
	*hashlen = (int)(tok - colon - 1);
	if (line_hash(colon + 1, (size_t)*hashlen, hash) < 0)
		return -1;
	/* calc_hash_sigv3: libimaevm's name, then OpenSSL's digest. */
	algo = ev_hash_algo(algo_name);
	if (algo < 0) {
		log_err("Hash algorithm %s not supported\n", algo_name);
		log_info("Failure to calculate fs-verity hash\n");
		return 0;
	}
	if (ev_md_check(algo_name, true) || !uevm_hash_algo_available(algo)) {
		log_info("Failure to calculate fs-verity hash\n");
		return 0;
	}
	if (uevm_sig_v3_digest(IMA_VERITY_DIGSIG, algo, hash, v3)) {
		log_info("Failure to calculate fs-verity hash\n");
		return 0;
	}
	/* A digest of the wrong length fails to sign, ending the run. */
	return ev_sign_hash(algo_name, v3, *hashlen / 2, IMA_VERITY_DIGSIG, 3, sig);
}

int ev_cmd_sign_hash(const struct ev_command *cmd)
{
	uint8_t hash[UEVM_MAX_DIGEST_SIZE], sig[EV_MAX_SIG];
	char *line = NULL;
	size_t cap = 0;
	int siglen, hashlen = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (ev.veritysig) {
			siglen = sign_verity_line(line, sig, &hashlen);
			if (siglen == 0)
				continue;
		} else {
			char *tok = strpbrk(line, " \t");

			/* the shaXsum format: "<hex digest> <path>" */
			hashlen = tok ? (int)(tok - line) : (int)strlen(line);
			if (line_hash(line, (size_t)hashlen, hash) < 0) {
				free(line);
				return -1;
			}
			siglen = ev_sign_hash(ev.hash_algo, hash, hashlen / 2,
					      EVM_IMA_XATTR_DIGSIG, 2, sig);
		}
		if (siglen <= 1) {
			free(line);
			return siglen;
		}
		fwrite(line, (size_t)len, 1, stdout);
		fputc(' ', stdout);
		for (int i = 0; i < siglen + 1; i++)
			printf("%02x", sig[i]);
		putchar('\n');
	}
	free(line);
	if (!hashlen) {
		log_err("Parameters missing\n");
		ev_print_usage(cmd);
		return -1;
	}
	return 0;
}

/* ---- hmac ------------------------------------------------------------------------------- */

static int load_hmac_key(const char *path, struct uevm_key **key)
{
	char spec[PATH_MAX + 3];
	struct stat st;

	log_info("Reading to %s\n", path);
	if (stat(path, &st) < 0) {
		ev.err_no = errno;
		log_err("Failed to open: %s\n", path);
		log_err("Failed to read a key: %s\n", path);
		return -1;
	}
	if (st.st_size > UEVM_MAX_KEY_SIZE) {
		log_err("key is too long: %lld\n", (long long)st.st_size);
		return -1;
	}
	/* A file name, never a uevm key spec: "./" keeps a relative name
	 * such as keyring:x or tpm:k a plain path, which is a raw key. */
	snprintf(spec, sizeof(spec), "%s%s", path[0] == '/' ? "" : "./", path);
	if (uevm_key_load(spec, key)) {
		if (st.st_size == 0)
			log_err("Failed to fread 0 bytes: %s\n", path);
		log_err("Failed to read a key: %s\n", path);
		return -1;
	}
	return 0;
}

static int hmac_evm(int dfd, const char *file)
{
	const char *path = ev.hmackeyfile ? ev.hmackeyfile : EV_DEFAULT_HMAC_KEY;
	uint8_t val[1 + UEVM_HMAC_SIZE];
	struct uevm_key *key = NULL;
	int len, err;

	if (load_hmac_key(path, &key))
		return -1;
	len = ev_calc_evm(dfd, file, UEVM_HASH_SHA1, true, key, val + 1);
	uevm_key_free(key);
	if (len < 0)
		return len;
	if (len == 0) {
		/* No protected xattr: the kernel removes security.evm. */
		log_info("no EVM-protected xattr: no hmac\n");
		if (ev.xattr) {
			char p[4096 + 64];

			at_path(dfd, file, p, sizeof(p));
			lremovexattr(p, ev.xattr_evm);
		}
		return 0;
	}
	log_info("hmac: ");
	ev_log_dump(EV_LOG_INFO, val + 1, UEVM_HMAC_SIZE, true);
	if (ev.xattr) {
		val[0] = EVM_XATTR_HMAC;
		err = set_xattr(dfd, file, ev.xattr_evm, val, sizeof(val));
		explicit_bzero(val, sizeof(val));
		if (err) {
			ev_log_errno_reset(-err, "Setting EVM hmac xattr failed: %s", file);
			return -1;
		}
	}
	return 0;
}

int ev_cmd_hmac_evm(const struct ev_command *cmd)
{
	const char *file = ev_next_arg();
	int err;

	if (!file) {
		log_err("Parameters missing\n");
		ev_print_usage(cmd);
		return -1;
	}
	if (ev.digsig) {
		err = sign_ima(AT_FDCWD, file);
		if (err)
			return err;
	}
	if (ev.digest) {
		err = hash_ima(AT_FDCWD, file);
		if (err)
			return err;
	}
	return hmac_evm(AT_FDCWD, file);
}

/* ---- ima_fix, ima_clear ------------------------------------------------------------------ */

static int ima_fix(int dfd, const char *path)
{
	int fd;

	log_info("%s\n", path);
	if (ev.check_xattr &&
	    get_xattr(dfd, path, ev.xattr_ima, NULL, 0) >= 0 &&
	    get_xattr(dfd, path, ev.xattr_evm, NULL, 0) >= 0)
		return 0;	/* re-measuring takes time: both exist */
	/* Opening the file is what makes a kernel in fix mode label it. */
	fd = openat(dfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		log_err("Failed to open file: %s: errno: %s (%d)\n", path,
			strerror(errno), errno);
		return -1;
	}
	close(fd);
	return 0;
}

int ev_cmd_ima_fix(const struct ev_command *cmd)
{
	return ev_do_cmd(cmd, ima_fix);
}

static int ima_clear(int dfd, const char *path)
{
	char p[4096 + 64];

	log_info("%s\n", path);
	at_path(dfd, path, p, sizeof(p));
	lremovexattr(p, ev.xattr_ima);
	lremovexattr(p, ev.xattr_evm);
	return 0;
}

int ev_cmd_ima_clear(const struct ev_command *cmd)
{
	return ev_do_cmd(cmd, ima_clear);
}

/* ---- import ---------------------------------------------------------------------------------- */

static key_serial_t ring_id(const char *ring)
{
	static const struct { const char *name; key_serial_t id; } special[] = {
		{ "@t", KEY_SPEC_THREAD_KEYRING }, { "@p", KEY_SPEC_PROCESS_KEYRING },
		{ "@s", KEY_SPEC_SESSION_KEYRING }, { "@u", KEY_SPEC_USER_KEYRING },
		{ "@us", KEY_SPEC_USER_SESSION_KEYRING }, { "@g", -6 },
	};

	if (!ring)
		return KEY_SPEC_USER_KEYRING;
	if (ring[0] != '@')
		return (key_serial_t)strtoul(ring, NULL,
					     ring[0] == '0' && ring[1] == 'x' ? 16 : 10);
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		if (!strcmp(ring, special[i].name))
			return special[i].id;
	return KEY_SPEC_USER_KEYRING;
}

/* calc_keyid_v2: bytes 16..19 of SHA-1 over the public key bit string
 * (import names the key so, even when the certificate has a SKID). */
static uint32_t pubkey_keyid(X509 *x)
{
	X509_PUBKEY *xp = X509_get_X509_PUBKEY(x);
	const unsigned char *bits;
	uint8_t sha1[20];
	int blen;

	if (!xp || !X509_PUBKEY_get0_param(NULL, &bits, &blen, NULL, xp) ||
	    uevm_hash_buffer(UEVM_HASH_SHA1, bits, (size_t)blen, sha1))
		return 0;
	return (uint32_t)sha1[16] << 24 | (uint32_t)sha1[17] << 16 |
	       (uint32_t)sha1[18] << 8 | sha1[19];
}

int ev_cmd_import(const struct ev_command *cmd)
{
	const char *inkey = ev_next_arg(), *ring = NULL;
	key_serial_t id;
	uint8_t *der;
	uint32_t kid;
	size_t len;
	X509 *x;
	FILE *fp;

	(void)cmd;
	if (ev.sigv1) {
		log_info("Importing public RSA key is not supported\n");
		return 1;
	}
	if (!inkey)
		inkey = EV_DEFAULT_CERT;
	else
		ring = ev_next_arg();
	id = ring_id(ring);
	/* The kernel's asymmetric key type parses DER certificates. */
	fp = fopen(inkey, "re");
	if (!fp)
		ev.err_no = errno;	/* evmctl's final "errno: ..." line */
	x = fp ? d2i_X509_fp(fp, NULL) : NULL;
	if (fp)
		fclose(fp);
	if (!x) {
		if (fp)
			log_err("Failed to d2i_X509_fp key file: %s\n", inkey);
		ev_output_openssl_errors();
		return 1;
	}
	kid = pubkey_keyid(x);
	X509_free(x);
	der = file2bin(inkey, NULL, &len);
	if (!der)
		return 1;
	log_info("Importing public key %x from file %s into keyring %d\n",
		 kid, inkey, id);
	id = add_key("asymmetric", NULL, der, len, id);
	free(der);
	if (id < 0) {
		ev.err_no = errno;
		log_err("add_key failed\n");
		return id;
	}
	log_info("keyid: %d\n", id);
	printf("%d\n", id);
	return 0;
}
