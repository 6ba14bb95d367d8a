/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Serving the control tree with FUSE: libuevm-fuse.a, an internal static
 * library that only the front-ends which show the tree (uevmfs, uevmd)
 * link, so that libuevm does not need libfuse3.  Not installed.
 */
#ifndef UEVM_SECURITYFS_FUSE_H
#define UEVM_SECURITYFS_FUSE_H

#include "securityfs.h"

/*
 * Mount the tree at MOUNTPOINT (created if missing, mode 0755) as a FUSE
 * filesystem ("fuse.uevm-securityfs", allow_other, default_permissions)
 * and serve it from a thread of its own until uevm_securityfs_unmount()
 * or uevm_securityfs_free().  OPTIONS: extra mount options ("ro", ...) or
 * NULL.  Needs root.  Each request runs with the credentials of the
 * requesting process (pid -> /proc/PID/status).  One mount per tree.
 */
int uevm_securityfs_mount(struct uevm_securityfs *sfs, const char *mountpoint,
			  const char *options);
/* Unmount (lazily if busy), stop the thread and forget the mount. */
int uevm_securityfs_unmount(struct uevm_securityfs *sfs);
/* The mount point, or NULL when not mounted. */
const char *uevm_securityfs_mountpoint(const struct uevm_securityfs *sfs);

#endif
