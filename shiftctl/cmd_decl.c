// SPDX-License-Identifier: GPL-2.0
/*
 * Declared marks and marks made for a user.
 *
 * Host root declares a mark once (shiftctl mark --declare, or a line it
 * writes in /etc/shiftfs/marks itself: decl.h); shiftfs-marks.service
 * makes every declared mark at boot (shiftctl mark --declared), before
 * users can log in, and drops them when stopped (shiftctl unmark
 * --declared).  shiftctl unmark DIR drops DIR's declaration with its mark.
 *
 * The root side reads nothing a user writes but /etc/subuid and
 * /etc/subgid (root's files too) and walks each declared path itself, one
 * component at a time, never through a symlink, and only where no user
 * could change what the path names: every component is owned by root and
 * every directory above the marked one is writable by root alone (or
 * sticky, where only root can rename root's entries).  The mark then goes
 * onto the directory so opened, not onto a path looked up again.
 */
#include <fcntl.h>
#include <pwd.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "decl.h"
#include "shiftctl.h"
#include "subid.h"

#define DECL_DIR "/etc/shiftfs"

int user_maps(const char *user, bool own_ids, struct idmap *uid,
	      struct idmap *gid)
{
	_cleanup_free_ char *utext = NULL, *gtext = NULL;
	struct subid_range ur, gr;
	struct passwd *pw;
	char why[512];
	int ret;

	errno = 0;
	pw = getpwnam(user);
	if (!pw) {
		warnx("--user %s: no such user%s%s", user, errno ? ": " : "",
		      errno ? strerror(errno) : "");
		return -ENOENT;
	}
	ret = read_text("/etc/subuid", &utext);
	if (!ret)
		ret = read_text("/etc/subgid", &gtext);
	if (ret) {
		warnc(-ret, "%s", utext ? "/etc/subgid" : "/etc/subuid");
		return ret;
	}
	ret = subid_lookup(utext, "/etc/subuid", user, pw->pw_uid, &ur, why,
			   sizeof(why));
	if (!ret)
		ret = subid_lookup(gtext, "/etc/subgid", user, pw->pw_uid, &gr,
				   why, sizeof(why));
	if (!ret)
		ret = subid_user_map(&ur, own_ids, pw->pw_uid, uid, why,
				     sizeof(why));
	if (!ret)
		ret = subid_user_map(&gr, own_ids, pw->pw_gid, gid, why,
				     sizeof(why));
	if (ret)
		warnx("--user %s: %s", user, why);
	return ret;
}

/* (shiftctl list's; $SHIFTCTL_SUBUID names another file for the tests) */
int mark_user(const struct idmap *uid, char *buf, size_t size)
{
	_cleanup_free_ char *text = NULL;
	const char *file = getenv("SHIFTCTL_SUBUID");

	if (read_text(file && *file ? file : "/etc/subuid", &text))
		return -ENOENT;
	return subid_owner(text, uid, buf, size);
}

/*
 * path, walked from / without following a symlink, every component owned
 * by root and every directory above the last writable by root alone or
 * sticky: an O_PATH descriptor of it, or -1 (said why).
 */
static int open_declared(const char *path)
{
	_cleanup_free_ char *copy = strdup(path);
	_cleanup_close_ int fd = -EBADF;
	char *comp, *save = NULL;
	struct stat st;
	int nfd;

	if (!copy)
		return -1;
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		warn("/");
		return -1;
	}
	for (comp = strtok_r(copy, "/", &save); comp;
	     comp = strtok_r(NULL, "/", &save)) {
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
			/* the directory above comp: path up to comp's '/' */
			int len = (int)(comp - copy) - 1;

			warnx("%s: a user other than root may write %.*s (mode %04o): a declared mark's path must be one no user can change",
			      path, len ? len : 1, path, st.st_mode & 07777);
			return -1;
		}
		if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW)) {
			warn("%s: %s", path, comp);
			return -1;
		}
		if (S_ISLNK(st.st_mode)) {
			warnx("%s: %s is a symbolic link: declared marks are never made through one (declare the directory's own path)",
			      path, comp);
			return -1;
		}
		if (!S_ISDIR(st.st_mode)) {
			warnx("%s: %s is not a directory", path, comp);
			return -1;
		}
		nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			warn("%s: %s", path, comp);
			return -1;
		}
		closep(&fd);
		fd = nfd;
		if (fstat(fd, &st)) {
			warn("%s", path);
			return -1;
		}
		if (st.st_uid != 0) {
			warnx("%s: %s belongs to uid %u, not root: a declared mark's path must be one no user can change",
			      path, comp, (unsigned int)st.st_uid);
			return -1;
		}
	}
	nfd = fd;
	fd = -EBADF;
	return nfd;
}

/* The declarations' directory, locked (flock) while the caller works. */
static int lock_decl(void)
{
	int fd;

	if (mkdir(DECL_DIR, 0755) && errno != EEXIST) {
		warn("%s", DECL_DIR);
		return -1;
	}
	fd = open(DECL_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		warn("%s", DECL_DIR);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The file's text ("" when there is none), or NULL (said why). */
static char *read_decl(void)
{
	char *text = NULL;
	int ret = read_text(DECL_FILE, &text);

	if (ret == -ENOENT)
		return strdup("");
	if (ret)
		warnc(-ret, "%s", DECL_FILE);
	return text;
}

static int write_decl(const char *text)
{
	static const char tmp[] = DECL_FILE ".new";
	size_t len = strlen(text);
	int fd;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		warn("%s", tmp);
		return -1;
	}
	if (write(fd, text, len) != (ssize_t)len || fsync(fd)) {
		warn("%s", tmp);
		close(fd);
		unlink(tmp);
		return -1;
	}
	close(fd);
	if (rename(tmp, DECL_FILE)) {
		warn("%s", DECL_FILE);
		unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * Mark the declared dir (d's maps in uid, gid) unless it is marked with
 * them already: 0 marked, 1 already, -1 failed (said why).
 */
static int mark_one(const char *dir, const struct idmap *uid,
		    const struct idmap *gid)
{
	_cleanup_close_ int dfd = -EBADF;
	struct top_mount top;
	int ret;

	/* (a mark hides the directory's owner: look at the table first) */
	ret = find_top_mount(NULL, dir, &top);
	if (!ret && top.mark) {
		_cleanup_free_ char *have = idmap_format_options(&top.uid, &top.gid);
		_cleanup_free_ char *want = idmap_format_options(uid, gid);

		if (have && want && !strcmp(have, want))
			return 1;
		warnx("%s: marked already with %s, not %s: shiftctl unmark it first",
		      dir, have ? have : "?", want ? want : "?");
		return -1;
	}
	dfd = open_declared(dir);
	if (dfd < 0)
		return -1;
	return mark_dir_fd(dir, dfd, uid, gid) ? -1 : 0;
}

/* A declaration's maps: given, or its user's now. */
static int decl_maps(const struct decl *d, struct idmap *uid, struct idmap *gid)
{
	if (!d->user[0]) {
		*uid = d->uid;
		*gid = d->gid;
		return 0;
	}
	return user_maps(d->user, d->own_ids, uid, gid);
}

static void said(const char *what, const struct decl *d,
		 const struct idmap *uid, const struct idmap *gid)
{
	_cleanup_free_ char *maps = idmap_format_options(uid, gid);

	printf("%s: %s%s%s%s (%s)\n", d->path, what,
	       d->user[0] ? " for " : "", d->user,
	       d->own_ids ? " with his own ids" : "", maps ? maps : "?");
}

/* dir made absolute (cwd/dir), trailing slashes dropped; NULL if it fails */
static char *absolute(const char *dir)
{
	_cleanup_free_ char *cwd = NULL;
	char *abs = NULL;
	size_t n;

	if (dir[0] != '/') {
		cwd = getcwd(NULL, 0);
		if (!cwd || asprintf(&abs, "%s/%s", strcmp(cwd, "/") ? cwd : "",
				     dir) < 0) {
			warn("%s", dir);
			return NULL;
		}
	} else if (!(abs = strdup(dir))) {
		warn("%s", dir);
		return NULL;
	}
	n = strlen(abs);
	while (n > 1 && abs[n - 1] == '/')
		abs[--n] = '\0';
	return abs;
}

int mark_declare(const char *dir, const char *user, bool own_ids,
		 const struct idmap *uid, const struct idmap *gid)
{
	_cleanup_close_ int lock = -EBADF;
	_cleanup_free_ char *abs = NULL, *text = NULL, *line = NULL,
			    *out = NULL;
	struct idmap u, g;
	struct decl d;
	char why[512];
	bool found;
	int ret;

	/*
	 * The path as given, made absolute, never resolved: a symbolic link
	 * in it is refused below, not followed.
	 */
	abs = absolute(dir);
	if (!abs)
		return EXIT_FAILURE;
	if (decl_check_path(abs, why, sizeof(why))) {
		warnx("%s", why);
		return EXIT_FAILURE;
	}
	memset(&d, 0, sizeof(d));
	snprintf(d.path, sizeof(d.path), "%s", abs);
	if (user) {
		snprintf(d.user, sizeof(d.user), "%s", user);
		d.own_ids = own_ids;
	} else {
		d.uid = *uid;
		d.gid = *gid;
	}
	if (decl_maps(&d, &u, &g))
		return EXIT_FAILURE;
	line = decl_format(&d);
	lock = lock_decl();
	if (!line || lock < 0)
		return EXIT_FAILURE;
	text = read_decl();
	if (!text)
		return EXIT_FAILURE;
	ret = mark_one(abs, &u, &g);
	if (ret < 0)
		return EXIT_FAILURE;
	out = decl_replace(text, abs, line, &found);
	if (!out || write_decl(out)) {
		if (!ret)
			unmark_dir(abs, abs);
		return EXIT_FAILURE;
	}
	said(ret ? "marked already, now declared" : "marked and declared", &d,
	     &u, &g);
	return EXIT_SUCCESS;
}

/* Each declaration in turn; fn's failures counted; the exit status. */
static int each_decl(int (*fn)(const struct decl *d))
{
	_cleanup_close_ int lock = -EBADF;
	_cleanup_free_ char *text = NULL;
	struct decl *d = malloc(sizeof(*d));
	char *p, *nl, why[1024];
	int lineno = 0, failed = 0, ret;

	lock = lock_decl();
	if (lock >= 0)
		text = read_decl();
	if (!d || !text) {
		free(d);
		return EXIT_FAILURE;
	}
	for (p = text; *p; p = nl ? nl + 1 : p + strlen(p)) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		lineno++;
		ret = decl_parse_line(p, d, why, sizeof(why));
		if (ret < 0) {
			warnx("%s:%d: %s", DECL_FILE, lineno, why);
			failed++;
		} else if (!ret && fn(d)) {
			failed++;
		}
	}
	free(d);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int mark_decl(const struct decl *d)
{
	struct idmap uid, gid;
	int ret;

	if (decl_maps(d, &uid, &gid))
		return -1;
	ret = mark_one(d->path, &uid, &gid);
	if (ret >= 0)
		said(ret ? "marked already" : "marked", d, &uid, &gid);
	return ret < 0 ? -1 : 0;
}

int mark_declared_all(void)
{
	return each_decl(mark_decl);
}

static int unmark_decl(const struct decl *d)
{
	struct top_mount top;

	if (find_top_mount(NULL, d->path, &top) || !top.mark)
		return 0;
	if (unmark_dir(d->path, d->path))
		return -1;
	printf("%s: unmarked (still declared)\n", d->path);
	return 0;
}

int unmark_declared_all(void)
{
	return each_decl(unmark_decl);
}

int undeclare(const char *dir)
{
	_cleanup_close_ int lock = -EBADF;
	_cleanup_free_ char *text = NULL, *out = NULL;
	struct stat st;
	bool found;

	if (stat(DECL_FILE, &st) && errno == ENOENT)
		return 0;
	lock = lock_decl();
	if (lock < 0)
		return -1;
	text = read_decl();
	if (!text)
		return -1;
	out = decl_replace(text, dir, NULL, &found);
	if (!out)
		return -ENOMEM;
	if (!found)
		return 0;
	if (write_decl(out))
		return -1;
	printf("%s: its declaration dropped from %s\n", dir, DECL_FILE);
	return 1;
}
