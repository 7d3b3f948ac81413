// SPDX-License-Identifier: GPL-2.0
/*
 * bench-idmap-mount: make an idmapped bind mount, the kernel's built-in
 * alternative to shiftfs (Debian 12's util-linux lacks X-mount.idmap).
 *
 *   bench-idmap-mount [-u FROM:TO:COUNT] [-g FROM:TO:COUNT] [-t] SRC DST
 *
 * Maps are written the shiftfs way: uidmap=0:100000:65536 means on-disk
 * uid 0 appears as uid 100000 under DST (and a file uid 100000 creates
 * lands on disk as 0).  Default for both: 0:100000:65536.  With -t the
 * elapsed seconds of the whole operation (user namespace included) are
 * printed on stdout.
 *
 * How: a child unshare()s a user namespace and waits; we write its
 * uid_map/gid_map ("FROM TO COUNT": inside FROM is outside TO), open its
 * /proc/PID/ns/user, clone SRC with open_tree(OPEN_TREE_CLONE), set
 * MOUNT_ATTR_IDMAP with that userns fd (mount_setattr), and attach the
 * detached mount on DST with move_mount().  The namespace lives on in the
 * mount; the child exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/mount.h>

#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

struct attr {
	uint64_t attr_set;
	uint64_t attr_clr;
	uint64_t propagation;
	uint64_t userns_fd;
};

static pid_t child;

static void die(const char *what)
{
	if (child > 0)
		kill(child, SIGKILL);
	fprintf(stderr, "bench-idmap-mount: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int parse_map(const char *s, char *out, size_t len)
{
	unsigned long a, b, c;
	char extra;

	if (sscanf(s, "%lu:%lu:%lu%c", &a, &b, &c, &extra) != 3 || c == 0)
		return -1;
	/* shiftfs order (on-disk:shown:count) == uid_map order
	 * (inside:outside:count) for an idmapped mount */
	snprintf(out, len, "%lu %lu %lu\n", a, b, c);
	return 0;
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		die(path);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die(path);
	close(fd);
}

int main(int argc, char **argv)
{
	char umap[64] = "0 100000 65536\n", gmap[64] = "0 100000 65536\n";
	int sync_pipe[2], opt, timed = 0, nsfd, tree;
	struct timespec t0, t1;
	struct attr attr;
	char path[64];
	pid_t pid;

	while ((opt = getopt(argc, argv, "u:g:t")) != -1) {
		switch (opt) {
		case 'u':
			if (parse_map(optarg, umap, sizeof(umap)))
				goto usage;
			break;
		case 'g':
			if (parse_map(optarg, gmap, sizeof(gmap)))
				goto usage;
			break;
		case 't':
			timed = 1;
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (pipe2(sync_pipe, O_CLOEXEC))
		die("pipe");
	pid = child = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		char c = 'u';

		close(sync_pipe[0]);
		if (unshare(CLONE_NEWUSER))
			_exit(1);
		if (write(sync_pipe[1], &c, 1) != 1)
			_exit(1);
		/* wait to be killed once the parent holds our namespace */
		for (;;)
			pause();
	}
	close(sync_pipe[1]);
	{
		char c;

		if (read(sync_pipe[0], &c, 1) != 1) {
			errno = ECHILD;
			die("child unshare(CLONE_NEWUSER)");
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	write_file(path, umap);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	write_file(path, gmap);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		die(path);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	child = 0;

	tree = syscall(__NR_open_tree, AT_FDCWD, argv[optind],
		       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		die("open_tree");
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_IDMAP;
	attr.userns_fd = nsfd;
	if (syscall(__NR_mount_setattr, tree, "", AT_EMPTY_PATH, &attr,
		    sizeof(attr)))
		die(errno == EINVAL ?
		    "mount_setattr(MOUNT_ATTR_IDMAP) (filesystem without idmapped-mount support?)" :
		    "mount_setattr(MOUNT_ATTR_IDMAP)");
	if (syscall(__NR_move_mount, tree, "", AT_FDCWD, argv[optind + 1],
		    MOVE_MOUNT_F_EMPTY_PATH))
		die("move_mount");
	close(tree);
	close(nsfd);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (timed)
		printf("%.6f\n", (t1.tv_sec - t0.tv_sec) +
		       (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;

usage:
	fprintf(stderr, "usage: bench-idmap-mount [-u FROM:TO:COUNT] "
		"[-g FROM:TO:COUNT] [-t] SRC DST\n");
	return 2;
}
