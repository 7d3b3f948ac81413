// SPDX-License-Identifier: GPL-2.0
/*
 * Race pass, unmounts, exec and module removal.
 *
 * Lazy unmount against what holds a mount: round after round host root
 * mounts a tree shifted and processes in user namespaces of their own
 * (an unprivileged container's map, one namespace per process) open
 * files and mmap them, open a FIFO (readers and a writer, and a writer
 * left blocked in open), run a program from the mount, hold flock, POSIX
 * and OFD locks with other processes blocked waiting for them, and
 * create, write, truncate, rename, unlink, setxattr and lock through a
 * directory they hold open; host root detaches the mount (umount -l) at
 * a random moment, drops the caches so the running program and the
 * mappings fault through the detached mount, then lets everything go.
 * What must hold: a path through the mount point no longer reaches
 * shiftfs once the detach returned (ENOENT), while what was open keeps
 * working (I/O, the mapping, the program, the FIFO, which host root
 * completes from the lower tree); locks still exclude (no waiter gets a
 * lock before its holder let go) and every waiter gets it after; and
 * once everything is closed no superblock remains (the module's
 * reference count is back where it was).
 *
 * Exec against rename and write opens: a program runs from one mount
 * (a container's) while another container and the host rename the tree's
 * programs around it (RENAME_EXCHANGE, through another mount and
 * underneath) and open them for writing, and others exec them: the
 * running program's file never opens for writing, through either mount
 * or underneath (ETXTBSY), a file open for writing never runs (ETXTBSY),
 * as on the lower filesystem; once the program exits its file opens for
 * writing again.
 *
 * During all of this a process keeps trying to remove the module, which
 * must be refused every time (the test holds a reference).  Last, with
 * nothing of ours mounted: a detached mount held only by an open file, a
 * blocked FIFO reader, a running program, a held lock, a mapping or a
 * working directory keeps the module in (delete_module() refused), and
 * once let go the module unloads (no object left in its inode cache)
 * and loads again (modprobe: the programs after this one need it).
 *
 * The runner's scan of the kernel log fails the run on any WARN, BUG,
 * KASAN, lockdep or leaked-lock report.  Duration: race_util.h.
 */
#include "harness.h"
#include "race_util.h"

#include <sys/file.h>
#include <sys/statfs.h>
#include <sys/xattr.h>

/* ---- the program the races run: this one, told by RACE_PROG -------- */

/*
 * hold: say 'R', then echo each byte read from stdin until EOF.
 * ino:  write the inode number of the running program to stdout.
 */
static void race_prog(void)
{
	const char *mode = getenv("RACE_PROG");
	struct stat st;
	char c;

	if (!mode)
		return;
	if (!strcmp(mode, "ino")) {
		if (stat("/proc/self/exe", &st) ||
		    write(1, &st.st_ino, sizeof(st.st_ino)) !=
		    sizeof(st.st_ino))
			_exit(1);
		_exit(0);
	}
	if (write(1, "R", 1) != 1)
		_exit(1);
	while (read(0, &c, 1) == 1)
		if (write(1, &c, 1) != 1)
			_exit(1);
	_exit(0);
}

/*
 * Run @path in @mode: its pid with its stdin and stdout on pipes (*in,
 * *out), once it ran ('R' for hold; for ino, nothing read yet); or
 * -errno of execve().
 */
static pid_t start_prog(const char *path, const char *mode, int *in, int *out)
{
	int to[2], from[2], err[2], e = 0;
	char env[32];
	pid_t pid;

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC) ||
	    pipe2(err, O_CLOEXEC))
		return -EIO;
	snprintf(env, sizeof(env), "RACE_PROG=%s", mode);
	pid = fork();
	if (pid < 0)
		return -EIO;
	if (pid == 0) {
		char *argv[] = { (char *)path, NULL };
		char *envp[] = { env, NULL };

		dup2(to[0], 0);
		dup2(from[1], 1);
		execve(path, argv, envp);
		e = errno;
		if (write(err[1], &e, sizeof(e)) != sizeof(e))
			_exit(2);
		_exit(1);
	}
	close(to[0]);
	close(from[1]);
	close(err[1]);
	/* execve() closed err[1] (cloexec) or wrote its errno there. */
	if (read(err[0], &e, sizeof(e)) == sizeof(e)) {
		close(err[0]);
		close(to[1]);
		close(from[0]);
		waitpid(pid, NULL, 0);
		return -e;
	}
	close(err[0]);
	*in = to[1];
	*out = from[0];
	return pid;
}

/* ---- lazy unmount against everything that holds the mount ---------- */

enum role {
	R_FILE, R_FIFO_READER, R_FIFO_READER2, R_FIFO_WRITER, R_FIFO_BLOCKED,
	R_PROG, R_LOCK_HOLDER, R_WAIT_FLOCK, R_WAIT_POSIX, R_WAIT_OFD,
	R_CHURN, R_CHURN2, NR_ROLES
};

static const char *const role_name[NR_ROLES] = {
	"file", "fifo reader", "blocked fifo reader", "fifo writer",
	"blocked fifo writer", "program", "lock holder", "flock waiter",
	"posix lock waiter", "ofd lock waiter", "churn", "churn",
};

struct umount_race {
	char mnt[96];
	long long detached_ns;
	int stop, ready, held, released;
	long io_ok, io_after, io_fail;
	long fifo_bytes, fifo_after, fifo_opened_after;
	long pings, pings_after, ping_fail;
	long locks_got, lock_early;
	long churn_ops, churn_after, path_late_ok;
	long role_fail[NR_ROLES];
	int printed;
	struct rmmod_stats rm;
};

struct role_arg {
	struct umount_race *r;
	enum role role;
	unsigned int seed;
};

static bool detached(struct umount_race *r)
{
	return CNT_GET(r->detached_ns) != 0;
}

/* Open, write, read and mmap one file until stopped. */
static int role_file(struct umount_race *r, unsigned int *seed)
{
	char buf[4096];
	char *map;
	int fd, i = 0;

	fd = open(P(r->mnt, "data"), O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 1;
	map = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return 2;
	CNT_INC(r->ready);
	while (!CNT_GET(r->stop)) {
		off_t off = (rnd(seed) % 15) * 4096;
		bool after = detached(r);

		memset(buf, 'a' + i % 26, sizeof(buf));
		map[rnd(seed) % 65536]++;
		if (pwrite(fd, buf, sizeof(buf), off) == sizeof(buf) &&
		    pread(fd, buf, sizeof(buf), off) == sizeof(buf) &&
		    ftruncate(fd, 65536 + rnd(seed) % 4096) == 0 &&
		    (i % 8 || msync(map, 65536, MS_SYNC) == 0)) {
			CNT_INC(r->io_ok);
			if (after)
				CNT_INC(r->io_after);
		} else {
			CNT_INC(r->io_fail);
			NOTE(r, "I/O on a file open through the mount: %s",
			     strerror(errno));
		}
		i++;
	}
	munmap(map, 65536);
	close(fd);
	return 0;
}

/* Read the FIFO until EOF: the open may block until after the detach. */
static int role_fifo_reader(struct umount_race *r, const char *name)
{
	char buf[512];
	ssize_t n;
	int fd;

	CNT_INC(r->ready);
	fd = open(P(r->mnt, name), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		/* Only a lookup that started after the detach fails. */
		return detached(r) && errno == ENOENT ? 0 : 1;
	if (detached(r))
		CNT_INC(r->fifo_opened_after);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		CNT_ADD(r->fifo_bytes, n);
		if (detached(r))
			CNT_ADD(r->fifo_after, n);
	}
	close(fd);
	return n < 0 ? 3 : 0;
}

static int role_fifo_writer(struct umount_race *r, const char *name)
{
	char buf[256];
	int fd;

	signal(SIGPIPE, SIG_IGN);
	memset(buf, 'f', sizeof(buf));
	CNT_INC(r->ready);
	fd = open(P(r->mnt, name), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return detached(r) && errno == ENOENT ? 0 : 1;
	while (!CNT_GET(r->stop)) {
		if (write(fd, buf, sizeof(buf)) < 0)
			break;
		usleep(2000);
	}
	close(fd);
	return 0;
}

/* A program run from the mount answers until stopped. */
static int role_prog(struct umount_race *r)
{
	int in, out, fails = 0;
	char c = 0;
	pid_t pid;

	pid = start_prog(P(r->mnt, "prog"), "hold", &in, &out);
	if (pid < 0) {
		NOTE(r, "exec from the mount: %s", strerror(-pid));
		return 1;
	}
	if (read(out, &c, 1) != 1 || c != 'R')
		return 2;
	CNT_INC(r->ready);
	while (!CNT_GET(r->stop)) {
		bool after = detached(r);

		if (write(in, "p", 1) == 1 && read(out, &c, 1) == 1 &&
		    c == 'p') {
			CNT_INC(r->pings);
			if (after)
				CNT_INC(r->pings_after);
		} else {
			CNT_INC(r->ping_fail);
			fails++;
			break;
		}
		usleep(1000);
	}
	close(in);
	close(out);
	/* It exits on EOF: it ran to the end. */
	return wait_status(pid) == 0 && !fails ? 0 : 4;
}

static struct flock lk(short type, off_t start)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = start, .l_len = 1 };

	return fl;
}

/* flock, a POSIX lock on byte 0 and an OFD lock on byte 1, held. */
static int role_lock_holder(struct umount_race *r)
{
	struct flock w0 = lk(F_WRLCK, 0), w1 = lk(F_WRLCK, 1);
	int fd = open(P(r->mnt, "lockf"), O_RDWR | O_CLOEXEC);
	bool plant;

	if (fd < 0)
		return 1;
	if (flock(fd, LOCK_EX | LOCK_NB) || fcntl(fd, F_SETLK, &w0) ||
	    fcntl(fd, F_OFD_SETLK, &w1))
		return 2;
	CNT_SET(r->held, 1);
	CNT_INC(r->ready);
	/* Planted: the locks go before the holder lets go. */
	plant = race_plant("lock");
	while (!CNT_GET(r->stop) && !CNT_GET(r->released) &&
	       !(plant && detached(r)))
		usleep(2000);
	/* Let go: each waiter must now get its lock. */
	w0.l_type = F_UNLCK;
	w1.l_type = F_UNLCK;
	if (fcntl(fd, F_OFD_SETLK, &w1) || fcntl(fd, F_SETLK, &w0) ||
	    flock(fd, LOCK_UN))
		return 3;
	close(fd);
	return 0;
}

static int role_lock_waiter(struct umount_race *r, enum role role)
{
	struct flock w0 = lk(F_WRLCK, 0), w1 = lk(F_WRLCK, 1);
	int fd = open(P(r->mnt, "lockf"), O_RDWR | O_CLOEXEC), err;

	if (fd < 0)
		return 1;
	CNT_INC(r->ready);
	/* Only once the holder has them: then we must wait. */
	while (!CNT_GET(r->held))
		usleep(1000);
	if (role == R_WAIT_FLOCK)
		err = flock(fd, LOCK_EX);
	else if (role == R_WAIT_POSIX)
		err = fcntl(fd, F_SETLKW, &w0);
	else
		err = fcntl(fd, F_OFD_SETLKW, &w1);
	if (err)
		return 2;
	/* Never while the holder held it. */
	if (!CNT_GET(r->released)) {
		CNT_INC(r->lock_early);
		NOTE(r, "%s got the lock while it was held", role_name[role]);
	}
	CNT_INC(r->locks_got);
	close(fd);
	return 0;
}

/* Mixed workload through a directory held open, and paths that must fail. */
static int role_churn(struct umount_race *r, unsigned int *seed)
{
	char a[32], b[32], buf[256];
	int dir, fd, i = 0;
	long long t0;
	void *p;

	dir = open(P(r->mnt, "churn"), O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (dir < 0)
		return 1;
	memset(buf, 'c', sizeof(buf));
	CNT_INC(r->ready);
	while (!CNT_GET(r->stop)) {
		bool after = detached(r);
		int ok = 0;

		snprintf(a, sizeof(a), "n%u", rnd(seed) % 12);
		snprintf(b, sizeof(b), "n%u", rnd(seed) % 12);
		switch (rnd(seed) % 9) {
		case 0:
			fd = openat(dir, a, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
			if (fd >= 0) {
				ok = write(fd, buf, sizeof(buf)) > 0;
				p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					 MAP_SHARED, fd, 0);
				if (p != MAP_FAILED) {
					if (ftruncate(fd, 4096) == 0)
						((char *)p)[100] = 1;
					munmap(p, 4096);
				}
				close(fd);
			}
			break;
		case 1:
			ok = !renameat(dir, a, dir, b);
			break;
		case 2:
			ok = !unlinkat(dir, a, 0);
			break;
		case 3:
			ok = !mkdirat(dir, a, 0755);
			break;
		case 4:
			ok = !unlinkat(dir, a, AT_REMOVEDIR);
			break;
		case 5:
			fd = openat(dir, a, O_RDWR | O_CLOEXEC);
			if (fd >= 0) {
				ok = !ftruncate(fd, rnd(seed) % 8192);
				/* tmpfs before 6.6 has no user.* xattrs */
				if (fsetxattr(fd, "user.race", "v", 1, 0) &&
				    errno != EOPNOTSUPP)
					ok = 0;
				close(fd);
			}
			break;
		case 6:
			fd = openat(dir, a, O_RDWR | O_CLOEXEC);
			if (fd >= 0) {
				struct flock fl = lk(F_WRLCK, 0);

				ok = !flock(fd, LOCK_EX | LOCK_NB) &&
				     !fcntl(fd, F_SETLK, &fl) &&
				     !fcntl(fd, F_OFD_SETLK, &fl);
				close(fd);
			}
			break;
		case 7:
			ok = !renameat2(dir, a, dir, b, RENAME_EXCHANGE);
			break;
		default:
			ok = !fchmodat(dir, a, 0600 + (rnd(seed) % 2) * 044, 0);
			break;
		}
		if (ok) {
			CNT_INC(r->churn_ops);
			if (after)
				CNT_INC(r->churn_after);
		}
		/* The mount point's path: shiftfs only until the detach. */
		t0 = now_ns();
		fd = open(P(r->mnt, "data"), O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			long long dt = CNT_GET(r->detached_ns);

			if (dt && t0 > dt) {
				CNT_INC(r->path_late_ok);
				NOTE(r, "opened the detached mount's file by path %lld us after the detach",
				     (t0 - dt) / 1000);
			}
			close(fd);
		}
		if (++i % 64 == 0)
			usleep(1000);
	}
	close(dir);
	return 0;
}

static int role_main(void *arg)
{
	struct role_arg *ra = arg;
	struct umount_race *r = ra->r;
	int rc = 0;

	switch (ra->role) {
	case R_FILE:
		rc = role_file(r, &ra->seed);
		break;
	case R_FIFO_READER:
		rc = role_fifo_reader(r, "fifo");
		break;
	case R_FIFO_READER2:
		rc = role_fifo_reader(r, "fifo_r");
		break;
	case R_FIFO_WRITER:
		rc = role_fifo_writer(r, "fifo");
		break;
	case R_FIFO_BLOCKED:
		rc = role_fifo_writer(r, "fifo_w");
		break;
	case R_PROG:
		rc = role_prog(r);
		break;
	case R_LOCK_HOLDER:
		rc = role_lock_holder(r);
		break;
	case R_WAIT_FLOCK:
	case R_WAIT_POSIX:
	case R_WAIT_OFD:
		rc = role_lock_waiter(r, ra->role);
		break;
	default:
		rc = role_churn(r, &ra->seed);
		break;
	}
	if (rc) {
		CNT_INC(r->role_fail[ra->role]);
		NOTE(r, "%s: failed (%d): %s", role_name[ra->role], rc,
		     strerror(errno));
	}
	fflush(stdout);
	return 0;
}

static void umount_tree(const struct world *w)
{
	ASSERT_EQ(chmod(w->lower, 0755), 0);
	ASSERT_EQ(make_file(P(w->lower, "data"), 0666, 0, 0), 0);
	ASSERT_EQ(truncate(P(w->lower, "data"), 65536), 0);
	ASSERT_EQ(make_file(P(w->lower, "lockf"), 0666, 0, 0), 0);
	ASSERT_EQ(mkfifo(P(w->lower, "fifo"), 0666), 0);
	ASSERT_EQ(mkfifo(P(w->lower, "fifo_w"), 0666), 0);
	ASSERT_EQ(mkfifo(P(w->lower, "fifo_r"), 0666), 0);
	ASSERT_EQ(copy_self(P(w->lower, "prog")), 0);
	ASSERT_EQ(make_dir(P(w->lower, "churn"), 0777, 0, 0), 0);
}

static int drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -1;
	if (write(fd, "3", 1) != 1)
		ret = -1;
	close(fd);
	return ret;
}

TEST_F(world, lazy_umount_races_open_files_fifos_programs_and_locks)
{
	struct world *w = &self->w;
	struct umount_race *r = shared_alloc(sizeof(*r));
	struct role_arg ra[NR_ROLES];
	pid_t pids[NR_ROLES], hammer;
	unsigned int seed = 99;
	int pin, round = 0, i, fw, fw2, fr, fr2;
	long base_ref, fails = 0;
	struct statfs sfs;
	long long start;

	ASSERT_NE(r, NULL);
	umount_tree(w);
	snprintf(r->mnt, sizeof(r->mnt), "%s", w->mnt);
	hammer = race_start(&r->rm, &base_ref, &pin);

	start = now_ns();
	while (race_goes_on(start, CNT_GET(r->io_after) &&
			    CNT_GET(r->fifo_after) &&
			    CNT_GET(r->fifo_opened_after) &&
			    CNT_GET(r->pings_after) &&
			    CNT_GET(r->churn_after) && CNT_GET(r->rm.tries))) {
		ASSERT_EQ(shiftfs_mount_default(w), 0);
		CNT_SET(r->detached_ns, 0);
		CNT_SET(r->stop, 0);
		CNT_SET(r->ready, 0);
		CNT_SET(r->released, 0);
		CNT_SET(r->held, 0);
		for (i = 0; i < NR_ROLES; i++) {
			ra[i].r = r;
			ra[i].role = i;
			ra[i].seed = round * 131 + i;
			pids[i] = spawn_in_userns(MAP_CONTAINER, false,
						  role_main, &ra[i]);
			ASSERT_GT(pids[i], 0);
		}
		/* The FIFO writer may still block on the readers' open. */
		for (i = 0; i < 3000 && CNT_GET(r->ready) < NR_ROLES; i++)
			usleep(10000);
		ASSERT_EQ(CNT_GET(r->ready), NR_ROLES);
		usleep(rnd(&seed) % 100000);

		/* Planted: a superblock kept (an fd leaked); no detach. */
		if (race_plant("leak"))
			open(P(w->mnt, "data"), O_RDONLY);
		if (!race_plant("detach"))
			ASSERT_EQ(umount2(w->mnt, MNT_DETACH), 0);
		CNT_SET(r->detached_ns, now_ns());
		/* The path no longer leads to shiftfs. */
		EXPECT_EQ(shiftfs_mountinfo(w->mnt, NULL, 0), 1);
		EXPECT_ERRNO(open(P(w->mnt, "data"), O_RDONLY), ENOENT);
		EXPECT_EQ(statfs(w->mnt, &sfs), 0);
		EXPECT_NE(sfs.f_type, SHIFTFS_MAGIC);
		/* Fault the program and the mappings in again, detached. */
		if (round % 2 == 0)
			EXPECT_EQ(drop_caches(), 0);
		usleep(100000 + rnd(&seed) % 150000);

		/* Let the locks go; complete the FIFOs from underneath. */
		CNT_SET(r->released, 1);
		fw = open(P(w->lower, "fifo"), O_WRONLY | O_NONBLOCK |
			  O_CLOEXEC);
		fr = open(P(w->lower, "fifo_w"), O_RDONLY | O_NONBLOCK |
			  O_CLOEXEC);
		EXPECT_GE(fr, 0);
		/* A writer whose readers came too late gets one too. */
		fr2 = open(P(w->lower, "fifo"), O_RDONLY | O_NONBLOCK |
			   O_CLOEXEC);
		EXPECT_GE(fr2, 0);
		if (fw >= 0 && write(fw, "from the host", 13) != 13)
			fails++;
		/* The reader blocked in open since before the detach. */
		fw2 = open(P(w->lower, "fifo_r"), O_WRONLY | O_NONBLOCK |
			   O_CLOEXEC);
		if (fw2 >= 0 && write(fw2, "from the host", 13) != 13)
			fails++;
		usleep(50000);
		CNT_SET(r->stop, 1);
		if (fw >= 0)
			close(fw);
		if (fr >= 0)
			close(fr);
		if (fr2 >= 0)
			close(fr2);
		if (fw2 >= 0)
			close(fw2);
		for (i = 0; i < NR_ROLES; i++)
			EXPECT_EQ(wait_status(pids[i]), 0);
		/* Everything let go: no superblock of ours is left. */
		EXPECT_LE(refcnt_settles(base_ref + 1, 10), base_ref + 1);
		round++;
	}
	rmmod_hammer_stop(&r->rm, hammer);
	close(pin);

	TH_LOG("%d rounds in %.1f s: file I/O %ld (%ld detached, %ld failed); FIFO %ld bytes (%ld detached, %ld opens completed detached); program pings %ld (%ld detached, %ld failed)",
	       round, race_ran(start), r->io_ok, r->io_after, r->io_fail, r->fifo_bytes,
	       r->fifo_after, r->fifo_opened_after, r->pings, r->pings_after,
	       r->ping_fail);
	TH_LOG("locks got after release %ld, early %ld; churn %ld ops (%ld detached); paths reaching the detached mount %ld",
	       r->locks_got, r->lock_early, r->churn_ops, r->churn_after,
	       r->path_late_ok);
	for (i = 0; i < NR_ROLES; i++) {
		if (r->role_fail[i])
			TH_LOG("%s failed %ld times", role_name[i],
			       r->role_fail[i]);
		EXPECT_EQ(r->role_fail[i], 0);
	}
	EXPECT_EQ(fails, 0);
	EXPECT_EQ(r->io_fail, 0);
	EXPECT_EQ(r->ping_fail, 0);
	EXPECT_EQ(r->lock_early, 0);
	EXPECT_EQ(r->path_late_ok, 0);
	EXPECT_GT(round, 0);
	EXPECT_GT(r->io_after, 0);
	EXPECT_GT(r->fifo_after, 0);
	EXPECT_GT(r->fifo_opened_after, 0);
	EXPECT_GT(r->pings_after, 0);
	/* Three waiters a round. */
	EXPECT_EQ(r->locks_got, 3L * round);
	EXPECT_GT(r->churn_after, 0);
	check_rmmod(&r->rm);
	EXPECT_LE(refcnt_settles(base_ref, 10), base_ref);
}

/* ---- exec against rename and write opens --------------------------- */

#define NR_PROGS 4

struct exec_race {
	char mnt1[96], mnt2[96], lower[96];
	ino_t held_ino, wheld_ino;
	int stop;
	long exec_ok, exec_txtbsy, exec_other, exec_of_wheld;
	long wopen_ok, wopen_txtbsy, wopen_of_held, wopen_other;
	long renames;
	int printed;
	struct rmmod_stats rm;
};

struct exec_arg {
	struct exec_race *r;
	const char *dir;
	int kind;		/* 0 exec, 1 write open, 2 rename */
	unsigned int seed;
};

static int exec_worker(void *arg)
{
	struct exec_arg *ea = arg;
	struct exec_race *r = ea->r;
	char name[160], other[160];
	struct stat st;
	int in, out, fd;
	ino_t ino;
	pid_t pid;

	while (!CNT_GET(r->stop)) {
		snprintf(name, sizeof(name), "%s/p%u", ea->dir,
			 rnd(&ea->seed) % NR_PROGS);
		switch (ea->kind) {
		case 0:
			pid = start_prog(name, "ino", &in, &out);
			if (pid < 0) {
				if (pid == -ETXTBSY) {
					CNT_INC(r->exec_txtbsy);
				} else {
					CNT_INC(r->exec_other);
					NOTE(r, "exec %s: %s", name,
					     strerror(-pid));
				}
				break;
			}
			close(in);
			if (read(out, &ino, sizeof(ino)) == sizeof(ino)) {
				CNT_INC(r->exec_ok);
				if (ino == r->wheld_ino) {
					CNT_INC(r->exec_of_wheld);
					NOTE(r, "%s ran while open for writing",
					     name);
				}
			} else {
				CNT_INC(r->exec_other);
			}
			close(out);
			wait_status(pid);
			break;
		case 1:
			fd = open(name, O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				CNT_INC(r->wopen_ok);
				if (!fstat(fd, &st) && st.st_ino == r->held_ino) {
					CNT_INC(r->wopen_of_held);
					NOTE(r, "%s opened for writing while it runs",
					     name);
				}
				close(fd);
			} else if (errno == ETXTBSY) {
				CNT_INC(r->wopen_txtbsy);
			} else {
				CNT_INC(r->wopen_other);
				NOTE(r, "open %s for writing: %s", name,
				     strerror(errno));
			}
			break;
		default:
			snprintf(other, sizeof(other), "%s/p%u", ea->dir,
				 rnd(&ea->seed) % NR_PROGS);
			if (!renameat2(AT_FDCWD, name, AT_FDCWD, other,
				       RENAME_EXCHANGE))
				CNT_INC(r->renames);
			break;
		}
	}
	fflush(stdout);
	return 0;
}

/* The name the inode @ino has in @dir now, or -1. */
static int name_of(const char *dir, ino_t ino, char *buf, size_t len)
{
	struct stat st;
	int i;

	for (i = 0; i < NR_PROGS; i++) {
		snprintf(buf, len, "%s/p%d", dir, i);
		if (!stat(buf, &st) && st.st_ino == ino)
			return 0;
	}
	return -1;
}

TEST_F(world, exec_races_rename_and_write_opens)
{
	struct world *w = &self->w;
	struct exec_race *r = shared_alloc(sizeof(*r));
	const char *opts[] = { "uidmap=" MAP_DEFAULT, "gidmap=" MAP_DEFAULT,
			       NULL };
	struct exec_arg ea[8];
	pid_t pids[8], hammer, holder;
	int pin, i, n = 0, in, out, wfd;
	char c = 0, name[160];
	struct stat st;
	long long start;
	long base_ref;

	ASSERT_NE(r, NULL);
	snprintf(r->lower, sizeof(r->lower), "%s", w->lower);
	snprintf(r->mnt1, sizeof(r->mnt1), "%s", w->mnt);
	snprintf(r->mnt2, sizeof(r->mnt2), "%s/mnt2", w->base);
	ASSERT_EQ(mkdir(r->mnt2, 0755), 0);
	for (i = 0; i < NR_PROGS; i++)
		ASSERT_EQ(copy_self(P(w->lower, i == 0 ? "p0" : i == 1 ? "p1" :
				      i == 2 ? "p2" : "p3")), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(shiftfs_fsmount(w->lower, r->mnt2, opts, NULL, 0), 0);
	base_ref = module_refcnt();
	ASSERT_GE(base_ref, 0);
	pin = race_pin();
	ASSERT_GE(pin, 0);

	/* p0 runs from the first mount; p1 is open for writing underneath. */
	/* Planted: the program that runs is not the one watched. */
	if (race_plant("exec"))
		ASSERT_EQ(copy_self(P(w->lower, "p0x")), 0);
	holder = start_prog(P(r->mnt1, race_plant("exec") ? "p0x" : "p0"),
			    "hold", &in, &out);
	ASSERT_GT(holder, 0);
	ASSERT_EQ(read(out, &c, 1), 1);
	ASSERT_EQ(stat(P(w->lower, "p0"), &st), 0);
	r->held_ino = st.st_ino;
	/* Planted: the file open for writing is not the one watched. */
	if (race_plant("exec"))
		ASSERT_EQ(copy_self(P(w->lower, "p1x")), 0);
	wfd = open(P(w->lower, race_plant("exec") ? "p1x" : "p1"),
		   O_WRONLY | O_CLOEXEC);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(stat(P(w->lower, "p1"), &st), 0);
	r->wheld_ino = st.st_ino;
	hammer = rmmod_hammer(&r->rm);
	ASSERT_GT(hammer, 0);

	/* exec and write opens through both mounts and underneath, renames. */
	{
		const struct { const char *dir; int kind; bool ns; } plan[] = {
			{ r->mnt1, 0, true }, { r->mnt2, 0, true },
			{ r->mnt2, 1, true }, { r->mnt1, 1, true },
			{ r->lower, 1, false }, { r->mnt2, 2, true },
			{ r->lower, 2, false }, { r->mnt1, 2, true },
		};

		for (i = 0; i < 8; i++) {
			ea[i] = (struct exec_arg){ r, plan[i].dir, plan[i].kind,
						   i * 977 + 1 };
			if (plan[i].ns) {
				pids[i] = spawn_in_userns(MAP_CONTAINER, false,
							  exec_worker, &ea[i]);
			} else {
				pids[i] = race_fork();
				if (pids[i] == 0)
					_exit(exec_worker(&ea[i]));
			}
			ASSERT_GT(pids[i], 0);
			n++;
		}
	}
	start = now_ns();
	while (race_goes_on(start, CNT_GET(r->exec_ok) &&
			    CNT_GET(r->exec_txtbsy) && CNT_GET(r->wopen_ok) &&
			    CNT_GET(r->wopen_txtbsy) && CNT_GET(r->renames) &&
			    CNT_GET(r->rm.tries)))
		usleep(100000);
	TH_LOG("raced %.1f s", race_ran(start));
	/* The program still runs. */
	EXPECT_EQ(write(in, "x", 1), 1);
	EXPECT_EQ(read(out, &c, 1), 1);
	CNT_SET(r->stop, 1);
	for (i = 0; i < n; i++)
		EXPECT_EQ(wait_status(pids[i]), 0);
	rmmod_hammer_stop(&r->rm, hammer);

	TH_LOG("exec: %ld ran, %ld ETXTBSY, %ld other errors, %ld of the file open for writing",
	       r->exec_ok, r->exec_txtbsy, r->exec_other, r->exec_of_wheld);
	TH_LOG("write opens: %ld ok, %ld ETXTBSY, %ld other errors, %ld of the running program; renames %ld",
	       r->wopen_ok, r->wopen_txtbsy, r->wopen_other, r->wopen_of_held,
	       r->renames);
	EXPECT_EQ(r->exec_of_wheld, 0);
	EXPECT_EQ(r->wopen_of_held, 0);
	EXPECT_EQ(r->exec_other, 0);
	EXPECT_EQ(r->wopen_other, 0);
	EXPECT_GT(r->exec_ok, 0);
	EXPECT_GT(r->exec_txtbsy, 0);
	EXPECT_GT(r->wopen_ok, 0);
	EXPECT_GT(r->wopen_txtbsy, 0);
	EXPECT_GT(r->renames, 0);
	check_rmmod(&r->rm);

	/* Released when the program exits and the writer closes. */
	close(in);
	EXPECT_EQ(wait_status(holder), 0);
	close(out);
	close(wfd);
	ASSERT_EQ(name_of(r->mnt1, r->held_ino, name, sizeof(name)), 0);
	i = open(name, O_WRONLY | O_CLOEXEC);
	EXPECT_GE(i, 0);
	close(i);
	ASSERT_EQ(name_of(r->lower, r->held_ino, name, sizeof(name)), 0);
	i = open(name, O_WRONLY | O_CLOEXEC);
	EXPECT_GE(i, 0);
	close(i);
	ASSERT_EQ(name_of(r->mnt2, r->wheld_ino, name, sizeof(name)), 0);
	holder = start_prog(name, "ino", &in, &out);
	EXPECT_GT(holder, 0);
	if (holder > 0) {
		ino_t ino = 0;

		close(in);
		EXPECT_EQ(read(out, &ino, sizeof(ino)), (ssize_t)sizeof(ino));
		EXPECT_EQ(ino, r->wheld_ino);
		close(out);
		EXPECT_EQ(wait_status(holder), 0);
	}
	close(pin);
	EXPECT_EQ(umount2(r->mnt2, 0), 0);
	EXPECT_EQ(umount2(w->mnt, 0), 0);
	EXPECT_LE(refcnt_settles(base_ref - 2, 10), base_ref - 2);
}

/* ---- module removal once nothing holds it -------------------------- */

enum holder {
	H_FILE, H_FIFO, H_PROG, H_LOCK, H_MAP, H_CWD, NR_HOLDERS
};

static const char *const holder_name[NR_HOLDERS] = {
	"open file", "blocked FIFO reader", "running program", "held flock",
	"mapping", "working directory",
};

/* Every shiftfs mount any process sees, as diagnostics: how many. */
static int show_shiftfs_mounts(void)
{
	char cmd[] = "grep -H ' - shiftfs ' /proc/[0-9]*/mountinfo 2>/dev/null | sed 's/^/# /'";
	char line[64];
	FILE *p = popen("grep -l ' - shiftfs ' /proc/[0-9]*/mountinfo 2>/dev/null | wc -l", "r");
	int n = 0;

	if (p && fgets(line, sizeof(line), p))
		n = atoi(line);
	if (p)
		pclose(p);
	if (n && system(cmd))
		{ /* diagnostics only */ }
	return n;
}

/* Wait up to 10 s for @pid to be blocked in openat(2): 0, or -1. */
static int in_openat(pid_t pid)
{
	long long end = now_ns() + 10 * 1000000000LL;
	char path[64], buf[64];
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	while (now_ns() < end) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			if (!strncmp(buf, "257 ", 4))
				return 0;
		}
		usleep(10000);
	}
	return -1;
}

struct hold_arg {
	const char *mnt;
	enum holder h;
	int go[2];		/* ready byte to us, release byte from us */
	int back[2];
};

/* In a container: hold the mount by @h until told. */
static int hold_main(void *arg)
{
	struct hold_arg *ha = arg;
	int fd = -1, in = -1, out = -1;
	pid_t prog = 0;
	char c = 'R';
	void *map = NULL;

	switch (ha->h) {
	case H_FILE:
		fd = open(P(ha->mnt, "data"), O_RDWR | O_CLOEXEC);
		break;
	case H_FIFO:
		/* Blocks in open until the host opens the lower FIFO. */
		prog = getpid();
		if (write(ha->back[1], &prog, sizeof(prog)) != sizeof(prog))
			return 1;
		fd = open(P(ha->mnt, "fifo"), O_RDONLY | O_CLOEXEC);
		return fd < 0 ? 2 : 0;
	case H_PROG:
		prog = start_prog(P(ha->mnt, "prog"), "hold", &in, &out);
		if (prog < 0 || read(out, &c, 1) != 1)
			return 3;
		fd = in;
		break;
	case H_LOCK:
		fd = open(P(ha->mnt, "lockf"), O_RDWR | O_CLOEXEC);
		if (fd >= 0 && flock(fd, LOCK_EX))
			return 4;
		break;
	case H_MAP:
		fd = open(P(ha->mnt, "data"), O_RDWR | O_CLOEXEC);
		map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			   0);
		if (map == MAP_FAILED)
			return 5;
		close(fd);
		fd = 0;
		break;
	case H_CWD:
		fd = chdir(ha->mnt) ? -1 : 0;
		break;
	default:
		return 6;
	}
	if (fd < 0)
		return 7;
	c = 'R';
	if (write(ha->back[1], &c, 1) != 1 || read(ha->go[0], &c, 1) != 1)
		return 8;
	if (map)
		((char *)map)[0] = 'm';
	if (prog > 0) {
		close(in);
		close(out);
		return wait_status(prog) == 0 ? 0 : 9;
	}
	return 0;
}

static void close_hold(struct hold_arg *ha)
{
	close(ha->go[0]);
	close(ha->go[1]);
	close(ha->back[0]);
	close(ha->back[1]);
}

/* Remove the module, retrying while a release is still under way. */
static int unload(void)
{
	long long end = now_ns() + 10 * 1000000000LL;
	int err;

	while ((err = delete_module("shiftfs")) && errno == EAGAIN &&
	       now_ns() < end)
		usleep(50000);
	if (err)
		printf("# rmmod shiftfs: %s\n", strerror(errno));
	return err;
}

TEST_F(world, module_unloads_only_once_nothing_holds_it)
{
	struct world *w = &self->w;
	struct hold_arg ha;
	int h, err, fd;
	pid_t pid, inner;
	char c, mb[2];

	umount_tree(w);
	/* No stray mount of ours anywhere, no reference. */
	EXPECT_EQ(show_shiftfs_mounts(), 0);
	ASSERT_EQ(module_refcnt(), 0);
	for (h = 0; h < NR_HOLDERS; h++) {
		ASSERT_EQ(shiftfs_mount_default(w), 0);
		ha = (struct hold_arg){ .mnt = w->mnt, .h = h };
		ASSERT_EQ(pipe(ha.go), 0);
		ASSERT_EQ(pipe(ha.back), 0);
		pid = spawn_in_userns(MAP_CONTAINER, false, hold_main, &ha);
		ASSERT_GT(pid, 0);
		if (h == H_FIFO) {
			ASSERT_EQ(read(ha.back[0], &inner, sizeof(inner)),
				  (ssize_t)sizeof(inner));
			EXPECT_EQ(in_openat(inner), 0);
		} else {
			ASSERT_EQ(read(ha.back[0], &c, 1), 1);
		}
		ASSERT_EQ(umount2(w->mnt, MNT_DETACH), 0);
		EXPECT_EQ(shiftfs_mountinfo(w->mnt, NULL, 0), 1);
		/*
		 * A mapping is the lower file's (vma_set_file()): up to
		 * 6.15 it holds nothing of ours and outlives the module;
		 * since 6.16 (backing_file_mmap()) the lower file is a
		 * backing file that holds our path, so our superblock and
		 * the module.  Either is safe: the module goes exactly when
		 * nothing of ours is held, and the mapping keeps working.
		 */
		if (h == H_MAP && refcnt_settles(0, 3) == 0) {
			EXPECT_EQ(unload(), 0);
			EXPECT_EQ(write(ha.go[1], "g", 1), 1);
			EXPECT_EQ(wait_status(pid), 0);
			EXPECT_EQ(read_file(P(w->lower, "data"), mb,
					    sizeof(mb)), 1);
			EXPECT_EQ(mb[0], 'm');
			close_hold(&ha);
			EXPECT_EQ(klog_slab_leaks(), 0);
			ASSERT_EQ(system("modprobe shiftfs"), 0);
			ASSERT_EQ(module_refcnt(), 0);
			TH_LOG("%s: holds nothing of ours; unloaded while mapped, written after",
			       holder_name[h]);
			continue;
		}
		/* The detached mount is all that holds the module. */
		EXPECT_EQ(module_refcnt(), 1);
		errno = 0;
		err = delete_module("shiftfs");
		if (!err || (errno != EAGAIN && errno != EBUSY))
			TH_LOG("%s: delete_module: %d %s", holder_name[h], err,
			       strerror(errno));
		EXPECT_EQ(err, -1);
		EXPECT_TRUE(errno == EAGAIN || errno == EBUSY);
		if (!err)
			ASSERT_EQ(system("modprobe shiftfs"), 0);
		/* Planted: removed before letting go. */
		if (race_plant("rmmod"))
			EXPECT_EQ(unload(), 0);
		/* Let go. */
		fd = -1;
		if (h == H_FIFO)
			fd = open(P(w->lower, "fifo"), O_WRONLY | O_NONBLOCK |
				  O_CLOEXEC);
		else
			EXPECT_EQ(write(ha.go[1], "g", 1), 1);
		EXPECT_EQ(wait_status(pid), 0);
		if (fd >= 0)
			close(fd);
		close_hold(&ha);
		EXPECT_EQ(refcnt_settles(0, 10), 0);
		/* Now it goes, cleanly, and comes back. */
		EXPECT_EQ(unload(), 0);
		EXPECT_EQ(module_refcnt(), -1);
		EXPECT_EQ(klog_slab_leaks(), 0);
		ASSERT_EQ(system("modprobe shiftfs"), 0);
		ASSERT_EQ(module_refcnt(), 0);
		TH_LOG("%s: rmmod refused while held, unloaded once let go",
		       holder_name[h]);
	}
	/* Loaded, and working, for what runs next. */
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	EXPECT_EQ(owner_is(P(w->mnt, "data"), ID_SHIFT, ID_SHIFT), 0);
	EXPECT_EQ(umount2(w->mnt, 0), 0);
}

int main(int argc, char **argv)
{
	race_prog();
	return race_main(argc, argv);
}
