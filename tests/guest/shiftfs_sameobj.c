// SPDX-License-Identifier: GPL-2.0
/*
 * One object on both sides of the mount, as an idmapped mount gives:
 * a program running through shiftfs denies writes on the file underneath
 * (ETXTBSY for the host and for every other mount of the tree), and a
 * FIFO is one pipe for the host and every shiftfs mount of it.  Unix
 * sockets are where a stacking filesystem cannot follow (connect() looks
 * the socket up by the inode of the path it was given): stated as a test.
 */
#include "harness.h"
#include "shiftfs_util.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Exec'd copies of this program wait here, after telling their parent. */
__attribute__((constructor)) static void sleeper(void)
{
	if (!getenv("SHIFTFS_SLEEPER"))
		return;
	if (write(1, "R", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

/*
 * Run @path as a sleeper: its pid once it runs, or -errno of execve().
 * stdout is our pipe, so the exec failing or succeeding is seen either way.
 */
static pid_t start_sleeper(const char *path)
{
	int pfd[2], err = 0;
	char c = 0;
	pid_t pid;

	if (pipe(pfd))
		return -EIO;
	pid = fork();
	if (pid < 0)
		return -EIO;
	if (pid == 0) {
		char *argv[] = { (char *)path, NULL };
		char *envp[] = { "SHIFTFS_SLEEPER=1", NULL };

		close(pfd[0]);
		dup2(pfd[1], 1);
		execve(path, argv, envp);
		err = errno;
		if (write(1, &err, sizeof(err)) != sizeof(err))
			_exit(2);
		_exit(1);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1 || c != 'R') {
		/* The errno follows the first byte we read. */
		memcpy(&err, &c, 1);
		if (read(pfd[0], (char *)&err + 1, sizeof(err) - 1) !=
		    sizeof(err) - 1)
			err = EIO;
		close(pfd[0]);
		waitpid(pid, NULL, 0);
		return -err;
	}
	close(pfd[0]);
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Run @path, expected to fail: -errno, the program stopped if it ran. */
static int exec_fails(const char *path)
{
	pid_t pid = start_sleeper(path);

	if (pid > 0) {
		printf("# %s ran\n", path);
		stop(pid);
	}
	return pid;
}

/* 0 if @path opens for writing, else -errno. */
static int open_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* The tree mounted twice, as two containers on one image. */
static void two_mounts(const struct world *w, char *mnt2, size_t len)
{
	const char *opts[] = { "uidmap=" MAP_DEFAULT, "gidmap=" MAP_DEFAULT,
			       NULL };

	snprintf(mnt2, len, "%s/mnt2", w->base);
	ASSERT_EQ(mkdir(mnt2, 0755), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(shiftfs_fsmount(w->lower, mnt2, opts, NULL, 0), 0);
}

TEST_F(world, exec_through_shiftfs_denies_write_underneath)
{
	struct world *w = &self->w;
	char mnt2[128];
	pid_t pid;

	ASSERT_EQ(copy_self(P(w->lower, "x")), 0);
	two_mounts(w, mnt2, sizeof(mnt2));

	pid = start_sleeper(P(w->mnt, "x"));
	ASSERT_GT(pid, 0);
	/* Its own mount, the host, another container: nobody writes it. */
	EXPECT_EQ(open_write(P(w->mnt, "x")), -ETXTBSY);
	EXPECT_EQ(open_write(P(w->lower, "x")), -ETXTBSY);
	EXPECT_EQ(open_write(P(mnt2, "x")), -ETXTBSY);
	EXPECT_ERRNO(truncate(P(w->lower, "x"), 0), ETXTBSY);
	EXPECT_ERRNO(truncate(P(mnt2, "x"), 0), ETXTBSY);
	stop(pid);

	/* Released on exit. */
	EXPECT_EQ(open_write(P(w->lower, "x")), 0);
	EXPECT_EQ(open_write(P(mnt2, "x")), 0);
	EXPECT_EQ(open_write(P(w->mnt, "x")), 0);
}

TEST_F(world, exec_underneath_denies_write_through_shiftfs)
{
	struct world *w = &self->w;
	char mnt2[128];
	pid_t pid;

	ASSERT_EQ(copy_self(P(w->lower, "x")), 0);
	two_mounts(w, mnt2, sizeof(mnt2));

	pid = start_sleeper(P(w->lower, "x"));
	ASSERT_GT(pid, 0);
	EXPECT_EQ(open_write(P(w->mnt, "x")), -ETXTBSY);
	EXPECT_ERRNO(truncate(P(w->mnt, "x"), 0), ETXTBSY);
	stop(pid);
	/* Through one mount, written through the other. */
	pid = start_sleeper(P(mnt2, "x"));
	ASSERT_GT(pid, 0);
	EXPECT_EQ(open_write(P(w->mnt, "x")), -ETXTBSY);
	stop(pid);
	EXPECT_EQ(open_write(P(w->mnt, "x")), 0);
}

TEST_F(world, failed_exec_leaves_no_denial)
{
	struct world *w = &self->w;
	char mnt2[128];
	int fd;

	ASSERT_EQ(make_file(P(w->lower, "junk"), 0755, 0, 0), 0);
	ASSERT_EQ(write_file(P(w->lower, "junk"), "\x01\x02 not a program"),
		  0);
	ASSERT_EQ(copy_self(P(w->lower, "x")), 0);
	two_mounts(w, mnt2, sizeof(mnt2));

	/* ENOEXEC after the open: nothing stays denied. */
	EXPECT_EQ(exec_fails(P(w->mnt, "junk")), -ENOEXEC);
	EXPECT_EQ(open_write(P(w->lower, "junk")), 0);
	EXPECT_EQ(open_write(P(mnt2, "junk")), 0);

	/* A file open for writing underneath does not run, nor stays denied. */
	fd = open(P(w->lower, "x"), O_WRONLY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(exec_fails(P(w->mnt, "x")), -ETXTBSY);
	close(fd);
	fd = open(P(mnt2, "x"), O_WRONLY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(exec_fails(P(w->mnt, "x")), -ETXTBSY);
	close(fd);
	EXPECT_EQ(open_write(P(w->lower, "x")), 0);
	EXPECT_EQ(open_write(P(w->mnt, "x")), 0);

	/* Files that are not running: writers on every side at once. */
	{
		int a = open(P(w->lower, "junk"), O_WRONLY | O_CLOEXEC);
		int b = open(P(w->mnt, "junk"), O_RDWR | O_CLOEXEC);
		int c = open(P(mnt2, "junk"), O_WRONLY | O_CLOEXEC);

		EXPECT_GE(a, 0);
		EXPECT_GE(b, 0);
		EXPECT_GE(c, 0);
		close(a);
		close(b);
		close(c);
	}
}

/* ---- FIFOs ------------------------------------------------------------ */

/* open(@path, @flags | O_NONBLOCK) retried for up to 5 s while ENXIO. */
static int open_fifo_writer(const char *path)
{
	int fd, i;

	for (i = 0; i < 500; i++) {
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 || errno != ENXIO)
			return fd;
		usleep(10000);
	}
	return -1;
}

/* A blocking reader of @path in a child: exit 0 if it read "hello". */
static pid_t fifo_reader(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		char buf[16] = "";
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			_exit(1);
		if (read(fd, buf, sizeof(buf) - 1) != 5 || strcmp(buf, "hello"))
			_exit(2);
		_exit(0);
	}
	return pid;
}

static int wait_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* A reader on @rd meets a writer on @wr: one pipe. */
static void fifo_meets(const char *rd, const char *wr)
{
	pid_t pid = fifo_reader(rd);
	int fd;

	ASSERT_GT(pid, 0);
	fd = open_fifo_writer(wr);
	if (fd < 0) {
		printf("# writer on %s, reader on %s: errno %d %s\n", wr, rd,
		       errno, strerror(errno));
		kill(pid, SIGKILL);
	} else {
		EXPECT_EQ(write(fd, "hello", 5), 5);
		close(fd);
	}
	EXPECT_GE(fd, 0);
	EXPECT_EQ(wait_status(pid), 0);
}

TEST_F(world, fifo_is_one_pipe_on_every_side)
{
	struct world *w = &self->w;
	char mnt2[128];

	ASSERT_EQ(mkfifo(P(w->lower, "f"), 0666), 0);
	two_mounts(w, mnt2, sizeof(mnt2));

	fifo_meets(P(w->mnt, "f"), P(w->lower, "f"));	/* host writer */
	fifo_meets(P(w->lower, "f"), P(w->mnt, "f"));	/* host reader */
	fifo_meets(P(w->mnt, "f"), P(mnt2, "f"));	/* two containers */
	fifo_meets(P(w->mnt, "f"), P(w->mnt, "f"));	/* one container */
}

TEST_F(world, fifo_poll_eof_and_nonblock)
{
	struct world *w = &self->w;
	struct pollfd p;
	char buf[8];
	int rd, wr;

	ASSERT_EQ(mkfifo(P(w->lower, "f"), 0666), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);

	rd = open(P(w->mnt, "f"), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_GE(rd, 0);
	/* No writer yet: end of file, as on any FIFO. */
	EXPECT_EQ(read(rd, buf, sizeof(buf)), 0);
	wr = open(P(w->lower, "f"), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_GE(wr, 0);
	p.fd = rd;
	p.events = POLLIN;
	EXPECT_EQ(poll(&p, 1, 0), 0);
	/* A writer there, nothing written: now it would block. */
	EXPECT_ERRNO(read(rd, buf, sizeof(buf)), EAGAIN);
	ASSERT_EQ(write(wr, "abc", 3), 3);
	EXPECT_EQ(poll(&p, 1, 1000), 1);
	EXPECT_TRUE(p.revents & POLLIN);
	EXPECT_EQ(read(rd, buf, sizeof(buf)), 3);
	close(wr);
	/* The host's writer went away: hang-up, then EOF. */
	EXPECT_EQ(poll(&p, 1, 1000), 1);
	EXPECT_TRUE(p.revents & POLLHUP);
	EXPECT_EQ(read(rd, buf, sizeof(buf)), 0);
	/* FIONREAD goes to the pipe. */
	wr = open(P(w->lower, "f"), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_GE(wr, 0);
	ASSERT_EQ(write(wr, "xy", 2), 2);
	{
		int n = -1;

		EXPECT_EQ(ioctl(rd, FIONREAD, &n), 0);
		EXPECT_EQ(n, 2);
	}
	close(wr);
	close(rd);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A reader waiting for a writer that never comes is interruptible. */
TEST_F(world, fifo_open_waits_interruptibly)
{
	struct world *w = &self->w;
	struct sigaction sa = { .sa_handler = on_alarm };
	int fd;

	ASSERT_EQ(mkfifo(P(w->lower, "f"), 0666), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	alarm(1);
	fd = open(P(w->mnt, "f"), O_RDONLY | O_CLOEXEC);
	EXPECT_EQ(fd, -1);
	EXPECT_EQ(errno, EINTR);
	alarm(0);
	/* The interrupted reader is gone: a writer finds nobody. */
	EXPECT_ERRNO(open(P(w->mnt, "f"), O_WRONLY | O_NONBLOCK | O_CLOEXEC),
		     ENXIO);
}

/* ---- unix sockets: stated ---------------------------------------------- */

static int sock_at(const char *path, bool bind_it)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (bind_it ? bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
		      listen(fd, 4) :
		      connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/*
 * connect() finds the listening socket by the inode the path resolves to
 * (d_backing_inode(), unix_find_bsd()): ours and the lower one are two,
 * and no kernel up to 7.3 lets a stacked dentry hand out the lower inode
 * there.  So a socket is one object only on the side that bound it: the
 * host's daemon is refused through shiftfs, a container's socket bound
 * through shiftfs is refused underneath and through another mount, and
 * works for every client of the mount that bound it.
 */
TEST_F(world, unix_socket_is_per_side)
{
	struct world *w = &self->w;
	char mnt2[128];
	int srv, cli;

	ASSERT_EQ(mkdir(P(w->lower, "run"), 0777), 0);
	two_mounts(w, mnt2, sizeof(mnt2));

	srv = sock_at(P(w->lower, "run/host.sock"), true);
	ASSERT_GE(srv, 0);
	EXPECT_EQ(sock_at(P(w->mnt, "run/host.sock"), false), -ECONNREFUSED);
	cli = sock_at(P(w->lower, "run/host.sock"), false);
	EXPECT_GE(cli, 0);
	close(cli);
	close(srv);

	/* A container's daemon: as its root, image root underneath. */
	become_fsids(ID_SHIFT, ID_SHIFT);
	srv = sock_at(P(w->mnt, "run/ct.sock"), true);
	become_fsids(0, 0);
	ASSERT_GE(srv, 0);
	/* Bound through us: a socket inode underneath, owned as mapped. */
	EXPECT_EQ(owner_is(P(w->lower, "run/ct.sock"), 0, 0), 0);
	cli = sock_at(P(w->mnt, "run/ct.sock"), false);
	EXPECT_GE(cli, 0);
	close(cli);
	EXPECT_EQ(sock_at(P(w->lower, "run/ct.sock"), false), -ECONNREFUSED);
	EXPECT_EQ(sock_at(P(mnt2, "run/ct.sock"), false), -ECONNREFUSED);
	close(srv);
}

TEST_HARNESS_MAIN
