// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A keyed MAC over a persisted list with software PCRs.  Nothing outside
 * the owner ever sees software PCRs, so without this an offline edit of the
 * list file (an entry deleted, entries reordered, the list cut short) would
 * simply be resumed.  The record LIST.mac holds the number of entries and
 * bytes it covers and HMAC-SHA256 over them, the SHA-256 of those bytes,
 * the software PCRs they replay to and the list's absolute path (so that
 * two lists kept with one key, e.g. uevmfs's per mount point, cannot be
 * swapped).  Its key is derived from the EVM HMAC
 * key (never the key itself), so an attacker without the key cannot write
 * a record for a list of their own.  What a MAC cannot tell apart is an
 * older list with its older record (a rollback): the record has no
 * counter outside the disk.
 *
 * The record is rewritten in place (64 bytes at offset 0, one sector)
 * after each append to the list, so it covers at most the whole list: the
 * entries after what it covers were never answered for (an add cut short)
 * or were written by someone else.
 */
#include <fcntl.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ima_ml_private.h"

#define MAC_MAGIC	"UEVMLMAC"
#define MAC_VERSION	1
#define MAC_KEY_LABEL	"uevm measurement list MAC key v1"
#define MAC_SIZE	32
#define HDR_SIZE	32		/* magic, version, reserved, count, size */
#define RECORD_SIZE	(HDR_SIZE + MAC_SIZE)

struct ima_ml_mac {
	char *path;		/* LIST.mac */
	uint8_t where[32];	/* SHA-256 of the list's absolute path */
	int fd;			/* -1 until the first record is written */
	uint8_t *key;		/* MAC_SIZE bytes of secure memory */
	EVP_MD_CTX *list_md;	/* SHA-256 of the list's bytes so far */
};

struct mac_record {
	uint64_t count, size;
	uint8_t mac[MAC_SIZE];
};

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void encode_header(uint8_t hdr[HDR_SIZE], uint64_t count, uint64_t size)
{
	memset(hdr, 0, HDR_SIZE);
	memcpy(hdr, MAC_MAGIC, 8);
	put_le32(hdr + 8, MAC_VERSION);
	put_le64(hdr + 16, count);
	put_le64(hdr + 24, size);
}

/*
 * HMAC-SHA256 over the header, the digest of the list's first SIZE bytes,
 * the digest of its path and both software banks (mask and all PCRs)
 * after those bytes.
 */
static int mac_compute(const struct ima_ml_mac *m, uint64_t count, uint64_t size,
		       const uint8_t list_digest[32], const struct ima_ml_replay *banks[2],
		       uint8_t out[MAC_SIZE])
{
	uint8_t in[HDR_SIZE + 64 + 2 * (4 + IMA_ML_NUM_PCRS * UEVM_MAX_DIGEST_SIZE)];
	unsigned int outlen = 0;
	size_t n = HDR_SIZE;
	bool ok;

	encode_header(in, count, size);
	memcpy(in + n, list_digest, 32);
	memcpy(in + n + 32, m->where, 32);
	n += 64;
	for (int b = 0; b < 2; b++) {
		unsigned int ds = uevm_hash_algo_digest_size(banks[b]->algo);

		put_le32(in + n, banks[b]->pcr_mask);
		n += 4;
		for (int pcr = 0; pcr < IMA_ML_NUM_PCRS; pcr++, n += ds)
			memcpy(in + n, banks[b]->pcr[pcr], ds);
	}
	ok = HMAC(EVP_sha256(), m->key, MAC_SIZE, in, n, out, &outlen) &&
	     outlen == MAC_SIZE;
	return ok ? 0 : uevm_err(EIO, "%s: HMAC-SHA256 failed", m->path);
}

/* The running list digest, finished on a copy. */
static int list_digest(const struct ima_ml_mac *m, uint8_t out[32])
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	bool ok = c && EVP_MD_CTX_copy_ex(c, m->list_md) &&
		  EVP_DigestFinal_ex(c, out, NULL);

	EVP_MD_CTX_free(c);
	return ok ? 0 : uevm_err(ENOMEM, "%s: cannot hash the list", m->path);
}

int ima_ml_mac_reset(struct ima_ml_mac *m, const uint8_t *buf, size_t len)
{
	if (!EVP_DigestInit_ex(m->list_md, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(m->list_md, buf, len))
		return uevm_err(ENOMEM, "%s: cannot hash the list", m->path);
	return 0;
}

int ima_ml_mac_update(struct ima_ml_mac *m, const void *bytes, size_t len)
{
	if (!EVP_DigestUpdate(m->list_md, bytes, len))
		return uevm_err(ENOMEM, "%s: cannot hash the list", m->path);
	return 0;
}

static char *mac_path(const char *list_path)
{
	char *p;

	if (asprintf(&p, "%s.mac", list_path) < 0)
		return NULL;
	return p;
}

/* Open LIST.mac if it exists; 0 with *fd -1 when it does not. */
static int open_record(const char *path, int *fd)
{
	struct stat st;

	*fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0 && errno == ENOENT)
		return 0;
	if (*fd < 0)
		return uevm_err(errno, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(*fd, &st) || !S_ISREG(st.st_mode)) {
		close(*fd);
		*fd = -1;
		return uevm_err(EINVAL, "%s: not a regular file", path);
	}
	return 0;
}

/* The MAC key: HMAC-SHA256 of a fixed label under the EVM key, so that a
 * record never reveals anything computed with the EVM key itself. */
static int derive_key(const struct uevm_key *key, uint8_t *out)
{
	unsigned int outlen = 0;

	if (!HMAC(EVP_sha256(), key->raw, (int)key->len,
		  (const uint8_t *)MAC_KEY_LABEL, strlen(MAC_KEY_LABEL), out, &outlen) ||
	    outlen != MAC_SIZE)
		return uevm_err(EIO, "cannot derive the list's MAC key");
	return 0;
}

/* The list (it exists: its owner opened it) by its absolute path. */
static int bind_path(struct ima_ml_mac *m, const char *list_path)
{
	char *abs = realpath(list_path, NULL);
	int ret = 0;

	if (!abs)
		return uevm_err(errno, "%s: %s", list_path, strerror(errno));
	if (uevm_hash_buffer(UEVM_HASH_SHA256, abs, strlen(abs), m->where))
		ret = uevm_err(EIO, "%s: cannot hash its path", list_path);
	free(abs);
	return ret;
}

int ima_ml_mac_open(const struct uevm_key *key, const char *list_path,
		    struct ima_ml_mac **out)
{
	struct ima_ml_mac *m;
	int ret;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return uevm_err(ENOMEM, "out of memory");
	m->fd = -1;
	m->path = mac_path(list_path);
	m->list_md = EVP_MD_CTX_new();
	if (!m->path || !m->list_md) {
		ret = uevm_err(ENOMEM, "out of memory");
		goto fail;
	}
	ret = open_record(m->path, &m->fd);
	if (ret)
		goto fail;
	if (!key) {
		struct stat st;

		/* A record no one can update must not be left behind by
		 * entries added without the key. */
		if (m->fd >= 0 && !fstat(m->fd, &st) && st.st_size)
			ret = uevm_err(EKEYREJECTED, "%s: the list has a MAC record %s: "
				       "give the HMAC key it was kept with",
				       list_path, m->path);
		goto fail;	/* no key: no MAC, nothing to keep */
	}
	m->key = uevm_secure_alloc(MAC_SIZE);
	if (!m->key) {
		ret = uevm_err(ENOMEM, "cannot allocate locked memory for a key");
		goto fail;
	}
	ret = derive_key(key, m->key);
	if (!ret)
		ret = bind_path(m, list_path);
	if (!ret)
		ret = ima_ml_mac_reset(m, NULL, 0);
	if (ret)
		goto fail;
	*out = m;
	return 0;
fail:
	ima_ml_mac_free(m);
	return ret;
}

void ima_ml_mac_free(struct ima_ml_mac *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	uevm_secure_free(m->key, MAC_SIZE);
	EVP_MD_CTX_free(m->list_md);
	free(m->path);
	free(m);
}

/* The record: 1 read, 0 none (no file, or empty), -errno. */
static int read_record(const struct ima_ml_mac *m, struct mac_record *r)
{
	uint8_t buf[RECORD_SIZE + 1];
	ssize_t n;

	if (m->fd < 0)
		return 0;
	n = pread(m->fd, buf, sizeof(buf), 0);
	if (n < 0)
		return uevm_err(errno, "%s: cannot read: %s", m->path, strerror(errno));
	if (n == 0)
		return 0;
	if (n != RECORD_SIZE || memcmp(buf, MAC_MAGIC, 8) ||
	    buf[8] != MAC_VERSION || buf[9] || buf[10] || buf[11])
		return uevm_err(EBADMSG, "%s: not a measurement list MAC record "
				"(version %d)", m->path, MAC_VERSION);
	r->count = get_le64(buf + 16);
	r->size = get_le64(buf + 24);
	memcpy(r->mac, buf + HDR_SIZE, MAC_SIZE);
	return 1;
}

static int mismatch(const char *list_path, const struct ima_ml_mac *m)
{
	return uevm_err(EBADMSG, "%s: the list does not match its MAC record %s: "
			"it was changed offline (an entry edited, deleted or "
			"reordered), or moved from another path, or the key is "
			"not the one it was kept with",
			list_path, m->path);
}

int ima_ml_mac_check(struct ima_ml_mac *m, const char *list_path,
		     const uint8_t *buf, size_t len, size_t *proven)
{
	struct ima_ml_replay r[2];
	const struct ima_ml_replay *banks[2] = { &r[0], &r[1] };
	uint8_t digest[32], mac[MAC_SIZE];
	struct mac_record rec;
	int ret = read_record(m, &rec);

	if (ret < 0)
		return ret;
	if (!ret) {
		if (len)
			return uevm_err(EBADMSG, "%s: no MAC record %s although a key "
					"is given: it may have been removed to hide "
					"an edit; check the list, and move both aside "
					"to start a new one", list_path, m->path);
		*proven = 0;
		return 0;
	}
	if (rec.size > len)
		return uevm_err(EBADMSG, "%s: the list is shorter than its MAC record "
				"%s says (%llu entries, %llu bytes; the file has "
				"%zu): entries were removed", list_path, m->path,
				(unsigned long long)rec.count,
				(unsigned long long)rec.size, len);
	if (ima_ml_replay_binary(buf, rec.size, UEVM_HASH_SHA1, false, &r[0]) ||
	    ima_ml_replay_binary(buf, rec.size, UEVM_HASH_SHA256, false, &r[1]) ||
	    r[0].entries != rec.count)
		return mismatch(list_path, m);
	ret = ima_ml_mac_reset(m, buf, rec.size);
	if (!ret)
		ret = list_digest(m, digest);
	if (!ret)
		ret = mac_compute(m, rec.count, rec.size, digest, banks, mac);
	if (ret)
		return ret;
	if (uevm_memneq(mac, rec.mac, MAC_SIZE))
		return mismatch(list_path, m);
	*proven = rec.size;
	return 0;
}

int ima_ml_mac_write(struct ima_ml_mac *m, uint64_t count, uint64_t size,
		     const struct ima_ml_replay *sha1, const struct ima_ml_replay *sha256,
		     bool sync)
{
	const struct ima_ml_replay *banks[2] = { sha1, sha256 };
	uint8_t rec[RECORD_SIZE], digest[32];
	ssize_t n;
	int ret;

	if (m->fd < 0) {
		m->fd = open(m->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (m->fd < 0)
			return uevm_err(errno, "%s: cannot create: %s", m->path,
					strerror(errno));
	}
	ret = list_digest(m, digest);
	if (!ret)
		ret = mac_compute(m, count, size, digest, banks, rec + HDR_SIZE);
	if (ret)
		return ret;
	encode_header(rec, count, size);
	/* One sector, in place: a crash leaves the old record or the new. */
	n = pwrite(m->fd, rec, sizeof(rec), 0);
	if (n < 0 || (n == (ssize_t)sizeof(rec) && sync && fdatasync(m->fd)))
		return uevm_err(errno, "%s: cannot write the MAC record: %s",
				m->path, strerror(errno));
	if (n != (ssize_t)sizeof(rec))
		return uevm_err(EIO, "%s: cannot write the MAC record: short write",
				m->path);
	return 0;
}
