// SPDX-License-Identifier: GPL-2.0
/*
 * Unmarking revokes.  A mark is a mount, and every mount namespace copied
 * while it existed keeps a copy after host root unmounts its own; a user
 * namespace in such a copy must not mount from it once the tree is
 * unmarked.  `shiftctl unmark` (and umount -f of the mark, and a remount
 * with "revoke") end the mark for every copy; mounts made before keep
 * working.  A plain umount(2) reaches no filesystem code: stated below.
 */
#include "harness.h"
#include "mark_util.h"

#include <sys/syscall.h>

#ifndef FSPICK_CLOEXEC
#define FSPICK_CLOEXEC 0x00000001
#endif

static int sys_fspick(int dfd, const char *path, unsigned int flags)
{
	return syscall(SYS_fspick, dfd, path, flags);
}

/* What a user namespace in a copy got: in_userns_default()'s status. */
struct copy_try {
	const char *mark;
	const char *dst;
	bool want_ok;
	const char *why;	/* in the kernel's log, if it fails */
};

static int try_from_copy(void *arg)
{
	const struct copy_try *t = arg;
	char log[1024], cmd[512], out[1024] = "";
	FILE *p;
	int err;

	err = userns_mount(t->mark, t->dst, log, sizeof(log));
	printf("# mount from %s in a copy: %d %s\n", t->mark, err, log);
	if (t->want_ok)
		return err ? 1 : 0;
	if (err != -EPERM)
		return 2;
	if (!strstr(log, t->why))
		return 3;
	/* shiftctl shows the kernel's reason. */
	snprintf(cmd, sizeof(cmd), "shiftctl mount %s %s 2>&1", t->mark,
		 t->dst);
	p = popen(cmd, "r");
	if (!p)
		return 4;
	if (!fread(out, 1, sizeof(out) - 1, p))
		out[0] = '\0';
	err = pclose(p);
	printf("# %s: %s", cmd, out);
	if (!WIFEXITED(err) || WEXITSTATUS(err) == 0)
		return 5;
	return strstr(out, t->why) ? 0 : 6;
}

/*
 * A process holding a copy of our mount namespace (unshare -m), made
 * while the mark is there: it waits for a byte on @go, then tries @t
 * from a user namespace and exits with what that returned.
 */
struct holder {
	pid_t pid;
	int go;
	struct copy_try t;	/* mark_and_hold()'s */
};

static int hold_copy(struct holder *h, const struct copy_try *t)
{
	int ready[2], go[2];
	char c = 0;

	if (pipe(ready) || pipe(go))
		return -1;
	h->pid = fork();
	if (h->pid < 0)
		return -1;
	if (h->pid == 0) {
		close(ready[0]);
		close(go[1]);
		if (unshare(CLONE_NEWNS))
			_exit(100);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(101);
		_exit(in_userns_default(try_from_copy, (void *)t));
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1)
		return -1;
	close(ready[0]);
	h->go = go[1];
	return 0;
}

static int release_copy(struct holder *h)
{
	int status;

	if (write(h->go, "g", 1) != 1)
		return -1;
	close(h->go);
	if (waitpid(h->pid, &status, 0) != h->pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_shiftctl(const char *cmd, const char *dir)
{
	char line[512];
	int status;

	snprintf(line, sizeof(line), "shiftctl %s %s", cmd, dir);
	status = system(line);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void make_image(const struct world *w)
{
	ASSERT_EQ(make_dir(P(w->lower, "etc"), 0755, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "etc/passwd"), 0644, 0, 0), 0);
}

/* The mount made before the unmark: still a working shifted view. */
static void still_works(const struct world *w, int mfd)
{
	struct stat st;
	int fd;

	ASSERT_EQ(fstatat(mfd, "etc/passwd", &st, 0), 0);
	EXPECT_EQ(st.st_uid, ID_SHIFT);
	ASSERT_EQ(move_mount(mfd, "", AT_FDCWD, w->mnt,
			     MOVE_MOUNT_F_EMPTY_PATH), 0);
	close(mfd);
	become_fsids(ID_SHIFT, ID_SHIFT);
	fd = open(P(w->mnt, "etc/made-after"), O_CREAT | O_WRONLY, 0600);
	become_fsids(0, 0);
	EXPECT_GE(fd, 0);
	close(fd);
	EXPECT_EQ(owner_is(P(w->lower, "etc/made-after"), 0, 0), 0);
	EXPECT_EQ(umount2(w->mnt, 0), 0);
}

TEST_F(world, shiftctl_unmark_ends_the_mark_in_every_copy)
{
	struct world *w = &self->w;
	struct copy_try t = { w->lower, w->mnt, false, "revoked" };
	struct holder h;
	int mfd;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	mfd = userns_mount_fd(w->lower);
	ASSERT_EQ(hold_copy(&h, &t), 0);

	ASSERT_EQ(run_shiftctl("unmark", w->lower), 0);
	EXPECT_EQ(mount_has_opt(w->lower, "mark"), 0);
	EXPECT_EQ(release_copy(&h), 0);
	still_works(w, mfd);
}

/*
 * A revoked mark busy for a moment (a mount from it that started before
 * the revocation still holds its source: shiftctl attach racing unmark;
 * here an O_PATH file that a child closes 0.3 s later) is unmounted once
 * let go.  Held longer: unmark fails, the mark stays mounted and revoked,
 * and unmark succeeds once it is let go.
 */
TEST_F(world, shiftctl_unmark_waits_for_a_passing_user)
{
	struct world *w = &self->w;
	int fd, pfd[2], status;
	pid_t pid;
	char c;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		fd = open(w->lower, O_PATH | O_CLOEXEC);
		if (fd < 0 || write(pfd[1], "h", 1) != 1)
			_exit(1);
		usleep(300000);
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	EXPECT_EQ(run_shiftctl("unmark", w->lower), 0);
	EXPECT_EQ(mount_has_opt(w->lower, "mark"), 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_EQ(status, 0);
	if (mount_has_opt(w->lower, "mark") == 1)
		umount2(w->lower, MNT_DETACH);

	ASSERT_EQ(mark_tree(w->lower), 0);
	fd = open(w->lower, O_PATH | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(run_shiftctl("unmark", w->lower), 1);
	EXPECT_EQ(mount_has_opt(w->lower, ",revoked"), 1);
	close(fd);
	EXPECT_EQ(run_shiftctl("unmark", w->lower), 0);
	EXPECT_EQ(mount_has_opt(w->lower, "mark"), 0);
}

/* fspick + fsconfig(SET_FLAG "revoke") + RECONFIGURE on the mark. */
static int revoke_mark(const char *dir, char *log, size_t len)
{
	int fd = sys_fspick(AT_FDCWD, dir, FSPICK_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (fsconfig(fd, FSCONFIG_SET_FLAG, "revoke", NULL, 0) ||
	    fsconfig(fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0))
		err = -errno;
	fs_log(fd, log, len);
	close(fd);
	return err;
}

/* Revoked, still mounted on the host: nobody mounts from it, anywhere. */
TEST_F(world, revoked_mark_refuses_even_where_still_mounted)
{
	struct world *w = &self->w;
	struct copy_try t = { w->lower, w->mnt, false, "revoked" };
	struct holder h;
	char log[1024];
	int mfd;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	mfd = userns_mount_fd(w->lower);
	ASSERT_EQ(hold_copy(&h, &t), 0);
	ASSERT_EQ(revoke_mark(w->lower, log, sizeof(log)), 0);
	/* Here, where the mark is still mounted, and in the copy. */
	EXPECT_EQ(in_userns_default(try_from_copy, &t), 0);
	EXPECT_EQ(release_copy(&h), 0);
	/* Once revoked, always: again is fine, and shows. */
	EXPECT_EQ(revoke_mark(w->lower, log, sizeof(log)), 0);
	EXPECT_EQ(mount_has_opt(w->lower, ",revoked"), 1);
	/* (The mark hides the tree from the host: look once it is gone.) */
	EXPECT_EQ(umount2(w->lower, 0), 0);
	still_works(w, mfd);
}

static int revoke_in_userns(void *arg)
{
	const char *dir = arg;
	char log[1024];
	int err = revoke_mark(dir, log, sizeof(log));

	printf("# revoke from a user namespace: %d %s\n", err, log);
	return err == -EPERM ? 0 : 1;
}

/* Only host root revokes, and only marks. */
TEST_F(world, revoke_is_host_roots_and_for_marks_only)
{
	struct world *w = &self->w;
	struct copy_try t = { w->lower, w->mnt, true, NULL };
	char log[1024];

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	EXPECT_EQ(in_userns_default(revoke_in_userns, w->lower), 0);
	/* Not revoked by that. */
	EXPECT_EQ(in_userns_default(try_from_copy, &t), 0);
	EXPECT_EQ(umount2(w->lower, 0), 0);

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	EXPECT_EQ(revoke_mark(w->mnt, log, sizeof(log)), -EINVAL);
	TH_LOG("revoke on a plain mount: %s", log);
	EXPECT_NE(strstr(log, "mark"), NULL);
	EXPECT_EQ(umount2(w->mnt, 0), 0);
}

/*
 * The world's image marked, and a copy held that expects the mark
 * revoked when it tries.
 */
static void mark_and_hold(struct world *w, struct holder *h)
{
	h->t = (struct copy_try){ w->lower, w->mnt, false, "revoked" };
	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(hold_copy(h, &h->t), 0);
}

/* umount -f of the host's mark revokes too (->umount_begin). */
TEST_F(world, forced_umount_revokes)
{
	struct world *w = &self->w;
	struct holder h;

	mark_and_hold(w, &h);
	ASSERT_EQ(umount2(w->lower, MNT_FORCE), 0);
	EXPECT_EQ(release_copy(&h), 0);
}

/* mount -o remount,revoke: what mount(8) sends. */
TEST_F(world, remount_revoke_revokes)
{
	struct world *w = &self->w;
	struct holder h;

	mark_and_hold(w, &h);
	ASSERT_EQ(mount(NULL, w->lower, NULL, MS_REMOUNT, "revoke"), 0);
	EXPECT_EQ(mount_has_opt(w->lower, ",revoked"), 1);
	/* A remount that resends the options mountinfo shows still works. */
	EXPECT_EQ(mount(NULL, w->lower, NULL, MS_REMOUNT,
			"mark,revoked,uidmap=" MAP_DEFAULT ",gidmap=" MAP_DEFAULT),
		  0);
	EXPECT_EQ(release_copy(&h), 0);
	EXPECT_EQ(umount2(w->lower, 0), 0);
}

/*
 * A plain umount(2) of the host's mark calls into no filesystem code
 * while copies of it are mounted elsewhere (6.1 to 7.3): the copies stay
 * marks.  Stated, so that a kernel that changes it is noticed; unmark
 * with shiftctl unmark (or umount -f).
 */
TEST_F(world, plain_umount_does_not_revoke_copies)
{
	struct world *w = &self->w;
	struct copy_try t = { w->lower, w->mnt, true, NULL };
	struct holder h;

	make_image(w);
	ASSERT_EQ(mark_tree(w->lower), 0);
	ASSERT_EQ(hold_copy(&h, &t), 0);
	ASSERT_EQ(umount2(w->lower, 0), 0);
	EXPECT_EQ(release_copy(&h), 0);
}

TEST_HARNESS_MAIN
