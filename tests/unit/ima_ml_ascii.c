// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ASCII measurement lists read back (ima_ml_parse_ascii): every built-in
 * template written by ima_entry_write_ascii and parsed again with the same
 * digests in every bank; lines laid out and hashed here with OpenSSL's
 * SHA1() (names with spaces, empty names, unknown templates, violations);
 * and each kind of malformed line refused with its line number and cause.
 */
#include <dirent.h>
#include <errno.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include "ima.h"
#include "test.h"

struct result {
	int n;
	int bad;			/* digest_ok false */
	char *ascii;			/* every entry again, sha1 digests */
	size_t ascii_len;
	FILE *fp;
	uint8_t sha384[8][48];		/* the first entries' sha384 digests */
	char name[8][300];		/* their first string field */
};

static int collect(const struct ima_template_entry *e, size_t index,
		   bool ok, void *arg)
{
	struct result *r = arg;

	if (index != (size_t)r->n)
		return -EINVAL;
	r->bad += !ok;
	if (r->n < 8) {
		ima_entry_calc_digest(e, UEVM_HASH_SHA384, r->sha384[r->n]);
		for (int i = 0; i < ima_entry_num_fields(e); i++) {
			const char *id = ima_entry_field_id(e, i);

			if (!strcmp(id, "n") || !strcmp(id, "n-ng")) {
				const struct ima_field_data *f = ima_entry_field(e, i);

				snprintf(r->name[r->n], sizeof(r->name[0]), "%.*s",
					 (int)f->len, (const char *)f->data);
				break;
			}
		}
	}
	r->n++;
	return ima_entry_write_ascii(e, UEVM_HASH_SHA1, r->fp);
}

static long parse(const char *text, size_t len, int algo, struct result *r)
{
	long n;

	memset(r, 0, sizeof(*r));
	r->fp = open_memstream(&r->ascii, &r->ascii_len);
	if (!r->fp)
		abort();
	n = ima_ml_parse_ascii((const uint8_t *)text, len, algo, collect, r);
	fclose(r->fp);
	return n;
}

static long parse_str(const char *text, struct result *r)
{
	return parse(text, strlen(text), IMA_ML_ASCII_AUTO, r);
}

/* ---- every template through the library's own writer ---------------------- */

static void templates_round_trip(void)
{
	static const char *const names[] = {
		"ima", "ima-ng", "ima-sig", "ima-ngv2", "ima-sigv2", "ima-buf",
		"ima-modsig", "d-ng|n-ng|sig|buf",
	};
	static const uint8_t sig[] = { 0x03, 0x02, 0x04, 0xaa, 0xbb, 0xcc, 0xdd };
	uint8_t d256[32], d1[20];
	struct ima_event_data ev = { 0 };

	memset(d256, 0x5a, sizeof(d256));
	memset(d1, 0x17, sizeof(d1));
	ev.filename = "/usr/bin/with space";
	ev.algo = UEVM_HASH_SHA256;
	ev.digest = d256;
	ev.digest_len = sizeof(d256);
	ev.sha1_digest = d1;
	ev.xattr_value = sig;
	ev.xattr_len = sizeof(sig);
	ev.buf = (const uint8_t *)"buffer\nwith\0bytes";
	ev.buf_len = 17;
	ev.ima_hash_algo = UEVM_HASH_SHA256;
	for (size_t t = 0; t < sizeof(names) / sizeof(names[0]); t++) {
		const struct ima_template_desc *d = ima_template_desc_lookup(names[t]);
		struct ima_template_entry *e = NULL;
		char *txt = NULL, msg[128];
		size_t len = 0;
		uint8_t want384[48];
		struct result r;
		FILE *fp;
		int algos[] = { UEVM_HASH_SHA1, UEVM_HASH_SHA256, UEVM_HASH_SHA512 };

		if (!d || ima_template_entry_new(d, &ev, t % 2 ? 10 : 7, &e)) {
			snprintf(msg, sizeof(msg), "%s: entry built", names[t]);
			CHECK(msg, 0);
			continue;
		}
		ima_entry_calc_digest(e, UEVM_HASH_SHA384, want384);
		for (size_t a = 0; a < 3; a++) {
			fp = open_memstream(&txt, &len);
			ima_entry_write_ascii(e, algos[a], fp);
			ima_entry_write_ascii(e, algos[a], fp);
			fclose(fp);
			snprintf(msg, sizeof(msg), "%s/%s: two lines parse, digests match",
				 names[t], uevm_hash_algo_name(algos[a]));
			CHECK(msg, parse(txt, len, IMA_ML_ASCII_AUTO, &r) == 2 && r.bad == 0);
			snprintf(msg, sizeof(msg), "%s/%s: other banks' digests as built",
				 names[t], uevm_hash_algo_name(algos[a]));
			CHECK(msg, !memcmp(r.sha384[1], want384, 48));
			if (algos[a] == UEVM_HASH_SHA1) {
				snprintf(msg, sizeof(msg), "%s: rendered back byte for byte",
					 names[t]);
				CHECK(msg, r.ascii_len == len && !memcmp(r.ascii, txt, len));
			}
			free(r.ascii);
			snprintf(msg, sizeof(msg), "%s/%s: with the bank given too",
				 names[t], uevm_hash_algo_name(algos[a]));
			CHECK(msg, parse(txt, len, algos[a], &r) == 2 && r.bad == 0);
			free(r.ascii);
			free(txt);
			txt = NULL;
		}
		ima_template_entry_free(e);
	}
}

/* ---- lines laid out here ---------------------------------------------------- */

/* An ima-sig/ima-ng line whose digest is SHA-1 over the fields as the
 * kernel records them; NAME goes in as given (spaces and all). */
static void line_ng(char *out, size_t size, int pcr, const char *tmpl,
		    const char *name, const char *sighex)
{
	uint8_t data[1024], dg[32], digest[20], sig[64];
	uint32_t len;
	size_t n = 0, nl = strlen(name) + 1;
	int siglen = sighex ? hex2bin(sighex, sig, sizeof(sig)) : -1;
	char hex[41], dhex[65];

	memset(dg, 0xc3, sizeof(dg));
	len = 8 + 32;
	memcpy(data + n, &len, 4);
	memcpy(data + n + 4, "sha256:", 8);
	memcpy(data + n + 12, dg, 32);
	n += 4 + len;
	len = (uint32_t)nl;
	memcpy(data + n, &len, 4);
	memcpy(data + n + 4, name, nl);
	n += 4 + nl;
	if (siglen >= 0) {
		len = (uint32_t)siglen;
		memcpy(data + n, &len, 4);
		memcpy(data + n + 4, sig, (size_t)siglen);
		n += 4 + (size_t)siglen;
	}
	SHA1(data, n, digest);
	bin2hex(digest, 20, hex);
	bin2hex(dg, 32, dhex);
	snprintf(out, size, "%2d %s %s sha256:%s %s%s%s\n", pcr, hex, tmpl, dhex,
		 name, siglen >= 0 ? " " : "", siglen >= 0 ? sighex : "");
}

static void names_with_spaces(void)
{
	char list[4096], l[1024];
	struct result r;

	list[0] = '\0';
	line_ng(l, sizeof(l), 10, "ima-sig", "/a b/c d", "");
	strcat(list, l);
	line_ng(l, sizeof(l), 10, "ima-sig", "/a b/c d 0302", "");
	strcat(list, l);
	line_ng(l, sizeof(l), 10, "ima-sig", "/a b", "0302aabb");
	strcat(list, l);
	line_ng(l, sizeof(l), 11, "ima-ng", "  two  spaces  ", NULL);
	strcat(list, l);
	line_ng(l, sizeof(l), 0, "ima-sig", "", "");
	strcat(list, l);
	CHECK("names with spaces: every line parses, digests match",
	      parse_str(list, &r) == 5 && r.bad == 0);
	CHECK("names with spaces: name before an empty sig keeps its spaces",
	      !strcmp(r.name[0], "/a b/c d"));
	CHECK("names with spaces: a hex-looking word before an empty sig is name",
	      !strcmp(r.name[1], "/a b/c d 0302"));
	CHECK("names with spaces: the last word is the sig", !strcmp(r.name[2], "/a b"));
	CHECK("names with spaces: leading and trailing spaces kept",
	      !strcmp(r.name[3], "  two  spaces  "));
	CHECK("names with spaces: an empty name", r.name[4][0] == '\0');
	CHECK("names with spaces: rendered back byte for byte",
	      r.ascii_len == strlen(list) && !memcmp(r.ascii, list, r.ascii_len));
	free(r.ascii);
}

static void newline_in_name(void)
{
	char l[1024];
	struct result r;

	/* The kernel prints the newline as it is: the line splits in two. */
	line_ng(l, sizeof(l), 10, "ima-ng", "/tmp/x\n10 0000", NULL);
	CHECK("newline in a name: the second half is refused",
	      parse_str(l, &r) == -EBADMSG && r.n == 1 &&
	      strstr(uevm_last_error(), "line 2: ") != NULL);
	CHECK("newline in a name: the first half fails its digest", r.bad == 1);
	free(r.ascii);
}

static void unknown_and_violation(void)
{
	static const uint8_t fields[] = { 2, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0,
					  1, 0, 0, 0, 0xff };
	uint8_t digest[20], pcr[20], buf[40];
	char hex[41], list[512];
	struct ima_ml_replay rp;
	struct result r;

	SHA1(fields, sizeof(fields), digest);
	bin2hex(digest, 20, hex);
	snprintf(list, sizeof(list), "10 %s some-tmpl 0102  ff\n"
		 " 9 0000000000000000000000000000000000000000 ima-ng "
		 "sha256:0000000000000000000000000000000000000000000000000000000000000000 /tmp/busy\n"
		 "12 %s no-fields\n", hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	CHECK("unknown templates: hex fields, empty ones too; digest matches",
	      parse_str(list, &r) == 3 && r.bad == 0);
	CHECK("unknown templates and violations: rendered back byte for byte",
	      r.ascii_len == strlen(list) && !memcmp(r.ascii, list, r.ascii_len));
	free(r.ascii);
	CHECK("violation: replayed as 0xff..",
	      ima_ml_replay_ascii((const uint8_t *)list, strlen(list), UEVM_HASH_SHA1,
				  false, &rp) == 0 && rp.violations == 1 &&
	      rp.entries == 3 && rp.pcr_mask == (1u << 9 | 1u << 10 | 1u << 12));
	memset(buf, 0, 20);
	memset(buf + 20, 0xff, 20);
	SHA1(buf, 40, pcr);
	CHECK("violation: PCR 9 = SHA1(zeros || ff..)", !memcmp(rp.pcr[9], pcr, 20));
	memcpy(buf + 20, digest, 20);
	SHA1(buf, 40, pcr);
	CHECK("unknown template: PCR 10 = SHA1(zeros || its digest)",
	      !memcmp(rp.pcr[10], pcr, 20));
	CHECK("empty list: no entries", parse("", 0, IMA_ML_ASCII_AUTO, &r) == 0);
	free(r.ascii);
	CHECK("form detection: ASCII", ima_ml_is_ascii((const uint8_t *)list, strlen(list)));
	CHECK("form detection: binary", !ima_ml_is_ascii((const uint8_t *)"\x0a\0\0\0", 4));
	CHECK("form detection: big-endian binary", !ima_ml_is_ascii((const uint8_t *)"\0\0\0\x0a", 4));
}

/* A line a Linux kernel printed (quoted in a public linux-security-module
 * patch posting, 2024): its template digest must match the data rebuilt
 * from it, and the replay of PCR 11 is SHA1(zeros || that digest). */
static void kernel_line(void)
{
	static const char line[] =
		"11 50b5a68bea0776a84eef6725f17ce474756e51c0 ima-ng "
		"sha256:15e1efee080fe54f5d7404af7e913de01671e745ce55215d89f3d6521d3884f0 "
		"/root/cat\n";
	uint8_t buf[40] = { 0 }, pcr[20];
	struct ima_ml_replay rp;
	struct result r;

	CHECK("kernel's line: parses, template digest matches",
	      parse_str(line, &r) == 1 && r.bad == 0);
	CHECK("kernel's line: rendered back byte for byte",
	      r.ascii_len == strlen(line) && !memcmp(r.ascii, line, r.ascii_len));
	free(r.ascii);
	hex2bin("50b5a68bea0776a84eef6725f17ce474756e51c0", buf + 20, 20);
	SHA1(buf, 40, pcr);
	CHECK("kernel's line: replayed into PCR 11",
	      ima_ml_replay_ascii((const uint8_t *)line, strlen(line), UEVM_HASH_SHA1,
				  false, &rp) == 0 && rp.pcr_mask == 1u << 11 &&
	      !memcmp(rp.pcr[11], pcr, 20));
}

/* ---- malformed lines ------------------------------------------------------------ */

static void refused(const char *what, const char *line2, int algo, const char *cause)
{
	char good[1024], list[4096], msg[256];
	struct result r;
	long n;

	line_ng(good, sizeof(good), 10, "ima-sig", "/bin/ok", "");
	snprintf(list, sizeof(list), "%s%s", good, line2);
	n = parse(list, strlen(list), algo, &r);
	free(r.ascii);
	snprintf(msg, sizeof(msg), "refused (%s): -EBADMSG after one entry", what);
	CHECK(msg, n == -EBADMSG && r.n == 1);
	snprintf(msg, sizeof(msg), "refused (%s): 'line 2: %s' (got '%s')", what,
		 cause, uevm_last_error());
	CHECK(msg, !strncmp(uevm_last_error(), "line 2: ", 8) &&
	      strstr(uevm_last_error(), cause) != NULL);
}

#define H40 "0123456789abcdef0123456789abcdef01234567"
#define D64 "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void malformed(void)
{
	char longname[400], line[600];
	struct result r;

	refused("no newline", "10 " H40 " ima-ng " D64 " /x", IMA_ML_ASCII_AUTO,
		"no newline at its end");
	refused("empty line", "\n", IMA_ML_ASCII_AUTO, "PCR number");
	refused("PCR not padded", "5 " H40 " ima-ng " D64 " /x\n", IMA_ML_ASCII_AUTO,
		"PCR number");
	refused("PCR with a sign", "-1 " H40 " ima-ng " D64 " /x\n", IMA_ML_ASCII_AUTO,
		"PCR number");
	refused("PCR 24", "24 " H40 " ima-ng " D64 " /x\n", IMA_ML_ASCII_AUTO,
		"PCR 24 out of range");
	refused("digest length", "10 " H40 "0 ima-ng " D64 " /x\n", IMA_ML_ASCII_AUTO,
		"template digest of 41 hex digits");
	refused("digest not sha1 when forced", "10 " H40 H40 "012345678901234567890123 ima-ng "
		D64 " /x\n", UEVM_HASH_SHA1, "(a sha1 digest has 40)");
	refused("uppercase digest", "10 0123456789ABCDEF0123456789abcdef01234567 ima-ng "
		D64 " /x\n", IMA_ML_ASCII_AUTO, "uppercase hex digit");
	refused("digest not hex", "10 0123456789xbcdef0123456789abcdef01234567 ima-ng "
		D64 " /x\n", IMA_ML_ASCII_AUTO, "not a hex digit");
	refused("no template name", "10 " H40 "\n", IMA_ML_ASCII_AUTO, "no template name");
	refused("empty template name", "10 " H40 "  " D64 " /x\n", IMA_ML_ASCII_AUTO,
		"template name of 0 bytes");
	refused("too few fields", "10 " H40 " ima-sig " D64 "\n", IMA_ML_ASCII_AUTO,
		"template 'ima-sig' has 3 fields, the line fewer");
	refused("d-ng without algo", "10 " H40 " ima-ng 0123abcd /x\n", IMA_ML_ASCII_AUTO,
		"field 'd-ng': no '<algo>:'");
	refused("d-ng digest odd", "10 " H40 " ima-ng sha256:012 /x\n", IMA_ML_ASCII_AUTO,
		"field 'd-ng': digest: odd number of hex digits");
	refused("sig not hex", "10 " H40 " ima-sig " D64 " /x 03zz\n", IMA_ML_ASCII_AUTO,
		"field 'sig': not a hex digit");
	refused("CR line end", "10 " H40 " ima-sig " D64 " /x 0302\r\n", IMA_ML_ASCII_AUTO,
		"carriage return");
	refused("'ima' digest length", "10 " H40 " ima 0123 /x\n", IMA_ML_ASCII_AUTO,
		"'ima' entry digest of 4 hex digits");
	memset(longname, 'n', 256);
	longname[256] = '\0';
	snprintf(line, sizeof(line), "10 " H40 " ima " H40 " /%s\n", longname);
	refused("'ima' name too long", line, IMA_ML_ASCII_AUTO,
		"'ima' entry name of 257 bytes");
	refused("uid not decimal", "10 " H40 " d-ng|n-ng|iuid " D64 " /x 12a\n",
		IMA_ML_ASCII_AUTO, "field 'iuid': not a decimal number");
	refused("uid leading zero", "10 " H40 " d-ng|n-ng|iuid " D64 " /x 012\n",
		IMA_ML_ASCII_AUTO, "field 'iuid': leading zero");
	refused("uid past 32 bits", "10 " H40 " d-ng|n-ng|iuid " D64 " /x 4294967296\n",
		IMA_ML_ASCII_AUTO, "field 'iuid': more than 32 bits");
	refused("mode past 16 bits", "10 " H40 " d-ng|n-ng|imode " D64 " /x 65536\n",
		IMA_ML_ASCII_AUTO, "field 'imode': more than 16 bits");
	refused("unknown template, bad hex", "10 " H40 " other 01 0g\n",
		IMA_ML_ASCII_AUTO, "template 'other', field '?': not a hex digit");
	refused("unknown template, 16 fields", "10 " H40 " other 01 02 03 04 05 06 07 08 "
		"09 0a 0b 0c 0d 0e 0f 10\n", IMA_ML_ASCII_AUTO,
		"unknown template 'other' with 16 fields (at most 15)");
	snprintf(line, sizeof(line), "10 " H40 " ima-ng " D64 " /x%cy\n", 0);
	{
		char good[1024], list[4096];
		size_t gl, ll = strlen(line) + 1 + strlen(line + strlen(line) + 1);

		line_ng(good, sizeof(good), 10, "ima-ng", "/ok", NULL);
		gl = strlen(good);
		memcpy(list, good, gl);
		memcpy(list + gl, line, ll);
		CHECK("refused (NUL byte): line 2",
		      parse(list, gl + ll, IMA_ML_ASCII_AUTO, &r) == -EBADMSG &&
		      !strcmp(uevm_last_error(), "line 2: contains a NUL byte"));
		free(r.ascii);
	}
	CHECK("unknown digest algorithm refused",
	      parse_str("", &r) == 0 &&
	      ima_ml_parse_ascii((const uint8_t *)"", 0, 99, collect, &r) == -EINVAL);
	free(r.ascii);
}

/* ---- the fuzzer's seeds (fuzz/gen-corpus.sh) are what they claim ------------ */

static void seeds(void)
{
	DIR *d = opendir("fuzz/corpus/ima_ml_ascii");
	struct dirent *de;
	int lists = 0;

	CHECK("seeds: fuzz/corpus/ima_ml_ascii exists (run from the top)", d != NULL);
	while (d && (de = readdir(d))) {
		bool refuse = !strcmp(de->d_name, "edge-cut-short") ||
			      !strcmp(de->d_name, "edge-bad-pcr");
		char path[512], msg[512], buf[8192];
		struct result r;
		size_t len;
		FILE *fp;
		long n;

		if (de->d_name[0] == '.' || !strncmp(de->d_name, "regress-", 8))
			continue;
		snprintf(path, sizeof(path), "fuzz/corpus/ima_ml_ascii/%s", de->d_name);
		fp = fopen(path, "rb");
		if (!fp)
			continue;
		len = fread(buf, 1, sizeof(buf), fp);
		fclose(fp);
		n = parse(buf, len, IMA_ML_ASCII_AUTO, &r);
		free(r.ascii);
		snprintf(msg, sizeof(msg), "seeds: %s %s", de->d_name,
			 refuse ? "is refused" : "parses, digests match");
		CHECK(msg, refuse ? n == -EBADMSG : n >= (de->d_name[0] == 'e' ? 1 : 2) && r.bad == 0);
		lists += !strncmp(de->d_name, "uevm-", 5);
	}
	if (d)
		closedir(d);
	CHECK("seeds: lists of every template, sha1/sha256", lists >= 12);
}

int main(void)
{
	seeds();
	templates_round_trip();
	names_with_spaces();
	newline_in_name();
	kernel_line();
	unknown_and_violation();
	malformed();
	TEST_EXIT();
}
