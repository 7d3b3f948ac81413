/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Subordinate ids (/etc/subuid, /etc/subgid, subuid(5)) and the maps of a
 * mark made for a user: pure, for the host unit tests.
 *
 * A mark for user NAME allows NAME's first range START:COUNT: underlying
 * 0..COUNT-1 shown as START..START+COUNT-1, the map useradd's range gives
 * an unprivileged container ("lxc.idmap = u 0 START COUNT").  With the
 * user's own id kept (the cover letter's build map keeps 1000), underlying
 * ID shows as ID itself and the range skips it:
 *
 *	0:START:ID, ID:ID:1, ID+1:START+ID+1:COUNT-ID-1
 *
 * so that a container may map its ID to the user's own and everything
 * else into his range.
 */
#ifndef SHIFTCTL_SUBID_H
#define SHIFTCTL_SUBID_H

#include <stdbool.h>
#include <stdint.h>

#include "idmap.h"

struct subid_range {
	uint32_t start;
	uint32_t count;
};

/*
 * The first range of user name (or of its numeric id, which subuid(5)
 * allows too) in text, the contents of file ("/etc/subuid"); -ENOENT if
 * it has none, -EINVAL on a malformed line of that user's.
 */
int subid_lookup(const char *text, const char *file, const char *name,
		 uint32_t id, struct subid_range *r, char *err, size_t errsz);

/* The mark's map for range r, keeping own_id when own is set. */
int subid_user_map(const struct subid_range *r, bool own, uint32_t own_id,
		   struct idmap *map, char *err, size_t errsz);

/*
 * The user whose range in text holds every extent of map that is not an
 * identity one (FROM == TO); name into buf.  0, or -ENOENT.
 */
int subid_owner(const char *text, const struct idmap *map, char *buf,
		size_t size);

#endif /* SHIFTCTL_SUBID_H */
