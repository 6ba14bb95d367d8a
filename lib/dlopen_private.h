/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Libraries loaded at first use.  The TPM stack, libsodium and libaudit
 * serve only some keys and some configurations; loading them with dlopen
 * when first needed keeps them out of libuevm.so's NEEDED list, so that a
 * program that only labels and verifies does not pull them in.
 */
#ifndef UEVM_DLOPEN_PRIVATE_H
#define UEVM_DLOPEN_PRIVATE_H

#include <pthread.h>
#include <stddef.h>

/* One function: the library (by SONAME) that has it, its name, and the
 * table slot its address goes to. */
struct uevm_dl_sym {
	const char *soname;
	const char *name;
	void **slot;
};

/* A table of functions loaded together, the first time one is needed. */
struct uevm_dl {
	const char *what;		/* "TPM support", for messages */
	const struct uevm_dl_sym *syms;
	size_t count;
	pthread_mutex_t lock;
	int state;			/* 0 not tried, 1 loaded, <0 failed */
	char error[320];		/* why it failed, kept for later calls */
};

#define UEVM_DL_INIT(what_, syms_) {					\
	.what = (what_), .syms = (syms_), .count = ARRAY_SIZE(syms_),	\
	.lock = PTHREAD_MUTEX_INITIALIZER,				\
}

/* Load every library of D and resolve every function, once per process.
 * 0, or -ELIBACC with "<what> needs <soname>: <dlerror>" as the error. */
int uevm_dl_load(struct uevm_dl *d);

#endif
