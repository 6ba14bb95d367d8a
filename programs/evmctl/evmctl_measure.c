// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * evmctl mode: ima_measurement (replay a binary measurement list against
 * PCR values, check template digests and ima-sig signatures) and
 * ima_boot_aggregate.  The list is parsed by libuevm's measurement code
 * (lib/ima/ima.h); the replay, the bank bookkeeping and the messages
 * follow evmctl 1.6.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "evmctl.h"
#include "ima.h"

#define NUM_BANKS 2
/* The PCR IMA measures into (CONFIG_IMA_MEASURE_PCR_IDX): always compared,
 * also when the list has no entry for it. */
#define IMA_PCR IMA_ML_DEFAULT_PCR

struct bank {
	const char *name;
	int algo;
	int size;
	bool supported;
	uint8_t digest[UEVM_MAX_DIGEST_SIZE];
	uint8_t pcr[EV_NUM_PCRS][UEVM_MAX_DIGEST_SIZE];
};

static void init_banks(struct bank *b)
{
	static const char *const names[NUM_BANKS] = { "sha1", "sha256" };

	memset(b, 0, sizeof(*b) * NUM_BANKS);
	for (int i = 0; i < NUM_BANKS; i++) {
		b[i].name = names[i];
		b[i].algo = uevm_hash_algo_by_name(names[i]);
		b[i].size = (int)uevm_hash_algo_digest_size(b[i].algo);
		b[i].supported = true;
	}
}

static int read_file_pcrs(struct bank *tpm)
{
	for (int i = 0; i < NUM_BANKS; i++)
		tpm[i].supported = false;
	for (int i = 0; i < ev.npcrfile; i++) {
		char spec[4096];
		const char *alg = "sha1", *path = spec;
		char *comma;
		struct stat st;
		int bank = -1, result;
		FILE *fp;

		snprintf(spec, sizeof(spec), "%s", ev.pcrfile[i]);
		comma = strchr(spec, ',');
		if (comma) {
			*comma = '\0';
			alg = spec;
			path = comma + 1;
		}
		for (int j = 0; j < NUM_BANKS; j++)
			if (!strcmp(tpm[j].name, alg))
				bank = j;
		if (bank < 0) {
			log_err("Unknown algorithm '%s'\n", alg);
			return -1;
		}
		if (stat(path, &st) < 0) {
			log_err("Could not stat '%s'\n", path);
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			log_err("PCR file: not a regular file or link to regular file\n");
			return -1;
		}
		fp = fopen(path, "re");
		if (!fp) {
			log_err("Could not open '%s'\n", path);
			return -1;
		}
		result = ev_pcr_lines_read(fp, tpm[bank].size, tpm[bank].pcr);
		fclose(fp);
		if (result < 0)
			return result;
		tpm[bank].supported = true;
	}
	return 0;
}

static int read_sysfs_pcrs(struct bank *tpm)
{
	FILE *fp = fopen("/sys/class/tpm/tpm0/device/pcrs", "re");

	if (!fp)
		fp = fopen("/sys/class/misc/tpm0/device/pcrs", "re");
	if (!fp)
		return -1;
	if (ev_pcr_lines_read(fp, tpm[0].size, tpm[0].pcr) < 0) {
		fclose(fp);
		return -1;
	}
	fclose(fp);
	tpm[0].supported = true;
	tpm[1].supported = false;
	return 0;
}

static int read_sysfs_tpm2_pcrs(struct bank *tpm)
{
	bool any = false;

	for (int j = 0; j < NUM_BANKS; j++) {
		tpm[j].supported = true;
		for (int i = 0; i < EV_NUM_PCRS && tpm[j].supported; i++) {
			char path[64], buf[UEVM_MAX_DIGEST_SIZE * 2 + 2];
			FILE *fp;

			snprintf(path, sizeof(path), "/sys/class/tpm/tpm0/pcr-%s/%d",
				 tpm[j].name, i);
			fp = fopen(path, "re");
			if (!fp || !fgets(buf, sizeof(buf), fp) ||
			    ev_unhex_pcr(tpm[j].pcr[i], buf, tpm[j].size))
				tpm[j].supported = false;
			if (fp)
				fclose(fp);
		}
		any |= tpm[j].supported;
	}
	if (!any)
		for (int j = 0; j < NUM_BANKS; j++)
			tpm[j].supported = true;
	return any ? 0 : 1;
}

/* A TPM 2.0 through libuevm's TSS access: the TCTI UEVM_TCTI names,
 * else the TSS loader's default, as evmctl's ESYS context without a TCTI
 * (tabrmd, /dev/tpmrm0, /dev/tpm0, swtpm then mssim on localhost). */
static int read_tss_pcrs(struct bank *tpm)
{
	const char *tcti = getenv("UEVM_TCTI");
	struct ima_tpm *t;
	bool any = false;

	if (tcti && !*tcti)
		tcti = NULL;
	/* The loader logs every TCTI it tries and fails; that no TPM is
	 * found is evmctl's own message.  TSS2_LOG, when set, wins. */
	if (ev.verbose <= EV_LOG_INFO)
		setenv("TSS2_LOG", "all+none", 0);
	if (ima_tpm_open(tcti, &t)) {
		log_debug("Failed to read TPM 2.0 PCRs (%s)\n", uevm_last_error());
		uevm_clear_last_error();
		return 1;
	}
	for (int j = 0; j < NUM_BANKS; j++) {
		tpm[j].supported = ima_tpm_has_bank(t, tpm[j].algo);
		for (int i = 0; i < EV_NUM_PCRS && tpm[j].supported; i++)
			if (ima_tpm_pcr_read(t, i, tpm[j].algo, tpm[j].pcr[i]) < 0)
				tpm[j].supported = false;
		any |= tpm[j].supported;
	}
	ima_tpm_close(t);
	return any ? 0 : 1;
}

static int read_tpm_banks(struct bank *tpm)
{
	if (ev.npcrfile)
		return read_file_pcrs(tpm);
	if (read_sysfs_pcrs(tpm) == 0)
		return 0;
	if (ev.hwtpm && read_sysfs_tpm2_pcrs(tpm) == 0)
		return 0;
	return read_tss_pcrs(tpm);
}

static void extend(struct bank *b, int pcr)
{
	uint8_t in[2 * UEVM_MAX_DIGEST_SIZE];

	memcpy(in, b->pcr[pcr], (size_t)b->size);
	memcpy(in + b->size, b->digest, (size_t)b->size);
	uevm_hash_buffer(b->algo, in, 2 * (size_t)b->size, b->pcr[pcr]);
}

static const uint8_t zero[UEVM_MAX_DIGEST_SIZE];

struct replay {
	struct uevm_certset *keys;
	struct bank calc[NUM_BANKS], padded[NUM_BANKS], tpm[NUM_BANKS];
	unsigned int calc_mask, padded_mask;
	uint32_t pcrs_listed;		/* PCRs the entries read so far extend */
	bool tpmbanks, first, is_ima, invalid_template_digest;
	unsigned long entry_num;
	int err, err_padded;
};

/*
 * compare_tpm_banks: 0 when every PCR extended here matches the TPM's.
 * The IMA PCR is compared even when no entry extended it: a list that
 * leaves it out must not match a TPM where IMA measured something.
 */
static int compare_banks(struct replay *r, struct bank *b, int c)
{
	int ret = 0;

	if (!b[c].supported || !r->tpm[c].supported)
		return 0;
	for (int j = 0; j < EV_NUM_PCRS; j++) {
		if (j != IMA_PCR && !(r->pcrs_listed & (1u << j)))
			continue;
		if (memcmp(b[c].pcr[j], r->tpm[c].pcr[j], (size_t)b[c].size))
			ret = 1;
		if ((!ret && ev.verbose <= EV_LOG_INFO) ||
		    (ret && ev.verbose <= EV_LOG_DEBUG))
			continue;
		log_info("%s: PCRAgg  %d: ", b[c].name, j);
		ev_log_dump(EV_LOG_INFO, b[c].pcr[j], (size_t)b[c].size, true);
		log_info("%s: TPM PCR-%d: ", r->tpm[c].name, j);
		ev_log_dump(EV_LOG_INFO, r->tpm[c].pcr[j], (size_t)r->tpm[c].size, true);
		if (!ret)
			log_info("%s PCR-%d: succeed at entry %lu\n", b[c].name, j,
				 r->entry_num);
		else
			log_info("%s: PCRAgg %d does not match TPM PCR-%d\n",
				 b[c].name, j, j);
	}
	return ret;
}

/* Say so when the failure is an IMA PCR the list never extends. */
static void report_unlisted_ima_pcr(const struct replay *r)
{
	if (r->pcrs_listed & (1u << IMA_PCR))
		return;
	for (int c = 0; c < NUM_BANKS; c++)
		if (r->tpm[c].supported &&
		    memcmp(r->tpm[c].pcr[IMA_PCR], zero, (size_t)r->tpm[c].size))
			log_info("%s: TPM PCR-%d is not zero but the list has no "
				 "entry for it\n", r->tpm[c].name, IMA_PCR);
}

static void extend_banks(struct replay *r, const struct ima_template_entry *e)
{
	int pcr = ima_entry_pcr(e);

	for (int i = 0; i < NUM_BANKS; i++) {
		struct bank *b = &r->calc[i], *p = &r->padded[i];

		if (!b->supported)
			continue;
		if (ima_entry_is_violation(e)) {
			/* Violations are 0x00 in the list and 0xff.. in the
			 * TPM: only --ignore-violations makes them match. */
			memset(b->digest, ev.ignore_violations ? 0xff : 0, (size_t)b->size);
			memset(p->digest, 0, (size_t)p->size);
			if (ev.ignore_violations)
				memset(p->digest, 0xff, IMA_SHA1_DIGEST_SIZE);
		} else {
			if (ima_entry_calc_digest(e, b->algo, b->digest) < 0) {
				b->supported = false;
				continue;
			}
			memset(p->digest, 0, (size_t)p->size);
			memcpy(p->digest, ima_entry_digest(e), IMA_SHA1_DIGEST_SIZE);
		}
		extend(b, pcr);
		extend(p, pcr);
	}
}

static void show_entry(struct replay *r, const struct ima_template_entry *e)
{
	const struct ima_field_data *d, *n, *sig = NULL, *buf = NULL;
	const char *name = ima_entry_template_name(e);
	size_t alen;
	int nf = ima_entry_num_fields(e);

	if (r->is_ima) {
		if (ev.verbose <= EV_LOG_INFO)
			return;
		d = ima_entry_field(e, 0);
		n = ima_entry_field(e, 1);
		log_info("%d ", ima_entry_pcr(e));
		ev_log_dump(EV_LOG_INFO, ima_entry_digest(e), IMA_SHA1_DIGEST_SIZE, false);
		log_info(" %s ", name);
		ev_log_dump(EV_LOG_INFO, d->data, d->len, false);
		log_info(" %.*s\n", (int)n->len, (const char *)n->data);
		return;
	}
	if (nf < 2)
		return;
	d = ima_entry_field(e, 0);
	n = ima_entry_field(e, 1);
	if ((!strcmp(name, "ima-sig") || !strcmp(name, "ima-sigv2")) && nf > 2 &&
	    ima_entry_field(e, 2)->len)
		sig = ima_entry_field(e, 2);
	else if (!strcmp(name, "ima-buf") && nf > 2 && ima_entry_field(e, 2)->len)
		buf = ima_entry_field(e, 2);
	/* d-ng: "<algo>:" NUL digest */
	alen = strnlen((const char *)d->data, d->len ? d->len - 1 : 0) + 1;
	if (ev.verbose > EV_LOG_INFO) {
		log_info("%d ", ima_entry_pcr(e));
		ev_log_dump(EV_LOG_INFO, ima_entry_digest(e), IMA_SHA1_DIGEST_SIZE, false);
		log_info(" %s %s", name, (const char *)d->data);
		ev_log_dump(EV_LOG_INFO, d->data + alen, d->len - alen, false);
		log_info(" %.*s", (int)n->len, (const char *)n->data);
		if (buf) {
			log_info(" ");
			ev_log_dump(EV_LOG_INFO, buf->data, buf->len, false);
		}
	}
	if (sig) {
		char path[4097];
		int err;

		if (ev.verbose > EV_LOG_INFO) {
			log_info(" ");
			ev_log_dump(EV_LOG_INFO, sig->data, sig->len, true);
		}
		snprintf(path, sizeof(path), "%.*s", (int)n->len, (const char *)n->data);
		err = ev_ima_verify_signature2(r->keys, path, sig->data, (int)sig->len,
					       ev.verify_list_sig ? d->data + alen : NULL,
					       (int)(d->len - alen));
		if (!err && ev.verbose > EV_LOG_INFO)
			log_info("%s: verification is OK\n", path);
	} else if (ev.verbose > EV_LOG_INFO) {
		log_info("\n");
	}
}

static int entry_cb(const struct ima_template_entry *e, size_t index,
		    bool digest_ok, void *arg)
{
	struct replay *r = arg;
	bool is_ima = !strcmp(ima_entry_template_name(e), "ima");

	(void)index;
	r->entry_num++;
	if (ima_entry_pcr(e) < 0 || ima_entry_pcr(e) >= EV_NUM_PCRS) {
		log_err("Invalid PCR %d.\n", ima_entry_pcr(e));
		exit(1);
	}
	if (!r->first && is_ima != r->is_ima) {
		log_err("Mixed measurement list containing \"ima\" and other template formats not supported.\n");
		return -ECANCELED;
	}
	r->first = false;
	r->is_ima = is_ima;
	r->pcrs_listed |= 1u << ima_entry_pcr(e);
	extend_banks(r, e);
	r->err = digest_ok ? 0 : 1;
	if (!digest_ok) {
		r->invalid_template_digest = true;
		if (ev.verbose > EV_LOG_INFO)
			log_info("Failed to verify template data digest(line %lu).\n",
				 r->entry_num);
	}
	show_entry(r, e);
	if (!r->tpmbanks)
		return 0;
	for (int c = 0; c < NUM_BANKS; c++) {
		if (!(r->calc_mask & (1u << c)))
			continue;
		/* The list may hold more than the PCRs: compare each time. */
		r->err = compare_banks(r, r->calc, c);
		if (!r->err)
			r->calc_mask ^= 1u << c;
	}
	if (!r->calc_mask)
		return 1;
	for (int c = 0; c < NUM_BANKS; c++) {
		if (!(r->padded_mask & (1u << c)))
			continue;
		r->err_padded = compare_banks(r, r->padded, c);
		if (!r->err_padded)
			r->padded_mask ^= 1u << c;
	}
	return r->padded_mask ? 0 : 1;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/*
 * evmctl stops at once (exit 1) on an entry header with a PCR beyond 23
 * or a name over 255 bytes; libuevm's parser refuses those lists too, with
 * its own words.  Walk the entries' framing up to the first such header,
 * so that those lists end as evmctl's do.
 */
static void check_list_headers(const uint8_t *p, size_t len)
{
	size_t off = 0;
	bool ima = false, first = true;

	while (len - off >= 28) {
		uint32_t pcr = get_le32(p + off), nlen = get_le32(p + off + 24);
		uint32_t tlen;

		if (pcr >= EV_NUM_PCRS) {
			log_err("Invalid PCR %d.\n", (int)pcr);
			exit(1);
		}
		if (nlen > 255) {
			log_err("%d ERROR: event name too long!\n", (int)nlen);
			exit(1);
		}
		off += 28;
		if (len - off < nlen)
			return;
		if (first)
			ima = nlen == 3 && !memcmp(p + off, "ima", 3);
		first = false;
		off += nlen;
		if (ima) {
			/* digest, then a name its length prefixes */
			if (len - off < 24)
				return;
			tlen = get_le32(p + off + 20);
			off += 24;
		} else {
			if (len - off < 4)
				return;
			tlen = get_le32(p + off);
			off += 4;
		}
		if (len - off < tlen)
			return;
		off += tlen;
	}
}

static int ima_measurement(const char *file)
{
	struct replay *r = calloc(1, sizeof(*r));
	uint8_t *buf = NULL;
	struct stat st;
	size_t len = 0;
	long n;
	int fd, err = -1;

	if (!r)
		return -1;
	init_banks(r->calc);
	init_banks(r->padded);
	init_banks(r->tpm);
	r->first = true;
	r->err = -1;
	r->err_padded = -1;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		ev.err_no = errno;
		log_err("Failed to open measurement file: %s\n", file);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		/* evmctl reads nothing from it and reports what it has. */
		log_err("Failed to read measurement file: %s: %s\n", file,
			strerror(EISDIR));
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	while (buf && len < (size_t)st.st_size) {
		ssize_t k = read(fd, buf + len, (size_t)st.st_size - len);

		if (k <= 0)
			break;
		len += (size_t)k;
	}
	/* Without public keys signatures cannot be checked, the PCRs can. */
	ev_init_public_keys(ev.keyfile ? ev.keyfile : EV_DEFAULT_CERT, &r->keys);
	/* The PCRs are read before the list, so that the list holds at
	 * least every measurement they include. */
	r->tpmbanks = read_tpm_banks(r->tpm) == 0;
	r->calc_mask = (1u << NUM_BANKS) - 1;
	r->padded_mask = r->calc_mask;
	for (int c = 0; c < NUM_BANKS; c++) {
		if (ev.verify_bank && strcmp(r->padded[c].name, ev.verify_bank)) {
			r->calc_mask ^= 1u << c;
			r->padded_mask ^= 1u << c;
			break;
		}
	}
	n = ima_ml_parse_binary(buf, len, UEVM_HASH_SHA1, entry_cb, r);
	if (n == -ECANCELED)
		goto out;
	if (n < 0) {
		check_list_headers(buf, len);
		log_err("%s\n", uevm_last_error());
		goto out;
	}
	if (!n) {
		/* Not even boot_aggregate: it proves nothing (error, 125). */
		log_err("%s: the measurement list is empty\n", file);
		goto out;
	}
	err = r->err;
	if (!r->tpmbanks) {
		log_info("Failed to read any TPM PCRs\n");
		/* evmctl 1.6.2 then exits with the last entry's template
		 * check, 0 for a well-formed list: nothing was compared with
		 * a PCR, so that is an error here (125). */
		log_err("%s: not verified: no TPM PCRs to compare with\n", file);
		err = -1;
	} else if (!err) {
		log_info("Matched per TPM bank calculated digest(s).\n");
	} else if (!r->err_padded) {
		log_info("Matched SHA1 padded TPM digest(s).\n");
		err = 0;
	} else {
		log_info("Failed to match per TPM bank or SHA1 padded TPM digest(s).\n");
		report_unlisted_ima_pcr(r);
	}
	if (r->invalid_template_digest) {
		log_info("Failed to verify template data digest.\n");
		err = 1;
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	uevm_certset_free(r->keys);
	free(r);
	return err;
}

int ev_cmd_ima_measurement(const struct ev_command *cmd)
{
	const char *file = ev_next_arg();

	if (!file) {
		log_err("Parameters missing\n");
		ev_print_usage(cmd);
		return -1;
	}
	return ima_measurement(file);
}

/* ---- ima_boot_aggregate -------------------------------------------------------------- */

/* The TPM 1.2 event log FILE replayed into B (evmctl_eventlog.c). */
static int read_bios_log(const char *file, struct bank *b)
{
	struct stat st;
	FILE *fp;
	int err;

	if (stat(file, &st) < 0)
		return 1;
	if (!S_ISREG(st.st_mode)) {
		log_info("Bios event log: not a regular file or link to regular file\n");
		return 1;
	}
	fp = fopen(file, "re");
	if (!fp)
		return 1;
	err = ev_bios_log_read(fp, b->pcr);
	fclose(fp);
	return err;
}

int ev_cmd_ima_bootaggr(const struct ev_command *cmd)
{
	struct bank banks[NUM_BANKS];
	const char *file = ev_next_arg();

	(void)cmd;
	init_banks(banks);
	if (file) {
		/* TPM 1.2 only has SHA-1. */
		banks[1].supported = false;
		if (read_bios_log(file, &banks[0])) {
			log_err("Failed reading the TPM 1.2 event log (%s)\n", file);
			return -1;
		}
	} else if (read_tpm_banks(banks) != 0) {
		log_info("Failed to read any TPM PCRs\n");
		return -1;
	}
	for (int i = 0; i < NUM_BANKS; i++) {
		uint8_t in[10 * UEVM_MAX_DIGEST_SIZE];
		int npcr = strcmp(banks[i].name, "sha1") ? 10 : 8;

		if (!banks[i].supported)
			continue;
		/* SHA-1: PCRs 0-7 only, to stay unambiguous; others 0-9. */
		for (int j = 0; j < npcr; j++)
			memcpy(in + j * banks[i].size, banks[i].pcr[j], (size_t)banks[i].size);
		uevm_hash_buffer(banks[i].algo, in, (size_t)(npcr * banks[i].size),
				 banks[i].digest);
		printf("%s:", banks[i].name);
		for (int j = 0; j < banks[i].size; j++)
			printf("%02x", banks[i].digest[j]);
		putchar('\n');
	}
	return 0;
}
