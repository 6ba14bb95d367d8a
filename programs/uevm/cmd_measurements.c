// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevm measurements: show, replay and verify IMA measurement lists in the
 * kernel's binary or ASCII format, and add measurements of files to a list kept by
 * libuevm (extended into a TPM 2.0 or software PCRs).
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "prog.h"
#include "pcr_file.h"
#include "ima.h"

/* Measurement lists of real systems reach tens of MB; more is a mistake. */
#define LIST_MAX_SIZE (1u << 30)
#define MAX_BANKS 8

static int read_list(const char *path, uint8_t **out, size_t *len)
{
	return read_file_all(path, LIST_MAX_SIZE, out, len);
}

/* The list's form: --ascii-input, or told apart by its first byte. */
static bool ascii_input, list_ascii;

static int load_list(const char *path, uint8_t **buf, size_t *len)
{
	int ret;

	uevm_clear_last_error();
	ret = read_list(path, buf, len);
	if (ret)
		file_error(path, "cannot read the list", ret);
	else
		list_ascii = ascii_input || ima_ml_is_ascii(*buf, *len);
	return ret;
}

static const char *list_invalid(void)
{
	return list_ascii ? "not a valid ASCII measurement list"
			  : "not a valid binary measurement list";
}

static long parse_list(const uint8_t *buf, size_t len, ima_ml_parse_fn fn,
		       void *arg)
{
	if (list_ascii)
		return ima_ml_parse_ascii(buf, len, IMA_ML_ASCII_AUTO, fn, arg);
	return ima_ml_parse_binary(buf, len, UEVM_HASH_SHA1, fn, arg);
}

static int replay_list(const uint8_t *buf, size_t len, int algo, bool padded,
		       struct ima_ml_replay *r)
{
	if (list_ascii)
		return ima_ml_replay_ascii(buf, len, algo, padded, r);
	return ima_ml_replay_binary(buf, len, algo, padded, r);
}

/* The bank of an ASCII list's first template digest (an _ALGO list shows
 * that bank's), so that show gives such a list back as it is. */
static int ascii_list_bank(const uint8_t *buf, size_t len)
{
	const uint8_t *d = len > 3 ? memchr(buf + 3, ' ', len - 3) : NULL;

	switch (d ? (size_t)(d - buf) - 3 : 0) {
	case 64: return UEVM_HASH_SHA256;
	case 96: return UEVM_HASH_SHA384;
	case 128: return UEVM_HASH_SHA512;
	}
	return UEVM_HASH_SHA1;
}

/* A bank name the library can hash; -1 (message printed) otherwise. */
static int parse_bank(const char *name)
{
	int algo = uevm_hash_algo_by_name(name);

	if (algo < 0 || !uevm_hash_algo_available(algo) ||
	    uevm_hash_algo_digest_size(algo) > UEVM_MAX_DIGEST_SIZE) {
		error_msg("PCR bank '%s' is not supported", name);
		return -1;
	}
	return algo;
}

/* A PCR index 0-23; -1 (message printed) otherwise. */
static int parse_pcr(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 0 || v >= IMA_ML_NUM_PCRS) {
		error_msg("--pcr needs a PCR from 0 to %d, not '%s'",
			  IMA_ML_NUM_PCRS - 1, s);
		return -1;
	}
	return (int)v;
}

static void print_hex(FILE *fp, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "%02x", p[i]);
}

/* ---- show ------------------------------------------------------------------- */

enum show_format { SHOW_ASCII, SHOW_BINARY, SHOW_JSON };

struct show_state {
	enum show_format fmt;
	int bank;
	const char *path;
	unsigned long bad;
	bool first;
	bool tty;
};

/* An ASCII line for a terminal: names are shown as recorded, so control
 * characters in them are escaped (fput_path) rather than interpreted. */
static int write_ascii_escaped(const struct ima_template_entry *e, int bank)
{
	char *line = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&line, &len);
	int ret;

	if (!mem)
		return -ENOMEM;
	ret = ima_entry_write_ascii(e, bank, mem);
	if (fclose(mem) && !ret)
		ret = -ENOMEM;
	if (!ret) {
		if (len && line[len - 1] == '\n')
			line[len - 1] = '\0';
		fput_path(stdout, line);
		putchar('\n');
	}
	free(line);
	return ret;
}

static void json_field(const struct ima_template_entry *e, int i)
{
	const struct ima_template_desc *d = ima_entry_desc(e);
	const struct ima_field_data *f = ima_entry_field(e, i);
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	if (!mem)
		return;
	if (d)
		d->fields[i]->field_show(mem, IMA_SHOW_ASCII, f);
	else
		print_hex(mem, f->data, f->len);
	fclose(mem);
	printf("%s{\"id\": ", i ? ", " : "");
	fput_json_string(stdout, ima_entry_field_id(e, i));
	printf(", \"value\": ");
	/* Names are shown as recorded; JSON escapes what a terminal would
	 * interpret. */
	fput_json_string(stdout, text ? text : "");
	putchar('}');
	free(text);
}

static int show_one(const struct ima_template_entry *e, size_t index,
		    bool ok, void *arg)
{
	struct show_state *s = arg;
	uint8_t digest[UEVM_MAX_DIGEST_SIZE];
	int n;

	if (!ok) {
		s->bad++;
		error_msg("%s: entry %zu: the template digest does not match its data",
			  s->path, index + 1);
	}
	if (s->fmt == SHOW_ASCII && s->tty)
		return write_ascii_escaped(e, s->bank);
	if (s->fmt == SHOW_ASCII)
		return ima_entry_write_ascii(e, s->bank, stdout);
	if (s->fmt == SHOW_BINARY)
		return ima_entry_write_binary(e, s->bank, stdout);
	n = ima_entry_calc_digest(e, s->bank, digest);
	if (n < 0)
		return n;
	printf("%s\n  {\"pcr\": %d, \"template_digest\": \"", s->first ? "" : ",",
	       ima_entry_pcr(e));
	print_hex(stdout, digest, (size_t)n);
	printf("\", \"template\": ");
	fput_json_string(stdout, ima_entry_template_name(e));
	printf(", \"violation\": %s, \"digest_ok\": %s, \"fields\": [",
	       ima_entry_is_violation(e) ? "true" : "false", ok ? "true" : "false");
	for (int i = 0; i < ima_entry_num_fields(e); i++)
		json_field(e, i);
	printf("]}");
	s->first = false;
	return 0;
}

static int do_show(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "ascii", no_argument, NULL, 'A' },
		{ "binary", no_argument, NULL, 'B' },
		{ "json", no_argument, NULL, 'J' },
		{ "bank", required_argument, NULL, 'b' },
		{ "ascii-input", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct show_state s = { .fmt = SHOW_ASCII, .bank = UEVM_HASH_SHA1, .first = true };
	bool bank_given = false;
	uint8_t *buf;
	size_t len;
	long n;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'A': s.fmt = SHOW_ASCII; break;
		case 'B': s.fmt = SHOW_BINARY; break;
		case 'J': s.fmt = SHOW_JSON; break;
		case 'b':
			s.bank = parse_bank(optarg);
			if (s.bank < 0)
				return EXIT_USAGE;
			bank_given = true;
			break;
		case 'I':
			ascii_input = true;
			break;
		case 'h':
			return help_show("measurements show");
		default:
			return opt_fail("measurements show", c, argc, argv, "", longopts);
		}
	}
	if (optind != argc - 1) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	s.path = argv[optind];
	if (load_list(s.path, &buf, &len))
		return EXIT_ERROR;
	if (list_ascii && !bank_given)
		s.bank = ascii_list_bank(buf, len);
	s.tty = isatty(STDOUT_FILENO);
	if (s.fmt == SHOW_JSON)
		putchar('[');
	n = parse_list(buf, len, show_one, &s);
	if (s.fmt == SHOW_JSON)
		printf("%s]\n", s.first ? "" : "\n");
	free(buf);
	if (fflush(stdout) || ferror(stdout)) {
		error_msg("cannot write the output");
		return EXIT_ERROR;
	}
	if (n < 0) {
		file_error(s.path, list_invalid(), (int)n);
		return EXIT_ERROR;
	}
	return s.bad ? EXIT_VERIFY_FAILED : 0;
}

/* ---- replay ----------------------------------------------------------------- */

static int replay_banks(const uint8_t *buf, size_t len, const int *banks,
			int nbanks, struct ima_ml_replay *r, const char *path)
{
	for (int i = 0; i < nbanks; i++) {
		int ret = replay_list(buf, len, banks[i], false, &r[i]);

		if (ret) {
			file_error(path, list_invalid(), ret);
			return ret;
		}
	}
	return 0;
}

static int do_replay(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "bank", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'J' },
		{ "ascii-input", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int banks[MAX_BANKS], nbanks = 0, c;
	struct ima_ml_replay r[MAX_BANKS];
	bool json = false;
	uint8_t *buf;
	size_t len;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (nbanks == MAX_BANKS) {
				error_msg("at most %d banks", MAX_BANKS);
				return EXIT_USAGE;
			}
			banks[nbanks] = parse_bank(optarg);
			if (banks[nbanks++] < 0)
				return EXIT_USAGE;
			break;
		case 'J':
			json = true;
			break;
		case 'I':
			ascii_input = true;
			break;
		case 'h':
			return help_show("measurements replay");
		default:
			return opt_fail("measurements replay", c, argc, argv, "", longopts);
		}
	}
	if (optind != argc - 1) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	if (!nbanks) {
		banks[nbanks++] = UEVM_HASH_SHA1;
		banks[nbanks++] = UEVM_HASH_SHA256;
	}
	if (load_list(argv[optind], &buf, &len))
		return EXIT_ERROR;
	if (replay_banks(buf, len, banks, nbanks, r, argv[optind])) {
		free(buf);
		return EXIT_ERROR;
	}
	free(buf);
	if (json)
		printf("{\"entries\": %lu, \"violations\": %lu, \"bad_digests\": %lu, "
		       "\"banks\": {", r[0].entries, r[0].violations, r[0].bad_digests);
	else
		printf("entries: %lu\nviolations: %lu\n", r[0].entries, r[0].violations);
	for (int i = 0; i < nbanks; i++) {
		unsigned int size = uevm_hash_algo_digest_size(banks[i]);
		bool first = true;

		if (json)
			printf("%s\"%s\": {", i ? ", " : "", uevm_hash_algo_name(banks[i]));
		else
			printf("%s:\n", uevm_hash_algo_name(banks[i]));
		for (int pcr = 0; pcr < IMA_ML_NUM_PCRS; pcr++) {
			if (!(r[i].pcr_mask & (1u << pcr)))
				continue;
			printf(json ? "%s\"%d\": \"" : "%s  %2d: ", json && !first ? ", " : "", pcr);
			print_hex(stdout, r[i].pcr[pcr], size);
			printf(json ? "\"" : "\n");
			first = false;
		}
		if (json)
			putchar('}');
	}
	if (json)
		printf("}}\n");
	if (r[0].bad_digests)
		error_msg("%s: %lu entries whose template digest does not match "
			  "their data", argv[optind], r[0].bad_digests);
	return r[0].bad_digests ? EXIT_VERIFY_FAILED : 0;
}

/* ---- verify ------------------------------------------------------------------ */

struct bank_values {
	int algo;
	uint32_t have;			/* PCRs given */
	uint8_t pcr[IMA_ML_NUM_PCRS][UEVM_MAX_DIGEST_SIZE];
};

/* PCR values of one bank from a file (pcr_file.c has the forms). */
static int read_pcr_file(const char *path, struct bank_values *b)
{
	unsigned int lineno = 0;
	FILE *fp = fopen(path, "re");
	int ret;

	if (!fp) {
		uevm_clear_last_error();
		file_error(path, "cannot open the PCR file", -errno);
		return -1;
	}
	ret = pcr_file_read(fp, b->algo, b->pcr, &b->have, &lineno);
	fclose(fp);
	if (ret) {
		error_msg("%s:%u: not a PCR line for bank %s (want 'PCR-NN: HEX' or "
			  "'NN: 0xHEX' with %u bytes)", path, lineno,
			  uevm_hash_algo_name(b->algo), uevm_hash_algo_digest_size(b->algo));
		return -1;
	}
	if (!b->have) {
		error_msg("%s: no %s PCR values", path, uevm_hash_algo_name(b->algo));
		return -1;
	}
	return 0;
}

static int read_tpm_banks(const char *tcti, struct bank_values *b, int *nbanks)
{
	static const int algos[] = { UEVM_HASH_SHA1, UEVM_HASH_SHA256,
				     UEVM_HASH_SHA384, UEVM_HASH_SHA512 };
	struct ima_tpm *tpm;
	int ret = ima_tpm_open(tcti, &tpm);

	if (ret) {
		error_msg("%s", uevm_last_error());
		return -1;
	}
	for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]) && *nbanks < MAX_BANKS; a++) {
		struct bank_values *v = &b[*nbanks];

		if (!ima_tpm_has_bank(tpm, algos[a]))
			continue;
		memset(v, 0, sizeof(*v));
		v->algo = algos[a];
		for (int pcr = 0; pcr < IMA_ML_NUM_PCRS && !ret; pcr++) {
			ret = ima_tpm_pcr_read(tpm, pcr, algos[a], v->pcr[pcr]);
			ret = ret < 0 ? ret : 0;
			v->have |= 1u << pcr;
		}
		(*nbanks)++;
	}
	ima_tpm_close(tpm);
	if (ret)
		error_msg("%s", uevm_last_error());
	return ret ? -1 : 0;
}

/*
 * Compare one bank; true when every PCR the list extends, and every IMA PCR
 * (IMA_PCRS) whether the list extends it or not, matches.  An IMA PCR the
 * list never extends replays to zeros: a list that leaves it out proves
 * nothing about what IMA measured there, unless the PCR is still zero.
 */
static bool verify_bank(const uint8_t *buf, size_t len, const struct bank_values *b,
			uint32_t ima_pcrs, const char *path, bool verbose,
			unsigned long *bad_digests)
{
	unsigned int size = uevm_hash_algo_digest_size(b->algo);
	const char *name = uevm_hash_algo_name(b->algo);
	struct ima_ml_replay r, padded;
	bool ok = true, padded_ok = b->algo != UEVM_HASH_SHA1;
	uint32_t check;

	if (replay_list(buf, len, b->algo, false, &r) ||
	    replay_list(buf, len, b->algo, true, &padded)) {
		file_error(path, list_invalid(), -EBADMSG);
		*bad_digests = ~0UL;
		return false;
	}
	*bad_digests = r.bad_digests;
	check = r.pcr_mask | ima_pcrs;
	for (int pcr = 0; pcr < IMA_ML_NUM_PCRS; pcr++) {
		if (!(check & (1u << pcr)))
			continue;
		if (!(b->have & (1u << pcr))) {
			error_msg("no %s value given for PCR %d%s", name, pcr,
				  r.pcr_mask & (1u << pcr) ? "" : " (an IMA PCR)");
			return false;
		}
		ok &= !memcmp(r.pcr[pcr], b->pcr[pcr], size);
		padded_ok &= !memcmp(padded.pcr[pcr], b->pcr[pcr], size);
	}
	for (int pcr = 0; pcr < IMA_ML_NUM_PCRS; pcr++) {
		bool listed = r.pcr_mask & (1u << pcr);

		if (!(check & (1u << pcr)))
			continue;
		if (ok || padded_ok) {
			printf("%s PCR %d: %s%s\n", name, pcr,
			       listed ? "matches" : "zero, and the list has no entry for it",
			       ok || !listed ? "" : " (zero-padded SHA-1 template digests)");
			if (verbose) {
				printf("  ");
				print_hex(stdout, b->pcr[pcr], size);
				putchar('\n');
			}
			continue;
		}
		if (!listed && !memcmp(r.pcr[pcr], b->pcr[pcr], size))
			continue;	/* zero as it should be; another PCR differs */
		printf("%s PCR %d: DIFFERS%s\n  list replays to ", name, pcr,
		       listed ? "" : " (the list has no entry for it, the PCR is not zero)");
		print_hex(stdout, r.pcr[pcr], size);
		printf("\n  PCR holds       ");
		print_hex(stdout, b->pcr[pcr], size);
		putchar('\n');
	}
	return ok || padded_ok;
}

/* Entries of the list, or a negative errno (message printed). */
static long count_entries(const uint8_t *buf, size_t len, const char *path)
{
	struct ima_ml_replay r;
	int ret = replay_list(buf, len, UEVM_HASH_SHA1, false, &r);

	if (ret) {
		file_error(path, list_invalid(), ret);
		return ret;
	}
	return (long)r.entries;
}

static int do_verify(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pcrs", required_argument, NULL, 'p' },
		{ "pcr", required_argument, NULL, 'P' },
		{ "tcti", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "ascii-input", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct bank_values banks[MAX_BANKS];
	const char *tcti = NULL;
	int nbanks = 0, c;
	bool verbose = false, all_ok = true;
	unsigned long bad = 0;
	uint32_t ima_pcrs = 0;
	uint8_t *buf;
	size_t len;
	long n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': {
			/* "ALGO,FILE", or "FILE" for sha1 as evmctl takes it. */
			char *comma = strchr(optarg, ',');
			struct bank_values *b = &banks[nbanks];

			if (nbanks == MAX_BANKS) {
				error_msg("at most %d --pcrs", MAX_BANKS);
				return EXIT_USAGE;
			}
			memset(b, 0, sizeof(*b));
			if (comma)
				*comma = '\0';
			b->algo = comma ? parse_bank(optarg) : UEVM_HASH_SHA1;
			if (b->algo < 0 || read_pcr_file(comma ? comma + 1 : optarg, b))
				return EXIT_USAGE;
			nbanks++;
			break;
		}
		case 'P': {
			int pcr = parse_pcr(optarg);

			if (pcr < 0)
				return EXIT_USAGE;
			ima_pcrs |= 1u << pcr;
			break;
		}
		case 't':
			tcti = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'I':
			ascii_input = true;
			break;
		case 'h':
			return help_show("measurements verify");
		default:
			return opt_fail("measurements verify", c, argc, argv, "v", longopts);
		}
	}
	if (!ima_pcrs)
		ima_pcrs = 1u << IMA_ML_DEFAULT_PCR;
	if (optind != argc - 1 || (!nbanks && !tcti)) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	if (tcti && read_tpm_banks(tcti, banks, &nbanks))
		return EXIT_ERROR;
	if (load_list(argv[optind], &buf, &len))
		return EXIT_ERROR;
	/* No entry, not even boot_aggregate: nothing to verify, and
	 * "verified" would vouch for whatever the PCRs hold. */
	n = count_entries(buf, len, argv[optind]);
	if (n <= 0) {
		if (!n) {
			fprintf(stderr, "%s: ", prog_name);
			fput_path(stderr, argv[optind]);
			fputs(": the list is empty: it proves nothing (a measurement "
			      "list starts with boot_aggregate)\n", stderr);
		}
		free(buf);
		return EXIT_ERROR;
	}
	for (int i = 0; i < nbanks; i++) {
		unsigned long b;

		all_ok &= verify_bank(buf, len, &banks[i], ima_pcrs, argv[optind],
				      verbose, &b);
		if (b > bad)
			bad = b;
	}
	free(buf);
	if (bad == ~0UL)
		return EXIT_ERROR;
	if (bad)
		printf("%lu entries: the template digest does not match the data\n", bad);
	printf("%s\n", all_ok && !bad ? "list verified" : "list NOT verified");
	return all_ok && !bad ? 0 : EXIT_VERIFY_FAILED;
}

/* ---- add ---------------------------------------------------------------------- */

struct add_opts {
	int algo;
	bool verbose;
};

static int measure_path(struct ima_measurements *ml, const char *path,
			const char *tmpl, int pcr, const struct add_opts *o)
{
	uint8_t digest[UEVM_MAX_DIGEST_SIZE], *ima = NULL, *evm = NULL;
	size_t ima_size = 0, evm_size = 0;
	ssize_t ima_len, evm_len;
	char *abs = realpath(path, NULL);
	struct ima_event_data ev = { 0 };
	struct uevm_file f;
	int ret;

	uevm_clear_last_error();
	ret = uevm_file_openat(&f, AT_FDCWD, path, path);
	if (ret) {
		file_error(path, "cannot open", ret);
		free(abs);
		return ret;
	}
	if (!S_ISREG(f.st.st_mode) || !f.io) {
		uevm_clear_last_error();
		file_error(path, "not a regular file", -EINVAL);
		ret = -EINVAL;
		goto out;
	}
	ret = uevm_hash_fd(f.fd, o->algo, digest);
	if (ret) {
		file_error(path, "cannot hash", ret);
		goto out;
	}
	ima_len = uevm_getxattr_alloc(&f, XATTR_NAME_IMA, &ima, &ima_size);
	evm_len = uevm_getxattr_alloc(&f, XATTR_NAME_EVM, &evm, &evm_size);
	ev.filename = abs ? abs : path;
	ev.algo = o->algo;
	ev.digest = digest;
	ev.digest_len = uevm_hash_algo_digest_size(o->algo);
	ev.xattr_value = ima_len > 0 ? ima : NULL;
	ev.xattr_len = ima_len > 0 ? (size_t)ima_len : 0;
	ev.evm_value = evm_len > 0 ? evm : NULL;
	ev.evm_len = evm_len > 0 ? (size_t)evm_len : 0;
	ev.file = &f;
	ret = ima_ml_add_file(ml, &ev, tmpl, pcr);
	if (ret < 0) {
		file_error(path, "cannot measure", ret);
	} else if (o->verbose) {
		fputs(ret ? "already measured " : "measured ", stdout);
		fput_path(stdout, ev.filename);
		putchar('\n');
		ret = 0;
	} else {
		ret = 0;
	}
out:
	free(ima);
	free(evm);
	free(abs);
	uevm_file_close(&f);
	return ret;
}

static const char *const state_names[] = {
	[IMA_ML_CREATED] = "created",
	[IMA_ML_RESUMED] = "resumed",
	[IMA_ML_DROPPED] = "resumed without unproven entries at its end",
	[IMA_ML_ROTATED] = "the TPM was reset: old list moved to .prev, new list created",
	[IMA_ML_ADOPTED] = "created from the kernel's list",
};

static int do_add(const struct command *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "list", required_argument, NULL, 'l' },
		{ "tcti", required_argument, NULL, 't' },
		{ "template", required_argument, NULL, 'T' },
		{ "pcr", required_argument, NULL, 'p' },
		{ "hash-algo", required_argument, NULL, 'a' },
		{ "violation", required_argument, NULL, 'V' },
		{ "rotate-stale", no_argument, NULL, 'R' },
		{ "no-sync", no_argument, NULL, 'S' },
		{ "hmac-key", required_argument, NULL, 'k' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct add_opts o = { .algo = UEVM_HASH_SHA256 };
	struct common_opts key_opts;
	struct uevm_ctx *ctx = NULL;
	struct ima_ml_config cfg;
	struct ima_measurements *ml;
	const char *tmpl = NULL, **violations = NULL, *warning;
	int nviol = 0, pcr = -1, errors = 0, c, ret;
	char *end;
	long v;

	(void)cmd;
	ima_ml_config_init(&cfg);
	common_opts_init(&key_opts);
	cfg.tcti = getenv("UEVM_TCTI");
	if (cfg.tcti && (!*cfg.tcti || !strcmp(cfg.tcti, "none")))
		cfg.tcti = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "a:v", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			cfg.path = optarg;
			break;
		case 't':
			cfg.tcti = strcmp(optarg, "none") ? optarg : NULL;
			break;
		case 'T':
			tmpl = optarg;
			cfg.template_name = optarg;
			break;
		case 'p':
			v = strtol(optarg, &end, 10);
			if (*end || v < 0 || v >= IMA_ML_NUM_PCRS) {
				error_msg("--pcr needs a PCR from 0 to %d, not '%s'",
					  IMA_ML_NUM_PCRS - 1, optarg);
				free(violations);
				return EXIT_USAGE;
			}
			pcr = (int)v;
			cfg.pcr = (int)v;
			break;
		case 'a':
			o.algo = parse_bank(optarg);
			if (o.algo < 0) {
				free(violations);
				return EXIT_USAGE;
			}
			cfg.hash_algo = o.algo;
			break;
		case 'V': {
			const char **nv = realloc(violations, sizeof(*nv) * (size_t)(nviol + 1));

			if (!nv) {
				free(violations);
				return EXIT_ERROR;
			}
			violations = nv;
			violations[nviol++] = optarg;
			break;
		}
		case 'R':
			cfg.rotate_stale = true;
			break;
		case 'S':
			cfg.no_sync = true;
			break;
		case 'k':
			key_opts.key_spec = optarg;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			free(violations);
			return help_show("measurements add");
		default:
			free(violations);
			return opt_fail("measurements add", c, argc, argv, "a:v",
					longopts);
		}
	}
	if (!cfg.path) {
		error_msg("add needs --list FILE");
		free(violations);
		return EXIT_USAGE;
	}
	/* The key protects a list with software PCRs (its MAC record). */
	if (key_opts.key_spec && common_ctx(&key_opts, true, &ctx)) {
		free(violations);
		return EXIT_ERROR;
	}
	cfg.evm_ctx = ctx;
	uevm_clear_last_error();
	ret = ima_ml_open(&cfg, &ml);
	uevm_ctx_free(ctx);
	if (ret) {
		error_msg("%s", uevm_last_error());
		free(violations);
		return EXIT_ERROR;
	}
	warning = ima_ml_open_warning(ml);
	if (warning)
		error_msg("warning: %s", warning);
	if (o.verbose) {
		fput_path(stdout, cfg.path);
		printf(": %s (%zu entries%s)\n", state_names[ima_ml_open_state(ml)],
		       ima_ml_count(ml), ima_ml_has_tpm(ml) ? ", TPM" : ", software PCRs");
	}
	for (int i = 0; i < nviol; i++) {
		ret = ima_ml_add_violation(ml, violations[i], tmpl, pcr);
		if (ret < 0) {
			error_msg("violation for %s: %s", violations[i], uevm_last_error());
			errors++;
		}
	}
	for (int i = optind; i < argc; i++)
		errors += measure_path(ml, argv[i], tmpl, pcr, &o) != 0;
	ima_ml_close(ml);
	free(violations);
	return errors ? EXIT_ERROR : 0;
}

int cmd_measurements(const struct command *cmd, int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(const struct command *, int, char **);
	} subs[] = {
		{ "show", do_show },
		{ "replay", do_replay },
		{ "verify", do_verify },
		{ "add", do_add },
		{ "daemon", uevmd_measurements },	/* uevmd's list: cmd_uevmd.c */
	};

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return help_show(cmd->name);
	if (argc < 2) {
		usage(cmd, stderr);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].fn(cmd, argc - 1, argv + 1);
	error_msg("unknown measurements command '%s'", argv[1]);
	usage(cmd, stderr);
	return EXIT_USAGE;
}
