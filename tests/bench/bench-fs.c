// SPDX-License-Identifier: GPL-2.0
/*
 * bench-fs: the workloads of the shiftfs benchmark (tests/bench/), run
 * inside the guest on one directory of one mount.  Each command times
 * itself with CLOCK_MONOTONIC and prints the elapsed seconds as the last
 * line of stdout ("%.6f"), so that the shell driving it (tests/bench/bench)
 * pays no fork/exec per file and only the filesystem is measured.
 *
 *   bench-fs create  DIR NDIRS NFILES   mkdir NDIRS dirs, NFILES empty files in them
 *   bench-fs stat    DIR NDIRS NFILES   stat() every file by path (DIR/dNNN/fNNNNNN)
 *   bench-fs readdir DIR NDIRS NFILES   read every directory, check the count
 *   bench-fs rename  DIR NDIRS NFILES   rename every fN to rN (same directory)
 *   bench-fs unlink  DIR NDIRS NFILES   unlink every rN (or fN), rmdir the dirs
 *   bench-fs par N create DIR NDIRS NFILES
 *   bench-fs par N stat DIR NDIRS NFILES PASSES
 *                                       N workers (processes) at once, worker
 *                                       I in DIR/wI: create its files, or
 *                                       stat them PASSES times; the time is
 *                                       from the moment all are released to
 *                                       the end of the last one
 *   bench-fs seqwrite FILE MIB          write MIB MiB in 1 MiB writes, fsync
 *   bench-fs seqread  FILE              read the file in 1 MiB reads
 *   bench-fs randread FILE COUNT        COUNT 4 KiB preads at random aligned offsets
 *   bench-fs mmapread FILE              mmap the file, touch every page
 *   bench-fs uring   FILE COUNT QD      COUNT 4 KiB reads at random aligned
 *                                       offsets through io_uring, QD in
 *                                       flight (raw syscalls, no liburing)
 *   bench-fs walk    DIR                lstat every entry of a tree, print
 *                                       "path size uid gid mode" to stdout
 *   bench-fs mktree  DIR MIB SEED       a source-like tree of about MIB MiB
 *   bench-fs time    CMD [ARG...]       run CMD, print its elapsed seconds
 *                                       (stdout of CMD goes to /dev/null
 *                                       unless BENCH_STDOUT is set)
 *   bench-fs mount TYPE SRC DST DATA    mount(2), timed (no mount(8) exec)
 *   bench-fs as UID GID CMD [ARG...]    exec CMD as UID/GID, no groups
 *                                       (setpriv --reuid/--regid/--clear-groups
 *                                       for when only busybox setpriv exists)
 *
 * NDIRS/NFILES name the same layout for every command: file i lives in
 * directory i % NDIRS.  Any failed system call is fatal (exit 1, with
 * the call and path on stderr): a benchmark must not time errors.
 *
 * One program for every workload, of some 650 lines: the guest's busybox
 * has no compiler, and one static binary keeps each timed loop free of
 * fork/exec.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <grp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/io_uring.h>

#define CHUNK (1024 * 1024)

static const char *prog = "bench-fs";

static void usage(void) __attribute__((noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(e));
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report(double t0)
{
	printf("%.6f\n", now() - t0);
}

static long num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < 0) {
		fprintf(stderr, "%s: bad number '%s'\n", prog, s);
		exit(2);
	}
	return v;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64*: fixed seed, the same offsets in every column */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void fpath(char *buf, size_t len, const char *dir, long ndirs,
		  long i, char kind)
{
	snprintf(buf, len, "%s/d%03ld/%c%06ld", dir, i % ndirs, kind, i);
}

static void dpath(char *buf, size_t len, const char *dir, long d)
{
	snprintf(buf, len, "%s/d%03ld", dir, d);
}

static void do_create(const char *dir, long ndirs, long nfiles)
{
	char p[4096];

	for (long d = 0; d < ndirs; d++) {
		dpath(p, sizeof(p), dir, d);
		if (mkdir(p, 0755))
			die("mkdir %s", p);
	}
	for (long i = 0; i < nfiles; i++) {
		int fd;

		fpath(p, sizeof(p), dir, ndirs, i, 'f');
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			die("create %s", p);
		close(fd);
	}
}

static int cmd_create(const char *dir, long ndirs, long nfiles)
{
	double t0 = now();

	do_create(dir, ndirs, nfiles);
	report(t0);
	return 0;
}

static void do_stat(const char *dir, long ndirs, long nfiles)
{
	char p[4096];
	struct stat st;

	for (long i = 0; i < nfiles; i++) {
		fpath(p, sizeof(p), dir, ndirs, i, 'f');
		if (stat(p, &st))
			die("stat %s", p);
	}
}

static int cmd_stat(const char *dir, long ndirs, long nfiles)
{
	double t0 = now();

	do_stat(dir, ndirs, nfiles);
	report(t0);
	return 0;
}

/*
 * N workers in their own directories, released together: each reports
 * ready on one pipe and waits for the other to close.  Timed from the
 * release to the last exit, so the figure is how long N times the work
 * takes when N CPUs share the mount: with nothing shared on the hot path
 * it stays what one worker takes, given N free CPUs.
 */
static int cmd_par(long n, const char *what, const char *dir, long ndirs,
		   long nfiles, long passes)
{
	int ready[2], go[2], status, bad = 0;
	char w[4096], c;
	pid_t pids[64];
	double t0;

	if (n < 1 || n > 64)
		usage();
	if (pipe(ready) || pipe(go))
		die("pipe");
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		pids[i] = pid;
		if (pid)
			continue;
		close(ready[0]);
		close(go[1]);
		snprintf(w, sizeof(w), "%s/w%ld", dir, i);
		if (!strcmp(what, "create") && mkdir(w, 0755))
			die("mkdir %s", w);
		if (write(ready[1], "r", 1) != 1)
			die("ready");
		/* a worker that died before this leaves the parent EOF */
		close(ready[1]);
		if (read(go[0], &c, 1) < 0)	/* EOF: go */
			die("go");
		if (!strcmp(what, "create"))
			do_create(w, ndirs, nfiles);
		else
			for (long p = 0; p < passes; p++)
				do_stat(w, ndirs, nfiles);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	for (long i = 0; i < n; i++) {
		if (read(ready[0], &c, 1) == 1)
			continue;
		/* don't leave the others waiting, or released unwatched */
		for (long j = 0; j < n; j++)
			kill(pids[j], SIGKILL);
		while (wait(&status) > 0)
			;
		fprintf(stderr, "%s: par %s: a worker never got ready\n",
			prog, what);
		return 1;
	}
	t0 = now();
	close(go[1]);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad = 1;
	report(t0);
	if (bad) {
		fprintf(stderr, "%s: par %s: a worker failed\n", prog, what);
		return 1;
	}
	return 0;
}

static int cmd_readdir(const char *dir, long ndirs, long nfiles)
{
	char p[4096];
	long seen = 0;
	double t0 = now();

	for (long d = 0; d < ndirs; d++) {
		DIR *dp;
		struct dirent *de;

		dpath(p, sizeof(p), dir, d);
		dp = opendir(p);
		if (!dp)
			die("opendir %s", p);
		errno = 0;
		while ((de = readdir(dp)))
			if (de->d_name[0] != '.')
				seen++;
		if (errno)
			die("readdir %s", p);
		closedir(dp);
	}
	report(t0);
	if (seen != nfiles) {
		fprintf(stderr, "%s: readdir saw %ld entries, want %ld\n",
			prog, seen, nfiles);
		return 1;
	}
	return 0;
}

static int cmd_rename(const char *dir, long ndirs, long nfiles)
{
	char a[4096], b[4096];
	double t0 = now();

	for (long i = 0; i < nfiles; i++) {
		fpath(a, sizeof(a), dir, ndirs, i, 'f');
		fpath(b, sizeof(b), dir, ndirs, i, 'r');
		if (rename(a, b))
			die("rename %s", a);
	}
	report(t0);
	return 0;
}

static int cmd_unlink(const char *dir, long ndirs, long nfiles)
{
	char p[4096];
	double t0 = now();

	for (long i = 0; i < nfiles; i++) {
		fpath(p, sizeof(p), dir, ndirs, i, 'r');
		if (unlink(p) == 0)
			continue;
		if (errno != ENOENT)
			die("unlink %s", p);
		fpath(p, sizeof(p), dir, ndirs, i, 'f');
		if (unlink(p))
			die("unlink %s", p);
	}
	for (long d = 0; d < ndirs; d++) {
		dpath(p, sizeof(p), dir, d);
		if (rmdir(p))
			die("rmdir %s", p);
	}
	report(t0);
	return 0;
}

static char *chunk(void)
{
	char *buf;

	if (posix_memalign((void **)&buf, 4096, CHUNK))
		die("posix_memalign");
	for (size_t i = 0; i < CHUNK; i++)
		buf[i] = (char)(i * 131 + 7);
	return buf;
}

static int cmd_seqwrite(const char *file, long mib)
{
	char *buf = chunk();
	double t0;
	int fd;

	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("open %s", file);
	t0 = now();
	for (long i = 0; i < mib; i++)
		if (write(fd, buf, CHUNK) != CHUNK)
			die("write %s", file);
	if (fsync(fd))
		die("fsync %s", file);
	report(t0);
	close(fd);
	return 0;
}

/* @file opened read-only, or the program dies naming it. */
static int open_ro(const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("open %s", file);
	return fd;
}

/* @file opened read-only, and its size in 4 KiB pages (0: empty, said). */
static long open_pages(const char *file, int *fd)
{
	struct stat st;
	long pages;

	*fd = open_ro(file);
	if (fstat(*fd, &st))
		die("fstat %s", file);
	pages = st.st_size / 4096;
	if (pages == 0)
		fprintf(stderr, "%s: %s is empty\n", prog, file);
	return pages;
}

static int cmd_seqread(const char *file)
{
	char *buf = chunk();
	long long total = 0;
	ssize_t n;
	double t0;
	int fd;

	t0 = now();
	fd = open_ro(file);
	while ((n = read(fd, buf, CHUNK)) > 0)
		total += n;
	if (n < 0)
		die("read %s", file);
	close(fd);
	report(t0);
	if (total == 0) {
		fprintf(stderr, "%s: %s is empty\n", prog, file);
		return 1;
	}
	return 0;
}

static int cmd_randread(const char *file, long count)
{
	char *buf = chunk();
	long pages;
	double t0;
	int fd;

	pages = open_pages(file, &fd);
	if (pages == 0)
		return 1;
	t0 = now();
	for (long i = 0; i < count; i++) {
		off_t off = (off_t)(rnd() % pages) * 4096;

		if (pread(fd, buf, 4096, off) != 4096)
			die("pread %s", file);
	}
	report(t0);
	close(fd);
	return 0;
}

/*
 * io_uring by raw system calls (the guest has no liburing): one ring of
 * @qd entries, kept full, IORING_OP_READ of 4 KiB at random offsets into
 * @qd buffers; the same offsets as randread.  Only what a reader needs:
 * no SQPOLL, no registered files or buffers (as a plain program would).
 */
struct uring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static void uring_setup(struct uring *u, unsigned int entries)
{
	struct io_uring_params p;
	size_t sq_len, cq_len;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	u->fd = syscall(__NR_io_uring_setup, entries, &p);
	if (u->fd < 0)
		die("io_uring_setup");
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		  u->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		  u->fd, IORING_OFF_CQ_RING);
	u->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
		       IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || u->sqes == MAP_FAILED)
		die("mmap io_uring");
	u->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	u->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	u->sq_array = (unsigned int *)(sq + p.sq_off.array);
	u->cq_head = (unsigned int *)(cq + p.cq_off.head);
	u->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	u->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	u->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
}

/* Queue one 4 KiB read of @fd at @off into @buf, tagged @tag. */
static void uring_read(struct uring *u, int fd, char *buf, off_t off,
		       unsigned long tag)
{
	unsigned int tail = *u->sq_tail, i = tail & *u->sq_mask;
	struct io_uring_sqe *sqe = &u->sqes[i];

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->fd = fd;
	sqe->off = off;
	sqe->addr = (unsigned long)buf;
	sqe->len = 4096;
	sqe->user_data = tag;
	u->sq_array[i] = i;
	__atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
}

static int cmd_uring(const char *file, long count, long qd)
{
	char *buf = chunk();
	long pages, queued = 0, done = 0;
	struct uring u;
	double t0;
	int fd;

	if (qd < 1 || qd > 256 || qd * 4096 > CHUNK)
		usage();
	pages = open_pages(file, &fd);
	if (pages == 0)
		return 1;
	uring_setup(&u, qd);
	t0 = now();
	while (done < count) {
		unsigned int head, tail, submit = 0;

		/* refill: one buffer per slot in flight (tag = slot) */
		while (queued < count && queued - done < qd) {
			uring_read(&u, fd, buf + (queued % qd) * 4096,
				   (off_t)(rnd() % pages) * 4096, queued % qd);
			queued++;
			submit++;
		}
		if (syscall(__NR_io_uring_enter, u.fd, submit, 1,
			    IORING_ENTER_GETEVENTS, NULL, 0) < 0)
			die("io_uring_enter");
		head = *u.cq_head;
		tail = __atomic_load_n(u.cq_tail, __ATOMIC_ACQUIRE);
		for (; head != tail; head++) {
			struct io_uring_cqe *cqe = &u.cqes[head & *u.cq_mask];

			if (cqe->res != 4096) {
				errno = cqe->res < 0 ? -cqe->res : EIO;
				die("io_uring read %s", file);
			}
			done++;
		}
		__atomic_store_n(u.cq_head, head, __ATOMIC_RELEASE);
	}
	report(t0);
	close(u.fd);
	close(fd);
	return 0;
}

static int cmd_mmapread(const char *file)
{
	volatile unsigned long sum = 0;
	struct stat st;
	unsigned char *p;
	double t0;
	int fd;

	t0 = now();
	fd = open_ro(file);
	if (fstat(fd, &st))
		die("fstat %s", file);
	p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap %s", file);
	for (off_t off = 0; off < st.st_size; off += 4096)
		sum += p[off];
	munmap(p, st.st_size);
	close(fd);
	report(t0);
	return 0;
}

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)type;
	(void)ftw;
	printf("%s %lld %u %u %o\n", path, (long long)st->st_size,
	       st->st_uid, st->st_gid, st->st_mode & 07777);
	return 0;
}

static int cmd_walk(const char *dir)
{
	double t0 = now();
	FILE *out = stdout;

	if (nftw(dir, walk_one, 64, FTW_PHYS))
		die("nftw %s", dir);
	fflush(out);
	/* the time goes to stderr: stdout is the listing */
	fprintf(stderr, "%.6f\n", now() - t0);
	return 0;
}

/*
 * A tree that looks like a source checkout: a few hundred directories,
 * files mostly small (log-spread 256 B .. 64 KiB, text-like bytes, so
 * that nothing compresses to zero pages), some larger ones.
 */
static int cmd_mktree(const char *dir, long mib, long seed)
{
	static const char *ext[] = { ".c", ".h", ".S", ".txt", "", ".sh",
				     ".c", ".h", ".c", ".rst" };
	long long want = (long long)mib << 20, have = 0;
	char p[4096], *buf = malloc(256 * 1024);
	long nfile = 0;
	int ndir = 0;

	if (!buf)
		die("malloc");
	rng_state ^= (uint64_t)seed * 0x100000001b3ull;
	for (int i = 0; i < 256 * 1024; i++) {
		int r = rnd() % 64;

		buf[i] = r < 10 ? ' ' : r == 10 ? '\n' : 'a' + r % 26;
	}
	if (mkdir(dir, 0755) && errno != EEXIST)
		die("mkdir %s", dir);
	while (have < want) {
		char d[4096];
		long size;
		int fd;

		if (nfile % 16 == 0) {
			/* a new directory, sometimes nested in the previous */
			int n;

			if (ndir > 0 && strlen(p) < 200 && rnd() % 3 == 0)
				n = snprintf(d, sizeof(d), "%s/sub%d", p, ndir);
			else
				n = snprintf(d, sizeof(d), "%s/dir%03d", dir, ndir);
			if (n >= (int)sizeof(d)) {
				errno = ENAMETOOLONG;
				die("mkdir %s", dir);
			}
			ndir++;
			if (mkdir(d, 0755))
				die("mkdir %s", d);
			strcpy(p, d);
		}
		{
			int shift = 8 + rnd() % 8;	/* 256 B .. 64 KiB */

			size = (1L << shift) + rnd() % (1L << shift);
			if (rnd() % 50 == 0)
				size = 128 * 1024 + rnd() % (128 * 1024);
		}
		if (snprintf(d, sizeof(d), "%s/file%05ld%s", p, nfile,
			     ext[rnd() % 10]) >= (int)sizeof(d)) {
			errno = ENAMETOOLONG;
			die("create in %s", p);
		}
		fd = open(d, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			die("create %s", d);
		if (write(fd, buf + rnd() % (256 * 1024 - size), size) != size)
			die("write %s", d);
		close(fd);
		have += size;
		nfile++;
	}
	fprintf(stderr, "%s: mktree: %ld files, %d dirs, %lld bytes\n",
		prog, nfile, ndir, have);
	return 0;
}

static int cmd_time(char **argv)
{
	double t0 = now();
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (!getenv("BENCH_STDOUT")) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0) {
				dup2(fd, 1);
				close(fd);
			}
		}
		execvp(argv[0], argv);
		fprintf(stderr, "%s: exec %s: %s\n", prog, argv[0],
			strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	report(t0);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s: %s failed (status 0x%x)\n", prog, argv[0],
			status);
		return 1;
	}
	return 0;
}

static int cmd_mount(const char *type, const char *src, const char *dst,
		     const char *data)
{
	double t0 = now();

	if (mount(src, dst, type, 0, data))
		die("mount -t %s %s %s -o %s", type, src, dst, data);
	report(t0);
	return 0;
}

static int cmd_as(char **argv)
{
	uid_t uid = num(argv[0]);
	gid_t gid = num(argv[1]);

	if (setgroups(0, NULL))
		die("setgroups");
	if (setresgid(gid, gid, gid))
		die("setresgid %u", gid);
	if (setresuid(uid, uid, uid))
		die("setresuid %u", uid);
	execvp(argv[2], argv + 2);
	die("exec %s", argv[2]);
	return 127;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s create|stat|readdir|rename|unlink DIR NDIRS NFILES\n"
		"       %s seqwrite FILE MIB | seqread FILE | randread FILE COUNT | mmapread FILE\n"
		"       %s uring FILE COUNT QD\n"
		"       %s walk DIR | mktree DIR MIB SEED | time CMD [ARG...]\n"
		"       %s as UID GID CMD [ARG...] | mount TYPE SRC DST DATA\n"
		"       %s par N create DIR NDIRS NFILES | par N stat DIR NDIRS NFILES PASSES\n",
		prog, prog, prog, prog, prog, prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *c;

	if (argc < 3)
		usage();
	c = argv[1];
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);

	if (!strcmp(c, "time"))
		return cmd_time(argv + 2);
	if (argc >= 5 && !strcmp(c, "as"))
		return cmd_as(argv + 2);
	if (argc == 6 && !strcmp(c, "mount"))
		return cmd_mount(argv[2], argv[3], argv[4], argv[5]);
	if (!strcmp(c, "walk"))
		return cmd_walk(argv[2]);
	if (!strcmp(c, "seqread"))
		return cmd_seqread(argv[2]);
	if (!strcmp(c, "mmapread"))
		return cmd_mmapread(argv[2]);
	if (argc == 4 && !strcmp(c, "seqwrite"))
		return cmd_seqwrite(argv[2], num(argv[3]));
	if (argc == 4 && !strcmp(c, "randread"))
		return cmd_randread(argv[2], num(argv[3]));
	if (argc == 5 && !strcmp(c, "uring"))
		return cmd_uring(argv[2], num(argv[3]), num(argv[4]));
	if ((argc == 7 || argc == 8) && !strcmp(c, "par")) {
		long ndirs = num(argv[5]);

		if (ndirs == 0 || ndirs > 1000)
			usage();
		if (argc == 7 && !strcmp(argv[3], "create"))
			return cmd_par(num(argv[2]), "create", argv[4], ndirs,
				       num(argv[6]), 0);
		if (argc == 8 && !strcmp(argv[3], "stat"))
			return cmd_par(num(argv[2]), "stat", argv[4], ndirs,
				       num(argv[6]), num(argv[7]));
		usage();
	}
	if (argc == 5 && !strcmp(c, "mktree"))
		return cmd_mktree(argv[2], num(argv[3]), num(argv[4]));
	if (argc == 5) {
		const char *dir = argv[2];
		long ndirs = num(argv[3]), nfiles = num(argv[4]);

		if (ndirs == 0 || ndirs > 1000)
			usage();
		if (!strcmp(c, "create"))
			return cmd_create(dir, ndirs, nfiles);
		if (!strcmp(c, "stat"))
			return cmd_stat(dir, ndirs, nfiles);
		if (!strcmp(c, "readdir"))
			return cmd_readdir(dir, ndirs, nfiles);
		if (!strcmp(c, "rename"))
			return cmd_rename(dir, ndirs, nfiles);
		if (!strcmp(c, "unlink"))
			return cmd_unlink(dir, ndirs, nfiles);
	}
	usage();
	return 2;
}
