// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The IMA hooks (the kernel's ima_main.c and ima_appraise.c hook side):
 * on open and exec, ask the policy what to do, then measure, appraise and
 * audit the content, hashing it once; on the last writer's close, rehash
 * files that were good (or new) so that a legitimate edit stays valid.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include "integrity_private.h"
#include "ima_policy.h"
#include "ima_policy_private.h"

#define CAP_SYS_ADMIN_BIT 21

/* The type on the line of mount ID MNT (0: of device DEV) in mountinfo
 * PATH, without the ".subtype" it appends (fuse.sshfs is "fuse"). */
static bool mountinfo_type(const char *path, uint64_t mnt, dev_t dev, char *out, size_t len)
{
	FILE *fp = fopen(path, "re");
	char line[4096];
	bool found = false;

	while (fp && !found && fgets(line, sizeof(line), fp)) {
		unsigned long long id;
		unsigned int maj, min;
		char *sep, fstype[32];

		if (sscanf(line, "%llu %*d %u:%u", &id, &maj, &min) != 3 ||
		    (mnt ? id != mnt : makedev(maj, min) != dev))
			continue;
		sep = strstr(line, " - ");
		if (sep && sscanf(sep + 3, "%31s", fstype) == 1) {
			fstype[strcspn(fstype, ".")] = '\0';
			snprintf(out, len, "%s", fstype);
			found = true;
		}
	}
	if (fp)
		fclose(fp);
	return found;
}

/* Mounts no mountinfo lists, named by the front-end that made them
 * (integrity_mount_fsname).  Kept until exit: a mount ID is not reused
 * while its mount lives, and these live as long as their maker.  As many
 * as there are (a review dropped the names past a fixed 256, and rules on
 * overlayfs below them stopped matching); the last name given wins. */
struct named_mount { uint64_t mnt; char name[32]; };
static struct named_mount *named;
static size_t nnamed;
static pthread_mutex_t named_lock = PTHREAD_MUTEX_INITIALIZER;

int integrity_mount_fsname(uint64_t mnt_id, const char *fstype)
{
	struct named_mount *n;
	size_t i;
	int ret = 0;

	pthread_mutex_lock(&named_lock);
	for (i = 0; i < nnamed && named[i].mnt != mnt_id; i++)
		;
	if (i == nnamed) {
		n = realloc(named, (nnamed + 1) * sizeof(*n));
		if (n) {
			named = n;
			named[nnamed++].mnt = mnt_id;
		} else {
			ret = -ENOMEM;
		}
	}
	if (!ret)
		snprintf(named[i].name, sizeof(named[i].name), "%.*s",
			 (int)strcspn(fstype, "."), fstype);
	pthread_mutex_unlock(&named_lock);
	return ret;
}

static bool named_mount(uint64_t mnt, char *out, size_t len)
{
	bool found = false;

	pthread_mutex_lock(&named_lock);
	for (size_t i = 0; i < nnamed && !found; i++)
		if (named[i].mnt == mnt) {
			snprintf(out, len, "%s", named[i].name);
			found = true;
		}
	pthread_mutex_unlock(&named_lock);
	return found;
}

/* The filesystem type name of F's mount, as the kernel's sb->s_type->name:
 * found by F's mount ID (statx), not by its st_dev (a btrfs subvolume's
 * files carry a device number of their own): among the mounts a front-end
 * named (integrity_mount_fsname), in the mountinfo of the opener PID (its mount namespace may not be ours), then in this
 * thread's (a walk's may be a copy of the process's: uevm's walk_tree); by
 * st_dev only when neither has the ID.  Cached by mount ID and device
 * together (mount IDs are system-wide; one reused later by another mount
 * has another device, mostly). */
static void fsname_of(const struct uevm_file *f, pid_t pid, char *out, size_t len)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct { uint64_t mnt; dev_t dev; char name[32]; } cache[32];
	static unsigned int used, next;
	dev_t dev = f->st.st_dev;
	uint64_t mnt = 0;
	struct statx stx;
	char path[64];

	out[0] = '\0';
	if (statx(f->fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID))
		mnt = stx.stx_mnt_id;
	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; i < used; i++)
		if (cache[i].mnt == mnt && cache[i].dev == dev) {
			snprintf(out, len, "%s", cache[i].name);
			pthread_mutex_unlock(&lock);
			return;
		}
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	if (!(mnt && named_mount(mnt, out, len)) &&
	    !(mnt && pid > 0 && mountinfo_type(path, mnt, dev, out, len)) &&
	    !(mnt && mountinfo_type("/proc/thread-self/mountinfo", mnt, dev, out, len)))
		mountinfo_type("/proc/thread-self/mountinfo", 0, dev, out, len);
	if (out[0]) {
		unsigned int k = used < 32 ? used++ : next++ % 32;

		cache[k].mnt = mnt;
		cache[k].dev = dev;
		snprintf(cache[k].name, sizeof(cache[k].name), "%s", out);
	}
	pthread_mutex_unlock(&lock);
}

/* Fill the policy's view of this access.  The filesystem's magic, name
 * and UUID are looked up only when a rule of POLICY can test them: no
 * rule reads what is left zero. */
static void match_input(const struct ima_policy *policy,
			const struct integrity_event *ev,
			struct ima_match_input *in, char *fsname, size_t fsname_len)
{
	unsigned int conds = ima_policy_conditions(policy);
	const struct uevm_file *f = ev->file;
	struct statfs sfs;

	memset(in, 0, sizeof(*in));
	in->func = ev->func ? (enum ima_hooks)ev->func : FILE_CHECK;
	in->mask = ev->mask;
	in->uid = ev->cred->uid;
	in->euid = ev->cred->euid;
	in->gid = ev->cred->gid;
	in->egid = ev->cred->egid;
	/* ima_match_rules: with CAP_SETUID (CAP_SETGID) an euid= (egid=)
	 * rule also matches the saved and the real id. */
	in->suid = ev->cred->suid;
	in->sgid = ev->cred->sgid;
	in->cap_setuid = integrity_capable(ev->cred, 7);	/* CAP_SETUID */
	in->cap_setgid = integrity_capable(ev->cred, 6);	/* CAP_SETGID */
	in->fowner = f->st.st_uid;
	in->fgroup = f->st.st_gid;
	fsname[0] = '\0';
	if ((conds & IMA_FSMAGIC) && fstatfs(f->fd, &sfs) == 0)
		in->fsmagic = (uint64_t)sfs.f_type;
	if (conds & IMA_FSNAME)
		fsname_of(f, ev->cred->pid, fsname, fsname_len);
	in->fsname = fsname[0] ? fsname : NULL;
	if ((conds & IMA_FSUUID) && uevm_file_fsuuid(f, in->fsuuid) == 0) {
		static const uint8_t zero[16];

		in->has_fsuuid = memcmp(in->fsuuid, zero, 16) != 0;
	}
}

/* security.ima rewritten from the collected digest (the kernel's
 * ima_fix_xattr), then the HMAC over it. */
static int ima_fix_xattr(struct integrity_sys *s,
			 const struct integrity_event *ev,
			 struct integrity_iint_cache *iint,
			 const struct ima_digest *dig)
{
	uint8_t val[2 + UEVM_MAX_DIGEST_SIZE];
	int len = uevm_ima_xattr_format(dig->algo, dig->d, val);
	struct integrity_event post = *ev;
	int ret;

	if (len < 0)
		return len;
	ret = uevm_setxattr(ev->file, XATTR_NAME_IMA, val, (size_t)len);
	if (ret)
		return uevm_err(-ret, "cannot write security.ima: %s", strerror(-ret));
	post.xattr_name = XATTR_NAME_IMA;
	post.xattr_value = val;
	post.xattr_len = (size_t)len;
	/* The caller holds the iint: update the HMAC under that lock. */
	evm_update_locked(s, &post, iint);
	return 0;
}

static bool is_pass(enum integrity_status st)
{
	return st == INTEGRITY_PASS || st == INTEGRITY_PASS_IMMUTABLE;
}

/* ima_appraise_measurement: the status of the content for this hook. */
static enum integrity_status appraise(struct integrity_sys *s,
				      const struct integrity_event *ev,
				      struct integrity_iint_cache *iint,
				      const uint8_t *xval, ssize_t xlen,
				      unsigned int rule_flags,
				      struct ima_digest *dig,
				      const struct stat *hashed,
				      const char *op, const char **cause)
{
	struct uevm_verdict v = { 0 };
	int rc = 0;

	if (xlen <= 0) {
		bool digsig = rule_flags & IMA_DIGSIG_REQUIRED;

		v.status = INTEGRITY_NOLABEL;
		v.cause = digsig ? "IMA-signature-required" : "missing-hash";
		if (ev->created)
			integrity_iint_set_flags(iint, IMA_NEW_FILE, 0);
		if ((integrity_iint_flags(iint) & IMA_NEW_FILE) &&
		    (!digsig || ev->file->st.st_size == 0))
			v.status = INTEGRITY_PASS;
	} else {
		/* evm_verifyxattr for security.ima: UNKNOWN without a key. */
		v.evm_status = INTEGRITY_UNKNOWN;
		if (atomic_load(&s->evm_bits) & (EVM_INIT_HMAC | EVM_INIT_X509)) {
			v.evm_status = integrity_iint_evm_status(iint);
			if (!is_pass(v.evm_status)) {
				/* As evm_verifyxattr(dentry, XATTR_NAME_IMA,
				 * value): over the value being appraised.  The
				 * metadata: the stat that closed the hashing
				 * (HASHED), when this check hashed; its ctime
				 * is the entry's stamp, so a chmod or chown
				 * since is a new stamp, appraised again. */
				v.evm_status = evm_verify_with(s->ctx, ev->file,
							       hashed, XATTR_NAME_IMA,
							       xval, (size_t)xlen,
							       NULL, 0, NULL);
				integrity_iint_set_evm_status(iint, v.evm_status);
			}
		}
		rc = ima_appraise_value(s->ctx, ev->file, xval, (size_t)xlen,
					rule_flags, dig, &v);
		if (rc) {
			v.status = INTEGRITY_UNKNOWN;
			v.cause = rc == -ESTALE ? "changed-while-hashing" : "unknown";
		} else if (v.evm_status == INTEGRITY_UNKNOWN &&
			   v.ima_status == INTEGRITY_PASS) {
			/* ima_appraise_measurement takes an UNKNOWN EVM status
			 * (EVM not initialised yet) and passes on the content
			 * alone; `uevm verify` keeps reporting it as unknown. */
			v.status = INTEGRITY_PASS;
			v.cause = NULL;
		}
	}

	if (v.status != INTEGRITY_PASS) {
		/* Fix mode, but never replace a signature. */
		if (integrity_sys_mode(s) == INTEGRITY_MODE_FIX &&
		    (xlen <= 0 || xval[0] != EVM_IMA_XATTR_DIGSIG) && rc == 0) {
			if (dig->algo < 0)
				rc = ima_collect_stable(ev->file, s->ctx->cfg.hash_algo, dig->d),
				dig->algo = rc ? -1 : s->ctx->cfg.hash_algo;
			if (dig->algo >= 0 && ima_fix_xattr(s, ev, iint, dig) == 0) {
				integrity_audit_msg(s, AUDIT_INTEGRITY_DATA, ev->file,
						    ev->filename, ev->cred, op,
						    v.cause, 0, true);
				*cause = v.cause;
				return INTEGRITY_PASS;
			}
		}
		integrity_audit_msg(s, AUDIT_INTEGRITY_DATA, ev->file, ev->filename,
				    ev->cred, op, v.cause ? v.cause : "unknown",
				    -EACCES, false);
	}
	*cause = v.cause;
	return v.status;
}

/* The digest algorithm for this content: security.ima's, or the default. */
static int collect_algo(const struct uevm_ctx *ctx, const uint8_t *xval,
			ssize_t xlen)
{
	struct uevm_xattr_value iv;

	if (xlen > 0 && ima_xattr_parse(xval, (size_t)xlen, &iv) == 0 &&
	    iv.algo >= 0 && uevm_hash_algo_available(iv.algo))
		return iv.algo;
	return ctx->cfg.hash_algo;
}

/* ima_get_hash_algo: the algorithm the label names (its digest's or its
 * signature's); the default without a label.  Unlike collect_algo, one
 * this OpenSSL lacks is still named, so appraise_algos= judges the label. */
static int label_algo(const struct uevm_ctx *ctx, const uint8_t *xval, ssize_t xlen)
{
	struct uevm_xattr_value iv;

	if (xlen > 0 && ima_xattr_parse(xval, (size_t)xlen, &iv) == 0 && iv.algo >= 0)
		return iv.algo;
	return ctx->cfg.hash_algo;
}

/* Is F's security.ima a signature now?  (An unreadable label counts as
 * one: never overwritten on a guess.) */
static bool label_is_signature(const struct uevm_file *f)
{
	uint8_t *v = NULL;
	size_t size = 0;
	ssize_t n = uevm_getxattr_alloc(f, XATTR_NAME_IMA, &v, &size);
	bool sig = n < 0 ? n != -ENODATA
			 : n > 0 && (v[0] == EVM_IMA_XATTR_DIGSIG || v[0] == IMA_VERITY_DIGSIG);

	free(v);
	return sig;
}

/* A write open while a reader that was measured has the file open: its
 * measurement no longer tells what it reads.  Reported once per reader
 * measurement, whatever this open's own policy action. */
static void ima_tomtou_check(struct integrity_sys *s, const struct integrity_event *ev,
			     const char *template_name)
{
	struct integrity_iint_cache *iint = integrity_inode_get(s, ev->file);
	bool send;

	if (!iint)
		return;
	integrity_iint_lock(iint);
	send = integrity_iint_flags(iint) & IMA_MUST_MEASURE;
	integrity_iint_set_flags(iint, 0, IMA_MUST_MEASURE);
	integrity_iint_unlock(iint);
	integrity_iint_put(s->cache, iint);
	if (send)
		ima_store_violation(s, ev, template_name, "ToMToU");
}

UEVM_EXPORT int ima_file_check(struct integrity_sys *s,
			       const struct integrity_event *ev)
{
	/* Read before the rules: if new rules come while this runs, the
	 * verdict reached under the old ones is not cached (it answers
	 * this access only, which began under them). */
	uint32_t epoch = integrity_cache_epoch(s->cache);
	const struct ima_policy *policy = integrity_sys_policy(s);
	const struct uevm_file *f = ev->file;
	struct ima_policy_result res;
	struct ima_match_input in;
	struct integrity_iint_cache *iint;
	struct ima_digest dig = { .algo = -1 };
	enum integrity_status st = INTEGRITY_UNKNOWN;
	const char *cause = NULL;
	uint8_t *xval = NULL;
	size_t xsize = 0;
	ssize_t xlen = -ENODATA;
	char fsname[32];
	int pcr, ret = 0;
	bool measure, do_appraise, do_audit, fresh, have_hashed = false, read_x = false;
	bool pass, writer, hash_only, set_new = false, set_update = false;
	bool no_verity = false;
	struct stat now, hashed;

	if (!policy || !f->io || !S_ISREG(f->st.st_mode))
		return 0;
	match_input(policy, ev, &in, fsname, sizeof(fsname));
	ima_match_policy(policy, &in, IMA_MEASURE | IMA_APPRAISE | IMA_AUDIT | IMA_HASH,
			 &res);
	writer = ev->mask & (MAY_WRITE | MAY_APPEND);
	if (in.func == FILE_CHECK && writer && ev->readers)
		ima_tomtou_check(s, ev, res.template_name);
	/* A hash rule (the kernel's IMA_HASH) has a writer's last close
	 * rehash what no appraise rule covers -- here only content that
	 * still passes appraisal (its label and security.evm), so that what
	 * was changed behind a front-end or offline is never labelled; a
	 * failure refuses the rehash, not the open. */
	hash_only = writer && (res.action & IMA_HASH) && !(res.action & IMA_APPRAISE);
	/* A writer also goes on when its close is to rehash: under a hash
	 * rule, or as the open that created the file. */
	if (!(res.action & (IMA_MEASURE | IMA_APPRAISE | IMA_AUDIT)) &&
	    !hash_only && !(writer && ev->created))
		return 0;
	/* The PCR the list resolves -1 to: the measured-PCR bit must name it. */
	pcr = res.pcr >= 0 ? res.pcr : ima_store_default_pcr(s);

	/* The fresh stat behind the entry's stamp is also the "before" of
	 * the hashing: a change from it on is ESTALE, and the results are
	 * kept under that very stamp (one fstat fewer than a second one). */
	iint = integrity_inode_get_stat(s, f, &now, &fresh);
	if (!iint)
		return integrity_sys_mode(s) == INTEGRITY_MODE_ENFORCE &&
		       (res.action & IMA_APPRAISE) ? -EACCES : 0;
	if (fresh)
		dig.before = &now;
	integrity_iint_lock(iint);
	/* ima_rdwr_violation_check: a file measured for a reader while it is
	 * open for writing may change under the measurement (open_writers);
	 * one opened for writing while a measured reader has it open changes
	 * under a measurement already taken (ToMToU).  As the kernel's
	 * IMA_EMITTED_OPENWRITERS has it (2025), open_writers is reported
	 * once until the writers are gone: a user who keeps a file open for
	 * writing and reads it in a loop would otherwise grow the list, the
	 * log and the PCR extends without bound. */
	if ((res.action & IMA_MEASURE) && in.func == FILE_CHECK && !writer) {
		integrity_iint_set_flags(iint, IMA_MUST_MEASURE, 0);
		if (integrity_iint_writers(iint) > 0 &&
		    !(integrity_iint_flags(iint) & IMA_EMITTED_OPENWRITERS)) {
			integrity_iint_set_flags(iint, IMA_EMITTED_OPENWRITERS, 0);
			ima_store_violation(s, ev, res.template_name, "open_writers");
		}
	}
	measure = (res.action & IMA_MEASURE) &&
		  !(integrity_iint_measured_pcrs(iint) & (1ULL << pcr));
	st = integrity_iint_ima_status(iint, in.func);
	/* Appraise once per content; fix mode retries what did not pass. */
	do_appraise = ((res.action & IMA_APPRAISE) || hash_only) &&
		      (st == INTEGRITY_UNKNOWN ||
		       (!is_pass(st) && integrity_sys_mode(s) == INTEGRITY_MODE_FIX));
	do_audit = (res.action & IMA_AUDIT) &&
		   !(integrity_iint_flags(iint) & IMA_AUDITED);
	/* digest_type=verity: uevm reads no fs-verity digest, so every file
	 * is what the kernel makes of one without fs-verity: not measured,
	 * refused under an appraise rule ("no-verity-digest"), never passed
	 * on an ordinary signature or hash. */
	if (res.flags & IMA_VERITY_REQUIRED) {
		if (measure || (res.action & IMA_APPRAISE))
			integrity_audit_msg(s, AUDIT_INTEGRITY_DATA, f, ev->filename,
					    ev->cred, "collect_data", "no-verity-digest",
					    -ENODATA, false);
		measure = false;
		do_appraise = false;
		no_verity = res.action & IMA_APPRAISE;
	}
	if (!measure && !do_appraise && !do_audit)
		goto decide;	/* all done before, for this content */

	xlen = uevm_getxattr_alloc(f, XATTR_NAME_IMA, &xval, &xsize);
	read_x = true;
	if (integrity_iint_digest(iint, dig.d, &dig.algo) < 0 ||
	    dig.algo != collect_algo(s->ctx, xval, xlen)) {
		dig.algo = collect_algo(s->ctx, xval, xlen);
		ret = ima_collect_stable_from(f, dig.algo, dig.d, dig.before, &hashed);
		have_hashed = ret == 0;
		if (ret) {
			integrity_audit_msg(s, AUDIT_INTEGRITY_DATA, f, ev->filename,
					    ev->cred, "collect_data",
					    ret == -ESTALE ? "changed-while-hashing" :
					    ret == -ECANCELED ? "timeout" : "failed",
					    ret, false);
			dig.algo = -1;
		} else {
			integrity_iint_set_digest(iint, dig.algo, dig.d);
		}
	}
	if (measure && dig.algo >= 0 &&
	    ima_store_measurement(s, ev, &dig, xval, xlen > 0 ? (size_t)xlen : 0,
				  res.template_name, pcr) == 0)
		integrity_iint_set_measured_pcr(iint, pcr);
	if (do_appraise) {
		st = ret ? INTEGRITY_UNKNOWN
			 : appraise(s, ev, iint, xval, xlen, res.flags, &dig,
				    have_hashed ? &hashed : NULL,
				    hash_only ? "update_xattr" : "appraise_data", &cause);
		if (integrity_cache_epoch(s->cache) == epoch)
			integrity_iint_set_ima_status(iint, in.func, st);
		if (xlen > 0 && xval[0] == EVM_IMA_XATTR_DIGSIG)
			integrity_iint_set_flags(iint, IMA_DIGSIG, 0);
	} else {
		st = integrity_iint_ima_status(iint, in.func);
	}
	if (do_audit && dig.algo >= 0) {
		char hex[2 * UEVM_MAX_DIGEST_SIZE + 1], what[160];

		for (unsigned int i = 0; i < uevm_hash_algo_digest_size(dig.algo); i++)
			snprintf(hex + 2 * i, 3, "%02x", dig.d[i]);
		snprintf(what, sizeof(what), "%s:%s", uevm_hash_algo_name(dig.algo), hex);
		integrity_audit_msg(s, AUDIT_INTEGRITY_RULE, f, ev->filename, ev->cred,
				    "ima_audit", what, 0, false);
		integrity_iint_set_flags(iint, IMA_AUDITED, 0);
	}
decide:
	pass = is_pass(st) && !no_verity;
	/* appraise_algos=: content that passed must also carry a label made
	 * with an allowed algorithm, at every access (cached or not), as the
	 * kernel checks after appraisal ("denied-hash-algorithm"). */
	if ((res.action & IMA_APPRAISE) && res.allowed_algos && pass) {
		int algo;

		if (!read_x)
			xlen = uevm_getxattr_alloc(f, XATTR_NAME_IMA, &xval, &xsize);
		algo = label_algo(s->ctx, xval, xlen);
		if (algo < 0 || algo >= 32 || !(res.allowed_algos & (1U << algo))) {
			pass = false;
			integrity_audit_msg(s, AUDIT_INTEGRITY_DATA, f, ev->filename,
					    ev->cred, "collect_data",
					    "denied-hash-algorithm", -EACCES, false);
		}
	}
	/* process_measurement's out_locked: a signed file is not opened for
	 * writing under an appraise rule (unless it is new): no content
	 * written could carry its signature, and it is never relabelled
	 * with a hash instead. */
	if ((ev->mask & MAY_WRITE) && (res.action & IMA_APPRAISE) &&
	    (integrity_iint_flags(iint) & (IMA_DIGSIG | IMA_NEW_FILE)) == IMA_DIGSIG) {
		if (pass)
			integrity_audit_msg(s, AUDIT_INTEGRITY_DATA, f, ev->filename,
					    ev->cred, "appraise_data",
					    "write-to-signed-file", -EACCES, false);
		pass = false;
	}
	/* The open that created the file, writing again after a front-end
	 * relabelled it early (uevmfs at a FLUSH of a dup'ed descriptor):
	 * the file is new until that open's last close, as the kernel keeps
	 * IMA_NEW_FILE from the create to the last writer's close. */
	if (writer && ev->created && !(integrity_iint_flags(iint) & IMA_NEW_FILE)) {
		integrity_iint_set_flags(iint, IMA_NEW_FILE, 0);
		set_new = true;
	}
	/* Opened for writing a good (or new) file: rehash at the last close
	 * (a good one: under an appraise or a hash rule). */
	if (writer && (pass || (integrity_iint_flags(iint) & IMA_NEW_FILE)) &&
	    !(integrity_iint_flags(iint) & IMA_UPDATE_XATTR)) {
		integrity_iint_set_flags(iint, IMA_UPDATE_XATTR, 0);
		set_update = true;
	}
	/* A refused open leaves no standing behind for a later writer. */
	if ((res.action & IMA_APPRAISE) && !pass &&
	    integrity_sys_mode(s) == INTEGRITY_MODE_ENFORCE && set_new)
		integrity_iint_set_flags(iint, 0, IMA_NEW_FILE |
					 (set_update ? IMA_UPDATE_XATTR : 0));
	if (writer && (pass || !(res.action & IMA_APPRAISE) ||
		       integrity_sys_mode(s) != INTEGRITY_MODE_ENFORCE))
		integrity_iint_add_writer(iint, 1);
	integrity_iint_unlock(iint);
	integrity_iint_put(s->cache, iint);
	free(xval);
	(void)cause;
	if ((res.action & IMA_APPRAISE) && !pass &&
	    integrity_sys_mode(s) == INTEGRITY_MODE_ENFORCE)
		return -EACCES;
	return 0;
}

UEVM_EXPORT void ima_file_free(struct integrity_sys *s,
			       const struct integrity_event *ev)
{
	const struct uevm_file *f = ev->file;
	struct integrity_iint_cache *iint;
	struct ima_digest dig;
	uint32_t flags;
	int ret;

	if (!(ev->mask & (MAY_WRITE | MAY_APPEND)) && !ev->written)
		return;	/* a reader's close */
	if (!f->io || !S_ISREG(f->st.st_mode))
		return;
	iint = integrity_inode_get(s, f);
	if (!iint)
		return;
	integrity_iint_lock(iint);
	if (ev->changed_elsewhere)
		integrity_iint_set_flags(iint, 0, IMA_UPDATE_XATTR | IMA_NEW_FILE);
	if (ev->mask & (MAY_WRITE | MAY_APPEND))
		integrity_iint_add_writer(iint, -1);
	if (integrity_iint_writers(iint) > 0) {
		/* Not the last writer: the last one rehashes. */
		integrity_iint_unlock(iint);
		integrity_iint_put(s->cache, iint);
		return;
	}
	flags = integrity_iint_flags(iint);
	integrity_iint_set_flags(iint, 0, IMA_UPDATE_XATTR | IMA_NEW_FILE);
	/* Only a file that was good, or new, gets a new hash: a failing file
	 * stays failing, and a signature is never replaced by a hash (the
	 * label on disk decides: the cached flag went with the content). */
	if ((flags & (IMA_UPDATE_XATTR | IMA_NEW_FILE)) && !(flags & IMA_DIGSIG) &&
	    !label_is_signature(f)) {
		dig.algo = s->ctx->cfg.hash_algo;
		if (ev->written_digest && ev->written_algo == dig.algo &&
		    !ev->changed_elsewhere) {
			memcpy(dig.d, ev->written_digest, uevm_hash_algo_digest_size(dig.algo));
			ret = 0;
		} else {
			ret = ima_collect_stable(f, dig.algo, dig.d);
		}
		if (ret == 0) {
			integrity_iint_set_digest(iint, dig.algo, dig.d);
			if (ima_fix_xattr(s, ev, iint, &dig) < 0)
				integrity_audit_msg(s, AUDIT_INTEGRITY_DATA, f,
						    ev->filename, ev->cred,
						    "update_xattr", uevm_last_error(),
						    -EIO, false);
		}
	}
	integrity_iint_reset(iint);
	integrity_iint_refresh(iint, f);
	integrity_iint_unlock(iint);
	integrity_iint_put(s->cache, iint);
}

/* The kernel's ima_protect_xattr + validate_hash_algo. */
UEVM_EXPORT int ima_inode_setxattr(struct integrity_sys *s,
				   const struct integrity_event *ev)
{
	const uint8_t *v = ev->xattr_value;
	const struct ima_policy *p = integrity_sys_policy(s);
	struct uevm_xattr_value iv;
	unsigned int allowed;
	int algo;

	if (!ev->xattr_name || strcmp(ev->xattr_name, XATTR_NAME_IMA))
		return 0;
	if (!integrity_capable(ev->cred, CAP_SYS_ADMIN_BIT))
		return integrity_sys_mode(s) == INTEGRITY_MODE_ENFORCE ? -EPERM : 0;
	if (!ev->xattr_len || v[0] > IMA_VERITY_DIGSIG || v[0] == 0)
		return -EINVAL;
	algo = ima_xattr_parse(v, ev->xattr_len, &iv) == 0 ? iv.algo
							       : s->ctx->cfg.hash_algo;
	allowed = p ? ima_policy_setxattr_algos(p) : 0;
	if ((allowed && !(allowed & (1U << algo))) ||
	    (!allowed && algo != s->ctx->cfg.hash_algo &&
	     !uevm_hash_algo_available(algo))) {
		integrity_audit_msg(s, AUDIT_INTEGRITY_DATA, ev->file, ev->filename,
				    ev->cred, "set_data",
				    allowed ? "denied-hash-algorithm"
					    : "unavailable-hash-algorithm",
				    -EACCES, false);
		return integrity_sys_mode(s) == INTEGRITY_MODE_ENFORCE ? -EACCES : 0;
	}
	return 0;
}

UEVM_EXPORT int ima_inode_removexattr(struct integrity_sys *s,
				      const struct integrity_event *ev)
{
	if (!ev->xattr_name || strcmp(ev->xattr_name, XATTR_NAME_IMA))
		return 0;
	if (!integrity_capable(ev->cred, CAP_SYS_ADMIN_BIT))
		return integrity_sys_mode(s) == INTEGRITY_MODE_ENFORCE ? -EPERM : 0;
	return 0;
}

/* A changed xattr or attribute: the next access appraises again.  The
 * cache's change stamp already sees it; this also drops what is cached
 * when the change kept ctime (it never should, but costs nothing). */
static void ima_reset_appraise_flags(struct integrity_sys *s,
				     const struct integrity_event *ev)
{
	struct integrity_iint_cache *iint;

	if (!S_ISREG(ev->file->st.st_mode))
		return;
	iint = integrity_inode_get(s, ev->file);
	if (!iint)
		return;
	integrity_iint_lock(iint);
	integrity_iint_reset(iint);
	integrity_iint_unlock(iint);
	integrity_iint_put(s->cache, iint);
}

UEVM_EXPORT void ima_inode_post_setattr(struct integrity_sys *s,
					const struct integrity_event *ev)
{
	ima_reset_appraise_flags(s, ev);
}

static void ima_inode_post_setxattr(struct integrity_sys *s,
				    const struct integrity_event *ev)
{
	if (ev->xattr_name && (!strcmp(ev->xattr_name, XATTR_NAME_IMA) ||
			       uevm_ctx_is_protected(s->ctx, ev->xattr_name) ||
			       !strcmp(ev->xattr_name, XATTR_NAME_EVM)))
		ima_reset_appraise_flags(s, ev);
}

static int ima_inode_post_init(struct integrity_sys *s,
			       const struct integrity_event *ev)
{
	struct integrity_iint_cache *iint = integrity_inode_get(s, ev->file);

	if (iint) {
		integrity_iint_lock(iint);
		integrity_iint_set_flags(iint, IMA_NEW_FILE, 0);
		integrity_iint_unlock(iint);
		integrity_iint_put(s->cache, iint);
	}
	return 0;
}

const struct integrity_provider_ops ima_provider_ops = {
	.name = "ima",
	.inode_setxattr = ima_inode_setxattr,
	.inode_post_setxattr = ima_inode_post_setxattr,
	.inode_removexattr = ima_inode_removexattr,
	.inode_post_removexattr = ima_inode_post_setxattr,
	.inode_post_setattr = ima_inode_post_setattr,
	.inode_post_init = ima_inode_post_init,
	.file_check = ima_file_check,
	.file_free = ima_file_free,
};
