// SPDX-License-Identifier: GPL-2.0
/*
 * What a bound loop device is to a disk image (see loopuse.h).
 */
#include <stdint.h>

#include "loopuse.h"

enum loop_use loop_use(const struct loop_info64 *info,
		       const struct stat *image, bool ro)
{
	uint64_t size = image->st_size > 0 ? (uint64_t)image->st_size : 0;

	/* the kernel reports the backing file as stat() shows it */
	if (info->lo_device != (uint64_t)image->st_dev ||
	    info->lo_inode != (uint64_t)image->st_ino)
		return LOOP_UNRELATED;
	if (size && info->lo_offset >= size)
		return LOOP_UNRELATED;	/* nothing of the file in it */
	if (info->lo_offset ||
	    (info->lo_sizelimit && info->lo_sizelimit < size))
		return LOOP_OVERLAP;
	if (!ro && (info->lo_flags & LO_FLAGS_READ_ONLY))
		return LOOP_READ_ONLY;
	return LOOP_SHARE;
}
