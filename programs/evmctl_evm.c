// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * evmctl mode: the EVM data (calc_evm_hash for signatures, calc_evm_hmac
 * for the HMAC) with evmctl's overrides and log lines, but the kernel's
 * content: its full protected list, values of any size, the generation of
 * every file type, and the fs UUID from FS_IOC_GETFSUUID.
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

/* evmctl's default list leaves these out unless --smack; the kernel
 * hashes them when present, and so does this mode (logged only then). */
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

static ssize_t list_size(const struct uevm_file *f)
{
	char p[40];

	if (f->io)
		return flistxattr(f->fd, NULL, 0);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", f->fd);
	return llistxattr(p, NULL, 0);
}

/* A value given on the command line instead of the stored one; 1 when
 * NAME has none, 0 when one was added, 2 to leave NAME out, -1 error. */
static int override(struct evm_data *d, const char *name, const char **shown)
{
	uint8_t *b;
	size_t len;

	if (!strcmp(name, "security.selinux") && ev.selinux_str) {
		len = strlen(ev.selinux_str) + 1;
		b = malloc(len);
		if (!b)
			return -1;
		memcpy(b, ev.selinux_str, len);
	} else if (!strcmp(name, "security.ima") && ev.ima_str) {
		len = strlen(ev.ima_str) / 2;
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
	struct uevm_hmac_misc misc = { 0 };
	struct evm_data d = { .n = 0 };
	struct uevm_file f;
	struct stat st;
	uint32_t gen = 0;
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
	misc.mode = (uint16_t)f.st.st_mode;
	if (!hmac) {
		if (ev.ino_str)
			misc.ino = num(ev.ino_str);
		if (ev.uid_str)
			misc.uid = (uint32_t)num(ev.uid_str);
		if (ev.gid_str)
			misc.gid = (uint32_t)num(ev.gid_str);
		if (ev.mode_str)	/* decimal, as evmctl reads it */
			misc.mode = (uint16_t)num(ev.mode_str);
		if (ev.generation_str)
			gen = (uint32_t)num(ev.generation_str);
	}
	if (hmac || !ev.portable) {
		/* The kernel binds i_generation of every file type. */
		if ((hmac || !ev.generation_str) && uevm_file_generation(&f, &gen)) {
			log_err("ioctl() failed\n");
			goto out;
		}
		log_info("generation: %u\n", gen);
	}
	if (list_size(&f) < 0 || (hmac && list_size(&f) == 0)) {
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

		if (!hmac) {
			int r = override(&d, name, &shown);

			if (r < 0)
				goto out;
			if (r != 1)
				continue;
			if (!strcmp(name, "security.ima") && ev.portable) {
				/* A portable signature covers the IMA value,
				 * read under --xattr-user's name too. */
				shown = ev.xattr_ima;
				n = uevm_getxattr_alloc(&f, ev.xattr_ima, &buf, &size);
				if (n < 0) {
					free(buf);
					log_err("EVM portable sig: %s required\n", ev.xattr_ima);
					goto out;
				}
				goto have;
			}
		}
		n = uevm_getxattr_alloc(&f, name, &buf, &size);
		if (n < 0) {
			free(buf);
			/* evmctl's lgetxattr leaves errno set: reported if
			 * the command fails later. */
			ev.err_no = (int)-n;
			if (evmctl_lists(name))
				log_info("no xattr: %s\n", name);
			continue;
		}
have:
		log_info("name: %s, size: %zd\n", shown, n);
		ev_log_dump(EV_LOG_DEBUG, buf, (size_t)n, true);
		if (add_value(&d, name, buf, (size_t)n))
			goto out;
	}
	misc.m32 = ev.msize == 32;
	if (!hmac && ev.portable) {
		misc.ino = 0;
		gen = 0;
	}
	misc.generation = gen;
	if ((hmac || !ev.portable) && !ev.no_uuid) {
		if (ev.uuid_str) {
			if (pack_uuid(ev.uuid_str, misc.uuid))
				goto out;
		} else if (uevm_file_fsuuid(&f, misc.uuid)) {
			log_err("Failed to read UUID. Root access might require.\n");
			goto out;
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
	if (ret < 0)
		log_err("%s\n", uevm_last_error());
out:
	evm_data_free(&d);
	uevm_file_close(&f);
	return ret;
}
