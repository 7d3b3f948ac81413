// SPDX-License-Identifier: GPL-2.0
/*
 * The mark scheme: host root marks a tree with the maps it allows; root of
 * an unprivileged user namespace (0 -> 100000, 65536 ids) mounts shiftfs
 * from the mark with no options, sees the root-owned tree as its own, and
 * what it creates lands on disk as image root.  The mark itself is an
 * opaque token; unmarking does not take a container's mount away.
 */
#include "harness.h"
#include "mark_util.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/xattr.h>

/* A root-owned image: /, bin/ (0:0), home/user (1000:1000, 0700). */
static void make_image(const struct world *w)
{
	ASSERT_EQ(make_dir(P(w->lower, "bin"), 0755, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "bin/sh"), 0755, 0, 0), 0);
	ASSERT_EQ(make_dir(P(w->lower, "home"), 0755, 0, 0), 0);
	ASSERT_EQ(make_dir(P(w->lower, "home/user"), 0700, 1000, 1000), 0);
	ASSERT_EQ(make_file(P(w->lower, "home/user/notes"), 0600, 1000, 1000),
		  0);
	ASSERT_EQ(write_file(P(w->lower, "home/user/notes"), "user data"), 0);
}

TEST_F(world, mark_needs_both_maps)
{
	const char *mark_only[] = { "mark", NULL };
	const char *uid_only[] = { "mark", "uidmap=" MAP_DEFAULT, NULL };
	const char *gid_only[] = { "mark", "gidmap=" MAP_DEFAULT, NULL };
	struct world *w = &self->w;
	char log[1024];

	EXPECT_EQ(shiftfs_fsmount(w->lower, w->lower, mark_only, log,
				  sizeof(log)), -EINVAL);
	TH_LOG("mark alone: %s", log);
	EXPECT_NE(strstr(log, "uidmap"), NULL);
	EXPECT_EQ(shiftfs_fsmount(w->lower, w->lower, uid_only, log,
				  sizeof(log)), -EINVAL);
	EXPECT_NE(strstr(log, "gidmap"), NULL);
	EXPECT_EQ(shiftfs_fsmount(w->lower, w->lower, gid_only, log,
				  sizeof(log)), -EINVAL);
	EXPECT_NE(strstr(log, "uidmap"), NULL);
	EXPECT_EQ(mount_has_opt(w->lower, "mark"), 0);
}

TEST_F(world, mark_is_an_opaque_token)
{
	struct world *w = &self->w;
	struct stat st;
	char buf[64];

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	EXPECT_EQ(mount_has_opt(w->lower, ",mark"), 1);
	EXPECT_EQ(mount_has_opt(w->lower, "uidmap=0:100000:65536"), 1);

	/* stat works, nothing else does: not even for host root. */
	ASSERT_EQ(stat(w->lower, &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_ERRNO(open(w->lower, O_RDONLY | O_DIRECTORY), EACCES);
	EXPECT_EQ(opendir(w->lower), NULL);
	EXPECT_ERRNO(stat(P(w->lower, "bin"), &st), EACCES);
	EXPECT_ERRNO(open(P(w->lower, "home/user/notes"), O_RDONLY), EACCES);
	EXPECT_ERRNO(open(P(w->lower, "new"), O_CREAT | O_WRONLY, 0600),
		     EACCES);
	EXPECT_ERRNO(mkdir(P(w->lower, "d"), 0755), EACCES);
	EXPECT_ERRNO(chdir(w->lower), EACCES);
	EXPECT_ERRNO(chmod(w->lower, 0777), EPERM);
	EXPECT_ERRNO(chown(w->lower, 1, 1), EPERM);
	EXPECT_ERRNO(getxattr(w->lower, "user.x", buf, sizeof(buf)), EACCES);
	EXPECT_ERRNO(getxattr(w->lower, "trusted.x", buf, sizeof(buf)),
		     EOPNOTSUPP);
	EXPECT_ERRNO(setxattr(w->lower, "trusted.x", "1", 1, 0), EOPNOTSUPP);
	/* As an unprivileged host user (or container root seen from the host). */
	become_fsids(ID_SHIFT, ID_SHIFT);
	EXPECT_ERRNO(open(P(w->lower, "home/user/notes"), O_RDONLY), EACCES);
	EXPECT_ERRNO(open(w->lower, O_RDONLY | O_DIRECTORY), EACCES);
	become_fsids(0, 0);

	/* Unmark: the tree is back, untouched. */
	ASSERT_EQ(umount2(w->lower, 0), 0);
	EXPECT_EQ(mount_has_opt(w->lower, "mark"), 0);
	EXPECT_EQ(owner_is(P(w->lower, "home/user/notes"), 1000, 1000), 0);
	EXPECT_EQ(access(P(w->lower, "bin/sh"), X_OK), 0);
}

TEST_F(world, mark_is_no_source_for_host_root)
{
	const char *opts[] = { "uidmap=" MAP_DEFAULT, "gidmap=" MAP_DEFAULT,
			       NULL };
	struct world *w = &self->w;
	char log[1024];

	ASSERT_EQ(mark_tree(w->lower), 0);
	EXPECT_EQ(shiftfs_fsmount(w->lower, w->mnt, opts, log, sizeof(log)),
		  -EINVAL);
	TH_LOG("log: %s", log);
	EXPECT_NE(strstr(log, "mark"), NULL);
	/* Nor a mark of a mark. */
	EXPECT_EQ(mark_tree_maps(w->lower, MAP_DEFAULT, MAP_DEFAULT, log,
				 sizeof(log)), -EINVAL);
}

struct ctx {
	const struct world *w;
	const char *src;
	const char *dst;
};

static int container_uses_image(void *arg)
{
	const struct ctx *c = arg;
	char log[1024], buf[32] = "";
	struct stat st;
	int fd;

	CHILD_CHECK(userns_mount(c->src, c->dst, log, sizeof(log)) == 0, 1,
		    "mount from the mark: %s", log);
	/* Its own root-owned tree. */
	CHILD_CHECK(stat(c->dst, &st) == 0 && st.st_uid == 0 &&
		    st.st_gid == 0, 2, "root owner %u:%u", st.st_uid,
		    st.st_gid);
	CHILD_CHECK(stat(P(c->dst, "bin/sh"), &st) == 0 && st.st_uid == 0, 3,
		    "bin/sh");
	CHILD_CHECK(stat(P(c->dst, "home/user/notes"), &st) == 0 &&
		    st.st_uid == 1000 && st.st_gid == 1000, 4, "notes %u:%u",
		    st.st_uid, st.st_gid);
	/* Root powers over every image file. */
	fd = open(P(c->dst, "home/user/notes"), O_RDWR);
	CHILD_CHECK(fd >= 0, 5, "open notes");
	CHILD_CHECK(read(fd, buf, sizeof(buf) - 1) == 9, 6, "read");
	CHILD_CHECK(pwrite(fd, "USER", 4, 0) == 4, 7, "write");
	close(fd);
	CHILD_CHECK(close(open(P(c->dst, "etc-new"), O_CREAT | O_WRONLY,
			       0644)) == 0, 8, "create");
	CHILD_CHECK(mkdir(P(c->dst, "home/user/d"), 0700) == 0, 9, "mkdir");
	CHILD_CHECK(chown(P(c->dst, "home/user/d"), 1000, 1000) == 0, 10,
		    "chown");
	CHILD_CHECK(mkfifo(P(c->dst, "fifo"), 0600) == 0, 11, "mkfifo");
	CHILD_CHECK(rename(P(c->dst, "etc-new"), P(c->dst, "etc")) == 0, 12,
		    "rename");
	return 0;
}

/* The image marked, and root of a user namespace using it on @dst. */
static void container_uses_image_on(const struct world *w, const char *dst)
{
	struct ctx c = { w, w->lower, dst };

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(container_uses_image, &c), 0);
}

TEST_F(world, userns_root_mounts_marked_tree)
{
	struct world *w = &self->w;

	/* Onto the mark itself, as the LXC hook does, and elsewhere. */
	container_uses_image_on(w, w->lower);
	/* The container's mount namespace is gone; the mark is still here. */
	EXPECT_EQ(mount_has_opt(w->lower, ",mark"), 1);
	ASSERT_EQ(umount2(w->lower, 0), 0);

	/* Both sides: what it made is image root's, on disk. */
	EXPECT_EQ(owner_is(P(w->lower, "etc"), ID_HOST, ID_HOST), 0);
	EXPECT_EQ(owner_is(P(w->lower, "fifo"), ID_HOST, ID_HOST), 0);
	EXPECT_EQ(owner_is(P(w->lower, "home/user/d"), 1000, 1000), 0);
	EXPECT_EQ(owner_is(P(w->lower, "home/user/notes"), 1000, 1000), 0);
	EXPECT_EQ(owner_is(P(w->lower, "bin/sh"), 0, 0), 0);
}

TEST_F(world, userns_root_mounts_elsewhere)
{
	struct world *w = &self->w;

	container_uses_image_on(w, w->mnt);
	/* It was mounted in the container's mount namespace only. */
	EXPECT_ERRNO(access(P(w->mnt, "bin"), F_OK), ENOENT);
}

static int legacy_mount(void *arg)
{
	const struct world *w = arg;
	struct stat st;

	CHILD_CHECK(mount(w->lower, w->mnt, "shiftfs", 0, NULL) == 0, 1,
		    "mount(2) from the mark");
	CHILD_CHECK(stat(P(w->mnt, "bin"), &st) == 0 && st.st_uid == 0, 2,
		    "bin");
	CHILD_CHECK(umount2(w->mnt, 0) == 0, 3, "umount");
	errno = 0;
	CHILD_CHECK(mount(w->lower, w->mnt, "shiftfs", 0,
			  "uidmap=0:100000:65536,gidmap=0:100000:65536") < 0 &&
		    errno == EPERM, 4, "mount(2) with maps");
	return 0;
}

TEST_F(world, userns_legacy_mount_api)
{
	struct world *w = &self->w;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(legacy_mount, w), 0);
}

/* The mount survives its mark, even the mark's superblock going away. */
TEST_F(world, userns_mount_outlives_unmark)
{
	struct world *w = &self->w;
	struct stat st;
	int mfd, fd;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	mfd = userns_mount_fd(w->lower);
	/* The child and its mount namespace are gone: unmark frees the mark. */
	ASSERT_EQ(umount2(w->lower, 0), 0);
	EXPECT_EQ(mount_has_opt(w->lower, "mark"), 0);
	/* Still a working shifted view, attached where we like. */
	ASSERT_EQ(fstatat(mfd, "home/user/notes", &st, 0), 0);
	EXPECT_EQ(st.st_uid, ID_SHIFT + 1000);
	ASSERT_EQ(move_mount(mfd, "", AT_FDCWD, w->mnt,
			     MOVE_MOUNT_F_EMPTY_PATH), 0);
	close(mfd);
	become_fsids(ID_SHIFT, ID_SHIFT);
	fd = open(P(w->mnt, "made-after-unmark"), O_CREAT | O_WRONLY, 0600);
	become_fsids(0, 0);
	ASSERT_GE(fd, 0);
	close(fd);
	EXPECT_EQ(owner_is(P(w->lower, "made-after-unmark"), 0, 0), 0);
	ASSERT_EQ(umount2(w->mnt, 0), 0);
}

/* Maps a mark allows: its own, and sub-ranges at the same offset. */
struct mapcase {
	const char *umap;
	const char *gmap;
	int want;	/* 0 or -errno of the mount */
	const char *why;
};

/* A case and the world to try it in, for try_mount(). */
struct mapcase_in {
	struct mapcase m;
	const struct world *w;
};

static int try_mount(void *arg)
{
	const struct mapcase_in *a = arg;
	const struct mapcase *m = &a->m;
	const struct world *w = a->w;
	char log[1024];
	int err;

	err = userns_mount(w->lower, w->mnt, log, sizeof(log));
	printf("# uid_map %s -> %d %s\n", m->umap, err, log);
	if (err != m->want)
		return 1;
	if (m->why && !strstr(log, m->why))
		return 2;
	return 0;
}

TEST_F(world, derived_map_must_be_allowed_by_mark)
{
	static const struct mapcase cases[] = {
		{ "0 100000 65536\n", "0 100000 65536\n", 0, NULL },
		{ "0 100000 1000\n", "0 100000 1000\n", 0, NULL },
		{ "0 100000 1\n1000 101000 1\n", "0 100000 1\n", 0, NULL },
		{ "0 100001 10\n", "0 100000 65536\n", -EPERM,
		  "uidmap=0:100001:10 of this user namespace is not allowed" },
		{ "0 200000 65536\n", "0 200000 65536\n", -EPERM,
		  "not allowed by the mark" },
		{ "0 100000 65537\n", "0 100000 65536\n", -EPERM,
		  "not allowed by the mark" },
		{ "0 100000 65536\n", "0 300000 65536\n", -EPERM,
		  "gidmap=0:300000:65536" },
		{ "0 100000 65536\n", NULL, -EPERM, "no gid_map" },
	};
	struct world *w = &self->w;
	struct mapcase_in a = { .w = w };
	unsigned int i;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		a.m = cases[i];
		EXPECT_EQ(in_userns(a.m.umap, a.m.gmap, try_mount, &a), 0);
	}
}

TEST_F(world, mark_with_several_extents)
{
	struct world *w = &self->w;
	struct mapcase_in a = { .w = w };
	char log[1024];
	const char *opts[] = { "mark", "uidmap=0:100000:10",
			       "uidmap=1000:101000:1", "gidmap=0:100000:65536",
			       NULL };

	a.m.umap = "0 100000 10\n";
	a.m.gmap = "0 100000 10\n";
	ASSERT_EQ(shiftfs_fsmount(w->lower, w->lower, opts, log,
				  sizeof(log)), 0);
	EXPECT_EQ(in_userns(a.m.umap, a.m.gmap, try_mount, &a), 0);
	a.m.umap = "0 100000 10\n1000 101000 1\n";
	EXPECT_EQ(in_userns(a.m.umap, a.m.gmap, try_mount, &a), 0);
	/* 10..999 are not delegated. */
	a.m.umap = "0 100000 11\n";
	a.m.want = -EPERM;
	EXPECT_EQ(in_userns(a.m.umap, a.m.gmap, try_mount, &a), 0);
}

/* setcap in the container: v2 means its root, which is image root. */
static int container_setcap(void *arg)
{
	const struct ctx *c = arg;
	struct {
		uint32_t magic_etc;
		struct {
			uint32_t permitted, inheritable;
		} data[2];
	} v2 = { 0x02000000 | 1, { { 1u << 13, 0 }, { 0, 0 } } };
	uint32_t got[6] = { 0 };
	char log[1024];
	ssize_t n;

	CHILD_CHECK(userns_mount(c->src, c->dst, log, sizeof(log)) == 0, 1,
		    "mount: %s", log);
	CHILD_CHECK(setxattr(P(c->dst, "bin/sh"), "security.capability", &v2,
			     sizeof(v2), 0) == 0, 2, "setcap v2");
	n = getxattr(P(c->dst, "bin/sh"), "security.capability", got,
		     sizeof(got));
	CHILD_CHECK(n == 20 || (n == 24 && got[5] == 0), 3,
		    "read back: %zd bytes, magic %#x", n, got[0]);
	CHILD_CHECK(got[1] == 1u << 13, 4, "permitted %#x", got[1]);
	return 0;
}

TEST_F(world, container_root_sets_file_capabilities)
{
	struct ctx c;
	struct world *w = &self->w;
	uint32_t got[6] = { 0 };
	ssize_t n;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	c.w = w;
	c.src = w->lower;
	c.dst = w->mnt;
	ASSERT_EQ(in_userns_default(container_setcap, &c), 0);
	ASSERT_EQ(umount2(w->lower, 0), 0);
	/* On disk: a plain v2 capability, image root's. */
	n = getxattr(P(w->lower, "bin/sh"), "security.capability", got,
		     sizeof(got));
	EXPECT_EQ(n, 20);
	EXPECT_EQ(got[0] & 0xff000000u, 0x02000000u);
	EXPECT_EQ(got[1], 1u << 13);
}

TEST_HARNESS_MAIN
