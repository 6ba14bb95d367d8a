// SPDX-License-Identifier: GPL-2.0-or-later
/* Libraries loaded at first use (lib/dlopen.c): found, missing, too old. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "lib_private.h"
#include "dlopen_private.h"
#include "test.h"

static struct {
	__typeof__(getpid) *getpid;
	__typeof__(getppid) *getppid;
} c;

static const struct uevm_dl_sym libc_syms[] = {
	{ "libc.so.6", "getpid", (void **)&c.getpid },
	{ "libc.so.6", "getppid", (void **)&c.getppid },
};
static struct uevm_dl libc_dl = UEVM_DL_INIT("a test", libc_syms);

static void (*nothing)(void);
static const struct uevm_dl_sym missing_syms[] = {
	{ "libc.so.6", "getpid", (void **)&c.getpid },
	{ "libuevm-no-such-library.so.7", "f", (void **)&nothing },
};
static struct uevm_dl missing_dl = UEVM_DL_INIT("frobbing", missing_syms);

static const struct uevm_dl_sym old_syms[] = {
	{ "libc.so.6", "uevm_no_such_function", (void **)&nothing },
};
static struct uevm_dl old_dl = UEVM_DL_INIT("frobbing", old_syms);

int main(void)
{
	char first[sizeof(missing_dl.error)];

	CHECK("a present library loads", uevm_dl_load(&libc_dl) == 0);
	CHECK("its functions are resolved and work",
	      c.getpid && c.getpid() == getpid() && c.getppid() == getppid());
	CHECK("loading again is a no-op", uevm_dl_load(&libc_dl) == 0);

	CHECK("a missing library: -ELIBACC", uevm_dl_load(&missing_dl) == -ELIBACC);
	CHECK("... the error says what needs which library",
	      !strncmp(uevm_last_error(),
		       "frobbing needs libuevm-no-such-library.so.7: ",
		       strlen("frobbing needs libuevm-no-such-library.so.7: ")));
	CHECK("... with the loader's reason",
	      strstr(uevm_last_error(), "No such file") != NULL);
	snprintf(first, sizeof(first), "%s", uevm_last_error());
	uevm_clear_last_error();
	CHECK("a second call fails the same way",
	      uevm_dl_load(&missing_dl) == -ELIBACC &&
	      !strcmp(uevm_last_error(), first));
	CHECK("a library without the function: -ELIBACC",
	      uevm_dl_load(&old_dl) == -ELIBACC);
	CHECK("... naming the function",
	      !strcmp(uevm_last_error(), "frobbing needs libc.so.6 with "
		      "uevm_no_such_function (too old?)"));
	TEST_EXIT();
}
