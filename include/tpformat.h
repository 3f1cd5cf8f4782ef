/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Parser for tracefs event "format" files (events/<system>/<event>/format):
 * the event's name and id, the layout of its records (one struct tp_field per
 * "field:" line) and the __print_symbolic() tables of its "print fmt", which
 * name the values of fields such as kvm_exit's exit_reason. Tables that sit
 * in a branch of "(REC->isa == 1) ? ... : ..." carry that guard, so a caller
 * can pick the VMX or the SVM names.
 *
 * Ownership: a struct tp_format and everything it points to belong to it and
 * are released by tp_format_free(); pointers returned by the lookup helpers
 * stay valid until then.
 */
#ifndef KVMSTAT_TPFORMAT_H
#define KVMSTAT_TPFORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One "field:" line of the format. */
struct tp_field {
	char *name; /* "exit_reason"; an array suffix like "[16]" is dropped */
	char *type; /* the declaration without the name: "unsigned int",
				 * "char[16]", "__data_loc char[]" */
	unsigned int offset; /* bytes from the start of the record */
	unsigned int size;   /* bytes; for an array, of the whole array */
	bool is_signed;
};

struct tp_symbol {
	uint64_t value;
	char *name; /* concatenated literals resolved: "KVM_EXIT_HLT" */
};

/* One __print_symbolic(REC->field [& mask], { value, "name" }, ...) table. */
struct tp_symtab {
	char *field;		 /* the field it decodes: "exit_reason" */
	unsigned int field_size; /* that field's size, 0 if the format lacks it */
	uint64_t mask;		 /* "& 0xffff" on the field, else ~0ULL */
	char *guard_field;	 /* "isa" for a table under "(REC->isa == 1) ?",
				 * NULL when no "REC->f == const" guard applies */
	int64_t guard_value;	 /* 1 in that example */
	bool guard_negated;	 /* applies when guard_field != guard_value: the
				 * ':' branch of "==", the '?' branch of "!=" */
	char *prefix; /* first literal when every name is a concatenation
				 * starting with the same one ("KVM_EXIT_"), else NULL */
	size_t nsyms;
	struct tp_symbol *syms; /* in the order of the print fmt */
};

struct tp_format {
	char *name; /* "kvm_exit" */
	int id;	    /* tracepoint id, for perf_event_attr.config */
	size_t nfields;
	struct tp_field *fields; /* in file order, common_* fields included */
	size_t ntabs;
	struct tp_symtab *tabs; /* in print fmt order */
};

/*
 * Parses the len bytes at text (no NUL terminator needed). Symbol values are
 * integer constant expressions (decimal, hex, octal, binary literals, unary
 * - ~ ! +, binary * / % + - << >> < > <= >= == != & ^ | && ||, parentheses)
 * evaluated in 64-bit unsigned arithmetic, then cut to the decoded field's
 * size when the format has that field: "-1" for a 4-byte field is 0xffffffff.
 * Entries whose value names an identifier (an enum the kernel left
 * unresolved) or a cast, or whose name is not string literals ("{ -1, 0 }"),
 * are left out; so is a table left with no symbol, or whose first argument
 * is not "REC->f", "REC->f & const" or "const & REC->f" (maybe in
 * parentheses).
 * Returns a new format, or NULL with *err (if err is not NULL) set to -EINVAL
 * for malformed text. The caller frees it with tp_format_free().
 */
struct tp_format *tp_format_parse(const char *text, size_t len, int *err);

/*
 * Reads and parses the format file at path into *out (NULL on error); 0 or
 * -errno: open/read errors, -EFBIG past 64 MiB, then as tp_format_parse.
 */
int tp_format_load(const char *path, struct tp_format **out);

void tp_format_free(struct tp_format *f);

/* The field called name, or NULL. */
const struct tp_field *tp_format_field(const struct tp_format *f,
				       const char *name);

/* The first table decoding field, whatever its guard, or NULL. */
const struct tp_symtab *tp_format_symtab(const struct tp_format *f,
					 const char *field);

/*
 * The first table decoding field that applies when its guard field holds
 * guard_value (see tp_symtab_applies), or NULL.
 */
const struct tp_symtab *tp_format_symtab_for(const struct tp_format *f,
					     const char *field,
					     int64_t guard_value);

/* Whether t applies when its guard field holds guard_value; unguarded: true. */
bool tp_symtab_applies(const struct tp_symtab *t, int64_t guard_value);

/*
 * The name of raw_value (the field as read from a record) in t, after the
 * table's mask and the field's size are applied, or NULL if t has none.
 */
const char *tp_symtab_name(const struct tp_symtab *t, uint64_t raw_value);

/* The symbol called name in t, or NULL. */
const struct tp_symbol *tp_symtab_find(const struct tp_symtab *t,
				       const char *name);

/*
 * Editing a parsed format, for callers that complete or rename the kernel's
 * tables (arch_name_reasons). tp_format_add_symtab() appends an empty,
 * unguarded table decoding field through mask (field_size from the format's
 * field) and returns it; it may move f->tabs, so earlier pointers into it
 * are stale. tp_format_drop_symtab() removes table i, moving the later ones
 * down. tp_symtab_set() gives value (as tp_symtab_name() looks it up) the
 * name name: the first symbol of that value is renamed, else one is added.
 */
struct tp_symtab *tp_format_add_symtab(struct tp_format *f, const char *field,
				       uint64_t mask);
void tp_format_drop_symtab(struct tp_format *f, size_t i);
void tp_symtab_set(struct tp_symtab *t, uint64_t value, const char *name);

#endif
