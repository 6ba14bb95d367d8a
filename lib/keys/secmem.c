// SPDX-License-Identifier: LGPL-2.1-or-later
/* Memory for key material: page-aligned, locked so it never reaches swap,
 * excluded from core dumps, and wiped before it is returned. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "lib_private.h"

static size_t round_pages(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (len + page - 1) / page * page;
}

void *uevm_secure_alloc(size_t len)
{
	size_t size = round_pages(len);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* Both are best effort: RLIMIT_MEMLOCK may be tiny for non-root
	 * users, and the key must still be usable there. */
	(void)mlock(p, size);
	(void)madvise(p, size, MADV_DONTDUMP);
	(void)madvise(p, size, MADV_DONTFORK);
	return p;
}

void uevm_secure_free(void *p, size_t len)
{
	size_t size = round_pages(len);

	if (!p)
		return;
	explicit_bzero(p, size);
	munlock(p, size);
	munmap(p, size);
}

int uevm_memneq(const void *a, const void *b, size_t n)
{
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d != 0;
}
