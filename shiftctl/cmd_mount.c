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

/* mkdir -p, each new directory owned by uid:gid (the container's root). */
static int mkdir_p(const char *path, uid_t uid, gid_t gid,
		   struct created_dirs *d)
{
	_cleanup_free_ char *buf = strdup(path);
	size_t slashes = 1;
	char *p;
	int ret;

	if (!buf)
		return -ENOMEM;
	for (p = buf; *p; p++)
		slashes += *p == '/';
	d->path = calloc(slashes, sizeof(*d->path));
	if (!d->path)
		return -ENOMEM;
	for (p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		if (p[-1] != '/') {
			char c = *p;

			*p = '\0';
			if (mkdir(buf, 0755) == 0) {
				d->path[d->nr] = strdup(buf);
				if (!d->path[d->nr]) {
					rmdir(buf);
					return -ENOMEM;
				}
				d->nr++;
				if (lchown(buf, uid, gid))
					warn("%s: cannot chown to %u:%u",
						 buf, (unsigned)uid, (unsigned)gid);
			} else if (errno != EEXIST) {
				ret = -errno;
				warnc(-ret, "%s: cannot create", buf);
				return ret;
			}
			*p = c;
		}
		if (!*p)
			break;
	}
	return 0;
}

static int check_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st)) {
		warn("%s", path);
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		warnx("%s: not a directory", path);
		return -ENOTDIR;
	}
	return 0;
}

int cmd_mount(const struct sc_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "uidmap",         required_argument, NULL, 'u' },
		{ "gidmap",         required_argument, NULL, 'g' },
		{ "pid",            required_argument, NULL, 'p' },
		{ "container",      required_argument, NULL, 'c' },
		{ "ro",             no_argument,       NULL, 'r' },
		{ "allow-identity", no_argument,       NULL, OPT_ALLOW_IDENTITY },
		{ "suid",           no_argument,       NULL, OPT_SUID },
		{ "help",           no_argument,       NULL, 'h' },
		{ "version",        no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *src, *dst;
	struct map_source ms;
	struct shift_opts opts = { .uid = &ms.uid, .gid = &ms.gid };
	struct shift_info info;
	_cleanup_close_ int mfd = -EBADF;
	bool allow_identity = false;
	int c, ret;

	map_source_init(&ms);
	while ((c = getopt_long(argc, argv, "u:g:p:c:rhV", longopts, NULL)) != -1) {
		ret = map_source_option(cmd, &ms, c, optarg);
		if (ret >= 0) {
			if (ret)
				return ret;
			continue;
		}
		switch (c) {
		case 'r':
			opts.ro = true;
			break;
		case OPT_ALLOW_IDENTITY:
			allow_identity = true;
			break;
		case OPT_SUID:
			opts.suid = true;
			break;
		case 'h':
			cmd_usage(cmd, stdout);
			return EXIT_SUCCESS;
		case 'V':
			print_version();
			return EXIT_SUCCESS;
		default:
			return cmd_usage_error(cmd, NULL);
		}
	}
	if (argc - optind != 2)
		return cmd_usage_error(cmd, "expected SRC and DST");
	src = argv[optind];
	dst = argv[optind + 1];
	ret = map_source_check(cmd, &ms);
	if (ret)
		return ret;
	/* Root of a user namespace: the kernel takes the maps from it. */
	if (!map_source_from_process(&ms) && !ms.uid.nr && !ms.gid.nr &&
	    in_user_namespace()) {
		if (check_dir(dst))
			return EXIT_FAILURE;
		return mount_from_mark(src, dst, opts.ro) ? EXIT_FAILURE
							  : EXIT_SUCCESS;
	}
	if (!map_source_from_process(&ms) && !ms.uid.nr && !ms.gid.nr)
		return cmd_usage_error(cmd, "no maps: give --uidmap/--gidmap, --pid or --container");

	if (need_privileges())
		return EXIT_FAILURE;
	if (map_source_resolve(&ms, allow_identity))
		return EXIT_FAILURE;
	if (check_dir(dst))
		return EXIT_FAILURE;
	mfd = shift_build(src, &opts, &info);
	if (mfd < 0)
		return EXIT_FAILURE;
	if (move_mount(mfd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH)) {
		warn("%s: cannot mount on %s", src, dst);
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

/* path must be the top mount of its mount point, and a shiftfs one. */
static int check_shiftfs_mount(FILE *mountinfo, const char *path,
			       const char *shown)
{
	_cleanup_free_ char *type = NULL;
	int ret;

	ret = find_mount(mountinfo, path, &type);
	if (ret == -ENOENT) {
		warnx("%s: not a mount point", shown);
		return ret;
	}
	if (ret) {
		warnc(-ret, "%s: cannot read the mount table", shown);
		return ret;
	}
	if (strcmp(type, "shiftfs")) {
		warnx("%s: not a shiftfs mount (it is %s)", shown, type);
		return -EINVAL;
	}
	return 0;
}

static int do_umount(const char *path, const char *shown)
{
	if (!umount2(path, UMOUNT_NOFOLLOW))
		return 0;
	if (errno == EBUSY)
		warnx("%s: cannot unmount: busy (files open or a process's cwd under it)",
			 shown);
	else
		warn("%s: cannot unmount", shown);
	return -1;
}

int cmd_umount(const struct sc_cmd *cmd, int argc, char **argv)
{
	_cleanup_free_ char *abs = NULL;
	FILE *mi;
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
	mi = fopen("/proc/self/mountinfo", "re");
	if (!mi) {
		warn("/proc/self/mountinfo");
		return EXIT_FAILURE;
	}
	ret = check_shiftfs_mount(mi, abs, argv[optind]);
	fclose(mi);
	if (ret || do_umount(abs, argv[optind]))
		return EXIT_FAILURE;
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
		{ "ro",             no_argument,       NULL, 'r' },
		{ "allow-identity", no_argument,       NULL, OPT_ALLOW_IDENTITY },
		{ "suid",           no_argument,       NULL, OPT_SUID },
		{ "help",           no_argument,       NULL, 'h' },
		{ "version",        no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	_cleanup_close_ int nsfd = -EBADF, mfd = -EBADF;
	_cleanup_free_ char *path = NULL;
	struct created_dirs dirs = { NULL, 0 };
	struct idmap uid, gid;
	struct shift_opts opts = { .uid = &uid, .gid = &gid };
	struct shift_info info;
	const char *container, *image;
	bool allow_identity = false;
	int64_t root_uid, root_gid;
	int c, ret = EXIT_FAILURE;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "P:rhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'P':
			free(path);
			path = strdup(optarg);
			if (!path)
				return EXIT_FAILURE;
			break;
		case 'r':
			opts.ro = true;
			break;
		case OPT_ALLOW_IDENTITY:
			allow_identity = true;
			break;
		case OPT_SUID:
			opts.suid = true;
			break;
		case 'h':
			cmd_usage(cmd, stdout);
			return EXIT_SUCCESS;
		case 'V':
			print_version();
			return EXIT_SUCCESS;
		default:
			return cmd_usage_error(cmd, NULL);
		}
	}
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
	if (container_resolve(container, &pid) ||
	    pid_maps(pid, allow_identity, &uid, &gid))
		return EXIT_FAILURE;
	nsfd = open_mntns(pid);
	if (nsfd < 0)
		return EXIT_FAILURE;

	/* built in the host, where IMAGE's path means something */
	mfd = shift_build(image, &opts, &info);
	if (mfd < 0)
		return EXIT_FAILURE;
	if (enter_mntns(nsfd, container))
		return EXIT_FAILURE;
	sc_debug("in the mount namespace of pid %d", (int)pid);

	/* directories we make belong to the container's root, if it has one */
	root_uid = idmap_map(&uid, 0);
	root_gid = idmap_map(&gid, 0);
	if (mkdir_p(path, root_uid < 0 ? 0 : (uid_t)root_uid,
		    root_gid < 0 ? 0 : (gid_t)root_gid, &dirs))
		goto out;
	if (move_mount(mfd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH)) {
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
	ret = check_shiftfs_mount(mi, abs, path);
	fclose(mi);
	if (ret || do_umount(abs, path))
		return EXIT_FAILURE;
	/* the default mount point is ours: remove it if nothing else is there */
	if (!strncmp(abs, "/mnt/shiftfs-", 13))
		rmdir(abs);
	return EXIT_SUCCESS;
}
