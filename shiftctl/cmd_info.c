// SPDX-License-Identifier: GPL-2.0
/*
 * shiftctl maps, check.
 */
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "json.h"
#include "shiftctl.h"

enum {
	OPT_ALLOW_IDENTITY = CHAR_MAX + 1,
};

struct info_opts {
	bool json;
	bool allow_identity;
};

/*
 * Options shared by maps and check.  Returns -1 to go on, or the
 * exit status (help, version, usage error).
 */
static int info_options(const struct sc_cmd *cmd, int argc, char **argv,
			struct info_opts *o, bool identity_ok)
{
	static const struct option longopts[] = {
		{ "json",           no_argument, NULL, 'J' },
		{ "allow-identity", no_argument, NULL, OPT_ALLOW_IDENTITY },
		{ "help",           no_argument, NULL, 'h' },
		{ "version",        no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "JhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'J':
			o->json = true;
			break;
		case OPT_ALLOW_IDENTITY:
			if (!identity_ok)
				return cmd_usage_error(cmd, "unknown option --allow-identity");
			o->allow_identity = true;
			break;
		default:
			return common_option(cmd, c);
		}
	}
	return -1;
}

int cmd_maps(const struct sc_cmd *cmd, int argc, char **argv)
{
	_cleanup_free_ char *options = NULL;
	struct idmap uid, gid;
	struct info_opts o;
	pid_t pid;
	int ret;

	ret = info_options(cmd, argc, argv, &o, true);
	if (ret >= 0)
		return ret;
	if (argc - optind != 1)
		return cmd_usage_error(cmd, "expected PID or CONTAINER");
	if (container_resolve(argv[optind], &pid) ||
	    pid_maps(pid, o.allow_identity, &uid, &gid))
		return EXIT_FAILURE;
	options = idmap_format_options(&uid, &gid);
	if (!options) {
		warnx("out of memory");
		return EXIT_FAILURE;
	}
	if (!o.json) {
		printf("%s\n", options);
		return EXIT_SUCCESS;
	}
	printf("{\"pid\":%d,\"uidmap\":", (int)pid);
	json_idmap(stdout, &uid);
	fputs(",\"gidmap\":", stdout);
	json_idmap(stdout, &gid);
	fputs(",\"options\":", stdout);
	json_string(stdout, options);
	fputs("}\n", stdout);
	return EXIT_SUCCESS;
}

/* check */

struct check_item {
	const char *name;
	bool ok;
	char detail[PATH_MAX + 64];
};

/*
 * Depth-first search under path (a buffer of size bytes, extended in
 * place) for a regular file whose name starts with prefix; true if found,
 * with path naming it.
 */
static bool find_file(char *path, size_t size, const char *prefix, int depth)
{
	size_t len = strlen(path);
	struct dirent *de;
	bool found = false;
	struct stat st;
	DIR *dir;

	if (depth > 16)
		return false;
	dir = opendir(path);
	if (!dir)
		return false;
	while (!found && (de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(path + len, size - len, "/%s", de->d_name) >=
		    size - len)
			continue;
		if (lstat(path, &st))
			continue;
		if (S_ISREG(st.st_mode) &&
		    !strncmp(de->d_name, prefix, strlen(prefix)))
			found = true;
		else if (S_ISDIR(st.st_mode))
			found = find_file(path, size, prefix, depth + 1);
	}
	closedir(dir);
	if (!found)
		path[len] = '\0';
	return found;
}

static void check_module(struct check_item *it, const char *release)
{
	_cleanup_free_ char *builtin = NULL;
	char dir[PATH_MAX], path[PATH_MAX + 32];

	it->name = "module";
	snprintf(dir, sizeof(dir), "/lib/modules/%s", release);
	snprintf(path, sizeof(path), "%s/modules.builtin", dir);
	if (read_text(path, &builtin) == 0 && strstr(builtin, "/shiftfs.ko")) {
		it->ok = true;
		snprintf(it->detail, sizeof(it->detail), "built into the kernel");
		return;
	}
	snprintf(path, sizeof(path), "%s", dir);
	if (find_file(path, sizeof(path), "shiftfs.ko", 0)) {
		it->ok = true;
		snprintf(it->detail, sizeof(it->detail), "%s", path);
		return;
	}
	snprintf(it->detail, sizeof(it->detail),
		 "no shiftfs.ko under %s (build and install module/)", dir);
}

static void check_loaded(struct check_item *it)
{
	it->name = "loaded";
	it->ok = access("/sys/module/shiftfs", F_OK) == 0;
	snprintf(it->detail, sizeof(it->detail), "%s",
		 it->ok ? "/sys/module/shiftfs present"
			: "not loaded (modprobe shiftfs)");
}

static void check_filesystem(struct check_item *it)
{
	_cleanup_free_ char *fs = NULL;

	it->name = "filesystem";
	it->ok = read_text("/proc/filesystems", &fs) == 0 &&
		 strstr(fs, "\tshiftfs\n");
	snprintf(it->detail, sizeof(it->detail), "%s",
		 it->ok ? "shiftfs listed in /proc/filesystems"
			: "shiftfs not in /proc/filesystems: mounts will fail");
}

static void check_mount_api(struct check_item *it)
{
	int fd, e;

	it->name = "mount-api";
	fd = fsopen("tmpfs", FSOPEN_CLOEXEC);
	e = errno;
	if (fd >= 0)
		close(fd);
	it->ok = fd >= 0 || e != ENOSYS;
	snprintf(it->detail, sizeof(it->detail), "%s",
		 fd >= 0 ? "fsopen/fsconfig/fsmount/move_mount work" :
		 e == ENOSYS ? "fsopen() is missing: kernel older than 5.2" :
		 e == EPERM ? "fsopen() present (not tried: needs CAP_SYS_ADMIN)" :
			      "fsopen() present");
}

static void check_idmapped(struct check_item *it)
{
	/* size 0 is refused with EINVAL by any kernel that has the call */
	int rc = mount_setattr(-EBADF, "", 0, NULL, 0);

	it->name = "idmapped-mounts";
	it->ok = rc == 0 || errno != ENOSYS;
	snprintf(it->detail, sizeof(it->detail), "%s",
		 it->ok ? "mount_setattr() present (MOUNT_ATTR_IDMAP, 5.12+)"
			: "mount_setattr() missing: kernel older than 5.12");
}

static void check_loop(struct check_item *it)
{
	it->name = "loop";
	it->ok = access("/dev/loop-control", F_OK) == 0;
	snprintf(it->detail, sizeof(it->detail), "%s",
		 it->ok ? "/dev/loop-control present: image files can be mounted"
			: "/dev/loop-control missing: only directories can be mounted");
}

int cmd_check(const struct sc_cmd *cmd, int argc, char **argv)
{
	struct check_item items[6];
	struct info_opts o;
	struct utsname u;
	bool usable;
	size_t i, n = 0;
	int ret;

	ret = info_options(cmd, argc, argv, &o, false);
	if (ret >= 0)
		return ret;
	if (argc - optind != 0)
		return cmd_usage_error(cmd, "takes no arguments");
	memset(items, 0, sizeof(items));
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");

	check_module(&items[n++], u.release);
	check_loaded(&items[n++]);
	check_filesystem(&items[n++]);
	check_mount_api(&items[n++]);
	check_idmapped(&items[n++]);
	check_loop(&items[n++]);
	/* what a shiftfs mount needs: the fs type registered, the new API */
	usable = items[2].ok && items[3].ok;

	if (o.json) {
		fputs("{\"kernel\":", stdout);
		json_string(stdout, u.release);
		printf(",\"usable\":%s,\"checks\":[", usable ? "true" : "false");
		for (i = 0; i < n; i++) {
			fputs(i ? ",{\"name\":" : "{\"name\":", stdout);
			json_string(stdout, items[i].name);
			printf(",\"ok\":%s,\"detail\":", items[i].ok ? "true" : "false");
			json_string(stdout, items[i].detail);
			fputc('}', stdout);
		}
		fputs("]}\n", stdout);
	} else {
		printf("kernel %s\n", u.release);
		for (i = 0; i < n; i++)
			printf("%-16s %-8s %s\n", items[i].name,
			       items[i].ok ? "ok" : "missing", items[i].detail);
		printf("shiftfs is %s\n", usable ? "usable" : "not usable");
	}
	return usable ? EXIT_SUCCESS : EXIT_FAILURE;
}
