// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statsfd provider's layouts (statsfd_int.h): each parsed stats-fd
 * schema (statsfd_format.h) is bound once to the fields it feeds, shared
 * by every file of the same layout; the kernel's two layouts (VM and
 * vCPU) are read at open from a scratch VM of our own.
 */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "errmsg.h"
#include "hist.h"
#include "provider.h"
#include "reading.h"
#include "sample.h"
#include "statsfd_format.h"
#include "statsfd_int.h"
#include "util.h"

/* The local index of a field, added when new. */
static int sfd_local_add(struct sfd_priv *d, int field, enum field_type type)
{
	/* new entries -1 (every byte 0xff): no local index yet */
	d->local_of = xgrow_index(d->local_of, &d->nlocal_of, (size_t)field,
				  sizeof(*d->local_of), 0xff);
	if (d->local_of[field] >= 0)
		return d->local_of[field];
	if (d->nlocals == d->caplocals) {
		d->caplocals = d->caplocals ? d->caplocals * 2 : 128;
		d->locals = xrealloc(d->locals,
				     d->caplocals * sizeof(*d->locals));
		d->val = xrealloc(d->val, d->caplocals * sizeof(*d->val));
		d->vmval = xrealloc(d->vmval, d->caplocals * sizeof(*d->vmval));
		d->vcval = xrealloc(d->vcval, d->caplocals * sizeof(*d->vcval));
		d->retired = xrealloc(d->retired,
				      d->caplocals * sizeof(*d->retired));
	}
	d->retired[d->nlocals] = (struct reading){ 0 };
	d->locals[d->nlocals] = (struct sfd_local){ field, type };
	d->local_of[field] = (int)d->nlocals;
	return (int)d->nlocals++;
}

/* Sets a field's unit from its descriptor, and the flag of KVM's count of
 * every exit. */
static void sfd_field_units(struct field_info *f, const struct statsfd_desc *dsc)
{
	f->unit = dsc->unit;
	f->exponent = dsc->exponent;
	f->base = dsc->base;
	if (!strcmp(dsc->name, FIELD_KVM_EXITS))
		f->flags |= FIELD_EXITS;
}

/* Whether this provider counts the stat or, for a histogram, one bucket:
 * the filter keeps it and no other provider owns it. */
static bool sfd_desc_wanted(const struct provider *p,
			    const struct statsfd_desc *dsc)
{
	char name[STATSFD_NAME_SIZE_MAX + 16];

	if (provider_wants(p, dsc->name))
		return true;
	if (dsc->hist == HIST_NONE)
		return false;
	for (unsigned int k = 0; k < dsc->size; k++) {
		snprintf(name, sizeof(name), "%s(%u)", dsc->name, k);
		if (provider_wants(p, name))
			return true;
	}
	return false;
}

/* Interns a histogram's parent and buckets; bucket k's item (from
 * items[k]) gets its local index. */
static void sfd_bind_hist(struct provider *p, const struct statsfd_desc *dsc,
			  struct sfd_item *items)
{
	struct sfd_priv *d = p->priv;
	char name[STATSFD_NAME_SIZE_MAX + 16];
	struct field_info *f;
	int parent, id;

	parent = field_table_intern(p->fields, dsc->name, -1, FIELD_CUMULATIVE,
				    "statsfd");
	f = field_table_info(p->fields, parent);
	sfd_field_units(f, dsc);
	f->hist = dsc->hist;
	for (unsigned int k = 0; k < dsc->size; k++) {
		snprintf(name, sizeof(name), "%s(%u)", dsc->name, k);
		id = field_table_intern(p->fields, name, parent,
					FIELD_CUMULATIVE, "statsfd");
		f = field_table_info(p->fields, id);
		sfd_field_units(f, dsc);
		f->bucket = (int)k;
		hist_bucket_range(dsc->hist, dsc->bucket_size, k, dsc->size,
				  &f->bucket_lo, &f->bucket_hi);
		items[k].local = sfd_local_add(d, id, FIELD_CUMULATIVE);
		items[k].type = FIELD_CUMULATIVE;
	}
}

static int sfd_item_cmp(const void *a, const void *b)
{
	const struct sfd_item *x = a, *y = b;

	return (x->off > y->off) - (x->off < y->off);
}

/*
 * Interns the fields of a new schema's wanted stats, and lists their
 * items in data order with the range of the data block they lie in (the
 * bytes a refresh reads).
 */
static struct sfd_schema *sfd_schema_bind(struct provider *p,
					  struct statsfd_schema *s)
{
	struct sfd_priv *d = p->priv;
	struct sfd_schema *sc = xcalloc(1, sizeof(*sc));
	bool *want = xcalloc(s->num_desc ? s->num_desc : 1, sizeof(*want));
	size_t n = 0;

	sc->s = s;
	for (uint32_t i = 0; i < s->num_desc; i++) {
		const struct statsfd_desc *dsc = &s->desc[i];

		want[i] = dsc->skip == STATSFD_USE && sfd_desc_wanted(p, dsc);
		if (want[i])
			sc->nitem += dsc->size;
	}
	sc->item = xmalloc((sc->nitem ? sc->nitem : 1) * sizeof(*sc->item));
	for (uint32_t i = 0; i < s->num_desc; i++) {
		const struct statsfd_desc *dsc = &s->desc[i];
		struct sfd_item *it = sc->item + n;
		int id;

		if (!want[i])
			continue;
		for (unsigned int k = 0; k < dsc->size; k++)
			it[k].off = dsc->offset +
				    k * (uint32_t)sizeof(uint64_t);
		n += dsc->size;
		if (dsc->hist != HIST_NONE) {
			sfd_bind_hist(p, dsc, it);
			continue;
		}
		id = field_table_intern(p->fields, dsc->name, -1, dsc->type,
					"statsfd");
		sfd_field_units(field_table_info(p->fields, id), dsc);
		it->local = sfd_local_add(d, id, dsc->type);
		it->type = dsc->type;
	}
	free(want);
	/* descriptors come in any offset order: reading in data order
	 * walks the range forwards */
	qsort(sc->item, sc->nitem, sizeof(*sc->item), sfd_item_cmp);
	if (sc->nitem) {
		sc->lo = sc->item[0].off;
		sc->hi = sc->item[sc->nitem - 1].off +
			 (uint32_t)sizeof(uint64_t);
	}
	for (size_t k = 0; k < sc->nitem; k++)
		sc->item[k].off -= sc->lo;
	d->schemas = xrealloc(d->schemas,
			      (d->nschemas + 1) * sizeof(*d->schemas));
	d->schemas[d->nschemas++] = sc;
	return sc;
}

/* The shared schema for a file just parsed (s is consumed). */
struct sfd_schema *sfd_schema_get(struct provider *p, struct statsfd_schema *s)
{
	struct sfd_priv *d = p->priv;

	for (size_t i = 0; i < d->nschemas; i++) {
		if (statsfd_schema_equal(d->schemas[i]->s, s)) {
			statsfd_schema_free(s);
			return d->schemas[i];
		}
	}
	return sfd_schema_bind(p, s);
}

void sfd_schema_free(struct sfd_schema *sc)
{
	statsfd_schema_free(sc->s);
	free(sc->item);
	free(sc);
}

int sfd_file_fetch(const struct sfd_schema *sc, int fd, void *buf)
{
	return statsfd_data_read_range(fd, sc->s, sc->lo, sc->hi, buf);
}

/* Reads the layout of the stats fd made by ioctl req on fd and binds it. */
static void sfd_scratch_schema(struct provider *p, int fd)
{
	struct statsfd_schema *s;
	struct errmsg err;
	int sfd = ioctl(fd, KVM_GET_STATS_FD, NULL);

	if (sfd < 0)
		return;
	if (!statsfd_schema_read(sfd, &s, &err))
		sfd_schema_get(p, s);
	close(sfd);
}

/*
 * The fields of the kernel's binary stats before any VM runs, so that
 * the first sample already has every one (the log's columns are fixed
 * then): a scratch VM and vCPU of our own, made through /dev/kvm, give
 * the kernel's two layouts. Without /dev/kvm access the fields come with
 * the first VM, as before.
 */
void sfd_schema_at_start(struct provider *p)
{
	int kvm, vm, vcpu;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return;
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm >= 0) {
		sfd_scratch_schema(p, vm);
		vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
		if (vcpu >= 0) {
			sfd_scratch_schema(p, vcpu);
			close(vcpu);
		}
		close(vm);
	}
	close(kvm);
}
