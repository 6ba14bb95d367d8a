// SPDX-License-Identifier: GPL-2.0-or-later
/* Signature options of `uevm verify`: certificates and the kernel's rules. */
#include <stdlib.h>
#include "prog.h"
#include "uevm_internal.h"

int sig_verify_opt(struct sig_verify_opts *so, int c, const char *arg)
{
	const char **v;

	switch (c) {
	case OPT_SIG_CERT:
		v = realloc(so->certs, sizeof(*v) * (size_t)(so->ncerts + 1));
		if (!v)
			return -1;
		so->certs = v;
		so->certs[so->ncerts++] = arg;
		return 1;
	case OPT_SIG_IMASIG:
		so->flags |= UEVM_CTX_IMASIG_REQUIRED;
		return 1;
	case OPT_SIG_FIX_EVM:
		so->flags |= UEVM_CTX_EVM_SIG_TO_HMAC;
		return 1;
	case OPT_SIG_WEAK:
		/* RSA under 2048 bits, P-192, SM2: taken with a warning. */
		uevm_set_key_checks(UEVM_KEY_CHECKS_WARN_WEAK);
		return 1;
	}
	return 0;
}

int sig_verify_apply(struct sig_verify_opts *so, struct uevm_ctx *ctx)
{
	for (int i = 0; i < so->ncerts; i++) {
		if (uevm_ctx_add_certs(ctx, so->certs[i])) {
			error_msg("certificate: %s", uevm_last_error());
			return -1;
		}
	}
	uevm_ctx_set_flags(ctx, uevm_ctx_flags(ctx) | so->flags);
	return 0;
}

void sig_verify_opts_free(struct sig_verify_opts *so)
{
	free(so->certs);
	so->certs = NULL;
	so->ncerts = 0;
}
