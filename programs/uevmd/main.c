// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevmd: start-up and shutdown.
 *
 * Everything the daemon reads from files - configuration, key, policy,
 * certificates, the measurement list, the log file - is opened before the
 * first mark is placed, so none of it can wait for the daemon's own answer.
 * Change tracking starts before enforcement, so that no legitimate write
 * made after the first enforced open goes unnoticed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "keys.h"
#include "uevm_internal.h"
#include "uevmd.h"

static struct uevmd daemon_state = { .perm_fd = -1, .notif_fd = -1, .stop_efd = -1 };
struct uevmd *D = &daemon_state;
static struct uevmd_input config_in;

/*
 * A fanotify mount mark sees the opens made through that one mount; the
 * kernel's hooks see every open of the inode.  Enforcing through a mount
 * mark would leave the same files open through any other way in.
 */
const char uevmd_mount_mark_caveat[] =
	"a mount mark does not see the same files opened through other mounts "
	"(bind mounts, other mount namespaces, containers, sandboxed services); "
	"enforcement needs 'filesystem = DIR'";

static void usage(FILE *fp)
{
	fprintf(fp,
		"Usage: uevmd [-c CONFIG] [-o KEY=VALUE]... [-f] [--supervise]\n"
		"       uevmd [-c CONFIG] [-o KEY=VALUE]... --check [--json] [--list N]\n"
		"             [--under DIR | --no-walk]\n"
		"EVM/IMA appraisal and measurement for native mounts (fanotify).\n\n"
		"  -c, --config FILE   configuration (default %s)\n"
		"  -o KEY=VALUE        override a configuration key\n"
		"  -f, --foreground    also log to stderr\n"
		"      --check         load configuration, key and policy as uevmd would, then\n"
		"                      check every file the watches cover as if enforcing:\n"
		"                      exit 0 when nothing would be refused, 1 when something\n"
		"                      would, 2 on a configuration error\n"
		"      --json          --check: the report as one JSON object\n"
		"      --list N        --check: list at most N refused paths (default 20)\n"
		"      --under DIR     --check: check only DIR (on a watched filesystem)\n"
		"      --no-walk       --check: only load, check no file\n"
		"      --supervise     keep the fanotify groups in a small parent process\n"
		"                      and restart uevmd at once if it dies (opens wait)\n"
		"  -h, --help          this text\n"
		"  -V, --version       print the version\n"
		"Signals: SIGHUP reloads the configuration and policy (whole or not at all),\n"
		"SIGUSR1 reopens the log file.  See uevmd(8).\n", UEVMD_DEFAULT_CONFIG);
}

const char **uevmd_overrides;
int uevmd_noverrides;
bool uevmd_foreground;

int uevmd_config_read(const char *path, struct uevmd_input *in, FILE *errfp,
		      struct uevmd_config *c)
{
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = input_open(in, path, "configuration");
	if (!ret)
		ret = input_read(in, &text, &len);
	if (ret) {
		fprintf(errfp, "uevmd: %s: %s\n", path, strerror(-ret));
		input_close(in);
		return ret;
	}
	ret = uevmd_config_load_mem(text, len, path, errfp, c) ? -EINVAL : 0;
	if (!ret && uevm_hash_buffer(UEVM_HASH_SHA256, text, len, c->sha256))
		ret = -EIO;
	free(text);
	for (int i = 0; !ret && i < uevmd_noverrides; i++) {
		char key[64];
		const char *o = uevmd_overrides[i], *eq = strchr(o, '=');

		snprintf(key, sizeof(key), "%.*s", (int)(eq - o), o);
		if (uevmd_config_set(c, key, eq + 1)) {
			fprintf(errfp, "uevmd: -o %s: unknown key or invalid value\n", o);
			ret = -EINVAL;
		}
	}
	if (uevmd_foreground)
		c->log_stderr = true;
	if (ret)
		input_close(in);
	return ret;
}

/* Policies replaced while running (control.c): kept until exit. */
static struct ima_policy **retired;
static size_t nretired;

void uevmd_policy_retire(struct ima_policy *p)
{
	struct ima_policy **n;

	if (!p)
		return;
	n = realloc(retired, (nretired + 1) * sizeof(*retired));
	if (!n) {
		/* No room to keep it: leaking it is safe, freeing it is not. */
		ulog(LOG_WARNING, "out of memory: a replaced policy stays allocated");
		return;
	}
	retired = n;
	retired[nretired++] = p;
}

int uevmd_policy_load(const struct uevmd_config *cfg, const struct uevm_ctx *ctx,
		      struct ima_policy **out, uint8_t sha256[32])
{
	const char *spec = cfg->policy ? cfg->policy : "builtin:appraise_tcb";
	unsigned int line = 0;
	char *text = NULL;
	size_t len = 0;
	int ret;

	if (!strncmp(spec, "builtin:", 8)) {
		ret = ima_policy_builtin(spec + 8, out);
	} else {
		struct uevmd_input in;

		ret = input_open(&in, spec, "policy");
		if (!ret) {
			ret = input_read(&in, &text, &len);
			if (!ret)
				ret = input_appraise(&in, ctx);
			input_close(&in);
		}
		if (ret == -EPERM || ret == -ESTALE) {
			free(text);
			return ret;	/* logged */
		}
		if (ret) {
			ulog(LOG_ERR, "policy %s: %s", spec, strerror(-ret));
			return ret;
		}
		ret = ima_policy_parse_lines(text, len, out, &line);
		if (!ret && sha256 && uevm_hash_buffer(UEVM_HASH_SHA256, text, len, sha256)) {
			ima_policy_free(*out);
			*out = NULL;
			ret = -EIO;
		}
		free(text);
	}
	if (ret)
		ulog(LOG_ERR, "policy %s: %s", spec, uevm_last_error());
	return ret;
}

static int load_policy(void)
{
	int ret = uevmd_policy_load(&D->cfg, integrity_sys_ctx(D->sys), &D->policy,
				    D->policy_sha256);

	if (ret)
		return ret;
	D->policy_source = strdup(D->cfg.policy ? D->cfg.policy : "builtin:appraise_tcb");
	return 0;
}

static void log_warning(void *arg, const char *msg)
{
	(void)arg;
	ulog(LOG_WARNING, "%s", msg);
}

static int setup_integrity(integrity_audit_sink sink)
{
	struct integrity_sys_config scfg = { 0 };
	struct uevm_config ucfg;
	struct uevm_key_load_opts ko;
	struct uevm_key *key = NULL;
	struct uevm_ctx *ctx;
	int ret;

	uevm_config_init(&ucfg);
	if (D->cfg.hash) {
		ret = uevm_hash_algo_by_name(D->cfg.hash);
		if (ret < 0) {
			ulog(LOG_ERR, "hash: unknown algorithm '%s'", D->cfg.hash);
			return ret;
		}
		ucfg.hash_algo = ret;
	}
	if (D->cfg.key) {
		struct uevm_key_origin origin;

		/* Skipped keyring keys and the like go to the log. */
		uevm_set_warn_handler(log_warning, NULL);
		uevm_key_load_opts_init(&ko);
		ko.tcti = D->cfg.tcti;
		/* The configuration names the key's form: a plain path there
		 * may predate "a plain path is a raw key" and have meant a
		 * protected file, since replaced by raw bytes. */
		ko.need_form = true;
		ko.origin = &origin;
		ret = uevm_key_load_ex(D->cfg.key, &ko, &key, NULL);
		if (ret) {
			ulog(LOG_ERR, "key = %s: %s", D->cfg.key, uevm_last_error());
			return ret;
		}
		uevm_key_fingerprint(key, D->key_fpr);
		if ((ret = uevm_key_id(key, D->key_id))) {
			ulog(LOG_ERR, "key = %s: %s", D->cfg.key, uevm_last_error());
			uevm_key_free(key);
			return ret;
		}
		ulog(LOG_NOTICE, "key: %s, fingerprint %s", origin.desc, D->key_fpr);
	}
	ret = uevm_ctx_new(&ucfg, key, &ctx);
	if (ret) {
		uevm_key_free(key);
		ulog(LOG_ERR, "%s", uevm_last_error());
		return ret;
	}
	/* The configuration read at start, then each certificate: what they
	 * say is trusted only once they pass appraisal with the key. */
	ret = input_appraise(&config_in, ctx);
	input_close(&config_in);
	for (int i = 0; !ret && i < D->cfg.ncerts; i++) {
		struct uevmd_input in;
		char proc[40];

		ret = input_open(&in, D->cfg.certs[i], "certificate");
		if (ret) {
			ulog(LOG_ERR, "cert %s: %s", D->cfg.certs[i], strerror(-ret));
			break;
		}
		ret = input_appraise(&in, ctx);
		/* The very file appraised, not the name again. */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", in.fd);
		if (!ret && (ret = uevm_ctx_add_certs(ctx, proc)))
			ulog(LOG_ERR, "cert %s: %s", D->cfg.certs[i], uevm_last_error());
		input_close(&in);
	}
	if (ret) {
		uevm_ctx_free(ctx);
		return ret;
	}
	scfg.mode = D->cfg.mode;
	scfg.cache_capacity = D->cfg.cache_size;
	/* Records go through the daemon's logger, after the answers. */
	scfg.audit.integrity_audit = D->cfg.integrity_audit;
	scfg.audit.sink = sink;
	ret = integrity_sys_new(&scfg, ctx, &D->sys);
	if (ret) {
		ulog(LOG_ERR, "%s", uevm_last_error());
		return ret;
	}
	if (key && D->cfg.evm_init) {
		struct integrity_cred self;

		integrity_cred_self(&self);
		self.cap_effective = ~0ULL;
		ret = integrity_sys_evm_write(D->sys, &self, EVM_INIT_HMAC);
		if (ret) {
			ulog(LOG_ERR, "evm: %s", uevm_last_error());
			return ret;
		}
	}
	ret = load_policy();
	if (ret)
		return ret;
	if (D->cfg.deadline_allow && (ima_policy_flag(D->policy) & IMA_APPRAISE)) {
		ulog(LOG_ERR, "on_timeout = allow: the policy appraises, and a late "
		     "answer must never allow content that was not appraised; "
		     "use on_timeout = deny (allow is for measure-only policies)");
		return -EINVAL;
	}
	integrity_sys_set_policy(D->sys, D->policy);
	return 0;
}

static int setup_measurements(void)
{
	struct ima_ml_config mc;
	int ret;

	ima_ml_config_init(&mc);
	mc.path = D->cfg.measurements;
	if (!mc.path && D->cfg.tcti) {
		/* With a TPM: the host's one list, shared with uevmfs. */
		if (mkdir("/var/lib/uevm", 0700) < 0 && errno != EEXIST)
			ulog(LOG_WARNING, "cannot create /var/lib/uevm: %s",
			     strerror(errno));
		mc.path = IMA_ML_HOST_LIST;
	} else if (mc.path && !strcmp(mc.path, "memory")) {
		mc.path = NULL;
	}
	mc.kernel_path = D->cfg.kernel_ml;
	mc.pcr = D->cfg.pcr;
	if (D->cfg.template_name)
		mc.template_name = D->cfg.template_name;
	mc.tcti = D->cfg.tcti;
	mc.no_sync = !D->cfg.ml_sync;
	mc.rotate_stale = D->cfg.ml_rotate_stale;
	mc.evm_ctx = integrity_sys_ctx(D->sys);	/* its key MACs the list */
	ret = ima_ml_open(&mc, &D->ml);
	if (ret) {
		ulog(LOG_ERR, "measurement list%s%s: %s", mc.path ? " " : "",
		     mc.path ? mc.path : "", uevm_last_error());
		return ret;
	}
	if (ima_ml_open_warning(D->ml))
		ulog(LOG_WARNING, "warning: measurement list %s",
		     ima_ml_open_warning(D->ml));
	free(D->ml_path);
	D->ml_path = mc.path ? strdup(mc.path) : NULL;
	integrity_sys_set_measurements(D->sys, D->ml);
	return 0;
}

/* The certificates as keys of the .ima keyring, when the policy has a
 * "measure func=KEY_CHECK" rule (at start and at each new policy). */
void uevmd_measure_keys(void)
{
	int ret;

	if (!D->ml)
		return;
	ret = ima_measure_keys(D->sys);
	if (ret > 0)
		ulog(LOG_NOTICE, "measured %d certificate%s as keys of the .ima keyring",
		     ret, ret == 1 ? "" : "s");
	else if (ret < 0)
		ulog(LOG_ERR, "measuring the certificates (KEY_CHECK): %s",
		     uevm_last_error());
}

/*
 * What uevmd enforces with, as critical data (label "uevmd", an ima-buf
 * entry "uevmd-state" under "measure func=CRITICAL_DATA [label=uevmd]"),
 * at start and after each change (a reload, a policy or mode change
 * through the socket, a write to the control tree's evm or ima/policy):
 * the mode and EVM bits as applied, whether a keeper holds the groups
 * (uevmd --supervise: without one, opens pass while uevmd restarts), the
 * key's full id, the SHA-256 of the configuration and of the policy as
 * read or written, their paths (or "control-tree"), every -o override of
 * the command line (a unit file on the same disk) and each watch with its
 * filesystem's fsid.  Fixed-size fields come first; strings are encoded
 * as audit records encode names, whole.  The kernel's own settings reach
 * a verifier through the boot chain (its command line in the PCRs) and
 * its POLICY_CHECK rules.  uevmd reads its settings from the disk an
 * offline attacker can edit: one who names a key of their own there and
 * relabels the files with it passes the check of the configuration itself
 * (inputs.c).  That cannot be refused from the disk alone; a verifier of
 * the list sees it here (or sees the entry missing: the rule was taken
 * out).  Callers that changed the state hold state_lock.
 */
static void hex32(const uint8_t d[32], char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

void uevmd_measure_state(void)
{
	char cfg_hex[65], pol_hex[65] = "none", *text = NULL;
	static const uint8_t none[32];
	size_t len = 0;
	FILE *fp;
	int ret;

	if (!D->ml)
		return;
	fp = open_memstream(&text, &len);
	if (!fp) {
		ulog(LOG_ERR, "measuring uevmd's state (CRITICAL_DATA): %m");
		return;
	}
	/* Under the lock: a reload (signal thread) and a policy written
	 * through the control socket may both change these. */
	pthread_mutex_lock(&D->policy_lock);
	hex32(D->cfg.sha256, cfg_hex);
	if (memcmp(D->policy_sha256, none, 32))
		hex32(D->policy_sha256, pol_hex);
	fprintf(fp, "mode=%s evm=0x%x keeper=%s key=%s config_sha256=%s policy_sha256=%s",
		integrity_mode_name(integrity_sys_mode(D->sys)), integrity_sys_evm_bits(D->sys),
		sd_fdstore_available() ? "yes" : "no", D->key_id[0] ? D->key_id : "none",
		cfg_hex, pol_hex);
	ret = integrity_put_untrusted_field(fp, "config", D->config_path);
	if (!ret)
		ret = integrity_put_untrusted_field(fp, "policy", D->policy_from_tree ?
						    "control-tree" : D->policy_source ?
						    D->policy_source : "none");
	for (int i = 0; !ret && i < uevmd_noverrides; i++)
		ret = integrity_put_untrusted_field(fp, "override", uevmd_overrides[i]);
	/* Which filesystem each watch is, as uevmd sees it: in a mount
	 * namespace an edited unit made, the path may be another one (the
	 * fsid of ext4, xfs and btrfs comes from their UUID). */
	for (int i = 0; !ret && i < D->nmarks; i++) {
		const struct uevmd_mark *m = &D->marks[i];

		ret = integrity_put_untrusted_field(fp, m->filesystem ? "filesystem" : "mount",
						    m->path);
		fprintf(fp, " fsid=%08x%08x", (uint32_t)m->fsid[0], (uint32_t)m->fsid[1]);
	}
	pthread_mutex_unlock(&D->policy_lock);
	if (ferror(fp) && !ret)
		ret = -EIO;
	if (fclose(fp) && !ret)
		ret = -EIO;
	if (!ret)
		ret = ima_measure_critical_data(D->sys, "uevmd", "uevmd-state", text, len);
	if (ret < 0)
		ulog(LOG_ERR, "measuring uevmd's state (CRITICAL_DATA): %s",
		     ret == -ENOMEM || ret == -EIO ? strerror(-ret) : uevm_last_error());
	else if (ret > 0)
		ulog(LOG_NOTICE, "measured uevmd-state: %.*s", (int)len, text);
	free(text);
}

/* Open the watched paths (marks come later): fds for open_by_handle_at. */
static int open_watch(const char *path, bool filesystem)
{
	struct uevmd_mark *m = &D->marks[D->nmarks];
	struct statfs sfs;
	struct stat st;

	m->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m->fd < 0 || fstat(m->fd, &st) < 0 || fstatfs(m->fd, &sfs) < 0) {
		ulog(LOG_ERR, "%s: %m", path);
		return -errno;
	}
	m->path = strdup(path);
	m->filesystem = filesystem;
	memcpy(m->fsid, &sfs.f_fsid, sizeof(m->fsid));
	m->dev = st.st_dev;
	D->nmarks++;
	return 0;
}

static void teardown(void)
{
	bool all_stopped;

	sd_notifyf("STOPPING=1");
	input_close(&config_in);
	/* Label updates first, while the reader still answers their opens. */
	notify_stop();
	atomic_store(&D->stopping, 1);
	if (D->stop_efd >= 0 && write(D->stop_efd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		ulog(LOG_ERR, "eventfd: %m");
	all_stopped = perm_stop();
	watchdog_stop();
	control_stop();
	/* Closing the group allows whatever is still pending. */
	if (D->perm_fd >= 0)
		close(D->perm_fd);
	if (D->notif_fd >= 0)
		close(D->notif_fd);
	D->perm_fd = D->notif_fd = -1;
	tree_unmount();
	/* A change the tree took after the control thread's last look. */
	tree_measure_changes();
	if (atomic_load(&D->running))
		ulog(LOG_NOTICE, "stopped");
	log_stop();
	if (!all_stopped)
		return;		/* a stuck worker may still use what follows */
	if (D->sys)
		integrity_sys_free(D->sys);
	tree_free();
	if (D->ml)
		ima_ml_close(D->ml);
	free(D->ml_path);
	ima_policy_free(D->policy);
	for (size_t i = 0; i < nretired; i++)
		ima_policy_free(retired[i]);
	free(retired);
	free(D->policy_source);
	for (int i = 0; i < D->nmarks; i++) {
		close(D->marks[i].fd);
		free(D->marks[i].path);
	}
	uevmd_config_free(&D->cfg);
}

int main(int argc, char **argv)
{
	enum { OPT_CHECK = 256, OPT_SUPERVISE, OPT_JSON, OPT_LIST, OPT_UNDER, OPT_NO_WALK };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "list", required_argument, NULL, OPT_LIST },
		{ "under", required_argument, NULL, OPT_UNDER },
		{ "no-walk", no_argument, NULL, OPT_NO_WALK },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "supervise", no_argument, NULL, OPT_SUPERVISE },
		{ NULL, 0, NULL, 0 },
	};
	static const char *overrides[64];
	struct check_opts co = { .list = 20 };
	int c, ret, sig;
	bool check = false, walk = true, supervised = false, check_only = false;
	sigset_t set;
	char *end;

	config_in.fd = -1;
	D->config_path = UEVMD_DEFAULT_CONFIG;
	uevmd_overrides = overrides;
	while ((c = getopt_long(argc, argv, "c:o:fhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			D->config_path = optarg;
			break;
		case 'o':
			if (uevmd_noverrides == 64 || !strchr(optarg, '=')) {
				usage(stderr);
				return 2;
			}
			overrides[uevmd_noverrides++] = optarg;
			break;
		case 'f':
			uevmd_foreground = true;
			break;
		case OPT_CHECK:
			check = true;
			break;
		case OPT_JSON:
			co.json = check_only = true;
			break;
		case OPT_LIST:
			errno = 0;
			co.list = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || optarg[0] == '-' || co.list > 1000000) {
				fprintf(stderr, "uevmd: --list %s: not a number (0..1000000)\n",
					optarg);
				return 2;
			}
			check_only = true;
			break;
		case OPT_UNDER:
			co.under = optarg;
			check_only = true;
			break;
		case OPT_NO_WALK:
			walk = false;
			check_only = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("uevmd %s\n", UEVM_VERSION);
			return 0;
		case OPT_SUPERVISE:
			supervised = true;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || (check_only && !check) || (co.under && !walk)) {
		if (check_only && !check)
			fprintf(stderr, "uevmd: --json, --list, --under and --no-walk go with --check\n");
		usage(stderr);
		return 2;
	}
	/* The keeper of the groups stays here; its child goes on below. */
	if (supervised && !check)
		supervise();

	/* Threads inherit this mask: only the main thread takes signals. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* A read lease taken to count writers may be broken: no signal. */
	signal(SIGIO, SIG_IGN);

	/* The HMAC key lives in this process. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	umask(077);
	D->pid = getpid();
	pthread_mutex_init(&D->policy_lock, NULL);
	pthread_mutex_init(&D->state_lock, NULL);
	own_tid_register();

	uevmd_config_defaults(&D->cfg);
	/* A restart under a keeper of the groups: the permission group comes
	 * back with its marks, and opens already wait in it.  Answer our own
	 * opens from now on, before reading any file. */
	if (!check) {
		int fd = sd_listen_fd("perm");

		if (fd >= 0 && (ret = perm_adopt(fd)) != 0) {
			fprintf(stderr, "uevmd: cannot take over the permission group: %s\n",
				strerror(-ret));
			return 1;
		}
	}
	/* Kept open: appraised with the key, once that is loaded. */
	if (uevmd_config_read(D->config_path, &config_in, stderr, &D->cfg))
		return 2;
	if (!D->cfg.fail_open_ok && !check && !sd_fdstore_available()) {
		fprintf(stderr, "uevmd: on_exit = refuse: when uevmd exits or is killed, the "
			"kernel allows every pending and later open, unless another process "
			"keeps the fanotify groups; refusing to start without one.  Run "
			"'uevmd --supervise' (see uevmd(8)).\n");
		return 1;
	}
	if (!D->cfg.nmounts && !D->cfg.nfilesystems) {
		fprintf(stderr, "uevmd: %s: no 'mount' or 'filesystem' to watch\n", D->config_path);
		return 2;
	}
	if (D->cfg.nmounts && D->cfg.mode == INTEGRITY_MODE_ENFORCE) {
		fprintf(stderr, "uevmd: mount = %s: %s; refusing to enforce\n",
			D->cfg.mounts[0], uevmd_mount_mark_caveat);
		return 2;
	}
	if (check) {
		/* Loaded as the daemon loads, with no thread and no mark. */
		D->cfg.log_stderr = false;
		ret = setup_integrity(walk ? check_audit_sink : NULL);
		if (!ret)
			ret = setup_measurements();
		if (!ret && !walk)
			printf("uevmd: configuration, key and policy load (%zu rules)\n",
			       ima_policy_count(D->policy));
		if (!ret && walk)
			ret = check_run(&co);
		else
			ret = ret ? 2 : 0;
		if (ret == 2 && co.json)
			printf("{\"config\":\"error\",\"exit\":2}\n");
		teardown();
		return ret;
	}

	D->stop_efd = eventfd(0, EFD_CLOEXEC);
	if (D->stop_efd < 0 || log_start())
		return 1;
	if (D->stale_denied)
		ulog(LOG_WARNING, "restarted: %ld opens left pending by the previous uevmd "
		     "were refused (not appraised)", D->stale_denied);
	/* Creations are watched from the first moment: a file is new only
	 * if its FAN_CREATE was seen, and files made while uevmd starts up
	 * (a logger answering its first messages) are new too.  The events
	 * wait in the group until the notifier runs. */
	for (int i = 0; i < D->cfg.nmounts; i++)
		if ((ret = open_watch(D->cfg.mounts[i], false)))
			goto fail;
	for (int i = 0; i < D->cfg.nfilesystems; i++)
		if ((ret = open_watch(D->cfg.filesystems[i], true)))
			goto fail;
	if (D->cfg.label_updates && (ret = notify_init()))
		goto fail;
	if ((ret = setup_integrity(log_audit_sink)) || (ret = setup_measurements()))
		goto fail;
	uevmd_measure_keys();
	pthread_mutex_lock(&D->state_lock);
	uevmd_measure_state();
	pthread_mutex_unlock(&D->state_lock);
	if ((ret = tree_start()) || (ret = control_start()))
		goto fail;
	if (D->cfg.label_updates && (ret = notify_start()))
		goto fail;
	if ((ret = perm_init()) || (ret = perm_start()) || (ret = perm_add_marks()) ||
	    (ret = watchdog_start()))
		goto fail;
	/* A keeper of the groups (uevmd --supervise, systemd's store) holds
	 * them while a new uevmd starts: opens then wait instead of passing. */
	if (sd_fdstore_available()) {
		sd_notify_store_fd("perm", D->perm_fd);
		if (D->notif_fd >= 0)
			sd_notify_store_fd("notif", D->notif_fd);
	}
	for (int i = 0; i < D->cfg.nmounts; i++)
		ulog(LOG_WARNING, "mount = %s: %s", D->cfg.mounts[i], uevmd_mount_mark_caveat);
	atomic_store(&D->running, 1);
	ulog(LOG_NOTICE, "running: mode %s, %d watch(es), policy %s",
	     integrity_mode_name(integrity_sys_mode(D->sys)), D->nmarks, D->policy_source);
	sd_notifyf("READY=1\nSTATUS=enforcing %d watch(es), mode %s", D->nmarks,
		   integrity_mode_name(integrity_sys_mode(D->sys)));

	for (;;) {
		sig = sigwaitinfo(&set, NULL);
		if (sig == SIGHUP) {
			uevmd_reload();
			continue;
		}
		if (sig == SIGUSR1) {
			/* Into the new file: the sign that it was reopened. */
			if (!log_reopen())
				ulog(LOG_NOTICE, "SIGUSR1: log file reopened");
			continue;
		}
		if (sig == SIGTERM || sig == SIGINT)
			break;
	}
	teardown();
	return 0;
fail:
	teardown();
	return 1;
}
