/* SPDX-License-Identifier: GPL-2.0-only */
/* Unbuffered output: each line reaches its file or pipe when written. */
#ifndef KVMSTAT_WRITER_H
#define KVMSTAT_WRITER_H

#include <stddef.h>

/* Writes all of buf to fd, retrying on EINTR and short writes; 0 or -errno
 * (-EPIPE when the reader went away). */
int writer_all(int fd, const char *buf, size_t len);

#endif
