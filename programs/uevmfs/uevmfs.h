/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uevmfs: SOURCE shown at MOUNTPOINT, every operation passed through the
 * integrity layer where the kernel places its hooks.  This front-end only
 * translates FUSE requests into integrity_* calls; decisions are libuevm's.
 */
#ifndef UEVMFS_H
#define UEVMFS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include "integrity.h"
#include "ima_policy.h"
#include "securityfs.h"

/* The kernel's __FMODE_EXEC: an open made by execve() carries it in the
 * flags FUSE passes on. */
#define UFS_FMODE_EXEC 0x20

/* One SOURCE object the kernel knows (FUSE node id = its address). */
struct ufs_inode {
	int fd;				/* O_PATH, never followed */
	dev_t dev;
	ino_t ino;
	mode_t type;			/* S_IFMT bits */
	uint64_t nlookup;		/* kernel references (table lock) */
	struct ufs_inode *next;		/* hash chain (table lock) */
	pthread_mutex_t lock;		/* cache_stamp */
	bool cache_valid;		/* the kernel's page cache holds ... */
	struct integrity_stamp cache_stamp; /* ... the content of this stamp */
	/* -o fastopen, where the kernel sends no OPEN (ops_shared.c) */
	int rfd;			/* O_RDONLY for reads, or -1 (lock) */
	bool read_ok;			/* appraised for reading ... (lock) */
	struct integrity_stamp read_stamp; /* ... with this content (lock) */
	uint32_t read_gen;		/* ... under these rules: the library's
					 * cache epoch then (lock) */
	struct ufs_file *shared;	/* the handle writes go through (lock) */
	struct ufs_inode *dirty_next;	/* on ufs.dirty (dirty_lock) */
	bool dirty;			/* on ufs.dirty (dirty_lock) */
	int pinned;			/* being flushed (dirty_lock) */
	/* Pages written through the mount, for the kernel to drop
	 * (ops_shared.c; dirty_lock): on ufs.inval while queued. */
	struct ufs_inode *inval_next;
	bool inval_queued;
	off_t inval_lo, inval_hi;
	_Atomic int64_t last_write_ns;	/* CLOCK_MONOTONIC */
	atomic_uint readers;		/* open files not open for writing */
	/* While written through the mount (behind.c, own_lock): */
	pthread_mutex_t own_lock;
	unsigned int own_writers;	/* writers registered here */
	bool own_foreign;		/* SOURCE changed behind the mount */
	struct integrity_stamp own_stamp; /* the stamp our last change left */
	struct ufs_stream *stream;	/* content hashed as written (own_lock) */
	/* New, labelled by uevmfs with this digest: a writer continues the
	 * create (own_lock; behind.c, ufs_own_fresh). */
	bool fresh;
	const struct ufs_file *fresh_owner; /* the creating open; NULL: any */
	int fresh_algo;
	uint8_t fresh_digest[64];
	/* Taken with the content at this stamp: own_add expects it. */
	bool fresh_expect;
	struct integrity_stamp fresh_expect_stamp;
	bool expect_empty;		/* just made: own_add wants it empty */
};

struct ufs {
	struct integrity_sys *sys;
	struct uevm_securityfs *sfs;
	struct ufs_inode root;
	char *source;			/* realpath of SOURCE */
	size_t source_len;
	char *mountpoint;		/* realpath of MOUNTPOINT */
	bool over_source;		/* mounted over SOURCE itself */
	bool source_copy;		/* SOURCE held by a private noexec copy
					 * of its mount (inode.c, source_open) */
	bool source_names;		/* -o measure_path=source */
	bool dont_mask;			/* the caller's umask comes apart */
	double timeout;			/* attribute and entry cache, seconds */
	/* -o fastopen: no OPEN, FLUSH or RELEASE reach us; reads are
	 * appraised at the first READ, writes relabelled after write_idle
	 * seconds without writes, at fsync, forget and unmount. */
	bool fastopen;
	bool nosuid;			/* the mount's: no exec raises ids */
	bool singlethread;		/* -s: one worker */
	int hash_algo;			/* of the labels written */
	double write_idle;
	pthread_mutex_t dirty_lock;
	pthread_cond_t dirty_cond;
	struct ufs_inode *dirty;	/* inodes with a shared writer */
	struct ufs_inode *inval;	/* inodes with written pages cached */
	bool flusher_run;
	bool flusher_live;		/* not yet ended (dirty_lock) */
	bool flusher_dropping;		/* in a drop (dirty_lock) */
	bool flusher_relabel;		/* in a relabel (dirty_lock) */
	/* The rules watcher: ends with flusher_run (ops_shared.c). */
	pthread_t rules;
	bool rules_live;		/* not yet ended (dirty_lock) */
	bool rules_dropping;		/* dropping pages (dirty_lock) */
	pthread_t flusher;
	unsigned int setattr_drops;	/* drop threads running (dirty_lock) */
	unsigned int drop_threads_max;
	int drop_wake;			/* eventfd: the stopper's wake-up, or -1 */
	atomic_bool stopping;		/* a stop signal came */
	double stop_timeout;		/* a stop serves pending drops so long */
	dev_t conn;			/* our mount's device: the connection */
	struct fuse_session *se;
	/* inode table, keyed by (dev, ino) */
	pthread_mutex_t table_lock;
	struct ufs_inode **buckets;
	size_t nbuckets, count;
	/* a readable directory fd per SOURCE filesystem: the hooks ask it for
	 * the fs UUID and generation support of objects not opened for I/O */
	/* This process's /proc/self/fd, opened after the fork to the
	 * background: names an inode's fd without walking the path. */
	int proc_fds;
	bool have_proc_fds;
	pthread_mutex_t devfd_lock;
	struct { dev_t dev; int fd; } devfds[64];
	int ndevfds;
};

/* An open file. */
struct ufs_file {
	int fd;
	int mask;			/* MAY_* the open was checked with */
	struct ufs_inode *inode;
	/* Writes take it shared; the close-time rehash takes it exclusive,
	 * so that no write lands while the content is hashed. */
	pthread_rwlock_t lock;
	bool registered;		/* a writer the integrity layer counts */
	bool reader;			/* counted in inode->readers */
	atomic_bool written;		/* data written since registered */
	bool created;			/* the open that made the file (lock) */
	struct integrity_cred cred;	/* the opener's */
};

/* Everything one hook call needs. */
struct ufs_hook {
	struct uevm_file file;
	bool own_fd;
	struct integrity_cred cred;
	struct integrity_event ev;
	bool shared;			/* registered in share.c */
	char name[PATH_MAX];		/* MOUNTPOINT/x */
	char src_name[PATH_MAX];	/* SOURCE/x */
	uint8_t digest[64];		/* the written stream's, for file_free */
};

extern struct ufs ufs;

/* inode.c */
int ufs_table_init(struct ufs *fs, const char *source);
void ufs_table_free(struct ufs *fs);
struct ufs_inode *ufs_inode(fuse_ino_t ino);
/* Look NAME up under PARENT (O_PATH, no symlink followed); on success the
 * inode's kernel reference count is raised and E filled in. */
int ufs_do_lookup(struct ufs_inode *parent, const char *name,
		  struct fuse_entry_param *e);
/* Enter the regular file or directory open as FD (not taken) into the table
 * as a lookup would. */
int ufs_enter_fd(int fd, struct fuse_entry_param *e);
void ufs_forget_one(struct ufs_inode *in, uint64_t n);
/* The known object (DEV, INO) with its lookup count raised, or NULL. */
struct ufs_inode *ufs_inode_find(dev_t dev, ino_t ino);
/* Every inode's read verdict dropped (fastopen); *OUT lists the regular
 * files' node ids, for the kernel to drop their pages.  Free it. */
size_t ufs_table_files(fuse_ino_t **out);
/* A readable directory fd on device DEV, or -1. */
int ufs_devfd(dev_t dev);
/* Reopen IN through /proc/self/fd with FLAGS (as the daemon). */
int ufs_reopen(const struct ufs_inode *in, int flags);
/* "/proc/self/fd/N" of IN's O_PATH fd. */
void ufs_proc_path(const struct ufs_inode *in, char *buf, size_t len);
int ufs_proc_at(const struct ufs_inode *in, char *buf, size_t len);

/* hooks.c */
void ufs_req_cred(fuse_req_t req, struct integrity_cred *cred);
/* Build a hook call for IN as CRED; IOFD (>= 0) is a readable fd of IN
 * to use instead of opening one. */
int ufs_hook_begin(struct ufs_inode *in, int iofd,
		   const struct integrity_cred *cred, struct ufs_hook *h);
void ufs_hook_end(struct ufs_hook *h);
/* The MAY_* mask the kernel computes for an open with FLAGS. */
int ufs_open_mask(int flags);
/* Run the next operations as the caller's fsuid/fsgid (new objects get
 * the caller as owner), then back as the daemon. */
void ufs_as_caller(fuse_req_t req);
void ufs_as_daemon(void);
/* The mode to create with, after ufs_as_caller. */
mode_t ufs_create_mode(fuse_req_t req, mode_t mode);

/* ops_node.c, ops_file.c, ops_xattr.c */
extern const struct fuse_lowlevel_ops ufs_ops;
void ufs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void ufs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void ufs_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *f);
void ufs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void ufs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		 struct fuse_file_info *fi);
void ufs_readlink(fuse_req_t req, fuse_ino_t ino);
void ufs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       dev_t rdev);
void ufs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void ufs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		 const char *name);
void ufs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
	      const char *newname);
void ufs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void ufs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void ufs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		fuse_ino_t newparent, const char *newname, unsigned int flags);
void ufs_statfs(fuse_req_t req, fuse_ino_t ino);
void ufs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void ufs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		 struct fuse_file_info *fi);
void ufs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi);
void ufs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void ufs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
		  struct fuse_file_info *fi);
void ufs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void ufs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		mode_t mode, struct fuse_file_info *fi);
void ufs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	      struct fuse_file_info *fi);
void ufs_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv,
		   off_t off, struct fuse_file_info *fi);
void ufs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void ufs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void ufs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
	       struct fuse_file_info *fi);
void ufs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
		   off_t length, struct fuse_file_info *fi);
void ufs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		  const char *value, size_t size, int flags);
void ufs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void ufs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void ufs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

/* ops_file.c: a truncation is a write (by descriptor: through FH; by
 * name: an open for write, the truncation, a close). */
int ufs_truncate(struct ufs_inode *in, struct ufs_file *fh, off_t size,
		 const struct integrity_cred *cred);

/* ops_file.c: open file handles, shared with ops_shared.c */
int ufs_file_new(struct ufs_inode *in, int fd, int mask, bool written,
		 const struct integrity_cred *cred, struct ufs_file **out);
void ufs_file_destroy(struct ufs_file *fh);
/* integrity_file_free for FH (call with FH->lock held exclusive). */
void ufs_file_unregister(struct ufs_file *fh);

int64_t ufs_now_ns(void);	/* CLOCK_MONOTONIC, ns */

/* ops_shared.c: -o fastopen.  Requests whose file handle is 0 (no OPEN
 * was sent) are served through per-inode handles. */
int ufs_shared_start(void);
void ufs_shared_stop(void);	/* relabels every file still written */
void ufs_shared_drop(struct ufs_inode *in);	/* before IN is freed */
/* Answer a SETATTR of IN (ERR, or IN's attributes), its cached pages
 * dropped: before the answer, or after it for a truncation. */
void ufs_shared_setattr_reply(fuse_req_t req, struct ufs_inode *in, bool truncate,
			      int err);
/* Answer a SETXATTR or REMOVEXATTR of IN (ERR), its cached pages dropped
 * before the answer. */
void ufs_shared_xattr_reply(fuse_req_t req, struct ufs_inode *in, int err);
/* Refuse a change of IN's attributes while the stop serves (drops.c)? */
bool ufs_shared_stopping(fuse_req_t req, struct ufs_inode *in);

/* drops.c: page drops that wait for the kernel's writes.  Drop IN's
 * (a regular file's) cached pages in a drop thread, which then answers REQ
 * (ERR, or with ATTRS IN's attributes); false: not handed over, answer it
 * here. */
bool ufs_drop_handoff(fuse_req_t req, struct ufs_inode *in, int err, bool attrs);
void ufs_drops_wake(void);	/* a drop ended (dirty_lock held) */
/* The stopper: SIGTERM, SIGINT and SIGHUP wait for the drops under way
 * before libfuse's loop ends (with fastopen, after ufs_shared_start). */
int ufs_stopper_start(void);
void ufs_stopper_stop(void);	/* after the loop */
void ufs_drops_settle(void);	/* then: no drop left (dirty_lock held) */
/* pthread_create with every signal blocked in the new thread. */
int ufs_thread_start(pthread_t *t, void *(*fn)(void *), void *arg,
		     size_t stack, bool detached);
/* May fastopen serve policy P (no rule depends on the caller, none tells an
 * exec open from a read open)?  0, or -EPERM with the rule and the reason
 * in WHY and the audit cause in *CAUSE (CAUSE may be NULL). */
int ufs_shared_policy_check(const struct ima_policy *p, char *why, size_t len,
			    const char **cause);
/* The same, as the control tree's veto on ima/policy writes. */
/* New EVM bits or rules since last looked: what passed is checked again
 * and the kernel drops the pages read under the old ones (fastopen).
 * False when that must be tried again (no memory for the list). */
bool ufs_shared_rules_check(void);
int ufs_shared_policy_gate(const struct ima_policy *p, void *arg, char *why,
			   size_t len, const char **cause);
void ufs_shared_read(fuse_req_t req, struct ufs_inode *in, size_t size, off_t off);
void ufs_shared_write(fuse_req_t req, struct ufs_inode *in,
		      struct fuse_bufvec *bufv, off_t off);
void ufs_shared_fsync(fuse_req_t req, struct ufs_inode *in, int datasync);
int ufs_shared_truncate(fuse_req_t req, struct ufs_inode *in, off_t size);
void ufs_shared_fallocate(fuse_req_t req, struct ufs_inode *in, int mode,
			  off_t offset, off_t length);

/* links.c: may the caller follow the link IN, whose text is TARGET?
 * 0, or -EACCES (audited) for a target that leads to SOURCE itself. */
int ufs_link_check(fuse_req_t req, struct ufs_inode *in, const char *target);

/* behind.c: only content that came through the mount is relabelled.
 * A writer registered (own_add); every change made through the mount
 * between ufs_own_begin and ufs_own_end; a writer's close through
 * ufs_own_free (integrity_file_free of H, refused when SOURCE changed
 * behind the mount meanwhile; H NULL: the file cannot be reached; FH: the
 * open file whose written stream may serve as the new hash, or NULL). */
void ufs_own_add(struct ufs_inode *in);
void ufs_own_begin(struct ufs_inode *in);
void ufs_own_end(struct ufs_inode *in);
void ufs_own_free(struct ufs_hook *h, struct ufs_inode *in, struct ufs_file *fh);
/* A new file's labels were just written to F (mknod: OWNER NULL), or by
 * the relabel at a FLUSH of OWNER, the open that created it:
 * ufs_own_fresh.  A writer takes that with ufs_own_take_fresh (OWNER's
 * own next write, or the first writer of a mknod'ed file: FH NULL): true
 * when the content is still the one labelled, to be checked as the create
 * it continues.  ufs_own_fresh_drop when OWNER is released. */
void ufs_own_expect_empty(struct ufs_inode *in);
void ufs_own_fresh(struct ufs_inode *in, const struct uevm_file *f);
bool ufs_own_take_fresh(struct ufs_inode *in, const struct ufs_file *fh);
void ufs_own_fresh_drop(struct ufs_inode *in, const struct ufs_file *owner);
/* The regular file NAME in DIR if the kernel knows it (a reference:
 * ufs_own_put), or NULL. */
struct ufs_inode *ufs_own_by_name(struct ufs_inode *dir, const char *name);
void ufs_own_put(struct ufs_inode *in);

/* stream.c: the content hashed as it is written through the mount, for
 * the relabel at close.  ufs_stream_start when FH registers as a writer;
 * every write between ufs_own_begin and ufs_own_end claims its range
 * (the stream to hash into after the write, or NULL); truncations and
 * other changes break it (ufs_stream_truncate: own_lock held).
 * ufs_stream_end (own_lock held, FH's lock exclusive) ends FH's stream:
 * true with DIGEST filled when it describes the whole file as it is. */
struct ufs_stream;
void ufs_stream_start(struct ufs_inode *in, struct ufs_file *fh);
void ufs_stream_break(struct ufs_inode *in);
void ufs_stream_break_locked(struct ufs_inode *in);	/* own_lock held */
/* Data spliced in a pipe (*BUFV) is read into a per-thread buffer first,
 * and *BUFV points there (NULL: the data could not be read). */
#define UFS_STREAM_BUF	(1u << 20)	/* = max_write */
struct ufs_stream *ufs_stream_claim(struct ufs_inode *in, struct ufs_file *fh,
				    struct fuse_bufvec **bufv, off_t off);
void ufs_stream_written(struct ufs_stream *s, const struct fuse_bufvec *bufv,
			off_t off, ssize_t n);
void ufs_stream_truncate(struct ufs_inode *in, struct ufs_file *fh, off_t size);
bool ufs_stream_end(struct ufs_inode *in, struct ufs_file *fh, bool use,
		    uint8_t *digest);
void ufs_stream_drop(struct ufs_inode *in);	/* before IN is freed */
void ufs_stream_stats(long *streamed, long *rehashed);

/* share.c: no user holds every worker with long hook calls.  Every hook
 * call is registered between ufs_share_enter and ufs_share_leave (not 0:
 * it was cancelled, its hashing failed, for that reason). */
enum { SHARE_HOLDS = 1, SHARE_STOPPING = 2 };
int ufs_share_start(unsigned int max_threads);
void ufs_share_stop(void);
void ufs_share_enter(uid_t uid);
int ufs_share_leave(void);
void ufs_share_cancel_long(void);

/* holders.c: once mounted over SOURCE, name (stderr, audit) the processes
 * that still reach SOURCE itself from before the mount. */
void ufs_warn_source_holders(void);
/* holders.c: before mounting, uevmfs's own working directory and the
 * directory fds it inherited stop leading into SOURCE. */
void ufs_leave_source(void);
/* inode.c: is FD on the private copy of SOURCE's mounts? */
bool ufs_is_copy_fd(int fd);

/* audit_log.c: records as lines of an audit log file */
int ufs_audit_log_open(const char *path);
void ufs_audit_log_sink(const struct integrity_audit_record *r, void *arg);
void ufs_audit_log_close(void);

#endif
