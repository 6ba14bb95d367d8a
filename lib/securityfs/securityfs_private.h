/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The control tree's internals, shared by its node logic and its FUSE server. */
#ifndef UEVM_SECURITYFS_PRIVATE_H
#define UEVM_SECURITYFS_PRIVATE_H

#include <pthread.h>
#include "lib_private.h"
#include "securityfs.h"

struct sfs_mount;	/* the FUSE server (securityfs_fuse.c) */

struct uevm_securityfs {
	struct integrity_sys *sys;
	pthread_mutex_t lock;		/* the policy write session */
	bool policy_busy;		/* an opener is writing ima/policy */
	bool policy_loaded;		/* a policy was written: no more */
	struct ima_policy *loaded;	/* owned: the policy written here */
	uevm_securityfs_policy_gate gate;	/* the front-end's veto, or NULL */
	void *gate_arg;
	uevm_securityfs_change_hook changed;	/* told of each change, or NULL */
	void *changed_arg;
	struct sfs_mount *mount;
	/* Stop serving, set by the FUSE server while mounted: the server
	 * lives outside libuevm (securityfs_fuse.h), so the tree calls it
	 * only through this pointer. */
	void (*mount_destroy)(struct uevm_securityfs *sfs);
};

#endif
