// SPDX-License-Identifier: GPL-2.0-only
/*
 * The debugfs provider's counter files (debugfs_int.h): opened once, kept
 * open for pread where the file system allows it, else reopened by name
 * under a kept directory fd; each counter name interned once as a field;
 * which errors mean the kernel hides a file and which that its VM went.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugfs_int.h"
#include "fs.h"
#include "provider.h"
#include "reading.h"
#include "util.h"

/*
 * Exposed for tests. Errors that mean the kernel hides the file from us
 * (lockdown refuses writable debugfs files with EPERM; EACCES for plain
 * permissions) rather than that it is broken or gone.
 */
bool debugfs_hidden_errno(int err)
{
	if (err < 0)
		err = -err;
	return err == EPERM || err == EACCES;
}

/* Counts a file refused for its permissions (EACCES), as opposed to one
 * kernel lockdown hides (EPERM). */
void debugfs_note_denied(struct provider *p, int err)
{
	struct debugfs_priv *d = p->priv;

	if (err == -EACCES || err == EACCES)
		d->denied++;
}

/* Errors reading a VM's file that mean the VM is going away. */
bool debugfs_gone_errno(int err)
{
	if (err < 0)
		err = -err;
	return err == ENOENT || err == ENODEV || err == EIO;
}

void debugfs_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Parses a decimal that ends at the first non-digit into *end. */
bool debugfs_parse_num(const char *s, const char **end, long *out)
{
	long v = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (INT_MAX - 9) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	*end = s;
	*out = v;
	return true;
}

/* One read of a small file from its start, through fd if it can be pread,
 * else by opening name in dirfd: bytes (NUL-terminated) or -errno. */
ssize_t debugfs_read_buf(int dirfd, const char *name, int fd, char *buf,
			 size_t len)
{
	return fd >= 0 ? fs_pread_fd(fd, buf, len) :
			 fs_read_at(dirfd, name, buf, len);
}

/* Reads one counter: 0, -errno, or -EINVAL when it is not one number. */
int debugfs_read_value(int dirfd, const char *name, int fd, uint64_t *v)
{
	char buf[DEBUGFS_VALUE_MAX];
	ssize_t n = debugfs_read_buf(dirfd, name, fd, buf, sizeof(buf));

	if (n == -EFBIG)
		return -EINVAL;
	if (n < 0)
		return (int)n;
	return util_parse_u64(buf, v);
}

/*
 * Opens name in dirfd and checks that it holds one unsigned decimal. Returns
 * 0 with *fdp (an fd to pread, or -1 when the file must be reopened each
 * time) and *type, 1 when the file is not a counter, or -errno when it
 * cannot be opened or read (debugfs_hidden_errno() tells lockdown apart).
 */
int debugfs_open_counter(int dirfd, const char *name, int *fdp,
			 enum field_type *type)
{
	char buf[DEBUGFS_VALUE_MAX];
	struct stat st;
	uint64_t v;
	ssize_t n;
	int fd, rc;

	/* O_NONBLOCK: a FIFO in the tree is refused below, not waited on */
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		rc = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = 1;
		goto out_close;
	}
	n = fs_pread_fd(fd, buf, sizeof(buf));
	if (n == -ESPIPE) {
		/* a seq/attr file: read once now, reopen on every refresh */
		n = fs_read_fd(fd, buf, sizeof(buf));
		if (n >= 0 || n == -EFBIG) {
			close(fd);
			fd = -1;
		}
	}
	if (n == -EFBIG || (n >= 0 && util_parse_u64(buf, &v))) {
		rc = 1;
		goto out_close;
	}
	if (n < 0) {
		rc = (int)n;
		goto out_close;
	}
	*fdp = fd;
	/* the kernel makes only cumulative stats writable (to clear them);
	 * its peaks are named max_* even where the file is writable */
	if (!strncmp(name, "max_", 4))
		*type = FIELD_PEAK;
	else
		*type = st.st_mode & 0222 ? FIELD_CUMULATIVE : FIELD_INSTANT;
	return 0;

out_close:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Index of a reported name, or -1. */
int debugfs_name_find(const struct provider *p, const char *name)
{
	const struct debugfs_priv *d = p->priv;
	int field = field_table_find(p->fields, name);

	if (field < 0)
		return -1;
	for (size_t i = 0; i < d->nnames; i++)
		if (d->names[i].field == field)
			return (int)i;
	return -1;
}

bool debugfs_kvm_stat_exempt(const struct debugfs_priv *d, const char *name)
{
	static const char *const exempt[] = { "halt_poll_fail_ns",
					      "halt_poll_success_ns",
					      "halt_wait_ns" };

	if (!d->kvm_stat_columns)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(exempt); i++)
		if (!strcmp(name, exempt[i]))
			return true;
	return false;
}

/*
 * Declares the field of a counter file: the files carry no units, but KVM
 * names its time counters by their unit (halt_wait_ns: nanoseconds), and
 * its count of every exit "exits". A name another provider declared first
 * keeps that provider's declaration.
 */
static int debugfs_declare(struct provider *p, const char *name,
			   enum field_type type)
{
	static const struct {
		const char *suffix;
		int exponent;
	} times[] = { { "_ns", -9 }, { "_us", -6 }, { "_ms", -3 } };
	int id = field_table_intern(p->fields, name, -1, type, "debugfs");
	struct field_info *f = field_table_info(p->fields, id);
	size_t len = strlen(name);

	if (!f || !f->provider || strcmp(f->provider, "debugfs"))
		return id;
	for (size_t i = 0; i < ARRAY_SIZE(times); i++) {
		size_t n = strlen(times[i].suffix);

		if (len > n && !strcmp(name + len - n, times[i].suffix)) {
			f->unit = UNIT_SECONDS;
			f->exponent = times[i].exponent;
			f->base = 10;
		}
	}
	if (!strcmp(name, FIELD_KVM_EXITS))
		f->flags |= FIELD_EXITS;
	return id;
}

/* Index of name, interning its field when it is new to this provider. */
int debugfs_name_add(struct provider *p, const char *name, enum field_type type)
{
	struct debugfs_priv *d = p->priv;
	int i = debugfs_name_find(p, name);

	if (i >= 0)
		return i;
	if (d->nnames == d->capnames) {
		d->capnames = d->capnames ? d->capnames * 2 : 64;
		d->names = xrealloc(d->names, d->capnames * sizeof(*d->names));
		d->val = xrealloc(d->val, d->capnames * sizeof(*d->val));
	}
	readings_clear(&d->val[d->nnames], 1);
	d->names[d->nnames].name = xstrdup(name);
	d->names[d->nnames].field = debugfs_declare(p, name, type);
	d->names[d->nnames].claimed = provider_claimed(p, name);
	return (int)d->nnames++;
}

void debugfs_files_close(struct debugfs_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		debugfs_close_fd(&f[i].fd);
	free(f);
}
