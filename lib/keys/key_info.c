// SPDX-License-Identifier: LGPL-2.1-or-later
/* Describe a key file without unwrapping it: `uevm key status FILE`. */
#include <stdio.h>
#include "key_private.h"

int uevm_key_describe_mem(const uint8_t *data, size_t size, char *out,
			  size_t len)
{
	struct uevm_kdf_params kdf;
	struct uevm_kblob_info kb;
	enum uevm_key_form form;
	uint32_t pcrs;
	size_t klen;
	int ret = 0;

	form = uevm_key_detect(data, size);
	switch (form) {
	case UEVM_KEY_FORM_PASSPHRASE:
		ret = uevm_key_passphrase_info(data, size, &kdf, &klen);
		if (!ret)
			snprintf(out, len, "%zu-byte key protected by a passphrase "
				 "(Argon2id, %llu passes, %zu MiB; XChaCha20-Poly1305)",
				 klen, (unsigned long long)kdf.opslimit,
				 kdf.memlimit >> 20);
		break;
	case UEVM_KEY_FORM_TPM:
		ret = uevm_key_tpm_info(data, size, &pcrs, &klen);
		if (!ret) {
			int n = snprintf(out, len, "%zu-byte key sealed to a TPM%s",
					 klen, pcrs ? ", PCR policy on sha256:" : "");

			for (int i = 0, k = 0; i < 24 && n > 0 && (size_t)n < len; i++)
				if (pcrs & (1u << i))
					n += snprintf(out + n, len - (size_t)n, "%s%d",
						      k++ ? "," : "", i);
		}
		break;
	case UEVM_KEY_FORM_KERNEL_BLOB:
		ret = uevm_kblob_parse((const char *)data, size, &kb);
		if (!ret)
			snprintf(out, len, "kernel encrypted-key blob, %s format, "
				 "master key %s, %zu-byte key", kb.format,
				 kb.master_desc, kb.datalen);
		break;
	case UEVM_KEY_FORM_RAW:
		snprintf(out, len, "%zu-byte PLAIN key (unprotected)", size);
		break;
	default:
		ret = uevm_err(EINVAL, "not a key file uevm knows");
		break;
	}
	return ret ? ret : (int)form;
}

UEVM_EXPORT int uevm_key_file_describe(const char *path, char *out, size_t len)
{
	struct uevm_secret file;
	int ret;

	ret = uevm_secret_read_file(path, UEVM_KEY_FILE_MAX, "key file", &file);
	if (ret)
		return ret;
	ret = uevm_key_describe_mem(file.data, file.len, out, len);
	uevm_secret_free(&file);
	return ret;
}
