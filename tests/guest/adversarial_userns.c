// SPDX-License-Identifier: GPL-2.0
/*
 * Attacks on the mark scheme and on a userns-mounted shiftfs, from root
 * (and from an ordinary user) of an unprivileged container: mounting what
 * was not marked or with maps of its choosing, marking from a user
 * namespace, reaching files outside the shifted tree, storing ids it does
 * not map, device nodes, trusted.* and security.* xattrs, setuid bits.
 * Each asserts that the attack fails and, where it matters, that the file
 * underneath is unchanged.
 *
 * Some 600 lines in one file: every attack starts from the same marked
 * image and container (make_image(), the fixture), and they read best
 * side by side.
 */
#include "harness.h"
#include "mark_util.h"

#include <linux/openat2.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

/* The image: root-owned, with files of image users 1000 and 2000. */
static void make_image(const struct world *w)
{
	ASSERT_EQ(chmod(w->lower, 0755), 0);
	ASSERT_EQ(make_file(P(w->lower, "rootfile"), 0600, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "u1000"), 0600, 1000, 1000), 0);
	ASSERT_EQ(make_file(P(w->lower, "u2000"), 0600, 2000, 2000), 0);
	ASSERT_EQ(make_file(P(w->lower, "unmapped"), 0644, 70000, 70000), 0);
	ASSERT_EQ(make_file(P(w->lower, "suid"), 04755, 1000, 1000), 0);
	ASSERT_EQ(make_file(P(w->lower, "sgid"), 02755, 0, 1000), 0);
	ASSERT_EQ(make_dir(P(w->lower, "etc"), 0755, 0, 0), 0);
	ASSERT_EQ(write_file(P(w->lower, "u2000"), "secret of 2000"), 0);
	/* Outside the marked tree, on the same filesystem. */
	ASSERT_EQ(make_file(P(w->base, "outside"), 0600, 0, 0), 0);
	ASSERT_EQ(write_file(P(w->base, "outside"), "host secret"), 0);
	ASSERT_EQ(symlink("../outside", P(w->lower, "rel-escape")), 0);
	ASSERT_EQ(symlink(P(w->base, "outside"), P(w->lower, "abs-escape")),
		  0);
}

/* Marked and mounted from the mark, in the child, on w->mnt. */
static int mount_from_mark(const struct world *w)
{
	char log[1024];
	int err = userns_mount(w->lower, w->mnt, log, sizeof(log));

	if (err)
		printf("# mount from mark: %d %s\n", err, log);
	return err;
}

/* ---- mounting -------------------------------------------------------- */

static int try_unmarked(void *arg)
{
	const struct world *w = arg;
	char log[1024];

	CHILD_CHECK(userns_mount(w->lower, w->mnt, log, sizeof(log)) == -EPERM,
		    1, "unmarked: %s", log);
	CHILD_CHECK(strstr(log, "is not a shiftfs mark"), 2, "log: %s", log);
	return 0;
}

TEST_F(world, userns_cannot_mount_unmarked_tree)
{
	struct world *w = &self->w;

	make_image(w);
	ASSERT_EQ(in_userns_default(try_unmarked, w), 0);
}

static int try_explicit(void *arg)
{
	const struct world *w = arg;
	const char *uid[] = { "uidmap=" MAP_DEFAULT, NULL };
	const char *gid[] = { "gidmap=0:100000:1", NULL };
	const char *mark[] = { "mark", NULL };
	const char *identity[] = { "uidmap=0:0:65536", NULL };
	const char *const *cases[] = { uid, gid, mark, identity };
	char log[1024];
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = shiftfs_fsmount(w->lower, w->mnt, cases[i], log,
					  sizeof(log));

		printf("# %s -> %d %s", cases[i][0], err, log);
		CHILD_CHECK(err == -EPERM, 1, "%s accepted", cases[i][0]);
		CHILD_CHECK(strstr(log, "not accepted from a user namespace"),
			    2, "log: %s", log);
	}
	return 0;
}

TEST_F(world, userns_cannot_give_maps_or_mark)
{
	struct world *w = &self->w;

	make_image(w);
	/* Whether or not the tree is marked. */
	ASSERT_EQ(in_userns_default(try_explicit, w), 0);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(try_explicit, w), 0);
}

static int try_mark_own_tree(void *arg)
{
	const struct world *w = arg;
	char dir[128], log[1024];

	/* Its own tmpfs, which it may mount: still no mark. */
	snprintf(dir, sizeof(dir), "%s/own", w->mnt);
	CHILD_CHECK(mount("tmpfs", w->mnt, "tmpfs", 0, NULL) == 0, 1, "tmpfs");
	CHILD_CHECK(mkdir(dir, 0755) == 0, 2, "mkdir");
	CHILD_CHECK(mark_tree_maps(dir, "0:100000:65536", "0:100000:65536",
				   log, sizeof(log)) == -EPERM, 3, "mark: %s",
		    log);
	CHILD_CHECK(mark_tree_maps(w->lower, "0:0:65536", "0:0:65536", log,
				   sizeof(log)) == -EPERM, 4, "mark: %s", log);
	/* Nor mount shiftfs over a filesystem of its own. */
	CHILD_CHECK(userns_mount(dir, dir, log, sizeof(log)) == -EPERM, 5,
		    "own tmpfs: %s", log);
	return 0;
}

TEST_F(world, userns_cannot_mark)
{
	struct world *w = &self->w;

	make_image(w);
	ASSERT_EQ(in_userns_default(try_mark_own_tree, w), 0);
	EXPECT_EQ(mount_has_opt(w->lower, "mark"), 0);
}

TEST_F(world, userns_cannot_use_plain_shiftfs_mount_as_source)
{
	struct world *w = &self->w;

	make_image(w);
	/* Host root's shifted view, not a mark. */
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	{
		struct world w2 = *w;

		snprintf(w2.lower, sizeof(w2.lower), "%s", w->mnt);
		snprintf(w2.mnt, sizeof(w2.mnt), "%s", w->base);
		ASSERT_EQ(in_userns_default(try_unmarked, &w2), 0);
	}
}

/* A filesystem mounted in a user namespace is no tree to mark. */
static int make_userns_tmpfs(void *arg)
{
	int *sock = arg, fsfd, mfd;

	fsfd = fsopen("tmpfs", FSOPEN_CLOEXEC);
	CHILD_CHECK(fsfd >= 0, 1, "fsopen tmpfs");
	CHILD_CHECK(fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0, 2,
		    "create");
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
	CHILD_CHECK(mfd >= 0, 3, "fsmount");
	CHILD_CHECK(mkdirat(mfd, "tree", 0755) == 0, 4, "mkdir");
	CHILD_CHECK(send_fd(sock[1], mfd) == 0, 5, "send");
	return 0;
}

TEST_F(world, mark_refuses_lower_mounted_in_userns)
{
	struct world *w = &self->w;
	char log[1024], tree[128];
	int sock[2], mfd;

	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sock), 0);
	ASSERT_EQ(in_userns_default(make_userns_tmpfs, sock), 0);
	mfd = recv_fd(sock[0]);
	ASSERT_GE(mfd, 0);
	ASSERT_EQ(move_mount(mfd, "", AT_FDCWD, w->mnt,
			     MOVE_MOUNT_F_EMPTY_PATH), 0);
	snprintf(tree, sizeof(tree), "%s/tree", w->mnt);
	EXPECT_EQ(mark_tree_maps(tree, MAP_DEFAULT, MAP_DEFAULT, log,
				 sizeof(log)), -EINVAL);
	TH_LOG("log: %s", log);
	/* 6.1 already calls a mount made in a user namespace idmapped. */
	EXPECT_TRUE(strstr(log, "mounted in a user namespace") ||
		    strstr(log, "idmapped"));
}

/* ---- the permission model on a userns mount -------------------------- */

static int container_user(void *arg)
{
	const struct world *w = arg;
	char buf[64];
	int fd;

	CHILD_CHECK(mount_from_mark(w) == 0, 1, "mount");
	/* An ordinary user of the container: uid 1000 inside. */
	CHILD_CHECK(setgroups(0, NULL) == 0 || errno == EPERM, 2, "setgroups");
	CHILD_CHECK(setresgid(1000, 1000, 1000) == 0, 3, "setresgid");
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0, 4, "setresuid");

	fd = open(P(w->mnt, "u1000"), O_RDWR);
	CHILD_CHECK(fd >= 0, 5, "own file");
	close(fd);
	errno = 0;
	CHILD_CHECK(open(P(w->mnt, "u2000"), O_RDONLY) < 0 && errno == EACCES,
		    6, "read 2000's file");
	CHILD_CHECK(open(P(w->mnt, "u2000"), O_WRONLY) < 0 && errno == EACCES,
		    7, "write 2000's file");
	CHILD_CHECK(open(P(w->mnt, "rootfile"), O_RDONLY) < 0 &&
		    errno == EACCES, 8, "read root's file");
	CHILD_CHECK(open(P(w->mnt, "etc/x"), O_CREAT | O_WRONLY, 0644) < 0 &&
		    errno == EACCES, 9, "create in root's dir");
	CHILD_CHECK(unlink(P(w->mnt, "u2000")) < 0 && errno == EACCES, 10,
		    "unlink in root's dir");
	CHILD_CHECK(chown(P(w->mnt, "u1000"), 0, 0) < 0 && errno == EPERM,
		    11, "give own file to root");
	CHILD_CHECK(chmod(P(w->mnt, "u2000"), 0666) < 0 && errno == EPERM,
		    12, "chmod 2000's file");
	CHILD_CHECK(setxattr(P(w->mnt, "u2000"), "user.x", "1", 1, 0) < 0, 13,
		    "xattr on 2000's file");
	(void)buf;
	return 0;
}

TEST_F(world, container_user_gets_no_more_than_its_image_uid)
{
	struct world *w = &self->w;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(container_user, w), 0);
	ASSERT_EQ(umount2(w->lower, 0), 0);
	EXPECT_EQ(owner_is(P(w->lower, "u1000"), 1000, 1000), 0);
	EXPECT_EQ(owner_is(P(w->lower, "u2000"), 2000, 2000), 0);
	EXPECT_EQ(access(P(w->lower, "u2000"), F_OK), 0);
}

static int container_root_unmapped(void *arg)
{
	const struct world *w = arg;

	CHILD_CHECK(mount_from_mark(w) == 0, 1, "mount");
	/* Image uid 70000 is not delegated by the mark. */
	errno = 0;
	CHILD_CHECK(open(P(w->mnt, "unmapped"), O_WRONLY) < 0, 2,
		    "write unmapped file");
	errno = 0;
	CHILD_CHECK(chown(P(w->mnt, "unmapped"), 0, 0) < 0 && errno == EPERM,
		    3, "chown unmapped file");
	CHILD_CHECK(chmod(P(w->mnt, "unmapped"), 0666) < 0, 4,
		    "chmod unmapped file");
	return 0;
}

TEST_F(world, container_root_has_no_power_over_unmapped_ids)
{
	struct world *w = &self->w;
	struct stat st;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(container_root_unmapped, w), 0);
	ASSERT_EQ(umount2(w->lower, 0), 0);
	EXPECT_EQ(owner_is(P(w->lower, "unmapped"), 70000, 70000), 0);
	ASSERT_EQ(stat(P(w->lower, "unmapped"), &st), 0);
	EXPECT_EQ(st.st_mode & 07777, 0644u);
}

/* ---- escaping the shifted tree --------------------------------------- */

static int must_not_read(const char *what, int fd_or_err)
{
	char buf[64] = "";

	if (fd_or_err < 0)
		return 0;
	if (read(fd_or_err, buf, sizeof(buf) - 1) > 0)
		printf("# %s: read \"%s\"\n", what, buf);
	close(fd_or_err);
	printf("# %s: opened\n", what);
	return 1;
}

static int container_escapes(void *arg)
{
	const struct world *w = arg;
	struct open_how how = { .flags = O_RDONLY };
	char bind[128], path[256];
	struct stat st, root;
	int mfd, bad = 0;

	CHILD_CHECK(mount_from_mark(w) == 0, 1, "mount");
	CHILD_CHECK(stat(w->mnt, &root) == 0, 2, "stat root");

	/* Plain "..": leaves shiftfs (the mount's parent), not into lower. */
	CHILD_CHECK(stat(P(w->mnt, ".."), &st) == 0, 3, "stat ..");
	CHILD_CHECK(st.st_dev != root.st_dev, 4, ".. on shiftfs");
	bad += must_not_read("../outside",
			     open(P(w->mnt, "../outside"), O_RDONLY));
	bad += must_not_read("../lower/u2000",
			     open(P(w->mnt, "../lower/u2000"), O_RDONLY));
	/* Symlinks in the image pointing out. */
	bad += must_not_read("rel-escape",
			     open(P(w->mnt, "rel-escape"), O_RDONLY));
	bad += must_not_read("abs-escape",
			     open(P(w->mnt, "abs-escape"), O_RDONLY));
	/* openat2 confined to the mount. */
	mfd = open(w->mnt, O_PATH | O_DIRECTORY);
	CHILD_CHECK(mfd >= 0, 5, "open root");
	how.resolve = RESOLVE_BENEATH;
	errno = 0;
	CHILD_CHECK(syscall(SYS_openat2, mfd, "../outside", &how,
			    sizeof(how)) < 0 && errno == EXDEV, 6,
		    "BENEATH ..");
	errno = 0;
	CHILD_CHECK(syscall(SYS_openat2, mfd, "rel-escape", &how,
			    sizeof(how)) < 0 && errno == EXDEV, 7,
		    "BENEATH symlink");
	how.resolve = RESOLVE_IN_ROOT;
	errno = 0;
	CHILD_CHECK(syscall(SYS_openat2, mfd, "../../outside", &how,
			    sizeof(how)) < 0 && errno == ENOENT, 8,
		    "IN_ROOT ..");
	errno = 0;
	CHILD_CHECK(syscall(SYS_openat2, mfd, "abs-escape", &how,
			    sizeof(how)) < 0 && errno == ENOENT, 9,
		    "IN_ROOT abs symlink");
	how.resolve = RESOLVE_NO_XDEV;
	errno = 0;
	CHILD_CHECK(syscall(SYS_openat2, mfd, "../outside", &how,
			    sizeof(how)) < 0 && errno == EXDEV, 10,
		    "NO_XDEV ..");
	/* Hardlinks and renames across the shiftfs boundary. */
	errno = 0;
	CHILD_CHECK(link(P(w->base, "outside"), P(w->mnt, "in")) < 0 &&
		    errno == EXDEV, 11, "link outside -> in");
	snprintf(path, sizeof(path), "%s/out-link", w->base);
	errno = 0;
	CHILD_CHECK(link(P(w->mnt, "u2000"), path) < 0 && errno == EXDEV, 12,
		    "link in -> outside");
	errno = 0;
	CHILD_CHECK(rename(P(w->mnt, "u2000"), path) < 0 && errno == EXDEV,
		    13, "rename in -> outside");
	errno = 0;
	CHILD_CHECK(rename(P(w->base, "outside"), P(w->mnt, "in")) < 0 &&
		    errno == EXDEV, 14, "rename outside -> in");
	/* A bind mount of the host's directory into the tree: host rules. */
	snprintf(bind, sizeof(bind), "%s/etc", w->mnt);
	CHILD_CHECK(mount(w->base, bind, NULL, MS_BIND | MS_REC, NULL) == 0, 15,
		    "bind");
	bad += must_not_read("etc/outside (bind)",
			     open(P(bind, "outside"), O_RDONLY));
	bad += must_not_read("etc/lower/u2000 (bind)",
			     open(P(bind, "lower/u2000"), O_RDONLY));
	CHILD_CHECK(umount2(bind, MNT_DETACH) == 0, 16, "umount bind");
	/* A bind of a shiftfs subdirectory is still shiftfs. */
	CHILD_CHECK(mount(P(w->mnt, "etc"), w->base, NULL, MS_BIND, NULL) == 0,
		    17, "bind etc");
	snprintf(path, sizeof(path), "%s/..", w->base);
	CHILD_CHECK(stat(path, &st) == 0 && st.st_dev != root.st_dev, 18,
		    "bind ..");
	close(mfd);
	return bad ? 20 : 0;
}

TEST_F(world, container_root_cannot_leave_the_tree)
{
	struct world *w = &self->w;
	char buf[32] = "";
	int fd;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(container_escapes, w), 0);
	fd = open(P(w->base, "outside"), O_RDONLY);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(read(fd, buf, sizeof(buf)), 11);
	close(fd);
	EXPECT_EQ(owner_is(P(w->base, "outside"), 0, 0), 0);
	EXPECT_ERRNO(access(P(w->base, "out-link"), F_OK), ENOENT);
}

/* ---- ids it cannot store --------------------------------------------- */

struct acl_xattr {
	uint32_t version;
	struct {
		uint16_t tag, perm;
		uint32_t id;
	} e[5];
};

static size_t make_acl(struct acl_xattr *a, uint32_t user)
{
	a->version = 2;
	a->e[0].tag = 0x01; a->e[0].perm = 6; a->e[0].id = -1;	/* USER_OBJ */
	a->e[1].tag = 0x02; a->e[1].perm = 4; a->e[1].id = user; /* USER */
	a->e[2].tag = 0x04; a->e[2].perm = 4; a->e[2].id = -1;	/* GROUP_OBJ */
	a->e[3].tag = 0x10; a->e[3].perm = 4; a->e[3].id = -1;	/* MASK */
	a->e[4].tag = 0x20; a->e[4].perm = 0; a->e[4].id = -1;	/* OTHER */
	return sizeof(*a);
}

struct vfs_cap_v3 {
	uint32_t magic_etc;
	struct {
		uint32_t permitted, inheritable;
	} data[2];
	uint32_t rootid;
};

static int container_unmappable(void *arg)
{
	const struct world *w = arg;
	struct vfs_cap_v3 cap = { 0x03000000 | 1, { { 1u << 12, 0 } }, 70000 };
	struct acl_xattr acl;
	size_t n;

	CHILD_CHECK(mount_from_mark(w) == 0, 1, "mount");
	/* Ids beyond its map do not even exist in its namespace. */
	errno = 0;
	CHILD_CHECK(chown(P(w->mnt, "u1000"), 70000, -1) < 0 &&
		    errno == EINVAL, 2, "chown 70000");
	n = make_acl(&acl, 70000);
	errno = 0;
	CHILD_CHECK(setxattr(P(w->mnt, "u1000"), "system.posix_acl_access",
			     &acl, n, 0) < 0 && (errno == EINVAL ||
						  errno == EOVERFLOW), 3,
		    "acl with 70000");
	errno = 0;
	CHILD_CHECK(setxattr(P(w->mnt, "u1000"), "security.capability", &cap,
			     sizeof(cap), 0) < 0 && (errno == EINVAL ||
						      errno == EOVERFLOW), 4,
		    "v3 caps rootid 70000");
	return 0;
}

TEST_F(world, unmappable_ids_are_not_stored)
{
	struct vfs_cap_v3 cap = { 0x03000000 | 1, { { 1u << 12, 0 } }, 200000 };
	struct acl_xattr acl;
	struct world *w = &self->w;
	char buf[256];
	size_t n;
	int mfd;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(container_unmappable, w), 0);

	/* As host root through the container's mount: ids with no way down. */
	mfd = userns_mount_fd(w->lower);
	ASSERT_EQ(move_mount(mfd, "", AT_FDCWD, w->mnt,
			     MOVE_MOUNT_F_EMPTY_PATH), 0);
	close(mfd);
	/* Kernel ids the mount does not map: 200000, and host root (0). */
	EXPECT_ERRNO(chown(P(w->mnt, "u1000"), 200000, -1), EOVERFLOW);
	EXPECT_ERRNO(chown(P(w->mnt, "u1000"), 0, -1), EOVERFLOW);
	n = make_acl(&acl, 200000);
	/* The VFS itself refuses ids its s_user_ns lacks: EINVAL. */
	errno = 0;
	EXPECT_TRUE(setxattr(P(w->mnt, "u1000"), "system.posix_acl_access",
			     &acl, n, 0) < 0 &&
		    (errno == EOVERFLOW || errno == EINVAL));
	errno = 0;
	EXPECT_TRUE(setxattr(P(w->mnt, "u1000"), "security.capability", &cap,
			     sizeof(cap), 0) < 0 &&
		    (errno == EOVERFLOW || errno == EINVAL));

	/* Unchanged underneath. */
	umount2(w->mnt, MNT_DETACH);
	ASSERT_EQ(umount2(w->lower, 0), 0);
	EXPECT_EQ(owner_is(P(w->lower, "u1000"), 1000, 1000), 0);
	EXPECT_ERRNO(getxattr(P(w->lower, "u1000"), "system.posix_acl_access",
			      buf, sizeof(buf)), ENODATA);
	EXPECT_ERRNO(getxattr(P(w->lower, "u1000"), "security.capability",
			      buf, sizeof(buf)), ENODATA);
}

/* ---- setuid bits, devices, privileged xattrs ------------------------- */

static int container_suid(void *arg)
{
	const struct world *w = arg;
	int fd;

	CHILD_CHECK(mount_from_mark(w) == 0, 1, "mount");
	/* Root chowns a setgid file: the bit goes. */
	CHILD_CHECK(chown(P(w->mnt, "sgid"), 0, 0) == 0, 2, "chown sgid");
	/* The owner writes to its setuid file: the bit goes. */
	CHILD_CHECK(setresgid(1000, 1000, 1000) == 0, 3, "setresgid");
	CHILD_CHECK(setresuid(1000, 1000, 1000) == 0, 4, "setresuid");
	fd = open(P(w->mnt, "suid"), O_WRONLY);
	CHILD_CHECK(fd >= 0, 5, "open suid");
	CHILD_CHECK(write(fd, "x", 1) == 1, 6, "write");
	close(fd);
	return 0;
}

TEST_F(world, setid_bits_cleared_on_write_and_chown)
{
	struct world *w = &self->w;
	struct stat st;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(container_suid, w), 0);
	ASSERT_EQ(umount2(w->lower, 0), 0);
	ASSERT_EQ(stat(P(w->lower, "suid"), &st), 0);
	EXPECT_EQ(st.st_mode & 07777, 0755u);
	ASSERT_EQ(stat(P(w->lower, "sgid"), &st), 0);
	EXPECT_EQ(st.st_mode & 07777, 0755u);
	EXPECT_EQ(owner_is(P(w->lower, "sgid"), 0, 0), 0);
}

static int container_devices(void *arg)
{
	const struct world *w = arg;

	CHILD_CHECK(mount_from_mark(w) == 0, 1, "mount");
	errno = 0;
	CHILD_CHECK(mknod(P(w->mnt, "mem"), S_IFCHR | 0666, makedev(1, 1)) < 0
		    && errno == EPERM, 2, "mknod char");
	errno = 0;
	CHILD_CHECK(mknod(P(w->mnt, "blk"), S_IFBLK | 0666, makedev(7, 0)) < 0
		    && errno == EPERM, 3, "mknod block");
	/* A device node already in the image does not open (nodev). */
	errno = 0;
	CHILD_CHECK(open(P(w->mnt, "null"), O_RDWR) < 0 && errno == EACCES, 4,
		    "open image device");
	return 0;
}

TEST_F(world, no_device_nodes_from_userns)
{
	struct world *w = &self->w;

	make_image(w);
	ASSERT_EQ(mknod(P(w->lower, "null"), S_IFCHR | 0666, makedev(1, 3)), 0);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(container_devices, w), 0);
	ASSERT_EQ(umount2(w->lower, 0), 0);
	EXPECT_ERRNO(access(P(w->lower, "mem"), F_OK), ENOENT);
	EXPECT_ERRNO(access(P(w->lower, "blk"), F_OK), ENOENT);
}

static int container_xattrs(void *arg)
{
	const struct world *w = arg;
	char buf[64];

	CHILD_CHECK(mount_from_mark(w) == 0, 1, "mount");
	errno = 0;
	CHILD_CHECK(setxattr(P(w->mnt, "u1000"), "trusted.overlay.opaque", "y",
			     1, 0) < 0 && errno == EPERM, 2, "trusted set");
	errno = 0;
	CHILD_CHECK(getxattr(P(w->mnt, "u1000"), "trusted.x", buf,
			     sizeof(buf)) < 0 && errno == ENODATA, 3,
		    "trusted get");
	errno = 0;
	CHILD_CHECK(removexattr(P(w->mnt, "u1000"), "trusted.x") < 0 &&
		    errno == EPERM, 4, "trusted remove");
	errno = 0;
	CHILD_CHECK(setxattr(P(w->mnt, "u1000"), "security.evm", "y", 1, 0) < 0
		    && errno == EPERM, 5, "security.evm set");
	return 0;
}

TEST_F(world, privileged_xattrs_refused_to_namespace_root)
{
	struct world *w = &self->w;
	char buf[64];

	make_image(w);
	ASSERT_EQ(setxattr(P(w->lower, "u1000"), "trusted.x", "host", 4, 0), 0);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(container_xattrs, w), 0);
	ASSERT_EQ(umount2(w->lower, 0), 0);
	EXPECT_ERRNO(getxattr(P(w->lower, "u1000"), "trusted.overlay.opaque",
			      buf, sizeof(buf)), ENODATA);
	EXPECT_EQ(getxattr(P(w->lower, "u1000"), "trusted.x", buf, sizeof(buf)),
		  4);
	EXPECT_ERRNO(getxattr(P(w->lower, "u1000"), "security.evm", buf,
			      sizeof(buf)), ENODATA);
}

TEST_HARNESS_MAIN
