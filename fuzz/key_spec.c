// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The short strings users give for keys: key specifications
 * ("passphrase:PATH,passphrase-fd=3", "keyring:evm-key,keep", ...; parsed
 * without opening anything: every accepted spec names a form, its options
 * belong to that form, and "file:" is refused), keyring names
 * (uevm_keyring_parse) and TPM PCR lists (uevm_tpm_parse_pcrs).
 */
#include <string.h>
#include "fuzz.h"
#include "keys.h"
#include "key_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uevm_key_spec_info info;
	char *s = fuzz_cstr(data, size);
	uint32_t mask;
	int32_t id;
	int ret;

	if (!s)
		return 0;
	ret = uevm_key_spec_parse(s, &info);
	if (ret) {
		FUZZ_ASSERT(ret == -EINVAL || ret == -ENOMEM);
		FUZZ_ASSERT(uevm_last_error()[0] != '\0');
	} else {
		FUZZ_ASSERT(info.keyring == (info.form == UEVM_KEY_FORM_KEYRING));
		FUZZ_ASSERT(info.passphrase_fd >= -1);
		FUZZ_ASSERT(info.burn >= -1 && info.burn <= 1);
		/* Every spec names a form; none is left to guess. */
		FUZZ_ASSERT(info.form != UEVM_KEY_FORM_UNKNOWN);
		FUZZ_ASSERT(strncmp(s, "file:", 5) != 0);
		if (info.plain)
			FUZZ_ASSERT(info.form == UEVM_KEY_FORM_RAW &&
				    info.passphrase_fd == -1 && !info.has_master &&
				    !info.has_tcti);
		/* An option only with the form it belongs to. */
		if (info.passphrase_fd >= 0)
			FUZZ_ASSERT(info.form == UEVM_KEY_FORM_PASSPHRASE);
		if (info.has_master)
			FUZZ_ASSERT(info.form == UEVM_KEY_FORM_KERNEL_BLOB);
		if (info.has_tcti)
			FUZZ_ASSERT(info.form == UEVM_KEY_FORM_TPM);
		if (info.keyring)
			FUZZ_ASSERT(!info.has_master && !info.has_tcti &&
				    info.passphrase_fd == -1);
	}
	if (uevm_keyring_parse(s, &id) == 0)
		FUZZ_ASSERT(id != 0);
	if (uevm_tpm_parse_pcrs(s, &mask) == 0)
		FUZZ_ASSERT(mask != 0 && mask < (1u << 24));
	free(s);
	return 0;
}
