// SPDX-License-Identifier: GPL-2.0
/*
 * Attacks on limits and accounting through the mounter's credentials,
 * from the issue 33 attacker's pass (item 2; FIFO pipes are
 * attack_limits.c).  Lower calls run with the mounter's creds (host root
 * less CAP_SYS_RESOURCE); whatever the kernel limits, counts or charges
 * per task, per user, per capability or per sysctl must bind a container
 * user through shiftfs exactly as it binds it on a plain tree.
 *
 * "The plain tree" is the tree a container would own without shiftfs:
 * the same files with every id shifted by ID_SHIFT (plain/), beside the
 * unshifted tree shiftfs shows (lower/ on mnt/).  Every probe runs as the
 * same caller, a container user (uid 1000, no capabilities) or container
 * root (every capability in its user namespace), once on plain/ and once
 * through mnt/, and the two outcomes must be the same.
 *
 * Built with -DACCT_PLANT, the legs through the mount run with host root's
 * capabilities and the caller's fsuid, none of its limits, in the root
 * cgroup: what a caller would get if shiftfs checked or charged as the
 * mounter.  Every test fails so (docs/security-model.md).
 */
#include "harness.h"
#include "shiftfs_util.h"

#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/capability.h>

#define U_ME		1000u	/* the caller, a container user */
#define U_OTHER		1001u	/* another container user */
#define G_OTHER		2000u	/* a group the caller is not in */

enum who { C_USER, C_ROOT };
static const char *const who_name[] = { "container user 1000",
					"container root" };

/* ---- the two trees ----------------------------------------------------- */

static int mk(const char *root, const char *name, mode_t mode, uid_t u,
	      gid_t g, unsigned int s)
{
	const char *p = P(root, name);
	int ret;

	if (S_ISDIR(mode))
		ret = mkdir(p, 0700);
	else if (S_ISFIFO(mode))
		ret = mkfifo(p, 0600);
	else
		ret = make_file(p, 0600, 0, 0);
	if (ret)
		return -1;
	if (lchown(p, u + s, g + s) || chmod(p, mode & 07777))
		return -1;
	return 0;
}

static int mklink(const char *root, const char *name, const char *target,
		  uid_t u, unsigned int s)
{
	const char *p = P(root, name);

	if (symlink(target, p) || lchown(p, u + s, u + s))
		return -1;
	return 0;
}

/* The same tree, its ids shifted by @s. */
static int build(const char *root, unsigned int s)
{
	char big[4096];
	int fd, i;

	memset(big, 'b', sizeof(big));
	if (mk(root, "target", S_IFREG | 0644, 0, 0, s) ||
	    write_file(P(root, "target"), "t") ||
	    /* sticky, world-writable, root's: /tmp */
	    mk(root, "tmp", S_IFDIR | 01777, 0, 0, s) ||
	    mklink(root, "tmp/ln_other", "../target", U_OTHER, s) ||
	    mklink(root, "tmp/ln_mine", "../target", U_ME, s) ||
	    mk(root, "tmp/reg_other", S_IFREG | 0666, U_OTHER, U_OTHER, s) ||
	    mk(root, "tmp/reg_mine", S_IFREG | 0666, U_ME, U_ME, s) ||
	    mk(root, "tmp/fifo_other", S_IFIFO | 0666, U_OTHER, U_OTHER, s) ||
	    mk(root, "tmp/fifo_mine", S_IFIFO | 0666, U_ME, U_ME, s) ||
	    /* the caller's now, another user's after a change underneath */
	    mklink(root, "tmp/ln_flip", "../target", U_ME, s) ||
	    mk(root, "tmp/reg_flip", S_IFREG | 0666, U_ME, U_ME, s) ||
	    mk(root, "tmp/fifo_flip", S_IFIFO | 0666, U_ME, U_ME, s) ||
	    mk(root, "shared_flip", S_IFREG | 0666, U_OTHER, U_OTHER, s) ||
	    /* sticky, group-writable by the caller's group: level 2 */
	    mk(root, "gtmp", S_IFDIR | 01770, 0, U_ME, s) ||
	    mk(root, "gtmp/reg_other", S_IFREG | 0666, U_OTHER, U_ME, s) ||
	    mk(root, "gtmp/fifo_other", S_IFIFO | 0666, U_OTHER, U_ME, s) ||
	    /* hardlink sources */
	    mk(root, "secret", S_IFREG | 0600, U_OTHER, U_OTHER, s) ||
	    mk(root, "shared", S_IFREG | 0666, U_OTHER, U_OTHER, s) ||
	    mk(root, "suid", S_IFREG | 04755, U_OTHER, U_OTHER, s) ||
	    mk(root, "mine", S_IFREG | 0600, U_ME, U_ME, s) ||
	    mk(root, "pub", S_IFDIR | 0777, 0, 0, s) ||
	    mk(root, "ro", S_IFDIR | 0755, 0, 0, s) ||
	    mk(root, "sgid", S_IFDIR | 02777, 0, G_OTHER, s) ||
	    mk(root, "src128k", S_IFREG | 0644, 0, 0, s))
		return -1;
	fd = open(P(root, "src128k"), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (i = 0; i < 32; i++)
		if (write(fd, big, sizeof(big)) != sizeof(big))
			break;
	close(fd);
	return i == 32 ? 0 : -1;
}

FIXTURE(acct) {
	struct world w;
	char plain[96];
};

FIXTURE_SETUP(acct)
{
	struct world *w = &self->w;

	ASSERT_EQ(world_setup(w), 0);
	snprintf(self->plain, sizeof(self->plain), "%s/plain", w->base);
	ASSERT_EQ(mkdir(self->plain, 0755), 0);
	ASSERT_EQ(build(self->plain, ID_SHIFT), 0);
	ASSERT_EQ(build(w->lower, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
}

FIXTURE_TEARDOWN(acct)
{
}

/* ---- callers ------------------------------------------------------------ */

struct call {
	int (*fn)(const struct call *c, const char *root, bool shifted);
	enum who who;
	const char *plain;
	const char *mnt;
	const char *lower;
	void *arg;
	bool shifted;		/* this leg: through the mount */
};

static void call_init(struct call *c, const struct harness_fixture_acct *f,
		      int (*fn)(const struct call *, const char *, bool),
		      void *arg)
{
	memset(c, 0, sizeof(*c));
	c->fn = fn;
	c->plain = f->plain;
	c->mnt = f->w.mnt;
	c->lower = f->w.lower;
	c->arg = arg;
}

static int become_user(void)
{
	if (setgroups(0, NULL) || setresgid(U_ME, U_ME, U_ME) ||
	    setresuid(U_ME, U_ME, U_ME))
		return -1;
	return 0;
}

/* Set in the planted mounter's leg (ACCT_PLANT): no limits of the caller. */
static bool planted;

/* One leg, in the container, as c->who. */
static int call_leg(void *arg)
{
	const struct call *c = arg;

	if (c->who == C_USER && become_user())
		return 120;
	return c->fn(c, c->shifted ? c->mnt : c->plain, c->shifted);
}

#ifdef ACCT_PLANT
/* The root cgroup, for the planted mounter's leg of the memcg test. */
static const char *plant_cgroot;

/*
 * The planted fault: the leg through the mount runs with the creds of
 * the lower calls, host root's capabilities and the caller's fsuid and
 * fsgid (shown through the mount as the caller's), in the initial
 * namespaces, bound by none of the caller's limits: what the caller
 * would get if shiftfs checked and charged as the mounter.
 */
static int as_mounter(const struct call *c)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	unsigned int id = ID_SHIFT + (c->who == C_USER ? U_ME : 0);
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		char self[32];

		planted = true;
		setfsgid(id);
		setfsuid(id);	/* drops the fs capabilities: back they come */
		if (syscall(SYS_capget, &h, d))
			_exit(118);
		d[0].effective = d[0].permitted;
		d[1].effective = d[1].permitted;
		if (syscall(SYS_capset, &h, d))
			_exit(118);
		if (plant_cgroot) {
			snprintf(self, sizeof(self), "%d", getpid());
			write_file(P(plant_cgroot, "cgroup.procs"), self);
		}
		_exit(c->fn(c, c->mnt, true) & 0xff);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
#endif

/* The probe on plain/, then through the mount, as the same caller. */
static int run_call(struct call *c)
{
	int ret;

	c->shifted = false;
	ret = in_container(call_leg, c);
	if (ret)
		return ret;
	c->shifted = true;
#ifdef ACCT_PLANT
	return as_mounter(c);
#else
	return in_container(call_leg, c);
#endif
}

/* Shared between the callers (forked, in user namespaces) and the test. */
static void *shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static const char *err_name(int e)
{
	return e ? strerror(e) : "ok";
}

static int sysctl_get(const char *name, char *buf, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	return read_file(path, buf, len) > 0 ? 0 : -1;
}

static int sysctl_set(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	return write_file(path, val);
}

/* ---- protected_symlinks, _hardlinks, _fifos, _regular ------------------- */

/*
 * The sysctls are checked by the VFS: following a link during the walk
 * (may_follow_link()), linkat() (may_linkat()), an O_CREAT open of what
 * exists (may_create_in_sticky()); through the mount, on our inodes, with
 * the caller's creds, before any lower call.  The lower calls (the lower
 * get_link, vfs_link(), the lower open without O_CREAT) check none of
 * them: the mounter could not be held to them anyway.
 */
enum probe {
	PR_FOLLOW_OTHER, PR_FOLLOW_MINE,
	PR_LINK_SECRET, PR_LINK_SHARED, PR_LINK_SUID, PR_LINK_MINE,
	PR_CREAT_REG, PR_CREAT_REG_MINE, PR_CREAT_FIFO, PR_CREAT_FIFO_MINE,
	PR_CREAT_REG_G, PR_CREAT_FIFO_G,
	NR_PROBES
};

static const char *const probe_name[] = {
	"open tmp/ln_other (1001's link, sticky /tmp)",
	"open tmp/ln_mine",
	"link 1001's 0600 secret",
	"link 1001's 0666 shared",
	"link 1001's setuid file",
	"link my own 0600 file",
	"O_CREAT open of 1001's file in sticky /tmp",
	"O_CREAT open of my file in sticky /tmp",
	"O_CREAT open of 1001's FIFO in sticky /tmp",
	"O_CREAT open of my FIFO in sticky /tmp",
	"O_CREAT open of 1001's file, group-writable sticky dir",
	"O_CREAT open of 1001's FIFO, group-writable sticky dir",
};

struct protected_res {
	int res[2][NR_PROBES];	/* [shifted][probe]: 0 or errno */
};

static int open_err(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int link_err(const char *root, const char *src)
{
	char dst[64];
	int e = 0;

	snprintf(dst, sizeof(dst), "pub/l_%s_%d", src, getpid());
	if (link(P(root, src), P(root, dst)))
		e = errno;
	else
		unlink(P(root, dst));
	return e;
}

static int protected_probes(const struct call *c, const char *root,
			    bool shifted)
{
	struct protected_res *r = c->arg;
	int *out = r->res[shifted];
	const int cw = O_CREAT | O_WRONLY, cf = O_CREAT | O_RDWR | O_NONBLOCK;

	out[PR_FOLLOW_OTHER] = open_err(P(root, "tmp/ln_other"), O_RDONLY);
	out[PR_FOLLOW_MINE] = open_err(P(root, "tmp/ln_mine"), O_RDONLY);
	out[PR_LINK_SECRET] = link_err(root, "secret");
	out[PR_LINK_SHARED] = link_err(root, "shared");
	out[PR_LINK_SUID] = link_err(root, "suid");
	out[PR_LINK_MINE] = link_err(root, "mine");
	out[PR_CREAT_REG] = open_err(P(root, "tmp/reg_other"), cw);
	out[PR_CREAT_REG_MINE] = open_err(P(root, "tmp/reg_mine"), cw);
	out[PR_CREAT_FIFO] = open_err(P(root, "tmp/fifo_other"), cf);
	out[PR_CREAT_FIFO_MINE] = open_err(P(root, "tmp/fifo_mine"), cf);
	out[PR_CREAT_REG_G] = open_err(P(root, "gtmp/reg_other"), cw);
	out[PR_CREAT_FIFO_G] = open_err(P(root, "gtmp/fifo_other"), cf);
	return 0;
}

static const char *const protected_sysctls[] = {
	"fs/protected_symlinks", "fs/protected_hardlinks",
	"fs/protected_fifos", "fs/protected_regular",
};

#define NR_PSYSCTL 4

static int protected_set(const char *sym, const char *hard, const char *fifo,
			 const char *reg)
{
	return sysctl_set(protected_sysctls[0], sym) ||
	       sysctl_set(protected_sysctls[1], hard) ||
	       sysctl_set(protected_sysctls[2], fifo) ||
	       sysctl_set(protected_sysctls[3], reg);
}

/*
 * Every caller, at every level of the sysctls: the same outcome on plain/
 * and through the mount.  How many probes the plain tree refused (that
 * they are refused at all is the point: a level that refuses nothing
 * proves nothing).
 */
static int protected_compare(const struct harness_fixture_acct *f,
			     const char *const level[NR_PSYSCTL],
			     int *mismatches)
{
	struct protected_res *r = shared(sizeof(*r));
	struct call c;
	int refused = 0, i, w;

	if (!r)
		return -1;
	call_init(&c, f, protected_probes, r);
	if (protected_set(level[0], level[1], level[2], level[3]))
		return -1;
	for (w = C_USER; w <= C_ROOT; w++) {
		c.who = w;
		memset(r, 0xff, sizeof(*r));
		if (run_call(&c))
			return -1;
		for (i = 0; i < NR_PROBES; i++) {
			bool same = r->res[0][i] == r->res[1][i];

			if (r->res[0][i])
				refused++;
			if (same && !r->res[0][i])
				continue;
			printf("# symlinks=%s hardlinks=%s fifos=%s regular=%s, %s, %s: plain %s, shiftfs %s%s\n",
			       level[0], level[1], level[2], level[3],
			       who_name[w], probe_name[i],
			       err_name(r->res[0][i]), err_name(r->res[1][i]),
			       same ? "" : "  <-- DIFFERS");
			if (!same)
				(*mismatches)++;
		}
	}
	munmap(r, sizeof(*r));
	return refused;
}

FIXTURE(pworld) {
	struct harness_fixture_acct a;
	char saved[NR_PSYSCTL][16];
};

FIXTURE_SETUP(pworld)
{
	int i;

	harness_setup_acct(&self->a);
	for (i = 0; i < NR_PSYSCTL; i++)
		ASSERT_EQ(sysctl_get(protected_sysctls[i], self->saved[i],
				     sizeof(self->saved[i])), 0);
}

FIXTURE_TEARDOWN(pworld)
{
	int i;

	for (i = 0; i < NR_PSYSCTL; i++)
		EXPECT_EQ(sysctl_set(protected_sysctls[i], self->saved[i]), 0);
}

/*
 * Level 0 (nothing protected), 1 (world-writable sticky directories),
 * 2 (group-writable ones too): every probe, both callers.
 */
TEST_F(pworld, protected_sysctls_hold_as_on_the_plain_tree)
{
	static const char *const levels[][NR_PSYSCTL] = {
		{ "0", "0", "0", "0" },
		{ "1", "1", "1", "1" },
		{ "1", "1", "2", "2" },
	};
	int refused[3], mismatches = 0, i;

	for (i = 0; i < 3; i++)
		refused[i] = protected_compare(&self->a, levels[i],
					       &mismatches);
	EXPECT_EQ(mismatches, 0);
	for (i = 0; i < 3; i++)
		EXPECT_GE(refused[i], 0);
	/* levels 1 and 2 refuse more than 0 does: the sysctls bite */
	EXPECT_GT(refused[1], refused[0]);
	EXPECT_GT(refused[2], refused[1]);
}

/*
 * The same checks after a change made underneath, by the host or through
 * another mount of the tree (another container's root chowns and chmods
 * in a tree they share): the caller has been through the mount before,
 * so our inodes are cached, then a link and files of its own become
 * another user's and a safe hardlink source becomes setuid.  On the
 * plain tree the next follow, O_CREAT open and link are refused; the VFS
 * makes those checks on our inode's owner and mode, read in RCU walk
 * where nothing but our ->permission() (not called on a symlink, nor
 * before these checks) refreshed them from the lower inode.
 */
enum flip_probe { FP_FOLLOW, FP_CREAT_REG, FP_CREAT_FIFO, FP_LINK, NR_FP };

static const char *const fp_name[] = {
	"open tmp/ln_flip", "O_CREAT open of tmp/reg_flip",
	"O_CREAT open of tmp/fifo_flip", "link shared_flip",
};

struct flip_res {
	int phase;
	int r[2][2][NR_FP];	/* [phase][shifted][probe] */
};

static int flip_probes(const struct call *c, const char *root, bool shifted)
{
	struct flip_res *res = c->arg;
	int *o = res->r[res->phase][shifted];

	o[FP_FOLLOW] = open_err(P(root, "tmp/ln_flip"), O_RDONLY);
	o[FP_CREAT_REG] = open_err(P(root, "tmp/reg_flip"), O_CREAT | O_WRONLY);
	o[FP_CREAT_FIFO] = open_err(P(root, "tmp/fifo_flip"),
				    O_CREAT | O_RDWR | O_NONBLOCK);
	o[FP_LINK] = link_err(root, "shared_flip");
	return 0;
}

/* What another user with the power to (host root) does underneath. */
static int flip_owners(const char *root, unsigned int s)
{
	if (lchown(P(root, "tmp/ln_flip"), U_OTHER + s, U_OTHER + s) ||
	    chown(P(root, "tmp/reg_flip"), U_OTHER + s, U_OTHER + s) ||
	    chown(P(root, "tmp/fifo_flip"), U_OTHER + s, U_OTHER + s) ||
	    chmod(P(root, "shared_flip"), 04777))
		return -1;
	return 0;
}

TEST_F(pworld, protected_sysctls_see_changes_made_underneath)
{
	struct flip_res *r = shared(sizeof(*r));
	struct call c;
	int i, ph;

	ASSERT_NE(r, NULL);
	ASSERT_EQ(protected_set("1", "1", "1", "1"), 0);
	call_init(&c, &self->a, flip_probes, r);
	c.who = C_USER;
	r->phase = 0;
	ASSERT_EQ(run_call(&c), 0);
	ASSERT_EQ(flip_owners(self->a.plain, ID_SHIFT), 0);
	ASSERT_EQ(flip_owners(self->a.w.lower, 0), 0);
	r->phase = 1;
	ASSERT_EQ(run_call(&c), 0);
	for (ph = 0; ph < 2; ph++)
		for (i = 0; i < NR_FP; i++) {
			bool same = r->r[ph][0][i] == r->r[ph][1][i];

			printf("# %s, %s %s: plain %s, shiftfs %s%s\n",
			       who_name[C_USER], ph ? "after" : "before",
			       fp_name[i], err_name(r->r[ph][0][i]),
			       err_name(r->r[ph][1][i]),
			       same ? "" : "  <-- DIFFERS");
			EXPECT_EQ(r->r[ph][1][i], r->r[ph][0][i]);
			/* before: all allowed; after: all refused */
			if (ph)
				EXPECT_NE(r->r[ph][0][i], 0);
			else
				EXPECT_EQ(r->r[ph][0][i], 0);
		}
}

/* ---- RLIMIT_FSIZE --------------------------------------------------------- */

/*
 * The limit is the task's, read by the lower filesystem's write checks
 * (generic_write_checks(), inode_newsize_ok()) in the caller's own task:
 * creds play no part.  A write, truncate, fallocate or copy past it must
 * fail with EFBIG and SIGXFSZ through the mount as on the plain tree.
 */
#define FSIZE_LIMIT	(64 * 1024)

enum fsz_op {
	FZ_WRITE, FZ_WRITE_PAST, FZ_PWRITE_FAR, FZ_APPEND, FZ_FTRUNCATE,
	FZ_TRUNCATE, FZ_FALLOCATE, FZ_COPY_RANGE, FZ_WRITEV_FAR, NR_FZ
};

static const char *const fz_name[] = {
	"write 96 KiB at 0", "write 4 KiB at the limit", "pwrite at 1 MiB",
	"O_APPEND write at the limit", "ftruncate to 1 MiB",
	"truncate to 1 MiB", "fallocate to 1 MiB",
	"copy_file_range 128 KiB", "pwritev2 at 1 MiB",
};

struct fz_one {
	long ret;
	int err;
	int sigs;
	long size;
};

struct fz_res {
	struct fz_one r[2][NR_FZ];
};

static volatile sig_atomic_t nr_xfsz;

static void on_xfsz(int sig)
{
	(void)sig;
	nr_xfsz++;
}

static void fz_record(struct fz_one *o, long ret, const char *path)
{
	struct stat st;

	o->ret = ret;
	o->err = ret < 0 ? errno : 0;
	o->sigs = nr_xfsz;
	nr_xfsz = 0;
	o->size = stat(path, &st) ? -1 : (long)st.st_size;
}

static int fsize_probes(const struct call *c, const char *root, bool shifted)
{
	struct fz_res *res = c->arg;
	struct fz_one *o = res->r[shifted];
	static char buf[96 * 1024];
	struct rlimit rl = { FSIZE_LIMIT, FSIZE_LIMIT };
	struct iovec iov = { buf, 4096 };
	char name[64], path[NR_FZ][128];
	int fd[NR_FZ], src, i;

	memset(buf, 'x', sizeof(buf));
	signal(SIGXFSZ, on_xfsz);
	for (i = 0; i < NR_FZ; i++) {
		snprintf(name, sizeof(name), "pub/fz%d_%d", i, getpid());
		snprintf(path[i], sizeof(path[i]), "%s", P(root, name));
		fd[i] = open(path[i], O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC,
			     0644);
		if (fd[i] < 0)
			return 10;
	}
	/* files at the limit for the ops that start there */
	for (i = FZ_WRITE_PAST; i <= FZ_APPEND; i++)
		if (pwrite(fd[i], buf, FSIZE_LIMIT, 0) != FSIZE_LIMIT)
			return 11;
	src = open(P(root, "src128k"), O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return 12;
	close(fd[FZ_APPEND]);
	fd[FZ_APPEND] = open(path[FZ_APPEND], O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd[FZ_APPEND] < 0)
		return 13;

	if (!planted && setrlimit(RLIMIT_FSIZE, &rl))
		return 14;
	nr_xfsz = 0;
	fz_record(&o[FZ_WRITE], write(fd[FZ_WRITE], buf, sizeof(buf)),
		  path[FZ_WRITE]);
	fz_record(&o[FZ_WRITE_PAST], pwrite(fd[FZ_WRITE_PAST], buf, 4096,
					    FSIZE_LIMIT), path[FZ_WRITE_PAST]);
	fz_record(&o[FZ_PWRITE_FAR], pwrite(fd[FZ_PWRITE_FAR], buf, 4096,
					    1 << 20), path[FZ_PWRITE_FAR]);
	fz_record(&o[FZ_APPEND], write(fd[FZ_APPEND], buf, 4096),
		  path[FZ_APPEND]);
	fz_record(&o[FZ_FTRUNCATE], ftruncate(fd[FZ_FTRUNCATE], 1 << 20),
		  path[FZ_FTRUNCATE]);
	fz_record(&o[FZ_TRUNCATE], truncate(path[FZ_TRUNCATE], 1 << 20),
		  path[FZ_TRUNCATE]);
	fz_record(&o[FZ_FALLOCATE], fallocate(fd[FZ_FALLOCATE], 0, 0, 1 << 20),
		  path[FZ_FALLOCATE]);
	fz_record(&o[FZ_COPY_RANGE],
		  copy_file_range(src, NULL, fd[FZ_COPY_RANGE], NULL,
				  128 * 1024, 0), path[FZ_COPY_RANGE]);
	fz_record(&o[FZ_WRITEV_FAR], pwritev2(fd[FZ_WRITEV_FAR], &iov, 1,
					      1 << 20, 0),
		  path[FZ_WRITEV_FAR]);
	for (i = 0; i < NR_FZ; i++)
		close(fd[i]);
	close(src);
	return 0;
}

static int fsize_compare(const struct harness_fixture_acct *f, enum who w)
{
	struct fz_res *r = shared(sizeof(*r));
	struct call c;
	int bad = 0, refused = 0, i;

	if (!r)
		return -1;
	call_init(&c, f, fsize_probes, r);
	c.who = w;
	if (run_call(&c))
		return -1;
	for (i = 0; i < NR_FZ; i++) {
		const struct fz_one *p = &r->r[0][i], *s = &r->r[1][i];
		bool same = p->ret == s->ret && p->err == s->err &&
			    p->sigs == s->sigs && p->size == s->size;

		if (p->err == EFBIG && p->sigs)
			refused++;
		printf("# %s, %s: plain %ld %s SIGXFSZ x%d size %ld; shiftfs %ld %s SIGXFSZ x%d size %ld%s\n",
		       who_name[w], fz_name[i], p->ret, err_name(p->err),
		       p->sigs, p->size, s->ret, err_name(s->err), s->sigs,
		       s->size, same ? "" : "  <-- DIFFERS");
		if (!same)
			bad++;
	}
	munmap(r, sizeof(*r));
	/* the plain tree refuses at least the write past and the truncates */
	return refused >= 4 ? bad : 100 + bad;
}

TEST_F(acct, rlimit_fsize_holds_through_the_mount)
{
	EXPECT_EQ(fsize_compare(self, C_USER), 0);
	EXPECT_EQ(fsize_compare(self, C_ROOT), 0);
}

/* ---- O_TMPFILE and linkat -------------------------------------------------- */

/*
 * An unnamed file is made by the lower filesystem with the mounter's
 * creds and the caller's ids (module/dir.c shiftfs_tmpfile()): it must be
 * the caller's, made only where the caller may create, keep no setgid bit
 * a non-member asked for, be linkable exactly where the caller may
 * create (never where the mounter may) and never if O_EXCL said so.
 */
enum tmp_probe {
	TP_IN_PUB, TP_IN_RO, TP_OWNER, TP_SGID, TP_LINK_PUB, TP_LINK_RO,
	TP_EXCL_LINK, TP_EMPTY_PATH, NR_TP
};

static const char *const tp_name[] = {
	"O_TMPFILE in pub (0777)", "O_TMPFILE in ro (root's 0755)",
	"owner (0 if the caller's ids)", "setgid bit of 02755 in 2000's sgid dir",
	"link into pub", "link into ro", "link of an O_EXCL tmpfile",
	"linkat AT_EMPTY_PATH",
};

struct tmp_res {
	int r[2][NR_TP];
};

static int tmp_link(int fd, const char *root, const char *dir)
{
	char proc[64], name[64];
	int e = 0;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	snprintf(name, sizeof(name), "%s/t_%d", dir, getpid());
	if (linkat(AT_FDCWD, proc, AT_FDCWD, P(root, name), AT_SYMLINK_FOLLOW))
		e = errno;
	else
		unlink(P(root, name));
	return e;
}

static int tmpfile_probes(const struct call *c, const char *root,
			  bool shifted)
{
	struct tmp_res *res = c->arg;
	int *o = res->r[shifted];
	uid_t me = c->who == C_USER ? U_ME : 0;
	char name[64];
	struct stat st;
	int fd;

	umask(0);
	fd = open(P(root, "ro"), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	o[TP_IN_RO] = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);

	fd = open(P(root, "sgid"), O_TMPFILE | O_RDWR | O_CLOEXEC, 02755);
	if (fd < 0 || fstat(fd, &st))
		return 10;
	o[TP_SGID] = st.st_mode & 07777;
	close(fd);

	fd = open(P(root, "pub"), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	o[TP_IN_PUB] = fd < 0 ? errno : 0;
	if (fd < 0)
		return 11;
	/* as the caller sees it: its own ids in the container */
	if (fstat(fd, &st))
		return 12;
	o[TP_OWNER] = st.st_uid == me && st.st_gid == me ? 0 : (int)st.st_uid;
	o[TP_LINK_PUB] = tmp_link(fd, root, "pub");
	close(fd);
	/* a fresh one: the link above made this one unlinkable again */
	fd = open(P(root, "pub"), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return 14;
	o[TP_LINK_RO] = tmp_link(fd, root, "ro");
	snprintf(name, sizeof(name), "pub/e_%d", getpid());
	o[TP_EMPTY_PATH] = 0;
	if (linkat(fd, "", AT_FDCWD, P(root, name), AT_EMPTY_PATH))
		o[TP_EMPTY_PATH] = errno;
	else
		unlink(P(root, name));
	close(fd);

	fd = open(P(root, "pub"), O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return 13;
	o[TP_EXCL_LINK] = tmp_link(fd, root, "pub");
	close(fd);
	return 0;
}

static int tmpfile_compare(const struct harness_fixture_acct *f, enum who w)
{
	struct tmp_res *r = shared(sizeof(*r));
	struct call c;
	int bad = 0, i;

	if (!r)
		return -1;
	call_init(&c, f, tmpfile_probes, r);
	c.who = w;
	if (run_call(&c))
		return -1;
	for (i = 0; i < NR_TP; i++) {
		bool same = r->r[0][i] == r->r[1][i];
		bool is_mode = i == TP_SGID;

		if (is_mode)
			printf("# %s, %s: plain %o, shiftfs %o%s\n",
			       who_name[w], tp_name[i], r->r[0][i],
			       r->r[1][i], same ? "" : "  <-- DIFFERS");
		else
			printf("# %s, %s: plain %s, shiftfs %s%s\n",
			       who_name[w], tp_name[i], err_name(r->r[0][i]),
			       err_name(r->r[1][i]),
			       same ? "" : "  <-- DIFFERS");
		if (!same)
			bad++;
	}
	/* the plain tree refuses these to a container user */
	if (w == C_USER && (r->r[0][TP_IN_RO] != EACCES ||
			    r->r[0][TP_LINK_RO] != EACCES ||
			    r->r[0][TP_EXCL_LINK] != ENOENT ||
			    (r->r[0][TP_SGID] & S_ISGID)))
		bad += 100;
	munmap(r, sizeof(*r));
	return bad;
}

TEST_F(acct, tmpfile_and_linkat_as_on_the_plain_tree)
{
	struct stat st;

	EXPECT_EQ(tmpfile_compare(self, C_USER), 0);
	EXPECT_EQ(tmpfile_compare(self, C_ROOT), 0);
	/* and nothing linked stayed behind underneath */
	EXPECT_EQ(stat(P(self->w.lower, "ro"), &st), 0);
	EXPECT_EQ(st.st_nlink, 2u);
}

/* ---- file locks: leases ----------------------------------------------------- */

/*
 * Locks are counted nowhere per user (RLIMIT_LOCKS binds nothing since
 * 2.6); what is checked per caller is who may take a lease: the owner or
 * CAP_LEASE (generic_setlease()).  Through the mount leases are refused
 * (module/file.c): a lease taken with the mounter's creds would be one
 * the caller could never have had.  So: wherever the plain tree refuses
 * a lease, the mount refuses it; the mount grants none at all.
 */
enum lease_probe { LP_OTHERS_READ, LP_OWN_READ, LP_OWN_WRITE, NR_LP };

static const char *const lp_name[] = {
	"read lease on 1001's 0666 file", "read lease on my file",
	"write lease on my file",
};

struct lease_res {
	int r[2][NR_LP];
};

static int lease_err(const char *path, int flags, int type)
{
	int fd = open(path, flags | O_CLOEXEC), e = 0;

	if (fd < 0)
		return 1000 + errno;
	if (fcntl(fd, F_SETLEASE, type))
		e = errno;
	else if (fcntl(fd, F_GETLEASE) != type)
		e = 2000;
	close(fd);
	return e;
}

static int lease_probes(const struct call *c, const char *root, bool shifted)
{
	struct lease_res *res = c->arg;
	int *o = res->r[shifted];

#ifdef ACCT_PLANT
	/* planted: the lease taken as the mounter, on the lower file */
	if (shifted)
		root = c->lower;
#endif

	o[LP_OTHERS_READ] = lease_err(P(root, "tmp/reg_other"), O_RDONLY,
				      F_RDLCK);
	o[LP_OWN_READ] = lease_err(P(root, "tmp/reg_mine"), O_RDONLY, F_RDLCK);
	o[LP_OWN_WRITE] = lease_err(P(root, "tmp/reg_mine"), O_RDWR, F_WRLCK);
	return 0;
}

TEST_F(acct, leases_never_granted_beyond_the_plain_tree)
{
	struct lease_res *r = shared(sizeof(*r));
	struct call c;
	int w, i, granted = 0, refused = 0;

	ASSERT_NE(r, NULL);
	call_init(&c, self, lease_probes, r);
	for (w = C_USER; w <= C_ROOT; w++) {
		c.who = w;
		ASSERT_EQ(run_call(&c), 0);
		for (i = 0; i < NR_LP; i++) {
			printf("# %s, %s: plain %s, shiftfs %s\n",
			       who_name[w], lp_name[i], err_name(r->r[0][i]),
			       err_name(r->r[1][i]));
			if (r->r[0][i])
				refused++;
			/* granted through the mount: never */
			if (!r->r[1][i])
				granted++;
		}
	}
	EXPECT_EQ(granted, 0);
	/* the plain tree refuses 1001's file to container user 1000 */
	EXPECT_GT(refused, 0);
}

/* ---- inotify ---------------------------------------------------------------- */

/*
 * Watches on our inodes, made in the caller's task, counted against the
 * caller's user (fs.inotify.max_user_watches, per user namespace): no
 * lower call.  A host user 101000 (container 1000) with N watches allowed
 * gets N through the mount, then none on the plain tree while it holds
 * them; access as for reading (a 0600 file of another user: EACCES).
 */
#define NR_WATCHES	8
#define SYSCTL_WATCHES	"fs/inotify/max_user_watches"

struct watch_arg {
	const char *plain;
	const char *mnt;
};

static int add_watches(int fd, const char *root, int max)
{
	char name[32];
	int i, n = 0;

	for (i = 0; i < max; i++) {
		snprintf(name, sizeof(name), "pub/w%d", i);
		if (inotify_add_watch(fd, P(root, name), IN_MODIFY) < 0) {
			if (errno != ENOSPC)
				return -errno;
			break;
		}
		n++;
	}
	return n;
}

static int watches_as_caller(void *p)
{
	const struct watch_arg *a = p;
	int fd1, fd2, n_shift, n_plain_while, n_plain, e_plain, e_shift;

#ifdef ACCT_PLANT
	/* planted: the watches through the mount are the mounter's */
	if (seteuid(0))
		return 9;
#endif
	fd1 = inotify_init1(IN_CLOEXEC);
	n_shift = add_watches(fd1, a->mnt, 2 * NR_WATCHES);
#ifdef ACCT_PLANT
	if (seteuid(ID_SHIFT + U_ME))
		return 9;
#endif
	fd2 = inotify_init1(IN_CLOEXEC);
	if (fd1 < 0 || fd2 < 0)
		return 10;
	n_plain_while = add_watches(fd2, a->plain, 2 * NR_WATCHES);
	close(fd1);
	close(fd2);
	usleep(100000);		/* marks go with the groups */
	fd1 = inotify_init1(IN_CLOEXEC);
	n_plain = add_watches(fd1, a->plain, 2 * NR_WATCHES);
	e_plain = inotify_add_watch(fd1, P(a->plain, "secret"), IN_MODIFY) < 0 ?
		  errno : 0;
	close(fd1);
	usleep(100000);
	fd1 = inotify_init1(IN_CLOEXEC);
	e_shift = inotify_add_watch(fd1, P(a->mnt, "secret"), IN_MODIFY) < 0 ?
		  errno : 0;
	close(fd1);
	printf("# host uid %u, %d watches allowed: %d through the mount, then %d on the plain tree; %d on the plain tree alone\n",
	       ID_SHIFT + U_ME, NR_WATCHES, n_shift, n_plain_while, n_plain);
	printf("# watch on 1001's 0600 file: plain %s, shiftfs %s\n",
	       err_name(e_plain), err_name(e_shift));
	if (n_plain != NR_WATCHES)
		return 11;	/* the limit does not bite: nothing proven */
	if (n_shift != n_plain || n_plain_while != 0)
		return 12;
	if (e_plain != EACCES || e_shift != e_plain)
		return 13;
	return 0;
}

static int as_host(uid_t id, int (*fn)(void *), void *arg)
{
#ifdef ACCT_PLANT
	/* root saved, for the planted mounter's watches */
	return run_as_host_user(id, 0, fn, arg);
#else
	return run_as_host_user(id, id, fn, arg);
#endif
}

TEST_F(acct, inotify_watches_count_as_the_callers)
{
	struct watch_arg a = { self->plain, self->w.mnt };
	char saved[32], name[32];
	int i;

	for (i = 0; i < 2 * NR_WATCHES; i++) {
		snprintf(name, sizeof(name), "pub/w%d", i);
		ASSERT_EQ(make_file(P(self->plain, name), 0644, ID_SHIFT,
				    ID_SHIFT), 0);
		ASSERT_EQ(make_file(P(self->w.lower, name), 0644, 0, 0), 0);
	}
	ASSERT_EQ(sysctl_get(SYSCTL_WATCHES, saved, sizeof(saved)), 0);
	ASSERT_EQ(sysctl_set(SYSCTL_WATCHES, "8"), 0);
	EXPECT_EQ(as_host(ID_SHIFT + U_ME, watches_as_caller, &a), 0);
	EXPECT_EQ(sysctl_set(SYSCTL_WATCHES, saved), 0);
}

/* ---- RLIMIT_NOFILE -------------------------------------------------------- */

/*
 * A lower open holds a struct file but no descriptor: the caller's fds
 * are its own opens, the same count through the mount as underneath, for
 * files, FIFOs and O_TMPFILE alike.
 */
#define NOFILE_LIMIT	24

static int count_opens(const char *path, int flags)
{
	int fds[64], n = 0, i, e;

	while (n < 64) {
		fds[n] = open(path, flags | O_CLOEXEC, 0600);
		if (fds[n] < 0)
			break;
		n++;
	}
	e = n < 64 ? errno : EMFILE;	/* 64: no limit met */
	for (i = 0; i < n; i++)
		close(fds[i]);
	return e == EMFILE ? n : -e;
}

struct nofile_res {
	int r[2][3];
};

static int nofile_probes(const struct call *c, const char *root,
			 bool shifted)
{
	struct nofile_res *res = c->arg;
	struct rlimit rl = { NOFILE_LIMIT, NOFILE_LIMIT };

	if (!planted && setrlimit(RLIMIT_NOFILE, &rl))
		return 10;
	res->r[shifted][0] = count_opens(P(root, "target"), O_RDONLY);
	res->r[shifted][1] = count_opens(P(root, "tmp/fifo_mine"),
					 O_RDWR | O_NONBLOCK);
	res->r[shifted][2] = count_opens(P(root, "pub"), O_TMPFILE | O_RDWR);
	return 0;
}

TEST_F(acct, rlimit_nofile_counts_the_callers_fds_only)
{
	static const char *const what[] = { "file", "FIFO", "O_TMPFILE" };
	struct nofile_res *r = shared(sizeof(*r));
	struct call c;
	int w, i;

	ASSERT_NE(r, NULL);
	call_init(&c, self, nofile_probes, r);
	for (w = C_USER; w <= C_ROOT; w++) {
		c.who = w;
		ASSERT_EQ(run_call(&c), 0);
		for (i = 0; i < 3; i++) {
			printf("# %s, RLIMIT_NOFILE %d, %s opens: plain %d, shiftfs %d\n",
			       who_name[w], NOFILE_LIMIT, what[i], r->r[0][i],
			       r->r[1][i]);
			EXPECT_GT(r->r[0][i], 0);
			EXPECT_EQ(r->r[1][i], r->r[0][i]);
		}
	}
}

/* ---- memory cgroup ---------------------------------------------------------- */

/*
 * Page cache and slab are charged to the memory cgroup of the task that
 * allocates them, whatever its creds: the lower write, the page fault on
 * the real file's mapping and the lower inode all happen in the caller's
 * task.  A container user in a cgroup of its own is charged as much for
 * writing through the mount as for writing to the plain tree (the
 * mounter's cgroup, the root one, none of it).
 */
#define MEMCG_DATA	(16 << 20)
#define MEMCG_FILES	2000

struct memcg_arg {
	const char *cg;
	const char *plain;
	const char *mnt;
	long d[2][3];		/* [shifted][write, mmap, files] bytes */
};

static long memcg_current(const char *cg)
{
	char buf[64];

	if (read_file(P(cg, "memory.current"), buf, sizeof(buf)) <= 0)
		return -1;
	return atol(buf);
}

static int memcg_probes(const struct call *c, const char *root, bool shifted)
{
	struct memcg_arg *a = c->arg;
	static char buf[1 << 20];
	char name[64];
	long before;
	char *m;
	int fd, i;

	memset(buf, 'm', sizeof(buf));
	before = memcg_current(a->cg);
	snprintf(name, sizeof(name), "pub/data_%d", getpid());
	fd = open(P(root, name), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return 10;
	for (i = 0; i < MEMCG_DATA / (int)sizeof(buf); i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return 11;
	close(fd);
	a->d[shifted][0] = memcg_current(a->cg) - before;

	before = memcg_current(a->cg);
	snprintf(name, sizeof(name), "pub/map_%d", getpid());
	fd = open(P(root, name), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, MEMCG_DATA))
		return 12;
	m = mmap(NULL, MEMCG_DATA, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return 13;
	for (i = 0; i < MEMCG_DATA; i += 4096)
		m[i] = 1;
	munmap(m, MEMCG_DATA);
	close(fd);
	a->d[shifted][1] = memcg_current(a->cg) - before;

	before = memcg_current(a->cg);
	snprintf(name, sizeof(name), "pub/many_%d", getpid());
	if (mkdir(P(root, name), 0700))
		return 14;
	for (i = 0; i < MEMCG_FILES; i++) {
		char f[96];

		snprintf(f, sizeof(f), "%s/%d", name, i);
		fd = open(P(root, f), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
			  0600);
		if (fd < 0)
			return 15;
		close(fd);
	}
	a->d[shifted][2] = memcg_current(a->cg) - before;
	return 0;
}

static int memcg_in_cgroup(void *p)
{
	struct call *c = p;

	return run_call(c);
}

TEST_F(acct, memcg_charges_the_caller_through_the_mount)
{
	static const char *const what[] = { "write", "mmap write",
					    "2000 files (slab)" };
	struct memcg_arg *a = shared(sizeof(*a));
	struct call c;
	char cgroot[128], cg[160], ctl[256], pid[32];
	int status, i;
	pid_t child;

	ASSERT_NE(a, NULL);
	snprintf(cgroot, sizeof(cgroot), "%s/cg", self->w.base);
	ASSERT_EQ(mkdir(cgroot, 0755), 0);
	if (mount("cgroup2", cgroot, "cgroup2", 0, NULL))
		SKIP("no cgroup v2 in this kernel: %s", strerror(errno));
	if (read_file(P(cgroot, "cgroup.controllers"), ctl, sizeof(ctl)) < 0 ||
	    !strstr(ctl, "memory"))
		SKIP("no memory controller in cgroup v2 (\"%.100s\")", ctl);
	if (write_file(P(cgroot, "cgroup.subtree_control"), "+memory"))
		SKIP("cannot enable the memory controller: %s",
		     strerror(errno));
	snprintf(cg, sizeof(cg), "%s/acct%d", cgroot, getpid());
	ASSERT_EQ(mkdir(cg, 0755), 0);
	a->cg = cg;
	a->plain = self->plain;
	a->mnt = self->w.mnt;
	call_init(&c, self, memcg_probes, a);
	c.who = C_USER;
#ifdef ACCT_PLANT
	plant_cgroot = cgroot;
#endif

	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (write_file(P(cg, "cgroup.procs"), pid))
			_exit(119);
		_exit(memcg_in_cgroup(&c));
	}
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	for (i = 0; i < 3; i++) {
		printf("# %s, %s: cgroup charged %ld KiB on the plain tree, %ld KiB through the mount\n",
		       who_name[C_USER], what[i], a->d[0][i] / 1024,
		       a->d[1][i] / 1024);
		/* the plain tree charges it: the measure works */
		EXPECT_GT(a->d[0][i], i < 2 ? MEMCG_DATA * 3L / 4 : 64 * 1024);
		/* the mount charges the caller no less */
		EXPECT_GE(a->d[1][i], a->d[0][i] * 3 / 4);
	}
}

TEST_HARNESS_MAIN
