# SPDX-License-Identifier: GPL-2.0-or-later
# libFuzzer targets (fuzz/README.md), included by the top-level Makefile.
#   make fuzz                  build build/fuzz/* and run each FUZZ_TIME seconds
#   make fuzz-build            build only
#   make fuzz FUZZ_TARGETS="ima_policy key_kblob" FUZZ_TIME=600
# The library is compiled again with clang, ASan, UBSan and the fuzzer's
# coverage instrumentation (-fsanitize=fuzzer-no-link) into build/fuzz.

FUZZ_CC      ?= clang
FUZZ_TIME    ?= 20
FUZZ_B       := build/fuzz
FUZZ_SRC     := $(sort $(wildcard fuzz/*.c))
FUZZ_ALL     := $(FUZZ_SRC:fuzz/%.c=%)
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all \
                -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=gnu11 -D_GNU_SOURCE -Iinclude $(WARNINGS) $(FUZZ_SAN) -O1 -g
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_B)/%.o)
FUZZ_LIB     := $(FUZZ_B)/libuevm.a
FUZZ_BIN     := $(FUZZ_TARGETS:%=$(FUZZ_B)/%)

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BIN)

fuzz: fuzz-build
	fuzz/run.sh $(FUZZ_B) $(FUZZ_TIME) $(FUZZ_TARGETS)

$(FUZZ_B)/lib/%.o: lib/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(LIB_INC) -fsanitize=fuzzer-no-link -fPIC -fvisibility=hidden \
		$(shell pkg-config --cflags fuse3) -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_B)/%: fuzz/%.c fuzz/fuzz.h fuzz/test_certs.h $(FUZZ_LIB) $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(LIB_INC) -Ifuzz $(PROG_INC) -Iprograms/uevmd \
		-o $@ $< $(filter programs/%.c,$^) $(FUZZ_LIB) $(LDLIBS)

# Targets for parsers of the command line and of uevmd: the parser's own
# .c file is compiled into the target (and nothing else of the program).
$(FUZZ_B)/pcr_file: programs/uevm/pcr_file.c programs/uevm/pcr_file.h \
	programs/evmctl/evmctl_eventlog.c programs/evmctl/evmctl.h fuzz/evmctl_stubs.h
$(FUZZ_B)/bios_log: programs/evmctl/evmctl_eventlog.c programs/evmctl/evmctl.h fuzz/evmctl_stubs.h
$(FUZZ_B)/uevmd_control: programs/uevmd/control_parse.c programs/uevmd/uevmd.h
$(FUZZ_B)/uevmd_conf: programs/uevmd/config.c programs/uevmd/uevmd.h
$(FUZZ_B)/manifest: programs/uevm/manifest.c programs/uevm/manifest.h
$(FUZZ_B)/runtime_policy: programs/uevm/rp_json.c programs/uevm/rp_policy.c \
	programs/uevm/rp_regex.c programs/uevm/rp_nfa.c programs/uevm/rp_unicode.c programs/uevm/prog_util.c programs/uevm/report.c \
	programs/uevm/rp_json.h programs/uevm/rp_policy.h programs/uevm/rp_regex.h programs/uevm/rp_nfa.h programs/uevm/rp_unicode.h

# The unit test that checks the seed corpus embeds the test certificates.
$(B)/tests/fuzz_regress: fuzz/test_certs.h
# The escaping of names in the commands' reports.
$(FUZZ_B)/report_escape: programs/uevm/prog_util.c programs/uevm/report.c programs/uevm/prog.h \
	programs/uevm/report.h
