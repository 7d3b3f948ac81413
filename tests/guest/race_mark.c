// SPDX-License-Identifier: GPL-2.0
/*
 * Race pass, marks: revocation racing what containers do with a mark.
 *
 * Round after round, host root marks a tree and containers copy the mark
 * into their own mount namespaces (three user namespaces: the mark's
 * full map, a sub-range of it, and a map the mark does not allow; several
 * processes in each) and keep mounting from their copy, using the mounts
 * they made (create, write, read, truncate, rename, unlink) and unmounting
 * them, and `shiftctl mount` from it; meanwhile host root revokes the mark
 * at a random moment, each round by another way (`shiftctl unmark`,
 * fspick + "revoke", `umount -f`, `mount -o remount,revoke`), and another
 * process keeps trying to remove the module.
 *
 * What must hold (docs/security-model.md, Unmarking revokes): a mount
 * from the mark that started after the revocation returned fails with
 * EPERM, in every copy, through the new mount API and through shiftctl;
 * a map the mark does not allow never mounts; mounts made before keep
 * working (their I/O never fails); the host is left without the mark;
 * the module is never removed while in use; and once the containers are
 * gone no superblock is left (the module's reference count is back).
 * The race must have happened: mounts made, mounts refused after the
 * revocation, I/O through earlier mounts after it.
 *
 * Then `shiftctl unmark` against `shiftctl attach` of the same tree into
 * a running container (a process in its own user and mount namespaces,
 * which itself keeps mounting from its copy of the mark): unmark never
 * leaves an unrevoked mark, and never fails (an attach that started
 * before the revocation holds the mark for moments: unmark waits);
 * attach either refuses (the tree was still marked) leaving no
 * directory behind, or attaches a working shifted mount that the
 * container's root writes as image root; once unmark has returned,
 * attach always succeeds.
 *
 * The runner's scan of the kernel log fails the run on any WARN, BUG,
 * KASAN or lockdep report.  Duration: race_util.h.
 */
#include "harness.h"
#include "race_util.h"

#include <sys/statfs.h>
#include <sys/xattr.h>

#define NS_WORKERS	3	/* processes per user namespace */
#define NR_NS		3
#define MAX_CHECKS	2

/* What every process of a round sees and counts. */
struct mark_race {
	char lower[96];
	char base[64];
	long long revoked_ns;	/* when the revocation returned, 0 before */
	int stop, ready;
	long mounts_ok, refused, refused_after, late_ok, disallowed_ok;
	long unexpected, io_ok, io_after, io_fail, disallowed_refused;
	long sc_ok, sc_refused_after, sc_late_ok;
	long stat_bad;
	int printed;
	/* The attach race: paths the container checks once stopped. */
	char check[MAX_CHECKS][128];
	int nr_check;
	long ct_checked_ok, ct_check_bad;
	pid_t ctpid;
	struct rmmod_stats rm;
};

struct ns_desc {
	struct mark_race *r;
	const char *map;
	char tag;
	bool disallowed;
	bool shiftctl;		/* worker 0 also uses shiftctl mount */
	int workers;
};

static const struct ns_desc ns_template[NR_NS] = {
	{ .map = MAP_CONTAINER, .tag = 'a', .shiftctl = true },
	{ .map = "0 100000 1000\n", .tag = 'b' },
	{ .map = "0 200000 65536\n", .tag = 'c', .disallowed = true },
};

/* Run @argv with stdout and stderr into @log (appended): exit status. */
static int run_cmd(char *const argv[], const char *log)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			      0600);

		/* (A container's root may not create it: nowhere then.) */
		if (fd < 0)
			fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	return wait_status(pid);
}

/* The last lines of a log, as TAP diagnostics. */
static void show_log(const char *log)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "tail -n 20 %s | sed 's/^/# /'", log);
	if (system(cmd))
		{ /* diagnostics only */ }
}

/* I/O through a mount made earlier, by its root fd. */
static int mount_io(int root, unsigned int *seed)
{
	char name[64], to[64], buf[512];
	int fd, ok = 0;

	snprintf(name, sizeof(name), "etc/io-%d", getpid());
	snprintf(to, sizeof(to), "etc/io-%d.%u", getpid(), rnd(seed) % 4);
	fd = openat(root, name, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	memset(buf, 'x', sizeof(buf));
	if (pwrite(fd, buf, sizeof(buf), 0) == sizeof(buf) &&
	    pread(fd, buf, sizeof(buf), 0) == sizeof(buf) &&
	    ftruncate(fd, rnd(seed) % 400) == 0 && fsync(fd) == 0)
		ok = 1;
	close(fd);
	if (ok && (renameat(root, name, root, to) ||
		   unlinkat(root, to, 0)))
		ok = 0;
	return ok ? 0 : -1;
}

/*
 * One container process: mount from the mark copy at @dst, again and
 * again, until told to stop.  The first mount is kept (detached, held
 * by its root fd) and used all along.
 */
static void mark_worker(struct mark_race *r, const struct ns_desc *d,
			int idx)
{
	char dst[128], dst2[128], log[512];
	unsigned int seed = getpid() * 7919u;
	int keep = -1, iter = 0, err;
	long long t0, rv;
	struct stat st;

	snprintf(dst, sizeof(dst), "%s/d/%c%d", r->base, d->tag, idx);
	snprintf(dst2, sizeof(dst2), "%s/d/%c%ds", r->base, d->tag, idx);
	CNT_INC(r->ready);
	while (!CNT_GET(r->stop)) {
		iter++;
		/* First in a round, then every fourth: one that starts
		 * before the revocation may end before it too. */
		if (d->shiftctl && idx == 0 && iter % 4 == 1) {
			char *argv[] = { "shiftctl", "mount", r->lower, dst2,
					 NULL };
			char errlog[128];
			int rc;

			snprintf(errlog, sizeof(errlog), "%s/sc.log", r->base);
			t0 = now_ns();
			rc = run_cmd(argv, errlog);
			rv = CNT_GET(r->revoked_ns);
			if (rc == 0) {
				CNT_INC(r->sc_ok);
				if (rv && t0 > rv) {
					CNT_INC(r->sc_late_ok);
					NOTE(r, "shiftctl mount from the mark %lld us after its revocation succeeded",
					     (t0 - rv) / 1000);
				}
				umount2(dst2, MNT_DETACH);
			} else if (rv && t0 > rv) {
				CNT_INC(r->sc_refused_after);
			}
			continue;
		}
		t0 = now_ns();
		err = userns_mount(r->lower, dst, log, sizeof(log));
		rv = CNT_GET(r->revoked_ns);
		if (!err) {
			if (d->disallowed) {
				CNT_INC(r->disallowed_ok);
				NOTE(r, "map %.20s not allowed by the mark mounted", d->map);
			} else if (rv && t0 > rv) {
				CNT_INC(r->late_ok);
				NOTE(r, "mount from the mark %lld us after its revocation succeeded",
				     (t0 - rv) / 1000);
			} else {
				CNT_INC(r->mounts_ok);
			}
			/* The image's root is the container's root. */
			if (stat(P(dst, "etc/passwd"), &st) || st.st_uid != 0 ||
			    st.st_gid != 0) {
				CNT_INC(r->stat_bad);
				NOTE(r, "etc/passwd through a mount from the mark: %s",
				     strerror(errno));
			}
			if (keep < 0)
				keep = open(dst, O_PATH | O_DIRECTORY |
					    O_CLOEXEC);
			umount2(dst, MNT_DETACH);
		} else if (err == -EPERM && d->disallowed) {
			CNT_INC(r->disallowed_refused);
		} else if (err == -EPERM) {
			CNT_INC(r->refused);
			if (rv && t0 > rv)
				CNT_INC(r->refused_after);
		} else {
			CNT_INC(r->unexpected);
			NOTE(r, "mount from the mark: %s (%s)", strerror(-err), log);
		}
		if (keep >= 0) {
			rv = CNT_GET(r->revoked_ns);
			if (mount_io(keep, &seed) == 0) {
				CNT_INC(r->io_ok);
				if (rv)
					CNT_INC(r->io_after);
			} else {
				CNT_INC(r->io_fail);
				NOTE(r, "I/O through a mount made from the mark: %s",
				     strerror(errno));
			}
		}
		if (d->disallowed)
			usleep(2000);
	}
	if (keep >= 0)
		close(keep);
}

/* In a user and mount namespace of its own: the namespace's workers. */
static int ns_main(void *arg)
{
	const struct ns_desc *d = arg;
	pid_t pids[NS_WORKERS];
	int i, rc = 0;

	for (i = 1; i < d->workers; i++) {
		pids[i] = race_fork();
		if (pids[i] < 0)
			return 10;
		if (pids[i] == 0) {
			mark_worker(d->r, d, i);
			fflush(stdout);
			_exit(0);
		}
	}
	mark_worker(d->r, d, 0);
	for (i = 1; i < d->workers; i++)
		if (wait_status(pids[i]) != 0)
			rc = 11;
	return rc;
}

static int wait_ready(struct mark_race *r, int n)
{
	long long end = now_ns() + 30 * 1000000000LL;

	while (CNT_GET(r->ready) < n)
		if (now_ns() > end)
			return -1;
		else
			usleep(1000);
	return 0;
}

#ifndef FSPICK_CLOEXEC
#define FSPICK_CLOEXEC 0x00000001
#endif

/* End the mark on @dir, each round another way; 0 once revoked. */
static int revoke_by(int how, const char *dir, const char *log)
{
	char *argv[] = { "shiftctl", "unmark", (char *)dir, NULL };
	int fd;

	/* Planted: a plain umount, which leaves the copies marks. */
	if (race_plant("revoke"))
		return umount2(dir, 0);
	switch (how % 4) {
	case 0:
		return run_cmd(argv, log);
	case 1:
		fd = syscall(SYS_fspick, AT_FDCWD, dir, FSPICK_CLOEXEC);
		if (fd < 0)
			return -1;
		if (fsconfig(fd, FSCONFIG_SET_FLAG, "revoke", NULL, 0) ||
		    fsconfig(fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0)) {
			close(fd);
			return -1;
		}
		close(fd);
		return 0;
	case 2:
		return umount2(dir, MNT_FORCE);
	default:
		return mount(NULL, dir, NULL, MS_REMOUNT, "revoke");
	}
}

static void setup_tree(const struct world *w, struct mark_race *r)
{
	char d[160];
	int i, j;

	snprintf(r->lower, sizeof(r->lower), "%s", w->lower);
	snprintf(r->base, sizeof(r->base), "%s", w->base);
	ASSERT_EQ(make_dir(P(w->lower, "etc"), 0755, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "etc/passwd"), 0644, 0, 0), 0);
	ASSERT_EQ(mkdir(P(w->base, "d"), 0755), 0);
	/* shiftctl's messages, from the containers too. */
	ASSERT_EQ(make_file(P(w->base, "sc.log"), 0666, 0, 0), 0);
	for (i = 0; i < NR_NS; i++)
		for (j = 0; j < NS_WORKERS; j++) {
			snprintf(d, sizeof(d), "%s/d/%c%d", w->base,
				 ns_template[i].tag, j);
			ASSERT_EQ(mkdir(d, 0755), 0);
			snprintf(d, sizeof(d), "%s/d/%c%ds", w->base,
				 ns_template[i].tag, j);
			ASSERT_EQ(mkdir(d, 0755), 0);
		}
}

TEST_F(world, unmark_races_mounts_from_the_mark_and_their_io)
{
	struct world *w = &self->w;
	struct mark_race *r = shared_alloc(sizeof(*r));
	struct ns_desc d[NR_NS];
	long long start;
	pid_t hammer, pids[NR_NS];
	unsigned int seed = 4242;
	long base_ref;
	int pin, round = 0, i, n;
	char log[160];

	ASSERT_NE(r, NULL);
	setup_tree(w, r);
	snprintf(log, sizeof(log), "%s/unmark.log", w->base);
	hammer = race_start(&r->rm, &base_ref, &pin);

	start = now_ns();
	while (race_goes_on(start, CNT_GET(r->mounts_ok) &&
			    CNT_GET(r->refused_after) && CNT_GET(r->io_after) &&
			    CNT_GET(r->sc_ok) + CNT_GET(r->sc_refused_after) &&
			    CNT_GET(r->disallowed_refused) &&
			    CNT_GET(r->rm.tries))) {
		ASSERT_EQ(mark_tree(w->lower), 0);
		CNT_SET(r->revoked_ns, 0);
		CNT_SET(r->stop, 0);
		CNT_SET(r->ready, 0);
		for (i = 0; i < NR_NS; i++) {
			d[i] = ns_template[i];
			d[i].r = r;
			d[i].workers = NS_WORKERS;
			pids[i] = spawn_in_userns(d[i].map, true, ns_main,
						  &d[i]);
			ASSERT_GT(pids[i], 0);
		}
		ASSERT_EQ(wait_ready(r, NR_NS * NS_WORKERS), 0);
		usleep(rnd(&seed) % 150000 * harness_timeout_scale());
		n = revoke_by(round, w->lower, log);
		CNT_SET(r->revoked_ns, now_ns());
		if (n) {
			TH_LOG("round %d: revoking (way %d) failed: %s", round,
			       round % 4, strerror(errno));
			show_log(log);
		}
		ASSERT_EQ(n, 0);
		/* What remains of the mark on the host goes too. */
		if ((round % 4 == 1 || round % 4 == 3) && !race_plant("revoke"))
			EXPECT_EQ(umount2(w->lower, 0), 0);
		usleep((100000 + rnd(&seed) % 100000) *
		       harness_timeout_scale());
		CNT_SET(r->stop, 1);
		for (i = 0; i < NR_NS; i++)
			EXPECT_EQ(wait_status(pids[i]), 0);
		/* The host has no mark left. */
		EXPECT_EQ(shiftfs_mountinfo(w->lower, log, sizeof(log)), 1);
		round++;
	}
	rmmod_hammer_stop(&r->rm, hammer);
	close(pin);

	TH_LOG("%d rounds in %.1f s: mounts %ld, refused %ld (%ld after the revocation), late %ld, disallowed mounted %ld, other errors %ld",
	       round, race_ran(start), r->mounts_ok, r->refused, r->refused_after, r->late_ok,
	       r->disallowed_ok, r->unexpected);
	TH_LOG("I/O through earlier mounts: %ld ok (%ld after the revocation), %ld failed; shiftctl mount: %ld ok, %ld refused after, %ld late",
	       r->io_ok, r->io_after, r->io_fail, r->sc_ok,
	       r->sc_refused_after, r->sc_late_ok);
	/* Nothing mounted from a revoked mark, nor from a foreign map. */
	EXPECT_EQ(r->late_ok, 0);
	EXPECT_EQ(r->sc_late_ok, 0);
	EXPECT_EQ(r->disallowed_ok, 0);
	EXPECT_GT(r->disallowed_refused, 0);
	EXPECT_EQ(r->unexpected, 0);
	EXPECT_EQ(r->stat_bad, 0);
	/* Mounts made before keep working. */
	EXPECT_EQ(r->io_fail, 0);
	/* The race happened. */
	EXPECT_GT(round, 0);
	EXPECT_GT(r->mounts_ok, 0);
	EXPECT_GT(r->refused_after, 0);
	EXPECT_GT(r->io_after, 0);
	EXPECT_GT(r->sc_ok + r->sc_refused_after, 0);
	check_rmmod(&r->rm);
	/* No superblock left: marks, mounts, contexts all gone. */
	EXPECT_LE(refcnt_settles(base_ref, 10), base_ref);
}

/* ---- shiftctl unmark against shiftctl attach ----------------------- */

/*
 * The container: mounts from its copy of the mark like the workers
 * above until stopped, then checks what attach put in its namespace.
 */
static int attach_ct_main(void *arg)
{
	struct ns_desc *d = arg;
	struct mark_race *r = d->r;
	char path[192];
	struct stat st;
	int i, fd;

	r->ctpid = getpid();
	mark_worker(r, d, 0);
	for (i = 0; i < r->nr_check; i++) {
		snprintf(path, sizeof(path), "%s/etc/by-ct-%d", r->check[i],
			 getpid());
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd >= 0 && !stat(P(r->check[i], "etc/passwd"), &st) &&
		    st.st_uid == 0 && st.st_gid == 0 &&
		    !statfs(r->check[i], &(struct statfs){ 0 })) {
			CNT_INC(r->ct_checked_ok);
		} else {
			CNT_INC(r->ct_check_bad);
			NOTE(r, "attached %s in the container: %s", r->check[i],
			     strerror(errno));
		}
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

struct attach_stats {
	long racing_ok, racing_refused, after_ok, after_bad, leftover;
	long unmark_failed, unmark_unrevoked, owner_bad;
};

static int shiftctl_attach(struct mark_race *r, const char *path,
			   const char *log)
{
	char pid[16];
	char *argv[] = { "shiftctl", "attach", "--path", (char *)path, pid,
			 r->lower, NULL };

	snprintf(pid, sizeof(pid), "%d", (int)r->ctpid);
	return run_cmd(argv, log);
}

TEST_F(world, unmark_races_attach_into_a_running_container)
{
	struct world *w = &self->w;
	struct mark_race *r = shared_alloc(sizeof(*r));
	struct attach_stats *a = shared_alloc(sizeof(*a));
	char log[160], path[128], after[128], f[192];
	struct ns_desc d = ns_template[0];
	pid_t hammer, ct, att, unm;
	unsigned int seed = 777;
	int pin, round = 0, rc;
	long base_ref;
	long long start;

	ASSERT_NE(r, NULL);
	ASSERT_NE(a, NULL);
	setup_tree(w, r);
	ASSERT_EQ(mkdir(P(w->base, "att"), 0755), 0);
	snprintf(log, sizeof(log), "%s/shiftctl.log", w->base);
	hammer = race_start(&r->rm, &base_ref, &pin);
	d.r = r;
	d.shiftctl = false;

	start = now_ns();
	while (race_goes_on(start, a->after_ok && CNT_GET(r->mounts_ok) &&
			    CNT_GET(r->rm.tries))) {
		snprintf(path, sizeof(path), "%s/att/r%d/m", w->base, round);
		snprintf(after, sizeof(after), "%s/att/p%d", w->base, round);
		ASSERT_EQ(mark_tree(w->lower), 0);
		CNT_SET(r->revoked_ns, 0);
		CNT_SET(r->stop, 0);
		CNT_SET(r->ready, 0);
		r->nr_check = 0;
		ct = spawn_in_userns(d.map, true, attach_ct_main, &d);
		ASSERT_GT(ct, 0);
		ASSERT_EQ(wait_ready(r, 1), 0);

		att = race_fork();
		ASSERT_GE(att, 0);
		if (att == 0) {
			usleep(rnd(&seed) % 40000);
			_exit(shiftctl_attach(r, path, log));
		}
		seed += round;
		unm = race_fork();
		ASSERT_GE(unm, 0);
		if (unm == 0) {
			/* Planted: shiftctl umount, which does not revoke. */
			char *argv[] = { "shiftctl", race_plant("revoke") ?
					 "umount" : "unmark", w->lower, NULL };

			usleep(rnd(&seed) % 40000);
			rc = run_cmd(argv, log);
			CNT_SET(r->revoked_ns, now_ns());
			_exit(rc);
		}
		if (wait_status(unm) != 0) {
			/* Busy, say: the mark must be revoked all the same. */
			if (!a->unmark_failed++)
				show_log(log);
			if (mount_has_opt(w->lower, ",revoked") != 1)
				a->unmark_unrevoked++;
			umount2(w->lower, MNT_DETACH);
		}
		/* After unmark, attach always works. */
		rc = wait_status(att);
		if (rc == 0) {
			a->racing_ok++;
			snprintf(r->check[r->nr_check++], sizeof(r->check[0]),
				 "%s", path);
		} else {
			a->racing_refused++;
			/* Nothing made for it is left. */
			snprintf(f, sizeof(f), "%s/att/r%d", w->base, round);
			if (access(f, F_OK) == 0)
				a->leftover++;
		}
		if (shiftctl_attach(r, after, log) == 0) {
			a->after_ok++;
			snprintf(r->check[r->nr_check++], sizeof(r->check[0]),
				 "%s", after);
		} else {
			a->after_bad++;
		}
		usleep(20000 + rnd(&seed) % 30000);
		CNT_SET(r->stop, 1);
		EXPECT_EQ(wait_status(ct), 0);
		EXPECT_EQ(shiftfs_mountinfo(w->lower, f, sizeof(f)), 1);
		/* What the container's root wrote is image root's. */
		snprintf(f, sizeof(f), "etc/by-ct-%d", (int)r->ctpid);
		if (r->nr_check && owner_is(P(w->lower, f), 0, 0))
			a->owner_bad++;
		round++;
	}
	rmmod_hammer_stop(&r->rm, hammer);
	close(pin);

	TH_LOG("%d rounds in %.1f s: racing attach %ld attached, %ld refused; attach after unmark %ld ok, %ld failed; unmark failed %ld (unrevoked %ld); leftovers %ld",
	       round, race_ran(start), a->racing_ok, a->racing_refused, a->after_ok,
	       a->after_bad, a->unmark_failed, a->unmark_unrevoked,
	       a->leftover);
	TH_LOG("container: mounts from its copy %ld, refused after unmark %ld, late %ld; attached mounts checked %ld ok, %ld bad",
	       r->mounts_ok, r->refused_after, r->late_ok, r->ct_checked_ok,
	       r->ct_check_bad);
	if (a->after_bad || a->leftover)
		show_log(log);
	EXPECT_EQ(a->unmark_unrevoked, 0);
	/* A racing attach holds the revoked mark for moments: unmark waits. */
	EXPECT_EQ(a->unmark_failed, 0);
	EXPECT_EQ(a->after_bad, 0);
	EXPECT_EQ(a->leftover, 0);
	EXPECT_EQ(a->owner_bad, 0);
	EXPECT_EQ(r->late_ok, 0);
	EXPECT_EQ(r->unexpected, 0);
	EXPECT_EQ(r->stat_bad, 0);
	EXPECT_EQ(r->io_fail, 0);
	EXPECT_EQ(r->ct_check_bad, 0);
	EXPECT_EQ(r->ct_checked_ok, a->racing_ok + a->after_ok);
	EXPECT_GT(round, 0);
	EXPECT_GT(a->after_ok, 0);
	EXPECT_GT(r->mounts_ok, 0);
	check_rmmod(&r->rm);
	EXPECT_LE(refcnt_settles(base_ref, 10), base_ref);
}

int main(int argc, char **argv)
{
	return race_main(argc, argv);
}
