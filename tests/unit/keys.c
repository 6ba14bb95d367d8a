// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Key forms: passphrase wrapping, kernel encrypted-key blobs (known-answer
 * vectors the running kernel accepted and re-emitted byte for byte when
 * they were recorded), detection, key specs (the form named, never
 * guessed), plain files, file modes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib_private.h"
#include "keys.h"
#include "test.h"

/* Fast KDF settings: the format, not the cost, is under test here. */
static const struct uevm_kdf_params fast = { 1, 8192 };

static struct uevm_key *key_of(const char *hex)
{
	unsigned char b[128];
	struct uevm_key *k = NULL;
	int n = hex2bin(hex, b, sizeof(b));

	if (n <= 0 || uevm_key_from_bytes(b, (size_t)n, &k))
		return NULL;
	return k;
}

static bool same_key(const struct uevm_key *a, const struct uevm_key *b)
{
	return a && b && a->len == b->len && !memcmp(a->raw, b->raw, a->len);
}

static void test_passphrase(void)
{
	static const size_t sizes[] = { 1, 20, 32, 128 };
	struct uevm_key *k, *back;
	char *file;
	size_t len;
	int ret, bad;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		char name[64];

		uevm_key_generate(sizes[i], &k);
		ret = uevm_key_wrap_passphrase(k, "pw", 2, &fast, &file, &len);
		back = NULL;
		if (!ret)
			ret = uevm_key_unwrap_passphrase(file, len, "pw", 2, &back);
		snprintf(name, sizeof(name), "passphrase round trip, %zu-byte key",
			 sizes[i]);
		CHECK(name, ret == 0 && same_key(k, back));
		CHECK("passphrase file names its form",
		      uevm_key_detect(file, len) == UEVM_KEY_FORM_PASSPHRASE);
		uevm_key_free(back);
		uevm_key_free(k);
		free(file);
	}

	uevm_key_generate(32, &k);
	uevm_key_wrap_passphrase(k, "right", 5, &fast, &file, &len);
	back = NULL;
	ret = uevm_key_unwrap_passphrase(file, len, "wrong", 5, &back);
	CHECK("wrong passphrase is rejected", ret == -EKEYREJECTED && !back);
	CHECK("wrong passphrase says so",
	      strstr(uevm_last_error(), "wrong passphrase") != NULL);
	ret = uevm_key_unwrap_passphrase(file, len, "righ", 4, &back);
	CHECK("passphrase prefix is rejected", ret == -EKEYREJECTED);

	/* Every single-byte change must fail (format error or AEAD tag). */
	bad = 0;
	for (size_t i = 0; i < len; i++) {
		char *c = malloc(len);

		memcpy(c, file, len);
		c[i] ^= 1;
		back = NULL;
		if (uevm_key_unwrap_passphrase(c, len, "right", 5, &back) == 0) {
			bad++;
			uevm_key_free(back);
		}
		free(c);
	}
	CHECK("every corrupted byte of a passphrase file is detected", bad == 0);

	/* Every truncation must fail, and never pass for a raw key. */
	bad = 0;
	for (size_t n = 0; n < len; n++) {
		back = NULL;
		if (uevm_key_unwrap_passphrase(file, n, "right", 5, &back) == 0) {
			bad++;
			uevm_key_free(back);
		}
		if (n >= 4 && uevm_key_detect(file, n) != UEVM_KEY_FORM_PASSPHRASE)
			bad++;
	}
	CHECK("every truncation of a passphrase file is detected", bad == 0);

	{
		struct uevm_kdf_params p;
		size_t kl;

		CHECK("passphrase file records its KDF parameters",
		      uevm_key_passphrase_info(file, len, &p, &kl) == 0 &&
		      p.opslimit == 1 && p.memlimit == 8192 && kl == 32);
	}
	free(file);
	uevm_key_free(k);
}

/* Recorded on Linux 6.18 (CONFIG_ENCRYPTED_KEYS): uevm wrote each blob, the
 * kernel loaded it with `keyctl add encrypted NAME "load BLOB"` (so its
 * HMAC checked out) and `keyctl pipe` returned the identical blob (so the
 * kernel decrypted the same key and re-encrypted it with the same IV). */
static const struct {
	const char *master, *key, *blob;
} kat[] = {
	{ "fixed master key for uevm kat 01",
	  "030a11181f262d343b424950575e656c737a81888f969da4abb2b9c0c7ced5dc",
	  "default user:kmk 32 000102030405060708090a0b0c0d0e0f00552a9f3f0ac397a0"
	  "d9f5887d0fd092123849b21de2bc70136dfe6877f50231ce46bb00b114c1c6a59d7e3"
	  "d1c540c137367009ccd01968489df038cb4d78a1aa5" },
	{ "fixed master key for uevm kat 01",
	  "01060b10151a1f24292e33383d42474c51565b60",
	  "default user:kmk 20 f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff005b6239c434dc71e3"
	  "d0513d83002cf336cf9122e3e69ae5e48830539b10ea1cea5ef0bd8680b1f4462ca80"
	  "f5f7434d1766df34987da1381009512666d917c563e" },
	{ "short",
	  "030a11181f262d343b424950575e656c737a81888f969da4abb2b9c0c7ced5dc",
	  "default user:kmk 32 000102030405060708090a0b0c0d0e0f004215d268dc0372a4"
	  "5bb506ae42d0062185f63b38df7c4bb6756f26706e1fecbfd289aba3a7bad417f8ee4"
	  "d3d4b740e2f3b4cc6777cf0296b26b7d3ba5f81f0de" },
};

static void test_kblob(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(kat); i++) {
		struct uevm_key *k = key_of(kat[i].key), *back = NULL;
		struct uevm_kblob_info info;
		const char *m = kat[i].master;
		char *blob = NULL, name[80];
		int ret;

		ret = uevm_kblob_import(kat[i].blob, strlen(kat[i].blob), m,
					strlen(m), &back, &info);
		snprintf(name, sizeof(name), "kernel blob KAT %zu decrypts", i);
		CHECK(name, ret == 0 && same_key(k, back));
		ret = uevm_kblob_export(k, m, strlen(m), NULL, info.iv, &blob);
		snprintf(name, sizeof(name), "kernel blob KAT %zu re-encrypts identically", i);
		CHECK(name, ret == 0 && blob && !strcmp(blob, kat[i].blob));
		free(blob);
		uevm_key_free(back);
		uevm_key_free(k);
	}

	{
		const char *b = kat[0].blob, *m = kat[0].master;
		size_t len = strlen(b);
		struct uevm_key *back = NULL;
		char *c = malloc(len + 2);
		int bad = 0, ret;

		ret = uevm_kblob_import(b, len, "fixed master key for uevm kat 02",
					32, &back, NULL);
		CHECK("kernel blob: wrong master key is rejected",
		      ret == -EKEYREJECTED && !back &&
		      strstr(uevm_last_error(), "wrong master key"));
		ret = uevm_kblob_import(b, len, m, strlen(m) - 1, &back, NULL);
		CHECK("kernel blob: master key prefix is rejected", ret == -EKEYREJECTED);

		/* The separator byte after the IV is skipped, like the kernel
		 * does; every other change must fail. */
		for (size_t i = 0; i < len; i++) {
			size_t sep = strlen("default user:kmk 32 ") + 32;

			if (i == sep || i == sep + 1)
				continue;
			memcpy(c, b, len);
			c[i] ^= 1;
			back = NULL;
			if (uevm_kblob_import(c, len, m, strlen(m), &back, NULL) == 0) {
				bad++;
				uevm_key_free(back);
			}
		}
		CHECK("kernel blob: every corrupted byte is detected", bad == 0);
		bad = 0;
		for (size_t n = 0; n < len; n++) {
			back = NULL;
			if (uevm_kblob_import(b, n, m, strlen(m), &back, NULL) == 0) {
				bad++;
				uevm_key_free(back);
			}
		}
		CHECK("kernel blob: every truncation is detected", bad == 0);

		memcpy(c, b, len);
		c[len] = '\n';
		ret = uevm_kblob_import(c, len + 1, m, strlen(m), &back, NULL);
		CHECK("kernel blob: a trailing newline is accepted", ret == 0);
		uevm_key_free(back);
		free(c);
	}

	{
		struct uevm_key *k, *back = NULL;
		char *blob = NULL;
		int ret;

		uevm_key_generate(19, &k);
		ret = uevm_kblob_export(k, "m", 1, NULL, NULL, &blob);
		CHECK("kernel blob: keys under 20 bytes are refused (kernel minimum)",
		      ret == -EINVAL && !blob);
		uevm_key_free(k);
		uevm_key_generate(128, &k);
		ret = uevm_kblob_export(k, "m", 1, "user:other", NULL, &blob);
		if (!ret)
			ret = uevm_kblob_import(blob, strlen(blob), "m", 1, &back, NULL);
		CHECK("kernel blob: 128-byte key, other master name, round trip",
		      ret == 0 && same_key(k, back) &&
		      !strncmp(blob, "default user:other 128 ", 23));
		CHECK("kernel blob: trusted: master names are refused",
		      uevm_kblob_export(k, "m", 1, "trusted:kmk", NULL, &blob) == -EINVAL);
		free(blob);
		uevm_key_free(back);
		uevm_key_free(k);
	}
}

static void test_detect_and_specs(void)
{
	uint8_t rnd[200];
	struct uevm_key *k = NULL;
	uint32_t mask;

	for (size_t i = 0; i < sizeof(rnd); i++)
		rnd[i] = (uint8_t)(i * 37 + 11);
	CHECK("detect: 32 bytes are a raw key",
	      uevm_key_detect(rnd, 32) == UEVM_KEY_FORM_RAW);
	CHECK("detect: 200 unknown bytes are no key",
	      uevm_key_detect(rnd, 200) == UEVM_KEY_FORM_UNKNOWN);
	CHECK("detect: a truncated TPM file is a TPM file",
	      uevm_key_detect("uevm-key-t", 10) == UEVM_KEY_FORM_TPM);
	CHECK("detect: a kernel blob",
	      uevm_key_detect(kat[0].blob, strlen(kat[0].blob)) ==
		      UEVM_KEY_FORM_KERNEL_BLOB);

	CHECK("spec: unknown option is refused",
	      uevm_key_load_ex("keyring:x,bogus", NULL, &k, NULL) == -EINVAL &&
	      strstr(uevm_last_error(), "unknown option"));
	CHECK("spec: bad passphrase-fd is refused",
	      uevm_key_load_ex("passphrase:/x,passphrase-fd=z", NULL, &k, NULL) == -EINVAL);
	CHECK("spec: empty path is refused",
	      uevm_key_load_ex("tpm:", NULL, &k, NULL) == -EINVAL);
	CHECK("spec: file: (guess the form) is refused, saying to name it",
	      uevm_key_load_ex("file:/k", NULL, &k, NULL) == -EINVAL &&
	      strstr(uevm_last_error(), "name the key's form"));
	CHECK("spec: passphrase-fd= with another form is refused",
	      uevm_key_load_ex("raw:/k,passphrase-fd=3", NULL, &k, NULL) == -EINVAL &&
	      strstr(uevm_last_error(), "passphrase: keys only"));
	CHECK("spec: master= with another form is refused",
	      uevm_key_load_ex("tpm:/k,master=/m", NULL, &k, NULL) == -EINVAL &&
	      strstr(uevm_last_error(), "kernel-blob: keys only"));
	CHECK("spec: tcti= with another form is refused",
	      uevm_key_load_ex("passphrase:/k,tcti=device:/dev/tpm0", NULL, &k,
			       NULL) == -EINVAL &&
	      strstr(uevm_last_error(), "tpm: keys only"));
	{
		enum uevm_key_form form = UEVM_KEY_FORM_UNKNOWN;
		struct uevm_key_load_opts o;

		CHECK("spec: a plain path is a raw key file",
		      uevm_key_spec_form("/etc/keys/a,b", &form) == 0 &&
		      form == UEVM_KEY_FORM_RAW);
		CHECK("spec: kernel-blob: names its form",
		      uevm_key_spec_form("kernel-blob:/b,master=/m", &form) == 0 &&
		      form == UEVM_KEY_FORM_KERNEL_BLOB);
		uevm_key_load_opts_init(&o);
		o.need_form = true;
		CHECK("spec: need_form refuses a plain path before opening it",
		      uevm_key_load_ex("/nonexistent/k", &o, &k, NULL) == -EINVAL &&
		      strstr(uevm_last_error(), "name the key's form: raw:/nonexistent/k"));
	}

	CHECK("pcrs: list and ranges",
	      uevm_tpm_parse_pcrs("0,7,16-18", &mask) == 0 &&
	      mask == (1u | 1u << 7 | 7u << 16));
	CHECK("pcrs: sha256: prefix", uevm_tpm_parse_pcrs("sha256:23", &mask) == 0 &&
	      mask == 1u << 23);
	CHECK("pcrs: 24 is out of range", uevm_tpm_parse_pcrs("24", &mask) == -EINVAL);
	CHECK("pcrs: garbage", uevm_tpm_parse_pcrs("7,x", &mask) == -EINVAL);
}

static void test_files(void)
{
	char dir[] = "/tmp/uevm-keys-unit.XXXXXX", path[64], spec[96];
	struct uevm_key *k, *back = NULL;
	struct stat st;
	mode_t old;
	char *file;
	size_t len;
	int ret, fd;

	if (!mkdtemp(dir)) {
		CHECK("scratch directory", 0);
		return;
	}
	snprintf(path, sizeof(path), "%s/plain", dir);
	uevm_key_generate(32, &k);
	old = umask(0);
	ret = uevm_key_write_plain(k, path);
	umask(old);
	CHECK("plain key file is created with mode 0600",
	      ret == 0 && stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 &&
	      st.st_size == 32);
	CHECK("plain key file is never overwritten",
	      uevm_key_write_plain(k, path) == -EEXIST);
	ret = uevm_key_load_ex(path, NULL, &back, NULL);
	CHECK("raw key file loads", ret == 0 && same_key(k, back));
	uevm_key_free(back);
	unlink(path);

	/* A passphrase file through a spec with passphrase-fd=N. */
	snprintf(path, sizeof(path), "%s/pp", dir);
	uevm_key_wrap_passphrase(k, "s3cret", 6, &fast, &file, &len);
	uevm_write_new_file(path, file, len);
	free(file);
	{
		int p[2];
		enum uevm_key_form form = UEVM_KEY_FORM_UNKNOWN;

		if (pipe(p) == 0) {
			ret = (int)write(p[1], "s3cret\n", 7);
			close(p[1]);
			snprintf(spec, sizeof(spec), "passphrase:%s,passphrase-fd=%d", path, p[0]);
			back = NULL;
			ret = uevm_key_load_ex(spec, NULL, &back, &form);
			close(p[0]);
			CHECK("passphrase file loads through a spec with passphrase-fd",
			      ret == 0 && same_key(k, back) &&
			      form == UEVM_KEY_FORM_PASSPHRASE);
			uevm_key_free(back);
		}
		snprintf(spec, sizeof(spec), "tpm:%s", path);
		CHECK("spec: form mismatch is refused",
		      uevm_key_load_ex(spec, NULL, &back, NULL) == -EINVAL &&
		      strstr(uevm_last_error(), "is not a TPM-sealed key file"));
		CHECK("a passphrase file given as a plain path is refused, naming its form",
		      uevm_key_load_ex(path, NULL, &back, NULL) == -EINVAL &&
		      strstr(uevm_last_error(), "passphrase-protected") &&
		      strstr(uevm_last_error(), "passphrase:"));
		snprintf(spec, sizeof(spec), "raw:%s", path);
		CHECK("... and as raw:",
		      uevm_key_load_ex(spec, NULL, &back, NULL) == -EINVAL);
	}
	/* Readable by others: refused before anything is read. */
	chmod(path, 0640);
	CHECK("a group-readable key file is refused, saying how to fix it",
	      uevm_key_load_ex(spec, NULL, &back, NULL) == -EPERM &&
	      strstr(uevm_last_error(), "mode 0640") &&
	      strstr(uevm_last_error(), "chmod 600"));
	chmod(path, 0600);
	/* Truncated to fit in a raw key: still not taken as a raw key. */
	fd = open(path, O_WRONLY);
	if (fd >= 0) {
		ret = ftruncate(fd, 100);
		close(fd);
	}
	back = NULL;
	ret = uevm_key_load_ex(path, NULL, &back, NULL);
	CHECK("a truncated passphrase file is never a raw key",
	      ret < 0 && !back && strstr(uevm_last_error(), "passphrase-protected"));
	snprintf(spec, sizeof(spec), "passphrase:%s", path);
	ret = uevm_key_load_ex(spec, NULL, &back, NULL);
	CHECK("a truncated passphrase file is reported as such",
	      ret < 0 && !back && strstr(uevm_last_error(), "missing"));
	/* evmctl mode: its keys are raw; a warning, not a refusal. */
	uevm_set_file_checks(UEVM_FILE_CHECKS_WARN);
	chmod(path, 0644);
	ret = uevm_key_load_ex(path, NULL, &back, NULL);
	CHECK("evmctl mode: a protected-looking, readable file is used as raw bytes",
	      ret == 0 && back && uevm_key_size(back) == 100);
	uevm_key_free(back);
	uevm_set_file_checks(UEVM_FILE_CHECKS_REFUSE);
	unlink(path);

	snprintf(path, sizeof(path), "%s/blob", dir);
	uevm_write_new_file(path, kat[0].blob, strlen(kat[0].blob));
	CHECK("a kernel blob given as a plain path says how to name it",
	      uevm_key_load_ex(path, NULL, &back, NULL) == -EINVAL &&
	      strstr(uevm_last_error(), "kernel-blob:") &&
	      strstr(uevm_last_error(), "master=FILE"));
	snprintf(spec, sizeof(spec), "kernel-blob:%s", path);
	CHECK("a kernel blob without a master key asks for one",
	      uevm_key_load_ex(spec, NULL, &back, NULL) == -EINVAL &&
	      strstr(uevm_last_error(), "master"));
	unlink(path);
	rmdir(dir);
	uevm_key_free(k);
}

int main(void)
{
	test_passphrase();
	test_kblob();
	test_detect_and_specs();
	test_files();
	TEST_EXIT();
}
