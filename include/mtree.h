/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A QEMU guest's memory map as its monitor's `info mtree -f` prints it
 * (asked over QMP with human-monitor-command): the flat view of the
 * address space "memory" (the guest physical addresses its vCPUs reach),
 * each range with the name of the region that answers it there, the most
 * specific one ("hpet", "ioapic", "virtio-pci-notify-virtio-net",
 * "msix-table"...). Used to name the MMIO addresses of --breakdown mmio.
 * The text is the VMM's, so nothing in it is trusted: every line is
 * checked, a malformed one is skipped, and the table is bounded
 * (MTREE_MAX ranges, names of MTREE_NAME_MAX bytes at most, printable
 * ASCII only).
 */
#ifndef KVMSTAT_MTREE_H
#define KVMSTAT_MTREE_H

#include <stddef.h>
#include <stdint.h>

/* Ranges kept at most; a longer view keeps its first MTREE_MAX. */
#define MTREE_MAX 16384
/* Bytes of a name at most (longer ones are cut), NUL aside. */
#define MTREE_NAME_MAX 63

struct mtree_range {
	uint64_t start, last; /* guest physical, last inclusive */
	uint32_t name;	      /* offset of its name in names */
};

/* The ranges by start; all zero: empty. */
struct mtree {
	struct mtree_range *r;
	size_t n;
	char *names; /* NUL-terminated names, one after another */
	size_t names_len;
};

/*
 * Reads the text of `info mtree -f` (len bytes, NULs or not) into t,
 * which it overwrites (free what it held first): the ranges of the flat
 * view that lists AS "memory" (else the one whose root is "system").
 * 0, or -ENOENT when the text holds no such view (t is then empty).
 */
int mtree_parse(struct mtree *t, const char *text, size_t len);
/* The name of the range holding gpa, or NULL; valid until t changes. */
const char *mtree_name(const struct mtree *t, uint64_t gpa);
void mtree_free(struct mtree *t);

#endif
