// SPDX-License-Identifier: GPL-2.0
/*
 * What identifies a file through shiftfs: (st_dev, st_ino) stays unique
 * over a lower tree that spans btrfs subvolumes (each has its own st_dev
 * and numbers its inodes from 256 again), is stable, is what fstat()
 * says, and readdir's d_ino matches st_ino.  FIEMAP reaches the lower
 * file's extents.
 */
#include "harness.h"
#include "loop_util.h"

#include <dirent.h>
#include <sys/sysmacros.h>
#include <linux/btrfs.h>
#include <linux/fiemap.h>
#include <linux/fs.h>

static int subvol_create(const char *parent, const char *name)
{
	struct btrfs_ioctl_vol_args args;
	int fd, err;

	memset(&args, 0, sizeof(args));
	snprintf(args.name, sizeof(args.name), "%s", name);
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	err = ioctl(fd, BTRFS_IOC_SUBVOL_CREATE, &args);
	close(fd);
	return err;
}

/* d_ino of @name in @dir, or 0. */
static ino_t dir_ino(const char *dir, const char *name)
{
	struct dirent *de;
	ino_t ino = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (!strcmp(de->d_name, name))
			ino = de->d_ino;
	closedir(d);
	return ino;
}

static void show(const char *what, const struct stat *st)
{
	printf("# %-16s dev %u:%u ino %llu\n", what, major(st->st_dev),
	       minor(st->st_dev), (unsigned long long)st->st_ino);
}

#define SAME_FILE(a, b) ((a).st_dev == (b).st_dev && (a).st_ino == (b).st_ino)

TEST(btrfs_subvolumes_distinct_dev_ino)
{
	static const char *const names[] = { "f", "sv1", "sv1/f", "sv2",
					     "sv2/f", "." };
	struct stat low[6], st[6], again, fst;
	struct world w;
	int lfd, i, j, fd;

	ASSERT_EQ(world_setup(&w), 0);
	lfd = LOOP_LOWER(&w, "btrfs");
	ASSERT_EQ(subvol_create(w.lower, "sv1"), 0);
	ASSERT_EQ(subvol_create(w.lower, "sv2"), 0);
	ASSERT_EQ(make_file(P(w.lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(make_file(P(w.lower, "sv1/f"), 0644, 0, 0), 0);
	ASSERT_EQ(make_file(P(w.lower, "sv2/f"), 0644, 0, 0), 0);
	for (i = 0; i < 6; i++)
		ASSERT_EQ(stat(P(w.lower, names[i]), &low[i]), 0);
	/* The premise: underneath, only st_dev tells them apart. */
	ASSERT_EQ(low[2].st_ino, low[4].st_ino);
	ASSERT_NE(low[2].st_dev, low[4].st_dev);

	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(stat(P(w.mnt, names[i]), &st[i]), 0);
		show(names[i], &st[i]);
		/* The inode number stays the lower one. */
		EXPECT_EQ(st[i].st_ino, low[i].st_ino);
	}
	for (i = 0; i < 6; i++)
		for (j = i + 1; j < 6; j++)
			if (SAME_FILE(st[i], st[j])) {
				TH_LOG("%s and %s share (st_dev, st_ino)",
				       names[i], names[j]);
				EXPECT_FALSE(SAME_FILE(st[i], st[j]));
			}
	/* One device per lower device: a subvolume's files share its own. */
	EXPECT_EQ(st[0].st_dev, st[5].st_dev);
	EXPECT_EQ(st[2].st_dev, st[1].st_dev);
	EXPECT_EQ(st[4].st_dev, st[3].st_dev);
	EXPECT_NE(st[2].st_dev, st[4].st_dev);

	/* Stable, and what fstat() of an open file says. */
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(stat(P(w.mnt, names[i]), &again), 0);
		EXPECT_TRUE(SAME_FILE(again, st[i]));
		fd = open(P(w.mnt, names[i]), O_RDONLY | O_CLOEXEC);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(fstat(fd, &fst), 0);
		EXPECT_TRUE(SAME_FILE(fst, st[i]));
		close(fd);
	}

	/* readdir's d_ino of plain files is st_ino. */
	EXPECT_EQ(dir_ino(w.mnt, "f"), st[0].st_ino);
	EXPECT_EQ(dir_ino(P(w.mnt, "sv1"), "f"), st[2].st_ino);
	EXPECT_EQ(dir_ino(P(w.mnt, "sv2"), "f"), st[4].st_ino);

	EXPECT_EQ(umount(w.mnt), 0);
	EXPECT_EQ(umount(w.lower), 0);
	loop_detach(lfd);
}

/* A lower tree on one device keeps the mount's own st_dev. */
TEST(single_device_keeps_mount_dev)
{
	struct stat root, f, sfs;
	struct world w;

	ASSERT_EQ(world_setup(&w), 0);
	ASSERT_EQ(make_file(P(w.lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	ASSERT_EQ(stat(w.mnt, &root), 0);
	ASSERT_EQ(stat(P(w.mnt, "f"), &f), 0);
	EXPECT_EQ(root.st_dev, f.st_dev);
	/* Not the tmpfs underneath: the shiftfs superblock's. */
	ASSERT_EQ(stat(w.lower, &sfs), 0);
	EXPECT_NE(root.st_dev, sfs.st_dev);
}

#define NEXT 32

struct fiemap_buf {
	struct fiemap fm;
	struct fiemap_extent ext[NEXT];
};

static int do_fiemap(const char *path, struct fiemap_buf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	memset(b, 0, sizeof(*b));
	b->fm.fm_start = 0;
	b->fm.fm_length = FIEMAP_MAX_OFFSET;
	b->fm.fm_flags = FIEMAP_FLAG_SYNC;
	b->fm.fm_extent_count = NEXT;
	err = ioctl(fd, FS_IOC_FIEMAP, &b->fm) ? -errno : 0;
	close(fd);
	return err;
}

TEST(fiemap_as_lower_ext4)
{
	static char block[65536];
	struct fiemap_buf lb, sb;
	struct world w;
	unsigned int i;
	int lfd, fd, err;

	ASSERT_EQ(world_setup(&w), 0);
	lfd = LOOP_LOWER(&w, "ext4");
	/* Data, a hole, data. */
	memset(block, 'x', sizeof(block));
	fd = open(P(w.lower, "f"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(pwrite(fd, block, sizeof(block), 0), (ssize_t)sizeof(block));
	ASSERT_EQ(pwrite(fd, block, sizeof(block), 4 << 20),
		  (ssize_t)sizeof(block));
	ASSERT_EQ(fsync(fd), 0);
	close(fd);

	ASSERT_EQ(do_fiemap(P(w.lower, "f"), &lb), 0);
	ASSERT_GE(lb.fm.fm_mapped_extents, 2u);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	err = do_fiemap(P(w.mnt, "f"), &sb);
	TH_LOG("FIEMAP: lower %u extents, shiftfs %d (%s), %u extents",
	       lb.fm.fm_mapped_extents, err, strerror(-err),
	       sb.fm.fm_mapped_extents);
	ASSERT_EQ(err, 0);
	ASSERT_EQ(sb.fm.fm_mapped_extents, lb.fm.fm_mapped_extents);
	for (i = 0; i < lb.fm.fm_mapped_extents; i++) {
		EXPECT_EQ(sb.ext[i].fe_logical, lb.ext[i].fe_logical);
		EXPECT_EQ(sb.ext[i].fe_physical, lb.ext[i].fe_physical);
		EXPECT_EQ(sb.ext[i].fe_length, lb.ext[i].fe_length);
		EXPECT_EQ(sb.ext[i].fe_flags, lb.ext[i].fe_flags);
	}
	EXPECT_EQ(umount(w.mnt), 0);
	EXPECT_EQ(umount(w.lower), 0);
	loop_detach(lfd);
}

/* A lower filesystem without FIEMAP: the same answer through the mount. */
TEST(fiemap_unsupported_lower)
{
	struct fiemap_buf b;
	struct world w;
	int lerr;

	ASSERT_EQ(world_setup(&w), 0);
	ASSERT_EQ(make_file(P(w.lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(write_file(P(w.lower, "f"), "data"), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	lerr = do_fiemap(P(w.lower, "f"), &b);
	if (!lerr)
		SKIP("tmpfs has FIEMAP here");
	EXPECT_EQ(do_fiemap(P(w.mnt, "f"), &b), lerr);
}

TEST_HARNESS_MAIN
