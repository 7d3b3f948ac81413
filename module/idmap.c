// SPDX-License-Identifier: GPL-2.0
/*
 * uidmap=/gidmap= extents: parsing, validation and lookup.
 *
 * The map must be a bijection between underlying ids and the ids shown in
 * the mount, or a write through the mount could not be mapped back to the
 * id it was read as.  Hence the refusals of overlaps on either side, of
 * empty extents and of extents reaching (u32)-1, which is no id at all.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/fs_context.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include "shiftfs.h"

/* A decimal u32 with no sign, blanks or trailing newline. */
static const char *shiftfs_parse_u32(const char *s, u32 *out)
{
	u64 v = 0;

	if (*s < '0' || *s > '9')
		return NULL;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (*s - '0');
		if (v > U32_MAX)
			return NULL;
		s++;
	}
	*out = v;
	return s;
}

static bool shiftfs_ranges_overlap(u32 a, u32 b, u32 count_a, u32 count_b)
{
	return (u64)a < (u64)b + count_b && (u64)b < (u64)a + count_a;
}

int shiftfs_map_add(struct fs_context *fc, struct shiftfs_map_spec *spec,
		    const char *name, const char *value)
{
	struct shiftfs_extent new, *e;
	const char *p = value;
	unsigned int i;

	p = shiftfs_parse_u32(p, &new.lower);
	if (p && *p == ':')
		p = shiftfs_parse_u32(p + 1, &new.upper);
	else
		p = NULL;
	if (p && *p == ':')
		p = shiftfs_parse_u32(p + 1, &new.count);
	else
		p = NULL;
	if (!p || *p)
		return invalfc(fc, "%s: malformed extent \"%s\", expected FROM:TO:COUNT",
			       name, value);
	if (!new.count)
		return invalfc(fc, "%s: extent \"%s\" has COUNT 0", name, value);
	/* (u32)-1 is the invalid id: no extent may reach it. */
	if ((u64)new.lower + new.count > U32_MAX ||
	    (u64)new.upper + new.count > U32_MAX)
		return invalfc(fc, "%s: extent \"%s\" wraps around past %u",
			       name, value, U32_MAX - 1);
	if (spec->nr >= SHIFTFS_MAX_EXTENTS)
		return invalfc(fc, "%s: too many extents (at most %u)", name,
			       SHIFTFS_MAX_EXTENTS);
	for (i = 0; i < spec->nr; i++) {
		e = &spec->ext[i];
		if (shiftfs_ranges_overlap(new.lower, e->lower, new.count,
					   e->count))
			return invalfc(fc, "%s: extent \"%s\" overlaps %u:%u:%u in underlying ids",
				       name, value, e->lower, e->upper,
				       e->count);
		if (shiftfs_ranges_overlap(new.upper, e->upper, new.count,
					   e->count))
			return invalfc(fc, "%s: extent \"%s\" overlaps %u:%u:%u in mount ids",
				       name, value, e->lower, e->upper,
				       e->count);
	}
	spec->ext[spec->nr++] = new;
	return 0;
}

static int shiftfs_cmp_lower(const void *a, const void *b)
{
	const struct shiftfs_extent *x = a, *y = b;

	return x->lower < y->lower ? -1 : x->lower > y->lower;
}

static int shiftfs_cmp_upper(const void *a, const void *b)
{
	const struct shiftfs_extent *x = a, *y = b;

	return x->upper < y->upper ? -1 : x->upper > y->upper;
}

int shiftfs_map_build(struct shiftfs_idmap_tbl *tbl,
		      const struct shiftfs_map_spec *spec)
{
	size_t size = spec->nr * sizeof(struct shiftfs_extent);

	tbl->nr = spec->nr;
	tbl->by_lower = NULL;
	tbl->by_upper = NULL;
	if (!spec->nr)
		return 0;
	tbl->by_lower = kmemdup(spec->ext, size, GFP_KERNEL);
	tbl->by_upper = kmemdup(spec->ext, size, GFP_KERNEL);
	if (!tbl->by_lower || !tbl->by_upper) {
		shiftfs_map_free(tbl);
		return -ENOMEM;
	}
	sort(tbl->by_lower, tbl->nr, sizeof(*tbl->by_lower),
	     shiftfs_cmp_lower, NULL);
	sort(tbl->by_upper, tbl->nr, sizeof(*tbl->by_upper),
	     shiftfs_cmp_upper, NULL);
	return 0;
}

void shiftfs_map_free(struct shiftfs_idmap_tbl *tbl)
{
	kfree(tbl->by_lower);
	kfree(tbl->by_upper);
	tbl->by_lower = NULL;
	tbl->by_upper = NULL;
	tbl->nr = 0;
}

/*
 * Binary search of @tbl sorted by the lower (@up) or upper id; open-coded
 * rather than bsearch(), whose comparator is an indirect call.
 */
static const struct shiftfs_extent *
shiftfs_map_search(const struct shiftfs_extent *ext, unsigned int nr, u32 id,
		   bool up)
{
	unsigned int lo = 0, hi = nr;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		const struct shiftfs_extent *e = &ext[mid];
		u32 first = up ? e->lower : e->upper;

		if (id < first)
			hi = mid;
		else if (id - first >= e->count)
			lo = mid + 1;
		else
			return e;
	}
	return NULL;
}

/* Order does not matter: a remount may list the same extents reordered. */
bool shiftfs_map_equal(const struct shiftfs_idmap_tbl *tbl,
		       const struct shiftfs_map_spec *spec)
{
	const struct shiftfs_extent *e, *t;
	unsigned int i;

	if (tbl->nr != spec->nr)
		return false;
	/* Both sides are free of overlaps, so equal counts + inclusion do. */
	for (i = 0; i < spec->nr; i++) {
		e = &spec->ext[i];
		t = shiftfs_map_search(tbl->by_lower, tbl->nr, e->lower,
				       true);
		if (!t || t->lower != e->lower || t->upper != e->upper ||
		    t->count != e->count)
			return false;
	}
	return true;
}

u32 shiftfs_map_up_search(const struct shiftfs_idmap_tbl *tbl, u32 id)
{
	const struct shiftfs_extent *e;

	e = shiftfs_map_search(tbl->by_lower, tbl->nr, id, true);
	return e ? e->upper + (id - e->lower) : (u32)-1;
}

u32 shiftfs_map_down_search(const struct shiftfs_idmap_tbl *tbl, u32 id)
{
	const struct shiftfs_extent *e;

	e = shiftfs_map_search(tbl->by_upper, tbl->nr, id, false);
	return e ? e->lower + (id - e->upper) : (u32)-1;
}

void shiftfs_map_show(struct seq_file *m, const char *name,
		      const struct shiftfs_idmap_tbl *tbl)
{
	unsigned int i;

	for (i = 0; i < tbl->nr; i++)
		seq_printf(m, ",%s=%u:%u:%u", name, tbl->by_lower[i].lower,
			   tbl->by_lower[i].upper, tbl->by_lower[i].count);
}
