// SPDX-License-Identifier: GPL-2.0
/*
 * shiftfs inodes: one per lower inode (hashed on its address, so that
 * hardlinks share one shiftfs inode, as overlayfs does), attributes shown
 * through the id map, access checked against the caller.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/fileattr.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/sched.h>
#include "shiftfs.h"

static int shiftfs_inode_test(struct inode *inode, void *lower)
{
	return SHIFTFS_I(inode)->lower == lower;
}

static int shiftfs_inode_set(struct inode *inode, void *lower)
{
	/* Our caller holds a dentry reference, so ihold() is safe. */
	ihold(lower);
	SHIFTFS_I(inode)->lower = lower;
	return 0;
}

/*
 * Our inode for @lower, found or made.  A lower inode with one link and
 * no directory almost never has one yet (only a rename underneath, or a
 * revalidation that failed while the old dentry is still in use, leaves
 * one behind): allocate first and insert, one search of the inode hash
 * under its lock, instead of iget5_locked()'s search, allocation and
 * second search.  The rare loser of that bet frees the unused inode.
 * Either way the inode is hashed: one shiftfs inode per lower inode is
 * what inotify, ETXTBSY and hardlinks rely on.
 */
static struct inode *shiftfs_iget(struct super_block *sb, struct inode *lower)
{
	struct inode *new, *inode;

	if (S_ISDIR(lower->i_mode) || lower->i_nlink != 1)
		return iget5_locked(sb, (unsigned long)lower,
				    shiftfs_inode_test, shiftfs_inode_set,
				    lower);
	new = new_inode(sb);
	if (!new)
		return NULL;
	inode = inode_insert5(new, (unsigned long)lower, shiftfs_inode_test,
			      shiftfs_inode_set, lower);
	if (inode != new)
		iput(new);
	return inode;
}

struct inode *shiftfs_get_inode(struct super_block *sb, struct inode *lower)
{
	struct inode *inode;
	umode_t mode = lower->i_mode;

	inode = shiftfs_iget(sb, lower);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	if (!shiftfs_inode_is_new(inode))
		return inode;

	/* Stable, unique (within our st_dev) and the same as underneath. */
	inode->i_ino = lower->i_ino;
	inode->i_generation = lower->i_generation;
	/*
	 * The lower filesystem keeps the times; we copy them.  Its atime is
	 * touched by the lower file's own reads and readdirs; the VFS
	 * touching ours as well would only dirty an inode nothing writes
	 * back (overlayfs has ->update_time() for that).
	 */
	inode->i_flags |= S_NOCMTIME | S_NOATIME;
#ifdef CONFIG_FS_POSIX_ACL
	/* Translated on every use: a cached copy would miss lower changes. */
	inode->i_acl = ACL_DONT_CACHE;
	inode->i_default_acl = ACL_DONT_CACHE;
#endif
	inode->i_mode = mode;

	switch (mode & S_IFMT) {
	case S_IFREG:
		inode->i_op = &shiftfs_file_iops;
		inode->i_fop = &shiftfs_file_fops;
		break;
	case S_IFDIR:
		inode->i_op = &shiftfs_dir_iops;
		inode->i_fop = &shiftfs_dir_fops;
		break;
	case S_IFLNK:
		inode->i_op = &shiftfs_symlink_iops;
		break;
	default:
		inode->i_op = &shiftfs_special_iops;
		init_special_inode(inode, mode, lower->i_rdev);
		/* One pipe with the lower FIFO's users (fifo.c). */
		if (S_ISFIFO(mode))
			inode->i_fop = &shiftfs_fifo_fops;
		break;
	}
	shiftfs_copy_ids(inode, lower);
	shiftfs_copyattr(inode);
	unlock_new_inode(inode);
	return inode;
}

/*
 * Access is decided here, at the shiftfs inode with its shifted owner and
 * mode, against the caller's own credentials: container root's
 * capabilities count exactly over the files its namespace maps.  The
 * lower inode is then asked with the mounter's credentials, which catches
 * what only the lower filesystem knows (read-only, immutable, LSMs).
 */
int shiftfs_permission(struct shiftfs_idmap *idmap, struct inode *inode,
		       int mask)
{
	struct inode *lower = shiftfs_inode_lower_rcu(inode);
	const struct cred *old;
	int err;

	/* In RCU walk (MAY_NOT_BLOCK) our inode may be being evicted. */
	if (unlikely(!lower))
		return (mask & MAY_NOT_BLOCK) ? -ECHILD : -ESTALE;
	/*
	 * Refresh from the lower inode every time: path walk in RCU mode
	 * never gives d_revalidate() a chance to see a chmod made
	 * underneath.
	 */
	shiftfs_copy_access(inode, lower);
	err = generic_permission(idmap, inode, mask);
	if (err)
		return err;
	/* bprm_fill_uid() asking whether the setuid/setgid bits count. */
	if (unlikely(is_sxid(inode->i_mode) && S_ISREG(inode->i_mode) &&
		     (mask & ~MAY_NOT_BLOCK) == MAY_EXEC &&
		     current->in_execve) &&
	    !shiftfs_exec_may_setid(inode))
		return -EPERM;

	old = shiftfs_creds_mounter(inode->i_sb);
	err = inode_permission(SHIFTFS_NOP_IDMAP, lower, mask);
	shiftfs_creds_revert(inode->i_sb, old);
	return err;
}

/*
 * Our st_dev for a lower one.  Inode numbers are the lower ones, unique
 * only per lower st_dev: a tree spanning btrfs subvolumes repeats them, and
 * under one st_dev tar, rsync and du would take distinct files for hard
 * links.  So one of our devices per lower device; the common case, a tree
 * on one device, is one comparison.
 */
static int shiftfs_stat_dev(struct super_block *sb, dev_t lower, dev_t *dev)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(sb);
	void *entry;
	dev_t new;
	int err;

	if (likely(lower == fs->lower_dev)) {
		*dev = sb->s_dev;
		return 0;
	}
	entry = xa_load(&fs->devs, lower);
	if (entry) {
		*dev = xa_to_value(entry);
		return 0;
	}
	err = get_anon_bdev(&new);
	if (err)
		return err;
	entry = xa_cmpxchg(&fs->devs, lower, NULL, xa_mk_value(new),
			   GFP_KERNEL);
	if (entry) {
		/* Lost a race, or no memory. */
		free_anon_bdev(new);
		if (xa_is_err(entry))
			return xa_err(entry);
		new = xa_to_value(entry);
	}
	*dev = new;
	return 0;
}

int shiftfs_getattr(struct shiftfs_idmap *idmap, const struct path *path,
		    struct kstat *stat, u32 request_mask,
		    unsigned int query_flags)
{
	struct dentry *dentry = path->dentry;
	struct shiftfs_fs *fs = SHIFTFS_SB(dentry->d_sb);
	const struct cred *old;
	struct path lower;
	int err;

	shiftfs_lower_path(dentry, &lower);
	old = shiftfs_creds_mounter(dentry->d_sb);
	err = shiftfs_vfs_getattr(&lower, stat, request_mask, query_flags);
	shiftfs_creds_revert(dentry->d_sb, old);
	if (err)
		return err;

	/* Unmapped ids become INVALID_*, which stat(2) shows as 65534. */
	stat->uid = shiftfs_uid_up(fs, stat->uid);
	stat->gid = shiftfs_gid_up(fs, stat->gid);
	err = shiftfs_stat_dev(dentry->d_sb, stat->dev, &stat->dev);
	if (err)
		return err;
	/*
	 * stat(2) shows the lower attributes, shifted, not our inode's.  Of
	 * our inode, a stat refreshes what the VFS reads without calling us
	 * first.  The access bits are refreshed at every ->permission() and
	 * ref-walk revalidation (so before unlink's and rename's sticky
	 * checks), the times, which only our own atime bookkeeping reads, at
	 * the next open, change or ref-walk revalidation.  A full refresh
	 * here cost 100 instructions a stat on 7.3, more than the rest of
	 * this function.
	 */
	shiftfs_copy_size(d_inode(dentry));
	return 0;
}

int shiftfs_setattr(struct shiftfs_idmap *idmap, struct dentry *dentry,
		    struct iattr *attr)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(dentry->d_sb);
	struct dentry *lower = shiftfs_dentry_lower(dentry);
	struct inode *inode = d_inode(dentry);
	struct inode *lower_inode = d_inode(lower);
	struct iattr lattr;
	const struct cred *old;
	unsigned int kill_priv;
	int err;

	/*
	 * The caller's rights, against our shifted ids as they are now
	 * underneath; this also strips S_ISGID from a chmod by a
	 * non-member, as the lower filesystem would for the caller but
	 * won't for the (privileged) mounter.  Killing security.capability
	 * is left to the lower setattr_prepare(), once the ids are known
	 * to map and the lower filesystem agrees to the change: here it
	 * would happen even if the change then failed.  Without it,
	 * setattr_prepare() changes nothing.
	 */
	shiftfs_copyattr(inode);
	kill_priv = attr->ia_valid & ATTR_KILL_PRIV;
	attr->ia_valid &= ~ATTR_KILL_PRIV;
	err = shiftfs_userns_may_setattr(inode, attr);
	if (!err)
		err = setattr_prepare(idmap, dentry, attr);
	attr->ia_valid |= kill_priv;
	if (err)
		return err;

	/* Ids we cannot store are refused before anything changes. */
	lattr = *attr;
	if (attr->ia_valid & ATTR_UID) {
		lattr.ia_uid = shiftfs_uid_down(fs, attr->ia_uid);
		if (!uid_valid(lattr.ia_uid))
			return -EOVERFLOW;
	}
	if (attr->ia_valid & ATTR_GID) {
		lattr.ia_gid = shiftfs_gid_down(fs, attr->ia_gid);
		if (!gid_valid(lattr.ia_gid))
			return -EOVERFLOW;
	}
	/*
	 * As overlayfs: the lower fs never sees our struct file, nor an
	 * open(O_TRUNC) it did not do; and with ATTR_KILL_S*ID the VFS
	 * computes the new mode itself, from the lower mode.
	 */
	lattr.ia_valid &= ~(ATTR_FILE | ATTR_OPEN);
	if (lattr.ia_valid & (ATTR_KILL_SUID | ATTR_KILL_SGID))
		lattr.ia_valid &= ~ATTR_MODE;

	err = mnt_want_write(fs->lower_mnt);
	if (err)
		return err;
	if (lattr.ia_valid & ATTR_SIZE) {
		/* No truncating a file that is being executed underneath. */
		err = get_write_access(lower_inode);
		if (err)
			goto out_drop_write;
		/*
		 * truncate(2) broke the leases on our inode, where there are
		 * none; a lease holder underneath must be told, as
		 * vfs_truncate() would.  An open file (ftruncate, O_TRUNC)
		 * broke them when the real file was opened for writing.
		 */
		if (!(attr->ia_valid & ATTR_FILE)) {
			err = break_lease(lower_inode, O_WRONLY);
			if (err)
				goto out_put_write;
		}
	}

	old = shiftfs_creds_caller_ids(dentry->d_sb);
	if (IS_ERR(old)) {
		err = PTR_ERR(old);
		goto out_put_write;
	}
	inode_lock(lower_inode);
	err = notify_change(SHIFTFS_NOP_IDMAP, lower, &lattr, NULL);
	inode_unlock(lower_inode);
	shiftfs_creds_revert(dentry->d_sb, old);
	shiftfs_copyattr(inode);

out_put_write:
	if (lattr.ia_valid & ATTR_SIZE)
		put_write_access(lower_inode);
out_drop_write:
	mnt_drop_write(fs->lower_mnt);
	return err;
}

static const char *shiftfs_get_link(struct dentry *dentry,
				    struct inode *inode,
				    struct delayed_call *done)
{
	const struct cred *old;
	const char *link;

	/* The lower ->get_link may sleep, and it wants a dentry. */
	if (!dentry)
		return ERR_PTR(-ECHILD);
	old = shiftfs_creds_mounter(dentry->d_sb);
	link = vfs_get_link(shiftfs_dentry_lower(dentry), done);
	shiftfs_creds_revert(dentry->d_sb, old);
	return link;
}

int shiftfs_fileattr_get(struct dentry *dentry,
			 struct shiftfs_fileattr *fa)
{
	const struct cred *old;
	int err;

	old = shiftfs_creds_mounter(dentry->d_sb);
	err = vfs_fileattr_get(shiftfs_dentry_lower(dentry), fa);
	shiftfs_creds_revert(dentry->d_sb, old);
	return err;
}

/*
 * The VFS checked CAP_LINUX_IMMUTABLE against the lower flags, and
 * ownership for the caller, but against our owner as it was cached: check
 * that again with the owner as it is now underneath.
 */
int shiftfs_fileattr_set(struct shiftfs_idmap *idmap, struct dentry *dentry,
			 struct shiftfs_fileattr *fa)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(dentry->d_sb);
	struct inode *inode = d_inode(dentry);
	const struct cred *old;
	int err;

	shiftfs_copyattr(inode);
	if (!inode_owner_or_capable(idmap, inode))
		return -EPERM;
	err = mnt_want_write(fs->lower_mnt);
	if (err)
		return err;
	old = shiftfs_creds_caller_ids(dentry->d_sb);
	if (IS_ERR(old)) {
		err = PTR_ERR(old);
		goto out;
	}
	err = vfs_fileattr_set(SHIFTFS_NOP_IDMAP, shiftfs_dentry_lower(dentry),
			       fa);
	shiftfs_creds_revert(dentry->d_sb, old);
	shiftfs_copyattr(d_inode(dentry));
out:
	mnt_drop_write(fs->lower_mnt);
	return err;
}

/* FIEMAP: the lower file's extents, asked as the mounter (ovl_fiemap). */
static int shiftfs_fiemap(struct inode *inode,
			  struct fiemap_extent_info *fieinfo, u64 start,
			  u64 len)
{
	struct inode *lower = shiftfs_inode_lower(inode);
	const struct cred *old;
	int err;

	if (!lower->i_op->fiemap)
		return -EOPNOTSUPP;
	old = shiftfs_creds_mounter(inode->i_sb);
	err = lower->i_op->fiemap(lower, fieinfo, start, len);
	shiftfs_creds_revert(inode->i_sb, old);
	return err;
}

const struct inode_operations shiftfs_file_iops = {
	.fileattr_get	= shiftfs_fileattr_get,
	.fileattr_set	= shiftfs_fileattr_set,
	.fiemap		= shiftfs_fiemap,
	SHIFTFS_COMMON_IOPS
};

const struct inode_operations shiftfs_symlink_iops = {
	.get_link	= shiftfs_get_link,
	.getattr	= shiftfs_getattr,
	.setattr	= shiftfs_setattr,
	.listxattr	= shiftfs_listxattr,
};

const struct inode_operations shiftfs_special_iops = {
	SHIFTFS_COMMON_IOPS
};
