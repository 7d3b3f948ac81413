/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of the temporary directories a disk image's filesystem is
 * mounted on while shiftfs takes it as its source (pure, unit tested).
 *
 * shiftfs shows that directory as the mount's source in mountinfo after
 * it is gone, so its name carries the block device ("shiftctl-loop3.Ab12Cd")
 * and `shiftctl list` can show the image behind the loop device.
 */
#ifndef SHIFTCTL_SOURCE_H
#define SHIFTCTL_SOURCE_H

#include <stddef.h>

/* "DIR/shiftctl-DEV.XXXXXX" for mkdtemp(); DEV is dev's last component. */
int source_tmpdir_template(char *buf, size_t size, const char *dir,
			   const char *dev);

/*
 * If source names such a directory, put its device name ("loop3") in dev
 * and return 0; otherwise -EINVAL.
 */
int source_tmpdir_dev(const char *source, char *dev, size_t size);

#endif /* SHIFTCTL_SOURCE_H */
