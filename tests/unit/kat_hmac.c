// SPDX-License-Identifier: GPL-2.0-or-later
/* The reference's known-answer EVM HMAC vector, byte for byte. */
#include "uevm_internal.h"
#include "test.h"

int main(void)
{
	unsigned char key[32], ima[64], uuid[16], hmac[UEVM_HMAC_SIZE];
	unsigned char misc_buf[24];
	char hex[128];
	struct uevm_key *k;
	struct uevm_hmac_misc misc = { .size = sizeof(misc),
		.ino = 10977897, .generation = 511459174, .uid = 0, .gid = 0,
		.mode = 0100644, .has_uuid = true,
	};
	struct uevm_xattr_entry x = { "security.ima", ima, 0 };
	size_t n;
	int ret;

	hex2bin("abcdefabcdef1234567890aaaaaaaaaaabcdefabcdef1234567890aaaaaaaaaa", key, sizeof(key));
	x.len = (size_t)hex2bin("04045891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03", ima, sizeof(ima));
	hex2bin("28b23254946744c0b6ba34b12e85a26f", uuid, sizeof(uuid));
	memcpy(misc.uuid, uuid, 16);

	n = uevm_hmac_misc_encode(&misc, misc_buf);
	bin2hex(misc_buf, n, hex);
	CHECK("h_misc is 24 bytes on LP64", n == 24);
	CHECK("h_misc layout matches the reference",
	      !strcmp(hex, "6982a70000000000663f7c1e0000000000000000a4810000"));

	ret = uevm_key_from_bytes(key, sizeof(key), &k);
	CHECK("key loads", ret == 0);
	if (ret)
		TEST_EXIT();
	ret = uevm_evm_calc_hmac_values(k, &x, 1, &misc, hmac);
	bin2hex(hmac, sizeof(hmac), hex);
	CHECK("known-answer HMAC", ret == 0 &&
	      !strcmp(hex, "fc213596321960441d582cddbba371a5d0233229"));

	/* Without the UUID the value must change (CONFIG_EVM_ATTR_FSUUID=n). */
	misc.has_uuid = false;
	ret = uevm_evm_calc_hmac_values(k, &x, 1, &misc, hmac);
	bin2hex(hmac, sizeof(hmac), hex);
	CHECK("HMAC without UUID differs", ret == 0 &&
	      strcmp(hex, "fc213596321960441d582cddbba371a5d0233229"));

	misc.m32 = true;
	n = uevm_hmac_misc_encode(&misc, misc_buf);
	bin2hex(misc_buf, n, hex);
	CHECK("32-bit h_misc is 20 bytes",
	      n == 20 && !strcmp(hex, "6982a700663f7c1e0000000000000000a4810000"));

	/* A key of 128 bytes is accepted, 129 and 0 are refused. */
	{
		unsigned char big[129] = { 0 };
		struct uevm_key *k2 = NULL;

		CHECK("128-byte key accepted", uevm_key_from_bytes(big, 128, &k2) == 0);
		uevm_key_free(k2);
		CHECK("129-byte key refused", uevm_key_from_bytes(big, 129, &k2) < 0);
		CHECK("empty key refused", uevm_key_from_bytes(big, 0, &k2) < 0);
	}
	uevm_key_free(k);
	TEST_EXIT();
}
