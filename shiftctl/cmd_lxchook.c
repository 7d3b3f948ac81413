// SPDX-License-Identifier: GPL-2.0
/*
 * shiftctl lxc-hook: the LXC hook (lxc-hook/shiftfs execs it) that boots
 * an unprivileged container on a root-owned rootfs, shifted, without
 * changing an inode on disk.  One program for the four hook types:
 *
 * pre-start   host root, host namespaces: mark the rootfs with the maps
 *             of the container's effective lxc.idmap (shiftctl mark)
 * pre-mount   the container's user and mount namespaces, as their root:
 *             mount the rootfs from the mark onto itself (shiftctl mount)
 * start-host  host: check /proc/$LXC_PID's maps are what was marked, drop
 *             the host's mark (shiftctl unmark); the container keeps its
 *             own mount
 * post-stop   host, after every stop and every failed start: drop the
 *             mark if the start never reached start-host
 *
 * A record per container in $SHIFTFS_LXC_STATE (default /run/shiftfs-lxc),
 * NAME@CONFIG.rec, from pre-start to post-stop: rootfs, maps, the liblxc
 * process running the start and, from start-host on, the container's
 * init; written whole to a temporary file and renamed into place, every
 * change under flock() of $STATE/lock.  A record whose processes are gone
 * is stale: the next pre-start replaces its mark (no hook runs after a
 * killed monitor).  A second container on the rootfs with other maps is
 * refused while the first lives.
 *
 * An overlay rootfs (overlay:LOWER:UPPER, lxc-copy -s -B overlay / -e)
 * has LOWER shifted through a private bind of it that is the container's
 * own, $STATE/NAME@CONFIG.lower: marked in pre-start, shift-mounted over
 * LOWER in pre-mount (liblxc's overlay mount finds it there next),
 * unmarked, unmounted and removed in start-host (post-stop after a
 * failed start).  LOWER itself is never marked.
 *
 * A container a user starts himself (lxc-start run by a uid other than
 * 0; in pre-mount, a start with no record of root's) uses the marks host root
 * declared (shiftctl mark --declare --user NAME): the hook runs with the
 * user's powers and marks nothing.  pre-start checks that the rootfs (an
 * overlay's lower layer) carries a mark allowing the container's
 * lxc.idmap, and refuses, naming the admin's command, when it does not;
 * pre-mount mounts from that mark over it in the container's namespaces;
 * start-host and post-stop leave the mark alone.  No records: the only
 * state is a private lxcpath for lxc-info in a directory of the user's
 * own (mkdtemp() under $XDG_RUNTIME_DIR, else /tmp), gone when pre-start
 * ends.
 *
 * Marks are made, dropped and mounted from by the very functions of
 * shiftctl mark, unmark and mount (run_command()).  The pure parts (what
 * LXC passes, the config, the records, the decisions) are in lxchook.c.
 */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <libmount.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>

#include "lxchook.h"
#include "shiftctl.h"

extern char **environ;

#define LOCK_TIMEOUT 60

struct hook {
	enum lxchook_type type;
	const char *name;	/* LXC_NAME */
	const char *config;	/* LXC_CONFIG_FILE, or NULL */
	const char *state;	/* the records' directory */
	struct lxchook_rootfs rfs;
	char *rootfs;		/* what is marked */
	char *rec;		/* this container's record */
	char *key;		/* NAME@CONFIG */
	int lockfd;
	/* a container a user started: his uid, or -1 when root's */
	long user;
	/*
	 * The AppArmor profile confining the hook when it could not enter
	 * its own (SHIFTFS_AA_PROFILE), and why; NULL when not confined or
	 * in its own profile.
	 */
	char *aa_confined;
	int aa_errno;
};

/*
 * The hook's own AppArmor profile (lxc-hook/shiftfs-lxc-hook.apparmor,
 * installed in /etc/apparmor.d/ and loaded by make install and the
 * shiftctl package).  liblxc runs hooks confined by the profile of
 * lxc-start or lxc-copy (abstractions/lxc/start-container), whose mount
 * rules allow hooks to mount under /var/lib/lxc only, and which allows
 * "change_profile -> lxc-*": the hook changes into this profile, which
 * allows the hook's own mounts (shiftfs, and the private bind of an
 * overlay's lower layer) wherever the rootfs is, and no other.
 */
#define SHIFTFS_AA_PROFILE "lxc-shiftfs-hook"
#define SHIFTFS_AA_FILE "/etc/apparmor.d/shiftfs-lxc-hook"
/* What LXC's shipped profile lets hooks mount on. */
#define LXC_AA_MOUNT_DIR "/var/lib/lxc/"

/*
 * What a hook prints reaches LXC's log at best at DEBUG (LXC 6.0 keeps
 * none of it): errors, and the AppArmor profile the hook runs under, go
 * to syslog too (LOG_ERR, LOG_INFO).
 */
static void vsay(const struct hook *h, int prio, const char *fmt, va_list ap)
{
	char msg[4096];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "%s: shiftfs hook: %s\n",
		prio == LOG_ERR ? "ERROR" : "INFO", msg);
	if (prio != LOG_DEBUG) {
		openlog("shiftfs-lxc-hook", 0, LOG_USER);
		syslog(prio, "%s: %s", h && h->name ? h->name : "?", msg);
		closelog();
	}
}

/* Say an error; the hook's exit status. */
static int __attribute__((format(printf, 2, 3)))
hook_err(const struct hook *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(h, LOG_ERR, fmt, ap);
	va_end(ap);
	return EXIT_FAILURE;
}

static void __attribute__((format(printf, 2, 3)))
hook_info(const struct hook *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(h, LOG_DEBUG, fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 2, 3)))
hook_notice(const struct hook *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(h, LOG_INFO, fmt, ap);
	va_end(ap);
}

/* ---- AppArmor ------------------------------------------------------------- */

/* This thread's label: AppArmor's own file, else the legacy shared one. */
static const char *const aa_attr_paths[] = {
	"/proc/thread-self/attr/apparmor/current",
	"/proc/thread-self/attr/current",
};

/*
 * This process's AppArmor label, "unconfined" or "PROFILE (MODE)", into
 * buf; -errno when there is no AppArmor (or another module answers).
 */
static int aa_current(char *buf, size_t size)
{
	_cleanup_free_ char *text = NULL;
	size_t i, len;
	int ret = -ENOENT;

	for (i = 0; i < sizeof(aa_attr_paths) / sizeof(aa_attr_paths[0]); i++) {
		ret = read_text(aa_attr_paths[i], &text);
		if (!ret)
			break;
	}
	if (ret)
		return ret;
	len = strcspn(text, "\n");
	text[len] = '\0';
	if (!len || len >= size)
		return -EINVAL;
	memcpy(buf, text, len + 1);
	return 0;
}

static int aa_write_attr(const char *cmd)
{
	size_t i, len = strlen(cmd);
	int fd, ret = -ENOENT;

	for (i = 0; i < sizeof(aa_attr_paths) / sizeof(aa_attr_paths[0]); i++) {
		fd = open(aa_attr_paths[i], O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		ret = write(fd, cmd, len) == (ssize_t)len ? 0 : -errno;
		close(fd);
		return ret;
	}
	return ret;
}

/*
 * Confined by another AppArmor profile (lxc-start's): enter the hook's
 * own.  When that fails (not loaded), remember who confines the hook:
 * pre-start refuses what that profile would deny, naming the fix.
 */
static void hook_apparmor(struct hook *h)
{
	char label[512], cmd[64], *mode;
	int ret;

	if (aa_current(label, sizeof(label)))
		return;
	mode = strstr(label, " (");
	if (mode)
		*mode = '\0';
	if (!strcmp(label, "unconfined") || !strcmp(label, SHIFTFS_AA_PROFILE))
		return;
	snprintf(cmd, sizeof(cmd), "changeprofile %s", SHIFTFS_AA_PROFILE);
	ret = aa_write_attr(cmd);
	if (!ret) {
		hook_notice(h, "%s: AppArmor: left profile %s for %s",
			    lxchook_type_name(h->type), label,
			    SHIFTFS_AA_PROFILE);
		return;
	}
	h->aa_confined = strdup(label);
	h->aa_errno = -ret;
}

/*
 * pre-start, confined by a profile the hook could not leave: refuse a
 * layout whose mounts LXC's shipped profile denies (anything outside
 * /var/lib/lxc, and an overlay's lower bind) before marking anything.
 */
static int aa_check_layout(const struct hook *h)
{
	if (!h->aa_confined)
		return 0;
	if (!h->rfs.lower &&
	    !strncmp(h->rootfs, LXC_AA_MOUNT_DIR, strlen(LXC_AA_MOUNT_DIR)))
		return 0;
	return hook_err(h, "AppArmor confines this hook with profile '%s', which lets hooks mount only under %s ('mount -> %s{**,}' in abstractions/lxc/start-container), and the hook could not enter its own profile %s (%s): %s cannot be shifted there. Load the hook's profile: apparmor_parser -r %s (make install and the shiftctl package install it)",
			h->aa_confined, LXC_AA_MOUNT_DIR, LXC_AA_MOUNT_DIR,
			SHIFTFS_AA_PROFILE, strerror(h->aa_errno),
			h->rfs.lower ? "an overlay rootfs's lower layer" :
				       h->rootfs,
			SHIFTFS_AA_FILE);
}

/* ---- shiftctl's own commands ---------------------------------------------- */

static int sc_unmark(const char *dir)
{
	char *argv[] = { (char *)"unmark", (char *)dir, NULL };

	return run_command("unmark", 2, argv);
}

static int sc_mount(const char *src, const char *dst)
{
	char *argv[] = { (char *)"mount", (char *)src, (char *)dst, NULL };

	return run_command("mount", 3, argv);
}

static int sc_mark(const char *dir, const struct idmap *uid,
		   const struct idmap *gid)
{
	char **argv, words[2][IDMAP_MAX_EXTENTS][40];
	int argc = 0, ret;
	unsigned int i;

	argv = calloc(2 * (uid->nr + gid->nr) + 3, sizeof(*argv));
	if (!argv)
		return EXIT_FAILURE;
	argv[argc++] = (char *)"mark";
	for (i = 0; i < uid->nr; i++) {
		snprintf(words[0][i], sizeof(words[0][i]), "%u:%u:%u",
			 uid->ext[i].from, uid->ext[i].to, uid->ext[i].count);
		argv[argc++] = (char *)"--uidmap";
		argv[argc++] = words[0][i];
	}
	for (i = 0; i < gid->nr; i++) {
		snprintf(words[1][i], sizeof(words[1][i]), "%u:%u:%u",
			 gid->ext[i].from, gid->ext[i].to, gid->ext[i].count);
		argv[argc++] = (char *)"--gidmap";
		argv[argc++] = words[1][i];
	}
	argv[argc++] = (char *)dir;
	ret = run_command("mark", argc, argv);
	free(argv);
	return ret;
}

/* ---- the mount table ------------------------------------------------------ */

/*
 * The top mount on path (libmount: mount points with blanks, backslashes
 * or newlines read right): *mounted, whether it is shiftfs, and the mark
 * with its maps if it is one.
 */
static int top_mount(const char *path, bool *mounted, bool *shiftfs,
		     struct lxchook_mark *mark)
{
	struct libmnt_table *tb;
	struct libmnt_fs *fs;
	const char *opts;
	int ret;

	*mounted = *shiftfs = false;
	mark->present = false;
	idmap_init(&mark->uid);
	idmap_init(&mark->gid);
	tb = mnt_new_table();
	if (!tb)
		return -ENOMEM;
	ret = mnt_table_parse_file(tb, "/proc/self/mountinfo");
	if (ret) {
		ret = ret < 0 ? ret : -EIO;
		goto out;
	}
	fs = mnt_table_find_target(tb, path, MNT_ITER_BACKWARD);
	if (!fs)
		goto out;
	*mounted = true;
	*shiftfs = mnt_fs_match_fstype(fs, "shiftfs");
	opts = mnt_fs_get_fs_options(fs);
	if (*shiftfs && opts && !mnt_optstr_get_option(opts, "mark", NULL, NULL)) {
		mark->present = true;
		if (idmap_parse_options(opts, &mark->uid, &mark->gid, NULL, 0))
			ret = -EINVAL;
		lxchook_map_sort(&mark->uid);
		lxchook_map_sort(&mark->gid);
	}
out:
	mnt_unref_table(tb);
	return ret;
}

static int read_mark(const struct hook *h, struct lxchook_mark *mark)
{
	bool mounted, shiftfs;
	int ret;

	ret = top_mount(h->rootfs, &mounted, &shiftfs, mark);
	if (ret)
		return hook_err(h, "%s: cannot read the mount table: %s",
				h->rootfs, strerror(-ret));
	return 0;
}

/* ---- an overlay rootfs's lower layer -------------------------------------- */

/* No mount on h->rootfs and no directory (the mark is gone already). */
static int drop_lower(const struct hook *h)
{
	struct lxchook_mark mark;
	bool mounted, shiftfs;
	struct stat st;
	int n, ret;

	if (!h->rfs.lower)
		return 0;
	for (n = 0;; n++) {
		ret = top_mount(h->rootfs, &mounted, &shiftfs, &mark);
		if (ret)
			return hook_err(h, "%s: cannot read the mount table: %s",
					h->rootfs, strerror(-ret));
		if (!mounted)
			break;
		if (n >= 8)
			return hook_err(h, "%s: cannot unmount what is mounted there",
					h->rootfs);
		if (shiftfs) {
			if (sc_unmark(h->rootfs))
				return hook_err(h, "cannot unmark %s", h->rootfs);
		} else if (umount2(h->rootfs, UMOUNT_NOFOLLOW)) {
			return hook_err(h, "cannot unmount %s: %s", h->rootfs,
					strerror(errno));
		}
	}
	if (!lstat(h->rootfs, &st) && S_ISDIR(st.st_mode) && rmdir(h->rootfs))
		return hook_err(h, "cannot remove %s: %s", h->rootfs,
				strerror(errno));
	return 0;
}

/*
 * h->rootfs (under the state directory) becomes a private bind mount of
 * LOWER, ready to be marked; a bind left by a start that never finished
 * goes first.
 */
static int bind_lower(const struct hook *h)
{
	if (drop_lower(h))
		return EXIT_FAILURE;
	if (mkdir(h->rootfs, 0755) && errno != EEXIST)
		return hook_err(h, "cannot make %s: %s", h->rootfs,
				strerror(errno));
	if (mount(h->rfs.lower, h->rootfs, NULL, MS_BIND, NULL)) {
		int e = errno;

		rmdir(h->rootfs);
		return hook_err(h, "cannot bind-mount the lower layer %s on %s: %s",
				h->rfs.lower, h->rootfs, strerror(e));
	}
	/* so that neither the mark nor its umount propagates anywhere */
	if (mount(NULL, h->rootfs, NULL, MS_PRIVATE, NULL)) {
		int e = errno;

		umount2(h->rootfs, UMOUNT_NOFOLLOW);
		rmdir(h->rootfs);
		return hook_err(h, "cannot make %s a private mount: %s",
				h->rootfs, strerror(e));
	}
	return 0;
}

/* ---- processes ------------------------------------------------------------ */

static int proc_stat_field(pid_t pid, int field, unsigned long long *val)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	ret = read_text(path, &text);
	if (ret)
		return ret;
	return lxchook_stat_field(text, field, val);
}

static struct lxchook_proc proc_of(pid_t pid)
{
	struct lxchook_proc p = { 0, 0 };

	if (pid > 1 && !proc_stat_field(pid, 22, &p.start))
		p.pid = pid;
	return p;
}

static bool proc_alive(const struct lxchook_proc *p)
{
	unsigned long long start;

	return p->pid > 0 && !proc_stat_field(p->pid, 22, &start) &&
	       start == p->start;
}

/*
 * The liblxc process running this start (lxc-start's monitor, which runs
 * every host-side hook of one start and lives as long as the container):
 * liblxc runs a hook as "/bin/sh -c HOOK ARGS" (lxc_popen()), which runs
 * the hook as its child or execs it.  So: our parent, or its parent when
 * our parent is that /bin/sh.  Which process it is comes from how liblxc
 * runs hooks, not from its name.
 */
static struct lxchook_proc start_owner(void)
{
	struct stat sh, exe;
	unsigned long long pp;
	char path[64];
	pid_t p = getppid();

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)p);
	if (!stat("/bin/sh", &sh) && !stat(path, &exe) &&
	    sh.st_dev == exe.st_dev && sh.st_ino == exe.st_ino &&
	    !proc_stat_field(p, 4, &pp))
		p = (pid_t)pp;
	return proc_of(p);
}

static bool record_alive(const struct lxchook_record *r)
{
	return proc_alive(&r->owner) || proc_alive(&r->init);
}

/* ---- records -------------------------------------------------------------- */

/* Serialise the hooks of every container: records and marks change together. */
static void on_alarm(int sig)
{
	(void)sig;
}

static int mkdir_state(const struct hook *h, const char *dir)
{
	_cleanup_free_ char *buf = strdup(dir);
	char *p;

	if (!buf)
		return hook_err(h, "out of memory");
	for (p = buf + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return hook_err(h, "cannot make %s: %s", buf,
					strerror(errno));
		*p = c;
		if (!c)
			return 0;
	}
}

/* Stray temporary records (a hook killed mid-write): gone, under the lock. */
static void remove_temporaries(const struct hook *h)
{
	struct dirent *de;
	DIR *d = opendir(h->state);
	int dfd;

	if (!d)
		return;
	dfd = dirfd(d);
	while ((de = readdir(d)))
		if (de->d_name[0] == '.' && strstr(de->d_name, ".rec.tmp"))
			unlinkat(dfd, de->d_name, 0);
	closedir(d);
}

static int lock_state(struct hook *h)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	_cleanup_free_ char *path = NULL;
	int ret;

	if (mkdir_state(h, h->state))
		return EXIT_FAILURE;
	if (asprintf(&path, "%s/lock", h->state) < 0)
		return hook_err(h, "out of memory");
	h->lockfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
			 O_NOFOLLOW, 0644);
	if (h->lockfd < 0)
		return hook_err(h, "%s: %s", path, strerror(errno));
	/* no SA_RESTART: the alarm ends the wait with EINTR */
	sigaction(SIGALRM, &sa, &old);
	alarm(LOCK_TIMEOUT);
	ret = flock(h->lockfd, LOCK_EX);
	if (ret)
		ret = errno;
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	if (ret == EINTR)
		return hook_err(h, "%s: another shiftfs hook holds it for over %ds",
				path, LOCK_TIMEOUT);
	if (ret)
		return hook_err(h, "%s: cannot lock: %s", path, strerror(ret));
	remove_temporaries(h);
	return 0;
}

/* The record written whole to a temporary file, renamed into place. */
static int write_record(const struct hook *h, const struct lxchook_record *r)
{
	_cleanup_free_ char *text = lxchook_record_format(r), *tmp = NULL;
	_cleanup_close_ int fd = -EBADF;
	size_t len, off = 0;
	ssize_t n;

	if (!text || asprintf(&tmp, "%s/.%s.rec.tmpXXXXXX", h->state, h->key) < 0)
		return hook_err(h, "out of memory");
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return hook_err(h, "cannot write the record %s: %s", tmp,
				strerror(errno));
	len = strlen(text);
	while (off < len) {
		n = write(fd, text + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fchmod(fd, 0644) || fsync(fd) || close(fd)) {
		fd = -EBADF;
		goto fail;
	}
	fd = -EBADF;
	if (rename(tmp, h->rec))
		goto fail;
	return 0;
fail:
	n = errno;
	unlink(tmp);
	return hook_err(h, "cannot write the record %s: %s", h->rec,
			strerror((int)n));
}

/* A record file: 0, -ENOENT, or another error (unreadable, malformed). */
static int read_record(const char *path, struct lxchook_record *r)
{
	_cleanup_free_ char *text = NULL;
	int ret;

	ret = read_text(path, &text);
	if (ret)
		return ret;
	return lxchook_record_parse(text, r, NULL, 0);
}

struct peers {
	struct lxchook_peer *p;
	struct lxchook_record *recs;
	char **paths;
	size_t nr;
};

static void peers_free(struct peers *ps)
{
	size_t i;

	for (i = 0; i < ps->nr; i++) {
		if (ps->p[i].rec)
			lxchook_record_free(&ps->recs[i]);
		free(ps->paths[i]);
	}
	free(ps->p);
	free(ps->recs);
	free(ps->paths);
	memset(ps, 0, sizeof(*ps));
}

/* Every record in the state directory, and whether its start lives. */
static int load_peers(const struct hook *h, struct peers *ps)
{
	struct dirent *de;
	size_t len, alloc = 0;
	DIR *d;

	memset(ps, 0, sizeof(*ps));
	d = opendir(h->state);
	if (!d)
		return hook_err(h, "cannot read %s: %s", h->state, strerror(errno));
	while ((de = readdir(d))) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 5 ||
		    strcmp(de->d_name + len - 4, ".rec"))
			continue;
		if (ps->nr == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			ps->p = realloc(ps->p, alloc * sizeof(*ps->p));
			ps->recs = realloc(ps->recs, alloc * sizeof(*ps->recs));
			ps->paths = realloc(ps->paths, alloc * sizeof(*ps->paths));
			if (!ps->p || !ps->recs || !ps->paths)
				err(EXIT_FAILURE, "out of memory");
		}
		if (asprintf(&ps->paths[ps->nr], "%s/%s", h->state, de->d_name) < 0)
			err(EXIT_FAILURE, "out of memory");
		memset(&ps->p[ps->nr], 0, sizeof(ps->p[0]));
		ps->p[ps->nr].ours = !strcmp(ps->paths[ps->nr], h->rec);
		if (!read_record(ps->paths[ps->nr], &ps->recs[ps->nr])) {
			ps->p[ps->nr].rec = &ps->recs[ps->nr];
			ps->p[ps->nr].alive = record_alive(&ps->recs[ps->nr]);
		}
		ps->nr++;
	}
	closedir(d);
	/* (record pointers taken after the last realloc) */
	for (len = 0; len < ps->nr; len++)
		if (ps->p[len].rec)
			ps->p[len].rec = &ps->recs[len];
	return 0;
}

/* ---- the effective lxc.idmap ---------------------------------------------- */

/*
 * lxc-info -P STATE/lxcpath -n NAME --rcfile CONFIG -c lxc.idmap -H: liblxc
 * parses the config itself, includes and all.  A private, empty lxcpath,
 * so that it never asks this very container (whose command socket does
 * not answer before the start is done) for its state.  Its output, or
 * NULL with *missing set when there is no lxc-info.
 */
static char *lxc_info_idmap(const struct hook *h, bool *missing, int *status)
{
	_cleanup_free_ char *lxcpath = NULL;
	_cleanup_close_ int rfd = -EBADF, wfd = -EBADF;
	posix_spawn_file_actions_t fa;
	size_t len = 0, size = 4096;
	char *out, *nout;
	int fds[2], ret, st;
	ssize_t n;
	pid_t pid;

	*missing = false;
	if (asprintf(&lxcpath, "%s/lxcpath", h->state) < 0 ||
	    mkdir_state(h, lxcpath))
		return NULL;
	char *const argv[] = { (char *)"lxc-info", (char *)"-P", lxcpath,
			       (char *)"-n", (char *)h->name, (char *)"--rcfile",
			       (char *)h->config, (char *)"-c",
			       (char *)"lxc.idmap", (char *)"-H", NULL };

	if (pipe2(fds, O_CLOEXEC)) {
		hook_err(h, "cannot run lxc-info: %s", strerror(errno));
		return NULL;
	}
	rfd = fds[0];
	wfd = fds[1];
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, wfd, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, wfd, STDERR_FILENO);
	ret = posix_spawnp(&pid, "lxc-info", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret == ENOENT) {
		*missing = true;
		return NULL;
	}
	if (ret) {
		hook_err(h, "cannot run lxc-info: %s", strerror(ret));
		return NULL;
	}
	closep(&wfd);
	out = malloc(size);
	while (out) {
		n = read(rfd, out + len, size - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len + 1 == size && size < (1 << 20)) {
			nout = realloc(out, size *= 2);
			if (!nout)
				free(out);
			out = nout;
		}
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!out) {
		hook_err(h, "out of memory");
		return NULL;
	}
	out[len] = '\0';
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return out;
}

static int container_idmap(const struct hook *h, struct idmap *uid,
			   struct idmap *gid)
{
	_cleanup_free_ char *out = NULL;
	char err[1024];
	bool missing;
	int status = 0;

	if (!h->config || !*h->config)
		return hook_err(h, "LXC_CONFIG_FILE is not set");
	if (access(h->config, R_OK))
		return hook_err(h, "cannot read %s", h->config);
	out = lxc_info_idmap(h, &missing, &status);
	if (!out && !missing)
		return EXIT_FAILURE;
	if (missing) {
		/* a bare system without LXC's tools: follow the includes here */
		if (lxchook_config_idmap(h->config, uid, gid, err, sizeof(err)))
			return hook_err(h, "%s", err);
		return 0;
	}
	if (status) {
		char *e = out + strlen(out);

		while (e > out && e[-1] == '\n')
			*--e = '\0';
		return hook_err(h, "lxc-info cannot read %s's lxc.idmap from %s: %s",
				h->name, h->config, out);
	}
	if (lxchook_idmap_text(out, "lxc-info", uid, gid, err, sizeof(err)))
		return hook_err(h, "%s's lxc.idmap: %s", h->name, err);
	return 0;
}

/* ---- the hook types ------------------------------------------------------- */

static int realpath_rootfs(struct hook *h)
{
	char *abs;

	if (h->rfs.lower)
		return 0;
	abs = realpath(h->rootfs, NULL);
	if (abs) {
		free(h->rootfs);
		h->rootfs = abs;
	}
	return 0;
}

/* ---- containers users start ---------------------------------------------- */

/*
 * Who started this container: in the host's namespaces, our uid, -1 for
 * root.  In pre-mount (the container's user namespace, as its root) the
 * starter's uid cannot be read: the namespace's owner shows as the
 * overflow uid unless the map holds it (NS_GET_OWNER_UID).  There, a
 * start of root's has the record its pre-start wrote in the state
 * directory, which no user can write: -1 with one, else a user's
 * (LXCHOOK_USER_UNKNOWN; the kernel decides what he may mount).
 */
#define LXCHOOK_USER_UNKNOWN 65534L
static long starting_user(enum lxchook_type type, const char *rec)
{
	if (type != LXCHOOK_PRE_MOUNT)
		return getuid() ? (long)getuid() : -1;
	return access(rec, F_OK) ? LXCHOOK_USER_UNKNOWN : -1;
}

/*
 * The admin's command that would let this user's container start: a
 * declared mark for him (with his own ids when the container maps his
 * uid to itself).
 */
static void admin_command(const struct hook *h, const struct idmap *uid,
			  char *buf, size_t size)
{
	struct passwd *pw = getpwuid((uid_t)h->user);
	bool own = false;
	unsigned int i;

	for (i = 0; i < uid->nr; i++)
		if (uid->ext[i].from == (uint32_t)h->user &&
		    uid->ext[i].to == (uint32_t)h->user)
			own = true;
	if (pw)
		snprintf(buf, size, "shiftctl mark --declare --user %s%s %s",
			 pw->pw_name, own ? " --own-ids" : "", h->rootfs);
	else
		snprintf(buf, size, "shiftctl mark --declare --user %ld%s %s",
			 h->user, own ? " --own-ids" : "", h->rootfs);
}

/*
 * pre-start of a user's container: its rootfs (an overlay's lower layer)
 * is marked, and the mark allows the container's maps; else a refusal
 * that names what is wrong and the admin's command.  Nothing is made.
 */
static int pre_start_user(struct hook *h)
{
	_cleanup_free_ char *tmp = NULL, *lxcpath = NULL;
	const char *run = getenv("XDG_RUNTIME_DIR");
	struct lxchook_mark mark;
	struct idmap uid, gid;
	struct idmap_extent bad;
	char cmd[PATH_MAX + 128], maps[1100];
	struct stat st;
	int ret;

	if (stat(h->rootfs, &st) || !S_ISDIR(st.st_mode))
		return hook_err(h, "%s %s is not a directory",
				h->rfs.lower ? "the overlay's lower layer" : "rootfs",
				h->rootfs);
	if (aa_check_layout(h))
		return EXIT_FAILURE;
	/* lxc-info's private lxcpath, in a directory of our own */
	if (asprintf(&tmp, "%s/shiftfs-lxc.XXXXXX",
		     run && *run && !access(run, W_OK) ? run : "/tmp") < 0 ||
	    !mkdtemp(tmp))
		return hook_err(h, "cannot make a private directory: %s",
				strerror(errno));
	h->state = tmp;
	ret = container_idmap(h, &uid, &gid);
	if (asprintf(&lxcpath, "%s/lxcpath", tmp) > 0)
		rmdir(lxcpath);
	rmdir(tmp);
	h->state = NULL;
	if (ret)
		return EXIT_FAILURE;
	if (!uid.nr || !gid.nr)
		return hook_err(h, "%s has no 'lxc.idmap = %c ...' (in %s or what it includes)",
				h->name, uid.nr ? 'g' : 'u', h->config);
	lxchook_map_sort(&uid);
	lxchook_map_sort(&gid);
	admin_command(h, &uid, cmd, sizeof(cmd));
	if (read_mark(h, &mark))
		return EXIT_FAILURE;
	if (!mark.present)
		return hook_err(h, "%s%s is not marked: %s cannot shift it. Host root marks it for you, once, at every boot: %s",
				h->rootfs, h->rfs.lower ? " (the overlay's lower layer)" : "",
				h->name, cmd);
	if (!idmap_allows(&mark.uid, &uid, &bad) ||
	    !idmap_allows(&mark.gid, &gid, &bad)) {
		lxchook_maps_text(&mark.uid, &mark.gid, maps, sizeof(maps));
		return hook_err(h, "the mark on %s (%s) does not allow %s's lxc.idmap: its extent %u %u %u is not in it. Host root marks it for your ranges: %s",
				h->rootfs, maps, h->name, bad.from, bad.to,
				bad.count, cmd);
	}
	lxchook_maps_text(&uid, &gid, maps, sizeof(maps));
	hook_info(h, "%s is marked for %s's maps (%s)", h->rootfs, h->name, maps);
	return 0;
}

static int pre_start(struct hook *h)
{
	struct lxchook_pre_start ps = { .name = h->name };
	struct lxchook_record rec = { .phase = LXCHOOK_PHASE_MARKED };
	struct lxchook_mark mark;
	struct idmap uid, gid;
	struct peers peers;
	char err[2048], maps[1100];
	struct stat st;
	size_t i;
	int ret;

	if (container_idmap(h, &uid, &gid))
		return EXIT_FAILURE;
	if (!uid.nr)
		return hook_err(h, "%s has no 'lxc.idmap = u ...' (in %s or what it includes): only unprivileged containers are shifted",
				h->name, h->config);
	if (!gid.nr)
		return hook_err(h, "%s has no 'lxc.idmap = g ...'", h->name);
	if (h->rfs.lower) {
		if (stat(h->rfs.lower, &st) || !S_ISDIR(st.st_mode))
			return hook_err(h, "the lower layer %s of %s's overlay rootfs is not a directory",
					h->rfs.lower, h->name);
	} else {
		if (stat(h->rootfs, &st) || !S_ISDIR(st.st_mode))
			return hook_err(h, "rootfs %s is not a directory",
					h->rootfs);
		realpath_rootfs(h);
	}
	if (aa_check_layout(h))
		return EXIT_FAILURE;
	if (lock_state(h) || load_peers(h, &peers))
		return EXIT_FAILURE;
	if (read_mark(h, &mark)) {
		peers_free(&peers);
		return EXIT_FAILURE;
	}
	ps.rootfs = h->rootfs;
	ps.lower = h->rfs.lower != NULL;
	ps.uid = &uid;
	ps.gid = &gid;
	ret = lxchook_decide_pre_start(&ps, peers.p, peers.nr, &mark,
				       "shiftctl", err, sizeof(err));
	for (i = 0; i < peers.nr; i++)
		if (peers.p[i].remove && unlink(peers.paths[i]) && errno != ENOENT)
			hook_err(h, "cannot remove the stale record %s: %s",
				 peers.paths[i], strerror(errno));
	if (ret) {
		peers_free(&peers);
		return hook_err(h, "%s", err);
	}
	lxchook_maps_text(&mark.uid, &mark.gid, maps, sizeof(maps));
	if (ps.action == LXCHOOK_MARK_SHARE) {
		hook_info(h, "%s is marked for %s's start already, with the same maps: sharing the mark",
			  h->rootfs, ps.shared);
	} else if (ps.action == LXCHOOK_MARK_REPLACE) {
		if (sc_unmark(h->rootfs)) {
			peers_free(&peers);
			return hook_err(h, "cannot unmark %s", h->rootfs);
		}
		hook_info(h, "dropped the stale mark on %s (%s) left by a start that never finished",
			  h->rootfs, maps);
	}
	rec.name = (char *)h->name;
	rec.config = (char *)(h->config ? h->config : "");
	rec.rootfs = h->rootfs;
	rec.uid = uid;
	rec.gid = gid;
	rec.owner = start_owner();
	ret = write_record(h, &rec);
	if (ret || ps.shared) {
		peers_free(&peers);
		return ret;
	}
	peers_free(&peers);
	if (h->rfs.lower && bind_lower(h)) {
		unlink(h->rec);
		return EXIT_FAILURE;
	}
	if (sc_mark(h->rootfs, &uid, &gid)) {
		unlink(h->rec);
		drop_lower(h);
		return hook_err(h, "cannot mark %s (see shiftctl's message above)",
				h->rootfs);
	}
	lxchook_maps_text(&uid, &gid, maps, sizeof(maps));
	if (h->rfs.lower)
		hook_info(h, "marked %s for %s: %s (the lower layer %s)",
			  h->rootfs, h->name, maps, h->rfs.lower);
	else
		hook_info(h, "marked %s for %s: %s", h->rootfs, h->name, maps);
	return 0;
}

/* /proc/PID/uid_map or gid_map, sorted */
static int proc_map(const char *pid, const char *which, struct idmap *map)
{
	_cleanup_free_ char *text = NULL;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%s/%s", pid, which);
	if (read_text(path, &text) ||
	    idmap_parse_proc(map, text, path, NULL, 0))
		return -EINVAL;
	lxchook_map_sort(map);
	return 0;
}

/*
 * pre-mount's refusal, with what decides it: this namespace's maps and
 * the mark's.  shiftctl mount printed the kernel's reasons above, on
 * stderr, which LXC 6.0 does not keep; this line goes to syslog too.
 * (/proc/self: pre-mount runs in the container's pid namespace, under
 * the host's /proc.)
 */
static int mount_failed(const struct hook *h, const char *what)
{
	struct lxchook_mark mark;
	struct idmap uid, gid;
	char ns[1100] = "?", mk[1100] = "no mark";
	bool mounted, shiftfs;

	if (!proc_map("self", "uid_map", &uid) &&
	    !proc_map("self", "gid_map", &gid))
		lxchook_maps_text(&uid, &gid, ns, sizeof(ns));
	if (!top_mount(h->rootfs, &mounted, &shiftfs, &mark) && mark.present)
		lxchook_maps_text(&mark.uid, &mark.gid, mk, sizeof(mk));
	return hook_err(h, "cannot shift-mount %s from its mark %s in %s's user namespace: refused (this namespace: %s; the mark: %s)",
			what, h->rootfs, h->name, ns, mk);
}

static int pre_mount(const struct hook *h)
{
	if (h->rfs.lower && h->user >= 0) {
		/* the admin's mark on LOWER, mounted from over LOWER */
		if (sc_mount(h->rootfs, h->rootfs))
			return mount_failed(h, h->rootfs);
		hook_info(h, "%s (the overlay's lower layer) shifted in %s's mount namespace",
			  h->rootfs, h->name);
		return 0;
	}
	if (h->rfs.lower) {
		/* over LOWER, where liblxc's overlay mount looks for it next */
		if (sc_mount(h->rootfs, h->rfs.lower))
			return mount_failed(h, h->rfs.lower);
		hook_info(h, "%s (the overlay's lower layer) shifted in %s's mount namespace",
			  h->rfs.lower, h->name);
		return 0;
	}
	if (sc_mount(h->rootfs, h->rootfs))
		return mount_failed(h, h->rootfs);
	hook_info(h, "%s shifted in %s's mount namespace", h->rootfs, h->name);
	return 0;
}

static int start_host(struct hook *h)
{
	const char *env = getenv("LXC_PID"), *peer;
	struct lxchook_record rec;
	struct lxchook_mark mark;
	struct idmap uid, gid;
	char want[1100], have[1100];
	struct peers peers;
	int status = 0;
	pid_t pid;

	if (!env || !*env)
		return hook_err(h, "LXC_PID is not set (start-host hook)");
	pid = all_digits(env) ? (pid_t)strtol(env, NULL, 10) : 0;
	if (pid <= 0 || proc_map(env, "uid_map", &uid) ||
	    proc_map(env, "gid_map", &gid))
		return hook_err(h, "no process %s", env);
	realpath_rootfs(h);
	if (lock_state(h))
		return EXIT_FAILURE;
	if (read_record(h->rec, &rec))
		return hook_err(h, "no record of %s's pre-start in %s (was the rootfs marked by this hook?)",
				h->name, h->state);
	if (!lxchook_map_equal(&rec.uid, &uid) ||
	    !lxchook_map_equal(&rec.gid, &gid)) {
		char hu[520], hg[520], wu[520], wg[520];

		lxchook_map_words(&uid, hu, sizeof(hu));
		lxchook_map_words(&gid, hg, sizeof(hg));
		lxchook_map_words(&rec.uid, wu, sizeof(wu));
		lxchook_map_words(&rec.gid, wg, sizeof(wg));
		snprintf(have, sizeof(have), "uid_map '%s' gid_map '%s'", hu, hg);
		snprintf(want, sizeof(want), "'%s' '%s'", wu, wg);
		status = hook_err(h, "%s runs with %s, but %s was marked for %s",
				  h->name, have, h->rootfs, want);
	}
	/* the container runs: its record lives as long as its init, too */
	rec.phase = LXCHOOK_PHASE_RUNNING;
	rec.init = proc_of(pid);
	if (write_record(h, &rec))
		status = EXIT_FAILURE;
	lxchook_record_free(&rec);
	/*
	 * Drop the host's mark either way (the container has its own
	 * mount), unless another start with the same maps still needs it.
	 */
	if (load_peers(h, &peers))
		return EXIT_FAILURE;
	peer = lxchook_marking_peer(peers.p, peers.nr, h->rootfs);
	if (peer) {
		hook_info(h, "%s stays marked for %s's start", h->rootfs, peer);
	} else if (read_mark(h, &mark)) {
		status = EXIT_FAILURE;
	} else if (mark.present) {
		if (sc_unmark(h->rootfs))
			status = hook_err(h, "cannot unmark %s", h->rootfs);
		else
			hook_info(h, "unmarked %s on the host", h->rootfs);
	}
	peers_free(&peers);
	/* the container has its shiftfs mount over LOWER: our bind goes */
	if (drop_lower(h))
		status = EXIT_FAILURE;
	return status;
}

/*
 * The record is another start's of this very container, and that start
 * lives: a post-stop of a failed start can run late, after the next
 * lxc-start's pre-start (same NAME@CONFIG record) marked the rootfs again
 * or shared the mark: its record, its mark and its bind are the new
 * start's, not ours to drop.
 */
static bool newer_start(const struct hook *h, const struct lxchook_record *rec)
{
	struct lxchook_proc me = start_owner();

	if (!rec->owner.pid || (rec->owner.pid == me.pid &&
				rec->owner.start == me.start) ||
	    !record_alive(rec))
		return false;
	hook_info(h, "a newer start of %s (process %d) owns its record: its mark stays",
		  h->name, (int)rec->owner.pid);
	return true;
}

static int post_stop(struct hook *h)
{
	struct lxchook_record rec;
	struct lxchook_mark mark;
	struct peers peers;
	const char *peer;
	struct stat st;
	int ret;

	if (h->rfs.lower) {
		/* a start that failed before start-host left the bind and its mark */
		if (lock_state(h))
			return EXIT_FAILURE;
		if (!read_record(h->rec, &rec)) {
			ret = newer_start(h, &rec);
			lxchook_record_free(&rec);
			if (ret)
				return 0;
		}
		unlink(h->rec);
		return drop_lower(h);
	}
	if (stat(h->rootfs, &st) || !S_ISDIR(st.st_mode))
		return 0;
	realpath_rootfs(h);
	if (lock_state(h))
		return EXIT_FAILURE;
	ret = read_record(h->rec, &rec);
	if (ret == -ENOENT)
		return 0;
	if (!ret && newer_start(h, &rec)) {
		lxchook_record_free(&rec);
		return 0;
	}
	unlink(h->rec);
	if (ret)
		return 0;
	if (read_mark(h, &mark) || load_peers(h, &peers)) {
		lxchook_record_free(&rec);
		return EXIT_FAILURE;
	}
	peer = lxchook_marking_peer(peers.p, peers.nr, h->rootfs);
	switch (lxchook_decide_post_stop(&rec, &mark, peer)) {
	case LXCHOOK_POST_STOP_NOTHING:
		ret = 0;
		break;
	case LXCHOOK_POST_STOP_KEEP:
		hook_info(h, "%s stays marked for %s's start", h->rootfs, peer);
		ret = 0;
		break;
	case LXCHOOK_POST_STOP_UNMARK:
		if (sc_unmark(h->rootfs)) {
			ret = hook_err(h, "cannot unmark %s", h->rootfs);
			break;
		}
		hook_info(h, "%s's start failed: dropped the mark on %s",
			  h->name, h->rootfs);
		ret = 0;
		break;
	}
	peers_free(&peers);
	lxchook_record_free(&rec);
	return ret;
}

int cmd_lxchook(const struct sc_cmd *cmd, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help",    no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct hook h = { .lockfd = -EBADF };
	const char *rootfs_path;
	struct stat st;
	char err[1024];
	int c, ret;

	/* "+": LXC's NAME SECTION TYPE arguments are operands */
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1)
		return common_option(cmd, c);
	/* what the commands it runs print is the hook's output: LXC logs stderr */
	fflush(stdout);
	dup2(STDERR_FILENO, STDOUT_FILENO);

	h.name = getenv("LXC_NAME");
	if (!h.name || !*h.name)
		h.name = "container";
	if (lxchook_parse_type(getenv("LXC_HOOK_VERSION"), getenv("LXC_HOOK_TYPE"),
			       argv + optind, argc - optind, &h.type, err,
			       sizeof(err)))
		return hook_err(&h, "%s", err);
	rootfs_path = getenv("LXC_ROOTFS_PATH");
	ret = lxchook_parse_rootfs(rootfs_path,
				   rootfs_path && !stat(rootfs_path, &st) &&
				   S_ISDIR(st.st_mode),
				   h.type, &h.rfs, err, sizeof(err));
	if (ret == 1)
		return EXIT_SUCCESS;
	if (ret)
		return hook_err(&h, "%s", err);
	h.config = getenv("LXC_CONFIG_FILE");
	if (lxchook_check_names(h.name, h.config, err, sizeof(err)))
		return hook_err(&h, "%s", err);
	h.state = getenv("SHIFTFS_LXC_STATE");
	if (!h.state || !*h.state)
		h.state = "/run/shiftfs-lxc";
	h.key = lxchook_record_key(h.name, h.config);
	if (!h.key || asprintf(&h.rec, "%s/%s.rec", h.state, h.key) < 0)
		return hook_err(&h, "out of memory");
	h.user = starting_user(h.type, h.rec);
	if ((h.rfs.lower && h.user < 0 ?
	     asprintf(&h.rootfs, "%s/%s.lower", h.state, h.key) < 0 :
	     !(h.rootfs = strdup(h.rfs.lower ? h.rfs.lower : h.rfs.dir))))
		return hook_err(&h, "out of memory");

	hook_apparmor(&h);
	if (h.user >= 0) {
		/* a user's container: the admin's marks, nothing of ours */
		h.state = NULL;
		if (h.type == LXCHOOK_PRE_START) {
			char *abs = realpath(h.rootfs, NULL);

			if (abs) {
				free(h.rootfs);
				h.rootfs = abs;
			}
			ret = pre_start_user(&h);
		} else if (h.type == LXCHOOK_PRE_MOUNT) {
			ret = pre_mount(&h);
		} else {
			ret = 0;
		}
		goto out;
	}
	switch (h.type) {
	case LXCHOOK_PRE_START:
		ret = pre_start(&h);
		break;
	case LXCHOOK_PRE_MOUNT:
		ret = pre_mount(&h);
		break;
	case LXCHOOK_START_HOST:
		ret = start_host(&h);
		break;
	case LXCHOOK_POST_STOP:
	default:
		ret = post_stop(&h);
		break;
	}
out:
	closep(&h.lockfd);
	lxchook_rootfs_free(&h.rfs);
	free(h.rootfs);
	free(h.rec);
	free(h.key);
	free(h.aa_confined);
	return ret;
}
