// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes the OpenMetrics fixture's renderings (fixture.prom, fixture.om at
 * the default level, fixture-per-vcpu.prom with --per-vcpu's)
 * into a directory given on the command line, for a developer to compare
 * with tests/data/openmetrics/ and copy there by hand when a change to the
 * exposition is meant. The Check suite only reads the golden files. Run
 * by make openmetrics-fixtures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "om_fixture.h"

static int write_one(const char *dir, const char *name,
		     enum openmetrics_format fmt, bool per_vcpu)
{
	char path[4096];
	struct strbuf b;
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	om_fixture_render(&b, fmt, per_vcpu);
	f = fopen(path, "w");
	if (!f) {
		rc = -errno;
		goto out_free;
	}
	if (fwrite(b.s, 1, b.len, f) != b.len)
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
out_free:
	strbuf_free(&b);
	if (rc)
		fprintf(stderr, "om_fixture_write: %s: %s\n", path,
			strerror(-rc));
	else
		printf("wrote %s\n", path);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: om_fixture_write DIR\n");
		return 2;
	}
	if (write_one(argv[1], "fixture.prom", OPENMETRICS_PROMETHEUS, false) ||
	    write_one(argv[1], "fixture.om", OPENMETRICS_OPENMETRICS, false) ||
	    write_one(argv[1], "fixture-per-vcpu.prom", OPENMETRICS_PROMETHEUS,
		      true))
		return 1;
	return 0;
}
