// SPDX-License-Identifier: LGPL-2.1-or-later
/* Secrets that are not HMAC keys (passphrases, master keys, key file
 * contents): read straight into locked, non-dumpable memory. */
#include <fcntl.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include "key_private.h"

#define PASSPHRASE_MAX 1024

int uevm_secret_alloc(struct uevm_secret *s, size_t cap)
{
	s->data = uevm_secure_alloc(cap);
	s->len = 0;
	s->cap = s->data ? cap : 0;
	if (!s->data)
		return uevm_err(ENOMEM, "cannot allocate locked memory for a secret");
	return 0;
}

UEVM_EXPORT void uevm_secret_free(struct uevm_secret *s)
{
	if (!s)
		return;
	uevm_secure_free(s->data, s->cap);
	s->data = NULL;
	s->len = s->cap = 0;
}

int uevm_secret_read_file(const char *path, size_t max, const char *what,
			  struct uevm_secret *out)
{
	int fd, ret;

	ret = uevm_secret_alloc(out, max + 1);
	if (ret)
		return ret;
	fd = uevm_open_regular(path, what);
	if (fd < 0) {
		ret = fd;
		goto fail;
	}
	/* Before a byte is read: a file others can read or replace is no
	 * secret and no key of the operator's. */
	ret = uevm_check_file_safety(fd, path, what, true);
	if (ret)
		goto fail;
	/* One byte more than allowed tells an oversized file apart. */
	while (out->len < max + 1) {
		ssize_t n = read(fd, out->data + out->len, max + 1 - out->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = uevm_err(errno, "cannot read %s %s: %m", what, path);
			goto fail;
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
	}
	if (out->len == 0) {
		ret = uevm_err(EINVAL, "%s %s is empty", what, path);
		goto fail;
	}
	if (out->len > max) {
		ret = uevm_err(EINVAL, "%s %s is larger than %zu bytes", what,
			       path, max);
		goto fail;
	}
	close(fd);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	uevm_secret_free(out);
	return ret;
}

UEVM_EXPORT int uevm_secret_load(const char *spec, size_t max,
				 struct uevm_secret *out)
{
	if (!spec || !*spec)
		return uevm_err(EINVAL, "no master key given");
	if (!strncmp(spec, "keyring:", 8))
		return uevm_keyring_read_secret(spec + 8, max, out);
	return uevm_secret_read_file(spec, max, "master key file", out);
}

/* Read one line (without its newline) byte by byte, so that nothing after
 * it is consumed from a shared descriptor. */
static int read_line(int fd, struct uevm_secret *s, const char *from)
{
	for (;;) {
		uint8_t c;
		ssize_t n = read(fd, &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return uevm_err(errno, "cannot read the passphrase from %s: %m", from);
		if (n == 0 || c == '\n')
			break;
		if (s->len >= PASSPHRASE_MAX)
			return uevm_err(EINVAL, "the passphrase from %s is longer than %d bytes",
					from, PASSPHRASE_MAX);
		s->data[s->len++] = c;
	}
	if (s->len == 0)
		return uevm_err(EINVAL, "the passphrase from %s is empty", from);
	return 0;
}

UEVM_EXPORT int uevm_passphrase_from_fd(void *arg, const char *prompt,
					bool confirm, struct uevm_secret *out)
{
	int fd = *(const int *)arg;
	struct stat st;
	char from[32];
	int ret;

	(void)prompt;
	(void)confirm;
	snprintf(from, sizeof(from), "file descriptor %d", fd);
	/* A passphrase kept in a file (3<FILE) is checked like a key file. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		ret = uevm_check_file_safety(fd, NULL, "passphrase file", true);
		if (ret)
			return ret;
	}
	ret = uevm_secret_alloc(out, PASSPHRASE_MAX);
	if (!ret)
		ret = read_line(fd, out, from);
	if (ret)
		uevm_secret_free(out);
	return ret;
}

static int tty_ask(int tty, const char *prompt, struct uevm_secret *s)
{
	struct termios old, quiet;
	int ret;

	if (tcgetattr(tty, &old))
		return uevm_err(errno, "cannot set up the terminal: %m");
	quiet = old;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	quiet.c_lflag |= ECHONL;
	if (tcsetattr(tty, TCSAFLUSH, &quiet))
		return uevm_err(errno, "cannot turn off echo: %m");
	if (write(tty, prompt, strlen(prompt)) < 0)
		ret = uevm_err(errno, "cannot write to the terminal: %m");
	else
		ret = read_line(tty, s, "the terminal");
	tcsetattr(tty, TCSAFLUSH, &old);
	return ret;
}

UEVM_EXPORT int uevm_passphrase_from_tty(void *arg, const char *prompt,
					 bool confirm, struct uevm_secret *out)
{
	struct uevm_secret again = { 0 };
	int tty, ret;

	(void)arg;
	tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (tty < 0)
		return uevm_err(ENXIO, "no terminal to ask for the passphrase; "
				"give it on a file descriptor (passphrase-fd=N, --passphrase-fd N)");
	ret = uevm_secret_alloc(out, PASSPHRASE_MAX);
	if (!ret)
		ret = tty_ask(tty, prompt ? prompt : "Passphrase: ", out);
	if (!ret && confirm) {
		ret = uevm_secret_alloc(&again, PASSPHRASE_MAX);
		if (!ret)
			ret = tty_ask(tty, "Passphrase again: ", &again);
		if (!ret && (again.len != out->len ||
			     uevm_memneq(again.data, out->data, out->len)))
			ret = uevm_err(EINVAL, "the passphrases do not match");
		uevm_secret_free(&again);
	}
	close(tty);
	if (ret)
		uevm_secret_free(out);
	return ret;
}
