// SPDX-License-Identifier: GPL-2.0-or-later
/* Loading the EVM HMAC key: a raw key file or a user key on the keyring. */
#include <fcntl.h>
#include <keyutils.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "lib_private.h"

#define KEYRING_PREFIX "keyring:"

/* The kernel copies the key into a 128-byte zero-padded buffer and HMACs
 * with all 128 bytes; as that exceeds SHA-1's block, HMAC hashes it first.
 * Precomputing K' = SHA1(buffer) and the two pad blocks gives the same
 * result with one SHA-1 block less per file. */
static int key_prepare(struct uevm_key *key)
{
	uint8_t kprime[64] = { 0 };
	const EVP_MD *sha1 = uevm_hash_md(UEVM_HASH_SHA1);

	if (!sha1 || !EVP_Digest(key->raw, UEVM_MAX_KEY_SIZE, kprime, NULL,
				 sha1, NULL))
		return uevm_err(EIO, "SHA-1 is not available");
	for (int i = 0; i < 64; i++) {
		key->ipad[i] = kprime[i] ^ 0x36;
		key->opad[i] = kprime[i] ^ 0x5c;
	}
	explicit_bzero(kprime, sizeof(kprime));
	return 0;
}

UEVM_EXPORT int uevm_key_from_bytes(const void *data, size_t len,
				    struct uevm_key **out)
{
	struct uevm_key *key;
	int ret;

	if (len == 0)
		return uevm_err(EINVAL, "the key is empty");
	if (len > UEVM_MAX_KEY_SIZE)
		return uevm_err(EINVAL, "the key has %zu bytes; at most %d are allowed",
				len, UEVM_MAX_KEY_SIZE);
	key = uevm_secure_alloc(sizeof(*key));
	if (!key)
		return uevm_err(ENOMEM, "cannot allocate locked memory for the key");
	memcpy(key->raw, data, len);
	key->len = len;
	ret = key_prepare(key);
	if (ret) {
		uevm_secure_free(key, sizeof(*key));
		return ret;
	}
	*out = key;
	return 0;
}

static int key_from_file(const char *path, struct uevm_key **out)
{
	uint8_t *buf = uevm_secure_alloc(UEVM_MAX_KEY_SIZE + 1);
	size_t len = 0;
	struct stat st;
	int fd, ret;

	if (!buf)
		return uevm_err(ENOMEM, "cannot allocate locked memory for the key");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ret = uevm_err(errno, "cannot open key file %s: %m", path);
		goto out;
	}
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		ret = uevm_err(EINVAL, "key file %s is not a regular file", path);
		goto out;
	}
	/* Read one byte more than allowed to detect oversized files. */
	while (len < UEVM_MAX_KEY_SIZE + 1) {
		ssize_t n = read(fd, buf + len, UEVM_MAX_KEY_SIZE + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = uevm_err(errno, "cannot read key file %s: %m", path);
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len == 0) {
		ret = uevm_err(EINVAL, "key file %s is empty", path);
		goto out;
	}
	if (len > UEVM_MAX_KEY_SIZE) {
		ret = uevm_err(EINVAL, "key file %s is larger than %d bytes",
			       path, UEVM_MAX_KEY_SIZE);
		goto out;
	}
	ret = uevm_key_from_bytes(buf, len, out);
out:
	if (fd >= 0)
		close(fd);
	uevm_secure_free(buf, UEVM_MAX_KEY_SIZE + 1);
	return ret;
}

static int key_from_keyring(const char *desc, struct uevm_key **out)
{
	uint8_t *buf = uevm_secure_alloc(UEVM_MAX_KEY_SIZE + 1);
	key_serial_t id;
	long n;
	int ret;

	if (!buf)
		return uevm_err(ENOMEM, "cannot allocate locked memory for the key");
	id = request_key("user", desc, NULL, 0);
	if (id < 0)
		id = keyctl_search(KEY_SPEC_USER_KEYRING, "user", desc, 0);
	if (id < 0) {
		ret = uevm_err(errno == EKEYREVOKED || errno == EKEYEXPIRED ?
				       errno : ENOKEY,
			       "no user key '%s' on the keyring: %m", desc);
		goto out;
	}
	n = keyctl_read(id, (char *)buf, UEVM_MAX_KEY_SIZE + 1);
	if (n < 0) {
		ret = uevm_err(errno, "cannot read key '%s': %m", desc);
		goto out;
	}
	if (n == 0 || n > UEVM_MAX_KEY_SIZE) {
		ret = uevm_err(EINVAL, "key '%s' has %ld bytes; 1 to %d are allowed",
			       desc, n, UEVM_MAX_KEY_SIZE);
		goto out;
	}
	ret = uevm_key_from_bytes(buf, (size_t)n, out);
out:
	uevm_secure_free(buf, UEVM_MAX_KEY_SIZE + 1);
	return ret;
}

UEVM_EXPORT int uevm_key_load(const char *spec, struct uevm_key **out)
{
	if (!spec || !*spec)
		return uevm_err(EINVAL, "no HMAC key given");
	if (!strncmp(spec, KEYRING_PREFIX, strlen(KEYRING_PREFIX)))
		return key_from_keyring(spec + strlen(KEYRING_PREFIX), out);
	return key_from_file(spec, out);
}

UEVM_EXPORT void uevm_key_free(struct uevm_key *key)
{
	uevm_secure_free(key, sizeof(*key));
}

UEVM_EXPORT void uevm_key_fingerprint(const struct uevm_key *key, char out[17])
{
	uint8_t d[32];

	uevm_hash_buffer(UEVM_HASH_SHA256, key->raw, UEVM_MAX_KEY_SIZE, d);
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
	explicit_bzero(d, sizeof(d));
}
