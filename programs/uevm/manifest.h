/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Manifests of labelled trees: what every object looked like when it was
 * labelled, so that `uevm verify --manifest` and `uevm diff` can say what
 * changed and what disappeared (EVM can only say *that* metadata changed,
 * and never sees a deletion).  The format (version 1, text, one line each):
 *
 *   uevm-manifest 1
 *   o PATH TYPE INO GEN UID GID MODE [rdev=N] [sha256=HEX] [target=ESC] [x=NAME:HEX]...
 *   ...
 *   hmac-sha256 HEX          (or: signature HEX)
 *
 * PATH is relative to the labelled root ("." for the root), TYPE one of
 * f d l c b p s, MODE four octal digits, x= the SHA-256 of each protected
 * xattr value, of security.evm and of the POSIX ACL xattrs, sorted by
 * name.  Names and targets are escaped as %XX for every byte outside
 * 0x21..0x7e and for '%' and ':'; only the canonical form is accepted.
 * Lines are sorted by PATH (bytewise), each PATH once.  The last line
 * authenticates every byte before it: HMAC-SHA256 under a key derived
 * from the EVM key (uevm_ctx_manifest_mac), or a signature value (as
 * security.ima's type 3, v2) over SHA-256("uevm manifest signature
 * v1\n" || SHA-256 of those bytes): never a file signature of them.
 */
#ifndef UEVM_MANIFEST_H
#define UEVM_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "uevm_internal.h"

#define MF_DIGEST 32

struct mf_xattr {
	char *name;
	uint8_t d[MF_DIGEST];
};

struct mf_entry {
	char *path;		/* relative, unescaped */
	char type;		/* f d l c b p s */
	uint64_t ino;
	uint32_t gen, uid, gid, mode;	/* mode: the 07777 bits */
	uint64_t rdev;		/* devices only */
	bool has_sha;
	uint8_t sha[MF_DIGEST];	/* regular files: SHA-256 of the content */
	char *target;		/* symlinks */
	struct mf_xattr *x;	/* sorted by name */
	size_t nx;
	bool alias;		/* a further name of an inode, filled in later */
	bool seen;		/* verify: reached by the walk (atomic access) */
};

struct manifest {
	struct mf_entry **e;	/* sorted by path once complete */
	size_t n, cap;
	bool complete;
	/* Look-up indexes of a parsed manifest: by inode, and the entries
	 * with a security.evm by its digest (NULL: scan). */
	struct mf_entry **by_ino, **by_evm;
	size_t nevm;
};

/* One difference, in words: CODE is a stable keyword ("owner", "mode",
 * "content", "deleted", ...), DETAIL the sentence to show. */
struct mf_change {
	const char *code;
	char *detail;
};
struct mf_changes {
	struct mf_change *v;
	size_t n;
};
void mf_changes_free(struct mf_changes *c);

/* The reason for the calling thread's last failure. */
const char *manifest_last_error(void);

struct manifest *manifest_new(void);
void manifest_free(struct manifest *m);
void mf_entry_free(struct mf_entry *e);

/* PATH below ROOT as the manifest names it ("." for the root itself). */
const char *manifest_rel(const char *root, const char *path);

/* What F (named REL) looks like now: stat, protected xattrs, ACLs,
 * content digest, symlink target. */
int mf_entry_from_file(const struct uevm_ctx *ctx, const struct uevm_file *f,
		       const char *rel, struct mf_entry **out);
/* Add an entry (thread-safe; the manifest takes it). */
int manifest_add(struct manifest *m, struct mf_entry *e);
/* Another name of an inode whose labels another thread may still be
 * writing: completed from that inode's entry in manifest_finish. */
int manifest_add_alias(struct manifest *m, const char *rel,
		       const struct stat *st);
/* Sort, fill in aliases, refuse duplicates. */
int manifest_finish(struct manifest *m);

/* Write M to FILE atomically (temp file + rename, mode 0644),
 * authenticated by CTX's derived MAC, or by SIGNER when given. */
int manifest_write(const struct manifest *m, const char *file,
		   const struct uevm_ctx *ctx,
		   const struct uevm_signer *signer);

/* Parse a manifest without authenticating it: *BODY_LEN is the length of
 * the authenticated bytes; the trailer is an HMAC (*IS_SIG false, MAC of
 * 32 bytes) or a signature value (*IS_SIG true).  The buffer entry point
 * for fuzz/manifest.c. */
int manifest_parse(const uint8_t *buf, size_t len, struct manifest **out,
		   size_t *body_len, bool *is_sig, uint8_t **auth,
		   size_t *auth_len);
/* Only the trailer: the same outputs as manifest_parse, no entries. */
int manifest_split(const uint8_t *buf, size_t len, size_t *body_len,
		   bool *is_sig, uint8_t **auth, size_t *auth_len);
/* Serialise the entries (no trailer): the bytes the trailer covers. */
int manifest_serialise(const struct manifest *m, char **out, size_t *len);

/* Read FILE, check its MAC with CTX's key (HMAC manifests) or its
 * signature against CERTS (signed ones), then parse it.  A missing key or
 * certificate for the kind of manifest found is an error. */
int manifest_load(const char *file, const struct uevm_ctx *ctx,
		  const struct uevm_certset *certs, struct manifest **out);

struct mf_entry *manifest_find(const struct manifest *m, const char *path);

/* The differences between OLD (NULL: not in the manifest) and CUR for an
 * object, with REF the manifest for "hard link of" and "security.evm
 * copied from" look-ups.  Marks OLD seen (thread-safe). */
int manifest_compare(const struct manifest *ref, struct mf_entry *old,
		     const struct mf_entry *cur, struct mf_changes *out);
/* The deletion of OLD. */
int manifest_deleted(const struct mf_entry *old, struct mf_changes *out);

/*
 * The hooks of uevm label and uevm verify, callable from the walk's
 * threads.  manifest_add_file: record F (ALIAS: a further name of an inode
 * another thread labels).  manifest_check_file: F (NULL when it could not
 * be opened) against its entry, which is marked as reached; C gets the
 * differences.  After the walk, entries not seen were deleted.
 */
int manifest_add_file(struct manifest *m, const struct uevm_ctx *ctx,
		      const struct uevm_file *f, const char *rel, bool alias);
int manifest_check_file(struct manifest *m, const struct uevm_ctx *ctx,
			const struct uevm_file *f, const char *rel,
			struct mf_changes *c);
bool manifest_entry_seen(const struct mf_entry *e);

/* Printing (programs/manifest_report.c): "CHANGED PATH: DETAIL",
 * "NEW PATH: DETAIL", "DELETED PATH", one a line; in JSON the member
 * , "changes": [{"code": ..., "detail": ...}, ...] (nothing when none). */
#include <stdio.h>
void mf_print_changes(const char *path, const struct mf_changes *ch);
void mf_json_changes(FILE *fp, const struct mf_changes *ch);

/* For uevm verify's report: CH as OBJ's changes, in an array the caller
 * frees once OBJ is reported (NULL: out of memory); and the lines
 * "CHANGED PATH: DETAIL", "NEW PATH: DETAIL", "DELETED PATH" of a
 * reported object. */
struct report_obj;
struct report_change;
struct report_change *report_changes(const struct mf_changes *ch,
				     struct report_obj *obj);
void report_print_changes(FILE *fp, const struct report_obj *obj);

#endif
