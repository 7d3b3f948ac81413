/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Declared marks: the file (/etc/shiftfs/marks) in which host root
 * declares, once, the trees that are marked at every boot
 * (shiftfs-marks.service runs shiftctl mark --declared), one a line, the
 * way /etc/fstab declares mounts:
 *
 *	# DIR			OPTIONS
 *	/srv/images/u1		user=jejb
 *	/var/tmp/images/arm64	user=jejb,own-ids
 *	/srv/images/c1		uidmap=0:100000:65536,gidmap=0:100000:65536
 *
 * DIR is absolute and canonical (no ".", "..", "//"), blanks and
 * backslashes written as octal escapes (\040) as in fstab.  user=NAME
 * takes the maps from NAME's /etc/subuid and /etc/subgid ranges at each
 * boot; own-ids also keeps NAME's own uid and gid (subid.h).  Pure: the
 * host unit tests link it.
 */
#ifndef SHIFTCTL_DECL_H
#define SHIFTCTL_DECL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "idmap.h"

#define DECL_FILE "/etc/shiftfs/marks"
#define DECL_USER_MAX 64

struct decl {
	char path[PATH_MAX];
	char user[DECL_USER_MAX];	/* "" when the maps are given */
	bool own_ids;
	struct idmap uid, gid;		/* when user is "" */
};

/* DIR is absolute and canonical: no ".", "..", "//" nor trailing "/". */
int decl_check_path(const char *path, char *err, size_t errsz);

/*
 * One line of the file (without its newline) into d: 0, 1 for a blank or
 * comment line, or -EINVAL with the reason in err.
 */
int decl_parse_line(const char *line, struct decl *d, char *err,
		    size_t errsz);

/* d as a line of the file (no newline), malloc()ed; NULL when out of memory. */
char *decl_format(const struct decl *d);

/*
 * text with the line that declares path replaced by line (or dropped,
 * line NULL; appended when there was none), every other line kept as it
 * was; malloc()ed, NULL when out of memory.  *found: whether path was
 * declared.
 */
char *decl_replace(const char *text, const char *path, const char *line,
		   bool *found);

#endif /* SHIFTCTL_DECL_H */
