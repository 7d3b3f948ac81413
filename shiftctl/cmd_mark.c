// SPDX-License-Identifier: GPL-2.0
/*
 * shiftctl mark, and mount from inside a user namespace (unmark is an
 * unmount: cmd_mount.c).
 *
 * A mark is a shiftfs mount with the "mark" flag that host root puts on a
 * directory, over the directory itself: an opaque token saying which maps
 * user namespaces may shift-mount that tree with.  Root of a user
 * namespace whose uid_map/gid_map the mark allows then mounts shiftfs with
 * the marked directory as its source and no maps: the kernel derives them
 * from the namespace.  Unmarking is unmounting the mark; mounts already
 * made from it stay.
 */
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <sys/mount.h>

#include "shiftctl.h"

int mark_dir_fd(const char *path, int dfd, const struct idmap *uid,
		const struct idmap *gid)
{
	struct shift_opts opts = { .uid = uid, .gid = gid, .kind = SHIFT_MARK };
	_cleanup_close_ int mfd = -EBADF;
	_cleanup_free_ char *options = NULL;
	int ret;

	mfd = shift_build(path, &opts);
	if (mfd < 0)
		return -1;
	if (dfd >= 0)
		ret = move_mount(mfd, "", dfd, "",
				 MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	else
		ret = move_mount(mfd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH);
	if (ret) {
		warn("%s: cannot put the mark on it", path);
		return -1;
	}
	options = idmap_format_options(uid, gid);
	sc_debug("%s marked with %s", path, options ? options : "?");
	return 0;
}

int cmd_mark(const struct sc_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "uidmap",    required_argument, NULL, 'u' },
		{ "gidmap",    required_argument, NULL, 'g' },
		{ "pid",       required_argument, NULL, 'p' },
		{ "container", required_argument, NULL, 'c' },
		{ "user",      required_argument, NULL, 'U' },
		{ "own-ids",   no_argument,       NULL, 'O' },
		{ "declare",   no_argument,       NULL, 'D' },
		{ "declared",  no_argument,       NULL, 'A' },
		{ "help",      no_argument,       NULL, 'h' },
		{ "version",   no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct map_source ms;
	_cleanup_free_ char *abs = NULL;
	bool own_ids = false, declare = false, declared = false;
	const char *user = NULL;
	int c, ret;

	map_source_init(&ms);
	while ((c = getopt_long(argc, argv, "u:g:p:c:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'U':
			user = optarg;
			continue;
		case 'O':
			own_ids = true;
			continue;
		case 'D':
			declare = true;
			continue;
		case 'A':
			declared = true;
			continue;
		}
		ret = map_source_option(cmd, &ms, c, optarg);
		if (ret >= 0) {
			if (ret)
				return ret;
			continue;
		}
		return common_option(cmd, c);
	}
	if (declared) {
		if (argc != optind || user || own_ids || declare ||
		    ms.uid.nr || ms.gid.nr || map_source_from_process(&ms))
			return cmd_usage_error(cmd, "--declared takes no DIR and no other option: it makes the marks %s declares",
					       "/etc/shiftfs/marks");
		if (need_privileges())
			return EXIT_FAILURE;
		return mark_declared_all();
	}
	if (argc - optind != 1)
		return cmd_usage_error(cmd, "expected DIR");
	ret = map_source_check(cmd, &ms);
	if (ret)
		return ret;
	if (own_ids && !user)
		return cmd_usage_error(cmd, "--own-ids goes with --user NAME");
	if (user && (ms.uid.nr || ms.gid.nr || map_source_from_process(&ms)))
		return cmd_usage_error(cmd, "--user NAME takes the maps from NAME's /etc/subuid and /etc/subgid ranges: give no other maps");
	if (declare && map_source_from_process(&ms))
		return cmd_usage_error(cmd, "--declare takes --user NAME or --uidmap and --gidmap: a process's maps do not outlive it");
	if (!user && !map_source_from_process(&ms) && (!ms.uid.nr || !ms.gid.nr))
		return cmd_usage_error(cmd, "a mark needs the maps it allows: --user NAME, --uidmap and --gidmap, or --pid/--container (without maps it would let any user namespace act as root on DIR)");

	if (need_privileges())
		return EXIT_FAILURE;
	if (declare)
		return mark_declare(argv[optind], user, own_ids, &ms.uid, &ms.gid);
	if (user && user_maps(user, own_ids, &ms.uid, &ms.gid))
		return EXIT_FAILURE;
	if (map_source_resolve(&ms, false))
		return EXIT_FAILURE;
	if (check_dir(argv[optind], " (only directory trees can be marked)"))
		return EXIT_FAILURE;
	abs = realpath(argv[optind], NULL);
	if (!abs) {
		warn("%s", argv[optind]);
		return EXIT_FAILURE;
	}
	return mark_dir_fd(abs, -EBADF, &ms.uid, &ms.gid) ? EXIT_FAILURE
							   : EXIT_SUCCESS;
}

/*
 * shiftctl mount SRC DST without maps, inside a user namespace.  The
 * kernel derives the maps from the namespace and checks them against the
 * mark on SRC; we show what it will derive (our own view of
 * /proc/self/uid_map) and, on refusal, its reasons.
 */
int mount_from_mark(const char *src, const char *dst, bool ro)
{
	_cleanup_free_ char *utext = NULL, *gtext = NULL, *options = NULL;
	struct idmap uid, gid, none;
	struct shift_opts opts = { .uid = &none, .gid = &none,
				   .kind = SHIFT_FROM_MARK, .ro = ro };
	_cleanup_close_ int mfd = -EBADF;
	char err[512];
	int ret;

	idmap_init(&none);
	ret = read_text("/proc/self/uid_map", &utext);
	if (!ret)
		ret = read_text("/proc/self/gid_map", &gtext);
	if (ret) {
		warnc(-ret, "/proc/self/uid_map");
		return -1;
	}
	if (idmap_derive(utext, gtext, false, "this process", &uid, &gid, err,
			 sizeof(err))) {
		warnx("%s", err);
		return -1;
	}
	options = idmap_format_options(&uid, &gid);
	printf("%s: mounting from its mark with %s (derived from /proc/self/uid_map and gid_map)\n",
	       src, options ? options : "?");
	fflush(stdout);
	if (need_cap_sys_admin("in this user namespace: run it as the namespace's root"))
		return -1;
	mfd = shift_build(src, &opts);
	if (mfd < 0) {
		warnx("%s: the kernel refused the mount from a mark (see its reasons above)",
			 src);
		return -1;
	}
	if (move_mount(mfd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH)) {
		warn("%s: cannot mount on %s", src, dst);
		return -1;
	}
	printf("%s: mounted on %s\n", src, dst);
	return 0;
}
