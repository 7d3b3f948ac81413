// SPDX-License-Identifier: GPL-2.0
/*
 * setattr through shiftfs: chmod, chown (mapped back, EOVERFLOW when it
 * can't be), truncate, utimes, and the S_ISUID/S_ISGID clearing that the
 * lower filesystem would do for the caller but not for the privileged
 * mounter shiftfs runs lower operations as.
 */
#include "harness.h"
#include "shiftfs_util.h"

#include <sys/time.h>

TEST_F(world, chmod_both_sides)
{
	struct world *w = &self->w;

	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "other"), 0644, 1000, 1000), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	/* Owner through the mount (shifted root) may chmod. */
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(chmod(P(w->mnt, "f"), 0600), 0);
	EXPECT_EQ(mode_of(P(w->mnt, "f")), 0600u);
	EXPECT_EQ(mode_of(P(w->lower, "f")), 0600u);
	/* Not the owner, no CAP_FOWNER. */
	EXPECT_ERRNO(chmod(P(w->mnt, "other"), 0600), EPERM);
	EXPECT_ERRNO(chown(P(w->mnt, "other"), ID_SHIFT, ID_SHIFT), EPERM);
	become_fsids(0, 0);
	EXPECT_EQ(mode_of(P(w->lower, "other")), 0644u);
}

TEST_F(world, chown_kills_suid)
{
	struct world *w = &self->w;

	ASSERT_EQ(make_file(P(w->lower, "f"), 06755, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(chown(P(w->mnt, "f"), ID_SHIFT + 1, ID_SHIFT + 1), 0);
	EXPECT_EQ(owner_is(P(w->lower, "f"), 1, 1), 0);
	EXPECT_EQ(mode_of(P(w->lower, "f")) & 04000, 0u);
	EXPECT_EQ(mode_of(P(w->mnt, "f")) & 04000, 0u);
}

TEST_F(world, chmod_sgid_by_non_member_is_dropped)
{
	struct world *w = &self->w;

	/* Shown as 100000:100005; the caller is 100000 but not in 100005. */
	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 5), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(setgroups(0, NULL), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(chmod(P(w->mnt, "f"), 02755), 0);
	become_fsids(0, 0);
	EXPECT_EQ(mode_of(P(w->lower, "f")), 0755u);
	EXPECT_EQ(mode_of(P(w->mnt, "f")), 0755u);
	/* A member keeps it. */
	become_fsids(ID_SHIFT, ID_SHIFT + 5);
	ASSERT_EQ(chmod(P(w->mnt, "f"), 02755), 0);
	become_fsids(0, 0);
	EXPECT_EQ(mode_of(P(w->lower, "f")), 02755u);
}

TEST_F(world, write_by_non_owner_kills_suid)
{
	struct world *w = &self->w;
	int fd;

	ASSERT_EQ(make_file(P(w->lower, "f"), 06777, 1000, 1000), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(setgroups(0, NULL), 0);
	/* Not the owner (101000), no CAP_FSETID. */
	become_fsids(ID_SHIFT + 2000, ID_SHIFT + 2000);
	fd = open(P(w->mnt, "f"), O_WRONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "x", 1), 1);
	close(fd);
	become_fsids(0, 0);
	EXPECT_EQ(mode_of(P(w->lower, "f")) & 06000, 0u);
	EXPECT_EQ(mode_of(P(w->mnt, "f")) & 06000, 0u);
}

TEST_F(world, truncate_and_utimes)
{
	struct world *w = &self->w;
	struct timeval tv[2] = { { 1000000000, 0 }, { 1200000000, 0 } };
	struct stat st;

	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(write_file(P(w->lower, "f"), "0123456789"), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(truncate(P(w->mnt, "f"), 4), 0);
	ASSERT_EQ(stat(P(w->lower, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 4);
	ASSERT_EQ(truncate(P(w->mnt, "f"), 1 << 20), 0);
	ASSERT_EQ(stat(P(w->mnt, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 1 << 20);
	ASSERT_EQ(utimes(P(w->mnt, "f"), tv), 0);
	become_fsids(0, 0);
	ASSERT_EQ(stat(P(w->lower, "f"), &st), 0);
	EXPECT_EQ(st.st_atime, 1000000000);
	EXPECT_EQ(st.st_mtime, 1200000000);
	ASSERT_EQ(stat(P(w->mnt, "f"), &st), 0);
	EXPECT_EQ(st.st_mtime, 1200000000);
	/* Not the owner: only "now" with write access, never explicit. */
	become_fsids(ID_SHIFT + 7, ID_SHIFT + 7);
	EXPECT_ERRNO(utimes(P(w->mnt, "f"), tv), EPERM);
}

static int container_chown(void *arg)
{
	const struct world *w = arg;

	/* Container ids 0..65535 are image ids 0..65535. */
	if (chown(P(w->mnt, "f"), 33, 44))
		return 1;
	if (lchown(P(w->mnt, "link"), 55, 66))
		return 2;
	/* 70000 is not mapped into the container: EINVAL from the VFS. */
	if (chown(P(w->mnt, "f"), 70000, -1) != -1 || errno != EINVAL)
		return 3;
	return 0;
}

TEST_F(world, container_root_chown)
{
	struct world *w = &self->w;

	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 1000, 1000), 0);
	ASSERT_EQ(symlink("f", P(w->lower, "link")), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(in_container(container_chown, w), 0);
	EXPECT_EQ(owner_is(P(w->lower, "f"), 33, 44), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "f"), ID_SHIFT + 33, ID_SHIFT + 44), 0);
	EXPECT_EQ(owner_is(P(w->lower, "link"), 55, 66), 0);
}

TEST_F(world, chown_maps_back_or_overflows)
{
	struct world *w = &self->w;

	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(chown(P(w->mnt, "f"), ID_SHIFT + 1000, ID_SHIFT + 2000), 0);
	EXPECT_EQ(owner_is(P(w->lower, "f"), 1000, 2000), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "f"), ID_SHIFT + 1000, ID_SHIFT + 2000), 0);
	EXPECT_ERRNO(chown(P(w->mnt, "f"), 200000, -1), EOVERFLOW);
	EXPECT_ERRNO(chown(P(w->mnt, "f"), -1, 5), EOVERFLOW);
	EXPECT_ERRNO(chown(P(w->mnt, "f"), 0, 0), EOVERFLOW);
	EXPECT_EQ(owner_is(P(w->lower, "f"), 1000, 2000), 0);
}

TEST_HARNESS_MAIN
