// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Keys in the measurement list (the kernel's ima_asymmetric_keys.c).  The
 * kernel measures a key added to a keyring when its policy has a matching
 * "measure func=KEY_CHECK [keyrings=...]" rule: an ima-buf entry (or the
 * rule's template=) named after the keyring, whose buffer is the key's
 * payload, the DER certificate.  Keys loaded before the policy wait for it
 * (ima_process_queued_keys).  uevm's certificates play the part of the
 * .ima keyring: a front-end loads them first, then the policy and the
 * list, and then measures them here, so that a remote verifier (Keylime)
 * can learn the keys that IMA signatures in the list are checked with.
 * Critical data (a front-end's own settings, func=CRITICAL_DATA) goes the
 * same way: a buffer, measured under a matching rule.
 */
#include <stdlib.h>
#include <unistd.h>
#include "integrity_private.h"
#include "ima_policy.h"
#include "ima.h"

#define IMA_KEYRING ".ima"

static int measure_key(struct ima_measurements *ml, const struct ima_policy *p,
		       const uint8_t *der, size_t len)
{
	struct ima_match_input in = {
		.func = KEY_CHECK,
		.uid = getuid(),
		.keyrings_or_label = IMA_KEYRING,
	};
	struct ima_policy_result r;

	ima_match_policy(p, &in, IMA_MEASURE, &r);
	if (!(r.action & IMA_MEASURE))
		return -ENOENT;
	/* The template is ima-buf unless the rule names one. */
	return ima_ml_add_buffer(ml, IMA_KEYRING, der, len, r.template_name,
				 r.pcr);
}

UEVM_EXPORT int ima_measure_critical_data(struct integrity_sys *s, const char *label,
					  const char *event_name, const void *buf,
					  size_t len)
{
	struct ima_measurements *ml = integrity_sys_measurements(s);
	const struct ima_policy *p = integrity_sys_policy(s);
	struct ima_match_input in = {
		.func = CRITICAL_DATA,
		.uid = getuid(),
		.keyrings_or_label = label,
	};
	struct ima_policy_result r;
	int ret;

	if (!ml || !p)
		return 0;
	ima_match_policy(p, &in, IMA_MEASURE, &r);
	if (!(r.action & IMA_MEASURE))
		return 0;
	ret = ima_ml_add_buffer(ml, event_name, buf, len, r.template_name, r.pcr);
	return ret < 0 ? ret : ret == 0;
}

UEVM_EXPORT int ima_measure_keys(struct integrity_sys *s)
{
	const struct uevm_certset *set = uevm_ctx_certs(integrity_sys_ctx(s));
	struct ima_measurements *ml = integrity_sys_measurements(s);
	const struct ima_policy *p = integrity_sys_policy(s);
	int ret = 0, added = 0;

	if (!ml || !p || !(ima_policy_flag(p) & IMA_MEASURE))
		return 0;
	for (size_t i = 0; i < uevm_certset_count(set) && ret >= 0; i++) {
		uint8_t *der;
		int len = sig_certset_der(set, i, &der);

		if (len < 0)
			return len;
		ret = measure_key(ml, p, der, (size_t)len);
		free(der);
		if (ret == -ENOENT)
			return 0;	/* no rule for the keyring: none is */
		/* 1: already listed (a restart resumed the list). */
		if (ret == 0)
			added++;
	}
	return ret < 0 ? ret : added;
}
