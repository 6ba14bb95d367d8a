// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Writes to the control tree (lib/securityfs/securityfs.c) through the library API,
 * as uevmfs and uevmd's tree serve them: one open of evm, evm_xattrs or
 * ima/policy, a series of writes, a flush, a release.
 *
 * Input: byte 0 picks the node (bits 0-1), the opener's credentials
 * (bit 2: CAP_SYS_ADMIN, bit 3: uid 1000), O_RDWR instead of O_WRONLY
 * (bit 4) and whether release comes without a flush (bit 5); the rest is
 * cut at 0xff bytes into successive writes.
 *
 * Properties: a refused call leaves a reason; after a write session on
 * ima/policy that flushed without error the policy is loaded (ima/policy
 * reads back, a second writer gets -EACCES) and after a refused one it is
 * not; the evm value reads back as integrity_sys_evm_read() has it.
 */
#include <fcntl.h>
#include "fuzz.h"
#include "integrity.h"
#include "securityfs.h"

static struct integrity_cred root, user;

static void sink(const struct integrity_audit_record *r, void *arg)
{
	(void)r;
	(void)arg;	/* records are dropped: no syslog, no auditd */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	root.cap_effective = ~0ULL;
	root.auid = root.ses = (uint32_t)-1;
	snprintf(root.comm, sizeof(root.comm), "fuzz");
	user = root;
	user.uid = user.euid = user.gid = user.egid = 1000;
	user.cap_effective = 0;
	return 0;
}

static const char *const paths[4] = { "evm", "evm_xattrs", "ima/policy", "ima/policy" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct integrity_sys_config scfg = { 0 };
	struct uevm_securityfs_file *f = NULL;
	struct uevm_securityfs *sfs;
	struct integrity_cred cred;
	struct integrity_sys *sys;
	struct uevm_config cfg;
	struct uevm_key *key;
	struct uevm_ctx *ctx;
	uint8_t raw[32], mode;
	const char *path;
	bool write_failed = false, writes = false;
	int id, ret, flush_ret = 0;
	size_t off = 1, total = 0;

	if (!size)
		return 0;
	mode = data[0];
	path = paths[mode & 3];
	cred = mode & 8 ? user : root;
	if (!(mode & 4))
		cred.cap_effective = 0;

	memset(raw, 0x5a, sizeof(raw));
	uevm_config_init(&cfg);
	scfg.cache_capacity = 16;
	scfg.audit.sink = sink;
	if (uevm_key_from_bytes(raw, sizeof(raw), &key) || uevm_ctx_new(&cfg, key, &ctx) ||
	    integrity_sys_new(&scfg, ctx, &sys) || uevm_securityfs_new(sys, &sfs))
		abort();

	id = uevm_securityfs_resolve(sfs, path);
	FUZZ_ASSERT(id >= 0);
	ret = uevm_securityfs_open(sfs, id, &cred, mode & 16 ? O_RDWR : O_WRONLY, &f);
	if (ret) {
		FUZZ_ASSERT(ret < 0 && uevm_last_error()[0]);
		goto out;
	}
	while (off < size || (off == size && size == 1)) {
		const uint8_t *sep = memchr(data + off, 0xff, size - off);
		size_t len = (sep ? (size_t)(sep - data) : size) - off;
		uint8_t *chunk = fuzz_dup(data + off, len);
		ssize_t n;

		uevm_clear_last_error();
		n = uevm_securityfs_file_write(f, chunk, len, 0);
		free(chunk);
		writes = true;
		total += len;
		if (n < 0) {
			FUZZ_ASSERT(uevm_last_error()[0]);
			write_failed = true;
		} else {
			FUZZ_ASSERT((size_t)n == len);
		}
		off += len + 1;
	}
	if (!(mode & 32)) {
		uevm_clear_last_error();
		flush_ret = uevm_securityfs_file_flush(f);
		FUZZ_ASSERT(flush_ret <= 0 && (!flush_ret || uevm_last_error()[0]));
	}
	uevm_securityfs_file_release(f);

	if (!strcmp(path, "ima/policy")) {
		struct uevm_securityfs_file *g = NULL;
		char *text = NULL;
		size_t tlen;
		bool loaded = uevm_securityfs_read(sfs, "ima/policy", &root, &text, &tlen) == 0 &&
			      integrity_sys_policy(sys) != NULL;

		free(text);
		/* Loaded only by a session without a refused write whose
		 * close succeeded. */
		if (loaded)
			FUZZ_ASSERT(writes && !write_failed && (mode & 32 || !flush_ret));
		else if (!(mode & 32) && total && !write_failed)
			FUZZ_ASSERT(flush_ret < 0);
		ret = uevm_securityfs_open(sfs, id, &root, O_WRONLY, &g);
		FUZZ_ASSERT(loaded ? ret == -EACCES : ret == 0);
		if (!ret)
			uevm_securityfs_file_release(g);
	} else if (!strcmp(path, "evm")) {
		char *text = NULL;
		size_t tlen;

		if (uevm_securityfs_read(sfs, "evm", &root, &text, &tlen) == 0) {
			FUZZ_ASSERT(strtoul(text, NULL, 10) == integrity_sys_evm_read(sys));
			free(text);
		}
	}
out:
	integrity_sys_free(sys);
	uevm_securityfs_free(sfs);
	return 0;
}
