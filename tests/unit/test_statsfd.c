// SPDX-License-Identifier: GPL-2.0-only
/*
 * The binary stats parser on blobs each test builds in a memfd: valid ones
 * with every type, unit, base and histogram shape, descriptors the parser
 * must skip, and malformed ones that must be refused with a reason (never
 * a crash or a read out of bounds: CI runs this under ASan). On a fake
 * proc root and debugfs directory: a VM that KVM names before its VMM's
 * fd table holds it, as a real kernel does. Then, against the project's
 * test guest holding real stats fds (-s): the invariants the kernel's own
 * selftest checks, and the provider end to end (exact counts,
 * units, histograms, -i, a VM exiting). Those say SKIP with the reason
 * without root or /dev/kvm, and fail then with KVMSTAT_REQUIRE_KVM=1.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/kvm.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errmsg.h"
#include "filter.h"
#include "options.h"
#include "provider.h"
#include "stats.h"
#include "statsfd_format.h"
#include "suites.h"
#include "testlib.h"
#include "util.h"

#define GUEST "tests/guest/kvmguest"
#define NAME_SIZE 48
#define DESC_LEN (16 + NAME_SIZE)
#define HDR_LEN 24

#define T_CUM KVM_STATS_TYPE_CUMULATIVE
#define T_INST KVM_STATS_TYPE_INSTANT
#define T_PEAK KVM_STATS_TYPE_PEAK
#define T_LIN KVM_STATS_TYPE_LINEAR_HIST
#define T_LOG KVM_STATS_TYPE_LOG_HIST
#define U_NONE KVM_STATS_UNIT_NONE
#define U_BYTES KVM_STATS_UNIT_BYTES
#define U_SECS KVM_STATS_UNIT_SECONDS
#define U_CYCLES KVM_STATS_UNIT_CYCLES
#define U_BOOL (0x4 << KVM_STATS_UNIT_SHIFT)
#define B_POW2 KVM_STATS_BASE_POW2

/* A descriptor as a test writes it. */
struct tdesc {
	const char *name;
	uint32_t flags;
	int16_t exponent;
	uint16_t size;
	uint32_t offset;
	uint32_t bucket_size;
};

/* A blob in memory: header | id | descriptors | data, as the kernel lays
 * a stats file out; tests then break what they test. */
struct blob {
	unsigned char *b;
	size_t len;
};

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Header field i (0 flags, 1 name_size, 2 num_desc, 3 id_offset,
 * 4 desc_offset, 5 data_offset). */
static void hdr_set(struct blob *bl, int i, uint32_t v)
{
	put32(bl->b + 4 * i, v);
}

static uint32_t hdr_get(const struct blob *bl, int i)
{
	uint32_t v;

	memcpy(&v, bl->b + 4 * i, sizeof(v));
	return v;
}

/* Builds the blob of n descriptors and ndata data words (value k is
 * 1000 + k unless data is given). */
static struct blob blob_make(const struct tdesc *d, size_t n,
			     const uint64_t *data, size_t ndata)
{
	size_t desc_off = HDR_LEN + NAME_SIZE;
	size_t data_off = desc_off + n * DESC_LEN;
	struct blob bl;

	bl.len = data_off + ndata * 8;
	bl.b = calloc(1, bl.len);
	ck_assert_ptr_nonnull(bl.b);
	hdr_set(&bl, 0, 0);
	hdr_set(&bl, 1, NAME_SIZE);
	hdr_set(&bl, 2, (uint32_t)n);
	hdr_set(&bl, 3, HDR_LEN);
	hdr_set(&bl, 4, (uint32_t)desc_off);
	hdr_set(&bl, 5, (uint32_t)data_off);
	strcpy((char *)bl.b + HDR_LEN, "kvm-1234/vcpu-0");
	for (size_t i = 0; i < n; i++) {
		unsigned char *p = bl.b + desc_off + i * DESC_LEN;

		put32(p, d[i].flags);
		memcpy(p + 4, &d[i].exponent, 2);
		memcpy(p + 6, &d[i].size, 2);
		put32(p + 8, d[i].offset);
		put32(p + 12, d[i].bucket_size);
		strncpy((char *)p + 16, d[i].name, NAME_SIZE);
	}
	for (size_t k = 0; k < ndata; k++) {
		uint64_t v = data ? data[k] : 1000 + k;

		memcpy(bl.b + data_off + k * 8, &v, 8);
	}
	return bl;
}

/* The blob in a memfd, as a stats fd stand-in. */
static int blob_fd(const struct blob *bl)
{
	int fd = memfd_create("statsfd-test", MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	if (bl->len)
		ck_assert_int_eq(write(fd, bl->b, bl->len), (ssize_t)bl->len);
	return fd;
}

/* Parses the blob; the result code, the reason in err. */
static int blob_parse(const struct blob *bl, struct statsfd_schema **s,
		      struct errmsg *err)
{
	int fd = blob_fd(bl), rc;

	rc = statsfd_schema_read(fd, s, err);
	close(fd);
	return rc;
}

/* Must be refused as malformed, with a reason naming want. */
static void expect_bad(struct blob *bl, const char *want)
{
	struct statsfd_schema *s = (void *)1;
	struct errmsg err = { "" };
	int rc = blob_parse(bl, &s, &err);

	ck_assert_msg(rc == -EINVAL, "want -EINVAL (%s), got %d: %s", want, rc,
		      err.text);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(err.text, want), "reason \"%s\" lacks \"%s\"",
		      err.text, want);
	free(bl->b);
}

/* Every type, unit and base, with data out of descriptor order. */
static const struct tdesc all_kinds[] = {
	{ "exits", T_CUM | U_NONE, 0, 1, 8, 0 },
	{ "pages", T_INST | U_NONE, 0, 1, 0, 0 },
	{ "max_rmap", T_PEAK | U_NONE, 0, 1, 16, 0 },
	{ "wait_ns", T_CUM | U_SECS, -9, 1, 24, 0 },
	{ "mem", T_INST | U_BYTES | B_POW2, 12, 1, 32, 0 },
	{ "tsc", T_CUM | U_CYCLES, 0, 1, 40, 0 },
	{ "blocking", T_INST | U_BOOL, 0, 1, 48, 0 },
	{ "lin_hist", T_LIN | U_SECS, -6, 4, 56, 10 },
	{ "log_hist", T_LOG | U_SECS, -9, 8, 88, 0 },
};

#define ALL_KINDS_WORDS 19

START_TEST(test_valid_all_kinds)
{
	struct blob bl = blob_make(all_kinds, 9, NULL, ALL_KINDS_WORDS);
	struct statsfd_schema *s;
	unsigned char data[ALL_KINDS_WORDS * 8];
	struct errmsg err;
	int fd = blob_fd(&bl);

	ck_assert_int_eq(statsfd_schema_read(fd, &s, &err), 0);
	ck_assert_str_eq(s->id, "kvm-1234/vcpu-0");
	ck_assert_uint_eq(s->num_desc, 9);
	ck_assert_uint_eq(s->nuse, 9);
	ck_assert_uint_eq(s->data_len, ALL_KINDS_WORDS * 8);
	ck_assert_str_eq(s->desc[0].name, "exits");
	ck_assert_int_eq(s->desc[0].type, FIELD_CUMULATIVE);
	ck_assert_int_eq(s->desc[1].type, FIELD_INSTANT);
	ck_assert_int_eq(s->desc[2].type, FIELD_PEAK);
	ck_assert_int_eq(s->desc[3].unit, UNIT_SECONDS);
	ck_assert_int_eq(s->desc[3].exponent, -9);
	ck_assert_uint_eq(s->desc[3].base, 10);
	ck_assert_int_eq(s->desc[4].unit, UNIT_BYTES);
	ck_assert_uint_eq(s->desc[4].base, 2);
	ck_assert_int_eq(s->desc[4].exponent, 12);
	ck_assert_int_eq(s->desc[5].unit, UNIT_CYCLES);
	ck_assert_int_eq(s->desc[6].unit, UNIT_BOOLEAN);
	ck_assert_int_eq(s->desc[7].hist, HIST_LINEAR);
	ck_assert_int_eq(s->desc[7].type, FIELD_CUMULATIVE);
	ck_assert_uint_eq(s->desc[7].bucket_size, 10);
	ck_assert_int_eq(s->desc[8].hist, HIST_LOG2);
	ck_assert_uint_eq(s->desc[8].size, 8);
	for (int i = 0; i < 9; i++)
		ck_assert_int_eq(s->desc[i].skip, STATSFD_USE);

	/* values come from data_offset + offset, not descriptor order */
	ck_assert_int_eq(statsfd_data_read(fd, s, data), 0);
	ck_assert_uint_eq(statsfd_value(data, &s->desc[0], 0), 1001);
	ck_assert_uint_eq(statsfd_value(data, &s->desc[1], 0), 1000);
	ck_assert_uint_eq(statsfd_value(data, &s->desc[2], 0), 1002);
	ck_assert_uint_eq(statsfd_value(data, &s->desc[7], 3), 1010);
	ck_assert_uint_eq(statsfd_value(data, &s->desc[8], 0), 1011);
	ck_assert_uint_eq(statsfd_value(data, &s->desc[8], 7), 1018);

	/* a refresh sees new values through pread alone */
	{
		uint64_t v = 77;

		ck_assert_int_eq(pwrite(fd, &v, 8, hdr_get(&bl, 5) + 8), 8);
		ck_assert_int_eq(statsfd_data_read(fd, s, data), 0);
		ck_assert_uint_eq(statsfd_value(data, &s->desc[0], 0), 77);
	}
	statsfd_schema_free(s);
	close(fd);
	free(bl.b);
}
END_TEST

/* The file position is the owner's: parsing and reading never move it. */
START_TEST(test_pread_only)
{
	struct blob bl = blob_make(all_kinds, 9, NULL, ALL_KINDS_WORDS);
	unsigned char data[ALL_KINDS_WORDS * 8];
	struct statsfd_schema *s;
	struct errmsg err;
	int fd = blob_fd(&bl);

	ck_assert_int_eq(lseek(fd, 5, SEEK_SET), 5);
	ck_assert_int_eq(statsfd_schema_read(fd, &s, &err), 0);
	ck_assert_int_eq(statsfd_data_read(fd, s, data), 0);
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 5);
	statsfd_schema_free(s);
	close(fd);
	free(bl.b);
}
END_TEST

/* A part of the data block: the same bytes as in the whole block, from
 * one pread; an empty part reads nothing; a part past the file's end is
 * -EIO. */
START_TEST(test_data_read_range)
{
	struct blob bl = blob_make(all_kinds, 9, NULL, ALL_KINDS_WORDS);
	unsigned char data[ALL_KINDS_WORDS * 8], part[ALL_KINDS_WORDS * 8];
	const struct statsfd_desc *h;
	struct statsfd_schema *s;
	struct errmsg err;
	uint32_t lo, hi;
	int fd = blob_fd(&bl);

	ck_assert_int_eq(statsfd_schema_read(fd, &s, &err), 0);
	ck_assert_int_eq(statsfd_data_read(fd, s, data), 0);
	h = &s->desc[8]; /* the log2 histogram, 8 items */
	lo = h->offset;
	hi = h->offset + h->size * 8;
	ck_assert_uint_gt(lo, 0);
	memset(part, 0xee, sizeof(part));
	ck_assert_int_eq(statsfd_data_read_range(fd, s, lo, hi, part), 0);
	ck_assert_mem_eq(part, data + lo, hi - lo);
	ck_assert_uint_eq(part[hi - lo], 0xee); /* no more than asked */
	/* one stat alone */
	lo = s->desc[0].offset;
	ck_assert_int_eq(statsfd_data_read_range(fd, s, lo, lo + 8, part), 0);
	ck_assert_mem_eq(part, data + lo, 8);
	/* nothing asked: no read at all (not even of a bad fd) */
	ck_assert_int_eq(statsfd_data_read_range(-1, s, 8, 8, part), 0);
	/* the last item cut off after the schema was read */
	ck_assert_int_eq(ftruncate(fd, (off_t)bl.len - 1), 0);
	ck_assert_int_eq(statsfd_data_read_range(fd, s, s->data_len - 8,
						 s->data_len, part),
			 -EIO);
	ck_assert_int_eq(statsfd_data_read_range(fd, s, 0, 8, part), 0);
	statsfd_schema_free(s);
	close(fd);
	free(bl.b);
}
END_TEST

/* Unknown types, units and bases, odd shapes and names are skipped, and
 * the rest of the file still parses. */
START_TEST(test_skips)
{
	static const struct tdesc d[] = {
		{ "good", T_CUM, 0, 1, 0, 0 },
		{ "new_type", 0x5, 0, 1, 8, 0 },
		{ "new_unit", T_CUM | (0x5 << KVM_STATS_UNIT_SHIFT), 0, 1, 16,
		  0 },
		{ "new_base", T_CUM | (0x2 << KVM_STATS_BASE_SHIFT), 0, 1, 24,
		  0 },
		{ "huge_exp", T_CUM | U_SECS, -100, 1, 32, 0 },
		{ "array", T_CUM, 0, 2, 40, 0 },
		{ "lin_no_size", T_LIN, 0, 2, 56, 0 },
		{ "log_too_long", T_LOG, 0, 66, 72, 0 },
		{ "bad(name)", T_CUM, 0, 1, 600, 0 },
		{ "good", T_INST, 0, 1, 608, 0 },
		/* skipped ones may point anywhere: they are never read */
		{ "new_type2", 0xf, 0, 9, 0xfffffff0u, 0 },
	};
	static const enum statsfd_skip want[] = {
		STATSFD_USE,	    STATSFD_SKIP_TYPE,	STATSFD_SKIP_UNIT,
		STATSFD_SKIP_BASE,  STATSFD_SKIP_SCALE, STATSFD_SKIP_SHAPE,
		STATSFD_SKIP_SHAPE, STATSFD_SKIP_SHAPE, STATSFD_SKIP_NAME,
		STATSFD_SKIP_DUP,   STATSFD_SKIP_TYPE,
	};
	struct blob bl = blob_make(d, 11, NULL, 77);
	struct statsfd_schema *s;
	struct errmsg err;

	ck_assert_int_eq(blob_parse(&bl, &s, &err), 0);
	for (int i = 0; i < 11; i++)
		ck_assert_msg(s->desc[i].skip == want[i], "%s: %s",
			      s->desc[i].name,
			      statsfd_skip_name(s->desc[i].skip));
	ck_assert_uint_eq(s->nuse, 1);
	ck_assert_uint_eq(s->data_len, 8);
	ck_assert_str_eq(statsfd_skip_name(STATSFD_SKIP_DUP), "duplicate name");
	statsfd_schema_free(s);
	free(bl.b);
}
END_TEST

/* An empty stats file (no descriptors) is valid and has no data. */
START_TEST(test_no_descriptors)
{
	struct blob bl = blob_make(NULL, 0, NULL, 0);
	struct statsfd_schema *s;
	struct errmsg err;

	ck_assert_int_eq(blob_parse(&bl, &s, &err), 0);
	ck_assert_uint_eq(s->nuse, 0);
	ck_assert_uint_eq(s->data_len, 0);
	statsfd_schema_free(s);
	free(bl.b);
}
END_TEST

static const struct tdesc two[] = {
	{ "a", T_CUM, 0, 1, 0, 0 },
	{ "b", T_LOG | U_SECS, -9, 4, 8, 0 },
};

START_TEST(test_bad_short_header)
{
	struct blob bl = blob_make(two, 2, NULL, 5);

	bl.len = 10;
	expect_bad(&bl, "shorter than the stats header");
	bl = blob_make(two, 2, NULL, 5);
	bl.len = 0;
	expect_bad(&bl, "shorter than the stats header");
}
END_TEST

START_TEST(test_bad_name_size)
{
	struct blob bl = blob_make(two, 2, NULL, 5);

	hdr_set(&bl, 1, 0);
	expect_bad(&bl, "name_size 0");
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 1, 0xffffffffu);
	expect_bad(&bl, "name_size 4294967295");
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 1, STATSFD_NAME_SIZE_MAX + 1);
	expect_bad(&bl, "name_size");
}
END_TEST

START_TEST(test_bad_num_desc)
{
	struct blob bl = blob_make(two, 2, NULL, 5);

	hdr_set(&bl, 2, 0xffffffffu);
	expect_bad(&bl, "num_desc 4294967295");
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 2, STATSFD_NUM_DESC_MAX);
	expect_bad(&bl, "descriptor block"); /* past the end */
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 2, 3); /* one more than there is */
	expect_bad(&bl, "descriptor block [72, 264) past the end");
	bl = blob_make(two, 2, NULL, 16);
	hdr_set(&bl, 2, 3); /* the data read as one */
	expect_bad(&bl, "descriptor 2 (?\?): size 0");
}
END_TEST

START_TEST(test_bad_offsets)
{
	struct blob bl;

	/* id past the end, and near 2^32 (no wrap-around) */
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 3, 100000);
	expect_bad(&bl, "id [100000, 100048) past the end");
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 3, 0xfffffff0u);
	expect_bad(&bl, "past the end");
	/* blocks on top of each other */
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 3, 8);
	expect_bad(&bl, "id [8, 56) overlaps the header");
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 4, HDR_LEN + 8);
	expect_bad(&bl, "descriptor block [32, 160) overlaps the id");
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 4, 0);
	expect_bad(&bl, "overlaps the header");
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 5, hdr_get(&bl, 4) + 8);
	expect_bad(&bl, "data block");
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 5, 0);
	expect_bad(&bl, "data block [0, 40) overlaps the header");
	/* descriptor block past the end */
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 4, 0xffffff00u);
	expect_bad(&bl, "descriptor block");
	/* data offset past the end */
	bl = blob_make(two, 2, NULL, 5);
	hdr_set(&bl, 5, 0xfffffff8u);
	expect_bad(&bl, "past the end");
}
END_TEST

START_TEST(test_bad_names)
{
	struct blob bl = blob_make(two, 2, NULL, 5);
	unsigned char *name1 = bl.b + hdr_get(&bl, 4) + DESC_LEN + 16;

	memset(name1, 'x', NAME_SIZE); /* no NUL */
	expect_bad(&bl, "descriptor 1: name not NUL-terminated");
	bl = blob_make(two, 2, NULL, 5);
	bl.b[hdr_get(&bl, 4) + 16] = '\0'; /* empty */
	expect_bad(&bl, "descriptor 0: empty name");
	bl = blob_make(two, 2, NULL, 5);
	memset(bl.b + HDR_LEN, 'k', NAME_SIZE);
	expect_bad(&bl, "id not NUL-terminated");
}
END_TEST

START_TEST(test_bad_sizes)
{
	static const struct tdesc zero[] = {
		{ "a", T_CUM, 0, 0, 0, 0 },
	};
	static const struct tdesc past[] = {
		{ "a", T_CUM, 0, 1, 0, 0 },
		{ "far", T_CUM, 0, 1, 4096, 0 },
	};
	static const struct tdesc beyond[] = {
		{ "far", T_CUM, 0, 1, 0xfffffff8u, 0 },
	};
	static const struct tdesc overlap[] = {
		{ "hist", T_LOG, 0, 4, 0, 0 },
		{ "inside", T_CUM, 0, 1, 16, 0 },
	};
	static const struct tdesc big_hist[] = {
		{ "hist", T_LIN, 0, 0xffff, 0, 1 },
	};
	struct blob bl;

	bl = blob_make(zero, 1, NULL, 1);
	expect_bad(&bl, "descriptor 0 (a): size 0");
	bl = blob_make(past, 2, NULL, 2);
	expect_bad(&bl, "data block [200, 4304) past the end");
	bl = blob_make(beyond, 1, NULL, 1);
	expect_bad(&bl, "stat far: data");
	bl = blob_make(overlap, 2, NULL, 5);
	expect_bad(&bl, "stats hist and inside overlap");
	bl = blob_make(big_hist, 1, NULL, 4);
	expect_bad(&bl, "past the end");
}
END_TEST

/* Truncated at every length: an error or (at full length) a schema, never
 * a read past the buffer. */
START_TEST(test_every_truncation)
{
	struct blob full = blob_make(all_kinds, 9, NULL, ALL_KINDS_WORDS);

	for (size_t len = 0; len <= full.len; len++) {
		struct blob bl = { full.b, len };
		struct statsfd_schema *s;
		struct errmsg err;
		int rc = blob_parse(&bl, &s, &err);

		if (len == full.len) {
			ck_assert_int_eq(rc, 0);
			statsfd_schema_free(s);
		} else {
			ck_assert_msg(rc == -EINVAL, "len %zu: %d", len, rc);
		}
	}
	free(full.b);
}
END_TEST

/* Data that shrinks after the schema was read: -EIO, not stale bytes. */
START_TEST(test_data_short_read)
{
	struct blob bl = blob_make(two, 2, NULL, 5);
	struct statsfd_schema *s;
	unsigned char data[40];
	struct errmsg err;
	int fd = blob_fd(&bl);

	ck_assert_int_eq(statsfd_schema_read(fd, &s, &err), 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)bl.len - 1), 0);
	ck_assert_int_eq(statsfd_data_read(fd, s, data), -EIO);
	statsfd_schema_free(s);
	close(fd);
	free(bl.b);
}
END_TEST

/* pread on something that cannot seek is an error, not a parse. */
START_TEST(test_not_seekable)
{
	struct statsfd_schema *s;
	struct errmsg err;
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(statsfd_schema_read(p[0], &s, &err), -ESPIPE);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* Files with one layout share a schema; the id does not count. */
START_TEST(test_schema_equal)
{
	struct blob a = blob_make(two, 2, NULL, 5);
	struct blob b = blob_make(two, 2, NULL, 5);
	struct blob c = blob_make(all_kinds, 9, NULL, ALL_KINDS_WORDS);
	struct statsfd_schema *sa, *sb, *sc;
	struct errmsg err;

	strcpy((char *)b.b + HDR_LEN, "kvm-1234/vcpu-1");
	ck_assert_int_eq(blob_parse(&a, &sa, &err), 0);
	ck_assert_int_eq(blob_parse(&b, &sb, &err), 0);
	ck_assert_int_eq(blob_parse(&c, &sc, &err), 0);
	ck_assert(statsfd_schema_equal(sa, sb));
	ck_assert(!statsfd_schema_equal(sa, sc));
	statsfd_schema_free(sa);
	statsfd_schema_free(sb);
	statsfd_schema_free(sc);
	free(a.b);
	free(b.b);
	free(c.b);
}
END_TEST

/* ---- against the test guest ---- */

/* Whether the host can run test; if not, skips it (test_skip()). */
static bool host_can_run(const char *test)
{
	const char *why = NULL;
	int fd, ok = 0;

	if (geteuid())
		why = "not root (pidfd_getfd needs CAP_SYS_PTRACE)";
	else if ((fd = open("/dev/kvm", O_RDWR | O_CLOEXEC)) < 0)
		why = "no /dev/kvm";
	else {
		ok = ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD);
		close(fd);
		if (ok <= 0)
			why = "kernel lacks KVM_CAP_BINARY_STATS_FD";
		else if (access(GUEST, X_OK))
			why = "test guest " GUEST " not built";
	}
	if (!why)
		return true;
	test_skip(test, "%s", why);
	return false;
}

/* A running test guest: launcher, its VM and the stream of its lines. */
struct guest {
	pid_t launcher, vm;
	FILE *out;
	int nvcpus;
	pid_t tid[8]; /* by vCPU index, from "vcpu" lines */
};

/* Starts kvmguest -s -w with extra args; returns after "ready". The
 * launcher dies with this test process. */
static void guest_start(struct guest *g, const char *const *args)
{
	const char *argv[24] = { GUEST, "-s", "-w" };
	char line[256];
	int p[2], argc = 3;

	memset(g, 0, sizeof(*g));
	for (; *args; args++)
		argv[argc++] = *args;
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	g->launcher = fork();
	ck_assert_int_ge(g->launcher, 0);
	if (!g->launcher) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], STDOUT_FILENO);
		execv(GUEST, (char **)argv);
		_exit(127);
	}
	close(p[1]);
	g->out = fdopen(p[0], "r");
	ck_assert_ptr_nonnull(g->out);
	while (fgets(line, sizeof(line), g->out)) {
		int pid, idx, tid;

		if (sscanf(line, "vm %d", &pid) == 1)
			g->vm = pid;
		else if (sscanf(line, "vcpu %d %d %d", &pid, &idx, &tid) == 3 &&
			 idx >= 0 && idx < 8) {
			g->tid[idx] = tid;
			g->nvcpus++;
		} else if (!strcmp(line, "ready\n")) {
			break;
		}
	}
	ck_assert_msg(g->vm > 0, "the test guest did not start");
}

/* Lets the vCPUs run and waits for their "done" lines. */
static void guest_go(struct guest *g)
{
	char line[256];
	int done = 0;

	ck_assert_int_eq(kill(g->launcher, SIGUSR1), 0);
	while (done < g->nvcpus && fgets(line, sizeof(line), g->out))
		done += !strncmp(line, "done ", 5);
	ck_assert_int_eq(done, g->nvcpus);
}

static void guest_stop(struct guest *g)
{
	int status;

	kill(g->launcher, SIGTERM);
	waitpid(g->launcher, &status, 0);
	fclose(g->out);
}

/* The kernel selftest's invariants for one stats fd. */
static void check_invariants(int fd, bool vcpu)
{
	struct statsfd_schema *s;
	unsigned char *data;
	struct errmsg err;

	ck_assert_msg(statsfd_schema_read(fd, &s, &err) == 0, "parse: %s",
		      err.text);
	ck_assert_msg(!strncmp(s->id, "kvm", 3), "id \"%s\"", s->id);
	ck_assert(vcpu == (strstr(s->id, "/vcpu-") != NULL));
	ck_assert_uint_eq(s->flags, 0);
	ck_assert_uint_gt(s->num_desc, 0);
	for (uint32_t i = 0; i < s->num_desc; i++) {
		const struct statsfd_desc *d = &s->desc[i];
		uint32_t type = d->flags & KVM_STATS_TYPE_MASK;
		uint32_t unit = d->flags & KVM_STATS_UNIT_MASK;
		uint32_t base = d->flags & KVM_STATS_BASE_MASK;

		ck_assert_msg(type <= KVM_STATS_TYPE_MAX, "%s: type", d->name);
		ck_assert_msg(unit <= U_BOOL, "%s: unit", d->name);
		ck_assert_msg(base <= KVM_STATS_BASE_MAX, "%s: base", d->name);
		ck_assert_msg(d->skip == STATSFD_USE, "%s skipped: %s", d->name,
			      statsfd_skip_name(d->skip));
		switch (unit) {
		case KVM_STATS_UNIT_NONE:
		case U_BOOL:
			ck_assert_msg(d->exponent == 0, "%s: exponent", d->name);
			break;
		case KVM_STATS_UNIT_SECONDS:
			ck_assert_msg(d->exponent <= 0, "%s: exponent", d->name);
			ck_assert_msg(base == KVM_STATS_BASE_POW10, "%s: base",
				      d->name);
			break;
		default: /* bytes, cycles */
			ck_assert_msg(d->exponent >= 0, "%s: exponent", d->name);
			ck_assert_msg(base == KVM_STATS_BASE_POW2, "%s: base",
				      d->name);
			break;
		}
		if (unit == U_BOOL)
			ck_assert_msg(type != KVM_STATS_TYPE_LOG_HIST,
				      "%s: boolean log histogram", d->name);
		ck_assert_msg(d->size > 0, "%s: size", d->name);
		if (type == KVM_STATS_TYPE_LINEAR_HIST)
			ck_assert_msg(d->bucket_size > 0, "%s: bucket_size",
				      d->name);
		else
			ck_assert_msg(d->bucket_size == 0, "%s: bucket_size",
				      d->name);
		if (type < KVM_STATS_TYPE_LINEAR_HIST)
			ck_assert_msg(d->size == 1, "%s: size", d->name);
	}
	data = malloc(s->data_len ? s->data_len : 1);
	ck_assert_int_eq(statsfd_data_read(fd, s, data), 0);
	free(data);
	statsfd_schema_free(s);
}

/*
 * The selftest's invariants on every stats fd the guest keeps open, copied
 * as kvmstat copies them; and the names the VM fd and the vCPU fds give
 * are disjoint on this host (x86), so a VM value is its VM stats plus the
 * sum of its vCPUs' without double counting.
 */
START_TEST(test_real_invariants)
{
	static const char *const args[] = { "-m", "1",	 "-v", "2", "-n", "1",
					    "-k", "hlt", "-t", "5", NULL };
	struct statsfd_schema *vm_s = NULL, *vc_s = NULL;
	int pidfd, nfd = 0, nvm = 0, nvcpu = 0;
	struct guest g;
	char path[64], l[64];
	struct errmsg err;

	if (!host_can_run("test_real_invariants"))
		return;
	guest_start(&g, args);
	pidfd = (int)syscall(SYS_pidfd_open, g.vm, 0);
	ck_assert_int_ge(pidfd, 0);
	for (int n = 0; n < 64; n++) {
		ssize_t len;
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)g.vm, n);
		len = readlink(path, l, sizeof(l) - 1);
		if (len <= 0)
			continue;
		l[len] = '\0';
		if (strcmp(l, "anon_inode:kvm-vm-stats") &&
		    strncmp(l, "anon_inode:kvm-vcpu-stats:", 26))
			continue;
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, n, 0);
		ck_assert_msg(fd >= 0, "pidfd_getfd: %s", strerror(errno));
		check_invariants(fd, l[16] == 'c');
		if (l[16] == 'c') {
			nvcpu++;
			if (!vc_s)
				ck_assert_int_eq(statsfd_schema_read(fd, &vc_s,
								     &err),
						 0);
		} else {
			nvm++;
			ck_assert_int_eq(statsfd_schema_read(fd, &vm_s, &err),
					 0);
		}
		close(fd);
		nfd++;
	}
	ck_assert_int_eq(nvm, 1);
	ck_assert_int_eq(nvcpu, 2);
	for (uint32_t i = 0; i < vm_s->num_desc; i++)
		for (uint32_t j = 0; j < vc_s->num_desc; j++)
			ck_assert_msg(strcmp(vm_s->desc[i].name,
					     vc_s->desc[j].name),
				      "%s in both", vm_s->desc[i].name);
	statsfd_schema_free(vm_s);
	statsfd_schema_free(vc_s);
	close(pidfd);
	guest_stop(&g);
}
END_TEST

/* One provider with its stats layer. */
struct pfx {
	struct options o;
	struct stats s;
	struct provider p;
};

/* Opens the provider on the proc root and KVM debugfs directory given
 * (NULL: the system's). */
static void pfx_open_at(struct pfx *f, const char *proc_root,
			const char *debugfs_root, pid_t pid, bool include_past,
			const char *filter)
{
	struct errmsg err;

	memset(f, 0, sizeof(*f));
	f->o.pid = pid;
	f->o.include_past = include_past;
	f->o.proc_root = proc_root ? proc_root : "/proc";
	f->o.debugfs_root = debugfs_root;
	if (filter)
		ck_assert_int_eq(filter_set(&f->o.filter, filter, &err), 0);
	stats_init(&f->s, include_past);
	f->p.ops = provider_find("statsfd");
	ck_assert_ptr_nonnull(f->p.ops);
	f->p.fields = &f->s.fields;
	f->p.filter = filter ? &f->o.filter : NULL;
	/* per VM and per vCPU, as a run showing vCPUs asks (with -p the
	 * provider gives vCPUs anyway; without, only when asked) */
	f->p.want_vms = true;
	f->p.want_vcpus = true;
	ck_assert_msg(test_provider_open(&f->p, &f->o) == 0, "open: %s",
		      f->p.msg.text);
}

static void pfx_open(struct pfx *f, pid_t pid, bool include_past,
		     const char *filter)
{
	pfx_open_at(f, NULL, NULL, pid, include_past, filter);
}

static void pfx_sample(struct pfx *f)
{
	ck_assert_int_eq(f->p.ops->read(&f->p, &f->s.set), 0);
	stats_update(&f->s, util_now_ns());
}

static void pfx_close(struct pfx *f)
{
	f->p.ops->close(&f->p);
	stats_free(&f->s);
	filter_free(&f->o.filter);
}

static const struct stat_cell *cell(struct pfx *f, const char *name, pid_t pid,
				    int vcpu)
{
	int id = field_table_find(&f->s.fields, name);

	ck_assert_msg(id >= 0, "no field %s", name);
	return stats_cell(&f->s, id, pid, vcpu);
}

/* Counts this process's copies of stats fds. */
static int own_stats_fds(void)
{
	char path[64], l[64];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, l, sizeof(l) - 1);
		if (len <= 0)
			continue;
		l[len] = '\0';
		n += !strncmp(l, "anon_inode:kvm-", 15) &&
		     strstr(l, "-stats") != NULL;
	}
	return n;
}

/*
 * N HLT exits on each of V vCPUs: exactly V x N halt_exits for the VM (and
 * pid 0 with -p), N per vCPU with its thread id; units and histogram
 * buckets described; the fds closed once the VM exits.
 */
START_TEST(test_real_provider)
{
	static const char *const args[] = { "-m", "1",	 "-v", "3",
					    "-n", "400", "-k", "hlt",
					    "-t", "30",	 NULL };
	const struct stat_cell *c;
	const struct field_info *fi;
	struct guest g;
	struct pfx f;
	int id;

	if (!host_can_run("test_real_provider"))
		return;
	guest_start(&g, args);
	pfx_open(&f, g.vm, false, NULL);
	ck_assert_int_eq(own_stats_fds(), 4);
	pfx_sample(&f);
	ck_assert_uint_eq(cell(&f, "halt_exits", 0, -1)->total, 0);
	guest_go(&g);
	/* per vCPU samples carry the thread ids the guest printed */
	ck_assert_int_eq(f.p.ops->read(&f.p, &f.s.set), 0);
	id = field_table_find(&f.s.fields, "halt_exits");
	for (int v = 0, seen = 0; v < 3; v++, seen = 0) {
		for (size_t i = 0; i < f.s.set.n; i++) {
			const struct sample *x = &f.s.set.v[i];

			if (x->field != id || x->pid != g.vm || x->vcpu != v)
				continue;
			ck_assert_int_eq(x->tid, g.tid[v]);
			ck_assert_uint_eq(x->value, 400);
			seen++;
		}
		ck_assert_int_eq(seen, 1);
	}
	stats_update(&f.s, util_now_ns());
	c = cell(&f, "halt_exits", 0, SAMPLE_ALL_VCPUS);
	ck_assert_uint_eq(c->total, 1200);
	ck_assert_int_eq(c->delta, 1200);
	ck_assert_uint_eq(cell(&f, "halt_exits", g.vm, -1)->total, 1200);
	for (int v = 0; v < 3; v++)
		ck_assert_uint_eq(cell(&f, "halt_exits", g.vm, v)->total, 400);
	/* VM-scope stats: per VM, never per vCPU */
	ck_assert_ptr_nonnull(cell(&f, "remote_tlb_flush", g.vm, -1));
	ck_assert_ptr_null(cell(&f, "remote_tlb_flush", g.vm, 0));

	/* units and histogram shape on the fields */
	fi = field_table_info(&f.s.fields,
			      field_table_find(&f.s.fields, "halt_wait_ns"));
	ck_assert_int_eq(fi->unit, UNIT_SECONDS);
	ck_assert_int_eq(fi->exponent, -9);
	ck_assert_uint_eq(fi->base, 10);
	ck_assert_uint_eq(fi->flags & FIELD_EXITS, 0);
	/* KVM's count of every exit, for the per-guest views */
	fi = field_table_info(&f.s.fields,
			      field_table_find(&f.s.fields, "exits"));
	ck_assert_uint_eq(fi->flags & FIELD_EXITS, FIELD_EXITS);
	id = field_table_find(&f.s.fields, "halt_wait_hist");
	ck_assert_int_ge(id, 0);
	fi = field_table_info(&f.s.fields, id);
	ck_assert_int_eq(fi->hist, HIST_LOG2);
	ck_assert_int_eq(fi->type, FIELD_CUMULATIVE);
	fi = field_table_info(&f.s.fields,
			      field_table_find(&f.s.fields,
					       "halt_wait_hist(3)"));
	ck_assert_int_eq(fi->parent, id);
	ck_assert_int_eq(fi->bucket, 3);
	ck_assert_uint_eq(fi->bucket_lo, 4);
	ck_assert_uint_eq(fi->bucket_hi, 8);
	fi = field_table_info(&f.s.fields,
			      field_table_find(&f.s.fields,
					       "halt_wait_hist(31)"));
	ck_assert_uint_eq(fi->bucket_hi, UINT64_MAX);
	fi = field_table_info(&f.s.fields,
			      field_table_find(&f.s.fields, "blocking"));
	ck_assert_int_eq(fi->unit, UNIT_BOOLEAN);
	ck_assert_int_eq(fi->type, FIELD_INSTANT);
	fi = field_table_info(&f.s.fields,
			      field_table_find(&f.s.fields,
					       "max_mmu_rmap_size"));
	ck_assert_int_eq(fi->type, FIELD_PEAK);

	/* the VM exits: its fds are closed at once, the totals stay */
	guest_stop(&g);
	for (int i = 0; i < 100 && kill(g.vm, 0) == 0; i++)
		usleep(20000);
	pfx_sample(&f);
	ck_assert_int_eq(own_stats_fds(), 0);
	c = cell(&f, "halt_exits", 0, SAMPLE_ALL_VCPUS);
	ck_assert_uint_eq(c->total, 1200);
	/* its last reading stays in the sums: nothing drops, nothing more */
	ck_assert_int_eq(c->delta, 0);
	pfx_sample(&f);
	c = cell(&f, "halt_exits", 0, SAMPLE_ALL_VCPUS);
	ck_assert_uint_eq(c->total, 1200);
	ck_assert_int_eq(c->delta, 0);
	pfx_close(&f);
}
END_TEST

/* -i counts the VM's past; without it the totals start at zero. A filter
 * that hides the buckets still leaves the histogram's parent whole. */
START_TEST(test_real_include_past)
{
	static const char *const args[] = { "-m", "1",	 "-v", "2",
					    "-n", "250", "-k", "hlt",
					    "-t", "30",	 NULL };
	struct guest g;
	struct pfx f, h;

	if (!host_can_run("test_real_include_past"))
		return;
	guest_start(&g, args);
	guest_go(&g);
	pfx_open(&f, g.vm, true, NULL);
	pfx_sample(&f);
	ck_assert_uint_eq(cell(&f, "halt_exits", 0, -1)->total, 500);
	ck_assert_uint_eq(cell(&f, "halt_exits", g.vm, 1)->total, 250);
	pfx_open(&h, g.vm, false, "^halt_(exits|wait_hist)$");
	pfx_sample(&h);
	pfx_sample(&h);
	ck_assert_uint_eq(cell(&h, "halt_exits", 0, -1)->total, 0);
	ck_assert_int_ge(field_table_find(&h.s.fields, "halt_wait_hist(0)"), 0);
	ck_assert_int_lt(field_table_find(&h.s.fields, "pf_fixed"), 0);
	pfx_close(&h);
	pfx_close(&f);
	guest_stop(&g);
}
END_TEST

/*
 * A VM that starts after kvmstat is found by a later scan (within
 * SFD_RESCAN_NS) and counts all of its value: it all happened during
 * the run.
 */
START_TEST(test_real_late_vm)
{
	static const char *const args[] = { "-m", "1",	 "-v", "2",
					    "-n", "300", "-k", "hlt",
					    "-t", "30",	 NULL };
	const struct stat_cell *c;
	struct guest g;
	struct pfx f;

	if (!host_can_run("test_real_late_vm"))
		return;
	pfx_open(&f, 0, false, "^halt_exits$");
	pfx_sample(&f);
	guest_start(&g, args);
	guest_go(&g);
	usleep(2100000);
	pfx_sample(&f);
	c = cell(&f, "halt_exits", g.vm, SAMPLE_ALL_VCPUS);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->total, 600);
	ck_assert_int_eq(c->delta, 600);
	c = cell(&f, "halt_exits", g.vm, 1);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->total, 300);
	guest_stop(&g);
	pfx_close(&f);
}
END_TEST

/* -p of a process that is no VM, and of a VM without stats fds. */
START_TEST(test_real_pid_errors)
{
	struct options o = { .pid = getppid(), .proc_root = "/proc" };
	struct field_table t;
	struct provider p = { 0 };
	struct guest g;

	if (!host_can_run("test_real_pid_errors"))
		return;
	field_table_init(&t);
	p.ops = provider_find("statsfd");
	p.fields = &t;
	ck_assert_int_eq(test_provider_open(&p, &o), -ESRCH);
	ck_assert_ptr_nonnull(strstr(p.msg.text, "holds no KVM VM"));
	ck_assert_ptr_null(p.priv);

	/* the guest without -s: a VM, but no stats fds */
	{
		const char *argv[] = { GUEST, "-w", "-m", "1", "-v",
				       "1",   "-t", "30", NULL };
		char line[256];
		int pp[2];
		pid_t launcher;
		FILE *out;

		memset(&g, 0, sizeof(g));
		ck_assert_int_eq(pipe2(pp, O_CLOEXEC), 0);
		launcher = fork();
		if (!launcher) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			dup2(pp[1], STDOUT_FILENO);
			execv(GUEST, (char **)argv);
			_exit(127);
		}
		close(pp[1]);
		out = fdopen(pp[0], "r");
		while (fgets(line, sizeof(line), out) && strcmp(line, "ready\n"))
			sscanf(line, "vm %d", &g.vm);
		o.pid = g.vm;
		ck_assert_int_eq(test_provider_open(&p, &o), -ENOENT);
		ck_assert_ptr_nonnull(
			strstr(p.msg.text, "keeps no binary stats fds"));
		kill(launcher, SIGTERM);
		waitpid(launcher, NULL, 0);
		fclose(out);
	}
	field_table_free(&t);
}
END_TEST

/* Opens the provider as nobody (no CAP_SYS_PTRACE): 0 when the errors
 * name the capability, else the step that went wrong. */
static int open_as_nobody(pid_t vm)
{
	struct options o = { .pid = vm, .proc_root = "/proc" };
	struct field_table t;
	struct provider p = { 0 };
	int rc;

	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return 2;
	field_table_init(&t);
	p.ops = provider_find("statsfd");
	p.fields = &t;
	rc = test_provider_open(&p, &o);
	if ((rc != -EACCES && rc != -EPERM) ||
	    !strstr(p.msg.text, "CAP_SYS_PTRACE"))
		return 3;
	/* without -p: no VM can be served, which is an error naming the
	 * privilege (not an empty run) */
	o.pid = 0;
	memset(&p, 0, sizeof(p));
	p.ops = provider_find("statsfd");
	p.fields = &t;
	if (test_provider_open(&p, &o) != -EPERM)
		return 4;
	if (!strstr(p.msg.text, "run kvmstat as root") ||
	    !strstr(p.msg.text, "CAP_SYS_PTRACE"))
		return 5;
	if (p.priv)
		return 6;
	return 0;
}

/* Without the right to read a VM's fds, errors say what is needed. */
START_TEST(test_real_permission)
{
	static const char *const args[] = { "-m", "1",	 "-v", "1",  "-n", "1",
					    "-k", "hlt", "-t", "30", NULL };
	struct guest g;
	int status;
	pid_t pid;

	if (!host_can_run("test_real_permission"))
		return;
	guest_start(&g, args);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid)
		_exit(open_as_nobody(g.vm));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "as nobody: step %d failed", WEXITSTATUS(status));
	guest_stop(&g);
}
END_TEST

/* The fake_vms case's tree (a fake proc root and KVM debugfs directory),
 * made and removed around the case, also when a check fails. */
static char fake_top[32];

static void fake_setup(void)
{
	snprintf(fake_top, sizeof(fake_top), "/tmp/kvmstat-statsfd.XXXXXX");
	if (!mkdtemp(fake_top))
		fake_top[0] = '\0';
}

static void fake_teardown(void)
{
	if (fake_top[0])
		test_rm_tree(fake_top);
	fake_top[0] = '\0';
}

/* A link DIR/fd/FD naming target, as a fake proc root shows an fd. */
static void fake_fd_link(const char *dir, int fd, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/fd/%d", dir, fd);
	ck_assert_int_eq(symlink(target, path), 0);
}

/* What the loop does between refreshes, for ms milliseconds: polls the
 * provider's wake fd and wakes it. */
static void pfx_idle(struct pfx *f, int ms)
{
	uint64_t end = util_now_ns() + (uint64_t)ms * 1000000;
	int fd = f->p.ops->wake_fd(&f->p);

	ck_assert_int_ge(fd, 0);
	while (util_now_ns() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		poll(&pfd, 1, 2);
		f->p.ops->wake(&f->p);
	}
}

/*
 * A VM that starts during the run, in the order real KVM makes it:
 * KVM_CREATE_VM creates its debugfs directory "PID-FD" before the VM fd
 * is in the VMM's fd table, and the VMM opens the stats fds after that.
 * Told of the directory by inotify, the provider finds no VM in that
 * process yet: it must look again until the fds come, so that the VM's
 * 200 HLT exits, made before the next refresh, are all counted (not left
 * to a full scan 30 s on, after a VM of a few seconds has gone).
 */
START_TEST(test_vm_named_before_fd)
{
	static const struct tdesc halt[] = {
		{ "halt_exits", T_CUM | U_NONE, 0, 1, 0, 0 },
	};
	static const uint64_t zero[] = { 0 };
	char proc[64], dbg[64], dir[96], path[128];
	const struct stat_cell *c;
	uint64_t exits = 200;
	uint32_t data_off;
	struct blob bl;
	struct pfx f;
	pid_t vmm;
	int fd;

	ck_assert_msg(fake_top[0], "no temporary directory");
	snprintf(proc, sizeof(proc), "%s/proc", fake_top);
	snprintf(dbg, sizeof(dbg), "%s/kvm", fake_top);
	ck_assert_int_eq(mkdir(proc, 0755), 0);
	ck_assert_int_eq(mkdir(dbg, 0755), 0);
	bl = blob_make(halt, 1, zero, 1);
	data_off = hdr_get(&bl, 5);
	fd = blob_fd(&bl);
	free(bl.b);
	/* the VMM: holds the vCPU's stats file (a memfd) under the same fd
	 * number as this process, so the provider copies it from there */
	vmm = fork();
	ck_assert_int_ge(vmm, 0);
	if (!vmm) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	/* its process before KVM_CREATE_VM: no VM fd */
	snprintf(dir, sizeof(dir), "%s/%d", proc, (int)vmm);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/fd", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	pfx_open_at(&f, proc, dbg, 0, false, "^halt_exits$");
	pfx_sample(&f);

	/* KVM_CREATE_VM: the debugfs directory, seen before fd_install */
	snprintf(path, sizeof(path), "%s/%d-99", dbg, (int)vmm);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	pfx_idle(&f, 20);
	fake_fd_link(dir, 99, "anon_inode:kvm-vm");
	pfx_idle(&f, 20);
	fake_fd_link(dir, fd, "anon_inode:kvm-vcpu-stats:0");
	pfx_idle(&f, 50);
	/* its exits, all before the next refresh */
	ck_assert_int_eq(pwrite(fd, &exits, sizeof(exits), data_off),
			 (ssize_t)sizeof(exits));
	pfx_sample(&f);
	c = cell(&f, "halt_exits", vmm, SAMPLE_ALL_VCPUS);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->total, 200);
	c = cell(&f, "halt_exits", 0, SAMPLE_ALL_VCPUS);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->total, 200);
	ck_assert_int_eq(c->delta, 200);

	pfx_close(&f);
	close(fd);
	kill(vmm, SIGKILL);
	waitpid(vmm, NULL, 0);
}
END_TEST

Suite *statsfd_suite(void)
{
	Suite *s = suite_create("statsfd");
	TCase *blob = tcase_create("blobs");
	TCase *fake = tcase_create("fake_vms");
	TCase *real = test_kvm_tcase("real_kvm");

	tcase_add_test(blob, test_valid_all_kinds);
	tcase_add_test(blob, test_pread_only);
	tcase_add_test(blob, test_data_read_range);
	tcase_add_test(blob, test_skips);
	tcase_add_test(blob, test_no_descriptors);
	tcase_add_test(blob, test_bad_short_header);
	tcase_add_test(blob, test_bad_name_size);
	tcase_add_test(blob, test_bad_num_desc);
	tcase_add_test(blob, test_bad_offsets);
	tcase_add_test(blob, test_bad_names);
	tcase_add_test(blob, test_bad_sizes);
	tcase_add_test(blob, test_every_truncation);
	tcase_add_test(blob, test_data_short_read);
	tcase_add_test(blob, test_not_seekable);
	tcase_add_test(blob, test_schema_equal);
	suite_add_tcase(s, blob);
	tcase_add_unchecked_fixture(fake, fake_setup, fake_teardown);
	tcase_add_test(fake, test_vm_named_before_fd);
	suite_add_tcase(s, fake);
	tcase_set_timeout(real, 30);
	tcase_add_test(real, test_real_invariants);
	tcase_add_test(real, test_real_provider);
	tcase_add_test(real, test_real_include_past);
	tcase_add_test(real, test_real_late_vm);
	tcase_add_test(real, test_real_pid_errors);
	tcase_add_test(real, test_real_permission);
	suite_add_tcase(s, real);
	return s;
}
