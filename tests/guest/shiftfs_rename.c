// SPDX-License-Identifier: GPL-2.0
/*
 * Directory operations: create (owned by the caller mapped back, or
 * EOVERFLOW for an unmapped caller), unlink/rmdir, hard links, rename(2)
 * and its renameat2() flags, mknod of FIFOs, sockets and device nodes,
 * and changes racing with renames underneath.
 */
#include "harness.h"
#include "shiftfs_util.h"

#include <sys/capability.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

/* fsuid/fsgid as given, with @cap raised again after setfsuid(). */
static int become_fsids_with_cap(uid_t uid, gid_t gid, cap_value_t cap)
{
	cap_t caps;
	int err;

	become_fsids(uid, gid);
	caps = cap_get_proc();
	if (!caps)
		return -1;
	err = cap_set_flag(caps, CAP_EFFECTIVE, 1, &cap, CAP_SET) ||
	      cap_set_proc(caps);
	cap_free(caps);
	return err ? -1 : 0;
}

TEST_F(world, rename_noreplace_and_exchange)
{
	struct world *w = &self->w;
	char buf[16];

	ASSERT_EQ(make_file(P(w->lower, "a"), 0644, 1, 1), 0);
	ASSERT_EQ(make_file(P(w->lower, "b"), 0644, 2, 2), 0);
	ASSERT_EQ(write_file(P(w->lower, "a"), "A"), 0);
	ASSERT_EQ(write_file(P(w->lower, "b"), "B"), 0);
	ASSERT_EQ(make_dir(P(w->lower, "d"), 0777, 3, 3), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);

	EXPECT_ERRNO(renameat2(AT_FDCWD, P(w->mnt, "a"), AT_FDCWD,
			       P(w->mnt, "b"), RENAME_NOREPLACE), EEXIST);
	ASSERT_EQ(renameat2(AT_FDCWD, P(w->mnt, "a"), AT_FDCWD,
			    P(w->mnt, "c"), RENAME_NOREPLACE), 0);
	ASSERT_EQ(renameat2(AT_FDCWD, P(w->mnt, "c"), AT_FDCWD,
			    P(w->mnt, "b"), RENAME_EXCHANGE), 0);
	/* Exchanged on both sides, owners travel with the files. */
	ASSERT_GE(read_file(P(w->mnt, "b"), buf, sizeof(buf)), 0);
	EXPECT_STREQ(buf, "A");
	ASSERT_GE(read_file(P(w->lower, "c"), buf, sizeof(buf)), 0);
	EXPECT_STREQ(buf, "B");
	EXPECT_EQ(owner_is(P(w->mnt, "b"), ID_SHIFT + 1, ID_SHIFT + 1), 0);
	EXPECT_EQ(owner_is(P(w->lower, "c"), 2, 2), 0);
	/* A file and a directory. */
	ASSERT_EQ(renameat2(AT_FDCWD, P(w->mnt, "c"), AT_FDCWD,
			    P(w->mnt, "d"), RENAME_EXCHANGE), 0);
	EXPECT_EQ(owner_is(P(w->lower, "c"), 3, 3), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "d"), ID_SHIFT + 2, ID_SHIFT + 2), 0);
	EXPECT_ERRNO(renameat2(AT_FDCWD, P(w->mnt, "nope"), AT_FDCWD,
			       P(w->mnt, "b"), RENAME_EXCHANGE), ENOENT);
	/* Into a subdirectory and over an existing file. */
	ASSERT_EQ(rename(P(w->mnt, "b"), P(w->mnt, "c/b")), 0);
	ASSERT_EQ(rename(P(w->mnt, "d"), P(w->mnt, "c/b")), 0);
	ASSERT_GE(read_file(P(w->lower, "c/b"), buf, sizeof(buf)), 0);
	EXPECT_STREQ(buf, "B");
	EXPECT_ERRNO(rename(P(w->mnt, "c"), P(w->mnt, "c/sub")), EINVAL);
}

TEST_F(world, rename_whiteout)
{
	struct world *w = &self->w;
	struct stat st;
	int err;

	ASSERT_EQ(make_file(P(w->lower, "a"), 0644, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	/* Host root has no id in the mount to own the whiteout by. */
	EXPECT_ERRNO(renameat2(AT_FDCWD, P(w->mnt, "a"), AT_FDCWD,
			       P(w->mnt, "b"), RENAME_WHITEOUT), EOVERFLOW);
	ASSERT_EQ(become_fsids_with_cap(ID_SHIFT, ID_SHIFT, CAP_MKNOD), 0);
	errno = 0;
	err = renameat2(AT_FDCWD, P(w->mnt, "a"), AT_FDCWD, P(w->mnt, "b"),
			RENAME_WHITEOUT);
	if (err && errno == EINVAL)
		SKIP("lower fs has no RENAME_WHITEOUT");
	ASSERT_EQ(err, 0);
	ASSERT_EQ(lstat(P(w->lower, "a"), &st), 0);
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(st.st_rdev, makedev(0, 0));
	EXPECT_EQ(owner_is(P(w->lower, "a"), 0, 0), 0);
	ASSERT_EQ(lstat(P(w->mnt, "a"), &st), 0);
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(owner_is(P(w->lower, "b"), 0, 0), 0);
}

TEST_F(world, mknod_fifo_socket_device)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct world *w = &self->w;
	struct stat st;
	int s;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	become_fsids(ID_SHIFT, ID_SHIFT + 1);
	ASSERT_EQ(mknod(P(w->mnt, "fifo"), S_IFIFO | 0600, 0), 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", P(w->mnt, "sock"));
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	ASSERT_GE(s, 0);
	ASSERT_EQ(bind(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(s);
	/* No CAP_MKNOD (setfsuid dropped it): the VFS says no. */
	EXPECT_ERRNO(mknod(P(w->mnt, "null"), S_IFCHR | 0666, makedev(1, 3)),
		     EPERM);
	/* With it, the lower rules allow a device node. */
	ASSERT_EQ(become_fsids_with_cap(ID_SHIFT, ID_SHIFT + 1, CAP_MKNOD), 0);
	ASSERT_EQ(mknod(P(w->mnt, "null"), S_IFCHR | 0666, makedev(1, 3)), 0);
	become_fsids(0, 0);

	ASSERT_EQ(lstat(P(w->lower, "fifo"), &st), 0);
	EXPECT_TRUE(S_ISFIFO(st.st_mode));
	ASSERT_EQ(lstat(P(w->lower, "sock"), &st), 0);
	EXPECT_TRUE(S_ISSOCK(st.st_mode));
	ASSERT_EQ(lstat(P(w->mnt, "null"), &st), 0);
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(st.st_rdev, makedev(1, 3));
	EXPECT_EQ(owner_is(P(w->lower, "fifo"), 0, 1), 0);
	EXPECT_EQ(owner_is(P(w->lower, "sock"), 0, 1), 0);
	EXPECT_EQ(owner_is(P(w->lower, "null"), 0, 1), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "null"), ID_SHIFT, ID_SHIFT + 1), 0);
	/*
	 * It is a device node underneath; through a host-root mount, which
	 * makes the container's root its owner, it does not open (nodev).
	 */
	EXPECT_ERRNO(open(P(w->mnt, "null"), O_WRONLY), EACCES);
	s = open(P(w->lower, "null"), O_WRONLY);
	ASSERT_GE(s, 0);
	EXPECT_EQ(write(s, "x", 1), 1);
	close(s);
}

static int container_mknod(void *arg)
{
	const struct world *w = arg;

	if (mknod(P(w->mnt, "fifo"), S_IFIFO | 0600, 0))
		return 1;
	/* CAP_MKNOD in a user namespace is not enough for devices. */
	if (mknod(P(w->mnt, "null"), S_IFCHR | 0666, makedev(1, 3)) != -1 ||
	    errno != EPERM)
		return 2;
	return 0;
}

TEST_F(world, container_root_mknod)
{
	struct world *w = &self->w;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(in_container(container_mknod, w), 0);
	EXPECT_EQ(owner_is(P(w->lower, "fifo"), 0, 0), 0);
	EXPECT_ERRNO(access(P(w->lower, "null"), F_OK), ENOENT);
}

TEST_F(world, rename_underneath_then_through)
{
	struct world *w = &self->w;
	struct stat st;

	ASSERT_EQ(make_dir(P(w->lower, "d1"), 0755, 0, 0), 0);
	ASSERT_EQ(make_dir(P(w->lower, "d2"), 0755, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "d1/f"), 0644, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(stat(P(w->mnt, "d1/f"), &st), 0);
	/* Moved underneath: the old name is gone, the new one works. */
	ASSERT_EQ(rename(P(w->lower, "d1/f"), P(w->lower, "d2/g")), 0);
	EXPECT_ERRNO(stat(P(w->mnt, "d1/f"), &st), ENOENT);
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(rename(P(w->mnt, "d2/g"), P(w->mnt, "d1/h")), 0);
	become_fsids(0, 0);
	EXPECT_EQ(access(P(w->lower, "d1/h"), F_OK), 0);
	/* Whole directories, underneath. */
	ASSERT_EQ(rename(P(w->lower, "d1"), P(w->lower, "d3")), 0);
	EXPECT_ERRNO(stat(P(w->mnt, "d1/h"), &st), ENOENT);
	EXPECT_EQ(stat(P(w->mnt, "d3/h"), &st), 0);
}

TEST_F(world, create_maps_caller_back)
{
	struct world *w = &self->w;
	int fd;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	/* Container root as seen from the host: fsuid 100000, no caps. */
	become_fsids(ID_SHIFT, ID_SHIFT + 5);
	fd = open(P(w->mnt, "new"), O_CREAT | O_EXCL | O_WRONLY, 0640);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(mkdir(P(w->mnt, "newdir"), 0755), 0);
	ASSERT_EQ(symlink("new", P(w->mnt, "newlink")), 0);
	ASSERT_EQ(mkfifo(P(w->mnt, "fifo"), 0600), 0);
	become_fsids(0, 0);

	EXPECT_EQ(owner_is(P(w->mnt, "new"), ID_SHIFT, ID_SHIFT + 5), 0);
	EXPECT_EQ(owner_is(P(w->lower, "new"), ID_HOST, 5), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "newdir"), ID_SHIFT, ID_SHIFT + 5), 0);
	EXPECT_EQ(owner_is(P(w->lower, "newdir"), ID_HOST, 5), 0);
	EXPECT_EQ(owner_is(P(w->lower, "newlink"), ID_HOST, 5), 0);
	EXPECT_EQ(owner_is(P(w->lower, "fifo"), ID_HOST, 5), 0);
}

TEST_F(world, create_by_unmapped_caller_overflows)
{
	struct world *w = &self->w;

	ASSERT_EQ(chmod(w->lower, 0777), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	/* Host uid 1000 is outside 100000..165535. */
	become_fsids(1000, 1000);
	EXPECT_ERRNO(open(P(w->mnt, "f"), O_CREAT | O_WRONLY, 0644), EOVERFLOW);
	EXPECT_ERRNO(mkdir(P(w->mnt, "d"), 0755), EOVERFLOW);
	EXPECT_ERRNO(symlink("x", P(w->mnt, "l")), EOVERFLOW);
	/* Mapped uid, unmapped gid: still nothing it could own. */
	become_fsids(ID_SHIFT + 1000, 1000);
	EXPECT_ERRNO(open(P(w->mnt, "f"), O_CREAT | O_WRONLY, 0644), EOVERFLOW);
	become_fsids(0, 0);
	EXPECT_ERRNO(access(P(w->lower, "f"), F_OK), ENOENT);
	EXPECT_ERRNO(access(P(w->lower, "d"), F_OK), ENOENT);
}

TEST_F(world, unlink_and_rmdir)
{
	struct world *w = &self->w;

	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(make_dir(P(w->lower, "d"), 0755, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "d/inner"), 0644, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);

	EXPECT_ERRNO(rmdir(P(w->mnt, "d")), ENOTEMPTY);
	ASSERT_EQ(unlink(P(w->mnt, "d/inner")), 0);
	ASSERT_EQ(rmdir(P(w->mnt, "d")), 0);
	ASSERT_EQ(unlink(P(w->mnt, "f")), 0);
	EXPECT_ERRNO(access(P(w->lower, "f"), F_OK), ENOENT);
	EXPECT_ERRNO(access(P(w->lower, "d"), F_OK), ENOENT);
	EXPECT_ERRNO(access(P(w->mnt, "f"), F_OK), ENOENT);
	/* And a new one with the same name is a new file. */
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(close(open(P(w->mnt, "f"), O_CREAT | O_EXCL | O_WRONLY,
			     0600)), 0);
	become_fsids(0, 0);
	EXPECT_EQ(owner_is(P(w->lower, "f"), 0, 0), 0);
}

TEST_F(world, hardlinks_share_inode)
{
	struct world *w = &self->w;
	struct stat a, b, l;

	ASSERT_EQ(make_file(P(w->lower, "a"), 0644, 0, 0), 0);
	ASSERT_EQ(link(P(w->lower, "a"), P(w->lower, "b")), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(stat(P(w->mnt, "a"), &a), 0);
	ASSERT_EQ(stat(P(w->mnt, "b"), &b), 0);
	EXPECT_EQ(a.st_ino, b.st_ino);
	EXPECT_EQ(a.st_nlink, 2u);
	/* Host root has no id in the mount: it can't link (or create). */
	EXPECT_ERRNO(link(P(w->mnt, "a"), P(w->mnt, "c")), EOVERFLOW);
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(link(P(w->mnt, "a"), P(w->mnt, "c")), 0);
	become_fsids(0, 0);
	ASSERT_EQ(stat(P(w->mnt, "c"), &b), 0);
	ASSERT_EQ(stat(P(w->lower, "c"), &l), 0);
	EXPECT_EQ(b.st_ino, a.st_ino);
	EXPECT_EQ(l.st_ino, a.st_ino);
	EXPECT_EQ(b.st_nlink, 3u);
	EXPECT_EQ(l.st_nlink, 3u);
	ASSERT_EQ(unlink(P(w->mnt, "a")), 0);
	ASSERT_EQ(stat(P(w->mnt, "c"), &b), 0);
	EXPECT_EQ(b.st_nlink, 2u);
}

TEST_F(world, rename_basic)
{
	struct world *w = &self->w;
	struct stat st;

	ASSERT_EQ(make_file(P(w->lower, "a"), 0644, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "b"), 0644, 1, 1), 0);
	ASSERT_EQ(mkdir(P(w->lower, "d"), 0755), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(rename(P(w->mnt, "a"), P(w->mnt, "d/a2")), 0);
	EXPECT_EQ(access(P(w->lower, "d/a2"), F_OK), 0);
	EXPECT_ERRNO(access(P(w->lower, "a"), F_OK), ENOENT);
	ASSERT_EQ(rename(P(w->mnt, "d/a2"), P(w->mnt, "b")), 0);
	become_fsids(0, 0);
	ASSERT_EQ(stat(P(w->mnt, "b"), &st), 0);
	EXPECT_EQ(st.st_uid, ID_SHIFT);
	EXPECT_EQ(owner_is(P(w->lower, "b"), 0, 0), 0);
}

TEST_HARNESS_MAIN
