/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the Check suites share: one way to skip a check the host cannot
 * run. A skip says "SKIP test: why"; where the host must run everything
 * (KVMSTAT_REQUIRE_KVM=1, as CI sets, like the whole-program tests) it
 * fails the check instead. The runner counts the skips of its forked
 * checks and lists them at the end.
 */
#ifndef KVMSTAT_TESTLIB_H
#define KVMSTAT_TESTLIB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct TCase;
/*
 * A test case of checks that need real KVM: /dev/kvm, the test guest
 * tests/guest/kvmguest, or kvm tracepoints firing for a running guest.
 * Tagged "kvm", so that CK_EXCLUDE_TAGS=kvm runs everything else on any
 * host and CK_INCLUDE_TAGS=kvm runs just these where KVM works. A check
 * that needs no KVM never goes in one.
 */
#define TEST_TAG_KVM "kvm"
struct TCase *test_kvm_tcase(const char *name);

/* Whether KVMSTAT_REQUIRE_KVM=1: every check must run, a skip fails. */
bool test_require_all(void);
/*
 * Skips the calling check with a reason (printf format), or fails it when
 * test_require_all(); the caller returns right after. test names the check
 * (and the part of it skipped).
 */
void test_skip(const char *test, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Before srunner_run_all(): room shared with the forked checks so that
 * their skips reach the runner. */
void test_skip_init(void);
/* After the run: prints how many checks were skipped and why to out;
 * returns the number. */
unsigned int test_skip_summary(FILE *out);

/* The next of a deterministic 64-bit sequence (xorshift64*) from *state
 * (not 0), for checks over many generated values. */
uint64_t test_rand(uint64_t *state);

/* Removes the file tree at path (its files first); 0 or -1 (nftw's). */
int test_rm_tree(const char *path);

struct options;
struct provider;
struct provider_ops;
/* A provider opened (probed) with the config options o give, as the loop
 * gives it (provider_cfg_init). */
int test_provider_open(struct provider *p, const struct options *o);
bool test_provider_probe(const struct provider_ops *ops,
			 const struct options *o);

#endif
