// SPDX-License-Identifier: GPL-2.0
/*
 * Phase 1 of shiftfs: mounting (both APIs, option checks and their
 * explanations), id translation both ways, EOVERFLOW for unmappable ids,
 * lookup/revalidation against changes made underneath, readdir, file I/O,
 * create/unlink, statfs, show_options and the permission model.
 */
#include "harness.h"
#include "shiftfs_util.h"

#include <dirent.h>
#include <sys/statfs.h>
#include <sys/vfs.h>

#define SETUP(w)							\
	do {								\
		ASSERT_EQ(world_setup(w), 0);				\
	} while (0)

#define SETUP_MOUNTED(w)						\
	do {								\
		SETUP(w);						\
		ASSERT_EQ(shiftfs_mount_default(w), 0);			\
	} while (0)

static int read_mountinfo_opts(const char *mnt, char *buf, size_t len)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " - shiftfs ");
		char point[512];

		if (!p || sscanf(line, "%*s %*s %*s %*s %511s", point) != 1)
			continue;
		if (strcmp(point, mnt))
			continue;
		snprintf(buf, len, "%s", p);
		found = 0;
	}
	fclose(f);
	return found;
}

TEST(mount_new_api)
{
	struct world w;
	char opts[4096];
	struct stat st;

	SETUP_MOUNTED(&w);
	ASSERT_EQ(stat(w.mnt, &st), 0);
	EXPECT_EQ(st.st_uid, ID_SHIFT);
	EXPECT_EQ(st.st_gid, ID_SHIFT);
	ASSERT_EQ(read_mountinfo_opts(w.mnt, opts, sizeof(opts)), 0);
	TH_LOG("mountinfo: %s", opts);
	EXPECT_NE(strstr(opts, "uidmap=0:100000:65536"), NULL);
	EXPECT_NE(strstr(opts, "gidmap=0:100000:65536"), NULL);
	EXPECT_NE(strstr(opts, w.lower), NULL);
}

TEST(mount_legacy_api)
{
	struct world w;
	struct stat st;
	char opts[4096];

	SETUP(&w);
	ASSERT_EQ(mount(w.lower, w.mnt, "shiftfs", 0,
			"uidmap=0:100000:1000,uidmap=65534:101000:1,"
			"gidmap=0:100000:100,gidmap=101:100101:899"), 0);
	ASSERT_EQ(stat(w.mnt, &st), 0);
	EXPECT_EQ(st.st_uid, ID_SHIFT);
	ASSERT_EQ(read_mountinfo_opts(w.mnt, opts, sizeof(opts)), 0);
	EXPECT_NE(strstr(opts, "uidmap=0:100000:1000,uidmap=65534:101000:1,"
			 "gidmap=0:100000:100,gidmap=101:100101:899"), NULL);
	/* mount(2) goes through the same parser: bad options fail too. */
	EXPECT_ERRNO(mount(w.lower, w.mnt, "shiftfs", 0,
			   "uidmap=0:100000,gidmap=0:100000:10"), EINVAL);
	EXPECT_ERRNO(mount(w.lower, w.mnt, "shiftfs", 0,
			   "uidmap=0:1:1,gidmap=0:1:1,bogus=1"), EINVAL);
}

/*
 * Several extents, given out of order: every id at an extent's edges and
 * in the gaps between them translates as the map says, both ways.
 */
TEST(multi_extent_map_both_ways)
{
	static const struct { unsigned int lower, upper; } ids[] = {
		{ 0, 100000 }, { 999, 100999 }, { 1000, 1000 },
		{ 1001, 65534 }, { 1999, 65534 }, { 2000, 200000 },
		{ 2009, 200009 }, { 2010, 65534 }, { 65534, 101000 },
		{ 65535, 65534 }, { 4000000000u, 65534 },
	};
	struct world w;
	struct stat st;
	char lpath[256], mpath[256];
	unsigned int i;
	int fd;

	SETUP(&w);
	ASSERT_EQ(mount(w.lower, w.mnt, "shiftfs", 0,
			"uidmap=65534:101000:1,uidmap=2000:200000:10,"
			"uidmap=0:100000:1000,uidmap=1000:1000:1,"
			"gidmap=0:100000:65536"), 0);
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		snprintf(lpath, sizeof(lpath), "%s/u%u", w.lower, ids[i].lower);
		snprintf(mpath, sizeof(mpath), "%s/u%u", w.mnt, ids[i].lower);
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
	snprintf(mpath, sizeof(mpath), "%s/u0", w.mnt);
	snprintf(lpath, sizeof(lpath), "%s/u0", w.lower);
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

TEST(bad_maps_rejected_with_reason)
{
	struct world w;

	SETUP(&w);
	expect_rejected(&w, NULL, "1:2", "malformed");
	expect_rejected(&w, NULL, "garbage", "malformed");
	expect_rejected(&w, NULL, "0:100000:65536x", "malformed");
	expect_rejected(&w, NULL, "0:100000:65536\n", "malformed");
	expect_rejected(&w, NULL, "-1:100000:1", "malformed");
	expect_rejected(&w, NULL, "0:100000:", "malformed");
	expect_rejected(&w, NULL, "4294967296:0:1", "malformed");
	expect_rejected(&w, NULL, "0:100000:0", "COUNT 0");
	expect_rejected(&w, NULL, "4294967290:0:10", "wraps");
	expect_rejected(&w, NULL, "0:4294967290:10", "wraps");
	expect_rejected(&w, NULL, "4294967295:0:1", "wraps");
	expect_rejected(&w, "uidmap=0:100000:10", "5:200000:10",
			"overlaps 0:100000:10 in underlying");
	expect_rejected(&w, "uidmap=0:100000:10", "20:100005:10",
			"overlaps 0:100000:10 in mount");
	expect_rejected(&w, "uidmap=10:100000:10", "0:200000:11",
			"overlaps");
}

TEST(too_many_extents)
{
	const char *opts[] = { "gidmap=0:100000:65536", NULL };
	struct world w;
	char log[1024], v[64];
	int fsfd, i;

	SETUP(&w);
	fsfd = fsopen("shiftfs", FSOPEN_CLOEXEC);
	ASSERT_GE(fsfd, 0);
	ASSERT_EQ(fsconfig(fsfd, FSCONFIG_SET_STRING, "source", w.lower, 0), 0);
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
	ASSERT_EQ(fsconfig(fsfd, FSCONFIG_SET_STRING, "source", w.lower, 0), 0);
	ASSERT_EQ(fsconfig(fsfd, FSCONFIG_SET_STRING, "gidmap", "0:0:1", 0), 0);
	for (i = 339; i >= 0; i--) {
		snprintf(v, sizeof(v), "%d:%d:1", i * 2, 100000 + i * 2);
		ASSERT_EQ(fsconfig(fsfd, FSCONFIG_SET_STRING, "uidmap", v, 0),
			  0);
	}
	ASSERT_EQ(fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0), 0);
	i = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
	ASSERT_GE(i, 0);
	ASSERT_EQ(move_mount(i, "", AT_FDCWD, w.mnt, MOVE_MOUNT_F_EMPTY_PATH),
		  0);
	ASSERT_EQ(make_file(P(w.lower, "f0"), 0644, 0, 0), 0);
	ASSERT_EQ(make_file(P(w.lower, "f678"), 0644, 678, 0), 0);
	ASSERT_EQ(make_file(P(w.lower, "f679"), 0644, 679, 0), 0);
	EXPECT_EQ(owner_is(P(w.mnt, "f0"), 100000, 0), 0);
	EXPECT_EQ(owner_is(P(w.mnt, "f678"), 100678, 0), 0);
	EXPECT_EQ(owner_is(P(w.mnt, "f679"), ID_OVERFLOW, 0), 0);
}

TEST(bad_source_and_missing_maps)
{
	const char *maps[] = { "uidmap=" MAP_DEFAULT, "gidmap=" MAP_DEFAULT,
			       NULL };
	const char *nogid[] = { "uidmap=" MAP_DEFAULT, NULL };
	struct world w;
	char log[1024];

	SETUP(&w);
	ASSERT_EQ(make_file(P(w.lower, "file"), 0644, 0, 0), 0);
	EXPECT_EQ(shiftfs_fsmount(P(w.lower, "file"), w.mnt, maps, log,
				  sizeof(log)), -EINVAL);
	EXPECT_NE(strstr(log, "not a directory"), NULL);
	EXPECT_EQ(shiftfs_fsmount(P(w.lower, "nope"), w.mnt, maps, log,
				  sizeof(log)), -ENOENT);
	EXPECT_EQ(shiftfs_fsmount(NULL, w.mnt, maps, log, sizeof(log)),
		  -EINVAL);
	EXPECT_NE(strstr(log, "source"), NULL);
	EXPECT_EQ(shiftfs_fsmount(w.lower, w.mnt, nogid, log, sizeof(log)),
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

TEST(userns_cannot_mount)
{
	struct world w;

	SETUP(&w);
	ASSERT_EQ(in_container(try_mount_in_userns, &w), 0);
}

TEST(stat_shows_shifted_ids)
{
	struct world w;
	struct stat lst, mst;

	SETUP(&w);
	ASSERT_EQ(make_file(P(w.lower, "root"), 0644, 0, 0), 0);
	ASSERT_EQ(make_file(P(w.lower, "user"), 0640, 1000, 1001), 0);
	ASSERT_EQ(make_file(P(w.lower, "last"), 0600, 65535, 65535), 0);
	ASSERT_EQ(make_file(P(w.lower, "unmapped"), 0600, 70000, 70000), 0);
	ASSERT_EQ(make_dir(P(w.lower, "dir"), 0750, 0, 1000), 0);
	ASSERT_EQ(symlink("root", P(w.lower, "link")), 0);
	ASSERT_EQ(lchown(P(w.lower, "link"), 1000, 1000), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);

	EXPECT_EQ(owner_is(P(w.mnt, "root"), ID_SHIFT, ID_SHIFT), 0);
	EXPECT_EQ(owner_is(P(w.mnt, "user"), ID_SHIFT + 1000, ID_SHIFT + 1001),
		  0);
	EXPECT_EQ(owner_is(P(w.mnt, "last"), ID_SHIFT + 65535,
			   ID_SHIFT + 65535), 0);
	EXPECT_EQ(owner_is(P(w.mnt, "unmapped"), ID_OVERFLOW, ID_OVERFLOW), 0);
	EXPECT_EQ(owner_is(P(w.mnt, "dir"), ID_SHIFT, ID_SHIFT + 1000), 0);
	EXPECT_EQ(owner_is(P(w.mnt, "link"), ID_SHIFT + 1000, ID_SHIFT + 1000),
		  0);

	/* Everything else is the lower file's. */
	ASSERT_EQ(stat(P(w.lower, "user"), &lst), 0);
	ASSERT_EQ(stat(P(w.mnt, "user"), &mst), 0);
	EXPECT_EQ(mst.st_ino, lst.st_ino);
	EXPECT_EQ(mst.st_mode, lst.st_mode);
	EXPECT_EQ(mst.st_nlink, lst.st_nlink);
	EXPECT_EQ(mst.st_size, lst.st_size);
	EXPECT_EQ(mst.st_mtim.tv_sec, lst.st_mtim.tv_sec);
	EXPECT_EQ(mst.st_mtim.tv_nsec, lst.st_mtim.tv_nsec);
	/* ... but shiftfs is its own device. */
	EXPECT_NE(mst.st_dev, lst.st_dev);

	/* The underlying side is untouched. */
	EXPECT_EQ(owner_is(P(w.lower, "root"), ID_HOST, ID_HOST), 0);
	EXPECT_EQ(owner_is(P(w.lower, "unmapped"), 70000, 70000), 0);
}

TEST(create_maps_caller_back)
{
	struct world w;
	int fd;

	SETUP_MOUNTED(&w);
	/* Container root as seen from the host: fsuid 100000, no caps. */
	become_fsids(ID_SHIFT, ID_SHIFT + 5);
	fd = open(P(w.mnt, "new"), O_CREAT | O_EXCL | O_WRONLY, 0640);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(mkdir(P(w.mnt, "newdir"), 0755), 0);
	ASSERT_EQ(symlink("new", P(w.mnt, "newlink")), 0);
	ASSERT_EQ(mkfifo(P(w.mnt, "fifo"), 0600), 0);
	become_fsids(0, 0);

	EXPECT_EQ(owner_is(P(w.mnt, "new"), ID_SHIFT, ID_SHIFT + 5), 0);
	EXPECT_EQ(owner_is(P(w.lower, "new"), ID_HOST, 5), 0);
	EXPECT_EQ(owner_is(P(w.mnt, "newdir"), ID_SHIFT, ID_SHIFT + 5), 0);
	EXPECT_EQ(owner_is(P(w.lower, "newdir"), ID_HOST, 5), 0);
	EXPECT_EQ(owner_is(P(w.lower, "newlink"), ID_HOST, 5), 0);
	EXPECT_EQ(owner_is(P(w.lower, "fifo"), ID_HOST, 5), 0);
}

TEST(create_by_unmapped_caller_overflows)
{
	struct world w;

	SETUP(&w);
	ASSERT_EQ(chmod(w.lower, 0777), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	/* Host uid 1000 is outside 100000..165535. */
	become_fsids(1000, 1000);
	EXPECT_ERRNO(open(P(w.mnt, "f"), O_CREAT | O_WRONLY, 0644), EOVERFLOW);
	EXPECT_ERRNO(mkdir(P(w.mnt, "d"), 0755), EOVERFLOW);
	EXPECT_ERRNO(symlink("x", P(w.mnt, "l")), EOVERFLOW);
	/* Mapped uid, unmapped gid: still nothing it could own. */
	become_fsids(ID_SHIFT + 1000, 1000);
	EXPECT_ERRNO(open(P(w.mnt, "f"), O_CREAT | O_WRONLY, 0644), EOVERFLOW);
	become_fsids(0, 0);
	EXPECT_ERRNO(access(P(w.lower, "f"), F_OK), ENOENT);
	EXPECT_ERRNO(access(P(w.lower, "d"), F_OK), ENOENT);
}

TEST(chown_maps_back_or_overflows)
{
	struct world w;

	SETUP(&w);
	ASSERT_EQ(make_file(P(w.lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	ASSERT_EQ(chown(P(w.mnt, "f"), ID_SHIFT + 1000, ID_SHIFT + 2000), 0);
	EXPECT_EQ(owner_is(P(w.lower, "f"), 1000, 2000), 0);
	EXPECT_EQ(owner_is(P(w.mnt, "f"), ID_SHIFT + 1000, ID_SHIFT + 2000), 0);
	EXPECT_ERRNO(chown(P(w.mnt, "f"), 200000, -1), EOVERFLOW);
	EXPECT_ERRNO(chown(P(w.mnt, "f"), -1, 5), EOVERFLOW);
	EXPECT_ERRNO(chown(P(w.mnt, "f"), 0, 0), EOVERFLOW);
	EXPECT_EQ(owner_is(P(w.lower, "f"), 1000, 2000), 0);
}

TEST(read_write_both_ways)
{
	struct world w;
	char buf[64] = "";
	struct stat st;
	int fd;

	SETUP(&w);
	ASSERT_EQ(make_file(P(w.lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(write_file(P(w.lower, "f"), "from below"), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);

	fd = open(P(w.mnt, "f"), O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(read(fd, buf, sizeof(buf) - 1), 10);
	EXPECT_STREQ(buf, "from below");
	ASSERT_EQ(pwrite(fd, "ABOVE", 5, 5), 5);
	close(fd);

	memset(buf, 0, sizeof(buf));
	fd = open(P(w.lower, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(read(fd, buf, sizeof(buf) - 1), 10);
	EXPECT_STREQ(buf, "from ABOVE");
	close(fd);

	/* O_APPEND and O_TRUNC. */
	fd = open(P(w.mnt, "f"), O_WRONLY | O_APPEND);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "++", 2), 2);
	close(fd);
	ASSERT_EQ(stat(P(w.lower, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 12);
	ASSERT_EQ(stat(P(w.mnt, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 12);
	fd = open(P(w.mnt, "f"), O_WRONLY | O_TRUNC);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(stat(P(w.lower, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 0);
	ASSERT_EQ(stat(P(w.mnt, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 0);
}

static int count_entries(const char *dir, const char *lowerdir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* d_ino is the lower inode number, as st_ino is. */
		if (lstat(P(lowerdir, de->d_name), &st) ||
		    st.st_ino != de->d_ino) {
			printf("# %s: d_ino mismatch\n", de->d_name);
			closedir(d);
			return -1;
		}
		n++;
	}
	closedir(d);
	return n;
}

TEST(readdir_lists_lower_entries)
{
	struct world w;
	char name[32];
	int i;

	SETUP(&w);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "entry-%03d", i);
		ASSERT_EQ(make_file(P(w.lower, name), 0644, i, i), 0);
	}
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	EXPECT_EQ(count_entries(w.mnt, w.lower), 300);
	/* Seen after a change underneath, too. */
	ASSERT_EQ(unlink(P(w.lower, "entry-000")), 0);
	ASSERT_EQ(mkdir(P(w.lower, "sub"), 0755), 0);
	EXPECT_EQ(count_entries(w.mnt, w.lower), 300);
}

TEST(unlink_and_rmdir)
{
	struct world w;

	SETUP(&w);
	ASSERT_EQ(make_file(P(w.lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(make_dir(P(w.lower, "d"), 0755, 0, 0), 0);
	ASSERT_EQ(make_file(P(w.lower, "d/inner"), 0644, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);

	EXPECT_ERRNO(rmdir(P(w.mnt, "d")), ENOTEMPTY);
	ASSERT_EQ(unlink(P(w.mnt, "d/inner")), 0);
	ASSERT_EQ(rmdir(P(w.mnt, "d")), 0);
	ASSERT_EQ(unlink(P(w.mnt, "f")), 0);
	EXPECT_ERRNO(access(P(w.lower, "f"), F_OK), ENOENT);
	EXPECT_ERRNO(access(P(w.lower, "d"), F_OK), ENOENT);
	EXPECT_ERRNO(access(P(w.mnt, "f"), F_OK), ENOENT);
	/* And a new one with the same name is a new file. */
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(close(open(P(w.mnt, "f"), O_CREAT | O_EXCL | O_WRONLY,
			     0600)), 0);
	become_fsids(0, 0);
	EXPECT_EQ(owner_is(P(w.lower, "f"), 0, 0), 0);
}

TEST(changes_underneath_are_seen)
{
	struct world w;
	struct stat st;
	char buf[16] = "";
	int fd;

	SETUP_MOUNTED(&w);
	/* A cached negative dentry must not hide a later creation. */
	EXPECT_ERRNO(stat(P(w.mnt, "x"), &st), ENOENT);
	ASSERT_EQ(make_file(P(w.lower, "x"), 0600, 1, 2), 0);
	ASSERT_EQ(stat(P(w.mnt, "x"), &st), 0);
	EXPECT_EQ(st.st_uid, ID_SHIFT + 1);
	EXPECT_EQ(st.st_mode & 07777, 0600u);

	/* chmod/chown underneath. */
	ASSERT_EQ(chmod(P(w.lower, "x"), 0604), 0);
	ASSERT_EQ(chown(P(w.lower, "x"), 3, 4), 0);
	ASSERT_EQ(stat(P(w.mnt, "x"), &st), 0);
	EXPECT_EQ(st.st_mode & 07777, 0604u);
	EXPECT_EQ(owner_is(P(w.mnt, "x"), ID_SHIFT + 3, ID_SHIFT + 4), 0);

	/* rename underneath. */
	ASSERT_EQ(rename(P(w.lower, "x"), P(w.lower, "y")), 0);
	EXPECT_ERRNO(stat(P(w.mnt, "x"), &st), ENOENT);
	ASSERT_EQ(stat(P(w.mnt, "y"), &st), 0);

	/* replaced underneath by another file of the same name. */
	ASSERT_EQ(unlink(P(w.lower, "y")), 0);
	ASSERT_EQ(make_file(P(w.lower, "y"), 0644, 7, 7), 0);
	ASSERT_EQ(write_file(P(w.lower, "y"), "new"), 0);
	fd = open(P(w.mnt, "y"), O_RDONLY);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(read(fd, buf, sizeof(buf)), 3);
	close(fd);
	EXPECT_STREQ(buf, "new");
	EXPECT_EQ(owner_is(P(w.mnt, "y"), ID_SHIFT + 7, ID_SHIFT + 7), 0);

	/* unlinked underneath. */
	ASSERT_EQ(unlink(P(w.lower, "y")), 0);
	EXPECT_ERRNO(stat(P(w.mnt, "y"), &st), ENOENT);

	/* A directory removed and recreated underneath. */
	ASSERT_EQ(mkdir(P(w.lower, "d"), 0755), 0);
	ASSERT_EQ(make_file(P(w.lower, "d/a"), 0644, 0, 0), 0);
	ASSERT_EQ(stat(P(w.mnt, "d/a"), &st), 0);
	ASSERT_EQ(unlink(P(w.lower, "d/a")), 0);
	ASSERT_EQ(rmdir(P(w.lower, "d")), 0);
	ASSERT_EQ(mkdir(P(w.lower, "d"), 0700), 0);
	ASSERT_EQ(make_file(P(w.lower, "d/b"), 0644, 0, 0), 0);
	EXPECT_ERRNO(stat(P(w.mnt, "d/a"), &st), ENOENT);
	ASSERT_EQ(stat(P(w.mnt, "d/b"), &st), 0);
	ASSERT_EQ(stat(P(w.mnt, "d"), &st), 0);
	EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST(statfs_reports_lower)
{
	struct world w;
	struct statfs ls, ms;

	SETUP_MOUNTED(&w);
	ASSERT_EQ(statfs(w.lower, &ls), 0);
	ASSERT_EQ(statfs(w.mnt, &ms), 0);
	EXPECT_EQ(ms.f_type, SHIFTFS_MAGIC);
	EXPECT_EQ(ms.f_blocks, ls.f_blocks);
	EXPECT_EQ(ms.f_bsize, ls.f_bsize);
	EXPECT_EQ(ms.f_files, ls.f_files);
	EXPECT_EQ(ms.f_namelen, ls.f_namelen);
}

TEST(unprivileged_caller_is_checked_at_shifted_inode)
{
	struct world w;

	SETUP(&w);
	ASSERT_EQ(make_file(P(w.lower, "secret"), 0600, 0, 0), 0);
	ASSERT_EQ(make_file(P(w.lower, "mine"), 0600, 1000, 1000), 0);
	ASSERT_EQ(make_dir(P(w.lower, "closed"), 0700, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);

	/* Host uid 1000 owns "mine" underneath, but not through the mount. */
	become_fsids(1000, 1000);
	EXPECT_ERRNO(open(P(w.mnt, "mine"), O_RDONLY), EACCES);
	EXPECT_ERRNO(open(P(w.mnt, "secret"), O_RDONLY), EACCES);
	/* The shifted owner does. */
	become_fsids(ID_SHIFT + 1000, ID_SHIFT + 1000);
	EXPECT_EQ(close(open(P(w.mnt, "mine"), O_RDONLY)), 0);
	EXPECT_ERRNO(open(P(w.mnt, "secret"), O_RDONLY), EACCES);
	EXPECT_ERRNO(open(P(w.mnt, "closed/x"), O_CREAT | O_WRONLY, 0644),
		     EACCES);
	EXPECT_ERRNO(unlink(P(w.mnt, "secret")), EACCES);
	become_fsids(0, 0);
	EXPECT_EQ(access(P(w.lower, "secret"), F_OK), 0);
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

TEST(container_root_has_root_powers_over_image)
{
	struct world w;

	SETUP(&w);
	ASSERT_EQ(make_file(P(w.lower, "u1000"), 0600, 1000, 1000), 0);
	ASSERT_EQ(make_dir(P(w.lower, "d1000"), 0755, 1000, 1000), 0);
	ASSERT_EQ(make_file(P(w.lower, "unmapped"), 0600, 70000, 70000), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	ASSERT_EQ(in_container(container_root_work, &w), 0);
	/* Container root is image root underneath. */
	EXPECT_EQ(owner_is(P(w.lower, "d1000/byroot"), 0, 0), 0);
	EXPECT_EQ(owner_is(P(w.lower, "u1000"), 0, 0), 0);
}

TEST(hardlinks_share_inode)
{
	struct world w;
	struct stat a, b, l;

	SETUP(&w);
	ASSERT_EQ(make_file(P(w.lower, "a"), 0644, 0, 0), 0);
	ASSERT_EQ(link(P(w.lower, "a"), P(w.lower, "b")), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	ASSERT_EQ(stat(P(w.mnt, "a"), &a), 0);
	ASSERT_EQ(stat(P(w.mnt, "b"), &b), 0);
	EXPECT_EQ(a.st_ino, b.st_ino);
	EXPECT_EQ(a.st_nlink, 2u);
	/* Host root has no id in the mount: it can't link (or create). */
	EXPECT_ERRNO(link(P(w.mnt, "a"), P(w.mnt, "c")), EOVERFLOW);
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(link(P(w.mnt, "a"), P(w.mnt, "c")), 0);
	become_fsids(0, 0);
	ASSERT_EQ(stat(P(w.mnt, "c"), &b), 0);
	ASSERT_EQ(stat(P(w.lower, "c"), &l), 0);
	EXPECT_EQ(b.st_ino, a.st_ino);
	EXPECT_EQ(l.st_ino, a.st_ino);
	EXPECT_EQ(b.st_nlink, 3u);
	EXPECT_EQ(l.st_nlink, 3u);
	ASSERT_EQ(unlink(P(w.mnt, "a")), 0);
	ASSERT_EQ(stat(P(w.mnt, "c"), &b), 0);
	EXPECT_EQ(b.st_nlink, 2u);
}

TEST(rename_basic)
{
	struct world w;
	struct stat st;

	SETUP(&w);
	ASSERT_EQ(make_file(P(w.lower, "a"), 0644, 0, 0), 0);
	ASSERT_EQ(make_file(P(w.lower, "b"), 0644, 1, 1), 0);
	ASSERT_EQ(mkdir(P(w.lower, "d"), 0755), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(rename(P(w.mnt, "a"), P(w.mnt, "d/a2")), 0);
	EXPECT_EQ(access(P(w.lower, "d/a2"), F_OK), 0);
	EXPECT_ERRNO(access(P(w.lower, "a"), F_OK), ENOENT);
	ASSERT_EQ(rename(P(w.mnt, "d/a2"), P(w.mnt, "b")), 0);
	become_fsids(0, 0);
	ASSERT_EQ(stat(P(w.mnt, "b"), &st), 0);
	EXPECT_EQ(st.st_uid, ID_SHIFT);
	EXPECT_EQ(owner_is(P(w.lower, "b"), 0, 0), 0);
}

TEST(stacking_depth_limited)
{
	const char *opts[] = { "uidmap=0:0:1000", "gidmap=0:0:1000", NULL };
	struct world w;
	char m2[128], m3[128], log[512];

	SETUP_MOUNTED(&w);
	snprintf(m2, sizeof(m2), "%s/m2", w.base);
	snprintf(m3, sizeof(m3), "%s/m3", w.base);
	ASSERT_EQ(mkdir(m2, 0755), 0);
	ASSERT_EQ(mkdir(m3, 0755), 0);
	/* tmpfs (0) <- shiftfs (1) <- shiftfs (2) <- refused. */
	EXPECT_EQ(shiftfs_fsmount(w.mnt, m2, opts, log, sizeof(log)), 0);
	EXPECT_EQ(shiftfs_fsmount(m2, m3, opts, log, sizeof(log)), -EINVAL);
	TH_LOG("log: %s", log);
	EXPECT_NE(strstr(log, "stacking depth"), NULL);
}

TEST_HARNESS_MAIN
