// SPDX-License-Identifier: GPL-2.0
/*
 * Directory operations.  Each one looks the lower name up again under the
 * lower parent's lock, as overlayfs does: our dentry's pinned lower dentry
 * says what we saw, the fresh lookup says what is there now, and a
 * mismatch (a change made underneath) is reported as -ESTALE, which makes
 * the VFS retry with revalidation.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include "shiftfs.h"

/*
 * The lower dentry of @dentry's name, the lower parent locked.  The one
 * our lookup pinned is it if it is still hashed, under that name, in that
 * parent: with the parent's i_rwsem held nothing can rename, unlink or
 * create it, so a lookup would return just that dentry.  Reusing
 * it saves a hash lookup and a lower permission check on every create,
 * unlink and rename (vfs_create() and the rest check the lower directory
 * themselves).  Dentries the lower filesystem revalidates (remote ones)
 * are looked up again.
 */
static struct dentry *shiftfs_lookup_lower(struct dentry *dentry,
					   struct dentry *lower_parent)
{
	struct dentry *lower = shiftfs_dentry_lower(dentry);
	bool pinned;

	if (lower && !(lower->d_flags & DCACHE_OP_REVALIDATE)) {
		spin_lock(&lower->d_lock);
		pinned = !d_unhashed(lower) &&
			 lower->d_parent == lower_parent &&
			 shiftfs_names_equal(dentry, lower);
		if (pinned)
			dget_dlock(lower);
		spin_unlock(&lower->d_lock);
		if (pinned)
			return lower;
	}
	return shiftfs_lookup_one(&dentry->d_name, lower_parent);
}

/*
 * The family of calls that change a directory (create, link, unlink,
 * rmdir): write access to the lower mount, then the caller's ids
 * installed (@owner: the owner's ids of a new object, -EOVERFLOW if the
 * caller's fsuid or fsgid has none underneath), then the lower parent
 * locked and the lower dentry of @dentry's name in it.  Returns that
 * dentry, *@old set; or an ERR_PTR, with nothing held.
 * shiftfs_do_dirop_end() gives it all back.
 */
static struct dentry *shiftfs_do_dirop_begin(struct dentry *dentry,
					     bool owner,
					     const struct cred **old)
{
	struct super_block *sb = dentry->d_sb;
	struct shiftfs_fs *fs = SHIFTFS_SB(sb);
	struct dentry *lower_parent = shiftfs_dentry_lower(dentry->d_parent);
	struct dentry *lower;
	int err;

	err = mnt_want_write(fs->lower_mnt);
	if (err)
		return ERR_PTR(err);
	*old = owner ? shiftfs_creds_owner_ids(sb) :
		       shiftfs_creds_caller_ids(sb);
	if (IS_ERR(*old)) {
		lower = ERR_CAST(*old);
		goto out_drop_write;
	}
	inode_lock_nested(d_inode(lower_parent), I_MUTEX_PARENT);
	lower = shiftfs_lookup_lower(dentry, lower_parent);
	if (!IS_ERR(lower))
		return lower;
	inode_unlock(d_inode(lower_parent));
	shiftfs_creds_revert(sb, *old);
out_drop_write:
	mnt_drop_write(fs->lower_mnt);
	return lower;
}

/*
 * The end of shiftfs_do_dirop_begin()'s call: @lower (NULL: none) put,
 * the lower parent unlocked (unless @locked is false: a failed lower
 * mkdir unlocked it), the caller's credentials back, write access given
 * up.  Our parent's i_rwsem, held by the VFS, kept @dentry's parent.
 */
static void shiftfs_do_dirop_end(struct dentry *dentry, struct dentry *lower,
				 bool locked, const struct cred *old)
{
	struct super_block *sb = dentry->d_sb;

	dput(lower);
	if (locked)
		inode_unlock(d_inode(shiftfs_dentry_lower(dentry->d_parent)));
	shiftfs_creds_revert(sb, old);
	mnt_drop_write(SHIFTFS_SB(sb)->lower_mnt);
}

/*
 * Some filesystems (fuse, nfs, ...) leave the dentry of a new object
 * unhashed or negative, and a mkdir may hand back a dentry the lower
 * filesystem spliced (shiftfs_vfs_mkdir()): pin it only if it is the
 * hashed, positive child of the directory we created in, and otherwise
 * find the object by name, as overlayfs does.
 */
static struct dentry *shiftfs_created_lower(struct dentry *dentry,
					    struct dentry *lower_parent,
					    struct dentry *lower)
{
	struct dentry *again;

	if (!d_unhashed(lower) && d_really_is_positive(lower) &&
	    lower->d_parent == lower_parent)
		return lower;
	/* Not the pinned dentry: that is the one left unhashed or negative. */
	again = shiftfs_lookup_one(&dentry->d_name, lower_parent);
	dput(lower);
	if (!IS_ERR(again) && d_really_is_negative(again)) {
		dput(again);
		again = ERR_PTR(-ENOENT);
	}
	return again;
}

static int shiftfs_create_object(struct inode *dir, struct dentry *dentry,
				 umode_t mode, dev_t rdev, const char *link,
				 struct dentry *hardlink)
{
	struct dentry *lower_parent = shiftfs_dentry_lower(dentry->d_parent);
	struct inode *lower_dir = d_inode(lower_parent);
	const struct cred *old;
	struct dentry *lower;
	struct inode *inode;
	int err;

	/* The new object belongs to the caller. */
	lower = shiftfs_do_dirop_begin(dentry, true, &old);
	if (IS_ERR(lower))
		return PTR_ERR(lower);
	/* Created underneath since our negative lookup. */
	err = -ESTALE;
	if (d_really_is_positive(lower))
		goto out;

	if (hardlink) {
		err = shiftfs_do_link(shiftfs_dentry_lower(hardlink),
				      lower_dir, lower);
	} else {
		switch (mode & S_IFMT) {
		case S_IFREG:
			err = shiftfs_do_create(lower_dir, lower, mode);
			break;
		case S_IFDIR:
			/*
			 * The directory made may be another dentry (one the
			 * lower filesystem spliced), which is the one to pin.
			 * On error the lower parent is unlocked already and
			 * our reference on @lower gone with it.
			 */
			lower = shiftfs_do_mkdir(lower_dir, lower, mode);
			if (IS_ERR(lower)) {
				shiftfs_do_dirop_end(dentry, NULL, false, old);
				return PTR_ERR(lower);
			}
			err = 0;
			break;
		case S_IFLNK:
			err = shiftfs_do_symlink(lower_dir, lower, link);
			break;
		default:
			err = shiftfs_do_mknod(lower_dir, lower, mode, rdev);
			break;
		}
	}
	if (err)
		goto out;

	lower = shiftfs_created_lower(dentry, lower_parent, lower);
	if (IS_ERR(lower)) {
		err = PTR_ERR(lower);
		lower = NULL;
		goto out;
	}
	inode = shiftfs_get_inode(dir->i_sb, d_inode(lower));
	if (IS_ERR(inode)) {
		err = PTR_ERR(inode);
		goto out;
	}
	shiftfs_dentry_set_lower(dentry, lower);
	lower = NULL;
	d_instantiate(dentry, inode);
	shiftfs_copyattr(dir);
	if (hardlink)
		shiftfs_copyattr(inode);

out:
	shiftfs_do_dirop_end(dentry, lower, true, old);
	return err;
}

static int shiftfs_create(SHIFTFS_CREATE_ARGS)
{
	return shiftfs_create_object(dir, dentry, (mode & 07777) | S_IFREG, 0,
				     NULL, NULL);
}

/* Our dentry is the directory's: never another (NULL, since 6.15). */
static shiftfs_mkdir_ret shiftfs_mkdir(struct shiftfs_idmap *idmap,
				       struct inode *dir, struct dentry *dentry,
				       umode_t mode)
{
	return SHIFTFS_MKDIR_RET(shiftfs_create_object(dir, dentry,
						       (mode & 07777) | S_IFDIR,
						       0, NULL, NULL));
}

static int shiftfs_mknod(struct shiftfs_idmap *idmap, struct inode *dir,
			 struct dentry *dentry, umode_t mode, dev_t rdev)
{
	return shiftfs_create_object(dir, dentry, mode, rdev, NULL, NULL);
}

static int shiftfs_symlink(struct shiftfs_idmap *idmap, struct inode *dir,
			   struct dentry *dentry, const char *link)
{
	return shiftfs_create_object(dir, dentry, S_IFLNK, 0, link, NULL);
}

static int shiftfs_link(struct dentry *old_dentry, struct inode *dir,
			struct dentry *new_dentry)
{
	return shiftfs_create_object(dir, new_dentry, 0, 0, NULL, old_dentry);
}

static int shiftfs_remove(struct inode *dir, struct dentry *dentry,
			  bool is_dir)
{
	struct inode *lower_dir = d_inode(shiftfs_dentry_lower(dentry->d_parent));
	const struct cred *old;
	struct dentry *lower;
	int err;

	lower = shiftfs_do_dirop_begin(dentry, false, &old);
	if (IS_ERR(lower))
		return PTR_ERR(lower);
	err = -ESTALE;
	if (lower != shiftfs_dentry_lower(dentry))
		goto out;

	if (is_dir)
		err = shiftfs_do_rmdir(lower_dir, lower);
	else
		err = shiftfs_do_unlink(lower_dir, lower);
	if (!err) {
		shiftfs_copyattr(dir);
		shiftfs_copyattr(d_inode(dentry));
		/* The pinned lower dentry is dead; never reuse this one. */
		d_drop(dentry);
	}
out:
	shiftfs_do_dirop_end(dentry, lower, true, old);
	return err;
}

static int shiftfs_unlink(struct inode *dir, struct dentry *dentry)
{
	return shiftfs_remove(dir, dentry, false);
}

static int shiftfs_rmdir(struct inode *dir, struct dentry *dentry)
{
	return shiftfs_remove(dir, dentry, true);
}

/*
 * Both names are looked up again with both lower directories locked
 * (shiftfs_start_renaming()): the source must be the lower dentry we
 * pinned, the target the one we pinned or, where we saw none, none.
 */
static int shiftfs_rename(struct shiftfs_idmap *idmap,
			  struct inode *olddir, struct dentry *old,
			  struct inode *newdir, struct dentry *new,
			  unsigned int flags)
{
	struct super_block *sb = olddir->i_sb;
	struct shiftfs_fs *fs = SHIFTFS_SB(sb);
	struct dentry *lower_old_parent = shiftfs_dentry_lower(old->d_parent);
	struct dentry *lower_new_parent = shiftfs_dentry_lower(new->d_parent);
	struct shiftfs_renaming r;
	const struct cred *oldcred;
	int err;

	err = mnt_want_write(fs->lower_mnt);
	if (err)
		return err;
	/* A whiteout is a new object, and the caller owns it. */
	if (flags & RENAME_WHITEOUT)
		oldcred = shiftfs_creds_owner_ids(sb);
	else
		oldcred = shiftfs_creds_caller_ids(sb);
	if (IS_ERR(oldcred)) {
		err = PTR_ERR(oldcred);
		goto out_drop_write;
	}

	err = shiftfs_start_renaming(&r, lower_old_parent, &old->d_name,
				     lower_new_parent, &new->d_name, flags);
	if (err)
		goto out_revert;

	err = -ESTALE;
	if (r.rd.old_dentry != shiftfs_dentry_lower(old))
		goto out_end;
	if (d_really_is_positive(new)) {
		if (r.rd.new_dentry != shiftfs_dentry_lower(new))
			goto out_end;
	} else if (d_really_is_positive(r.rd.new_dentry)) {
		/* Created underneath: don't replace what we never saw. */
		goto out_end;
	}

	err = shiftfs_do_rename(&r);
	if (!err) {
		shiftfs_copyattr(olddir);
		if (newdir != olddir)
			shiftfs_copyattr(newdir);
		shiftfs_copyattr(d_inode(old));
		if (d_really_is_positive(new))
			shiftfs_copyattr(d_inode(new));
	}

out_end:
	shiftfs_end_renaming(&r);
out_revert:
	shiftfs_creds_revert(sb, oldcred);
out_drop_write:
	mnt_drop_write(fs->lower_mnt);
	return err;
}

/* do_dentry_open() refuses O_DIRECT unless we can, checked after ->open. */
static int shiftfs_tmpfile_finish(struct inode *inode, struct file *file)
{
	struct file *real = file->private_data;

	if (real->f_mode & FMODE_CAN_ODIRECT)
		file->f_mode |= FMODE_CAN_ODIRECT;
	return 0;
}

/*
 * O_TMPFILE: the lower filesystem makes and opens the file (owned by the
 * caller's mapped ids); we wrap our dentry and file around it, the way
 * shiftfs_open() would have.
 */
static int shiftfs_tmpfile(struct shiftfs_idmap *idmap, struct inode *dir,
			   struct file *file, umode_t mode)
{
	struct dentry *dentry = file->f_path.dentry;
	struct super_block *sb = dir->i_sb;
	struct shiftfs_fs *fs = SHIFTFS_SB(sb);
	struct path parent;
	struct file *real;
	const struct cred *old;
	struct inode *inode;
	int err;

	shiftfs_lower_path(dentry->d_parent, &parent);
	err = mnt_want_write(fs->lower_mnt);
	if (err)
		return err;
	old = shiftfs_creds_owner_ids(sb);
	if (IS_ERR(old)) {
		err = PTR_ERR(old);
		goto out_drop_write;
	}
	real = shiftfs_tmpfile_open(file, &parent, mode, file->f_flags,
				    current_cred());
	shiftfs_creds_revert(sb, old);
	if (IS_ERR(real)) {
		err = PTR_ERR(real);
		goto out_drop_write;
	}

	inode = shiftfs_get_inode(sb, file_inode(real));
	if (IS_ERR(inode)) {
		err = PTR_ERR(inode);
		goto out_fput;
	}
	shiftfs_dentry_set_lower(dentry, dget(real->f_path.dentry));
	shiftfs_mark_tmpfile(file, inode);
	file->private_data = real;
	err = finish_open(file, dentry, shiftfs_tmpfile_finish);
	if (err)
		goto out_fput;
	goto out_drop_write;

out_fput:
	/* Without FMODE_OPENED our ->release() won't put it. */
	if (!(file->f_mode & FMODE_OPENED))
		fput(real);
out_drop_write:
	mnt_drop_write(fs->lower_mnt);
	return err;
}

const struct inode_operations shiftfs_dir_iops = {
	.lookup		= shiftfs_lookup,
	.create		= shiftfs_create,
	.mkdir		= shiftfs_mkdir,
	.mknod		= shiftfs_mknod,
	.symlink	= shiftfs_symlink,
	.link		= shiftfs_link,
	.unlink		= shiftfs_unlink,
	.rmdir		= shiftfs_rmdir,
	.rename		= shiftfs_rename,
	.tmpfile	= shiftfs_tmpfile,
	.fileattr_get	= shiftfs_fileattr_get,
	.fileattr_set	= shiftfs_fileattr_set,
	SHIFTFS_COMMON_IOPS
};
