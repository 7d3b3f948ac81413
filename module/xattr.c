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
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xattr.h>
#include "shiftfs.h"

/*
 * security.capability as the lower filesystem shows it to the (init
 * namespace) mounter: v1 and v2 mean root id 0, v3 carries its root id.
 * Shown to us with the root id mapped up, as v3 (v2 when that is 0);
 * written back with it mapped down, as v2 when that is 0, so a root-owned
 * image keeps its native format.  A root id this mount cannot show reads
 * as no capability at all (-ENODATA), which is what exec makes of an
 * unmappable root id on any filesystem.  Anything else (no header we
 * know, a wrong size) is left alone for the kernel's own checks:
 * returns 0 then.
 */
static int shiftfs_caps_up(struct super_block *sb,
			   struct vfs_ns_cap_data *nscap, int size)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(sb);
	u32 magic, rootid = 0, up;

	if (size < XATTR_CAPS_SZ_1)
		return 0;
	magic = le32_to_cpu(nscap->magic_etc);
	switch (magic & VFS_CAP_REVISION_MASK) {
	case VFS_CAP_REVISION_1:
		if (size != XATTR_CAPS_SZ_1)
			return 0;
		/* Only 32 capabilities, and no inheritable high word. */
		nscap->data[1].permitted = 0;
		nscap->data[1].inheritable = 0;
		break;
	case VFS_CAP_REVISION_2:
		if (size != XATTR_CAPS_SZ_2)
			return 0;
		break;
	case VFS_CAP_REVISION_3:
		if (size != XATTR_CAPS_SZ_3)
			return 0;
		rootid = le32_to_cpu(nscap->rootid);
		break;
	default:
		return 0;
	}
	up = shiftfs_rootid_to_sb(sb, shiftfs_map_up(&fs->uid_map, rootid));
	if (up == (u32)-1)
		return -ENODATA;
	magic &= ~VFS_CAP_REVISION_MASK;
	if (up == 0) {
		nscap->magic_etc = cpu_to_le32(magic | VFS_CAP_REVISION_2);
		return XATTR_CAPS_SZ_2;
	}
	nscap->magic_etc = cpu_to_le32(magic | VFS_CAP_REVISION_3);
	nscap->rootid = cpu_to_le32(up);
	return XATTR_CAPS_SZ_3;
}

static int shiftfs_xattr_get(const struct xattr_handler *handler,
			     struct dentry *unused, struct inode *inode,
			     const char *name, void *value, size_t size)
{
	struct dentry *dentry, *lower;
	struct vfs_ns_cap_data caps;
	bool is_caps = !strcmp(name, XATTR_NAME_CAPS);
	const struct cred *old;
	int ret;

	/* Exec reading file capabilities: see shiftfs_exec_may_fcaps(). */
	if (is_caps && current->in_execve &&
	    !shiftfs_exec_may_fcaps(inode->i_sb))
		return -ENODATA;
	/* ->get is called with a NULL dentry from some LSM paths. */
	dentry = unused ? dget(unused) : d_find_any_alias(inode);
	if (!dentry)
		return -EOPNOTSUPP;
	lower = shiftfs_dentry_lower(dentry);

	old = shiftfs_creds_mounter(inode->i_sb);
	if (is_caps) {
		/*
		 * Fetch whole: translation may turn v1/v2 into the larger v3.
		 * Raw, as exec reads it: vfs_getxattr() would have the
		 * capability LSM refuse v1 with -EINVAL (the VFS checked the
		 * caller's right to read it at our inode).
		 */
		ret = __vfs_getxattr(lower, d_inode(lower), name, &caps,
				     sizeof(caps));
		if (ret >= 0)
			ret = shiftfs_caps_up(inode->i_sb, &caps, ret) ?: ret;
		else if (ret == -ERANGE)
			is_caps = false;
	}
	/* Not a capability we translate (larger than any): as it is. */
	if (!is_caps)
		ret = vfs_getxattr(SHIFTFS_NOP_IDMAP, lower, name, value,
				   size);
	shiftfs_creds_revert(inode->i_sb, old);
	dput(dentry);

	if (ret < 0 || !is_caps || !size)
		return ret;
	if (size < ret)
		return -ERANGE;
	memcpy(value, &caps, ret);
	return ret;
}

static int shiftfs_caps_down(struct super_block *sb,
			     struct vfs_ns_cap_data *caps,
			     const void *value, size_t size)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(sb);
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
	down = shiftfs_map_down(&fs->uid_map, shiftfs_rootid_from_sb(sb, rootid));
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

	err = shiftfs_userns_may_setxattr(inode, name);
	if (err)
		return err;
	if (value && !strcmp(name, XATTR_NAME_CAPS)) {
		err = shiftfs_caps_down(inode->i_sb, &caps, value, size);
		if (err < 0)
			return err;
		value = &caps;
		size = err;
	}

	err = mnt_want_write(fs->lower_mnt);
	if (err)
		return err;
	old = shiftfs_creds_caller_ids(inode->i_sb);
	if (IS_ERR(old)) {
		err = PTR_ERR(old);
		goto out;
	}
	if (value)
		err = shiftfs_do_setxattr(lower, name, value, size, flags);
	else
		err = shiftfs_do_removexattr(lower, name);
	shiftfs_creds_revert(inode->i_sb, old);
	shiftfs_copyattr(inode);
out:
	mnt_drop_write(fs->lower_mnt);
	return err;
}

ssize_t shiftfs_listxattr(struct dentry *dentry, char *list, size_t size)
{
	const struct cred *old;
	ssize_t ret, len;
	char *p, *out;

	old = shiftfs_creds_mounter(dentry->d_sb);
	ret = vfs_listxattr(shiftfs_dentry_lower(dentry), list, size);
	shiftfs_creds_revert(dentry->d_sb, old);
	if (ret <= 0 || !list || capable(CAP_SYS_ADMIN))
		return ret;

	/*
	 * The lower fs listed trusted.* for the mounter; the caller may not
	 * read them (the VFS says so per name), so don't name them either.
	 * A size query may overestimate, which callers cope with.
	 */
	for (p = out = list; p < list + ret; p += len) {
		len = strnlen(p, list + ret - p) + 1;
		if (!strncmp(p, XATTR_TRUSTED_PREFIX, XATTR_TRUSTED_PREFIX_LEN))
			continue;
		memmove(out, p, len);
		out += len;
	}
	return out - list;
}

#ifdef CONFIG_FS_POSIX_ACL
/*
 * POSIX ACLs carry ids in their ACL_USER/ACL_GROUP entries.  Up: entries
 * of unmapped ids become INVALID_*, which match no caller.  Down: an entry
 * we cannot map back fails the whole set with -EOVERFLOW.
 */
static struct posix_acl *shiftfs_acl_translate(struct shiftfs_fs *fs,
					       const struct posix_acl *acl,
					       bool up)
{
	struct posix_acl *new;
	int i;

	new = posix_acl_clone(acl, GFP_KERNEL);
	if (!new)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < new->a_count; i++) {
		struct posix_acl_entry *e = &new->a_entries[i];

		switch (e->e_tag) {
		case ACL_USER:
			e->e_uid = up ? shiftfs_uid_up(fs, e->e_uid) :
					shiftfs_uid_down(fs, e->e_uid);
			if (!up && !uid_valid(e->e_uid))
				goto overflow;
			break;
		case ACL_GROUP:
			e->e_gid = up ? shiftfs_gid_up(fs, e->e_gid) :
					shiftfs_gid_down(fs, e->e_gid);
			if (!up && !gid_valid(e->e_gid))
				goto overflow;
			break;
		}
	}
	return new;

overflow:
	posix_acl_release(new);
	return ERR_PTR(-EOVERFLOW);
}

/*
 * Permission checks.  Our inodes don't cache ACLs (ACL_DONT_CACHE), the
 * lower inode does; in RCU walk we can't allocate a translated copy, but
 * the common "no ACL at all" answer needs none.
 */
struct posix_acl *shiftfs_get_inode_acl(struct inode *inode, int type,
					bool rcu)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(inode->i_sb);
	struct inode *lower = shiftfs_inode_lower(inode);
	struct posix_acl *acl, *new;
	const struct cred *old;

	if (!IS_POSIXACL(lower))
		return NULL;
	if (rcu) {
		acl = get_cached_acl_rcu(lower, type);
		return acl ? ERR_PTR(-ECHILD) : NULL;
	}
	old = shiftfs_creds_mounter(inode->i_sb);
	acl = shiftfs_lower_get_inode_acl(lower, type);
	shiftfs_creds_revert(inode->i_sb, old);
	if (IS_ERR_OR_NULL(acl))
		return acl;
	new = shiftfs_acl_translate(fs, acl, true);
	posix_acl_release(acl);
	return new;
}

/* The new mode of a chmod-like ACL change, with S_ISGID as the caller. */
static int shiftfs_acl_kill_sgid(struct shiftfs_idmap *idmap,
				 struct dentry *dentry, struct inode *inode,
				 int type)
{
	struct iattr iattr = { .ia_valid = ATTR_KILL_SGID };

	/* Underneath, the mounter's CAP_FSETID would keep it. */
	if (!(inode->i_mode & S_ISGID) || type != ACL_TYPE_ACCESS ||
	    in_group_p(inode->i_gid) ||
	    capable_wrt_inode_uidgid(idmap, inode, CAP_FSETID))
		return 0;
	return shiftfs_setattr(idmap, dentry, &iattr);
}

static int shiftfs_lower_set_acl(struct shiftfs_fs *fs, struct dentry *lower,
				 int type, struct posix_acl *acl);

static int shiftfs_do_set_acl(struct shiftfs_idmap *idmap,
			      struct dentry *dentry, struct inode *inode,
			      struct posix_acl *acl, int type)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(inode->i_sb);
	struct posix_acl *lower_acl = NULL;
	const struct cred *old;
	int err;

	if (acl) {
		lower_acl = shiftfs_acl_translate(fs, acl, false);
		if (IS_ERR(lower_acl))
			return PTR_ERR(lower_acl);
	}
	err = mnt_want_write(fs->lower_mnt);
	if (err)
		goto out;
	old = shiftfs_creds_caller_ids(inode->i_sb);
	if (IS_ERR(old)) {
		err = PTR_ERR(old);
	} else {
		err = shiftfs_lower_set_acl(fs, shiftfs_dentry_lower(dentry),
					    type, lower_acl);
		shiftfs_creds_revert(inode->i_sb, old);
	}
	mnt_drop_write(fs->lower_mnt);
	shiftfs_copyattr(inode);
	/* Only once the ACL is set: a set that fails changes nothing. */
	if (!err)
		err = shiftfs_acl_kill_sgid(idmap, dentry, inode, type);
out:
	posix_acl_release(lower_acl);
	return err;
}

#if SHIFTFS_HAVE_ACL_IOPS
static int shiftfs_lower_set_acl(struct shiftfs_fs *fs, struct dentry *lower,
				 int type, struct posix_acl *acl)
{
	const char *name = posix_acl_xattr_name(type);
	int err;

	if (acl)
		return vfs_set_acl(SHIFTFS_NOP_IDMAP, lower, name, acl);
	err = vfs_remove_acl(SHIFTFS_NOP_IDMAP, lower, name);
	return err == -ENODATA ? 0 : err;
}

/* getxattr(system.posix_acl_*): the VFS maps our kuids to the caller's. */
struct posix_acl *shiftfs_get_acl(struct shiftfs_idmap *idmap,
				  struct dentry *dentry, int type)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(dentry->d_sb);
	struct posix_acl *acl, *new;
	const struct cred *old;

	if (!IS_POSIXACL(d_inode(shiftfs_dentry_lower(dentry))))
		return NULL;
	old = shiftfs_creds_mounter(dentry->d_sb);
	acl = vfs_get_acl(SHIFTFS_NOP_IDMAP, shiftfs_dentry_lower(dentry),
			  posix_acl_xattr_name(type));
	shiftfs_creds_revert(dentry->d_sb, old);
	if (IS_ERR(acl) && PTR_ERR(acl) == -ENODATA)
		return NULL;
	if (IS_ERR_OR_NULL(acl))
		return acl;
	new = shiftfs_acl_translate(fs, acl, true);
	posix_acl_release(acl);
	return new;
}

int shiftfs_set_acl(struct shiftfs_idmap *idmap, struct dentry *dentry,
		    struct posix_acl *acl, int type)
{
	return shiftfs_do_set_acl(idmap, dentry, d_inode(dentry), acl, type);
}
#else
/*
 * Before 6.2 ACLs travel as xattrs: the generic handlers turn them into
 * ->get_acl/->set_acl calls on our inode, and we write the lower one as
 * the xattr, in initial-namespace ids.
 */
static int shiftfs_lower_set_acl(struct shiftfs_fs *fs, struct dentry *lower,
				 int type, struct posix_acl *acl)
{
	const char *name = type == ACL_TYPE_ACCESS ?
			   XATTR_NAME_POSIX_ACL_ACCESS :
			   XATTR_NAME_POSIX_ACL_DEFAULT;
	void *value;
	int size, err;

	if (!acl) {
		err = shiftfs_do_removexattr(lower, name);
		return err == -ENODATA ? 0 : err;
	}
	size = posix_acl_xattr_size(acl->a_count);
	value = kmalloc(size, GFP_KERNEL);
	if (!value)
		return -ENOMEM;
	err = posix_acl_to_xattr(&init_user_ns, acl, value, size);
	if (err >= 0)
		err = shiftfs_do_setxattr(lower, name, value, size, 0);
	kfree(value);
	return err;
}

int shiftfs_set_acl(struct shiftfs_idmap *idmap, struct inode *inode,
		    struct posix_acl *acl, int type)
{
	struct dentry *dentry;
	int err;

	dentry = d_find_any_alias(inode);
	if (!dentry)
		return -EINVAL;
	err = shiftfs_do_set_acl(idmap, dentry, inode, acl, type);
	dput(dentry);
	return err;
}

/*
 * Before 6.2, a filesystem that leaves ACLs to somebody else (FUSE
 * without FUSE_POSIX_ACL, its SB_POSIXACL set all the same) passes
 * system.posix_acl_* through as plain xattrs: its server keeps them,
 * lists them and hands them back, while its ->get_acl() says "none" and
 * the kernel checks no permission against them.  Through the generic
 * handler we would answer "no ACL" for a name the lower listxattr()
 * lists (and overlayfs's copy-up from us would fail on it).  So where
 * the kernel's view has none, the lower xattr is asked too, and what it
 * holds is passed through with its ids translated, as 6.2's
 * fuse_get_acl() does on every kernel since; permission checks still
 * see none.  Setting needs nothing: our ->set_acl() writes the lower
 * xattr, which such a filesystem passes to its server.  Values here
 * carry initial-namespace ids: the syscall layer converts them for the
 * caller.
 */
static int shiftfs_acl_raw_get(const struct xattr_handler *handler,
			       struct dentry *dentry, struct inode *inode,
			       void *value, size_t size)
{
	struct shiftfs_fs *fs = SHIFTFS_SB(inode->i_sb);
	struct dentry *lower = shiftfs_dentry_lower(dentry);
	struct posix_acl *acl, *up;
	const struct cred *old;
	void *buf = NULL;
	ssize_t len;
	int tries = 3;

	old = shiftfs_creds_mounter(inode->i_sb);
	do {
		len = vfs_getxattr(SHIFTFS_NOP_IDMAP, lower, handler->name,
				   NULL, 0);
		if (len <= 0)
			break;
		kfree(buf);
		buf = kmalloc(len, GFP_KERNEL);
		if (!buf) {
			len = -ENOMEM;
			break;
		}
		/* -ERANGE: it grew in between; ask again */
		len = vfs_getxattr(SHIFTFS_NOP_IDMAP, lower, handler->name,
				   buf, len);
	} while (len == -ERANGE && --tries);
	shiftfs_creds_revert(inode->i_sb, old);
	if (len < 0) {
		kfree(buf);
		return len;
	}
	acl = posix_acl_from_xattr(&init_user_ns, buf, len);
	kfree(buf);
	if (IS_ERR_OR_NULL(acl))
		return acl ? PTR_ERR(acl) : -ENODATA;
	up = shiftfs_acl_translate(fs, acl, true);
	posix_acl_release(acl);
	if (IS_ERR(up))
		return PTR_ERR(up);
	len = posix_acl_to_xattr(&init_user_ns, up, value, size);
	posix_acl_release(up);
	return len;
}

static const struct xattr_handler *
shiftfs_acl_generic(const struct xattr_handler *handler)
{
	return handler->flags == ACL_TYPE_ACCESS ?
	       &posix_acl_access_xattr_handler :
	       &posix_acl_default_xattr_handler;
}

static int shiftfs_acl_xattr_get(const struct xattr_handler *handler,
				 struct dentry *unused, struct inode *inode,
				 const char *name, void *value, size_t size)
{
	const struct xattr_handler *generic = shiftfs_acl_generic(handler);
	struct dentry *dentry;
	int ret;

	ret = generic->get(generic, unused, inode, name, value, size);
	if (ret != -ENODATA || S_ISLNK(inode->i_mode))
		return ret;
	dentry = unused ? dget(unused) : d_find_any_alias(inode);
	if (!dentry)
		return ret;
	ret = shiftfs_acl_raw_get(handler, dentry, inode, value, size);
	dput(dentry);
	return ret;
}

static int shiftfs_acl_xattr_set(const struct xattr_handler *handler,
				 struct shiftfs_idmap *idmap,
				 struct dentry *dentry, struct inode *inode,
				 const char *name, const void *value,
				 size_t size, int flags)
{
	const struct xattr_handler *generic = shiftfs_acl_generic(handler);

	return generic->set(generic, idmap, dentry, inode, name, value, size,
			    flags);
}

static const struct xattr_handler shiftfs_acl_access_xattr_handler = {
	.name	= XATTR_NAME_POSIX_ACL_ACCESS,
	.flags	= ACL_TYPE_ACCESS,
	.get	= shiftfs_acl_xattr_get,
	.set	= shiftfs_acl_xattr_set,
};

static const struct xattr_handler shiftfs_acl_default_xattr_handler = {
	.name	= XATTR_NAME_POSIX_ACL_DEFAULT,
	.flags	= ACL_TYPE_DEFAULT,
	.get	= shiftfs_acl_xattr_get,
	.set	= shiftfs_acl_xattr_set,
};
#endif
#endif /* CONFIG_FS_POSIX_ACL */

static const struct xattr_handler shiftfs_xattr_handler = {
	.prefix	= "",
	.get	= shiftfs_xattr_get,
	.set	= shiftfs_xattr_set,
};

const struct xattr_handler *SHIFTFS_XATTR_CONST shiftfs_xattr_handlers[] = {
#if defined(CONFIG_FS_POSIX_ACL) && !SHIFTFS_HAVE_ACL_IOPS
	/* Before they match our catch-all handler. */
	&shiftfs_acl_access_xattr_handler,
	&shiftfs_acl_default_xattr_handler,
#endif
	&shiftfs_xattr_handler,
	NULL
};
