/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a bound loop device is to a disk image about to be mounted (pure,
 * unit tested).
 *
 * Two loop devices on one file are two filesystem instances writing one
 * image, unknown to each other: its corruption.  So, as util-linux's
 * mount does, a loop device already backed by the whole image (same
 * backing inode, offset 0, no size limit short of the file) is reused,
 * and the kernel then hands the second mount the same superblock; one on
 * a part of it is an overlap, refused.  A loop device set up read-only
 * stays so: a read-write request on it is refused.
 */
#ifndef SHIFTCTL_LOOPUSE_H
#define SHIFTCTL_LOOPUSE_H

#include <linux/loop.h>
#include <stdbool.h>
#include <sys/stat.h>

enum loop_use {
	LOOP_UNRELATED,	/* backed by another file, or beyond its end */
	LOOP_SHARE,	/* the whole image, usable as asked: reuse it */
	LOOP_READ_ONLY,	/* the whole image, read-only; read-write asked */
	LOOP_OVERLAP,	/* a part of the image (an offset or a size limit) */
};

/* info: LOOP_GET_STATUS64 of the device; image: stat() of the file. */
enum loop_use loop_use(const struct loop_info64 *info,
		       const struct stat *image, bool ro);

#endif /* SHIFTCTL_LOOPUSE_H */
