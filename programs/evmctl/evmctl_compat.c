// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * evmctl-compatible front end: evmctl 1.6's commands, options, messages
 * and exit codes (0 ok, 1 verification failed, 125 internal error), on
 * top of libuevm.  Invoked as "evmctl" (argv[0]) or as `uevm evmctl`.
 * See man/uevm-evmctl.1 for where it deliberately differs (kernel-exact
 * HMAC and EVM data, the fs UUID from FS_IOC_GETFSUUID, PEM certificates).
 */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/provider.h>
#include "evmctl.h"

struct evmctl ev;

/* Messages quote file names (from argv or a recursive walk): control
 * characters in them are escaped, the message's own final newline kept. */
void ev_log(int level, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	size_t len;
	int n;

	if (level > ev.verbose)
		return;
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	len = (size_t)n;
	while (len && msg[len - 1] == '\n')
		msg[--len] = '\0';
	fput_text(stderr, msg);
	for (; len < (size_t)n; len++)
		fputc('\n', stderr);
	free(msg);
}

void ev_log_dump(int level, const void *p, size_t len, bool newline)
{
	const uint8_t *d = p;

	if (level > ev.verbose)
		return;
	for (size_t i = 0; i < len; i++)
		fprintf(stderr, "%02x", d[i]);
	if (newline)
		fputc('\n', stderr);
}

void ev_hexdump(const void *p, size_t len)
{
	const uint8_t *d = p;

	for (size_t i = 0; i < len; i++)
		printf("%02x", d[i]);
	putchar('\n');
}

void ev_log_errno_reset(int err, const char *fmt, ...)
{
	va_list ap;

	if (EV_LOG_ERR <= ev.verbose) {
		char *msg = NULL;

		va_start(ap, fmt);
		if (vasprintf(&msg, fmt, ap) >= 0) {
			fput_text(stderr, msg);
			free(msg);
		}
		va_end(ap);
		fprintf(stderr, " (errno: %s)\n", strerror(err));
	}
	ev.err_no = 0;
}

void ev_output_openssl_errors(void)
{
	char buf[256];

	while (ERR_peek_error()) {
		ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
		log_err("openssl: %s\n", buf);
	}
}

const char *ev_next_arg(void)
{
	return ev.optind < ev.argc ? ev.argv[ev.optind++] : NULL;
}

void ev_print_usage(const struct ev_command *cmd)
{
	printf("usage: %s %s\n", cmd->name, cmd->arg ? cmd->arg : "");
}

/* ---- walking: evmctl's find(), regular files in readdir order ------------ */

static int find(int dfd, const char *path, int dts, ev_file_fn fn)
{
	struct dirent *de;
	struct stat st;
	DIR *dir;
	int fd;

	if (ev.fs_dev) {
		if (fstatat(dfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			log_err("Failed to stat: %s\n", path);
			return -1;
		}
		if (st.st_dev != ev.fs_dev)
			return 0;
	}
	/* The tree's root is opened as opendir does (a symlink to a
	 * directory is walked); entries below are DT_DIR ones, never
	 * followed. */
	fd = openat(dfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
				       (dfd == AT_FDCWD ? 0 : O_NOFOLLOW));
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		ev.err_no = errno;	/* opendir's, printed on failure */
		if (fd >= 0)
			close(fd);
		log_err("Failed to open directory %s\n", path);
		return -1;
	}
	while ((de = readdir(dir))) {
		unsigned char type = de->d_type;

		if (!strcmp(de->d_name, "..") || !strcmp(de->d_name, "."))
			continue;
		if (type == DT_UNKNOWN &&
		    fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			type = S_ISDIR(st.st_mode) ? DT_DIR :
			       S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
		log_debug("path: %s, type: %u\n", de->d_name, type);
		/* Names are relative to their directory, as evmctl's
		 * chdir-based walk prints them. */
		if (type == DT_DIR)
			find(dirfd(dir), de->d_name, dts, fn);
		else if (dts & (1 << type))
			fn(dirfd(dir), de->d_name);
	}
	closedir(dir);
	return 0;
}

int ev_do_cmd(const struct ev_command *cmd, ev_file_fn fn)
{
	const char *path = ev_next_arg();
	int dts = 1 << DT_REG;

	if (!path) {
		log_err("Parameters missing\n");
		ev_print_usage(cmd);
		return -1;
	}
	if (!ev.recursive)
		return fn(AT_FDCWD, path);
	/* -t replaces the default: only its 'f' selects regular files. */
	if (ev.search_type)
		dts = 0;
	for (const char *t = ev.search_type; t && *t; t++) {
		struct stat st;

		if (*t == 'f') {
			dts |= 1 << DT_REG;
		} else if (*t == 'x') {
			ev.check_xattr = true;
		} else if (*t == 'm') {
			if (lstat(path, &st) < 0) {
				log_err("Failed to stat: %s\n", path);
				return -1;
			}
			ev.fs_dev = st.st_dev;
		}
	}
	return find(AT_FDCWD, path, dts, fn);
}

/* ---- commands ----------------------------------------------------------------- */

static int cmd_help(const struct ev_command *cmd);

static const struct ev_command cmds[] = {
	{ "--version", NULL, "", NULL },
	{ "help", cmd_help, "<command>", NULL },
	{ "import", ev_cmd_import, "pubkey keyring", "Import public key into the keyring.\n" },
	{ "sign", ev_cmd_sign_evm, "[-r] [--imahash | --imasig ] [--key key] [--pass[=<password>]] file",
	  "Sign file metadata.\n" },
	{ "verify", ev_cmd_verify_evm, "file", "Verify EVM signature (for debugging).\n" },
	{ "ima_sign", ev_cmd_sign_ima, "[--sigfile] [--key key] [--pass[=<password>]] file",
	  "Make file content signature.\n" },
	{ "ima_verify", ev_cmd_verify_ima, "file", "Verify IMA signature (for debugging).\n" },
	{ "ima_setxattr", ev_cmd_setxattr_ima, "[--sigfile file]", "Set IMA signature from sigfile\n" },
	{ "ima_hash", ev_cmd_hash_ima, "file", "Make file content hash.\n" },
	{ "ima_measurement", ev_cmd_ima_measurement,
	  "[--ignore-violations] [--verify-sig [--key key1, key2, ...]] [--pcrs [hash-algorithm,]file [--pcrs hash-algorithm,file] ...] [--verify-bank hash-algorithm] file",
	  "Verify measurement list (experimental).\n" },
	{ "ima_boot_aggregate", ev_cmd_ima_bootaggr,
	  "[--pcrs hash-algorithm,file] [TPM 1.2 BIOS event log] [--hwtpm]",
	  "Calculate per TPM bank boot_aggregate digests\n" },
	{ "ima_fix", ev_cmd_ima_fix, "[-t fdsxm] path", "Recursively fix IMA/EVM xattrs in fix mode.\n" },
	{ "ima_clear", ev_cmd_ima_clear, "[-t fdsxm] path", "Recursively remove IMA/EVM xattrs.\n" },
	{ "sign_hash", ev_cmd_sign_hash, "[--veritysig] [--key key] [--pass[=<password>]]",
	  "Sign hashes from either shaXsum or \"fsverity digest\" output.\n" },
	{ "hmac", ev_cmd_hmac_evm, "[--imahash | --imasig] [--hmackey key] file",
	  "Sign file metadata with HMAC using symmetric key (for testing purpose).\n" },
	{ NULL, NULL, NULL, NULL },
};

static int cmd_help(const struct ev_command *cmd)
{
	const char *name = ev_next_arg();

	if (!name) {
		ev_print_usage(cmd);
		return 0;
	}
	for (const struct ev_command *c = cmds; c->name; c++) {
		if (!strcmp(c->name, name)) {
			printf("usage: %s %s\n", c->name, c->arg ? c->arg : "");
			if (c->msg)
				printf("%s", c->msg);
			return 0;
		}
	}
	printf("invalid command: %s\n", name);
	return -1;
}

/* evmctl 1.6's usage: its commands and options, in its order (the
 * descriptions are uevm's), plus the options 1.6 only names in the
 * commands' lines. */
static void ev_usage(void)
{
	printf("Usage: evmctl [-v] <command> [OPTIONS]\ncommands:\n");
	for (const struct ev_command *c = cmds; c->name; c++)
		printf(" %s %s\n", c->name, c->arg);
	printf("\n"
	       "  -a, --hashalgo     sha1, sha224, sha256, sha384, sha512, streebog256, streebog512 (default: sha256)\n"
	       "  -s, --imasig       sign/hmac: sign the content into security.ima first\n"
	       "      --veritysig    sign_hash: sign fs-verity file digests (signature v3)\n"
	       "  -d, --imahash      sign/hmac: write the content hash to security.ima first\n"
	       "  -f, --sigfile      ima_sign: store the signature in FILE.sig, not in the xattr\n"
	       "      --xattr-user   use user.ima and user.evm instead (for testing)\n"
	       "  -k, --key          signing key (default: /etc/keys/privkey_evm.pem) or certificate(s)\n"
	       "                     (default: /etc/keys/x509_evm.der), or a pkcs11 URI\n"
	       "      --keyid n      signature keyid, a 32-bit hex value (signing)\n"
	       "      --keyid-from-cert file\n"
	       "                     signature keyid from a certificate's subject key identifier\n"
	       "  -o, --portable     make portable EVM signatures (no inode, generation or fs UUID)\n"
	       "  -p, --pass         private key pass phrase; -p<pass phrase>, or asked for\n"
	       "  -r, --recursive    recurse into directories\n"
	       "  -t, --type         with -r: file types 'fxm' (f: regular files)\n"
	       "                     x - skip files that have both the ima and evm xattrs\n"
	       "                     m - do not leave the starting filesystem\n"
	       "  -n                 print the value instead of writing the xattr\n"
	       "  -u, --uuid         fs UUID for EVM (unspecified: the filesystem's, empty: none)\n"
	       "      --smack        include the SMACK xattrs in EVM data\n"
	       "      --m32          EVM data for a 32-bit target\n"
	       "      --m64          EVM data for a 64-bit target\n"
	       "      --ino          inode number for EVM\n"
	       "      --uid          owner UID for EVM\n"
	       "      --gid          owner GID for EVM\n"
	       "      --mode         file mode for EVM\n"
	       "      --generation   generation for EVM (unspecified: the filesystem's, empty: 0)\n"
	       "      --ima          security.ima value (hex) for EVM\n"
	       "      --selinux      security.selinux label for EVM\n"
	       "      --caps         security.capability for EVM (unspecified: the file's, empty: none)\n"
	       "      --verify-sig   ima_measurement: verify the list's file signatures\n"
	       "      --engine e     load OpenSSL engine e (such as: pkcs11) for pkcs11 keys (deprecated)\n"
	       "      --provider p   load OpenSSL provider p (such as: pkcs11)\n"
	       "      --ignore-violations ima_measurement: accept ToMToU/open-writers violations\n"
	       "      --hmackey      HMAC key file (default: /etc/keys/evm-key-plain)\n"
	       "      --pcrs [hash-algorithm,]file\n"
	       "                     PCR values to compare with, instead of the TPM's\n"
	       "      --verify-bank[=hash-algorithm]\n"
	       "                     ima_measurement: compare only this bank\n"
	       "      --hwtpm        ima_boot_aggregate: read the TPM 2.0 PCRs from sysfs\n"
	       "  -v                 increase verbosity level\n"
	       "  -h, --help         display this help and exit\n"
	       "\n"
	       "Environment variables:\n\n"
	       "EVMCTL_KEY_PASSWORD  : Private key password to use; do not use --pass option\n"
	       "\n");
}

/*
 * -p without a value.  evmctl 1.6.2 prints "PEM password: " on stdout and
 * keeps the line's newline in the pass phrase, so a typed pass phrase
 * never decrypts; off a terminal it says why (tcsetattr) and leaves the
 * pass phrase unset.  Unset is what uevm always does: EVMCTL_KEY_PASSWORD
 * then, else OpenSSL asks on the terminal, never on stdout.
 */
static const char *no_password(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &t) != 0)
		fprintf(stderr, "tcsetattr: %s\n", strerror(errno));
	return NULL;
}

static const struct option opts[] = {
	{ "help", 0, 0, 'h' },
	{ "imasig", 0, 0, 's' },
	{ "imahash", 0, 0, 'd' },
	{ "hashalgo", 1, 0, 'a' },
	{ "pass", 2, 0, 'p' },
	{ "sigfile", 0, 0, 'f' },
	{ "uuid", 2, 0, 'u' },
	{ "rsa", 0, 0, '1' },
	{ "key", 1, 0, 'k' },
	{ "type", 1, 0, 't' },
	{ "recursive", 0, 0, 'r' },
	{ "m32", 0, 0, '3' },
	{ "m64", 0, 0, '6' },
	{ "portable", 0, 0, 'o' },
	{ "smack", 0, 0, 128 },
	{ "version", 0, 0, 129 },
	{ "inode", 1, 0, 130 },
	{ "uid", 1, 0, 131 },
	{ "gid", 1, 0, 132 },
	{ "mode", 1, 0, 133 },
	{ "generation", 1, 0, 134 },
	{ "ima", 1, 0, 135 },
	{ "selinux", 1, 0, 136 },
	{ "caps", 2, 0, 137 },
	{ "verify-sig", 0, 0, 138 },
	{ "engine", 1, 0, 139 },
	{ "xattr-user", 0, 0, 140 },
	{ "ignore-violations", 0, 0, 141 },
	{ "pcrs", 1, 0, 142 },
	{ "verify-bank", 2, 0, 143 },
	{ "keyid", 1, 0, 144 },
	{ "keyid-from-cert", 1, 0, 145 },
	{ "veritysig", 0, 0, 146 },
	{ "hwtpm", 0, 0, 147 },
	{ "hmackey", 1, 0, 148 },
	{ "provider", 1, 0, 149 },
	{ NULL, 0, 0, 0 },
};

/* 0 to go on, or an exit status. */
/* evmctl's message for a file it cannot open comes before any parsing. */
static bool ev_readable(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void parse_options(int argc, char **argv)
{
	unsigned long keyid;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "hvnsda:op::fu::k:t:ri", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			ev_usage();
			exit(0);
		case 'v':
			ev.verbose++;
			break;
		case 'd':
			ev.digest = true;
			break;
		case 's':
			ev.digsig = true;
			break;
		case 'n':
			ev.xattr = false;
			ev.sigdump = true;
			break;
		case 'a':
			ev.hash_algo = optarg;
			break;
		case 'p':
			ev.keypass = optarg ? optarg : no_password();
			break;
		case 'f':
			ev.sigfile = true;
			break;
		case 'u':
			ev.uuid_str = optarg;
			if (!optarg)
				ev.no_uuid = true;
			break;
		case '1':
			ev.sigv1 = true;
			break;
		case 'k':
			ev.keyfile = optarg;
			break;
		case 'i':
			if (ev.portable)
				log_err("Portable and immutable options are exclusive, ignoring immutable option.");
			else
				ev.immutable = true;
			break;
		case 'o':
			if (ev.immutable)
				log_err("Portable and immutable options are exclusive, ignoring portable option.");
			else
				ev.portable = true;
			break;
		case 't':
			ev.search_type = optarg;
			break;
		case 'r':
			ev.recursive = true;
			break;
		case '3':
			ev.msize = 32;
			break;
		case '6':
			ev.msize = 64;
			break;
		case 128:
			ev.smack = true;
			break;
		case 129:
			printf("evmctl 1.6.2\n");
			/* uevm's own identity, where scripts do not look. */
			if (ev.verbose > EV_LOG_INFO)
				log_info("uevm %s in evmctl mode\n", UEVM_VERSION);
			exit(0);
		case 130: ev.ino_str = optarg; break;
		case 131: ev.uid_str = optarg; break;
		case 132: ev.gid_str = optarg; break;
		case 133: ev.mode_str = optarg; break;
		case 134: ev.generation_str = optarg; break;
		case 135: ev.ima_str = optarg; break;
		case 136: ev.selinux_str = optarg; break;
		case 137:
			ev.caps_str = optarg;
			ev.caps_set = true;
			break;
		case 138:
			ev.verify_list_sig = true;
			break;
		case 139:
			ev_engine_release(ev.engine);
			ev.engine = ev_engine_setup(optarg);
			if (!ev.engine) {
				log_info("setup_engine failed\n");
				/* evmctl 1.6.2 exits 0 here, as for --provider. */
				exit(125);
			}
			ev.provider = false;
			break;
		case 140:
			ev.xattr_ima = "user.ima";
			ev.xattr_evm = "user.evm";
			break;
		case 141:
			ev.ignore_violations = true;
			break;
		case 142:
			if (ev.npcrfile >= 2) {
				log_err("too many --pcrfile options\n");
				exit(1);
			}
			ev.pcrfile[ev.npcrfile++] = optarg;
			break;
		case 143:
			ev.verify_bank = optarg;
			break;
		case 144:
			errno = 0;
			keyid = strtoul(optarg, &end, 16);
			if (errno || *end || end == optarg || keyid > UINT32_MAX ||
			    keyid == 0) {
				log_err("Invalid keyid value.\n");
				exit(1);
			}
			ev.keyid = (uint32_t)keyid;
			break;
		case 145:
			if (!ev_readable(optarg)) {
				log_err("Cannot open %s: %s\n", optarg, strerror(errno));
				log_err("Error reading keyid.\n");
				exit(1);
			}
			if (uevm_keyid_from_cert_file(optarg, &ev.keyid) || !ev.keyid) {
				log_err("read keyid: %s: %s\n", optarg, uevm_last_error());
				log_err("Error reading keyid.\n");
				exit(1);
			}
			log_info("keyid %04x (from %s)\n", ev.keyid, optarg);
			break;
		case 146:
			ev.veritysig = true;
			break;
		case 147:
			ev.hwtpm = true;
			break;
		case 148:
			ev.hmackeyfile = optarg;
			break;
		case 149:
			if (!OSSL_PROVIDER_try_load(NULL, optarg, 1)) {
				log_err("provider %s isn't available\n", optarg);
				ev_output_openssl_errors();
				log_info("setup_provider failed\n");
				/* evmctl 1.6.2 then exits 0 having done nothing;
				 * a failure must not look like success. */
				exit(125);
			}
			ev_engine_release(ev.engine);
			ev.engine = NULL;
			ev.provider = true;
			break;
		case '?':
			exit(1);
		default:
			log_err("getopt() returned: %d (%c)\n", c, c);
		}
	}
}

static int call_command(const char *name)
{
	for (const struct ev_command *c = cmds; c->name; c++)
		if (c->func && !strcasecmp(c->name, name))
			return c->func(c);
	printf("Invalid command: %s\n", name);
	return -1;
}

int evmctl_main(int argc, char **argv)
{
	struct uevm_config cfg;
	int err;

	memset(&ev, 0, sizeof(ev));
	/* evmctl takes key and certificate files whatever their owner and
	 * mode, and its HMAC key is always raw bytes: where uevm refuses,
	 * evmctl mode warns (one line on stderr) and goes on. */
	uevm_set_file_checks(UEVM_FILE_CHECKS_WARN);
	/* evmctl signs and verifies with any key OpenSSL loads: weak keys
	 * and those the kernel cannot verify only warn. */
	uevm_set_key_checks(UEVM_KEY_CHECKS_WARN);
	ev.verbose = EV_LOG_INFO;
	ev.xattr = true;
	ev.hash_algo = "sha256";
	ev.xattr_ima = "security.ima";
	ev.xattr_evm = "security.evm";
	/* Options anywhere, as glibc's getopt permutes them for evmctl. */
	optind = 1;
	parse_options(argc, argv);
	if (!ev.keypass)
		ev.keypass = getenv("EVMCTL_KEY_PASSWORD");
	/* A pkcs11: key with neither --engine nor --provider: evmctl 1.6
	 * loads the "pkcs11" provider, else the "pkcs11" engine. */
	if (ev.keyfile && !ev.engine && !ev.provider &&
	    !strncmp(ev.keyfile, "pkcs11:", 7)) {
		OSSL_PROVIDER *p = OSSL_PROVIDER_try_load(NULL, "pkcs11", 1);

		if (p && OSSL_PROVIDER_self_test(p))
			ev.provider = true;
		else if (p)
			OSSL_PROVIDER_unload(p);
		ERR_clear_error();
		if (!ev.provider)
			ev.engine = ev_engine_setup("pkcs11");
		if (!ev.provider && !ev.engine) {
			/* evmctl 1.6.2 exits 0 here without a word. */
			log_err("No OpenSSL provider or engine serves the key %s\n",
				ev.keyfile);
			return 125;
		}
	}
	uevm_config_init(&cfg);
	if (ev.msize == 32)
		cfg.m32 = true;
	if (uevm_ctx_new(&cfg, NULL, &ev.ctx)) {
		log_err("%s\n", uevm_last_error());
		return 125;
	}
	/* Probing for optional hash algorithms queues OpenSSL errors that
	 * are nobody's failure: only what a command leaves is reported. */
	ERR_clear_error();
	ev.argv = argv;
	ev.argc = argc;
	ev.optind = optind;
	if (ev.optind >= argc) {
		ev_usage();
		err = 0;
	} else {
		err = call_command(ev_next_arg());
	}
	fflush(stdout);
	if (err) {
		unsigned long e;

		if (ev.err_no)
			log_err("errno: %s (%d)\n", strerror(ev.err_no), ev.err_no);
		while ((e = ERR_get_error())) {
			char buf[256];

			ERR_error_string_n(e, buf, sizeof(buf));
			log_err("%s\n", buf);
		}
		if (err < 0)
			err = 125;
	}
	uevm_signer_free(ev.signer);
	ev_engine_release(ev.engine);
	uevm_ctx_free(ev.ctx);
	return err;
}
