/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every VFS API difference between the kernels shiftfs builds for lives
 * here (Debian 12's 6.1 and 6.12 today), so that the rest of the code reads
 * like code for one kernel.  Keyed on LINUX_VERSION_CODE: out-of-tree
 * builds have no configure step to probe features with.
 */
#ifndef _SHIFTFS_COMPAT_H
#define _SHIFTFS_COMPAT_H

#include <linux/version.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/posix_acl.h>
#include <linux/xattr.h>

/*
 * 6.3 replaced the struct user_namespace argument of inode operations and
 * vfs_*() helpers by struct mnt_idmap.  "struct shiftfs_idmap" names
 * whichever this kernel uses.  shiftfs refuses idmapped lower mounts, so
 * every call into the lower filesystem passes the no-op mapping.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define shiftfs_idmap mnt_idmap
#define SHIFTFS_NOP_IDMAP (&nop_mnt_idmap)
#define shiftfs_mnt_idmap(mnt) mnt_idmap(mnt)
#define SHIFTFS_RENAMEDATA_IDMAPS					\
	.old_mnt_idmap = SHIFTFS_NOP_IDMAP,				\
	.new_mnt_idmap = SHIFTFS_NOP_IDMAP
#else
#define shiftfs_idmap user_namespace
#define SHIFTFS_NOP_IDMAP (&init_user_ns)
#define shiftfs_mnt_idmap(mnt) mnt_user_ns(mnt)
#define SHIFTFS_RENAMEDATA_IDMAPS					\
	.old_mnt_userns = SHIFTFS_NOP_IDMAP,				\
	.new_mnt_userns = SHIFTFS_NOP_IDMAP
#endif

/* 6.7 hid i_atime/i_mtime behind accessors (ctime came earlier). */
static inline void shiftfs_copy_times(struct inode *dst,
				      const struct inode *src)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	inode_set_atime_to_ts(dst, inode_get_atime(src));
	inode_set_mtime_to_ts(dst, inode_get_mtime(src));
#else
	dst->i_atime = src->i_atime;
	dst->i_mtime = src->i_mtime;
#endif
	inode_set_ctime_to_ts(dst, inode_get_ctime(src));
}

/*
 * Lower regular files.  6.12 has backing files: the file's f_path is the
 * real (lower) path, the user path is remembered for /proc/<pid>/maps and
 * the file is not accounted against the open file limit.  6.1 has no such
 * thing; a plain file on the private lower mount does the same job.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#include <linux/backing-file.h>
static inline struct file *shiftfs_backing_open(const struct file *user_file,
						int flags,
						const struct path *real,
						const struct cred *cred)
{
	return backing_file_open(user_file, flags, real, cred);
}
#else
static inline struct file *shiftfs_backing_open(const struct file *user_file,
						int flags,
						const struct path *real,
						const struct cred *cred)
{
	return dentry_open(real, flags, cred);
}
#endif

/*
 * 6.7 (and stable) made the VFS pass AT_GETATTR_NOSEC down to stacked
 * ->getattr when the security hook already ran; vfs_getattr() WARNs on it.
 */
static inline int shiftfs_vfs_getattr(const struct path *path,
				      struct kstat *stat, u32 request_mask,
				      unsigned int flags)
{
#ifdef AT_GETATTR_NOSEC
	if (flags & AT_GETATTR_NOSEC)
		return vfs_getattr_nosec(path, stat, request_mask, flags);
#endif
	return vfs_getattr(path, stat, request_mask, flags);
}

/* 6.0 caches iocb flags in the file; keep them in step with f_flags. */
static inline void shiftfs_update_iocb_flags(struct file *file)
{
	file->f_iocb_flags = iocb_flags(file);
}

/*
 * An O_TMPFILE dentry gets its "#ino" name.  6.1's d_tmpfile() also drops
 * a link of the inode, which for us is the lower inode's business.
 */
static inline void shiftfs_mark_tmpfile(struct file *file,
					struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	d_mark_tmpfile(file, inode);
	d_instantiate(file->f_path.dentry, inode);
#else
	set_nlink(inode, 1);
	d_tmpfile(file, inode);
#endif
}

/* O_TMPFILE in the lower filesystem. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
static inline struct file *shiftfs_tmpfile_open(const struct file *user_file,
						const struct path *parent,
						umode_t mode, int flags,
						const struct cred *cred)
{
	return backing_tmpfile_open(user_file, flags, parent, mode, cred);
}
#else
static inline struct file *shiftfs_tmpfile_open(const struct file *user_file,
						const struct path *parent,
						umode_t mode, int flags,
						const struct cred *cred)
{
	return vfs_tmpfile_open(SHIFTFS_NOP_IDMAP, parent, mode, flags, cred);
}
#endif

/*
 * POSIX ACLs: 6.2 moved them from xattr handlers to ->get_acl/->set_acl
 * inode operations taking a dentry, and renamed the path-walk hook to
 * ->get_inode_acl.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define SHIFTFS_HAVE_ACL_IOPS 1
#define shiftfs_lower_get_inode_acl(inode, type) get_inode_acl(inode, type)
#else
#define SHIFTFS_HAVE_ACL_IOPS 0
#define shiftfs_lower_get_inode_acl(inode, type) get_acl(inode, type)
#endif

/*
 * Writes to the backing file.  Since 6.8 vfs_iter_write() takes freeze
 * protection itself; before, the caller had to.
 */
static inline ssize_t shiftfs_iter_write(struct file *real,
					 struct iov_iter *iter, loff_t *ppos,
					 rwf_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	return vfs_iter_write(real, iter, ppos, flags);
#else
	ssize_t ret;

	file_start_write(real);
	ret = vfs_iter_write(real, iter, ppos, flags);
	file_end_write(real);
	return ret;
#endif
}

/*
 * splice_read: our own page cache is empty, the data lives in the lower
 * file's.  Before 6.5 a pipe iterator through our ->read_iter hands the
 * lower page-cache pages to the pipe.  6.5 dropped pipe iterators: the
 * generic helper (copy_splice_read) copies through bounce pages, so call
 * the lower file's splice_read instead, as overlayfs does (sendfile by
 * busybox tar -c cost 1.36x plain with the copy).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define SHIFTFS_SPLICE_READ_LOWER 1
#else
#define SHIFTFS_SPLICE_READ_LOWER 0
#endif

/* 6.6 made s_xattr an array of const pointers. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define SHIFTFS_XATTR_CONST const
#else
#define SHIFTFS_XATTR_CONST
#endif

/*
 * File locks.  6.3 moved their API to <linux/filelock.h>; 6.9 moved the
 * fields locks and leases share into struct file_lock_core (fl->c.flc_*).
 * Lvalues, so that one name reads and retargets a request.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#include <linux/filelock.h>
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
#define shiftfs_fl_file(fl)	((fl)->c.flc_file)
#define shiftfs_fl_owner(fl)	((fl)->c.flc_owner)
#define SHIFTFS_FL_LIST		c.flc_list
#else
#define shiftfs_fl_file(fl)	((fl)->fl_file)
#define shiftfs_fl_owner(fl)	((fl)->fl_owner)
#define SHIFTFS_FL_LIST		fl_list
#endif

/*
 * Exec's denial of writes, taken on the file underneath too (file.c).
 * Stable kernels that skip it for files watched by pre-content fsnotify
 * events (6.14, backported to 6.1.y and 6.12.y) say so with
 * exe_file_deny_write_access() and define FMODE_FSNOTIFY_HSM with it:
 * do what exec does on the kernel we run on.
 */
#ifdef FMODE_FSNOTIFY_HSM
#define shiftfs_exe_deny_write(file)	exe_file_deny_write_access(file)
#define shiftfs_exe_allow_write(file)	exe_file_allow_write_access(file)
#else
#define shiftfs_exe_deny_write(file)	deny_write_access(file)
#define shiftfs_exe_allow_write(file)	allow_write_access(file)
#endif

#endif /* _SHIFTFS_COMPAT_H */
