// SPDX-License-Identifier: GPL-2.0-only
/*
 * QEMU's memory map from `info mtree -f` (mtree.h): a reply captured
 * from QEMU 7.2 (pc machine, TCG, a virtio-net and a virtio-blk device
 * whose BARs SeaBIOS placed: tests/data/mtree/, CRLF line ends as the
 * monitor sends them) names its addresses as its view of "memory" does,
 * not the I/O space's or SMM's; KVM's suffixes and offsets are cut;
 * texts with no such view, bad lines, overlong names, control bytes and
 * truncation do no harm.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtree.h"
#include "suites.h"

/* The captured reply, whole; caller frees. */
static char *mt_captured(size_t *len)
{
	const char *dir = getenv("KVMSTAT_TEST_DATA");
	char path[PATH_MAX];
	FILE *f;
	char *buf = malloc(1 << 20);

	snprintf(path, sizeof(path), "%s/mtree/qemu-7.2-pc-tcg.txt",
		 dir && *dir ? dir : "tests/data");
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static void mt_is(const struct mtree *t, uint64_t gpa, const char *want)
{
	const char *got = mtree_name(t, gpa);

	if (!want)
		ck_assert_msg(!got, "%#llx: %s, want none",
			      (unsigned long long)gpa, got);
	else
		ck_assert_msg(got && !strcmp(got, want), "%#llx: %s, want %s",
			      (unsigned long long)gpa, got ? got : "(none)",
			      want);
}

START_TEST(test_captured)
{
	size_t len;
	char *text = mt_captured(&len);
	struct mtree t;

	ck_assert_int_eq(mtree_parse(&t, text, len), 0);
	/* the view of "memory" (FlatView #2), not SMM's copy before it */
	ck_assert_uint_eq(t.n, 23);
	mt_is(&t, 0xfebfb000, "virtio-pci-notify-virtio-net");
	mt_is(&t, 0xfebfbffc, "virtio-pci-notify-virtio-net");
	mt_is(&t, 0xfebfc014, "virtio-pci-common-virtio-blk");
	mt_is(&t, 0xfebc0010, "msix-table");
	mt_is(&t, 0xfec00000, "ioapic");
	mt_is(&t, 0xfed000f0, "hpet");
	mt_is(&t, 0xfed00400, NULL); /* just past it */
	mt_is(&t, 0xfee00300, "apic-msi");
	mt_is(&t, 0xc1000, "pc.ram"); /* " @00000000000c1000" cut */
	mt_is(&t, 0xffffffff, "pc.bios");
	mt_is(&t, 0xd0000000, NULL);
	mt_is(&t, 0x70, "pc.ram"); /* the I/O space's rtc-index is not it */
	mt_is(&t, UINT64_MAX, NULL);
	mtree_free(&t);
	/* cut anywhere: never more than the whole, never a crash */
	for (size_t n = 0; n <= len; n += 97) {
		ck_assert_int_ge(mtree_parse(&t, text, n), -ENOENT);
		ck_assert_uint_le(t.n, 23);
		mtree_name(&t, 0xfed00000);
		mtree_free(&t);
	}
	free(text);
}
END_TEST

START_TEST(test_kvm_style)
{
	/* as QEMU under KVM prints it: " KVM" per address space that maps
	 * the range as memory; names with spaces; no "memory" AS listed,
	 * the root "system" then decides */
	static const char text[] =
		"FlatView #0\n"
		" AS \"I/O\", root: io\n"
		" Root memory region: io\n"
		"  0000000000000070-0000000000000070 (prio 0, i/o): rtc-index\n"
		"\n"
		"FlatView #1\n"
		" AS \"cpu-memory-0\", root: system\n"
		" Root memory region: system\n"
		"  0000000000000000-000000000009ffff (prio 0, ram): pc.ram KVM KVM\n"
		"  00000000000a0000-00000000000bffff (prio 1, i/o): vga-lowmem\n"
		"  00000000fd000000-00000000fdffffff (prio 1, ram): vga.vram KVM\n"
		"  00000000fe000000-00000000fe000fff (prio 0, i/o): virtio-pci-common-virtio-net @0000000000000010 KVM\n"
		"  00000000febd0400-00000000febd041f (prio 0, i/o): vga ioports remapped\n"
		"  00000000febd0500-00000000febd0515 (prio 0, i/o): bochs dispi interface\r\n"
		"  00000000fed00000-00000000fed003ff (prio 0, i/o): \n"
		"  00000000fed01000-00000000fed00fff (prio 0, i/o): backwards\n"
		"  0000000000000000000-00000000000000001 (prio 0, i/o): too long\n"
		"  zz000000-00000001 (prio 0, i/o): not hex\n"
		"  00000000fed02000-00000000fed02fff prio 0, i/o: no parenthesis\n"
		"  00000000fed03000-00000000fed03fff (prio 0, i/o): \x1b[31mred\x07\n";
	struct mtree t;

	ck_assert_int_eq(mtree_parse(&t, text, sizeof(text) - 1), 0);
	mt_is(&t, 0x1000, "pc.ram");
	mt_is(&t, 0xa0000, "vga-lowmem");
	mt_is(&t, 0xfd001000, "vga.vram");
	mt_is(&t, 0xfe000004, "virtio-pci-common-virtio-net");
	mt_is(&t, 0xfebd0410, "vga ioports remapped");
	mt_is(&t, 0xfebd0500, "bochs dispi interface");
	mt_is(&t, 0x70, "pc.ram");   /* not the I/O space's */
	mt_is(&t, 0xfed00000, NULL); /* no name */
	mt_is(&t, 0xfed01000, NULL); /* ends before it starts */
	mt_is(&t, 0xfed02000, NULL); /* not a range line */
	/* printable ASCII only: a terminal's escapes do not get through */
	mt_is(&t, 0xfed03000, "?[31mred?");
	ck_assert_uint_eq(t.n, 7);
	mtree_free(&t);
}
END_TEST

START_TEST(test_not_a_tree)
{
	static const char *const texts[] = {
		"",
		"unknown command: 'info mtree'\r\n",
		"FlatView #0\n AS \"I/O\", root: io\n Root memory region: io\n"
		"  0000000000000000-0000000000000007 (prio 0, i/o): dma-chan\n",
		/* "memory" outside any view */
		" AS \"memory\", root: system\n"
		"  00000000fed00000-00000000fed003ff (prio 0, i/o): hpet\n",
	};
	struct mtree t;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		ck_assert_int_eq(mtree_parse(&t, texts[i], strlen(texts[i])),
				 -ENOENT);
		ck_assert_uint_eq(t.n, 0);
		ck_assert_ptr_null(mtree_name(&t, 0xfed00000));
		mtree_free(&t);
	}
}
END_TEST

START_TEST(test_bounds)
{
	/* a name past MTREE_NAME_MAX is cut; NULs inside the text are bytes
	 * like others; more than MTREE_MAX ranges keep the first */
	static const char head[] = "FlatView #0\n AS \"memory\", root: system\n";
	size_t cap = sizeof(head) + (MTREE_MAX + 10) * 80 + 200, len;
	char *text = malloc(cap), *p;
	struct mtree t;

	len = (size_t)snprintf(text, cap,
			       "%s  0000000000001000-0000000000001fff (prio 0, "
			       "i/o): %0200d\n",
			       head, 7);
	text[len++] = '\0'; /* a line of its own */
	text[len++] = '\n';
	len += (size_t)snprintf(text + len, cap - len,
				"  0000000000003000-0000000000003fff (prio 0, "
				"i/o): after\n");
	ck_assert_int_eq(mtree_parse(&t, text, len), 0);
	ck_assert_uint_eq(strlen(mtree_name(&t, 0x1000)), MTREE_NAME_MAX);
	mt_is(&t, 0x3000, "after");
	mtree_free(&t);

	p = text + snprintf(text, cap, "%s", head);
	for (int i = 0; i < MTREE_MAX + 10; i++)
		p += snprintf(p, (size_t)(text + cap - p),
			      "  %016x-%016x (prio 0, i/o): r%d\n", i * 16,
			      i * 16 + 15, i);
	ck_assert_int_eq(mtree_parse(&t, text, (size_t)(p - text)), 0);
	ck_assert_uint_eq(t.n, MTREE_MAX);
	mt_is(&t, 16 * 5 + 3, "r5");
	mt_is(&t, 16ull * MTREE_MAX, NULL);
	mtree_free(&t);
	free(text);
}
END_TEST

Suite *mtree_suite(void)
{
	Suite *s = suite_create("mtree");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_captured);
	tcase_add_test(tc, test_kvm_style);
	tcase_add_test(tc, test_not_a_tree);
	tcase_add_test(tc, test_bounds);
	suite_add_tcase(s, tc);
	return s;
}
