// SPDX-License-Identifier: GPL-2.0-only
/*
 * The small-file reader, the whole-file reader and the directory walker on
 * a temporary tree: missing, empty, too long and exactly fitting files,
 * reads relative to a root fd, and listings of small and large directories,
 * nested, ended early or run to the end.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "suites.h"
#include "testlib.h"

/* Every tree lives under top, which the runner process removes even when
 * a forked test fails before removing its own. */
static char top[64];
static char root[96];

static void top_create(void)
{
	strcpy(top, "/tmp/kvmstat-fs.XXXXXX");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		abort();
	}
}

static void top_remove(void)
{
	test_rm_tree(top);
}

static void tree_create(void)
{
	snprintf(root, sizeof(root), "%s/t.XXXXXX", top);
	ck_assert_ptr_nonnull(mkdtemp(root));
}

static void tree_remove(void)
{
	ck_assert_int_eq(test_rm_tree(root), 0);
}

/* Writes len bytes of s to root/name. */
static void put(const char *name, const char *s, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(s, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static void put_str(const char *name, const char *s)
{
	put(name, s, strlen(s));
}

static void mkdir_in(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, name);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

START_TEST(test_read_small)
{
	char buf[8], path[256];
	int rootfd;

	tree_create();
	put_str("value", "12345\n");
	put_str("empty", "");
	put_str("fits", "123456");  /* len - 2 bytes: the most that fits */
	put_str("long", "1234567"); /* fills the buffer: too long */
	mkdir_in("dir");
	rootfd = fs_open_dir(AT_FDCWD, root);
	ck_assert_int_ge(rootfd, 0);

	ck_assert_int_eq(fs_read_at(rootfd, "value", buf, sizeof(buf)), 6);
	ck_assert_str_eq(buf, "12345\n");
	ck_assert_int_eq(fs_read_at(rootfd, "empty", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(fs_read_at(rootfd, "fits", buf, sizeof(buf)), 6);
	ck_assert_str_eq(buf, "123456");
	ck_assert_int_eq(fs_read_at(rootfd, "long", buf, sizeof(buf)), -EFBIG);
	ck_assert_int_eq(fs_read_at(rootfd, "missing", buf, sizeof(buf)),
			 -ENOENT);
	ck_assert_int_eq(fs_read_at(rootfd, "dir", buf, sizeof(buf)), -EISDIR);
	ck_assert_int_eq(fs_read_at(rootfd, "value", buf, 1), -EINVAL);
	/* a plain path, and a path through a subdirectory */
	snprintf(path, sizeof(path), "%s/value", root);
	ck_assert_int_eq(fs_read_at(AT_FDCWD, path, buf, sizeof(buf)), 6);
	put_str("dir/x", "7");
	ck_assert_int_eq(fs_read_at(rootfd, "dir/x", buf, sizeof(buf)), 1);
	ck_assert_str_eq(buf, "7");
	ck_assert_int_eq(fs_open_dir(rootfd, "value"), -ENOTDIR);
	ck_assert_int_eq(fs_open_dir(rootfd, "nope"), -ENOENT);
	close(rootfd);
	tree_remove();
}
END_TEST

/* A kept fd reads the file again from its start; a plain read goes on. */
START_TEST(test_read_kept_fd)
{
	char buf[16], path[256];
	int fd;

	tree_create();
	put_str("counter", "10\n");
	snprintf(path, sizeof(path), "%s/counter", root);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fs_pread_fd(fd, buf, sizeof(buf)), 3);
	ck_assert_str_eq(buf, "10\n");
	put_str("counter", "2000\n"); /* rewritten in place */
	ck_assert_int_eq(fs_pread_fd(fd, buf, sizeof(buf)), 5);
	ck_assert_str_eq(buf, "2000\n");
	ck_assert_int_eq(fs_read_fd(fd, buf, sizeof(buf)), 5);
	ck_assert_int_eq(fs_read_fd(fd, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(fs_pread_fd(fd, buf, 4), -EFBIG);
	close(fd);
	ck_assert_int_eq(fs_pread_fd(fd, buf, sizeof(buf)), -EBADF);
	tree_remove();
}
END_TEST

START_TEST(test_read_all)
{
	enum {
		BIG = 100000
	};
	char *big = malloc(BIG), *out = (char *)1;
	size_t len = 1;
	int rootfd;

	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i < BIG; i++)
		big[i] = (char)('a' + i % 26);
	big[BIG / 2] = '\0'; /* a NUL inside, as in a command line */
	tree_create();
	put("big", big, BIG);
	put_str("empty", "");
	mkdir_in("dir");
	rootfd = fs_open_dir(AT_FDCWD, root);
	ck_assert_int_ge(rootfd, 0);

	ck_assert_int_eq(fs_read_all_at(rootfd, "big", BIG, &out, &len), 0);
	ck_assert_uint_eq(len, BIG);
	ck_assert_int_eq(memcmp(out, big, BIG), 0);
	ck_assert_int_eq(out[BIG], '\0');
	free(out);
	ck_assert_int_eq(fs_read_all_at(rootfd, "big", SIZE_MAX, &out, NULL), 0);
	free(out);
	/* one byte over the limit */
	ck_assert_int_eq(fs_read_all_at(rootfd, "big", BIG - 1, &out, &len),
			 -EFBIG);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(fs_read_all_at(rootfd, "empty", 10, &out, &len), 0);
	ck_assert_uint_eq(len, 0);
	ck_assert_str_eq(out, "");
	free(out);
	ck_assert_int_eq(fs_read_all_at(rootfd, "empty", 0, &out, &len), 0);
	free(out);
	ck_assert_int_eq(fs_read_all_at(rootfd, "missing", 10, &out, &len),
			 -ENOENT);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(fs_read_all_at(rootfd, "dir", 10, &out, &len), -EISDIR);
	ck_assert_ptr_null(out);
	close(rootfd);
	tree_remove();
	free(big);
}
END_TEST

/* A FIFO (or a socket, a device) where a kernel file should be: refused
 * at once, not waited on in open() (the runner's timeout fails a hang). */
START_TEST(test_read_fifo)
{
	char path[160], buf[16], *out = (char *)1;
	int rootfd;

	tree_create();
	snprintf(path, sizeof(path), "%s/fifo", root);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	rootfd = fs_open_dir(AT_FDCWD, root);
	ck_assert_int_ge(rootfd, 0);
	ck_assert_int_eq(fs_read_at(rootfd, "fifo", buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(fs_read_all_at(rootfd, "fifo", 10, &out, NULL),
			 -EINVAL);
	ck_assert_ptr_null(out);
	close(rootfd);
	tree_remove();
}
END_TEST

/* What a listing saw. */
struct seen {
	char names[1100][16];
	unsigned char types[1100];
	size_t n;
};

/* Lists d into s, up to stop entries (0: all); fs_dir_next's last word. */
static const struct fs_entry *list(struct fs_dir *d, struct seen *s, size_t stop)
{
	const struct fs_entry *e;

	memset(s, 0, sizeof(*s));
	while ((e = fs_dir_next(d))) {
		ck_assert_uint_lt(s->n, 1100);
		ck_assert_int_eq(e->dirfd, d->fd);
		ck_assert_uint_ne(e->ino, 0);
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", e->name);
		s->types[s->n] = fs_entry_type(e);
		if (++s->n == stop)
			break;
	}
	return e;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

START_TEST(test_list)
{
	static struct fs_dir d;
	static struct seen s;
	char link[256];
	int rootfd;

	tree_create();
	put_str("b", "1");
	put_str(".hidden", "1");
	mkdir_in("a");
	snprintf(link, sizeof(link), "%s/c", root);
	ck_assert_int_eq(symlink("b", link), 0);
	ck_assert_int_eq(fs_dir_open(&d, AT_FDCWD, root), 0);
	ck_assert_ptr_null(list(&d, &s, 0));
	ck_assert_int_eq(d.err, 0);
	ck_assert_ptr_null(fs_dir_next(&d)); /* stays at the end */
	fs_dir_close(&d);
	ck_assert_int_eq(d.fd, -1);
	ck_assert_uint_eq(s.n, 4); /* no "." or ".." */
	for (size_t i = 0; i < s.n; i++) {
		if (!strcmp(s.names[i], "a"))
			ck_assert_int_eq(s.types[i], DT_DIR);
		else if (!strcmp(s.names[i], "c"))
			ck_assert_int_eq(s.types[i], DT_LNK);
		else
			ck_assert_int_eq(s.types[i], DT_REG);
	}
	qsort(s.names, s.n, sizeof(s.names[0]), name_cmp);
	ck_assert_str_eq(s.names[0], ".hidden");
	ck_assert_str_eq(s.names[1], "a");
	ck_assert_str_eq(s.names[2], "b");
	ck_assert_str_eq(s.names[3], "c");

	/* the type asked of the file system when the listing says nothing */
	{
		struct fs_entry e = { .name = "a", .type = DT_UNKNOWN };

		e.dirfd = fs_open_dir(AT_FDCWD, root);
		ck_assert_int_eq(fs_entry_type(&e), DT_DIR);
		e.name = "b";
		ck_assert_int_eq(fs_entry_type(&e), DT_REG);
		e.name = "gone";
		ck_assert_int_eq(fs_entry_type(&e), DT_UNKNOWN);
		close(e.dirfd);
	}

	/* an empty directory, a missing one, a file */
	rootfd = fs_open_dir(AT_FDCWD, root);
	ck_assert_int_ge(rootfd, 0);
	ck_assert_int_eq(fs_dir_open(&d, rootfd, "a"), 0);
	ck_assert_ptr_null(list(&d, &s, 0));
	ck_assert_uint_eq(s.n, 0);
	fs_dir_close(&d);
	ck_assert_int_eq(fs_dir_open(&d, rootfd, "none"), -ENOENT);
	ck_assert_ptr_null(fs_dir_next(&d));
	ck_assert_int_eq(d.err, -ENOENT);
	fs_dir_close(&d);
	ck_assert_int_eq(fs_dir_open(&d, rootfd, "b"), -ENOTDIR);
	fs_dir_close(&d);
	close(rootfd);
	tree_remove();
}
END_TEST

/* Listings longer than one buffer, twice over one kept fd, one ended early
 * and one nested in another. */
START_TEST(test_list_large)
{
	static struct fs_dir d, inner;
	static struct seen s;
	const struct fs_entry *e;
	char name[16];
	size_t n = 0;
	int dirfd;

	tree_create();
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "f%04d", i);
		put_str(name, "");
	}
	dirfd = fs_open_dir(AT_FDCWD, root);
	ck_assert_int_ge(dirfd, 0);
	for (int pass = 0; pass < 2; pass++) {
		ck_assert_int_eq(fs_dir_start(&d, dirfd), 0);
		ck_assert_ptr_null(list(&d, &s, 0));
		fs_dir_close(&d);
		ck_assert_uint_eq(s.n, 1000);
		qsort(s.names, s.n, sizeof(s.names[0]), name_cmp);
		for (int i = 0; i < 1000; i++) {
			snprintf(name, sizeof(name), "f%04d", i);
			ck_assert_str_eq(s.names[i], name);
		}
	}
	/* the fd is still the caller's */
	ck_assert_int_eq(fcntl(dirfd, F_GETFD), FD_CLOEXEC);
	ck_assert_int_eq(fs_dir_start(&d, dirfd), 0);
	ck_assert_ptr_nonnull(list(&d, &s, 600));
	ck_assert_uint_eq(s.n, 600);
	/* a second listing of the same directory inside the first */
	ck_assert_int_eq(fs_dir_open(&inner, dirfd, "."), 0);
	ck_assert_ptr_null(list(&inner, &s, 0));
	ck_assert_uint_eq(s.n, 1000);
	fs_dir_close(&inner);
	while ((e = fs_dir_next(&d)))
		n++;
	ck_assert_uint_eq(n, 400);
	close(dirfd);
	ck_assert_int_eq(fs_dir_start(&d, dirfd), -EBADF);
	ck_assert_ptr_null(fs_dir_next(&d));
	tree_remove();
}
END_TEST

/* A real kernel directory and files: /proc/self. */
START_TEST(test_proc_self)
{
	static struct fs_dir d;
	static struct seen s;
	char buf[1024];
	long pid;
	int fd;

	ck_assert_int_gt(fs_read_at(AT_FDCWD, "/proc/self/stat", buf,
				    sizeof(buf)),
			 0);
	ck_assert_int_eq(fs_read_at(AT_FDCWD, "/proc/self/stat", buf, 16),
			 -EFBIG);
	fd = fs_open_dir(AT_FDCWD, "/proc/self");
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fs_dir_open(&d, fd, "task"), 0);
	list(&d, &s, 0);
	fs_dir_close(&d);
	ck_assert_uint_ge(s.n, 1);
	pid = strtol(s.names[0], NULL, 10);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_gt(fs_read_at(fd, "comm", buf, sizeof(buf)), 0);
	close(fd);
}
END_TEST

Suite *fs_suite(void)
{
	Suite *s = suite_create("fs");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, top_create, top_remove);
	tcase_add_test(tc, test_read_small);
	tcase_add_test(tc, test_read_kept_fd);
	tcase_add_test(tc, test_read_all);
	tcase_add_test(tc, test_read_fifo);
	tcase_add_test(tc, test_list);
	tcase_add_test(tc, test_list_large);
	tcase_add_test(tc, test_proc_self);
	suite_add_tcase(s, tc);
	return s;
}
