/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure id-map logic of shiftctl: parsing and checking extents, reading
 * /proc/<pid>/{uid,gid}_map text, formatting and re-parsing the
 * "uidmap=F:T:C,gidmap=F:T:C" option string.  Nothing here touches the
 * system, so the host unit tests link it without root.
 *
 * Every function that can reject its input takes a caller buffer (err,
 * errsz) and writes there one line that names the offending input and
 * the reason; it returns 0 on success and a negative errno otherwise.
 */
#ifndef SHIFTCTL_IDMAP_H
#define SHIFTCTL_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Same limit as the kernel's user namespaces and the shiftfs module. */
#define IDMAP_MAX_EXTENTS 340

/* Highest id an extent may reach: (uid_t)-1 is never a valid id. */
#define IDMAP_ID_LIMIT 4294967295ULL

enum idmap_kind { IDMAP_UID, IDMAP_GID };

/* Underlying id from + i shows in the mount as to + i, for i < count. */
struct idmap_extent {
	uint32_t from;
	uint32_t to;
	uint32_t count;
};

struct idmap {
	unsigned int nr;
	struct idmap_extent ext[IDMAP_MAX_EXTENTS];
};

const char *idmap_kind_name(enum idmap_kind kind);	/* "uidmap" / "gidmap" */

void idmap_init(struct idmap *map);

/* "FROM:TO:COUNT" -> extent; rejects junk, overflow, count 0, wrap-around. */
int idmap_parse_extent(const char *s, struct idmap_extent *ext,
		       char *err, size_t errsz);

/* Append an extent; rejects overlap (either side) and extent 341. */
int idmap_add(struct idmap *map, const struct idmap_extent *ext,
	      char *err, size_t errsz);

/* idmap_parse_extent() + idmap_add(); messages name the kind ("uidmap"). */
int idmap_add_string(struct idmap *map, enum idmap_kind kind, const char *s,
		     char *err, size_t errsz);

/*
 * Parse the text of /proc/<pid>/uid_map or gid_map ("INSIDE OUTSIDE COUNT"
 * lines).  Each line becomes the extent INSIDE:OUTSIDE:COUNT: the
 * underlying id INSIDE shows as OUTSIDE, the host id that the container's
 * INSIDE really is.  name ("/proc/42/uid_map") prefixes the messages.
 */
int idmap_parse_proc(struct idmap *map, const char *text, const char *name,
		     char *err, size_t errsz);

/* The map of a process in the initial user namespace: 0 0 4294967295. */
bool idmap_is_identity(const struct idmap *map);

/*
 * Derive shiftfs maps from the text of a process's uid_map and gid_map.
 * A process that is not in a user namespace (identity maps) is refused
 * unless allow_identity is set.  what ("pid 42") prefixes the messages.
 */
int idmap_derive(const char *uid_text, const char *gid_text,
		 bool allow_identity, const char *what,
		 struct idmap *uid, struct idmap *gid, char *err, size_t errsz);

/*
 * "uidmap=F:T:C,...,gidmap=F:T:C,..." for mount -o; returns a malloc()ed
 * string or NULL when out of memory.  Empty maps contribute nothing.
 */
char *idmap_format_options(const struct idmap *uid, const struct idmap *gid);

/*
 * Parse a comma separated option string (as written by
 * idmap_format_options() or shown in /proc/self/mountinfo).  uidmap= and
 * gidmap= entries are collected; other options are ignored.
 */
int idmap_parse_options(const char *opts, struct idmap *uid,
			struct idmap *gid, char *err, size_t errsz);

/* The id that underlying id from shows as (FROM side -> TO side); -1 if none. */
int64_t idmap_map(const struct idmap *map, uint32_t from);

/*
 * Whether a mark with map mark lets a user namespace whose derived map is
 * map mount from it (the kernel's rule: each extent inside the mark at
 * one offset); 1 if so, else 0 with the first refused extent in *refused
 * (if not NULL).
 */
int idmap_allows(const struct idmap *mark, const struct idmap *map,
		 struct idmap_extent *refused);

/*
 * The pure parsers' way to fail: the message in err (if given), ret
 * returned.  Shared with lxchook.c.
 */
int idmap_errf(char *err, size_t errsz, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* SHIFTCTL_IDMAP_H */
