// SPDX-License-Identifier: GPL-2.0
/*
 * File locks through shiftfs are locks on the lower file: POSIX (fcntl),
 * OFD and flock() locks taken through a mount conflict with the same lock
 * taken directly on the lower file, through a second mount of the same
 * tree and through a mount made from a mark in a user namespace, both
 * ways; F_GETLK sees lower locks; closing releases them; blocking requests
 * wait for the holder and can be interrupted.  Leases are refused.
 *
 * POSIX locks of one process never conflict with each other, so every
 * "try" runs in a forked child.
 *
 * Some 650 lines in one file: three kinds of lock times the same holders
 * (lower file, second mount, mark mount) share one fixture and one set of
 * try/hold helpers.
 */
#include "harness.h"
#include "mark_util.h"

#include <pthread.h>
#include <sys/file.h>

enum kind { K_POSIX, K_OFD, K_FLOCK };

static const char *const kind_name[] = { "posix", "ofd", "flock" };

struct lworld {
	struct world w;
	char mnt2[128];		/* a second explicit-map mount of lower */
	char direct[128];	/* lower, bind-mounted before any mark */
	char cmnt[128];		/* a mount from the mark, in a userns */
	enum kind kind;
};

static int lworld_setup(struct lworld *lw)
{
	const char *opts[] = { "uidmap=" MAP_DEFAULT, "gidmap=" MAP_DEFAULT,
			       NULL };
	struct world *w = &lw->w;

	if (world_setup(w))
		return -1;
	snprintf(lw->mnt2, sizeof(lw->mnt2), "%s/mnt2", w->base);
	snprintf(lw->direct, sizeof(lw->direct), "%s/direct", w->base);
	snprintf(lw->cmnt, sizeof(lw->cmnt), "%s/cmnt", w->base);
	if (mkdir(lw->mnt2, 0755) || mkdir(lw->direct, 0755) ||
	    mkdir(lw->cmnt, 0755))
		return -1;
	/* Anyone may open it read-write: container root included. */
	if (make_file(P(w->lower, "f"), 0666, 0, 0) ||
	    write_file(P(w->lower, "f"), "0123456789abcdef"))
		return -1;
	if (mount(w->lower, lw->direct, NULL, MS_BIND, NULL))
		return -1;
	if (shiftfs_mount_default(w) ||
	    shiftfs_fsmount(w->lower, lw->mnt2, opts, NULL, 0))
		return -1;
	return 0;
}

/* Each test starts with the file and every way to it set up. */
FIXTURE(lworld) {
	struct lworld lw;
};

FIXTURE_SETUP(lworld)
{
	ASSERT_EQ(lworld_setup(&self->lw), 0);
}

FIXTURE_TEARDOWN(lworld)
{
}

/* Lock, or unlock with F_UNLCK, the whole file; 0 or -errno. */
static int lock_fd(int fd, enum kind k, short type, bool wait)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET };
	int op;

	switch (k) {
	case K_POSIX:
		return fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl) ? -errno : 0;
	case K_OFD:
		return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) ?
			       -errno : 0;
	default:
		op = type == F_WRLCK ? LOCK_EX :
		     type == F_RDLCK ? LOCK_SH : LOCK_UN;
		return flock(fd, op | (wait ? 0 : LOCK_NB)) ? -errno : 0;
	}
}

enum { TRY_GRANTED, TRY_CONFLICT, TRY_ERROR, TRY_NOOPEN };

static const char *const try_name[] = {
	"granted", "conflict (EAGAIN)", "error", "open failed", "?"
};

/* In a child process: open @path, try a non-blocking lock of @type. */
static int try_in_child(const char *path, enum kind k, short type)
{
	int status, fd, err;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(TRY_NOOPEN);
		err = lock_fd(fd, k, type, false);
		if (err && err != -EAGAIN)
			printf("# child lock of %s: %s\n", path,
			       strerror(-err));
		_exit(!err ? TRY_GRANTED : err == -EAGAIN ? TRY_CONFLICT :
			     TRY_ERROR);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static const char *tname(int r)
{
	return try_name[r < 0 || r > TRY_NOOPEN ? TRY_NOOPEN + 1 : r];
}

/*
 * Write-lock @a here; a child must then be refused a write and a read lock
 * of the same kind on @b, and be granted one once we unlock.  0 if so.
 */
static int cross_check(const char *a, const char *b, enum kind k)
{
	int fd, r, ret = 0;

	fd = open(a, O_RDWR | O_CLOEXEC);
	if (fd < 0 || lock_fd(fd, k, F_WRLCK, false)) {
		printf("# %s: cannot lock %s: %s\n", kind_name[k], a,
		       strerror(errno));
		return 1;
	}
	r = try_in_child(b, k, F_WRLCK);
	if (r != TRY_CONFLICT) {
		printf("# %s: write-locked via %s, write lock via %s: %s\n",
		       kind_name[k], a, b, tname(r));
		ret = 2;
	}
	r = try_in_child(b, k, F_RDLCK);
	if (r != TRY_CONFLICT) {
		printf("# %s: write-locked via %s, read lock via %s: %s\n",
		       kind_name[k], a, b, tname(r));
		ret = 3;
	}
	if (lock_fd(fd, k, F_UNLCK, false)) {
		printf("# %s: unlock via %s: %s\n", kind_name[k], a,
		       strerror(errno));
		ret = 4;
	}
	r = try_in_child(b, k, F_WRLCK);
	if (r != TRY_GRANTED) {
		printf("# %s: unlocked via %s, write lock via %s: %s\n",
		       kind_name[k], a, b, tname(r));
		ret = 5;
	}
	close(fd);
	return ret;
}

/* Both ways between two paths to the same file. */
static int cross_both(const char *a, const char *b, enum kind k)
{
	int r1 = cross_check(P(a, "f"), P(b, "f"), k);
	int r2 = cross_check(P(b, "f"), P(a, "f"), k);

	return r1 || r2;
}

static void vs_lower(const struct lworld *lw, enum kind k)
{
	EXPECT_EQ(cross_both(lw->w.mnt, lw->direct, k), 0);
}

static void vs_second_mount(const struct lworld *lw, enum kind k)
{
	EXPECT_EQ(cross_both(lw->w.mnt, lw->mnt2, k), 0);
}

/* As container root: a mount from the mark against lower and host mount. */
static int mark_cross(void *arg)
{
	const struct lworld *lw = arg;
	char log[1024];
	int r1, r2;

	CHILD_CHECK(userns_mount(lw->w.lower, lw->cmnt, log, sizeof(log)) == 0,
		    10, "mount from the mark: %s", log);
	r1 = cross_both(lw->cmnt, lw->direct, lw->kind);
	r2 = cross_both(lw->cmnt, lw->w.mnt, lw->kind);
	return r1 || r2;
}

static void vs_mark_mount(struct lworld *lw, enum kind k)
{
	ASSERT_EQ(mark_tree(lw->w.lower), 0);
	lw->kind = k;
	EXPECT_EQ(in_userns_default(mark_cross, lw), 0);
}

TEST_F(lworld, posix_vs_lower)
{
	vs_lower(&self->lw, K_POSIX);
}

TEST_F(lworld, ofd_vs_lower)
{
	vs_lower(&self->lw, K_OFD);
}

TEST_F(lworld, flock_vs_lower)
{
	vs_lower(&self->lw, K_FLOCK);
}

TEST_F(lworld, posix_vs_second_mount)
{
	vs_second_mount(&self->lw, K_POSIX);
}

TEST_F(lworld, ofd_vs_second_mount)
{
	vs_second_mount(&self->lw, K_OFD);
}

TEST_F(lworld, flock_vs_second_mount)
{
	vs_second_mount(&self->lw, K_FLOCK);
}

TEST_F(lworld, posix_vs_mark_mount)
{
	vs_mark_mount(&self->lw, K_POSIX);
}

TEST_F(lworld, ofd_vs_mark_mount)
{
	vs_mark_mount(&self->lw, K_OFD);
}

TEST_F(lworld, flock_vs_mark_mount)
{
	vs_mark_mount(&self->lw, K_FLOCK);
}

/* F_GETLK/F_OFD_GETLK through the mount report a lock held underneath. */
TEST_F(lworld, getlk_sees_lower_lock)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 2, .l_len = 4 };
	struct lworld *lw = &self->lw;
	int fd, mfd, pfd[2];
	pid_t pid;
	char c;

	ASSERT_EQ(pipe(pfd), 0);
	/* The holder: a POSIX read lock on bytes 2-5, directly. */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		fd = open(P(lw->direct, "f"), O_RDWR);
		fl.l_type = F_RDLCK;
		if (fd < 0 || fcntl(fd, F_SETLK, &fl))
			_exit(1);
		if (write(pfd[1], "L", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(read(pfd[0], &c, 1), 1);

	mfd = open(P(lw->w.mnt, "f"), O_RDWR);
	ASSERT_GE(mfd, 0);
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	EXPECT_EQ(fcntl(mfd, F_GETLK, &fl), 0);
	EXPECT_EQ(fl.l_type, F_RDLCK);
	EXPECT_EQ(fl.l_pid, pid);
	EXPECT_EQ(fl.l_start, 2);
	EXPECT_EQ(fl.l_len, 4);
	TH_LOG("F_GETLK: type %d pid %d start %lld len %lld (holder %d)",
	       fl.l_type, fl.l_pid, (long long)fl.l_start,
	       (long long)fl.l_len, pid);

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	EXPECT_EQ(fcntl(mfd, F_OFD_GETLK, &fl), 0);
	EXPECT_EQ(fl.l_type, F_RDLCK);
	EXPECT_EQ(fl.l_start, 2);

	/* No conflict: a read lock does not conflict with a read lock. */
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_RDLCK;
	fl.l_whence = SEEK_SET;
	EXPECT_EQ(fcntl(mfd, F_GETLK, &fl), 0);
	EXPECT_EQ(fl.l_type, F_UNLCK);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(mfd);
}

/* And a lock held through the mount shows when testing underneath. */
TEST_F(lworld, getlk_lower_sees_mount_lock)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	struct lworld *lw = &self->lw;
	int fd, status;
	pid_t pid;

	fd = open(P(lw->w.mnt, "f"), O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(fcntl(fd, F_SETLK, &fl), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct flock t = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		int lfd = open(P(lw->direct, "f"), O_RDWR);

		if (lfd < 0 || fcntl(lfd, F_GETLK, &t))
			_exit(2);
		printf("# lower F_GETLK: type %d pid %d\n", t.l_type,
		       t.l_pid);
		_exit(t.l_type == F_WRLCK && t.l_pid == getppid() ? 0 : 1);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_EQ(WEXITSTATUS(status), 0);
	close(fd);
}

/* close() of the shiftfs fd drops the process' POSIX locks underneath. */
TEST_F(lworld, posix_released_on_close)
{
	struct lworld *lw = &self->lw;
	int fd, fd2;

	fd = open(P(lw->w.mnt, "f"), O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(lock_fd(fd, K_POSIX, F_WRLCK, false), 0);
	ASSERT_EQ(try_in_child(P(lw->direct, "f"), K_POSIX, F_WRLCK),
		  TRY_CONFLICT);
	ASSERT_EQ(close(fd), 0);
	EXPECT_EQ(try_in_child(P(lw->direct, "f"), K_POSIX, F_WRLCK),
		  TRY_GRANTED);

	/* POSIX: closing any fd of the file drops them, even another one. */
	fd = open(P(lw->w.mnt, "f"), O_RDWR);
	fd2 = open(P(lw->w.mnt, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(lock_fd(fd, K_POSIX, F_WRLCK, false), 0);
	ASSERT_EQ(try_in_child(P(lw->direct, "f"), K_POSIX, F_WRLCK),
		  TRY_CONFLICT);
	ASSERT_EQ(close(fd2), 0);
	EXPECT_EQ(try_in_child(P(lw->direct, "f"), K_POSIX, F_WRLCK),
		  TRY_GRANTED);
	close(fd);
}

/* A process holding a lock through the mount exits: the lock goes. */
TEST_F(lworld, posix_released_on_exit)
{
	struct lworld *lw = &self->lw;
	int locked[2], go[2], status;
	pid_t pid;
	char c;

	ASSERT_EQ(pipe(locked), 0);
	ASSERT_EQ(pipe(go), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd = open(P(lw->w.mnt, "f"), O_RDWR);

		if (fd < 0 || lock_fd(fd, K_POSIX, F_WRLCK, false))
			_exit(1);
		if (write(locked[1], "L", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(read(locked[0], &c, 1), 1);
	EXPECT_EQ(try_in_child(P(lw->direct, "f"), K_POSIX, F_WRLCK),
		  TRY_CONFLICT);
	ASSERT_EQ(write(go[1], "U", 1), 1);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_EQ(try_in_child(P(lw->direct, "f"), K_POSIX, F_WRLCK),
		  TRY_GRANTED);
}

/* An OFD lock lives as long as its open file description. */
TEST_F(lworld, ofd_released_on_last_close)
{
	struct lworld *lw = &self->lw;
	int fd, fd2;

	fd = open(P(lw->w.mnt, "f"), O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(lock_fd(fd, K_OFD, F_WRLCK, false), 0);
	fd2 = dup(fd);
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(close(fd), 0);
	EXPECT_EQ(try_in_child(P(lw->direct, "f"), K_OFD, F_WRLCK),
		  TRY_CONFLICT);
	ASSERT_EQ(close(fd2), 0);
	EXPECT_EQ(try_in_child(P(lw->direct, "f"), K_OFD, F_WRLCK),
		  TRY_GRANTED);
}

/*
 * As on any file, a mapping keeps the open file description, and its OFD
 * lock, alive after close(): until munmap().
 */
TEST_F(lworld, ofd_lock_lives_with_mapping)
{
	struct lworld *lw = &self->lw;
	void *map;
	int fd;

	fd = open(P(lw->w.mnt, "f"), O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(lock_fd(fd, K_OFD, F_WRLCK, false), 0);
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(map, MAP_FAILED);
	ASSERT_EQ(close(fd), 0);
	EXPECT_EQ(try_in_child(P(lw->direct, "f"), K_OFD, F_WRLCK),
		  TRY_CONFLICT);
	ASSERT_EQ(munmap(map, 4096), 0);
	EXPECT_EQ(try_in_child(P(lw->direct, "f"), K_OFD, F_WRLCK),
		  TRY_GRANTED);
}

TEST_F(lworld, flock_released_on_close)
{
	struct lworld *lw = &self->lw;
	int fd;

	fd = open(P(lw->w.mnt, "f"), O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(lock_fd(fd, K_FLOCK, F_WRLCK, false), 0);
	EXPECT_EQ(try_in_child(P(lw->direct, "f"), K_FLOCK, F_WRLCK),
		  TRY_CONFLICT);
	/* Converting to shared is seen underneath too. */
	ASSERT_EQ(lock_fd(fd, K_FLOCK, F_RDLCK, false), 0);
	EXPECT_EQ(try_in_child(P(lw->direct, "f"), K_FLOCK, F_RDLCK),
		  TRY_GRANTED);
	EXPECT_EQ(try_in_child(P(lw->direct, "f"), K_FLOCK, F_WRLCK),
		  TRY_CONFLICT);
	ASSERT_EQ(close(fd), 0);
	EXPECT_EQ(try_in_child(P(lw->direct, "f"), K_FLOCK, F_WRLCK),
		  TRY_GRANTED);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Write-lock the file directly with a lock of kind @k: the holder's fd. */
static int hold_directly(const struct lworld *lw, enum kind k)
{
	int fd = open(P(lw->direct, "f"), O_RDWR);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(lock_fd(fd, k, F_WRLCK, false), 0);
	return fd;
}

/*
 * Hold a write lock directly; a child asks for one through the mount and
 * waits.  It must still be waiting after a while, and get the lock soon
 * after we release it.
 */
static void blocking(const struct lworld *lw, enum kind k)
{
	struct timespec t = { 0, 300 * 1000 * 1000 };
	int fd, status, i;
	pid_t pid, got = 0;

	fd = hold_directly(lw, k);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int mfd = open(P(lw->w.mnt, "f"), O_RDWR);

		alarm(3);
		if (mfd < 0)
			_exit(3);
		_exit(lock_fd(mfd, k, F_WRLCK, true) ? 2 : 0);
	}
	nanosleep(&t, NULL);
	got = waitpid(pid, &status, WNOHANG);
	EXPECT_EQ(got, 0);
	if (got == pid)
		TH_LOG("%s: the waiter did not wait (exit %d)", kind_name[k],
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	ASSERT_EQ(lock_fd(fd, k, F_UNLCK, false), 0);
	for (i = 0; got == 0 && i < 20; i++) {
		nanosleep(&t, NULL);
		got = waitpid(pid, &status, WNOHANG);
	}
	ASSERT_EQ(got, pid);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0);
	close(fd);
}

TEST_F(lworld, posix_setlkw_waits_for_holder)
{
	blocking(&self->lw, K_POSIX);
}

TEST_F(lworld, ofd_setlkw_waits_for_holder)
{
	blocking(&self->lw, K_OFD);
}

TEST_F(lworld, flock_waits_for_holder)
{
	blocking(&self->lw, K_FLOCK);
}

/* A waiter through the mount is woken by a signal: EINTR, no lock. */
static void interrupted(const struct lworld *lw, enum kind k)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	int fd, status;
	pid_t pid;

	fd = hold_directly(lw, k);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int mfd = open(P(lw->w.mnt, "f"), O_RDWR), err;

		/* No SA_RESTART: the wait must end with EINTR. */
		sigaction(SIGALRM, &sa, NULL);
		alarm(1);
		if (mfd < 0)
			_exit(3);
		err = lock_fd(mfd, k, F_WRLCK, true);
		printf("# %s: blocking lock through the mount: %s\n",
		       kind_name[k], err ? strerror(-err) : "granted");
		_exit(err == -EINTR ? 0 : 1);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0);
	/* We still hold it: the interrupted waiter left nothing behind. */
	EXPECT_EQ(try_in_child(P(lw->w.mnt, "f"), k, F_RDLCK), TRY_CONFLICT);
	ASSERT_EQ(lock_fd(fd, k, F_UNLCK, false), 0);
	EXPECT_EQ(try_in_child(P(lw->w.mnt, "f"), k, F_WRLCK), TRY_GRANTED);
	close(fd);
}

TEST_F(lworld, posix_setlkw_interruptible)
{
	interrupted(&self->lw, K_POSIX);
}

TEST_F(lworld, flock_wait_interruptible)
{
	interrupted(&self->lw, K_FLOCK);
}

struct racer {
	int fd;
	int err;
};

static void *setlkw_thread(void *arg)
{
	struct racer *r = arg;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	r->err = fcntl(r->fd, F_SETLKW, &fl) ? errno : 0;
	return NULL;
}

/*
 * One thread waits in F_SETLKW through the mount, another closes the fd
 * meanwhile; the lock is granted after the close.  The VFS notices and
 * drops it (EBADF) with locks_remove_posix() on our file, whose inode
 * holds nothing: the lock must not stay behind on the lower inode, owned
 * by a process that has exited and pointing at a file that is gone.
 */
TEST_F(lworld, posix_close_race_leaves_no_lock)
{
	struct timespec t = { 0, 300 * 1000 * 1000 };
	struct flock fl;
	struct lworld *lw = &self->lw;
	int fd, sync[2], status;
	pid_t pid;
	char c;

	ASSERT_EQ(pipe(sync), 0);
	fd = hold_directly(lw, K_POSIX);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct racer r = { .fd = open(P(lw->w.mnt, "f"), O_RDWR) };
		pthread_t th;

		/* Its exit would close it, dropping the lock for us. */
		close(fd);
		if (r.fd < 0 || pthread_create(&th, NULL, setlkw_thread, &r))
			_exit(2);
		nanosleep(&t, NULL);
		close(r.fd);
		if (write(sync[1], "C", 1) != 1)
			_exit(2);
		pthread_join(th, NULL);
		printf("# F_SETLKW across close(): %s\n",
		       r.err ? strerror(r.err) : "granted");
		_exit(0);
	}
	ASSERT_EQ(read(sync[0], &c, 1), 1);
	nanosleep(&t, NULL);
	ASSERT_EQ(lock_fd(fd, K_POSIX, F_UNLCK, false), 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_EQ(WEXITSTATUS(status), 0);
	/*
	 * Tested from here: a new child may get the dead one's files_struct
	 * back from the slab, and a lock of the "same owner" never conflicts.
	 */
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	ASSERT_EQ(fcntl(fd, F_GETLK, &fl), 0);
	if (fl.l_type != F_UNLCK)
		TH_LOG("left behind: type %d pid %d", fl.l_type, fl.l_pid);
	EXPECT_EQ(fl.l_type, F_UNLCK);
	close(fd);
}

/*
 * Leases would sit on the shiftfs inode, where opens of the lower file
 * (the host, other mounts) never break them: refused.
 */
TEST_F(lworld, lease_refused)
{
	struct lworld *lw = &self->lw;
	int fd;

	fd = open(P(lw->w.mnt, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	EXPECT_ERRNO(fcntl(fd, F_SETLEASE, F_RDLCK), EINVAL);
	EXPECT_EQ(fcntl(fd, F_GETLEASE), F_UNLCK);
	close(fd);
}

TEST_HARNESS_MAIN
