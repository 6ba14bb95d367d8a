// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Template fields, template digests and list renderings, against bytes this
 * test lays out itself from the kernel's documented formats and hashes with
 * OpenSSL's one-shot SHA1()/SHA256() (not the library's hashing path).
 */
#include <errno.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include "ima.h"
#include "test.h"

/* A growing byte string the expected values are built in. */
struct bytes {
	unsigned char b[8192];
	size_t n;
};

static void put(struct bytes *s, const void *p, size_t n)
{
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void put_u32(struct bytes *s, uint32_t v)
{
	put(s, &v, 4);	/* native endian, as the kernel writes */
}

/* A field of a non-'ima' template: u32 length, data. */
static void put_field(struct bytes *s, const void *p, size_t n)
{
	put_u32(s, (uint32_t)n);
	put(s, p, n);
}

static bool field_is(const struct ima_template_entry *e, int i,
		     const void *data, size_t len)
{
	const struct ima_field_data *f = ima_entry_field(e, i);

	return f && f->len == len && (!len || !memcmp(f->data, data, len));
}

static char *render(struct ima_template_entry *e, int algo, bool ascii,
		    size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);

	if (ascii)
		ima_entry_write_ascii(e, algo, fp);
	else
		ima_entry_write_binary(e, algo, fp);
	fclose(fp);
	return buf;
}

static unsigned char file_digest[32], file_sha1[20];

static void test_ima_ng(void)
{
	const char *path = "/usr/bin/my tool";	/* the space becomes '_' */
	struct ima_event_data ev = {
		.filename = path, .algo = UEVM_HASH_SHA256,
		.digest = file_digest, .digest_len = 32,
	};
	struct bytes f1 = { .n = 0 }, f2 = { .n = 0 }, tmpl = { .n = 0 };
	struct bytes bin = { .n = 0 };
	unsigned char sha1[20], sha256[32], got[64];
	struct ima_template_entry *e;
	char hex[200], line[400];
	size_t len;
	char *out;
	int ret;

	put(&f1, "sha256:", 8);		/* with its NUL */
	put(&f1, file_digest, 32);
	put(&f2, "/usr/bin/my_tool", 17);
	put_field(&tmpl, f1.b, f1.n);
	put_field(&tmpl, f2.b, f2.n);
	SHA1(tmpl.b, tmpl.n, sha1);
	SHA256(tmpl.b, tmpl.n, sha256);

	ret = ima_template_entry_new(ima_template_desc_lookup("ima-ng"), &ev, 10, &e);
	CHECK("ima-ng: entry built", ret == 0);
	if (ret)
		return;
	CHECK("ima-ng: d-ng is \"sha256:\" NUL digest", field_is(e, 0, f1.b, f1.n));
	CHECK("ima-ng: n-ng is the name with '_' for spaces, NUL-terminated",
	      field_is(e, 1, f2.b, f2.n));
	CHECK("ima-ng: SHA-1 template digest over {u32 len, data} fields",
	      !memcmp(ima_entry_digest(e), sha1, 20));
	CHECK("ima-ng: SHA-256 bank digest over the same bytes",
	      ima_entry_calc_digest(e, UEVM_HASH_SHA256, got) == 32 &&
	      !memcmp(got, sha256, 32));
	CHECK("ima-ng: template data length",
	      ima_entry_template_data_len(e) == tmpl.n);

	/* binary_runtime_measurements */
	put_u32(&bin, 10);
	put(&bin, sha1, 20);
	put_u32(&bin, 6);
	put(&bin, "ima-ng", 6);
	put_u32(&bin, (uint32_t)tmpl.n);
	put(&bin, tmpl.b, tmpl.n);
	out = render(e, UEVM_HASH_SHA1, false, &len);
	CHECK("ima-ng: binary entry byte-exact", len == bin.n && !memcmp(out, bin.b, len));
	free(out);

	/* binary_runtime_measurements_sha256: the bank's digest instead */
	out = render(e, UEVM_HASH_SHA256, false, &len);
	CHECK("ima-ng: sha256 binary entry carries the SHA-256 template digest",
	      len == bin.n + 12 && !memcmp(out + 4, sha256, 32) &&
	      !memcmp(out + 36, bin.b + 24, bin.n - 24));
	free(out);

	/* ascii_runtime_measurements */
	bin2hex(sha1, 20, hex);
	snprintf(line, sizeof(line), "10 %s ima-ng sha256:", hex);
	bin2hex(file_digest, 32, hex);
	strcat(line, hex);
	strcat(line, " /usr/bin/my_tool\n");
	out = render(e, UEVM_HASH_SHA1, true, &len);
	CHECK("ima-ng: ASCII line byte-exact", !strcmp(out, line));
	free(out);
	ima_template_entry_free(e);

	/* A PCR other than 10 is printed with %2d. */
	ret = ima_template_entry_new(ima_template_desc_lookup("ima-ng"), &ev, 3, &e);
	out = render(e, UEVM_HASH_SHA1, true, &len);
	CHECK("ASCII PCR column is %2d", ret == 0 && !strncmp(out, " 3 ", 3));
	free(out);
	ima_template_entry_free(e);
}

static void test_ima_template(void)
{
	const char *path = "/etc/passwd";
	struct ima_event_data ev = {
		.filename = path, .algo = UEVM_HASH_SHA1,
		.digest = file_sha1, .digest_len = 20,
	};
	struct bytes tmpl = { .n = 0 }, bin = { .n = 0 };
	unsigned char name[256] = { 0 }, sha1[20];
	struct ima_template_entry *e;
	char hex[64], line[300];
	size_t len;
	char *out;
	int ret;

	memcpy(name, path, strlen(path));
	put(&tmpl, file_sha1, 20);	/* 'ima': no lengths, name padded */
	put(&tmpl, name, sizeof(name));
	SHA1(tmpl.b, tmpl.n, sha1);

	ret = ima_template_entry_new(ima_template_desc_lookup("ima"), &ev, 10, &e);
	CHECK("ima: entry built", ret == 0);
	if (ret)
		return;
	CHECK("ima: d is the bare SHA-1 digest", field_is(e, 0, file_sha1, 20));
	CHECK("ima: template digest = SHA-1(digest || name padded to 256)",
	      !memcmp(ima_entry_digest(e), sha1, 20));

	put_u32(&bin, 10);
	put(&bin, sha1, 20);
	put_u32(&bin, 3);
	put(&bin, "ima", 3);
	put(&bin, file_sha1, 20);		/* no template length, no d length */
	put_u32(&bin, (uint32_t)strlen(path));	/* strlen, no NUL */
	put(&bin, path, strlen(path));
	out = render(e, UEVM_HASH_SHA1, false, &len);
	CHECK("ima: binary entry byte-exact (old layout)",
	      len == bin.n && !memcmp(out, bin.b, len));
	free(out);

	bin2hex(sha1, 20, hex);
	snprintf(line, sizeof(line), "10 %s ima ", hex);
	bin2hex(file_sha1, 20, hex);
	strcat(line, hex);
	strcat(line, " /etc/passwd\n");
	out = render(e, UEVM_HASH_SHA1, true, &len);
	CHECK("ima: ASCII line byte-exact", !strcmp(out, line));
	free(out);
	ima_template_entry_free(e);

	/* A SHA-256 event: 'd' takes the content's SHA-1 instead. */
	ev.algo = UEVM_HASH_SHA256;
	ev.digest = file_digest;
	ev.digest_len = 32;
	ev.sha1_digest = file_sha1;
	ret = ima_template_entry_new(ima_template_desc_lookup("ima"), &ev, 10, &e);
	CHECK("ima: a SHA-256 event records the SHA-1 digest",
	      ret == 0 && field_is(e, 0, file_sha1, 20) &&
	      !memcmp(ima_entry_digest(e), sha1, 20));
	ima_template_entry_free(e);
	ev.sha1_digest = NULL;
	ret = ima_template_entry_new(ima_template_desc_lookup("ima"), &ev, 10, &e);
	CHECK("ima: a SHA-256 event without SHA-1 or file is refused",
	      ret == -EINVAL && e == NULL);
}

static void test_sig_buf(void)
{
	unsigned char sig[9 + 64], nonsig[34];
	struct ima_event_data ev = {
		.filename = "/bin/sh", .algo = UEVM_HASH_SHA256,
		.digest = file_digest, .digest_len = 32,
		.xattr_value = sig, .xattr_len = sizeof(sig),
	};
	struct bytes tmpl = { .n = 0 }, f1 = { .n = 0 };
	unsigned char sha1[20];
	struct ima_template_entry *e;
	char *out;
	size_t len;
	int ret;

	memset(sig, 0xab, sizeof(sig));
	sig[0] = 3;	/* EVM_IMA_XATTR_DIGSIG */
	sig[1] = 2;
	put(&f1, "sha256:", 8);
	put(&f1, file_digest, 32);
	put_field(&tmpl, f1.b, f1.n);
	put_field(&tmpl, "/bin/sh", 8);
	put_field(&tmpl, sig, sizeof(sig));
	SHA1(tmpl.b, tmpl.n, sha1);
	ret = ima_template_entry_new(ima_template_desc_lookup("ima-sig"), &ev, 10, &e);
	CHECK("ima-sig: the signature is the third field",
	      ret == 0 && field_is(e, 2, sig, sizeof(sig)));
	CHECK("ima-sig: template digest", ret == 0 && !memcmp(ima_entry_digest(e), sha1, 20));
	ima_template_entry_free(e);

	/* A digest in security.ima is no signature: an empty field that
	 * still contributes its zero length, and a trailing space in ASCII. */
	nonsig[0] = 4;
	nonsig[1] = 4;
	memcpy(nonsig + 2, file_digest, 32);
	ev.xattr_value = nonsig;
	ev.xattr_len = sizeof(nonsig);
	tmpl.n = 0;
	put_field(&tmpl, f1.b, f1.n);
	put_field(&tmpl, "/bin/sh", 8);
	put_u32(&tmpl, 0);
	SHA1(tmpl.b, tmpl.n, sha1);
	ret = ima_template_entry_new(ima_template_desc_lookup("d-ng|n-ng|sig"), &ev, 10, &e);
	CHECK("ima-sig by format string resolves to ima-sig",
	      ret == 0 && !strcmp(ima_entry_template_name(e), "ima-sig"));
	CHECK("ima-sig: no signature gives an empty field",
	      ret == 0 && field_is(e, 2, NULL, 0) && !memcmp(ima_entry_digest(e), sha1, 20));
	out = render(e, UEVM_HASH_SHA1, true, &len);
	CHECK("ima-sig: ASCII line ends with the empty field's space",
	      len > 2 && !strcmp(out + len - 10, " /bin/sh \n"));
	free(out);
	ima_template_entry_free(e);

	/* ima-buf */
	ev.xattr_value = NULL;
	ev.buf = (const uint8_t *)"kexec-cmdline";
	ev.buf_len = 13;
	tmpl.n = 0;
	put_field(&tmpl, f1.b, f1.n);
	put_field(&tmpl, "/bin/sh", 8);
	put_field(&tmpl, "kexec-cmdline", 13);
	SHA1(tmpl.b, tmpl.n, sha1);
	ret = ima_template_entry_new(ima_template_desc_lookup("ima-buf"), &ev, 10, &e);
	CHECK("ima-buf: buffer field and digest",
	      ret == 0 && field_is(e, 2, "kexec-cmdline", 13) &&
	      !memcmp(ima_entry_digest(e), sha1, 20));
	out = render(e, UEVM_HASH_SHA1, true, &len);
	CHECK("ima-buf: buffer shown as hex",
	      strstr(out, " /bin/sh 6b657865632d636d646c696e65\n") != NULL);
	free(out);
	ima_template_entry_free(e);

	/* d-ngv2 */
	ev.verity = true;
	ret = ima_template_entry_new(ima_template_desc_lookup("ima-ngv2"), &ev, 10, &e);
	f1.n = 0;
	put(&f1, "verity:sha256:", 15);
	put(&f1, file_digest, 32);
	CHECK("d-ngv2: \"verity:sha256:\" NUL digest", ret == 0 && field_is(e, 0, f1.b, f1.n));
	out = render(e, UEVM_HASH_SHA1, true, &len);
	CHECK("d-ngv2: ASCII shows the type and algorithm", strstr(out, " verity:sha256:") != NULL);
	free(out);
	ima_template_entry_free(e);
}

static void test_violation(void)
{
	struct ima_event_data ev = {
		.filename = "/tmp/busy", .violation = true,
		.ima_hash_algo = UEVM_HASH_SHA256,
	};
	unsigned char zeros[64] = { 0 }, ff[64], got[64];
	struct bytes f1 = { .n = 0 };
	struct ima_template_entry *e;
	int ret;

	memset(ff, 0xff, sizeof(ff));
	put(&f1, "sha256:", 8);
	put(&f1, zeros, 32);
	ret = ima_template_entry_new(ima_template_desc_lookup("ima-ng"), &ev, 10, &e);
	CHECK("violation: entry built", ret == 0);
	if (ret)
		return;
	CHECK("violation: d-ng holds a zeroed digest of the list's algorithm",
	      field_is(e, 0, f1.b, f1.n));
	CHECK("violation: all-zero template digest",
	      ima_entry_is_violation(e) && !memcmp(ima_entry_digest(e), zeros, 20));
	CHECK("violation: 0xff.. extended into the sha1 bank",
	      ima_entry_extend_digest(e, UEVM_HASH_SHA1, got) == 20 && !memcmp(got, ff, 20));
	CHECK("violation: 0xff.. extended into the sha256 bank",
	      ima_entry_extend_digest(e, UEVM_HASH_SHA256, got) == 32 && !memcmp(got, ff, 32));
	ima_template_entry_free(e);
	ret = ima_template_entry_new(ima_template_desc_lookup("ima"), &ev, 10, &e);
	CHECK("violation (ima): 'd' is 20 zero bytes", ret == 0 && field_is(e, 0, zeros, 20));
	ima_template_entry_free(e);
}

static void test_descriptors(void)
{
	const struct ima_template_desc *d;
	char many[256] = "d-ng";

	d = ima_template_desc_lookup("d-ng|n-ng|iuid");
	CHECK("custom format: name \"\", listed as its format",
	      d && !strcmp(d->name, "") && !strcmp(ima_template_desc_list_name(d), "d-ng|n-ng|iuid") &&
	      d->num_fields == 3);
	CHECK("custom format: the same descriptor on a second lookup",
	      d == ima_template_desc_lookup("d-ng|n-ng|iuid"));
	CHECK("built-in by name", (d = ima_template_desc_lookup("ima-modsig")) &&
	      d->num_fields == 5 && !strcmp(d->fields[3]->field_id, "d-modsig"));
	d = ima_template_desc_lookup("d-ng|nope");
	CHECK("unknown field refused, named in the error",
	      !d && strstr(uevm_last_error(), "nope"));
	CHECK("unknown template refused", !ima_template_desc_lookup("ima-nonesuch"));
	for (int i = 0; i < 15; i++)
		strcat(many, "|n-ng");
	CHECK("more than 15 fields refused", !ima_template_desc_lookup(many));
	CHECK("every documented field is registered",
	      ima_template_field_lookup("d") && ima_template_field_lookup("n") &&
	      ima_template_field_lookup("d-ng") && ima_template_field_lookup("n-ng") &&
	      ima_template_field_lookup("sig") && ima_template_field_lookup("buf") &&
	      ima_template_field_lookup("d-modsig") && ima_template_field_lookup("modsig") &&
	      ima_template_field_lookup("d-ngv2") && ima_template_field_lookup("evmsig"));
}

/* ---- parsing a list back ---------------------------------------------------- */

struct collect {
	int n, bad, violations;
	char *out;
	size_t len;
	FILE *fp;
};

static int collect_cb(const struct ima_template_entry *e, size_t index,
		      bool ok, void *arg)
{
	struct collect *c = arg;

	(void)index;
	c->n++;
	c->bad += !ok;
	c->violations += ima_entry_is_violation(e);
	if (c->fp)
		ima_entry_write_binary(e, UEVM_HASH_SHA1, c->fp);
	return 0;
}

static void test_parse(void)
{
	struct ima_event_data ev = {
		.filename = "/usr/lib/libc.so.6", .algo = UEVM_HASH_SHA256,
		.digest = file_digest, .digest_len = 32, .sha1_digest = file_sha1,
		.buf = (const uint8_t *)"x", .buf_len = 1, .ima_hash_algo = UEVM_HASH_SHA256,
	};
	const char *templates[] = { "ima-ng", "ima-sig", "ima-buf", "d-ng|n-ng|buf|n",
				    "ima-ngv2", "ima" };
	struct collect c = { 0 };
	char *list = NULL;
	size_t list_len = 0;
	FILE *fp = open_memstream(&list, &list_len);
	struct ima_template_entry *e;
	struct ima_ml_replay r;
	long n;

	for (size_t i = 0; i < sizeof(templates) / sizeof(templates[0]); i++) {
		if (!ima_template_entry_new(ima_template_desc_lookup(templates[i]),
					    &ev, 10 + (int)i % 2, &e))
			ima_entry_write_binary(e, UEVM_HASH_SHA1, fp);
		ima_template_entry_free(e);
	}
	ev.violation = true;
	if (!ima_template_entry_new(ima_template_desc_lookup("ima-ng"), &ev, 10, &e))
		ima_entry_write_binary(e, UEVM_HASH_SHA1, fp);
	ima_template_entry_free(e);
	fclose(fp);

	c.fp = open_memstream(&c.out, &c.len);
	n = ima_ml_parse_binary((uint8_t *)list, list_len, UEVM_HASH_SHA1, collect_cb, &c);
	fclose(c.fp);
	CHECK("parse: every entry read back", n == 7 && c.n == 7);
	CHECK("parse: template digests verify, one violation", c.bad == 0 && c.violations == 1);
	CHECK("parse: re-rendering gives the same bytes",
	      c.len == list_len && !memcmp(c.out, list, list_len));
	free(c.out);

	CHECK("replay: sha256 bank", ima_ml_replay_binary((uint8_t *)list, list_len,
							  UEVM_HASH_SHA256, false, &r) == 0 &&
	      r.entries == 7 && r.violations == 1 && r.pcr_mask == ((1u << 10) | (1u << 11)));

	/* Flip one byte of the first entry's data: its digest no longer fits. */
	list[50] ^= 1;
	memset(&c, 0, sizeof(c));
	c.fp = open_memstream(&c.out, &c.len);
	n = ima_ml_parse_binary((uint8_t *)list, list_len, UEVM_HASH_SHA1, collect_cb, &c);
	fclose(c.fp);
	free(c.out);
	CHECK("parse: a changed byte is detected", n == 7 && c.bad == 1);
	list[50] ^= 1;
	memset(&c, 0, sizeof(c));

	n = ima_ml_parse_binary((uint8_t *)list, list_len - 3, UEVM_HASH_SHA1, collect_cb, &c);
	CHECK("parse: a list cut short is refused", n == -EBADMSG &&
	      strstr(uevm_last_error(), "entry 7") != NULL);
	{
		uint32_t bad_pcr = 99;

		memcpy(list, &bad_pcr, 4);
		n = ima_ml_parse_binary((uint8_t *)list, list_len, UEVM_HASH_SHA1, collect_cb, &c);
		CHECK("parse: a PCR out of range is refused", n == -EBADMSG);
	}
	free(list);
}

int main(void)
{
	for (int i = 0; i < 32; i++)
		file_digest[i] = (unsigned char)(0xa0 + i);
	SHA1((const unsigned char *)"content", 7, file_sha1);

	test_ima_ng();
	test_ima_template();
	test_sig_buf();
	test_violation();
	test_descriptors();
	test_parse();
	TEST_EXIT();
}
