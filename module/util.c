// SPDX-License-Identifier: GPL-2.0
/*
 * Credentials for calls into the lower filesystem, and keeping shiftfs
 * inodes and dentries in step with the lower ones.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/hash.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/fs.h>
#include <linux/highuid.h>
#include "shiftfs.h"

static inline u32 shiftfs_creds_hash(kuid_t fsuid, kgid_t fsgid)
{
	return hash_32(__kuid_val(fsuid) ^ (__kgid_val(fsgid) * 0x9e3779b9u),
		       SHIFTFS_CREDS_BITS);
}

/* The mount's cred for @fsuid/@fsgid, or NULL; never blocks. */
static const struct cred *shiftfs_creds_find(struct shiftfs_fs *fs,
					     kuid_t fsuid, kgid_t fsgid)
{
	struct hlist_head *head = &fs->creds[shiftfs_creds_hash(fsuid, fsgid)];
	const struct cred *cred = NULL;
	struct shiftfs_cred_ent *ent;

	rcu_read_lock();
	hlist_for_each_entry_rcu(ent, head, node) {
		if (uid_eq(ent->cred->fsuid, fsuid) &&
		    gid_eq(ent->cred->fsgid, fsgid)) {
			cred = ent->cred;
			break;
		}
	}
	rcu_read_unlock();
	return cred;
}

/*
 * The mounter's creds with fsuid/fsgid replaced.  Building one is a
 * prepare_creds() (an allocation plus LSM blob copies), too much for every
 * call, so each is made once, on the first call with those ids, and kept
 * until umount: read without a lock or a reference from then on.  The
 * mounter's own ids (container root mapped back to host root, by far the
 * most common case) never touch the table.  Past SHIFTFS_CREDS_MAX pairs of
 * ids (a caller cycling through setfsuid() values must not grow the mount
 * without bound) a call gets a cred of its own, put by
 * shiftfs_creds_revert(): slower, never wrong.
 */
static const struct cred *shiftfs_creds_for(struct shiftfs_fs *fs,
					    kuid_t fsuid, kgid_t fsgid)
{
	const struct cred *creator = fs->creator_cred;
	const struct cred *cred, *old;
	struct shiftfs_cred_ent *ent;
	struct cred *new;

	if (uid_eq(fsuid, creator->fsuid) && gid_eq(fsgid, creator->fsgid))
		return creator;
	cred = shiftfs_creds_find(fs, fsuid, fsgid);
	if (likely(cred))
		return cred;

	/* prepare_creds() copies current's subjective creds: the mounter's. */
	old = override_creds(creator);
	new = prepare_creds();
	revert_creds(old);
	if (!new)
		return ERR_PTR(-ENOMEM);
	new->fsuid = fsuid;
	new->fsgid = fsgid;

	ent = kmalloc(sizeof(*ent), GFP_KERNEL_ACCOUNT);
	if (!ent) {
		put_cred(new);
		return ERR_PTR(-ENOMEM);
	}
	spin_lock(&fs->creds_lock);
	/* Someone else may have added the same ids meanwhile. */
	cred = shiftfs_creds_find(fs, fsuid, fsgid);
	if (!cred && fs->nr_creds < SHIFTFS_CREDS_MAX) {
		ent->cred = new;
		hlist_add_head_rcu(&ent->node,
				   &fs->creds[shiftfs_creds_hash(fsuid, fsgid)]);
		WRITE_ONCE(fs->nr_creds, fs->nr_creds + 1);
		cred = new;
		new = NULL;
		ent = NULL;
	}
	spin_unlock(&fs->creds_lock);
	kfree(ent);
	if (!cred)
		return new;	/* a cred of the call's own */
	if (new)
		put_cred(new);
	return cred;
}

void shiftfs_creds_free(struct shiftfs_fs *fs)
{
	struct shiftfs_cred_ent *ent;
	struct hlist_node *tmp;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fs->creds); i++) {
		hlist_for_each_entry_safe(ent, tmp, &fs->creds[i], node) {
			put_cred(ent->cred);
			kfree(ent);
		}
		INIT_HLIST_HEAD(&fs->creds[i]);
	}
	fs->nr_creds = 0;
}

/*
 * Switch to the mounter's credentials with the caller's fsuid/fsgid mapped
 * down.  A caller whose ids have no mapping cannot own anything it would
 * create (@owner: -EOVERFLOW); for every other operation the overflow ids
 * stand in, since the access check was already made against the caller at
 * the shiftfs inode.
 */
static const struct cred *shiftfs_creds_mapped(struct super_block *sb,
					       bool owner)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(sb);
	const struct cred *cred;
	kuid_t fsuid = shiftfs_uid_down(fs, current_fsuid());
	kgid_t fsgid = shiftfs_gid_down(fs, current_fsgid());

	if (!uid_valid(fsuid) || !gid_valid(fsgid)) {
		if (owner)
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
	cred = shiftfs_creds_for(fs, fsuid, fsgid);
	if (IS_ERR(cred))
		return cred;
	return shiftfs_creds_install(cred);
}

/*
 * The caller's ids, for a call that writes: data, attributes, a name that
 * goes away.  Returns the creds to hand to shiftfs_creds_revert(), or an
 * ERR_PTR.
 */
const struct cred *shiftfs_creds_caller_ids(struct super_block *sb)
{
	return shiftfs_creds_mapped(sb, false);
}

/*
 * The ids that will own what the call creates: the caller's, or
 * -EOVERFLOW if they have no mapping.
 */
const struct cred *shiftfs_creds_owner_ids(struct super_block *sb)
{
	return shiftfs_creds_mapped(sb, true);
}

/*
 * shiftfs_creds_revert() left a cred of the mount's: put it if it was the
 * call's own, made when the table was full.  The table only grows, so such
 * a cred is never found in it.
 */
void shiftfs_creds_put_own(struct shiftfs_fs *fs, const struct cred *cur)
{
	if (shiftfs_creds_find(fs, cur->fsuid, cur->fsgid) != cur)
		put_cred(cur);
}

/*
 * Our owner and group, mapped from the lower ones: when the inode is made
 * (unconditionally: a recycled object's record could match by chance) and
 * after a chown underneath.  Under i_lock, so that concurrent refreshes
 * leave ids and record from the same read of the lower inode: the record
 * says "current" only for the ids beside it, which the lockless compare
 * in shiftfs_copy_access() relies on.
 */
void shiftfs_copy_ids(struct inode *inode, const struct inode *lower)
{
	struct shiftfs_inode *si = SHIFTFS_I(inode);
	const struct shiftfs_fs *fs = SHIFTFS_SB(inode->i_sb);
	kuid_t uid;
	kgid_t gid;

	spin_lock(&inode->i_lock);
	uid = KUIDT_INIT(READ_ONCE(lower->i_uid.val));
	gid = KGIDT_INIT(READ_ONCE(lower->i_gid.val));
	inode->i_uid = shiftfs_uid_up(fs, uid);
	inode->i_gid = shiftfs_gid_up(fs, gid);
	/* the ids before the record; pairs with shiftfs_copy_access() */
	smp_wmb();
	WRITE_ONCE(si->lower_uid.val, __kuid_val(uid));
	WRITE_ONCE(si->lower_gid.val, __kgid_val(gid));
	spin_unlock(&inode->i_lock);
}

/*
 * Refresh the attributes the VFS reads from our inode (permission checks,
 * setattr_prepare(), write paths) from the lower inode.  Called on every
 * open, change and ref-walk revalidation: store only what changed, so that
 * an inode read on many CPUs at once isn't written by all of them, and
 * skip the cmpxchg loop of inode_set_flags() when the flags already agree.
 */
void shiftfs_copyattr(struct inode *inode)
{
	shiftfs_copy_access(inode, shiftfs_inode_lower(inode));
	shiftfs_copy_times(inode, shiftfs_inode_lower(inode));
	shiftfs_copy_size(inode);
}

/* Consumes the reference on @lower. */
void shiftfs_dentry_set_lower(struct dentry *dentry, struct dentry *lower)
{
	struct dentry *old;

	/* d_lock: ref-walk d_revalidate() takes its reference under it. */
	spin_lock(&dentry->d_lock);
	old = dentry->d_fsdata;
	WRITE_ONCE(dentry->d_fsdata, lower);
	/* after d_fsdata: see shiftfs_record_seq() */
	smp_wmb();
	WRITE_ONCE(dentry->d_time, SHIFTFS_SEQ_UNKNOWN);
	spin_unlock(&dentry->d_lock);
	dput(old);
}
