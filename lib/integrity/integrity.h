/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The integrity layer: the iint cache, the EVM and IMA hooks with the
 * kernel's names and rules, audit, and the LIM-style dispatch through which
 * front-ends (the FUSE filesystem, the fanotify daemon) reach them.
 *
 * A front-end translates its events into integrity_* calls; every decision
 * is taken here.  All entry points are safe to call from many threads.
 */
#ifndef UEVM_INTEGRITY_H
#define UEVM_INTEGRITY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "uevm_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- credentials of the caller whose operation is being checked ------- */

struct integrity_cred {
	uint32_t uid, euid, gid, egid;
	uint32_t suid, sgid;	/* saved ids: euid=/egid= with CAP_SETUID/SETGID */
	bool no_new_privs;	/* PR_SET_NO_NEW_PRIVS: an exec raises no ids */
	uint32_t auid;		/* audit login uid, (uint32_t)-1 if unset */
	uint32_t ses;		/* audit session, (uint32_t)-1 if unset */
	pid_t pid;
	pid_t tgid;		/* PID's process (thread group); 0 if unknown */
	uint64_t cap_effective;	/* bit N = capability N (CAP_SYS_ADMIN 21) */
	char comm[16];
};

/* Credentials of a running process, from /proc/PID/status. */
int integrity_cred_from_pid(pid_t pid, struct integrity_cred *cred);
/* Credentials of the calling process. */
void integrity_cred_self(struct integrity_cred *cred);
/* The credentials CUR runs program F with (the kernel's bprm->cred, whose
 * ids CREDS_CHECK rules match; the capabilities stay CUR's, as the
 * kernel's ima_match_rules asks the caller's): a setuid file's owner as
 * euid, a setgid and group-executable file's group as egid, unless the
 * mount is nosuid (NOSUID: 1 or 0 when the caller knows it, -1 to ask
 * F's mount), and with no_new_privs the real ids instead; the saved ids
 * are then the effective ones.  A traced opener's exec is taken as if it
 * were not traced (the tracer's capabilities decide in the kernel). */
void integrity_cred_for_exec(const struct uevm_file *f, const struct integrity_cred *cur,
			     int nosuid, struct integrity_cred *out);
bool integrity_capable(const struct integrity_cred *cred, int cap);

/* ---- the integrity cache (the seeds' integrity_iint_cache) ------------- */

/* iint->flags: what has been done for the current content (kernel bits). */
#define IMA_MEASURED		0x00000002
#define IMA_APPRAISED		0x00000008
#define IMA_AUDITED		0x00000080
#define IMA_HASHED		0x00000200
#define IMA_NEW_FILE		0x04000000
#define EVM_NEW_FILE		0x08000000
#define IMA_DIGSIG		0x10000000	/* security.ima is a signature */
#define IMA_UPDATE_XATTR	0x20000000	/* rehash at the last writer's close */
#define IMA_MUST_MEASURE	0x40000000	/* measured for a reader (ToMToU) */
#define IMA_EMITTED_OPENWRITERS	0x80000000	/* open_writers reported; until no writer */

/* A change stamp: a cached result is only valid for the same one. */
struct integrity_stamp {
	int64_t ctime_ns;
	int64_t mtime_ns;
	uint64_t size;
};

struct integrity_iint_cache;	/* opaque; at most 128 bytes + digest */
struct integrity_cache;

struct integrity_cache_stats {
	uint64_t lookups, hits, inserts, evictions, invalidations;
	size_t entries, capacity;
	size_t entry_size;	/* sizeof(struct integrity_iint_cache) */
};

/* CAPACITY entries at most (0: a default of 65536). */
int integrity_cache_new(size_t capacity, struct integrity_cache **out);
void integrity_cache_free(struct integrity_cache *c);
/* Find or create the entry of (dev, ino, generation); the result holds a
 * reference, dropped with integrity_iint_put.  A stamp different from the
 * cached one resets the entry's results (the file changed). */
struct integrity_iint_cache *integrity_iint_get(struct integrity_cache *c,
						dev_t dev, ino_t ino,
						uint32_t generation,
						const struct integrity_stamp *st);
/* Find without creating; NULL when absent. */
struct integrity_iint_cache *integrity_iint_find(struct integrity_cache *c,
						 dev_t dev, ino_t ino,
						 uint32_t generation);
void integrity_iint_put(struct integrity_cache *c,
			struct integrity_iint_cache *iint);
/* Forget an inode (the kernel's integrity_inode_free). */
void integrity_iint_forget(struct integrity_cache *c, dev_t dev, ino_t ino,
			   uint32_t generation);
void integrity_cache_stats(struct integrity_cache *c,
			   struct integrity_cache_stats *st);
/* Make every entry's results stale (keeps writer counts and new-file
 * flags): e.g. after EVM is initialised at run time. */
void integrity_cache_invalidate_all(struct integrity_cache *c);
/* Moves at every integrity_cache_invalidate_all (odd while it walks the
 * entries, even when done): a result worked out from rules read before
 * it moved is not cached. */
uint32_t integrity_cache_epoch(struct integrity_cache *c);

/* The type name (as mountinfo gives it) of mount MNT_ID, for a mount in
 * no namespace's mountinfo: a front-end's private copy (uevmfs's of
 * SOURCE).  fsname= rules match files on it by this name (ima_main.c). */
int integrity_mount_fsname(uint64_t mnt_id, const char *fstype);

/* Per-entry serialisation: one appraisal of an inode at a time. */
void integrity_iint_lock(struct integrity_iint_cache *iint);
void integrity_iint_unlock(struct integrity_iint_cache *iint);
/* Accessors (call with the entry locked). */
enum integrity_status integrity_iint_evm_status(const struct integrity_iint_cache *iint);
void integrity_iint_set_evm_status(struct integrity_iint_cache *iint,
				   enum integrity_status s);
enum integrity_status integrity_iint_ima_status(const struct integrity_iint_cache *iint,
						int func);
void integrity_iint_set_ima_status(struct integrity_iint_cache *iint, int func,
				   enum integrity_status s);
uint32_t integrity_iint_flags(const struct integrity_iint_cache *iint);
void integrity_iint_set_flags(struct integrity_iint_cache *iint, uint32_t set,
			      uint32_t clear);
uint64_t integrity_iint_measured_pcrs(const struct integrity_iint_cache *iint);
void integrity_iint_set_measured_pcr(struct integrity_iint_cache *iint, int pcr);
/* The collected digest (algo -1 when none). */
int integrity_iint_digest(const struct integrity_iint_cache *iint,
			  uint8_t *digest, int *algo);
int integrity_iint_set_digest(struct integrity_iint_cache *iint, int algo,
			      const uint8_t *digest);
/* Opens for writing not yet closed (the kernel's i_writecount). */
unsigned int integrity_iint_writers(const struct integrity_iint_cache *iint);
void integrity_iint_add_writer(struct integrity_iint_cache *iint, int delta);
/* Reset results after a change made through the hooks and record the
 * stamp the file has now (so our own xattr writes do not invalidate). */
void integrity_iint_reset(struct integrity_iint_cache *iint);
void integrity_iint_set_stamp(struct integrity_iint_cache *iint,
			      const struct integrity_stamp *st);
/* Are the entry's results those of stamp ST? */
bool integrity_iint_stamp_is(const struct integrity_iint_cache *iint,
			     const struct integrity_stamp *st);
void integrity_stamp_of(const struct stat *st, struct integrity_stamp *out);

/* ---- audit ----------------------------------------------------------------- */

/* Record types (the kernel's AUDIT_INTEGRITY_*). */
#define AUDIT_INTEGRITY_DATA		1800
#define AUDIT_INTEGRITY_METADATA	1801
#define AUDIT_INTEGRITY_STATUS		1802
#define AUDIT_INTEGRITY_HASH		1803
#define AUDIT_INTEGRITY_PCR		1804
#define AUDIT_INTEGRITY_RULE		1805
#define AUDIT_INTEGRITY_EVM_XATTR	1806
#define AUDIT_INTEGRITY_POLICY_RULE	1807

struct integrity_audit_record {
	int type;
	const char *op;
	const char *cause;
	const char *name;	/* file name, may be NULL */
	dev_t dev;
	ino_t ino;
	int result;		/* 0 allowed, otherwise the errno (positive) */
	bool info;		/* informational (only with integrity_audit=1) */
	const struct integrity_cred *cred;
	const char *text;	/* the formatted record, as the kernel prints it */
};

/* A sink receives every record emitted (after formatting). */
typedef void (*integrity_audit_sink)(const struct integrity_audit_record *r,
				     void *arg);

struct integrity_audit_config {
	bool to_syslog;			/* RFC 3164 datagrams to syslog_socket */
	const char *syslog_socket;	/* default /dev/log */
	bool to_auditd;			/* through libaudit, when auditd runs */
	bool integrity_audit;		/* also emit informational records */
	integrity_audit_sink sink;	/* e.g. tests, the control tree */
	void *sink_arg;
};

/* ---- the system: key, policy, cache, mode, providers ---------------------------- */

enum integrity_mode {
	INTEGRITY_MODE_ENFORCE = 0,	/* deny and audit */
	INTEGRITY_MODE_LOG,		/* decide and audit, but allow */
	INTEGRITY_MODE_FIX,		/* label what is missing or stale */
	INTEGRITY_MODE_OFF,		/* no checks, no label updates */
};
const char *integrity_mode_name(enum integrity_mode m);
int integrity_mode_parse(const char *s, enum integrity_mode *out);

/* securityfs `evm` bits */
#define EVM_INIT_HMAC			0x0001
#define EVM_INIT_X509			0x0002
#define EVM_ALLOW_METADATA_WRITES	0x0004
#define EVM_SETUP_COMPLETE		0x80000000

/* setattr bits (the kernel's ATTR_*) */
#define ATTR_MODE	(1 << 0)
#define ATTR_UID	(1 << 1)
#define ATTR_GID	(1 << 2)
#define ATTR_SIZE	(1 << 3)

/* IMA hook ids used by the IMA provider (see ima_policy.h for all). */

struct ima_policy;
struct ima_measurements;

struct integrity_sys_config {
	enum integrity_mode mode;
	size_t cache_capacity;		/* 0: default */
	struct integrity_audit_config audit;
};

struct integrity_sys;

/* The system takes ownership of CTX (key, protected xattrs, options). */
int integrity_sys_new(const struct integrity_sys_config *cfg,
		      struct uevm_ctx *ctx, struct integrity_sys **out);
void integrity_sys_free(struct integrity_sys *s);
struct uevm_ctx *integrity_sys_ctx(struct integrity_sys *s);
struct integrity_cache *integrity_sys_cache(struct integrity_sys *s);
enum integrity_mode integrity_sys_mode(const struct integrity_sys *s);
void integrity_sys_set_mode(struct integrity_sys *s, enum integrity_mode m);
/* The IMA policy (owned by the caller, must outlive its use; NULL: none,
 * nothing is measured or appraised). */
void integrity_sys_set_policy(struct integrity_sys *s, const struct ima_policy *p);
const struct ima_policy *integrity_sys_policy(const struct integrity_sys *s);
/* The measurement list (owned by the caller; NULL: no measurements). */
void integrity_sys_set_measurements(struct integrity_sys *s,
				    struct ima_measurements *ml);
struct ima_measurements *integrity_sys_measurements(const struct integrity_sys *s);
/* Measure the context's certificates as keys of the .ima keyring, as the
 * kernel does for func=KEY_CHECK: only when the policy has a matching
 * measure rule, one ima-buf entry per certificate (its DER).  Call once
 * the policy and the list are set.  Returns the number of entries added
 * (0 without a rule, or when all were listed already) or a negative
 * errno (-EIO: listed, but the TPM extend failed). */
int ima_measure_keys(struct integrity_sys *s);
/* The kernel's ima_measure_critical_data: BUF as an ima-buf entry (or the
 * rule's template=) named EVENT_NAME, when a "measure func=CRITICAL_DATA"
 * rule matches LABEL (label= lists it, or names none).  Returns 1 when
 * added, 0 without a rule or when listed already, or a negative errno. */
int ima_measure_critical_data(struct integrity_sys *s, const char *label,
			      const char *event_name, const void *buf, size_t len);
/* The securityfs `evm` value: writable once (by CAP_SYS_ADMIN). */
int integrity_sys_evm_write(struct integrity_sys *s,
			    const struct integrity_cred *cred, uint32_t bits);
uint32_t integrity_sys_evm_read(const struct integrity_sys *s);
/* The same with EVM_SETUP_COMPLETE, which the evm file does not show. */
uint32_t integrity_sys_evm_bits(const struct integrity_sys *s);

/* S as audit records carry a string anyone may choose (a file name, a
 * process name): quoted when it is one printable word, else hex, as the
 * kernel's audit_log_untrustedstring.  Returns the length written to
 * BUF (at most SIZE - 1; cut short when BUF is too small). */
size_t integrity_audit_untrusted(char *buf, size_t size, const char *s);
/* Write " NAME=VALUE" to FP, VALUE encoded as above and whole (for texts
 * a verifier pins: no field can be faked by a name, nothing is cut). */
int integrity_put_untrusted_field(FILE *fp, const char *name, const char *value);

/* The longest record integrity_audit_msg makes: a name of PATH_MAX bytes
 * in hex fits whole, with the fields after it (the kernel's audit buffer
 * grows to hold it). */
#define INTEGRITY_AUDIT_TEXT_MAX 10240

/* Emit an audit record (the kernel's integrity_audit_msg). */
void integrity_audit_msg(struct integrity_sys *s, int type,
			 const struct uevm_file *f, const char *fname,
			 const struct integrity_cred *cred, const char *op,
			 const char *cause, int result, bool info);

/* ---- events and hooks --------------------------------------------------------- */

/* One operation, as a front-end saw it. */
struct integrity_event {
	const struct uevm_file *file;	/* open object (fd-based) */
	const struct integrity_cred *cred;
	const char *filename;		/* for audit and measurement */
	/* setxattr / removexattr */
	const char *xattr_name;
	const void *xattr_value;	/* NULL for removexattr */
	size_t xattr_len;
	/* setattr */
	unsigned int ia_valid;		/* ATTR_MODE | ATTR_UID | ATTR_GID | ATTR_SIZE */
	mode_t ia_mode;
	uid_t ia_uid;
	gid_t ia_gid;
	/* file check */
	int mask;			/* MAY_READ | MAY_WRITE | MAY_EXEC | MAY_APPEND */
	int func;			/* enum ima_hooks (FILE_CHECK, BPRM_CHECK, ...) */
	bool created;			/* the open created the file */
	/* Other opens of the file for reading only (the kernel's
	 * i_readcount), for front-ends that see every close: a write open
	 * while a measured reader is open is a ToMToU violation. */
	unsigned int readers;
	/* file_free: called for every close of an open that file_check
	 * allowed with MAY_WRITE/MAY_APPEND in MASK; WRITTEN says whether
	 * data was written.  The last such close rehashes the file. */
	bool written;
	/* file_free: the content also changed by other means than the
	 * front-end's own writes while it was open (uevmfs: written into
	 * SOURCE behind the mount).  It is not relabelled, by this close or
	 * a later one: the file keeps failing. */
	bool changed_elsewhere;
	/* file_free: the digest (WRITTEN_ALGO) of the whole content as the
	 * front-end wrote it, when it saw every byte go in, in order; the
	 * last writer's rehash then takes it instead of reading the file
	 * again.  NULL: the file is read. */
	const uint8_t *written_digest;
	int written_algo;
};

/* An integrity provider: the operations it implements (NULL: none). */
struct integrity_provider_ops {
	const char *name;
	int (*inode_setxattr)(struct integrity_sys *, const struct integrity_event *);
	void (*inode_post_setxattr)(struct integrity_sys *, const struct integrity_event *);
	int (*inode_removexattr)(struct integrity_sys *, const struct integrity_event *);
	void (*inode_post_removexattr)(struct integrity_sys *, const struct integrity_event *);
	int (*inode_setattr)(struct integrity_sys *, const struct integrity_event *);
	void (*inode_post_setattr)(struct integrity_sys *, const struct integrity_event *);
	int (*inode_post_init)(struct integrity_sys *, const struct integrity_event *);
	int (*file_check)(struct integrity_sys *, const struct integrity_event *);
	void (*file_free)(struct integrity_sys *, const struct integrity_event *);
};

/* integrity_sys_new registers EVM and IMA (appraisal and measurement);
 * further providers are called after them, in registration order. */
int integrity_register_provider(struct integrity_sys *s,
				const struct integrity_provider_ops *ops);

/* Entry points for front-ends: each calls the providers in order; the
 * first error (-EPERM, -EACCES, -EINVAL) is returned. */
int integrity_inode_setxattr(struct integrity_sys *s, const struct integrity_event *ev);
void integrity_inode_post_setxattr(struct integrity_sys *s, const struct integrity_event *ev);
int integrity_inode_removexattr(struct integrity_sys *s, const struct integrity_event *ev);
void integrity_inode_post_removexattr(struct integrity_sys *s, const struct integrity_event *ev);
int integrity_inode_setattr(struct integrity_sys *s, const struct integrity_event *ev);
void integrity_inode_post_setattr(struct integrity_sys *s, const struct integrity_event *ev);
int integrity_inode_post_init(struct integrity_sys *s, const struct integrity_event *ev);
int integrity_file_check(struct integrity_sys *s, const struct integrity_event *ev);
/* An exec (the kernel's ima_bprm_check): BPRM_CHECK, then CREDS_CHECK
 * with the ids the program runs with; NOSUID as integrity_cred_for_exec. */
int integrity_bprm_check(struct integrity_sys *s, const struct integrity_event *ev,
			 int nosuid);
void integrity_file_free(struct integrity_sys *s, const struct integrity_event *ev);

/* The providers' hooks, callable directly (kernel names). */
int evm_inode_setxattr(struct integrity_sys *s, const struct integrity_event *ev);
void evm_inode_post_setxattr(struct integrity_sys *s, const struct integrity_event *ev);
int evm_inode_removexattr(struct integrity_sys *s, const struct integrity_event *ev);
void evm_inode_post_removexattr(struct integrity_sys *s, const struct integrity_event *ev);
int evm_inode_setattr(struct integrity_sys *s, const struct integrity_event *ev);
void evm_inode_post_setattr(struct integrity_sys *s, const struct integrity_event *ev);
int evm_inode_post_init(struct integrity_sys *s, const struct integrity_event *ev);
/* EVM status of F's xattr NAME with VALUE in place of the stored one
 * (VALUE NULL: the stored one), through the cache. */
enum integrity_status evm_verifyxattr(struct integrity_sys *s,
				      const struct uevm_file *f,
				      const char *name, const void *value,
				      size_t len);
/* The EVM status of F as stored now, through the cache. */
enum integrity_status evm_verify_current_integrity(struct integrity_sys *s,
						   const struct uevm_file *f);

int ima_file_check(struct integrity_sys *s, const struct integrity_event *ev);
void ima_file_free(struct integrity_sys *s, const struct integrity_event *ev);
int ima_inode_setxattr(struct integrity_sys *s, const struct integrity_event *ev);
int ima_inode_removexattr(struct integrity_sys *s, const struct integrity_event *ev);
void ima_inode_post_setattr(struct integrity_sys *s, const struct integrity_event *ev);

/* ---- front-ends that see some operations only afterwards (fanotify) ----- */

/*
 * The fast path: after integrity_file_check allowed EV, may the front-end
 * keep later opens of the same content out of userspace (a kernel ignore
 * mark) for the hooks in FUNCS (bits 1 << FILE_CHECK, 1 << BPRM_CHECK)?
 * True when, for every caller and every open mask of those hooks, each
 * action the policy could ask for is already done (appraised PASS, with a
 * signature where one is required; measured into each possible PCR;
 * audited) and no writer is open.  The entry then expects writes it will
 * not see opening: the last writer's close (integrity_file_free) rehashes
 * it, as a write open of this good content would have been allowed.
 * The answer holds for the content of stamp EV->file->st (no fresh stat):
 * the caller must stat the file again once its mark stands and drop the
 * mark if the stamp moved.
 */
bool integrity_file_cacheable(struct integrity_sys *s,
			      const struct integrity_event *ev,
			      unsigned int funcs);

/*
 * A change of mode, owner or xattrs that the front-end learnt of only after
 * it was made (fanotify FAN_ATTRIB; there was no evm_inode_setattr before
 * it).  security.evm is recomputed only when the EVM status known before
 * the change was PASS, or the file is new (or in fix mode); otherwise the
 * file keeps failing and an audit record says so (op=update_metadata).
 * Returns 0 when the labels are current, -EPERM when they were left stale.
 */
int integrity_inode_post_change(struct integrity_sys *s,
				const struct integrity_event *ev);

#ifdef __cplusplus
}
#endif
#endif /* UEVM_INTEGRITY_H */
