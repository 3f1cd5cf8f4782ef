# SPDX-License-Identifier: GPL-2.0-only
# kvmstat: plain GNU make. Everything but src/main.c goes into a static
# library that the binary and the tests both link.

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man/man1
UNITDIR ?= $(PREFIX)/lib/systemd/system
DATADIR ?= $(PREFIX)/share/kvmstat

CC ?= cc
PKG_CONFIG ?= pkg-config
CFLAGS ?= -O2 -g
# CI sets WERROR=-Werror; the sanitizer build sets SANITIZE and BUILD.
WERROR ?=
SANITIZE ?=

# A cross build: make CROSS=aarch64-linux-gnu builds an arm64 kvmstat, its
# BPF programs and the arm64 test guest into build-aarch64-linux-gnu/
# (kvmstat, kvmguest), with Debian's cross compiler and its multiarch -dev
# packages (make deps CROSS=... installs them as root: README, Platforms).
CROSS ?=
ifneq ($(CROSS),)
CC := $(CROSS)-gcc
AR := $(CROSS)-ar
# the target's libraries only (Debian's multiarch pkg-config directory)
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/$(CROSS)/pkgconfig:/usr/share/pkgconfig pkg-config
BUILD ?= build-$(CROSS)
endif
BUILD ?= build
# the machine the build is for, in uname -m's spelling
MACHINE := $(if $(CROSS),$(firstword $(subst -, ,$(CROSS))),$(shell uname -m))

ARCH ?= $(shell echo $(MACHINE) | sed -e 's/x86_64/x86/' -e 's/i.86/x86/' \
	-e 's/aarch64/arm64/' -e 's/ppc64.*/powerpc/' -e 's/s390x/s390/')
ARCHDIR := $(if $(wildcard arch/$(ARCH)/arch.c),arch/$(ARCH),arch/generic)
# the lookup, the generic descriptor and the host's; arch_host names the last
ARCH_SRCS := $(sort arch/common.c arch/generic/arch.c $(ARCHDIR)/arch.c)

NCURSES_CFLAGS := $(shell $(PKG_CONFIG) --cflags ncursesw 2>/dev/null)
NCURSES_LIBS := $(shell $(PKG_CONFIG) --libs ncursesw 2>/dev/null)
JANSSON_CFLAGS := $(shell $(PKG_CONFIG) --cflags jansson 2>/dev/null)
JANSSON_LIBS := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null)
MHD_CFLAGS := $(shell $(PKG_CONFIG) --cflags libmicrohttpd 2>/dev/null)
# libmicrohttpd is loaded with dlopen when --listen starts (see mhd.h),
# by the soname of the library found here
MHD_SONAME := $(or $(shell $(if $(CROSS),$(CROSS)-)objdump -p "$$($(PKG_CONFIG) --variable=libdir \
	libmicrohttpd 2>/dev/null)/libmicrohttpd.so" 2>/dev/null | \
	awk '$$1 == "SONAME" { print $$2 }'),libmicrohttpd.so.12)
$(BUILD)/src/exporter/mhd.o: override CPPFLAGS += -DMHD_SONAME='"$(MHD_SONAME)"'
PCRE2_CFLAGS := $(shell $(PKG_CONFIG) --cflags libpcre2-8 2>/dev/null)
PCRE2_LIBS := $(shell $(PKG_CONFIG) --libs libpcre2-8 2>/dev/null)
# recordings (--record, --replay)
SQLITE_CFLAGS := $(shell $(PKG_CONFIG) --cflags sqlite3 2>/dev/null)
SQLITE_LIBS := $(or $(shell $(PKG_CONFIG) --libs sqlite3 2>/dev/null),-lsqlite3)
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
BPF_ARCH := $(shell echo $(MACHINE) | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
	-e 's/ppc64.*/powerpc/' -e 's/s390x/s390/')
BPF_MULTIARCH := $(shell $(CC) -dumpmachine 2>/dev/null)
BPF_OBJ := $(BUILD)/bpf/kvmstat.bpf.o
BPF_SKEL := $(BUILD)/include/kvmstat.skel.h

override CPPFLAGS += -Iinclude -I$(BUILD)/include -D_GNU_SOURCE
override CFLAGS += -std=gnu11 -Wall -Wextra $(WERROR) $(SANITIZE) $(NCURSES_CFLAGS) \
	$(JANSSON_CFLAGS) $(MHD_CFLAGS) $(LIBBPF_CFLAGS) -pthread
LIBS := $(NCURSES_LIBS) $(JANSSON_LIBS) $(LIBBPF_LIBS) -pthread -ldl
# -f regexes in Python's dialect (kvm_stat's)
override CFLAGS += $(PCRE2_CFLAGS)
LIBS += $(PCRE2_LIBS)
override CFLAGS += $(SQLITE_CFLAGS)
LIBS += $(SQLITE_LIBS)
CRYPT_LIBS := $(shell $(PKG_CONFIG) --libs libxcrypt 2>/dev/null || echo -lcrypt)
LIBS += $(CRYPT_LIBS)
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
# the test guest of the build's architecture (x86 or arm64; none else);
# a cross build's binaries go into its build directory
GUEST_SRC := $(if $(filter arm64,$(ARCH)),tests/guest/kvmguest-arm64.c,tests/guest/kvmguest.c)
GUEST := $(if $(CROSS),$(BUILD)/kvmguest,tests/guest/kvmguest)
BIN := $(if $(CROSS),$(BUILD)/kvmstat,kvmstat)
DEPS_PKGS := gcc make pkg-config libncurses-dev check libjansson-dev \
	libmicrohttpd-dev clang llvm libbpf-dev bpftool linux-libc-dev
DEPS_PKGS += libpcre2-dev
DEPS_PKGS += libcrypt-dev
DEPS_PKGS += libsqlite3-dev
# what the whole-program tests drive: the monitor under tmux, a real QEMU,
# JSON checked with jq, the exporter scraped by curl and a real Prometheus,
# the systemd units rated by systemd-analyze and their filters by strace,
# a decimal-comma locale made by localedef, recordings read by sqlite3
TEST_DEPS_PKGS := tmux qemu-system-x86 python3 jq curl prometheus systemd strace \
	openssl locales sqlite3
# a real libvirt domain (t_libvirt_domain): the monolithic libvirtd with its
# QEMU driver, and virsh (13 MB; no systemd units, polkit or network)
TEST_DEPS_PKGS += libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients
# the emulated KVM host (tests/kvmhost/): a Debian kernel under QEMU's TCG,
# its initramfs made of busybox and the kernel's modules
TEST_DEPS_PKGS += busybox-static cpio xz-utils kmod
# A cross build's: the cross compiler, the host's BPF tools and the
# target's -dev packages, Debian's multiarch ones (name:arch)
CROSS_LIB_PKGS := libc6-dev libncurses-dev check libjansson-dev libmicrohttpd-dev \
	libbpf-dev linux-libc-dev libpcre2-dev libcrypt-dev libsqlite3-dev
ifneq ($(CROSS),)
CROSS_DEB := $(shell echo $(MACHINE) | sed -e 's/aarch64/arm64/' -e 's/x86_64/amd64/' \
	-e 's/powerpc64le/ppc64el/')
DEPS_PKGS := gcc-$(CROSS) make pkg-config clang llvm bpftool \
	$(addsuffix :$(CROSS_DEB),$(CROSS_LIB_PKGS))
endif
# the arm64 tests on x86 (tests/arm64/, on the emulated arm64 KVM host): an
# arm64 build (above) and QEMU for arm64 (the programs the tests run there,
# bash, jq, tmux, python3..., kvmhost.sh unpacks beside the kernel)
ARM64_TEST_PKGS := qemu-system-arm gcc-aarch64-linux-gnu \
	$(addsuffix :arm64,$(CROSS_LIB_PKGS))
ifeq ($(CROSS)$(MACHINE),x86_64)
TEST_DEPS_PKGS += $(ARM64_TEST_PKGS)
endif

.PHONY: all run check check-kvm check-layers unit system bench install uninstall clean deps deps-test \
	install-pkgs demo fuzz openmetrics-fixtures format format-check mounts

all: $(BIN) $(GUEST)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/%.o: override CFLAGS += $(CHECK_CFLAGS)
# a suite reaches a module's private header (beside its code) as "app/x.h"
$(BUILD)/tests/%.o: override CPPFLAGS += -Isrc

$(BUILD)/bpf/%.bpf.o: include/bpf_shared.h
	@mkdir -p $(dir $@)
	$(BPF_CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Iinclude \
		$(if $(BPF_MULTIARCH),-I/usr/include/$(BPF_MULTIARCH)) -c -o $@ $(filter %.c,$^)
	$(LLVM_STRIP) -g $@

$(BPF_OBJ): src/bpf/kvmstat.bpf.c src/bpf/vcpu_reason.h
$(BUILD)/bpf/latency.bpf.o: src/bpf/latency.bpf.c include/lat_shared.h \
	src/bpf/lat_hist.h src/bpf/vcpu_reason.h
$(BUILD)/bpf/mincount.bpf.o: tests/bench/mincount.bpf.c
$(BUILD)/bpf/breakdown.bpf.o: src/bpf/breakdown.bpf.c include/brk_shared.h \
	include/lat_shared.h src/bpf/lat_hist.h

$(BUILD)/include/%.skel.h: $(BUILD)/bpf/%.bpf.o
	@mkdir -p $(dir $@)
	$(BPFTOOL) gen skeleton $< name $*_bpf >$@.tmp
	mv $@.tmp $@

$(BUILD)/src/sys/bpf_engine.o: $(BPF_SKEL)
$(BUILD)/src/sys/lat_engine.o: $(BUILD)/include/latency.skel.h
$(BUILD)/src/sys/brk_engine.o: $(BUILD)/include/breakdown.skel.h

$(BUILD)/arch/common.o: override CPPFLAGS += \
	-DKVMSTAT_ARCH_HOST=arch_$(notdir $(ARCHDIR))_desc

$(LIB): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BIN): $(BUILD)/src/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# static on arm64: it then needs no arm64 libc where it runs; one compiler
# run of the guest's .c, which includes the guests' shared guest_common.h
# (and, through it, guest_launch.h)
$(GUEST): $(GUEST_SRC) tests/guest/guest_common.h tests/guest/guest_launch.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra $(WERROR) -std=gnu11 -pthread \
		$(if $(filter arm64,$(ARCH)),-static) -o $@ $<

$(TEST_BIN): $(TEST_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(CHECK_LIBS)

# Installs the Debian build dependencies when root, else prints the command.
# A package counts as installed when dpkg's database says so ("installed";
# one removed but not purged is not, though dpkg -s still describes it).
deps:
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(DEPS_PKGS)"

deps-test:
	@$(MAKE) --no-print-directory install-pkgs PKGS="$(DEPS_PKGS) $(TEST_DEPS_PKGS)"

# A package name:ARCH of another architecture needs dpkg to know ARCH first
# (dpkg --add-architecture); done here as root, else part of the command.
install-pkgs:
	@missing=""; archs=""; for p in $(PKGS); do \
		[ "$$(dpkg-query -W -f '$${db:Status-Status}' $$p 2>/dev/null)" = installed ] || \
			missing="$$missing $$p"; done; \
	for a in $$(printf '%s\n' $$missing | sed -n 's/.*:\([a-z0-9]*\)$$/\1/p' | sort -u); do \
		[ "$$a" = "$$(dpkg --print-architecture)" ] || \
		dpkg --print-foreign-architectures | grep -qx "$$a" || archs="$$archs $$a"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing:$$missing"; \
			for a in $$archs; do dpkg --add-architecture $$a || exit 1; done; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
				apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
		else \
			echo "missing packages; run:"; \
			add=""; for a in $$archs; do add="$${add}sudo dpkg --add-architecture $$a && "; done; \
			[ -z "$$add" ] || add="$${add}sudo apt-get update && "; \
			echo "  $${add}sudo apt-get install -y$$missing"; exit 1; \
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

# tracefs and debugfs for the tests that read them (tests/mounts.sh), before
# any test runs: a fresh host mounts neither
mounts:
	@tests/mounts.sh

# The layering rules of README's Layout section, read from the includes;
# check runs it first, so a change that breaks a rule fails at once.
check-layers:
	@tests/check_layers.sh

# The unit checks and the whole-program tests; those that need real KVM
# run where this host's KVM serves them, else on the emulated KVM host
# (tests/kvmhost/README.md) with each kernel of KVMHOST_KERNELS.
# KVMHOST=1 takes the emulated host even where this host's KVM works;
# check-kvm runs only the tests that need KVM.
KVMHOST ?=
KVMHOST_KERNELS ?= 6.1 6.12 arm64
KVMHOST_JOBS ?= 1
export KVMHOST KVMHOST_KERNELS KVMHOST_JOBS BUILD

check: check-layers deps-test
	@$(MAKE) --no-print-directory all $(TEST_BIN)
	@$(MAKE) --no-print-directory mounts
	@tests/kvmcheck.sh all

check-kvm: deps-test
	@$(MAKE) --no-print-directory all $(TEST_BIN)
	@$(MAKE) --no-print-directory mounts
	@tests/kvmcheck.sh kvm

# KVMHOST=1: the guest-cost and scale sections (BENCH_ONLY, default
# rate,programs,scale) on the emulated KVM host, first kernel of
# KVMHOST_KERNELS; its figures are emulated: compare the ratios of one run
bench: deps
	@$(MAKE) --no-print-directory all $(BUILD)/tests/bench
	@if [ -n "$(KVMHOST)" ] && [ "$(KVMHOST)" != 0 ]; then \
		tests/kvmhost/kvmhost.sh run $(word 1,$(KVMHOST_KERNELS)) -- sh -c \
			'tests/mounts.sh >/dev/null && BENCH_EMULATED=1 \
			BENCH_ONLY=$${BENCH_ONLY:-rate,programs,scale} \
			exec tests/bench/run.sh $(BUILD)/tests/bench'; \
	else tests/bench/run.sh $(BUILD)/tests/bench; fi

$(BUILD)/tests/bench: tests/bench/bench.c $(LIB) $(BUILD)/include/mincount.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.a,$^) $(LIBS)

demo: all
	tests/demo.sh

# libFuzzer targets, one per parser of outside input (clang); CI runs each
# briefly. A target is tests/fuzz/fuzz_NAME.c plus the sources it needs:
#   FUZZ_TARGETS += NAME
#   FUZZ_SRCS_NAME := src/... (the harness itself is added)
# `make fuzz` runs every target FUZZ_SECONDS; `make fuzz-NAME` runs one;
# `make fuzz-build` only builds them. FUZZ_LIBS_NAME adds link flags.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 30
FUZZ_MAX_LEN ?= 8192
FUZZ_CFLAGS := -std=gnu11 -D_GNU_SOURCE -Iinclude -g -O1 -Wall -Wextra \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined

FUZZ_TARGETS += statsfd
FUZZ_SRCS_statsfd := src/sys/statsfd_format.c src/render/units.c src/lib/util.c \
	src/lib/errmsg.c

# QMP messages from a monitor (socket pair), jansson underneath
FUZZ_TARGETS += qmp
FUZZ_SRCS_qmp := src/sys/qmp_client.c src/lib/util.c src/lib/errmsg.c
FUZZ_CFLAGS_qmp := $(JANSSON_CFLAGS)
FUZZ_LIBS_qmp := $(JANSSON_LIBS)

# the QMP provider against a fake monitor that answers with the input
FUZZ_TARGETS += qmp_provider
FUZZ_SRCS_qmp_provider := $(wildcard src/providers/qmp/*.c) src/providers/provider.c \
	src/sys/qmp_client.c src/core/sample.c src/core/filter.c src/core/arbiter.c \
	src/core/hist.c src/core/snapshot.c src/core/snap_build.c src/core/snap_keep.c \
	src/core/snap_scopes.c src/core/snap_rows.c src/core/snap_view.c src/core/vmdir.c \
	src/render/units.c \
	src/lib/hashtab.c src/lib/util.c src/lib/errmsg.c src/sys/mtree.c
FUZZ_CFLAGS_qmp_provider := $(JANSSON_CFLAGS) $(PCRE2_CFLAGS) -pthread
FUZZ_LIBS_qmp_provider := $(JANSSON_LIBS) $(PCRE2_LIBS)

# QEMU's memory map (info mtree -f) that names MMIO addresses, seeded with
# a real one
FUZZ_TARGETS += mtree
FUZZ_SRCS_mtree := src/sys/mtree.c src/lib/util.c src/lib/errmsg.c
FUZZ_MAX_LEN_mtree := 16384
FUZZ_SEEDS_mtree := tests/data/mtree

# a debugfs counter file: the small-file reader and the decimal parser
FUZZ_TARGETS += debugfs
FUZZ_SRCS_debugfs := src/lib/fs.c src/lib/util.c src/lib/errmsg.c

# the exporter's HTTP Accept negotiation
FUZZ_TARGETS += accept
FUZZ_SRCS_accept := src/render/om_accept.c

# the tracefs format parser and the child naming over it, seeded with the
# format files of tests/data/formats
FUZZ_TARGETS += tpformat
FUZZ_SRCS_tpformat := src/sys/tpformat.c src/lib/fs.c src/lib/util.c \
	src/lib/errmsg.c arch/common.c arch/generic/arch.c arch/x86/arch.c
FUZZ_CFLAGS_tpformat := -DKVMSTAT_ARCH_HOST=arch_x86_desc
FUZZ_MAX_LEN_tpformat := 16384
FUZZ_SEEDS_tpformat := tests/data/formats

# the --web-config file
FUZZ_TARGETS += webconfig
FUZZ_SRCS_webconfig := src/exporter/webconfig.c src/lib/util.c src/lib/errmsg.c
FUZZ_LIBS_webconfig := $(CRYPT_LIBS)

# numbers into text (numfmt.h) against printf and strtod
FUZZ_TARGETS += numfmt
FUZZ_SRCS_numfmt := src/lib/numfmt.c

# jansson trees as text (json_text.c) against json_dumps; its numbers
# through numfmt.c, its buffer a strbuf
FUZZ_TARGETS += json_text
FUZZ_SRCS_json_text := src/render/json_text.c src/lib/numfmt.c \
	src/lib/strbuf.c src/lib/util.c src/lib/errmsg.c
FUZZ_CFLAGS_json_text := $(JANSSON_CFLAGS)
FUZZ_LIBS_json_text := $(JANSSON_LIBS)
FUZZ_SEEDS_json_text := tests/fuzz/seeds/json_text

FUZZ_BINS = $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))

.SECONDEXPANSION:
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $$(FUZZ_SRCS_$$*) $(wildcard include/*.h) \
		$(shell find src -name '*.h')
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(WERROR) $(FUZZ_CFLAGS_$*) -o $@ $< \
		$(FUZZ_SRCS_$*) $(FUZZ_LIBS_$*)

.PHONY: fuzz-build fuzz-list

fuzz-build: $(FUZZ_BINS)

fuzz-%: $(BUILD)/fuzz/fuzz_%
	@mkdir -p $(BUILD)/fuzz/corpus-$*
	$< -max_total_time=$(FUZZ_SECONDS) -max_len=$(or $(FUZZ_MAX_LEN_$*),$(FUZZ_MAX_LEN)) \
		-artifact_prefix=$(BUILD)/fuzz/$*- -print_final_stats=1 \
		$(BUILD)/fuzz/corpus-$* \
		$(or $(FUZZ_SEEDS_$*),$(wildcard tests/fuzz/seeds/$*))

fuzz: $(patsubst %,fuzz-%,$(FUZZ_TARGETS))

# the target names, one a line (CI runs each in turn)
fuzz-list:
	@printf '%s\n' $(FUZZ_TARGETS)

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
	install -D -m 0644 prometheus/kvmstat.rules.yml \
		$(DESTDIR)$(DATADIR)/kvmstat.rules.yml
	install -d $(DESTDIR)$(UNITDIR)
	for u in $(UNITS); do \
		sed 's|/usr/local/bin/kvmstat|$(BINDIR)/$(BIN)|g' systemd/$$u \
			>$(DESTDIR)$(UNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/$(BIN) $(DESTDIR)$(MANDIR)/kvmstat.1 \
		$(DESTDIR)$(DATADIR)/kvmstat.rules.yml
	for u in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$$u; done

clean:
	rm -rf build build-* $(BIN) $(GUEST)

# the compiler's dependency files (not the emulated hosts' cache, whose
# unpacked packages hold directories such as ld.so.conf.d)
-include $(shell find $(BUILD) -path $(BUILD)/kvmhost -prune -o -name '*.d' -type f -print 2>/dev/null)
