// SPDX-License-Identifier: GPL-2.0-only
/*
 * Safe opening of -L log files. O_NOFOLLOW refuses a symbolic link in the
 * last component (root would otherwise append to whatever file another
 * user's link points at), O_NONBLOCK keeps open() from waiting for a
 * reader on a FIFO (it would block with every signal blocked), and fstat
 * on the opened fd refuses what is not a regular file without a race
 * between checking and opening.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "logfile.h"

#define LOGFILE_MODE 0640

/* What a file of type mode is called in a message. */
static const char *logfile_kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	return "not a regular file";
}

int logfile_open(const char *path, bool readable, struct errmsg *msg)
{
	int flags = (readable ? O_RDWR : O_WRONLY) | O_APPEND | O_CREAT |
		    O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
	struct stat st;
	int fd, e;

	fd = open(path, flags, LOGFILE_MODE);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP)
			return errmsg_set(msg, -ELOOP,
					  "log file %s is a symbolic link: give -L the path of a regular file",
					  path);
		if (e == ENXIO || e == EISDIR)
			/* a FIFO without a reader; a directory */
			return errmsg_set(
				msg, -EINVAL,
				"log file %s is %s: give -L the path of a regular file",
				path, e == ENXIO ? "a FIFO" : "a directory");
		return errmsg_set(msg, -e,
				  "cannot write log file %s: %s; pick a writable path for -L",
				  path, strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		return errmsg_set(msg, -e, "cannot write log file %s: %s", path,
				  strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return errmsg_set(msg, -EINVAL,
				  "log file %s is %s: give -L the path of a regular file",
				  path, logfile_kind(st.st_mode));
	}
	/* writes wait as ever; O_NONBLOCK was for open() only */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		e = errno;
		close(fd);
		return errmsg_set(msg, -e, "cannot write log file %s: %s", path,
				  strerror(e));
	}
	return fd;
}
