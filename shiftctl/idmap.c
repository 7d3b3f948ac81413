// SPDX-License-Identifier: GPL-2.0
/*
 * Id-map parsing, checking and formatting for shiftctl (no system calls).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"

struct span {
	const char *s;
	size_t len;
};

int idmap_errf(char *err, size_t errsz, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errsz) {
		va_start(ap, fmt);
		vsnprintf(err, errsz, fmt, ap);
		va_end(ap);
	}
	return ret;
}

const char *idmap_kind_name(enum idmap_kind kind)
{
	return kind == IDMAP_UID ? "uidmap" : "gidmap";
}

void idmap_init(struct idmap *map)
{
	map->nr = 0;
}

/* Strict decimal: no sign, no blanks, no base prefix, at most 2^32-1. */
static int parse_id(struct span f, const char *field, uint32_t *out,
		    char *why, size_t whysz)
{
	uint64_t n = 0;
	size_t i;

	if (f.len == 0)
		return idmap_errf(why, whysz, -EINVAL, "%s is empty", field);
	if (f.s[0] == '-')
		return idmap_errf(why, whysz, -EINVAL, "%s '%.*s' is negative",
			    field, (int)f.len, f.s);
	for (i = 0; i < f.len; i++) {
		if (f.s[i] < '0' || f.s[i] > '9')
			return idmap_errf(why, whysz, -EINVAL,
				    "%s '%.*s' is not a number",
				    field, (int)f.len, f.s);
		n = n * 10 + (uint64_t)(f.s[i] - '0');
		if (n > IDMAP_ID_LIMIT)
			return idmap_errf(why, whysz, -ERANGE,
				    "%s '%.*s' is larger than %llu",
				    field, (int)f.len, f.s, IDMAP_ID_LIMIT);
	}
	*out = (uint32_t)n;
	return 0;
}

static int check_extent(const struct idmap_extent *e, const char *names[3],
			char *why, size_t whysz)
{
	if (e->count == 0)
		return idmap_errf(why, whysz, -EINVAL, "%s is 0", names[2]);
	if ((uint64_t)e->from + e->count > IDMAP_ID_LIMIT)
		return idmap_errf(why, whysz, -ERANGE, "%s+%s runs past %llu",
			    names[0], names[2], IDMAP_ID_LIMIT);
	if ((uint64_t)e->to + e->count > IDMAP_ID_LIMIT)
		return idmap_errf(why, whysz, -ERANGE, "%s+%s runs past %llu",
			    names[1], names[2], IDMAP_ID_LIMIT);
	return 0;
}

static int fields_to_extent(const struct span f[3], const char *names[3],
			    struct idmap_extent *e, char *why, size_t whysz)
{
	uint32_t v[3];
	int i, ret;

	for (i = 0; i < 3; i++) {
		ret = parse_id(f[i], names[i], &v[i], why, whysz);
		if (ret)
			return ret;
	}
	e->from = v[0];
	e->to = v[1];
	e->count = v[2];
	return check_extent(e, names, why, whysz);
}

static const char *opt_names[3] = { "FROM", "TO", "COUNT" };
static const char *proc_names[3] = { "INSIDE", "OUTSIDE", "COUNT" };

/* Split "F:T:C" into exactly three fields. */
static int split_colons(const char *s, struct span f[3], char *why,
			size_t whysz)
{
	const char *p = s, *c;
	int n = 0;

	for (;;) {
		c = strchr(p, ':');
		if (n < 3) {
			f[n].s = p;
			f[n].len = c ? (size_t)(c - p) : strlen(p);
		}
		n++;
		if (!c)
			break;
		p = c + 1;
	}
	if (n < 3)
		return idmap_errf(why, whysz, -EINVAL,
			    "too few fields (want FROM:TO:COUNT)");
	if (n > 3)
		return idmap_errf(why, whysz, -EINVAL,
			    "too many fields (want FROM:TO:COUNT)");
	return 0;
}

int idmap_parse_extent(const char *s, struct idmap_extent *ext,
		       char *err, size_t errsz)
{
	struct span f[3];
	char why[160];
	int ret;

	ret = split_colons(s, f, why, sizeof(why));
	if (!ret)
		ret = fields_to_extent(f, opt_names, ext, why, sizeof(why));
	if (ret)
		return idmap_errf(err, errsz, ret, "'%s': %s", s, why);
	return 0;
}

static bool ranges_overlap(uint32_t a, uint32_t b, uint32_t count_a,
			   uint32_t count_b)
{
	return (uint64_t)a < (uint64_t)b + count_b &&
	       (uint64_t)b < (uint64_t)a + count_a;
}

int idmap_add(struct idmap *map, const struct idmap_extent *ext,
	      char *err, size_t errsz)
{
	const struct idmap_extent *o;
	unsigned int i;

	for (i = 0; i < map->nr; i++) {
		o = &map->ext[i];
		if (ranges_overlap(ext->from, o->from, ext->count, o->count))
			return idmap_errf(err, errsz, -EINVAL,
				    "%u:%u:%u overlaps %u:%u:%u (underlying ids)",
				    ext->from, ext->to, ext->count,
				    o->from, o->to, o->count);
		if (ranges_overlap(ext->to, o->to, ext->count, o->count))
			return idmap_errf(err, errsz, -EINVAL,
				    "%u:%u:%u overlaps %u:%u:%u (shifted ids)",
				    ext->from, ext->to, ext->count,
				    o->from, o->to, o->count);
	}
	if (map->nr >= IDMAP_MAX_EXTENTS)
		return idmap_errf(err, errsz, -E2BIG,
			    "%u:%u:%u: more than %d extents",
			    ext->from, ext->to, ext->count, IDMAP_MAX_EXTENTS);
	map->ext[map->nr++] = *ext;
	return 0;
}

int idmap_add_string(struct idmap *map, enum idmap_kind kind, const char *s,
		     char *err, size_t errsz)
{
	struct idmap_extent e;
	char why[256];
	int ret;

	ret = idmap_parse_extent(s, &e, why, sizeof(why));
	if (!ret)
		ret = idmap_add(map, &e, why, sizeof(why));
	if (ret)
		return idmap_errf(err, errsz, ret, "%s %s", idmap_kind_name(kind),
			    why);
	return 0;
}

/* Fields of one uid_map line, separated by blanks (the kernel pads). */
static int split_blanks(const char *s, size_t len, struct span f[3],
			char *why, size_t whysz)
{
	size_t i = 0, start;
	int n = 0;

	for (;;) {
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && s[i] != ' ' && s[i] != '\t')
			i++;
		if (n < 3) {
			f[n].s = s + start;
			f[n].len = i - start;
		}
		n++;
	}
	if (n < 3)
		return idmap_errf(why, whysz, -EINVAL,
			    "too few fields (want INSIDE OUTSIDE COUNT)");
	if (n > 3)
		return idmap_errf(why, whysz, -EINVAL,
			    "too many fields (want INSIDE OUTSIDE COUNT)");
	return 0;
}

static bool blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

int idmap_parse_proc(struct idmap *map, const char *text, const char *name,
		     char *err, size_t errsz)
{
	const char *line = text, *nl;
	struct idmap_extent e;
	struct span f[3];
	char why[256];
	unsigned int lineno = 0;
	size_t len;
	int ret;

	idmap_init(map);
	while (*line) {
		nl = strchr(line, '\n');
		len = nl ? (size_t)(nl - line) : strlen(line);
		lineno++;
		if (!blank(line, len)) {
			ret = split_blanks(line, len, f, why, sizeof(why));
			if (!ret)
				ret = fields_to_extent(f, proc_names, &e, why,
						       sizeof(why));
			if (!ret)
				ret = idmap_add(map, &e, why, sizeof(why));
			if (ret)
				return idmap_errf(err, errsz, ret,
					    "%s line %u '%.*s': %s", name,
					    lineno, (int)len, line, why);
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	if (map->nr == 0)
		return idmap_errf(err, errsz, -ENODATA,
			    "%s is empty (no map written for this user namespace yet)",
			    name);
	return 0;
}

bool idmap_is_identity(const struct idmap *map)
{
	return map->nr == 1 && map->ext[0].from == 0 && map->ext[0].to == 0 &&
	       map->ext[0].count == IDMAP_ID_LIMIT;
}

int idmap_derive(const char *uid_text, const char *gid_text,
		 bool allow_identity, const char *what,
		 struct idmap *uid, struct idmap *gid, char *err, size_t errsz)
{
	char name[128];
	int ret;

	snprintf(name, sizeof(name), "%s uid_map", what);
	ret = idmap_parse_proc(uid, uid_text, name, err, errsz);
	if (ret)
		return ret;
	snprintf(name, sizeof(name), "%s gid_map", what);
	ret = idmap_parse_proc(gid, gid_text, name, err, errsz);
	if (ret)
		return ret;
	if (!allow_identity && (idmap_is_identity(uid) || idmap_is_identity(gid)))
		return idmap_errf(err, errsz, -EINVAL,
			    "%s is not in a user namespace (its %s is the identity 0 0 4294967295); "
			    "use --allow-identity to accept it",
			    what, idmap_is_identity(uid) ? "uid_map" : "gid_map");
	return 0;
}

static size_t append_map(char *buf, size_t off, const struct idmap *map,
			 enum idmap_kind kind)
{
	unsigned int i;

	for (i = 0; i < map->nr; i++)
		off += (size_t)sprintf(buf + off, "%s%s=%u:%u:%u",
				       off ? "," : "", idmap_kind_name(kind),
				       map->ext[i].from, map->ext[i].to,
				       map->ext[i].count);
	return off;
}

char *idmap_format_options(const struct idmap *uid, const struct idmap *gid)
{
	/* "gidmap=" + 3 * 10 digits + 2 colons + comma */
	const size_t per = 7 + 30 + 2 + 1;
	size_t off = 0;
	char *buf;

	buf = malloc((uid->nr + gid->nr) * per + 1);
	if (!buf)
		return NULL;
	buf[0] = '\0';
	off = append_map(buf, off, uid, IDMAP_UID);
	append_map(buf, off, gid, IDMAP_GID);
	return buf;
}

int idmap_parse_options(const char *opts, struct idmap *uid,
			struct idmap *gid, char *err, size_t errsz)
{
	char *copy, *tok, *save = NULL;
	int ret = 0;

	idmap_init(uid);
	idmap_init(gid);
	copy = strdup(opts);
	if (!copy)
		return idmap_errf(err, errsz, -ENOMEM, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strncmp(tok, "uidmap=", 7))
			ret = idmap_add_string(uid, IDMAP_UID, tok + 7, err,
					       errsz);
		else if (!strncmp(tok, "gidmap=", 7))
			ret = idmap_add_string(gid, IDMAP_GID, tok + 7, err,
					       errsz);
		if (ret)
			break;
	}
	free(copy);
	return ret;
}

int64_t idmap_map(const struct idmap *map, uint32_t from)
{
	const struct idmap_extent *e;
	unsigned int i;

	for (i = 0; i < map->nr; i++) {
		e = &map->ext[i];
		if (from >= e->from && (uint64_t)from < (uint64_t)e->from + e->count)
			return (int64_t)e->to + (from - e->from);
	}
	return -1;
}

/*
 * The kernel's rule for a mount from a mark (module/mark.c,
 * shiftfs_extent_allowed()): every extent of map lies inside the mark at
 * one offset (TO - FROM), in one extent of the mark or across adjacent
 * extents with that offset.
 */
static bool extent_allowed(const struct idmap *mark, const struct idmap_extent *e)
{
	uint64_t pos = e->from, end = (uint64_t)e->from + e->count;
	const struct idmap_extent *m;
	unsigned int i;
	bool moved;

	/* the mark need not be sorted: look for the extent holding pos */
	do {
		moved = false;
		for (i = 0; i < mark->nr && pos < end; i++) {
			m = &mark->ext[i];
			if (pos < m->from || pos >= (uint64_t)m->from + m->count)
				continue;
			if ((uint64_t)e->to + m->from != (uint64_t)m->to + e->from)
				return false;
			pos = (uint64_t)m->from + m->count;
			moved = true;
		}
	} while (moved && pos < end);
	return pos >= end;
}

int idmap_allows(const struct idmap *mark, const struct idmap *map,
		 struct idmap_extent *refused)
{
	unsigned int i;

	for (i = 0; i < map->nr; i++) {
		if (!extent_allowed(mark, &map->ext[i])) {
			if (refused)
				*refused = map->ext[i];
			return 0;
		}
	}
	return 1;
}
