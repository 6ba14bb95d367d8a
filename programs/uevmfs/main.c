// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevmfs SOURCE MOUNTPOINT [-o OPTIONS]: set up the integrity system (key,
 * policy, measurement list, audit), mount, serve the control tree, and run
 * the FUSE loop until unmounted or signalled.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/securebits.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include "keys.h"
#include "ima.h"
#include "uevmfs.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#include "securityfs_fuse.h"

struct ufs ufs = { .root = { .fd = -1 }, .drop_wake = -1 };

/* The default policy: measure what is executed and what root reads, and
 * appraise every file of the mount (uevmfs exists to enforce its tree). */
static const char default_policy[] =
	"measure func=BPRM_CHECK mask=MAY_EXEC\n"
	"measure func=FILE_CHECK mask=^MAY_READ euid=0\n"
	"appraise\n";
/* With fastopen one reader's check serves every reader: the same without
 * euid=0, so that what root reads is measured whoever read it first. */
static const char default_policy_fastopen[] =
	"measure func=BPRM_CHECK mask=MAY_EXEC\n"
	"measure func=FILE_CHECK mask=^MAY_READ\n"
	"appraise\n";

#define DEFAULT_SECURITYFS	"/run/uevm/security"
#define DEFAULT_ML_DIR		"/var/lib/uevm/uevmfs"
#define POLICY_FILE_MAX		(4u << 20)

struct opts {
	char *source, *mountpoint;
	char *key, *policy, *mode, *ml, *securityfs, *audit_log, *syslog_socket;
	char *tcti, *template_name, *hash, *uuid, *evm, *evm_xattrs, *kernel_ml;
	char *measure_path, *fastopen_mode;
	int pcr, rotate_stale;
	int nosyslog, noauditd, integrity_audit, m32;
	double timeout, write_idle, stop_timeout;
	int fastopen;
	unsigned int readahead_kb, max_threads;
	int help, version, foreground, debug, singlethread;
};

#define OPT(t, f) { t, offsetof(struct opts, f), 1 }
static const struct fuse_opt opt_spec[] = {
	OPT("key=%s", key), OPT("hmac_key=%s", key),
	OPT("--hmac-key %s", key), OPT("--hmac-key=%s", key),
	OPT("policy=%s", policy), OPT("mode=%s", mode), OPT("ml=%s", ml),
	OPT("securityfs=%s", securityfs), OPT("audit_log=%s", audit_log),
	OPT("syslog_socket=%s", syslog_socket), OPT("nosyslog", nosyslog),
	OPT("noauditd", noauditd), OPT("integrity_audit", integrity_audit),
	OPT("tcti=%s", tcti), OPT("kernel_ml=%s", kernel_ml), OPT("pcr=%d", pcr),
	OPT("template=%s", template_name),
	{ "rotate_stale", offsetof(struct opts, rotate_stale), 1 },
	{ "norotate_stale", offsetof(struct opts, rotate_stale), 0 },
	OPT("hash=%s", hash), OPT("uuid=%s", uuid), OPT("m32", m32),
	OPT("evm=%s", evm), OPT("evm_xattrs=%s", evm_xattrs),
	OPT("timeout=%lf", timeout), OPT("readahead=%u", readahead_kb),
	OPT("max_threads=%u", max_threads), OPT("fastopen", fastopen),
	{ "nofastopen", offsetof(struct opts, fastopen), 0 },
	OPT("fastopen=%s", fastopen_mode),
	OPT("write_idle=%lf", write_idle), OPT("stop_timeout=%lf", stop_timeout),
	OPT("measure_path=%s", measure_path),
	OPT("-h", help), OPT("--help", help), OPT("-V", version),
	OPT("--version", version), OPT("-f", foreground), OPT("-d", debug),
	OPT("debug", debug), OPT("-s", singlethread),
	FUSE_OPT_END
};

static void usage(FILE *fp)
{
	fprintf(fp,
"Usage: uevmfs SOURCE [MOUNTPOINT] [-o OPTION[,OPTION...]] [-f] [-d] [-s] [--hmac-key KEY]\n"
"\n"
"Shows SOURCE at MOUNTPOINT (default: over SOURCE itself, which then cannot\n"
"be reached around the mount); every open, exec, write, close, chmod, chown,\n"
"truncate, setxattr, removexattr and create passes through the EVM/IMA hooks.\n"
"\n"
"Options (-o):\n"
"  key=FORM:PATH       HMAC key, its form named: raw:, passphrase:, tpm:,\n"
"                      kernel-blob: or keyring: (also --hmac-key KEY)\n"
"  mode=MODE           enforce (default), log, fix or off\n"
"  policy=POLICY       a policy file (a path with '/'), a built-in name\n"
"                      (tcb, appraise_tcb, ...), 'default' or 'none'\n"
"  ml=PATH             measurement list file ('memory': not kept; 'none': no\n"
"                      measurements); default " DEFAULT_ML_DIR "/<mountpoint>.ml,\n"
"                      with tcti= the host list " IMA_ML_HOST_LIST "\n"
"  tcti=TCTI pcr=N template=NAME   the list's TPM, PCR and template; a TCTI's\n"
"                      own commas before host=, port=, bus_name=, bus_type=\n"
"                      need no escape (tcti=swtpm:host=H,port=P); others: \\,\n"
"  kernel_ml=PATH      the kernel's binary list, adopted as the prefix of a new\n"
"                      list with tcti= (default " IMA_ML_KERNEL_LIST ",\n"
"                      'none')\n"
"  norotate_stale      refuse a list of a previous boot (the TPM was reset)\n"
"                      instead of moving it to FILE.prev and starting anew\n"
"  measure_path=mount|source   the path names measured and audited: as the\n"
"                      application opened them (default) or SOURCE's\n"
"  securityfs=DIR      control tree (default " DEFAULT_SECURITYFS ", 'none')\n"
"  evm=BITS            written to evm at start (default 1 with a key, else 0)\n"
"  audit_log=FILE      also append audit records to FILE\n"
"  syslog_socket=PATH  syslog socket (default /dev/log); nosyslog, noauditd\n"
"  integrity_audit     informational audit records too\n"
"  hash=ALGO uuid=UUID|none m32 evm_xattrs=NAME[:NAME...]  as uevm label\n"
"  timeout=SECONDS     attribute and entry cache (default 1)\n"
"  readahead=KB        the mount's read-ahead (default 4 read requests: 4032\n"
"                      with fs.pipe-max-size 1 MiB)\n"
"  max_threads=N       FUSE worker threads (default 16)\n"
"  fastopen[=auto|on|off]  no round trip per open: the kernel opens files\n"
"                      itself, reads are appraised at the first read (a refused\n"
"                      file opens, its reads and exec fail with EACCES) and\n"
"                      written files relabelled once idle (see uevmfs(8));\n"
"                      default auto: on when no policy rule depends on the\n"
"                      caller, the file's owner or exec (appraise\n"
"                      func=BPRM_CHECK, mask=MAY_EXEC on FILE_CHECK; a measure\n"
"                      func=BPRM_CHECK rule is kept: programs are measured at\n"
"                      their first read); nofastopen = fastopen=off\n"
"  write_idle=SECONDS  with fastopen: relabel after this long without a\n"
"                      write (default 0.5), at fsync and at unmount\n"
"  stop_timeout=SECONDS  with fastopen: how long a stop waits for the page\n"
"                      drops and relabel under way before it cancels long\n"
"                      hashing and aborts the connection (default 30; a\n"
"                      second signal: at once)\n"
"  -f foreground, -d debug (implies -f), -s single-threaded\n"
"Other -o options go to FUSE (see mount.fuse3(8)).\n");
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct opts *o = data;

	(void)outargs;
	if (key != FUSE_OPT_KEY_NONOPT)
		return 1;	/* keep: for FUSE */
	if (!o->source)
		o->source = strdup(arg);
	else if (!o->mountpoint)
		o->mountpoint = strdup(arg);
	else {
		fprintf(stderr, "uevmfs: unexpected argument '%s'\n", arg);
		return -1;
	}
	return 0;
}

static void opts_free(struct opts *o)
{
	char **strs[] = {
		&o->source, &o->mountpoint, &o->key, &o->policy, &o->mode, &o->ml,
		&o->securityfs, &o->audit_log, &o->syslog_socket, &o->tcti,
		&o->template_name, &o->hash, &o->uuid, &o->evm, &o->evm_xattrs,
		&o->measure_path, &o->kernel_ml, &o->fastopen_mode,
	};

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		free(*strs[i]);
		*strs[i] = NULL;
	}
}

/* ---- starting as a daemon ------------------------------------------------------- */

static int ready_fd = -1;

/* The parent waits until the child says the mount is up (exit 0) or the
 * child exits (its status): errors reach the terminal either way. */
static void daemon_start(void)
{
	int p[2], status;
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		perror("uevmfs: cannot start in the background");
		exit(1);
	}
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &c, 1) == 1 && c == 0)
			_exit(0);
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
			_exit(WEXITSTATUS(status) ? WEXITSTATUS(status) : 1);
		_exit(1);
	}
	close(p[0]);
	ready_fd = p[1];
}

static void daemon_ready(void)
{
	int fd;

	if (ready_fd < 0)
		return;
	setsid();
	if (chdir("/") < 0) {
		/* nothing relies on the working directory */
	}
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	if (write(ready_fd, "", 1) < 0) {
		/* the parent is gone: nobody to tell */
	}
	close(ready_fd);
	ready_fd = -1;
}

/* ---- the integrity system -------------------------------------------------------- */

static int parse_uuid_opt(const char *s, struct uevm_config *cfg)
{
	int n = 0;

	if (!strcmp(s, "none")) {
		cfg->uuid_mode = UEVM_UUID_NONE;
		return 0;
	}
	for (const char *p = s; *p; p++) {
		unsigned int v;

		if (*p == '-')
			continue;
		if (n == 32 || sscanf(p, "%1x", &v) != 1)
			return -EINVAL;
		cfg->uuid[n / 2] = (uint8_t)(n % 2 ? cfg->uuid[n / 2] | v : v << 4);
		n++;
	}
	if (n != 32)
		return -EINVAL;
	cfg->uuid_mode = UEVM_UUID_FIXED;
	return 0;
}

static int read_file(const char *path, char **out, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0 || !buf) {
		int e = fd < 0 ? errno : ENOMEM;

		free(buf);
		if (fd >= 0)
			close(fd);
		return -e;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb = cap < POLICY_FILE_MAX ? realloc(buf, cap * 2) : NULL;

			if (!nb) {
				free(buf);
				close(fd);
				return -EFBIG;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*out = buf;
	*len = n;
	return 0;
}

/* What the mount enforces with, for its uevmfs-state entry (main). */
static uint8_t policy_sha256[32];
static bool policy_hashed;
static char key_id[65];

static int load_policy(const char *spec, struct ima_policy **out)
{
	unsigned int line = 0;
	size_t len = 0;
	char *text = NULL;
	int ret;

	*out = NULL;
	if (!spec || !strcmp(spec, "default")) {
		const char *def = ufs.fastopen ? default_policy_fastopen : default_policy;

		return ima_policy_parse(def, strlen(def), out) ?
			       (fprintf(stderr, "uevmfs: default policy: %s\n",
					uevm_last_error()), -1) : 0;
	}
	if (!strcmp(spec, "none"))
		return 0;
	if (!strchr(spec, '/')) {
		ret = ima_policy_builtin(spec, out);
		if (ret)
			fprintf(stderr, "uevmfs: policy '%s': %s\n", spec, uevm_last_error());
		return ret ? -1 : 0;
	}
	ret = read_file(spec, &text, &len);
	if (ret) {
		fprintf(stderr, "uevmfs: %s: %s\n", spec, strerror(-ret));
		return -1;
	}
	ret = ima_policy_parse_lines(text, len, out, &line);
	if (!ret)
		policy_hashed = !uevm_hash_buffer(UEVM_HASH_SHA256, text, len, policy_sha256);
	free(text);
	if (ret)
		fprintf(stderr, "uevmfs: %s: %s\n", spec, uevm_last_error());
	return ret ? -1 : 0;
}

/*
 * What this mount enforces with, as critical data (label "uevmfs", an
 * ima-buf entry "uevmfs-state" under "measure func=CRITICAL_DATA
 * [label=uevmfs]"), at mount and after each change through the control
 * tree (evm, ima/policy): every setting that changes what is appraised,
 * measured or audited, as applied (mode, EVM bits, fastopen, the key's
 * full id, the policy and the SHA-256 of a policy file as read or written,
 * hash, PCR, m32, where audit records go), then the paths (with SOURCE's
 * fsid) and the options that shape labels and entries.  The options come from fstab or a unit
 * on the disk an offline attacker can edit, as uevmd's configuration: one
 * who names a key of their own, a weaker policy or evm=0 there, and
 * relabels the files with that key, cannot be refused from the disk
 * alone; a verifier of the list sees it here (docs/threat-model.md).
 * Fixed-size fields come first; strings are encoded as audit records
 * encode names, whole.
 */
static const struct opts *state_opts;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static bool policy_from_tree;

static int measure_state_locked(void)
{
	const struct opts *o = state_opts;
	char hex[65] = "none", kid[65] = "none", *text = NULL;
	size_t len = 0;
	FILE *fp;
	int ret;

	if (policy_hashed)
		for (int i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", policy_sha256[i]);
	if (key_id[0])
		snprintf(kid, sizeof(kid), "%s", key_id);
	fp = open_memstream(&text, &len);
	if (!fp) {
		fprintf(stderr, "uevmfs: measuring the mount's state (CRITICAL_DATA): %s\n",
			strerror(errno));
		return -errno;
	}
	fprintf(fp, "mode=%s evm=0x%x fastopen=%s key=%s policy_sha256=%s hash=%s pcr=%d m32=%d"
		" syslog=%d auditd=%d integrity_audit=%d",
		integrity_mode_name(integrity_sys_mode(ufs.sys)),
		integrity_sys_evm_bits(ufs.sys), ufs.fastopen ? "on" : "off", kid, hex,
		uevm_hash_algo_name(ufs.hash_algo), o->pcr >= 0 ? o->pcr : IMA_ML_DEFAULT_PCR,
		o->m32, !o->nosyslog, !o->noauditd, o->integrity_audit);
	ret = integrity_put_untrusted_field(fp, "policy", policy_from_tree ? "control-tree" :
					    o->policy ? o->policy : "default");
	if (!ret)
		ret = integrity_put_untrusted_field(fp, "source", ufs.source);
	/* Which filesystem SOURCE is, as uevmfs sees it (in a mount
	 * namespace an edited unit made, another one); fstatfs works on
	 * O_PATH.  The fsid of ext4, xfs and btrfs comes from their UUID. */
	if (!ret) {
		struct statfs sfs;

		if (fstatfs(ufs.root.fd, &sfs) < 0)
			ret = -errno;
		else
			fprintf(fp, " source_fsid=%08x%08x", (uint32_t)sfs.f_fsid.__val[0],
				(uint32_t)sfs.f_fsid.__val[1]);
	}
	if (!ret)
		ret = integrity_put_untrusted_field(fp, "mountpoint", ufs.mountpoint);
	if (!ret)
		ret = integrity_put_untrusted_field(fp, "audit_log", o->audit_log ? o->audit_log : "");
	if (!ret)
		ret = integrity_put_untrusted_field(fp, "uuid", o->uuid ? o->uuid : "fs");
	if (!ret)
		ret = integrity_put_untrusted_field(fp, "evm_xattrs", o->evm_xattrs ? o->evm_xattrs : "");
	if (!ret)
		ret = integrity_put_untrusted_field(fp, "template", o->template_name ? o->template_name : "");
	if (!ret)
		ret = integrity_put_untrusted_field(fp, "measure_path", o->measure_path ? o->measure_path : "mount");
	if (ferror(fp) && !ret)
		ret = -EIO;
	if (fclose(fp) && !ret)
		ret = -EIO;
	if (!ret) {
		ret = ima_measure_critical_data(ufs.sys, "uevmfs", "uevmfs-state", text, len);
		if (ret < 0)
			fprintf(stderr, "uevmfs: measuring the mount's state (CRITICAL_DATA): %s\n",
				uevm_last_error());
		ret = ret < 0 ? ret : 0;
	} else {
		fprintf(stderr, "uevmfs: measuring the mount's state (CRITICAL_DATA): %s\n",
			strerror(-ret));
	}
	free(text);
	return ret;
}

static int measure_state(const struct opts *o)
{
	int ret;

	pthread_mutex_lock(&state_lock);
	state_opts = o;
	ret = measure_state_locked();
	pthread_mutex_unlock(&state_lock);
	return ret;
}

/* A change through the control tree: measured as the mount's was. */
static void tree_changed(const char *what, const char *text, size_t len,
			 const struct ima_policy *p, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&state_lock);
	/* The tree is uevmfs's only writer of rules after the mount. */
	if (!strcmp(what, "policy") && p == integrity_sys_policy(ufs.sys)) {
		policy_hashed = !uevm_hash_buffer(UEVM_HASH_SHA256, text, len, policy_sha256);
		policy_from_tree = true;
	}
	measure_state_locked();
	pthread_mutex_unlock(&state_lock);
	/* With fastopen the kernel serves what passed from its own cache:
	 * before the writer's close returns, not at the flusher's next look. */
	if (ufs.fastopen)
		ufs_shared_rules_check();
}

/* The default list file: one per mount point, "/mnt/x" -> "mnt-x.ml". */
static char *default_ml_path(const char *mountpoint)
{
	char name[PATH_MAX], *out;
	size_t n = 0;

	for (const char *p = mountpoint + 1; *p && n + 5 < sizeof(name); p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '/')
			name[n++] = '-';
		else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '_' || c == '.')
			name[n++] = (char)c;
		else
			n += (size_t)snprintf(name + n, sizeof(name) - n, "_%02x", c);
	}
	name[n] = '\0';
	if (mkdir("/var/lib/uevm", 0700) < 0 && errno != EEXIST)
		return NULL;
	if (mkdir(DEFAULT_ML_DIR, 0700) < 0 && errno != EEXIST)
		return NULL;
	if (asprintf(&out, DEFAULT_ML_DIR "/%s.ml", n ? name : "root") < 0)
		return NULL;
	return out;
}

static int open_ml(const struct opts *o, struct ima_measurements **out)
{
	struct ima_ml_config c;
	char *path = NULL;
	int ret;

	*out = NULL;
	if (o->ml && !strcmp(o->ml, "none"))
		return 0;
	ima_ml_config_init(&c);
	if (!o->ml && o->tcti) {
		/* With a TPM: the host's one list, shared with uevmd and the
		 * other mounts (its PCR holds one list's replay). */
		if (mkdir("/var/lib/uevm", 0700) < 0 && errno != EEXIST) {
			fprintf(stderr, "uevmfs: cannot create /var/lib/uevm: %s\n",
				strerror(errno));
			return -1;
		}
		c.path = IMA_ML_HOST_LIST;
	} else if (!o->ml) {
		path = default_ml_path(ufs.mountpoint);
		if (!path) {
			fprintf(stderr, "uevmfs: cannot create %s: %s\n", DEFAULT_ML_DIR,
				strerror(errno));
			return -1;
		}
		c.path = path;
	} else if (strcmp(o->ml, "memory")) {
		c.path = o->ml;
	}
	if (o->pcr >= 0)
		c.pcr = o->pcr;
	if (o->template_name)
		c.template_name = o->template_name;
	if (o->tcti)
		c.tcti = o->tcti;
	c.rotate_stale = o->rotate_stale;
	c.kernel_path = o->kernel_ml;
	c.evm_ctx = integrity_sys_ctx(ufs.sys);	/* its key MACs the list */
	ret = ima_ml_open(&c, out);
	if (ret)
		fprintf(stderr, "uevmfs: measurement list %s: %s\n",
			c.path ? c.path : "(memory)", uevm_last_error());
	else if (ima_ml_open_warning(*out))
		fprintf(stderr, "uevmfs: warning: %s\n", ima_ml_open_warning(*out));
	free(path);
	return ret ? -1 : 0;
}

static int setup_sys(const struct opts *o, struct ima_policy **policy,
		     struct ima_measurements **ml)
{
	struct integrity_sys_config scfg = { 0 };
	struct uevm_key *key = NULL;
	struct uevm_config cfg;
	struct uevm_ctx *ctx;
	static const char *extra[32];
	static char *extra_buf;
	int ret;

	uevm_config_init(&cfg);
	if (o->hash) {
		ret = uevm_hash_algo_by_name(o->hash);
		if (ret < 0) {
			fprintf(stderr, "uevmfs: unknown hash algorithm '%s'\n", o->hash);
			return -1;
		}
		cfg.hash_algo = ret;
	}
	ufs.hash_algo = cfg.hash_algo;
	if (o->uuid && parse_uuid_opt(o->uuid, &cfg)) {
		fprintf(stderr, "uevmfs: bad uuid '%s' (a UUID or 'none')\n", o->uuid);
		return -1;
	}
	cfg.m32 = o->m32;
	if (o->evm_xattrs) {
		int n = 0;

		extra_buf = strdup(o->evm_xattrs);
		for (char *s = extra_buf, *tok; s && (tok = strsep(&s, ":")) && n < 31;)
			if (*tok)
				extra[n++] = tok;
		extra[n] = NULL;
		cfg.extra_xattrs = extra;
	}
	if (o->key) {
		struct uevm_key_load_opts ko;

		/* The mount options name the key's form: a plain path there
		 * may predate "a plain path is a raw key" and have meant a
		 * protected file, since replaced by raw bytes. */
		uevm_key_load_opts_init(&ko);
		ko.need_form = true;
		if (uevm_key_load_ex(o->key, &ko, &key, NULL)) {
			fprintf(stderr, "uevmfs: key=%s: %s\n", o->key,
				uevm_last_error());
			return -1;
		}
		if (uevm_key_id(key, key_id)) {
			fprintf(stderr, "uevmfs: key=%s: %s\n", o->key, uevm_last_error());
			uevm_key_free(key);
			return -1;
		}
	}
	if (uevm_ctx_new(&cfg, key, &ctx)) {
		fprintf(stderr, "uevmfs: %s\n", uevm_last_error());
		uevm_key_free(key);
		return -1;
	}
	if (o->mode && integrity_mode_parse(o->mode, &scfg.mode)) {
		fprintf(stderr, "uevmfs: %s\n", uevm_last_error());
		uevm_ctx_free(ctx);
		return -1;
	}
	scfg.audit.to_syslog = !o->nosyslog;
	scfg.audit.syslog_socket = o->syslog_socket;
	scfg.audit.to_auditd = !o->noauditd;
	scfg.audit.integrity_audit = o->integrity_audit;
	if (o->audit_log) {
		ret = ufs_audit_log_open(o->audit_log);
		if (ret) {
			fprintf(stderr, "uevmfs: %s: %s\n", o->audit_log, strerror(-ret));
			uevm_ctx_free(ctx);
			return -1;
		}
		scfg.audit.sink = ufs_audit_log_sink;
	}
	if (integrity_sys_new(&scfg, ctx, &ufs.sys)) {
		fprintf(stderr, "uevmfs: %s\n", uevm_last_error());
		return -1;
	}
	/* echo BITS > evm: EVM starts with the HMAC key, as after boot. */
	if (o->evm ? strcmp(o->evm, "0") != 0 : key != NULL) {
		struct integrity_cred self;
		unsigned long bits = strtoul(o->evm ? o->evm : "1", NULL, 0);

		integrity_cred_self(&self);
		if (integrity_sys_evm_write(ufs.sys, &self, (uint32_t)bits)) {
			fprintf(stderr, "uevmfs: evm=%lu: %s\n", bits, uevm_last_error());
			return -1;
		}
	}
	if (load_policy(o->policy, policy) < 0)
		return -1;
	integrity_sys_set_policy(ufs.sys, *policy);
	if (open_ml(o, ml) < 0)
		return -1;
	integrity_sys_set_measurements(ufs.sys, *ml);
	return 0;
}

/* ---- FUSE -------------------------------------------------------------------------- */

/* The largest READ request and the read-ahead window, in bytes (main). */
static unsigned int read_max, read_ahead;

/*
 * A read is answered by splicing SOURCE's pages through a pipe of libfuse's
 * into /dev/fuse, without a copy.  The pipe must hold the data, the reply's
 * header and three pages of slack (libfuse's own reckoning); it may grow to
 * fs.pipe-max-size only (further takes CAP_SYS_RESOURCE).  A larger request
 * makes libfuse copy through a buffer it maps and unmaps per request: 1 MiB
 * requests ran several times slower than 1008 KiB ones here.  So requests
 * stop 4 pages short of the largest pipe, and at FUSE's 1 MiB limit.
 */
static unsigned int splice_read_max(void)
{
	unsigned long pipe_max = 1u << 20;
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
	char buf[32];
	int fd = open("/proc/sys/fs/pipe-max-size", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = '\0';
			pipe_max = strtoul(buf, NULL, 10);
		}
		close(fd);
	}
	if (pipe_max > (1u << 20) + 4 * page)
		pipe_max = (1u << 20) + 4 * page;
	if (pipe_max < 36 * page)	/* no splice: FUSE's old 128 KiB */
		pipe_max = 36 * page;
	return (pipe_max / page - 4) * page;
}

static void ufs_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* The kernel itself drops setuid bits and security.capability on a
	 * write, as setattr/removexattr requests: through the hooks. */
	conn->want &= ~FUSE_CAP_HANDLE_KILLPRIV;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/* POSIX ACLs of SOURCE are enforced by the kernel, with
	 * default_permissions, from the system.posix_acl_* xattrs. */
	if ((conn->capable & FUSE_CAP_POSIX_ACL) &&
	    (conn->capable & FUSE_CAP_DONT_MASK)) {
		conn->want |= FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
		ufs.dont_mask = true;
	}
	/* With no OPEN sent, an O_TRUNC must come as a SETATTR. */
	if (ufs.fastopen)
		conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	if (conn->capable & FUSE_CAP_SPLICE_WRITE)
		conn->want |= FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
	/* Written data spliced from the device (no copy): into SOURCE with
	 * one copy, or read into memory to be hashed (stream.c). */
	if (conn->capable & FUSE_CAP_SPLICE_READ)
		conn->want |= FUSE_CAP_SPLICE_READ;
	conn->max_write = UFS_STREAM_BUF;
	conn->max_read = read_max;	/* as the max_read mount option says */
	/* The kernel caps the mount's window at this. */
	conn->max_readahead = read_ahead;
}

const struct fuse_lowlevel_ops ufs_ops = {
	.init = ufs_init,
	.lookup = ufs_lookup,
	.forget = ufs_forget,
	.forget_multi = ufs_forget_multi,
	.getattr = ufs_getattr,
	.setattr = ufs_setattr,
	.readlink = ufs_readlink,
	.mknod = ufs_mknod,
	.mkdir = ufs_mkdir,
	.symlink = ufs_symlink,
	.link = ufs_link,
	.unlink = ufs_unlink,
	.rmdir = ufs_rmdir,
	.rename = ufs_rename,
	.statfs = ufs_statfs,
	.opendir = ufs_opendir,
	.readdir = ufs_readdir,
	.readdirplus = ufs_readdirplus,
	.releasedir = ufs_releasedir,
	.fsyncdir = ufs_fsyncdir,
	.open = ufs_open,
	.create = ufs_create,
	.read = ufs_read,
	.write_buf = ufs_write_buf,
	.flush = ufs_flush,
	.release = ufs_release,
	.fsync = ufs_fsync,
	.fallocate = ufs_fallocate,
	.setxattr = ufs_setxattr,
	.getxattr = ufs_getxattr,
	.listxattr = ufs_listxattr,
	.removexattr = ufs_removexattr,
};

/* "a,b" -> "a\,b": a path inside a -o list. */
static char *escape_opt(const char *s)
{
	char *out = malloc(2 * strlen(s) + 1), *p = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (*s == ',' || *s == '\\')
			*p++ = '\\';
		*p++ = *s;
	}
	*p = '\0';
	return out;
}

/* Large sequential reads: the mount's read-ahead window (bdi 0:N). */
static void set_readahead(unsigned int kb)
{
	char line[4096], path[128];
	unsigned int maj = 0, min = 0;
	bool found = false;
	FILE *fp = fopen("/proc/self/mountinfo", "re");

	while (fp && fgets(line, sizeof(line), fp)) {
		char mnt[PATH_MAX];
		unsigned int a, b;

		if (sscanf(line, "%*d %*d %u:%u %*s %4095s", &a, &b, mnt) == 3 &&
		    !strcmp(mnt, ufs.mountpoint)) {
			maj = a;
			min = b;
			found = true;
		}
	}
	if (fp)
		fclose(fp);
	if (!found)
		return;
	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/read_ahead_kb", maj, min);
	fp = fopen(path, "we");
	if (fp) {
		fprintf(fp, "%u\n", kb);
		fclose(fp);
	}
}

/*
 * fastopen=auto: one caller's verdict serves every caller only when no
 * rule looks at who the caller is (or who owns the file), which is what
 * ufs_shared_policy_check tells; and the verdicts are the per-open ones
 * only when no rule tells an exec from a read, which fastopen cannot (it
 * runs BPRM_CHECK at the first read of a program: fine for measuring, which
 * then records a program before it can run, not for appraise func=BPRM_CHECK,
 * which would refuse plain reads).  Then the opens need
 * no round trip.  The default policy measures what root reads (euid=0):
 * per-open hooks.
 */
static bool pick_fastopen(const struct ima_policy *p)
{
	char why[1024];

	if (ufs_shared_policy_check(p, why, sizeof(why), NULL) ||
	    ima_policy_depends_on_exec(p, NULL))
		return false;
	fprintf(stderr, "uevmfs: fastopen: on (automatic: no policy rule depends "
		"on the caller, the file's owner or exec; fastopen=off keeps "
		"per-open hooks)\n");
	return true;
}

/* Is the last FUSE mount on MNT (ours, just made) nosuid?  Its line of
 * /proc/self/mountinfo says; no line (or no /proc) counts as suid, where
 * CREDS_CHECK takes the raised ids: refusing too often, never too few. */
static bool mounted_nosuid(const char *mnt)
{
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool nosuid = false;

	if (!fp)
		return false;
	while (getline(&line, &cap, fp) > 0) {
		char point[PATH_MAX + 1], opts[1024], *dash, *w, *r;
		int n = 0;

		if (sscanf(line, "%*s %*s %*s %*s %" STR(PATH_MAX) "s %1023s %n",
			   point, opts, &n) < 2 || !n)
			continue;
		dash = strstr(line + n, "- ");
		if (!dash || strncmp(dash + 2, "fuse", 4))
			continue;
		for (r = w = point; *r; w++) {	/* \040-style escapes */
			if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' &&
			    r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
				*w = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0'));
				r += 4;
			} else {
				*w = *r++;
			}
		}
		*w = '\0';
		if (strcmp(point, mnt))
			continue;
		nosuid = false;
		for (char *o = strtok(opts, ","); o; o = strtok(NULL, ","))
			if (!strcmp(o, "nosuid"))
				nosuid = true;
	}
	free(line);
	fclose(fp);
	return nosuid;
}

static struct fuse_session *start_session(const struct opts *o, struct fuse_args *args)
{
	struct fuse_session *se;
	char *fsname = escape_opt(ufs.source), *mopts = NULL;

	if (!fsname || asprintf(&mopts, "default_permissions,allow_other,fsname=%s,"
				"subtype=uevmfs,max_read=%u", fsname, read_max) < 0) {
		free(fsname);
		return NULL;
	}
	free(fsname);
	/* Ours first: the user's -o options come later and win. */
	if (fuse_opt_insert_arg(args, 1, "-o") || fuse_opt_insert_arg(args, 2, mopts) ||
	    (o->debug && fuse_opt_add_arg(args, "-d"))) {
		free(mopts);
		return NULL;
	}
	free(mopts);
	se = fuse_session_new(args, &ufs_ops, sizeof(ufs_ops), NULL);
	if (!se)
		return NULL;
	if (fuse_set_signal_handlers(se) != 0) {
		fuse_session_destroy(se);
		return NULL;
	}
	if (fuse_session_mount(se, ufs.mountpoint) != 0) {
		fuse_remove_signal_handlers(se);
		fuse_session_destroy(se);
		return NULL;
	}
	ufs.nosuid = mounted_nosuid(ufs.mountpoint);
	/* Our connection, named by our mount's device, for a stop that must
	 * abort it: taken now, before anything else could be mounted there
	 * (no request: the attributes cached at mount are enough). */
	{
		struct statx stx;

		/* (A FUSE device is an anonymous one, major 0.) */
		if (!statx(AT_FDCWD, ufs.mountpoint, AT_STATX_DONT_SYNC | AT_SYMLINK_NOFOLLOW,
			   STATX_TYPE, &stx) &&
		    stx.stx_dev_major == 0)
			ufs.conn = makedev(0, stx.stx_dev_minor);
	}
	return se;
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * A TCTI configuration holds commas ("swtpm:host=H,port=P"), and libfuse
 * splits -o at every comma not escaped as "\,".  The items TCTIs take
 * (host=, port=, bus_name=, bus_type=: no uevmfs or FUSE option has those
 * names) right after tcti= continue it: escaped here, before libfuse
 * parses.  NULL when OPTS needs no change.
 */
static char *join_tcti_items(const char *opts)
{
	static const char *const keys[] = { "host=", "port=", "bus_name=",
					     "bus_type=" };
	char *out = malloc(2 * strlen(opts) + 1), *d = out;
	const char *item = opts;
	bool in_tcti = false, changed = false;

	if (!out)
		return NULL;
	for (;;) {
		const char *end = item;
		bool cont = false;

		while (*end && *end != ',')
			end += end[0] == '\\' && end[1] ? 2 : 1;
		for (size_t k = 0; in_tcti && k < sizeof(keys) / sizeof(keys[0]); k++)
			cont |= !strncmp(item, keys[k], strlen(keys[k]));
		if (cont) {
			*d++ = '\\';
			changed = true;
		}
		if (item != opts)
			*d++ = ',';
		memcpy(d, item, (size_t)(end - item));
		d += end - item;
		in_tcti = cont || !strncmp(item, "tcti=", 5);
		if (!*end)
			break;
		item = end + 1;
	}
	*d = '\0';
	if (!changed) {
		free(out);
		return NULL;
	}
	return out;
}

/* ARGV with the -o values join_tcti_items changes replaced; *OWNED gets
 * the new strings (NULL-terminated), freed with free_joined. */
static char **join_tcti_args(int argc, char **argv, char ***owned)
{
	char **nargv = calloc((size_t)argc + 1, sizeof(*nargv));
	int n = 0;

	*owned = calloc((size_t)argc + 1, sizeof(**owned));
	if (!nargv || !*owned) {
		free(nargv);
		free(*owned);
		*owned = NULL;
		return NULL;
	}
	for (int i = 0; i < argc; i++) {
		const char *val = NULL;
		char *j;

		nargv[i] = argv[i];
		if (i > 0 && !strcmp(argv[i - 1], "-o"))
			val = argv[i];
		else if (!strncmp(argv[i], "-o", 2) && argv[i][2])
			val = argv[i] + 2;
		if (!val || !(j = join_tcti_items(val)))
			continue;
		if (val != argv[i]) {
			char *k;

			if (asprintf(&k, "-o%s", j) < 0)
				k = NULL;
			free(j);
			j = k;
			if (!j)
				continue;
		}
		nargv[i] = (*owned)[n++] = j;
	}
	return nargv;
}

static void free_joined(char **nargv, char **owned)
{
	for (size_t i = 0; owned && owned[i]; i++)
		free(owned[i]);
	free(owned);
	free(nargv);
}

/*
 * securityfs=DIR made absolute now (uevmfs leaves its working directory
 * before it mounts), and not below MOUNTPOINT: the tree is mounted once
 * the filesystem is, and its mkdir there would wait on this very uevmfs,
 * which serves nothing yet (a review hung it so).  -1 to go on.
 */
static int securityfs_dir_check(struct opts *o)
{
	char *abs, *dir, *slash, *real;
	size_t n = strlen(ufs.mountpoint);
	int under;

	if (!o->securityfs || !strcmp(o->securityfs, "none"))
		return -1;
	if (o->securityfs[0] == '/')
		abs = strdup(o->securityfs);
	else if ((dir = getcwd(NULL, 0))) {
		if (asprintf(&abs, "%s/%s", dir, o->securityfs) < 0)
			abs = NULL;
		free(dir);
	} else {
		abs = NULL;
	}
	if (!abs) {
		fprintf(stderr, "uevmfs: securityfs=%s: %m\n", o->securityfs);
		return 2;
	}
	/* The directory may not exist yet: its parent's real path then. */
	real = realpath(abs, NULL);
	if (!real && (slash = strrchr(abs, '/')) && slash != abs) {
		*slash = '\0';
		dir = realpath(abs, NULL);
		*slash = '/';
		if (dir && asprintf(&real, "%s%s", strcmp(dir, "/") ? dir : "", slash) < 0)
			real = NULL;
		free(dir);
	}
	under = real && (n == 1 || (!strncmp(real, ufs.mountpoint, n) &&
				    (real[n] == '/' || real[n] == '\0')));
	free(real);
	if (under) {
		fprintf(stderr, "uevmfs: securityfs=%s: below the mount point %s: put the "
			"control tree elsewhere\n", o->securityfs, ufs.mountpoint);
		free(abs);
		return 2;
	}
	free(o->securityfs);
	o->securityfs = abs;	/* opts_free frees it */
	return -1;
}

/* Options, SOURCE and MOUNTPOINT: -1 to go on, else the exit status. */
static int parse_args(struct fuse_args *args, struct opts *o)
{
	struct stat st;

	if (fuse_opt_parse(args, o, opt_spec, opt_proc) != 0) {
		usage(stderr);
		return 2;
	}
	if (o->help) {
		usage(stdout);
		return 0;
	}
	if (o->version) {
		printf("uevmfs %s, FUSE %s\n", UEVM_VERSION, fuse_pkgversion());
		return 0;
	}
	if (!o->source) {
		usage(stderr);
		return 2;
	}
	/* "uevmfs DIR": over DIR itself, so that nothing reaches the
	 * unchecked tree by its path any more (see uevmfs(8)). */
	if (!o->mountpoint && !(o->mountpoint = strdup(o->source))) {
		fprintf(stderr, "uevmfs: out of memory\n");
		return 1;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "uevmfs: must run as root (it writes security.* xattrs "
			"and serves every user)\n");
		return 2;
	}
	ufs.source = realpath(o->source, NULL);
	/* The cause: a missing SOURCE is not "not a directory". */
	if (!ufs.source || stat(ufs.source, &st) < 0) {
		fprintf(stderr, "uevmfs: %s: %s\n", o->source, strerror(errno));
		return 2;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "uevmfs: %s: not a directory\n", o->source);
		return 2;
	}
	ufs.mountpoint = realpath(o->mountpoint, NULL);
	if (!ufs.mountpoint) {
		fprintf(stderr, "uevmfs: %s: %s\n", o->mountpoint, strerror(errno));
		return 2;
	}
	return securityfs_dir_check(o);
}

/* Make sure fds 0, 1 and 2 are open (on /dev/null if they were not). */
static int std_fds_open(void)
{
	int fd;

	do {
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -1;
	} while (fd <= 2 && fcntl(fd, F_SETFD, 0) == 0);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	char **owned, **nargv = join_tcti_args(argc, argv, &owned);
	struct fuse_args args = FUSE_ARGS_INIT(argc, nargv ? nargv : argv);
	struct opts o = { .pcr = -1, .rotate_stale = 1, .timeout = 1.0, .readahead_kb = UINT_MAX,
			  .max_threads = 16, .write_idle = 0.5, .stop_timeout = 30,
			  .fastopen = -1 };
	struct ima_policy *policy = NULL;
	struct ima_measurements *ml = NULL;
	struct fuse_session *se = NULL;
	int ret;

	/* The HMAC key lives in this process. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	umask(0);	/* modes arrive already masked by the caller's umask */
	/* Started with 0, 1 or 2 closed, a directory fd opened below would
	 * take one of them, and going to the background puts /dev/null
	 * there. */
	if (std_fds_open() < 0) {
		fprintf(stderr, "uevmfs: cannot open /dev/null: %s\n", strerror(errno));
		return 1;
	}

	ret = parse_args(&args, &o);
	free_joined(nargv, owned);	/* libfuse keeps copies */
	if (ret >= 0)
		goto done;
	ret = 1;
	ufs.source_len = strlen(ufs.source);
	ufs.over_source = !strcmp(ufs.source, ufs.mountpoint);
	if (!strcmp(ufs.source, "/"))
		ufs.source_len = 0;	/* "/x" stays "/x" below MOUNTPOINT */
	ufs.timeout = o.timeout;
	if (o.fastopen_mode) {
		if (!strcmp(o.fastopen_mode, "on"))
			o.fastopen = 1;
		else if (!strcmp(o.fastopen_mode, "off"))
			o.fastopen = 0;
		else if (!strcmp(o.fastopen_mode, "auto"))
			o.fastopen = -1;
		else {
			fprintf(stderr, "uevmfs: fastopen=%s: not 'auto', 'on' or 'off'\n",
				o.fastopen_mode);
			ret = 2;
			goto done;
		}
	}
	/* Automatic (-1): decided once the policy is loaded. */
	ufs.fastopen = o.fastopen == 1;
	if (o.measure_path && strcmp(o.measure_path, "mount") &&
	    !(ufs.source_names = !strcmp(o.measure_path, "source"))) {
		fprintf(stderr, "uevmfs: measure_path=%s: not 'mount' or 'source'\n",
			o.measure_path);
		ret = 2;
		goto done;
	}
	ufs.singlethread = o.singlethread;
	/* Drop threads: a few per worker (drops.c). */
	ufs.drop_threads_max = 4 * (o.singlethread || !o.max_threads ? 1 : o.max_threads);
	ufs.write_idle = o.write_idle;
	if (!(o.write_idle >= 0 && o.write_idle <= 3600)) {
		fprintf(stderr, "uevmfs: write_idle=%g: not between 0 and 3600 seconds\n",
			o.write_idle);
		ret = 2;
		goto done;
	}
	ufs.stop_timeout = o.stop_timeout;
	if (!(o.stop_timeout >= 0 && o.stop_timeout <= 86400)) {
		fprintf(stderr, "uevmfs: stop_timeout=%g: not between 0 and 86400 seconds\n",
			o.stop_timeout);
		ret = 2;
		goto done;
	}
	if (o.debug)
		o.foreground = 1;
	if (!o.foreground)
		daemon_start();
	/* After the fork: /proc/self is this process from now on.  Without
	 * it, the inodes' fds are named by their full /proc path. */
	ufs.proc_fds = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	ufs.have_proc_fds = ufs.proc_fds >= 0;

	/* Creation as the caller's fsuid keeps the capabilities. */
	prctl(PR_SET_SECUREBITS, prctl(PR_GET_SECUREBITS) | SECBIT_NO_SETUID_FIXUP);
	raise_fd_limit();
	if (ufs_table_init(&ufs, ufs.source)) {
		fprintf(stderr, "uevmfs: %s: cannot open: %s\n", ufs.source, strerror(errno));
		goto out;
	}
	if (setup_sys(&o, &policy, &ml))
		goto out;
	if (o.fastopen < 0 && pick_fastopen(integrity_sys_policy(ufs.sys)))
		ufs.fastopen = true;
	else if (ufs.fastopen) {
		char why[1024];

		if (ufs_shared_policy_check(integrity_sys_policy(ufs.sys), why,
					    sizeof(why), NULL)) {
			fprintf(stderr, "uevmfs: %s\n", why);
			goto out;
		}
	}
	/* A failure is reported and the mount goes on, as the kernel's
	 * critical data; a verifier then finds the entry missing. */
	measure_state(&o);
	if (ufs.fastopen && ufs_shared_start()) {
		fprintf(stderr, "uevmfs: cannot start the relabelling thread\n");
		goto out;
	}
	/* Four spliced requests of read-ahead by default: cold reads
	 * measured about 10% faster than 512 KiB windows. */
	read_max = splice_read_max();
	if (o.readahead_kb == UINT_MAX)
		o.readahead_kb = 4 * read_max / 1024;
	read_ahead = o.readahead_kb > UINT_MAX / 1024 ? UINT_MAX : o.readahead_kb * 1024;
	ufs_leave_source();
	se = start_session(&o, &args);
	ufs.se = se;
	if (!se) {
		fprintf(stderr, "uevmfs: cannot mount %s on %s\n", ufs.source, ufs.mountpoint);
		goto out;
	}
	set_readahead(o.readahead_kb);
	ufs_warn_source_holders();
	if (!o.securityfs || strcmp(o.securityfs, "none")) {
		const char *dir = o.securityfs ? o.securityfs : DEFAULT_SECURITYFS;
		int err = uevm_securityfs_new(ufs.sys, &ufs.sfs);

		/* fastopen: no policy whose verdicts depend on the caller
		 * or on an exec open vs a read open. */
		if (!err && ufs.fastopen)
			uevm_securityfs_set_policy_gate(ufs.sfs, ufs_shared_policy_gate,
							NULL);
		if (!err)
			uevm_securityfs_set_change_hook(ufs.sfs, tree_changed, NULL);
		if (err || uevm_securityfs_mount(ufs.sfs, dir, NULL)) {
			fprintf(stderr, "uevmfs: control tree at %s: %s\n", dir,
				uevm_last_error());
			/* Asked for explicitly: fail.  The default: go on without. */
			if (o.securityfs) {
				fuse_session_unmount(se);
				goto out;
			}
		}
	}
	if (ufs_share_start(o.singlethread ? 1 : o.max_threads)) {
		fprintf(stderr, "uevmfs: cannot start the worker share thread\n");
		fuse_session_unmount(se);
		goto out;
	}
	if (ufs.fastopen && ufs_stopper_start()) {
		fprintf(stderr, "uevmfs: cannot start the stopper thread\n");
		fuse_session_unmount(se);
		goto out;
	}
	daemon_ready();

	if (o.singlethread) {
		ret = fuse_session_loop(se);
	} else {
		struct fuse_loop_config *lc = fuse_loop_cfg_create();

		fuse_loop_cfg_set_clone_fd(lc, 1);
		fuse_loop_cfg_set_max_threads(lc, o.max_threads);
		fuse_loop_cfg_set_idle_threads(lc, o.max_threads);
		ret = fuse_session_loop_mt(se, lc);
		fuse_loop_cfg_destroy(lc);
	}
	{
		long streamed, rehashed;

		/* Tests and benchmarks tell the two relabels apart by it. */
		ufs_stream_stats(&streamed, &rehashed);
		if (streamed || rehashed)
			fprintf(stderr, "uevmfs: relabelled at close: %ld from the "
				"written stream, %ld read again\n", streamed, rehashed);
	}
	ufs_stopper_stop();
	/* Stopped by a signal (libfuse returns its number): a clean exit. */
	ret = (ret == 0 || ret == SIGTERM || ret == SIGINT || ret == SIGHUP) ? 0 : 1;
	if (ufs.fastopen)
		ufs_shared_stop();
	if (ufs.sfs && uevm_securityfs_mountpoint(ufs.sfs))
		uevm_securityfs_unmount(ufs.sfs);
	fuse_session_unmount(se);
out:
	/* The tree first: its thread may still serve, and use what follows. */
	if (ufs.sfs && uevm_securityfs_mountpoint(ufs.sfs))
		uevm_securityfs_unmount(ufs.sfs);
	if (ufs.fastopen)
		ufs_shared_stop();
	if (se) {
		fuse_remove_signal_handlers(se);
		fuse_session_destroy(se);
	}
	ufs_share_stop();
	ufs_table_free(&ufs);
	if (ufs.have_proc_fds) {
		ufs.have_proc_fds = false;
		close(ufs.proc_fds);
	}
	integrity_sys_free(ufs.sys);
	uevm_securityfs_free(ufs.sfs);
	ima_policy_free(policy);
	ima_ml_close(ml);
	ufs_audit_log_close();
done:
	fuse_opt_free_args(&args);
	opts_free(&o);
	free(ufs.source);
	free(ufs.mountpoint);
	return ret;
}
