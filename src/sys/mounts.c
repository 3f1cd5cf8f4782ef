// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracefs and debugfs mounted on demand (mounts.h): a file system is
 * there when statfs() at its place names it; otherwise, with the
 * privilege, it is mounted there (nosuid, nodev, noexec, as systemd
 * mounts them) and never unmounted by kvmstat.
 */
#include <errno.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>

#include "mounts.h"

struct mounts_desc {
	const char *type; /* the file system's name for mount(2) */
	const char *path; /* where it goes */
	long magic;	  /* its statfs f_type */
};

static const struct mounts_desc mounts_descs[] = {
	[MOUNTS_TRACEFS] = { "tracefs", "/sys/kernel/tracing", TRACEFS_MAGIC },
	[MOUNTS_DEBUGFS] = { "debugfs", "/sys/kernel/debug", DEBUGFS_MAGIC },
};

const char *mounts_path(enum mounts_fs fs)
{
	return mounts_descs[fs].path;
}

/* Whether a file system of type magic is mounted at path. */
static bool mounts_is(const char *path, long magic)
{
	struct statfs st;

	return !statfs(path, &st) && (long)st.f_type == magic;
}

int mounts_ensure(enum mounts_fs fs, struct errmsg *note, struct errmsg *err)
{
	const struct mounts_desc *d = &mounts_descs[fs];
	int rc;

	if (mounts_is(d->path, d->magic))
		return 0;
	/* the kernel mounts tracefs by itself under a mounted debugfs */
	if (fs == MOUNTS_TRACEFS &&
	    mounts_is("/sys/kernel/debug", DEBUGFS_MAGIC) &&
	    mounts_is("/sys/kernel/debug/tracing", TRACEFS_MAGIC))
		return 0;
	if (!mount(d->type, d->path, d->type, MS_NOSUID | MS_NODEV | MS_NOEXEC,
		   NULL)) {
		errmsg_set(note, 0, "mounted %s on %s (it stays mounted)",
			   d->type, d->path);
		return 1;
	}
	rc = -errno;
	if (rc == -EPERM || rc == -EACCES)
		return errmsg_set(err, rc,
				  "%s is not mounted, and mounting it needs root: sudo mount -t %s %s %s (or run kvmstat as root)",
				  d->type, d->type, d->type, d->path);
	if (rc == -ENODEV)
		return errmsg_set(err, rc,
				  "this kernel has no %s (it is built without CONFIG_%s)",
				  d->type,
				  fs == MOUNTS_TRACEFS ? "TRACING" : "DEBUG_FS");
	return errmsg_set(err, rc,
			  "%s is not mounted and cannot be: %s: mount -t %s %s %s",
			  d->type, strerror(-rc), d->type, d->type, d->path);
}
