// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Template descriptors: the built-in templates (the kernel's
 * builtin_templates[]) and custom formats such as "d-ng|n-ng|sig", each a
 * list of registered fields.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "ima_ml_private.h"

struct builtin {
	const char *name;
	const char *fmt;
};

static const struct builtin builtin_templates[] = {
	{ IMA_TEMPLATE_IMA_NAME, "d|n" },
	{ "ima-ng", "d-ng|n-ng" },
	{ "ima-sig", "d-ng|n-ng|sig" },
	{ "ima-ngv2", "d-ngv2|n-ng" },
	{ "ima-sigv2", "d-ngv2|n-ng|sig" },
	{ "ima-buf", "d-ng|n-ng|buf" },
	{ "ima-modsig", "d-ng|n-ng|sig|d-modsig|modsig" },
};

/* Resolved descriptors, built on first use and kept for the process's
 * lifetime (callers hold plain pointers to them). */
struct desc_node {
	struct ima_template_desc desc;
	struct desc_node *next;
	char strings[];		/* name and fmt */
};

static pthread_mutex_t desc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct desc_node *desc_list;

/* Split FMT into registered fields; the kernel's template_desc_init_fields. */
int ima_template_fmt_parse(const char *fmt, struct ima_template_desc *d)
{
	const char *p = fmt;
	int n = 0;

	if (!*fmt)
		return uevm_err(EINVAL, "empty template format");
	while (p) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		char id[32];

		if (!len || len >= sizeof(id))
			return uevm_err(EINVAL, "template format '%s': empty or "
					"overlong field", fmt);
		memcpy(id, p, len);
		id[len] = '\0';
		if (n == IMA_TEMPLATE_NUM_FIELDS_MAX)
			return uevm_err(EINVAL, "template format '%s': more than "
					"%d fields", fmt, IMA_TEMPLATE_NUM_FIELDS_MAX);
		d->fields[n] = ima_template_field_lookup(id);
		if (!d->fields[n])
			return uevm_err(EINVAL, "template format '%s': unknown "
					"field '%s'", fmt, id);
		n++;
		p = bar ? bar + 1 : NULL;
	}
	d->num_fields = n;
	return 0;
}

static const struct ima_template_desc *add_desc(const char *name, const char *fmt)
{
	size_t nl = strlen(name), fl = strlen(fmt);
	struct desc_node *node = calloc(1, sizeof(*node) + nl + fl + 2);

	if (!node) {
		uevm_err(ENOMEM, "out of memory for a template descriptor");
		return NULL;
	}
	memcpy(node->strings, name, nl + 1);
	memcpy(node->strings + nl + 1, fmt, fl + 1);
	node->desc.name = node->strings;
	node->desc.fmt = node->strings + nl + 1;
	if (ima_template_fmt_parse(node->desc.fmt, &node->desc)) {
		free(node);
		return NULL;
	}
	node->next = desc_list;
	desc_list = node;
	return &node->desc;
}

UEVM_EXPORT const struct ima_template_desc *
ima_template_desc_lookup(const char *name_or_fmt)
{
	const struct ima_template_desc *d = NULL;
	const char *name = "", *fmt = name_or_fmt;

	if (!name_or_fmt || !*name_or_fmt) {
		uevm_err(EINVAL, "no template name");
		return NULL;
	}
	/* A built-in name, or a format equal to a built-in's, resolves to the
	 * built-in template (the kernel's lookup_template_desc). */
	for (size_t i = 0; i < ARRAY_SIZE(builtin_templates); i++)
		if (!strcmp(builtin_templates[i].name, name_or_fmt) ||
		    !strcmp(builtin_templates[i].fmt, name_or_fmt)) {
			name = builtin_templates[i].name;
			fmt = builtin_templates[i].fmt;
			break;
		}
	pthread_mutex_lock(&desc_lock);
	for (struct desc_node *n = desc_list; n; n = n->next)
		if (!strcmp(n->desc.name, name) && !strcmp(n->desc.fmt, fmt)) {
			d = &n->desc;
			break;
		}
	if (!d) {
		if (!*name && !strchr(fmt, '|') && !ima_template_field_lookup(fmt))
			uevm_err(EINVAL, "unknown template '%s'", name_or_fmt);
		else
			d = add_desc(name, fmt);
	}
	pthread_mutex_unlock(&desc_lock);
	return d;
}

const struct ima_template_desc *ima_template_builtin(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(builtin_templates); i++)
		if (!strcmp(builtin_templates[i].name, name))
			return ima_template_desc_lookup(name);
	return NULL;
}

UEVM_EXPORT const char *ima_template_desc_list_name(const struct ima_template_desc *d)
{
	return d->name[0] ? d->name : d->fmt;
}
