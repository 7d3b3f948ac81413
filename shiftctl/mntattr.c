// SPDX-License-Identifier: GPL-2.0
/*
 * Mount attributes of a shiftfs mount (see mntattr.h).
 */
#include <sys/mount.h>
#include <sys/statvfs.h>

#include "mntattr.h"

uint64_t shift_mount_attr(enum shift_kind kind, bool ro, bool suid,
			  unsigned long src_flags)
{
	uint64_t attr = ro ? MOUNT_ATTR_RDONLY : 0;

	if (kind != SHIFT_MAPS)
		return attr;
	attr |= MOUNT_ATTR_NODEV;
	if (!suid || (src_flags & ST_NOSUID))
		attr |= MOUNT_ATTR_NOSUID;
	if (src_flags & ST_NOEXEC)
		attr |= MOUNT_ATTR_NOEXEC;
	return attr;
}
