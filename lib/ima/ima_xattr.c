// SPDX-License-Identifier: LGPL-2.1-or-later
/* security.ima and security.evm value formats (reference section 1). */
#include <string.h>
#include "lib_private.h"

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Signature v2/v3 header: type, version, hash_algo, keyid(be32), size(be16). */
static int parse_sig(const uint8_t *val, size_t len,
		     struct uevm_xattr_value *out)
{
	size_t sig_size;

	if (len < UEVM_SIG_HDR_SIZE)
		return uevm_err(EINVAL, "signature header truncated (%zu of 9 bytes)",
				len);
	out->sig_version = val[1];
	if (out->sig_version != 2 && out->sig_version != 3)
		return uevm_err(EINVAL, "unsupported signature version %u",
				val[1]);
	out->algo = val[2];
	if (!uevm_hash_algo_name(out->algo))
		return uevm_err(EINVAL, "unknown hash algorithm id %u", val[2]);
	out->keyid = get_be32(val + 3);
	sig_size = (size_t)val[7] << 8 | val[8];
	if (sig_size != len - UEVM_SIG_HDR_SIZE)
		return uevm_err(EINVAL,
				"signature size field says %zu bytes, value has %zu",
				sig_size, len - UEVM_SIG_HDR_SIZE);
	if (sig_size == 0)
		return uevm_err(EINVAL, "empty signature");
	out->sig = val + UEVM_SIG_HDR_SIZE;
	out->sig_len = sig_size;
	return 0;
}

static void clear_value(struct uevm_xattr_value *out)
{
	memset(out, 0, sizeof(*out));
	out->algo = -1;
}

int ima_xattr_parse(const uint8_t *val, size_t len, struct uevm_xattr_value *out)
{
	unsigned int size;

	clear_value(out);
	if (len == 0)
		return uevm_err(EINVAL, "empty value");
	out->type = val[0];
	switch (val[0]) {
	case IMA_XATTR_DIGEST:
		/* As the kernel's ima_get_hash_algo: 20 bytes are SHA-1, except
		 * that old kernels stored md5 zero-padded to 20; 16 are md5. */
		out->digest = val + 1;
		out->digest_len = len - 1;
		if (len == 21) {
			static const uint8_t zero[4];

			out->algo = memcmp(val + 17, zero, 4) ? UEVM_HASH_SHA1
							      : UEVM_HASH_MD5;
			return 0;
		}
		if (len == 17) {
			out->algo = UEVM_HASH_MD5;
			return 0;
		}
		return uevm_err(EINVAL,
				"type 0x01 holds a 20-byte SHA-1 digest, value has %zu bytes",
				len - 1);
	case IMA_XATTR_DIGEST_NG:
		if (len < 2)
			return uevm_err(EINVAL, "type 0x04 without algorithm byte");
		out->algo = val[1];
		size = uevm_hash_algo_digest_size(out->algo);
		if (!size)
			return uevm_err(EINVAL, "unknown hash algorithm id %u",
					val[1]);
		out->digest = val + 2;
		out->digest_len = len - 2;
		if (len - 2 != size)
			return uevm_err(EINVAL,
					"%s digest must be %u bytes, value has %zu",
					uevm_hash_algo_name(out->algo), size,
					len - 2);
		return 0;
	case EVM_IMA_XATTR_DIGSIG:
	case IMA_VERITY_DIGSIG:
		return parse_sig(val, len, out);
	default:
		return uevm_err(EINVAL, "unknown security.ima type 0x%02x",
				val[0]);
	}
}

int evm_xattr_parse(const uint8_t *val, size_t len, struct uevm_xattr_value *out)
{
	clear_value(out);
	if (len == 0)
		return uevm_err(EINVAL, "empty value");
	out->type = val[0];
	switch (val[0]) {
	case EVM_XATTR_HMAC:
		out->algo = UEVM_HASH_SHA1;
		out->digest = val + 1;
		out->digest_len = len - 1;
		if (len != UEVM_EVM_HMAC_XATTR_SIZE)
			return uevm_err(EINVAL,
					"HMAC value must be 21 bytes, has %zu",
					len);
		return 0;
	case EVM_IMA_XATTR_DIGSIG:
	case EVM_XATTR_PORTABLE_DIGSIG:
		return parse_sig(val, len, out);
	default:
		return uevm_err(EINVAL, "unknown security.evm type 0x%02x",
				val[0]);
	}
}

UEVM_EXPORT void uevm_xattr_value_init_size(struct uevm_xattr_value *v,
					    size_t size)
{
	struct uevm_xattr_value def;

	clear_value(&def);
	uevm_struct_init(v, size, &def, sizeof(def));
}

/* The public parsers: the caller's struct may be of another size. */
static int parse_out(int (*parse)(const uint8_t *, size_t,
				  struct uevm_xattr_value *),
		     const uint8_t *val, size_t len,
		     struct uevm_xattr_value *out)
{
	struct uevm_xattr_value v;
	size_t size;
	int ret;

	if (!out)
		return uevm_err(EINVAL, "struct uevm_xattr_value: NULL");
	size = out->size;
	if (size < sizeof(v))
		return uevm_err(EINVAL,
				"struct uevm_xattr_value: size %zu, not set by uevm_xattr_value_init",
				size);
	ret = parse(val, len, &v);
	v.size = size;
	memcpy(out, &v, sizeof(v));
	return ret;
}

UEVM_EXPORT int uevm_ima_xattr_parse(const uint8_t *val, size_t len,
				     struct uevm_xattr_value *out)
{
	return parse_out(ima_xattr_parse, val, len, out);
}

UEVM_EXPORT int uevm_evm_xattr_parse(const uint8_t *val, size_t len,
				     struct uevm_xattr_value *out)
{
	return parse_out(evm_xattr_parse, val, len, out);
}

UEVM_EXPORT int uevm_ima_xattr_format(int algo, const uint8_t *digest,
				      uint8_t *out)
{
	unsigned int size = uevm_hash_algo_digest_size(algo);

	if (!size)
		return uevm_err(EINVAL, "unknown hash algorithm id %d", algo);
	/* The kernel keeps the legacy 0x01 form for SHA-1 (and md4/md5). */
	if (algo == UEVM_HASH_SHA1 || algo == UEVM_HASH_MD4 ||
	    algo == UEVM_HASH_MD5) {
		out[0] = IMA_XATTR_DIGEST;
		memcpy(out + 1, digest, size);
		return (int)(1 + size);
	}
	out[0] = IMA_XATTR_DIGEST_NG;
	out[1] = (uint8_t)algo;
	memcpy(out + 2, digest, size);
	return (int)(2 + size);
}
