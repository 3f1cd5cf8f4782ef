// SPDX-License-Identifier: GPL-2.0-only
/*
 * The debugfs provider against fake KVM debugfs trees that each test builds
 * in a temporary directory (top-level totals, <pid>-<fd> VM directories and
 * their vcpuN directories), and against this host's real
 * /sys/kernel/debug/kvm, which says SKIP with the reason when it is absent:
 * its counters as the kvm module shows them, and (tagged kvm) a VM made
 * here through /dev/kvm.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/kvm.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "arbiter.h"
#include "errmsg.h"
#include "filter.h"
#include "options.h"
#include "provider.h"
#include "providers/debugfs/debugfs_int.h"
#include "sample.h"
#include "suites.h"
#include "testlib.h"
#include "util.h"

extern const struct provider_ops debugfs_provider_ops;

/* One provider on one fixture tree. */
struct dfx {
	char root[PATH_MAX]; /* the fake debugfs/kvm directory */
	struct options o;
	struct field_filter filter;
	struct field_table fields;
	struct arbiter arb; /* who owns what, as main sets it up */
	struct sample_set set;
	struct provider p;
	bool opened;
};

static void fx_path(char *out, size_t len, const char *root, const char *rel)
{
	ck_assert_int_lt(snprintf(out, len, "%s/%s", root, rel), (int)len);
}

/* Writes a fixture file in place (an fd kept on it sees the new content)
 * and sets its mode. */
static void fx_put(const char *root, const char *rel, const char *content,
		   mode_t mode)
{
	char path[PATH_MAX];
	int fd;

	fx_path(path, sizeof(path), root, rel);
	chmod(path, 0600);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "create %s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, content, strlen(content)),
			 (ssize_t)strlen(content));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

static void fx_mkdir(const char *root, const char *rel)
{
	char path[PATH_MAX];

	fx_path(path, sizeof(path), root, rel);
	ck_assert_msg(!mkdir(path, 0755), "mkdir %s: %s", path, strerror(errno));
}

/* A VM directory with its counters and two vCPUs (threads pid+1, pid+2). */
static void fx_vm(const char *root, const char *dir, unsigned exits,
		  unsigned halt_exits, unsigned pages)
{
	char rel[PATH_MAX], val[32];
	int pid = atoi(dir);

	fx_mkdir(root, dir);
	snprintf(rel, sizeof(rel), "%s/exits", dir);
	snprintf(val, sizeof(val), "%u\n", exits);
	fx_put(root, rel, val, 0644);
	snprintf(rel, sizeof(rel), "%s/halt_exits", dir);
	snprintf(val, sizeof(val), "%u\n", halt_exits);
	fx_put(root, rel, val, 0644);
	snprintf(rel, sizeof(rel), "%s/pages_4k", dir);
	snprintf(val, sizeof(val), "%u\n", pages);
	fx_put(root, rel, val, 0444);
	snprintf(rel, sizeof(rel), "%s/guest_mode", dir);
	fx_put(root, rel, "0\n", 0444);
	snprintf(rel, sizeof(rel), "%s/halt_wait_hist", dir);
	fx_put(root, rel, "1 2 3\n", 0644);
	for (int c = 0; c < 2; c++) {
		snprintf(rel, sizeof(rel), "%s/vcpu%d", dir, c);
		fx_mkdir(root, rel);
		snprintf(rel, sizeof(rel), "%s/vcpu%d/pid", dir, c);
		snprintf(val, sizeof(val), "%d\n", pid + 1 + c);
		fx_put(root, rel, val, 0444);
		snprintf(rel, sizeof(rel), "%s/vcpu%d/guest_mode", dir, c);
		fx_put(root, rel, c ? "0\n" : "1\n", 0444);
		snprintf(rel, sizeof(rel), "%s/vcpu%d/tsc-offset", dir, c);
		fx_put(root, rel, "-5\n", 0444);
	}
}

/* Where the tests' trees go: made and removed by the runner process, so
 * that a test that fails (and exits at once) leaves nothing behind. */
static char fx_parent[PATH_MAX];

static void fx_setup(void)
{
	snprintf(fx_parent, sizeof(fx_parent), "/tmp/kvmstat-debugfs.XXXXXX");
	if (!mkdtemp(fx_parent) || chmod(fx_parent, 0755))
		fx_parent[0] = '\0';
}

static void fx_teardown(void)
{
	if (fx_parent[0])
		test_rm_tree(fx_parent);
	fx_parent[0] = '\0';
}

/* A new empty directory for one tree. */
static void fx_tmpdir(char *root, size_t len)
{
	ck_assert_int_lt(snprintf(root, len, "%s/t.XXXXXX",
				  fx_parent[0] ? fx_parent : "/tmp"),
			 (int)len);
	ck_assert_ptr_nonnull(mkdtemp(root));
	ck_assert_int_eq(chmod(root, 0755), 0);
}

/*
 * The standard tree: totals exits=100, halt_exits=7, pages_4k=512 (0444),
 * guest_mode=1 (0444), a non-numeric file and a histogram; VMs 1111-10
 * (exits 60) and 2222-11 (exits 40).
 */
static void fx_build(char *root, size_t len)
{
	fx_tmpdir(root, len);
	fx_put(root, "exits", "100\n", 0644);
	fx_put(root, "halt_exits", "7\n", 0644);
	fx_put(root, "pages_4k", "512\n", 0444);
	fx_put(root, "guest_mode", "1\n", 0444);
	fx_put(root, "version", "kvm 1.0\n", 0644);
	fx_put(root, "halt_wait_hist", "1 2 3\n", 0644);
	fx_vm(root, "1111-10", 60, 3, 256);
	fx_vm(root, "2222-11", 40, 4, 256);
}

static void fx_rm(const char *root, const char *rel)
{
	char path[PATH_MAX];

	if (rel)
		fx_path(path, sizeof(path), root, rel);
	else
		snprintf(path, sizeof(path), "%s", root);
	test_rm_tree(path);
}

static void dfx_init(struct dfx *f, const char *root, const char *regex,
		     pid_t pid, bool want_vms)
{
	struct errmsg err;

	memset(f, 0, sizeof(*f));
	snprintf(f->root, sizeof(f->root), "%s", root);
	f->o.debugfs_root = f->root;
	f->o.pid = pid;
	if (regex)
		ck_assert_int_eq(filter_set(&f->filter, regex, &err), 0);
	field_table_init(&f->fields);
	arbiter_init(&f->arb, &f->fields);
	sample_set_init(&f->set, &f->fields);
	f->p.ops = &debugfs_provider_ops;
	f->p.fields = &f->fields;
	f->p.arbiter = &f->arb;
	f->p.filter = regex ? &f->filter : NULL;
	f->p.want_vms = want_vms;
}

/* Opens the provider on root; returns what open returned. */
static int dfx_open(struct dfx *f, const char *root, const char *regex,
		    pid_t pid, bool want_vms)
{
	int rc;

	dfx_init(f, root, regex, pid, want_vms);
	rc = test_provider_open(&f->p, &f->o);
	f->opened = rc == 0;
	return rc;
}

static void dfx_free(struct dfx *f)
{
	if (f->opened)
		f->p.ops->close(&f->p);
	f->opened = false;
	sample_set_free(&f->set);
	arbiter_free(&f->arb);
	field_table_free(&f->fields);
	filter_free(&f->filter);
}

/* One refresh into a fresh sample set. */
static void dfx_read(struct dfx *f)
{
	sample_set_clear(&f->set);
	ck_assert_int_eq(f->p.ops->read(&f->p, &f->set), 0);
}

/* The one sample of (name, pid, vcpu), or NULL. */
static const struct sample *dfx_find(const struct dfx *f, const char *name,
				     pid_t pid, int vcpu)
{
	const struct sample *found = NULL;
	int field = field_table_find(&f->fields, name);

	for (size_t i = 0; field >= 0 && i < f->set.n; i++) {
		const struct sample *s = &f->set.v[i];

		if (s->field != field || s->pid != pid || s->vcpu != vcpu)
			continue;
		ck_assert_msg(!found, "two samples of %s pid %d vcpu %d", name,
			      (int)pid, vcpu);
		found = s;
	}
	return found;
}

static uint64_t dfx_value(const struct dfx *f, const char *name, pid_t pid,
			  int vcpu)
{
	const struct sample *s = dfx_find(f, name, pid, vcpu);

	ck_assert_msg(s, "no sample of %s pid %d vcpu %d", name, (int)pid, vcpu);
	return s->value;
}

static size_t dfx_count_pid(const struct dfx *f, pid_t pid)
{
	size_t n = 0;

	for (size_t i = 0; i < f->set.n; i++)
		n += f->set.v[i].pid == pid;
	return n;
}

/* Open file descriptors of this process, and those whose target's path
 * contains needle (NULL: all). */
static int count_fds(const char *needle)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(dir);
	while ((e = readdir(dir))) {
		char path[PATH_MAX], target[PATH_MAX];
		ssize_t len;

		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(dir))
			continue;
		if (!needle) {
			n++;
			continue;
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		n += strstr(target, needle) != NULL;
	}
	closedir(dir);
	return n;
}

START_TEST(test_fields_and_values)
{
	char root[PATH_MAX];
	struct dfx f;
	int id;

	fx_build(root, sizeof(root));
	ck_assert_msg(dfx_open(&f, root, FILTER_DEFAULT, 0, false) == 0,
		      "open: %s", f.p.msg.text);
	ck_assert_str_eq(f.p.msg.text, "");
	ck_assert(!f.p.notice);
	id = field_table_find(&f.fields, "exits");
	ck_assert_int_ge(id, 0);
	ck_assert_int_eq(f.fields.v[id].type, FIELD_CUMULATIVE);
	ck_assert_str_eq(f.fields.v[id].provider, "debugfs");
	ck_assert_int_eq(f.fields.v[id].parent, -1);
	id = field_table_find(&f.fields, "halt_exits");
	ck_assert_int_ge(id, 0);
	ck_assert_int_eq(f.fields.v[id].type, FIELD_CUMULATIVE);
	id = field_table_find(&f.fields, "pages_4k");
	ck_assert_int_ge(id, 0);
	ck_assert_int_eq(f.fields.v[id].type, FIELD_INSTANT);
	ck_assert_int_eq(f.fields.v[field_table_find(&f.fields, "guest_mode")]
				 .type,
			 FIELD_INSTANT);
	ck_assert_uint_eq(f.fields.n, 4);

	dfx_read(&f);
	ck_assert_uint_eq(f.set.n, 4);
	ck_assert_uint_eq(dfx_value(&f, "exits", 0, SAMPLE_ALL_VCPUS), 100);
	ck_assert_uint_eq(dfx_value(&f, "halt_exits", 0, SAMPLE_ALL_VCPUS), 7);
	ck_assert_uint_eq(dfx_value(&f, "pages_4k", 0, SAMPLE_ALL_VCPUS), 512);
	ck_assert_uint_eq(dfx_value(&f, "guest_mode", 0, SAMPLE_ALL_VCPUS), 1);
	for (size_t i = 0; i < f.set.n; i++) {
		ck_assert_int_eq(f.set.v[i].tid, 0);
		ck_assert_uint_eq(f.set.v[i].flags, 0);
	}
	/* summary mode: no VM or vCPU samples */
	ck_assert_uint_eq(dfx_count_pid(&f, 0), f.set.n);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

/*
 * The files carry no units: a time counter's name says its unit (*_ns
 * nanoseconds, _us, _ms), and "exits" is KVM's count of every exit. A
 * name another provider declared keeps that declaration.
 */
START_TEST(test_units_by_name)
{
	static const struct {
		const char *name;
		enum field_unit unit;
		int exponent;
	} want[] = {
		{ "halt_wait_ns", UNIT_SECONDS, -9 },
		{ "halt_poll_success_ns", UNIT_SECONDS, -9 },
		{ "a_us", UNIT_SECONDS, -6 },
		{ "b_ms", UNIT_SECONDS, -3 },
		{ "halt_ns_count", UNIT_NONE, 0 },
		{ "_ns", UNIT_NONE, 0 },
		{ "exits", UNIT_NONE, 0 },
		{ "halt_exits", UNIT_NONE, 0 },
	};
	char root[PATH_MAX];
	struct dfx f;
	int owned, id;

	fx_tmpdir(root, sizeof(root));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		fx_put(root, want[i].name, "5\n", 0644);
	fx_put(root, "halt_poll_fail_ns", "5\n", 0644);
	dfx_init(&f, root, NULL, 0, false);
	owned = field_table_intern(&f.fields, "halt_poll_fail_ns", -1,
				   FIELD_CUMULATIVE, "statsfd");
	ck_assert_int_eq(test_provider_open(&f.p, &f.o), 0);
	f.opened = true;
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct field_info *fi;

		id = field_table_find(&f.fields, want[i].name);
		ck_assert_msg(id >= 0, "no field %s", want[i].name);
		fi = &f.fields.v[id];
		ck_assert_msg(fi->unit == want[i].unit &&
				      fi->exponent == want[i].exponent,
			      "%s: unit %d exponent %d", want[i].name, fi->unit,
			      fi->exponent);
		if (fi->unit == UNIT_SECONDS)
			ck_assert_uint_eq(fi->base, 10);
		ck_assert_uint_eq(fi->flags & FIELD_EXITS,
				  !strcmp(want[i].name, "exits") ? FIELD_EXITS :
								   0);
	}
	ck_assert_int_eq(f.fields.v[owned].unit, UNIT_NONE);
	ck_assert_int_eq(f.fields.v[owned].exponent, 0);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

START_TEST(test_filter_limits_fds)
{
	char root[PATH_MAX];
	struct dfx f;
	int before;

	fx_build(root, sizeof(root));
	before = count_fds(NULL);
	ck_assert_int_eq(dfx_open(&f, root, "^exits$", 0, false), 0);
	/* the root directory and one counter */
	ck_assert_int_eq(count_fds(NULL) - before, 2);
	ck_assert_int_eq(count_fds(root), 2);
	ck_assert_int_lt(field_table_find(&f.fields, "halt_exits"), 0);
	dfx_read(&f);
	ck_assert_uint_eq(f.set.n, 1);
	ck_assert_uint_eq(dfx_value(&f, "exits", 0, SAMPLE_ALL_VCPUS), 100);
	dfx_free(&f);
	ck_assert_int_eq(count_fds(NULL), before);

	/* unfiltered: four counters; the histogram and the text file closed */
	ck_assert_int_eq(dfx_open(&f, root, NULL, 0, false), 0);
	ck_assert_int_eq(count_fds(NULL) - before, 5);
	dfx_free(&f);
	ck_assert_int_eq(count_fds(NULL), before);
	fx_rm(root, NULL);
}
END_TEST

START_TEST(test_reread_after_rewrite)
{
	char root[PATH_MAX], path[PATH_MAX];
	struct dfx f;
	int fds, fd;

	fx_build(root, sizeof(root));
	ck_assert_int_eq(dfx_open(&f, root, NULL, 0, false), 0);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_value(&f, "exits", 0, SAMPLE_ALL_VCPUS), 100);
	fds = count_fds(NULL);

	fx_path(path, sizeof(path), root, "exits");
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "123456\n", 7, 0), 7);
	close(fd);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_value(&f, "exits", 0, SAMPLE_ALL_VCPUS), 123456);

	/* shorter than before: what is left over is blanks to the parser */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "99\n", 3, 0), 3);
	close(fd);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_value(&f, "exits", 0, SAMPLE_ALL_VCPUS), 99);

	/* unparsable now: stale (no sample), never 0 */
	fx_path(path, sizeof(path), root, "halt_exits");
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "x\n", 2, 0), 2);
	close(fd);
	dfx_read(&f);
	ck_assert_ptr_null(dfx_find(&f, "halt_exits", 0, SAMPLE_ALL_VCPUS));
	ck_assert_uint_eq(f.set.n, 3);
	/* kept fds: nothing opened or closed per refresh */
	ck_assert_int_eq(count_fds(NULL), fds);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

START_TEST(test_non_counters_skipped)
{
	char root[PATH_MAX], path[PATH_MAX];
	static const char *const skipped[] = {
		"version", "halt_wait_hist", "empty",	 "negative", "huge",
		"spaced",  "subdir",	     "dangling", "fifo",     "link",
	};
	struct dfx f;

	fx_build(root, sizeof(root));
	fx_put(root, "empty", "", 0644);
	fx_put(root, "negative", "-3\n", 0644);
	fx_put(root, "huge", "123456789012345678901234567890\n", 0644);
	fx_put(root, "spaced", "12 \n3\n", 0644);
	fx_mkdir(root, "subdir");
	fx_path(path, sizeof(path), root, "dangling");
	ck_assert_int_eq(symlink("/nonexistent/kvmstat", path), 0);
	fx_path(path, sizeof(path), root, "link");
	ck_assert_int_eq(symlink("exits", path), 0);
	fx_path(path, sizeof(path), root, "fifo");
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	/* blanks around one number are fine */
	fx_put(root, "blanks", "  42 \n", 0644);

	ck_assert_msg(dfx_open(&f, root, NULL, 0, false) == 0, "open: %s",
		      f.p.msg.text);
	for (size_t i = 0; i < sizeof(skipped) / sizeof(skipped[0]); i++)
		ck_assert_msg(field_table_find(&f.fields, skipped[i]) < 0,
			      "%s was taken for a counter", skipped[i]);
	dfx_read(&f);
	ck_assert_uint_eq(f.set.n, 5);
	ck_assert_uint_eq(dfx_value(&f, "blanks", 0, SAMPLE_ALL_VCPUS), 42);
	ck_assert_str_eq(f.p.msg.text, "");
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

START_TEST(test_hidden_errno)
{
	ck_assert(debugfs_hidden_errno(EPERM));
	ck_assert(debugfs_hidden_errno(-EPERM));
	ck_assert(debugfs_hidden_errno(EACCES));
	ck_assert(debugfs_hidden_errno(-EACCES));
	ck_assert(!debugfs_hidden_errno(ENOENT));
	ck_assert(!debugfs_hidden_errno(-EIO));
	ck_assert(!debugfs_hidden_errno(EINVAL));
	ck_assert(!debugfs_hidden_errno(0));
}
END_TEST

static int fx_chmod_dir(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D)
		return chmod(path, st->st_mode | 0777);
	return 0;
}

/*
 * Counters the process may not read for their permissions (mode 0200, and
 * not root: a root test drops to nobody, which is why the directories are
 * left writable; the runner removes what is left). The open fails with
 * EACCES: not lockdown (EPERM), and not to be reported as lockdown.
 */
static void fx_lockdown(char *root, size_t len)
{
	static const char *const writable[] = {
		"exits",	 "halt_exits",	       "halt_wait_hist",
		"1111-10/exits", "1111-10/halt_exits", "1111-10/halt_wait_hist",
		"2222-11/exits", "2222-11/halt_exits", "2222-11/halt_wait_hist",
	};
	char path[PATH_MAX];

	fx_build(root, len);
	for (size_t i = 0; i < sizeof(writable) / sizeof(writable[0]); i++) {
		fx_path(path, sizeof(path), root, writable[i]);
		ck_assert_int_eq(chmod(path, 0200), 0);
	}
	fx_put(root, "version", "kvm 1.0\n", 0444);
	ck_assert_int_eq(nftw(root, fx_chmod_dir, 16, FTW_PHYS), 0);
	if (!geteuid()) {
		ck_assert_int_eq(setresgid(65534, 65534, 65534), 0);
		ck_assert_int_eq(setresuid(65534, 65534, 65534), 0);
	}
}

START_TEST(test_lockdown_notice)
{
	char root[PATH_MAX];
	struct dfx f;

	fx_lockdown(root, sizeof(root));
	ck_assert_msg(dfx_open(&f, root, NULL, 0, true) == 0, "open: %s",
		      f.p.msg.text);
	ck_assert(f.p.notice);
	ck_assert_msg(strstr(f.p.msg.text,
			     "permission denied reading 3 debugfs counters") &&
			      strstr(f.p.msg.text, "run kvmstat as root") &&
			      !strstr(f.p.msg.text, "lockdown"),
		      "notice: %s", f.p.msg.text);
	/* hidden: not interned, never reported as 0 */
	ck_assert_int_lt(field_table_find(&f.fields, "exits"), 0);
	ck_assert_int_lt(field_table_find(&f.fields, "halt_exits"), 0);
	f.p.notice = false;
	errmsg_clear(&f.p.msg);
	dfx_read(&f);
	dfx_read(&f);
	ck_assert(!f.p.notice); /* once per run */
	ck_assert_str_eq(f.p.msg.text, "");
	ck_assert_uint_eq(dfx_count_pid(&f, 0), 2);
	ck_assert_uint_eq(dfx_value(&f, "pages_4k", 0, SAMPLE_ALL_VCPUS), 512);
	ck_assert_uint_eq(dfx_value(&f, "pages_4k", 1111, SAMPLE_ALL_VCPUS),
			  256);
	ck_assert_ptr_null(dfx_find(&f, "exits", 1111, SAMPLE_ALL_VCPUS));
	dfx_free(&f);

	/* nothing readable at all: an error that names the fix */
	ck_assert_int_eq(dfx_open(&f, root, "^(exits|halt_exits)$", 0, false),
			 -EACCES);
	ck_assert_msg(strstr(f.p.msg.text,
			     "permission denied reading all 2 debugfs counters") &&
			      !strstr(f.p.msg.text, "lockdown"),
		      "msg: %s", f.p.msg.text);
	dfx_free(&f);

	/* with -p, the VM's directory tells what is hidden */
	ck_assert_int_eq(dfx_open(&f, root, NULL, 1111, true), 0);
	ck_assert_msg(strstr(f.p.msg.text,
			     "permission denied reading 3 debugfs counters"),
		      "notice: %s", f.p.msg.text);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

START_TEST(test_pid_mode)
{
	char root[PATH_MAX];
	struct dfx f;

	fx_build(root, sizeof(root));
	ck_assert_msg(dfx_open(&f, root, NULL, 1111, true) == 0, "open: %s",
		      f.p.msg.text);
	dfx_read(&f);
	/* the VM's values stand for the whole selection */
	ck_assert_uint_eq(dfx_value(&f, "exits", 0, SAMPLE_ALL_VCPUS), 60);
	ck_assert_uint_eq(dfx_value(&f, "halt_exits", 0, SAMPLE_ALL_VCPUS), 3);
	ck_assert_uint_eq(dfx_value(&f, "pages_4k", 0, SAMPLE_ALL_VCPUS), 256);
	ck_assert_uint_eq(dfx_value(&f, "exits", 1111, SAMPLE_ALL_VCPUS), 60);
	ck_assert_uint_eq(dfx_count_pid(&f, 2222), 0);
	ck_assert_uint_eq(dfx_value(&f, "guest_mode", 1111, 0), 1);
	ck_assert_int_eq(dfx_find(&f, "guest_mode", 1111, 0)->tid, 1112);
	ck_assert_uint_eq(dfx_value(&f, "guest_mode", 1111, 1), 0);
	ck_assert_int_eq(dfx_find(&f, "guest_mode", 1111, 1)->tid, 1113);

	/* a second VM of the same process adds up */
	fx_vm(root, "1111-12", 5, 1, 10);
	fx_put(root, "1111-12/vcpu0/pid", "1120\n", 0444);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_value(&f, "exits", 0, SAMPLE_ALL_VCPUS), 65);
	ck_assert_uint_eq(dfx_value(&f, "exits", 1111, SAMPLE_ALL_VCPUS), 65);
	ck_assert_uint_eq(dfx_value(&f, "pages_4k", 0, SAMPLE_ALL_VCPUS), 266);
	/* one sample per vCPU index: the two VMs' vCPU 0 add up */
	ck_assert_uint_eq(dfx_value(&f, "guest_mode", 1111, 0), 2);
	ck_assert_int_eq(dfx_find(&f, "guest_mode", 1111, 0)->tid, 0);
	ck_assert_uint_eq(f.set.v[0].flags, 0);

	/* and when it goes, the drop is flagged */
	fx_rm(root, "1111-12");
	dfx_read(&f);
	ck_assert_uint_eq(dfx_value(&f, "exits", 0, SAMPLE_ALL_VCPUS), 60);
	ck_assert_uint_eq(dfx_find(&f, "exits", 0, SAMPLE_ALL_VCPUS)->flags,
			  SAMPLE_REBASE);
	ck_assert(!f.p.notice);

	/* the whole VM gone: no samples, one notice */
	fx_rm(root, "1111-10");
	dfx_read(&f);
	ck_assert_uint_eq(f.set.n, 0);
	ck_assert(f.p.notice);
	ck_assert_ptr_nonnull(strstr(f.p.msg.text, "1111"));
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

/* A process's VMs sum, but a peak (max_*) is the highest of them, as the
 * stats-fd and QMP providers aggregate peaks. */
START_TEST(test_pid_mode_peak)
{
	char root[PATH_MAX];
	struct dfx f;

	fx_build(root, sizeof(root));
	fx_put(root, "max_mmu_rmap_size", "9\n", 0644);
	fx_put(root, "1111-10/max_mmu_rmap_size", "5\n", 0644);
	fx_vm(root, "1111-12", 5, 1, 10);
	fx_put(root, "1111-12/max_mmu_rmap_size", "7\n", 0644);
	ck_assert_msg(dfx_open(&f, root, NULL, 1111, true) == 0, "open: %s",
		      f.p.msg.text);
	ck_assert_int_eq(f.fields.v[field_table_find(&f.fields,
						     "max_mmu_rmap_size")]
				 .type,
			 FIELD_PEAK);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_value(&f, "exits", 1111, SAMPLE_ALL_VCPUS), 65);
	ck_assert_uint_eq(dfx_value(&f, "max_mmu_rmap_size", 1111,
				    SAMPLE_ALL_VCPUS),
			  7);
	ck_assert_uint_eq(dfx_value(&f, "max_mmu_rmap_size", 0,
				    SAMPLE_ALL_VCPUS),
			  7);
	/* one VM's file unreadable: no value for the process, not the
	 * other's alone */
	fx_put(root, "1111-12/max_mmu_rmap_size", "x\n", 0644);
	dfx_read(&f);
	ck_assert_ptr_null(
		dfx_find(&f, "max_mmu_rmap_size", 1111, SAMPLE_ALL_VCPUS));
	ck_assert_uint_eq(dfx_value(&f, "exits", 1111, SAMPLE_ALL_VCPUS), 65);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

START_TEST(test_pid_mode_no_vm)
{
	char root[PATH_MAX];
	struct dfx f;

	fx_build(root, sizeof(root));
	ck_assert_int_eq(dfx_open(&f, root, NULL, 3333, false), -ESRCH);
	ck_assert_msg(strstr(f.p.msg.text, "3333"), "msg: %s", f.p.msg.text);
	dfx_free(&f);
	/* a prefix of a VM's pid is not that VM */
	ck_assert_int_eq(dfx_open(&f, root, NULL, 111, false), -ESRCH);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

START_TEST(test_want_vms)
{
	char root[PATH_MAX];
	struct dfx f;

	fx_build(root, sizeof(root));
	ck_assert_int_eq(dfx_open(&f, root, FILTER_DEFAULT, 0, true), 0);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_value(&f, "exits", 0, SAMPLE_ALL_VCPUS), 100);
	ck_assert_uint_eq(dfx_value(&f, "exits", 1111, SAMPLE_ALL_VCPUS), 60);
	ck_assert_uint_eq(dfx_value(&f, "exits", 2222, SAMPLE_ALL_VCPUS), 40);
	ck_assert_uint_eq(dfx_value(&f, "halt_exits", 1111, SAMPLE_ALL_VCPUS),
			  3);
	ck_assert_uint_eq(dfx_value(&f, "halt_exits", 2222, SAMPLE_ALL_VCPUS),
			  4);
	ck_assert_uint_eq(dfx_value(&f, "pages_4k", 2222, SAMPLE_ALL_VCPUS),
			  256);
	ck_assert_int_eq(dfx_find(&f, "exits", 2222, SAMPLE_ALL_VCPUS)->tid, 0);
	/* vCPUs: counters named like reported ones, with their threads */
	ck_assert_uint_eq(dfx_value(&f, "guest_mode", 2222, 0), 1);
	ck_assert_int_eq(dfx_find(&f, "guest_mode", 2222, 0)->tid, 2223);
	ck_assert_int_eq(dfx_find(&f, "guest_mode", 2222, 1)->tid, 2224);
	ck_assert_ptr_null(dfx_find(&f, "exits", 2222, 0));
	ck_assert_int_lt(field_table_find(&f.fields, "tsc-offset"), 0);
	ck_assert_int_lt(field_table_find(&f.fields, "pid"), 0);
	ck_assert_int_lt(field_table_find(&f.fields, "halt_wait_hist"), 0);
	/* 4 totals, 4 per VM, 2 vCPUs with guest_mode per VM */
	ck_assert_uint_eq(f.set.n, 4 + 2 * 4 + 2 * 2);
	for (size_t i = 0; i < f.set.n; i++)
		ck_assert_uint_eq(f.set.v[i].flags, 0);

	/* the filter applies to VM directories too */
	dfx_free(&f);
	ck_assert_int_eq(dfx_open(&f, root, "^exits$", 0, true), 0);
	dfx_read(&f);
	ck_assert_uint_eq(f.set.n, 3);
	ck_assert_uint_eq(dfx_value(&f, "exits", 1111, SAMPLE_ALL_VCPUS), 60);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

/*
 * halt_exits belongs to another provider (statsfd, declared first): this
 * one reports no total of it and reads it only in the VMs that provider
 * did not serve in this refresh, and nothing else of those VMs unless the
 * VMs are wanted.
 */
START_TEST(test_fill_in_claimed)
{
	char root[PATH_MAX];
	struct sample_set earlier;
	struct dfx f;
	int halt;

	fx_build(root, sizeof(root));
	dfx_init(&f, root, NULL, 0, false);
	halt = field_table_intern(&f.fields, "halt_exits", -1, FIELD_CUMULATIVE,
				  "statsfd");
	f.p.filter = &f.filter;
	ck_assert_int_eq(test_provider_open(&f.p, &f.o), 0);
	f.opened = true;
	ck_assert_str_eq(f.fields.v[halt].provider, "statsfd");

	/* statsfd, read before in this refresh, served VM 1111 */
	sample_set_init(&earlier, &f.fields);
	earlier.src = "statsfd";
	sample_set_push(&earlier, halt, 1111, SAMPLE_ALL_VCPUS, 0, 5, 0);
	arbiter_note(&f.arb, &earlier);
	sample_set_free(&earlier);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_value(&f, "exits", 0, SAMPLE_ALL_VCPUS), 100);
	ck_assert_ptr_null(dfx_find(&f, "halt_exits", 0, SAMPLE_ALL_VCPUS));
	ck_assert_ptr_null(dfx_find(&f, "halt_exits", 1111, SAMPLE_ALL_VCPUS));
	ck_assert_uint_eq(dfx_value(&f, "halt_exits", 2222, SAMPLE_ALL_VCPUS),
			  4);
	/* the owned names come from the totals: no per-VM reading */
	ck_assert_ptr_null(dfx_find(&f, "exits", 2222, SAMPLE_ALL_VCPUS));
	ck_assert_uint_eq(dfx_count_pid(&f, 2222), 1);
	ck_assert_uint_eq(dfx_count_pid(&f, 1111), 0);

	/* the owner lost VM 1111 (its stats fds closed): filled in now */
	arbiter_end(&f.arb);
	fx_put(root, "2222-11/halt_exits", "9\n", 0644);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_value(&f, "halt_exits", 1111, SAMPLE_ALL_VCPUS),
			  3);
	ck_assert_uint_eq(dfx_value(&f, "halt_exits", 2222, SAMPLE_ALL_VCPUS),
			  9);
	dfx_free(&f);

	/* every name it may read is claimed: it opens all the same, to fill
	 * in, where it would say "no counter matches" otherwise */
	dfx_init(&f, root, "^halt_exits$", 0, false);
	halt = field_table_intern(&f.fields, "halt_exits", -1, FIELD_CUMULATIVE,
				  "statsfd");
	ck_assert_int_eq(test_provider_open(&f.p, &f.o), 0);
	f.opened = true;
	dfx_read(&f);
	ck_assert_uint_eq(f.set.n, 2);
	ck_assert_uint_eq(dfx_value(&f, "halt_exits", 1111, SAMPLE_ALL_VCPUS),
			  3);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

/* A VM directory removed between two reads, with VM counters wanted. */
START_TEST(test_vm_removed)
{
	char root[PATH_MAX];
	struct dfx f;
	int fds;

	fx_build(root, sizeof(root));
	ck_assert_int_eq(dfx_open(&f, root, NULL, 0, true), 0);
	dfx_read(&f);
	ck_assert_int_gt(count_fds("/1111-10"), 0);
	ck_assert_uint_gt(dfx_count_pid(&f, 1111), 0);
	fds = count_fds(NULL);

	fx_rm(root, "1111-10");
	fx_put(root, "exits", "40\n", 0644); /* the kernel's sum drops */
	dfx_read(&f);
	ck_assert_uint_eq(dfx_count_pid(&f, 1111), 0);
	ck_assert_int_eq(count_fds("/1111-10"), 0);
	ck_assert_int_lt(count_fds(NULL), fds);
	ck_assert_uint_eq(dfx_value(&f, "exits", 2222, SAMPLE_ALL_VCPUS), 40);
	ck_assert_uint_eq(dfx_value(&f, "exits", 0, SAMPLE_ALL_VCPUS), 40);
	for (size_t i = 0; i < f.set.n; i++)
		if (!f.set.v[i].pid)
			ck_assert_uint_eq(f.set.v[i].flags, SAMPLE_REBASE);
	/* the kernel drops the totals just after the directory: one more */
	dfx_read(&f);
	ck_assert_uint_eq(dfx_find(&f, "exits", 0, SAMPLE_ALL_VCPUS)->flags,
			  SAMPLE_REBASE);
	dfx_read(&f);
	for (size_t i = 0; i < f.set.n; i++)
		ck_assert_uint_eq(f.set.v[i].flags, 0);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

/* The same in summary mode: VM directories are only listed. */
START_TEST(test_vm_removed_summary)
{
	char root[PATH_MAX];
	struct dfx f;
	int fds;

	fx_build(root, sizeof(root));
	ck_assert_int_eq(dfx_open(&f, root, NULL, 0, false), 0);
	ck_assert_int_eq(count_fds("/1111-10"), 0);
	dfx_read(&f);
	fds = count_fds(NULL);
	ck_assert_uint_eq(dfx_find(&f, "exits", 0, SAMPLE_ALL_VCPUS)->flags, 0);
	fx_rm(root, "2222-11");
	dfx_read(&f);
	ck_assert_uint_eq(f.set.n, 4);
	for (size_t i = 0; i < f.set.n; i++)
		ck_assert_uint_eq(f.set.v[i].flags, SAMPLE_REBASE);
	ck_assert_int_eq(count_fds(NULL), fds);
	dfx_read(&f);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_find(&f, "exits", 0, SAMPLE_ALL_VCPUS)->flags, 0);

	/* a new VM under a name that was used before is a new VM (made
	 * before the old one goes, so that it cannot reuse its inode) */
	{
		char from[PATH_MAX], to[PATH_MAX];

		fx_vm(root, "1111-99", 1, 1, 1);
		fx_rm(root, "1111-10");
		fx_path(from, sizeof(from), root, "1111-99");
		fx_path(to, sizeof(to), root, "1111-10");
		ck_assert_int_eq(rename(from, to), 0);
	}
	dfx_read(&f);
	ck_assert_uint_eq(dfx_find(&f, "exits", 0, SAMPLE_ALL_VCPUS)->flags,
			  SAMPLE_REBASE);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

START_TEST(test_vm_added)
{
	char root[PATH_MAX];
	struct dfx f;

	fx_build(root, sizeof(root));
	ck_assert_int_eq(dfx_open(&f, root, NULL, 0, true), 0);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_count_pid(&f, 3333), 0);

	fx_vm(root, "3333-12", 9, 2, 64);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_value(&f, "exits", 3333, SAMPLE_ALL_VCPUS), 9);
	ck_assert_int_eq(dfx_find(&f, "guest_mode", 3333, 1)->tid, 3335);
	ck_assert_uint_eq(dfx_value(&f, "exits", 1111, SAMPLE_ALL_VCPUS), 60);
	for (size_t i = 0; i < f.set.n; i++)
		ck_assert_uint_eq(f.set.v[i].flags, 0);

	/* a vCPU created later, whose thread has not run yet */
	fx_mkdir(root, "3333-12/vcpu2");
	fx_put(root, "3333-12/vcpu2/pid", "0\n", 0444);
	fx_put(root, "3333-12/vcpu2/guest_mode", "1\n", 0444);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_value(&f, "guest_mode", 3333, 2), 1);
	ck_assert_int_eq(dfx_find(&f, "guest_mode", 3333, 2)->tid, 0);
	fx_put(root, "3333-12/vcpu2/pid", "3336\n", 0444);
	dfx_read(&f);
	ck_assert_int_eq(dfx_find(&f, "guest_mode", 3333, 2)->tid, 3336);

	/* VM counters asked for only later */
	dfx_free(&f);
	ck_assert_int_eq(dfx_open(&f, root, NULL, 0, false), 0);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_count_pid(&f, 3333), 0);
	f.p.want_vms = true;
	dfx_read(&f);
	ck_assert_uint_eq(dfx_value(&f, "exits", 3333, SAMPLE_ALL_VCPUS), 9);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

START_TEST(test_missing_root)
{
	char root[PATH_MAX], path[PATH_MAX];
	struct dfx f;

	fx_build(root, sizeof(root));
	fx_path(path, sizeof(path), root, "nonexistent");
	dfx_init(&f, path, NULL, 0, false);
	ck_assert(!test_provider_probe(f.p.ops, &f.o));
	ck_assert(test_provider_probe(f.p.ops, &(struct options){
						       .debugfs_root = root }));
	fx_path(path, sizeof(path), root, "exits");
	ck_assert(!test_provider_probe(f.p.ops, &(struct options){
							.debugfs_root = path }));
	dfx_free(&f);

	fx_path(path, sizeof(path), root, "nonexistent");
	ck_assert_int_eq(dfx_open(&f, path, NULL, 0, false), -ENOENT);
	ck_assert_msg(strstr(f.p.msg.text,
			     "mount debugfs: mount -t debugfs none"),
		      "msg: %s", f.p.msg.text);
	ck_assert_ptr_null(f.p.priv);
	dfx_free(&f);

	fx_path(path, sizeof(path), root, "exits");
	ck_assert_int_eq(dfx_open(&f, path, NULL, 0, false), -ENOTDIR);
	ck_assert_ptr_nonnull(strstr(f.p.msg.text, path));
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

/* On a real debugfs without a kvm directory, the hint is the module. */
START_TEST(test_missing_kvm_dir)
{
	const char *path = "/sys/kernel/debug/kvmstat-no-such-dir";
	struct dfx f;

	struct statfs sf;

	if (statfs("/sys/kernel/debug", &sf) || sf.f_type != DEBUGFS_MAGIC) {
		test_skip("test_missing_kvm_dir",
			  "no debugfs at /sys/kernel/debug (mount -t debugfs none /sys/kernel/debug)");
		return;
	}
	if (access("/sys/kernel/debug", X_OK)) {
		test_skip("test_missing_kvm_dir",
			  "cannot search /sys/kernel/debug: not root");
		return;
	}
	ck_assert_int_eq(dfx_open(&f, path, NULL, 0, false), -ENOENT);
	ck_assert_msg(strstr(f.p.msg.text, "is the kvm module loaded?"),
		      "msg: %s", f.p.msg.text);
	dfx_free(&f);
}
END_TEST

START_TEST(test_empty_root)
{
	char root[PATH_MAX];
	struct dfx f;

	fx_tmpdir(root, sizeof(root));
	ck_assert(
		test_provider_probe(&debugfs_provider_ops,
				    &(struct options){ .debugfs_root = root }));
	ck_assert_int_eq(dfx_open(&f, root, NULL, 0, false), -ENOENT);
	ck_assert_msg(strstr(f.p.msg.text, "no KVM counters"), "msg: %s",
		      f.p.msg.text);
	dfx_free(&f);

	/* only things that are not counters */
	fx_put(root, "version", "kvm\n", 0644);
	fx_vm(root, "1111-10", 1, 1, 1);
	ck_assert_int_eq(dfx_open(&f, root, NULL, 0, true), -ENOENT);
	ck_assert_msg(strstr(f.p.msg.text, "no KVM counters"), "msg: %s",
		      f.p.msg.text);
	dfx_free(&f);

	/* a filter that keeps nothing */
	fx_put(root, "exits", "1\n", 0644);
	ck_assert_int_eq(dfx_open(&f, root, "^nothing$", 0, false), -ENOENT);
	ck_assert_msg(strstr(f.p.msg.text, "field filter"), "msg: %s",
		      f.p.msg.text);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

START_TEST(test_emfile)
{
	char root[PATH_MAX];
	struct rlimit rl;
	struct dfx f;
	int lim;

	fx_build(root, sizeof(root));
	/* room for the root directory and one counter file */
	for (lim = 3;; lim++) {
		int used = 0;

		for (int fd = 0; fd < lim; fd++)
			used += fcntl(fd, F_GETFD) >= 0;
		if (lim - used == 2)
			break;
	}
	dfx_init(&f, root, NULL, 0, false);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = (rlim_t)lim;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	ck_assert_int_eq(test_provider_open(&f.p, &f.o), -EMFILE);
	ck_assert_msg(strstr(f.p.msg.text, "ulimit"), "msg: %s", f.p.msg.text);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	dfx_free(&f);
	fx_rm(root, NULL);
}
END_TEST

#define REAL_ROOT "/sys/kernel/debug/kvm"

/* Opens f on this host's KVM debugfs, every VM; if it cannot be read, or
 * lockdown hides every counter, skips test. */
static bool real_debugfs_open(const char *test, struct dfx *f)
{
	int rc;

	if (access(REAL_ROOT, R_OK | X_OK)) {
		test_skip(test,
			  "%s: %s (mount -t debugfs none /sys/kernel/debug, modprobe kvm, run as root)",
			  REAL_ROOT, strerror(errno));
		return false;
	}
	rc = dfx_open(f, REAL_ROOT, FILTER_DEFAULT, 0, true);
	if (rc == -EPERM || rc == -EACCES) {
		/* lockdown hides every counter: nothing to check here */
		struct errmsg why = f->p.msg;

		dfx_free(f);
		test_skip(test, "%s", why.text);
		return false;
	}
	ck_assert_msg(rc == 0, "open: %s", f->p.msg.text);
	return true;
}

/*
 * This host's /sys/kernel/debug/kvm (the kvm module, no VM of ours):
 * which counters are readable, the notice, values re-read on a second
 * refresh (KVM's files cannot be pread, so the provider reopens them).
 */
START_TEST(test_real_debugfs)
{
	char line[4096] = "";
	struct dfx f;
	size_t n0 = 0;

	if (!real_debugfs_open("test_real_debugfs", &f))
		return;
	for (size_t i = 0; i < f.fields.n; i++) {
		strncat(line, " ", sizeof(line) - strlen(line) - 1);
		strncat(line, f.fields.v[i].name,
			sizeof(line) - strlen(line) - 1);
	}
	printf("real debugfs: %zu readable counters:%s\n", f.fields.n, line);
	printf("real debugfs: notice: %s\n",
	       f.p.notice ? f.p.msg.text : "(none)");
	/* root is refused only by lockdown (EPERM): never said to lack
	 * permissions */
	if (f.p.notice && !geteuid())
		ck_assert_msg(!strstr(f.p.msg.text, "permission denied"),
			      "notice: %s", f.p.msg.text);
	dfx_read(&f);
	for (size_t i = 0; i < f.set.n; i++)
		n0 += !f.set.v[i].pid;
	ck_assert_uint_eq(n0, f.fields.n);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_count_pid(&f, 0), f.fields.n);
	dfx_free(&f);
}
END_TEST

/*
 * A VM made here through /dev/kvm, in this host's KVM debugfs: its
 * directory, its vCPUs, -p, and its going.
 */
START_TEST(test_real_debugfs_vm)
{
	struct dfx f;
	int kvm, vm, vcpu[2] = { -1, -1 };
	pid_t me = getpid();

	if (!real_debugfs_open("test_real_debugfs_vm", &f))
		return;
	dfx_read(&f);
	ck_assert_uint_eq(dfx_count_pid(&f, me), 0);

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		int err = errno;

		dfx_free(&f);
		test_skip("test_real_debugfs_vm", "/dev/kvm: %s", strerror(err));
		return;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	ck_assert_int_ge(vm, 0);
	for (int i = 0; i < 2; i++)
		vcpu[i] = ioctl(vm, KVM_CREATE_VCPU, i);
	dfx_read(&f);
	ck_assert_uint_gt(dfx_count_pid(&f, me), 0);
	if (field_table_find(&f.fields, "pages_4k") >= 0)
		ck_assert_ptr_nonnull(
			dfx_find(&f, "pages_4k", me, SAMPLE_ALL_VCPUS));
	if (field_table_find(&f.fields, "guest_mode") >= 0 && vcpu[1] >= 0) {
		ck_assert_ptr_nonnull(dfx_find(&f, "guest_mode", me, 1));
		/* the vCPU never ran: no thread yet */
		ck_assert_int_eq(dfx_find(&f, "guest_mode", me, 1)->tid, 0);
	}
	printf("real debugfs: VM %d: %zu samples of its own\n", (int)me,
	       dfx_count_pid(&f, me));

	{
		struct dfx g;

		ck_assert_msg(dfx_open(&g, REAL_ROOT, FILTER_DEFAULT, me,
				       true) == 0,
			      "open -p: %s", g.p.msg.text);
		dfx_read(&g);
		ck_assert_uint_gt(dfx_count_pid(&g, 0), 0);
		/* the VM's values stand for the whole selection */
		for (size_t i = 0; i < g.set.n; i++)
			if (!g.set.v[i].pid)
				ck_assert_uint_eq(
					g.set.v[i].value,
					dfx_value(&g,
						  g.fields.v[g.set.v[i].field]
							  .name,
						  me, SAMPLE_ALL_VCPUS));
		dfx_free(&g);
	}

	for (int i = 0; i < 2; i++)
		if (vcpu[i] >= 0)
			close(vcpu[i]);
	close(vm);
	close(kvm);
	dfx_read(&f);
	ck_assert_uint_eq(dfx_count_pid(&f, me), 0);
	for (size_t i = 0; i < f.set.n; i++)
		if (!f.set.v[i].pid)
			ck_assert_uint_eq(f.set.v[i].flags, SAMPLE_REBASE);
	dfx_free(&f);
}
END_TEST

Suite *debugfs_suite(void)
{
	Suite *s = suite_create("debugfs");
	TCase *tc = tcase_create("fixture");

	tcase_add_unchecked_fixture(tc, fx_setup, fx_teardown);

	tcase_add_test(tc, test_fields_and_values);
	tcase_add_test(tc, test_units_by_name);
	tcase_add_test(tc, test_filter_limits_fds);
	tcase_add_test(tc, test_reread_after_rewrite);
	tcase_add_test(tc, test_non_counters_skipped);
	tcase_add_test(tc, test_hidden_errno);
	tcase_add_test(tc, test_lockdown_notice);
	tcase_add_test(tc, test_pid_mode);
	tcase_add_test(tc, test_pid_mode_peak);
	tcase_add_test(tc, test_pid_mode_no_vm);
	tcase_add_test(tc, test_want_vms);
	tcase_add_test(tc, test_fill_in_claimed);
	tcase_add_test(tc, test_vm_removed);
	tcase_add_test(tc, test_vm_removed_summary);
	tcase_add_test(tc, test_vm_added);
	tcase_add_test(tc, test_missing_root);
	tcase_add_test(tc, test_empty_root);
	tcase_add_test(tc, test_emfile);
	suite_add_tcase(s, tc);
	tc = tcase_create("host");
	tcase_add_test(tc, test_missing_kvm_dir);
	tcase_add_test(tc, test_real_debugfs);
	suite_add_tcase(s, tc);
	tc = test_kvm_tcase("host_vm");
	tcase_add_test(tc, test_real_debugfs_vm);
	suite_add_tcase(s, tc);
	return s;
}
