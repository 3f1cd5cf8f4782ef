// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading small kernel files and walking directories relative to a root
 * fd (see fs.h). Every provider and /proc scan goes through here, so the
 * rules (EINTR, too long, NUL termination, what a listing skips) are
 * written once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "util.h"

/* First buffer of a whole-file read. */
#define FS_READ_ALL_MIN 4096

int fs_open_dir(int at, const char *path)
{
	int fd = openat(at, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* The end of every small read: n bytes (or -1 with errno) into len. */
static ssize_t fs_read_done(ssize_t n, char *buf, size_t len)
{
	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -EFBIG;
	buf[n] = '\0';
	return n;
}

ssize_t fs_read_fd(int fd, char *buf, size_t len)
{
	ssize_t n;

	if (len < 2)
		return -EINVAL;
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	return fs_read_done(n, buf, len);
}

ssize_t fs_pread_fd(int fd, char *buf, size_t len)
{
	ssize_t n;

	if (len < 2)
		return -EINVAL;
	do
		n = pread(fd, buf, len - 1, 0);
	while (n < 0 && errno == EINTR);
	return fs_read_done(n, buf, len);
}

/*
 * Opens a file to read under at: never waits in open() (a FIFO planted in
 * an injected root would block it) and refuses anything but a regular
 * file (-EISDIR for a directory, else -EINVAL). Kernel files under /proc, /sys and tracefs are
 * regular files. Returns the fd or -errno.
 */
int fs_open_file(int at, const char *path)
{
	struct stat st;
	int fd = openat(at, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	else
		return fd;
	close(fd);
	return rc;
}

ssize_t fs_read_at(int at, const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (len < 2)
		return -EINVAL;
	fd = fs_open_file(at, path);
	if (fd < 0)
		return fd;
	n = fs_read_fd(fd, buf, len);
	close(fd);
	return n;
}

int fs_read_all_fd(int fd, size_t max, char **out, size_t *lenp)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	ssize_t n;

	*out = NULL;
	for (;;) {
		/* room for a byte and the NUL; max + 1 bytes tell too long */
		if (cap - len < 2) {
			size_t ncap = cap ? cap * 2 : FS_READ_ALL_MIN;

			if (max < SIZE_MAX - 2 && ncap > max + 2)
				ncap = max + 2;
			buf = xrealloc(buf, ncap);
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			free(buf);
			return (int)n;
		}
		if (!n)
			break;
		len += (size_t)n;
		if (len > max) {
			free(buf);
			return -EFBIG;
		}
	}
	buf[len] = '\0';
	*out = buf;
	if (lenp)
		*lenp = len;
	return 0;
}

int fs_read_all_at(int at, const char *path, size_t max, char **out,
		   size_t *lenp)
{
	int fd, rc;

	*out = NULL;
	fd = fs_open_file(at, path);
	if (fd < 0)
		return fd;
	rc = fs_read_all_fd(fd, max, out, lenp);
	close(fd);
	return rc;
}

int fs_dir_start(struct fs_dir *d, int dirfd)
{
	d->fd = dirfd;
	d->owned = false;
	d->len = d->off = 0;
	d->err = lseek(dirfd, 0, SEEK_SET) < 0 ? -errno : 0;
	return d->err;
}

int fs_dir_open(struct fs_dir *d, int at, const char *path)
{
	d->fd = fs_open_dir(at, path);
	d->owned = d->fd >= 0;
	d->len = d->off = 0;
	d->err = d->fd < 0 ? d->fd : 0;
	return d->err;
}

const struct fs_entry *fs_dir_next(struct fs_dir *d)
{
	for (;;) {
		const struct dirent64 *de;
		ssize_t n;

		if (d->err)
			return NULL;
		if (d->off >= d->len) {
			n = getdents64(d->fd, d->buf, sizeof(d->buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				d->err = n < 0 ? -errno : 0;
				d->len = d->off = 0;
				return NULL;
			}
			d->len = (size_t)n;
			d->off = 0;
		}
		de = (const void *)(d->buf + d->off);
		if (!de->d_reclen) {
			d->off = d->len;
			continue;
		}
		d->off += de->d_reclen;
		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		d->entry = (struct fs_entry){ .dirfd = d->fd,
					      .name = de->d_name,
					      .ino = de->d_ino,
					      .type = de->d_type };
		return &d->entry;
	}
}

void fs_dir_close(struct fs_dir *d)
{
	if (d->owned && d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	d->owned = false;
}

unsigned char fs_entry_type(const struct fs_entry *e)
{
	struct stat st;

	if (e->type != DT_UNKNOWN)
		return e->type;
	if (fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW))
		return DT_UNKNOWN;
	if (S_ISREG(st.st_mode))
		return DT_REG;
	if (S_ISDIR(st.st_mode))
		return DT_DIR;
	if (S_ISLNK(st.st_mode))
		return DT_LNK;
	return DT_UNKNOWN;
}
