// SPDX-License-Identifier: GPL-2.0
/*
 * shiftfs over real disk filesystems (ext4, xfs, btrfs on loop devices)
 * and as the lower layer of overlayfs: the same small workload each time,
 * ids checked on both sides.
 */
#include "harness.h"
#include "loop_util.h"

#include <dirent.h>
#include <linux/fs.h>
#include <sys/xattr.h>

/* FICLONE through the mount does what it does underneath. */
static int clone_as_lower(const struct world *w)
{
	char buf[16] = "";
	int src, dst, lerr, err, fd;

	if (make_file(P(w->lower, "csrc"), 0644, 0, 0) ||
	    make_file(P(w->lower, "cdst"), 0644, 0, 0) ||
	    make_file(P(w->lower, "cdst2"), 0644, 0, 0) ||
	    write_file(P(w->lower, "csrc"), "cloned"))
		return -1;
	src = open(P(w->lower, "csrc"), O_RDONLY);
	dst = open(P(w->lower, "cdst2"), O_WRONLY);
	lerr = ioctl(dst, FICLONE, src) ? errno : 0;
	close(src);
	close(dst);
	src = open(P(w->mnt, "csrc"), O_RDONLY);
	dst = open(P(w->mnt, "cdst"), O_WRONLY);
	if (src < 0 || dst < 0)
		return -1;
	err = ioctl(dst, FICLONE, src) ? errno : 0;
	close(src);
	close(dst);
	printf("# FICLONE: lower %d, shiftfs %d\n", lerr, err);
	if (err != lerr)
		return -1;
	if (err)
		return 0;
	fd = open(P(w->lower, "cdst"), O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) != 6)
		return -1;
	close(fd);
	return strcmp(buf, "cloned") ? -1 : 0;
}

/* The workload; returns 0 or the number of the failed step. */
static int workload(const struct world *w)
{
	char buf[64];
	struct stat st, lst;
	struct dirent *de;
	DIR *d;
	int fd, n = 0;

	if (make_file(P(w->lower, "root"), 0644, 0, 0) ||
	    make_file(P(w->lower, "user"), 0600, 1000, 1000))
		return 1;
	if (shiftfs_mount_default(w))
		return 2;
	if (owner_is(P(w->mnt, "root"), ID_SHIFT, ID_SHIFT) ||
	    owner_is(P(w->mnt, "user"), ID_SHIFT + 1000, ID_SHIFT + 1000))
		return 3;
	become_fsids(ID_SHIFT, ID_SHIFT);
	fd = open(P(w->mnt, "new"), O_CREAT | O_RDWR, 0644);
	if (fd < 0 || write(fd, "payload", 7) != 7 || fsync(fd))
		return 4;
	close(fd);
	if (mkdir(P(w->mnt, "dir"), 0755) ||
	    rename(P(w->mnt, "new"), P(w->mnt, "dir/moved")) ||
	    link(P(w->mnt, "dir/moved"), P(w->mnt, "hard")) ||
	    symlink("dir/moved", P(w->mnt, "sym")))
		return 5;
	become_fsids(0, 0);
	if (owner_is(P(w->lower, "dir/moved"), 0, 0) ||
	    owner_is(P(w->lower, "sym"), 0, 0))
		return 6;
	if (chown(P(w->mnt, "hard"), ID_SHIFT + 7, ID_SHIFT + 8) ||
	    owner_is(P(w->lower, "dir/moved"), 7, 8))
		return 7;
	if (stat(P(w->mnt, "hard"), &st) || stat(P(w->lower, "hard"), &lst) ||
	    st.st_ino != lst.st_ino || st.st_nlink != 2)
		return 8;
	fd = open(P(w->mnt, "sym"), O_RDONLY);
	memset(buf, 0, sizeof(buf));
	if (fd < 0 || read(fd, buf, sizeof(buf)) != 7 ||
	    strcmp(buf, "payload"))
		return 9;
	close(fd);
	if (setxattr(P(w->mnt, "root"), "trusted.t", "v", 1, 0) ||
	    getxattr(P(w->lower, "root"), "trusted.t", buf, sizeof(buf)) != 1)
		return 10;
	d = opendir(w->mnt);
	if (!d)
		return 11;
	while ((de = readdir(d)))
		n++;
	closedir(d);
	/* . .. root user dir hard sym, plus lost+found on ext4 */
	if (n < 7)
		return 12;
	/* user.* where the lower fs has them (not tmpfs before 6.6). */
	if (!setxattr(P(w->lower, "user"), "user.probe", "p", 1, 0)) {
		become_fsids(ID_SHIFT + 1000, ID_SHIFT + 1000);
		n = setxattr(P(w->mnt, "user"), "user.u", "uu", 2, 0);
		become_fsids(0, 0);
		if (n || getxattr(P(w->lower, "user"), "user.u", buf,
				  sizeof(buf)) != 2)
			return 14;
	}
	if (clone_as_lower(w))
		return 15;
	if (unlink(P(w->mnt, "hard")) || unlink(P(w->mnt, "dir/moved")) ||
	    rmdir(P(w->mnt, "dir")))
		return 13;
	return 0;
}

static void run_on(const char *fstype)
{
	struct world w;
	int lfd, err;

	ASSERT_EQ(world_setup(&w), 0);
	lfd = LOOP_LOWER(&w, fstype);
	err = workload(&w);
	EXPECT_EQ(err, 0);
	umount2(w.mnt, MNT_DETACH);
	EXPECT_EQ(umount(w.lower), 0);
	loop_detach(lfd);
}

TEST(over_ext4)
{
	run_on("ext4");
}

TEST(over_xfs)
{
	run_on("xfs");
}

TEST(over_btrfs)
{
	run_on("btrfs");
}

TEST(over_tmpfs)
{
	struct world w;

	ASSERT_EQ(world_setup(&w), 0);
	EXPECT_EQ(workload(&w), 0);
}

TEST(overlayfs_lower_layer)
{
	struct world w;
	char upper[128], work[128], ovl[128], opts[512], buf[16] = "";
	struct stat st;
	int fd;

	ASSERT_EQ(world_setup(&w), 0);
	ASSERT_EQ(make_file(P(w.lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(write_file(P(w.lower, "f"), "lower"), 0);
	ASSERT_EQ(make_file(P(w.lower, "g"), 0644, 1000, 1000), 0);
	ASSERT_EQ(make_dir(P(w.lower, "d"), 0755, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	snprintf(upper, sizeof(upper), "%s/upper", w.base);
	snprintf(work, sizeof(work), "%s/work", w.base);
	snprintf(ovl, sizeof(ovl), "%s/ovl", w.base);
	ASSERT_EQ(mkdir(upper, 0755), 0);
	ASSERT_EQ(mkdir(work, 0755), 0);
	ASSERT_EQ(mkdir(ovl, 0755), 0);
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s",
		 w.mnt, upper, work);
	if (mount("overlay", ovl, "overlay", 0, opts) && errno == ENODEV)
		SKIP("no overlayfs");
	ASSERT_EQ(owner_is(ovl, ID_SHIFT, ID_SHIFT) == 0 ||
		  owner_is(ovl, 0, 0) == 0, 1);
	EXPECT_EQ(owner_is(P(ovl, "f"), ID_SHIFT, ID_SHIFT), 0);
	EXPECT_EQ(owner_is(P(ovl, "g"), ID_SHIFT + 1000, ID_SHIFT + 1000), 0);
	fd = open(P(ovl, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(read(fd, buf, sizeof(buf)), 5);
	close(fd);
	/* Copy-up keeps the shifted owner; the shifted lower is untouched. */
	ASSERT_EQ(chmod(P(ovl, "g"), 0600), 0);
	EXPECT_EQ(owner_is(P(upper, "g"), ID_SHIFT + 1000, ID_SHIFT + 1000), 0);
	ASSERT_EQ(stat(P(w.lower, "g"), &st), 0);
	EXPECT_EQ(st.st_mode & 07777, 0644u);
	ASSERT_EQ(unlink(P(ovl, "f")), 0);
	EXPECT_EQ(access(P(w.lower, "f"), F_OK), 0);
	EXPECT_ERRNO(access(P(ovl, "f"), F_OK), ENOENT);
	ASSERT_EQ(mkdir(P(ovl, "d/sub"), 0755), 0);
	EXPECT_EQ(access(P(upper, "d/sub"), F_OK), 0);
	EXPECT_EQ(umount(ovl), 0);
}

TEST_HARNESS_MAIN
