/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The securityfs-like control tree of an integrity system: the files the
 * kernel shows under /sys/kernel/security, with the kernel's contents,
 * modes and write rules, for a front-end (uevmfs, uevmd) to serve.
 *
 *   integrity/evm/evm                       EVM's bits ("%d"), written once
 *   integrity/evm/evm_xattrs                the protected xattrs, one a line
 *   integrity/ima/policy                    the IMA policy, loaded once
 *   integrity/ima/ascii_runtime_measurements[_sha1|_sha256]
 *   integrity/ima/binary_runtime_measurements[_sha1|_sha256]
 *   integrity/ima/runtime_measurements_count
 *   integrity/ima/violations
 *   evm -> integrity/evm/evm, evm_xattrs -> integrity/evm/evm_xattrs,
 *   ima -> integrity/ima                    (symlinks, as the kernel has)
 *
 * The tree itself (nodes, opens with credentials, reads and writes) does
 * not depend on FUSE; the front-ends serve it as a small FUSE filesystem
 * (in-tree code, not part of this library).  Functions return 0 (or a count)
 * or a negative errno, with the reason in uevm_last_error().
 */
#ifndef UEVM_SECURITYFS_H
#define UEVM_SECURITYFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "integrity.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uevm_securityfs;
struct uevm_securityfs_file;

/* The tree of SYS.  SYS must outlive the tree.  Policies written to
 * ima/policy are owned by the tree: free it only after the last hook call
 * (integrity_sys_free first, or together at exit). */
int uevm_securityfs_new(struct integrity_sys *sys, struct uevm_securityfs **out);
void uevm_securityfs_free(struct uevm_securityfs *sfs);

/*
 * A front-end's veto on policies written to ima/policy (e.g. uevmfs with
 * fastopen refuses rules that depend on the caller).  GATE is called with
 * each text that parses, at every write and at the close that installs it:
 * 0 lets it through; a negative errno refuses it, with the reason written
 * to WHY (LEN bytes) and *CAUSE naming it for the audit record
 * (op=policy_update).  The write session then fails as for a bad rule.
 */
struct ima_policy;
typedef int (*uevm_securityfs_policy_gate)(const struct ima_policy *p,
					   void *arg, char *why, size_t len,
					   const char **cause);
void uevm_securityfs_set_policy_gate(struct uevm_securityfs *sfs,
				     uevm_securityfs_policy_gate gate, void *arg);

/*
 * Told after each change made through the tree, outside the tree's locks:
 * WHAT is "policy" (TEXT, LEN: the policy as written; POLICY: the rules
 * installed, which another writer of the front-end's may have replaced
 * since) or "evm" (TEXT and POLICY NULL).  A front-end measures its state
 * there (uevmd-state, uevmfs-state), as a change through its own command
 * line would be.  Cleared (NULL) before the tree is unmounted: a write
 * session the unmount ends is not told.
 */
typedef void (*uevm_securityfs_change_hook)(const char *what, const char *text,
					    size_t len, const struct ima_policy *policy,
					    void *arg);
void uevm_securityfs_set_change_hook(struct uevm_securityfs *sfs,
				     uevm_securityfs_change_hook hook, void *arg);

/* ---- nodes ------------------------------------------------------------------ */

#define UEVM_SECURITYFS_ROOT 0	/* the id of the root directory */

struct uevm_securityfs_info {
	int id;
	int parent;		/* the root is its own parent */
	const char *name;	/* "" for the root */
	mode_t mode;		/* S_IFDIR / S_IFREG / S_IFLNK | permission bits */
	uid_t uid;
	gid_t gid;
	const char *target;	/* symlinks: the link text */
};

/* The child NAME of directory DIR: its id, or -ENOENT / -ENOTDIR. */
int uevm_securityfs_lookup(struct uevm_securityfs *sfs, int dir, const char *name);
/* A path relative to the root ("ima/policy"), following symlinks: an id. */
int uevm_securityfs_resolve(struct uevm_securityfs *sfs, const char *path);
int uevm_securityfs_info(struct uevm_securityfs *sfs, int id,
			 struct uevm_securityfs_info *out);
/* Directory listing: the first child when PREV < 0, then the one after
 * PREV; -ENOENT after the last. */
int uevm_securityfs_next(struct uevm_securityfs *sfs, int dir, int prev);

/* ---- open files --------------------------------------------------------------- */

/*
 * Open node ID as the caller CRED with FLAGS (O_RDONLY, O_WRONLY or
 * O_RDWR; O_TRUNC and O_APPEND are ignored, as securityfs does).  The
 * node's mode is checked against CRED (CAP_DAC_OVERRIDE passes), then the
 * kernel's own rules: ima/policy is read with CAP_SYS_ADMIN, written by
 * one opener at a time (-EBUSY) and only until a policy was loaded.
 * The measurement files read as the kernel's seq_file: a read at offset N
 * returns the bytes at N of the list (or count) as it is at that read, so
 * entries appended after the open appear on the same open file, and a
 * read at the end returns 0 until more are added.  The other files are
 * read as they were at the open.
 */
int uevm_securityfs_open(struct uevm_securityfs *sfs, int id,
			 const struct integrity_cred *cred, int flags,
			 struct uevm_securityfs_file **out);
ssize_t uevm_securityfs_file_read(struct uevm_securityfs_file *f, void *buf,
				  size_t size, off_t off);
/* evm: applies the value now (kstrtouint, base 0: "1", "0x2", "1\n").
 * ima/policy: checks the complete lines written so far (-EINVAL on a bad
 * rule, after which the whole write session fails). */
ssize_t uevm_securityfs_file_write(struct uevm_securityfs_file *f,
				   const void *buf, size_t size, off_t off);
/* What close() reports: once this opener wrote to ima/policy, the whole
 * text is parsed and installed (or refused, nothing loaded), with the
 * kernel's "policy_update" audit record; writes after that fail.  Before
 * any write it does nothing (a shell closes a dup'ed descriptor before
 * writing), and later calls return 0. */
int uevm_securityfs_file_flush(struct uevm_securityfs_file *f);
/* A close by a thread of process CLOSER_TGID: as above when that is the
 * opener's process (or either is unknown, 0); a copy of the descriptor
 * that another process inherited installs nothing at its close (the
 * opener's close does, or else the release), nor does one the opener
 * closes while it holds another (CLOSER_TGID < 0). */
int uevm_securityfs_file_flush_by(struct uevm_securityfs_file *f, pid_t closer_tgid);
/* Is F an ima/policy write session not yet ended?  (Only its closes need
 * to know who closes.) */
bool uevm_securityfs_file_writes_policy(const struct uevm_securityfs_file *f);
/* Free; an ima/policy session never flushed is ended as a close would
 * (an empty one is refused and audited, as the kernel does). */
void uevm_securityfs_file_release(struct uevm_securityfs_file *f);

/* ---- whole files, by path ----------------------------------------------------- */

/* Read node PATH as CRED into a malloc'ed buffer (NUL-terminated, *LEN
 * without the NUL). */
int uevm_securityfs_read(struct uevm_securityfs *sfs, const char *path,
			 const struct integrity_cred *cred, char **out,
			 size_t *len);
/* Open PATH for writing, write DATA in one write, close: 0 or the error
 * of the write or of the close. */
int uevm_securityfs_write(struct uevm_securityfs *sfs, const char *path,
			  const struct integrity_cred *cred, const void *data,
			  size_t len);

#ifdef __cplusplus
}
#endif
#endif /* UEVM_SECURITYFS_H */
