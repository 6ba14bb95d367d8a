// SPDX-License-Identifier: LGPL-2.1-or-later
/* The TPM stack, loaded at first use (tss_private.h). */
#include "lib_private.h"
#include "dlopen_private.h"
#include "tss_private.h"

struct uevm_tss uevm_tss;

#define UEVM_TSS_SYM(lib, f) { lib, #f, (void **)&uevm_tss.f },
static const struct uevm_dl_sym tss_syms[] = {
	UEVM_TSS_FUNCTIONS(UEVM_TSS_SYM)
};

static struct uevm_dl tss_dl = UEVM_DL_INIT("TPM support", tss_syms);

int uevm_tss_load(void)
{
	return uevm_dl_load(&tss_dl);
}
