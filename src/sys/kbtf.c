// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's struct layouts from its BTF files (see include/kbtf.h):
 * libbpf parses vmlinux and a module's split BTF; members are looked up
 * by name here, through anonymous structs and unions, with their offsets
 * summed along a dotted path.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "kbtf.h"
#include "util.h"

struct kbtf {
	struct btf *base; /* vmlinux */
	struct btf *mod;  /* the module's, split on base; or NULL */
};

struct kbtf *kbtf_open(const char *dir, const char *module, int *err)
{
	struct kbtf *k = xcalloc(1, sizeof(*k));
	char path[PATH_MAX];

	if (!dir)
		dir = "/sys/kernel/btf";
	snprintf(path, sizeof(path), "%s/vmlinux", dir);
	k->base = btf__parse_raw(path);
	if (!k->base) {
		*err = errno ? -errno : -EINVAL;
		goto out_free;
	}
	if (module) {
		snprintf(path, sizeof(path), "%s/%s", dir, module);
		if (!access(path, F_OK)) {
			k->mod = btf__parse_raw_split(path, k->base);
			if (!k->mod) {
				*err = errno ? -errno : -EINVAL;
				goto out_base;
			}
		}
	}
	return k;

out_base:
	btf__free(k->base);
out_free:
	free(k);
	return NULL;
}

void kbtf_close(struct kbtf *k)
{
	if (!k)
		return;
	btf__free(k->mod);
	btf__free(k->base);
	free(k);
}

/* The id of struct name in b from id first up, or 0. */
static uint32_t kbtf_find_struct(const struct btf *b, uint32_t first,
				 const char *name)
{
	uint32_t n = btf__type_cnt(b);

	for (uint32_t id = first; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(b, id);

		if (btf_is_struct(t) &&
		    !strcmp(btf__name_by_offset(b, t->name_off), name))
			return id;
	}
	return 0;
}

/*
 * Member name of the struct or union t, looked for through its anonymous
 * structs and unions too: its type id in *type and its bit offset from t's
 * start in *bits. 0, -ENOENT, or -EINVAL for a bitfield.
 */
static int kbtf_find_member(const struct btf *b, const struct btf_type *t,
			    const char *name, uint32_t *type, uint32_t *bits)
{
	const struct btf_member *m = btf_members(t);

	for (uint16_t i = 0; i < btf_vlen(t); i++, m++) {
		const char *mname = btf__name_by_offset(b, m->name_off);
		uint32_t off = btf_member_bit_offset(t, i);
		const struct btf_type *a;
		int id;

		if (mname && *mname) {
			if (strcmp(mname, name))
				continue;
			if (btf_member_bitfield_size(t, i))
				return -EINVAL;
			*type = m->type;
			*bits = off;
			return 0;
		}
		/* an anonymous struct or union: its members are t's */
		id = btf__resolve_type(b, m->type);
		a = id > 0 ? btf__type_by_id(b, (uint32_t)id) : NULL;
		if (a && btf_is_composite(a) &&
		    !kbtf_find_member(b, a, name, type, bits)) {
			*bits += off;
			return 0;
		}
	}
	return -ENOENT;
}

int kbtf_member(const struct kbtf *k, const char *sname, const char *path,
		struct kbtf_member *out)
{
	const struct btf *b = k->mod ? k->mod : k->base;
	uint32_t id = 0, bits = 0;
	const struct btf_type *t;
	char comp[128];
	int rid, rc;

	if (k->mod)
		id = kbtf_find_struct(b, btf__type_cnt(k->base), sname);
	if (!id)
		id = kbtf_find_struct(b, 1, sname);
	if (!id)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	while (*path) {
		size_t len = strcspn(path, ".");
		uint32_t type, off;

		if (len >= sizeof(comp))
			return -ENOENT;
		memcpy(comp, path, len);
		comp[len] = '\0';
		path += len + (path[len] == '.');
		t = btf__type_by_id(b, id);
		if (!t || !btf_is_composite(t))
			return -EINVAL;
		rc = kbtf_find_member(b, t, comp, &type, &off);
		if (rc)
			return rc;
		bits += off;
		rid = btf__resolve_type(b, type);
		if (rid <= 0)
			return -EINVAL;
		id = (uint32_t)rid;
	}
	if (bits % 8)
		return -EINVAL;
	t = btf__type_by_id(b, id);
	rid = btf__resolve_size(b, id);
	if (!t || rid < 0)
		return -EINVAL;
	out->offset = bits / 8;
	out->size = (uint32_t)rid;
	out->type = btf__name_by_offset(b, t->name_off);
	if (!out->type)
		out->type = "";
	out->integer = (btf_is_int(t) || btf_is_enum(t)) &&
		       (rid == 1 || rid == 2 || rid == 4 || rid == 8);
	if (btf_is_ptr(t)) {
		rid = btf__resolve_type(b, t->type);
		t = rid > 0 ? btf__type_by_id(b, rid) : NULL;
		if (t && btf_is_composite(t) && t->name_off)
			out->pointee = btf__name_by_offset(b, t->name_off);
	}
	return 0;
}
