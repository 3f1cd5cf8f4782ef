// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness for the binary stats parser: each input becomes the
 * whole content of a memfd that stands in for a stats fd, then is parsed
 * as kvmstat parses a copied fd. A schema that parses must then give its
 * data block and every usable value (formatted with its unit, so units.c
 * sees whatever a descriptor may claim). Inputs with an even first byte
 * are not the file but descriptors to lay out as a well-formed file, so
 * that the paths past the header checks are reached without a seed
 * corpus. Build and run: see the Makefile's fuzz target (clang
 * -fsanitize=fuzzer,address,undefined).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "errmsg.h"
#include "statsfd_format.h"
#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One memfd for the whole run, rewritten per input. */
static int fuzz_fd = -1;

static int fd_with(const uint8_t *data, size_t size)
{
	if (fuzz_fd < 0) {
		fuzz_fd = memfd_create("fuzz-statsfd", MFD_CLOEXEC);
		if (fuzz_fd < 0)
			abort();
	}
	if (ftruncate(fuzz_fd, 0))
		abort();
	for (size_t off = 0; off < size;) {
		ssize_t n = pwrite(fuzz_fd, data + off, size - off, (off_t)off);

		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	return fuzz_fd;
}

/* Room for a laid-out file: 64 descriptors of 16 + 64 bytes and data. */
static uint8_t layout_buf[24 + 64 + 64 * 80 + 64 * 64 * 8];

/*
 * Lays out the descriptors the input gives (12 bytes each: flags,
 * exponent, size, offset, bucket size; sizes and offsets kept small) as a
 * file with a valid header, generated names and data. Returns its length.
 */
static size_t layout(const uint8_t *in, size_t n)
{
	uint32_t ns = n ? 8 + in[0] % 57 : 8, nd = 0;
	size_t desc_off = 24 + ns, data_len = 0, pos;
	uint32_t hdr[6];

	if (n)
		in++, n--;
	nd = (uint32_t)(n / 12 < 64 ? n / 12 : 64);
	memset(layout_buf, 0, sizeof(layout_buf));
	pos = desc_off;
	for (uint32_t i = 0; i < nd; i++, in += 12) {
		uint32_t flags = in[0] | (uint32_t)in[1] << 8;
		int16_t exp = (int16_t)(in[2] | in[3] << 8);
		uint16_t size = (uint16_t)(1 + in[4] % 40);
		uint32_t off = (uint32_t)(in[5] % 64) * 8 + in[6] % 2;
		uint32_t bucket = in[7] | (uint32_t)in[8] << 8;

		memcpy(layout_buf + pos, &flags, 4);
		memcpy(layout_buf + pos + 4, &exp, 2);
		memcpy(layout_buf + pos + 6, &size, 2);
		memcpy(layout_buf + pos + 8, &off, 4);
		memcpy(layout_buf + pos + 12, &bucket, 4);
		snprintf((char *)layout_buf + pos + 16, ns, "%c%u",
			 in[9] % 3 ? 's' : '(', in[10] % 8);
		if (off + size * 8u > data_len)
			data_len = off + size * 8u;
		pos += 16 + ns;
	}
	hdr[0] = 0;
	hdr[1] = ns;
	hdr[2] = nd;
	hdr[3] = 24;
	hdr[4] = (uint32_t)desc_off;
	hdr[5] = (uint32_t)pos;
	memcpy(layout_buf, hdr, sizeof(hdr));
	memcpy(layout_buf + 24, "kvm-1/vcpu-0", 12);
	for (size_t k = 0; k < data_len; k++)
		layout_buf[pos + k] = (uint8_t)(k * 7);
	return pos + data_len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct statsfd_schema *s;
	unsigned char *block;
	struct errmsg err;
	char buf[UNITS_BUF];
	int fd, rc;

	if (size && !(data[0] & 1))
		fd = fd_with(layout_buf, layout(data + 1, size - 1));
	else
		fd = fd_with(size ? data + 1 : data, size ? size - 1 : 0);

	errmsg_clear(&err);
	rc = statsfd_schema_read(fd, &s, &err);
	if (rc) {
		/* a malformed file is refused with a reason */
		if (rc != -EINVAL || !errmsg_isset(&err))
			abort();
		return 0;
	}
	if (!statsfd_schema_equal(s, s))
		abort();
	block = malloc(s->data_len ? s->data_len : 1);
	if (!block)
		abort();
	if (!statsfd_data_read(fd, s, block)) {
		for (uint32_t i = 0; i < s->num_desc; i++) {
			const struct statsfd_desc *d = &s->desc[i];
			struct field_info f = { .unit = d->unit,
						.exponent = d->exponent,
						.base = d->base,
						.bucket = -1 };

			if (d->skip != STATSFD_USE)
				continue;
			if ((uint64_t)d->offset + d->size * 8ull > s->data_len)
				abort();
			for (unsigned int k = 0; k < d->size; k++)
				units_format(&f,
					     (double)statsfd_value(block, d, k),
					     0, buf, sizeof(buf));
		}
	}
	free(block);
	statsfd_schema_free(s);
	return 0;
}
