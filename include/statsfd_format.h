/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The KVM binary statistics format (KVM_GET_STATS_FD, <linux/kvm.h>): a
 * parser that reads a stats fd's header, id and descriptors once into a
 * schema, and then the data block of any fd with that schema each refresh.
 * Only pread() is used: the file position is shared with the fd's owner.
 * Nothing in a file is trusted before it is checked: every block must lie
 * in the file and apart from the others, every stat's data in the data
 * block; descriptors of unknown type, unit or base are kept but skipped.
 */
#ifndef KVMSTAT_STATSFD_FORMAT_H
#define KVMSTAT_STATSFD_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sample.h"

struct errmsg;

/* Limits past which a file is refused (the kernel's are far smaller:
 * names of 48 bytes, under a hundred stats, a few KiB of data). */
#define STATSFD_NAME_SIZE_MAX 1024u
#define STATSFD_NUM_DESC_MAX 4096u
#define STATSFD_DATA_MAX (1u << 20)
/* Exponents beyond this are not a scale anyone uses: skipped. */
#define STATSFD_EXPONENT_MAX 64
/* A log2 histogram's buckets must fit 64-bit ranges. */
#define STATSFD_LOG_BUCKETS_MAX 65u

/* Why a well-formed descriptor is not used. */
enum statsfd_skip {
	STATSFD_USE = 0,    /* usable */
	STATSFD_SKIP_TYPE,  /* type beyond KVM_STATS_TYPE_MAX */
	STATSFD_SKIP_UNIT,  /* unit beyond KVM_STATS_UNIT_MAX */
	STATSFD_SKIP_BASE,  /* base beyond KVM_STATS_BASE_MAX */
	STATSFD_SKIP_SCALE, /* |exponent| > STATSFD_EXPONENT_MAX */
	STATSFD_SKIP_SHAPE, /* scalar with size != 1, linear histogram
				 * without bucket_size, log2 one too long */
	STATSFD_SKIP_NAME,  /* characters other than [A-Za-z0-9_] */
	STATSFD_SKIP_DUP,   /* a name an earlier descriptor has */
};

/* One descriptor: the raw fields and what they decode to. */
struct statsfd_desc {
	const char *name;     /* NUL-terminated, in the schema's raw block */
	uint32_t flags;	      /* raw: type, unit and base bits */
	int16_t exponent;     /* raw value x base^exponent is in unit */
	uint16_t size;	      /* number of u64 items */
	uint32_t offset;      /* bytes from the start of the data block */
	uint32_t bucket_size; /* linear histograms only */
	enum statsfd_skip skip;
	/* Decoded (meaningful when skip is STATSFD_USE). */
	enum field_type type; /* histograms are cumulative */
	enum field_hist hist;
	enum field_unit unit;
	unsigned int base; /* 10 or 2 */
};

/* What a stats fd's header and descriptors say; shared by every fd whose
 * header and descriptor block are byte for byte the same. */
struct statsfd_schema {
	/* The header, as read. */
	uint32_t flags, name_size, num_desc;
	uint32_t id_offset, desc_offset, data_offset;
	char *id;		   /* the id string of the file read first */
	struct statsfd_desc *desc; /* num_desc, in file order */
	size_t nuse;		   /* descriptors with skip == STATSFD_USE */
	unsigned char *raw;	   /* the descriptor block (holds the names),
				 * kept to compare files */
	size_t raw_len;
	uint32_t data_len; /* bytes from data_offset that hold every
				 * usable stat; what statsfd_data_read reads */
};

/*
 * Reads and checks the header, id and descriptors of fd. Returns 0 with
 * *out (free with statsfd_schema_free), -EINVAL with the reason in msg for
 * a malformed or truncated file, or another -errno from pread.
 */
int statsfd_schema_read(int fd, struct statsfd_schema **out, struct errmsg *msg);
void statsfd_schema_free(struct statsfd_schema *s);
/* Whether a and b have the same header (but for the id) and descriptors. */
bool statsfd_schema_equal(const struct statsfd_schema *a,
			  const struct statsfd_schema *b);

/*
 * Reads the data block of fd (s->data_len bytes at s->data_offset) into
 * buf, which holds at least s->data_len bytes. 0, -EIO when the file is
 * shorter, or -errno.
 */
int statsfd_data_read(int fd, const struct statsfd_schema *s, void *buf);
/*
 * Reads bytes [lo, hi) of the data block of fd into buf (hi - lo bytes;
 * hi <= s->data_len): the part a reader wants. 0 (also when lo == hi,
 * without a read), -EIO when the file is shorter, or -errno.
 */
int statsfd_data_read_range(int fd, const struct statsfd_schema *s, uint32_t lo,
			    uint32_t hi, void *buf);

/* Item i (< d->size) of descriptor d in a data block read for its schema. */
static inline uint64_t statsfd_value(const void *data,
				     const struct statsfd_desc *d, size_t i)
{
	uint64_t v;

	memcpy(&v, (const unsigned char *)data + d->offset + i * sizeof(v),
	       sizeof(v));
	return v;
}

/* A short name for a skip reason ("unknown type", ...). */
const char *statsfd_skip_name(enum statsfd_skip skip);

#endif
