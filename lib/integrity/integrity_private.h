/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The integrity system's internals, shared by the hook and audit files. */
#ifndef UEVM_INTEGRITY_PRIVATE_H
#define UEVM_INTEGRITY_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>
#include "lib_private.h"
#include "integrity.h"

#define MAX_PROVIDERS 16

struct integrity_sys {
	struct uevm_ctx *ctx;
	struct integrity_cache *cache;
	atomic_int mode;
	atomic_uint evm_bits;
	_Atomic(const struct ima_policy *) policy;
	_Atomic(struct ima_measurements *) ml;
	struct integrity_audit_config audit;
	char *syslog_path;
	int syslog_fd;
	int auditd_fd;			/* -1 when auditd is not in use */
	pthread_mutex_t lock;		/* providers, evm writes */
	const struct integrity_provider_ops *providers[MAX_PROVIDERS];
	atomic_int nproviders;
};

/* HMAC updates are off until EVM_INIT_HMAC is set and a key is loaded
 * (the kernel's evm_hmac_disabled()). */
bool evm_hmac_disabled(const struct integrity_sys *s);

/* The iint of the hook's file, created if needed, stamp-checked. */
struct integrity_iint_cache *integrity_inode_get(struct integrity_sys *s,
						 const struct uevm_file *f);
/* The same, with the fresh stat its stamp came from in *NOW (*FRESH false:
 * none could be taken, the stamp is f->st's). */
struct integrity_iint_cache *integrity_inode_get_stat(struct integrity_sys *s,
						      const struct uevm_file *f,
						      struct stat *now, bool *fresh);
/* The iint of the hook's file if there is one; no stat, no stamp check. */
struct integrity_iint_cache *integrity_inode_find(struct integrity_sys *s,
						  const struct uevm_file *f);
/* Refresh the stamp after our own writes, so they don't invalidate. */
void integrity_iint_refresh(struct integrity_iint_cache *iint,
			    const struct uevm_file *f);

/* Set up and tear down the audit outputs the configuration asks for. */
int integrity_audit_open(struct integrity_sys *s);
void integrity_audit_close(struct integrity_sys *s);

/* Rewrite security.evm after a change, with IINT already locked. */
void evm_update_locked(struct integrity_sys *s, const struct integrity_event *ev,
		       struct integrity_iint_cache *iint);

/* Add a measurement of the collected digest to the system's list
 * (template and PCR as the policy says; NULL/-1: defaults). */
struct ima_digest;
int ima_store_measurement(struct integrity_sys *s, const struct integrity_event *ev,
			  const struct ima_digest *dig, const uint8_t *xattr,
			  size_t xattr_len, const char *template_name, int pcr);
/* Audit how a list was opened, when that needs a record (rotated). */
void ima_store_audit_open(struct integrity_sys *s, struct ima_measurements *ml);
/* The PCR a measure rule without pcr= extends: the list's own (its
 * configured PCR), or 10 when the system keeps no list. */
int ima_store_default_pcr(struct integrity_sys *s);
/* A violation entry (no digest) with CAUSE "open_writers" or "ToMToU". */
void ima_store_violation(struct integrity_sys *s, const struct integrity_event *ev,
			 const char *template_name, const char *cause);

extern const struct integrity_provider_ops evm_provider_ops;
extern const struct integrity_provider_ops ima_provider_ops;

#endif
