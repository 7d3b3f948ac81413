// SPDX-License-Identifier: GPL-2.0
/*
 * FIFOs.  The pipe of a FIFO hangs off the inode it is opened through:
 * opened at our inode it would be a pipe of its own, and a reader in a
 * container and a writer on the host would never meet.  So open() opens
 * the lower FIFO, and the waiting for a partner, the data and the hang-up
 * all happen on the lower pipe, shared with the host and every other mount
 * of the tree.  The lower file is the mounter's as every lower file is,
 * but the caller opens it: the pipe is charged to the caller.
 * The pipe is the lower inode's: it is released by the real file's last
 * fput(), never by pipe_release() on ours.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/uio.h>
#include "shiftfs.h"

/* F_SETFL bits a pipe reads from its file: blocking and packet mode. */
#define SHIFTFS_FIFO_FL_MASK (O_APPEND | O_NONBLOCK | O_NDELAY | O_DIRECT)

static struct file *shiftfs_fifo_real(struct file *file)
{
	struct file *real = file->private_data;
	unsigned int flags = READ_ONCE(file->f_flags) & SHIFTFS_FIFO_FL_MASK;

	if ((flags ^ real->f_flags) & SHIFTFS_FIFO_FL_MASK) {
		spin_lock(&real->f_lock);
		real->f_flags = (real->f_flags & ~SHIFTFS_FIFO_FL_MASK) | flags;
		shiftfs_update_iocb_flags(real);
		spin_unlock(&real->f_lock);
	}
	return real;
}

/*
 * May wait (interruptibly) for the other end, as fifo_open() does.
 *
 * Who may open was decided before we are called: the caller at our inode,
 * the mounter at the lower one (shiftfs_permission()).  dentry_open()
 * makes no access check of its own but the LSMs' security_file_open(),
 * which judges the file's f_cred: the mounter's, as for every lower file.
 * What opening costs it charges to current, though: the file to
 * fs.file-max, and the pipe, made by the open that finds none, to
 * current_user(), within fs.pipe-user-pages-soft/-hard unless current has
 * CAP_SYS_RESOURCE or CAP_SYS_ADMIN (pipe_is_unprivileged_user()).  So no
 * override here: with the mounter's creds installed, host root would pay,
 * bound by no limit, for a full pipe per FIFO a container user opens,
 * past every limit its own pipe() calls stop at.  The caller pays as it
 * would underneath, and nothing in the open reads its ids.
 */
static int shiftfs_fifo_open(struct inode *inode, struct file *file)
{
	int flags = file->f_flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC);
	const struct cred *mounter = SHIFTFS_SB(inode->i_sb)->creator_cred;
	struct file *real;
	struct path lower;

	shiftfs_lower_path(file_dentry(file), &lower);
	real = dentry_open(&lower, flags, mounter);
	if (IS_ERR(real))
		return PTR_ERR(real);
	file->private_data = real;
	return stream_open(inode, file);
}

static int shiftfs_fifo_release(struct inode *inode, struct file *file)
{
	fput(file->private_data);
	return 0;
}

/* Data through the lower pipe, with the mounter's credentials. */
static ssize_t shiftfs_do_fifo_iter(struct kiocb *iocb, struct iov_iter *iter,
				    int rw)
{
	struct file *file = iocb->ki_filp;
	struct file *real = shiftfs_fifo_real(file);
	const struct cred *old;
	ssize_t ret;

	old = shiftfs_creds_file(file);
	if (rw == WRITE)
		ret = vfs_iter_write(real, iter, &iocb->ki_pos, 0);
	else
		ret = vfs_iter_read(real, iter, &iocb->ki_pos, 0);
	shiftfs_creds_file_revert(file, old);
	return ret;
}

static ssize_t shiftfs_fifo_read_iter(struct kiocb *iocb,
				      struct iov_iter *iter)
{
	return shiftfs_do_fifo_iter(iocb, iter, READ);
}

static ssize_t shiftfs_fifo_write_iter(struct kiocb *iocb,
				       struct iov_iter *iter)
{
	return shiftfs_do_fifo_iter(iocb, iter, WRITE);
}

/* The lower pipe's wait queues; our file outlives no entry on them. */
static __poll_t shiftfs_fifo_poll(struct file *file, poll_table *wait)
{
	return vfs_poll(shiftfs_fifo_real(file), wait);
}

/* FIONREAD and the watch-queue ioctls, on the pipe they are about. */
static long shiftfs_fifo_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	struct file *real = shiftfs_fifo_real(file);

	if (!real->f_op->unlocked_ioctl)
		return -ENOTTY;
	return real->f_op->unlocked_ioctl(real, cmd, arg);
}

/*
 * No ->fasync: SIGIO would be sent to the owner of the real file, which
 * F_SETOWN on ours does not set; O_ASYNC does nothing, as on a file.
 * F_GETPIPE_SZ/F_SETPIPE_SZ and splice() recognise a pipe by its
 * file_operations, which are not the pipe's here: they fail (EBADF,
 * EINVAL) through shiftfs.
 */
const struct file_operations shiftfs_fifo_fops = {
	.open		= shiftfs_fifo_open,
	.release	= shiftfs_fifo_release,
	.read_iter	= shiftfs_fifo_read_iter,
	.write_iter	= shiftfs_fifo_write_iter,
	.poll		= shiftfs_fifo_poll,
	.unlocked_ioctl	= shiftfs_fifo_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};
