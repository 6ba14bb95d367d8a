// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevm sign: IMA and EVM signatures for files and trees.  The private key
 * is loaded once and shared by the walk's worker threads; no HMAC key is
 * needed, which is the point for a build server signing images.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "prog.h"
#include "report.h"
#include "keys.h"
#include "uevm_internal.h"

enum {
	OPT_IMASIG = 1200, OPT_EVM, OPT_PORTABLE, OPT_SIGV3, OPT_KEYID,
	OPT_KEYID_CERT, OPT_PASS_FILE, OPT_WEAK,
};

struct sign_state {
	const struct uevm_ctx *ctx;
	const struct uevm_signer *signer;
	struct uevm_sign_opts so;
	struct report report;
	struct progress progress;
	atomic_ulong total;
	atomic_ulong signed_n;
	atomic_ulong skipped;
	atomic_ulong errors;
};

static int sign_one(const struct uevm_file *f, const char *path, int err,
		    void *arg)
{
	struct sign_state *s = arg;
	struct report_obj obj = { .path = path, .ok = true };
	char why[300];
	int ret;

	atomic_fetch_add(&s->total, 1);
	if (err) {
		report_error(&s->report, &s->errors, path, NULL, "cannot open", err);
		return 0;
	}
	obj.st = &f->st;
	ret = uevm_sign_file(s->ctx, s->signer, f, &s->so);
	if (ret == -ENODATA && !S_ISREG(f->st.st_mode)) {
		/* Nothing the kernel would check a signature on. */
		atomic_fetch_add(&s->skipped, 1);
		snprintf(why, sizeof(why), "%s", uevm_last_error());
		obj.status = "skipped";
		obj.detail = why;
		if (s->report.level == REPORT_VERBOSE)
			report_object(&s->report, &obj);
		return 0;
	}
	if (ret) {
		report_error(&s->report, &s->errors, path, &f->st, "not signed", ret);
		return 0;
	}
	atomic_fetch_add(&s->signed_n, 1);
	atomic_fetch_add(&s->progress.files, 1);
	if (S_ISREG(f->st.st_mode))
		atomic_fetch_add(&s->progress.bytes, (unsigned long)f->st.st_size);
	obj.status = "signed";
	if (s->report.level == REPORT_VERBOSE)
		report_object(&s->report, &obj);
	return 0;
}

/* A pass phrase from the first line of a file, kept off the command line;
 * the file is checked as a key file is (owner, mode, directories). */
static char *read_pass_file(const char *path)
{
	struct uevm_secret sec = { 0 };
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		error_msg("cannot read the pass phrase from %s: %s", path,
			  strerror(errno));
		return NULL;
	}
	if (uevm_passphrase_from_fd(&fd, NULL, false, &sec)) {
		error_msg("%s: %s", path, uevm_last_error());
	} else {
		buf = calloc(1, sec.len + 1);
		if (buf) {
			memcpy(buf, sec.data, sec.len);
			buf[strcspn(buf, "\r")] = '\0';
		}
	}
	uevm_secret_free(&sec);
	close(fd);
	return buf;
}

static int parse_keyid(const char *arg, uint32_t *keyid)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 16);
	if (errno || *end || end == arg || v == 0 || v > 0xffffffffUL) {
		error_msg("--keyid needs a non-zero 32-bit hex value, not '%s'", arg);
		return -1;
	}
	*keyid = (uint32_t)v;
	return 0;
}

int cmd_sign(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hash-algo", required_argument, NULL, 'a' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "one-file-system", no_argument, NULL, 'x' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "key", required_argument, NULL, 'k' },
		{ "uuid", required_argument, NULL, OPT_UUID },
		{ "m32", no_argument, NULL, OPT_M32 },
		{ "m64", no_argument, NULL, OPT_M64 },
		{ "evm-xattr", required_argument, NULL, OPT_XATTR },
		{ "imasig", no_argument, NULL, OPT_IMASIG },
		{ "evm", no_argument, NULL, OPT_EVM },
		{ "portable", no_argument, NULL, OPT_PORTABLE },
		{ "sigv3", no_argument, NULL, OPT_SIGV3 },
		{ "keyid", required_argument, NULL, OPT_KEYID },
		{ "keyid-from-cert", required_argument, NULL, OPT_KEYID_CERT },
		{ "pass-file", required_argument, NULL, OPT_PASS_FILE },
		{ "allow-weak-keys", no_argument, NULL, OPT_WEAK },
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "ndjson", no_argument, NULL, OPT_NDJSON },
		{ "help", no_argument, NULL, OPT_HELP },
		WALK_LONG,
		{ NULL, 0, NULL, 0 },
	};
	struct sign_state s = { 0 };
	const char *key = NULL, *keyid_cert = NULL, *pass_file = NULL;
	struct uevm_signer *signer = NULL;
	struct uevm_ctx *ctx = NULL;
	struct common_opts o;
	uint32_t keyid = 0;
	char *pass = NULL;
	int c, ret = EXIT_USAGE;

	common_opts_init(&o);
	uevm_sign_opts_init(&s.so);
	while ((c = getopt_long(argc, argv, "a:rxj:vqk:" WALK_SHORT, longopts, NULL)) != -1) {
		switch (c) {
		case OPT_HELP:
			return help_show(cmd->name);
		case '?':
			ret = opt_fail(cmd->name, c, argc, argv, "a:rxj:vqk:" WALK_SHORT, longopts);
			goto out;
		case 'k':
			key = optarg;
			continue;
		case OPT_IMASIG:
			s.so.ima_sig = true;
			continue;
		case OPT_EVM:
			s.so.evm_sig = true;
			continue;
		case OPT_PORTABLE:
			s.so.evm_sig = s.so.portable = true;
			continue;
		case OPT_SIGV3:
			s.so.version = 3;
			continue;
		case OPT_KEYID:
			if (parse_keyid(optarg, &keyid))
				goto out;
			continue;
		case OPT_KEYID_CERT:
			keyid_cert = optarg;
			continue;
		case OPT_PASS_FILE:
			pass_file = optarg;
			continue;
		case OPT_WEAK:
			/* RSA under 2048 bits, P-192, SM2: with a warning. */
			uevm_set_key_checks(UEVM_KEY_CHECKS_WARN_WEAK);
			continue;
		}
		if (common_opt(&o, c, optarg) <= 0) {
			usage(cmd, stderr);
			goto out;
		}
	}
	if (optind >= argc || !key) {
		error_msg("sign: %s", !key ? "no signing key: give -k KEY" : "no PATH given");
		usage(cmd, stderr);
		goto out;
	}
	if (need_cap_sys_admin(cmd->name, "writing"))
		goto out;	/* ret is EXIT_USAGE, which is EXIT_ERROR */
	if (keyid && keyid_cert) {
		error_msg("sign: --keyid and --keyid-from-cert exclude each other");
		goto out;
	}
	/* Without a choice, sign the content: what appraise_type=imasig wants. */
	if (!s.so.ima_sig && !s.so.evm_sig)
		s.so.ima_sig = true;
	if (report_check_opts("sign", &o))
		goto out;
	report_weak_algo("sign", o.cfg.hash_algo);
	if (pass_file && !(pass = read_pass_file(pass_file)))
		goto out;
	ret = uevm_signer_load(key, pass ? pass : getenv("UEVM_KEY_PASSWORD"), &signer);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		free(pass);
	}
	if (ret) {
		error_msg("signing key: %s", uevm_last_error());
		ret = EXIT_USAGE;
		goto out;
	}
	if (keyid)
		uevm_signer_set_keyid(signer, keyid);
	if (keyid_cert && uevm_signer_set_keyid_from_cert(signer, keyid_cert)) {
		error_msg("--keyid-from-cert: %s", uevm_last_error());
		ret = EXIT_USAGE;
		goto out;
	}
	s.so.algo = o.cfg.hash_algo;
	if (common_ctx(&o, false, &ctx)) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (o.verbose)
		fprintf(stderr, "%s: signing with a %s key, keyid %08x\n", prog_name,
			uevm_signer_describe(signer), uevm_signer_keyid(signer));
	s.ctx = ctx;
	s.signer = signer;
	report_init(&s.report, "sign", report_format_of(o.json, o.ndjson),
		    report_level_of(&o), (const char *const *)argv + optind,
		    (size_t)(argc - optind), report_status_text, NULL);
	progress_start(&s.progress, "signing");
	walk_tree((const char *const *)argv + optind, (size_t)(argc - optind),
		  &o.walk, sign_one, &s);
	progress_stop(&s.progress);
	{
		const struct report_count counts[] = {
			{ "total", atomic_load(&s.total) },
			{ "signed", atomic_load(&s.signed_n) },
			{ "skipped", atomic_load(&s.skipped) },
			{ "errors", atomic_load(&s.errors) },
			{ "warnings", 0 },
		};

		ret = report_finish(&s.report, counts, sizeof(counts) / sizeof(counts[0]));
	}
	report_free(&s.report);
	if (!o.quiet && (o.verbose || isatty(STDERR_FILENO)))
		fprintf(stderr, "%s: signed %lu objects, %lu skipped, %lu errors\n",
			prog_name, atomic_load(&s.signed_n), atomic_load(&s.skipped),
			atomic_load(&s.errors));
	ret = atomic_load(&s.errors) || ret ? EXIT_ERROR : 0;
out:
	uevm_ctx_free(ctx);
	uevm_signer_free(signer);
	free(o.extra_xattrs);
	return ret;
}
