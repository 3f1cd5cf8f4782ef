// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness of the memory map reader (mtree.h): any text a
 * monitor sends as `info mtree -f` gives a table or -ENOENT, never a
 * crash; the table is bounded, sorted, every range ends at or after its
 * start, every name is printable ASCII within MTREE_NAME_MAX, and each
 * range's start names a range holding it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mtree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mtree t;
	int rc = mtree_parse(&t, (const char *)data, size);

	if (rc && (rc != -ENOENT || t.n))
		abort();
	if (t.n > MTREE_MAX)
		abort();
	for (size_t i = 0; i < t.n; i++) {
		const char *name = t.names + t.r[i].name, *got;
		size_t n = strlen(name);

		if (t.r[i].last < t.r[i].start || !n || n > MTREE_NAME_MAX ||
		    (i && t.r[i - 1].start > t.r[i].start))
			abort();
		for (size_t j = 0; j < n; j++)
			if (name[j] < 0x20 || name[j] >= 0x7f)
				abort();
		got = mtree_name(&t, t.r[i].start);
		if (!got || got < t.names || got >= t.names + t.names_len)
			abort();
	}
	mtree_name(&t, 0);
	mtree_name(&t, UINT64_MAX);
	mtree_free(&t);
	return 0;
}
