// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * security.ima / security.evm value parsers over every type, and the
 * security.ima writer: valid values parse into the right fields, malformed
 * ones are refused with -EINVAL and a reason in uevm_last_error().
 */
#include <errno.h>
#include "uevm_internal.h"
#include "test.h"

/* Digest sizes of the kernel's hash_digest_size[] (crypto/hash_info.c). */
static const struct {
	int id;
	unsigned int size;
} kernel_sizes[] = {
	{ 0, 16 }, { 1, 16 }, { 2, 20 }, { 3, 20 }, { 4, 32 }, { 5, 48 },
	{ 6, 64 }, { 7, 28 }, { 8, 16 }, { 9, 32 }, { 10, 40 }, { 11, 32 },
	{ 12, 48 }, { 13, 64 }, { 14, 16 }, { 15, 20 }, { 16, 24 },
	{ 17, 32 }, { 18, 32 }, { 19, 64 }, { 20, 32 }, { 21, 48 }, { 22, 64 },
};

static unsigned char buf[4096];
static char name[200];
static char what_buf[160];	/* descriptions handed to expect_reject */

/* A recognisable digest: bytes 0x80, 0x81, ... (no zero tail). */
static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(0x80 + i);
}

/* Parse a malformed value: must be -EINVAL with a reason. */
static void expect_reject(const char *what, bool evm, const unsigned char *val,
			  size_t len)
{
	struct uevm_xattr_value v;
	int ret;

	uevm_clear_last_error();
	ret = evm ? evm_xattr_parse(val, len, &v)
		  : ima_xattr_parse(val, len, &v);
	snprintf(name, sizeof(name), "%s: %s rejected with -EINVAL",
		 evm ? "security.evm" : "security.ima", what);
	CHECK(name, ret == -EINVAL);
	snprintf(name, sizeof(name), "%s: %s has a reason",
		 evm ? "security.evm" : "security.ima", what);
	CHECK(name, uevm_last_error()[0] != '\0');
	if (uevm_last_error()[0])
		printf("  reason: %s\n", uevm_last_error());
}

/* Signature header: type, version, algo, keyid (be32), sig_size (be16). */
static size_t make_sig(unsigned char *p, unsigned char type,
		       unsigned char version, unsigned char algo,
		       unsigned int keyid, unsigned int sig_size,
		       size_t actual_sig)
{
	p[0] = type;
	p[1] = version;
	p[2] = algo;
	p[3] = (unsigned char)(keyid >> 24);
	p[4] = (unsigned char)(keyid >> 16);
	p[5] = (unsigned char)(keyid >> 8);
	p[6] = (unsigned char)keyid;
	p[7] = (unsigned char)(sig_size >> 8);
	p[8] = (unsigned char)sig_size;
	fill(p + UEVM_SIG_HDR_SIZE, actual_sig);
	return UEVM_SIG_HDR_SIZE + actual_sig;
}

static void test_digest_v1(void)
{
	struct uevm_xattr_value v;
	int ret;

	/* 0x01 + 20-byte SHA-1 */
	buf[0] = IMA_XATTR_DIGEST;
	fill(buf + 1, 20);
	ret = ima_xattr_parse(buf, 21, &v);
	CHECK("0x01 sha1: parses", ret == 0);
	CHECK("0x01 sha1: type, algo sha1, 20-byte digest after the type byte",
	      v.type == IMA_XATTR_DIGEST && v.algo == UEVM_HASH_SHA1 &&
	      v.digest == buf + 1 && v.digest_len == 20);

	/* Old kernels stored md5 zero-padded to 20 bytes (ima_get_hash_algo). */
	memset(buf + 17, 0, 4);
	ret = ima_xattr_parse(buf, 21, &v);
	CHECK("0x01 with a zero tail: legacy md5", ret == 0 &&
	      v.algo == UEVM_HASH_MD5);

	/* 0x01 + 16-byte md5 */
	fill(buf + 1, 16);
	ret = ima_xattr_parse(buf, 17, &v);
	CHECK("0x01 md5 (17 bytes): parses as md5", ret == 0 &&
	      v.algo == UEVM_HASH_MD5 && v.digest_len == 16);

	expect_reject("0x01 alone", false, buf, 1);
	expect_reject("0x01 with a truncated digest (19 bytes)", false, buf, 20);
	expect_reject("0x01 with one byte too many", false, buf, 22);
	expect_reject("0x01 with a 32-byte digest", false, buf, 33);
}

static void test_digest_ng(void)
{
	struct uevm_xattr_value v;
	unsigned int nalgo = 0;

	for (size_t i = 0; i < sizeof(kernel_sizes) / sizeof(kernel_sizes[0]); i++) {
		int id = kernel_sizes[i].id;
		unsigned int size = kernel_sizes[i].size;
		int ret;

		snprintf(name, sizeof(name), "algo id %d (%s): kernel digest size %u",
			 id, uevm_hash_algo_name(id), size);
		CHECK(name, uevm_hash_algo_digest_size(id) == size);
		buf[0] = IMA_XATTR_DIGEST_NG;
		buf[1] = (unsigned char)id;
		fill(buf + 2, size);
		ret = ima_xattr_parse(buf, 2 + size, &v);
		snprintf(name, sizeof(name), "0x04 %s (%u bytes): parses",
			 uevm_hash_algo_name(id), size);
		CHECK(name, ret == 0 && v.type == IMA_XATTR_DIGEST_NG &&
		      v.algo == id && v.digest == buf + 2 &&
		      v.digest_len == size);
		nalgo += ret == 0;

		snprintf(what_buf, sizeof(what_buf), "0x04 %s truncated by one byte",
			 uevm_hash_algo_name(id));
		expect_reject(what_buf, false, buf, 1 + size);
		snprintf(what_buf, sizeof(what_buf), "0x04 %s one byte too long",
			 uevm_hash_algo_name(id));
		expect_reject(what_buf, false, buf, 3 + size);
	}
	CHECK("0x04 accepted for all 23 kernel algorithms", nalgo == 23);

	buf[0] = IMA_XATTR_DIGEST_NG;
	expect_reject("0x04 without algorithm byte", false, buf, 1);
	buf[1] = UEVM_HASH_SHA256;
	expect_reject("0x04 sha256 without digest", false, buf, 2);
	buf[1] = UEVM_HASH_ALGO__LAST;
	fill(buf + 2, 32);
	expect_reject("0x04 with unknown algo id 23", false, buf, 34);
	buf[1] = 0xff;
	expect_reject("0x04 with unknown algo id 255", false, buf, 34);
}

static void test_sig(bool evm, unsigned char type)
{
	struct uevm_xattr_value v;
	char what[80];
	size_t len;
	int ret;

	for (unsigned char ver = 2; ver <= 3; ver++) {
		len = make_sig(buf, type, ver, UEVM_HASH_SHA256, 0x1a2b3c4d, 256, 256);
		ret = evm ? evm_xattr_parse(buf, len, &v)
			  : ima_xattr_parse(buf, len, &v);
		snprintf(name, sizeof(name),
			 "%s type 0x%02x sig v%u: header fields parsed",
			 evm ? "security.evm" : "security.ima", type, ver);
		CHECK(name, ret == 0 && v.type == type && v.sig_version == ver &&
		      v.algo == UEVM_HASH_SHA256 && v.keyid == 0x1a2b3c4d &&
		      v.sig == buf + UEVM_SIG_HDR_SIZE && v.sig_len == 256);
	}
	/* A 16-bit sig_size bigger than 255 must be read big-endian. */
	len = make_sig(buf, type, 2, UEVM_HASH_SHA512, 0xdeadbeef, 0x0102, 0x0102);
	ret = evm ? evm_xattr_parse(buf, len, &v)
		  : ima_xattr_parse(buf, len, &v);
	snprintf(name, sizeof(name), "%s type 0x%02x: big-endian keyid and size",
		 evm ? "security.evm" : "security.ima", type);
	CHECK(name, ret == 0 && v.keyid == 0xdeadbeef && v.sig_len == 0x0102 &&
	      v.algo == UEVM_HASH_SHA512);

#define REJECT(desc, l)                                                        \
	do {                                                                   \
		snprintf(what, sizeof(what), "type 0x%02x " desc, type);       \
		expect_reject(what, evm, buf, l);                              \
	} while (0)
	len = make_sig(buf, type, 2, UEVM_HASH_SHA256, 1, 64, 64);
	REJECT("sig_size says 64, 63 present", len - 1);
	len = make_sig(buf, type, 2, UEVM_HASH_SHA256, 1, 64, 65);
	REJECT("sig_size says 64, 65 present", len);
	len = make_sig(buf, type, 2, UEVM_HASH_SHA256, 1, 0x4000, 64);
	REJECT("sig_size larger than the value", len);
	len = make_sig(buf, type, 2, UEVM_HASH_SHA256, 1, 0, 0);
	REJECT("with an empty signature", len);
	REJECT("header truncated to 8 bytes", 8);
	REJECT("header truncated to 2 bytes", 2);
	REJECT("type byte alone", 1);
	len = make_sig(buf, type, 1, UEVM_HASH_SHA256, 1, 64, 64);
	REJECT("signature version 1", len);
	len = make_sig(buf, type, 4, UEVM_HASH_SHA256, 1, 64, 64);
	REJECT("signature version 4", len);
	len = make_sig(buf, type, 2, 0xee, 1, 64, 64);
	REJECT("unknown hash algo id 238", len);
	len = make_sig(buf, type, 2, UEVM_HASH_ALGO__LAST, 1, 64, 64);
	REJECT("unknown hash algo id 23", len);
#undef REJECT
}

static void test_unknown_types(void)
{
	/* security.ima knows 0x01, 0x03, 0x04, 0x06 */
	static const unsigned char ima_bad[] = { 0x00, 0x02, 0x05, 0x07, 0x7f, 0xff };
	/* security.evm knows 0x02, 0x03, 0x05 */
	static const unsigned char evm_bad[] = { 0x00, 0x01, 0x04, 0x06, 0x07, 0xff };

	for (size_t i = 0; i < sizeof(ima_bad); i++) {
		buf[0] = ima_bad[i];
		fill(buf + 1, 32);
		snprintf(what_buf, sizeof(what_buf), "unknown type 0x%02x", ima_bad[i]);
		expect_reject(what_buf, false, buf, 33);
		/* The reason names the type byte. */
		snprintf(name, sizeof(name), "security.ima: reason for type 0x%02x names it",
			 ima_bad[i]);
		{
			char t[8];

			snprintf(t, sizeof(t), "%02x", ima_bad[i]);
			CHECK(name, strstr(uevm_last_error(), t) != NULL);
		}
	}
	for (size_t i = 0; i < sizeof(evm_bad); i++) {
		buf[0] = evm_bad[i];
		fill(buf + 1, 20);
		snprintf(what_buf, sizeof(what_buf), "unknown type 0x%02x", evm_bad[i]);
		expect_reject(what_buf, true, buf, 21);
	}
	expect_reject("empty value", false, buf, 0);
	expect_reject("empty value", true, buf, 0);
}

static void test_evm_hmac(void)
{
	struct uevm_xattr_value v;
	int ret;

	buf[0] = EVM_XATTR_HMAC;
	fill(buf + 1, 20);
	ret = evm_xattr_parse(buf, 21, &v);
	CHECK("security.evm 0x02 HMAC (21 bytes): parses", ret == 0 &&
	      v.type == EVM_XATTR_HMAC && v.digest == buf + 1 &&
	      v.digest_len == UEVM_HMAC_SIZE);
	expect_reject("0x02 alone", true, buf, 1);
	expect_reject("0x02 HMAC truncated to 19 bytes", true, buf, 20);
	expect_reject("0x02 HMAC with one byte too many", true, buf, 22);
	expect_reject("0x02 with a SHA-256-sized HMAC", true, buf, 33);
}

/* uevm_ima_xattr_format: the kernel's ima_fix_xattr layout. */
static void test_format(void)
{
	/* one spare byte in out shows that nothing is written past the value */
	unsigned char digest[UEVM_MAX_DIGEST_SIZE], out[2 + UEVM_MAX_DIGEST_SIZE + 1];
	struct uevm_xattr_value v;
	int n;

	fill(digest, sizeof(digest));
	for (size_t i = 0; i < sizeof(kernel_sizes) / sizeof(kernel_sizes[0]); i++) {
		int id = kernel_sizes[i].id;
		unsigned int size = kernel_sizes[i].size;
		/* algo <= sha1 keeps the legacy one-byte header */
		bool legacy = id <= UEVM_HASH_SHA1;
		bool ok;

		memset(out, 0xee, sizeof(out));
		n = uevm_ima_xattr_format(id, digest, out);
		if (legacy)
			ok = n == (int)(1 + size) && out[0] == IMA_XATTR_DIGEST &&
			     !memcmp(out + 1, digest, size);
		else
			ok = n == (int)(2 + size) && out[0] == IMA_XATTR_DIGEST_NG &&
			     out[1] == id && !memcmp(out + 2, digest, size);
		ok = ok && out[n] == 0xee;	/* nothing written past the end */
		snprintf(name, sizeof(name), "format %s: %s header, %u-byte digest",
			 uevm_hash_algo_name(id), legacy ? "0x01" : "0x04+id", size);
		CHECK(name, ok);
		/* Round trip (md4 has no 0x01 form of its own: it reads as md5). */
		if (id != UEVM_HASH_MD4 && n > 0) {
			int ret = ima_xattr_parse(out, (size_t)n, &v);

			snprintf(name, sizeof(name), "format %s parses back",
				 uevm_hash_algo_name(id));
			CHECK(name, ret == 0 && v.algo == id && v.digest_len == size &&
			      !memcmp(v.digest, digest, size));
		}
	}
	/* Concrete values: sha1 and sha256 of "" */
	{
		char hex[2 * sizeof(out) + 1];

		uevm_hash_buffer(UEVM_HASH_SHA1, "", 0, digest);
		n = uevm_ima_xattr_format(UEVM_HASH_SHA1, digest, out);
		bin2hex(out, (size_t)n, hex);
		CHECK("format sha1(\"\") = 01 da39a3ee...",
		      !strcmp(hex, "01da39a3ee5e6b4b0d3255bfef95601890afd80709"));
		uevm_hash_buffer(UEVM_HASH_SHA256, "", 0, digest);
		n = uevm_ima_xattr_format(UEVM_HASH_SHA256, digest, out);
		bin2hex(out, (size_t)n, hex);
		CHECK("format sha256(\"\") = 0404 e3b0c442...",
		      !strcmp(hex, "0404e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
	}
	uevm_clear_last_error();
	n = uevm_ima_xattr_format(UEVM_HASH_ALGO__LAST, digest, out);
	CHECK("format with algo id 23 fails", n < 0);
	CHECK("format with algo id 23 has a reason", uevm_last_error()[0] != '\0');
	n = uevm_ima_xattr_format(-1, digest, out);
	CHECK("format with algo id -1 fails", n < 0);
}

int main(void)
{
	test_digest_v1();
	test_digest_ng();
	test_sig(false, EVM_IMA_XATTR_DIGSIG);
	test_sig(false, IMA_VERITY_DIGSIG);
	test_sig(true, EVM_IMA_XATTR_DIGSIG);
	test_sig(true, EVM_XATTR_PORTABLE_DIGSIG);
	test_evm_hmac();
	test_unknown_types();
	test_format();
	TEST_EXIT();
}
