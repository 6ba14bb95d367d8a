// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Key files as `uevm key status` reads them: form detection, then the
 * header parsers of the passphrase-wrapped, TPM-sealed and kernel-blob
 * forms (uevm_key_file_describe through uevm_key_describe_mem), without
 * unwrapping anything.
 */
#include "fuzz.h"
#include "keys.h"
#include "key_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = fuzz_dup(data, size);
	enum uevm_key_form form = uevm_key_detect(buf, size);
	char desc[256];
	int ret;

	if (form == UEVM_KEY_FORM_RAW)
		FUZZ_ASSERT(size >= 1 && size <= UEVM_MAX_KEY_SIZE);
	if (size == 0)
		FUZZ_ASSERT(form == UEVM_KEY_FORM_UNKNOWN);
	desc[0] = '\0';
	ret = uevm_key_describe_mem(buf, size, desc, sizeof(desc));
	if (ret < 0) {
		FUZZ_ASSERT(uevm_last_error()[0] != '\0');
	} else {
		FUZZ_ASSERT(ret == (int)form);
		FUZZ_ASSERT(desc[0] != '\0' && strlen(desc) < sizeof(desc));
	}
	free(buf);
	return 0;
}
