// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uevm_certset_add_file on PEM bundles is all or nothing: a bundle with a
 * certificate the keyrings refuse (here an RSA-1024 key, below the
 * 2048-bit minimum) adds none of its certificates, and the set keeps
 * exactly what it held before.  With weak keys allowed it adds, warning.  The certificates are made with OpenSSL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include "uevm_internal.h"
#include "test.h"

static char dir[] = "/tmp/uevm-certs-bundle.XXXXXX";
static int warnings;
static char last_warning[512];

static void count_warning(void *arg, const char *msg)
{
	(void)arg;
	warnings++;
	snprintf(last_warning, sizeof(last_warning), "%s", msg);
}

static X509 *make_cert(const char *cn, unsigned int bits)
{
	EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
	X509 *x = X509_new();

	if (!pkey || !x)
		abort();
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 3600);
	X509_set_pubkey(x, pkey);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
				   (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	X509_sign(x, pkey, EVP_sha256());
	EVP_PKEY_free(pkey);
	return x;
}

/* Write the certificates, in order, as one PEM file DIR/NAME. */
static void write_bundle(char *path, size_t len, const char *name, X509 **v, int n)
{
	FILE *fp;

	snprintf(path, len, "%s/%s", dir, name);
	fp = fopen(path, "w");
	if (!fp)
		abort();
	for (int i = 0; i < n; i++)
		PEM_write_X509(fp, v[i]);
	fclose(fp);
}

int main(void)
{
	char good_p[256], bad_last_p[256], bad_mid_p[256], two_p[256];
	X509 *good1, *good2, *weak;
	struct uevm_certset *set;
	uint32_t id0;
	int ret;

	if (!mkdtemp(dir))
		return 1;
	good1 = make_cert("bundle good 1", 2048);
	good2 = make_cert("bundle good 2", 2048);
	weak = make_cert("bundle weak", 1024);
	write_bundle(good_p, sizeof(good_p), "good.pem", &good1, 1);
	write_bundle(bad_last_p, sizeof(bad_last_p), "bad-last.pem",
		     (X509 *[]){ good2, weak }, 2);
	write_bundle(bad_mid_p, sizeof(bad_mid_p), "bad-mid.pem",
		     (X509 *[]){ good2, weak, good1 }, 3);
	write_bundle(two_p, sizeof(two_p), "two.pem", (X509 *[]){ good2, good1 }, 2);

	if (uevm_certset_new(&set))
		return 1;
	CHECK("a bundle ending with a refused certificate fails",
	      uevm_certset_add_file(set, bad_last_p) == -EINVAL);
	/* Once garbled: the message was formatted into the buffer it read. */
	CHECK("the error names the file and the cause, intact",
	      !strncmp(uevm_last_error(), bad_last_p, strlen(bad_last_p)) &&
	      !strcmp(uevm_last_error() + strlen(bad_last_p),
		      ": RSA key of 1024 bits is weak: 2048 or more are safe;"
		      " refused unless weak keys are allowed"));
	CHECK("the failed bundle left an empty set empty", uevm_certset_count(set) == 0);

	CHECK("one good certificate loads", uevm_certset_add_file(set, good_p) == 1);
	id0 = uevm_certset_keyid(set, 0);
	CHECK("its keyid is set", id0 != 0);
	ret = uevm_certset_add_file(set, bad_mid_p);
	CHECK("a bundle with a refused certificate in the middle fails", ret == -EINVAL);
	CHECK("the set still holds only the certificate from before",
	      uevm_certset_count(set) == 1 && uevm_certset_keyid(set, 0) == id0);
	CHECK("a failed bundle again leaves the set as it was",
	      uevm_certset_add_file(set, bad_last_p) == -EINVAL &&
	      uevm_certset_count(set) == 1);

	CHECK("a bundle of two good certificates adds both",
	      uevm_certset_add_file(set, two_p) == 2 && uevm_certset_count(set) == 3);
	CHECK("they come after the earlier one",
	      uevm_certset_keyid(set, 0) == id0 && uevm_certset_keyid(set, 2) == id0 &&
	      uevm_certset_keyid(set, 1) != id0);
	uevm_certset_free(set);

	/* Weak keys allowed: the bundle adds, with one warning per weak
	 * certificate, naming the file. */
	uevm_set_warn_handler(count_warning, NULL);
	uevm_set_key_checks(UEVM_KEY_CHECKS_WARN_WEAK);
	if (uevm_certset_new(&set))
		return 1;
	CHECK("with weak keys allowed, the bundle with RSA-1024 adds both",
	      uevm_certset_add_file(set, bad_last_p) == 2);
	CHECK("... with one warning", warnings == 1);
	CHECK("... that names the file and says weak",
	      !strncmp(last_warning, bad_last_p, strlen(bad_last_p)) &&
	      strstr(last_warning, "RSA key of 1024 bits is weak"));
	uevm_certset_free(set);
	uevm_set_key_checks(UEVM_KEY_CHECKS_REFUSE);
	if (uevm_certset_new(&set))
		return 1;
	CHECK("refused again once the default is back",
	      uevm_certset_add_file(set, bad_last_p) == -EINVAL && warnings == 1);
	uevm_certset_free(set);
	uevm_set_warn_handler(NULL, NULL);

	X509_free(good1);
	X509_free(good2);
	X509_free(weak);
	unlink(good_p);
	unlink(bad_last_p);
	unlink(bad_mid_p);
	unlink(two_p);
	rmdir(dir);
	return test_failures ? 1 : 0;
}
