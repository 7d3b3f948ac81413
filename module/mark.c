// SPDX-License-Identifier: GPL-2.0
/*
 * Marks: how an unprivileged container gets a shiftfs mount.
 *
 * Host root (CAP_SYS_ADMIN in the initial user namespace) marks a tree:
 *
 *	mount -t shiftfs -o mark,uidmap=0:100000:65536,gidmap=0:100000:65536 \
 *		/srv/rootfs /srv/rootfs
 *
 * A mark is a shiftfs superblock that holds a private clone of the lower
 * mount, the maps it allows and the marker's credentials.  It is an opaque
 * token: its root can be stat()ed, mounted over and unmounted, but not
 * opened, listed or walked into, not even by host root, so a mark left
 * behind grants nothing to anyone on the host.
 *
 * A process that is root in its own user namespace may then mount shiftfs
 * with the mark as its source (and no options).  The new superblock's
 * lower layer is the mark's lower tree; its maps are derived here from the
 * user namespace the mount was opened in ("INSIDE OUTSIDE COUNT" becomes
 * uidmap=INSIDE:OUTSIDE:COUNT), never taken from options; and they must be
 * allowed by the mark: every derived extent must lie inside one extent of
 * the mark with the same offset (OUTSIDE - INSIDE).  Equal maps are the
 * common case; a sub-range delegates less than the mark does.
 *
 * Operations on the lower filesystem then run with the marker's
 * credentials (fsuid/fsgid mapped back from the caller's), exactly as they
 * would for a mount host root made with the same maps: the access checks
 * that matter are made at the shiftfs inode against the caller.
 *
 * Unmarking revokes.  A mark is a mount, and every mount namespace copied
 * while it existed (any unshare -m, a container's own) keeps a copy after
 * host root unmounts its own; and a plain umount reaches no code of ours.
 * So host root revokes the mark explicitly, on its superblock, which every
 * copy shares: a reconfigure with "revoke" (fspick + fsconfig, or
 * mount -o remount,revoke), or a forced umount (->umount_begin).
 * shiftctl unmark revokes, then unmounts.  Mounts from a revoked mark are
 * refused; mounts already made from it are not affected.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/user_namespace.h>
#include <linux/xattr.h>
#include "shiftfs.h"

/* Opened from a user namespace: the mark rules apply (see above). */
bool shiftfs_from_userns(const struct fs_context *fc)
{
	return fc->user_ns != &init_user_ns;
}

/*
 * Options that carry authority (maps, mark) are host root's alone: from a
 * user namespace the maps are derived from the namespace itself.
 */
int shiftfs_mark_check_param(struct fs_context *fc, const char *key)
{
	if (!shiftfs_from_userns(fc))
		return 0;
	errorfc(fc, "%s is not accepted from a user namespace: the maps come from the namespace's own uid_map and gid_map",
		key);
	return -EPERM;
}

static struct shiftfs_fs *shiftfs_mark_of(const struct path *path)
{
	struct super_block *sb = path->mnt->mnt_sb;

	if (sb->s_type != &shiftfs_fs_type || path->dentry != path->mnt->mnt_root)
		return NULL;
	return SHIFTFS_SB(sb)->mark ? SHIFTFS_SB(sb) : NULL;
}

/*
 * The extents of a user namespace's map in shiftfs terms.  The kernel
 * keeps each extent's lower_first as a global (initial namespace) id,
 * whatever the nesting, which is what shiftfs shows: underlying id
 * "first" appears as kernel id "lower_first".  The map is written once,
 * before nr_extents is published (map_write()'s smp_wmb()).
 */
static int shiftfs_map_from_userns(struct fs_context *fc,
				   const struct uid_gid_map *map,
				   struct shiftfs_map_spec *spec,
				   const char *name)
{
	const struct uid_gid_extent *ext;
	u32 nr, i;

	nr = READ_ONCE(map->nr_extents);
	/* Pairs with map_write()'s smp_wmb(): extents before nr_extents. */
	smp_rmb();
	if (!nr) {
		errorfc(fc, "this user namespace has no %s yet", name);
		return -EPERM;
	}
	if (nr > SHIFTFS_MAX_EXTENTS) {
		errorfc(fc, "%s of this user namespace has too many extents", name);
		return -EPERM;
	}
	ext = nr <= UID_GID_MAP_MAX_BASE_EXTENTS ? map->extent : map->forward;
	for (i = 0; i < nr; i++) {
		spec->ext[i].lower = ext[i].first;
		spec->ext[i].upper = ext[i].lower_first;
		spec->ext[i].count = ext[i].count;
	}
	spec->nr = nr;
	return 0;
}

/*
 * Inside the mark, at the same offset (OUTSIDE - INSIDE) all along: in one
 * extent, or across adjacent extents of the mark with that offset, which
 * a mark given as several options may well have.  by_lower is sorted and
 * its extents do not overlap, so one pass follows the run.
 */
static bool shiftfs_extent_allowed(const struct shiftfs_idmap_tbl *mark,
				   const struct shiftfs_extent *e)
{
	u64 pos = e->lower, end = (u64)e->lower + e->count;
	const struct shiftfs_extent *m;
	unsigned int i;

	for (i = 0; i < mark->nr && pos < end; i++) {
		m = &mark->by_lower[i];
		if (pos < m->lower || pos >= (u64)m->lower + m->count)
			continue;
		if ((u64)e->upper + m->lower != (u64)m->upper + e->lower)
			return false;
		pos = (u64)m->lower + m->count;
	}
	return pos >= end;
}

static int shiftfs_spec_allowed(struct fs_context *fc,
				const struct shiftfs_idmap_tbl *mark,
				const struct shiftfs_map_spec *spec,
				const char *name)
{
	const struct shiftfs_extent *e;
	unsigned int i;

	for (i = 0; i < spec->nr; i++) {
		e = &spec->ext[i];
		if (!shiftfs_extent_allowed(mark, e)) {
			errorfc(fc, "%s=%u:%u:%u of this user namespace is not allowed by the mark on \"%s\"",
				name, e->lower, e->upper, e->count, fc->source);
			return -EPERM;
		}
	}
	return 0;
}

/*
 * A mount from a user namespace: @lower becomes the mark's lower tree
 * (references taken), the maps in the fs_context are derived from the
 * namespace, and the fs_context keeps the marker's credentials.
 */
int shiftfs_mark_lower(struct fs_context *fc, struct path *lower)
{
	struct shiftfs_fs_context *ctx = fc->fs_private;
	struct shiftfs_fs *mark;
	struct path path;
	int err;

	/* The VFS checked it too (FS_USERNS_MOUNT); say why. */
	if (!ns_capable(fc->user_ns, CAP_SYS_ADMIN)) {
		errorfc(fc, "mounting from a user namespace needs CAP_SYS_ADMIN in it");
		return -EPERM;
	}
	if (!fc->source)
		return invalfc(fc, "no source given: name a tree host root has marked");
	err = kern_path(fc->source, LOOKUP_FOLLOW, &path);
	if (err) {
		errorfc(fc, "cannot resolve source \"%s\": %d", fc->source, err);
		return err;
	}
	mark = shiftfs_mark_of(&path);
	if (!mark) {
		errorfc(fc, "source \"%s\" is not a shiftfs mark: from a user namespace only a tree host root has marked can be mounted",
			fc->source);
		err = -EPERM;
		goto out;
	}
	if (READ_ONCE(mark->revoked)) {
		errorfc(fc, "source \"%s\": the mark was revoked (the tree was unmarked): host root must mark it again",
			fc->source);
		err = -EPERM;
		goto out;
	}
	err = shiftfs_map_from_userns(fc, &fc->user_ns->uid_map, &ctx->uid,
				      "uid_map");
	if (!err)
		err = shiftfs_map_from_userns(fc, &fc->user_ns->gid_map,
					      &ctx->gid, "gid_map");
	if (!err)
		err = shiftfs_spec_allowed(fc, &mark->uid_map, &ctx->uid,
					   "uidmap");
	if (!err)
		err = shiftfs_spec_allowed(fc, &mark->gid_map, &ctx->gid,
					   "gidmap");
	if (err)
		goto out;

	lower->mnt = mntget(mark->lower_mnt);
	lower->dentry = dget(shiftfs_dentry_lower(path.dentry));
	ctx->mark_cred = get_cred(mark->creator_cred);
out:
	path_put(&path);
	return err;
}

/*
 * Host root's mounts.  A mark shows nothing, so it is no source for
 * anything but a user namespace's mount.  And a mark hands the marker's
 * credentials to every mount made from it: its tree must not be one a
 * user namespace controls (a filesystem mounted in one, FUSE included).
 */
int shiftfs_mark_check_lower(struct fs_context *fc, const struct path *lower)
{
	struct shiftfs_fs_context *ctx = fc->fs_private;
	struct super_block *lower_sb = lower->mnt->mnt_sb;

	if (lower_sb->s_type == &shiftfs_fs_type && SHIFTFS_SB(lower_sb)->mark)
		return invalfc(fc, "source \"%s\" is a shiftfs mark: only a user namespace mounts from it",
			       fc->source);
	if (ctx->mark && lower_sb->s_user_ns != &init_user_ns)
		return invalfc(fc, "mark: source \"%s\" is on a filesystem mounted in a user namespace",
			       fc->source);
	return 0;
}

/*
 * Reconfigure with "revoke": host root ends the mark for every copy of
 * it.  The VFS lets only CAP_SYS_ADMIN over the superblock's namespace
 * (the initial one: marks are host root's) reconfigure it; say so here
 * too, and why.  Once revoked, always: revoking again is no error.
 */
int shiftfs_mark_revoke(struct fs_context *fc, struct shiftfs_fs *fs)
{
	if (!fs->mark)
		return invalfc(fc, "revoke: this shiftfs mount is not a mark (umount it instead)");
	if (!capable(CAP_SYS_ADMIN)) {
		errorfc(fc, "revoke: only host root (CAP_SYS_ADMIN in the initial user namespace) ends a mark");
		return -EPERM;
	}
	WRITE_ONCE(fs->revoked, true);
	return 0;
}

/*
 * umount -f: the VFS asked for CAP_SYS_ADMIN over the initial namespace
 * already (a mark's s_user_ns).  A plain umount calls nothing here.
 */
void shiftfs_umount_begin(struct super_block *sb)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(sb);

	if (fs->mark && capable(CAP_SYS_ADMIN))
		WRITE_ONCE(fs->revoked, true);
}

static int shiftfs_mark_permission(struct shiftfs_idmap *idmap,
				   struct inode *inode, int mask)
{
	return -EACCES;
}

static int shiftfs_mark_setattr(struct shiftfs_idmap *idmap,
				struct dentry *dentry, struct iattr *attr)
{
	return -EPERM;
}

/* Unreachable (no MAY_EXEC), but a directory needs one to be walked into. */
static struct dentry *shiftfs_mark_lookup(struct inode *dir,
					  struct dentry *dentry,
					  unsigned int flags)
{
	return ERR_PTR(-EACCES);
}

static int shiftfs_mark_open(struct inode *inode, struct file *file)
{
	return -EACCES;
}

/* No lookup, no open, no xattrs: a directory of nothing. */
static const struct file_operations shiftfs_mark_fops = {
	.open		= shiftfs_mark_open,
};

static const struct inode_operations shiftfs_mark_iops = {
	.lookup		= shiftfs_mark_lookup,
	.permission	= shiftfs_mark_permission,
	.setattr	= shiftfs_mark_setattr,
};

void shiftfs_mark_opaque(struct super_block *sb, struct inode *root)
{
	sb->s_xattr = NULL;
	root->i_opflags &= ~IOP_XATTR;
	root->i_op = &shiftfs_mark_iops;
	root->i_fop = &shiftfs_mark_fops;
}
