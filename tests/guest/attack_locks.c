// SPDX-License-Identifier: GPL-2.0
/*
 * Attacks on the lock forwarding (module/file.c, ->lock/->flock/->setlease),
 * from the issue 22 attacker's pass: the owner and pid F_GETLK reports
 * across the boundary, in the observer's pid namespace (a host pid never
 * shows inside a container's); F_GETLK from a user namespace that maps
 * nothing of the file; write locks through a read-only open; leases held
 * underneath against opens and truncates through the mount; a lock held
 * while the lower file is renamed over.  Each compares with what ext4 or
 * tmpfs does for the same calls without shiftfs.
 */
#include "harness.h"
#include "mark_util.h"

#include <sys/file.h>

struct aworld {
	struct world w;
	char lf[160];		/* the lower file */
	char mf[160];		/* the same file through the mount */
};

FIXTURE(aworld) {
	struct aworld a;
};

FIXTURE_SETUP(aworld)
{
	struct aworld *a = &self->a;

	ASSERT_EQ(world_setup(&a->w), 0);
	snprintf(a->lf, sizeof(a->lf), "%s/f", a->w.lower);
	snprintf(a->mf, sizeof(a->mf), "%s/f", a->w.mnt);
	/* Anyone may open it read-write: container root included. */
	ASSERT_EQ(make_file(a->lf, 0666, 0, 0), 0);
	ASSERT_EQ(write_file(a->lf, "0123456789abcdef"), 0);
	ASSERT_EQ(shiftfs_mount_default(&a->w), 0);
}

FIXTURE_TEARDOWN(aworld)
{
}

/*
 * A process holding a whole-file lock of @cmd (F_SETLK or F_OFD_SETLK) on
 * @path, in a new pid namespace if @pidns (as pid 1 there).  Returns its
 * pid in ours once the lock is held, or -1.  The harness kills it with
 * the test's process group.
 */
static pid_t hold_lock(const char *path, int cmd, bool pidns)
{
	int p[2], q[2];
	pid_t pid, holder = -1;

	if (pipe(p) || pipe(q))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		char c = 1;
		int fd;

		if (pidns && unshare(CLONE_NEWPID))
			_exit(1);
		holder = pidns ? fork() : 0;
		if (holder < 0)
			_exit(1);
		if (holder > 0) {
			/* Once it holds it: its pid in ours, the host's. */
			if (read(q[0], &c, 1) != 1 ||
			    write(p[1], &holder, sizeof(holder)) !=
			    sizeof(holder))
				_exit(1);
			pause();
			_exit(0);
		}
		fd = open(path, O_RDWR);
		if (fd < 0 || fcntl(fd, cmd, &fl))
			_exit(1);
		holder = getpid();
		if (pidns ? write(q[1], &c, 1) != 1 :
			    write(p[1], &holder, sizeof(holder)) !=
			    sizeof(holder))
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	close(q[0]);
	close(q[1]);
	if (read(p[0], &holder, sizeof(holder)) != sizeof(holder))
		holder = -1;
	close(p[0]);
	return holder;
}

/* F_GETLK (or @cmd) of a whole-file write lock on @path: fills @fl. */
static int getlk(const char *path, int cmd, struct flock *fl)
{
	int fd = open(path, O_RDWR);
	int ret;

	if (fd < 0)
		return -1;
	memset(fl, 0, sizeof(*fl));
	fl->l_type = F_WRLCK;
	fl->l_whence = SEEK_SET;
	ret = fcntl(fd, cmd, fl);
	close(fd);
	return ret;
}

struct getlk_want {
	const char *path;
	int cmd;
	short type;
	pid_t pid;
	bool pidns;
};

/* In a child, in a new pid namespace if asked: F_GETLK sees @want. */
static int getlk_check(void *arg)
{
	const struct getlk_want *want = arg;
	struct flock fl;
	int status;
	pid_t pid;

	if (want->pidns && unshare(CLONE_NEWPID))
		return 10;
	pid = fork();
	if (pid < 0)
		return 11;
	if (pid == 0) {
		if (getlk(want->path, want->cmd, &fl)) {
			printf("# F_GETLK of %s: %s\n", want->path,
			       strerror(errno));
			_exit(12);
		}
		if (fl.l_type != want->type || fl.l_pid != want->pid) {
			printf("# F_GETLK of %s: type %d pid %d, want type %d pid %d\n",
			       want->path, fl.l_type, fl.l_pid, want->type,
			       want->pid);
			_exit(13);
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 14;
	return WEXITSTATUS(status);
}

/*
 * A host process locks the lower file; a container in its own pid
 * namespace asks through the mount.  The holder is not in its pid
 * namespace: l_pid 0, as for any lock on any filesystem; a host pid there
 * would leak.
 */
TEST_F(aworld, getlk_host_holder_pid_hidden_from_container)
{
	struct getlk_want want = { self->a.mf, F_GETLK, F_WRLCK, 0, true };

	ASSERT_GT(hold_lock(self->a.lf, F_SETLK, false), 0);
	EXPECT_EQ(in_container(getlk_check, &want), 0);
}

/* The same, the host holder locking through a second path: the mount. */
TEST_F(aworld, getlk_host_holder_through_mount_hidden_from_container)
{
	struct getlk_want want = { self->a.mf, F_GETLK, F_WRLCK, 0, true };

	ASSERT_GT(hold_lock(self->a.mf, F_SETLK, false), 0);
	EXPECT_EQ(in_container(getlk_check, &want), 0);
}

/* The host sees a container process's lock with the holder's host pid. */
TEST_F(aworld, getlk_container_holder_host_pid_seen_by_host)
{
	struct getlk_want lower = { self->a.lf, F_GETLK, F_WRLCK, 0, false };
	struct getlk_want mnt = { self->a.mf, F_GETLK, F_WRLCK, 0, false };
	pid_t holder = hold_lock(self->a.mf, F_SETLK, true);

	ASSERT_GT(holder, 0);
	lower.pid = mnt.pid = holder;
	EXPECT_EQ(getlk_check(&lower), 0);
	EXPECT_EQ(getlk_check(&mnt), 0);
}

/* Two processes of one container (one pid namespace): its own pids. */
static int same_pidns_pair(void *arg)
{
	const char *path = arg;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int p[2], status, fd;
	pid_t holder, pid;
	char c;

	if (unshare(CLONE_NEWPID) || pipe(p))
		return 10;
	holder = fork();
	if (holder < 0)
		return 11;
	if (holder == 0) {
		/* pid 1 of the new namespace */
		fd = open(path, O_RDWR);
		if (fd < 0 || fcntl(fd, F_SETLK, &fl))
			_exit(1);
		c = (char)getpid();
		if (write(p[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(p[0], &c, 1) != 1 || c != 1)
		return 12;
	pid = fork();
	if (pid < 0)
		return 13;
	if (pid == 0) {
		if (getlk(path, F_GETLK, &fl))
			_exit(14);
		if (fl.l_type != F_WRLCK || fl.l_pid != 1) {
			printf("# F_GETLK in the holder's pid ns: type %d pid %d, want %d pid 1\n",
			       fl.l_type, fl.l_pid, F_WRLCK);
			_exit(15);
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		status = 16 << 8;
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	return WEXITSTATUS(status);
}

TEST_F(aworld, getlk_container_pair_sees_own_pids)
{
	EXPECT_EQ(in_container(same_pidns_pair, self->a.mf), 0);
}

/* OFD locks have no pid: -1 whichever side asks. */
TEST_F(aworld, ofd_getlk_pid_is_minus_one_across)
{
	struct getlk_want want = { self->a.mf, F_OFD_GETLK, F_WRLCK, -1, true };
	struct getlk_want host = { self->a.lf, F_OFD_GETLK, F_WRLCK, -1, false };

	ASSERT_GT(hold_lock(self->a.lf, F_OFD_SETLK, false), 0);
	EXPECT_EQ(in_container(getlk_check, &want), 0);
	EXPECT_EQ(getlk_check(&host), 0);
}

/*
 * A user namespace that maps nothing of the mount's ids (the file's owner
 * and group are unmapped there: it opens the file as "other"): F_GETLK
 * still reports the lock, setting one still conflicts.
 */
static int foreign_getlk(void *arg)
{
	const char *path = arg;
	struct flock fl;
	int fd;

	if (getlk(path, F_GETLK, &fl)) {
		printf("# foreign F_GETLK: %s\n", strerror(errno));
		return 10;
	}
	if (fl.l_type != F_WRLCK || fl.l_pid != 0) {
		printf("# foreign F_GETLK: type %d pid %d\n", fl.l_type,
		       fl.l_pid);
		return 11;
	}
	fd = open(path, O_RDWR);
	if (fd < 0)
		return 12;
	fl.l_type = F_RDLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = fl.l_len = 0;
	if (!fcntl(fd, F_SETLK, &fl) || (errno != EAGAIN && errno != EACCES)) {
		printf("# foreign F_SETLK over a held lock: %s\n",
		       strerror(errno));
		return 13;
	}
	return 0;
}

static int foreign_getlk_pidns(void *arg)
{
	int status;
	pid_t pid;

	if (unshare(CLONE_NEWPID))
		return 20;
	pid = fork();
	if (pid == 0)
		_exit(foreign_getlk(arg));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 21;
	return WEXITSTATUS(status);
}

TEST_F(aworld, getlk_from_foreign_userns)
{
	ASSERT_GT(hold_lock(self->a.lf, F_SETLK, false), 0);
	EXPECT_EQ(run_in_userns("0 300000 1\n", "0 300000 1\n", false,
				foreign_getlk_pidns, self->a.mf), 0);
}

/*
 * A write lock needs an fd open for writing, a read lock one open for
 * reading, as on ext4 (EBADF); through the mount the check must be made
 * against the caller's open, not the real file's.
 */
static int lock_modes(void *arg)
{
	const char *path = arg;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 10;
	if (!fcntl(fd, F_SETLK, &fl) || errno != EBADF)
		return 11;
	if (!fcntl(fd, F_OFD_SETLK, &fl) || errno != EBADF)
		return 12;
	close(fd);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return 13;
	fl.l_type = F_RDLCK;
	if (!fcntl(fd, F_SETLK, &fl) || errno != EBADF)
		return 14;
	if (!fcntl(fd, F_OFD_SETLK, &fl) || errno != EBADF)
		return 15;
	close(fd);
	return 0;
}

TEST_F(aworld, lock_mode_checked_against_the_callers_open)
{
	/* A file the container may only read. */
	ASSERT_EQ(chmod(self->a.lf, 0644), 0);
	EXPECT_EQ(lock_modes(self->a.lf), 0);	/* the reference: tmpfs */
	EXPECT_EQ(lock_modes(self->a.mf), 0);
	EXPECT_EQ(in_container(lock_modes, self->a.mf), 0);
}

static void on_sigio(int sig)
{
	(void)sig;
}

/*
 * A read lease on the lower file, held by a host process; its fd.  A
 * break is signalled with SIGIO, whose default action would end us.
 */
static int host_lease(const char *path)
{
	int fd = open(path, O_RDONLY);

	signal(SIGIO, on_sigio);

	if (fd < 0)
		return -1;
	if (fcntl(fd, F_SETLEASE, F_RDLCK)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* F_GETLEASE shows F_UNLCK once a break is under way; wait up to 3 s. */
static bool lease_breaking(int fd)
{
	int i;

	for (i = 0; i < 300; i++) {
		if (fcntl(fd, F_GETLEASE) == F_UNLCK)
			return true;
		usleep(10000);
	}
	return false;
}

static int open_wr_nonblock(void *arg)
{
	int fd = open(arg, O_WRONLY | O_NONBLOCK);

	if (fd >= 0) {
		printf("# write open through the mount ignored the lease\n");
		return 10;
	}
	if (errno != EWOULDBLOCK) {
		printf("# write open: %s, want EWOULDBLOCK\n", strerror(errno));
		return 11;
	}
	return 0;
}

/*
 * A host daemon's read lease on a file (Samba, a cache): a container
 * opening it for writing through the mount breaks it, as a host open
 * would.  Non-blocking: EWOULDBLOCK and the break started.
 */
TEST_F(aworld, host_lease_broken_by_write_open_through_mount)
{
	int fd = host_lease(self->a.lf);

	ASSERT_GE(fd, 0);
	EXPECT_EQ(in_container(open_wr_nonblock, self->a.mf), 0);
	EXPECT_TRUE(lease_breaking(fd));
	fcntl(fd, F_SETLEASE, F_UNLCK);
	close(fd);
}

static int truncate_it(void *arg)
{
	return truncate(arg, 3) ? 10 : 0;
}

/*
 * truncate(2) of a leased file breaks the lease before the data goes
 * (vfs_truncate(): break_lease()).  Through the mount that break runs on
 * the shiftfs inode, where no lease ever is; the lower inode's holder
 * must be told all the same, and the truncate wait for it.
 */
TEST_F(aworld, host_lease_broken_by_truncate_through_mount)
{
	struct stat st;
	int fd, status;
	pid_t pid;

	fd = host_lease(self->a.lf);
	ASSERT_GE(fd, 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(in_container(truncate_it, self->a.mf));
	EXPECT_TRUE(lease_breaking(fd));
	/* While the lease is held, nothing was truncated. */
	ASSERT_EQ(stat(self->a.lf, &st), 0);
	EXPECT_EQ(st.st_size, 16);
	ASSERT_EQ(fcntl(fd, F_SETLEASE, F_UNLCK), 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(stat(self->a.lf, &st), 0);
	EXPECT_EQ(st.st_size, 3);
	close(fd);
}

/*
 * A container process holds a write lock on f through the mount; the
 * host renames another file over f underneath.  The lock stays with the
 * old inode (as on ext4): a new open through the mount reaches the new
 * file, which is unlocked and lockable by the host and the container,
 * and the old lock goes away with its holder, leaving nothing behind.
 */
TEST_F(aworld, lock_held_while_lower_file_renamed_over)
{
	struct aworld *a = &self->a;
	char lg[192];
	struct stat lst, mst;
	struct flock fl;
	pid_t holder;

	snprintf(lg, sizeof(lg), "%s/g", a->w.lower);
	ASSERT_EQ(make_file(lg, 0666, 0, 0), 0);
	holder = hold_lock(a->mf, F_SETLK, true);
	ASSERT_GT(holder, 0);
	ASSERT_EQ(rename(lg, a->lf), 0);

	ASSERT_EQ(stat(a->lf, &lst), 0);
	ASSERT_EQ(stat(a->mf, &mst), 0);
	EXPECT_EQ(mst.st_ino, lst.st_ino);
	ASSERT_EQ(getlk(a->mf, F_GETLK, &fl), 0);
	EXPECT_EQ(fl.l_type, F_UNLCK);
	ASSERT_EQ(getlk(a->lf, F_GETLK, &fl), 0);
	EXPECT_EQ(fl.l_type, F_UNLCK);

	/* The new file locks and conflicts as any file. */
	ASSERT_GT(hold_lock(a->lf, F_SETLK, false), 0);
	ASSERT_EQ(getlk(a->mf, F_GETLK, &fl), 0);
	EXPECT_EQ(fl.l_type, F_WRLCK);

	/* The old lock goes with its holder (the runner checks the log). */
	kill(holder, SIGKILL);
}

/*
 * POSIX locks are the process's on the inode: closing any fd of the file
 * drops them, whichever path the lock and the fd came by (as two fds of
 * one file on ext4).  An OFD lock is its open file's: F_OFD_GETLK
 * through that same file sees no conflict with itself.
 */
TEST_F(aworld, posix_close_of_the_other_path_drops_lock)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int lfd, mfd;

	lfd = open(self->a.lf, O_RDWR);
	mfd = open(self->a.mf, O_RDWR);
	ASSERT_GE(lfd, 0);
	ASSERT_GE(mfd, 0);
	ASSERT_EQ(fcntl(mfd, F_SETLK, &fl), 0);
	ASSERT_EQ(getlk(self->a.lf, F_OFD_GETLK, &fl), 0);
	EXPECT_EQ(fl.l_type, F_WRLCK);
	close(lfd);
	ASSERT_EQ(getlk(self->a.lf, F_OFD_GETLK, &fl), 0);
	EXPECT_EQ(fl.l_type, F_UNLCK);

	/* and the other way round */
	lfd = open(self->a.lf, O_RDWR);
	ASSERT_GE(lfd, 0);
	fl.l_type = F_WRLCK;
	ASSERT_EQ(fcntl(lfd, F_SETLK, &fl), 0);
	close(mfd);
	ASSERT_EQ(getlk(self->a.mf, F_OFD_GETLK, &fl), 0);
	EXPECT_EQ(fl.l_type, F_UNLCK);
	close(lfd);
}

TEST_F(aworld, ofd_getlk_own_lock_no_conflict)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd = open(self->a.mf, O_RDWR);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(fcntl(fd, F_OFD_SETLK, &fl), 0);
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	ASSERT_EQ(fcntl(fd, F_OFD_GETLK, &fl), 0);
	EXPECT_EQ(fl.l_type, F_UNLCK);
	/* another open file of the same mount conflicts */
	ASSERT_EQ(getlk(self->a.mf, F_OFD_GETLK, &fl), 0);
	EXPECT_EQ(fl.l_type, F_WRLCK);
	EXPECT_EQ(fl.l_pid, -1);
	close(fd);
}

TEST_HARNESS_MAIN
