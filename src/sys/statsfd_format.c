// SPDX-License-Identifier: GPL-2.0-only
/*
 * The binary stats parser. A stats fd holds three blocks that its header
 * locates: the id string (name_size bytes), the descriptors (each
 * sizeof(struct kvm_stats_desc) + name_size bytes, the name last) and the
 * data (u64 items; each stat's at data_offset + its descriptor's offset, in
 * no particular order). The kernel's file has no size (fstat says 0 and it
 * cannot seek to its end), so a short pread is what shows that a block runs
 * past the end; a regular file (the tests' blobs) is also held to its size.
 */
#include <errno.h>
#include <linux/kvm.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "statsfd_format.h"
#include "util.h"

_Static_assert(sizeof(struct kvm_stats_header) == 24,
	       "the stats header is six u32");
_Static_assert(sizeof(struct kvm_stats_desc) == 16,
	       "a descriptor is 16 bytes before its name");

#define DESC_HEAD sizeof(struct kvm_stats_desc)

/* A byte range of the file: [start, end). */
struct statsfd_block {
	const char *what;
	uint64_t start, end;
};

/* Reads len bytes at off: 0, -EIO when the file ends first, or -errno. */
static int statsfd_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got,
				  (off_t)(off + got));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			return -EIO;
		got += (size_t)n;
	}
	return 0;
}

/* A name safe to quote in a message: [A-Za-z0-9_] kept, others '?'. */
static void statsfd_name_quote(const char *name, char *out, size_t len)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++) {
		unsigned char c = (unsigned char)name[i];

		out[i] = (c >= 0x21 && c < 0x7f) ? (char)c : '?';
	}
	out[i] = '\0';
}

static bool statsfd_name_plain(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Whether two non-empty blocks share a byte. */
static bool statsfd_block_overlap(const struct statsfd_block *a,
				  const struct statsfd_block *b)
{
	if (a->start == a->end || b->start == b->end)
		return false;
	return a->start < b->end && b->start < a->end;
}

/* Checks blk against the file size (0: unknown) and the blocks before it. */
static int statsfd_block_check(const struct statsfd_block *blk,
			       const struct statsfd_block *prev, size_t nprev,
			       uint64_t fsize, struct errmsg *msg)
{
	if (fsize && blk->end > fsize)
		return errmsg_set(msg, -EINVAL,
				  "%s [%llu, %llu) past the end of the file (%llu bytes)",
				  blk->what, (unsigned long long)blk->start,
				  (unsigned long long)blk->end,
				  (unsigned long long)fsize);
	for (size_t i = 0; i < nprev; i++)
		if (statsfd_block_overlap(blk, &prev[i]))
			return errmsg_set(msg, -EINVAL,
					  "%s [%llu, %llu) overlaps the %s [%llu, %llu)",
					  blk->what,
					  (unsigned long long)blk->start,
					  (unsigned long long)blk->end,
					  prev[i].what,
					  (unsigned long long)prev[i].start,
					  (unsigned long long)prev[i].end);
	return 0;
}

static uint32_t statsfd_get_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Decodes descriptor i from the raw block; -EINVAL when it is malformed. */
static int statsfd_desc_decode(struct statsfd_schema *s, uint32_t i,
			       struct errmsg *msg)
{
	size_t stride = DESC_HEAD + s->name_size;
	const unsigned char *p = s->raw + (size_t)i * stride;
	struct statsfd_desc *d = &s->desc[i];
	const char *name = (const char *)p + DESC_HEAD;
	unsigned int type, unit, base;
	char q[64];
	uint16_t size;
	int16_t exp;

	if (!memchr(name, '\0', s->name_size))
		return errmsg_set(msg, -EINVAL,
				  "descriptor %u: name not NUL-terminated", i);
	if (!*name)
		return errmsg_set(msg, -EINVAL, "descriptor %u: empty name", i);
	d->name = name;
	d->flags = statsfd_get_u32(p + offsetof(struct kvm_stats_desc, flags));
	memcpy(&exp, p + offsetof(struct kvm_stats_desc, exponent), sizeof(exp));
	memcpy(&size, p + offsetof(struct kvm_stats_desc, size), sizeof(size));
	d->exponent = exp;
	d->size = size;
	d->offset = statsfd_get_u32(p + offsetof(struct kvm_stats_desc, offset));
	d->bucket_size = statsfd_get_u32(
		p + offsetof(struct kvm_stats_desc, bucket_size));
	if (!d->size) {
		statsfd_name_quote(name, q, sizeof(q));
		return errmsg_set(msg, -EINVAL, "descriptor %u (%s): size 0", i,
				  q);
	}

	type = (d->flags & KVM_STATS_TYPE_MASK) >> KVM_STATS_TYPE_SHIFT;
	unit = (d->flags & KVM_STATS_UNIT_MASK) >> KVM_STATS_UNIT_SHIFT;
	base = (d->flags & KVM_STATS_BASE_MASK) >> KVM_STATS_BASE_SHIFT;
	d->skip = STATSFD_USE;
	d->type = FIELD_CUMULATIVE;
	d->hist = HIST_NONE;
	switch (type << KVM_STATS_TYPE_SHIFT) {
	case KVM_STATS_TYPE_CUMULATIVE:
		break;
	case KVM_STATS_TYPE_INSTANT:
		d->type = FIELD_INSTANT;
		break;
	case KVM_STATS_TYPE_PEAK:
		d->type = FIELD_PEAK;
		break;
	case KVM_STATS_TYPE_LINEAR_HIST:
		d->hist = HIST_LINEAR;
		break;
	case KVM_STATS_TYPE_LOG_HIST:
		d->hist = HIST_LOG2;
		break;
	default:
		d->skip = STATSFD_SKIP_TYPE;
		return 0;
	}
	switch (unit << KVM_STATS_UNIT_SHIFT) {
	case KVM_STATS_UNIT_NONE:
		d->unit = UNIT_NONE;
		break;
	case KVM_STATS_UNIT_BYTES:
		d->unit = UNIT_BYTES;
		break;
	case KVM_STATS_UNIT_SECONDS:
		d->unit = UNIT_SECONDS;
		break;
	case KVM_STATS_UNIT_CYCLES:
		d->unit = UNIT_CYCLES;
		break;
#ifdef KVM_STATS_UNIT_BOOLEAN
	case KVM_STATS_UNIT_BOOLEAN:
#else
	case 0x4 << KVM_STATS_UNIT_SHIFT:
#endif
		d->unit = UNIT_BOOLEAN;
		break;
	default:
		d->skip = STATSFD_SKIP_UNIT;
		return 0;
	}
	if (base << KVM_STATS_BASE_SHIFT == KVM_STATS_BASE_POW10) {
		d->base = 10;
	} else if (base << KVM_STATS_BASE_SHIFT == KVM_STATS_BASE_POW2) {
		d->base = 2;
	} else {
		d->skip = STATSFD_SKIP_BASE;
		return 0;
	}
	if (d->exponent > STATSFD_EXPONENT_MAX ||
	    d->exponent < -STATSFD_EXPONENT_MAX)
		d->skip = STATSFD_SKIP_SCALE;
	else if ((d->hist == HIST_NONE && d->size != 1) ||
		 (d->hist == HIST_LINEAR && !d->bucket_size) ||
		 (d->hist == HIST_LOG2 && d->size > STATSFD_LOG_BUCKETS_MAX))
		d->skip = STATSFD_SKIP_SHAPE;
	else if (!statsfd_name_plain(name))
		d->skip = STATSFD_SKIP_NAME;
	return 0;
}

static int statsfd_desc_name_cmp(const void *a, const void *b)
{
	const struct statsfd_desc *x = *(const struct statsfd_desc *const *)a;
	const struct statsfd_desc *y = *(const struct statsfd_desc *const *)b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return (x > y) - (x < y); /* file order */
}

static int statsfd_desc_offset_cmp(const void *a, const void *b)
{
	const struct statsfd_desc *x = *(const struct statsfd_desc *const *)a;
	const struct statsfd_desc *y = *(const struct statsfd_desc *const *)b;

	return (x->offset > y->offset) - (x->offset < y->offset);
}

/*
 * Skips the later of two usable descriptors with one name, then checks
 * that the usable stats' data ranges lie within STATSFD_DATA_MAX and apart
 * from each other, and sets data_len.
 */
static int statsfd_desc_layout(struct statsfd_schema *s, struct errmsg *msg)
{
	struct statsfd_desc **v;
	size_t n = 0;
	uint64_t len = 0;
	int rc = 0;

	if (!s->num_desc)
		return 0;
	v = xmalloc(s->num_desc * sizeof(*v));
	for (uint32_t i = 0; i < s->num_desc; i++)
		if (s->desc[i].skip == STATSFD_USE)
			v[n++] = &s->desc[i];
	qsort(v, n, sizeof(*v), statsfd_desc_name_cmp);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(v[i]->name, v[i - 1]->name))
			v[i]->skip = STATSFD_SKIP_DUP;

	n = 0;
	for (uint32_t i = 0; i < s->num_desc; i++)
		if (s->desc[i].skip == STATSFD_USE)
			v[n++] = &s->desc[i];
	s->nuse = n;
	qsort(v, n, sizeof(*v), statsfd_desc_offset_cmp);
	for (size_t i = 0; i < n; i++) {
		uint64_t end = (uint64_t)v[i]->offset +
			       (uint64_t)v[i]->size * sizeof(uint64_t);
		char q1[64], q2[64];

		if (end > STATSFD_DATA_MAX) {
			statsfd_name_quote(v[i]->name, q1, sizeof(q1));
			rc = errmsg_set(msg, -EINVAL,
					"stat %s: data [%llu, %llu) beyond %u bytes",
					q1, (unsigned long long)v[i]->offset,
					(unsigned long long)end,
					STATSFD_DATA_MAX);
			break;
		}
		if (i + 1 < n && end > v[i + 1]->offset) {
			statsfd_name_quote(v[i]->name, q1, sizeof(q1));
			statsfd_name_quote(v[i + 1]->name, q2, sizeof(q2));
			rc = errmsg_set(msg, -EINVAL, "stats %s and %s overlap",
					q1, q2);
			break;
		}
		if (end > len)
			len = end;
	}
	free(v);
	s->data_len = (uint32_t)len;
	return rc;
}

void statsfd_schema_free(struct statsfd_schema *s)
{
	if (!s)
		return;
	free(s->id);
	free(s->desc);
	free(s->raw);
	free(s);
}

int statsfd_schema_read(int fd, struct statsfd_schema **out, struct errmsg *msg)
{
	struct kvm_stats_header h;
	struct statsfd_schema *s;
	struct statsfd_block blk[4];
	uint64_t fsize = 0;
	void *data = NULL;
	struct stat st;
	size_t stride;
	char *id;
	int rc;

	*out = NULL;
	errmsg_clear(msg);
	if (!fstat(fd, &st) && S_ISREG(st.st_mode))
		fsize = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	rc = statsfd_pread_full(fd, &h, sizeof(h), 0);
	if (rc == -EIO)
		return errmsg_set(msg, -EINVAL, "shorter than the stats header");
	if (rc)
		return rc;
	if (fsize && fsize < sizeof(h))
		return errmsg_set(msg, -EINVAL, "shorter than the stats header");
	if (!h.name_size || h.name_size > STATSFD_NAME_SIZE_MAX)
		return errmsg_set(msg, -EINVAL, "name_size %u not in 1..%u",
				  h.name_size, STATSFD_NAME_SIZE_MAX);
	if (h.num_desc > STATSFD_NUM_DESC_MAX)
		return errmsg_set(msg, -EINVAL, "num_desc %u above %u",
				  h.num_desc, STATSFD_NUM_DESC_MAX);
	stride = DESC_HEAD + h.name_size;
	blk[0] = (struct statsfd_block){ "header", 0, sizeof(h) };
	blk[1] = (struct statsfd_block){ "id", h.id_offset,
					 (uint64_t)h.id_offset + h.name_size };
	blk[2] = (struct statsfd_block){ "descriptor block", h.desc_offset,
					 h.desc_offset + (uint64_t)h.num_desc *
								 stride };
	for (int i = 1; i < 3; i++) {
		rc = statsfd_block_check(&blk[i], blk, (size_t)i, fsize, msg);
		if (rc)
			return rc;
	}

	id = xmalloc(h.name_size);
	rc = statsfd_pread_full(fd, id, h.name_size, h.id_offset);
	if (!rc && !memchr(id, '\0', h.name_size))
		rc = errmsg_set(msg, -EINVAL, "id not NUL-terminated");
	if (rc) {
		free(id);
		if (rc == -EIO)
			rc = errmsg_set(msg, -EINVAL,
					"id past the end of the file");
		return rc;
	}

	s = xcalloc(1, sizeof(*s));
	s->flags = h.flags;
	s->name_size = h.name_size;
	s->num_desc = h.num_desc;
	s->id_offset = h.id_offset;
	s->desc_offset = h.desc_offset;
	s->data_offset = h.data_offset;
	s->id = id;
	s->raw_len = (size_t)h.num_desc * stride;
	s->raw = xmalloc(s->raw_len ? s->raw_len : 1);
	s->desc = xcalloc(h.num_desc ? h.num_desc : 1, sizeof(*s->desc));
	rc = statsfd_pread_full(fd, s->raw, s->raw_len, h.desc_offset);
	if (rc == -EIO)
		rc = errmsg_set(msg, -EINVAL,
				"descriptor block past the end of the file");
	for (uint32_t i = 0; !rc && i < h.num_desc; i++)
		rc = statsfd_desc_decode(s, i, msg);
	if (!rc)
		rc = statsfd_desc_layout(s, msg);
	if (rc)
		goto out_free;

	blk[3] = (struct statsfd_block){ "data block", h.data_offset,
					 (uint64_t)h.data_offset + s->data_len };
	rc = statsfd_block_check(&blk[3], blk, 3, fsize, msg);
	if (rc)
		goto out_free;
	/* the data must be readable in full, not just described */
	data = xmalloc(s->data_len ? s->data_len : 1);
	rc = statsfd_data_read(fd, s, data);
	free(data);
	if (rc == -EIO)
		rc = errmsg_set(msg, -EINVAL,
				"data block [%llu, %llu) past the end of the file",
				(unsigned long long)blk[3].start,
				(unsigned long long)blk[3].end);
	if (rc)
		goto out_free;
	*out = s;
	return 0;

out_free:
	statsfd_schema_free(s);
	return rc;
}

bool statsfd_schema_equal(const struct statsfd_schema *a,
			  const struct statsfd_schema *b)
{
	return a->flags == b->flags && a->name_size == b->name_size &&
	       a->num_desc == b->num_desc && a->id_offset == b->id_offset &&
	       a->desc_offset == b->desc_offset &&
	       a->data_offset == b->data_offset && a->raw_len == b->raw_len &&
	       !memcmp(a->raw, b->raw, a->raw_len);
}

int statsfd_data_read(int fd, const struct statsfd_schema *s, void *buf)
{
	return statsfd_data_read_range(fd, s, 0, s->data_len, buf);
}

int statsfd_data_read_range(int fd, const struct statsfd_schema *s, uint32_t lo,
			    uint32_t hi, void *buf)
{
	if (hi <= lo)
		return 0;
	return statsfd_pread_full(fd, buf, hi - lo,
				  (uint64_t)s->data_offset + lo);
}

const char *statsfd_skip_name(enum statsfd_skip skip)
{
	switch (skip) {
	case STATSFD_USE:
		return "used";
	case STATSFD_SKIP_TYPE:
		return "unknown type";
	case STATSFD_SKIP_UNIT:
		return "unknown unit";
	case STATSFD_SKIP_BASE:
		return "unknown base";
	case STATSFD_SKIP_SCALE:
		return "exponent out of range";
	case STATSFD_SKIP_SHAPE:
		return "unusable size or bucket size";
	case STATSFD_SKIP_NAME:
		return "unusual name";
	case STATSFD_SKIP_DUP:
		return "duplicate name";
	}
	return "?";
}
