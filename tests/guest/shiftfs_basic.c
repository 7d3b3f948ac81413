// SPDX-License-Identifier: GPL-2.0
/*
 * The smoke test: a mount through either API shows the options it was
 * given, stat and statfs show the shifted ids over the lower file's
 * attributes, and permission is checked at the shifted inode (a host
 * user who owns a file underneath does not own it through the mount;
 * the container's root has root's powers over the image it maps).
 * The rest is by feature: options and maps in shiftfs_mount.c, file I/O
 * in shiftfs_file.c, create/link/unlink/rename in shiftfs_rename.c,
 * lookup and readdir against changes underneath in shiftfs_revalidate.c.
 */
#include "harness.h"
#include "shiftfs_util.h"

#include <sys/statfs.h>
#include <sys/vfs.h>

TEST_F(world, mount_new_api)
{
	struct world *w = &self->w;
	char opts[4096];
	struct stat st;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(stat(w->mnt, &st), 0);
	EXPECT_EQ(st.st_uid, ID_SHIFT);
	EXPECT_EQ(st.st_gid, ID_SHIFT);
	ASSERT_EQ(shiftfs_mountinfo(w->mnt, opts, sizeof(opts)), 0);
	TH_LOG("mountinfo: %s", opts);
	EXPECT_NE(strstr(opts, "uidmap=0:100000:65536"), NULL);
	EXPECT_NE(strstr(opts, "gidmap=0:100000:65536"), NULL);
	EXPECT_NE(strstr(opts, w->lower), NULL);
}

TEST_F(world, mount_legacy_api)
{
	struct world *w = &self->w;
	struct stat st;
	char opts[4096];

	ASSERT_EQ(mount(w->lower, w->mnt, "shiftfs", 0,
			"uidmap=0:100000:1000,uidmap=65534:101000:1,"
			"gidmap=0:100000:100,gidmap=101:100101:899"), 0);
	ASSERT_EQ(stat(w->mnt, &st), 0);
	EXPECT_EQ(st.st_uid, ID_SHIFT);
	ASSERT_EQ(shiftfs_mountinfo(w->mnt, opts, sizeof(opts)), 0);
	EXPECT_NE(strstr(opts, "uidmap=0:100000:1000,uidmap=65534:101000:1,"
			 "gidmap=0:100000:100,gidmap=101:100101:899"), NULL);
	/* mount(2) goes through the same parser: bad options fail too. */
	EXPECT_ERRNO(mount(w->lower, w->mnt, "shiftfs", 0,
			   "uidmap=0:100000,gidmap=0:100000:10"), EINVAL);
	EXPECT_ERRNO(mount(w->lower, w->mnt, "shiftfs", 0,
			   "uidmap=0:1:1,gidmap=0:1:1,bogus=1"), EINVAL);
}

TEST_F(world, stat_shows_shifted_ids)
{
	struct world *w = &self->w;
	struct stat lst, mst;

	ASSERT_EQ(make_file(P(w->lower, "root"), 0644, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "user"), 0640, 1000, 1001), 0);
	ASSERT_EQ(make_file(P(w->lower, "last"), 0600, 65535, 65535), 0);
	ASSERT_EQ(make_file(P(w->lower, "unmapped"), 0600, 70000, 70000), 0);
	ASSERT_EQ(make_dir(P(w->lower, "dir"), 0750, 0, 1000), 0);
	ASSERT_EQ(symlink("root", P(w->lower, "link")), 0);
	ASSERT_EQ(lchown(P(w->lower, "link"), 1000, 1000), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);

	EXPECT_EQ(owner_is(P(w->mnt, "root"), ID_SHIFT, ID_SHIFT), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "user"), ID_SHIFT + 1000, ID_SHIFT + 1001),
		  0);
	EXPECT_EQ(owner_is(P(w->mnt, "last"), ID_SHIFT + 65535,
			   ID_SHIFT + 65535), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "unmapped"), ID_OVERFLOW, ID_OVERFLOW), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "dir"), ID_SHIFT, ID_SHIFT + 1000), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "link"), ID_SHIFT + 1000, ID_SHIFT + 1000),
		  0);

	/* Everything else is the lower file's. */
	ASSERT_EQ(stat(P(w->lower, "user"), &lst), 0);
	ASSERT_EQ(stat(P(w->mnt, "user"), &mst), 0);
	EXPECT_EQ(mst.st_ino, lst.st_ino);
	EXPECT_EQ(mst.st_mode, lst.st_mode);
	EXPECT_EQ(mst.st_nlink, lst.st_nlink);
	EXPECT_EQ(mst.st_size, lst.st_size);
	EXPECT_EQ(mst.st_mtim.tv_sec, lst.st_mtim.tv_sec);
	EXPECT_EQ(mst.st_mtim.tv_nsec, lst.st_mtim.tv_nsec);
	/* ... but shiftfs is its own device. */
	EXPECT_NE(mst.st_dev, lst.st_dev);

	/* The underlying side is untouched. */
	EXPECT_EQ(owner_is(P(w->lower, "root"), ID_HOST, ID_HOST), 0);
	EXPECT_EQ(owner_is(P(w->lower, "unmapped"), 70000, 70000), 0);
}

TEST_F(world, statfs_reports_lower)
{
	struct world *w = &self->w;
	struct statfs ls, ms;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(statfs(w->lower, &ls), 0);
	ASSERT_EQ(statfs(w->mnt, &ms), 0);
	EXPECT_EQ(ms.f_type, SHIFTFS_MAGIC);
	EXPECT_EQ(ms.f_blocks, ls.f_blocks);
	EXPECT_EQ(ms.f_bsize, ls.f_bsize);
	EXPECT_EQ(ms.f_files, ls.f_files);
	EXPECT_EQ(ms.f_namelen, ls.f_namelen);
}

TEST_F(world, unprivileged_caller_is_checked_at_shifted_inode)
{
	struct world *w = &self->w;

	ASSERT_EQ(make_file(P(w->lower, "secret"), 0600, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "mine"), 0600, 1000, 1000), 0);
	ASSERT_EQ(make_dir(P(w->lower, "closed"), 0700, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);

	/* Host uid 1000 owns "mine" underneath, but not through the mount. */
	become_fsids(1000, 1000);
	EXPECT_ERRNO(open(P(w->mnt, "mine"), O_RDONLY), EACCES);
	EXPECT_ERRNO(open(P(w->mnt, "secret"), O_RDONLY), EACCES);
	/* The shifted owner does. */
	become_fsids(ID_SHIFT + 1000, ID_SHIFT + 1000);
	EXPECT_EQ(close(open(P(w->mnt, "mine"), O_RDONLY)), 0);
	EXPECT_ERRNO(open(P(w->mnt, "secret"), O_RDONLY), EACCES);
	EXPECT_ERRNO(open(P(w->mnt, "closed/x"), O_CREAT | O_WRONLY, 0644),
		     EACCES);
	EXPECT_ERRNO(unlink(P(w->mnt, "secret")), EACCES);
	become_fsids(0, 0);
	EXPECT_EQ(access(P(w->lower, "secret"), F_OK), 0);
}

static int container_root_work(void *arg)
{
	const struct world *w = arg;
	char buf[8];
	int fd;

	/* Owned by image uid 1000 (shown 101000 = container uid 1000). */
	fd = open(P(w->mnt, "u1000"), O_RDONLY);
	if (fd < 0) {
		printf("# container root: open u1000: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	/* A directory of image uid 1000, mode 0755: DAC override. */
	fd = open(P(w->mnt, "d1000/byroot"), O_CREAT | O_WRONLY, 0644);
	if (fd < 0) {
		printf("# container root: create: %s\n", strerror(errno));
		return 2;
	}
	if (write(fd, "x", 1) != 1)
		return 3;
	close(fd);
	if (chown(P(w->mnt, "u1000"), 0, 0)) {
		printf("# container root: chown: %s\n", strerror(errno));
		return 4;
	}
	/* Not owned by anything the container maps: no override. */
	fd = open(P(w->mnt, "unmapped"), O_RDONLY);
	if (fd >= 0 || errno != EACCES) {
		printf("# container root read unmapped file: %d %s\n", fd,
		       strerror(errno));
		return 5;
	}
	if (read(-1, buf, 0) != -1)
		return 6;
	return 0;
}

TEST_F(world, container_root_has_root_powers_over_image)
{
	struct world *w = &self->w;

	ASSERT_EQ(make_file(P(w->lower, "u1000"), 0600, 1000, 1000), 0);
	ASSERT_EQ(make_dir(P(w->lower, "d1000"), 0755, 1000, 1000), 0);
	ASSERT_EQ(make_file(P(w->lower, "unmapped"), 0600, 70000, 70000), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(in_container(container_root_work, w), 0);
	/* Container root is image root underneath. */
	EXPECT_EQ(owner_is(P(w->lower, "d1000/byroot"), 0, 0), 0);
	EXPECT_EQ(owner_is(P(w->lower, "u1000"), 0, 0), 0);
}

TEST_HARNESS_MAIN
