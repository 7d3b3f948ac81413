// SPDX-License-Identifier: GPL-2.0
/*
 * Extended attributes, forwarded to the lower inode with the mounter's
 * credentials once the VFS has checked the caller's right to them at our
 * inode (trusted.* for init-ns CAP_SYS_ADMIN only, user.* only on files
 * and directories, ...).  Two kinds carry ids and are translated:
 * security.capability (the v3 rootid) and system.posix_acl_*.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/slab.h>
#include <linux/xattr.h>
#include "shiftfs.h"

/*
 * security.capability as the lower filesystem shows it to the (init
 * namespace) mounter: v2 means root id 0, v3 carries its root id.  Shown
 * to us with the root id mapped up; written back with it mapped down, as
 * v2 when that is 0, so a root-owned image keeps its native format.
 */
static int shiftfs_caps_up(struct shiftfs_fs *fs, void *value, int size,
			   size_t bufsize)
{
	struct vfs_ns_cap_data *nscap = value;
	u32 magic, rootid = 0, up;

	if (size < XATTR_CAPS_SZ_2)
		return -EINVAL;
	magic = le32_to_cpu(nscap->magic_etc);
	switch (magic & VFS_CAP_REVISION_MASK) {
	case VFS_CAP_REVISION_2:
		break;
	case VFS_CAP_REVISION_3:
		if (size != XATTR_CAPS_SZ_3)
			return -EINVAL;
		rootid = le32_to_cpu(nscap->rootid);
		break;
	default:
		/* v1 has no root id; nothing to translate. */
		return size;
	}
	up = shiftfs_map_up(&fs->uid_map, rootid);
	if (up == (u32)-1)
		return -EOVERFLOW;
	if (up == 0) {
		nscap->magic_etc = cpu_to_le32((magic & ~VFS_CAP_REVISION_MASK) |
					       VFS_CAP_REVISION_2);
		return XATTR_CAPS_SZ_2;
	}
	if (!bufsize)
		return XATTR_CAPS_SZ_3;
	if (bufsize < XATTR_CAPS_SZ_3)
		return -ERANGE;
	nscap->magic_etc = cpu_to_le32((magic & ~VFS_CAP_REVISION_MASK) |
				       VFS_CAP_REVISION_3);
	nscap->rootid = cpu_to_le32(up);
	return XATTR_CAPS_SZ_3;
}

static int shiftfs_xattr_get(const struct xattr_handler *handler,
			     struct dentry *unused, struct inode *inode,
			     const char *name, void *value, size_t size)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(inode->i_sb);
	struct dentry *dentry, *lower;
	struct vfs_ns_cap_data caps;
	bool is_caps = !strcmp(name, XATTR_NAME_CAPS);
	const struct cred *old;
	int ret;

	/* ->get is called with a NULL dentry from some LSM paths. */
	dentry = d_find_any_alias(inode);
	if (!dentry)
		return -EOPNOTSUPP;
	lower = shiftfs_dentry_lower(dentry);

	old = shiftfs_override_mounter(inode->i_sb);
	if (is_caps) {
		/* Fetch whole: translation may turn v2 into the larger v3. */
		ret = vfs_getxattr(SHIFTFS_NOP_IDMAP, lower, name, &caps,
				   sizeof(caps));
	} else {
		ret = vfs_getxattr(SHIFTFS_NOP_IDMAP, lower, name, value,
				   size);
	}
	revert_creds(old);
	dput(dentry);

	if (ret < 0 || !is_caps)
		return ret;
	ret = shiftfs_caps_up(fs, &caps, ret, sizeof(caps));
	if (ret < 0 || !size)
		return ret;
	if (size < ret)
		return -ERANGE;
	memcpy(value, &caps, ret);
	return ret;
}

static int shiftfs_caps_down(struct shiftfs_fs *fs, struct vfs_ns_cap_data *caps,
			     const void *value, size_t size)
{
	u32 magic, rootid = 0, down;

	if (size != XATTR_CAPS_SZ_2 && size != XATTR_CAPS_SZ_3)
		return -EINVAL;
	memcpy(caps, value, size);
	magic = le32_to_cpu(caps->magic_etc);
	switch (magic & VFS_CAP_REVISION_MASK) {
	case VFS_CAP_REVISION_2:
		break;
	case VFS_CAP_REVISION_3:
		if (size != XATTR_CAPS_SZ_3)
			return -EINVAL;
		rootid = le32_to_cpu(caps->rootid);
		break;
	default:
		return -EINVAL;
	}
	down = shiftfs_map_down(&fs->uid_map, rootid);
	if (down == (u32)-1)
		return -EOVERFLOW;
	if (down == 0) {
		caps->magic_etc = cpu_to_le32((magic & ~VFS_CAP_REVISION_MASK) |
					      VFS_CAP_REVISION_2);
		return XATTR_CAPS_SZ_2;
	}
	caps->magic_etc = cpu_to_le32((magic & ~VFS_CAP_REVISION_MASK) |
				      VFS_CAP_REVISION_3);
	caps->rootid = cpu_to_le32(down);
	return XATTR_CAPS_SZ_3;
}

static int shiftfs_xattr_set(const struct xattr_handler *handler,
			     struct shiftfs_idmap *idmap,
			     struct dentry *dentry, struct inode *inode,
			     const char *name, const void *value,
			     size_t size, int flags)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(inode->i_sb);
	struct dentry *lower = shiftfs_dentry_lower(dentry);
	struct vfs_ns_cap_data caps;
	const struct cred *old;
	int err;

	if (value && !strcmp(name, XATTR_NAME_CAPS)) {
		err = shiftfs_caps_down(fs, &caps, value, size);
		if (err < 0)
			return err;
		value = &caps;
		size = err;
	}

	err = mnt_want_write(fs->lower_mnt);
	if (err)
		return err;
	old = shiftfs_override_creds(inode->i_sb);
	if (IS_ERR(old)) {
		err = PTR_ERR(old);
		goto out;
	}
	if (value)
		err = vfs_setxattr(SHIFTFS_NOP_IDMAP, lower, name, value, size,
				   flags);
	else
		err = vfs_removexattr(SHIFTFS_NOP_IDMAP, lower, name);
	revert_creds(old);
	shiftfs_copyattr(inode);
out:
	mnt_drop_write(fs->lower_mnt);
	return err;
}

ssize_t shiftfs_listxattr(struct dentry *dentry, char *list, size_t size)
{
	const struct cred *old;
	ssize_t ret;

	old = shiftfs_override_mounter(dentry->d_sb);
	ret = vfs_listxattr(shiftfs_dentry_lower(dentry), list, size);
	revert_creds(old);
	return ret;
}

static const struct xattr_handler shiftfs_xattr_handler = {
	.prefix	= "",
	.get	= shiftfs_xattr_get,
	.set	= shiftfs_xattr_set,
};

const struct xattr_handler * SHIFTFS_XATTR_CONST shiftfs_xattr_handlers[] = {
	&shiftfs_xattr_handler,
	NULL
};
