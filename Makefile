# SPDX-License-Identifier: GPL-2.0-only
# kvmstat: plain GNU make. Everything but src/main.c goes into a static
# library that the binary and the tests both link.

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man/man1
UNITDIR ?= $(PREFIX)/lib/systemd/system

CC ?= cc
PKG_CONFIG ?= pkg-config
CFLAGS ?= -O2 -g
# CI sets WERROR=-Werror; the sanitizer build sets SANITIZE and BUILD.
WERROR ?=
SANITIZE ?=
BUILD ?= build

ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/i.86/x86/' \
	-e 's/aarch64/arm64/' -e 's/ppc64.*/powerpc/' -e 's/s390x/s390/')
ARCHDIR := $(if $(wildcard arch/$(ARCH)/arch.c),arch/$(ARCH),arch/generic)
# the lookup, the generic descriptor and the host's; arch_host names the last
ARCH_SRCS := $(sort arch/common.c arch/generic/arch.c $(ARCHDIR)/arch.c)

NCURSES_CFLAGS := $(shell $(PKG_CONFIG) --cflags ncursesw 2>/dev/null)
NCURSES_LIBS := $(shell $(PKG_CONFIG) --libs ncursesw 2>/dev/null)
JANSSON_CFLAGS := $(shell $(PKG_CONFIG) --cflags jansson 2>/dev/null)
JANSSON_LIBS := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null)
MHD_CFLAGS := $(shell $(PKG_CONFIG) --cflags libmicrohttpd 2>/dev/null)
MHD_LIBS := $(shell $(PKG_CONFIG) --libs libmicrohttpd 2>/dev/null)
CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check 2>/dev/null)
LIBBPF_CFLAGS := $(shell $(PKG_CONFIG) --cflags libbpf 2>/dev/null)
LIBBPF_LIBS := $(or $(shell $(PKG_CONFIG) --libs libbpf 2>/dev/null),-lbpf)

# The BPF side (src/bpf/*.bpf.c): clang -target bpf, debug info stripped
# but BTF kept, embedded in the binary through a bpftool skeleton header
# generated into $(BUILD)/include.
BPF_CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
	-e 's/ppc64.*/powerpc/' -e 's/s390x/s390/')
BPF_MULTIARCH := $(shell $(CC) -dumpmachine 2>/dev/null)
BPF_OBJ := $(BUILD)/bpf/kvmstat.bpf.o
BPF_SKEL := $(BUILD)/include/kvmstat.skel.h

override CPPFLAGS += -Iinclude -I$(BUILD)/include -D_GNU_SOURCE
override CFLAGS += -std=gnu11 -Wall -Wextra $(WERROR) $(SANITIZE) $(NCURSES_CFLAGS) \
	$(JANSSON_CFLAGS) $(MHD_CFLAGS) $(LIBBPF_CFLAGS) -pthread
LIBS := $(NCURSES_LIBS) $(JANSSON_LIBS) $(MHD_LIBS) $(LIBBPF_LIBS) -pthread
override LDFLAGS += $(SANITIZE)

# src/ is grouped by layer: app, core, lib, sys, providers, render, frontends
LIB_SRCS := $(filter-out src/main.c src/bpf/%,$(shell find src -name '*.c' | sort)) \
	$(ARCH_SRCS)
LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS))
LIB := $(BUILD)/libkvmstat.a
# the runner also links the other architectures' descriptors to check them
TEST_SRCS := $(wildcard tests/unit/test_*.c) tests/unit/testlib.c \
	tests/unit/om_fixture.c tests/unit/check_main.c \
	$(filter-out $(ARCH_SRCS),$(wildcard arch/*/arch.c))
TEST_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(TEST_SRCS))
TEST_BIN := $(BUILD)/tests/check_kvmstat
GUEST := tests/guest/kvmguest
BIN := kvmstat
DEPS_PKGS := gcc make pkg-config libncurses-dev check libjansson-dev \
	libmicrohttpd-dev clang llvm libbpf-dev bpftool linux-libc-dev
# what the whole-program tests drive: the monitor under tmux, a real QEMU,
# JSON checked with jq, the exporter scraped by curl and a real Prometheus,
# the systemd units rated by systemd-analyze and their filters by strace
TEST_DEPS_PKGS := tmux qemu-system-x86 python3 jq curl prometheus systemd strace

.PHONY: all run check unit system bench install uninstall clean deps deps-test \
	install-pkgs demo fuzz openmetrics-fixtures format format-check

all: $(BIN) $(GUEST)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%.o: override CFLAGS += $(CHECK_CFLAGS)

$(BUILD)/bpf/%.bpf.o: include/bpf_shared.h
	@mkdir -p $(dir $@)
	$(BPF_CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Iinclude \
		$(if $(BPF_MULTIARCH),-I/usr/include/$(BPF_MULTIARCH)) -c -o $@ $(filter %.c,$^)
	$(LLVM_STRIP) -g $@

$(BPF_OBJ): src/bpf/kvmstat.bpf.c
$(BUILD)/bpf/latency.bpf.o: src/bpf/latency.bpf.c include/lat_shared.h
$(BUILD)/bpf/mincount.bpf.o: tests/bench/mincount.bpf.c

$(BUILD)/include/%.skel.h: $(BUILD)/bpf/%.bpf.o
	@mkdir -p $(dir $@)
	$(BPFTOOL) gen skeleton $< name $*_bpf >$@.tmp
	mv $@.tmp $@

$(BUILD)/src/sys/bpf_engine.o: $(BPF_SKEL)
$(BUILD)/src/sys/lat_engine.o: $(BUILD)/include/latency.skel.h

$(BUILD)/arch/common.o: override CPPFLAGS += \
	-DKVMSTAT_ARCH_HOST=arch_$(notdir $(ARCHDIR))_desc

$(LIB): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BIN): $(BUILD)/src/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(GUEST): tests/guest/kvmguest.c
	$(CC) -O2 -Wall -Wextra $(WERROR) -std=gnu11 -pthread -o $@ $<

$(TEST_BIN): $(TEST_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(CHECK_LIBS)

# Installs the Debian build dependencies when root, else prints the command.
deps:
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(DEPS_PKGS)"

deps-test:
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(DEPS_PKGS) $(TEST_DEPS_PKGS)"

install-pkgs:
	@missing=""; for p in $(PKGS); do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing:$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
				apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
		else \
			echo "missing packages; run:"; \
			echo "  sudo apt-get install -y$$missing"; exit 1; \
		fi; \
	fi

run: deps
	@$(MAKE) --no-print-directory all
	./$(BIN) $(ARGS)

unit: $(TEST_BIN)
	KVMSTAT_TEST_DATA=tests/data CK_FORK=yes $(TEST_BIN)

# The unit tests only read the OpenMetrics golden files in
# tests/data/openmetrics/. After a change meant to alter the exposition,
# this writes the new renderings to $(BUILD)/openmetrics/ to review (diff)
# and copy over by hand.
OM_FIXTURE_WRITE := $(BUILD)/tests/om_fixture_write
$(OM_FIXTURE_WRITE): $(BUILD)/tests/unit/om_fixture_write.o \
		$(BUILD)/tests/unit/om_fixture.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

openmetrics-fixtures: $(OM_FIXTURE_WRITE)
	@mkdir -p $(BUILD)/openmetrics
	$(OM_FIXTURE_WRITE) $(BUILD)/openmetrics
	@diff -u tests/data/openmetrics $(BUILD)/openmetrics && \
		echo "the golden files are up to date" || \
		echo "review the diff above; if right: cp $(BUILD)/openmetrics/* tests/data/openmetrics/"

system: $(BIN) $(GUEST)
	tests/system/run.sh

check: deps-test
	@$(MAKE) --no-print-directory all $(TEST_BIN)
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory system

bench: deps
	@$(MAKE) --no-print-directory all $(BUILD)/tests/bench
	tests/bench/run.sh $(BUILD)/tests/bench

$(BUILD)/tests/bench: tests/bench/bench.c $(LIB) $(BUILD)/include/mincount.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.a,$^) $(LIBS)

demo: all
	tests/demo.sh

# libFuzzer harness of the binary stats parser (clang); CI runs it briefly.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 30
FUZZ_SRCS := tests/fuzz/fuzz_statsfd.c src/sys/statsfd.c src/render/units.c \
	src/lib/util.c src/lib/errmsg.c
$(BUILD)/fuzz/fuzz_statsfd: $(FUZZ_SRCS) include/statsfd.h include/units.h \
		include/sample.h include/util.h include/errmsg.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -D_GNU_SOURCE -Iinclude -g -O1 -Wall -Wextra $(WERROR) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ $(FUZZ_SRCS)

fuzz: $(BUILD)/fuzz/fuzz_statsfd
	@mkdir -p $(BUILD)/fuzz/corpus
	$(BUILD)/fuzz/fuzz_statsfd -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
		-artifact_prefix=$(BUILD)/fuzz/ -print_final_stats=1 $(BUILD)/fuzz/corpus

# The C sources against the repo's .clang-format (Debian: clang-format,
# version 14 or later). format rewrites them in place; format-check
# changes nothing and fails naming every file that differs.
CLANG_FORMAT ?= clang-format
FORMAT_SRCS = $(shell find src include arch tests -name '*.[ch]' | sort)

format:
	@command -v $(CLANG_FORMAT) >/dev/null || \
		{ echo "$(CLANG_FORMAT) not found: apt-get install clang-format"; exit 1; }
	$(CLANG_FORMAT) -i --style=file $(FORMAT_SRCS)

format-check:
	@command -v $(CLANG_FORMAT) >/dev/null || \
		{ echo "$(CLANG_FORMAT) not found: apt-get install clang-format"; exit 1; }
	@bad=0; for f in $(FORMAT_SRCS); do \
		$(CLANG_FORMAT) --style=file "$$f" | cmp -s - "$$f" && continue; \
		[ $$bad = 1 ] || echo "not formatted as .clang-format says (make format):"; \
		echo "  $$f"; bad=1; \
	done; [ $$bad = 0 ]

UNITS := kvmstat.service kvmstat-exporter.service

# The systemd units name the binary where it is installed.
install: $(BIN)
	install -D -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/$(BIN)
	install -D -m 0644 man/kvmstat.1 $(DESTDIR)$(MANDIR)/kvmstat.1
	install -d $(DESTDIR)$(UNITDIR)
	for u in $(UNITS); do \
		sed 's|/usr/local/bin/kvmstat|$(BINDIR)/$(BIN)|g' systemd/$$u \
			>$(DESTDIR)$(UNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/$(BIN) $(DESTDIR)$(MANDIR)/kvmstat.1
	for u in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$$u; done

clean:
	rm -rf build build-* $(BIN) $(GUEST)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
