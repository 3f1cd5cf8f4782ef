// SPDX-License-Identifier: GPL-2.0-only
/* Whole writes to a file descriptor, so no output sits in a buffer. */
#include <errno.h>
#include <unistd.h>

#include "writer.h"

int writer_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}
