// SPDX-License-Identifier: GPL-2.0
/*
 * Directories: a lower directory file opened with the mounter's
 * credentials at open() time; readdir and seeks go straight to it.  Entry
 * inode numbers need no translation: ours are the lower ones.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include "shiftfs.h"

static int shiftfs_dir_open(struct inode *inode, struct file *file)
{
	struct file *real;
	const struct cred *old;
	struct path lower;

	/*
	 * Not f_path: overlayfs on 6.1 opens us with a fake path (its own
	 * dentry); file_dentry() resolves that to ours through d_real.
	 */
	shiftfs_lower_path(file_dentry(file), &lower);
	old = shiftfs_creds_mounter(inode->i_sb);
	real = dentry_open(&lower, O_RDONLY | O_DIRECTORY | O_LARGEFILE,
			   current_cred());
	shiftfs_creds_revert(inode->i_sb, old);
	if (IS_ERR(real))
		return PTR_ERR(real);
	file->private_data = real;
	return 0;
}

static int shiftfs_dir_release(struct inode *inode, struct file *file)
{
	fput(file->private_data);
	return 0;
}

static int shiftfs_iterate_shared(struct file *file, struct dir_context *ctx)
{
	struct file *real = file->private_data;
	const struct cred *old;
	int err;

	/* iterate_dir() resumes from real->f_pos, which tracks our f_pos. */
	old = shiftfs_creds_file(file);
	err = iterate_dir(real, ctx);
	shiftfs_creds_file_revert(file, old);
	return err;
}

static loff_t shiftfs_dir_llseek(struct file *file, loff_t offset, int whence)
{
	struct file *real = file->private_data;
	const struct cred *old;
	loff_t ret;

	old = shiftfs_creds_file(file);
	ret = vfs_llseek(real, offset, whence);
	shiftfs_creds_file_revert(file, old);
	if (ret >= 0)
		file->f_pos = real->f_pos;
	return ret;
}

const struct file_operations shiftfs_dir_fops = {
	.open		= shiftfs_dir_open,
	.release	= shiftfs_dir_release,
	.read		= generic_read_dir,
	.iterate_shared	= shiftfs_iterate_shared,
	.llseek		= shiftfs_dir_llseek,
	.fsync		= shiftfs_fsync,
};
