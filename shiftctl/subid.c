// SPDX-License-Identifier: GPL-2.0
/*
 * Subordinate ids and the maps of a mark made for a user (subid.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "subid.h"

/* One "NAME:START:COUNT" line of text into its fields; false if malformed. */
static bool subid_line(const char *line, size_t len, char *name, size_t nsize,
		       struct subid_range *r)
{
	const char *c1, *c2, *end = line + len;
	unsigned long long start, count;
	char num[32], *e;
	size_t n;

	c1 = memchr(line, ':', len);
	if (!c1 || (size_t)(c1 - line) >= nsize || c1 == line)
		return false;
	c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
	if (!c2)
		return false;
	memcpy(name, line, (size_t)(c1 - line));
	name[c1 - line] = '\0';
	n = (size_t)(c2 - c1 - 1);
	if (!n || n >= sizeof(num))
		return false;
	memcpy(num, c1 + 1, n);
	num[n] = '\0';
	errno = 0;
	start = strtoull(num, &e, 10);
	if (*e || errno || num[0] < '0' || num[0] > '9')
		return false;
	n = (size_t)(end - c2 - 1);
	if (!n || n >= sizeof(num))
		return false;
	memcpy(num, c2 + 1, n);
	num[n] = '\0';
	count = strtoull(num, &e, 10);
	if (*e || errno || num[0] < '0' || num[0] > '9' || !count ||
	    start + count > IDMAP_ID_LIMIT)
		return false;
	r->start = (uint32_t)start;
	r->count = (uint32_t)count;
	return true;
}

/* Each non-blank, non-comment line of text in turn: its start and length. */
static const char *next_line(const char *p, size_t *len)
{
	const char *nl;

	while (*p) {
		nl = strchr(p, '\n');
		*len = nl ? (size_t)(nl - p) : strlen(p);
		while (*len && (p[*len - 1] == ' ' || p[*len - 1] == '\t' ||
				p[*len - 1] == '\r'))
			(*len)--;
		if (*len && p[0] != '#')
			return p;
		p = nl ? nl + 1 : p + strlen(p);
	}
	return NULL;
}

int subid_lookup(const char *text, const char *file, const char *name,
		 uint32_t id, struct subid_range *r, char *err, size_t errsz)
{
	char who[256], num[16];
	const char *p = text;
	size_t len;
	int lineno = 0;

	snprintf(num, sizeof(num), "%u", id);
	while ((p = next_line(p, &len))) {
		const char *c = memchr(p, ':', len);
		size_t n = c ? (size_t)(c - p) : len;

		lineno++;
		if ((n == strlen(name) && !memcmp(p, name, n)) ||
		    (n == strlen(num) && !memcmp(p, num, n))) {
			if (!subid_line(p, len, who, sizeof(who), r))
				return idmap_errf(err, errsz, -EINVAL,
					"%s: %s's line '%.*s' is not NAME:START:COUNT",
					file, name, (int)len, p);
			return 0;
		}
		p += len;
	}
	return idmap_errf(err, errsz, -ENOENT,
			  "%s has no range for user %s (usermod --add-subuids, or useradd gives one)",
			  file, name);
}

int subid_user_map(const struct subid_range *r, bool own, uint32_t own_id,
		   struct idmap *map, char *err, size_t errsz)
{
	struct idmap_extent e[3];
	unsigned int n = 0, i;
	int ret;

	idmap_init(map);
	if (!own || own_id >= r->count) {
		e[n++] = (struct idmap_extent){ 0, r->start, r->count };
	} else {
		if (own_id)
			e[n++] = (struct idmap_extent){ 0, r->start, own_id };
		if (own_id + 1 < r->count)
			e[n++] = (struct idmap_extent){ own_id + 1,
				r->start + own_id + 1, r->count - own_id - 1 };
	}
	if (own)
		e[n++] = (struct idmap_extent){ own_id, own_id, 1 };
	for (i = 0; i < n; i++) {
		ret = idmap_add(map, &e[i], err, errsz);
		if (ret)
			return ret;
	}
	return 0;
}

int subid_owner(const char *text, const struct idmap *map, char *buf,
		size_t size)
{
	const char *p = text;
	struct subid_range r;
	unsigned int i, n;
	char who[256];
	size_t len;

	while ((p = next_line(p, &len))) {
		if (subid_line(p, len, who, sizeof(who), &r)) {
			for (i = n = 0; i < map->nr; i++) {
				const struct idmap_extent *e = &map->ext[i];

				if (e->from == e->to)
					continue;
				if (e->to < r.start ||
				    (uint64_t)e->to + e->count >
				    (uint64_t)r.start + r.count)
					break;
				n++;
			}
			if (i == map->nr && n) {
				snprintf(buf, size, "%s", who);
				return 0;
			}
		}
		p += len;
	}
	return -ENOENT;
}
