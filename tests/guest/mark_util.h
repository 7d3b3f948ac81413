/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the mark and adversarial tests: marking a tree, running code
 * as root of a user namespace with any maps (an unprivileged container),
 * mounting from a mark there, and passing mount fds between processes.
 */
#ifndef SHIFTFS_TESTS_MARK_UTIL_H
#define SHIFTFS_TESTS_MARK_UTIL_H

#include "shiftfs_util.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#define MAP_CONTAINER	"0 100000 65536\n"

/* mount -t shiftfs -o mark,uidmap=@umap,gidmap=@gmap DIR DIR */
static inline int mark_tree_maps(const char *dir, const char *umap,
				 const char *gmap, char *log, size_t len)
{
	char u[128], g[128];
	const char *opts[] = { "mark", u, g, NULL };

	snprintf(u, sizeof(u), "uidmap=%s", umap);
	snprintf(g, sizeof(g), "gidmap=%s", gmap);
	return shiftfs_fsmount(dir, dir, opts, log, len);
}

static inline int mark_tree(const char *dir)
{
	return mark_tree_maps(dir, MAP_DEFAULT, MAP_DEFAULT, NULL, 0);
}

/*
 * Run @fn as root of a new user namespace with these uid_map/gid_map
 * lines (written by us, host root, as newuidmap would), in a new mount
 * namespace.  Returns @fn's exit status, or -1.
 */
static inline int in_userns(const char *umap, const char *gmap,
			    int (*fn)(void *), void *arg)
{
	return run_in_userns(umap, gmap, true, fn, arg);
}

/* The common container: 0 -> 100000, 65536 ids. */
static inline int in_userns_default(int (*fn)(void *), void *arg)
{
	return in_userns(MAP_CONTAINER, MAP_CONTAINER, fn, arg);
}

/* Mount from a mark, no options, new mount API. */
static inline int userns_mount(const char *mark, const char *dst, char *log,
			       size_t len)
{
	return shiftfs_fsmount(mark, dst, NULL, log, len);
}

/* "# ..." diagnostics from inside a child, then its exit status. */
#define CHILD_CHECK(cond, code, ...)					\
	do {								\
		if (!(cond)) {						\
			int __e = errno;				\
			printf("# %s:%d: %s failed (errno %d %s): ",	\
			       __FILE__, __LINE__, #cond, __e,		\
			       strerror(__e));				\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			fflush(stdout);					\
			return code;					\
		}							\
	} while (0)

static inline int send_fd(int sock, int fd)
{
	char buf[CMSG_SPACE(sizeof(int))], c = 'F';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cm;

	memset(buf, 0, sizeof(buf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static inline int recv_fd(int sock)
{
	char buf[CMSG_SPACE(sizeof(int))], c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = buf, .msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

struct mount_request {
	const char *mark;
	int sock[2];
};

/* In the user namespace: a mount from the mark, its fd sent back. */
static inline int mount_and_send(void *arg)
{
	const struct mount_request *r = arg;
	int fsfd, mfd;

	fsfd = fsopen("shiftfs", FSOPEN_CLOEXEC);
	CHILD_CHECK(fsfd >= 0, 1, "fsopen");
	CHILD_CHECK(fsconfig(fsfd, FSCONFIG_SET_STRING, "source", r->mark,
			     0) == 0, 2, "source");
	CHILD_CHECK(fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0, 3,
		    "create");
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
	CHILD_CHECK(mfd >= 0, 4, "fsmount");
	CHILD_CHECK(send_fd(r->sock[1], mfd) == 0, 5, "send");
	return 0;
}

/*
 * A detached mount from the mark @mark, made by root of the common
 * container (in_userns_default()) and passed back to us: its fd.  The
 * container and its mount namespace are gone when this returns.
 */
static inline int userns_mount_fd(const char *mark)
{
	struct mount_request r = { .mark = mark };
	int mfd;

	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, r.sock), 0);
	ASSERT_EQ(in_userns_default(mount_and_send, &r), 0);
	mfd = recv_fd(r.sock[0]);
	ASSERT_GE(mfd, 0);
	close(r.sock[0]);
	close(r.sock[1]);
	return mfd;
}

/* 1 if a shiftfs mount on @mnt shows @opt among its options. */
static inline int mount_has_opt(const char *mnt, const char *opt)
{
	char opts[4096];
	int ret = shiftfs_mountinfo(mnt, opts, sizeof(opts));

	if (ret)
		return ret < 0 ? -1 : 0;
	return strstr(opts, opt) != NULL;
}

/*
 * Active objects of a slab cache, or -1 if /proc/slabinfo lacks it.
 * slabinfo counts objects freed into per-CPU caches as active (SLUB's CPU
 * slabs, and since 6.18 its per-CPU sheaves, which on 7.x kept some 220
 * freed shiftfs inodes): shrinking the cache first gives them back, so
 * that what is counted is what is in use.
 */
static inline long slab_active(const char *cache)
{
	char line[512], name[128];
	FILE *f;
	long active = -1, n;

	slab_shrink(cache);
	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %ld", name, &n) == 2 &&
		    !strcmp(name, cache))
			active = n;
	}
	fclose(f);
	return active;
}

#endif /* SHIFTFS_TESTS_MARK_UTIL_H */
