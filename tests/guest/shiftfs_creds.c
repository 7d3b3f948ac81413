// SPDX-License-Identifier: GPL-2.0
/*
 * The credentials shiftfs makes for the ids calling through a mount
 * (module/util.c): one per (fsuid, fsgid) pair, kept until umount, up to
 * SHIFTFS_CREDS_MAX (256) pairs; past that a call gets a cred of its own,
 * which must carry the right ids and be freed when the call returns.
 */
#include "harness.h"
#include "shiftfs_util.h"

#include <dirent.h>

/* More id pairs than the module keeps creds for. */
#define NR_IDS		300
/* A leak of one cred a call (192 bytes of cred_jar) shows as 11 MiB. */
#define NR_WRITES	60000
#define LEAK_LIMIT_KB	4096

/* A world with a directory everyone may create in, mounted shifted. */
FIXTURE(shared_dir) {
	struct world w;
};

FIXTURE_SETUP(shared_dir)
{
	ASSERT_EQ(world_setup(&self->w), 0);
	ASSERT_EQ(make_dir(P(self->w.lower, "d"), 0777, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(&self->w), 0);
}

FIXTURE_TEARDOWN(shared_dir)
{
}

/* Create d/f<i> through the mount as fsuid/fsgid ID_SHIFT + 1000 + i. */
static int create_as(const struct world *w, unsigned int i)
{
	char name[32];
	int fd;

	snprintf(name, sizeof(name), "d/f%u", i);
	become_fsids(ID_SHIFT + 1000 + i, ID_SHIFT + 1000 + i);
	fd = open(P(w->mnt, name), O_CREAT | O_EXCL | O_WRONLY, 0644);
	become_fsids(0, 0);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/*
 * Every slab cache shrunk first: on a KASAN kernel (make check-debug) a
 * freed object waits in KASAN's quarantine, still counted as slab
 * (60,000 freed creds were 6 MB of it on 7.3), until its cache is
 * shrunk; elsewhere this gives back empty slabs and per-CPU ones.
 */
static long unreclaimable_slab_kb(void)
{
	char line[128];
	long kb = -1;
	struct dirent *de;
	DIR *d = opendir("/sys/kernel/slab");
	/* (The caller may have taken on a container's fsids.) */
	int fsuid = setfsuid(0), fsgid = setfsgid(0);
	FILE *f;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			slab_shrink(de->d_name);
	if (d)
		closedir(d);
	setfsgid(fsgid);
	setfsuid(fsuid);
	f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SUnreclaim: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

TEST_F(shared_dir, owners_right_past_the_cred_table)
{
	struct world *w = &self->w;
	unsigned int i, wrong = 0;
	char name[32];

	for (i = 0; i < NR_IDS; i++)
		ASSERT_EQ(create_as(w, i), 0);
	for (i = 0; i < NR_IDS; i++) {
		snprintf(name, sizeof(name), "d/f%u", i);
		if (owner_is(P(w->lower, name), 1000 + i, 1000 + i)) {
			if (!wrong++)
				TH_LOG("%s: not owned by %u:%u on the lower fs",
				     name, 1000 + i, 1000 + i);
		}
	}
	EXPECT_EQ(wrong, 0u);
}

/*
 * How much unreclaimable slab, in kB, NR_WRITES one-byte writes to @path
 * leave behind, the file opened with the current fsids (its owner's).  The
 * first write, and what it allocates for good, comes before the count.
 * A cred is freed after an RCU grace period, and with lazy RCU (7.x:
 * CONFIG_RCU_LAZY) its callback may wait some 10 s: the count is taken
 * again, a second apart, for up to 30 s, until it is under the limit.  A
 * leak never gets there.
 */
static long slab_growth_of_writes(const char *path)
{
	long before, after;
	unsigned int i;
	int fd = open(path, O_WRONLY);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(pwrite(fd, "x", 1, 0), 1);
	sync();
	before = unreclaimable_slab_kb();
	ASSERT_GE(before, 0);
	for (i = 0; i < NR_WRITES; i++)
		ASSERT_EQ(pwrite(fd, "x", 1, 0), 1);
	close(fd);
	for (i = 0;; i++) {
		after = unreclaimable_slab_kb();
		if (after - before < LEAK_LIMIT_KB || i == 30)
			break;
		sleep(1);
	}
	TH_LOG("%s: %ld kB of unreclaimable slab before %u writes, %ld kB after (%u s later)",
	       path, before, NR_WRITES, after, i);
	return after - before;
}

/*
 * Writes as an id that found the table full: every write makes and must
 * free a cred of its own.  Then writes as an id in the table, which must
 * not allocate at all.
 */
TEST_F(shared_dir, call_creds_are_freed)
{
	struct world *w = &self->w;
	unsigned int i;

	for (i = 0; i < NR_IDS; i++)
		ASSERT_EQ(create_as(w, i), 0);

	/* Past the table: the last id created. */
	become_fsids(ID_SHIFT + 1000 + NR_IDS - 1, ID_SHIFT + 1000 + NR_IDS - 1);
	EXPECT_LT(slab_growth_of_writes(P(w->mnt, "d/f299")), LEAK_LIMIT_KB);
	/* In the table: the first. */
	become_fsids(ID_SHIFT + 1000, ID_SHIFT + 1000);
	EXPECT_LT(slab_growth_of_writes(P(w->mnt, "d/f0")), LEAK_LIMIT_KB);
	become_fsids(0, 0);
}

TEST_HARNESS_MAIN
