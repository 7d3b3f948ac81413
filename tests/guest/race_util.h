/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the race pass (race_mark.c, race_umount.c): how long each
 * race runs, counters shared by the racing processes, the module's
 * reference count, and a process that keeps trying to remove the module
 * while the race runs.
 *
 * Duration: each race runs race_secs() seconds, RACE_SECS_DEFAULT unless
 * the kernel command line says shiftfs.race_secs=N (tests/run-guest.sh
 * -a shiftfs.race_secs=N; the guest's per-program timeout is
 * shiftfs.timeout=SECS, the whole guest's run-guest.sh -T SECS).  The
 * harness' per-test timeout follows it (race_main()).
 */
#ifndef SHIFTFS_TESTS_RACE_UTIL_H
#define SHIFTFS_TESTS_RACE_UTIL_H

#include "harness.h"
#include "mark_util.h"

#include <sys/klog.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define RACE_SECS_DEFAULT 3

static inline int race_secs(void)
{
	static int secs;
	char buf[4096], *p;
	int fd, n;

	if (secs)
		return secs;
	secs = RACE_SECS_DEFAULT;
	fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return secs;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return secs;
	buf[n] = '\0';
	p = strstr(buf, "shiftfs.race_secs=");
	if (p && atoi(p + 18) > 0)
		secs = atoi(p + 18);
	return secs;
}

/*
 * shiftfs.race_plant=NAME[,NAME...] on the kernel command line plants a
 * bug in the races, each of which one of their checks must catch (what
 * each does: where race_plant() is called).  For proving the checks, not
 * for make check.
 */
static inline bool race_plant(const char *name)
{
	static char plants[256];
	static int read_once;
	char buf[4096], *p, *e;
	int fd, n;

	if (!read_once) {
		read_once = 1;
		fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = '\0';
		p = strstr(buf, "shiftfs.race_plant=");
		if (p) {
			p += 19;
			e = p + strcspn(p, " \n");
			snprintf(plants, sizeof(plants), ",%.*s,",
				 (int)(e - p), p);
		}
	}
	snprintf(buf, sizeof(buf), ",%s,", name);
	if (!strstr(plants, buf))
		return false;
	printf("# PLANTED: %s\n", name);
	return true;
}

static inline long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Whether a race goes on: for race_secs() seconds from @start, then, as
 * long as @seen is false (not every outcome the race's checks require
 * has happened yet), for up to RACE_GRACE_SECS more.  A loaded host (CI:
 * two guests and a kernel build on two cores) can give a 3-second race
 * too few rounds to see, say, one ETXTBSY; a race that has not seen them
 * by the end of the grace fails its checks, as it would without it.
 * On the debug kernels a round of race_mark may take seconds, and one
 * shiftctl mount (an exec of a program linked with libmount) more.
 */
#define RACE_GRACE_SECS 60

/*
 * On a kernel said to be slower (harness_timeout_scale(): the debug
 * kernels, five), the grace and race_mark's windows within a round are
 * that much longer.
 */
static inline int race_grace_secs(void)
{
	return RACE_GRACE_SECS * harness_timeout_scale();
}

static inline bool race_goes_on(long long start, bool seen)
{
	long long t = now_ns() - start;

	if (t < race_secs() * 1000000000LL)
		return true;
	return !seen && t < (race_secs() + race_grace_secs()) * 1000000000LL;
}

/* How long a race ran, for its log. */
static inline double race_ran(long long start)
{
	return (now_ns() - start) / 1e9;
}

/* Counters in memory shared by every process of a race. */
#define CNT_ADD(p, n)	__atomic_add_fetch(&(p), (n), __ATOMIC_SEQ_CST)
#define CNT_INC(p)	CNT_ADD(p, 1)
#define CNT_GET(p)	__atomic_load_n(&(p), __ATOMIC_SEQ_CST)
#define CNT_SET(p, v)	__atomic_store_n(&(p), (v), __ATOMIC_SEQ_CST)

static inline void *shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Cheap per-process pseudo-random numbers. */
static inline unsigned int rnd(unsigned int *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

/* A racing child: dies with us, and does not outlive the test. */
static inline pid_t race_fork(void)
{
	pid_t pid = fork();

	if (pid == 0)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	return pid;
}

/*
 * Fork a child that runs @fn as root of a new user namespace with map
 * @map (for uids and gids), in a new mount namespace if @new_mntns: its
 * pid, not waited for.  The child exits with @fn's status.
 */
struct userns_job {
	const char *map;
	bool new_mntns;
	int (*fn)(void *);
	void *arg;
};

static inline pid_t spawn_in_userns(const char *map, bool new_mntns,
				    int (*fn)(void *), void *arg)
{
	pid_t pid = race_fork();

	if (pid == 0) {
		int rc = run_in_userns(map, map, new_mntns, fn, arg);

		fflush(stdout);
		_exit(rc < 0 ? 125 : rc);
	}
	return pid;
}

/* Exit status of @pid (waited for), or -1; signals as 128 + signo. */
static inline int wait_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* /sys/module/shiftfs/refcnt: superblocks, fs_contexts; -1 if unloaded. */
static inline long module_refcnt(void)
{
	char buf[32];
	int fd = open("/sys/module/shiftfs/refcnt", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return atol(buf);
}

/*
 * Wait up to @secs for the module's reference count to come down to
 * @want (superblocks go with the last mntput, some after an RCU grace
 * period; what an earlier test left may go meanwhile): the count it
 * settled at, more than @want if something of ours is left.
 */
static inline long refcnt_settles(long want, int secs)
{
	long long end = now_ns() + secs * 1000000000LL;
	long n;

	while ((n = module_refcnt()) > want && now_ns() < end)
		usleep(20000);
	return n;
}

static inline int delete_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK);
}

/*
 * The module removal attempts: a process that tries to remove shiftfs
 * every few milliseconds until told to stop.  While the race's test
 * holds a reference (race_pin()), every attempt must fail with EAGAIN
 * (references held) or EBUSY; one that succeeds unloaded a module in
 * use and is counted, and the module is loaded again so that the race
 * can go on.
 */
struct rmmod_stats {
	long tries, busy, unloaded, other;
	int other_errno;
	int stop;
};

static inline pid_t rmmod_hammer(struct rmmod_stats *st)
{
	pid_t pid = race_fork();

	if (pid)
		return pid;
	while (!CNT_GET(st->stop)) {
		CNT_INC(st->tries);
		if (delete_module("shiftfs") == 0) {
			CNT_INC(st->unloaded);
			if (system("modprobe shiftfs"))
				{ /* counted already: the test fails */ }
		} else if (errno == EAGAIN || errno == EBUSY) {
			CNT_INC(st->busy);
		} else {
			CNT_INC(st->other);
			st->other_errno = errno;
		}
		usleep(3000);
	}
	_exit(0);
}

static inline void rmmod_hammer_stop(struct rmmod_stats *st, pid_t pid)
{
	CNT_SET(st->stop, 1);
	waitpid(pid, NULL, 0);
	printf("# rmmod attempts: %ld, refused %ld, unloaded %ld, other %ld (errno %d)\n",
	       st->tries, st->busy, st->unloaded, st->other, st->other_errno);
}

/* A reference on the module for as long as the race runs: an fs_context. */
static inline int race_pin(void)
{
	return fsopen("shiftfs", FSOPEN_CLOEXEC);
}

/*
 * A race's start: the module's reference count before it (*@base_ref,
 * which it must settle back to), a reference held for the race (*@pin)
 * and rmmod hammering at the module; returns the hammer's pid.
 */
static inline pid_t race_start(struct rmmod_stats *rm, long *base_ref,
			       int *pin)
{
	pid_t hammer;

	*base_ref = module_refcnt();
	ASSERT_GE(*base_ref, 0);
	*pin = race_pin();
	ASSERT_GE(*pin, 0);
	hammer = rmmod_hammer(rm);
	ASSERT_GT(hammer, 0);
	return hammer;
}

/* Every rmmod the hammer tried was refused: the module was in use. */
static inline void check_rmmod(struct rmmod_stats *rm)
{
	EXPECT_GT(rm->tries, 0);
	EXPECT_EQ(rm->unloaded, 0);
	EXPECT_EQ(rm->other, 0);
	EXPECT_EQ(rm->busy, rm->tries);
}

/* A line of what the race saw, the first 20 only; @r has a "printed". */
#define NOTE(r, ...)							\
	do {								\
		if (CNT_INC((r)->printed) <= 20) {			\
			printf("# " __VA_ARGS__);			\
			printf("\n");					\
			fflush(stdout);					\
		}							\
	} while (0)

/*
 * Kernel log lines saying a slab of ours was destroyed with objects in
 * it (an inode or superblock leaked past rmmod): how many.  6.1 prints
 * them with pr_err and a stack dump only, which the runner's scan of the
 * log does not count.
 */
static inline int klog_slab_leaks(void)
{
	int len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf, *p, *line;
	int n, found = 0;

	if (len <= 0)
		return -1;
	buf = malloc(len + 1);
	if (!buf)
		return -1;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	if (n < 0) {
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &p); line;
	     line = strtok_r(NULL, "\n", &p)) {
		if (strstr(line, "shiftfs") &&
		    (strstr(line, "still has objects") ||
		     strstr(line, "Objects remaining"))) {
			printf("# kernel: %s\n", line);
			found++;
		}
	}
	free(buf);
	return found;
}

/*
 * main() of a race program: the harness' per-test timeout grows with
 * race_secs() and allows the grace (unless $HARNESS_TIMEOUT says
 * otherwise).
 */
static inline int race_main(int argc, char **argv)
{
	char t[32];

	snprintf(t, sizeof(t), "%d", race_secs() * 3 + RACE_GRACE_SECS + 90);
	setenv("HARNESS_TIMEOUT", t, 0);
	printf("# race_secs=%d per race\n", race_secs());
	return harness_main(argc, argv);
}

#endif /* SHIFTFS_TESTS_RACE_UTIL_H */
