// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Signature values (the v2/v3 signature_v2_hdr and what follows) through
 * uevm_sig_verify against two fixed test certificates (RSA-2048 and ECDSA
 * P-256, fuzz/test_certs.h), as the kernel's asymmetric_verify would.
 *
 * Input: one byte N, N bytes of file digest, then the xattr value.
 * Properties: only the documented errors come back; a value that verifies
 * also parses as security.ima and security.evm, and stops verifying when
 * one bit of the digest changes.
 */
#include <openssl/err.h>
#include "fuzz.h"
#include "uevm_internal.h"
#include "sig_private.h"
#include "test_certs.h"

static struct uevm_certset *set;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (uevm_certset_new(&set) ||
	    sig_certset_add_mem(set, fuzz_cert_rsa, sizeof(fuzz_cert_rsa), "rsa") != 1 ||
	    sig_certset_add_mem(set, fuzz_cert_ec, sizeof(fuzz_cert_ec), "ec") != 1) {
		fprintf(stderr, "test certificates: %s\n", uevm_last_error());
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uevm_xattr_value v;
	uint8_t *digest, *val;
	size_t dlen, vlen;
	int ret;

	if (size < 1 || data[0] > size - 1)
		return 0;
	dlen = data[0];
	vlen = size - 1 - dlen;
	digest = fuzz_dup(data + 1, dlen);
	val = fuzz_dup(data + 1 + dlen, vlen);

	ret = uevm_sig_verify(set, val, vlen, digest, dlen);
	FUZZ_ASSERT(ret == 0 || ret == -ENOKEY || ret == -EKEYREJECTED ||
		    ret == -EBADMSG || ret == -ENOPKG || ret == -EOPNOTSUPP ||
		    ret == -EINVAL);
	if (ret == 0) {
		FUZZ_ASSERT(vlen > UEVM_SIG_HDR_SIZE && dlen > 0);
		if (val[0] == EVM_IMA_XATTR_DIGSIG || val[0] == IMA_VERITY_DIGSIG) {
			FUZZ_ASSERT(ima_xattr_parse(val, vlen, &v) == 0);
			FUZZ_ASSERT(v.sig_len == vlen - UEVM_SIG_HDR_SIZE);
		}
		if (val[0] == EVM_IMA_XATTR_DIGSIG || val[0] == EVM_XATTR_PORTABLE_DIGSIG)
			FUZZ_ASSERT(evm_xattr_parse(val, vlen, &v) == 0);
		/* The first byte: ECDSA uses only the leftmost bits of a
		 * digest longer than its curve's order (SHA-512 on P-256). */
		digest[0] ^= 0x01;
		FUZZ_ASSERT(uevm_sig_verify(set, val, vlen, digest, dlen) ==
			    -EKEYREJECTED);
	}
	/* OpenSSL queues its reasons per thread; start each input clean. */
	ERR_clear_error();
	free(digest);
	free(val);
	return 0;
}
