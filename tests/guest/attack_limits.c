// SPDX-License-Identifier: GPL-2.0
/*
 * Attacks on the resource limits of a mount's callers, from the issue 33
 * attacker's pass.  A FIFO's pipe is made by the open that finds none and
 * charged to the user of the task opening it: past
 * fs.pipe-user-pages-soft a new pipe gets the minimum of pages, past
 * fs.pipe-user-pages-hard none at all, unless the task has
 * CAP_SYS_RESOURCE or CAP_SYS_ADMIN.  Opened through shiftfs, a FIFO must
 * count against the caller exactly as it would underneath and as the
 * caller's own pipe() calls do, never against the mounter (host root,
 * whom no limit binds): else a container user pins 16 pages a FIFO for
 * as many FIFOs as it can make.  What the caller may open is still
 * decided as before: the caller at our inode, the mounter at the lower
 * one, never the caller's unmapped ids underneath.
 */
#include "harness.h"
#include "shiftfs_util.h"

#define NR_FIFOS	24
#define PAGES_SOFT	"16"
#define PAGES_HARD	"20"
#define SYSCTL_SOFT	"/proc/sys/fs/pipe-user-pages-soft"
#define SYSCTL_HARD	"/proc/sys/fs/pipe-user-pages-hard"
/* A container's uid 1000 on the host, and through the default map. */
#define CALLER		(ID_SHIFT + 1000)

/*
 * The limits are global: set last in the setup, put back by the
 * teardown, so bodies only EXPECT (an ASSERT would skip the teardown).
 */
FIXTURE(lworld) {
	struct world w;
	char soft[32];
	char hard[32];
};

FIXTURE_SETUP(lworld)
{
	struct world *w = &self->w;
	char name[16];
	int i;

	ASSERT_EQ(world_setup(w), 0);
	for (i = 0; i < NR_FIFOS; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		ASSERT_EQ(mkfifo(P(w->lower, name), 0666), 0);
		ASSERT_EQ(chown(P(w->lower, name), 1000, 1000), 0);
		ASSERT_EQ(chmod(P(w->lower, name), 0666), 0);	/* umask */
	}
	/* 0600 FIFOs of container uid 1000 and of container root */
	ASSERT_EQ(mkfifo(P(w->lower, "mine"), 0600), 0);
	ASSERT_EQ(chown(P(w->lower, "mine"), 1000, 1000), 0);
	ASSERT_EQ(mkfifo(P(w->lower, "root"), 0600), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);

	ASSERT_GT(read_file(SYSCTL_SOFT, self->soft, sizeof(self->soft)), 0);
	ASSERT_GT(read_file(SYSCTL_HARD, self->hard, sizeof(self->hard)), 0);
	ASSERT_EQ(write_file(SYSCTL_SOFT, PAGES_SOFT), 0);
	if (write_file(SYSCTL_HARD, PAGES_HARD)) {
		write_file(SYSCTL_SOFT, self->soft);
		ASSERT_TRUE(false);
	}
}

FIXTURE_TEARDOWN(lworld)
{
	EXPECT_EQ(write_file(SYSCTL_HARD, self->hard), 0);
	EXPECT_EQ(write_file(SYSCTL_SOFT, self->soft), 0);
}

/* What a set of opens got: how many, the first error, each one's room. */
struct profile {
	int opened;
	int err;
	long room[NR_FIFOS];	/* bytes; 0 if that open failed */
};

/* Bytes a non-blocking writer puts into @fd's pipe before EAGAIN. */
static long pipe_room(int fd)
{
	static char page[4096];
	long n = 0;
	ssize_t w;

	for (;;) {
		w = write(fd, page, sizeof(page));
		if (w < 0)
			return errno == EAGAIN ? n : -errno;
		n += w;
		if (n > (1L << 24))
			return -EFBIG;
	}
}

static void profile_add(struct profile *p, int i, int fd)
{
	if (fd < 0) {
		if (!p->err)
			p->err = errno;
		return;
	}
	p->opened++;
	p->room[i] = pipe_room(fd);
}

/* The caller's own pipes: @fds gets 2 * NR_FIFOS entries, -1 if none. */
static void pipe_profile(int *fds, struct profile *p)
{
	int i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < NR_FIFOS; i++) {
		if (pipe2(&fds[2 * i], O_NONBLOCK | O_CLOEXEC)) {
			fds[2 * i] = fds[2 * i + 1] = -1;
			profile_add(p, i, -1);
			continue;
		}
		profile_add(p, i, fds[2 * i + 1]);
	}
}

/* @dir/f0 .. f23, read-write (never waits) and non-blocking. */
static void fifo_profile(const char *dir, int *fds, struct profile *p)
{
	char name[16];
	int i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < NR_FIFOS; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		fds[i] = open(P(dir, name), O_RDWR | O_NONBLOCK | O_CLOEXEC);
		profile_add(p, i, fds[i]);
	}
}

/* Closing a pipe's last file gives its pages back before close returns. */
static void close_all(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static void profile_show(const char *what, const struct profile *p)
{
	char line[512];
	int i, off;

	off = snprintf(line, sizeof(line), "# %s: %d of %d, KiB:", what,
		       p->opened, NR_FIFOS);
	for (i = 0; i < NR_FIFOS && off < (int)sizeof(line) - 16; i++)
		if (p->room[i])
			off += snprintf(line + off, sizeof(line) - off,
					" %ld", p->room[i] / 1024);
	printf("%s%s%s\n", line, p->err ? "; then " : "",
	       p->err ? strerror(p->err) : "");
}

/* The same opens succeeded with the same room each. */
static bool same_rooms(const struct profile *a, const struct profile *b)
{
	return a->opened == b->opened &&
	       !memcmp(a->room, b->room, sizeof(a->room));
}

/*
 * As the caller: its own pipes, then the FIFOs underneath, then the same
 * FIFOs through the mount, each set closed before the next.  The opens
 * through the mount must go exactly as underneath (same error too) and as
 * the caller's pipe() calls (which fail ENFILE where a FIFO fails ENOMEM).
 */
static int limits_as_caller(void *arg)
{
	const struct world *w = arg;
	struct profile pp, lp, sp;
	int fds[2 * NR_FIFOS];

	pipe_profile(fds, &pp);
	close_all(fds, 2 * NR_FIFOS);
	fifo_profile(w->lower, fds, &lp);
	close_all(fds, NR_FIFOS);
	fifo_profile(w->mnt, fds, &sp);
	close_all(fds, NR_FIFOS);

	profile_show("pipe()", &pp);
	profile_show("FIFOs underneath", &lp);
	profile_show("FIFOs through shiftfs", &sp);
	if (pp.opened == NR_FIFOS || pp.room[0] <= 0)
		return 10;	/* no limit bit: nothing proven */
	if (!same_rooms(&lp, &sp) || lp.err != sp.err)
		return 11;
	if (!same_rooms(&pp, &sp))
		return 12;
	return 0;
}

/* Run @fn as host uid/gid @id, without capabilities: its exit status. */
static int as_host_user(uid_t id, int (*fn)(void *), void *arg)
{
	return run_as_host_user(id, id, fn, arg);
}

/* A container's user 1000, in the initial namespace. */
TEST_F(lworld, fifos_count_as_the_callers_own_pipes)
{
	EXPECT_EQ(as_host_user(CALLER, limits_as_caller, &self->w), 0);
}

/* Container root: every capability, none of them over the host's limits. */
TEST_F(lworld, container_root_fifos_count_as_its_own_pipes)
{
	EXPECT_EQ(in_container(limits_as_caller, &self->w), 0);
}

/*
 * Charged to whom, seen from the host: container root holds every FIFO
 * it can open; another process of its host uid (100000), no container
 * involved, then gets no pipe: the user is at its hard limit.  Underneath
 * first, then through the mount.
 */
struct holder {
	const char *dir;
	int ready[2];
	int done[2];
};

static int hold_fifos(void *arg)
{
	struct holder *h = arg;
	struct profile p;
	int fds[NR_FIFOS];
	char what[128];
	char c = 'r';

	fifo_profile(h->dir, fds, &p);
	snprintf(what, sizeof(what), "container root holds %s", h->dir);
	profile_show(what, &p);
	if (write(h->ready[1], &c, 1) != 1 || read(h->done[0], &c, 1) != 1)
		return 10;
	close_all(fds, NR_FIFOS);
	return 0;
}

/* 0 if pipe() fails with ENFILE, 1 if it gives a pipe, 2 otherwise. */
static int host_pipe_refused(void *arg)
{
	int fds[2];
	long size;

	(void)arg;
	if (!pipe(fds)) {
		size = fcntl(fds[1], F_GETPIPE_SZ);
		printf("# host uid %u: pipe() of %ld KiB\n", ID_SHIFT,
		       size / 1024);
		return 1;
	}
	printf("# host uid %u: pipe(): %s\n", ID_SHIFT, strerror(errno));
	return errno == ENFILE ? 0 : 2;
}

/* The host side's pipe() while container root holds @dir's FIFOs. */
static int host_pipe_while_held(const char *dir)
{
	struct holder h = { .dir = dir };
	int status, ret;
	char c = 'd';
	pid_t pid;

	if (pipe(h.ready) || pipe(h.done))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(in_container(hold_fifos, &h));
	close(h.ready[1]);
	close(h.done[0]);
	if (read(h.ready[0], &c, 1) != 1)
		ret = -1;
	else
		ret = as_host_user(ID_SHIFT, host_pipe_refused, NULL);
	if (write(h.done[1], &c, 1) != 1)
		kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status))
		ret = -1;
	close(h.ready[0]);
	close(h.done[1]);
	return ret;
}

TEST_F(lworld, fifo_pipes_charged_to_the_caller)
{
	EXPECT_EQ(host_pipe_while_held(self->w.lower), 0);
	EXPECT_EQ(host_pipe_while_held(self->w.mnt), 0);
}

/*
 * Access as before: the caller at our inode, the mounter at the lower
 * one.  Another container user gets no 0600 FIFO of uid 1000; container
 * root opens its own 0600 FIFO (lower root's: the caller's host uid
 * 100000 would get nothing underneath, so no lower check may use it);
 * a host user the map lacks opens a 0666 one, and the data goes through.
 */
static int open_errno(const char *path)
{
	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int access_in_container(void *arg)
{
	const struct world *w = arg;
	int e;

	e = open_errno(P(w->mnt, "root"));
	if (e) {
		printf("# container root, its 0600 FIFO: %s\n", strerror(e));
		return 10;
	}
	if (setgroups(0, NULL) || setresgid(1001, 1001, 1001) ||
	    setresuid(1001, 1001, 1001))
		return 11;
	e = open_errno(P(w->mnt, "mine"));
	if (e != EACCES) {
		printf("# container user 1001, 1000's 0600 FIFO: %s\n",
		       e ? strerror(e) : "opened");
		return 12;
	}
	return 0;
}

static int unmapped_host_user(void *arg)
{
	const struct world *w = arg;
	char buf[4] = "";
	int fd;

	fd = open(P(w->mnt, "f0"), O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		printf("# host uid 5, a 0666 FIFO: %s\n", strerror(errno));
		return 10;
	}
	if (write(fd, "x", 1) != 1 || read(fd, buf, 1) != 1 || buf[0] != 'x')
		return 11;
	close(fd);
	return 0;
}

TEST_F(lworld, fifo_access_decided_as_before)
{
	EXPECT_EQ(in_container(access_in_container, &self->w), 0);
	EXPECT_EQ(as_host_user(5, unmapped_host_user, &self->w), 0);
}

TEST_HARNESS_MAIN
