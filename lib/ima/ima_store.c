// SPDX-License-Identifier: LGPL-2.1-or-later
/* The hook side of measurement (the kernel's ima_store_measurement): an
 * appraised or opened file's collected digest goes to the list. */
#include "integrity_private.h"
#include "ima.h"

int ima_store_measurement(struct integrity_sys *s, const struct integrity_event *ev,
			  const struct ima_digest *dig, const uint8_t *xattr,
			  size_t xattr_len, const char *template_name, int pcr)
{
	struct ima_measurements *ml = integrity_sys_measurements(s);
	struct ima_event_data data = {
		.filename = ev->filename ? ev->filename : ev->file->path,
		.algo = dig->algo,
		.digest = dig->d,
		.digest_len = uevm_hash_algo_digest_size(dig->algo),
		.xattr_value = xattr,
		.xattr_len = xattr_len,
		.file = ev->file,
	};
	int ret;

	if (!ml)
		return -ENOENT;	/* nothing to record into: not measured */
	ret = ima_ml_add_file(ml, &data, template_name, pcr);
	if (ret < 0) {
		integrity_audit_msg(s, AUDIT_INTEGRITY_PCR, ev->file, data.filename,
				    ev->cred, "add_measurement",
				    uevm_last_error(), ret, false);
		/* The host's list no longer replays (host_invalidate): say
		 * which file's access it could not record. */
		if (ret == -ENOTRECOVERABLE)
			integrity_audit_msg(s, AUDIT_INTEGRITY_PCR, ev->file,
					    data.filename, ev->cred,
					    "add_measurement",
					    "host-list-invalidated", ret, false);
		/* As the kernel: a failed TPM extend leaves the entry listed. */
		return ret == -EIO ? 0 : ret;
	}
	return 0;	/* added, or already listed */
}

/* A list that replaced the one of a previous boot (the TPM was reset)
 * leaves an audit record naming it, whichever front-end opened it. */
void ima_store_audit_open(struct integrity_sys *s, struct ima_measurements *ml)
{
	if (ml && ima_ml_open_state(ml) == IMA_ML_ROTATED)
		integrity_audit_msg(s, AUDIT_INTEGRITY_PCR, NULL, ima_ml_path(ml),
				    NULL, "measurement_list", "tpm-reset-rotated",
				    0, false);
}

int ima_store_default_pcr(struct integrity_sys *s)
{
	struct ima_measurements *ml = integrity_sys_measurements(s);

	return ml ? ima_ml_default_pcr(ml) : IMA_ML_DEFAULT_PCR;
}

/* The kernel's ima_add_violation: an entry without a digest (its PCR can
 * no longer be trusted to describe the file) and an audit record. */
void ima_store_violation(struct integrity_sys *s, const struct integrity_event *ev,
			 const char *template_name, const char *cause)
{
	struct ima_measurements *ml = integrity_sys_measurements(s);
	const char *name = ev->filename ? ev->filename : ev->file->path;
	int ret;

	if (!ml)
		return;
	/* The list's own PCR (-1), as the kernel's CONFIG_IMA_MEASURE_PCR_IDX. */
	ret = ima_ml_add_violation(ml, name, template_name, -1);
	integrity_audit_msg(s, AUDIT_INTEGRITY_PCR, ev->file, name, ev->cred,
			    "invalid_pcr", cause, ret < 0 ? ret : 0, false);
}
