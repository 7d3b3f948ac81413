// SPDX-License-Identifier: GPL-2.0
/*
 * Revalidation keeps live dentries: a directory looked up once stays usable
 * after files are created in it through the mount, by root and by the
 * container's root (the seed cover letter's scene).  A revalidation that
 * compared salted name hashes failed every time and made such a directory
 * go stale (ESTALE from opendir).
 */
#include "harness.h"
#include "shiftfs_util.h"
#include <dirent.h>

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

TEST_HARNESS_MAIN
