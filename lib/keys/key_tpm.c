// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The TPM 2.0 form: the key sealed in a keyed-hash data object under the
 * owner hierarchy's storage primary key (ECC P-256, the TCG SRK template,
 * recreated from the TPM's seed on every use, so nothing persists in the
 * TPM).  Optionally the object's policy is TPM2_PolicyPCR over sha256 PCRs
 * at their values when it was sealed; then only an unchanged boot can
 * unseal it.  Sessions are salted with the primary key and encrypt the key
 * on the wire both ways.  The file is text:
 *
 *   uevm-key-tpm v1
 *   parent owner-ecc-p256-srk
 *   pcrs sha256:0,7          (or "pcrs none")
 *   size <key length>
 *   public <hex of TPM2B_PUBLIC>
 *   private <hex of TPM2B_PRIVATE>   (encrypted by the TPM)
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "key_private.h"
#include "tss_private.h"

#define PARENT_NAME "owner-ecc-p256-srk"
#define PCR_COUNT 24

struct tpm {
	TSS2_TCTI_CONTEXT *tcti;
	ESYS_CONTEXT *esys;
	ESYS_TR primary, session, object;
	const char *tcti_name;
};

struct sealed_file {
	uint32_t pcr_mask;
	size_t keylen;
	TPM2B_PUBLIC pub;
	TPM2B_PRIVATE priv;
};

UEVM_EXPORT const char *uevm_tpm_default_tcti(void)
{
	static const char *const vars[] = {
		"UEVM_TCTI", "TPM2TOOLS_TCTI", "TSS2_TCTI", "TCTI",
	};

	for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v)
			return v;
	}
	return NULL;
}

UEVM_EXPORT int uevm_tpm_parse_pcrs(const char *list, uint32_t *mask)
{
	const char *p = list;

	*mask = 0;
	if (!strncmp(p, "sha256:", 7))
		p += 7;
	if (!*p)
		return uevm_err(EINVAL, "empty PCR list");
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			goto bad;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p)
				goto bad;
		}
		if (a < 0 || b >= PCR_COUNT || a > b)
			goto bad;
		for (long i = a; i <= b; i++)
			*mask |= 1u << i;
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	return 0;
bad:
	return uevm_err(EINVAL, "bad PCR list '%s': use numbers 0..23 like 0,7 or 0-7",
			list);
}

static void pcr_list(uint32_t mask, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (!mask) {
		snprintf(buf, len, "none");
		return;
	}
	n += (size_t)snprintf(buf, len, "sha256:");
	for (int i = 0; i < PCR_COUNT && n < len; i++)
		if (mask & (1u << i))
			n += (size_t)snprintf(buf + n, len - n, "%s%d",
					      buf[n - 1] == ':' ? "" : ",", i);
}

static void pcr_selection(uint32_t mask, TPML_PCR_SELECTION *sel)
{
	memset(sel, 0, sizeof(*sel));
	sel->count = 1;
	sel->pcrSelections[0].hash = TPM2_ALG_SHA256;
	sel->pcrSelections[0].sizeofSelect = 3;
	for (int i = 0; i < 3; i++)
		sel->pcrSelections[0].pcrSelect[i] = (uint8_t)(mask >> (8 * i));
}

static int tpm_fail(const struct tpm *t, TSS2_RC rc, const char *what)
{
	return uevm_err(EIO, "TPM (%s): %s failed: %s", t->tcti_name, what,
			uevm_tss.Tss2_RC_Decode(rc));
}

static void tpm_close(struct tpm *t)
{
	if (t->esys) {
		if (t->object != ESYS_TR_NONE)
			uevm_tss.Esys_FlushContext(t->esys, t->object);
		if (t->session != ESYS_TR_NONE)
			uevm_tss.Esys_FlushContext(t->esys, t->session);
		if (t->primary != ESYS_TR_NONE)
			uevm_tss.Esys_FlushContext(t->esys, t->primary);
		uevm_tss.Esys_Finalize(&t->esys);
	}
	if (t->tcti)
		uevm_tss.Tss2_TctiLdr_Finalize(&t->tcti);
}

/* Connect and recreate the primary key (the stack is loaded). */
static int tpm_open(struct tpm *t, const char *tcti)
{
	TPM2B_PUBLIC tmpl = {
		.publicArea = {
			.type = TPM2_ALG_ECC,
			.nameAlg = TPM2_ALG_SHA256,
			.objectAttributes = TPMA_OBJECT_FIXEDTPM |
				TPMA_OBJECT_FIXEDPARENT |
				TPMA_OBJECT_SENSITIVEDATAORIGIN |
				TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA |
				TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT,
			.parameters.eccDetail = {
				.symmetric = {
					.algorithm = TPM2_ALG_AES,
					.keyBits.aes = 128,
					.mode.aes = TPM2_ALG_CFB,
				},
				.scheme.scheme = TPM2_ALG_NULL,
				.curveID = TPM2_ECC_NIST_P256,
				.kdf.scheme = TPM2_ALG_NULL,
			},
			.unique.ecc = { .x.size = 32, .y.size = 32 },
		},
	};
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION none = { 0 };
	TSS2_RC rc;

	memset(t, 0, sizeof(*t));
	t->primary = t->session = t->object = ESYS_TR_NONE;
	t->tcti_name = tcti ? tcti : "default TCTI";
	rc = uevm_tss.Tss2_TctiLdr_Initialize(tcti, &t->tcti);
	if (rc)
		return uevm_err(ENODEV, "cannot reach a TPM through %s: %s",
				t->tcti_name, uevm_tss.Tss2_RC_Decode(rc));
	rc = uevm_tss.Esys_Initialize(&t->esys, t->tcti, NULL);
	if (rc) {
		t->esys = NULL;
		tpm_close(t);
		return uevm_err(ENODEV, "cannot talk to the TPM through %s: %s",
				t->tcti_name, uevm_tss.Tss2_RC_Decode(rc));
	}
	/* Firmware normally starts the TPM; a fresh simulator may not be. */
	rc = uevm_tss.Esys_Startup(t->esys, TPM2_SU_CLEAR);
	if (rc && rc != TPM2_RC_INITIALIZE) {
		int ret = tpm_fail(t, rc, "TPM2_Startup");

		tpm_close(t);
		return ret;
	}
	rc = uevm_tss.Esys_CreatePrimary(t->esys, ESYS_TR_RH_OWNER,
					 ESYS_TR_PASSWORD, ESYS_TR_NONE,
					 ESYS_TR_NONE, &sens, &tmpl, &outside,
					 &none, &t->primary, NULL, NULL, NULL,
					 NULL);
	if (rc) {
		int ret = (rc & ~TPM2_RC_N_MASK) == TPM2_RC_BAD_AUTH ||
				  (rc & ~TPM2_RC_N_MASK) == TPM2_RC_AUTH_FAIL ?
			uevm_err(EACCES, "TPM (%s): the owner hierarchy has a "
				 "password; uevm needs it empty", t->tcti_name) :
			tpm_fail(t, rc, "creating the storage primary key");

		t->primary = ESYS_TR_NONE;
		tpm_close(t);
		return ret;
	}
	return 0;
}

/* A session salted with the primary key that encrypts parameters. */
static int start_session(struct tpm *t, TPM2_SE type, TPMA_SESSION attrs,
			 ESYS_TR *out)
{
	TPMT_SYM_DEF sym = {
		.algorithm = TPM2_ALG_AES,
		.keyBits.aes = 128,
		.mode.aes = TPM2_ALG_CFB,
	};
	TSS2_RC rc;

	rc = uevm_tss.Esys_StartAuthSession(t->esys, t->primary, ESYS_TR_NONE,
					    ESYS_TR_NONE, ESYS_TR_NONE,
					    ESYS_TR_NONE, NULL, type, &sym,
					    TPM2_ALG_SHA256, out);
	if (rc) {
		*out = ESYS_TR_NONE;
		return tpm_fail(t, rc, "starting a session");
	}
	rc = uevm_tss.Esys_TRSess_SetAttributes(t->esys, *out, attrs, 0xff);
	if (rc)
		return tpm_fail(t, rc, "setting session attributes");
	return 0;
}

/* The policy digest for "these PCRs at their current values". */
static int pcr_policy(struct tpm *t, uint32_t mask, TPM2B_DIGEST *digest)
{
	TPMT_SYM_DEF sym = { .algorithm = TPM2_ALG_NULL };
	TPM2B_DIGEST empty = { 0 };
	TPML_PCR_SELECTION sel;
	TPM2B_DIGEST *d = NULL;
	ESYS_TR trial;
	TSS2_RC rc;

	pcr_selection(mask, &sel);
	rc = uevm_tss.Esys_StartAuthSession(t->esys, ESYS_TR_NONE, ESYS_TR_NONE,
					    ESYS_TR_NONE, ESYS_TR_NONE,
					    ESYS_TR_NONE, NULL, TPM2_SE_TRIAL,
					    &sym, TPM2_ALG_SHA256, &trial);
	if (rc)
		return tpm_fail(t, rc, "starting a trial policy session");
	rc = uevm_tss.Esys_PolicyPCR(t->esys, trial, ESYS_TR_NONE, ESYS_TR_NONE,
				     ESYS_TR_NONE, &empty, &sel);
	if (!rc)
		rc = uevm_tss.Esys_PolicyGetDigest(t->esys, trial, ESYS_TR_NONE,
						   ESYS_TR_NONE, ESYS_TR_NONE,
						   &d);
	uevm_tss.Esys_FlushContext(t->esys, trial);
	if (rc)
		return tpm_fail(t, rc, "computing the PCR policy");
	*digest = *d;
	uevm_tss.Esys_Free(d);
	return 0;
}

static int write_file(const struct sealed_file *f, char **out, size_t *outlen)
{
	uint8_t pub[sizeof(TPM2B_PUBLIC)], priv[sizeof(TPM2B_PRIVATE)];
	size_t publen = 0, privlen = 0;
	struct uevm_text_buf t = { 0 };
	char pcrs[128];

	if (uevm_tss.Tss2_MU_TPM2B_PUBLIC_Marshal(&f->pub, pub, sizeof(pub), &publen) ||
	    uevm_tss.Tss2_MU_TPM2B_PRIVATE_Marshal(&f->priv, priv, sizeof(priv), &privlen))
		return uevm_err(EIO, "cannot encode the sealed object");
	pcr_list(f->pcr_mask, pcrs, sizeof(pcrs));
	uevm_text_printf(&t, "%sparent %s\npcrs %s\nsize %zu\n", UEVM_TPM_MAGIC,
		    PARENT_NAME, pcrs, f->keylen);
	uevm_text_hex(&t, "public", pub, publen);
	uevm_text_hex(&t, "private", priv, privlen);
	if (t.failed) {
		free(t.s);
		return uevm_err(ENOMEM, "out of memory");
	}
	*out = t.s;
	*outlen = t.len;
	return 0;
}

UEVM_EXPORT int uevm_key_tpm_seal(const struct uevm_key *key, const char *tcti,
				  uint32_t pcr_mask, char **out, size_t *outlen)
{
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_PUBLIC tmpl = {
		.publicArea = {
			.type = TPM2_ALG_KEYEDHASH,
			.nameAlg = TPM2_ALG_SHA256,
			.objectAttributes = TPMA_OBJECT_FIXEDTPM |
				TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_NODA,
			.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL,
		},
	};
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION none = { 0 };
	TPM2B_PRIVATE *priv = NULL;
	TPM2B_PUBLIC *pub = NULL;
	struct sealed_file f = { 0 };
	struct tpm t;
	TSS2_RC rc;
	int ret;

	if (!tcti)
		tcti = uevm_tpm_default_tcti();
	if (pcr_mask >> PCR_COUNT)
		return uevm_err(EINVAL, "PCRs are numbered 0 to 23");
	ret = uevm_tss_load();
	if (ret)
		return ret;
	ret = tpm_open(&t, tcti);
	if (ret)
		return ret;
	if (pcr_mask) {
		ret = pcr_policy(&t, pcr_mask, &tmpl.publicArea.authPolicy);
		if (ret)
			goto out;
	} else {
		/* No policy: the (empty) auth value unseals it. */
		tmpl.publicArea.objectAttributes |= TPMA_OBJECT_USERWITHAUTH;
	}
	ret = start_session(&t, TPM2_SE_HMAC,
			    TPMA_SESSION_DECRYPT | TPMA_SESSION_CONTINUESESSION,
			    &t.session);
	if (ret)
		goto out;
	sens.sensitive.data.size = (uint16_t)key->len;
	memcpy(sens.sensitive.data.buffer, key->raw, key->len);
	rc = uevm_tss.Esys_Create(t.esys, t.primary, t.session, ESYS_TR_NONE,
				  ESYS_TR_NONE, &sens, &tmpl, &outside, &none,
				  &priv, &pub, NULL, NULL, NULL);
	explicit_bzero(&sens, sizeof(sens));
	if (rc) {
		ret = tpm_fail(&t, rc, "sealing the key");
		goto out;
	}
	f.pcr_mask = pcr_mask;
	f.keylen = key->len;
	f.pub = *pub;
	f.priv = *priv;
	ret = write_file(&f, out, outlen);
out:
	uevm_tss.Esys_Free(priv);
	uevm_tss.Esys_Free(pub);
	tpm_close(&t);
	uevm_scrub();
	return ret;
}

static int parse_file(const void *file, size_t len, struct sealed_file *f)
{
	struct uevm_line_reader r = { file, (const char *)file + len };
	uint8_t buf[sizeof(TPM2B_PUBLIC) + sizeof(TPM2B_PRIVATE)];
	const char *v;
	char tmp[128];
	size_t vlen, off;
	int ret;

	memset(f, 0, sizeof(*f));
	if (len < strlen(UEVM_TPM_MAGIC) ||
	    memcmp(file, UEVM_TPM_MAGIC, strlen(UEVM_TPM_MAGIC)))
		return uevm_err(EINVAL, "not a uevm TPM-sealed key file");
	/* The file is TPM structures; and an unseal loads the stack here,
	 * before its fork. */
	ret = uevm_tss_load();
	if (ret)
		return ret;
	r.p += strlen(UEVM_TPM_MAGIC);
	v = uevm_line_next(&r, "parent", &vlen);
	if (!v || vlen != strlen(PARENT_NAME) || memcmp(v, PARENT_NAME, vlen))
		return uevm_err(EINVAL, "TPM key file: the 'parent' line is missing or "
				"names an unknown parent (truncated or damaged)");
	v = uevm_line_next(&r, "pcrs", &vlen);
	if (!v || vlen >= sizeof(tmp))
		return uevm_err(EINVAL, "TPM key file: the 'pcrs' line is missing "
				"(truncated or damaged)");
	memcpy(tmp, v, vlen);
	tmp[vlen] = '\0';
	if (strcmp(tmp, "none")) {
		char canon[128];

		if (strncmp(tmp, "sha256:", 7) || uevm_tpm_parse_pcrs(tmp, &f->pcr_mask))
			return uevm_err(EINVAL, "TPM key file: bad 'pcrs' line '%s'", tmp);
		pcr_list(f->pcr_mask, canon, sizeof(canon));
		if (strcmp(canon, tmp))
			return uevm_err(EINVAL, "TPM key file: bad 'pcrs' line '%s'", tmp);
	}
	v = uevm_line_next(&r, "size", &vlen);
	if (!v || vlen == 0 || vlen > 3 || v[0] == '0' ||
	    strspn(v, "0123456789") < vlen)
		return uevm_err(EINVAL, "TPM key file: the 'size' line is missing or bad");
	for (size_t i = 0; i < vlen; i++)
		f->keylen = f->keylen * 10 + (size_t)(v[i] - '0');
	if (f->keylen > UEVM_MAX_KEY_SIZE)
		return uevm_err(EINVAL, "TPM key file: key size %zu is over %d",
				f->keylen, UEVM_MAX_KEY_SIZE);

	v = uevm_line_next(&r, "public", &vlen);
	off = 0;
	if (!v || vlen % 2 || vlen / 2 > sizeof(buf) ||
	    uevm_hex_decode(v, vlen / 2, buf) ||
	    uevm_tss.Tss2_MU_TPM2B_PUBLIC_Unmarshal(buf, vlen / 2, &off, &f->pub) ||
	    off != vlen / 2)
		return uevm_err(EINVAL, "TPM key file: the 'public' line is missing "
				"or damaged");
	v = uevm_line_next(&r, "private", &vlen);
	off = 0;
	if (!v || vlen % 2 || vlen / 2 > sizeof(buf) ||
	    uevm_hex_decode(v, vlen / 2, buf) ||
	    uevm_tss.Tss2_MU_TPM2B_PRIVATE_Unmarshal(buf, vlen / 2, &off, &f->priv) ||
	    off != vlen / 2)
		return uevm_err(EINVAL, "TPM key file: the 'private' line is missing "
				"or damaged (truncated?)");
	if (r.p != r.end)
		return uevm_err(EINVAL, "TPM key file: unexpected text after 'private'");
	if (f->pub.publicArea.type != TPM2_ALG_KEYEDHASH)
		return uevm_err(EINVAL, "TPM key file: the object is not sealed data");
	return 0;
}

UEVM_EXPORT int uevm_key_tpm_info(const void *file, size_t len,
				  uint32_t *pcr_mask, size_t *keylen)
{
	struct sealed_file f;
	int ret = parse_file(file, len, &f);

	if (ret)
		return ret;
	if (pcr_mask)
		*pcr_mask = f.pcr_mask;
	if (keylen)
		*keylen = f.keylen;
	return 0;
}

static bool is_policy_fail(TSS2_RC rc)
{
	/* Format-one codes carry a session/handle/parameter number. */
	return (rc & TPM2_RC_FMT1) &&
	       (rc & (TPM2_RC_FMT1 | 0x3f)) == TPM2_RC_POLICY_FAIL;
}

/* Unseal into OUT (a secret of UEVM_MAX_KEY_SIZE bytes). */
static int unseal(const struct sealed_file *f, const char *tcti,
		  struct uevm_secret *out)
{
	TPM2B_SENSITIVE_DATA *data = NULL;
	struct tpm t;
	TSS2_RC rc;
	int ret;

	ret = tpm_open(&t, tcti);
	if (ret)
		return ret;
	rc = uevm_tss.Esys_Load(t.esys, t.primary, ESYS_TR_PASSWORD,
				ESYS_TR_NONE, ESYS_TR_NONE, &f->priv, &f->pub,
				&t.object);
	if (rc) {
		t.object = ESYS_TR_NONE;
		ret = uevm_err(EKEYREJECTED, "TPM (%s): the TPM does not accept the "
			       "sealed key (another TPM, a cleared owner seed, or "
			       "a damaged file): %s", t.tcti_name,
			       uevm_tss.Tss2_RC_Decode(rc));
		goto out;
	}
	ret = start_session(&t, f->pcr_mask ? TPM2_SE_POLICY : TPM2_SE_HMAC,
			    TPMA_SESSION_ENCRYPT | TPMA_SESSION_CONTINUESESSION,
			    &t.session);
	if (ret)
		goto out;
	if (f->pcr_mask) {
		TPM2B_DIGEST empty = { 0 };
		TPML_PCR_SELECTION sel;

		pcr_selection(f->pcr_mask, &sel);
		rc = uevm_tss.Esys_PolicyPCR(t.esys, t.session, ESYS_TR_NONE,
					     ESYS_TR_NONE, ESYS_TR_NONE, &empty,
					     &sel);
		if (rc) {
			ret = tpm_fail(&t, rc, "TPM2_PolicyPCR");
			goto out;
		}
	}
	rc = uevm_tss.Esys_Unseal(t.esys, t.object, t.session, ESYS_TR_NONE,
				  ESYS_TR_NONE, &data);
	if (rc && is_policy_fail(rc)) {
		char pcrs[128];

		pcr_list(f->pcr_mask, pcrs, sizeof(pcrs));
		ret = uevm_err(EKEYREJECTED, "TPM (%s): the TPM refused to unseal the "
			       "key: PCRs %s no longer have the values they had "
			       "when it was sealed", t.tcti_name, pcrs);
		goto out;
	}
	if (rc) {
		ret = tpm_fail(&t, rc, "unsealing the key");
		goto out;
	}
	if (data->size != f->keylen || data->size == 0) {
		ret = uevm_err(EINVAL, "TPM: the unsealed key has %u bytes, the file "
			       "says %zu", data->size, f->keylen);
		goto out;
	}
	memcpy(out->data, data->buffer, data->size);
	out->len = data->size;
out:
	if (data) {
		explicit_bzero(data, sizeof(*data));
		uevm_tss.Esys_Free(data);
	}
	tpm_close(&t);
	return ret;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static size_t read_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	return done;
}

/*
 * tpm2-tss keeps command and response buffers (with the unsealed key,
 * after parameter decryption) in ordinary heap memory.  Unsealing in a
 * child keeps all of that out of this process; the key comes back through
 * a pipe into locked memory.  Message: int status, then the key bytes or
 * the error text.
 */
UEVM_EXPORT int uevm_key_tpm_unseal(const void *file, size_t len,
				    const char *tcti, struct uevm_key **out)
{
	struct sealed_file f;
	struct uevm_secret s = { 0 };
	int pfd[2], status, ret;
	pid_t pid;

	ret = parse_file(file, len, &f);
	if (ret)
		return ret;
	if (!tcti)
		tcti = uevm_tpm_default_tcti();
	if (pipe2(pfd, O_CLOEXEC))
		return uevm_err(errno, "cannot create a pipe: %m");
	pid = fork();
	if (pid < 0) {
		ret = uevm_err(errno, "cannot fork: %m");
		close(pfd[0]);
		close(pfd[1]);
		return ret;
	}
	if (pid == 0) {
		int st;

		close(pfd[0]);
		/* tpm2-tss logs failures to stderr; the error text says it. */
		setenv("TSS2_LOG", "all+none", 0);
		st = uevm_secret_alloc(&s, UEVM_MAX_KEY_SIZE);
		if (!st)
			st = unseal(&f, tcti, &s);
		if (write_all(pfd[1], &st, sizeof(st)) == 0) {
			if (st)
				write_all(pfd[1], uevm_last_error(),
					  strlen(uevm_last_error()));
			else
				write_all(pfd[1], s.data, s.len);
		}
		uevm_secret_free(&s);
		_exit(0);
	}
	close(pfd[1]);
	ret = uevm_secret_alloc(&s, UEVM_MAX_KEY_SIZE + 512);
	if (!ret) {
		int st = 0;

		if (read_all(pfd[0], &st, sizeof(st)) != sizeof(st)) {
			ret = uevm_err(EIO, "the TPM helper process failed");
		} else if (st) {
			s.len = read_all(pfd[0], s.data, s.cap - 1);
			s.data[s.len] = '\0';
			ret = uevm_err(-st, "%s", (char *)s.data);
		} else {
			s.len = read_all(pfd[0], s.data, s.cap);
			if (s.len != f.keylen)
				ret = uevm_err(EIO, "the TPM helper returned a short key");
			else
				ret = uevm_key_from_bytes(s.data, s.len, out);
		}
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	uevm_secret_free(&s);
	uevm_scrub();
	return ret;
}
