// SPDX-License-Identifier: GPL-2.0
/*
 * A stacking filesystem that runs lower operations with its mounter's
 * credentials must not let a caller borrow more than the map delegates.
 * Each test here is an attack (or a defect found on the way) that worked
 * against an earlier shiftfs: stale cached attributes trusted by a check,
 * the mounter's resource powers, setuid/device files through host-root
 * mounts, a failed operation that still changed the file, file
 * capabilities the mount cannot translate, and a casefolded lower.
 *
 * Some 800 lines in one file, on purpose: it is the catalogue of those
 * attacks, one place to read what shiftfs must refuse, sharing the loop
 * image and setuid helpers.
 */
#include "harness.h"
#include "mark_util.h"

/* Sparse, in the world's tmpfs; the space tests fill a fraction of it. */
#define LOOP_IMG_SIZE (64ll << 20)
#include "loop_util.h"

#include <linux/capability.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/quota.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#ifndef FS_CASEFOLD_FL
#define FS_CASEFOLD_FL 0x40000000
#endif

/*
 * Exec probe: this very program, copied into a test tree with setuid bits
 * or file capabilities, reports the ids and capabilities it runs with.
 */
__attribute__((constructor)) static void idprobe(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (!getenv("SHIFTFS_IDPROBE"))
		return;
	memset(data, 0, sizeof(data));
	syscall(SYS_capget, &hdr, data);
	printf("%u %u %x\n", (unsigned int)geteuid(), (unsigned int)getegid(),
	       data[0].permitted);
	fflush(stdout);
	_exit(0);
}

struct probe {
	int err;		/* errno of execve, or 0 */
	unsigned int euid, egid, permitted;
};

/*
 * Run the probe at @path as @uid/@gid (all three ids, so no capabilities
 * either, unless @uid is 0) and read what it reports.
 */
static int run_probe(const char *path, uid_t uid, gid_t gid,
		     struct probe *p)
{
	int pfd[2], status;
	char out[128] = "";
	pid_t pid;
	ssize_t n;

	memset(p, 0, sizeof(*p));
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char *argv[] = { (char *)path, NULL };
		char *envp[] = { "SHIFTFS_IDPROBE=1", NULL };

		dup2(pfd[1], 1);
		if (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
		    setresuid(uid, uid, uid))
			_exit(125);
		execve(path, argv, envp);
		printf("E %d\n", errno);
		fflush(stdout);
		_exit(126);
	}
	close(pfd[1]);
	n = read(pfd[0], out, sizeof(out) - 1);
	close(pfd[0]);
	waitpid(pid, &status, 0);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	printf("# probe %s as %u: %s", path, (unsigned int)uid, out);
	if (out[0] == 'E')
		return sscanf(out, "E %d", &p->err) == 1 ? 0 : -1;
	return sscanf(out, "%u %u %x", &p->euid, &p->egid, &p->permitted) == 3 ?
	       0 : -1;
}

/* ---- a small ext4 lower on a loop device ----------------------------- */

static int loop_fd = -1;

/*
 * mkfs.ext4 @mkfs_opts on a LOOP_IMG_SIZE image in the world's tmpfs, run
 * the debugfs requests in @debugfs (may be NULL) on it while it is not
 * mounted, and mount it on w->lower with @mount_opts.  0, -1 on error, -2
 * if a tool is missing.
 */
static int ext4_lower(const struct world *w, const char *mkfs_opts,
		      const char *debugfs, const char *mount_opts)
{
	char img[160], dev[32], cmd[1024];
	int fd;

	snprintf(img, sizeof(img), "%s/ext4.img", w->base);
	fd = open(img, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, LOOP_IMG_SIZE))
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F %s %s >/dev/null 2>&1",
		 mkfs_opts, img);
	if (system(cmd))
		return -2;
	if (debugfs) {
		snprintf(cmd, sizeof(cmd),
			 "debugfs -w -f %s %s >/dev/null 2>&1", debugfs, img);
		if (system(cmd))
			return -2;
	}
	loop_fd = loop_attach(img, dev, sizeof(dev));
	if (loop_fd < 0)
		return -1;
	return mount(dev, w->lower, "ext4", 0, mount_opts);
}

/* Detach the loop device once the test's namespace is gone. */
static void ext4_lower_done(const struct world *w)
{
	umount2(w->mnt, MNT_DETACH);
	umount2(w->lower, MNT_DETACH);
	if (loop_fd >= 0)
		loop_detach(loop_fd);
}

#define EXT4_LOWER(w, mkfs, dbg, mopts)					\
	do {								\
		int __r = ext4_lower(w, mkfs, dbg, mopts);		\
		if (__r == -2)						\
			SKIP("mkfs.ext4/debugfs failed: %s", mkfs);	\
		ASSERT_EQ(__r, 0);					\
	} while (0)

/* Write @len bytes of @data to a new file @path, for debugfs -f. */
static int put_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		return -1;
	return close(fd);
}

/* ---- 1. stale attributes ---------------------------------------------- */

static int container_chown_root(void *arg)
{
	const struct world *w = arg;

	CHILD_CHECK(chown(P(w->mnt, "f"), 0, 0) == -1 && errno == EPERM, 1,
		    "chown of a file now owned by an unmapped id");
	/* The VFS itself refuses changes to an inode of an invalid owner. */
	CHILD_CHECK(chmod(P(w->mnt, "f"), 04777) == -1 &&
		    (errno == EPERM || errno == EOVERFLOW), 2,
		    "chmod of a file now owned by an unmapped id");
	return 0;
}

TEST_F(world, stale_owner_no_chown)
{
	struct world *w = &self->w;
	struct stat st;

	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 1000, 1000), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	/* Looked up and cached as 101000:101000. */
	ASSERT_EQ(owner_is(P(w->mnt, "f"), ID_SHIFT + 1000, ID_SHIFT + 1000),
		  0);
	/* Host root gives it to an id the map does not delegate. */
	ASSERT_EQ(chown(P(w->lower, "f"), 70000, 70000), 0);
	EXPECT_EQ(in_container(container_chown_root, w), 0);
	ASSERT_EQ(stat(P(w->lower, "f"), &st), 0);
	EXPECT_EQ(st.st_uid, 70000u);
	EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST_F(world, stale_append_only_no_truncate)
{
	struct world *w = &self->w;
	struct stat st;
	int fd, flags = FS_APPEND_FL;

	ASSERT_EQ(make_file(P(w->lower, "f"), 0666, 1000, 1000), 0);
	ASSERT_EQ(write_file(P(w->lower, "f"), "precious"), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	fd = open(P(w->mnt, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	close(fd);
	fd = open(P(w->lower, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	if (ioctl(fd, FS_IOC_SETFLAGS, &flags))
		SKIP("lower fs has no append-only flag: %s", strerror(errno));
	close(fd);
	/* Directly: EPERM.  Through the mount, as a container user: too. */
	become_fsids(1000, 1000);
	EXPECT_ERRNO(open(P(w->lower, "f"), O_WRONLY | O_TRUNC), EPERM);
	become_fsids(ID_SHIFT + 1000, ID_SHIFT + 1000);
	EXPECT_ERRNO(open(P(w->mnt, "f"), O_WRONLY | O_TRUNC), EPERM);
	EXPECT_ERRNO(truncate(P(w->mnt, "f"), 0), EPERM);
	become_fsids(0, 0);
	ASSERT_EQ(stat(P(w->lower, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 8);
	flags = 0;
	fd = open(P(w->lower, "f"), O_RDONLY);
	ioctl(fd, FS_IOC_SETFLAGS, &flags);
	close(fd);
}

TEST_F(world, stale_nosec_write_kills_suid)
{
	struct world *w = &self->w;
	struct stat st;
	int fd;

	ASSERT_EQ(make_file(P(w->lower, "f"), 0777, 1000, 1000), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(setgroups(0, NULL), 0);
	/* A plain write through the mount: nothing to kill, S_NOSEC. */
	fd = open(P(w->mnt, "f"), O_WRONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "a", 1), 1);
	/* Then the file becomes setuid by another route. */
	ASSERT_EQ(chmod(P(w->lower, "f"), 04777), 0);
	/* A non-owner's write must clear it, as it would directly. */
	become_fsids(ID_SHIFT + 2000, ID_SHIFT + 2000);
	ASSERT_EQ(write(fd, "b", 1), 1);
	close(fd);
	become_fsids(0, 0);
	ASSERT_EQ(stat(P(w->lower, "f"), &st), 0);
	EXPECT_EQ(st.st_mode & 07777, 0777u);
}

/* fileattr: the owner check must see the current owner, too. */
TEST_F(world, stale_owner_no_chattr)
{
	struct world *w = &self->w;
	int fd, flags = 0;

	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 1000, 1000), 0);
	fd = open(P(w->lower, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags))
		SKIP("lower fs has no file flags: %s", strerror(errno));
	close(fd);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	fd = open(P(w->mnt, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	/* The caller owned it when it looked; host root takes it back. */
	ASSERT_EQ(chown(P(w->lower, "f"), 0, 0), 0);
	become_fsids(ID_SHIFT + 1000, ID_SHIFT + 1000);
	flags = FS_NOATIME_FL;
	EXPECT_ERRNO(ioctl(fd, FS_IOC_SETFLAGS, &flags), EPERM);
	become_fsids(0, 0);
	close(fd);
}

/* ---- 4. no borrowed resource powers ----------------------------------- */

/* Fill @dir with one file as @uid (no capabilities); bytes written. */
static long long fill_as(const char *dir, uid_t uid)
{
	static char buf[1 << 16];
	long long total = 0;
	int status, pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd;
		ssize_t n;

		if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
		    setresuid(uid, uid, uid))
			_exit(1);
		fd = open(P(dir, "fill"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(2);
		memset(buf, 'x', sizeof(buf));
		while ((n = write(fd, buf, sizeof(buf))) > 0)
			total += n;
		fsync(fd);
		close(fd);
		if (write(pfd[1], &total, sizeof(total)) != sizeof(total))
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &total, sizeof(total)) != sizeof(total))
		total = -1;
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return total;
}

TEST_F(world, no_reserved_blocks_for_container_users)
{
	struct world *w = &self->w;
	struct statfs sf;
	long long avail, got;
	char home[128];

	/* Half of the filesystem is reserved for root. */
	EXT4_LOWER(w, "-m 50 -O ^has_journal", NULL, NULL);
	ASSERT_EQ(make_dir(P(w->lower, "home"), 0755, 1000, 1000), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(statfs(w->lower, &sf), 0);
	avail = (long long)sf.f_bavail * sf.f_bsize;
	/* Host uid 101000 is image uid 1000, an ordinary user. */
	snprintf(home, sizeof(home), "%s/home", w->mnt);
	got = fill_as(home, ID_SHIFT + 1000);
	printf("# available to users %lld, written through the mount %lld\n",
	       avail, got);
	EXPECT_GT(got, 0);
	/* Not into the reserved half (metadata blocks give some slack). */
	EXPECT_LE(got, avail + (1 << 20));
	ext4_lower_done(w);
}

TEST_F(world, no_quota_bypass_for_container_users)
{
	struct dqblk dq = {
		.dqb_bhardlimit = 4096,		/* 1 KiB blocks: 4 MiB */
		.dqb_bsoftlimit = 4096,
		.dqb_valid = QIF_BLIMITS,
	};
	char dev[32], home[128];
	struct world *w = &self->w;
	long long got;

	EXT4_LOWER(w, "-O quota,^has_journal", NULL, "usrquota");
	snprintf(dev, sizeof(dev), "/proc/self/fd/%d", loop_fd);
	ASSERT_EQ(make_dir(P(w->lower, "home"), 0755, 1000, 1000), 0);
	if (quotactl(QCMD(Q_SETQUOTA, USRQUOTA), dev, 1000, (void *)&dq))
		SKIP("no quota limits here: %s", strerror(errno));
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	snprintf(home, sizeof(home), "%s/home", w->mnt);
	got = fill_as(home, ID_SHIFT + 1000);
	printf("# image uid 1000 has a 4 MiB quota; wrote %lld\n", got);
	EXPECT_GT(got, 0);
	EXPECT_LE(got, 4ll << 20);
	ext4_lower_done(w);
}

/* ---- 5/6. setuid and devices through host-root mounts --------------- */

static int mount_maps(const struct world *w, const char *umap,
		      const char *gmap)
{
	char u[64], g[64];
	const char *opts[] = { u, g, NULL };

	snprintf(u, sizeof(u), "uidmap=%s", umap);
	snprintf(g, sizeof(g), "gidmap=%s", gmap);
	return shiftfs_fsmount(w->lower, w->mnt, opts, NULL, 0);
}

TEST_F(world, reverse_map_setuid_gives_host_user_nothing)
{
	struct world *w = &self->w;
	struct probe p;

	/* A container's chowned tree: its root is host uid 100000. */
	ASSERT_EQ(copy_self(P(w->lower, "probe")), 0);
	ASSERT_EQ(chown(P(w->lower, "probe"), ID_SHIFT, ID_SHIFT), 0);
	ASSERT_EQ(chmod(P(w->lower, "probe"), 06755), 0);
	/* An admin's view of it as root-owned. */
	ASSERT_EQ(mount_maps(w, "100000:0:65536", "100000:0:65536"), 0);
	ASSERT_EQ(owner_is(P(w->mnt, "probe"), 0, 0), 0);
	ASSERT_EQ(run_probe(P(w->mnt, "probe"), 1000, 1000, &p), 0);
	EXPECT_EQ(p.err, 0);
	EXPECT_EQ(p.euid, 1000u);
	EXPECT_EQ(p.egid, 1000u);
}

TEST_F(world, forward_map_setuid_gives_host_user_nothing)
{
	struct world *w = &self->w;
	struct probe p;

	ASSERT_EQ(copy_self(P(w->lower, "probe")), 0);
	ASSERT_EQ(chmod(P(w->lower, "probe"), 06755), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(run_probe(P(w->mnt, "probe"), 1000, 1000, &p), 0);
	EXPECT_EQ(p.err, 0);
	EXPECT_EQ(p.euid, 1000u);
	EXPECT_EQ(p.egid, 1000u);
	/* Host root gains nothing it lacks: the bits still work for it. */
	ASSERT_EQ(chown(P(w->lower, "probe"), 5, 5), 0);
	ASSERT_EQ(chmod(P(w->lower, "probe"), 06755), 0);
	ASSERT_EQ(run_probe(P(w->mnt, "probe"), 0, 0, &p), 0);
	EXPECT_EQ(p.euid, ID_SHIFT + 5);
}

/* A container user's su-like binary still works for the container. */
static int container_user_probe(void *arg)
{
	const struct world *w = arg;
	struct probe p;

	CHILD_CHECK(run_probe(P(w->mnt, "probe"), 1000, 1000, &p) == 0, 1,
		    "probe");
	CHILD_CHECK(p.err == 0 && p.euid == 0 && p.egid == 0, 2,
		    "euid %u egid %u err %d", p.euid, p.egid, p.err);
	return 0;
}

TEST_F(world, forward_map_setuid_works_in_the_container)
{
	struct world *w = &self->w;

	ASSERT_EQ(chmod(w->base, 0755), 0);
	ASSERT_EQ(copy_self(P(w->lower, "probe")), 0);
	ASSERT_EQ(chmod(P(w->lower, "probe"), 06755), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	EXPECT_EQ(in_container(container_user_probe, w), 0);
}

TEST_F(world, lower_nosuid_is_inherited)
{
	struct world *w = &self->w;
	struct probe p;

	ASSERT_EQ(chmod(w->base, 0755), 0);
	ASSERT_EQ(copy_self(P(w->lower, "probe")), 0);
	ASSERT_EQ(chmod(P(w->lower, "probe"), 06755), 0);
	ASSERT_EQ(mount(w->lower, w->lower, NULL, MS_BIND, NULL), 0);
	ASSERT_EQ(mount(NULL, w->lower, NULL,
			MS_BIND | MS_REMOUNT | MS_NOSUID, NULL), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	/* Host root: no setuid to 100000 from a nosuid tree. */
	ASSERT_EQ(run_probe(P(w->mnt, "probe"), 0, 0, &p), 0);
	EXPECT_EQ(p.err, 0);
	EXPECT_EQ(p.euid, 0u);
	/* Nor for the container. */
	EXPECT_EQ(in_container(container_user_probe, w), 2);
}

TEST_F(world, lower_noexec_is_inherited)
{
	struct world *w = &self->w;
	struct probe p;

	ASSERT_EQ(copy_self(P(w->lower, "probe")), 0);
	ASSERT_EQ(mount(w->lower, w->lower, NULL, MS_BIND, NULL), 0);
	ASSERT_EQ(mount(NULL, w->lower, NULL,
			MS_BIND | MS_REMOUNT | MS_NOEXEC, NULL), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(run_probe(P(w->mnt, "probe"), 0, 0, &p), 0);
	EXPECT_EQ(p.err, EACCES);
}

static int container_open_dev(void *arg)
{
	const struct world *w = arg;

	CHILD_CHECK(open(P(w->mnt, "mem"), O_RDONLY) == -1, 1,
		    "opened a device node through a host-root mount");
	return 0;
}

TEST_F(world, no_devices_through_explicit_maps)
{
	struct world *w = &self->w;

	ASSERT_EQ(mknod(P(w->lower, "mem"), S_IFCHR | 0600, makedev(1, 1)), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	/* Container root owns it through the mount (100000 = image 0). */
	EXPECT_EQ(in_container(container_open_dev, w), 0);
	EXPECT_ERRNO(open(P(w->mnt, "mem"), O_RDONLY), EACCES);
}

/*
 * File capabilities through a reverse map: the container's v3 capability
 * (root id 100000 on disk) shows as v2, root id 0, relative to the
 * initial namespace: capabilities over the host for whoever runs it.
 */
TEST_F(world, reverse_map_fcaps_give_host_user_nothing)
{
	struct vfs_ns_cap_data c = {
		.magic_etc = VFS_CAP_REVISION_3 | VFS_CAP_FLAGS_EFFECTIVE,
		.data = { { .permitted = 1u << CAP_NET_RAW } },
		.rootid = ID_SHIFT,
	};
	struct world *w = &self->w;
	struct probe p;

	ASSERT_EQ(copy_self(P(w->lower, "probe")), 0);
	ASSERT_EQ(chown(P(w->lower, "probe"), ID_SHIFT, ID_SHIFT), 0);
	ASSERT_EQ(setxattr(P(w->lower, "probe"), "security.capability", &c,
			   sizeof(c), 0), 0);
	ASSERT_EQ(mount_maps(w, "100000:0:65536", "100000:0:65536"), 0);
	ASSERT_EQ(run_probe(P(w->mnt, "probe"), 1000, 1000, &p), 0);
	EXPECT_EQ(p.err, 0);
	EXPECT_EQ(p.permitted, 0u);
	/* What an admin sees there is still the capability. */
	EXPECT_EQ(getxattr(P(w->mnt, "probe"), "security.capability", NULL, 0),
		  (ssize_t)XATTR_CAPS_SZ_2);
}

/* ---- 7. a failing chown changes nothing -------------------------------- */

static const unsigned char caps_v2[XATTR_CAPS_SZ_2] = {
	0x01, 0x00, 0x00, 0x02,	/* VFS_CAP_REVISION_2 | EFFECTIVE */
	0x00, 0x20, 0x00, 0x00,	/* permitted: CAP_NET_RAW (13) */
};

TEST_F(world, failed_chown_keeps_capabilities)
{
	struct world *w = &self->w;
	char v[64];

	ASSERT_EQ(make_file(P(w->lower, "f"), 0755, 0, 0), 0);
	ASSERT_EQ(setxattr(P(w->lower, "f"), "security.capability", caps_v2,
			   sizeof(caps_v2), 0), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	/* Host uid 500 has no image id. */
	EXPECT_ERRNO(chown(P(w->mnt, "f"), 500, -1), EOVERFLOW);
	EXPECT_EQ(getxattr(P(w->lower, "f"), "security.capability", v,
			   sizeof(v)), (ssize_t)sizeof(caps_v2));
	EXPECT_EQ(owner_is(P(w->lower, "f"), 0, 0), 0);
}

/* ---- file capabilities the mount cannot translate ---------------------- */

/*
 * v1 capabilities (written by old tools; the VFS no longer writes them)
 * and an oversized value, put on an ext4 image with debugfs.
 */
TEST_F(world, odd_capability_xattrs)
{
	static const unsigned char v1[XATTR_CAPS_SZ_1] = {
		0x00, 0x00, 0x00, 0x01,	/* VFS_CAP_REVISION_1 */
		0x00, 0x20, 0x00, 0x00,	/* permitted: CAP_NET_RAW */
	};
	unsigned char big[40] = { 0x00, 0x00, 0x00, 0x02 };
	char dbg[160], v[64], lv[64];
	struct world *w = &self->w;
	struct probe p;
	ssize_t n, ln;
	FILE *f;

	ASSERT_EQ(put_file(P(w->base, "v1"), v1, sizeof(v1)), 0);
	ASSERT_EQ(put_file(P(w->base, "big"), big, sizeof(big)), 0);
	ASSERT_EQ(copy_self(P(w->base, "probe")), 0);
	snprintf(dbg, sizeof(dbg), "%s/dbg", w->base);
	f = fopen(dbg, "w");
	ASSERT_NE(f, NULL);
	fprintf(f, "write %s/probe probe\nset_inode_field probe mode 0100755\n"
		"ea_set -f %s/v1 probe security.capability\n"
		"write /dev/null big\n"
		"ea_set -f %s/big big security.capability\n",
		w->base, w->base, w->base);
	fclose(f);
	EXT4_LOWER(w, "-O ^has_journal", dbg, NULL);
	ln = getxattr(P(w->lower, "probe"), "security.capability", lv,
		      sizeof(lv));
	printf("# v1 directly: %zd\n", ln);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	/* v1 means root id 0: shown as the v3 of root id 100000. */
	n = getxattr(P(w->mnt, "probe"), "security.capability", v, sizeof(v));
	EXPECT_EQ(n, (ssize_t)XATTR_CAPS_SZ_3);
	/* And it still runs, with its capability. */
	ASSERT_EQ(run_probe(P(w->mnt, "probe"), 0, 0, &p), 0);
	EXPECT_EQ(p.err, 0);
	/* An oversized value: its size, as underneath, not ERANGE. */
	EXPECT_EQ(getxattr(P(w->mnt, "big"), "security.capability", NULL, 0),
		  getxattr(P(w->lower, "big"), "security.capability", NULL, 0));
	ext4_lower_done(w);
}

TEST_F(world, unmappable_v3_rootid_runs_without_caps)
{
	struct vfs_ns_cap_data c = {
		.magic_etc = VFS_CAP_REVISION_3 | VFS_CAP_FLAGS_EFFECTIVE,
		.data = { { .permitted = 1u << CAP_NET_RAW } },
		.rootid = 70000,
	};
	struct world *w = &self->w;
	struct probe p;
	char v[64];

	ASSERT_EQ(copy_self(P(w->lower, "probe")), 0);
	ASSERT_EQ(setxattr(P(w->lower, "probe"), "security.capability", &c,
			   sizeof(c), 0), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	/* As if there were none: no capability for this mount's users. */
	EXPECT_ERRNO(getxattr(P(w->mnt, "probe"), "security.capability", v,
			      sizeof(v)), ENODATA);
	ASSERT_EQ(run_probe(P(w->mnt, "probe"), 0, 0, &p), 0);
	EXPECT_EQ(p.err, 0);
}

/* ---- ACLs: setgid survives a set that fails ---------------------------- */

TEST_F(world, failed_acl_set_keeps_setgid)
{
	struct world *w = &self->w;
	struct stat st;
	size_t n = 400, size = sizeof(uint32_t) + (n + 4) * 8;
	unsigned char *x = calloc(1, size), *e;
	size_t i;
	ssize_t r;

	/* 1 KiB blocks: a 400-entry ACL does not fit in ext4's xattrs. */
	EXT4_LOWER(w, "-b 1024 -O ^has_journal", NULL, "acl");
	ASSERT_EQ(make_file(P(w->lower, "f"), 02775, 0, 5), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_NE(x, NULL);
	/* posix_acl_xattr_header + entries {tag, perm, id}, sorted. */
	x[0] = 2;
	e = x + 4;
#define ACL_ENT(tag, perm, id)						\
	do {								\
		uint16_t t = (tag), pm = (perm);			\
		uint32_t d = (id);					\
		memcpy(e, &t, 2);					\
		memcpy(e + 2, &pm, 2);					\
		memcpy(e + 4, &d, 4);					\
		e += 8;							\
	} while (0)
	ACL_ENT(0x01, 7, (uint32_t)-1);			/* USER_OBJ */
	for (i = 0; i < n; i++)
		ACL_ENT(0x02, 5, ID_SHIFT + 1 + i);	/* USER */
	ACL_ENT(0x04, 5, (uint32_t)-1);			/* GROUP_OBJ */
	ACL_ENT(0x10, 7, (uint32_t)-1);			/* MASK */
	ACL_ENT(0x20, 5, (uint32_t)-1);			/* OTHER */
#undef ACL_ENT
	ASSERT_EQ(setgroups(0, NULL), 0);
	/* The owner (100000), not in the group (100005), no CAP_FSETID. */
	become_fsids(ID_SHIFT, ID_SHIFT);
	r = setxattr(P(w->mnt, "f"), "system.posix_acl_access", x,
		     e - x, 0);
	printf("# setxattr of a %zu-entry ACL: %zd %s\n", n, r,
	       r ? strerror(errno) : "");
	become_fsids(0, 0);
	ASSERT_EQ(stat(P(w->lower, "f"), &st), 0);
	if (r == 0)
		SKIP("the lower filesystem took the ACL");
	EXPECT_EQ(st.st_mode & 07777, 02775u);
	free(x);
	ext4_lower_done(w);
}

/* ---- O_TMPFILE | O_DIRECT ---------------------------------------------- */

TEST_F(world, tmpfile_o_direct)
{
	struct world *w = &self->w;
	int fd, lfd;

	EXT4_LOWER(w, "-O ^has_journal", NULL, NULL);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	lfd = open(w->lower, O_TMPFILE | O_RDWR | O_DIRECT, 0600);
	if (lfd < 0)
		SKIP("lower fs: O_TMPFILE|O_DIRECT: %s", strerror(errno));
	close(lfd);
	/* Created by shifted root, image root underneath. */
	become_fsids(ID_SHIFT, ID_SHIFT);
	fd = open(w->mnt, O_TMPFILE | O_RDWR | O_DIRECT, 0600);
	become_fsids(0, 0);
	EXPECT_GE(fd, 0);
	if (fd < 0)
		printf("# O_TMPFILE|O_DIRECT through the mount: %s\n",
		       strerror(errno));
	close(fd);
	ext4_lower_done(w);
}

/* ---- a casefolded lower ------------------------------------------------- */

TEST_F(world, casefolded_lower_revalidates)
{
	struct world *w = &self->w;
	struct stat st;
	char dir[128];
	int fd, flags = FS_CASEFOLD_FL;

	EXT4_LOWER(w, "-O casefold,^has_journal", NULL, NULL);
	ASSERT_EQ(mkdir(P(w->lower, "cf"), 0755), 0);
	fd = open(P(w->lower, "cf"), O_RDONLY | O_DIRECTORY);
	ASSERT_GE(fd, 0);
	if (ioctl(fd, FS_IOC_SETFLAGS, &flags))
		SKIP("no casefolding in this kernel: %s", strerror(errno));
	close(fd);
	ASSERT_EQ(mkdir(P(w->lower, "cf/Dir"), 0755), 0);
	/*
	 * Looked up underneath as "dIR": that is the name the lower dentry
	 * keeps, whatever spelling finds it next.
	 */
	if (stat(P(w->lower, "cf/dIR"), &st))
		SKIP("the lower does not fold case: %s", strerror(errno));
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	/* Reached by another spelling, a mount point on it must stay. */
	snprintf(dir, sizeof(dir), "%s/cf/dir", w->mnt);
	ASSERT_EQ(mount("tmpfs", dir, "tmpfs", 0, NULL), 0);
	ASSERT_EQ(make_file(P(dir, "on-tmpfs"), 0644, 0, 0), 0);
	snprintf(dir, sizeof(dir), "%s/cf/dir/on-tmpfs", w->mnt);
	EXPECT_EQ(stat(dir, &st), 0);
	EXPECT_EQ(stat(dir, &st), 0);
	snprintf(dir, sizeof(dir), "%s/cf/dir", w->mnt);
	umount2(dir, MNT_DETACH);
	ext4_lower_done(w);
}

/* ---- marks: adjacent extents with the same offset ------------------------ */

static int mount_over_two_extents(void *arg)
{
	const struct world *w = arg;
	char log[1024];
	int err = userns_mount(w->lower, w->mnt, log, sizeof(log));

	CHILD_CHECK(err == 0, 1, "mount from mark: %s", log);
	CHILD_CHECK(owner_is(P(w->mnt, "f"), 2000, 2000) == 0, 2, "owner");
	return 0;
}

TEST_F(world, mark_adjacent_extents_allow_a_spanning_map)
{
	struct world *w = &self->w;
	char log[1024];
	const char *opts[] = { "mark", "uidmap=0:100000:1000",
			       "uidmap=1000:101000:64536",
			       "gidmap=0:100000:1000",
			       "gidmap=1000:101000:64536", NULL };

	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 2000, 2000), 0);
	ASSERT_EQ(shiftfs_fsmount(w->lower, w->lower, opts, log, sizeof(log)),
		  0);
	EXPECT_EQ(in_userns_default(mount_over_two_extents, w), 0);
}

TEST_HARNESS_MAIN
