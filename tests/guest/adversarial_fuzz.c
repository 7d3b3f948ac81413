// SPDX-License-Identifier: GPL-2.0
/*
 * Past shiftfs CVE classes and robustness, against a userns-mounted
 * shiftfs (and host root's): fds of other filesystems and unmapped user
 * pointers in ioctl arguments, failing mmap paths, rename/unlink/lookup
 * races with changes underneath, thousands of random and mutated mount
 * options through fsconfig() and mount(2), and the shiftfs inode cache
 * returning to where it was after unmount.  The guest runner fails the run
 * on any kernel warning these provoke.
 *
 * Some 600 lines in one file: the fuzzers share the image and the option
 * generators; splitting them would copy both.
 */
#define HARNESS_TIMEOUT 120
#include "harness.h"
#include "mark_util.h"

#include <dirent.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <pthread.h>
#include <setjmp.h>
#include <sys/ioctl.h>

static void make_image(const struct world *w)
{
	int i;
	char name[32];

	ASSERT_EQ(make_dir(P(w->lower, "d"), 0755, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(write_file(P(w->lower, "f"), "0123456789"), 0);
	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "d/n%02d", i);
		ASSERT_EQ(make_file(P(w->lower, name), 0644, i, i), 0);
	}
}

static int mounted(const struct world *w)
{
	char log[1024];
	int err = userns_mount(w->lower, w->mnt, log, sizeof(log));

	if (err)
		printf("# mount from mark: %d %s\n", err, log);
	return err;
}

/* ---- ioctls ---------------------------------------------------------- */

static bool fails(long r)
{
	return r < 0;
}

static int container_ioctls(void *arg)
{
	const struct world *w = arg;
	struct file_clone_range fcr;
	int f, d, other, pipefd[2], tmpfs_dir;
	unsigned long bad = 0x10;

	CHILD_CHECK(mounted(w) == 0, 1, "mount");
	f = open(P(w->mnt, "f"), O_RDWR);
	d = open(P(w->mnt, "d"), O_RDONLY | O_DIRECTORY);
	CHILD_CHECK(f >= 0 && d >= 0, 2, "open");
	CHILD_CHECK(pipe(pipefd) == 0, 3, "pipe");
	/* Another filesystem: a tmpfs of its own. */
	CHILD_CHECK(mount("tmpfs", w->base, "tmpfs", 0, NULL) == 0, 4, "tmpfs");
	other = open(P(w->base, "o"), O_CREAT | O_RDWR, 0644);
	tmpfs_dir = open(w->base, O_RDONLY | O_DIRECTORY);
	CHILD_CHECK(other >= 0 && tmpfs_dir >= 0, 5, "other fs");

	/* Foreign fds as ioctl arguments. */
	CHILD_CHECK(fails(ioctl(f, FICLONE, other)), 10, "FICLONE other fs");
	CHILD_CHECK(fails(ioctl(f, FICLONE, pipefd[0])), 11, "FICLONE pipe");
	CHILD_CHECK(fails(ioctl(f, FICLONE, d)), 12, "FICLONE dir");
	CHILD_CHECK(fails(ioctl(other, FICLONE, f)), 13, "FICLONE into tmpfs");
	memset(&fcr, 0, sizeof(fcr));
	fcr.src_fd = tmpfs_dir;
	CHILD_CHECK(fails(ioctl(f, FICLONERANGE, &fcr)), 14, "FICLONERANGE");
	/* btrfs subvolume ioctls carry fds: BTRFS_IOC_SNAP_CREATE etc. */
	{
		struct { int64_t fd; char name[4088]; } args;

		memset(&args, 0, sizeof(args));
		args.fd = tmpfs_dir;
		strcpy(args.name, "snap");
		CHILD_CHECK(fails(ioctl(d, _IOW(0x94, 1, args), &args)), 15,
			    "BTRFS_IOC_SNAP_CREATE");
		CHILD_CHECK(fails(ioctl(d, _IOW(0x94, 23, args), &args)), 16,
			    "BTRFS_IOC_SNAP_CREATE_V2");
		CHILD_CHECK(fails(ioctl(d, _IOW(0x94, 15, args), &args)), 17,
			    "BTRFS_IOC_SNAP_DESTROY");
	}

	/* Pointers that fault. */
	errno = 0;
	CHILD_CHECK(fails(ioctl(f, FS_IOC_GETFLAGS, NULL)), 20, "GETFLAGS");
	CHILD_CHECK(fails(ioctl(f, FS_IOC_GETFLAGS, (void *)bad)), 21,
		    "GETFLAGS bad");
	CHILD_CHECK(fails(ioctl(f, FS_IOC_SETFLAGS, (void *)bad)), 22,
		    "SETFLAGS bad");
	CHILD_CHECK(fails(ioctl(f, FS_IOC_FSGETXATTR, (void *)bad)), 23,
		    "FSGETXATTR bad");
	CHILD_CHECK(fails(ioctl(f, FS_IOC_FSSETXATTR, (void *)bad)), 24,
		    "FSSETXATTR bad");
	CHILD_CHECK(fails(ioctl(f, FS_IOC_GETVERSION, (void *)bad)), 25,
		    "GETVERSION bad");
	CHILD_CHECK(fails(ioctl(f, FIDEDUPERANGE, (void *)bad)), 26,
		    "FIDEDUPERANGE bad");
	CHILD_CHECK(fails(ioctl(f, FICLONERANGE, (void *)bad)), 27,
		    "FICLONERANGE bad");
	CHILD_CHECK(fails(ioctl(d, _IOW(0x94, 1, char[4096]), (void *)bad)),
		    28, "btrfs ioctl bad");
	CHILD_CHECK(fails(ioctl(f, FS_IOC_FIEMAP, (void *)bad)), 29,
		    "FIEMAP bad");
	CHILD_CHECK(fails(ioctl(f, 0xdeadbeef, (void *)bad)), 30, "unknown");
	/* Setting flags it has no right to. */
	{
		int flags = FS_IMMUTABLE_FL;

		errno = 0;
		CHILD_CHECK(fails(ioctl(f, FS_IOC_SETFLAGS, &flags)), 31,
			    "chattr +i");
	}
	return 0;
}

TEST_F(world, ioctl_foreign_fds_and_faulting_pointers)
{
	struct world *w = &self->w;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(container_ioctls, w), 0);
}

/* ---- mmap ------------------------------------------------------------ */

static sigjmp_buf bus_env;

static void on_bus(int sig)
{
	siglongjmp(bus_env, sig);
}

static int touch_faults(volatile char *p)
{
	if (sigsetjmp(bus_env, 1))
		return 1;
	(void)p[0];
	return 0;
}

static int container_mmap(void *arg)
{
	const struct world *w = arg;
	long page = sysconf(_SC_PAGESIZE);
	int ro, rw, d;
	char *p;

	signal(SIGBUS, on_bus);
	signal(SIGSEGV, on_bus);
	CHILD_CHECK(mounted(w) == 0, 1, "mount");
	ro = open(P(w->mnt, "f"), O_RDONLY);
	rw = open(P(w->mnt, "f"), O_RDWR);
	d = open(P(w->mnt, "d"), O_RDONLY | O_DIRECTORY);
	CHILD_CHECK(ro >= 0 && rw >= 0 && d >= 0, 2, "open");

	errno = 0;
	CHILD_CHECK(mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, ro,
			 0) == MAP_FAILED && errno == EACCES, 3,
		    "shared writable map of a read-only fd");
	CHILD_CHECK(mmap(NULL, page, PROT_READ, MAP_SHARED, d, 0) ==
		    MAP_FAILED, 4, "map a directory");
	CHILD_CHECK(mmap(NULL, 0, PROT_READ, MAP_SHARED, rw, 0) == MAP_FAILED,
		    5, "length 0");

	/* Beyond EOF: SIGBUS, not a kernel complaint. */
	p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
	CHILD_CHECK(p != MAP_FAILED, 7, "map");
	CHILD_CHECK(p[0] == '0', 8, "read through the map");
	p[1] = 'X';
	CHILD_CHECK(msync(p, page, MS_SYNC) == 0, 9, "msync");
	CHILD_CHECK(touch_faults(p + 2 * page), 10, "beyond EOF");
	/* Truncated under the mapping. */
	CHILD_CHECK(ftruncate(rw, 0) == 0, 11, "truncate");
	CHILD_CHECK(touch_faults(p), 12, "after truncate");
	munmap(p, 4 * page);
	/* A private writable map of a read-only fd is fine. */
	CHILD_CHECK(ftruncate(rw, 10) == 0, 13, "extend");
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE, ro, 0);
	CHILD_CHECK(p != MAP_FAILED, 14, "private map");
	p[0] = 'P';
	munmap(p, page);
	return 0;
}

TEST_F(world, mmap_failing_paths)
{
	struct world *w = &self->w;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(container_mmap, w), 0);
}

/* ---- races ----------------------------------------------------------- */

#define RACE_SECONDS 20

struct race {
	const char *dir;
	volatile int stop;
	int id;
};

/* P() rotates static buffers: not for threads. */
#define TP(buf, dir, name) (snprintf(buf, sizeof(buf), "%s/%s", dir, name), buf)

static void *race_rename(void *arg)
{
	struct race *r = arg;
	char a[256], b[256], c[256], d[256];

	TP(a, r->dir, "d/n00");
	TP(b, r->dir, "d/moved");
	TP(c, r->dir, "d/n01");
	TP(d, r->dir, "n01-up");
	while (!r->stop) {
		rename(a, b);
		rename(b, a);
		rename(c, d);
		rename(d, c);
	}
	return NULL;
}

static void *race_create_unlink(void *arg)
{
	struct race *r = arg;
	char name[256], f[256];
	int fd;

	snprintf(name, sizeof(name), "%s/d/tmp%d", r->dir, r->id);
	TP(f, r->dir, "f");
	while (!r->stop) {
		fd = open(name, O_CREAT | O_RDWR, 0644);
		if (fd >= 0) {
			if (write(fd, "x", 1) < 0)
				break;
			close(fd);
		}
		unlink(name);
		mkdir(name, 0755);
		rmdir(name);
		link(f, name);
		unlink(name);
	}
	return NULL;
}

static void *race_lookup(void *arg)
{
	struct race *r = arg;
	char d_[256], n00[256], moved[256], dotdot[256];
	struct dirent *de;
	struct stat st;
	char buf[16];
	DIR *d;
	int fd;

	TP(d_, r->dir, "d");
	TP(n00, r->dir, "d/n00");
	TP(moved, r->dir, "d/moved");
	TP(dotdot, r->dir, "d/tmp1/..");
	while (!r->stop) {
		d = opendir(d_);
		if (d) {
			while ((de = readdir(d)))
				fstatat(dirfd(d), de->d_name, &st,
					AT_SYMLINK_NOFOLLOW);
			closedir(d);
		}
		stat(n00, &st);
		stat(moved, &st);
		fd = open(n00, O_RDONLY);
		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf)) < 0)
				break;
			close(fd);
		}
		access(dotdot, F_OK);
	}
	return NULL;
}

static int container_races(void *arg)
{
	const struct world *w = arg;
	struct race r[6];
	pthread_t t[6];
	int i;

	CHILD_CHECK(mounted(w) == 0, 1, "mount");
	for (i = 0; i < 6; i++) {
		r[i].dir = w->mnt;
		r[i].stop = 0;
		r[i].id = i;
	}
	pthread_create(&t[0], NULL, race_rename, &r[0]);
	pthread_create(&t[1], NULL, race_create_unlink, &r[1]);
	pthread_create(&t[2], NULL, race_create_unlink, &r[2]);
	pthread_create(&t[3], NULL, race_lookup, &r[3]);
	pthread_create(&t[4], NULL, race_lookup, &r[4]);
	pthread_create(&t[5], NULL, race_rename, &r[5]);
	sleep(RACE_SECONDS);
	for (i = 0; i < 6; i++)
		r[i].stop = 1;
	for (i = 0; i < 6; i++)
		pthread_join(t[i], NULL);
	return 0;
}

TEST_F(world, rename_unlink_lookup_races)
{
	char under[128];
	struct world *w = &self->w;
	pid_t host;

	make_image(w);
	/* Host root's own way to the tree: the mark will hide it. */
	snprintf(under, sizeof(under), "%s/under", w->base);
	ASSERT_EQ(mkdir(under, 0755), 0);
	ASSERT_EQ(mount(w->lower, under, NULL, MS_BIND, NULL), 0);
	ASSERT_EQ(mark_tree(w->lower), 0);
	/* Host root changing the tree underneath meanwhile. */
	host = fork();
	ASSERT_GE(host, 0);
	if (host == 0) {
		struct race r[2] = { { under, 0, 7 }, { under, 0, 8 } };
		pthread_t t[2];

		pthread_create(&t[0], NULL, race_create_unlink, &r[0]);
		pthread_create(&t[1], NULL, race_rename, &r[1]);
		sleep(RACE_SECONDS);
		r[0].stop = r[1].stop = 1;
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
		_exit(0);
	}
	ASSERT_EQ(in_userns_default(container_races, w), 0);
	ASSERT_EQ(waitpid(host, NULL, 0), host);
	ASSERT_EQ(umount2(w->lower, 0), 0);
	/* Consistent afterwards. */
	EXPECT_EQ(access(P(w->lower, "f"), F_OK), 0);
	EXPECT_EQ(access(P(w->lower, "d"), F_OK), 0);
}

/* The same races against a host-root mount while the lower tree changes. */
TEST_F(world, races_with_changes_underneath)
{
	struct race r[4];
	pthread_t t[5];
	struct world *w = &self->w;
	int i;

	make_image(w);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	become_fsids(ID_SHIFT, ID_SHIFT);
	for (i = 0; i < 4; i++) {
		r[i].dir = i == 3 ? w->lower : w->mnt;
		r[i].stop = 0;
		r[i].id = i;
	}
	pthread_create(&t[0], NULL, race_rename, &r[0]);
	pthread_create(&t[1], NULL, race_lookup, &r[1]);
	pthread_create(&t[2], NULL, race_create_unlink, &r[2]);
	/* Underneath, as the same (capable-less) fsuid: renames below. */
	pthread_create(&t[3], NULL, race_rename, &r[3]);
	pthread_create(&t[4], NULL, race_lookup, &r[0]);
	sleep(RACE_SECONDS / 2);
	for (i = 0; i < 4; i++)
		r[i].stop = 1;
	for (i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	become_fsids(0, 0);
	EXPECT_EQ(umount2(w->mnt, 0), 0);
}

/* ---- option fuzzing -------------------------------------------------- */

static const char *const keys[] = {
	"uidmap", "gidmap", "mark", "source", "ro", "rw", "uidmap", "gidmap",
	"bogus", "", "uidmap ", "UIDMAP", "lowerdir", "nosuid",
};

static const char *const seeds[] = {
	"0:100000:65536", "0:0:1", "1:2:3", "4294967294:0:1", "0:4294967294:1",
	"65536:165536:65536", "0:100000:0", "::", "0:100000", "a:b:c",
	"-1:0:1", "0:100000:65536,", "0:100000:65536:1", " 0:1:1", "0x10:1:1",
	"4294967295:0:1", "99999999999:0:1", "", "mark",
};

static unsigned int rnd(void)
{
	static unsigned int s = 0x5eed1234;

	s ^= s << 13;
	s ^= s >> 17;
	s ^= s << 5;
	return s;
}

static void mutate(char *buf, size_t len)
{
	size_t n = strlen(buf), pos;
	int k = rnd() % 4;

	if (!n || n + 2 >= len)
		return;
	pos = rnd() % n;
	switch (k) {
	case 0:
		buf[pos] = "0123456789:,=-x \n"[rnd() % 17];
		break;
	case 1:
		memmove(buf + pos + 1, buf + pos, n - pos + 1);
		buf[pos] = "0123456789:9"[rnd() % 12];
		break;
	case 2:
		memmove(buf + pos, buf + pos + 1, n - pos);
		break;
	default:
		buf[pos] = (char)(rnd() % 255 + 1);
	}
}

/* One random fs_context; 0 mounted, 1 refused with a reason, -1 not. */
static int fuzz_one(const struct world *w, bool userns, char *why, size_t len)
{
	char val[128], log[2048];
	int fsfd, mfd, i, nr = rnd() % 5, err = 0;

	fsfd = fsopen("shiftfs", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return -1;
	if (rnd() % 8)
		fsconfig(fsfd, FSCONFIG_SET_STRING, "source", w->lower, 0);
	if (rnd() % 3 == 0) {
		fsconfig(fsfd, FSCONFIG_SET_STRING, "uidmap", "0:100000:1000", 0);
		fsconfig(fsfd, FSCONFIG_SET_STRING, "gidmap", "0:100000:1000", 0);
	}
	for (i = 0; i < nr && !err; i++) {
		const char *key = keys[rnd() % (sizeof(keys) / sizeof(keys[0]))];

		snprintf(val, sizeof(val), "%s",
			 seeds[rnd() % (sizeof(seeds) / sizeof(seeds[0]))]);
		if (rnd() % 2)
			mutate(val, sizeof(val));
		if (!*key)
			continue;
		if (rnd() % 5 == 0)
			err = fsconfig(fsfd, FSCONFIG_SET_FLAG, key, NULL, 0);
		else
			err = fsconfig(fsfd, FSCONFIG_SET_STRING, key, val, 0);
		if (err)
			snprintf(why, len, "%s=%s", key, val);
	}
	if (!err) {
		err = fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
		if (err)
			snprintf(why, len, "create");
	}
	if (!err) {
		mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
		close(fsfd);
		if (mfd >= 0)
			close(mfd);
		return 0;
	}
	err = errno;
	fs_log(fsfd, log, sizeof(log));
	close(fsfd);
	errno = err;
	if (userns && err != EPERM && err != EINVAL && err != ENOENT)
		return -1;
	return log[0] ? 1 : -1;
}

static int fuzz(const struct world *w, bool userns, int rounds)
{
	int i, r, mounted = 0, refused = 0, silent = 0;
	char why[256];

	for (i = 0; i < rounds; i++) {
		why[0] = '\0';
		r = fuzz_one(w, userns, why, sizeof(why));
		if (r == 0)
			mounted++;
		else if (r == 1)
			refused++;
		else if (silent++ < 5)
			printf("# refused without a reason: %s (errno %d)\n",
			       why, errno);
	}
	printf("# %d rounds: %d mounted, %d refused with a reason, %d without\n",
	       rounds, mounted, refused, silent);
	return silent;
}

static int fuzz_in_userns(void *arg)
{
	return fuzz(arg, true, 1500) ? 1 : 0;
}

TEST_F(world, option_fuzzing)
{
	char data[256], *p;
	struct world *w = &self->w;
	long before, after;
	int i, ok = 0;

	make_image(w);
	before = slab_active("shiftfs_inode");
	EXPECT_EQ(fuzz(w, false, 3000), 0);
	/* mount(2): the same parser behind the legacy splitter. */
	for (i = 0; i < 1000; i++) {
		snprintf(data, sizeof(data), "uidmap=%s,gidmap=%s",
			 seeds[rnd() % (sizeof(seeds) / sizeof(seeds[0]))],
			 seeds[rnd() % (sizeof(seeds) / sizeof(seeds[0]))]);
		if (rnd() % 2)
			mutate(data, sizeof(data));
		for (p = data; *p; p++)
			if (*p == '\n')
				*p = ',';
		if (mount(w->lower, w->mnt, "shiftfs", 0, data) == 0) {
			ok++;
			ASSERT_EQ(umount2(w->mnt, 0), 0);
		}
	}
	TH_LOG("mount(2): %d of 1000 mounted", ok);
	ASSERT_EQ(mark_tree(w->lower), 0);
	EXPECT_EQ(in_userns_default(fuzz_in_userns, w), 0);
	ASSERT_EQ(umount2(w->lower, 0), 0);
	after = slab_active("shiftfs_inode");
	TH_LOG("shiftfs_inode objects: %ld before, %ld after", before, after);
}

/* ---- leaks ----------------------------------------------------------- */

static int container_walks(void *arg)
{
	const struct world *w = arg;
	char name[64];
	struct stat st;
	int i, round;

	for (round = 0; round < 3; round++) {
		CHILD_CHECK(mounted(w) == 0, 1, "mount");
		for (i = 0; i < 2000; i++) {
			snprintf(name, sizeof(name), "many/f%04d", i);
			CHILD_CHECK(stat(P(w->mnt, name), &st) == 0, 2, "stat");
		}
		CHILD_CHECK(umount2(w->mnt, 0) == 0, 3, "umount");
	}
	return 0;
}

static int drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	if (fd < 0)
		return -1;
	if (write(fd, "2", 1) != 1) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

TEST_F(world, inode_cache_returns_after_unmount)
{
	long before, during, after = 0;
	struct world *w = &self->w;
	char name[64];
	int i, tries;

	if (slab_active("shiftfs_inode") < 0)
		SKIP("no shiftfs_inode in /proc/slabinfo");
	ASSERT_EQ(mkdir(P(w->lower, "many"), 0755), 0);
	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "many/f%04d", i);
		ASSERT_EQ(make_file(P(w->lower, name), 0644, 0, 0), 0);
	}
	ASSERT_EQ(drop_caches(), 0);
	sleep(1);
	before = slab_active("shiftfs_inode");
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	for (i = 0; i < 2000; i++) {
		struct stat st;

		snprintf(name, sizeof(name), "many/f%04d", i);
		ASSERT_EQ(stat(P(w->mnt, name), &st), 0);
	}
	during = slab_active("shiftfs_inode");
	ASSERT_EQ(umount2(w->mnt, 0), 0);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(in_userns_default(container_walks, w), 0);
	ASSERT_EQ(umount2(w->lower, 0), 0);
	/* Inodes are freed after an RCU grace period. */
	for (tries = 0; tries < 20; tries++) {
		drop_caches();
		usleep(250000);
		after = slab_active("shiftfs_inode");
		if (after <= before + 200)
			break;
	}
	TH_LOG("shiftfs_inode: %ld before, %ld with 2000 looked up, %ld after",
	       before, during, after);
	EXPECT_GE(during, before + 1500);
	EXPECT_LE(after, before + 200);
}

TEST_HARNESS_MAIN
