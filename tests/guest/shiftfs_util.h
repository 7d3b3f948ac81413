/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the shiftfs guest test programs: a private world per
 * test (mount namespace + tmpfs) and the fixture that sets it up,
 * shiftfs mounts through both mount APIs, and callers in a user
 * namespace mapped like an unprivileged container.
 */
#ifndef SHIFTFS_TESTS_UTIL_H
#define SHIFTFS_TESTS_UTIL_H

#include "harness.h"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Underlying ids, and how the default map shows them. */
#define ID_HOST		0u
#define ID_SHIFT	100000u
#define ID_RANGE	65536u
#define ID_OVERFLOW	65534u
#define MAP_DEFAULT	"0:100000:65536"

#define SHIFTFS_MAGIC	0x6a656a62

struct world {
	char base[64];		/* private tmpfs */
	char lower[96];		/* underlying tree */
	char mnt[96];		/* shiftfs mount point */
};

/* A fresh mount namespace with a private tmpfs holding lower/ and mnt/. */
static inline int world_setup(struct world *w)
{
	if (unshare(CLONE_NEWNS))
		return -1;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -1;
	snprintf(w->base, sizeof(w->base), "/tmp/shiftfs-test.XXXXXX");
	if (!mkdtemp(w->base))
		return -1;
	if (mount("tmpfs", w->base, "tmpfs", 0, "mode=0755"))
		return -1;
	snprintf(w->lower, sizeof(w->lower), "%s/lower", w->base);
	snprintf(w->mnt, sizeof(w->mnt), "%s/mnt", w->base);
	if (mkdir(w->lower, 0755) || mkdir(w->mnt, 0755))
		return -1;
	return 0;
}

/*
 * The fixture most tests start from: a fresh world, nothing mounted.
 *
 *	TEST_F(world, name)
 *	{
 *		struct world *w = &self->w;
 *		...
 */
FIXTURE(world) {
	struct world w;
};

FIXTURE_SETUP(world)
{
	ASSERT_EQ(world_setup(&self->w), 0);
}

FIXTURE_TEARDOWN(world)
{
}

/*
 * The " - shiftfs SOURCE OPTIONS" end of the line of the topmost shiftfs
 * mount on @mnt in /proc/self/mountinfo, into @buf: 0, 1 if there is no
 * such mount, -1 if mountinfo cannot be read.
 */
static inline int shiftfs_mountinfo(const char *mnt, char *buf, size_t len)
{
	char line[4096], point[512];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int ret = 1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " - shiftfs ");

		if (!p || sscanf(line, "%*s %*s %*s %*s %511s", point) != 1 ||
		    strcmp(point, mnt))
			continue;
		snprintf(buf, len, "%s", p);
		ret = 0;
	}
	fclose(f);
	return ret;
}

/* "<dir>/<name>" in a static rotating buffer, for short test code. */
static inline const char *P(const char *dir, const char *name)
{
	static char bufs[8][512];
	static int i;
	char *b = bufs[i++ & 7];

	snprintf(b, sizeof(bufs[0]), "%.250s/%.250s", dir, name);
	return b;
}

/* Drain the fs_context log: "e shiftfs: ..." lines, joined by '\n'. */
static inline void fs_log(int fsfd, char *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	buf[0] = '\0';
	while (off + 1 < len) {
		n = read(fsfd, buf + off, len - off - 1);
		if (n <= 0)
			break;
		off += n;
		buf[off++] = '\n';
		buf[off] = '\0';
	}
}

/*
 * fsopen/fsconfig/fsmount/move_mount.  @opts is a NULL-terminated list of
 * "key=value" strings.  Returns 0 or -errno of the first failing step;
 * the kernel's explanation, if any, lands in @log.
 */
static inline int shiftfs_fsmount(const char *src, const char *dst,
				  const char *const *opts, char *log,
				  size_t loglen)
{
	int fsfd, mfd, err = 0;

	if (log && loglen)
		log[0] = '\0';
	fsfd = fsopen("shiftfs", FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return -errno;
	if (src && fsconfig(fsfd, FSCONFIG_SET_STRING, "source", src, 0)) {
		err = -errno;
		goto out;
	}
	for (; opts && *opts; opts++) {
		char key[64];
		const char *eq = strchr(*opts, '=');
		size_t klen = eq ? (size_t)(eq - *opts) : strlen(*opts);

		if (klen >= sizeof(key))
			klen = sizeof(key) - 1;
		memcpy(key, *opts, klen);
		key[klen] = '\0';
		if (eq ? fsconfig(fsfd, FSCONFIG_SET_STRING, key, eq + 1, 0) :
			 fsconfig(fsfd, FSCONFIG_SET_FLAG, key, NULL, 0)) {
			err = -errno;
			goto out;
		}
	}
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0)) {
		err = -errno;
		goto out;
	}
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
	if (mfd < 0) {
		err = -errno;
		goto out;
	}
	if (move_mount(mfd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH))
		err = -errno;
	close(mfd);
out:
	if (log && loglen)
		fs_log(fsfd, log, loglen);
	close(fsfd);
	return err;
}

/* The common case: default maps for uids and gids, new mount API. */
static inline int shiftfs_mount_default(const struct world *w)
{
	const char *opts[] = { "uidmap=" MAP_DEFAULT, "gidmap=" MAP_DEFAULT,
			       NULL };

	return shiftfs_fsmount(w->lower, w->mnt, opts, NULL, 0);
}

static inline int make_file(const char *path, mode_t mode, uid_t uid,
			    gid_t gid)
{
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);

	if (fd < 0)
		return -1;
	close(fd);
	if (chown(path, uid, gid) || chmod(path, mode))
		return -1;
	return 0;
}

static inline int make_dir(const char *path, mode_t mode, uid_t uid,
			   gid_t gid)
{
	if (mkdir(path, mode) || chown(path, uid, gid) || chmod(path, mode))
		return -1;
	return 0;
}

static inline int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Up to @len - 1 bytes of @path into @buf, NUL-terminated: how many, or -1. */
static inline int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* 0 if stat(@path) has this owner, else -1 (and errno from stat). */
static inline int owner_is(const char *path, uid_t uid, gid_t gid)
{
	struct stat st;

	if (lstat(path, &st))
		return -1;
	if (st.st_uid != uid || st.st_gid != gid) {
		printf("# %s: owner %u:%u, expected %u:%u\n", path,
		       (unsigned int)st.st_uid, (unsigned int)st.st_gid,
		       (unsigned int)uid, (unsigned int)gid);
		errno = 0;
		return -1;
	}
	return 0;
}

/* Write @map to /proc/@pid/@which ("uid_map" or "gid_map"). */
static inline int write_map(pid_t pid, const char *which, const char *map)
{
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, which);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, map, strlen(map)) != (ssize_t)strlen(map))
		ret = -1;
	close(fd);
	return ret;
}

/*
 * Run @fn in a child that is root of a new user namespace with these
 * uid_map/gid_map lines (NULL leaves one unmapped), written by us, host
 * root, as newuidmap would; in a new mount namespace too if @new_mntns.
 * Returns @fn's exit status, or -1.
 */
static inline int run_in_userns(const char *umap, const char *gmap,
				bool new_mntns, int (*fn)(void *), void *arg)
{
	int to_child[2], to_parent[2], status;
	char c = 0;
	pid_t pid;

	if (pipe(to_child) || pipe(to_parent))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		if (unshare(CLONE_NEWUSER))
			_exit(120);
		if (write(to_parent[1], &c, 1) != 1 ||
		    read(to_child[0], &c, 1) != 1)
			_exit(121);
		/* gid 0 may be left unmapped on purpose. */
		if (setresgid(0, 0, 0) && gmap)
			_exit(122);
		if (setresuid(0, 0, 0))
			_exit(122);
		if (new_mntns && unshare(CLONE_NEWNS))
			_exit(123);
		_exit(fn(arg));
	}
	close(to_child[0]);
	close(to_parent[1]);
	if (read(to_parent[0], &c, 1) != 1)
		goto fail;
	if ((umap && write_map(pid, "uid_map", umap)) ||
	    (gmap && write_map(pid, "gid_map", gmap)))
		goto fail;
	if (write(to_child[1], &c, 1) != 1)
		goto fail;
	close(to_child[1]);
	close(to_parent[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
fail:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/*
 * Run @fn in a child that is root in a new user namespace mapped
 * 0 -> ID_SHIFT for ID_RANGE ids (an unprivileged container), sharing our
 * mount namespace.  Returns @fn's exit status, or -1.
 */
static inline int in_container(int (*fn)(void *), void *arg)
{
	char map[64];

	snprintf(map, sizeof(map), "0 %u %u\n", ID_SHIFT, ID_RANGE);
	return run_in_userns(map, map, false, fn, arg);
}

/* Copy this program to @dst (mode 0755), to exec it from there. */
static inline int copy_self(const char *dst)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	close(out);
	return n;
}

/*
 * Shrink slab cache @cache: its empty slabs and per-CPU ones go back, and
 * on a KASAN kernel the freed objects its quarantine holds.  A cache that
 * cannot shrink (or no /sys/kernel/slab) is left as it is.
 */
static inline void slab_shrink(const char *cache)
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", cache);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "1", 1) != 1)
		{ /* counted as it is */ }
	close(fd);
}

/* The permission bits of @path (not followed), or (mode_t)-1. */
static inline mode_t mode_of(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return (mode_t)-1;
	return st.st_mode & 07777;
}

/*
 * An unprivileged caller in the initial namespace: setfsuid() to a
 * non-zero id drops the filesystem capabilities too.
 */
static inline void become_fsids(uid_t uid, gid_t gid)
{
	setfsgid(gid);
	setfsuid(uid);
}

/*
 * Run @fn(@arg) in a child as host uid/gid @id, no supplementary groups,
 * no capabilities, saved uid @suid (@id; 0 keeps a way back to root): its
 * exit status, or -1.
 */
static inline int run_as_host_user(uid_t id, uid_t suid, int (*fn)(void *),
				   void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(id, id, id) ||
		    setresuid(id, id, suid))
			_exit(120);
		status = fn(arg);
		fflush(stdout);
		_exit(status);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif /* SHIFTFS_TESTS_UTIL_H */
