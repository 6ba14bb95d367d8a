// SPDX-License-Identifier: LGPL-2.1-or-later
/* Libraries loaded at first use (dlopen_private.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "lib_private.h"
#include "dlopen_private.h"

static int load_all(struct uevm_dl *d)
{
	for (size_t i = 0; i < d->count; i++) {
		const struct uevm_dl_sym *s = &d->syms[i];
		void *h;

		/* Loaded once; later opens of the same SONAME only count
		 * references, and nothing is ever closed: the functions stay
		 * valid for the life of the process. */
		h = dlopen(s->soname, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(d->error, sizeof(d->error), "%s needs %s: %s",
				 d->what, s->soname, dlerror());
			return -ELIBACC;
		}
		*s->slot = dlsym(h, s->name);
		if (!*s->slot) {
			snprintf(d->error, sizeof(d->error),
				 "%s needs %s with %s (too old?)", d->what,
				 s->soname, s->name);
			return -ELIBACC;
		}
	}
	return 1;
}

int uevm_dl_load(struct uevm_dl *d)
{
	int state;

	pthread_mutex_lock(&d->lock);
	if (!d->state)
		d->state = load_all(d);
	state = d->state;
	pthread_mutex_unlock(&d->lock);
	if (state < 0)
		return uevm_err(-state, "%s", d->error);
	return 0;
}
