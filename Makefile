# SPDX-License-Identifier: GPL-2.0-or-later
# uevm: a plain GNU Makefile.  `make help` lists the targets.

PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
# The library goes to the multiarch directory where the compiler has one
# (Debian: lib/x86_64-linux-gnu), as the distribution's own libraries.
MULTIARCH   := $(shell $(CC) -print-multiarch 2>/dev/null)
LIBDIR      ?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
INCDIR      ?= $(PREFIX)/include
MANDIR      ?= $(PREFIX)/share/man
DOCDIR      ?= $(PREFIX)/share/doc/uevm
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# uevmd's configuration and logrotate snippet: /etc for PREFIX=/usr.
ifeq ($(PREFIX),/usr)
SYSCONFDIR  ?= /etc
else
SYSCONFDIR  ?= $(PREFIX)/etc
endif
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
# CPPFLAGS, CFLAGS and LDFLAGS are the builder's (dpkg-buildflags sets
# them): they come after our defaults, so they win, but before our
# warnings, which stay.  Our hardening defaults step aside where the
# builder chose: a second _FORTIFY_SOURCE would be a redefinition, and
# fortification without optimisation a #warning, both errors with -Werror.
CPPFLAGS    ?=
CFLAGS      ?= -O2 -g
HARDENING   := $(if $(findstring -fstack-protector,$(CFLAGS)),,-fstack-protector-strong)
OPTIMISED   := $(filter-out -O0,$(lastword $(filter -O%,$(CFLAGS))))
HARDENING   += $(if $(findstring _FORTIFY_SOURCE,$(CPPFLAGS) $(CFLAGS)),,$(if $(OPTIMISED),-D_FORTIFY_SOURCE=2))
ALL_CFLAGS  := -std=gnu11 -D_GNU_SOURCE -Iinclude $(HARDENING) $(CPPFLAGS) $(CFLAGS) \
               $(WARNINGS) $(SANFLAGS)
# The library: one folder per subsystem, as the kernel's security/integrity/
# (lib/evm, lib/ima, lib/integrity, ...), its shared parts at the top.
LIB_DIRS    := lib $(patsubst %/,%,$(sort $(dir $(wildcard lib/*/*.c))))
LIB_INC     := $(addprefix -I,$(LIB_DIRS))
LIB_CFLAGS  := $(ALL_CFLAGS) $(LIB_INC) -fPIC -fvisibility=hidden
# What libuevm needs (also in uevm.pc.in).  The TPM stack, libsodium and
# libaudit are loaded at first use (lib/dlopen.c), so they are not linked:
# -ldl for a C library older than glibc 2.34, where dlopen lives there.
LDLIBS      := -lcrypto -lkeyutils -lpthread -ldl
# override: also when LDFLAGS is given on the command line.
override LDFLAGS += $(SANFLAGS)
# The control tree's FUSE server, kept out of libuevm: an internal static
# library (not installed) that only uevmfs and uevmd link, with libfuse3.
FUSE_SRC    := lib/securityfs/securityfs_fuse.c
FUSE_LIB    := $(B)/libuevm-fuse.a
FUSE_CFLAGS := $(shell pkg-config --cflags fuse3)
FUSE_LDLIBS := $(shell pkg-config --libs fuse3)

SOVERSION   := 0
VERSION     := $(shell sed -n 's/^\#define UEVM_VERSION "\(.*\)"/\1/p' include/uevm/uevm.h)

LIB_SRC     := $(filter-out $(FUSE_SRC),$(sort $(wildcard lib/*.c lib/*/*.c)))
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

.PHONY: all help deps check check-fast check-stress check-san demo bench install uninstall clean dist FORCE
all: $(UEVM) $(STATIC_LIB) $(SHARED_LIB) $(B)/uevm.pc $(UNIT_BIN)

help:
	@echo "make           build libuevm and uevm into $(B)"
	@echo "make check     install test dependencies, build, run all tests (also under ASan+UBSan; stress tests under TSan)"
	@echo "make check-stress  the tests of the normal build while stress-ng keeps every CPU busy"
	@echo "make deb       the Debian packages (debian/) into build/deb (dpkg-buildpackage)"
	@echo "make fuzz      build the libFuzzer targets (clang) and run each FUZZ_TIME seconds (default 20)"
	@echo "make demo      install dependencies, label an example tree, tamper with it, verify"
	@echo "make bench     issue 17's table in one run: uevm against its peers, targets, scaling PNG in build/bench (root; BENCH_SCALE=small|tiny)"
	@echo "make bench-tree  label/verify throughput against sha256sum and openssl on one tree (BENCH_TREE=dir)"
	@echo "make bench-uevmfs  uevmfs against the native fs: read/write MB/s, open/stat latency (root)"
	@echo "make install   install into DESTDIR/PREFIX (default /usr/local); make uninstall"
	@echo "make dist      the release tarball build/uevm-$(VERSION).tar.gz"

$(B)/lib/%.o: lib/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(B)/programs/%.o: programs/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PROG_INC) $(LIB_INC) -c -o $@ $<

$(STATIC_LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUSE_LIB): $(FUSE_SRC:%.c=$(B)/%.o)
	@rm -f $@
	ar rcs $@ $^
$(FUSE_SRC:%.c=$(B)/%.o): LIB_CFLAGS += $(FUSE_CFLAGS)

# Only uevm_* is exported, versioned UEVM_0 (lib/libuevm.map); -z defs: every
# library it needs is on the link line.
$(SHARED_LIB): $(LIB_OBJ) lib/libuevm.map
	$(CC) -shared -Wl,-soname,libuevm.so.$(SOVERSION) \
		-Wl,--version-script=lib/libuevm.map -Wl,-z,defs \
		$(LDFLAGS) -o $@ $(LIB_OBJ) $(LDLIBS)
	ln -sf libuevm.so.$(SOVERSION) $(B)/libuevm.so

$(UEVM): $(PROG_OBJ) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $(PROG_OBJ) $(STATIC_LIB) $(LDLIBS)

$(B)/tests/%: tests/unit/%.c $(STATIC_LIB) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) -o $@ $< $(STATIC_LIB) $(LDFLAGS) $(LDLIBS)

# The installation paths the .pc and the unit record: rewritten only when
# they change, so that `make install PREFIX=/usr` after a plain `make`
# remakes both instead of installing /usr/local paths.
INSTALL_PATHS := PREFIX=$(PREFIX) BINDIR=$(BINDIR) LIBDIR=$(LIBDIR) INCDIR=$(INCDIR) \
		 SYSCONFDIR=$(SYSCONFDIR)
$(B)/install-paths: FORCE
	@mkdir -p $(dir $@)
	@echo '$(INSTALL_PATHS)' | cmp -s - $@ || echo '$(INSTALL_PATHS)' > $@
FORCE:

$(B)/uevm.pc: uevm.pc.in include/uevm/uevm.h $(B)/install-paths
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

# make bench: bench/run.sh (BENCH_SCALE, BENCH_RUNS, BENCH_OUT: see there).
.PHONY: bench-tree
bench: all
	bench/run.sh $(B)
bench-tree: all
	bench/label-verify.sh $(UEVM) $(BENCH_TREE)

# install_dirs DIR...: install -d, noting in $(INSTALLED_DIRS) each
# directory it creates, so that uninstall removes exactly those once empty
# (never one that was there before, such as /usr/local/bin).
INSTALLED_DIRS := $(B)/installed-dirs
define install_dirs
	@mkdir -p $(B)
	@for d in $(1); do \
		case $$d in /*) ;; *) d=$$PWD/$$d ;; esac; p=; \
		for c in $$(echo "$$d" | tr / ' '); do \
			p=$$p/$$c; [ -d "$$p" ] || echo "$$p" >> $(INSTALLED_DIRS); \
		done; \
	done
	install -d $(1)
endef
MAN3        := $(wildcard man/*.3)

install: all
	$(call install_dirs,$(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/uevm \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 $(if $(MAN3),$(DESTDIR)$(MANDIR)/man3) \
		$(DESTDIR)$(DOCDIR))
	install -m 755 $(UEVM) $(DESTDIR)$(BINDIR)/uevm
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/libuevm.a
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/libuevm.so.$(SOVERSION)
	ln -sf libuevm.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libuevm.so
	install -m 644 include/uevm/*.h $(DESTDIR)$(INCDIR)/uevm/
	install -m 644 $(B)/uevm.pc $(DESTDIR)$(PKGCONFIGDIR)/uevm.pc
	install -m 644 man/*.1 $(DESTDIR)$(MANDIR)/man1/
	$(if $(MAN3),install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/)
	install -m 644 docs/threat-model.md $(DESTDIR)$(DOCDIR)/

# Opt-in: `make install EVMCTL_LINK=1` also installs evmctl -> uevm, which
# then runs in its evmctl-compatible mode (uevm-evmctl(1)).
EVMCTL_LINK ?=
.PHONY: install-evmctl-link
install: install-evmctl-link
install-evmctl-link:
ifeq ($(EVMCTL_LINK),1)
	$(call install_dirs,$(DESTDIR)$(BINDIR))
	ln -sfn uevm $(DESTDIR)$(BINDIR)/evmctl
endif

# Shell completion for uevm (read from uevm's own help at TAB time).
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/vendor-completions
.PHONY: install-completion uninstall-completion
install: install-completion
install-completion:
	$(call install_dirs,$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR))
	install -m 644 programs/uevm/uevm.bash-completion $(DESTDIR)$(BASHCOMPDIR)/uevm
	install -m 644 programs/uevm/uevm.zsh-completion $(DESTDIR)$(ZSHCOMPDIR)/_uevm
uninstall: uninstall-completion
uninstall-completion:
	rm -f $(DESTDIR)$(BASHCOMPDIR)/uevm $(DESTDIR)$(ZSHCOMPDIR)/_uevm

# uevmfs, the FUSE stacking filesystem: a second binary from programs/uevmfs/.
UEVMFS_SRC  := $(sort $(wildcard programs/uevmfs/*.c))
UEVMFS_OBJ  := $(UEVMFS_SRC:%.c=$(B)/%.o)
UEVMFS      := $(B)/uevmfs
.PHONY: install-uevmfs uninstall-uevmfs bench-uevmfs
all: $(UEVMFS)
install: install-uevmfs
$(B)/programs/uevmfs/%.o: programs/uevmfs/%.c $(HDRS) $(wildcard programs/uevmfs/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) $(FUSE_CFLAGS) -c -o $@ $<
$(UEVMFS): $(UEVMFS_OBJ) $(FUSE_LIB) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $(UEVMFS_OBJ) $(FUSE_LIB) $(STATIC_LIB) $(LDLIBS) $(FUSE_LDLIBS)
install-uevmfs: $(UEVMFS)
	$(call install_dirs,$(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8)
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
# (uevmd's default configuration path is SYSCONFDIR's: install-paths.)
$(B)/programs/uevmd/%.o: programs/uevmd/%.c $(HDRS) $(wildcard programs/uevmd/*.h) $(B)/install-paths
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIB_INC) -DUEVMD_SYSCONFDIR='"$(SYSCONFDIR)"' -c -o $@ $<
$(UEVMD): $(UEVMD_OBJ) $(FUSE_LIB) $(STATIC_LIB)
	$(CC) $(LDFLAGS) -o $@ $(UEVMD_OBJ) $(FUSE_LIB) $(STATIC_LIB) $(LDLIBS) $(FUSE_LDLIBS) -laudit
$(B)/uevmd.service: programs/uevmd/uevmd.service.in $(B)/install-paths
	@mkdir -p $(dir $@)
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< > $@
install-uevmd: $(UEVMD) $(B)/uevmd.service
	$(call install_dirs,$(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(SYSCONFDIR)/uevm $(DESTDIR)$(SYSCONFDIR)/logrotate.d $(DESTDIR)$(DOCDIR))
	install -m 755 $(UEVMD) $(DESTDIR)$(BINDIR)/uevmd
	install -m 644 man/uevmd.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 644 $(B)/uevmd.service $(DESTDIR)$(SYSTEMDUNITDIR)/uevmd.service
	[ -e $(DESTDIR)$(SYSCONFDIR)/uevm/uevmd.conf ] || \
		install -m 644 programs/uevmd/uevmd.conf $(DESTDIR)$(SYSCONFDIR)/uevm/uevmd.conf
	[ -e $(DESTDIR)$(SYSCONFDIR)/logrotate.d/uevmd ] || \
		install -m 644 programs/uevmd/uevmd.logrotate $(DESTDIR)$(SYSCONFDIR)/logrotate.d/uevmd
	install -m 644 programs/uevmd/uevmd.conf.enforce-example $(DESTDIR)$(DOCDIR)/
uninstall: uninstall-uevmd
# The files under SYSCONFDIR go only when they are as shipped: an edited
# configuration stays.
uninstall-uevmd:
	rm -f $(DESTDIR)$(BINDIR)/uevmd $(DESTDIR)$(MANDIR)/man8/uevmd.8 \
	      $(DESTDIR)$(SYSTEMDUNITDIR)/uevmd.service \
	      $(DESTDIR)$(DOCDIR)/uevmd.conf.enforce-example
	! cmp -s programs/uevmd/uevmd.conf $(DESTDIR)$(SYSCONFDIR)/uevm/uevmd.conf || \
		rm -f $(DESTDIR)$(SYSCONFDIR)/uevm/uevmd.conf
	! cmp -s programs/uevmd/uevmd.logrotate $(DESTDIR)$(SYSCONFDIR)/logrotate.d/uevmd || \
		rm -f $(DESTDIR)$(SYSCONFDIR)/logrotate.d/uevmd
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
	$(if $(MAN3),cd man && for m in $(notdir $(MAN3)); do rm -f $(DESTDIR)$(MANDIR)/man3/$$m; done)
	rm -f $(DESTDIR)$(DOCDIR)/threat-model.md
	@# uevm's own directories; then those install created, deepest first,
	@# each only once empty (the others stay noted for a later uninstall).
	-rmdir $(DESTDIR)$(DOCDIR) $(DESTDIR)$(PREFIX)/share/uevm 2>/dev/null
	@if [ -f $(INSTALLED_DIRS) ]; then \
		LC_ALL=C sort -ru $(INSTALLED_DIRS) | while read -r d; do \
			rmdir "$$d" 2>/dev/null; [ ! -d "$$d" ] || echo "$$d"; \
		done > $(INSTALLED_DIRS).new; \
		mv $(INSTALLED_DIRS).new $(INSTALLED_DIRS); \
	fi

clean:
	rm -rf build

# The release tarball, build/uevm-VERSION.tar.gz with a top folder
# uevm-VERSION/: the committed files (git archive) in a git checkout, else
# (an unpacked tarball) the tree as it is, less build/.
DIST        := uevm-$(VERSION)
dist:
	@mkdir -p build
	@if [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ]; then \
		git diff --quiet HEAD 2>/dev/null || \
			echo "dist: uncommitted changes are left out (git archive HEAD)" >&2; \
		echo "git archive --prefix=$(DIST)/ -o build/$(DIST).tar.gz HEAD"; \
		git -c tar.umask=0022 archive --format=tar.gz --prefix=$(DIST)/ -o build/$(DIST).tar.gz HEAD; \
	else \
		echo "dist: no git checkout, packing the tree in $(CURDIR) less build/"; \
		tar -czf build/$(DIST).tar.gz --sort=name --owner=0 --group=0 --numeric-owner \
			--exclude=./build --exclude=./.git --transform 's|^\.|$(DIST)|' .; \
	fi
	@echo "build/$(DIST).tar.gz"

# libFuzzer targets: `make fuzz` (fuzz/README.md).
include fuzz/fuzz.mk
