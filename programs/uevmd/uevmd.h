/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uevmd: EVM/IMA appraisal and measurement for native mounts through
 * fanotify.  The daemon only translates kernel events into the integrity
 * layer's calls (lib/integrity/integrity.h) and the layer's answers into fanotify
 * responses and marks; every decision is the library's.
 *
 * Threads: a reader takes permission events off the fanotify group and
 * answers the daemon's own at once; workers appraise the rest and answer;
 * a watchdog answers what is late and pings systemd; a notifier keeps
 * labels current after legitimate changes; a logger delivers records; a
 * control thread serves `uevm status|enable|policy load|measurements`.
 */
#ifndef UEVMD_H
#define UEVMD_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <syslog.h>
#include <sys/stat.h>
#include "integrity.h"
#include "ima.h"
#include "ima_policy.h"

#ifndef UEVMD_SYSCONFDIR
#define UEVMD_SYSCONFDIR	"/etc"		/* the Makefile's SYSCONFDIR */
#endif
#define UEVMD_DEFAULT_CONFIG	UEVMD_SYSCONFDIR "/uevm/uevmd.conf"
#define UEVMD_DEFAULT_SOCKET	"/run/uevm/uevmd.sock"
#define UEVMD_DEFAULT_TREE	"/run/uevm/security"
#define UEVMD_MAX_MARKS		64

/* ---- configuration (config.c) ------------------------------------------ */

enum fan_audit_use { FAN_AUDIT_NONE, FAN_AUDIT_DENY, FAN_AUDIT_ALL };

struct uevmd_config {
	char *mounts[UEVMD_MAX_MARKS];		/* FAN_MARK_MOUNT */
	int nmounts;
	char *filesystems[UEVMD_MAX_MARKS];	/* FAN_MARK_FILESYSTEM */
	int nfilesystems;
	char *policy;		/* a file, or "builtin:NAME" */
	char *key;		/* uevm_key_load_ex spec */
	char *certs[16];	/* X.509 certificates for signatures */
	int ncerts;
	enum integrity_mode mode;
	uint8_t sha256[32];	/* of the configuration file's bytes, as read */
	bool evm_init;		/* write EVM_INIT_HMAC at start */
	char *hash;		/* labelling hash algorithm */
	/* measurement list */
	char *tcti;		/* NULL: software PCRs */
	char *measurements;	/* NULL: IMA_ML_HOST_LIST with a TPM, else in
				   memory; "memory": in memory */
	char *kernel_ml;	/* the kernel's list to adopt; NULL default */
	int pcr;
	char *template_name;
	bool ml_sync;
	bool ml_rotate_stale;
	/* control */
	char *control_socket;
	char *control_tree;	/* "" or "none": no tree */
	/* audit and logs */
	bool audit_syslog;
	char *syslog_socket;
	bool audit_auditd;
	bool integrity_audit;
	char *log_file;
	bool log_stderr;
	enum fan_audit_use fanotify_audit;
	/* engine */
	int workers;
	int worker_share;	/* workers one user may hold (0: default) */
	unsigned int deadline_ms;
	bool deadline_allow;	/* a late answer: allow (fail-open) or deny */
	unsigned int wedged_sec;	/* stop systemd pings after this */
	bool fail_open_ok;	/* false: refuse to start (see uevmd(8)) */
	bool fastpath;
	bool label_updates;	/* the notification group */
	size_t cache_size;
};

void uevmd_config_defaults(struct uevmd_config *c);
/* "key = value" lines from FP, or from LEN bytes at BUF; NAME is what the
 * messages, written to ERRFP as "NAME:LINE: why", call it. */
int uevmd_config_load_fp(FILE *fp, const char *name, FILE *errfp,
			 struct uevmd_config *c);
int uevmd_config_load_mem(const void *buf, size_t len, const char *name,
			  FILE *errfp, struct uevmd_config *c);
/* One "key = value" setting (also the command line's -o). */
int uevmd_config_set(struct uevmd_config *c, const char *key, const char *value);
void uevmd_config_free(struct uevmd_config *c);

/* ---- the daemon's own input files (inputs.c) ------------------------------ */

struct uevmd_input {
	int fd;
	struct stat st;		/* as read */
	const char *path;
	const char *what;	/* "configuration", "policy", "certificate" */
};

int input_open(struct uevmd_input *in, const char *path, const char *what);
/* The whole file (16 MiB at most), NUL-terminated; free() it. */
int input_read(struct uevmd_input *in, char **out, size_t *len);
/* Refuse (-EPERM) an input on a watched filesystem, or one with labels,
 * that does not pass appraisal with CTX's key, or changed since read. */
int input_appraise(struct uevmd_input *in, const struct uevm_ctx *ctx);
void input_close(struct uevmd_input *in);

/* ---- control requests (control_parse.c) --------------------------------- */

enum control_verb {
	CTL_EMPTY, CTL_STATUS, CTL_MEASUREMENTS, CTL_POLICY_SHOW,
	CTL_ENABLE, CTL_MODE, CTL_POLICY_LOAD, CTL_UNKNOWN,
};
#define CONTROL_MAX_ARGS 4

struct control_request {
	enum control_verb verb;
	int argc;
	char *argv[CONTROL_MAX_ARGS];	/* point into the request buffer */
};

/* Split the request in BUF (LEN bytes read from the socket; BUF has room
 * for LEN + 1, and is cut in place) into words of its first line and name
 * its verb.  "measurements" without a form is CTL_UNKNOWN. */
void control_request_parse(char *buf, size_t len, struct control_request *r);
/* Whether VERB changes the daemon (needs CAP_SYS_ADMIN in the caller). */
bool control_verb_privileged(enum control_verb verb);

/* ---- the daemon's state --------------------------------------------------- */

struct uevmd_mark {
	char *path;
	int fd;			/* O_PATH|O_DIRECTORY: open_by_handle_at's mount */
	bool filesystem;	/* FAN_MARK_FILESYSTEM, else FAN_MARK_MOUNT */
	int32_t fsid[2];
	dev_t dev;
};

struct uevmd_stats {
	atomic_ullong events, own, allowed, denied, late, overload;
	atomic_ullong marks_added, marks_failed, marks_undone;
	atomic_ullong notify_events, relabelled, relabel_refused, created;
	atomic_ullong syncs, sync_timeouts, overflows, log_dropped;
	atomic_ullong cancelled, share_waits, inode_waits, relabel_dropped;
};

struct uevmd {
	struct uevmd_config cfg;
	const char *config_path;
	struct integrity_sys *sys;
	struct ima_policy *policy;	/* current; replaced under policy_lock */
	char *policy_source;
	uint8_t policy_sha256[32];	/* of the policy file's bytes; 0: builtin */
	bool policy_from_tree;		/* the rules were written to the control tree */
	/* Held across a change of what uevmd-state describes and its
	 * measurement (outside policy_lock), so entries come in the order
	 * the changes took effect. */
	pthread_mutex_t state_lock;
	pthread_mutex_t policy_lock;
	struct ima_measurements *ml;
	char *ml_path;			/* the list's file, NULL: in memory */
	char key_fpr[17];
	char key_id[65];		/* uevm_key_id: the uevmd-state entry's */
	int perm_fd, notif_fd;
	atomic_bool fan_audit;		/* FAN_ENABLE_AUDIT accepted (status reads it while starting) */
	atomic_uint ignore_flags;	/* 0: no fast path */
	struct uevmd_mark marks[2 * UEVMD_MAX_MARKS];
	int nmarks;
	pid_t pid;
	atomic_int running;		/* 1 once READY */
	atomic_int stopping;
	int stop_efd;			/* eventfd: wakes every thread */
	long stale_denied;		/* pending opens of a predecessor refused */
	struct uevmd_stats st;
};

extern struct uevmd *D;
/* Why `mount =` cannot enforce (main.c). */
extern const char uevmd_mount_mark_caveat[];

int64_t mono_ns(void);

/* ---- own threads (tids.c) ---------------------------------------------- */

/* Every thread of the daemon registers itself: its opens of watched files
 * are allowed at once by the reader (they cannot wait for a worker). */
void own_tid_register(void);
bool own_tid(pid_t tid);

/* ---- logging (log.c) ----------------------------------------------------- */

int log_start(void);
void log_stop(void);
int log_reopen(void);
/* The integrity layer's audit sink: records are held by the calling thread
 * until log_flush_local() (after the fanotify answer is written). */
void log_audit_sink(const struct integrity_audit_record *r, void *arg);
void log_flush_local(void);
/* The calling thread holds its records until log_flush_local(). */
void log_hold_records(void);
/* A daemon message (LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO). */
void ulog(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *log_untrusted(char *buf, size_t size, const char *s);
/* Room for a path of 256 bytes as log_untrusted writes it (hex). */
#define LOG_NAME_MAX (2 * 256 + 3)

/* ---- fanotify permission group (perm.c) and workers (worker.c) ---------- */

/* Take over the permission group FD a supervisor kept (see perm.c). */
int perm_adopt(int fd);
int perm_init(void);
int perm_add_marks(void);
int perm_start(void);
/* Stop the reader and the workers; false if a worker did not stop. */
bool perm_stop(void);
/* Remove every ignore mark (after a policy change). */
void perm_flush_ignore_marks(void);
/* Remove the ignore mark of the inode behind FD (after a change). */
void perm_forget_inode(int fd);

/* One permission event waiting for its answer. */
struct perm_slot {
	int fd;
	pid_t tid;
	uint64_t mask;
	int64_t deadline;	/* CLOCK_MONOTONIC ns */
	int64_t started;	/* when a worker took it, 0 while queued */
	atomic_int answered;
	int cancel;		/* set: stop hashing (uevm_hash_cancel_on) */
	int state;		/* SLOT_FREE, SLOT_QUEUED, SLOT_RUNNING (under qlock) */
	/* Whose open, of what: a user's share of the workers, one worker
	 * per inode (set by the reader before the slot is queued). */
	struct integrity_cred cred;
	bool have_cred;
	dev_t dev;
	ino_t ino;
	struct stat st;		/* the reader's fstat of fd */
	bool have_st;
	int prev, next;		/* queue links (slot indices, -1 ends) */
};
enum { SLOT_FREE, SLOT_QUEUED, SLOT_RUNNING };

/* Answer once; false if it was answered already (by the watchdog). */
bool perm_answer(struct perm_slot *sl, bool allow, bool audit);
/* Worker WORKER's next event (NULL: stop), and its end. */
struct perm_slot *perm_next(int worker);
void perm_release(int worker, struct perm_slot *sl);
/* The answer for an event no decision was made for in time: "allow" only
 * when configured and no rule of the current policy appraises. */
bool perm_late_allow(void);
int perm_workers(void);
int perm_share(void);
/* Workers busy now, and events waiting for one. */
void perm_load(int *busy, int *queued);
void worker_handle(struct perm_slot *sl);
/* The watchdog's scan: answer late events; returns the oldest running age. */
int64_t perm_expire(int64_t now);
int64_t perm_reader_heartbeat(void);

/* Access mask and open flags of the open a blocked thread is making, from
 * /proc/TID/syscall (fanotify's event fd carries the listener's flags).
 * FROM_MEMORY: the flags were read from the opener's memory (openat2),
 * where it can rewrite them: pass them through opener_confirm_write(). */
int opener_access(pid_t tid, int *mask, int *oflags, bool *exec, bool *from_memory);
void opener_confirm_write(int fd, int *mask, int *oflags);
/* FAN_CREATE's object: a regular file, one link, no label (opener.c). */
bool object_born(const struct uevm_file *f);
/* The open that made F with O_TMPFILE (the kernel's FMODE_CREATED). */
bool open_made_tmpfile(const struct uevm_file *f, int oflags,
		       const struct integrity_cred *cred);
/* Path of an fd for messages and measurement names. */
void fd_path(int fd, char *buf, size_t len);

/* ---- notification group (notify.c) --------------------------------------- */

int notify_init(void);
int notify_start(void);
void notify_stop(void);
/* Let the notifier finish the events queued so far (a close that must be
 * rehashed before F's open is appraised, F's own creation); bounded wait,
 * only for inodes the cache knows unless FORCE. */
void notify_sync(const struct uevm_file *f, bool force);

/* ---- keeping labels current (relabel.c) ----------------------------------- */

int relabel_start(void);
void relabel_stop(void);	/* after the jobs queued so far */
/* A writer's close (rehash), a change of attributes (HMAC): as jobs, in
 * order per inode; an attribute change with nothing pending is done now. */
void relabel_close_write(struct uevm_file *f, const struct integrity_cred *cred);
void relabel_attrib(struct uevm_file *f, const struct integrity_cred *cred);
/* Run the jobs queued for F's inode in this thread, or wait for the one
 * in progress, until UNTIL_NS (CLOCK_REALTIME); false if still pending. */
bool relabel_settle(const struct uevm_file *f, int64_t until_ns);
unsigned int relabel_pending(void);
/* Rehash a file changed by writers that still hold it open. */
void writes_catch_up(struct uevm_file *f, const struct integrity_cred *cred);
/* Is the file behind FD open for writing anywhere? 1, 0, or -1 unknown. */
int writers_open(int fd);

/* ---- watchdog (watchdog.c), systemd (sd_notify.c) ------------------------ */

int watchdog_start(void);
void watchdog_stop(void);
int sd_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t sd_watchdog_usec(void);
/* FDSTORE=1: the service manager keeps FD (named NAME) across restarts. */
int sd_notify_store_fd(const char *name, int fd);
/* Whether a keeper of the groups runs us (uevmd --supervise). */
bool sd_fdstore_available(void);
/* Set in the child the keeper forks (supervise.c): our end of its pair. */
extern int uevmd_keeper_fd;
/* The descriptor NAME given back at this start ($LISTEN_FDNAMES), or -1. */
int sd_listen_fd(const char *name);

/* ---- supervise.c: `uevmd --supervise`, a keeper of the fanotify groups -- */

/* Returns in the child, which goes on as the daemon (0), or never. */
int supervise(void);

/* ---- `uevmd --check` (check.c) ---------------------------------------- */

struct check_opts {
	bool json;
	size_t list;		/* paths listed at most */
	const char *under;	/* only this directory, or NULL: every mark */
};

/* The audit sink while checking: keeps the cause of a refusal. */
void check_audit_sink(const struct integrity_audit_record *r, void *arg);
/* Walk what the marks cover, deciding as if enforcing; report.  Returns
 * the exit status: 0 nothing refused, 1 something, 2 an error. */
int check_run(const struct check_opts *o);

/* ---- reloading the configuration (reload.c) ------------------------------ */

/* SIGHUP: read the configuration and the policy again; swap them in
 * whole, or keep the running ones (logged). */
int uevmd_reload(void);
/* What main() read the configuration with (reload repeats it). */
extern const char **uevmd_overrides;
extern int uevmd_noverrides;
extern bool uevmd_foreground;
/* Load the policy named by CFG (appraised with CTX where it must be). */
int uevmd_policy_load(const struct uevmd_config *cfg, const struct uevm_ctx *ctx,
		      struct ima_policy **out, uint8_t sha256[32]);
/* Read and parse the configuration at PATH, with the overrides. */
int uevmd_config_read(const char *path, struct uevmd_input *in, FILE *errfp,
		      struct uevmd_config *c);

/* ---- control (control.c, tree.c) ----------------------------------------- */

int control_start(void);
void control_stop(void);
/* Replace the policy: parse whole or not at all. */
int uevmd_policy_replace(const char *text, size_t len, const char *source,
			 char *err, size_t errlen);
/* Make NP (from SRC, both now owned) the policy; retire the old one. */
void uevmd_policy_install(struct ima_policy *np, char *src);
/* Measure the certificates for a "measure func=KEY_CHECK" rule (main.c). */
void uevmd_measure_keys(void);
/* Measure what uevmd enforces with: its configuration and policy (their
 * SHA-256), its mode and its key's fingerprint (main.c). */
void uevmd_measure_state(void);
/* Keep a replaced policy until exit (other threads may still read it). */
void uevmd_policy_retire(struct ima_policy *p);
/* Make sure no worker still uses what was current before (policy swap). */
void uevmd_quiesce(void);
void uevmd_worker_enter(void);
void uevmd_worker_leave(void);
int uevmd_status_write(FILE *fp);
int tree_start(void);
/* Notice a policy installed through the tree's ima/policy. */
void tree_check_policy(void);
/* Measure uevmd-state after changes made through the tree (the control
 * thread, woken through tree_wake_fd; teardown, once the tree is gone). */
void tree_measure_changes(void);
int tree_wake_fd(void);
/* The same, with state_lock held: every other change calls it first. */
void tree_record_locked(void);
const char *tree_mountpoint(void);
void tree_unmount(void);
void tree_free(void);

#endif
