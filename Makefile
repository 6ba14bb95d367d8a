# SPDX-License-Identifier: GPL-2.0-or-later
# uevm: a plain GNU Makefile.  `make help` lists the targets.

PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCDIR      ?= $(PREFIX)/include
MANDIR      ?= $(PREFIX)/share/man
DOCDIR      ?= $(PREFIX)/share/doc/uevm
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR     ?=

# B: the build directory; a sanitizer build uses its own: SANITIZE=1 for
# AddressSanitizer + UndefinedBehaviorSanitizer, SANITIZE=thread for TSan.
SANITIZE    ?=
ifeq ($(SANITIZE),1)
B           ?= build/san
SANFLAGS    := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else ifeq ($(SANITIZE),thread)
B           ?= build/tsan
SANFLAGS    := -fsanitize=thread -fno-omit-frame-pointer
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
# The library: one folder per subsystem, as the kernel's security/integrity/
# (lib/evm, lib/ima, lib/integrity, ...), its shared parts at the top.
LIB_DIRS    := lib $(patsubst %/,%,$(sort $(dir $(wildcard lib/*/*.c))))
LIB_INC     := $(addprefix -I,$(LIB_DIRS))
LIB_CFLAGS  := $(ALL_CFLAGS) $(LIB_INC) -fPIC -fvisibility=hidden
LDLIBS      := -lcrypto -lkeyutils -lpthread
# Areas that need further libraries add them here, one line each.
LDLIBS      += -lsodium
LDLIBS      += -ltss2-esys -ltss2-tctildr -ltss2-mu -ltss2-rc
LDLIBS      += -laudit
LDLIBS      += $(shell pkg-config --libs fuse3)
LIB_CFLAGS  += $(shell pkg-config --cflags fuse3)
LDFLAGS     += $(SANFLAGS)

SOVERSION   := 0
VERSION     := $(shell sed -n 's/^\#define UEVM_VERSION "\(.*\)"/\1/p' include/uevm/uevm.h)

LIB_SRC     := $(sort $(wildcard lib/*.c lib/*/*.c))
LIB_OBJ     := $(LIB_SRC:%.c=$(B)/%.o)
# uevm's command line and its evmctl mode, linked into one binary.
PROG_DIRS   := programs/uevm programs/evmctl
PROG_INC    := $(addprefix -I,$(PROG_DIRS))
PROG_SRC    := $(sort $(foreach d,$(PROG_DIRS),$(wildcard $(d)/*.c)))
PROG_OBJ    := $(PROG_SRC:%.c=$(B)/%.o)
UNIT_SRC    := $(sort $(wildcard tests/unit/*.c))
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
HDRS        := $(wildcard include/uevm/*.h lib/*.h lib/*/*.h $(PROG_DIRS:%=%/*.h) tests/unit/*.h)

STATIC_LIB  := $(B)/libuevm.a
SHARED_LIB  := $(B)/libuevm.so.$(SOVERSION)
UEVM        := $(B)/uevm

.PHONY: all help deps check check-fast check-stress check-san demo bench install uninstall clean
all: $(UEVM) $(STATIC_LIB) $(SHARED_LIB) $(B)/uevm.pc $(UNIT_BIN)

help:
	@echo "make           build libuevm and uevm into $(B)"
	@echo "make check     install test dependencies, build, run all tests (also under ASan+UBSan; stress tests under TSan)"
	@echo "make check-stress  the tests of the normal build while stress-ng keeps every CPU busy"
	@echo "make deb       the Debian packages (debian/) into build/deb (dpkg-buildpackage)"
	@echo "make fuzz      build the libFuzzer targets (clang) and run each FUZZ_TIME seconds (default 20)"
	@echo "make demo      install dependencies, label an example tree, tamper with it, verify"
	@echo "make bench     label/verify throughput against sha256sum and openssl (BENCH_TREE=dir)"
	@echo "make bench-uevmfs  uevmfs against the native fs: read/write MB/s, open/stat latency (root)"
	@echo "make install   install into DESTDIR/PREFIX (default /usr/local)"

$(B)/lib/%.o: lib/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(B)/programs/%.o: programs/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PROG_INC) -c -o $@ $<

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
	$(CC) $(ALL_CFLAGS) $(LIB_INC) -o $@ $< $(STATIC_LIB) $(LDFLAGS) $(LDLIBS)

$(B)/uevm.pc: uevm.pc.in include/uevm/uevm.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

# Installs the Debian packages the build, tests and demo need (root only).
deps:
	@scripts/install-deps.sh

check: deps
	$(MAKE) all
	$(MAKE) all SANITIZE=1
	$(MAKE) all SANITIZE=thread
	tests/run-tests.sh build/default build/san build/tsan
	$(MAKE) fuzz FUZZ_TIME=12

# The same tests with every CPU kept busy by stress-ng (scripts/check-stress.sh):
# a test that passes only on an idle machine fails here.  STRESS_BUILDS
# chooses the builds (default: the normal one).
STRESS_BUILDS ?= build/default
check-stress: deps
	$(MAKE) all
	$(if $(filter build/san,$(STRESS_BUILDS)),$(MAKE) all SANITIZE=1)
	scripts/check-stress.sh $(STRESS_BUILDS)

# Tests against the current build only, without installing packages.
check-fast: all
	tests/run-tests.sh $(B)

# The Debian packages (debian/): built by dpkg-buildpackage in a copy of the
# tree under $(DEB_DIR), so that its clean step (make clean) leaves this
# tree's build/ alone; the .debs, .buildinfo and .changes land in $(DEB_DIR).
DEB_DIR     ?= build/deb
DEB_JOBS    ?= 2
.PHONY: deb
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/src
	tar -c --exclude=./build --exclude=./.git . | tar -x -C $(DEB_DIR)/src
	cd $(DEB_DIR)/src && dpkg-buildpackage -us -uc -b -j$(DEB_JOBS)
	rm -rf $(DEB_DIR)/src
	@ls $(DEB_DIR)/*.deb

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
	install -d $(DESTDIR)$(DOCDIR)
	install -m 644 docs/threat-model.md $(DESTDIR)$(DOCDIR)/

# Opt-in: `make install EVMCTL_LINK=1` also installs evmctl -> uevm, which
# then runs in its evmctl-compatible mode (uevm-evmctl(1)).
EVMCTL_LINK ?=
.PHONY: install-evmctl-link
install: install-evmctl-link
install-evmctl-link:
ifeq ($(EVMCTL_LINK),1)
	install -d $(DESTDIR)$(BINDIR)
	ln -sfn uevm $(DESTDIR)$(BINDIR)/evmctl
endif

# uevmfs, the FUSE stacking filesystem: a second binary from programs/uevmfs/.
UEVMFS_SRC  := $(sort $(wildcard programs/uevmfs/*.c))
UEVMFS_OBJ  := $(UEVMFS_SRC:%.c=$(B)/%.o)
UEVMFS      := $(B)/uevmfs
.PHONY: install-uevmfs uninstall-uevmfs bench-uevmfs
all: $(UEVMFS)
install: install-uevmfs
$(B)/programs/uevmfs/%.o: programs/uevmfs/%.c $(HDRS) $(wildcard programs/uevmfs/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags fuse3) -c -o $@ $<
$(UEVMFS): $(UEVMFS_OBJ) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $(UEVMFS_OBJ) $(STATIC_LIB) $(LDLIBS)
install-uevmfs: $(UEVMFS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8
	install -m 755 $(UEVMFS) $(DESTDIR)$(BINDIR)/uevmfs
	install -m 644 man/uevmfs.8 $(DESTDIR)$(MANDIR)/man8/
uninstall: uninstall-uevmfs
uninstall-uevmfs:
	rm -f $(DESTDIR)$(BINDIR)/uevmfs $(DESTDIR)$(MANDIR)/man8/uevmfs.8
bench-uevmfs: all
	bench/uevmfs.sh $(B)

# uevmd, the fanotify daemon: a third binary from programs/uevmd/, with its
# systemd unit and example configuration.  `make bench-uevmd` runs bench/uevmd.sh (root, loop mount).
UEVMD_SRC   := $(sort $(wildcard programs/uevmd/*.c))
UEVMD_OBJ   := $(UEVMD_SRC:%.c=$(B)/%.o)
UEVMD       := $(B)/uevmd
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
.PHONY: install-uevmd uninstall-uevmd bench-uevmd
all: $(UEVMD) $(B)/uevmd.service
install: install-uevmd
$(B)/programs/uevmd/%.o: programs/uevmd/%.c $(HDRS) $(wildcard programs/uevmd/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(UEVMD): $(UEVMD_OBJ) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $(UEVMD_OBJ) $(STATIC_LIB) $(LDLIBS)
$(B)/uevmd.service: programs/uevmd/uevmd.service.in
	@mkdir -p $(dir $@)
	sed -e 's|@BINDIR@|$(BINDIR)|g' $< > $@
install-uevmd: $(UEVMD) $(B)/uevmd.service
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(PREFIX)/share/uevm
	install -m 755 $(UEVMD) $(DESTDIR)$(BINDIR)/uevmd
	install -m 644 man/uevmd.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 644 $(B)/uevmd.service $(DESTDIR)$(SYSTEMDUNITDIR)/uevmd.service
	install -m 644 programs/uevmd/uevmd.conf $(DESTDIR)$(PREFIX)/share/uevm/uevmd.conf.example
uninstall: uninstall-uevmd
uninstall-uevmd:
	rm -f $(DESTDIR)$(BINDIR)/uevmd $(DESTDIR)$(MANDIR)/man8/uevmd.8 \
	      $(DESTDIR)$(SYSTEMDUNITDIR)/uevmd.service \
	      $(DESTDIR)$(PREFIX)/share/uevm/uevmd.conf.example
bench-uevmd: all
	bench/uevmd.sh $(B)

uninstall:
	[ "$$(readlink $(DESTDIR)$(BINDIR)/evmctl 2>/dev/null)" != uevm ] || \
		rm -f $(DESTDIR)$(BINDIR)/evmctl
	rm -f $(DESTDIR)$(BINDIR)/uevm $(DESTDIR)$(LIBDIR)/libuevm.a \
	      $(DESTDIR)$(LIBDIR)/libuevm.so $(DESTDIR)$(LIBDIR)/libuevm.so.$(SOVERSION) \
	      $(DESTDIR)$(PKGCONFIGDIR)/uevm.pc
	rm -rf $(DESTDIR)$(INCDIR)/uevm
	cd man && for m in *.1; do rm -f $(DESTDIR)$(MANDIR)/man1/$$m; done
	rm -f $(DESTDIR)$(DOCDIR)/threat-model.md
	-rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null

clean:
	rm -rf build

# libFuzzer targets: `make fuzz` (fuzz/README.md).
include fuzz/fuzz.mk
