/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one opener of the files kvmstat appends its logs to (-L FILE, in the
 * log, CSV and JSON front-ends). kvmstat runs as root and the path may lie
 * in a directory other users can write to, so the opener never follows a
 * symbolic link, never blocks (a FIFO planted at the path), and refuses
 * anything but a regular file; a file it creates gets mode 0640.
 */
#ifndef KVMSTAT_LOGFILE_H
#define KVMSTAT_LOGFILE_H

#include <stdbool.h>

#include "errmsg.h"

/*
 * Opens path for appending (and reading too when readable is set),
 * creating it with mode 0640. Returns the fd (close-on-exec, blocking
 * writes), or -errno with one line in msg naming the path and the fix:
 * -ELOOP for a symbolic link, -EINVAL for a FIFO, device, socket or
 * directory.
 */
int logfile_open(const char *path, bool readable, struct errmsg *msg);

#endif
