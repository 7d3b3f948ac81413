// SPDX-License-Identifier: GPL-2.0
/*
 * shiftfs over the filesystems images live on: squashfs and erofs image
 * files (read-only; LXD and Incus ship squashfs images) built here from a
 * root-owned tree, and FUSE mounted by host root (bindfs).
 *
 * On the read-only images the core file operations go through shiftfs
 * as they go underneath: ids shifted, hard links, symlinks, xattrs and
 * ACLs (their ids shifted too), mmap, POSIX, OFD and flock locks,
 * O_DIRECT where the filesystem has it, and EROFS for every change.
 * Then a container's writable layer: overlayfs over the shifted image,
 * where creating, renaming, linking, copy-up, xattrs and ACLs work and
 * the image stays as it was.  On FUSE, the same read side and the whole
 * read-write workload.
 */
#include "harness.h"
#include "shiftfs_util.h"

#include <sys/file.h>
#include <sys/mman.h>
#include <sys/xattr.h>

#define ACL_USER_TAG	0x02
#define ACL_GROUP_TAG	0x08

/* "\tNAME\n" in /proc/filesystems, after asking modprobe for it. */
static bool have_fs(const char *name)
{
	char cmd[96], line[128], want[64];
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "modprobe -q %s >/dev/null 2>&1", name);
	if (system(cmd)) {
		/* built in, or missing: /proc/filesystems says */
	}
	snprintf(want, sizeof(want), "\t%s\n", name);
	f = fopen("/proc/filesystems", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, want) != NULL;
	fclose(f);
	return found;
}

/*
 * Run a shell command line, its output kept aside: shown as TAP comments
 * if it fails (mksquashfs warns on ACLs, which squashfs does not keep).
 */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[1024], full[1200], log[64], line[256];
	va_list ap;
	FILE *f;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(log, sizeof(log), "/tmp/imagefs-sh.%d", getpid());
	snprintf(full, sizeof(full), "( %s ) > %s 2>&1", cmd, log);
	rc = system(full);
	if (rc) {
		printf("# '%s': status %d\n", cmd, rc);
		f = fopen(log, "re");
		while (f && fgets(line, sizeof(line), f))
			printf("#   %s", line);
		if (f)
			fclose(f);
	}
	unlink(log);
	return rc;
}

/*
 * The image's tree, owned as a distribution's is: root's files, a user's
 * (1000), a hard link, a symlink, a trusted.* xattr and an ACL naming
 * uid and gid 1000.
 */
static int make_tree(const char *src)
{
	char data[8192];

	memset(data, 'x', sizeof(data));
	if (mkdir(src, 0755) ||
	    make_file(P(src, "root"), 0644, 0, 0) ||
	    write_file(P(src, "root"), "image") ||
	    make_dir(P(src, "home"), 0755, 0, 0) ||
	    make_file(P(src, "home/user"), 0600, 1000, 1000) ||
	    make_file(P(src, "acl"), 0640, 0, 0) ||
	    make_file(P(src, "big"), 0644, 0, 0) ||
	    link(P(src, "root"), P(src, "hard")) ||
	    symlink("root", P(src, "sym")) ||
	    setxattr(P(src, "root"), "trusted.t", "v", 1, 0))
		return -1;
	/* 8 KiB: two pages, for O_DIRECT's aligned read */
	{
		int fd = open(P(src, "big"), O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, data, sizeof(data)) != sizeof(data)) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return sh("setfacl -m u:1000:rw,g:1000:r %s", P(src, "acl"));
}

/*
 * The id of the first @tag entry of @path's access ACL, or -1.
 * The value is the kernel's: a 4-byte header, then 8-byte entries.
 */
static long long acl_id(const char *path, unsigned int tag)
{
	unsigned char buf[256];
	ssize_t n = getxattr(path, "system.posix_acl_access", buf,
			     sizeof(buf));
	ssize_t off;

	for (off = 4; n > 0 && off + 8 <= n; off += 8) {
		uint16_t t;
		uint32_t id;

		memcpy(&t, buf + off, 2);
		memcpy(&id, buf + off + 4, 4);
		if (t == tag)
			return id;
	}
	return -1;
}

/* 0 if fsuid/fsgid @id may open @path for reading, else the errno. */
static int open_as(const char *path, uid_t id)
{
	int fd, err;

	become_fsids(id, id);
	fd = open(path, O_RDONLY);
	err = fd < 0 ? errno : 0;
	become_fsids(0, 0);
	if (fd >= 0)
		close(fd);
	return err;
}

/* The lower tree's "acl" file carries an access ACL. */
static bool has_acl(const char *lower)
{
	return acl_id(P(lower, "acl"), ACL_USER_TAG) != -1;
}

/*
 * A lock taken through one open file description is seen through
 * another (F_OFD_GETLK), and flock() works: 0 or the failed step.
 */
static int locks(const char *path, bool rw)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
	int a, b, ret = 0;

	a = open(path, rw ? O_RDWR : O_RDONLY);
	b = open(path, O_RDONLY);
	if (a < 0 || b < 0)
		return 1;
	if (rw)
		fl.l_type = F_WRLCK;
	if (fcntl(a, F_OFD_SETLK, &fl))
		ret = 2;
	fl.l_type = F_WRLCK;
	fl.l_pid = 0;
	if (!ret && (fcntl(b, F_OFD_GETLK, &fl) ||
		     fl.l_type != (rw ? F_WRLCK : F_RDLCK)))
		ret = 3;
	if (!ret && flock(a, LOCK_EX | LOCK_NB))
		ret = 4;
	if (!ret && (!flock(b, LOCK_SH | LOCK_NB) || errno != EWOULDBLOCK))
		ret = 5;
	/* a process's POSIX read lock: shares a read lock, not a write one */
	fl.l_type = F_RDLCK;
	fl.l_pid = 0;
	if (!ret) {
		int rc = fcntl(b, F_SETLK, &fl);

		if (rw ? !rc || (errno != EAGAIN && errno != EACCES) : rc)
			ret = 6;
	}
	close(a);
	close(b);
	return ret;
}

/* O_DIRECT through shiftfs as underneath: the same result, the same data. */
static int odirect(const char *lower, const char *upper)
{
	int lfd, ufd, lerr, uerr, ret = 0;
	void *lbuf = NULL, *ubuf = NULL;
	ssize_t ln, un;

	lfd = open(lower, O_RDONLY | O_DIRECT);
	lerr = lfd < 0 ? errno : 0;
	ufd = open(upper, O_RDONLY | O_DIRECT);
	uerr = ufd < 0 ? errno : 0;
	printf("# O_DIRECT open: lower %d, shiftfs %d\n", lerr, uerr);
	if (lerr != uerr) {
		ret = 1;
		goto out;
	}
	if (lerr)
		goto out;
	if (posix_memalign(&lbuf, 4096, 8192) ||
	    posix_memalign(&ubuf, 4096, 8192)) {
		ret = 2;
		goto out;
	}
	ln = pread(lfd, lbuf, 8192, 0);
	lerr = ln < 0 ? errno : 0;
	un = pread(ufd, ubuf, 8192, 0);
	uerr = un < 0 ? errno : 0;
	printf("# O_DIRECT read: lower %zd/%d, shiftfs %zd/%d\n", ln, lerr,
	       un, uerr);
	if (ln != un || lerr != uerr || (ln > 0 && memcmp(lbuf, ubuf, ln)))
		ret = 3;
out:
	free(lbuf);
	free(ubuf);
	if (lfd >= 0)
		close(lfd);
	if (ufd >= 0)
		close(ufd);
	return ret;
}

/* The read side, through shiftfs on w->mnt: 0 or the failed step. */
static int read_side(const struct world *w)
{
	struct stat st, lst, hst;
	char buf[64] = "";
	char *map;
	int fd;

	if (owner_is(w->mnt, ID_SHIFT, ID_SHIFT) ||
	    owner_is(P(w->mnt, "root"), ID_SHIFT, ID_SHIFT) ||
	    owner_is(P(w->mnt, "home/user"), ID_SHIFT + 1000,
		     ID_SHIFT + 1000))
		return 1;
	if (read_file(P(w->mnt, "root"), buf, sizeof(buf)) != 5 ||
	    strcmp(buf, "image"))
		return 2;
	if (stat(P(w->mnt, "root"), &st) || stat(P(w->mnt, "hard"), &hst) ||
	    stat(P(w->lower, "root"), &lst) || st.st_ino != lst.st_ino ||
	    hst.st_ino != st.st_ino || st.st_nlink != 2)
		return 3;
	memset(buf, 0, sizeof(buf));
	if (readlink(P(w->mnt, "sym"), buf, sizeof(buf) - 1) != 4 ||
	    strcmp(buf, "root") || owner_is(P(w->mnt, "sym"), ID_SHIFT,
					    ID_SHIFT))
		return 4;
	if (getxattr(P(w->mnt, "root"), "trusted.t", buf, sizeof(buf)) != 1 ||
	    buf[0] != 'v')
		return 5;
	printf("# ACL user entry: lower %lld, shiftfs %lld\n",
	       acl_id(P(w->lower, "acl"), ACL_USER_TAG),
	       acl_id(P(w->mnt, "acl"), ACL_USER_TAG));
	if (!has_acl(w->lower)) {
		/* squashfs keeps no ACL, FUSE without posix_acl shows none */
		printf("# no ACL underneath\n");
		if (acl_id(P(w->mnt, "acl"), ACL_USER_TAG) != -1)
			return 6;
	} else {
		if (acl_id(P(w->lower, "acl"), ACL_USER_TAG) != 1000 ||
		    acl_id(P(w->mnt, "acl"), ACL_USER_TAG) != ID_SHIFT + 1000 ||
		    acl_id(P(w->mnt, "acl"), ACL_GROUP_TAG) != ID_SHIFT + 1000)
			return 6;
		/*
		 * Where the kernel enforces it underneath (FUSE without
		 * posix_acl leaves that to its server), it lets 1000 read
		 * and not 2000 (mode 0640 alone lets neither): so through
		 * shiftfs for the shifted ids.  Others never.
		 */
		int l1 = open_as(P(w->lower, "acl"), 1000);
		int l2 = open_as(P(w->lower, "acl"), 2000);
		int s1 = open_as(P(w->mnt, "acl"), ID_SHIFT + 1000);
		int s2 = open_as(P(w->mnt, "acl"), ID_SHIFT + 2000);

		printf("# open as 1000, 2000: lower %d %d, shiftfs %d %d\n",
		       l1, l2, s1, s2);
		if (!s2 || (!l1 && l2 && s1))
			return 7;
	}
	fd = open(P(w->mnt, "root"), O_RDONLY);
	if (fd < 0)
		return 8;
	map = mmap(NULL, 5, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED || memcmp(map, "image", 5))
		return 9;
	munmap(map, 5);
	if (odirect(P(w->lower, "big"), P(w->mnt, "big")))
		return 10;
	return 0;
}

/* Every change to a read-only image is EROFS, as underneath. */
static int refused(const struct world *w)
{
	int fd;

	fd = open(P(w->mnt, "root"), O_WRONLY);
	if (fd >= 0 || errno != EROFS)
		return 1;
	if (!mkdir(P(w->mnt, "new"), 0755) || errno != EROFS)
		return 2;
	if (!chown(P(w->mnt, "root"), ID_SHIFT + 1, ID_SHIFT + 1) ||
	    errno != EROFS)
		return 3;
	if (!setxattr(P(w->mnt, "root"), "trusted.u", "u", 1, 0) ||
	    errno != EROFS)
		return 4;
	if (!unlink(P(w->mnt, "hard")) || errno != EROFS)
		return 5;
	if (!rename(P(w->mnt, "root"), P(w->mnt, "moved")) || errno != EROFS)
		return 6;
	return 0;
}

/*
 * A container's writable layer: overlayfs over the shifted image, upper
 * and work on tmpfs; the container's root is the shifted 0.  0 or the
 * failed step; the image is checked unchanged by the caller.
 */
static int writable_layer(const struct world *w)
{
	char upper[128], work[128], ovl[128], opts[512], buf[16] = "";
	int fd, ret = 0;

	snprintf(upper, sizeof(upper), "%s/upper", w->base);
	snprintf(work, sizeof(work), "%s/work", w->base);
	snprintf(ovl, sizeof(ovl), "%s/ovl", w->base);
	if (make_dir(upper, 0755, ID_SHIFT, ID_SHIFT) || mkdir(work, 0755) ||
	    mkdir(ovl, 0755))
		return 1;
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s",
		 w->mnt, upper, work);
	if (mount("overlay", ovl, "overlay", 0, opts))
		return 2;
	if (owner_is(P(ovl, "root"), ID_SHIFT, ID_SHIFT) ||
	    owner_is(P(ovl, "home/user"), ID_SHIFT + 1000, ID_SHIFT + 1000)) {
		ret = 3;
		goto out;
	}
	become_fsids(ID_SHIFT, ID_SHIFT);
	fd = open(P(ovl, "new"), O_CREAT | O_RDWR, 0644);
	if (fd < 0 || write(fd, "new", 3) != 3 || fsync(fd))
		ret = 4;
	if (fd >= 0)
		close(fd);
	/* copy-up by writing, renaming and linking */
	if (!ret && (write_file(P(ovl, "root"), "chang") ||
		     rename(P(ovl, "sym"), P(ovl, "sym2")) ||
		     link(P(ovl, "new"), P(ovl, "home/new"))))
		ret = 5;
	become_fsids(0, 0);
	/* and by an xattr (trusted.*: tmpfs has no user.* before 6.6) */
	if (!ret && setxattr(P(ovl, "acl"), "trusted.x", "x", 1, 0))
		ret = 5;
	if (!ret && (owner_is(P(upper, "root"), ID_SHIFT, ID_SHIFT) ||
		     owner_is(P(upper, "new"), ID_SHIFT, ID_SHIFT) ||
		     owner_is(P(upper, "home"), ID_SHIFT, ID_SHIFT) ||
		     owner_is(P(upper, "acl"), ID_SHIFT, ID_SHIFT) ||
		     owner_is(P(upper, "sym2"), ID_SHIFT, ID_SHIFT)))
		ret = 6;
	/* a copied-up ACL keeps its shifted ids */
	if (!ret && has_acl(w->lower) &&
	    (acl_id(P(upper, "acl"), ACL_USER_TAG) != ID_SHIFT + 1000 ||
	     acl_id(P(ovl, "acl"), ACL_USER_TAG) != ID_SHIFT + 1000))
		ret = 7;
	if (!ret && (read_file(P(ovl, "root"), buf, sizeof(buf)) != 5 ||
		     strcmp(buf, "chang")))
		ret = 8;
	if (!ret && locks(P(ovl, "new"), true))
		ret = 9;
out:
	umount(ovl);
	return ret;
}

/*
 * @fstype's image of a root-owned tree, loop-mounted read-only on the
 * world's lower/ (util-linux mount: its loop device clears itself).
 */
static void image_world(struct world *w, const char *fstype)
{
	char src[128], img[128];

	ASSERT_EQ(world_setup(w), 0);
	if (!have_fs(fstype))
		SKIP("no %s in this kernel", fstype);
	snprintf(src, sizeof(src), "%s/src", w->base);
	snprintf(img, sizeof(img), "%s/%s.img", w->base, fstype);
	ASSERT_EQ(make_tree(src), 0);
	if (!strcmp(fstype, "squashfs"))
		ASSERT_EQ(sh("mksquashfs %s %s -noappend -quiet -no-progress",
			     src, img), 0);
	else
		ASSERT_EQ(sh("mkfs.erofs %s %s", img, src), 0);
	/* mkdtemp's lower/ is the root of the image once mounted */
	ASSERT_EQ(sh("mount -t %s -o loop,ro %s %s", fstype, img, w->lower), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
}

static void read_only_image(const char *fstype)
{
	struct world w;
	char before[256], after[256];

	image_world(&w, fstype);
	ASSERT_EQ(sh("sha256sum %s/%s.img > %s/sum", w.base, fstype, w.base),
		  0);
	EXPECT_EQ(read_side(&w), 0);
	EXPECT_EQ(locks(P(w.mnt, "root"), false), 0);
	EXPECT_EQ(refused(&w), 0);
	EXPECT_EQ(writable_layer(&w), 0);
	EXPECT_EQ(umount(w.mnt), 0);
	EXPECT_EQ(umount(w.lower), 0);
	/* nothing reached the image */
	ASSERT_GE(read_file(P(w.base, "sum"), before, sizeof(before)), 64);
	ASSERT_EQ(sh("sha256sum %s/%s.img > %s/sum", w.base, fstype, w.base),
		  0);
	ASSERT_GE(read_file(P(w.base, "sum"), after, sizeof(after)), 64);
	EXPECT_STREQ(before, after);
}

TEST(over_squashfs)
{
	read_only_image("squashfs");
}

TEST(over_erofs)
{
	read_only_image("erofs");
}

/*
 * FUSE mounted by host root: bindfs of a root-owned tree on tmpfs onto
 * lower/.  The read side, then changes made through shiftfs land
 * underneath with the unshifted ids.
 */
TEST(over_fuse)
{
	struct world w;
	char src[128];
	int fd;

	ASSERT_EQ(world_setup(&w), 0);
	if (!have_fs("fuse"))
		SKIP("no fuse in this kernel");
	snprintf(src, sizeof(src), "%s/src", w.base);
	ASSERT_EQ(make_tree(src), 0);
	ASSERT_EQ(make_dir(P(src, "pub"), 01777, 0, 0), 0);
	/* root's bindfs: others may use it; new files are their creators' */
	ASSERT_EQ(sh("bindfs -o allow_other --create-as-user %s %s", src,
		     w.lower), 0);
	ASSERT_EQ(shiftfs_mount_default(&w), 0);
	EXPECT_EQ(read_side(&w), 0);
	EXPECT_EQ(locks(P(w.mnt, "root"), true), 0);
	EXPECT_EQ(writable_layer(&w), 0);
	/* read-write: the changes land in the tree with unshifted ids */
	become_fsids(ID_SHIFT + 1000, ID_SHIFT + 1000);
	fd = open(P(w.mnt, "pub/made"), O_CREAT | O_RDWR, 0600);
	become_fsids(0, 0);
	EXPECT_EQ(fd < 0, 0);
	if (fd >= 0)
		close(fd);
	EXPECT_EQ(owner_is(P(src, "pub/made"), 1000, 1000), 0);
	EXPECT_EQ(owner_is(P(w.mnt, "pub/made"), ID_SHIFT + 1000,
			   ID_SHIFT + 1000), 0);
	EXPECT_EQ(chown(P(w.mnt, "root"), ID_SHIFT + 7, ID_SHIFT + 8), 0);
	EXPECT_EQ(owner_is(P(src, "root"), 7, 8), 0);
	EXPECT_EQ(setxattr(P(w.mnt, "root"), "trusted.w", "w", 1, 0), 0);
	EXPECT_EQ(getxattr(P(src, "root"), "trusted.w", NULL, 0), 1);
	if (has_acl(w.lower)) {
		EXPECT_EQ(sh("setfacl -m u:%u:r %s", ID_SHIFT + 2000,
			     P(w.mnt, "acl")), 0);
		EXPECT_EQ(sh("getfacl -n %s 2>/dev/null | grep -qx 'user:2000:r--'",
			     P(src, "acl")), 0);
	}
	EXPECT_EQ(rename(P(w.mnt, "hard"), P(w.mnt, "home/hard")), 0);
	EXPECT_EQ(access(P(src, "home/hard"), F_OK), 0);
	EXPECT_EQ(unlink(P(w.mnt, "home/hard")), 0);
	EXPECT_EQ(umount(w.mnt), 0);
	EXPECT_EQ(umount(w.lower), 0);
}

TEST_HARNESS_MAIN
