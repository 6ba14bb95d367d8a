// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The HMAC key on the kernel keyring.  `uevm key load` puts it there as a
 * user key; a consumer reads it once and, like the seeds' EVM ("burn the
 * original key contents"), overwrites it with zeros and invalidates it, so
 * the only copy left is the consumer's locked, non-dumpable one.  A
 * companion user key "uevm-info:DESC" (fingerprint, source, times; never
 * key material) lets `uevm key status` say which key is in use.
 */
#include <keyutils.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "key_private.h"

#define INFO_PREFIX "uevm-info:"

UEVM_EXPORT int uevm_keyring_parse(const char *s, int32_t *id)
{
	static const struct {
		const char *name;
		int32_t id;
	} special[] = {
		{ "@t", KEY_SPEC_THREAD_KEYRING },
		{ "@p", KEY_SPEC_PROCESS_KEYRING },
		{ "@s", KEY_SPEC_SESSION_KEYRING },
		{ "@u", KEY_SPEC_USER_KEYRING },
		{ "@us", KEY_SPEC_USER_SESSION_KEYRING },
	};
	char *end;
	long v;

	for (size_t i = 0; i < ARRAY_SIZE(special); i++)
		if (!strcmp(s, special[i].name)) {
			*id = special[i].id;
			return 0;
		}
	v = strtol(s, &end, 10);
	if (!*s || *end || v <= 0 || v > INT32_MAX)
		return uevm_err(EINVAL, "'%s' is not a keyring (@u, @s, @us, @p, @t "
				"or a serial number)", s);
	*id = (int32_t)v;
	return 0;
}

/* The user key DESC in the caller's keyrings, or a negative errno. */
static key_serial_t find_user_key(const char *desc)
{
	key_serial_t id = request_key("user", desc, NULL, 0);

	if (id < 0)
		id = keyctl_search(KEY_SPEC_USER_KEYRING, "user", desc, 0);
	if (id < 0)
		return uevm_err(errno == EKEYREVOKED || errno == EKEYEXPIRED ?
					errno : ENOKEY,
				"no user key '%s' on the keyring: %m", desc);
	return id;
}

static int read_user_key(key_serial_t id, const char *desc, size_t max,
			 struct uevm_secret *s)
{
	long n;
	int ret = uevm_secret_alloc(s, max + 1);

	if (ret)
		return ret;
	n = keyctl_read(id, (char *)s->data, max + 1);
	if (n < 0)
		ret = uevm_err(errno, "cannot read key '%s': %m", desc);
	else if (n == 0 || (size_t)n > max)
		ret = uevm_err(EINVAL, "key '%s' has %ld bytes; 1 to %zu are allowed",
			       desc, n, max);
	if (ret) {
		uevm_secret_free(s);
		return ret;
	}
	s->len = (size_t)n;
	return 0;
}

int uevm_keyring_read_secret(const char *desc, size_t max,
			     struct uevm_secret *out)
{
	key_serial_t id = find_user_key(desc);

	if (id < 0)
		return id;
	return read_user_key(id, desc, max, out);
}

static void now_utc(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%lld", (long long)t);
}

UEVM_EXPORT int uevm_keyring_put(const struct uevm_key *key, const char *desc,
				 int32_t keyring, const char *source,
				 int32_t *serial)
{
	char info_desc[256], info[512], fpr[17], when[32];
	key_serial_t id;

	if (!desc || !*desc || strlen(desc) > 200)
		return uevm_err(EINVAL, "bad key name '%s'", desc ? desc : "");
	id = add_key("user", desc, key->raw, key->len, keyring);
	if (id < 0)
		return uevm_err(errno, "cannot add user key '%s' to the keyring: %m",
				desc);
	if (serial)
		*serial = id;
	/* The companion is only a note: failing to write it is not fatal. */
	uevm_key_fingerprint(key, fpr);
	now_utc(when, sizeof(when));
	snprintf(info_desc, sizeof(info_desc), INFO_PREFIX "%s", desc);
	snprintf(info, sizeof(info), "fingerprint=%s size=%zu loaded=%s pid=%d%s%s",
		 fpr, key->len, when, (int)getpid(), source ? " source=" : "",
		 source ? source : "");
	add_key("user", info_desc, info, strlen(info), keyring);
	return 0;
}

/* Note in the companion key that a consumer took the key. */
static void note_taken(const char *desc)
{
	char info_desc[256], info[512], when[32];
	key_serial_t id;
	long n;

	snprintf(info_desc, sizeof(info_desc), INFO_PREFIX "%s", desc);
	id = request_key("user", info_desc, NULL, 0);
	if (id < 0)
		id = keyctl_search(KEY_SPEC_USER_KEYRING, "user", info_desc, 0);
	if (id < 0)
		return;
	n = keyctl_read(id, info, 300);
	if (n < 0 || n >= 300)
		return;
	info[n] = '\0';
	if (strstr(info, " taken="))
		*strstr(info, " taken=") = '\0';
	now_utc(when, sizeof(when));
	snprintf(info + strlen(info), sizeof(info) - strlen(info),
		 " taken=%s by-pid=%d", when, (int)getpid());
	keyctl_update(id, info, strlen(info));
}

/* Overwrite the payload, then take the key off every keyring. */
static int burn(key_serial_t id, const char *desc, size_t len)
{
	static const uint8_t zeros[UEVM_MAX_KEY_SIZE];

	if (keyctl_update(id, zeros, len) < 0)
		return uevm_err(errno, "cannot wipe key '%s' after reading it: %m",
				desc);
	if (keyctl_invalidate(id) == 0)
		return 0;
	/* Kernels without KEYCTL_INVALIDATE (before 3.5): revoke and unlink. */
	if (keyctl_revoke(id) < 0)
		return uevm_err(errno, "cannot invalidate or revoke key '%s': %m", desc);
	keyctl_unlink(id, KEY_SPEC_USER_KEYRING);
	keyctl_unlink(id, KEY_SPEC_SESSION_KEYRING);
	return 0;
}

UEVM_EXPORT int uevm_keyring_take(const char *desc, bool do_burn,
				  struct uevm_key **out)
{
	struct uevm_secret s;
	key_serial_t id;
	int ret;

	if (!desc || !*desc)
		return uevm_err(EINVAL, "no key name after 'keyring:'");
	id = find_user_key(desc);
	if (id < 0)
		return id;
	ret = read_user_key(id, desc, UEVM_MAX_KEY_SIZE, &s);
	if (ret)
		return ret;
	ret = uevm_key_from_bytes(s.data, s.len, out);
	if (!ret && do_burn) {
		ret = burn(id, desc, s.len);
		if (ret) {
			uevm_key_free(*out);
			*out = NULL;
		} else {
			note_taken(desc);
		}
	}
	uevm_secret_free(&s);
	uevm_scrub();
	return ret;
}

UEVM_EXPORT int uevm_keyring_status(const char *desc,
				    struct uevm_keyring_status *st)
{
	char info_desc[256];
	struct uevm_secret s;
	struct uevm_key *key;
	key_serial_t id;
	long n;

	memset(st, 0, sizeof(*st));
	snprintf(info_desc, sizeof(info_desc), INFO_PREFIX "%s", desc);
	id = request_key("user", info_desc, NULL, 0);
	if (id < 0)
		id = keyctl_search(KEY_SPEC_USER_KEYRING, "user", info_desc, 0);
	if (id >= 0) {
		n = keyctl_read(id, st->info, sizeof(st->info) - 1);
		if (n > 0 && (size_t)n < sizeof(st->info))
			st->info[n] = '\0';
		else
			st->info[0] = '\0';
	}

	id = request_key("user", desc, NULL, 0);
	if (id < 0)
		id = keyctl_search(KEY_SPEC_USER_KEYRING, "user", desc, 0);
	if (id < 0)
		return 0;
	st->serial = id;
	if (read_user_key(id, desc, UEVM_MAX_KEY_SIZE, &s))
		return 0;	/* present but unreadable: no fingerprint */
	st->len = s.len;
	if (uevm_key_from_bytes(s.data, s.len, &key) == 0) {
		uevm_key_fingerprint(key, st->fingerprint);
		uevm_key_free(key);
	}
	uevm_secret_free(&s);
	return 0;
}
