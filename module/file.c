// SPDX-License-Identifier: GPL-2.0
/*
 * Regular files.  open() opens a backing file on the lower filesystem with
 * the mounter's credentials and every operation is forwarded to it, as
 * overlayfs does; the seed's swapping of f_op on the fly is gone.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/splice.h>
#include <linux/uio.h>
#include "shiftfs.h"

static inline struct file *shiftfs_real_file(const struct file *file)
{
	return file->private_data;
}

static int shiftfs_open(struct inode *inode, struct file *file)
{
	struct file *real;
	const struct cred *old;
	struct path lower;
	/* O_TRUNC was done through our ->setattr, the rest is not for it. */
	int flags = file->f_flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC);

	/*
	 * Not f_path: overlayfs on 6.1 opens us with a fake path (its own
	 * dentry); file_dentry() resolves that to ours through d_real.
	 */
	shiftfs_lower_path(file_dentry(file), &lower);
	old = shiftfs_creds_mounter(inode->i_sb);
	real = shiftfs_backing_open(file, flags, &lower, current_cred());
	shiftfs_creds_revert(inode->i_sb, old);
	if (IS_ERR(real))
		return PTR_ERR(real);
	/*
	 * exec denies writes on our inode; deny them on the file underneath
	 * as well, or the host and every other mount of the tree could
	 * rewrite a running program.  mm->exe_file holds our file for as
	 * long as the program runs, so ->release gives it back, after exit,
	 * a failed exec or any error past this point.
	 */
	if (file->f_flags & __FMODE_EXEC) {
		int err = shiftfs_exe_deny_write(real);

		if (err) {
			fput(real);
			return err;
		}
	}

	file->private_data = real;
	/* do_dentry_open() refuses O_DIRECT unless we say we can. */
	if (real->f_mode & FMODE_CAN_ODIRECT)
		file->f_mode |= FMODE_CAN_ODIRECT;
	/*
	 * Non-blocking I/O as far as the real file can: without it io_uring
	 * (6.12 and 7.x; not 6.1's) sends every read to a worker thread.
	 * Reads pass IOCB_NOWAIT down; shiftfs_write_iter() honours it.
	 */
	if (real->f_mode & FMODE_NOWAIT)
		file->f_mode |= FMODE_NOWAIT;
	return 0;
}

#define SHIFTFS_SETFL_MASK (O_APPEND | O_NONBLOCK | O_NDELAY | O_DIRECT)

/*
 * fcntl(F_SETFL) changed our flags; carry them to the backing file before
 * using it, as overlayfs does.
 */
static noinline int shiftfs_sync_flags_slow(struct file *file,
					    struct file *real)
{
	unsigned int flags = READ_ONCE(file->f_flags) & SHIFTFS_SETFL_MASK;
	int err;

	if ((flags & O_DIRECT) && !(real->f_mode & FMODE_CAN_ODIRECT))
		return -EINVAL;
	if (real->f_op->check_flags) {
		err = real->f_op->check_flags(flags);
		if (err)
			return err;
	}
	spin_lock(&real->f_lock);
	real->f_flags = (real->f_flags & ~SHIFTFS_SETFL_MASK) | flags;
	shiftfs_update_iocb_flags(real);
	spin_unlock(&real->f_lock);
	return 0;
}

/* Inline: before every read and write, and almost always nothing to do. */
static inline int shiftfs_sync_flags(struct file *file, struct file *real)
{
	if (likely(!((READ_ONCE(file->f_flags) ^ real->f_flags) &
		     SHIFTFS_SETFL_MASK)))
		return 0;
	return shiftfs_sync_flags_slow(file, real);
}

/*
 * A POSIX lock granted through us after another thread closed the fd it
 * was asked through: fcntl_setlk() sees the fd gone and drops the lock
 * with locks_remove_posix() on our file, whose inode holds no locks, so
 * it stays on the lower inode pointing at the real file we are about to
 * put, owned by a files_struct that may have no fd left to close.  Nobody
 * holds our file any more: drop, as the VFS meant to, the POSIX locks of
 * every owner still holding one through it.
 */
static void shiftfs_drop_stray_posix(struct file *real)
{
	struct file_lock_context *ctx = locks_inode_context(file_inode(real));
	fl_owner_t owner, last = NULL;
	struct file_lock *fl;

	if (!ctx || list_empty_careful(&ctx->flc_posix))
		return;
	for (;;) {
		owner = NULL;
		spin_lock(&ctx->flc_lock);
		list_for_each_entry(fl, &ctx->flc_posix, SHIFTFS_FL_LIST) {
			/* OFD locks go with the real file's last fput(). */
			if (shiftfs_fl_file(fl) == real &&
			    shiftfs_fl_owner(fl) != real) {
				owner = shiftfs_fl_owner(fl);
				break;
			}
		}
		spin_unlock(&ctx->flc_lock);
		/* The same owner again: the lower fs would not let go. */
		if (!owner || owner == last)
			return;
		locks_remove_posix(real, owner);
		last = owner;
	}
}

static int shiftfs_release(struct inode *inode, struct file *file)
{
	struct file *real = shiftfs_real_file(file);
	const struct cred *old;

	old = shiftfs_creds_mounter(inode->i_sb);
	shiftfs_drop_stray_posix(real);
	shiftfs_creds_revert(inode->i_sb, old);
	if (file->f_flags & __FMODE_EXEC)
		shiftfs_exe_allow_write(real);
	fput(real);
	return 0;
}

static ssize_t shiftfs_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	struct file *real = shiftfs_real_file(file);
	const struct cred *old;
	ssize_t ret;

	if (!iov_iter_count(iter))
		return 0;
	ret = shiftfs_sync_flags(file, real);
	if (ret)
		return ret;
	old = shiftfs_creds_file(file);
	ret = shiftfs_file_read_iter(real, iocb, iter);
	shiftfs_creds_file_revert(file, old);
	return ret;
}

static ssize_t shiftfs_splice_read(struct file *in, loff_t *ppos,
				   struct pipe_inode_info *pipe, size_t len,
				   unsigned int flags)
{
	struct file *real = shiftfs_real_file(in);
	const struct cred *old;
	ssize_t ret;

	ret = shiftfs_sync_flags(in, real);
	if (ret)
		return ret;
	old = shiftfs_creds_file(in);
	ret = shiftfs_file_splice_read(in, real, ppos, pipe, len, flags);
	shiftfs_creds_file_revert(in, old);
	return ret;
}

/*
 * The data changed: size and times as they are underneath.  For AIO and
 * io_uring, at the completion, from a workqueue (compat.h).
 */
void shiftfs_file_modified(struct file *file)
{
	shiftfs_copyattr(file_inode(file));
}

/*
 * Before data changes, with the inode locked: attributes as they are
 * underneath, then suid/sgid and security.capability killed here, as the
 * caller (underneath, the mounter's CAP_FSETID would keep them).  The
 * write itself then runs with the caller's ids mapped back, not the
 * mounter's: to the lower filesystem fsuid 0 is who may use the blocks
 * reserved for root.  With IOCB_NOWAIT in @iocb_flags, EAGAIN rather than
 * anything file_remove_privs() might have to kill with a setattr
 * underneath (not S_NOSEC: until a write has found nothing to kill).
 */
static int shiftfs_write_prepare(struct file *file, int iocb_flags)
{
	struct inode *inode = file_inode(file);

	shiftfs_copyattr(inode);
	shiftfs_sync_nosec(inode);
	if ((iocb_flags & IOCB_NOWAIT) && !IS_NOSEC(inode))
		return -EAGAIN;
	return file_remove_privs(file);
}

/*
 * The write family (fallocate, copy_file_range, remap_file_range): the
 * inode locked, shiftfs_write_prepare(), then the caller's ids mapped
 * back; the credentials installed, or an ERR_PTR with nothing held.
 * shiftfs_do_write_end() reverts them, takes the attributes as they are
 * underneath now, and unlocks.  (write_iter does the same its own way:
 * IOCB_NOWAIT, and the attributes at the completion.)
 */
static const struct cred *shiftfs_do_write_begin(struct file *file)
{
	struct inode *inode = file_inode(file);
	const struct cred *old;
	int err;

	inode_lock(inode);
	err = shiftfs_write_prepare(file, 0);
	old = err ? ERR_PTR(err) : shiftfs_creds_caller_ids(inode->i_sb);
	if (IS_ERR(old))
		inode_unlock(inode);
	return old;
}

static void shiftfs_do_write_end(struct file *file, const struct cred *old)
{
	struct inode *inode = file_inode(file);

	shiftfs_creds_revert(inode->i_sb, old);
	shiftfs_copyattr(inode);
	inode_unlock(inode);
}

static ssize_t shiftfs_write_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	struct file *real = shiftfs_real_file(file);
	struct inode *inode = file_inode(file);
	const struct cred *old;
	ssize_t ret;

	if (!iov_iter_count(iter))
		return 0;

	/*
	 * IOCB_NOWAIT (io_uring's first try, RWF_NOWAIT): no waiting, not
	 * for the inode lock, not in shiftfs_write_prepare().  EAGAIN sends
	 * io_uring to a worker, which retries without the flag.
	 */
	if (iocb->ki_flags & IOCB_NOWAIT) {
		if (!inode_trylock(inode))
			return -EAGAIN;
	} else {
		inode_lock(inode);
	}
	ret = shiftfs_write_prepare(file, iocb->ki_flags);
	if (ret)
		goto out_unlock;
	ret = shiftfs_sync_flags(file, real);
	if (ret)
		goto out_unlock;

	old = shiftfs_creds_caller_ids(inode->i_sb);
	if (IS_ERR(old)) {
		ret = PTR_ERR(old);
		goto out_unlock;
	}
	ret = shiftfs_file_write_iter(real, iocb, iter);
	shiftfs_creds_revert(inode->i_sb, old);

out_unlock:
	inode_unlock(inode);
	return ret;
}

static loff_t shiftfs_llseek(struct file *file, loff_t offset, int whence)
{
	struct file *real = shiftfs_real_file(file);
	struct inode *inode = file_inode(file);
	const struct cred *old;
	loff_t ret;

	/* As overlayfs: skip the lock for the common no-op cases. */
	if (offset == 0) {
		if (whence == SEEK_CUR)
			return file->f_pos;
		if (whence == SEEK_SET)
			return vfs_setpos(file, 0, 0);
	}

	/*
	 * The lower llseek (SEEK_DATA/HOLE, SEEK_END) works on the lower
	 * file's f_pos: carry ours over and back, under the inode lock that
	 * also serialises our other users of the real file's f_pos.
	 */
	inode_lock(inode);
	real->f_pos = file->f_pos;
	old = shiftfs_creds_mounter(inode->i_sb);
	ret = vfs_llseek(real, offset, whence);
	shiftfs_creds_revert(inode->i_sb, old);
	file->f_pos = real->f_pos;
	inode_unlock(inode);
	return ret;
}

/* Files and directories (readdir.c) alike: the real file's fsync. */
int shiftfs_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	const struct cred *old;
	int ret;

	old = shiftfs_creds_file(file);
	ret = vfs_fsync_range(shiftfs_real_file(file), start, end, datasync);
	shiftfs_creds_file_revert(file, old);
	return ret;
}

static int shiftfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct file *real = shiftfs_real_file(file);
	const struct cred *old;
	int ret;

	old = shiftfs_creds_file(file);
	ret = shiftfs_file_mmap(file, real, vma);
	shiftfs_creds_file_revert(file, old);
	return ret;
}

static long shiftfs_fallocate(struct file *file, int mode, loff_t offset,
			      loff_t len)
{
	const struct cred *old = shiftfs_do_write_begin(file);
	long ret;

	if (IS_ERR(old))
		return PTR_ERR(old);
	ret = vfs_fallocate(shiftfs_real_file(file), mode, offset, len);
	shiftfs_do_write_end(file, old);
	return ret;
}

static int shiftfs_fadvise(struct file *file, loff_t offset, loff_t len,
			   int advice)
{
	const struct cred *old;
	int ret;

	old = shiftfs_creds_file(file);
	ret = vfs_fadvise(shiftfs_real_file(file), offset, len, advice);
	shiftfs_creds_file_revert(file, old);
	return ret;
}

static ssize_t shiftfs_copy_file_range(struct file *file_in, loff_t pos_in,
				       struct file *file_out, loff_t pos_out,
				       size_t len, unsigned int flags)
{
	const struct cred *old = shiftfs_do_write_begin(file_out);
	ssize_t ret;

	if (IS_ERR(old))
		return PTR_ERR(old);
	ret = vfs_copy_file_range(shiftfs_real_file(file_in), pos_in,
				  shiftfs_real_file(file_out), pos_out, len,
				  flags);
	shiftfs_do_write_end(file_out, old);
	return ret;
}

/* FICLONE/FICLONERANGE/FIDEDUPERANGE, when the lower fs shares extents. */
static loff_t shiftfs_remap_file_range(struct file *file_in, loff_t pos_in,
				       struct file *file_out, loff_t pos_out,
				       loff_t len, unsigned int remap_flags)
{
	const struct cred *old;
	loff_t ret;

	if (remap_flags & ~(REMAP_FILE_DEDUP | REMAP_FILE_ADVISORY))
		return -EINVAL;

	old = shiftfs_do_write_begin(file_out);
	if (IS_ERR(old))
		return PTR_ERR(old);
	if (remap_flags & REMAP_FILE_DEDUP)
		ret = vfs_dedupe_file_range_one(shiftfs_real_file(file_in),
						pos_in,
						shiftfs_real_file(file_out),
						pos_out, len, remap_flags);
	else
		ret = vfs_clone_file_range(shiftfs_real_file(file_in), pos_in,
					   shiftfs_real_file(file_out),
					   pos_out, len, remap_flags);
	shiftfs_do_write_end(file_out, old);
	return ret;
}

/*
 * close() drops the caller's POSIX locks: the VFS does so on our inode,
 * where there are none (shiftfs_lock()), so do it on the real file.
 */
static int shiftfs_flush(struct file *file, fl_owner_t id)
{
	struct file *real = shiftfs_real_file(file);
	const struct cred *old;
	int ret = 0;

	old = shiftfs_creds_file(file);
	if (real->f_op->flush)
		ret = real->f_op->flush(real, id);
	locks_remove_posix(real, id);
	shiftfs_creds_file_revert(file, old);
	return ret;
}

/*
 * File locks are locks on the lower inode, where the host, other shiftfs
 * mounts of the tree and every other opener see them; on our inode they
 * would only conflict with each other.  The request is retargeted at the
 * real file, and a lock owned by our open file description (OFD, flock)
 * is owned by the real one, so that the real file's last fput() releases
 * it.  POSIX locks stay owned by the caller's files_struct; our ->flush
 * drops them.  fl_file is ours again on return: after FILE_LOCK_DEFERRED
 * the VFS calls us again with the same request, and 6.9+ WARN if fl_file
 * is not the file it passes.
 */
static struct file *shiftfs_lock_retarget(struct file *file,
					  struct file_lock *fl)
{
	struct file *real = shiftfs_real_file(file);

	if (shiftfs_fl_owner(fl) == file)
		shiftfs_fl_owner(fl) = real;
	shiftfs_fl_file(fl) = real;
	return real;
}

static int shiftfs_lock(struct file *file, int cmd, struct file_lock *fl)
{
	struct file *real = shiftfs_lock_retarget(file, fl);
	const struct cred *old;
	int ret;

	old = shiftfs_creds_file(file);
	if (IS_GETLK(cmd))
		ret = vfs_test_lock(real, fl);
	else if (cmd == F_CANCELLK)
		ret = vfs_cancel_lock(real, fl);
	else
		ret = vfs_lock_file(real, cmd, fl, NULL);
	shiftfs_creds_file_revert(file, old);
	shiftfs_fl_file(fl) = file;
	return ret;
}

/* flock(): owned by the open file description, i.e. the real file. */
static int shiftfs_flock(struct file *file, int cmd, struct file_lock *fl)
{
	struct file *real = shiftfs_lock_retarget(file, fl);
	const struct cred *old;
	int ret;

	old = shiftfs_creds_file(file);
	if (real->f_op->flock)
		ret = real->f_op->flock(real, cmd, fl);
	else
		ret = locks_lock_file_wait(real, fl);
	shiftfs_creds_file_revert(file, old);
	shiftfs_fl_file(fl) = file;
	return ret;
}

const struct file_operations shiftfs_file_fops = {
	.open		= shiftfs_open,
	.release	= shiftfs_release,
	.llseek		= shiftfs_llseek,
	.read_iter	= shiftfs_read_iter,
	.write_iter	= shiftfs_write_iter,
	.fsync		= shiftfs_fsync,
	.mmap		= shiftfs_mmap,
	.fallocate	= shiftfs_fallocate,
	.fadvise	= shiftfs_fadvise,
	.flush		= shiftfs_flush,
	.lock		= shiftfs_lock,
	.flock		= shiftfs_flock,
	/*
	 * Leases refused (EINVAL), as filesystems that cannot keep them do.
	 * Overlayfs (6.1 and 6.12) leaves them on its own inode, where only
	 * opens through the same overlay break them; for a tree the host and
	 * other containers open directly that would be a lease nothing breaks.
	 * Forwarding to the real file is no better: F_GETLEASE only looks
	 * at our inode.
	 */
	SHIFTFS_NOSETLEASE
	.splice_read	= shiftfs_splice_read,
	.splice_write	= iter_file_splice_write,
	.copy_file_range = shiftfs_copy_file_range,
	.remap_file_range = shiftfs_remap_file_range,
};
