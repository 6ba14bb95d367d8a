/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The TPM stack (tpm2-tss: ESYS, the TCTI loader, marshalling, response
 * codes), loaded at first use (dlopen_private.h): its functions are called
 * through the table uevm_tss after uevm_tss_load() returned 0.
 */
#ifndef UEVM_TSS_PRIVATE_H
#define UEVM_TSS_PRIVATE_H

#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#define UEVM_TSS_ESYS "libtss2-esys.so.0"
#define UEVM_TSS_TCTILDR "libtss2-tctildr.so.0"
#define UEVM_TSS_MU "libtss2-mu.so.0"
#define UEVM_TSS_RC "libtss2-rc.so.0"

/* Every function uevm uses, with the library that has it. */
#define UEVM_TSS_FUNCTIONS(X)					\
	X(UEVM_TSS_ESYS, Esys_Create)				\
	X(UEVM_TSS_ESYS, Esys_CreatePrimary)			\
	X(UEVM_TSS_ESYS, Esys_Finalize)				\
	X(UEVM_TSS_ESYS, Esys_FlushContext)			\
	X(UEVM_TSS_ESYS, Esys_Free)				\
	X(UEVM_TSS_ESYS, Esys_GetCapability)			\
	X(UEVM_TSS_ESYS, Esys_Initialize)			\
	X(UEVM_TSS_ESYS, Esys_Load)				\
	X(UEVM_TSS_ESYS, Esys_PCR_Extend)			\
	X(UEVM_TSS_ESYS, Esys_PCR_Read)				\
	X(UEVM_TSS_ESYS, Esys_PolicyGetDigest)			\
	X(UEVM_TSS_ESYS, Esys_PolicyPCR)			\
	X(UEVM_TSS_ESYS, Esys_StartAuthSession)			\
	X(UEVM_TSS_ESYS, Esys_Startup)				\
	X(UEVM_TSS_ESYS, Esys_TRSess_SetAttributes)		\
	X(UEVM_TSS_ESYS, Esys_Unseal)				\
	X(UEVM_TSS_TCTILDR, Tss2_TctiLdr_Finalize)		\
	X(UEVM_TSS_TCTILDR, Tss2_TctiLdr_Initialize)		\
	X(UEVM_TSS_MU, Tss2_MU_TPM2B_PRIVATE_Marshal)		\
	X(UEVM_TSS_MU, Tss2_MU_TPM2B_PRIVATE_Unmarshal)		\
	X(UEVM_TSS_MU, Tss2_MU_TPM2B_PUBLIC_Marshal)		\
	X(UEVM_TSS_MU, Tss2_MU_TPM2B_PUBLIC_Unmarshal)		\
	X(UEVM_TSS_RC, Tss2_RC_Decode)

#define UEVM_TSS_SLOT(lib, f) __typeof__(f) *f;
struct uevm_tss {
	UEVM_TSS_FUNCTIONS(UEVM_TSS_SLOT)
};
#undef UEVM_TSS_SLOT

extern struct uevm_tss uevm_tss;

/* Load the TPM stack: 0, or -ELIBACC naming the missing library. */
int uevm_tss_load(void);

#endif
