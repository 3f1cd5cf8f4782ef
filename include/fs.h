/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Small kernel files and directories, relative to an injectable root: every
 * path is taken relative to a directory fd (AT_FDCWD for a plain path), so
 * a provider opens its root (/proc, debugfs, tracefs, or a fake tree in the
 * tests) once and walks it with *at() calls. One small-file reader, one
 * whole-file reader and one directory lister for the whole tree.
 */
#ifndef KVMSTAT_FS_H
#define KVMSTAT_FS_H

#include <dirent.h> /* DT_* */
#include <fcntl.h>  /* AT_FDCWD */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Opens the directory path (relative to at) as a root: an fd, or -errno. */
int fs_open_dir(int at, const char *path);

/*
 * Small files: one read of at most len - 1 bytes, NUL-terminated. Kernel
 * files (procfs, sysfs, debugfs, tracefs) hand over all they hold in one
 * read, as regular files do, so a read that fills the buffer means the
 * file holds more than the caller takes for valid: -EFBIG. Each returns
 * the bytes read or -errno (-EINVAL when len is below 2). Only regular
 * files are read: a FIFO, socket or device under an injected root is
 * -EINVAL at once, never waited on (the same for the whole-file reader).
 */
/* Opens the regular file path relative to at, to keep and read again
 * with fs_pread_fd: the fd, or -errno (a FIFO or a directory refused). */
int fs_open_file(int at, const char *path);
/* The file path relative to at. */
ssize_t fs_read_at(int at, const char *path, char *buf, size_t len);
/* An open file, from its current offset (for files that cannot seek). */
ssize_t fs_read_fd(int fd, char *buf, size_t len);
/* An open file, from offset 0: a kept fd read again each refresh. */
ssize_t fs_pread_fd(int fd, char *buf, size_t len);

/*
 * Whole files of any length up to max bytes (-EFBIG beyond), read until
 * end of file (tracefs files say they are empty): a new NUL-terminated
 * buffer in *out that the caller frees, its length in *lenp if not NULL.
 * 0 or -errno; *out is NULL on error.
 */
int fs_read_all_at(int at, const char *path, size_t max, char **out,
		   size_t *lenp);
int fs_read_all_fd(int fd, size_t max, char **out, size_t *lenp);

/* One directory entry, as a listing hands it over. */
struct fs_entry {
	int dirfd;	  /* the directory: the base for *at() on name */
	const char *name; /* never "." or ".." */
	ino_t ino;
	unsigned char type; /* DT_*, DT_UNKNOWN when the file system did
				 * not say (fs_entry_type() asks it) */
};

/* Bytes of directory records one getdents64 call may return. */
#define FS_DIR_BUF 8192

/*
 * A directory being listed, in the order the file system gives: getdents64
 * into the buffer inside (no allocation; it may live on the stack).
 *
 *	struct fs_dir dir;
 *	const struct fs_entry *e;
 *
 *	if (fs_dir_open(&dir, rootfd, "1234/task"))
 *		return dir.err;
 *	while ((e = fs_dir_next(&dir)))
 *		... e->name, relative to e->dirfd ...
 *	fs_dir_close(&dir);
 */
struct fs_dir {
	int fd;
	bool owned;	       /* opened here: fs_dir_close() closes it */
	int err;	       /* -errno once listing failed, else 0 */
	size_t len, off;       /* bytes of records in buf, the next one */
	struct fs_entry entry; /* what fs_dir_next() returned last */
	char buf[FS_DIR_BUF] __attribute__((aligned(8)));
};

/* Opens path (relative to at) for listing: 0, or -errno (also in d->err;
 * fs_dir_next() then gives nothing and fs_dir_close() is harmless). */
int fs_dir_open(struct fs_dir *d, int at, const char *path);
/* Lists an open directory fd from its start; the fd stays the caller's.
 * 0 or -errno, as fs_dir_open(). */
int fs_dir_start(struct fs_dir *d, int dirfd);
/* The next entry, valid until the next call; NULL at the end or when
 * listing failed (d->err says which). */
const struct fs_entry *fs_dir_next(struct fs_dir *d);
void fs_dir_close(struct fs_dir *d);
/* The entry's DT_* type, asking the file system (without following a
 * link) when the listing did not say; DT_UNKNOWN when that fails. */
unsigned char fs_entry_type(const struct fs_entry *e);

#endif
