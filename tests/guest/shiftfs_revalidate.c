// SPDX-License-Identifier: GPL-2.0
/*
 * Lookup and readdir against changes made underneath (a cached negative
 * dentry, chmod/chown, rename, replace and unlink below the mount), and
 * revalidation that keeps live dentries: a directory looked up once stays
 * usable after files are created in it through the mount, by root and by the
 * container's root (the seed cover letter's scene).  A revalidation that
 * compared salted name hashes failed every time and made such a directory
 * go stale (ESTALE from opendir).  A file still open under its old name
 * when it is renamed or linked underneath keeps one shiftfs inode: a
 * write through the new name reaches a watch on the old one.
 */
#include "harness.h"
#include "shiftfs_util.h"
#include <dirent.h>
#include <sys/inotify.h>

static int count_entries(const char *path)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static int create_as_container(void *arg)
{
	const char *dir = arg;
	char path[160];

	snprintf(path, sizeof(path), "%s/by-container", dir);
	if (make_file(path, 0644, 0, 0))
		return 1;
	return count_entries(dir) == 2 ? 0 : 2;
}

TEST(directory_survives_creates_in_it)
{
	struct world w;
	struct stat st1, st2;
	char etc[128];

	ASSERT_EQ(world_setup(&w), 0);
	ASSERT_EQ(make_dir(P(w.lower, "etc"), 0755, ID_HOST, ID_HOST), 0);
	ASSERT_EQ(make_file(P(w.lower, "etc/motd"), 0644, ID_HOST, ID_HOST), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	snprintf(etc, sizeof(etc), "%s/etc", w.mnt);

	/* Look it up, as ls does, then create inside it, then list it. */
	ASSERT_EQ(count_entries(w.mnt), 1);
	ASSERT_EQ(stat(etc, &st1), 0);
	ASSERT_EQ(in_container(create_as_container, (void *)etc), 0);
	ASSERT_EQ(count_entries(etc), 2);
	ASSERT_EQ(stat(etc, &st2), 0);
	EXPECT_EQ(st1.st_ino, st2.st_ino);
	EXPECT_EQ(owner_is(P(w.lower, "etc/by-container"), ID_HOST, ID_HOST), 0);
	strcat(etc, "/by-container");
	EXPECT_EQ(owner_is(etc, ID_SHIFT, ID_SHIFT), 0);
}

static int create_in_cwd(void *arg)
{
	const char *dir = arg;
	char name[32];
	int i;

	if (chdir(dir))
		return 1;
	for (i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		if (make_file(name, 0644, 0, 0))
			return 2;
		if (count_entries(".") != i + 1 || count_entries(dir) != i + 1)
			return 3;
	}
	return 0;
}

TEST(cwd_inside_mount_survives_lookups)
{
	struct world w;
	char dir[128];

	ASSERT_EQ(world_setup(&w), 0);
	ASSERT_EQ(make_dir(P(w.lower, "d"), 0755, ID_HOST, ID_HOST), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	snprintf(dir, sizeof(dir), "%s/d", w.mnt);
	ASSERT_EQ(in_container(create_in_cwd, dir), 0);
	EXPECT_EQ(owner_is(P(w.lower, "d/f49"), ID_HOST, ID_HOST), 0);
}

static int count_entries_same_ino(const char *dir, const char *lowerdir)
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

	ASSERT_EQ(world_setup(&w), 0);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "entry-%03d", i);
		ASSERT_EQ(make_file(P(w.lower, name), 0644, i, i), 0);
	}
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	EXPECT_EQ(count_entries_same_ino(w.mnt, w.lower), 300);
	/* Seen after a change underneath, too. */
	ASSERT_EQ(unlink(P(w.lower, "entry-000")), 0);
	ASSERT_EQ(mkdir(P(w.lower, "sub"), 0755), 0);
	EXPECT_EQ(count_entries_same_ino(w.mnt, w.lower), 300);
}

TEST(changes_underneath_are_seen)
{
	struct world w;
	struct stat st;
	char buf[16] = "";
	int fd;

	ASSERT_EQ(world_setup(&w), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
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

/* stat(@path) with only the filesystem ids @uid/@gid: 0 or an errno. */
static int stat_as(const char *path, uid_t uid, gid_t gid)
{
	struct stat st;
	int err = 0;

	become_fsids(uid, gid);
	if (stat(path, &st))
		err = errno;
	become_fsids(0, 0);
	return err;
}

/*
 * A chown made underneath counts at the next access check through the
 * mount, though every dentry on the way is cached and the walk stays in
 * RCU mode, where nothing is looked up again: ->permission() compares
 * the lower owner and group with those ours were mapped from.
 */
TEST(access_follows_chown_underneath)
{
	/* Owner-only access (d), then group-only access (g). */
	static const struct {
		const char *dir;
		uid_t away_uid, back_uid;
		gid_t away_gid, back_gid;
	} cases[] = {
		{ "d", 5, 1, 1, 1 },	/* 100001 is no longer the owner */
		{ "g", 2, 2, 6, 1 },	/* nor in the group */
	};
	struct world w;
	char path[160];
	size_t c;
	int i;

	ASSERT_EQ(world_setup(&w), 0);
	ASSERT_EQ(make_dir(P(w.lower, "d"), 0700, 1, 1), 0);
	ASSERT_EQ(make_dir(P(w.lower, "g"), 0070, 2, 1), 0);
	ASSERT_EQ(make_file(P(w.lower, "d/f"), 0644, 1, 1), 0);
	ASSERT_EQ(make_file(P(w.lower, "g/f"), 0644, 1, 1), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		snprintf(path, sizeof(path), "%s/f", P(w.mnt, cases[c].dir));
		for (i = 0; i < 3; i++)
			EXPECT_EQ(stat_as(path, ID_SHIFT + 1, ID_SHIFT + 1), 0);
		/* Changed underneath: denied... */
		ASSERT_EQ(chown(P(w.lower, cases[c].dir), cases[c].away_uid,
				cases[c].away_gid), 0);
		EXPECT_EQ(stat_as(path, ID_SHIFT + 1, ID_SHIFT + 1), EACCES);
		/* ... and back. */
		ASSERT_EQ(chown(P(w.lower, cases[c].dir), cases[c].back_uid,
				cases[c].back_gid), 0);
		EXPECT_EQ(stat_as(path, ID_SHIFT + 1, ID_SHIFT + 1), 0);
	}
}

/* One IN_MODIFY on @ifd, after a write through @path. */
static int modify_is_seen(int ifd, const char *path)
{
	char buf[sizeof(struct inotify_event) + 256];
	const struct inotify_event *ev = (const void *)buf;
	ssize_t n;

	if (write_file(path, "x"))
		return -1;
	n = read(ifd, buf, sizeof(buf));
	if (n < (ssize_t)sizeof(*ev))
		return -2;
	return (ev->mask & IN_MODIFY) ? 0 : -3;
}

TEST(open_file_renamed_or_linked_underneath_keeps_its_inode)
{
	struct world w;
	int fd, ifd;

	ASSERT_EQ(world_setup(&w), 0);
	ASSERT_EQ(make_file(P(w.lower, "a"), 0644, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	/* One link when our inode is made; the open file keeps it. */
	fd = open(P(w.mnt, "a"), O_RDONLY);
	ASSERT_GE(fd, 0);
	ifd = inotify_init1(IN_NONBLOCK);
	ASSERT_GE(ifd, 0);
	ASSERT_GE(inotify_add_watch(ifd, P(w.mnt, "a"), IN_MODIFY), 0);

	/* Still one link, under another name: a fresh lookup. */
	ASSERT_EQ(rename(P(w.lower, "a"), P(w.lower, "b")), 0);
	EXPECT_EQ(modify_is_seen(ifd, P(w.mnt, "b")), 0);
	/* Two links now. */
	ASSERT_EQ(link(P(w.lower, "b"), P(w.lower, "c")), 0);
	EXPECT_EQ(modify_is_seen(ifd, P(w.mnt, "c")), 0);
	close(ifd);
	close(fd);
}

TEST_HARNESS_MAIN
