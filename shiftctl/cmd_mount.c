// SPDX-License-Identifier: GPL-2.0
/*
 * shiftctl mount, umount, attach, detach.
 */
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include "decl.h"
#include "shiftctl.h"

enum {
	OPT_ALLOW_IDENTITY = CHAR_MAX + 1,
	OPT_SUID,
};

/* Directories attach created, to remove again if it fails. */
struct created_dirs {
	char **path;
	int nr;
};

static void created_dirs_remove(struct created_dirs *d)
{
	while (d->nr > 0) {
		d->nr--;
		if (rmdir(d->path[d->nr]))
			warn("%s: cannot remove", d->path[d->nr]);
	}
}

static void created_dirs_free(struct created_dirs *d)
{
	int i;

	for (i = 0; i < d->nr; i++)
		free(d->path[i]);
	free(d->path);
	d->path = NULL;
	d->nr = 0;
}

/*
 * mkdir -p, each new directory owned by uid:gid (the container's root),
 * following no symbolic link on the way: attach runs as host root in the
 * container's mount namespace, whose tree the container's user may write,
 * and a link planted there may point at any directory that namespace sees
 * (the host's, for a container that shares its root).  Returns an O_PATH
 * fd of the directory, to mount on, or -errno.
 */
static int mkdir_p(const char *path, uid_t uid, gid_t gid,
		   struct created_dirs *d)
{
	_cleanup_free_ char *buf = strdup(path);
	_cleanup_close_ int dfd = -EBADF;
	size_t slashes = 1;
	struct stat st;
	char *p, *name;
	int fd, ret;

	if (!buf)
		return -ENOMEM;
	for (p = buf; *p; p++)
		slashes += *p == '/';
	d->path = calloc(slashes, sizeof(*d->path));
	if (!d->path)
		return -ENOMEM;
	dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ret = -errno;
		warnc(-ret, "/");
		return ret;
	}
	for (name = buf + 1; *name; name = p) {
		p = strchrnul(name, '/');
		if (p == name) {	/* "//" */
			p++;
			continue;
		}
		/* buf up to the end of this component names it in messages */
		if (*p)
			*p++ = '\0';
		if (!strcmp(name, "..")) {
			warnx("%s: '..' in the path", path);
			return -EINVAL;
		}
		if (mkdirat(dfd, name, 0755) == 0) {
			d->path[d->nr] = strdup(buf);
			if (!d->path[d->nr]) {
				unlinkat(dfd, name, AT_REMOVEDIR);
				return -ENOMEM;
			}
			d->nr++;
			if (fchownat(dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW))
				warn("%s: cannot chown to %u:%u",
				     buf, (unsigned)uid, (unsigned)gid);
		} else if (errno != EEXIST) {
			ret = -errno;
			warnc(-ret, "%s: cannot create", buf);
			return ret;
		}
		fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			ret = -errno;
			warnc(-ret, "%s", buf);
			if (fd >= 0)
				close(fd);
			return ret;
		}
		closep(&dfd);
		dfd = fd;
		if (S_ISLNK(st.st_mode)) {
			warnx("%s: %s is a symbolic link (not followed)",
			      path, buf);
			return -ELOOP;
		}
		if (!S_ISDIR(st.st_mode)) {
			warnx("%s: %s is not a directory", path, buf);
			return -ENOTDIR;
		}
		if (*p)
			p[-1] = '/';
	}
	fd = dfd;
	dfd = -EBADF;
	return fd;
}

/* The long options mount and attach share, the table's end. */
#define MOUNT_LONGOPTS \
	{ "ro",             no_argument,       NULL, 'r' }, \
	{ "allow-identity", no_argument,       NULL, OPT_ALLOW_IDENTITY }, \
	{ "suid",           no_argument,       NULL, OPT_SUID }, \
	{ "help",           no_argument,       NULL, 'h' }, \
	{ "version",        no_argument,       NULL, 'V' }, \
	{ NULL, 0, NULL, 0 }

/* What mount and attach share: their options and the shifted mount. */
struct mount_args {
	struct map_source ms;	/* mount only */
	struct shift_opts opts;
	bool allow_identity;
	char *path;		/* attach --path */
};

/*
 * The options of mount (maps, a map source) or attach (--path): longopts
 * and optstring say which.  -1 to go on, else the exit status.
 */
static int mount_options(const struct sc_cmd *cmd, int argc, char **argv,
			 const struct option *longopts, const char *optstring,
			 struct mount_args *a)
{
	int c, ret;

	map_source_init(&a->ms);
	a->opts = (struct shift_opts){ .uid = &a->ms.uid, .gid = &a->ms.gid };
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		ret = map_source_option(cmd, &a->ms, c, optarg);
		if (ret >= 0) {
			if (ret)
				return ret;
			continue;
		}
		switch (c) {
		case 'P':
			free(a->path);
			a->path = strdup(optarg);
			if (!a->path)
				err(EXIT_FAILURE, "--path");
			break;
		case 'r':
			a->opts.ro = true;
			break;
		case OPT_SUID:
			a->opts.suid = true;
			break;
		case OPT_ALLOW_IDENTITY:
			a->allow_identity = true;
			break;
		default:
			return common_option(cmd, c);
		}
	}
	return -1;
}

int cmd_mount(const struct sc_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "uidmap",         required_argument, NULL, 'u' },
		{ "gidmap",         required_argument, NULL, 'g' },
		{ "pid",            required_argument, NULL, 'p' },
		{ "container",      required_argument, NULL, 'c' },
		MOUNT_LONGOPTS
	};
	struct mount_args a = { .path = NULL };
	struct map_source *ms = &a.ms;
	_cleanup_close_ int mfd = -EBADF;
	const char *src, *dst;
	int ret;

	ret = mount_options(cmd, argc, argv, longopts, "u:g:p:c:rhV", &a);
	if (ret >= 0)
		return ret;
	if (argc - optind != 2)
		return cmd_usage_error(cmd, "expected SRC and DST");
	src = argv[optind];
	dst = argv[optind + 1];
	ret = map_source_check(cmd, ms);
	if (ret)
		return ret;
	/* Root of a user namespace: the kernel takes the maps from it. */
	if (!map_source_from_process(ms) && !ms->uid.nr && !ms->gid.nr &&
	    in_user_namespace()) {
		if (check_dir(dst, ""))
			return EXIT_FAILURE;
		return mount_from_mark(src, dst, a.opts.ro) ? EXIT_FAILURE
							    : EXIT_SUCCESS;
	}
	if (!map_source_from_process(ms) && !ms->uid.nr && !ms->gid.nr)
		return cmd_usage_error(cmd, "no maps: give --uidmap/--gidmap, --pid or --container");

	if (need_privileges())
		return EXIT_FAILURE;
	if (map_source_resolve(ms, a.allow_identity))
		return EXIT_FAILURE;
	if (check_dir(dst, ""))
		return EXIT_FAILURE;
	mfd = shift_build(src, &a.opts);
	if (mfd < 0)
		return EXIT_FAILURE;
	if (move_mount(mfd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH)) {
		warn("%s: cannot mount on %s", src, dst);
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

/*
 * Unmount the top mount on abs (shown: as the user named it), which must
 * be a shiftfs mount, and a mark if mark is set; mountinfo NULL: ours.
 */
static int unmount_shiftfs(FILE *mountinfo, const char *abs,
			   const char *shown, bool mark)
{
	struct top_mount top;
	int ret;

	ret = find_top_mount(mountinfo, abs, &top);
	if (ret && ret != -ENOENT) {
		warnc(-ret, "%s: cannot read the mount table", shown);
		return ret;
	}
	if (mark && (ret || !top.mark)) {
		warnx("%s: not marked (no shiftfs mark is the top mount there)",
		      shown);
		return -EINVAL;
	}
	if (ret) {
		warnx("%s: not a mount point", shown);
		return ret;
	}
	if (strcmp(top.fstype, "shiftfs")) {
		warnx("%s: not a shiftfs mount (it is %s)", shown, top.fstype);
		return -EINVAL;
	}
	/*
	 * Unmounting ours would leave the copies other mount namespaces
	 * hold usable: end the mark itself first.  If that fails, the mark
	 * stays as it was, for another try.
	 */
	if (mark) {
		ret = revoke_mark(abs, shown);
		if (ret)
			return ret;
	}
	if (!umount2(abs, UMOUNT_NOFOLLOW))
		return 0;
	ret = -errno;
	/*
	 * A revoked mark is busy while a mount from it that started before
	 * the revocation still looks its source up (shiftctl attach racing
	 * us): that ends within moments, and nothing new can start.  Try
	 * again for about two seconds before saying busy; the mark stays
	 * revoked either way.
	 */
	for (long ms = 10, waited = 0; mark && ret == -EBUSY && waited < 2000;
	     waited += ms, ms = ms < 250 ? ms * 2 : ms) {
		nanosleep(&(struct timespec){ .tv_nsec = ms * 1000000 }, NULL);
		if (!umount2(abs, UMOUNT_NOFOLLOW))
			return 0;
		ret = -errno;
	}
	if (ret == -EBUSY)
		warnx("%s: cannot unmount: busy (files open or a process's cwd under it)%s",
		      shown, mark ? "; the mark is revoked, unmark again once it is let go" : "");
	else
		warnc(-ret, "%s: cannot %s", shown, mark ? "unmark" : "unmount");
	return ret;
}

/* umount DST: one operand, a shiftfs mount on it (unmark: cmd_unmark) */
int cmd_umount(const struct sc_cmd *cmd, int argc, char **argv)
{
	_cleanup_free_ char *abs = NULL;
	int ret;

	ret = plain_options(cmd, argc, argv);
	if (ret >= 0)
		return ret;
	if (argc - optind != 1)
		return cmd_usage_error(cmd, "expected DST");
	/* a user namespace's root may unmount what it mounted from a mark */
	if (need_cap_sys_admin("run it as root, or as root of the user namespace that mounted it"))
		return EXIT_FAILURE;
	abs = realpath(argv[optind], NULL);
	if (!abs) {
		warn("%s", argv[optind]);
		return EXIT_FAILURE;
	}
	return unmount_shiftfs(NULL, abs, argv[optind], false) ? EXIT_FAILURE
								 : EXIT_SUCCESS;
}

int unmark_dir(const char *abs, const char *shown)
{
	return unmount_shiftfs(NULL, abs, shown, true);
}

/*
 * unmark DIR: its mark revoked and unmounted, and its declaration
 * (/etc/shiftfs/marks) dropped; unmark --declared: every declared mark
 * unmade, the declarations kept (shiftfs-marks.service's stop).
 */
int cmd_unmark(const struct sc_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "declared", no_argument, NULL, 'D' },
		{ "help",     no_argument, NULL, 'h' },
		{ "version",  no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	_cleanup_free_ char *abs = NULL;
	struct top_mount top;
	bool all = false, marked;
	char why[512];
	int c, ret;

	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		if (c == 'D') {
			all = true;
			continue;
		}
		return common_option(cmd, c);
	}
	if (all ? argc != optind : argc - optind != 1)
		return cmd_usage_error(cmd, all ? "--declared takes no DIR" : "expected DIR");
	if (need_privileges())
		return EXIT_FAILURE;
	if (all)
		return unmark_declared_all();
	abs = realpath(argv[optind], NULL);
	if (!abs) {
		/* a declaration whose directory is gone can still be dropped */
		if (errno != ENOENT ||
		    decl_check_path(argv[optind], why, sizeof(why)) ||
		    undeclare(argv[optind]) != 1) {
			warn("%s", argv[optind]);
			return EXIT_FAILURE;
		}
		return EXIT_SUCCESS;
	}
	marked = !find_top_mount(NULL, abs, &top) && top.mark;
	if (marked && unmark_dir(abs, argv[optind]))
		return EXIT_FAILURE;
	ret = undeclare(abs);
	if (ret < 0)
		return EXIT_FAILURE;
	if (!marked && !ret) {
		warnx("%s: not marked (no shiftfs mark is the top mount there, and %s does not declare it)",
		      argv[optind], DECL_FILE);
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

static int open_mntns(pid_t pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		warn("%s", path);
	return fd;
}

static int enter_mntns(int nsfd, const char *container)
{
	if (setns(nsfd, CLONE_NEWNS) == 0)
		return 0;
	warn("container %s: cannot enter its mount namespace",
		 container);
	return -1;
}

/* /mnt/shiftfs-<last component of image>, or NULL if it has none. */
static char *default_path(const char *image)
{
	_cleanup_free_ char *copy = strdup(image);
	char *base, *path = NULL;
	size_t n;

	if (!copy)
		return NULL;
	n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	base = strrchr(copy, '/');
	base = base ? base + 1 : copy;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return NULL;
	if (asprintf(&path, "/mnt/shiftfs-%s", base) < 0)
		return NULL;
	return path;
}

int cmd_attach(const struct sc_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "path",           required_argument, NULL, 'P' },
		MOUNT_LONGOPTS
	};
	_cleanup_close_ int nsfd = -EBADF, mfd = -EBADF, dirfd = -EBADF;
	_cleanup_close_ int pidfd = -EBADF;
	struct mount_args a = { .path = NULL };
	struct created_dirs dirs = { NULL, 0 };
	const char *container, *image;
	_cleanup_free_ char *path = NULL;
	int64_t root_uid, root_gid;
	pid_t pid;
	int ret;

	ret = mount_options(cmd, argc, argv, longopts, "P:rhV", &a);
	path = a.path;
	if (ret >= 0)
		return ret;
	ret = EXIT_FAILURE;
	if (argc - optind != 2)
		return cmd_usage_error(cmd, "expected CONTAINER and IMAGE");
	container = argv[optind];
	image = argv[optind + 1];
	if (!path) {
		path = default_path(image);
		if (!path)
			return cmd_usage_error(cmd, "cannot name a mount point after '%s': give --path",
					       image);
	}
	if (path[0] != '/')
		return cmd_usage_error(cmd, "--path '%s' is not absolute", path);

	if (need_privileges())
		return EXIT_FAILURE;
	if (container_resolve(container, &pid))
		return EXIT_FAILURE;
	/*
	 * The maps and the mount namespace are read by pid, one after the
	 * other: they are one process's only if it still lives once both
	 * are read (a pid is not reused while its pidfd's process lives).
	 */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		warn("pid %d", (int)pid);
		return EXIT_FAILURE;
	}
	if (pid_maps(pid, a.allow_identity, &a.ms.uid, &a.ms.gid))
		return EXIT_FAILURE;
	nsfd = open_mntns(pid);
	if (nsfd < 0)
		return EXIT_FAILURE;
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0)) {
		warnx("container %s: pid %d exited while being attached to",
		      container, (int)pid);
		return EXIT_FAILURE;
	}

	/* built in the host, where IMAGE's path means something */
	mfd = shift_build(image, &a.opts);
	if (mfd < 0)
		return EXIT_FAILURE;
	if (enter_mntns(nsfd, container))
		return EXIT_FAILURE;
	sc_debug("in the mount namespace of pid %d", (int)pid);

	/* directories we make belong to the container's root, if it has one */
	root_uid = idmap_map(&a.ms.uid, 0);
	root_gid = idmap_map(&a.ms.gid, 0);
	dirfd = mkdir_p(path, root_uid < 0 ? 0 : (uid_t)root_uid,
			root_gid < 0 ? 0 : (gid_t)root_gid, &dirs);
	if (dirfd < 0)
		goto out;
	/* on the directory just checked, not on what path names now */
	if (move_mount(mfd, "", dirfd, "",
		       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)) {
		warn("container %s: cannot mount %s on %s",
			 container, image, path);
		goto out;
	}
	printf("%s\n", path);
	ret = EXIT_SUCCESS;
out:
	if (ret != EXIT_SUCCESS)
		created_dirs_remove(&dirs);
	created_dirs_free(&dirs);
	return ret;
}

int cmd_detach(const struct sc_cmd *cmd, int argc, char **argv)
{
	_cleanup_close_ int nsfd = -EBADF, mifd = -EBADF;
	_cleanup_free_ char *abs = NULL;
	const char *container, *path;
	char mipath[64];
	FILE *mi;
	pid_t pid;
	int ret;

	ret = plain_options(cmd, argc, argv);
	if (ret >= 0)
		return ret;
	if (argc - optind != 2)
		return cmd_usage_error(cmd, "expected CONTAINER and PATH");
	container = argv[optind];
	path = argv[optind + 1];
	if (path[0] != '/')
		return cmd_usage_error(cmd, "PATH '%s' is not absolute", path);
	if (need_privileges())
		return EXIT_FAILURE;
	if (container_resolve(container, &pid))
		return EXIT_FAILURE;
	nsfd = open_mntns(pid);
	if (nsfd < 0)
		return EXIT_FAILURE;
	/*
	 * The container's own /proc may belong to another pid namespace in
	 * which we have no /proc/self: take its mount table from the host's
	 * /proc before entering.
	 */
	snprintf(mipath, sizeof(mipath), "/proc/%d/mountinfo", (int)pid);
	mifd = open(mipath, O_RDONLY | O_CLOEXEC);
	if (mifd < 0) {
		warn("%s", mipath);
		return EXIT_FAILURE;
	}
	if (enter_mntns(nsfd, container))
		return EXIT_FAILURE;
	abs = realpath(path, NULL);
	if (!abs) {
		warn("container %s: %s", container, path);
		return EXIT_FAILURE;
	}
	mi = fdopen(mifd, "r");
	if (!mi) {
		warn("%s", mipath);
		return EXIT_FAILURE;
	}
	mifd = -EBADF;	/* fclose() owns it now */
	ret = unmount_shiftfs(mi, abs, path, false);
	fclose(mi);
	if (ret)
		return EXIT_FAILURE;
	/* the default mount point is ours: remove it if nothing else is there */
	if (!strncmp(abs, "/mnt/shiftfs-", 13))
		rmdir(abs);
	return EXIT_SUCCESS;
}
