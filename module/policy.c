// SPDX-License-Identifier: GPL-2.0
/*
 * Who may gain what through a shiftfs mount, beyond the checks the VFS
 * makes on its own: the superblock of a mount from a user namespace
 * belongs to that namespace, and a host-root mount hands the map's ids to
 * whoever reaches it.  Lower operations run with the mounter's (or the
 * marker's) credentials, so every power the VFS would grant against the
 * superblock rather than against the caller is checked again here.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/user_namespace.h>
#include <linux/xattr.h>
#include "shiftfs.h"

/*
 * Checks the VFS makes against the superblock's user namespace rather
 * than the caller's.  On a superblock of a user namespace they would let
 * its root do what the lower filesystem, called with the marker's
 * credentials, must then not be asked to do.
 *
 * setattr_prepare() lets s_user_ns root chown an inode whose owner has no
 * mapping: here an underlying id the mark did not delegate.
 */
int shiftfs_userns_may_setattr(struct inode *inode, const struct iattr *attr)
{
	if (inode->i_sb->s_user_ns == &init_user_ns ||
	    !(attr->ia_valid & (ATTR_UID | ATTR_GID)))
		return 0;
	if (!uid_valid(inode->i_uid) || !gid_valid(inode->i_gid))
		return -EPERM;
	return 0;
}

/*
 * The root id in security.capability as the VFS hands it to a
 * superblock's xattr handlers, and expects it back: relative to the
 * superblock's user namespace (v2 meaning its root), not a kernel id.
 * The identity for host root's mounts.
 */
u32 shiftfs_rootid_from_sb(const struct super_block *sb, u32 rootid)
{
	return __kuid_val(make_kuid(sb->s_user_ns, rootid));
}

u32 shiftfs_rootid_to_sb(const struct super_block *sb, u32 kuid)
{
	if (kuid == (u32)-1)
		return kuid;
	return from_kuid(sb->s_user_ns, KUIDT_INIT(kuid));
}

/*
 * cap_inode_setxattr() lets s_user_ns root write security.* (LSM labels,
 * IMA/EVM) that the host reads as its own.  security.capability has its
 * own check and translation.
 */
int shiftfs_userns_may_setxattr(struct inode *inode, const char *name)
{
	if (inode->i_sb->s_user_ns == &init_user_ns ||
	    strncmp(name, XATTR_SECURITY_PREFIX, XATTR_SECURITY_PREFIX_LEN) ||
	    !strcmp(name, XATTR_NAME_CAPS))
		return 0;
	return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
}

/*
 * A host user must not gain the ids a host-root mount hands out by exec
 * of a setuid or setgid file (with uidmap=100000:0:65536, an admin's view
 * of a container's tree as root-owned, the container's setuid-root
 * binaries would be host root's).  The kernel only consults our
 * vfsmount's nosuid flag, the mounter's choice; so:
 *
 * - a lower mount's nosuid holds for every exec through us;
 * - on a mount from a user namespace the kernel honours the bits only for
 *   processes in that namespace (mnt_may_suid()), ids it maps: the
 *   container's own;
 * - on a host-root mount, a process in a user namespace only gets ids its
 *   namespace maps (bprm_fill_uid()), and one in the initial namespace
 *   only ids it has already (its euid, its groups) unless it holds
 *   CAP_SETUID / CAP_SETGID there.
 *
 * bprm_fill_uid() re-checks MAY_EXEC under the inode lock and gives the
 * ids up when that fails, as on a nosuid mount: shiftfs_permission()
 * fails that check (only that one: during execve, plain MAY_EXEC of a
 * regular file) when this says no.  The exec itself goes on.
 */
bool shiftfs_exec_may_setid(struct inode *inode)
{
	umode_t mode = inode->i_mode;

	if (SHIFTFS_SB(inode->i_sb)->lower_nosuid)
		return false;
	if (inode->i_sb->s_user_ns != &init_user_ns ||
	    current_user_ns() != &init_user_ns)
		return true;
	if ((mode & S_ISUID) && !uid_eq(inode->i_uid, current_euid()) &&
	    !ns_capable_noaudit(&init_user_ns, CAP_SETUID))
		return false;
	if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) &&
	    !gid_eq(inode->i_gid, current_egid()) && !in_group_p(inode->i_gid) &&
	    !ns_capable_noaudit(&init_user_ns, CAP_SETGID))
		return false;
	return true;
}

/*
 * The same for file capabilities, which exec reads through our
 * security.capability handler: there a "no" reads as no capability at
 * all (-ENODATA), as the kernel treats a nosuid mount.  On a host-root
 * mount the shown root id is relative to the initial namespace, so v2
 * (root id 0, for a reverse map the container's root) would give a host
 * user the capabilities over the host: only its holders of CAP_SETFCAP
 * get them.  In a user namespace the kernel grants them only where the
 * root id owns the caller's namespace (rootid_owns_currentns()).
 */
bool shiftfs_exec_may_fcaps(struct super_block *sb)
{
	if (SHIFTFS_SB(sb)->lower_nosuid)
		return false;
	if (sb->s_user_ns != &init_user_ns ||
	    current_user_ns() != &init_user_ns)
		return true;
	return ns_capable_noaudit(&init_user_ns, CAP_SETFCAP);
}
