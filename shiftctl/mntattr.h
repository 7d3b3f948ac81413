/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mount attributes (MOUNT_ATTR_*) a shiftfs mount is made with
 * (pure, unit tested).
 *
 * A mount with explicit maps lets the ids on one side act as the ids on
 * the other: with uidmap=100000:0:65536 a file owned on disk by 100000
 * shows as owned by root, and its setuid bit would make whoever runs it
 * root.  So such mounts are nodev and nosuid unless the caller asks for
 * setuid (--suid), and they keep the source mount's nosuid and noexec.
 * A mount made from a mark inside a user namespace is a container's own
 * tree (its rootfs, with its own setuid binaries); the kernel already
 * treats its superblock as nodev, and it keeps what it had: ro at most.
 * A mark cannot be looked into, so its attributes do not matter.
 */
#ifndef SHIFTCTL_MNTATTR_H
#define SHIFTCTL_MNTATTR_H

#include <stdbool.h>
#include <stdint.h>

enum shift_kind {
	SHIFT_MAPS,		/* explicit maps, made by host root */
	SHIFT_FROM_MARK,	/* from a mark, maps from the user namespace */
	SHIFT_MARK,		/* a mark */
};

/*
 * src_flags: statvfs() f_flag (ST_NOSUID, ST_NOEXEC) of the mount the
 * source directory is on; 0 for an image, whose lower mount is our own.
 */
uint64_t shift_mount_attr(enum shift_kind kind, bool ro, bool suid,
			  unsigned long src_flags);

#endif /* SHIFTCTL_MNTATTR_H */
