// SPDX-License-Identifier: LGPL-2.1-or-later
/* Small pieces the key forms share: hex, the line-based file formats,
 * new files that are never overwritten, random keys. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "key_private.h"

UEVM_EXPORT const char *uevm_key_form_name(enum uevm_key_form form)
{
	switch (form) {
	case UEVM_KEY_FORM_RAW:
		return "raw";
	case UEVM_KEY_FORM_PASSPHRASE:
		return "passphrase";
	case UEVM_KEY_FORM_TPM:
		return "tpm";
	case UEVM_KEY_FORM_KERNEL_BLOB:
		return "kernel-blob";
	case UEVM_KEY_FORM_KEYRING:
		return "keyring";
	case UEVM_KEY_FORM_UNKNOWN:
		break;
	}
	return "unknown";
}

void uevm_hex_encode(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = '\0';
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int uevm_hex_decode(const char *in, size_t len, uint8_t *out)
{
	for (size_t i = 0; i < len; i++) {
		int hi = hex_val(in[2 * i]), lo = hex_val(in[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

const char *uevm_line_next(struct uevm_line_reader *r, const char *name, size_t *vlen)
{
	size_t nlen = strlen(name);
	const char *nl, *val;

	*vlen = 0;
	if (r->p >= r->end)
		return NULL;
	nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
	if (!nl)
		return NULL;	/* every line ends with a newline */
	if ((size_t)(nl - r->p) < nlen + 1 || memcmp(r->p, name, nlen) ||
	    r->p[nlen] != ' ')
		return NULL;
	val = r->p + nlen + 1;
	*vlen = (size_t)(nl - val);
	r->p = nl + 1;
	return val;
}

void uevm_text_printf(struct uevm_text_buf *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	for (;;) {
		size_t room = t->cap - t->len;

		va_start(ap, fmt);
		n = vsnprintf(t->s ? t->s + t->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
			return;
		}
		if ((size_t)n < room) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = (t->cap + (size_t)n + 1) * 2;
		char *s = realloc(t->s, cap);

		if (!s) {
			t->failed = true;
			return;
		}
		t->s = s;
		t->cap = cap;
	}
}

void uevm_text_hex(struct uevm_text_buf *t, const char *name,
		   const uint8_t *d, size_t n)
{
	char *hex = malloc(2 * n + 1);

	if (!hex) {
		t->failed = true;
		return;
	}
	uevm_hex_encode(d, n, hex);
	uevm_text_printf(t, "%s %s\n", name, hex);
	free(hex);
}

UEVM_EXPORT int uevm_write_new_file(const char *path, const void *data,
				    size_t len)
{
	const uint8_t *p = data;
	size_t done = 0;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		if (errno == EEXIST)
			return uevm_err(EEXIST, "%s already exists; it is never overwritten",
					path);
		return uevm_err(errno, "cannot create %s: %m", path);
	}
	/* O_CREAT's mode is filtered by the umask; make it exactly 0600. */
	if (fchmod(fd, 0600))
		goto fail;
	while (done < len) {
		ssize_t n = write(fd, p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		done += (size_t)n;
	}
	if (fsync(fd))
		goto fail;
	if (close(fd)) {
		fd = -1;
		goto fail;
	}
	return 0;
fail:;
	int err = errno;

	if (fd >= 0)
		close(fd);
	unlink(path);
	errno = err;
	return uevm_err(err, "cannot write %s: %m", path);
}

UEVM_EXPORT int uevm_key_write_plain(const struct uevm_key *key,
				     const char *path)
{
	return uevm_write_new_file(path, key->raw, key->len);
}

/*
 * Copies of key bytes outlive the calls that made them in two places no
 * free() reaches: stack frames (OpenSSL's AES code, for one, leaves
 * plaintext blocks there) and vector registers (memcpy moves a 32-byte
 * key through one ymm register; the next lazy symbol binding or signal
 * spills all registers onto the stack, and a core dump records them).
 * uevm_scrub() overwrites 16 KiB of stack below its caller and, on
 * x86-64, zeroes the vector registers.
 */
#if defined(__x86_64__)
__attribute__((noinline)) static void wipe_vector_registers(void)
{
	static int level = -1;	/* 0 SSE, 1 AVX, 2 AVX-512 */

	if (level < 0)
		level = __builtin_cpu_supports("avx512f") ? 2 :
			__builtin_cpu_supports("avx") ? 1 : 0;
	/* Every vector register is call-clobbered in the SysV ABI, so a
	 * call to this non-inlined function needs no clobber list. */
	if (level == 2)
		__asm__ __volatile__(
			"vzeroall\n\t"
			"vpxord %zmm16,%zmm16,%zmm16\n\tvpxord %zmm17,%zmm17,%zmm17\n\t"
			"vpxord %zmm18,%zmm18,%zmm18\n\tvpxord %zmm19,%zmm19,%zmm19\n\t"
			"vpxord %zmm20,%zmm20,%zmm20\n\tvpxord %zmm21,%zmm21,%zmm21\n\t"
			"vpxord %zmm22,%zmm22,%zmm22\n\tvpxord %zmm23,%zmm23,%zmm23\n\t"
			"vpxord %zmm24,%zmm24,%zmm24\n\tvpxord %zmm25,%zmm25,%zmm25\n\t"
			"vpxord %zmm26,%zmm26,%zmm26\n\tvpxord %zmm27,%zmm27,%zmm27\n\t"
			"vpxord %zmm28,%zmm28,%zmm28\n\tvpxord %zmm29,%zmm29,%zmm29\n\t"
			"vpxord %zmm30,%zmm30,%zmm30\n\tvpxord %zmm31,%zmm31,%zmm31");
	else if (level == 1)
		__asm__ __volatile__("vzeroall");
	else
		__asm__ __volatile__(
			"pxor %xmm0,%xmm0\n\tpxor %xmm1,%xmm1\n\tpxor %xmm2,%xmm2\n\t"
			"pxor %xmm3,%xmm3\n\tpxor %xmm4,%xmm4\n\tpxor %xmm5,%xmm5\n\t"
			"pxor %xmm6,%xmm6\n\tpxor %xmm7,%xmm7\n\tpxor %xmm8,%xmm8\n\t"
			"pxor %xmm9,%xmm9\n\tpxor %xmm10,%xmm10\n\tpxor %xmm11,%xmm11\n\t"
			"pxor %xmm12,%xmm12\n\tpxor %xmm13,%xmm13\n\tpxor %xmm14,%xmm14\n\t"
			"pxor %xmm15,%xmm15");
}
#else
static void wipe_vector_registers(void)
{
}
#endif

__attribute__((noinline)) void uevm_scrub(void)
{
	uint8_t buf[16384];

	explicit_bzero(buf, sizeof(buf));
	__asm__ __volatile__("" : : "r"(buf) : "memory");
	wipe_vector_registers();
}

UEVM_EXPORT size_t uevm_key_size(const struct uevm_key *key)
{
	return key->len;
}

UEVM_EXPORT int uevm_key_generate(size_t len, struct uevm_key **out)
{
	struct uevm_secret s;
	size_t done = 0;
	int ret;

	if (len < 1 || len > UEVM_MAX_KEY_SIZE)
		return uevm_err(EINVAL, "a key has 1 to %d bytes, not %zu",
				UEVM_MAX_KEY_SIZE, len);
	ret = uevm_secret_alloc(&s, len);
	if (ret)
		return ret;
	while (done < len) {
		ssize_t n = getrandom(s.data + done, len - done, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = uevm_err(errno, "cannot get random bytes: %m");
			goto out;
		}
		done += (size_t)n;
	}
	ret = uevm_key_from_bytes(s.data, len, out);
out:
	uevm_secret_free(&s);
	uevm_scrub();
	return ret;
}
