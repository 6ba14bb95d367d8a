// SPDX-License-Identifier: LGPL-2.1-or-later
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
/* Possessor: everything; the owner's other processes: what a consumer
 * needs to read and burn the key.  Group and others: nothing. */
#define USER_KEY_PERM (KEY_POS_ALL | KEY_USR_VIEW | KEY_USR_READ | \
		       KEY_USR_WRITE | KEY_USR_SEARCH | KEY_USR_LINK | \
		       KEY_USR_SETATTR)

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

/*
 * Finding keyring:DESC.  The kernel's request_key() returns the first key
 * of that description on the caller's keyrings, whoever owns it, and under
 * sudo the session keyring is the invoking user's: any user could plant the
 * key root then uses.  So the keyrings are walked here instead: the session
 * keyring, then the user keyring (where `uevm key load` puts the key),
 * each with the keyrings linked into it; only a user key owned by the
 * caller's euid or by root, reached through keyrings owned by them, is
 * taken (the owner of a keyring possesses the keys on it: they can read
 * and update even root's); others are skipped with a warning.
 */
#define WALK_DEPTH 6		/* the kernel's keyring nesting limit */
#define WALK_SEEN 128
/* Group or others may read, write, link (and so possess) or set up the
 * key; write, link or set up the keyring (and so add, displace or possess
 * what is on it).  View and search give nothing away. */
#define KEY_UNSAFE_PERM  (KEY_GRP_READ | KEY_GRP_WRITE | KEY_GRP_LINK | \
			  KEY_GRP_SETATTR | KEY_OTH_READ | KEY_OTH_WRITE | \
			  KEY_OTH_LINK | KEY_OTH_SETATTR)
#define RING_UNSAFE_PERM (KEY_GRP_WRITE | KEY_GRP_LINK | KEY_GRP_SETATTR | \
			  KEY_OTH_WRITE | KEY_OTH_LINK | KEY_OTH_SETATTR)

struct walk {
	const char *desc;
	bool quiet;			/* no warnings (the uevm-info companion) */
	key_serial_t open_ring;		/* 0, or a keyring on the way that group
					 * or others may write or link */
	key_perm_t open_perm;
	key_serial_t session, user;	/* the top keyrings, for names */
	key_serial_t seen[WALK_SEEN];	/* keyrings walked, keys warned about */
	int nseen;
	struct uevm_keyring_hit *hit;
	bool found;
};

/* True when ID was met before; else remember it (true when full, which
 * ends the walk rather than loop). */
static bool seen_before(struct walk *w, key_serial_t id)
{
	for (int i = 0; i < w->nseen; i++)
		if (w->seen[i] == id)
			return true;
	if (w->nseen == WALK_SEEN)
		return true;
	w->seen[w->nseen++] = id;
	return false;
}

static void ring_name(const struct walk *w, key_serial_t ring, char *buf,
		      size_t len)
{
	if (ring == w->user)
		snprintf(buf, len, "user keyring");
	else if (ring == w->session)
		snprintf(buf, len, "session keyring");
	else
		snprintf(buf, len, "keyring %d", (int)ring);
}

/* "TYPE;UID;GID;PERM;DESC": the type, owner, permissions and description
 * of ID. */
static bool describe_perm(key_serial_t id, char **buf, const char **type,
			  uid_t *uid, key_perm_t *perm, const char **desc)
{
	char *p, *f[4];

	*buf = NULL;
	if (keyctl_describe_alloc(id, buf) < 0)
		return false;
	p = *buf;
	for (int i = 0; i < 4; i++) {
		f[i] = p;
		p = strchr(p, ';');
		if (!p)
			return false;
		*p++ = '\0';
	}
	*type = f[0];
	*uid = (uid_t)strtoul(f[1], NULL, 10);
	*perm = (key_perm_t)strtoul(f[3], NULL, 16);
	*desc = p;
	return true;
}

static bool describe(key_serial_t id, char **buf, const char **type,
		     uid_t *uid, const char **desc)
{
	key_perm_t perm;

	return describe_perm(id, buf, type, uid, &perm, desc);
}

static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* Look at one key of RING: take it, skip it (with a warning), or, on the
 * second pass, walk it if it is a keyring.  RING_UID is -1 while every
 * keyring on the way is the caller's or root's, else the first other
 * owner met: whoever owns a keyring possesses what is on it, and so can
 * read and replace even root's keys there. */
static void walk_one(struct walk *w, key_serial_t ring, key_serial_t id,
		     int pass, int depth, long ring_uid);

static void walk_ring(struct walk *w, key_serial_t ring, int depth,
		      long ring_uid)
{
	key_serial_t open_before = w->open_ring;
	key_perm_t perm_before = w->open_perm, perm = 0;
	const char *type, *desc;
	void *buf = NULL;
	char *dbuf;
	uid_t uid;
	long n;

	if (w->found || depth > WALK_DEPTH || seen_before(w, ring))
		return;
	if (!describe_perm(ring, &dbuf, &type, &uid, &perm, &desc))
		uid = (uid_t)-1;
	free(dbuf);
	if (ring_uid < 0 && !trusted_owner(uid))
		ring_uid = (long)uid;
	if (!w->open_ring && (perm & RING_UNSAFE_PERM)) {
		w->open_ring = ring;
		w->open_perm = perm;
	}
	n = keyctl_read_alloc(ring, &buf);
	if (n >= 0) {
		/* Keys of this keyring first, then nested keyrings, as the
		 * kernel searches.  (A keyring we cannot read is skipped.) */
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < (size_t)n / sizeof(key_serial_t) &&
			     !w->found; i++)
				walk_one(w, ring, ((key_serial_t *)buf)[i], pass,
					 depth, ring_uid);
	}
	free(buf);
	w->open_ring = open_before;
	w->open_perm = perm_before;
}

static void skip_warning(struct walk *w, key_serial_t id, const char *desc,
			 uid_t uid, key_perm_t perm, const char *where,
			 long ring_uid)
{
	if (w->quiet || seen_before(w, id))
		return;
	if (trusted_owner(uid) && ring_uid < 0 && (perm & KEY_UNSAFE_PERM))
		uevm_warn("skipped user key '%s' (serial %d) on the %s: group or "
			  "others may read, change or link it (perm %08x); fix: "
			  "keyctl setperm %d 0x3f010000 (after checking it)", desc,
			  (int)id, where, (unsigned)perm, (int)id);
	else if (trusted_owner(uid) && ring_uid < 0)
		uevm_warn("skipped user key '%s' (serial %d) on the %s: group or "
			  "others may write or link keyring %d (perm %08x), and so "
			  "replace or possess what is on it", desc, (int)id, where,
			  (int)w->open_ring, (unsigned)w->open_perm);
	else if (!trusted_owner(uid))
		uevm_warn("skipped user key '%s' (serial %d) owned by uid %u on the "
			  "%s: only keys owned by uid %u or root are used", desc,
			  (int)id, (unsigned)uid, where, (unsigned)geteuid());
	else
		uevm_warn("skipped user key '%s' (serial %d) owned by uid %u on the "
			  "%s, which uid %ld owns or reaches: that user can read and "
			  "replace it; only keys on keyrings of uid %u or root are used",
			  desc, (int)id, (unsigned)uid, where, ring_uid,
			  (unsigned)geteuid());
}

static void walk_one(struct walk *w, key_serial_t ring, key_serial_t id,
		     int pass, int depth, long ring_uid)
{
	const char *type, *desc;
	char *buf, where[32];
	key_perm_t perm;
	uid_t uid;

	if (!describe_perm(id, &buf, &type, &uid, &perm, &desc)) {
		free(buf);
		return;	/* gone, revoked, or not ours to view */
	}
	if (pass == 1 && !strcmp(type, "keyring")) {
		free(buf);
		walk_ring(w, id, depth + 1, ring_uid);
		return;
	}
	if (pass == 0 && !strcmp(type, "user") && !strcmp(desc, w->desc)) {
		ring_name(w, ring, where, sizeof(where));
		if (trusted_owner(uid) && ring_uid < 0 &&
		    !(perm & KEY_UNSAFE_PERM) && !w->open_ring) {
			w->found = true;
			w->hit->serial = id;
			w->hit->uid = (uint32_t)uid;
			snprintf(w->hit->keyring, sizeof(w->hit->keyring), "%s", where);
		} else {
			skip_warning(w, id, desc, uid, perm, where, ring_uid);
		}
	}
	free(buf);
}

/* The user key DESC as keyring:DESC finds it, or a negative errno. */
static key_serial_t find_key(const char *desc, bool quiet,
			     struct uevm_keyring_hit *hit)
{
	struct walk w = { .desc = desc, .quiet = quiet, .hit = hit };

	memset(hit, 0, sizeof(*hit));
	w.session = keyctl_get_keyring_ID(KEY_SPEC_SESSION_KEYRING, 0);
	w.user = keyctl_get_keyring_ID(KEY_SPEC_USER_KEYRING, 0);
	if (w.session > 0)
		walk_ring(&w, w.session, 0, -1);
	if (w.user > 0)
		walk_ring(&w, w.user, 0, -1);
	if (!w.found)
		return uevm_err(ENOKEY, "no user key '%s' owned by uid %u or root on "
				"the session or user keyring (or a keyring of "
				"theirs linked there)", desc, (unsigned)geteuid());
	return hit->serial;
}

static key_serial_t find_user_key(const char *desc)
{
	struct uevm_keyring_hit hit;

	return find_key(desc, false, &hit);
}

void uevm_keyring_hit_describe(const struct uevm_keyring_hit *hit,
			       const char *desc, char *buf, size_t len)
{
	snprintf(buf, len, "user key '%s' (serial %d) owned by uid %u on the %s",
		 desc, (int)hit->serial, (unsigned)hit->uid, hit->keyring);
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

/*
 * Add a user key to KEYRING.  On the user keyring the key is for every
 * process of this uid, also those whose session does not reach that
 * keyring (sudo keeps the invoking user's session, systemd gives services
 * their own): without "user" permissions they could see it but not read
 * it.  Permissions can only be set on a key one possesses, so it is made
 * on the process keyring (private to this process), given them, and then
 * moved to the user keyring (displacing a key of the same name there).
 */
static key_serial_t add_user_key(const char *desc, const void *data,
				 size_t len, key_serial_t keyring)
{
	key_serial_t id;
	int err;

	if (keyring != KEY_SPEC_USER_KEYRING) {
		id = add_key("user", desc, data, len, keyring);
		if (id < 0)
			return uevm_err(errno, "cannot add user key '%s' to the "
					"keyring: %m", desc);
		return id;
	}
	id = add_key("user", desc, data, len, KEY_SPEC_PROCESS_KEYRING);
	if (id < 0)
		return uevm_err(errno, "cannot add user key '%s': %m", desc);
	if (keyctl_setperm(id, USER_KEY_PERM) < 0 ||
	    keyctl_link(id, KEY_SPEC_USER_KEYRING) < 0) {
		err = errno;
		keyctl_invalidate(id);
		return uevm_err(err, "cannot put user key '%s' on the user keyring: %m",
				desc);
	}
	keyctl_unlink(id, KEY_SPEC_PROCESS_KEYRING);
	return id;
}

/* The key is never put where another user possesses it: on a keyring
 * they own (under sudo, the session keyring is the invoking user's) they
 * could read it, and replace it under root's name. */
static int check_target(key_serial_t keyring)
{
	const char *type, *desc;
	char *buf;
	uid_t uid;
	bool ok = describe(keyring, &buf, &type, &uid, &desc);

	free(buf);
	if (!ok)
		return uevm_err(errno, "cannot look at the target keyring: %m");
	if (!trusted_owner(uid))
		return uevm_err(EPERM, "the target keyring belongs to uid %u, who "
				"could read the key there and replace it; use the "
				"user keyring (the default, --keyring @u)",
				(unsigned)uid);
	return 0;
}

UEVM_EXPORT int uevm_keyring_put(const struct uevm_key *key, const char *desc,
				 int32_t keyring, const char *source,
				 int32_t *serial)
{
	char info_desc[256], info[512], fpr[17], when[32];
	key_serial_t id;
	int ret;

	if (!desc || !*desc || strlen(desc) > 200)
		return uevm_err(EINVAL, "bad key name '%s'", desc ? desc : "");
	ret = check_target(keyring);
	if (ret)
		return ret;
	id = add_user_key(desc, key->raw, key->len, keyring);
	if (id < 0)
		return id;
	if (serial)
		*serial = id;
	/* The companion is only a note: failing to write it is not fatal. */
	uevm_key_fingerprint(key, fpr);
	now_utc(when, sizeof(when));
	snprintf(info_desc, sizeof(info_desc), INFO_PREFIX "%s", desc);
	snprintf(info, sizeof(info), "fingerprint=%s size=%zu loaded=%s pid=%d%s%s",
		 fpr, key->len, when, (int)getpid(), source ? " source=" : "",
		 source ? source : "");
	add_user_key(info_desc, info, strlen(info), keyring);
	return 0;
}

/* Note in the companion key that a consumer took the key. */
static void note_taken(const char *desc)
{
	char info_desc[256], info[512], when[32];
	struct uevm_keyring_hit hit;
	key_serial_t id;
	long n;

	snprintf(info_desc, sizeof(info_desc), INFO_PREFIX "%s", desc);
	id = find_key(info_desc, true, &hit);
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

int uevm_keyring_take_hit(const char *desc, bool do_burn, struct uevm_key **out,
			  struct uevm_keyring_hit *hit)
{
	struct uevm_secret s;
	key_serial_t id;
	int ret;

	if (!desc || !*desc)
		return uevm_err(EINVAL, "no key name after 'keyring:'");
	id = find_key(desc, false, hit);
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

UEVM_EXPORT int uevm_keyring_take(const char *desc, bool do_burn,
				  struct uevm_key **out)
{
	struct uevm_keyring_hit hit;

	return uevm_keyring_take_hit(desc, do_burn, out, &hit);
}

UEVM_EXPORT int uevm_keyring_status(const char *desc,
				    struct uevm_keyring_status *st)
{
	struct uevm_keyring_hit hit;
	char info_desc[256];
	struct uevm_secret s;
	struct uevm_key *key;
	key_serial_t id;
	long n;

	memset(st, 0, sizeof(*st));
	snprintf(info_desc, sizeof(info_desc), INFO_PREFIX "%s", desc);
	id = find_key(info_desc, true, &hit);
	if (id >= 0) {
		n = keyctl_read(id, st->info, sizeof(st->info) - 1);
		if (n > 0 && (size_t)n < sizeof(st->info))
			st->info[n] = '\0';
		else
			st->info[0] = '\0';
	}

	id = find_key(desc, false, &hit);
	if (id < 0)
		return 0;
	st->serial = id;
	st->uid = hit.uid;
	snprintf(st->keyring, sizeof(st->keyring), "%s", hit.keyring);
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
