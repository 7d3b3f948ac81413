// SPDX-License-Identifier: GPL-2.0
/*
 * Attacks on the per-mount credential table (module/util.c), from the
 * issue 22 attacker's pass.  A lower call runs with the mounter's creds
 * (host root: every capability, root's groups) and the caller's fsuid and
 * fsgid mapped down; what the caller may do must still be decided by the
 * caller's own capabilities and groups: a container user without
 * CAP_DAC_OVERRIDE reads no 0600 file of another user, one not in group G
 * gets none of G's access, a setgroups() counts at once, setuid-group bits
 * a non-member asks for are dropped, and the table's key is the pair of
 * ids (setfsuid()/setfsgid() cycling), also past its limit.
 */
#include "harness.h"
#include "shiftfs_util.h"

#include <grp.h>
#include <linux/capability.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>

/* The table's limit (module/shiftfs.h SHIFTFS_CREDS_MAX), and some. */
#define NR_FILL		260

FIXTURE(cworld) {
	struct world w;
};

FIXTURE_SETUP(cworld)
{
	struct world *w = &self->w;

	ASSERT_EQ(world_setup(w), 0);
	/* lower 1000 = container 1000: a container user's 0600 file */
	ASSERT_EQ(make_file(P(w->lower, "secret"), 0600, 1000, 1000), 0);
	ASSERT_EQ(write_file(P(w->lower, "secret"), "s"), 0);
	/* readable by group 2000 only */
	ASSERT_EQ(make_file(P(w->lower, "grp"), 0040, 0, 2000), 0);
	ASSERT_EQ(make_dir(P(w->lower, "grpdir"), 0070, 0, 2000), 0);
	/* setgid directory of group 2000 anyone may create in */
	ASSERT_EQ(make_dir(P(w->lower, "sgid"), 0777, 0, 2000), 0);
	ASSERT_EQ(chmod(P(w->lower, "sgid"), 02777), 0);
	ASSERT_EQ(make_dir(P(w->lower, "d"), 0777, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
}

FIXTURE_TEARDOWN(cworld)
{
}

/* Drop @caps (CAP_TO_MASK bits, all < 32) from the effective set. */
static int drop_effective(__u32 caps)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].effective &= ~caps;
	return syscall(SYS_capset, &h, d);
}

static int open_errno(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Container root reads the 0600 file: only with DAC_OVERRIDE. */
static int read_without_dac(void *arg)
{
	const char *path = arg;
	int e;

	e = open_errno(path, O_RDONLY);
	if (e) {
		printf("# container root, all caps: %s\n", strerror(e));
		return 10;
	}
	if (drop_effective(CAP_TO_MASK(CAP_DAC_OVERRIDE) |
			   CAP_TO_MASK(CAP_DAC_READ_SEARCH)))
		return 11;
	e = open_errno(path, O_RDONLY);
	if (e != EACCES) {
		printf("# container root without DAC caps: %s\n",
		       e ? strerror(e) : "opened");
		return 12;
	}
	return 0;
}

TEST_F(cworld, no_dac_override_no_read_of_others_0600)
{
	EXPECT_EQ(in_container(read_without_dac, (void *)P(self->w.mnt,
							   "secret")), 0);
}

/* Another container user (all capabilities gone with setuid()). */
static int read_as_other_user(void *arg)
{
	const char *path = arg;
	int e;

	if (setgroups(0, NULL) || setresgid(1001, 1001, 1001) ||
	    setresuid(1001, 1001, 1001))
		return 10;
	e = open_errno(path, O_RDONLY);
	if (e != EACCES) {
		printf("# container user 1001: %s\n",
		       e ? strerror(e) : "opened");
		return 11;
	}
	return 0;
}

TEST_F(cworld, other_container_user_no_read_of_0600)
{
	EXPECT_EQ(in_container(read_as_other_user, (void *)P(self->w.mnt,
							     "secret")), 0);
}

/*
 * fsuid 1000 without the filesystem capabilities: group 2000's file and
 * directory are reachable exactly while 2000 is a supplementary group,
 * the change counting on the next call (the lower call carries the
 * mounter's groups, which hold no 2000 and must not matter).
 */
static int groups_follow_setgroups(void *arg)
{
	const char *mnt = arg;
	char f[256], d[256], n[300];
	gid_t g = 2000;
	int e, i;

	snprintf(f, sizeof(f), "%s/grp", mnt);
	snprintf(d, sizeof(d), "%s/grpdir", mnt);
	if (setgroups(0, NULL))
		return 10;
	setfsgid(1000);
	setfsuid(1000);		/* drops CAP_DAC_* from the effective set */
	for (i = 0; i < 3; i++) {
		bool member = i == 1;

		if (setgroups(member, &g))
			return 11;
		e = open_errno(f, O_RDONLY);
		if (member ? e != 0 : e != EACCES) {
			printf("# round %d, member %d: open: %s\n", i, member,
			       e ? strerror(e) : "opened");
			return 12;
		}
		snprintf(n, sizeof(n), "%s/f%d", d, i);
		e = open_errno(n, O_CREAT | O_WRONLY);
		if (member ? e != 0 : e != EACCES) {
			printf("# round %d, member %d: create: %s\n", i,
			       member, e ? strerror(e) : "created");
			return 13;
		}
	}
	return 0;
}

TEST_F(cworld, group_access_follows_setgroups)
{
	EXPECT_EQ(in_container(groups_follow_setgroups, self->w.mnt), 0);
}

/*
 * A non-member of group 2000, without CAP_FSETID, asks for a setgid file
 * in 2000's setgid directory (the new file's group is 2000): the bit goes,
 * as the lower filesystem would drop it for the caller but would not for
 * the mounter.  A chmod g+s of it is stripped the same way.
 */
static int sgid_as_nonmember(void *arg)
{
	const char *mnt = arg;
	char f[256];
	struct stat st;
	int fd;

	snprintf(f, sizeof(f), "%s/sgid/x", mnt);
	if (setgroups(0, NULL) || setresgid(1000, 1000, 1000) ||
	    setresuid(1000, 1000, 1000))
		return 10;
	fd = open(f, O_CREAT | O_EXCL | O_WRONLY, 02755);
	if (fd < 0)
		return 11;
	if (fstat(fd, &st))
		return 12;
	close(fd);
	if (st.st_gid != 2000 || (st.st_mode & S_ISGID)) {
		printf("# created: gid %u mode %o\n", st.st_gid, st.st_mode);
		return 13;
	}
	if (chmod(f, 02755) || stat(f, &st))
		return 14;
	if (st.st_mode & S_ISGID) {
		printf("# chmod g+s by a non-member kept it: %o\n",
		       st.st_mode);
		return 15;
	}
	return 0;
}

TEST_F(cworld, sgid_bit_of_nonmember_dropped)
{
	struct stat st;

	EXPECT_EQ(in_container(sgid_as_nonmember, self->w.mnt), 0);
	/* and underneath, where the host runs it */
	ASSERT_EQ(stat(P(self->w.lower, "sgid/x"), &st), 0);
	EXPECT_EQ(st.st_mode & S_ISGID, 0u);
}

/* Container root without CAP_CHOWN / CAP_FOWNER: the lower call has them. */
static int no_fowner_no_chown(void *arg)
{
	const char *f = arg;

	if (drop_effective(CAP_TO_MASK(CAP_CHOWN) | CAP_TO_MASK(CAP_FOWNER)))
		return 10;
	if (!chown(f, 0, 0) || errno != EPERM)
		return 11;
	if (!chmod(f, 0666) || errno != EPERM)
		return 12;
	return 0;
}

TEST_F(cworld, dropped_chown_fowner_stay_dropped)
{
	struct stat st;

	EXPECT_EQ(in_container(no_fowner_no_chown,
			       (void *)P(self->w.mnt, "secret")), 0);
	ASSERT_EQ(stat(P(self->w.lower, "secret"), &st), 0);
	EXPECT_EQ(st.st_uid, 1000u);
	EXPECT_EQ(st.st_mode & 07777, 0600u);
}

/* Create d/NAME through the mount as shifted fsuid/fsgid (host side). */
static int create_as(const struct world *w, const char *name, uid_t u,
		     gid_t g)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/d/%s", w->mnt, name);
	become_fsids(ID_SHIFT + u, ID_SHIFT + g);
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
	become_fsids(0, 0);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static bool lower_owner(const struct world *w, const char *name, uid_t u,
			gid_t g)
{
	char path[256];

	snprintf(path, sizeof(path), "d/%s", name);
	return owner_is(P(w->lower, path), u, g) == 0;
}

/*
 * The table's key is the pair: cycling fsuid and fsgid separately never
 * hands one pair's cred to another.
 */
TEST_F(cworld, fsid_cycling_keys_on_both_ids)
{
	static const unsigned int ids[][2] = {
		{ 1000, 1000 }, { 1001, 1000 }, { 1000, 1001 }, { 1001, 1001 },
	};
	char name[32];
	int round, i;

	for (round = 0; round < 3; round++) {
		for (i = 0; i < 4; i++) {
			snprintf(name, sizeof(name), "r%d-%d", round, i);
			ASSERT_EQ(create_as(&self->w, name, ids[i][0],
					    ids[i][1]), 0);
			EXPECT_TRUE(lower_owner(&self->w, name, ids[i][0],
						ids[i][1]));
		}
	}
}

/*
 * Past the table's limit a call gets a cred of its own: the caller's ids
 * still, never the mounter's (root underneath), and an unmapped caller is
 * still refused creating.
 */
TEST_F(cworld, past_the_table_limit_no_mounter_creds)
{
	char name[32];
	unsigned int i;
	int fd;

	for (i = 0; i < NR_FILL; i++) {
		snprintf(name, sizeof(name), "fill%u", i);
		ASSERT_EQ(create_as(&self->w, name, 3000 + i, 3000 + i), 0);
	}
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "past%u", i);
		ASSERT_EQ(create_as(&self->w, name, 5000 + i, 5000), 0);
		EXPECT_TRUE(lower_owner(&self->w, name, 5000 + i, 5000));
	}
	/* An id the map lacks (host 5): no owner underneath, EOVERFLOW. */
	become_fsids(5, 5);
	fd = open(P(self->w.mnt, "d/unmapped"), O_CREAT | O_EXCL | O_WRONLY,
		  0644);
	become_fsids(0, 0);
	EXPECT_EQ(fd, -1);
	EXPECT_EQ(errno, EOVERFLOW);
	EXPECT_NE(access(P(self->w.lower, "d/unmapped"), F_OK), 0);
}

TEST_HARNESS_MAIN
