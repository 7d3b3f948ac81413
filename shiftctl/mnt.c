// SPDX-License-Identifier: GPL-2.0
/*
 * Building a shiftfs mount, detached, with the new mount API.
 *
 * Nothing is visible until the caller move_mount()s the returned fd into
 * place: a directory is shifted directly; an image file is attached to an
 * autoclear loop device, its filesystem mounted detached, and shiftfs
 * layered on that.  Every early return closes what it opened, and closing
 * a detached mount fd dissolves the mount, whose last reference to the
 * loop device then clears it: a failure leaves nothing behind.
 *
 * An image already on a loop device (another shiftctl mount or attach, a
 * host's mount -o loop) is not attached a second time: its device is
 * reused, so the kernel hands back the one superblock (loopuse.h).  The
 * image file's flock() serialises that look-up, the attach and the mount
 * against other shiftctl processes.
 */
#include <blkid.h>
#include <dirent.h>
#include <fcntl.h>
#include <libmount.h>
#include <limits.h>
#include <linux/loop.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>

#include "loopuse.h"
#include "shiftctl.h"
#include "source.h"

/* Print what the kernel logged on an fs_context fd ("e shiftfs: ..."). */
static void drain_log(int fsfd, bool print)
{
	char buf[1024];
	ssize_t n;

	while ((n = read(fsfd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		while (n && buf[n - 1] == '\n')
			buf[--n] = '\0';
		if (!print)
			continue;
		if (n > 2 && buf[1] == ' ' && buf[0] == 'w')
			warnx("warning: %s", buf + 2);
		else if (n > 2 && buf[1] == ' ' && strchr("eiw", buf[0]))
			warnx("%s", buf + 2);
		else
			warnx("%s", buf);
	}
}

static int fs_fail(int fsfd, bool quiet, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fs_fail(int fsfd, bool quiet, const char *fmt, ...)
{
	int errnum = errno;
	va_list ap;

	if (!quiet) {
		va_start(ap, fmt);
		errno = errnum;
		vwarn(fmt, ap);
		va_end(ap);
	}
	drain_log(fsfd, !quiet);
	return -errnum;
}

static int open_fs(const char *type, const char *display)
{
	int fd, e;

	fd = fsopen(type, FSOPEN_CLOEXEC);
	if (fd >= 0)
		return fd;
	e = errno;
	if (e == ENODEV && !strcmp(type, "shiftfs"))
		warnx("shiftfs: filesystem not available in this kernel (modprobe shiftfs; see 'shiftctl check')");
	else if (e == ENODEV)
		warnx("%s: filesystem type %s is not supported by this kernel",
			 display, type);
	else if (e == ENOSYS)
		warnx("this kernel lacks the new mount API (fsopen)");
	else
		warnc(e, "fsopen %s", type);
	return -e;
}

/*
 * A detached shiftfs mount of source, or a negative errno.  quiet keeps
 * the reasons of a refused configuration to ourselves (a retry follows);
 * *opened tells whether shiftfs could be opened at all (if not, the reason
 * has been printed and no retry can help).
 */
static int shiftfs_create(const char *source, const char *display,
			  const struct shift_opts *o, uint64_t attr, bool quiet,
			  bool *opened)
{
	const struct idmap *maps[2] = { o->uid, o->gid };
	_cleanup_close_ int fsfd = -EBADF;
	const struct idmap_extent *e;
	unsigned int k, i;
	char val[40];
	int mfd;

	fsfd = open_fs("shiftfs", display);
	if (opened)
		*opened = fsfd >= 0;
	if (fsfd < 0)
		return fsfd;
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "source", source, 0))
		return fs_fail(fsfd, quiet, "%s: shiftfs rejects source %s",
			       display, source);
	for (k = 0; k < 2; k++) {
		for (i = 0; i < maps[k]->nr; i++) {
			e = &maps[k]->ext[i];
			snprintf(val, sizeof(val), "%u:%u:%u", e->from, e->to,
				 e->count);
			if (fsconfig(fsfd, FSCONFIG_SET_STRING,
				     idmap_kind_name(k), val, 0))
				return fs_fail(fsfd, quiet,
					       "%s: shiftfs rejects %s=%s",
					       display, idmap_kind_name(k), val);
		}
	}
	if (o->ro && fsconfig(fsfd, FSCONFIG_SET_FLAG, "ro", NULL, 0))
		return fs_fail(fsfd, quiet, "%s: shiftfs rejects ro", display);
	if (o->kind == SHIFT_MARK &&
	    fsconfig(fsfd, FSCONFIG_SET_FLAG, "mark", NULL, 0))
		return fs_fail(fsfd, quiet, "%s: shiftfs rejects mark", display);
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		return fs_fail(fsfd, quiet, "%s: cannot create shiftfs mount",
			       display);
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, (unsigned int)attr);
	if (mfd < 0)
		return fs_fail(fsfd, quiet, "%s: fsmount shiftfs", display);
	sc_debug("shiftfs mount of %s made from source %s%s%s%s%s", display,
		 source, attr & MOUNT_ATTR_RDONLY ? ", ro" : "",
		 attr & MOUNT_ATTR_NOSUID ? ", nosuid" : "",
		 attr & MOUNT_ATTR_NODEV ? ", nodev" : "",
		 attr & MOUNT_ATTR_NOEXEC ? ", noexec" : "");
	drain_log(fsfd, !quiet);	/* warnings of a successful mount */
	return mfd;
}

/*
 * The filesystem types an image may hold.  Mounting hands the image's
 * bytes to that filesystem's driver, as host root: only those the
 * project supports and tests.  squashfs and erofs, the formats images
 * ship in, are read-only by design: they are always mounted read-only.
 */
static const struct {
	const char *name;
	bool ro_only;
} image_types[] = {
	{ "ext4", false },
	{ "xfs", false },
	{ "btrfs", false },
	{ "squashfs", true },
	{ "erofs", true },
};
#define N_IMAGE_TYPES (sizeof(image_types) / sizeof(image_types[0]))

/*
 * The filesystem type in the image open on fd, checked to be one of
 * image_types; *ro_only says whether it can only be read.
 */
static int probe_type(int fd, const char *image, char *type, size_t typesz,
		      bool *ro_only)
{
	size_t i;
	const char *val = NULL, *usage = NULL;
	blkid_probe pr;
	int rc, ret = 0;

	pr = blkid_new_probe();
	if (!pr || blkid_probe_set_device(pr, fd, 0, 0)) {
		ret = errno ? -errno : -EIO;
		warnc(-ret, "%s: cannot probe", image);
		if (pr)
			blkid_free_probe(pr);
		return ret;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE |
					      BLKID_SUBLKS_USAGE);
	rc = blkid_do_safeprobe(pr);
	if (rc == 1) {
		warnx("%s: no filesystem found (not an ext4, xfs, btrfs, squashfs or erofs image?)",
			 image);
		ret = -EINVAL;
	} else if (rc == -2) {
		warnx("%s: ambiguous: more than one filesystem signature (wipefs(8) shows them)",
			 image);
		ret = -EINVAL;
	} else if (rc < 0) {
		warnx("%s: cannot probe for a filesystem", image);
		ret = -EIO;
	} else if (blkid_probe_lookup_value(pr, "TYPE", &val, NULL) || !val) {
		warnx("%s: filesystem type unknown", image);
		ret = -EINVAL;
	} else if (!blkid_probe_lookup_value(pr, "USAGE", &usage, NULL) &&
		   usage && strcmp(usage, "filesystem")) {
		warnx("%s: holds %s (%s), not a filesystem", image, val,
			 usage);
		ret = -EINVAL;
	} else {
		for (i = 0; i < N_IMAGE_TYPES; i++)
			if (!strcmp(val, image_types[i].name))
				break;
		if (i == N_IMAGE_TYPES) {
			warnx("%s: holds a %s filesystem: only ext4, xfs, btrfs, squashfs and erofs are mounted",
			      image, val);
			ret = -EINVAL;
		} else {
			snprintf(type, typesz, "%s", val);
			*ro_only = image_types[i].ro_only;
		}
	}
	blkid_free_probe(pr);
	return ret;
}

/*
 * Open the image or device that realpath() named (abs, no symbolic link
 * in it) and stat() saw: a user who owns a directory on the way could
 * swap it for a link (to a block device), a FIFO or another file between
 * the checks and the use.  No link is followed, nothing blocks, and the
 * inode must be the one seen.
 */
static int open_checked(const char *abs, const struct stat *seen, bool ro)
{
	struct open_how how = {
		.flags = (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOCTTY |
			 O_NONBLOCK,
		.resolve = RESOLVE_NO_SYMLINKS,
	};
	struct stat st;
	int fd, e;

	fd = (int)syscall(SYS_openat2, AT_FDCWD, abs, &how, sizeof(how));
	if (fd < 0) {
		e = errno;
		if (!ro && (e == EROFS || e == EACCES))
			warnc(e, "%s: cannot open read-write (try --ro)", abs);
		else if (e == ELOOP || e == ENXIO)
			warnx("%s: changed while being checked", abs);
		else
			warnc(e, "%s", abs);
		return -e;
	}
	if (fstat(fd, &st) || st.st_dev != seen->st_dev ||
	    st.st_ino != seen->st_ino ||
	    (st.st_mode & S_IFMT) != (seen->st_mode & S_IFMT)) {
		warnx("%s: changed while being checked", abs);
		close(fd);
		return -ESTALE;
	}
	/* O_NONBLOCK was for the open only: not for the loop device's I/O */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		e = errno;
		warnc(e, "%s", abs);
		close(fd);
		return -e;
	}
	return fd;
}

/* The checked image open on fd, open again read-write: the same inode. */
static int reopen_rw(int fd, const char *image)
{
	char path[64];
	int rw, e;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rw = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (rw < 0) {
		e = errno;
		if (e == EROFS || e == EACCES || e == EPERM)
			warnc(e, "%s: cannot open read-write (try --ro)",
				 image);
		else
			warnc(e, "%s", image);
		return -e;
	}
	return rw;
}

/* Attach the image open on file to a free loop device that clears itself. */
static int loop_attach(int file, const char *image, bool ro, char *dev,
		       size_t devsz)
{
	_cleanup_close_ int ctl = -EBADF;
	int mode = (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	struct loop_config cfg;
	int tries, nr, lfd, e;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		e = errno;
		warnc(e, "/dev/loop-control (is the loop driver loaded?)");
		return -e;
	}
	/* another process may grab the same free device: retry a few times */
	for (tries = 0; tries < 16; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			e = errno;
			warnc(e, "%s: no free loop device", image);
			return -e;
		}
		snprintf(dev, devsz, "/dev/loop%d", nr);
		lfd = open(dev, mode);
		if (lfd < 0) {
			e = errno;
			warnc(e, "%s", dev);
			return -e;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (unsigned int)file;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR |
				    (ro ? LO_FLAGS_READ_ONLY : 0);
		snprintf((char *)cfg.info.lo_file_name, LO_NAME_SIZE, "%s",
			 image);
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
			sc_debug("%s attached to %s%s", image, dev,
				 ro ? " read-only" : "");
			return lfd;
		}
		e = errno;
		close(lfd);
		if (e != EBUSY) {
			warnc(e, "%s: cannot attach to %s", image, dev);
			dev[0] = '\0';
			return -e;
		}
	}
	warnx("%s: every free loop device was taken by someone else", image);
	dev[0] = '\0';
	return -EBUSY;
}

/*
 * Where block device dev (its number rdev) is mounted in our namespace,
 * as " (mounted on DIR)" or " (shifted on DIR)" for a shiftfs mount that
 * shiftctl made from it; "" if nowhere we can see.
 */
static void where_mounted(const char *dev, dev_t rdev, char *buf, size_t size)
{
	const char *base = strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev;
	struct libmnt_table *tb;
	struct libmnt_iter *itr;
	struct libmnt_fs *fs;
	const char *how = NULL, *target = NULL, *src;
	char name[40];

	buf[0] = '\0';
	tb = mnt_new_table_from_file("/proc/self/mountinfo");
	itr = mnt_new_iter(MNT_ITER_FORWARD);
	while (tb && itr && !mnt_table_next_fs(tb, itr, &fs)) {
		src = mnt_fs_get_source(fs);
		if (mnt_fs_get_devno(fs) == rdev) {
			how = "mounted";
			target = mnt_fs_get_target(fs);
			break;
		}
		if (!how && mnt_fs_match_fstype(fs, "shiftfs") && src &&
		    !source_tmpdir_dev(src, name, sizeof(name)) &&
		    !strcmp(name, base)) {
			how = "shifted";	/* a mount of dev's own wins */
			target = mnt_fs_get_target(fs);
		}
	}
	if (how && target)
		snprintf(buf, size, " (%s on %s)", how, target);
	mnt_free_iter(itr);
	mnt_unref_table(tb);
}

static void where_mounted_path(const char *dev, char *buf, size_t size)
{
	struct stat st;

	buf[0] = '\0';
	if (!stat(dev, &st) && S_ISBLK(st.st_mode))
		where_mounted(dev, st.st_rdev, buf, size);
}

/*
 * A loop device already backed by the whole of image (st), open so that
 * it cannot clear itself under us, its name in dev; -ENOENT if none; a
 * refusal (said) if one holds a part of the image or is read-only and
 * read-write is asked.  The caller holds the image's flock().
 */
static int loop_find(const char *image, const struct stat *st, bool ro,
		     char *dev, size_t devsz)
{
	char where[PATH_MAX + 32], name[32];
	int fd, keep = -ENOENT, ret = 0;
	struct loop_info64 info;
	struct dirent *de;
	DIR *dir;

	dir = opendir("/sys/block");
	if (!dir) {
		ret = -errno;
		warnc(-ret, "/sys/block: cannot look for loop devices on %s",
		      image);
		return ret;
	}
	while (!ret && (de = readdir(dir))) {
		if (strncmp(de->d_name, "loop", 4) || !de->d_name[4] ||
		    !all_digits(de->d_name + 4) ||
		    snprintf(name, sizeof(name), "/dev/%s", de->d_name) >=
		    (int)sizeof(name))
			continue;
		/* opened first: the status read then is one that lasts */
		fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (ioctl(fd, LOOP_GET_STATUS64, &info)) {
			close(fd);	/* unbound */
			continue;
		}
		switch (loop_use(&info, st, ro)) {
		case LOOP_UNRELATED:
			break;
		case LOOP_SHARE:
			if (keep >= 0)	/* another whole one: keep the first */
				break;
			keep = fd;
			fd = -EBADF;
			snprintf(dev, devsz, "%s", name);
			break;
		case LOOP_READ_ONLY:
			where_mounted_path(name, where, sizeof(where));
			warnx("%s: in use read-only on %s%s: cannot share it read-write (try --ro)",
			      image, name, where);
			ret = -EROFS;
			break;
		case LOOP_OVERLAP:
			where_mounted_path(name, where, sizeof(where));
			warnx("%s: %s holds a part of it (offset %llu, size limit %llu)%s: refusing a second view of one file",
			      image, name, (unsigned long long)info.lo_offset,
			      (unsigned long long)info.lo_sizelimit, where);
			ret = -EBUSY;
			break;
		}
		closep(&fd);
	}
	closedir(dir);
	if (ret) {
		closep(&keep);
		dev[0] = '\0';
		return ret;
	}
	if (keep >= 0)
		sc_debug("%s is on %s already: sharing it", image, dev);
	return keep;
}

/*
 * On no loop device, an image may still be in use: open for writing by a
 * process (a virtual machine's disk, say), whose writes a filesystem
 * mounted read-write would fight.  A read lease, which the kernel grants
 * on fd (read-only) only while nobody has the file open for writing, tells
 * cheaply; it is dropped at once, SIGIO (a lease break) ignored meanwhile.
 * A filesystem without leases is not checked.
 */
static int check_not_open_for_write(int fd, const char *display)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	int ret = 0, e;

	sigemptyset(&ign.sa_mask);
	sigaction(SIGIO, &ign, &old);
	if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
	} else {
		e = errno;
		if (e == EAGAIN) {
			warnx("%s: open for writing by another process (fuser -v shows which): refusing to mount it read-write (--ro is possible)",
			      display);
			ret = -EBUSY;
		} else {
			sc_debug("%s: no lease (%s): not known whether it is open for writing",
				 display, strerror(e));
		}
	}
	sigaction(SIGIO, &old, NULL);
	return ret;
}

/*
 * Mount the filesystem on dev detached: a superblock read-only if sb_ro,
 * the mount read-only if mnt_ro; display names it in messages, quiet keeps
 * a refusal to ourselves.
 */
static int lower_mount_as(const char *dev, const char *type, bool sb_ro,
			  bool mnt_ro, bool quiet, const char *display)
{
	_cleanup_close_ int fsfd = -EBADF;
	int mfd;

	fsfd = open_fs(type, display);
	if (fsfd < 0)
		return fsfd;
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "source", dev, 0))
		return fs_fail(fsfd, quiet, "%s: %s rejects source %s",
			       display, type, dev);
	if (sb_ro && fsconfig(fsfd, FSCONFIG_SET_FLAG, "ro", NULL, 0))
		return fs_fail(fsfd, quiet, "%s: %s rejects ro", display, type);
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		return fs_fail(fsfd, quiet, "%s: cannot mount its %s filesystem",
			       display, type);
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, mnt_ro ? MOUNT_ATTR_RDONLY : 0);
	if (mfd < 0)
		return fs_fail(fsfd, quiet, "%s: fsmount %s", display, type);
	sc_debug("%s: %s on %s mounted detached%s", display, type, dev,
		 sb_ro ? ", read-only" : mnt_ro ? ", read-only on a read-write superblock" : "");
	return mfd;
}

/*
 * Mount the filesystem on dev detached.  On a device that may be mounted
 * already (shared), the kernel hands back its superblock, and refuses
 * (EBUSY) where that would change the superblock's read-only state: then
 * read-only is a read-only mount of the read-write superblock, and
 * read-write on a read-only one is refused, saying where it is mounted.
 */
static int lower_mount(const char *dev, const char *type, bool ro,
		       bool shared, const char *display)
{
	char where[PATH_MAX + 32];
	int mfd, probe;

	if (!shared)
		return lower_mount_as(dev, type, ro, ro, false, display);
	mfd = lower_mount_as(dev, type, ro, ro, true, display);
	if (mfd >= 0)
		return mfd;
	if (mfd == -EBUSY && ro) {
		mfd = lower_mount_as(dev, type, false, true, true, display);
		if (mfd >= 0)
			return mfd;
	}
	if (mfd == -EBUSY && !ro) {
		/* read-only is accepted: the superblock is read-only */
		probe = lower_mount_as(dev, type, true, true, true, display);
		if (probe >= 0) {
			close(probe);
			where_mounted_path(dev, where, sizeof(where));
			warnx("%s: its %s filesystem on %s is read-only%s: cannot share it read-write (try --ro)",
			      display, type, dev, where);
			return -EROFS;
		}
	}
	/* say why, this time */
	return lower_mount_as(dev, type, ro, ro, false, display);
}

/*
 * symlink(target, name) where name ends in "XXXXXX", replaced by random
 * letters until the name is free, as mkdtemp() does for directories.
 */
static int symlink_tmp(const char *target, char *name)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz"
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t len = strlen(name), i;
	unsigned char rnd[6];
	int tries;

	if (len < 6 || strcmp(name + len - 6, "XXXXXX"))
		return -EINVAL;
	for (tries = 0; tries < 100; tries++) {
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return -EIO;
		for (i = 0; i < 6; i++)
			name[len - 6 + i] = set[rnd[i] % (sizeof(set) - 1)];
		if (!symlink(target, name))
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/*
 * shiftfs takes its lower layer as a path.  A detached mount has one:
 * /proc/self/fd/N of its fd, given through a symlink named after dev
 * (source.h), and that is tried first since it never makes the lower
 * mount visible (6.15 and later take it).  A module that insists on a mount in the
 * caller's namespace (clone_private_mount() before 6.15) refuses it; then
 * the lower mount is put on a private temporary directory for the time of
 * the fsconfig() calls and lazily unmounted again, shiftfs holding its own
 * reference.  The directory is named after dev (source.h) because
 * mountinfo keeps showing it as the shiftfs mount's source.  Signals that
 * would end us are held off meanwhile so that the symlink, the directory
 * and its mount never outlive us.
 */
static int shift_over_detached(int lowerfd, const char *dev,
			       const char *display, const struct shift_opts *o,
			       uint64_t attr)
{
	char source[64], tmp[PATH_MAX], name[PATH_MAX];
	sigset_t block, old;
	bool opened = false;
	int mfd = -EINVAL;

	if (source_tmpdir_template(tmp, sizeof(tmp),
				   access("/run", W_OK) ? "/tmp" : "/run", dev)) {
		warnx("%s: cannot name a temporary directory after %s",
			 display, dev);
		return -EINVAL;
	}
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, &old);

	/*
	 * The detached mount itself, through a symlink to /proc/self/fd/N
	 * named like the temporary directory: shiftfs shows the name it was
	 * given as the mount's source, which is how `shiftctl list` finds
	 * the image (the fd's own name would say nothing).
	 */
	snprintf(source, sizeof(source), "/proc/self/fd/%d", lowerfd);
	snprintf(name, sizeof(name), "%s", tmp);
	if (!symlink_tmp(source, name)) {
		mfd = shiftfs_create(name, display, o, attr, true, &opened);
		if (unlink(name))
			warn("%s: cannot remove", name);
		if (mfd >= 0 || !opened)
			goto out;
		sc_debug("shiftfs refused %s (%s): trying a temporary directory",
			 source, strerror(-mfd));
	}

	if (!mkdtemp(tmp)) {
		mfd = -errno;
		warnc(-mfd, "%s: cannot make a temporary directory", tmp);
		goto out;
	}
	if (move_mount(lowerfd, "", AT_FDCWD, tmp, MOVE_MOUNT_F_EMPTY_PATH)) {
		mfd = -errno;
		warnc(-mfd, "%s: cannot mount the lower filesystem on %s",
			 display, tmp);
	} else {
		mfd = shiftfs_create(tmp, display, o, attr, false, NULL);
		if (umount2(tmp, MNT_DETACH))
			warn("%s: cannot unmount", tmp);
	}
	if (rmdir(tmp))
		warn("%s: cannot remove", tmp);
out:
	sigprocmask(SIG_SETMASK, &old, NULL);
	return mfd;
}

int shift_build(const char *src, const struct shift_opts *opts)
{
	struct shift_opts used, *o = &used;
	char loopdev[32] = "", fstype[32];
	_cleanup_close_ int loopfd = -EBADF, lowerfd = -EBADF, fd = -EBADF;
	_cleanup_close_ int rwfd = -EBADF;
	_cleanup_free_ char *abs = NULL;
	const char *dev = src;
	bool shared = true;	/* a block device or a loop device found */
	bool ro_only = false;
	struct statvfs sv;
	struct stat st;
	int ret;

	used = *opts;

	if (stat(src, &st)) {
		ret = -errno;
		warnc(-ret, "%s", src);
		return ret;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) &&
	    !S_ISBLK(st.st_mode)) {
		warnx("%s: not a directory, disk image file or block device",
			 src);
		return -ENOTDIR;
	}
	abs = realpath(src, NULL);
	if (!abs) {
		ret = -errno;
		warnc(-ret, "%s", src);
		return ret;
	}
	/*
	 * A path a user chose ("disk.img") may be a link to the host's disk:
	 * a block device is named by itself, or by a link under /dev
	 * (/dev/disk/by-uuid/...), which only root makes.
	 */
	if (S_ISBLK(st.st_mode) && strcmp(abs, src) &&
	    strncmp(src, "/dev/", 5)) {
		warnx("%s: a link to the block device %s: name the device itself",
			 src, abs);
		return -EINVAL;
	}
	if (S_ISDIR(st.st_mode)) {
		/* nosuid/noexec of the mount the directory is on stay */
		if (statvfs(abs, &sv)) {
			ret = -errno;
			warnc(-ret, "%s: cannot read its mount's flags", src);
			return ret;
		}
		return shiftfs_create(abs, src, o,
				      shift_mount_attr(o->kind, o->ro, o->suid,
						       sv.f_flag),
				      false, NULL);
	}

	/*
	 * Read-only: the lease probe of check_not_open_for_write() must see
	 * no writer, ourselves included; a loop device set up read-write
	 * gets the same inode again, read-write (reopen_rw()).
	 */
	fd = open_checked(abs, &st, true);
	if (fd < 0)
		return fd;
	ret = probe_type(fd, abs, fstype, sizeof(fstype), &ro_only);
	if (ret)
		return ret;
	/* squashfs, erofs: read-only whether --ro was given or not */
	if (ro_only && !o->ro) {
		sc_debug("%s: %s is read-only: mounting it read-only", src, fstype);
		o->ro = true;
	}
	if (S_ISREG(st.st_mode)) {
		/* one shiftctl at a time finds, attaches and mounts an image */
		if (flock(fd, LOCK_EX)) {
			ret = -errno;
			warnc(-ret, "%s: cannot lock", src);
			return ret;
		}
		loopfd = loop_find(abs, &st, o->ro, loopdev, sizeof(loopdev));
		if (loopfd == -ENOENT) {
			shared = false;
			if (!o->ro) {
				ret = check_not_open_for_write(fd, src);
				if (ret)
					return ret;
				rwfd = reopen_rw(fd, src);
				if (rwfd < 0)
					return rwfd;
			}
			loopfd = loop_attach(o->ro ? fd : rwfd, abs, o->ro,
					     loopdev, sizeof(loopdev));
		}
		if (loopfd < 0)
			return loopfd;
		dev = loopdev;
	}
	lowerfd = lower_mount(dev, fstype, o->ro, shared, src);
	if (lowerfd < 0)
		return lowerfd;
	/* the mounted filesystem holds the loop device from now on */
	closep(&loopfd);
	closep(&rwfd);
	closep(&fd);
	/* the lower filesystem is our own mount: no flags to inherit */
	return shift_over_detached(lowerfd, dev, src, o,
				   shift_mount_attr(o->kind, o->ro, o->suid, 0));
}

/*
 * A mark is a mount, and mount namespaces copied while it existed keep
 * their copies when we unmount ours: the kernel ends it on its
 * superblock, which every copy shares (fspick + "revoke"), so that no
 * copy can be mounted from any more.  Mounts made from it stay.
 */
int revoke_mark(const char *dir, const char *shown)
{
	_cleanup_close_ int fd = -1;

	fd = fspick(AT_FDCWD, dir, FSPICK_CLOEXEC | FSPICK_NO_AUTOMOUNT |
		    FSPICK_SYMLINK_NOFOLLOW);
	if (fd < 0) {
		int e = errno;

		warn("%s: cannot revoke the mark", shown);
		return -e;
	}
	if (fsconfig(fd, FSCONFIG_SET_FLAG, "revoke", NULL, 0) ||
	    fsconfig(fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0))
		return fs_fail(fd, false, "%s: cannot revoke the mark", shown);
	drain_log(fd, true);
	return 0;
}

int find_top_mount(FILE *mountinfo, const char *target, struct top_mount *top)
{
	struct libmnt_table *tb;
	struct libmnt_fs *fs;
	const char *type, *opts;
	int ret = 0;

	tb = mnt_new_table();
	if (!tb)
		return -ENOMEM;
	ret = mountinfo ? mnt_table_parse_stream(tb, mountinfo, "mountinfo")
			: mnt_table_parse_file(tb, "/proc/self/mountinfo");
	if (ret) {
		ret = ret < 0 ? ret : -EIO;
		goto out;
	}
	fs = mnt_table_find_target(tb, target, MNT_ITER_BACKWARD);
	if (!fs) {
		ret = -ENOENT;
		goto out;
	}
	type = mnt_fs_get_fstype(fs);
	snprintf(top->fstype, sizeof(top->fstype), "%s", type ? type : "?");
	opts = mnt_fs_get_fs_options(fs);
	top->mark = mnt_fs_match_fstype(fs, "shiftfs") && opts &&
		    !mnt_optstr_get_option(opts, "mark", NULL, NULL);
	idmap_init(&top->uid);
	idmap_init(&top->gid);
	if (mnt_fs_match_fstype(fs, "shiftfs") && opts &&
	    idmap_parse_options(opts, &top->uid, &top->gid, NULL, 0))
		ret = -EINVAL;
out:
	mnt_unref_table(tb);
	return ret;
}
