// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness of numfmt.h: the input's first 8 bytes as an integer
 * (unsigned and signed) must come out as printf writes it, and as a
 * double must come out in OpenMetrics' canonical form that strtod reads
 * back exactly, with the digits the slow way gives (the first precision
 * of "%.*e" that reads back).
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char want[64], got[NUMFMT_DOUBLE_SIZE], tmp[40];
	uint64_t u = 0;
	double d, a;
	int prec;

	memcpy(&u, data, size < sizeof(u) ? size : sizeof(u));
	snprintf(want, sizeof(want), "%" PRIu64, u);
	if (numfmt_u64(got, u) != strlen(want) || strcmp(got, want))
		abort();
	snprintf(want, sizeof(want), "%" PRId64, (int64_t)u);
	if (numfmt_i64(got, (int64_t)u) != strlen(want) || strcmp(got, want))
		abort();
	memcpy(&d, &u, sizeof(d));
	if (numfmt_canonical(got, d) != strlen(got))
		abort();
	if (isnan(d) || isinf(d) || d == 0)
		return 0;
	if (strtod(got, NULL) != d)
		abort();
	/* the same significant digits as the slow way's */
	a = fabs(d);
	for (prec = 1; prec < 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, a);
		if (strtod(tmp, NULL) == a)
			break;
	}
	snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, a);
	{
		char dw[24], dg[24];
		int nw = 0, ng = 0;
		const char *p;

		for (p = tmp; *p != 'e'; p++)
			if (*p >= '0' && *p <= '9')
				dw[nw++] = *p;
		while (nw > 1 && dw[nw - 1] == '0')
			nw--;
		for (p = got; *p && *p != 'e'; p++)
			if (*p >= '0' && *p <= '9')
				dg[ng++] = *p;
		/* leading zeros of 0.000ddd and trailing ones of ddd00.0 */
		while (ng > 1 && dg[0] == '0') {
			memmove(dg, dg + 1, (size_t)--ng);
		}
		while (ng > 1 && dg[ng - 1] == '0')
			ng--;
		if (nw != ng || memcmp(dw, dg, (size_t)nw))
			abort();
	}
	return 0;
}
