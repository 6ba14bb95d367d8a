# SPDX-License-Identifier: GPL-2.0-or-later
# uevm: a plain GNU Makefile.  `make help` lists the targets.

PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCDIR      ?= $(PREFIX)/include
MANDIR      ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR     ?=

# B: the build directory; a sanitizer build uses its own (make SANITIZE=1).
SANITIZE    ?=
ifeq ($(SANITIZE),1)
B           ?= build/san
SANFLAGS    := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
B           ?= build/default
SANFLAGS    :=
endif

CC          ?= cc
WARNINGS    := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral \
               -Wmissing-prototypes -Wstrict-prototypes -Wvla -Wundef
CFLAGS      ?= -O2 -g
ALL_CFLAGS  := -std=gnu11 -D_GNU_SOURCE -Iinclude $(WARNINGS) $(SANFLAGS) \
               -fstack-protector-strong -D_FORTIFY_SOURCE=2 $(CFLAGS)
LIB_CFLAGS  := $(ALL_CFLAGS) -fPIC -fvisibility=hidden
LDLIBS      := -lcrypto -lkeyutils -lpthread
# Areas that need further libraries add them here, one line each.
LDFLAGS     += $(SANFLAGS)

SOVERSION   := 0
VERSION     := $(shell sed -n 's/^\#define UEVM_VERSION "\(.*\)"/\1/p' include/uevm/uevm.h)

LIB_SRC     := $(sort $(wildcard lib/*.c))
LIB_OBJ     := $(LIB_SRC:%.c=$(B)/%.o)
PROG_SRC    := $(sort $(wildcard programs/*.c))
PROG_OBJ    := $(PROG_SRC:%.c=$(B)/%.o)
UNIT_SRC    := $(sort $(wildcard tests/unit/*.c))
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
HDRS        := $(wildcard include/uevm/*.h lib/*.h programs/*.h tests/unit/*.h)

STATIC_LIB  := $(B)/libuevm.a
SHARED_LIB  := $(B)/libuevm.so.$(SOVERSION)
UEVM        := $(B)/uevm

.PHONY: all help deps check check-fast check-san demo bench install uninstall clean
all: $(UEVM) $(STATIC_LIB) $(SHARED_LIB) $(B)/uevm.pc $(UNIT_BIN)

help:
	@echo "make           build libuevm and uevm into $(B)"
	@echo "make check     install test dependencies, build, run all tests (also under ASan+UBSan)"
	@echo "make demo      install dependencies, label an example tree, tamper with it, verify"
	@echo "make bench     label/verify throughput against sha256sum and openssl (BENCH_TREE=dir)"
	@echo "make install   install into DESTDIR/PREFIX (default /usr/local)"

$(B)/lib/%.o: lib/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(B)/programs/%.o: programs/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(STATIC_LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SHARED_LIB): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libuevm.so.$(SOVERSION) $(LDFLAGS) -o $@ $^ $(LDLIBS)
	ln -sf libuevm.so.$(SOVERSION) $(B)/libuevm.so

$(UEVM): $(PROG_OBJ) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $(PROG_OBJ) $(STATIC_LIB) $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(STATIC_LIB) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ilib -o $@ $< $(STATIC_LIB) $(LDFLAGS) $(LDLIBS)

$(B)/uevm.pc: uevm.pc.in include/uevm/uevm.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

# Installs the Debian packages the build, tests and demo need (root only).
deps:
	@scripts/install-deps.sh

check: deps
	$(MAKE) all
	$(MAKE) all SANITIZE=1
	tests/run-tests.sh build/default build/san

# Tests against the current build only, without installing packages.
check-fast: all
	tests/run-tests.sh $(B)

demo: deps
	$(MAKE) all
	examples/demo.sh $(UEVM)

bench: all
	bench/label-verify.sh $(UEVM) $(BENCH_TREE)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/uevm \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(UEVM) $(DESTDIR)$(BINDIR)/uevm
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/libuevm.a
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/libuevm.so.$(SOVERSION)
	ln -sf libuevm.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libuevm.so
	install -m 644 include/uevm/*.h $(DESTDIR)$(INCDIR)/uevm/
	install -m 644 $(B)/uevm.pc $(DESTDIR)$(PKGCONFIGDIR)/uevm.pc
	install -m 644 man/*.1 $(DESTDIR)$(MANDIR)/man1/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/uevm $(DESTDIR)$(LIBDIR)/libuevm.a \
	      $(DESTDIR)$(LIBDIR)/libuevm.so $(DESTDIR)$(LIBDIR)/libuevm.so.$(SOVERSION) \
	      $(DESTDIR)$(PKGCONFIGDIR)/uevm.pc
	rm -rf $(DESTDIR)$(INCDIR)/uevm
	cd man && for m in *.1; do rm -f $(DESTDIR)$(MANDIR)/man1/$$m; done

clean:
	rm -rf build
