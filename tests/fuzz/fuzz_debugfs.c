// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness of how a debugfs counter file is read: the input is
 * the file's content (a memfd standing in for it), read with the small
 * file reader the debugfs provider uses (bounded buffer, pread from the
 * start) and parsed as one unsigned decimal. A value that parses must be
 * exactly the digits the file holds; a file too long for the buffer is
 * -EFBIG, never a truncated number.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fs.h"
#include "util.h"

/* what the debugfs provider reads a value into */
#define FUZZ_VALUE_MAX 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_fd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[FUZZ_VALUE_MAX], again[32];
	uint64_t v;
	ssize_t n;

	if (fuzz_fd < 0) {
		fuzz_fd = memfd_create("fuzz-debugfs", MFD_CLOEXEC);
		if (fuzz_fd < 0)
			abort();
	}
	if (ftruncate(fuzz_fd, 0) ||
	    (size && pwrite(fuzz_fd, data, size, 0) != (ssize_t)size))
		abort();
	n = fs_pread_fd(fuzz_fd, buf, sizeof(buf));
	if (n == -EFBIG) {
		if (size < sizeof(buf) - 1)
			abort(); /* a short file is never too big */
		return 0;
	}
	if (n < 0)
		abort();
	if ((size_t)n >= sizeof(buf) || buf[n] != '\0')
		abort();
	if (util_parse_u64(buf, &v))
		return 0;
	/* the number is the file's digits, blanks around them only */
	snprintf(again, sizeof(again), "%" PRIu64, v);
	if (!strstr(buf, again) && !(v == 0 && strchr(buf, '0')))
		abort();
	return 0;
}
