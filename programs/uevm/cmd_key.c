// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevm key: the EVM HMAC key's life cycle.
 *   generate  a new random key, written only in a protected form
 *   load      unwrap/unseal a key and put it on the kernel keyring
 *   status    which key is in use (fingerprints, never the key)
 *   export    a key as a kernel "encrypted" key blob (or, explicitly, plain)
 *   import    a key from any form (a kernel blob, ...) into a protected form
 */
#include <getopt.h>
#include <keyutils.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "prog.h"
#include "keys.h"

enum {
	O_OUT = OPT_FIRST_CMD, O_SIZE, O_PASS_FD, O_TPM, O_PCRS, O_TCTI,
	O_PLAIN, O_KDF_OPS, O_KDF_MEM, O_NAME, O_KEYRING, O_MASTER,
	O_MASTER_DESC, O_KBLOB, O_IV, O_HELP,
};
#define OPT(o) (1u << ((o) - O_OUT))

struct key_opts {
	const char *out, *plain, *tcti, *master, *master_desc, *name;
	const char *iv_hex;
	size_t size;
	int pass_fd;
	bool tpm, kblob_out;
	uint32_t pcrs;
	struct uevm_kdf_params kdf;
	int32_t keyring;
	unsigned int given;	/* OPT() bits of the options seen */
};

static const char key_usage[] =
	"generate --out FILE [--size N] [--passphrase-fd N | --tpm [--pcrs LIST]] [--plain FILE]\n"
	"       uevm key load [--name NAME] [--keyring KR] [--passphrase-fd N] [--master-key M] KEYSPEC\n"
	"       uevm key status [--name NAME] [FILE...]\n"
	"       uevm key export --kernel-blob --master-key M [--master-desc user:NAME] [--iv HEX] [--out FILE] KEYSPEC\n"
	"       uevm key export --plain FILE KEYSPEC\n"
	"       uevm key import (--kernel-blob BLOB --master-key M | KEYSPEC) --out FILE [--passphrase-fd N | --tpm [--pcrs LIST]]\n"
	"Common: --tcti TCTI, --kdf-ops N, --kdf-mem MIB.  See uevm-key(1).";

static void key_usage_print(FILE *fp)
{
	fprintf(fp, "Usage: %s key %s\n", prog_name, key_usage);
}

static int parse_size(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* One option set for all subcommands; each says which ones apply. */
static const struct option longopts[] = {
	{ "out", required_argument, NULL, O_OUT },
	{ "size", required_argument, NULL, O_SIZE },
	{ "passphrase-fd", required_argument, NULL, O_PASS_FD },
	{ "tpm", no_argument, NULL, O_TPM },
	{ "pcrs", required_argument, NULL, O_PCRS },
	{ "tcti", required_argument, NULL, O_TCTI },
	{ "plain", required_argument, NULL, O_PLAIN },
	{ "kdf-ops", required_argument, NULL, O_KDF_OPS },
	{ "kdf-mem", required_argument, NULL, O_KDF_MEM },
	{ "name", required_argument, NULL, O_NAME },
	{ "keyring", required_argument, NULL, O_KEYRING },
	{ "master-key", required_argument, NULL, O_MASTER },
	{ "master-desc", required_argument, NULL, O_MASTER_DESC },
	{ "kernel-blob", no_argument, NULL, O_KBLOB },
	{ "iv", required_argument, NULL, O_IV },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Returns the index of the first operand, -1 after saying why not, or
 * -2 after printing the help of NAME ("key generate"), which takes the
 * options ALLOWED (OPT() bits). */
static int parse_opts(int argc, char **argv, struct key_opts *o,
		      const char *name, unsigned int allowed)
{
	long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->size = 32;
	o->pass_fd = -1;
	o->name = UEVM_KEYRING_DEFAULT_NAME;
	o->keyring = KEY_SPEC_USER_KEYRING;
	uevm_kdf_params_default(&o->kdf);
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c >= O_OUT && c < O_HELP && !(allowed & OPT(c))) {
			opt_fail(name, c, argc, argv, "", longopts);
			return -1;
		}
		if (c >= O_OUT && c < O_HELP)
			o->given |= OPT(c);
		switch (c) {
		case O_OUT:
			o->out = optarg;
			break;
		case O_SIZE:
			if (parse_size(optarg, 1, UEVM_MAX_KEY_SIZE, &v)) {
				error_msg("--size must be 1 to %d bytes, not '%s'",
					  UEVM_MAX_KEY_SIZE, optarg);
				return -1;
			}
			o->size = (size_t)v;
			break;
		case O_PASS_FD:
			if (parse_size(optarg, 0, 1 << 20, &v)) {
				error_msg("--passphrase-fd needs a file descriptor number");
				return -1;
			}
			o->pass_fd = (int)v;
			break;
		case O_TPM:
			o->tpm = true;
			break;
		case O_PCRS:
			if (uevm_tpm_parse_pcrs(optarg, &o->pcrs)) {
				error_msg("%s", uevm_last_error());
				return -1;
			}
			break;
		case O_TCTI:
			o->tcti = optarg;
			break;
		case O_PLAIN:
			o->plain = optarg;
			break;
		case O_KDF_OPS:
			if (parse_size(optarg, 1, 64, &v)) {
				error_msg("--kdf-ops must be 1 to 64");
				return -1;
			}
			o->kdf.opslimit = (uint64_t)v;
			break;
		case O_KDF_MEM:
			if (parse_size(optarg, 1, 4096, &v)) {
				error_msg("--kdf-mem must be 1 to 4096 MiB");
				return -1;
			}
			o->kdf.memlimit = (size_t)v << 20;
			break;
		case O_NAME:
			o->name = optarg;
			break;
		case O_KEYRING:
			if (uevm_keyring_parse(optarg, &o->keyring)) {
				error_msg("%s", uevm_last_error());
				return -1;
			}
			break;
		case O_MASTER:
			o->master = optarg;
			break;
		case O_MASTER_DESC:
			o->master_desc = optarg;
			break;
		case O_KBLOB:
			o->kblob_out = true;
			break;
		case O_IV:
			o->iv_hex = optarg;
			break;
		case O_HELP:
			return help_show(name) ? -1 : -2;
		default:
			return opt_fail(name, c, argc, argv, "", longopts) ? -1 : -2;
		}
	}
	if ((o->given & OPT(O_PCRS)) && !o->tpm) {
		error_msg("--pcrs needs --tpm");
		return -1;
	}
	if (o->tpm && o->pass_fd >= 0) {
		error_msg("--passphrase-fd and --tpm are two different protections; "
			  "choose one");
		return -1;
	}
	return optind;
}

static void load_opts(const struct key_opts *o, int *fd,
		      struct uevm_key_load_opts *lo)
{
	uevm_key_load_opts_init(lo);
	lo->need_form = true;	/* never guessed: see common_ctx */
	if (o->pass_fd >= 0) {
		*fd = o->pass_fd;
		lo->passphrase = uevm_passphrase_from_fd;
		lo->passphrase_arg = fd;
	}
	lo->master_key = o->master;
	lo->tcti = o->tcti;
}

/* --passphrase-fd, --master-key and --tcti describe one form of input;
 * with a SPEC of another form they are a mistake, not to pass silently. */
static int opts_fit(const char *spec, const struct key_opts *o)
{
	enum uevm_key_form form;
	static const struct {
		enum uevm_key_form form;
		const char *opt, *prefix;
	} only[] = {
		{ UEVM_KEY_FORM_PASSPHRASE, "--passphrase-fd", "passphrase:" },
		{ UEVM_KEY_FORM_KERNEL_BLOB, "--master-key", "kernel-blob:" },
		{ UEVM_KEY_FORM_TPM, "--tcti", "tpm:" },
	};
	bool given[] = { o->pass_fd >= 0, o->master != NULL, o->tcti != NULL };

	if (uevm_key_spec_form(spec, &form)) {
		error_msg("%s", uevm_last_error());
		return -1;
	}
	for (size_t i = 0; i < sizeof(only) / sizeof(only[0]); i++)
		if (given[i] && form != only[i].form) {
			error_msg("%s applies to a %s key, not to %s (name the "
				  "key's form in KEYSPEC)", only[i].opt,
				  only[i].prefix, spec);
			return -1;
		}
	return 0;
}

static int load_key(const char *spec, const struct key_opts *o,
		    struct uevm_key **key, enum uevm_key_form *form)
{
	struct uevm_key_load_opts lo;
	int fd;

	if (opts_fit(spec, o))
		return -1;
	load_opts(o, &fd, &lo);
	if (uevm_key_load_ex(spec, &lo, key, form)) {
		error_msg("%s", uevm_last_error());
		return -1;
	}
	return 0;
}

/* Write KEY to o->out in the protected form the options ask for. */
static int write_protected(const struct uevm_key *key, const struct key_opts *o,
			   int pass_fd)
{
	struct uevm_secret pass = { 0 };
	char *text = NULL;
	size_t len = 0;
	int ret;

	if (o->tpm) {
		ret = uevm_key_tpm_seal(key, o->tcti, o->pcrs, &text, &len);
	} else {
		ret = pass_fd >= 0 ?
			uevm_passphrase_from_fd(&pass_fd, NULL, false, &pass) :
			uevm_passphrase_from_tty(NULL, "New passphrase: ", true,
						 &pass);
		if (!ret)
			ret = uevm_key_wrap_passphrase(key, pass.data, pass.len,
						       &o->kdf, &text, &len);
		uevm_secret_free(&pass);
	}
	if (!ret)
		ret = uevm_write_new_file(o->out, text, len);
	free(text);
	if (ret) {
		error_msg("%s", uevm_last_error());
		return -1;
	}
	return 0;
}

static void print_written(const struct uevm_key *key, const struct key_opts *o)
{
	char fpr[17];

	uevm_key_fingerprint(key, fpr);
	printf("%s: %zu-byte key, ", o->out, uevm_key_size(key));
	if (!o->tpm) {
		printf("protected by a passphrase (Argon2id, XChaCha20-Poly1305)");
	} else {
		printf("sealed to the TPM");
		for (int i = 0, n = 0; i < 24; i++)
			if (o->pcrs & (1u << i))
				printf("%s%d", n++ ? "," : " and PCRs sha256:", i);
	}
	printf(", fingerprint %s\n", fpr);
}

static int write_plain(const struct uevm_key *key, const char *path)
{
	if (uevm_key_write_plain(key, path)) {
		error_msg("%s", uevm_last_error());
		return -1;
	}
	fprintf(stderr, "%s: warning: %s holds the key in plain text (mode 0600)\n",
		prog_name, path);
	return 0;
}

static int key_generate(struct key_opts *o, int argc, char **argv, int first)
{
	struct uevm_key *key;
	int ret = 0;

	if (first != argc || !o->out) {
		error_msg("key generate needs --out FILE and no other arguments");
		return EXIT_USAGE;
	}
	(void)argv;
	if (uevm_key_generate(o->size, &key)) {
		error_msg("%s", uevm_last_error());
		return EXIT_ERROR;
	}
	if (write_protected(key, o, o->pass_fd))
		ret = EXIT_ERROR;
	else
		print_written(key, o);
	if (!ret && o->plain && write_plain(key, o->plain))
		ret = EXIT_ERROR;
	uevm_key_free(key);
	return ret;
}

static const char *keyring_name(int32_t id)
{
	static char buf[32];

	switch (id) {
	case KEY_SPEC_USER_KEYRING:
		return "user keyring";
	case KEY_SPEC_SESSION_KEYRING:
		return "session keyring";
	case KEY_SPEC_USER_SESSION_KEYRING:
		return "user session keyring";
	case KEY_SPEC_PROCESS_KEYRING:
		return "process keyring";
	case KEY_SPEC_THREAD_KEYRING:
		return "thread keyring";
	}
	snprintf(buf, sizeof(buf), "keyring %d", (int)id);
	return buf;
}

static int key_load(struct key_opts *o, int argc, char **argv, int first)
{
	enum uevm_key_form form;
	struct uevm_key *key;
	char fpr[17], *source;
	int32_t serial;
	int ret;

	if (first != argc - 1) {
		error_msg("key load needs one KEYSPEC (a key file, "
			  "kernel-blob:FILE,master=M, ...)");
		return EXIT_USAGE;
	}
	if (load_key(argv[first], o, &key, &form))
		return EXIT_ERROR;
	/* Record where the key came from, as an absolute path if it is one. */
	source = realpath(argv[first], NULL);
	ret = uevm_keyring_put(key, o->name, o->keyring,
			       source ? source : argv[first], &serial);
	free(source);
	if (ret) {
		error_msg("%s", uevm_last_error());
		uevm_key_free(key);
		return EXIT_ERROR;
	}
	uevm_key_fingerprint(key, fpr);
	printf("loaded %zu-byte key (%s, fingerprint %s) as user key '%s', serial %d, "
	       "on the %s\n", uevm_key_size(key), uevm_key_form_name(form), fpr,
	       o->name, (int)serial, keyring_name(o->keyring));
	printf("a consumer takes it with --hmac-key keyring:%s%s\n", o->name,
	       strcmp(o->name, UEVM_KEYRING_DEFAULT_NAME) ? ",burn" : "");
	uevm_key_free(key);
	return 0;
}

static void status_file(const char *path)
{
	char desc[256];

	fput_path(stdout, path);
	fputs(": ", stdout);
	fput_text(stdout, uevm_key_file_describe(path, desc, sizeof(desc)) < 0 ?
		  uevm_last_error() : desc);
	putchar('\n');
}

static int key_status(struct key_opts *o, int argc, char **argv, int first)
{
	struct uevm_keyring_status st;

	if (uevm_keyring_status(o->name, &st)) {
		error_msg("%s", uevm_last_error());
		return EXIT_ERROR;
	}
	if (st.serial)
		printf("keyring: user key '%s' present (serial %d, owner uid %u, %s, "
		       "%zu bytes), fingerprint %s\n", o->name, (int)st.serial,
		       (unsigned)st.uid, st.keyring, st.len,
		       *st.fingerprint ? st.fingerprint : "(unreadable)");
	else
		printf("keyring: no user key '%s' owned by uid %u or root (not "
		       "loaded, or taken and burnt by a consumer)\n", o->name,
		       (unsigned)geteuid());
	if (*st.info)
		printf("last load: %s\n", st.info);
	for (int i = first; i < argc; i++)
		status_file(argv[i]);
	return 0;
}

static int parse_hex(const char *s, uint8_t *out, size_t n)
{
	if (strlen(s) != 2 * n ||
	    strspn(s, "0123456789abcdefABCDEF") != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++)
		sscanf(s + 2 * i, "%2hhx", &out[i]);
	return 0;
}

static int key_export(struct key_opts *o, int argc, char **argv, int first)
{
	uint8_t iv[UEVM_KBLOB_IV_SIZE];
	struct uevm_secret master = { 0 };
	struct uevm_key *key;
	char *blob = NULL;
	int ret = EXIT_ERROR;

	if (first != argc - 1 || o->kblob_out == !!o->plain) {
		error_msg("key export needs either --kernel-blob (with --master-key) "
			  "or --plain FILE, and one KEYSPEC");
		return EXIT_USAGE;
	}
	if (o->kblob_out && !o->master) {
		error_msg("--kernel-blob needs --master-key FILE (the user key the "
			  "kernel knows as %s)", o->master_desc ?: UEVM_KBLOB_DEFAULT_MASTER);
		return EXIT_USAGE;
	}
	if (o->iv_hex && parse_hex(o->iv_hex, iv, sizeof(iv))) {
		error_msg("--iv needs %d hex digits", 2 * UEVM_KBLOB_IV_SIZE);
		return EXIT_USAGE;
	}
	/* The master key option is for the output here, not the input. */
	{
		struct key_opts in = *o;

		in.master = NULL;
		if (load_key(argv[first], &in, &key, NULL))
			return EXIT_ERROR;
	}
	if (o->plain) {
		ret = write_plain(key, o->plain) ? EXIT_ERROR : 0;
		goto out;
	}
	if (uevm_secret_load(o->master, 32767, &master) ||
	    uevm_kblob_export(key, master.data, master.len, o->master_desc,
			      o->iv_hex ? iv : NULL, &blob)) {
		error_msg("%s", uevm_last_error());
		goto out;
	}
	if (o->out) {
		if (uevm_write_new_file(o->out, blob, strlen(blob))) {
			error_msg("%s", uevm_last_error());
			goto out;
		}
	} else {
		printf("%s\n", blob);
	}
	ret = 0;
out:
	free(blob);
	uevm_secret_free(&master);
	uevm_key_free(key);
	return ret;
}

static int key_import(struct key_opts *o, int argc, char **argv, int first)
{
	struct uevm_key *key;
	char *spec = NULL;
	int ret = 0, out_fd = o->pass_fd;

	if (!o->out || first != argc - 1) {
		error_msg("key import needs --out FILE and one KEYSPEC (or "
			  "--kernel-blob BLOB --master-key M)");
		return EXIT_USAGE;
	}
	if (o->kblob_out) {
		/* --kernel-blob BLOB: the operand is a kernel blob file. */
		if (!o->master) {
			error_msg("--kernel-blob needs --master-key FILE");
			return EXIT_USAGE;
		}
		if (asprintf(&spec, "kernel-blob:%s", argv[first]) < 0)
			return EXIT_ERROR;
	}
	{
		/* The passphrase fd is for the new file; an input that needs a
		 * passphrase asks on the terminal (or passphrase-fd= in KEYSPEC). */
		struct key_opts in = *o;
		enum uevm_key_form form;

		in.pass_fd = -1;
		/* --tcti seals the new file; it reaches the input only when
		 * that is sealed too. */
		if (!uevm_key_spec_form(spec ? spec : argv[first], &form) &&
		    form != UEVM_KEY_FORM_TPM)
			in.tcti = NULL;
		if (load_key(spec ? spec : argv[first], &in, &key, NULL)) {
			free(spec);
			return EXIT_ERROR;
		}
	}
	free(spec);
	if (write_protected(key, o, out_fd))
		ret = EXIT_ERROR;
	else
		print_written(key, o);
	if (!ret && o->plain && write_plain(key, o->plain))
		ret = EXIT_ERROR;
	uevm_key_free(key);
	return ret;
}

int cmd_key(const struct command *cmd, int argc, char **argv)
{
	static const unsigned int protect = OPT(O_OUT) | OPT(O_PASS_FD) |
		OPT(O_TPM) | OPT(O_PCRS) | OPT(O_TCTI) | OPT(O_PLAIN) |
		OPT(O_KDF_OPS) | OPT(O_KDF_MEM);
	static const struct {
		const char *name;
		int (*fn)(struct key_opts *, int, char **, int);
		unsigned int allowed;
	} subs[] = {
		{ "generate", key_generate, protect | OPT(O_SIZE) },
		{ "load", key_load, OPT(O_NAME) | OPT(O_KEYRING) | OPT(O_PASS_FD) |
			OPT(O_MASTER) | OPT(O_TCTI) },
		{ "status", key_status, OPT(O_NAME) },
		{ "export", key_export, OPT(O_KBLOB) | OPT(O_MASTER) |
			OPT(O_MASTER_DESC) | OPT(O_IV) | OPT(O_OUT) | OPT(O_PLAIN) |
			OPT(O_PASS_FD) | OPT(O_TCTI) },
		{ "import", key_import, protect | OPT(O_KBLOB) | OPT(O_MASTER) },
	};
	struct key_opts o;
	int first;

	/* tpm2-tss logs its failures on stderr; uevm's messages say what
	 * failed.  TSS2_LOG set by the user still wins. */
	setenv("TSS2_LOG", "all+none", 0);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return help_show(cmd->name);
	if (argc < 2) {
		key_usage_print(stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		char name[32];

		if (strcmp(argv[1], subs[i].name))
			continue;
		snprintf(name, sizeof(name), "key %s", subs[i].name);
		first = parse_opts(argc - 1, argv + 1, &o, name, subs[i].allowed);
		if (first < 0)
			return first == -2 ? 0 : EXIT_USAGE;
		return subs[i].fn(&o, argc - 1, argv + 1, first);
	}
	error_msg("unknown key subcommand '%s'", argv[1]);
	key_usage_print(stderr);
	return EXIT_USAGE;
}
