// SPDX-License-Identifier: GPL-2.0
/*
 * Mount options and life cycle: uidmap/gidmap extents (both ways, edges
 * and gaps), rejected maps and sources with the reason in the fs log, the
 * extent limit, no mount from a user namespace, the stacking depth limit,
 * remount (flags yes, maps no), read-only mounts,
 * umount while the source is busy or gone, and files kept open across
 * umount of the source mount.
 */
#include "harness.h"
#include "shiftfs_util.h"

TEST_F(world, remount_keeps_maps)
{
	struct world *w = &self->w;
	int fd;

	ASSERT_EQ(mount(w->lower, w->mnt, "shiftfs", 0,
			"uidmap=0:100000:65536,gidmap=0:100000:65536"), 0);
	/* Repeating the maps (as mount(8) does) is fine... */
	ASSERT_EQ(mount(NULL, w->mnt, NULL, MS_REMOUNT | MS_RDONLY,
			"uidmap=0:100000:65536,gidmap=0:100000:65536"), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	EXPECT_ERRNO(open(P(w->mnt, "f"), O_CREAT | O_WRONLY, 0644), EROFS);
	become_fsids(0, 0);
	/* ... so is not giving them... */
	ASSERT_EQ(mount(NULL, w->mnt, NULL, MS_REMOUNT, NULL), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	fd = open(P(w->mnt, "f"), O_CREAT | O_WRONLY, 0644);
	EXPECT_GE(fd, 0);
	close(fd);
	become_fsids(0, 0);
	/* ... changing them is not. */
	EXPECT_ERRNO(mount(NULL, w->mnt, NULL, MS_REMOUNT,
			   "uidmap=0:200000:65536"), EINVAL);
	EXPECT_EQ(owner_is(P(w->mnt, "f"), ID_SHIFT, ID_SHIFT), 0);
}

TEST_F(world, reconfigure_with_fspick)
{
	struct world *w = &self->w;
	char log[512];
	int fd;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	fd = fspick(AT_FDCWD, w->mnt, FSPICK_CLOEXEC);
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

TEST_F(world, bind_mount_read_only)
{
	struct world *w = &self->w;
	char ro[128];

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	snprintf(ro, sizeof(ro), "%s/ro", w->base);
	ASSERT_EQ(mkdir(ro, 0755), 0);
	ASSERT_EQ(mount(w->mnt, ro, NULL, MS_BIND, NULL), 0);
	ASSERT_EQ(mount(NULL, ro, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
			NULL), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	EXPECT_ERRNO(mkdir(P(ro, "d"), 0755), EROFS);
	EXPECT_EQ(mkdir(P(w->mnt, "d"), 0755), 0);
}

TEST_F(world, read_only_source_mount)
{
	struct world *w = &self->w;
	char src[128];
	int fd;

	ASSERT_EQ(make_file(P(w->lower, "f"), 0666, 0, 0), 0);
	snprintf(src, sizeof(src), "%s/src", w->base);
	ASSERT_EQ(mkdir(src, 0755), 0);
	ASSERT_EQ(mount(w->lower, src, NULL, MS_BIND, NULL), 0);
	ASSERT_EQ(mount(NULL, src, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
			NULL), 0);
	ASSERT_EQ(mount(src, w->mnt, "shiftfs", 0,
			"uidmap=0:100000:65536,gidmap=0:100000:65536"), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	/* The mounter's clone of a read-only mount stays read-only. */
	fd = open(P(w->mnt, "f"), O_WRONLY);
	EXPECT_EQ(fd, -1);
	EXPECT_EQ(errno, EROFS);
	EXPECT_ERRNO(mkdir(P(w->mnt, "d"), 0755), EROFS);
	fd = open(P(w->mnt, "f"), O_RDONLY);
	EXPECT_GE(fd, 0);
	close(fd);
}

TEST_F(world, source_umounted_under_us)
{
	struct world *w = &self->w;
	char src[128], buf[8] = "";
	int fd;

	snprintf(src, sizeof(src), "%s/src", w->base);
	ASSERT_EQ(mkdir(src, 0755), 0);
	ASSERT_EQ(mount("tmpfs", src, "tmpfs", 0, NULL), 0);
	ASSERT_EQ(make_file(P(src, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(write_file(P(src, "f"), "kept"), 0);
	ASSERT_EQ(mount(src, w->mnt, "shiftfs", 0,
			"uidmap=0:100000:65536,gidmap=0:100000:65536"), 0);
	fd = open(P(w->mnt, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	/* Our private clone keeps the source alive. */
	ASSERT_EQ(umount2(src, MNT_DETACH), 0);
	EXPECT_EQ(read(fd, buf, sizeof(buf) - 1), 4);
	EXPECT_STREQ(buf, "kept");
	close(fd);
	EXPECT_EQ(owner_is(P(w->mnt, "f"), ID_SHIFT, ID_SHIFT), 0);
	/* And our umount with an open file is lazy-able and clean. */
	fd = open(P(w->mnt, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(umount(w->mnt), EBUSY);
	EXPECT_EQ(umount2(w->mnt, MNT_DETACH), 0);
	EXPECT_EQ(read(fd, buf, 1), 1);
	close(fd);
}

/*
 * Several extents, given out of order: every id at an extent's edges and
 * in the gaps between them translates as the map says, both ways.
 */
TEST_F(world, multi_extent_map_both_ways)
{
	static const struct { unsigned int lower, upper; } ids[] = {
		{ 0, 100000 }, { 999, 100999 }, { 1000, 1000 },
		{ 1001, 65534 }, { 1999, 65534 }, { 2000, 200000 },
		{ 2009, 200009 }, { 2010, 65534 }, { 65534, 101000 },
		{ 65535, 65534 }, { 4000000000u, 65534 },
	};
	struct world *w = &self->w;
	struct stat st;
	char lpath[256], mpath[256];
	unsigned int i;
	int fd;

	ASSERT_EQ(mount(w->lower, w->mnt, "shiftfs", 0,
			"uidmap=65534:101000:1,uidmap=2000:200000:10,"
			"uidmap=0:100000:1000,uidmap=1000:1000:1,"
			"gidmap=0:100000:65536"), 0);
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		snprintf(lpath, sizeof(lpath), "%s/u%u", w->lower,
			 ids[i].lower);
		snprintf(mpath, sizeof(mpath), "%s/u%u", w->mnt, ids[i].lower);
		fd = open(lpath, O_CREAT | O_WRONLY, 0644);
		ASSERT_GE(fd, 0);
		close(fd);
		ASSERT_EQ(chown(lpath, ids[i].lower, 0), 0);
		ASSERT_EQ(stat(mpath, &st), 0);
		EXPECT_EQ(st.st_uid, ids[i].upper);
		TH_LOG("lower %u shown as %u", ids[i].lower,
		       (unsigned int)st.st_uid);
	}
	/* And back: chown through the mount lands on the mapped lower id. */
	snprintf(mpath, sizeof(mpath), "%s/u0", w->mnt);
	snprintf(lpath, sizeof(lpath), "%s/u0", w->lower);
	ASSERT_EQ(chown(mpath, 200005, -1), 0);
	ASSERT_EQ(stat(lpath, &st), 0);
	EXPECT_EQ(st.st_uid, 2005u);
	ASSERT_EQ(chown(mpath, 1000, -1), 0);
	ASSERT_EQ(stat(lpath, &st), 0);
	EXPECT_EQ(st.st_uid, 1000u);
	ASSERT_EQ(chown(mpath, 101000, -1), 0);
	ASSERT_EQ(stat(lpath, &st), 0);
	EXPECT_EQ(st.st_uid, 65534u);
	/* Ids in the gaps have no lower id. */
	EXPECT_ERRNO(chown(mpath, 200010, -1), EOVERFLOW);
	EXPECT_ERRNO(chown(mpath, 99999, -1), EOVERFLOW);
	EXPECT_ERRNO(chown(mpath, 1001, -1), EOVERFLOW);
}

/* One bad value for uidmap (after @before, if any) and what it must say. */
static void expect_rejected(const struct world *w, const char *before,
			    const char *bad, const char *why)
{
	const char *opts[] = { "gidmap=0:100000:65536", before, NULL, NULL };
	char log[1024], opt[256];
	int err;

	snprintf(opt, sizeof(opt), "uidmap=%s", bad);
	if (before) {
		opts[2] = opt;
	} else {
		opts[1] = opt;
	}
	err = shiftfs_fsmount(w->lower, w->mnt, opts, log, sizeof(log));
	TH_LOG("uidmap=%s -> %d, log: %s", bad, err, log);
	EXPECT_EQ(err, -EINVAL);
	EXPECT_NE(strstr(log, "e shiftfs: "), NULL);
	EXPECT_NE(strstr(log, why), NULL);
}

TEST_F(world, bad_maps_rejected_with_reason)
{
	struct world *w = &self->w;

	expect_rejected(w, NULL, "1:2", "malformed");
	expect_rejected(w, NULL, "garbage", "malformed");
	expect_rejected(w, NULL, "0:100000:65536x", "malformed");
	expect_rejected(w, NULL, "0:100000:65536\n", "malformed");
	expect_rejected(w, NULL, "-1:100000:1", "malformed");
	expect_rejected(w, NULL, "0:100000:", "malformed");
	expect_rejected(w, NULL, "4294967296:0:1", "malformed");
	expect_rejected(w, NULL, "0:100000:0", "COUNT 0");
	expect_rejected(w, NULL, "4294967290:0:10", "wraps");
	expect_rejected(w, NULL, "0:4294967290:10", "wraps");
	expect_rejected(w, NULL, "4294967295:0:1", "wraps");
	expect_rejected(w, "uidmap=0:100000:10", "5:200000:10",
			"overlaps 0:100000:10 in underlying");
	expect_rejected(w, "uidmap=0:100000:10", "20:100005:10",
			"overlaps 0:100000:10 in mount");
	expect_rejected(w, "uidmap=10:100000:10", "0:200000:11",
			"overlaps");
}

TEST_F(world, too_many_extents)
{
	const char *opts[] = { "gidmap=0:100000:65536", NULL };
	struct world *w = &self->w;
	char log[1024], v[64];
	int fsfd, i;

	fsfd = fsopen("shiftfs", FSOPEN_CLOEXEC);
	ASSERT_GE(fsfd, 0);
	ASSERT_EQ(fsconfig(fsfd, FSCONFIG_SET_STRING, "source", w->lower, 0),
		  0);
	ASSERT_EQ(fsconfig(fsfd, FSCONFIG_SET_STRING, "gidmap", "0:0:1", 0), 0);
	for (i = 0; i < 340; i++) {
		snprintf(v, sizeof(v), "%d:%d:1", i * 2, 100000 + i * 2);
		ASSERT_EQ(fsconfig(fsfd, FSCONFIG_SET_STRING, "uidmap", v, 0),
			  0);
	}
	ASSERT_ERRNO(fsconfig(fsfd, FSCONFIG_SET_STRING, "uidmap",
			      "5000:200000:1", 0), EINVAL);
	fs_log(fsfd, log, sizeof(log));
	TH_LOG("log: %s", log);
	EXPECT_NE(strstr(log, "too many extents"), NULL);
	close(fsfd);
	(void)opts;

	/* Exactly 340 works, and every extent maps. */
	fsfd = fsopen("shiftfs", FSOPEN_CLOEXEC);
	ASSERT_GE(fsfd, 0);
	ASSERT_EQ(fsconfig(fsfd, FSCONFIG_SET_STRING, "source", w->lower, 0),
		  0);
	ASSERT_EQ(fsconfig(fsfd, FSCONFIG_SET_STRING, "gidmap", "0:0:1", 0), 0);
	for (i = 339; i >= 0; i--) {
		snprintf(v, sizeof(v), "%d:%d:1", i * 2, 100000 + i * 2);
		ASSERT_EQ(fsconfig(fsfd, FSCONFIG_SET_STRING, "uidmap", v, 0),
			  0);
	}
	ASSERT_EQ(fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0), 0);
	i = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
	ASSERT_GE(i, 0);
	ASSERT_EQ(move_mount(i, "", AT_FDCWD, w->mnt, MOVE_MOUNT_F_EMPTY_PATH),
		  0);
	ASSERT_EQ(make_file(P(w->lower, "f0"), 0644, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "f678"), 0644, 678, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "f679"), 0644, 679, 0), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "f0"), 100000, 0), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "f678"), 100678, 0), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "f679"), ID_OVERFLOW, 0), 0);
}

TEST_F(world, bad_source_and_missing_maps)
{
	const char *maps[] = { "uidmap=" MAP_DEFAULT, "gidmap=" MAP_DEFAULT,
			       NULL };
	const char *nogid[] = { "uidmap=" MAP_DEFAULT, NULL };
	struct world *w = &self->w;
	char log[1024];

	ASSERT_EQ(make_file(P(w->lower, "file"), 0644, 0, 0), 0);
	EXPECT_EQ(shiftfs_fsmount(P(w->lower, "file"), w->mnt, maps, log,
				  sizeof(log)), -EINVAL);
	EXPECT_NE(strstr(log, "not a directory"), NULL);
	EXPECT_EQ(shiftfs_fsmount(P(w->lower, "nope"), w->mnt, maps, log,
				  sizeof(log)), -ENOENT);
	EXPECT_EQ(shiftfs_fsmount(NULL, w->mnt, maps, log, sizeof(log)),
		  -EINVAL);
	EXPECT_NE(strstr(log, "source"), NULL);
	EXPECT_EQ(shiftfs_fsmount(w->lower, w->mnt, nogid, log, sizeof(log)),
		  -EINVAL);
	EXPECT_NE(strstr(log, "gidmap"), NULL);
}

static int try_mount_in_userns(void *arg)
{
	const struct world *w = arg;
	int err;

	/* Its own mount namespace, so fsopen() itself is allowed. */
	if (unshare(CLONE_NEWNS))
		return 10;
	err = shiftfs_mount_default(w);
	if (err != -EPERM) {
		printf("# mount from a user namespace: %d, expected -EPERM\n",
		       err);
		return 1;
	}
	return 0;
}

TEST_F(world, userns_cannot_mount)
{
	struct world *w = &self->w;

	ASSERT_EQ(in_container(try_mount_in_userns, w), 0);
}

TEST_F(world, stacking_depth_limited)
{
	const char *opts[] = { "uidmap=0:0:1000", "gidmap=0:0:1000", NULL };
	struct world *w = &self->w;
	char m2[128], m3[128], log[512];

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	snprintf(m2, sizeof(m2), "%s/m2", w->base);
	snprintf(m3, sizeof(m3), "%s/m3", w->base);
	ASSERT_EQ(mkdir(m2, 0755), 0);
	ASSERT_EQ(mkdir(m3, 0755), 0);
	/* tmpfs (0) <- shiftfs (1) <- shiftfs (2) <- refused. */
	EXPECT_EQ(shiftfs_fsmount(w->mnt, m2, opts, log, sizeof(log)), 0);
	EXPECT_EQ(shiftfs_fsmount(m2, m3, opts, log, sizeof(log)), -EINVAL);
	TH_LOG("log: %s", log);
	EXPECT_NE(strstr(log, "stacking depth"), NULL);
}

TEST_HARNESS_MAIN
