// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring reads and writes through a shiftfs file land in the lower
 * file, and what the lower file holds comes back, in the submission's
 * order and at its offsets: buffered, forced to io_uring's async workers
 * (IOSQE_ASYNC), vectored, and O_DIRECT where the lower filesystem takes
 * it.  Raw system calls: the initramfs carries no liburing.  Skipped where
 * the kernel has no io_uring or it is switched off (kernel.io_uring_disabled).
 * And RWF_NOWAIT, which io_uring's first, inline try of every request is.
 */
#include "harness.h"
#include "shiftfs_util.h"
#include "loop_util.h"

#include <limits.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#define RING_ENTRIES	8
#define BUF_LEN		(64 * 1024)

struct ring {
	int fd;
	void *sq_ptr, *cq_ptr;
	size_t sq_len, cq_len;
	struct io_uring_sqe *sqes;
	size_t sqes_len;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
};

/* 0, or the errno io_uring_setup() failed with. */
static int ring_init(struct ring *r)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	memset(r, 0, sizeof(*r));
	r->fd = syscall(__NR_io_uring_setup, RING_ENTRIES, &p);
	if (r->fd < 0)
		return errno;
	r->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->sq_ptr = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->cq_ptr = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->sq_ptr == MAP_FAILED || r->cq_ptr == MAP_FAILED ||
	    r->sqes == MAP_FAILED)
		return errno;
	r->sq_tail = (unsigned int *)((char *)r->sq_ptr + p.sq_off.tail);
	r->sq_mask = (unsigned int *)((char *)r->sq_ptr + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)((char *)r->sq_ptr + p.sq_off.array);
	r->cq_head = (unsigned int *)((char *)r->cq_ptr + p.cq_off.head);
	r->cq_tail = (unsigned int *)((char *)r->cq_ptr + p.cq_off.tail);
	r->cq_mask = (unsigned int *)((char *)r->cq_ptr + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)((char *)r->cq_ptr + p.cq_off.cqes);
	return 0;
}

static void ring_exit(struct ring *r)
{
	munmap(r->sqes, r->sqes_len);
	munmap(r->cq_ptr, r->cq_len);
	munmap(r->sq_ptr, r->sq_len);
	close(r->fd);
}

/*
 * One request, submitted and waited for: the completion's result (bytes,
 * or -errno), or INT_MIN if the ring itself failed.
 */
static int ring_rw(struct ring *r, int op, int fd, void *addr,
		   unsigned int len, off_t off, unsigned char sqe_flags)
{
	unsigned int tail = *r->sq_tail, head, idx = tail & *r->sq_mask;
	struct io_uring_sqe *sqe = &r->sqes[idx];
	int res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = op;
	sqe->flags = sqe_flags;
	sqe->fd = fd;
	sqe->addr = (unsigned long)addr;
	sqe->len = len;
	sqe->off = off;
	sqe->user_data = 0x5157;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) != 1)
		return INT_MIN;
	head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return INT_MIN;
	if (r->cqes[head & *r->cq_mask].user_data != 0x5157)
		return INT_MIN;
	res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

static void fill(char *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (char)(seed + i * 7 + i / 251);
}

struct uworld {
	struct world w;
	struct ring r;
	char *buf, *chk;
};

FIXTURE(uring) {
	struct uworld u;
};

FIXTURE_SETUP(uring)
{
	struct uworld *u = &self->u;
	int err;

	ASSERT_EQ(world_setup(&u->w), 0);
	err = ring_init(&u->r);
	if (err == ENOSYS)
		SKIP("this kernel has no io_uring (ENOSYS)");
	if (err == EPERM)
		SKIP("io_uring is switched off (kernel.io_uring_disabled)");
	ASSERT_EQ(err, 0);
	/* Aligned for O_DIRECT. */
	ASSERT_EQ(posix_memalign((void **)&u->buf, 4096, BUF_LEN), 0);
	ASSERT_EQ(posix_memalign((void **)&u->chk, 4096, BUF_LEN), 0);
	ASSERT_EQ(shiftfs_mount_default(&u->w), 0);
	ASSERT_EQ(make_file(P(u->w.lower, "f"), 0644, 0, 0), 0);
}

FIXTURE_TEARDOWN(uring)
{
	if (self->u.r.sqes)
		ring_exit(&self->u.r);
}

/* Write through the mount with io_uring, check underneath; and back. */
static void uring_roundtrip(struct uworld *u, int oflags,
			    unsigned char sqe_flags)
{
	struct world *w = &u->w;
	int fd, lfd;

	fd = open(P(w->mnt, "f"), O_RDWR | oflags);
	if (fd < 0 && errno == EINVAL && (oflags & O_DIRECT))
		SKIP("the lower filesystem takes no O_DIRECT");
	ASSERT_GE(fd, 0);
	lfd = open(P(w->lower, "f"), O_RDWR);
	ASSERT_GE(lfd, 0);

	/* Two writes, the second at an offset: both land where asked. */
	fill(u->buf, BUF_LEN, 1);
	EXPECT_EQ(ring_rw(&u->r, IORING_OP_WRITE, fd, u->buf, BUF_LEN, 0,
			  sqe_flags), BUF_LEN);
	fill(u->buf, BUF_LEN, 2);
	EXPECT_EQ(ring_rw(&u->r, IORING_OP_WRITE, fd, u->buf, BUF_LEN,
			  BUF_LEN, sqe_flags), BUF_LEN);
	/* Our size follows the lower file's once the writes completed. */
	{
		struct stat st;

		ASSERT_EQ(fstat(fd, &st), 0);
		EXPECT_EQ(st.st_size, 2 * BUF_LEN);
	}
	ASSERT_EQ(pread(lfd, u->chk, BUF_LEN, BUF_LEN), BUF_LEN);
	EXPECT_EQ(memcmp(u->chk, u->buf, BUF_LEN), 0);
	fill(u->buf, BUF_LEN, 1);
	ASSERT_EQ(pread(lfd, u->chk, BUF_LEN, 0), BUF_LEN);
	EXPECT_EQ(memcmp(u->chk, u->buf, BUF_LEN), 0);

	/* Written underneath, read through the mount with io_uring. */
	fill(u->buf, BUF_LEN, 3);
	ASSERT_EQ(pwrite(lfd, u->buf, BUF_LEN, BUF_LEN), BUF_LEN);
	ASSERT_EQ(fsync(lfd), 0);
	memset(u->chk, 0, BUF_LEN);
	EXPECT_EQ(ring_rw(&u->r, IORING_OP_READ, fd, u->chk, BUF_LEN,
			  BUF_LEN, sqe_flags), BUF_LEN);
	EXPECT_EQ(memcmp(u->chk, u->buf, BUF_LEN), 0);
	/* At the end of the file: 0 bytes, not an error. */
	EXPECT_EQ(ring_rw(&u->r, IORING_OP_READ, fd, u->chk, BUF_LEN,
			  2 * BUF_LEN, sqe_flags), 0);
	close(lfd);
	close(fd);
}

TEST_F(uring, buffered)
{
	uring_roundtrip(&self->u, 0, 0);
}

TEST_F(uring, buffered_async_worker)
{
	uring_roundtrip(&self->u, 0, IOSQE_ASYNC);
}

TEST_F(uring, direct)
{
	uring_roundtrip(&self->u, O_DIRECT, 0);
}

/* Vectored, two buffers per request, through the same paths. */
TEST_F(uring, vectored)
{
	struct uworld *u = &self->u;
	struct iovec iov[2];
	int fd, lfd;

	fd = open(P(u->w.mnt, "f"), O_RDWR);
	ASSERT_GE(fd, 0);
	lfd = open(P(u->w.lower, "f"), O_RDONLY);
	ASSERT_GE(lfd, 0);
	fill(u->buf, BUF_LEN, 4);
	iov[0].iov_base = u->buf;
	iov[0].iov_len = 100;
	iov[1].iov_base = u->buf + 100;
	iov[1].iov_len = BUF_LEN - 100;
	EXPECT_EQ(ring_rw(&u->r, IORING_OP_WRITEV, fd, iov, 2, 4096, 0),
		  BUF_LEN);
	ASSERT_EQ(pread(lfd, u->chk, BUF_LEN, 4096), BUF_LEN);
	EXPECT_EQ(memcmp(u->chk, u->buf, BUF_LEN), 0);
	memset(u->chk, 0, BUF_LEN);
	iov[0].iov_base = u->chk;
	iov[1].iov_base = u->chk + 100;
	EXPECT_EQ(ring_rw(&u->r, IORING_OP_READV, fd, iov, 2, 4096, 0),
		  BUF_LEN);
	EXPECT_EQ(memcmp(u->chk, u->buf, BUF_LEN), 0);
	close(lfd);
	close(fd);
}

/*
 * Non-blocking I/O through the mount goes as far as the real file's
 * (FMODE_NOWAIT, ext4's): a cached read is served without waiting, as
 * io_uring (6.12, 7.x) only tries a read inline on a file that says so
 * (without it every read went to a worker thread).  A non-blocking write that
 * would first have to kill setuid (a setattr underneath) fails and
 * changes nothing; the blocking retry kills it and writes.
 */
TEST_F(world, nowait_as_the_real_file)
{
	struct world *w = &self->w;
	char buf[4096], chk[4096];
	struct iovec iov = { .iov_base = chk, .iov_len = sizeof(chk) };
	int loop, lfd, fd;
	ssize_t ret;

	loop = LOOP_LOWER(w, "ext4");
	ASSERT_EQ(make_file(P(w->lower, "f"), 06777, 1000, 1000), 0);
	fill(buf, sizeof(buf), 5);
	lfd = open(P(w->lower, "f"), O_RDWR);
	ASSERT_GE(lfd, 0);
	ASSERT_EQ(pwrite(lfd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	ASSERT_EQ(shiftfs_mount_default(w), 0);

	/* Cached: the real file reads it without waiting, and so do we. */
	ASSERT_EQ(preadv2(lfd, &iov, 1, 0, RWF_NOWAIT), (ssize_t)sizeof(chk));
	fd = open(P(w->mnt, "f"), O_RDONLY);
	ASSERT_GE(fd, 0);
	memset(chk, 0, sizeof(chk));
	EXPECT_EQ(preadv2(fd, &iov, 1, 0, RWF_NOWAIT), (ssize_t)sizeof(chk));
	EXPECT_EQ(memcmp(chk, buf, sizeof(buf)), 0);
	close(fd);

	/* Not the owner (101000), no CAP_FSETID: a write kills setuid. */
	ASSERT_EQ(setgroups(0, NULL), 0);
	become_fsids(ID_SHIFT + 2000, ID_SHIFT + 2000);
	fd = open(P(w->mnt, "f"), O_WRONLY);
	become_fsids(0, 0);
	ASSERT_GE(fd, 0);
	iov.iov_base = "x";
	iov.iov_len = 1;
	become_fsids(ID_SHIFT + 2000, ID_SHIFT + 2000);
	ret = pwritev2(fd, &iov, 1, 0, RWF_NOWAIT);
	become_fsids(0, 0);
	EXPECT_EQ(ret, -1);
	EXPECT_TRUE(errno == EAGAIN || errno == EOPNOTSUPP);
	EXPECT_EQ(mode_of(P(w->lower, "f")), 06777u);
	ASSERT_EQ(pread(lfd, chk, 1, 0), 1);
	EXPECT_EQ(chk[0], buf[0]);
	become_fsids(ID_SHIFT + 2000, ID_SHIFT + 2000);
	EXPECT_EQ(pwritev2(fd, &iov, 1, 0, 0), 1);
	become_fsids(0, 0);
	EXPECT_EQ(mode_of(P(w->lower, "f")) & 06000, 0u);
	ASSERT_EQ(pread(lfd, chk, 1, 0), 1);
	EXPECT_EQ(chk[0], 'x');
	close(fd);
	close(lfd);
	ASSERT_EQ(umount2(w->mnt, MNT_DETACH), 0);
	ASSERT_EQ(umount2(w->lower, MNT_DETACH), 0);
	loop_detach(loop);
}

TEST_HARNESS_MAIN
