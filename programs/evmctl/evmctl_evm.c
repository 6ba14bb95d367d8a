// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * evmctl mode: the EVM data (calc_evm_hash for signatures, calc_evm_hmac
 * for the HMAC) as evmctl 1.6.2 computes it, with its overrides and log
 * lines: its list of names (the Smack extras only with --smack), values of
 * up to EV_MAX_VALUE bytes (a longer one counts as absent), the generation
 * of regular files only (and of directories for the HMAC), 0 for the other
 * types, and the fs UUID (from FS_IOC_GETFSUUID rather than blkid).  The
 * native commands keep the kernel's rules (lib/sig_evm.c, lib/evm.c).
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "evmctl.h"

#define MAX_ENTRIES 32

struct evm_data {
	struct uevm_xattr_entry e[MAX_ENTRIES];
	uint8_t *bufs[MAX_ENTRIES];
	size_t n;
};

static void evm_data_free(struct evm_data *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->bufs[i]);
	d->n = 0;
}

/* Takes BUF. */
static int add_value(struct evm_data *d, const char *name, uint8_t *buf,
		     size_t len)
{
	if (d->n == MAX_ENTRIES) {
		free(buf);
		return -1;
	}
	d->bufs[d->n] = buf;
	d->e[d->n].name = name;
	d->e[d->n].value = buf;
	d->e[d->n].len = len;
	d->n++;
	return 0;
}

/* evmctl's list: the kernel's, less the Smack extras unless --smack. */
static bool evmctl_lists(const char *name)
{
	return ev.smack || (strcmp(name, "security.SMACK64EXEC") &&
			    strcmp(name, "security.SMACK64TRANSMUTE") &&
			    strcmp(name, "security.SMACK64MMAP"));
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/* evmctl's pack_uuid: 8-4-4-4-12 hex digits. */
static int pack_uuid(const char *s, uint8_t uuid[16])
{
	for (int i = 0; i < 16; i++) {
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1])) {
			log_err("wrong UUID format\n");
			return -1;
		}
		uuid[i] = (uint8_t)(hexval(s[0]) << 4 | hexval(s[1]));
		s += 2;
		if (i == 3 || i == 5 || i == 7 || i == 9) {
			if (*s != '-') {
				log_err("wrong UUID format\n");
				return -1;
			}
			s++;
		}
	}
	log_info("uuid: ");
	ev_log_dump(EV_LOG_INFO, uuid, 16, true);
	return 0;
}

/* evmctl reads each value into a buffer of this size: lgetxattr fails
 * with ERANGE on a longer one, which then counts as absent. */
#define EV_MAX_VALUE 1024

static ssize_t list_size(const struct uevm_file *f)
{
	char p[40];

	if (f->io)
		return flistxattr(f->fd, NULL, 0);
	/* An O_PATH fd (symlink, device, FIFO, socket): /proc/self/fd/N
	 * followed reaches that very inode and stops there, where llistxattr
	 * would list the proc link itself. */
	snprintf(p, sizeof(p), "/proc/self/fd/%d", f->fd);
	return listxattr(p, NULL, 0);
}

/* evmctl's message for an override longer than its buffer. */
static int too_long(const char *what, size_t len)
{
	log_err("%s[%zu] value is too long to fit into xattr[%d]\n", what, len,
		EV_MAX_VALUE);
	return -1;
}

/* A value given on the command line instead of the stored one; 1 when
 * NAME has none, 0 when one was added, 2 to leave NAME out, -1 error. */
static int override(struct evm_data *d, const char *name, const char **shown)
{
	uint8_t *b;
	size_t len;

	if (!strcmp(name, "security.selinux") && ev.selinux_str) {
		len = strlen(ev.selinux_str) + 1;
		if (len > EV_MAX_VALUE)
			return too_long("selinux", len);
		b = malloc(len);
		if (!b)
			return -1;
		memcpy(b, ev.selinux_str, len);
	} else if (!strcmp(name, "security.ima") && ev.ima_str) {
		len = strlen(ev.ima_str) / 2;
		if (len > EV_MAX_VALUE)
			return too_long("ima", len);
		b = malloc(len + 1);
		if (!b)
			return -1;
		for (size_t i = 0; i < len; i++)
			b[i] = (uint8_t)(hexval(ev.ima_str[2 * i]) << 4 |
					 hexval(ev.ima_str[2 * i + 1]));
	} else if (!strcmp(name, "security.capability") && ev.caps_set) {
		if (!ev.caps_str)
			return 2;
		len = strlen(ev.caps_str);
		if (len >= EV_MAX_VALUE)
			return too_long("caps", len + 1);
		b = malloc(len + 1);
		if (!b)
			return -1;
		memcpy(b, ev.caps_str, len);
	} else {
		return 1;
	}
	*shown = name;
	log_info("name: %s, size: %zu\n", name, len);
	return add_value(d, name, b, len);
}

static unsigned long num(const char *s)
{
	return strtoul(s, NULL, 10);
}

/* With -i, evmctl hashes struct h_misc_digsig { uid_t uid; gid_t gid;
 * unsigned short mode; } (12 bytes with its tail padding) after the
 * values, and neither inode, generation nor UUID. */
static int immutable_hash(int algo, const struct evm_data *d,
			  const struct uevm_hmac_misc *misc, uint8_t *out)
{
	size_t total = 12, off = 0;
	uint8_t *buf;
	int ret;

	for (size_t i = 0; i < d->n; i++)
		total += d->e[i].len;
	buf = calloc(1, total);
	if (!buf)
		return -1;
	for (size_t i = 0; i < d->n; i++) {
		memcpy(buf + off, d->e[i].value, d->e[i].len);
		off += d->e[i].len;
	}
	memcpy(buf + off, &misc->uid, 4);
	memcpy(buf + off + 4, &misc->gid, 4);
	memcpy(buf + off + 8, &misc->mode, 2);
	ret = uevm_hash_buffer(algo, buf, total, out);
	free(buf);
	return ret;
}

/* The directory holding FILE (relative to DIRFD), for the fs UUID of an
 * object that cannot be opened itself (symlink, device, FIFO). */
static int parent_dir(int dirfd, const char *file)
{
	const char *slash = strrchr(file, '/');
	char dir[4096];

	if (!slash)
		return openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if ((size_t)(slash - file) >= sizeof(dir))
		return -1;
	memcpy(dir, file, (size_t)(slash - file));
	dir[slash - file] = '\0';
	return openat(dirfd, slash == file ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* calc_evm_hash for a -a name no kernel id stands for: 0 when OpenSSL
 * lacks the digest (evmctl's sign then does nothing and exits 0); -1 when
 * OpenSSL has it, where evmctl would hash and then fail to sign. */
static int md_failure(const char *name)
{
	if (ev_md_check(name, false))
		return 0;
	log_err("sign_hash_v2: hash algo is unknown: %s\n", name);
	return -1;
}

int ev_calc_evm(int dirfd, const char *file, int algo, bool hmac,
		const struct uevm_key *hmac_key, uint8_t *out)
{
	const char *const *names = uevm_ctx_xattrs(ev.ctx);
	bool immutable = !hmac && ev.immutable;
	bool portable = !hmac && ev.portable;
	struct uevm_hmac_misc misc = { .size = sizeof(misc) };
	struct evm_data d = { .n = 0 };
	struct uevm_file f;
	struct stat st;
	mode_t mode;
	uint32_t gen = 0;
	ssize_t ls;
	int ret = -1;

	if (fstatat(dirfd, file, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (hmac)
			log_err("Failed to stat: %s\n", file);
		else
			ev_log_errno_reset(errno, "Failed to stat: %s", file);
		return -1;
	}
	if (uevm_file_openat(&f, dirfd, file, file)) {
		ev.err_no = errno;
		log_err(hmac ? "Failed to open %s\n" : "Failed to open: %s\n", file);
		return -1;
	}
	misc.ino = f.st.st_ino;
	misc.uid = f.st.st_uid;
	misc.gid = f.st.st_gid;
	mode = f.st.st_mode;
	if (!hmac) {
		if (ev.ino_str)
			misc.ino = num(ev.ino_str);
		if (ev.uid_str)
			misc.uid = (uint32_t)num(ev.uid_str);
		if (ev.gid_str)
			misc.gid = (uint32_t)num(ev.gid_str);
		if (ev.mode_str)	/* decimal, as evmctl reads it */
			mode = (mode_t)num(ev.mode_str);
		if (ev.generation_str)
			gen = (uint32_t)num(ev.generation_str);
	}
	misc.mode = (uint16_t)mode;
	/* evmctl asks FS_IOC_GETVERSION of regular files only (the HMAC:
	 * and of directories); the others hash generation 0, where the
	 * kernel binds i_generation of every type. */
	if (hmac) {
		if ((S_ISREG(mode) || S_ISDIR(mode)) && uevm_file_generation(&f, &gen)) {
			log_err("ioctl() failed\n");
			goto out;
		}
		log_info("generation: %u\n", gen);
	} else if (!immutable && !portable) {
		if (S_ISREG(mode) && !ev.generation_str && f.io &&
		    uevm_file_generation(&f, &gen)) {
			log_err("ioctl() failed\n");
			goto out;
		}
		log_info("generation: %u\n", gen);
	}
	ls = list_size(&f);
	if (ls < 0 || (hmac && ls == 0)) {
		if (hmac)
			log_err("llistxattr() failed: %s\n", file);
		else
			ev_log_errno_reset(errno, "llistxattr() failed");
		goto out;
	}
	if (!hmac && algo < 0) {
		ret = md_failure(ev.hash_algo);
		goto out;
	}
	for (size_t i = 0; names[i]; i++) {
		const char *name = names[i], *shown = name;
		uint8_t *buf = NULL;
		size_t size = 0;
		ssize_t n;

		if (!evmctl_lists(name))
			continue;
		if (!hmac) {
			int r = override(&d, name, &shown);

			if (r < 0)
				goto out;
			if (r != 1)
				continue;
			if (!strcmp(name, "security.ima") && portable) {
				/* A portable signature covers the IMA value,
				 * read under --xattr-user's name too. */
				shown = ev.xattr_ima;
				n = uevm_getxattr_alloc(&f, ev.xattr_ima, &buf, &size);
				if (n < 0 || n > EV_MAX_VALUE) {
					free(buf);
					log_err("EVM portable sig: %s required\n", ev.xattr_ima);
					goto out;
				}
				goto have;
			}
		}
		n = uevm_getxattr_alloc(&f, name, &buf, &size);
		if (n > EV_MAX_VALUE)
			n = -ERANGE;	/* too long for evmctl's buffer */
		if (n < 0) {
			free(buf);
			/* evmctl's lgetxattr leaves errno set: reported if
			 * the command fails later. */
			ev.err_no = (int)-n;
			log_info("no xattr: %s\n", name);
			continue;
		}
have:
		log_info("name: %s, size: %zd\n", shown, n);
		ev_log_dump(EV_LOG_DEBUG, buf, (size_t)n, true);
		if (add_value(&d, name, buf, (size_t)n))
			goto out;
	}
	if (immutable) {
		ret = immutable_hash(algo, &d, &misc, out);
		if (!ret)
			ret = (int)uevm_hash_algo_digest_size(algo);
		goto done;
	}
	misc.m32 = ev.msize == 32;
	if (portable) {
		misc.ino = 0;
		gen = 0;
	}
	misc.generation = gen;
	if (!portable && !ev.no_uuid) {
		if (ev.uuid_str) {
			if (pack_uuid(ev.uuid_str, misc.uuid))
				goto out;
		} else {
			int pfd = -1, r;

			if (!f.io) {
				pfd = parent_dir(dirfd, file);
				f.dirfd = pfd;
			}
			r = uevm_file_fsuuid(&f, misc.uuid);
			if (pfd >= 0)
				close(pfd);
			if (r) {
				log_err("Failed to read UUID. Root access might require.\n");
				goto out;
			}
		}
		misc.has_uuid = true;
	}
	if (hmac) {
		/* The kernel keeps no HMAC over nothing (evm_update_evmxattr
		 * removes security.evm): 0 tells the caller so. */
		ret = d.n ? uevm_evm_calc_hmac_values(hmac_key, d.e, d.n, &misc, out) : 0;
		if (!ret && d.n)
			ret = UEVM_HMAC_SIZE;
	} else {
		ret = uevm_evm_calc_hash_values(algo, d.e, d.n, &misc, out);
		if (!ret)
			ret = (int)uevm_hash_algo_digest_size(algo);
	}
done:
	if (ret < 0)
		log_err("%s\n", uevm_last_error());
out:
	evm_data_free(&d);
	uevm_file_close(&f);
	return ret;
}
