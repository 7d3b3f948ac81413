/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A disk filesystem on a loop device over a sparse image in a test's
 * world: for tests that need what only ext4, xfs or btrfs do.
 */
#ifndef SHIFTFS_TESTS_LOOP_UTIL_H
#define SHIFTFS_TESTS_LOOP_UTIL_H

#include "shiftfs_util.h"

#include <linux/loop.h>
#include <sys/ioctl.h>

#ifndef LOOP_IMG_SIZE
#define LOOP_IMG_SIZE (320ll << 20)	/* mkfs.xfs wants >= 300M */
#endif

/* A loop device over @img (created sparse); its fd, or -1. */
static inline int loop_attach(const char *img, char *dev, size_t devlen)
{
	int ctl, fd, lfd, n;

	fd = open(img, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, LOOP_IMG_SIZE))
		return -1;
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -1;
	n = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (n < 0)
		return -1;
	snprintf(dev, devlen, "/dev/loop%d", n);
	lfd = open(dev, O_RDWR | O_CLOEXEC);
	if (lfd < 0 || ioctl(lfd, LOOP_SET_FD, fd))
		return -1;
	close(fd);
	return lfd;
}

static inline void loop_detach(int lfd)
{
	ioctl(lfd, LOOP_CLR_FD, 0);
	close(lfd);
}

/* Format @dev as @fstype and mount it on @dir: 0, -1, or -2 if mkfs failed. */
static inline int loop_mkfs_mount(const char *fstype, const char *dev,
				  const char *dir)
{
	char cmd[256];

	if (!strcmp(fstype, "ext4"))
		snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F %s >/dev/null 2>&1",
			 dev);
	else
		snprintf(cmd, sizeof(cmd), "mkfs.%s -f %s >/dev/null 2>&1",
			 fstype, dev);
	if (system(cmd))
		return -2;
	return mount(dev, dir, fstype, 0, NULL);
}

/*
 * The world's lower/ becomes a fresh @fstype filesystem; the loop fd is
 * returned.  SKIPs (from a TEST) when there is no loop device or no such
 * filesystem here.
 */
#define LOOP_LOWER(w, fstype)						\
	({								\
		char __img[160], __dev[32];				\
		int __lfd, __err;					\
									\
		snprintf(__img, sizeof(__img), "%s/%s.img", (w)->base,	\
			 fstype);					\
		__lfd = loop_attach(__img, __dev, sizeof(__dev));	\
		if (__lfd < 0)						\
			SKIP("no loop device: %s", strerror(errno));	\
		__err = loop_mkfs_mount(fstype, __dev, (w)->lower);	\
		if (__err == -2 || (__err && errno == ENODEV)) {	\
			loop_detach(__lfd);				\
			SKIP("no %s here", fstype);			\
		}							\
		ASSERT_EQ(__err, 0);					\
		__lfd;							\
	})

#endif /* SHIFTFS_TESTS_LOOP_UTIL_H */
