// SPDX-License-Identifier: GPL-2.0
/*
 * shiftfs: superblock, mount-time checks and module glue.
 *
 * Based on the design of the 2016 shiftfs RFC by James Bottomley, rebuilt
 * the way fs/overlayfs stacks: its own inodes and dentries on top of the
 * lower ones, access checked at the shiftfs inode against the caller, and
 * lower operations run with the mounter's credentials.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/statfs.h>
#include "shiftfs.h"

static struct kmem_cache *shiftfs_inode_cachep;

static struct inode *shiftfs_alloc_inode(struct super_block *sb)
{
	struct shiftfs_inode *si;

	si = alloc_inode_sb(sb, shiftfs_inode_cachep, GFP_KERNEL);
	if (!si)
		return NULL;
	si->lower = NULL;
	return &si->vfs_inode;
}

static void shiftfs_free_inode(struct inode *inode)
{
	kmem_cache_free(shiftfs_inode_cachep, SHIFTFS_I(inode));
}

static void shiftfs_evict_inode(struct inode *inode)
{
	struct inode *lower;

	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	lower = SHIFTFS_I(inode)->lower;
	/* RCU walk may still look: shiftfs_inode_lower_rcu() */
	WRITE_ONCE(SHIFTFS_I(inode)->lower, NULL);
	iput(lower);
}

static void shiftfs_fs_free(struct shiftfs_fs *fs)
{
	unsigned long lower;
	void *dev;

	if (!fs)
		return;
	xa_for_each(&fs->devs, lower, dev)
		free_anon_bdev(xa_to_value(dev));
	xa_destroy(&fs->devs);
	shiftfs_creds_free(fs);
	if (fs->creator_cred)
		put_cred(fs->creator_cred);
	/* A private clone is long-term, like a kern_mount(). */
	if (fs->lower_mnt && fs->lower_shared)
		mntput(fs->lower_mnt);
	else if (fs->lower_mnt)
		kern_unmount(fs->lower_mnt);
	shiftfs_map_free(&fs->uid_map);
	shiftfs_map_free(&fs->gid_map);
	kfree(fs);
}

/*
 * Not ->put_super: the VFS only calls that once there is a root, and a
 * fill_super() that fails halfway must release what it took too.
 */
static void shiftfs_kill_sb(struct super_block *sb)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(sb);

	kill_anon_super(sb);
	shiftfs_fs_free(fs);
}

static int shiftfs_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct path lower;
	const struct cred *old;
	int err;

	shiftfs_lower_path(dentry, &lower);
	old = shiftfs_creds_caller_ids(dentry->d_sb);
	if (IS_ERR(old))
		return PTR_ERR(old);
	err = vfs_statfs(&lower, buf);
	shiftfs_creds_revert(dentry->d_sb, old);
	if (!err)
		buf->f_type = SHIFTFS_MAGIC;
	return err;
}

static int shiftfs_sync_fs(struct super_block *sb, int wait)
{
	struct super_block *lower_sb = SHIFTFS_SB(sb)->lower_mnt->mnt_sb;
	const struct cred *old;
	int err;

	/* As overlayfs: only syncfs() and umount wait; sync(2) reaches the
	 * lower superblock on its own.
	 */
	if (!wait || sb_rdonly(lower_sb))
		return 0;
	old = shiftfs_creds_caller_ids(sb);
	if (IS_ERR(old))
		return PTR_ERR(old);
	/*
	 * Under our own s_umount, held by the caller.  The lower superblock
	 * may be shiftfs too (stacked twice): its s_umount is of the same
	 * lock class, and always taken after ours, never before.
	 */
	down_read_nested(&lower_sb->s_umount, SINGLE_DEPTH_NESTING);
	err = sync_filesystem(lower_sb);
	up_read(&lower_sb->s_umount);
	shiftfs_creds_revert(sb, old);
	return err;
}

static int shiftfs_show_options(struct seq_file *m, struct dentry *root)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(root->d_sb);

	if (fs->mark)
		seq_puts(m, ",mark");
	if (READ_ONCE(fs->revoked))
		seq_puts(m, ",revoked");
	shiftfs_map_show(m, "uidmap", &fs->uid_map);
	shiftfs_map_show(m, "gidmap", &fs->gid_map);
	return 0;
}

static const struct super_operations shiftfs_super_ops = {
	.alloc_inode	= shiftfs_alloc_inode,
	.free_inode	= shiftfs_free_inode,
	.evict_inode	= shiftfs_evict_inode,
	/* Don't keep unused inodes: they pin lower inodes. */
	.drop_inode	= shiftfs_drop_inode_always,
	.statfs		= shiftfs_statfs,
	.sync_fs	= shiftfs_sync_fs,
	.show_options	= shiftfs_show_options,
	.umount_begin	= shiftfs_umount_begin,
};

/*
 * Who may mount.  With explicit maps (and to mark a tree): CAP_SYS_ADMIN
 * in the initial user namespace.  From a user namespace: only from a mark,
 * with maps derived from the namespace, which shiftfs_mark_lower() has
 * decided already (mark.c).
 */
static int shiftfs_may_mount(struct fs_context *fc, const struct path *lower)
{
	if (shiftfs_from_userns(fc))
		return 0;
	if (!capable(CAP_SYS_ADMIN)) {
		errorfc(fc, "mounting needs CAP_SYS_ADMIN in the initial user namespace");
		return -EPERM;
	}
	return shiftfs_mark_check_lower(fc, lower);
}

static int shiftfs_get_lower(struct fs_context *fc, struct path *lower)
{
	int err;

	if (shiftfs_from_userns(fc))
		return shiftfs_mark_lower(fc, lower);
	if (!fc->source)
		return invalfc(fc, "no source directory given");
	err = kern_path(fc->source, LOOKUP_FOLLOW, lower);
	if (err) {
		errorfc(fc, "cannot resolve source \"%s\": %d", fc->source,
			err);
		return err;
	}
	if (!d_is_dir(lower->dentry)) {
		err = invalfc(fc, "source \"%s\" is not a directory",
			      fc->source);
		goto out_put;
	}
	if (shiftfs_mnt_idmap(lower->mnt) != SHIFTFS_NOP_IDMAP) {
		err = invalfc(fc, "source \"%s\" is on an idmapped mount",
			      fc->source);
		goto out_put;
	}
	return 0;

out_put:
	path_put(lower);
	return err;
}

/*
 * The st_dev the lower root reports (for btrfs, its subvolume's, not the
 * superblock's s_dev): files that report it show our s_dev.
 */
static int shiftfs_lower_root_dev(struct shiftfs_fs *fs,
				  const struct path *lower)
{
	const struct cred *old;
	struct kstat stat;
	int err;

	old = override_creds(fs->creator_cred);
	err = vfs_getattr_nosec(lower, &stat, STATX_BASIC_STATS,
				AT_STATX_SYNC_AS_STAT);
	revert_creds(old);
	if (!err)
		fs->lower_dev = stat.dev;
	return err;
}

int shiftfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct shiftfs_fs_context *ctx = fc->fs_private;
	struct super_block *lower_sb;
	struct shiftfs_fs *fs;
	struct inode *root_inode;
	struct path lower;
	int err;

	/* From a user namespace they come with the mark (mark.c). */
	if (!shiftfs_from_userns(fc) && !ctx->uid.nr)
		return invalfc(fc, "at least one uidmap=FROM:TO:COUNT is required");
	if (!shiftfs_from_userns(fc) && !ctx->gid.nr)
		return invalfc(fc, "at least one gidmap=FROM:TO:COUNT is required");
	if (ctx->revoke)
		return invalfc(fc, "revoke ends an existing mark: reconfigure the mark with it (fspick, or mount -o remount,revoke)");

	err = shiftfs_get_lower(fc, &lower);
	if (err)
		return err;
	err = shiftfs_may_mount(fc, &lower);
	if (err)
		goto out_put_path;

	lower_sb = lower.mnt->mnt_sb;
	if (lower_sb->s_stack_depth >= FILESYSTEM_MAX_STACK_DEPTH) {
		err = invalfc(fc, "source \"%s\": maximum stacking depth exceeded",
			      fc->source);
		goto out_put_path;
	}

	err = -ENOMEM;
	fs = kzalloc(sizeof(*fs), GFP_KERNEL);
	if (!fs)
		goto out_put_path;
	spin_lock_init(&fs->creds_lock);
	xa_init(&fs->devs);
	sb->s_fs_info = fs;
	fs->mark = ctx->mark;

	err = shiftfs_map_build(&fs->uid_map, &ctx->uid);
	if (err)
		goto out_put_path;
	err = shiftfs_map_build(&fs->gid_map, &ctx->gid);
	if (err)
		goto out_put_path;

	if (ctx->mark_cred) {
		/* Not in any namespace we could clone it from. */
		fs->lower_mnt = mntget(lower.mnt);
		fs->lower_shared = true;
	} else {
		fs->lower_mnt = clone_private_mount(&lower);
	}
	if (IS_ERR(fs->lower_mnt)) {
		err = PTR_ERR(fs->lower_mnt);
		fs->lower_mnt = NULL;
		errorfc(fc, "cannot clone the mount of \"%s\": %d", fc->source,
			err);
		goto out_put_path;
	}

	if (ctx->mark_cred) {
		/* Prepared (below) when the mark was made. */
		fs->creator_cred = get_cred(ctx->mark_cred);
	} else {
		struct cred *cred = prepare_creds();

		err = -ENOMEM;
		if (!cred)
			goto out_put_path;
		/*
		 * As overlayfs: quotas and reserved blocks hold for whoever
		 * writes through us; the mounter's power to ignore them is
		 * not the caller's.
		 */
		cap_lower(cred->cap_effective, CAP_SYS_RESOURCE);
		fs->creator_cred = cred;
	}

	err = shiftfs_lower_root_dev(fs, &lower);
	if (err)
		goto out_put_path;

	sb->s_stack_depth = lower_sb->s_stack_depth + 1;
	sb->s_maxbytes = lower_sb->s_maxbytes;
	sb->s_time_gran = lower_sb->s_time_gran;
	sb->s_blocksize = lower_sb->s_blocksize;
	sb->s_blocksize_bits = lower_sb->s_blocksize_bits;
	sb->s_magic = SHIFTFS_MAGIC;
	sb->s_op = &shiftfs_super_ops;
	shiftfs_set_d_op(sb, &shiftfs_dentry_ops);
	sb->s_xattr = shiftfs_xattr_handlers;
	/* Let the lower filesystem apply umask or default ACLs, once. */
	sb->s_flags |= lower_sb->s_flags & SB_POSIXACL;
	/* Never trusted past the lower inode's: shiftfs_sync_nosec(). */
	sb->s_flags |= SB_NOSEC;
	/*
	 * What the lower mount forbids, we forbid: our vfsmount's flags are
	 * the mounter's choice, so nodev and noexec go on the superblock
	 * and nosuid is ours to enforce (shiftfs_exec_may_setid()).  Device
	 * nodes are never opened through a host-root mount: the map makes
	 * the container's root their owner.  (A user namespace's mounts are
	 * nodev anyway.)
	 */
	if ((lower.mnt->mnt_flags & MNT_NODEV) ||
	    sb->s_user_ns == &init_user_ns)
		sb->s_iflags |= SB_I_NODEV;
	if (lower.mnt->mnt_flags & MNT_NOEXEC)
		sb->s_iflags |= SB_I_NOEXEC;
	fs->lower_nosuid = lower.mnt->mnt_flags & MNT_NOSUID;

	root_inode = shiftfs_get_inode(sb, d_inode(lower.dentry));
	if (IS_ERR(root_inode)) {
		err = PTR_ERR(root_inode);
		goto out_put_path;
	}
	if (fs->mark)
		shiftfs_mark_opaque(sb, root_inode);
	sb->s_root = d_make_root(root_inode);
	if (!sb->s_root) {
		err = -ENOMEM;
		goto out_put_path;
	}
	sb->s_root->d_fsdata = dget(lower.dentry);
	path_put(&lower);
	return 0;

out_put_path:
	/* sb->s_fs_info is released by shiftfs_kill_sb(). */
	path_put(&lower);
	return err;
}

/* FS_USERNS_MOUNT: only from a mark, see shiftfs_may_mount(). */
struct file_system_type shiftfs_fs_type = {
	.owner			= THIS_MODULE,
	.name			= "shiftfs",
	.fs_flags		= FS_USERNS_MOUNT,
	.init_fs_context	= shiftfs_init_fs_context,
	.parameters		= shiftfs_fs_parameters,
	.kill_sb		= shiftfs_kill_sb,
};
MODULE_ALIAS_FS("shiftfs");

static void shiftfs_inode_init_once(void *foo)
{
	struct shiftfs_inode *si = foo;

	inode_init_once(&si->vfs_inode);
}

static int __init shiftfs_init(void)
{
	int err;

	shiftfs_inode_cachep = kmem_cache_create("shiftfs_inode",
						 sizeof(struct shiftfs_inode),
						 0, SLAB_RECLAIM_ACCOUNT |
						 SLAB_ACCOUNT,
						 shiftfs_inode_init_once);
	if (!shiftfs_inode_cachep)
		return -ENOMEM;
	err = register_filesystem(&shiftfs_fs_type);
	if (err)
		kmem_cache_destroy(shiftfs_inode_cachep);
	return err;
}

static void __exit shiftfs_exit(void)
{
	unregister_filesystem(&shiftfs_fs_type);
	/* Inodes are freed by RCU: wait before destroying their cache. */
	rcu_barrier();
	kmem_cache_destroy(shiftfs_inode_cachep);
}

module_init(shiftfs_init);
module_exit(shiftfs_exit);

MODULE_AUTHOR("shiftfs developers");
MODULE_DESCRIPTION("uid/gid shifting stacking filesystem");
MODULE_LICENSE("GPL");
