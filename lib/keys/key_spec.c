// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Key specifications: which form a key is in and how to get at it.
 *   FORM:PATH[,OPTION]...     raw, passphrase, tpm, kernel-blob
 *   keyring:DESC[,burn|,keep]
 *   PATH                      a raw key file (raw:PATH)
 * The operator names the form; it is never guessed from the file, whose
 * bytes an attacker with the disk can write: a protected key file replaced
 * by raw bytes must be refused, not used as a raw key.  See
 * lib/keys/keys.h and uevm-key(1).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "key_private.h"

#define KEYRING_PREFIX "keyring:"
#define MASTER_MAX 32767	/* the kernel's user key payload limit */

struct spec {
	enum uevm_key_form form;
	bool keyring;
	bool plain;			/* a plain PATH, no FORM: prefix */
	char *loc;			/* path or key description */
	int passphrase_fd;		/* -1: none given */
	const char *master, *tcti;
	int burn;			/* -1: none given */
	char *copy;
};

static const struct {
	const char *prefix;
	enum uevm_key_form form;
} prefixes[] = {
	{ "raw:", UEVM_KEY_FORM_RAW },
	{ "passphrase:", UEVM_KEY_FORM_PASSPHRASE },
	{ "tpm:", UEVM_KEY_FORM_TPM },
	{ "kernel-blob:", UEVM_KEY_FORM_KERNEL_BLOB },
};

/* How messages call a file of each form. */
static const char *form_file(enum uevm_key_form form)
{
	switch (form) {
	case UEVM_KEY_FORM_RAW:
		return "raw key file";
	case UEVM_KEY_FORM_PASSPHRASE:
		return "passphrase-protected key file";
	case UEVM_KEY_FORM_TPM:
		return "TPM-sealed key file";
	case UEVM_KEY_FORM_KERNEL_BLOB:
		return "kernel key blob";
	default:
		return "key file of no form uevm knows";
	}
}

/* The spec an operator writes for PATH in FORM, for messages. */
static void form_spec(enum uevm_key_form form, const char *path, char *buf,
		      size_t len)
{
	switch (form) {
	case UEVM_KEY_FORM_PASSPHRASE:
		snprintf(buf, len, "passphrase:%s (with passphrase-fd=N to read "
			 "the passphrase from a descriptor)", path);
		break;
	case UEVM_KEY_FORM_TPM:
		snprintf(buf, len, "tpm:%s", path);
		break;
	case UEVM_KEY_FORM_KERNEL_BLOB:
		snprintf(buf, len, "kernel-blob:%s,master=FILE", path);
		break;
	default:
		snprintf(buf, len, "raw:%s", path);
		break;
	}
}

UEVM_EXPORT void uevm_key_load_opts_init(struct uevm_key_load_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->burn = -1;
}

static bool starts_like(const uint8_t *d, size_t len, const char *s)
{
	size_t n = strlen(s);

	return !memcmp(d, s, len < n ? len : n);
}

/* Kernel blobs: "[load ][FORMAT ]user:..." (or trusted:). */
static bool looks_like_kblob(const uint8_t *d, size_t len, bool *has_format)
{
	static const char *const formats[] = { "default ", "enc32 ", "ecryptfs " };
	const char *p = (const char *)d, *end = p + len;

	*has_format = false;
	if (len > 5 && !memcmp(p, "load ", 5))
		p += 5;
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		size_t n = strlen(formats[i]);

		if ((size_t)(end - p) >= n && !memcmp(p, formats[i], n)) {
			p += n;
			*has_format = true;
			break;
		}
	}
	return ((size_t)(end - p) > 5 && !memcmp(p, "user:", 5)) ||
	       ((size_t)(end - p) > 8 && !memcmp(p, "trusted:", 8));
}

UEVM_EXPORT enum uevm_key_form uevm_key_detect(const void *data, size_t len)
{
	const uint8_t *d = data;
	bool has_format;

	if (len == 0)
		return UEVM_KEY_FORM_UNKNOWN;
	/* A damaged or truncated protected file must never pass for a raw
	 * key: anything that begins like a magic line is that form. */
	if (len >= 4 && starts_like(d, len, UEVM_PASSPHRASE_MAGIC))
		return UEVM_KEY_FORM_PASSPHRASE;
	if (len >= 4 && starts_like(d, len, UEVM_TPM_MAGIC))
		return UEVM_KEY_FORM_TPM;
	if (looks_like_kblob(d, len, &has_format) &&
	    (has_format || len > UEVM_MAX_KEY_SIZE))
		return UEVM_KEY_FORM_KERNEL_BLOB;
	if (len <= UEVM_MAX_KEY_SIZE)
		return UEVM_KEY_FORM_RAW;
	return UEVM_KEY_FORM_UNKNOWN;
}

static void spec_free(struct spec *s)
{
	free(s->copy);
}

/* An option belongs to one form; given with another it is a mistake
 * that must not pass silently. */
static int option_fits(const char *str, const struct spec *s)
{
	if (s->passphrase_fd >= 0 && s->form != UEVM_KEY_FORM_PASSPHRASE)
		return uevm_err(EINVAL, "key spec '%s': passphrase-fd= applies to "
				"passphrase: keys only", str);
	if (s->master && s->form != UEVM_KEY_FORM_KERNEL_BLOB)
		return uevm_err(EINVAL, "key spec '%s': master= applies to "
				"kernel-blob: keys only", str);
	if (s->tcti && s->form != UEVM_KEY_FORM_TPM)
		return uevm_err(EINVAL, "key spec '%s': tcti= applies to tpm: keys "
				"only", str);
	return 0;
}

static int parse_spec(const char *str, struct spec *s)
{
	char *p, *opt;

	memset(s, 0, sizeof(*s));
	s->passphrase_fd = -1;
	s->burn = -1;
	s->copy = strdup(str);
	if (!s->copy)
		return uevm_err(ENOMEM, "out of memory");
	p = s->copy;
	if (!strncmp(p, "file:", 5))
		return uevm_err(EINVAL, "key spec '%s': 'file:' (guess the form "
				"from the file) is not accepted, since whoever can "
				"write the file would choose its form; name the "
				"key's form: raw:%s, passphrase:%s, tpm:%s or "
				"kernel-blob:%s,master=FILE", str, p + 5, p + 5,
				p + 5, p + 5);
	if (!strncmp(p, KEYRING_PREFIX, strlen(KEYRING_PREFIX))) {
		s->keyring = true;
		s->form = UEVM_KEY_FORM_KEYRING;
		p += strlen(KEYRING_PREFIX);
	} else {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(prefixes); i++)
			if (!strncmp(p, prefixes[i].prefix,
				     strlen(prefixes[i].prefix)))
				break;
		if (i == ARRAY_SIZE(prefixes)) {
			/* A plain path is a raw key file; no options, so that
			 * any file name works. */
			s->form = UEVM_KEY_FORM_RAW;
			s->plain = true;
			s->loc = p;
			if (!*p)
				return uevm_err(EINVAL, "empty key spec");
			return 0;
		}
		s->form = prefixes[i].form;
		p += strlen(prefixes[i].prefix);
	}
	s->loc = p;
	opt = strchr(p, ',');
	if (opt)
		*opt++ = '\0';
	while (opt) {
		char *next, *end;

		if (!strncmp(opt, "tcti=", 5) && !s->keyring) {
			s->tcti = opt + 5;	/* TCTI configs contain commas */
			break;
		}
		next = strchr(opt, ',');
		if (next)
			*next++ = '\0';
		if (s->keyring && !strcmp(opt, "burn")) {
			s->burn = 1;
		} else if (s->keyring && !strcmp(opt, "keep")) {
			s->burn = 0;
		} else if (!s->keyring && !strncmp(opt, "master=", 7) && opt[7]) {
			s->master = opt + 7;
		} else if (!s->keyring && !strncmp(opt, "passphrase-fd=", 14)) {
			long fd = strtol(opt + 14, &end, 10);

			if (!opt[14] || *end || fd < 0 || fd > 1 << 20)
				return uevm_err(EINVAL, "key spec '%s': bad passphrase-fd",
						str);
			s->passphrase_fd = (int)fd;
		} else {
			return uevm_err(EINVAL, "key spec '%s': unknown option '%s'",
					str, opt);
		}
		opt = next;
	}
	if (!*s->loc)
		return uevm_err(EINVAL, "key spec '%s' names no %s", str,
				s->keyring ? "key" : "file");
	return option_fits(str, s);
}

int uevm_key_spec_parse(const char *str, struct uevm_key_spec_info *info)
{
	struct spec s;
	int ret = parse_spec(str, &s);

	if (!ret) {
		info->form = s.form;
		info->keyring = s.keyring;
		info->passphrase_fd = s.passphrase_fd;
		info->burn = s.burn;
		info->has_master = s.master != NULL;
		info->has_tcti = s.tcti != NULL;
		info->plain = s.plain;
	}
	spec_free(&s);
	return ret;
}

UEVM_EXPORT int uevm_key_spec_form(const char *spec, enum uevm_key_form *form)
{
	struct uevm_key_spec_info info;
	int ret = uevm_key_spec_parse(spec, &info);

	if (!ret)
		*form = info.form;
	return ret;
}

/* "PATH: reason" around a loader's message. */
static int name_file(int ret, const char *path)
{
	char why[512];

	snprintf(why, sizeof(why), "%s", uevm_last_error());
	if (!strncmp(why, path, strlen(path)))
		return ret;	/* already names it */
	return uevm_err(-ret, "%s: %s", path, why);
}

int uevm_key_from_raw_file(const char *path, const struct uevm_secret *file,
			   struct uevm_key **out)
{
	enum uevm_key_form looks = uevm_key_detect(file->data, file->len);
	char spec[PATH_MAX + 96];

	/* A raw key is never taken from a file that looks protected: that is
	 * an operator's slip at best, and never bytes to use as the key.
	 * evmctl (whose keys are always raw) is only warned. */
	if (looks != UEVM_KEY_FORM_RAW && looks != UEVM_KEY_FORM_UNKNOWN) {
		form_spec(looks, path, spec, sizeof(spec));
		if (!uevm_file_checks_warn_only())
			return uevm_err(EINVAL, "key file %s looks like a %s, not a "
					"raw key, and is not used as raw bytes; if it "
					"is a %s, name its form: %s", path,
					form_file(looks), form_file(looks), spec);
		uevm_warn("key file %s looks like a %s; it is used as raw bytes",
			  path, form_file(looks));
	}
	if (file->len > UEVM_MAX_KEY_SIZE)
		return uevm_err(EINVAL, "key file %s is larger than %d bytes",
				path, UEVM_MAX_KEY_SIZE);
	return uevm_key_from_bytes(file->data, file->len, out);
}

static int load_kblob(const char *path, const struct uevm_secret *file,
		      const char *master, struct uevm_key **out)
{
	struct uevm_secret m;
	int ret;

	if (!master)
		return uevm_err(EINVAL, "key file %s is a kernel key blob; give its "
				"master key: kernel-blob:%s,master=FILE (or "
				"--master-key FILE)", path, path);
	ret = uevm_secret_load(master, MASTER_MAX, &m);
	if (ret)
		return ret;
	ret = uevm_kblob_import((const char *)file->data, file->len, m.data,
				m.len, out, NULL);
	uevm_secret_free(&m);
	return ret ? name_file(ret, path) : 0;
}

static void describe_origin(const struct spec *s, const char *master,
			    struct uevm_key_origin *origin)
{
	if (s->form == UEVM_KEY_FORM_KERNEL_BLOB)
		snprintf(origin->desc, sizeof(origin->desc), "%s %s (master key %s)",
			 form_file(s->form), s->loc, master ? master : "?");
	else
		snprintf(origin->desc, sizeof(origin->desc), "%s %s",
			 form_file(s->form), s->loc);
	origin->form = s->form;
}

static int load_file(const struct spec *s, const struct uevm_key_load_opts *o,
		     struct uevm_key **out)
{
	struct uevm_key_load_opts opts = *o;
	struct uevm_secret file;
	enum uevm_key_form looks;
	int ret, fd = s->passphrase_fd;

	ret = uevm_secret_read_file(s->loc, UEVM_KEY_FILE_MAX, "key file", &file);
	if (ret)
		return ret;
	looks = uevm_key_detect(file.data, file.len);
	if (s->form != UEVM_KEY_FORM_RAW && looks != s->form) {
		ret = uevm_err(EINVAL, "key file %s is not a %s: its contents look "
			       "like %s.  A key is used only in the form its "
			       "specification names; if this file was not meant to "
			       "change, it was replaced", s->loc, form_file(s->form),
			       looks == UEVM_KEY_FORM_RAW ? "a raw key" :
			       looks == UEVM_KEY_FORM_UNKNOWN ? "no key format" :
			       form_file(looks));
		goto out;
	}
	if (fd >= 0) {
		opts.passphrase = uevm_passphrase_from_fd;
		opts.passphrase_arg = &fd;
	}
	if (s->master)
		opts.master_key = s->master;
	if (s->tcti)
		opts.tcti = s->tcti;

	switch (s->form) {
	case UEVM_KEY_FORM_RAW:
		ret = uevm_key_from_raw_file(s->loc, &file, out);
		break;
	case UEVM_KEY_FORM_PASSPHRASE:
		ret = uevm_key_load_passphrase(s->loc, &file, &opts, out);
		if (ret)
			ret = name_file(ret, s->loc);
		break;
	case UEVM_KEY_FORM_TPM:
		ret = uevm_key_tpm_unseal(file.data, file.len, opts.tcti, out);
		if (ret)
			ret = name_file(ret, s->loc);
		break;
	case UEVM_KEY_FORM_KERNEL_BLOB:
		ret = load_kblob(s->loc, &file, opts.master_key, out);
		break;
	default:
		ret = uevm_err(EINVAL, "key file %s: no form", s->loc);
		break;
	}
	if (!ret && o->origin)
		describe_origin(s, opts.master_key, o->origin);
out:
	uevm_secret_free(&file);
	return ret;
}

static int load_keyring(const struct spec *s, const struct uevm_key_load_opts *o,
			struct uevm_key **out)
{
	struct uevm_keyring_hit hit;
	bool burn = s->burn >= 0 ? s->burn :
		    o->burn >= 0 ? o->burn :
		    !strcmp(s->loc, UEVM_KEYRING_DEFAULT_NAME);
	int ret = uevm_keyring_take_hit(s->loc, burn, out, &hit);

	if (!ret && o->origin) {
		o->origin->form = UEVM_KEY_FORM_KEYRING;
		uevm_keyring_hit_describe(&hit, s->loc, o->origin->desc,
					  sizeof(o->origin->desc));
	}
	return ret;
}

UEVM_EXPORT int uevm_key_load_ex(const char *spec,
				 const struct uevm_key_load_opts *o,
				 struct uevm_key **out, enum uevm_key_form *form)
{
	struct uevm_key_load_opts def;
	struct spec s;
	int ret;

	if (!spec || !*spec)
		return uevm_err(EINVAL, "no HMAC key given");
	if (!o) {
		uevm_key_load_opts_init(&def);
		o = &def;
	}
	ret = parse_spec(spec, &s);
	if (!ret && s.plain && o->need_form)
		ret = uevm_err(EINVAL, "a plain path does not say the key's form; "
			       "name the key's form: raw:%s, tpm:%s, passphrase:%s,"
			       "passphrase-fd=N or kernel-blob:%s,master=FILE", s.loc,
			       s.loc, s.loc, s.loc);
	if (!ret)
		ret = s.keyring ? load_keyring(&s, o, out) : load_file(&s, o, out);
	if (!ret && form)
		*form = s.form;
	spec_free(&s);
	uevm_scrub();
	return ret;
}
