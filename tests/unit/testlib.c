// SPDX-License-Identifier: GPL-2.0-only
/*
 * The suites' shared helpers (see testlib.h). Checks run in forked
 * children (CK_FORK), one at a time, so a skip is recorded in an anonymous
 * shared mapping the runner made before the run: a count and the SKIP
 * lines, which the runner prints again at the end so that no skip hides
 * in the middle of the output.
 */
#include <check.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "options.h"
#include "provider.h"
#include "testlib.h"

/* What the forked checks report to the runner. */
struct test_skips {
	unsigned int n;	  /* checks skipped */
	size_t len;	  /* of text, without the NUL */
	char text[16384]; /* their SKIP lines; cut when full */
};

static struct test_skips *skips;

TCase *test_kvm_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_set_tags(tc, TEST_TAG_KVM);
	return tc;
}

bool test_require_all(void)
{
	const char *req = getenv("KVMSTAT_REQUIRE_KVM");

	return req && !strcmp(req, "1");
}

void test_skip(const char *test, const char *fmt, ...)
{
	char why[1024], line[1200];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (test_require_all())
		ck_abort_msg("%s: required host feature missing (KVMSTAT_REQUIRE_KVM=1): %s",
			     test, why);
	snprintf(line, sizeof(line), "SKIP %s: %s\n", test, why);
	n = strlen(line);
	fputs(line, stdout);
	fflush(stdout);
	if (!skips)
		return;
	skips->n++;
	if (n < sizeof(skips->text) - skips->len) {
		memcpy(skips->text + skips->len, line, n + 1);
		skips->len += n;
	}
}

void test_skip_init(void)
{
	void *m = mmap(NULL, sizeof(*skips), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	/* without the mapping skips are still said, just not summed up */
	skips = m == MAP_FAILED ? NULL : m;
}

unsigned int test_skip_summary(FILE *out)
{
	if (!skips || !skips->n)
		return 0;
	fprintf(out,
		"%u check%s skipped (KVMSTAT_REQUIRE_KVM=1 makes %s fail):\n%s",
		skips->n, skips->n == 1 ? "" : "s",
		skips->n == 1 ? "it" : "them", skips->text);
	return skips->n;
}

int test_provider_open(struct provider *p, const struct options *o)
{
	struct provider_cfg c;

	provider_cfg_init(&c, o);
	return p->ops->open(p, &c);
}

bool test_provider_probe(const struct provider_ops *ops, const struct options *o)
{
	struct provider_cfg c;

	provider_cfg_init(&c, o);
	return ops->probe(&c);
}

uint64_t test_rand(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ull;
}

static int test_rm_one(const char *path, const struct stat *st, int flag,
		       struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int test_rm_tree(const char *path)
{
	return nftw(path, test_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
