/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shiftfs: a stacking filesystem that shows a directory tree with its uids
 * and gids shifted through a bijective map, and maps them back on writes.
 */
#ifndef _SHIFTFS_H
#define _SHIFTFS_H

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/cred.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/xattr.h>
#include <linux/xarray.h>

#include "compat.h"
struct shiftfs_fileattr;

#define SHIFTFS_MAGIC		0x6a656a62	/* "jejb", as the seed RFC */
#define SHIFTFS_MAX_EXTENTS	340		/* UID_GID_MAP_MAX_EXTENTS */
/*
 * Credentials for the ids of a mount's users, made on first use and kept
 * until umount (util.c): at most this many per mount, in a fixed hash.
 */
#define SHIFTFS_CREDS_MAX	256
#define SHIFTFS_CREDS_BITS	5

/* Underlying ids [lower, lower + count) appear as [upper, upper + count). */
struct shiftfs_extent {
	u32 lower;
	u32 upper;
	u32 count;
};

/*
 * One direction-agnostic map: the same extents twice, sorted by lower id
 * (for showing ids) and by upper id (for writing them back), so both
 * lookups are a binary search.
 */
struct shiftfs_idmap_tbl {
	unsigned int nr;
	struct shiftfs_extent *by_lower;
	struct shiftfs_extent *by_upper;
};

/* Maps as they are being parsed, in option order. */
struct shiftfs_map_spec {
	unsigned int nr;
	struct shiftfs_extent ext[SHIFTFS_MAX_EXTENTS];
};

struct shiftfs_fs_context {
	struct shiftfs_map_spec uid;
	struct shiftfs_map_spec gid;
	bool mark;
	/* Host root asked to end the mark (fspick "revoke"). */
	bool revoke;
	/* From a user namespace: the marker's, taken from the mark. */
	const struct cred *mark_cred;
};

/* The mounter's cred with fsuid/fsgid replaced: see util.c. */
struct shiftfs_cred_ent {
	struct hlist_node node;
	const struct cred *cred;
};

struct shiftfs_fs {
	/* Private clone of the source mount: user umounts don't affect us. */
	struct vfsmount *lower_mnt;
	/* Credentials of the mounter, taken once at mount time. */
	const struct cred *creator_cred;
	struct shiftfs_idmap_tbl uid_map;
	struct shiftfs_idmap_tbl gid_map;
	/* An opaque mark (mark.c). */
	bool mark;
	/*
	 * Unmarked: no more mounts from it, through any copy of it in any
	 * mount namespace.  Set once, read without a lock.
	 */
	bool revoked;
	/* lower_mnt is a mark's, shared: mntput(), not kern_unmount(). */
	bool lower_shared;
	/* The lower mount is nosuid: so is every exec through us. */
	bool lower_nosuid;
	/*
	 * st_dev: what the lower root reports shows as our s_dev; any other
	 * lower st_dev (btrfs subvolumes, overlayfs layers), which numbers
	 * its inodes on its own, gets an anonymous dev of ours, allocated on
	 * first stat: lower dev_t -> xa_mk_value(our dev_t).
	 */
	dev_t lower_dev;
	struct xarray devs;
	/*
	 * The creds of the ids calling through this mount, by (fsuid, fsgid):
	 * read under RCU without a lock, only ever added to until umount.
	 * creds_lock serializes the adding.
	 */
	struct hlist_head creds[1 << SHIFTFS_CREDS_BITS];
	unsigned int nr_creds;
	spinlock_t creds_lock;
};

struct shiftfs_inode {
	struct inode vfs_inode;
	/* Referenced; also the iget5 hash key, so hardlinks share us. */
	struct inode *lower;
	/*
	 * The lower owner and group our i_uid and i_gid were mapped from,
	 * written with them under i_lock (shiftfs_copy_ids()).
	 */
	kuid_t lower_uid;
	kgid_t lower_gid;
};

static inline struct shiftfs_fs *SHIFTFS_SB(const struct super_block *sb)
{
	return sb->s_fs_info;
}

static inline struct shiftfs_inode *SHIFTFS_I(const struct inode *inode)
{
	return container_of(inode, struct shiftfs_inode, vfs_inode);
}

static inline struct inode *shiftfs_inode_lower(const struct inode *inode)
{
	return SHIFTFS_I(inode)->lower;
}

/*
 * In RCU walk nothing pins our inode: its last reference may go while we
 * look, and shiftfs_evict_inode() clears ->lower.  NULL means "ask again
 * in ref-walk" (-ECHILD); a lower inode read here stays valid memory
 * until rcu_read_unlock(): inodes are freed after a grace period.
 */
static inline struct inode *shiftfs_inode_lower_rcu(const struct inode *inode)
{
	return READ_ONCE(SHIFTFS_I(inode)->lower);
}

/*
 * d_time: the lower dentry's d_seq when the names last matched (namei.c);
 * odd, as this, matches no sequence read outside a write section.
 */
#define SHIFTFS_SEQ_UNKNOWN	1UL

/* d_fsdata holds a reference on the lower dentry, negative ones included. */
static inline struct dentry *shiftfs_dentry_lower(const struct dentry *dentry)
{
	return READ_ONCE(dentry->d_fsdata);
}

static inline void shiftfs_lower_path(const struct dentry *dentry,
				      struct path *path)
{
	path->mnt = SHIFTFS_SB(dentry->d_sb)->lower_mnt;
	path->dentry = shiftfs_dentry_lower(dentry);
}

/* idmap.c */
int shiftfs_map_add(struct fs_context *fc, struct shiftfs_map_spec *spec,
		    const char *name, const char *value);
int shiftfs_map_build(struct shiftfs_idmap_tbl *tbl,
		      const struct shiftfs_map_spec *spec);
void shiftfs_map_free(struct shiftfs_idmap_tbl *tbl);
bool shiftfs_map_equal(const struct shiftfs_idmap_tbl *tbl,
		       const struct shiftfs_map_spec *spec);
u32 shiftfs_map_up_search(const struct shiftfs_idmap_tbl *tbl, u32 id);
u32 shiftfs_map_down_search(const struct shiftfs_idmap_tbl *tbl, u32 id);
void shiftfs_map_show(struct seq_file *m, const char *name,
		      const struct shiftfs_idmap_tbl *tbl);

/*
 * Underlying id -> id shown in the mount, or (u32)-1.  Every permission
 * check and stat maps ids, and almost every mount has the one extent a
 * container's uid_map has: that case is inline, the rest a binary search.
 */
static inline u32 shiftfs_map_up(const struct shiftfs_idmap_tbl *tbl, u32 id)
{
	const struct shiftfs_extent *e = tbl->by_lower;

	if (likely(tbl->nr == 1))
		return id - e->lower < e->count ? e->upper + (id - e->lower) :
						  (u32)-1;
	return shiftfs_map_up_search(tbl, id);
}

/* Id in the mount -> underlying id, or (u32)-1. */
static inline u32 shiftfs_map_down(const struct shiftfs_idmap_tbl *tbl,
				   u32 id)
{
	const struct shiftfs_extent *e = tbl->by_upper;

	if (likely(tbl->nr == 1))
		return id - e->upper < e->count ? e->lower + (id - e->upper) :
						  (u32)-1;
	return shiftfs_map_down_search(tbl, id);
}

static inline kuid_t shiftfs_uid_up(const struct shiftfs_fs *fs, kuid_t uid)
{
	if (!uid_valid(uid))
		return INVALID_UID;
	return KUIDT_INIT(shiftfs_map_up(&fs->uid_map, __kuid_val(uid)));
}

static inline kgid_t shiftfs_gid_up(const struct shiftfs_fs *fs, kgid_t gid)
{
	if (!gid_valid(gid))
		return INVALID_GID;
	return KGIDT_INIT(shiftfs_map_up(&fs->gid_map, __kgid_val(gid)));
}

static inline kuid_t shiftfs_uid_down(const struct shiftfs_fs *fs, kuid_t uid)
{
	if (!uid_valid(uid))
		return INVALID_UID;
	return KUIDT_INIT(shiftfs_map_down(&fs->uid_map, __kuid_val(uid)));
}

static inline kgid_t shiftfs_gid_down(const struct shiftfs_fs *fs, kgid_t gid)
{
	if (!gid_valid(gid))
		return INVALID_GID;
	return KGIDT_INIT(shiftfs_map_down(&fs->gid_map, __kgid_val(gid)));
}

/*
 * Inode flags the VFS checks at our inode, kept as the lower inode's.  Not
 * S_NOATIME: ours always has it (shiftfs_get_inode()).
 */
#define SHIFTFS_COPY_FLAGS (S_SYNC | S_APPEND | S_IMMUTABLE)

void shiftfs_copy_ids(struct inode *inode, const struct inode *lower);

/*
 * Refresh what access checks read, owner, group, mode and the append-only
 * and immutable flags, from the lower inode: a chown, chmod or chattr
 * made underneath must count at the next check, not at the next lookup.
 * Called on every ->permission(): the ids are compared as they are
 * underneath with those ours were mapped from, and only mapped again when
 * they differ.  Store only on change: hot directories are read on every
 * CPU.  Safe in RCU walk, with @lower from shiftfs_inode_lower_rcu()
 * (read once: ->lower may be cleared meanwhile).
 */
static inline void shiftfs_copy_access(struct inode *inode,
				       const struct inode *lower)
{
	struct shiftfs_inode *si = SHIFTFS_I(inode);
	unsigned int flags = READ_ONCE(lower->i_flags);
	umode_t mode = READ_ONCE(lower->i_mode);

	if (unlikely(READ_ONCE(lower->i_uid.val) !=
		     READ_ONCE(si->lower_uid.val) ||
		     READ_ONCE(lower->i_gid.val) !=
		     READ_ONCE(si->lower_gid.val)))
		shiftfs_copy_ids(inode, lower);
	/* the record before the ids it vouches for; see shiftfs_copy_ids() */
	smp_rmb();
	if (unlikely(inode->i_mode != mode))
		inode->i_mode = mode;
	if (unlikely((inode->i_flags ^ flags) & SHIFTFS_COPY_FLAGS))
		inode_set_flags(inode, flags & SHIFTFS_COPY_FLAGS,
				SHIFTFS_COPY_FLAGS);
}

/*
 * RCU walk, on a non-directory: are owner and mode as they are
 * underneath?  Those are what the VFS reads from it there before it
 * calls us, if it does (protected_symlinks, _fifos and _regular read the
 * owner; protected_hardlinks the owner and the setuid and setgid bits).
 * The group and the append-only and immutable flags are read only after
 * a ->permission() or a ->setattr() of ours has refreshed them, or are
 * checked again underneath (link()).  Loads and compares only, for the
 * fast path of d_revalidate(); on a difference shiftfs_copy_access()
 * refreshes everything.  The barrier is shiftfs_copy_access()'s: our
 * owner, read by the VFS after this, is at least as new as the record
 * found to match.
 */
static inline bool shiftfs_access_current(const struct inode *inode,
					  const struct inode *lower)
{
	bool same = READ_ONCE(lower->i_uid.val) ==
		    READ_ONCE(SHIFTFS_I(inode)->lower_uid.val);

	/* the record before the owner it vouches for */
	smp_rmb();
	return same && inode->i_mode == READ_ONCE(lower->i_mode);
}

/*
 * The size and the link count: what the VFS reads from our inode without
 * calling us first (copy_file_range() and remap checks, link()).
 */
static inline void shiftfs_copy_size(struct inode *inode)
{
	const struct inode *lower = SHIFTFS_I(inode)->lower;
	loff_t size = i_size_read(lower);

	if (unlikely(i_size_read(inode) != size))
		i_size_write(inode, size);
	if (unlikely(inode->i_nlink != lower->i_nlink))
		set_nlink(inode, lower->i_nlink);
}

/*
 * S_NOSEC says "no setuid bit, no capability to kill on write".  Only the
 * lower inode knows whether one appeared since (a chmod or setcap made
 * underneath clears its S_NOSEC): ours may not outlive it.  Call with
 * the inode locked, before file_remove_privs().
 */
static inline void shiftfs_sync_nosec(struct inode *inode)
{
	if (IS_NOSEC(inode) && !IS_NOSEC(SHIFTFS_I(inode)->lower))
		inode->i_flags &= ~S_NOSEC;
}

/*
 * Calls into the lower filesystem that change it, as overlayfs has them:
 * the no-op idmap (shiftfs refuses idmapped lower mounts) and a
 * pr_debug() in one place.  Callers hold the lower parent's lock and have
 * overridden credentials.
 *
 * No struct delegated_inode, as overlayfs: a delegation on the lower
 * object or directory (nfsd's, or F_SETDELEG by someone working on the
 * lower tree directly; through shiftfs leases and delegations are
 * refused) is recalled without waiting and the call fails with
 * -EWOULDBLOCK.  Waiting for the recall would mean dropping the locks and
 * starting over (do_unlinkat()); failing holds no inode reference and no
 * lock past the call, whatever the caller does.
 */
static inline int shiftfs_do_create(struct inode *dir, struct dentry *dentry,
				    umode_t mode)
{
	int err = shiftfs_vfs_create(dir, dentry, mode);

	pr_debug("create(%pd2, 0%o) = %i\n", dentry, mode, err);
	return err;
}

/*
 * The new directory's dentry, which may be another than @dentry; on error
 * @dentry is put and @dir unlocked (shiftfs_vfs_mkdir()).
 */
static inline struct dentry *shiftfs_do_mkdir(struct inode *dir,
					      struct dentry *dentry,
					      umode_t mode)
{
	struct dentry *ret;

	pr_debug("mkdir(%pd2, 0%o)\n", dentry, mode);
	ret = shiftfs_vfs_mkdir(dir, dentry, mode);
	pr_debug("...mkdir = %i\n", PTR_ERR_OR_ZERO(ret));
	return ret;
}

static inline int shiftfs_do_mknod(struct inode *dir, struct dentry *dentry,
				   umode_t mode, dev_t dev)
{
	int err = shiftfs_vfs_mknod(dir, dentry, mode, dev);

	pr_debug("mknod(%pd2, 0%o, 0%o) = %i\n", dentry, mode, dev, err);
	return err;
}

static inline int shiftfs_do_symlink(struct inode *dir, struct dentry *dentry,
				     const char *oldname)
{
	int err = shiftfs_vfs_symlink(dir, dentry, oldname);

	pr_debug("symlink(\"%s\", %pd2) = %i\n", oldname, dentry, err);
	return err;
}

static inline int shiftfs_do_link(struct dentry *old_dentry, struct inode *dir,
				  struct dentry *new_dentry)
{
	int err = vfs_link(old_dentry, SHIFTFS_NOP_IDMAP, dir, new_dentry,
			   NULL);

	pr_debug("link(%pd2, %pd2) = %i\n", old_dentry, new_dentry, err);
	return err;
}

static inline int shiftfs_do_unlink(struct inode *dir, struct dentry *dentry)
{
	int err = vfs_unlink(SHIFTFS_NOP_IDMAP, dir, dentry, NULL);

	pr_debug("unlink(%pd2) = %i\n", dentry, err);
	return err;
}

static inline int shiftfs_do_rmdir(struct inode *dir, struct dentry *dentry)
{
	int err = shiftfs_vfs_rmdir(dir, dentry);

	pr_debug("rmdir(%pd2) = %i\n", dentry, err);
	return err;
}

static inline int shiftfs_do_rename(struct shiftfs_renaming *r)
{
	int err = vfs_rename(&r->rd);

	pr_debug("rename(%pd2, %pd2, 0x%x) = %i\n", r->rd.old_dentry,
		 r->rd.new_dentry, r->rd.flags, err);
	return err;
}

static inline int shiftfs_do_setxattr(struct dentry *dentry, const char *name,
				      const void *value, size_t size,
				      int flags)
{
	int err = vfs_setxattr(SHIFTFS_NOP_IDMAP, dentry, name, value, size,
			       flags);

	pr_debug("setxattr(%pd2, \"%s\", %zu, 0x%x) = %i\n", dentry, name,
		 size, flags, err);
	return err;
}

static inline int shiftfs_do_removexattr(struct dentry *dentry,
					 const char *name)
{
	int err = vfs_removexattr(SHIFTFS_NOP_IDMAP, dentry, name);

	pr_debug("removexattr(%pd2, \"%s\") = %i\n", dentry, name, err);
	return err;
}

/* params.c */
extern const struct fs_parameter_spec shiftfs_fs_parameters[];
int shiftfs_init_fs_context(struct fs_context *fc);

/* super.c */
extern struct file_system_type shiftfs_fs_type;
int shiftfs_fill_super(struct super_block *sb, struct fs_context *fc);

/* mark.c */
bool shiftfs_from_userns(const struct fs_context *fc);
int shiftfs_mark_check_param(struct fs_context *fc, const char *key);
int shiftfs_mark_lower(struct fs_context *fc, struct path *lower);
int shiftfs_mark_check_lower(struct fs_context *fc, const struct path *lower);
void shiftfs_mark_opaque(struct super_block *sb, struct inode *root);
int shiftfs_mark_revoke(struct fs_context *fc, struct shiftfs_fs *fs);
void shiftfs_umount_begin(struct super_block *sb);

/* policy.c */
int shiftfs_userns_may_setattr(struct inode *inode, const struct iattr *attr);
int shiftfs_userns_may_setxattr(struct inode *inode, const char *name);
u32 shiftfs_rootid_from_sb(const struct super_block *sb, u32 rootid);
u32 shiftfs_rootid_to_sb(const struct super_block *sb, u32 kuid);
bool shiftfs_exec_may_setid(struct inode *inode);
bool shiftfs_exec_may_fcaps(struct super_block *sb);

/* util.c */
const struct cred *shiftfs_creds_caller_ids(struct super_block *sb);
const struct cred *shiftfs_creds_owner_ids(struct super_block *sb);
void shiftfs_creds_put_own(struct shiftfs_fs *fs, const struct cred *cur);
void shiftfs_creds_free(struct shiftfs_fs *fs);
void shiftfs_copyattr(struct inode *inode);
void shiftfs_dentry_set_lower(struct dentry *dentry, struct dentry *lower);

/* util.c, inline */
/*
 * Every call into the lower filesystem runs with credentials of the
 * mount's: the mounter's, which the lower filesystem trusts, and for a call
 * that changes the tree the caller's fsuid/fsgid mapped back down.  They
 * are installed by pointer, without a reference (shiftfs_override_creds()):
 * the mount holds them until umount (shiftfs_creds_free()).
 *
 * Installing and reverting are inline: they run around every lower call.
 */
static inline const struct cred *shiftfs_creds_install(const struct cred *new)
{
	return shiftfs_override_creds(new);
}

/*
 * The mounter's own ids.  Reads, lookups and permission checks don't
 * depend on fsuid (writes do: see shiftfs_creds_caller_ids()).  Never
 * fails and never allocates, so it is fine in RCU path walk.
 */
static inline const struct cred *shiftfs_creds_mounter(struct super_block *sb)
{
	return shiftfs_creds_install(SHIFTFS_SB(sb)->creator_cred);
}

/*
 * Back to the caller's credentials.  The ones being left are the mount's
 * (no reference to drop) unless the table was full when they were made:
 * then they may be the call's own.  Inline: on every lower call.
 */
static inline void shiftfs_creds_revert(struct super_block *sb,
					const struct cred *old)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(sb);
	const struct cred *cur = shiftfs_revert_creds(old);

	if (unlikely(cur != fs->creator_cred) &&
	    unlikely(READ_ONCE(fs->nr_creds) >= SHIFTFS_CREDS_MAX))
		shiftfs_creds_put_own(fs, cur);
}

/* The mounter's credentials around a call on an open file's real file. */
static inline const struct cred *shiftfs_creds_file(const struct file *file)
{
	return shiftfs_creds_mounter(file_inode(file)->i_sb);
}

static inline void shiftfs_creds_file_revert(const struct file *file,
					     const struct cred *old)
{
	shiftfs_creds_revert(file_inode(file)->i_sb, old);
}

/* namei.c */
extern const struct dentry_operations shiftfs_dentry_ops;
struct dentry *shiftfs_lookup(struct inode *dir, struct dentry *dentry,
			      unsigned int flags);
bool shiftfs_names_equal(const struct dentry *a, const struct dentry *b);

/* inode.c */
struct inode *shiftfs_get_inode(struct super_block *sb, struct inode *lower);
int shiftfs_permission(struct shiftfs_idmap *idmap, struct inode *inode,
		       int mask);
int shiftfs_getattr(struct shiftfs_idmap *idmap, const struct path *path,
		    struct kstat *stat, u32 request_mask,
		    unsigned int query_flags);
int shiftfs_setattr(struct shiftfs_idmap *idmap, struct dentry *dentry,
		    struct iattr *attr);
int shiftfs_fileattr_get(struct dentry *dentry,
			 struct shiftfs_fileattr *fa);
int shiftfs_fileattr_set(struct shiftfs_idmap *idmap, struct dentry *dentry,
			 struct shiftfs_fileattr *fa);
extern const struct inode_operations shiftfs_file_iops;
extern const struct inode_operations shiftfs_symlink_iops;
extern const struct inode_operations shiftfs_special_iops;

/* dir.c */
extern const struct inode_operations shiftfs_dir_iops;

/* file.c */
extern const struct file_operations shiftfs_file_fops;
int shiftfs_fsync(struct file *file, loff_t start, loff_t end, int datasync);

/* fifo.c */
extern const struct file_operations shiftfs_fifo_fops;

/* readdir.c */
extern const struct file_operations shiftfs_dir_fops;

/* xattr.c */
#ifdef CONFIG_FS_POSIX_ACL
struct posix_acl *shiftfs_get_inode_acl(struct inode *inode, int type,
					bool rcu);
#if SHIFTFS_HAVE_ACL_IOPS
struct posix_acl *shiftfs_get_acl(struct shiftfs_idmap *idmap,
				  struct dentry *dentry, int type);
int shiftfs_set_acl(struct shiftfs_idmap *idmap, struct dentry *dentry,
		    struct posix_acl *acl, int type);
#define SHIFTFS_ACL_IOPS						\
	.get_inode_acl	= shiftfs_get_inode_acl,			\
	.get_acl	= shiftfs_get_acl,				\
	.set_acl	= shiftfs_set_acl,
#else
int shiftfs_set_acl(struct shiftfs_idmap *idmap, struct inode *inode,
		    struct posix_acl *acl, int type);
#define SHIFTFS_ACL_IOPS						\
	.get_acl	= shiftfs_get_inode_acl,			\
	.set_acl	= shiftfs_set_acl,
#endif
#else
#define SHIFTFS_ACL_IOPS
#endif
extern const struct xattr_handler *SHIFTFS_XATTR_CONST shiftfs_xattr_handlers[];
ssize_t shiftfs_listxattr(struct dentry *dentry, char *list, size_t size);

/*
 * What the inode operations of every type but the symlink's share:
 * permission, attributes, the xattr list and the POSIX ACLs (inode.c,
 * dir.c).
 */
#define SHIFTFS_COMMON_IOPS						\
	.permission	= shiftfs_permission,				\
	.getattr	= shiftfs_getattr,				\
	.setattr	= shiftfs_setattr,				\
	.listxattr	= shiftfs_listxattr,				\
	SHIFTFS_ACL_IOPS

#endif /* _SHIFTFS_H */
