// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness for tracefs event format files: each input is the whole
 * text of a format file, parsed as kvmstat parses events/kvm/<event>/format.
 * A format that parses must answer every lookup on its fields and tables,
 * and then be named for the x86 child sources (kvm_exit's exit_reason,
 * kvm_userspace_exit's reason) with the ISA the first byte picks (VMX, SVM
 * or unknown), the way the tracepoint provider names children: that leaves
 * at most one table of the source's field, with a name for each symbol.
 * The first byte picks the ISA (and is dropped) only when the input does
 * not start with a format's "name:" line, so that seeds of real format
 * files parse as they are; for those the length picks it.
 * Build and run: see the Makefile's fuzz target (clang
 * -fsanitize=fuzzer,address,undefined).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "tpformat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every lookup the provider makes, on whatever the parser returned. */
static void fuzz_lookups(const struct tp_format *f)
{
	for (size_t i = 0; i < f->nfields; i++) {
		if (!f->fields[i].name || !f->fields[i].type)
			abort();
		if (tp_format_field(f, f->fields[i].name) == NULL)
			abort();
	}
	for (size_t i = 0; i < f->ntabs; i++) {
		const struct tp_symtab *t = &f->tabs[i];

		if (!t->field || !t->nsyms || !tp_format_symtab(f, t->field))
			abort();
		(void)tp_format_symtab_for(f, t->field, t->guard_value);
		(void)tp_symtab_applies(t, 1);
		for (size_t j = 0; j < t->nsyms; j++) {
			if (!t->syms[j].name ||
			    !tp_symtab_find(t, t->syms[j].name))
				abort();
			(void)tp_symtab_name(t, t->syms[j].value);
		}
	}
}

/* Names the children of src in f for isa, as the tracepoint provider does. */
static void fuzz_name(const struct tp_format *orig, const char *text,
		      size_t len, const struct arch_source *src,
		      const char *isa)
{
	struct tp_format *f = tp_format_parse(text, len, NULL);
	size_t n = 0;

	if (!f || !orig)
		abort(); /* the same text parsed once already */
	arch_name_reasons(&arch_x86_desc, src, isa, f);
	for (size_t i = 0; i < f->ntabs; i++)
		if (!strcmp(f->tabs[i].field, src->field))
			n++;
	if (n > 1)
		abort();
	fuzz_lookups(f);
	tp_format_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const isas[] = { "vmx", "svm", NULL };
	const char *text = (const char *)data;
	const char *isa = NULL;
	struct tp_format *f;
	int err = 0;

	if (size && strncmp(text, "name:", size < 5 ? size : 5)) {
		isa = isas[data[0] % 3];
		text++;
		size--;
	} else {
		isa = isas[size % 3];
	}
	f = tp_format_parse(text, size, &err);
	if (!f) {
		if (err >= 0)
			abort();
		return 0;
	}
	if (err)
		abort();
	fuzz_lookups(f);
	for (size_t i = 0; arch_x86_desc.sources[i]; i++)
		fuzz_name(f, text, size, arch_x86_desc.sources[i], isa);
	tp_format_free(f);
	return 0;
}
