// SPDX-License-Identifier: GPL-2.0
/*
 * Mount life cycle: remount (flags yes, maps no), read-only mounts,
 * umount while the source is busy or gone, and files kept open across
 * umount of the source mount.
 */
#include "harness.h"
#include "shiftfs_util.h"

#define SETUP(w) ASSERT_EQ(world_setup(w), 0)

TEST(remount_keeps_maps)
{
	struct world w;
	int fd;

	SETUP(&w);
	ASSERT_EQ(mount(w.lower, w.mnt, "shiftfs", 0,
			"uidmap=0:100000:65536,gidmap=0:100000:65536"), 0);
	/* Repeating the maps (as mount(8) does) is fine... */
	ASSERT_EQ(mount(NULL, w.mnt, NULL, MS_REMOUNT | MS_RDONLY,
			"uidmap=0:100000:65536,gidmap=0:100000:65536"), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	EXPECT_ERRNO(open(P(w.mnt, "f"), O_CREAT | O_WRONLY, 0644), EROFS);
	become_fsids(0, 0);
	/* ... so is not giving them... */
	ASSERT_EQ(mount(NULL, w.mnt, NULL, MS_REMOUNT, NULL), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	fd = open(P(w.mnt, "f"), O_CREAT | O_WRONLY, 0644);
	EXPECT_GE(fd, 0);
	close(fd);
	become_fsids(0, 0);
	/* ... changing them is not. */
	EXPECT_ERRNO(mount(NULL, w.mnt, NULL, MS_REMOUNT,
			   "uidmap=0:200000:65536"), EINVAL);
	EXPECT_EQ(owner_is(P(w.mnt, "f"), ID_SHIFT, ID_SHIFT), 0);
}

TEST(reconfigure_with_fspick)
{
	struct world w;
	char log[512];
	int fd;

	SETUP(&w);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	fd = fspick(AT_FDCWD, w.mnt, FSPICK_CLOEXEC);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(fsconfig(fd, FSCONFIG_SET_STRING, "uidmap", "0:300000:10",
			   0), 0);
	EXPECT_ERRNO(fsconfig(fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0),
		     EINVAL);
	fs_log(fd, log, sizeof(log));
	TH_LOG("log: %s", log);
	EXPECT_NE(strstr(log, "cannot be changed"), NULL);
	close(fd);
}

TEST(bind_mount_read_only)
{
	struct world w;
	char ro[128];

	SETUP(&w);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	snprintf(ro, sizeof(ro), "%s/ro", w.base);
	ASSERT_EQ(mkdir(ro, 0755), 0);
	ASSERT_EQ(mount(w.mnt, ro, NULL, MS_BIND, NULL), 0);
	ASSERT_EQ(mount(NULL, ro, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
			NULL), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	EXPECT_ERRNO(mkdir(P(ro, "d"), 0755), EROFS);
	EXPECT_EQ(mkdir(P(w.mnt, "d"), 0755), 0);
}

TEST(read_only_source_mount)
{
	struct world w;
	char src[128];
	int fd;

	SETUP(&w);
	ASSERT_EQ(make_file(P(w.lower, "f"), 0666, 0, 0), 0);
	snprintf(src, sizeof(src), "%s/src", w.base);
	ASSERT_EQ(mkdir(src, 0755), 0);
	ASSERT_EQ(mount(w.lower, src, NULL, MS_BIND, NULL), 0);
	ASSERT_EQ(mount(NULL, src, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
			NULL), 0);
	ASSERT_EQ(mount(src, w.mnt, "shiftfs", 0,
			"uidmap=0:100000:65536,gidmap=0:100000:65536"), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	/* The mounter's clone of a read-only mount stays read-only. */
	fd = open(P(w.mnt, "f"), O_WRONLY);
	EXPECT_EQ(fd, -1);
	EXPECT_EQ(errno, EROFS);
	EXPECT_ERRNO(mkdir(P(w.mnt, "d"), 0755), EROFS);
	fd = open(P(w.mnt, "f"), O_RDONLY);
	EXPECT_GE(fd, 0);
	close(fd);
}

TEST(source_umounted_under_us)
{
	struct world w;
	char src[128], buf[8] = "";
	int fd;

	SETUP(&w);
	snprintf(src, sizeof(src), "%s/src", w.base);
	ASSERT_EQ(mkdir(src, 0755), 0);
	ASSERT_EQ(mount("tmpfs", src, "tmpfs", 0, NULL), 0);
	ASSERT_EQ(make_file(P(src, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(write_file(P(src, "f"), "kept"), 0);
	ASSERT_EQ(mount(src, w.mnt, "shiftfs", 0,
			"uidmap=0:100000:65536,gidmap=0:100000:65536"), 0);
	fd = open(P(w.mnt, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	/* Our private clone keeps the source alive. */
	ASSERT_EQ(umount2(src, MNT_DETACH), 0);
	EXPECT_EQ(read(fd, buf, sizeof(buf) - 1), 4);
	EXPECT_STREQ(buf, "kept");
	close(fd);
	EXPECT_EQ(owner_is(P(w.mnt, "f"), ID_SHIFT, ID_SHIFT), 0);
	/* And our umount with an open file is lazy-able and clean. */
	fd = open(P(w.mnt, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(umount(w.mnt), EBUSY);
	EXPECT_EQ(umount2(w.mnt, MNT_DETACH), 0);
	EXPECT_EQ(read(fd, buf, 1), 1);
	close(fd);
}

TEST_HARNESS_MAIN
