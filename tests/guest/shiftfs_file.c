// SPDX-License-Identifier: GPL-2.0
/*
 * File operations through the backing file: mmap (shared writable too),
 * fsync/syncfs, fallocate, SEEK_DATA/SEEK_HOLE, splice, sendfile,
 * copy_file_range, the ioctl allow-list, O_TMPFILE, O_DIRECT and
 * fcntl(F_SETFL).
 */
#include "harness.h"
#include "shiftfs_util.h"

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>

TEST_F(world, mmap_shared_write)
{
	struct world *w = &self->w;
	char buf[64];
	char *p;
	int fd;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(truncate(P(w->lower, "f"), 4096), 0);
	fd = open(P(w->mnt, "f"), O_RDWR);
	ASSERT_GE(fd, 0);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(p, MAP_FAILED);
	memcpy(p, "mapped", 6);
	ASSERT_EQ(msync(p, 4096, MS_SYNC), 0);
	/* Same page cache as the lower file: visible underneath at once. */
	ASSERT_EQ(read_file(P(w->lower, "f"), buf, 7), 6);
	EXPECT_STREQ(buf, "mapped");
	/* And a write underneath shows in the mapping. */
	ASSERT_EQ(write_file(P(w->lower, "f"), "MAPPED"), 0);
	EXPECT_EQ(memcmp(p, "MAPPED", 6), 0);
	munmap(p, 4096);
	/* Private mappings don't write back. */
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_NE(p, MAP_FAILED);
	memcpy(p, "private", 7);
	munmap(p, 4096);
	ASSERT_EQ(read_file(P(w->lower, "f"), buf, 7), 6);
	EXPECT_STREQ(buf, "MAPPED");
	close(fd);
	/* A read-only open can't map shared writable. */
	fd = open(P(w->mnt, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
		  MAP_FAILED);
	close(fd);
}

TEST_F(world, fsync_and_syncfs)
{
	struct world *w = &self->w;
	int fd;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	fd = open(P(w->mnt, "f"), O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "data", 4), 4);
	EXPECT_EQ(fsync(fd), 0);
	EXPECT_EQ(fdatasync(fd), 0);
	EXPECT_EQ(syncfs(fd), 0);
	close(fd);
	fd = open(w->mnt, O_RDONLY | O_DIRECTORY);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(fsync(fd), 0);
	close(fd);
}

TEST_F(world, fallocate_and_seek_data_hole)
{
	static const struct {
		off_t off;
		int whence;
	} seeks[] = {
		{ 0, SEEK_DATA }, { 0, SEEK_HOLE }, { 1 << 19, SEEK_DATA },
		{ 1 << 19, SEEK_HOLE }, { 1 << 20, SEEK_DATA },
		{ 2 << 20, SEEK_HOLE }, { (3 << 20) + 1, SEEK_DATA },
		{ 0, SEEK_END }, { 5 << 20, SEEK_DATA },
	};
	struct world *w = &self->w;
	struct stat st;
	unsigned int i;
	int fd, lfd;

	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);
	fd = open(P(w->mnt, "f"), O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(fallocate(fd, 0, 0, 1 << 20), 0);
	ASSERT_EQ(stat(P(w->lower, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 1 << 20);
	ASSERT_EQ(fstat(fd, &st), 0);
	EXPECT_EQ(st.st_size, 1 << 20);
	ASSERT_EQ(pwrite(fd, "y", 1, 1 << 19), 1);
	EXPECT_EQ(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
			    1 << 18), 0);
	ASSERT_EQ(ftruncate(fd, 4 << 20), 0);
	ASSERT_EQ(pwrite(fd, "x", 1, 3 << 20), 1);
	/* What counts as data is the lower fs' call: answer as it does. */
	lfd = open(P(w->lower, "f"), O_RDONLY);
	ASSERT_GE(lfd, 0);
	for (i = 0; i < sizeof(seeks) / sizeof(seeks[0]); i++) {
		off_t want, got;
		int lerr, err;

		errno = 0;
		want = lseek(lfd, seeks[i].off, seeks[i].whence);
		lerr = errno;
		errno = 0;
		got = lseek(fd, seeks[i].off, seeks[i].whence);
		err = errno;
		TH_LOG("lseek(%lld, %d): lower %lld/%d shiftfs %lld/%d",
		       (long long)seeks[i].off, seeks[i].whence,
		       (long long)want, lerr, (long long)got, err);
		EXPECT_EQ(got, want);
		EXPECT_EQ(err, lerr);
	}
	/* The written byte at 3M is data on any filesystem. */
	EXPECT_LE(lseek(fd, 1 << 20, SEEK_DATA), 3 << 20);
	EXPECT_EQ(lseek(fd, -10, SEEK_END), (4 << 20) - 10);
	EXPECT_EQ(lseek(fd, 5, SEEK_CUR), (4 << 20) - 5);
	close(lfd);
	close(fd);
}

TEST_F(world, splice_sendfile_copy_file_range)
{
	struct world *w = &self->w;
	char buf[64];
	int in, out, pfd[2];
	loff_t off_in = 0, off_out = 0;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(make_file(P(w->lower, "src"), 0644, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "dst"), 0644, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "dst2"), 0644, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "dst3"), 0644, 0, 0), 0);
	ASSERT_EQ(write_file(P(w->lower, "src"), "spliced data"), 0);

	in = open(P(w->mnt, "src"), O_RDONLY);
	out = open(P(w->mnt, "dst"), O_WRONLY);
	ASSERT_GE(in, 0);
	ASSERT_GE(out, 0);
	ASSERT_EQ(pipe(pfd), 0);
	ASSERT_EQ(splice(in, &off_in, pfd[1], NULL, 64, 0), 12);
	ASSERT_EQ(splice(pfd[0], NULL, out, &off_out, 64, 0), 12);
	close(out);
	ASSERT_EQ(read_file(P(w->lower, "dst"), buf, sizeof(buf)), 12);
	EXPECT_STREQ(buf, "spliced data");

	out = open(P(w->mnt, "dst2"), O_WRONLY);
	ASSERT_GE(out, 0);
	off_in = 0;
	ASSERT_EQ(sendfile(out, in, &off_in, 64), 12);
	close(out);
	ASSERT_EQ(read_file(P(w->lower, "dst2"), buf, sizeof(buf)), 12);
	EXPECT_STREQ(buf, "spliced data");

	out = open(P(w->mnt, "dst3"), O_WRONLY);
	ASSERT_GE(out, 0);
	off_in = 8;
	off_out = 0;
	ASSERT_EQ(copy_file_range(in, &off_in, out, &off_out, 4, 0), 4);
	close(out);
	close(in);
	ASSERT_EQ(read_file(P(w->lower, "dst3"), buf, sizeof(buf)), 4);
	EXPECT_STREQ(buf, "data");
}

/*
 * Many pages through splice, from an odd offset: the lower file's pages
 * go into the pipe (6.5+: the lower splice_read), and sendfile to a file
 * outside the mount and reads of the result agree byte for byte.
 */
TEST_F(world, sendfile_many_pages)
{
	enum { SIZE = 300 * 1024 + 77, OFF = 1234 };
	static char data[SIZE], back[SIZE];
	struct world *w = &self->w;
	loff_t off = OFF;
	ssize_t n, total = 0;
	int fd, in, out;
	size_t i;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	for (i = 0; i < SIZE; i++)
		data[i] = (char)(i * 7 + i / 4096);
	fd = open(P(w->lower, "big"), O_CREAT | O_WRONLY, 0644);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, data, SIZE), SIZE);
	close(fd);

	in = open(P(w->mnt, "big"), O_RDONLY);
	out = open(P(w->lower, "copy"), O_CREAT | O_WRONLY, 0644);
	ASSERT_GE(in, 0);
	ASSERT_GE(out, 0);
	while ((n = sendfile(out, in, &off, SIZE)) > 0)
		total += n;
	ASSERT_EQ(n, 0);
	EXPECT_EQ(total, SIZE - OFF);
	EXPECT_EQ(off, SIZE);
	close(out);
	close(in);
	fd = open(P(w->lower, "copy"), O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(read(fd, back, SIZE), SIZE - OFF);
	close(fd);
	EXPECT_EQ(memcmp(back, data + OFF, SIZE - OFF), 0);
}

TEST_F(world, ioctl_allow_list)
{
	struct world *w = &self->w;
	int fd, lfd, flags = 0, lflags = 0;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	lfd = open(P(w->lower, "f"), O_RDONLY);
	ASSERT_GE(lfd, 0);
	fd = open(P(w->mnt, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	if (ioctl(lfd, FS_IOC_GETFLAGS, &lflags)) {
		/* Then shiftfs can't either, and must say the same. */
		EXPECT_ERRNO(ioctl(fd, FS_IOC_GETFLAGS, &flags), errno);
	} else {
		ASSERT_EQ(ioctl(fd, FS_IOC_GETFLAGS, &flags), 0);
		EXPECT_EQ(flags, lflags);
		flags |= FS_NOATIME_FL;
		if (!ioctl(fd, FS_IOC_SETFLAGS, &flags)) {
			ASSERT_EQ(ioctl(lfd, FS_IOC_GETFLAGS, &lflags), 0);
			EXPECT_TRUE(lflags & FS_NOATIME_FL);
		}
	}
	/* Anything not on the list. */
	EXPECT_ERRNO(ioctl(fd, FS_IOC_GETVERSION, &flags), ENOTTY);
	EXPECT_ERRNO(ioctl(fd, _IO('X', 99), 0), ENOTTY);
	close(fd);
	close(lfd);
}

TEST_F(world, o_tmpfile_and_linkat)
{
	struct world *w = &self->w;
	char path[64];
	struct stat st;
	int fd;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	become_fsids(ID_SHIFT, ID_SHIFT + 3);
	fd = open(w->mnt, O_TMPFILE | O_RDWR, 0640);
	if (fd < 0 && errno == EOPNOTSUPP)
		SKIP("lower fs has no O_TMPFILE");
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "tmp", 3), 3);
	ASSERT_EQ(fstat(fd, &st), 0);
	EXPECT_EQ(st.st_nlink, 0u);
	EXPECT_EQ(st.st_uid, ID_SHIFT);
	EXPECT_EQ(st.st_gid, ID_SHIFT + 3);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ASSERT_EQ(linkat(AT_FDCWD, path, AT_FDCWD, P(w->mnt, "linked"),
			 AT_SYMLINK_FOLLOW), 0);
	ASSERT_EQ(fstat(fd, &st), 0);
	EXPECT_EQ(st.st_nlink, 1u);
	close(fd);
	become_fsids(0, 0);
	EXPECT_EQ(owner_is(P(w->lower, "linked"), 0, 3), 0);
	ASSERT_EQ(stat(P(w->lower, "linked"), &st), 0);
	EXPECT_EQ(st.st_size, 3);
	/* O_EXCL: never linkable. */
	become_fsids(ID_SHIFT, ID_SHIFT);
	fd = open(w->mnt, O_TMPFILE | O_EXCL | O_RDWR, 0600);
	ASSERT_GE(fd, 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	EXPECT_ERRNO(linkat(AT_FDCWD, path, AT_FDCWD, P(w->mnt, "l2"),
			    AT_SYMLINK_FOLLOW), ENOENT);
	close(fd);
	/* Unmapped caller in a world-writable dir: nothing it could own. */
	become_fsids(0, 0);
	ASSERT_EQ(chmod(w->lower, 0777), 0);
	become_fsids(1000, 1000);
	EXPECT_ERRNO(open(w->mnt, O_TMPFILE | O_RDWR, 0600), EOVERFLOW);
}

TEST_F(world, o_direct_as_lower)
{
	struct world *w = &self->w;
	int lfd, fd, lerr, err;
	void *buf;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(truncate(P(w->lower, "f"), 8192), 0);
	lfd = open(P(w->lower, "f"), O_RDWR | O_DIRECT);
	lerr = lfd < 0 ? errno : 0;
	fd = open(P(w->mnt, "f"), O_RDWR | O_DIRECT);
	err = fd < 0 ? errno : 0;
	EXPECT_EQ(err, lerr);
	if (fd < 0)
		SKIP("lower fs has no O_DIRECT (%s)", strerror(lerr));
	ASSERT_EQ(posix_memalign(&buf, 4096, 4096), 0);
	memset(buf, 'd', 4096);
	EXPECT_EQ(pwrite(fd, buf, 4096, 4096), 4096);
	EXPECT_EQ(pread(fd, buf, 4096, 0), 4096);
	close(fd);
	close(lfd);
}

TEST_F(world, fcntl_setfl_append)
{
	struct world *w = &self->w;
	struct stat st;
	int fd;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(write_file(P(w->lower, "f"), "12345"), 0);
	fd = open(P(w->mnt, "f"), O_WRONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(fcntl(fd, F_SETFL, O_APPEND), 0);
	ASSERT_EQ(write(fd, "67", 2), 2);
	ASSERT_EQ(fcntl(fd, F_SETFL, 0), 0);
	ASSERT_EQ(pwrite(fd, "A", 1, 0), 1);
	close(fd);
	ASSERT_EQ(stat(P(w->lower, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 7);
}

TEST_F(world, exec_through_mount)
{
	struct world *w = &self->w;
	char buf[4096];
	int in, out, status;
	ssize_t n;
	pid_t pid;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	/* Copy a static-enough binary: busybox's "true" applet or /bin/true. */
	in = open("/bin/true", O_RDONLY);
	if (in < 0)
		SKIP("no /bin/true");
	out = open(P(w->lower, "true"), O_CREAT | O_WRONLY, 0755);
	ASSERT_GE(out, 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ASSERT_EQ(write(out, buf, n), n);
	close(in);
	close(out);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		execl(P(w->mnt, "true"), "true", NULL);
		_exit(127);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Running text can't be truncated through the mount either. */
}

TEST_F(world, read_write_both_ways)
{
	struct world *w = &self->w;
	char buf[64] = "";
	struct stat st;
	int fd;

	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(write_file(P(w->lower, "f"), "from below"), 0);
	ASSERT_EQ(shiftfs_mount_default(w), 0);

	fd = open(P(w->mnt, "f"), O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(read(fd, buf, sizeof(buf) - 1), 10);
	EXPECT_STREQ(buf, "from below");
	ASSERT_EQ(pwrite(fd, "ABOVE", 5, 5), 5);
	close(fd);

	memset(buf, 0, sizeof(buf));
	fd = open(P(w->lower, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(read(fd, buf, sizeof(buf) - 1), 10);
	EXPECT_STREQ(buf, "from ABOVE");
	close(fd);

	/* O_APPEND and O_TRUNC. */
	fd = open(P(w->mnt, "f"), O_WRONLY | O_APPEND);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "++", 2), 2);
	close(fd);
	ASSERT_EQ(stat(P(w->lower, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 12);
	ASSERT_EQ(stat(P(w->mnt, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 12);
	fd = open(P(w->mnt, "f"), O_WRONLY | O_TRUNC);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(stat(P(w->lower, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 0);
	ASSERT_EQ(stat(P(w->mnt, "f"), &st), 0);
	EXPECT_EQ(st.st_size, 0);
}

TEST_HARNESS_MAIN
