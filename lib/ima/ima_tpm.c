// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A TPM 2.0 for the measurement list, through tpm2-tss ESYS: which PCR
 * banks are allocated, PCR reads, and extending a PCR in every allocated
 * bank with that bank's template digest (the kernel's ima_pcr_extend with
 * the digests of ima_calc_field_array_hash).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "ima_ml_private.h"
#include "tss_private.h"

struct ima_tpm {
	pthread_mutex_t lock;	/* an ESYS context is not thread-safe */
	TSS2_TCTI_CONTEXT *tcti;
	ESYS_CONTEXT *esys;
	uint32_t banks;		/* bit (1 << kernel algo id) */
};

static const struct {
	int algo;
	TPM2_ALG_ID alg_id;
} tpm_algs[] = {
	{ UEVM_HASH_SHA1, TPM2_ALG_SHA1 },
	{ UEVM_HASH_SHA256, TPM2_ALG_SHA256 },
	{ UEVM_HASH_SHA384, TPM2_ALG_SHA384 },
	{ UEVM_HASH_SHA512, TPM2_ALG_SHA512 },
	{ UEVM_HASH_SM3_256, TPM2_ALG_SM3_256 },
};

static TPM2_ALG_ID alg_id_of(int algo)
{
	for (size_t i = 0; i < ARRAY_SIZE(tpm_algs); i++)
		if (tpm_algs[i].algo == algo)
			return tpm_algs[i].alg_id;
	return TPM2_ALG_ERROR;
}

static int tpm_err(TSS2_RC rc, const char *what)
{
	return uevm_err(EIO, "TPM: %s: %s", what, uevm_tss.Tss2_RC_Decode(rc));
}

/* Read the allocated banks (TPM2_CAP_PCRS). */
static int read_banks(struct ima_tpm *tpm)
{
	TPMS_CAPABILITY_DATA *cap = NULL;
	TPMI_YES_NO more;
	TSS2_RC rc;

	rc = uevm_tss.Esys_GetCapability(tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE,
					 ESYS_TR_NONE, TPM2_CAP_PCRS, 0, 1,
					 &more, &cap);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_err(rc, "reading the PCR banks");
	for (UINT32 i = 0; i < cap->data.assignedPCR.count; i++) {
		const TPMS_PCR_SELECTION *s = &cap->data.assignedPCR.pcrSelections[i];
		bool any = false;

		for (int b = 0; b < s->sizeofSelect && b < TPM2_PCR_SELECT_MAX; b++)
			any |= s->pcrSelect[b] != 0;
		for (size_t a = 0; any && a < ARRAY_SIZE(tpm_algs); a++)
			if (tpm_algs[a].alg_id == s->hash &&
			    uevm_hash_algo_available(tpm_algs[a].algo))
				tpm->banks |= 1u << tpm_algs[a].algo;
	}
	uevm_tss.Esys_Free(cap);
	if (!tpm->banks)
		return uevm_err(ENODEV, "TPM has no PCR bank this build can extend");
	return 0;
}

UEVM_EXPORT int ima_tpm_open(const char *tcti, struct ima_tpm **out)
{
	struct ima_tpm *tpm;
	TSS2_RC rc;
	int ret;

	*out = NULL;
	ret = uevm_tss_load();
	if (ret)
		return ret;
	tpm = calloc(1, sizeof(*tpm));
	if (!tpm)
		return uevm_err(ENOMEM, "out of memory for a TPM context");
	pthread_mutex_init(&tpm->lock, NULL);
	rc = uevm_tss.Tss2_TctiLdr_Initialize(tcti, &tpm->tcti);
	if (rc != TSS2_RC_SUCCESS) {
		ret = uevm_err(ENODEV, "TPM: cannot open TCTI '%s': %s",
			       tcti ? tcti : "(default)", uevm_tss.Tss2_RC_Decode(rc));
		goto fail;
	}
	rc = uevm_tss.Esys_Initialize(&tpm->esys, tpm->tcti, NULL);
	if (rc != TSS2_RC_SUCCESS) {
		ret = tpm_err(rc, "initialising ESYS");
		goto fail;
	}
	ret = read_banks(tpm);
	if (ret)
		goto fail;
	*out = tpm;
	return 0;
fail:
	ima_tpm_close(tpm);
	return ret;
}

UEVM_EXPORT void ima_tpm_close(struct ima_tpm *tpm)
{
	if (!tpm)
		return;
	if (tpm->esys)
		uevm_tss.Esys_Finalize(&tpm->esys);
	if (tpm->tcti)
		uevm_tss.Tss2_TctiLdr_Finalize(&tpm->tcti);
	pthread_mutex_destroy(&tpm->lock);
	free(tpm);
}

UEVM_EXPORT bool ima_tpm_has_bank(struct ima_tpm *tpm, int algo)
{
	return algo >= 0 && algo < 32 && (tpm->banks & (1u << algo));
}

uint32_t ima_tpm_banks(struct ima_tpm *tpm)
{
	return tpm->banks;
}

UEVM_EXPORT int ima_tpm_pcr_read(struct ima_tpm *tpm, int pcr, int algo,
				 uint8_t *out)
{
	TPML_PCR_SELECTION sel = { .count = 1 };
	TPML_PCR_SELECTION *sel_out = NULL;
	TPML_DIGEST *values = NULL;
	unsigned int size = uevm_hash_algo_digest_size(algo);
	UINT32 counter;
	TSS2_RC rc;
	int ret;

	if (pcr < 0 || pcr >= IMA_ML_NUM_PCRS)
		return uevm_err(EINVAL, "PCR %d out of range", pcr);
	if (!ima_tpm_has_bank(tpm, algo))
		return uevm_err(EOPNOTSUPP, "TPM has no %s PCR bank",
				uevm_hash_algo_name(algo) ? uevm_hash_algo_name(algo) : "such");
	sel.pcrSelections[0].hash = alg_id_of(algo);
	sel.pcrSelections[0].sizeofSelect = 3;
	sel.pcrSelections[0].pcrSelect[pcr / 8] = (BYTE)(1u << (pcr % 8));
	pthread_mutex_lock(&tpm->lock);
	rc = uevm_tss.Esys_PCR_Read(tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE,
				    ESYS_TR_NONE, &sel, &counter, &sel_out,
				    &values);
	pthread_mutex_unlock(&tpm->lock);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_err(rc, "reading a PCR");
	if (values->count != 1 || values->digests[0].size != size) {
		ret = uevm_err(EIO, "TPM: PCR %d of bank %s was not returned", pcr,
			       uevm_hash_algo_name(algo));
	} else {
		memcpy(out, values->digests[0].buffer, size);
		ret = (int)size;
	}
	uevm_tss.Esys_Free(sel_out);
	uevm_tss.Esys_Free(values);
	return ret;
}

/* E's digest in every bank; without E, zeros (ima_tpm_invalidate). */
int ima_tpm_extend(struct ima_tpm *tpm, int pcr,
		   const struct ima_template_entry *e)
{
	TPML_DIGEST_VALUES digests = { 0 };
	TSS2_RC rc;

	for (size_t a = 0; a < ARRAY_SIZE(tpm_algs); a++) {
		TPMT_HA *ha = &digests.digests[digests.count];
		int n;

		if (!ima_tpm_has_bank(tpm, tpm_algs[a].algo))
			continue;
		ha->hashAlg = tpm_algs[a].alg_id;
		n = e ? ima_entry_extend_digest(e, tpm_algs[a].algo, (uint8_t *)&ha->digest) : 0;
		if (n < 0)
			return n;
		digests.count++;
	}
	pthread_mutex_lock(&tpm->lock);
	rc = uevm_tss.Esys_PCR_Extend(tpm->esys, ESYS_TR_PCR0 + (ESYS_TR)pcr,
				      ESYS_TR_PASSWORD, ESYS_TR_NONE,
				      ESYS_TR_NONE, &digests);
	pthread_mutex_unlock(&tpm->lock);
	if (rc != TSS2_RC_SUCCESS)
		return uevm_err(EIO, "TPM: extending PCR %d: %s", pcr,
				uevm_tss.Tss2_RC_Decode(rc));
	return 0;
}

/* Extend PCR with zeros in every bank: no list can replay that (an entry
 * extends its template digest, a hash; a violation, listed as zeros,
 * extends 0xff..ff), so the PCR stops matching any list until a reset. */
int ima_tpm_invalidate(struct ima_tpm *tpm, int pcr)
{
	return ima_tpm_extend(tpm, pcr, NULL);
}
