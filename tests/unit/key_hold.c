// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Key memory hygiene.  Without arguments: checks that key memory is locked
 * and excluded from core dumps (VmFlags "lo" and "dd" in /proc/self/smaps)
 * and unmapped when freed.  As a helper for tests/integration/keys_*.sh:
 *
 *   key_hold hold SPEC [leak]  load a key like a consumer does (SPEC names
 *                              its form: raw:FILE, ...), compute an
 *                              HMAC with it, print "ready", wait for EOF on
 *                              stdin (the test dumps core meanwhile); with
 *                              "leak", also copy the key to ordinary heap
 *                              memory (the positive control)
 *   key_hold search FILE HEX   print how often the bytes occur in FILE
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "key_private.h"
#include "test.h"

/* ASan builds: let the kernel write the core dump this helper is for. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "disable_coredump=0";
}

/* The VmFlags line of the mapping that contains P, or "" if none does. */
static void vm_flags(const void *p, char *out, size_t len)
{
	FILE *fp = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;

	out[0] = '\0';
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') &&
		    strchr(line, ' ') > strchr(line, '-')) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			size_t n = strlen(line + 8);

			if (n >= len)
				n = len - 1;
			memcpy(out, line + 8, n);
			out[n] = '\0';
			break;
		}
	}
	fclose(fp);
}

static bool has_flag(const char *flags, const char *f)
{
	char pat[8];

	snprintf(pat, sizeof(pat), " %s", f);
	return strstr(flags, pat) != NULL;
}

static int self_test(void)
{
	struct uevm_key *key;
	struct uevm_secret s;
	char flags[256];
	const void *where;

	if (uevm_key_generate(32, &key)) {
		CHECK("generate a key", 0);
		TEST_EXIT();
	}
	vm_flags(key, flags, sizeof(flags));
	CHECK("key memory is excluded from core dumps (dd)", has_flag(flags, "dd"));
	/* AddressSanitizer turns mlock() into a no-op: "lo" is only
	 * meaningful without it. */
#ifndef __SANITIZE_ADDRESS__
	CHECK("key memory is locked (lo)", has_flag(flags, "lo"));
#else
	printf("note: ASan build, mlock is a no-op: \"lo\" not checked\n");
#endif
	CHECK("key memory is not inherited by fork (dc)", has_flag(flags, "dc"));
	where = key;
	uevm_key_free(key);
	vm_flags(where, flags, sizeof(flags));
	CHECK("freed key memory is unmapped", flags[0] == '\0');

	if (uevm_secret_alloc(&s, 100) == 0) {
		vm_flags(s.data, flags, sizeof(flags));
		CHECK("secret memory is excluded from core dumps",
		      has_flag(flags, "dd"));
		uevm_secret_free(&s);
	}
	TEST_EXIT();
}

/* Global, so that the compiler cannot drop the positive control's copy. */
void *leaked_copy;

static int hold(const char *spec, bool leak)
{
	static const uint8_t value[] = { 0x04, 0x04, 0xaa, 0xbb };
	struct uevm_xattr_entry x = { "security.ima", value, sizeof(value) };
	struct uevm_hmac_misc misc = { .size = sizeof(misc), .ino = 12, .mode = 0100644 };
	struct uevm_key_load_opts lo;
	struct uevm_key *key;
	uint8_t hmac[UEVM_HMAC_SIZE];
	char c;

	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	/* As uevm's front-ends load keys: SPEC must name the key's form. */
	uevm_key_load_opts_init(&lo);
	lo.need_form = true;
	if (uevm_key_load_ex(spec, &lo, &key, NULL)) {
		fprintf(stderr, "key_hold: %s\n", uevm_last_error());
		return 2;
	}
	if (uevm_evm_calc_hmac_values(key, &x, 1, &misc, hmac)) {
		fprintf(stderr, "key_hold: %s\n", uevm_last_error());
		return 2;
	}
	if (leak) {
		leaked_copy = malloc(key->len);
		if (leaked_copy)
			memcpy(leaked_copy, key->raw, key->len);
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	uevm_key_free(key);
	free(leaked_copy);
	return 0;
}

static int search(const char *path, const char *hex)
{
	unsigned char needle[128];
	int n = hex2bin(hex, needle, sizeof(needle)), fd, count = 0;
	const uint8_t *map, *p, *end;
	struct stat st;

	fd = open(path, O_RDONLY);
	if (n <= 0 || fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "key_hold: cannot search %s\n", path);
		return 2;
	}
	if (st.st_size == 0) {
		printf("0\n");
		return 0;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return 2;
	end = map + st.st_size;
	for (p = map; (p = memmem(p, (size_t)(end - p), needle, (size_t)n)); p++)
		count++;
	munmap((void *)map, (size_t)st.st_size);
	printf("%d\n", count);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 1)
		return self_test();
	if (argc >= 3 && !strcmp(argv[1], "hold"))
		return hold(argv[2], argc > 3 && !strcmp(argv[3], "leak"));
	if (argc == 4 && !strcmp(argv[1], "search"))
		return search(argv[2], argv[3]);
	fprintf(stderr, "usage: key_hold [hold SPEC [leak] | search FILE HEX]\n");
	return 2;
}
