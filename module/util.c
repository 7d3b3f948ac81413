// SPDX-License-Identifier: GPL-2.0
/*
 * Credentials for calls into the lower filesystem, and keeping shiftfs
 * inodes and dentries in step with the lower ones.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/highuid.h>
#include "shiftfs.h"

/*
 * The mounter's credentials with fsuid/fsgid replaced.  Building one is a
 * prepare_creds() (an allocation plus LSM blob copies), far too much for
 * every call, so they are cached per mount.  Most callers of a shifted
 * mount are the handful of ids of one container, so a few entries with
 * round-robin replacement do; the mounter's own ids (container root mapped
 * back to host root, by far the most common case) never touch the cache.
 */
static const struct cred *shiftfs_cred_for(struct shiftfs_fs *fs,
					   kuid_t fsuid, kgid_t fsgid)
{
	const struct cred *creator = fs->creator_cred;
	const struct cred *old, *evict = NULL;
	struct shiftfs_cred_ent *ent;
	struct cred *new;
	unsigned int i;

	if (uid_eq(fsuid, creator->fsuid) && gid_eq(fsgid, creator->fsgid))
		return get_cred(creator);

	spin_lock(&fs->cred_lock);
	for (i = 0; i < SHIFTFS_CRED_CACHE; i++) {
		ent = &fs->cred_cache[i];
		if (ent->cred && uid_eq(ent->fsuid, fsuid) &&
		    gid_eq(ent->fsgid, fsgid)) {
			old = get_cred(ent->cred);
			spin_unlock(&fs->cred_lock);
			return old;
		}
	}
	spin_unlock(&fs->cred_lock);

	/* prepare_creds() copies current's subjective creds: the mounter's. */
	old = override_creds(creator);
	new = prepare_creds();
	revert_creds(old);
	if (!new)
		return ERR_PTR(-ENOMEM);
	new->fsuid = fsuid;
	new->fsgid = fsgid;

	spin_lock(&fs->cred_lock);
	ent = &fs->cred_cache[fs->cred_next];
	fs->cred_next = (fs->cred_next + 1) % SHIFTFS_CRED_CACHE;
	evict = ent->cred;
	ent->fsuid = fsuid;
	ent->fsgid = fsgid;
	ent->cred = get_cred(new);
	spin_unlock(&fs->cred_lock);
	if (evict)
		put_cred(evict);
	return new;
}

void shiftfs_cred_cache_free(struct shiftfs_fs *fs)
{
	unsigned int i;

	for (i = 0; i < SHIFTFS_CRED_CACHE; i++) {
		if (fs->cred_cache[i].cred)
			put_cred(fs->cred_cache[i].cred);
		fs->cred_cache[i].cred = NULL;
	}
}

/*
 * Switch to the credentials the lower filesystem sees: the mounter's, with
 * the caller's fsuid/fsgid mapped back.  A caller whose ids have no mapping
 * cannot own anything it would create (see the _create variant); for every
 * other operation the overflow ids stand in, since the access check was
 * already made against the caller at the shiftfs inode.
 */
static const struct cred *shiftfs_do_override(struct super_block *sb,
					      bool create)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(sb);
	const struct cred *cred, *old;
	kuid_t fsuid = shiftfs_uid_down(fs, current_fsuid());
	kgid_t fsgid = shiftfs_gid_down(fs, current_fsgid());

	if (!uid_valid(fsuid) || !gid_valid(fsgid)) {
		if (create)
			return ERR_PTR(-EOVERFLOW);
		/*
		 * Not the mounter's ids: to the lower filesystem they are
		 * host root's, which get more than access (ext4 hands its
		 * reserved blocks to resuid 0).  Access was decided at our
		 * inode already.
		 */
		fsuid = make_kuid(&init_user_ns, overflowuid);
		fsgid = make_kgid(&init_user_ns, overflowgid);
	}
	cred = shiftfs_cred_for(fs, fsuid, fsgid);
	if (IS_ERR(cred))
		return cred;
	old = override_creds(cred);
	/* override_creds() took its own reference. */
	put_cred(cred);
	return old;
}

/* Returns the creds to hand to revert_creds(), or an ERR_PTR. */
const struct cred *shiftfs_override_creds(struct super_block *sb)
{
	return shiftfs_do_override(sb, false);
}

/* As above, but -EOVERFLOW if the caller's fsuid/fsgid have no mapping. */
const struct cred *shiftfs_override_creds_create(struct super_block *sb)
{
	return shiftfs_do_override(sb, true);
}

/*
 * Reads, lookups and permission checks don't depend on fsuid: use the
 * mounter's creds as they are (writes do: see shiftfs_override_creds()).  Never fails and never allocates, so it is
 * fine in RCU path walk.
 */
const struct cred *shiftfs_override_mounter(struct super_block *sb)
{
	return override_creds(SHIFTFS_SB(sb)->creator_cred);
}

/*
 * Refresh the attributes the VFS reads from our inode (permission checks,
 * setattr_prepare(), write paths) from the lower inode.  Called on every
 * stat and revalidation: store only what changed, so that an inode read on
 * many CPUs at once isn't written by all of them, and skip the cmpxchg
 * loop of inode_set_flags() when the flags already agree.
 */
void shiftfs_copyattr(struct inode *inode)
{
	struct inode *lower = shiftfs_inode_lower(inode);
	loff_t size = i_size_read(lower);

	shiftfs_copy_access(inode);
	shiftfs_copy_times(inode, lower);
	if (i_size_read(inode) != size)
		i_size_write(inode, size);
	if (inode->i_nlink != lower->i_nlink)
		set_nlink(inode, lower->i_nlink);
}

/* Consumes the reference on @lower. */
void shiftfs_dentry_set_lower(struct dentry *dentry, struct dentry *lower)
{
	struct dentry *old;

	/* d_lock: ref-walk d_revalidate() takes its reference under it. */
	spin_lock(&dentry->d_lock);
	old = dentry->d_fsdata;
	WRITE_ONCE(dentry->d_fsdata, lower);
	spin_unlock(&dentry->d_lock);
	dput(old);
}
