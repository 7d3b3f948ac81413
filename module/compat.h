/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every VFS API difference between the kernels shiftfs builds for lives
 * here (Debian's 6.1, 6.12, 7.2 and 7.3 today), so that the rest of the
 * code reads like code for one kernel.  Keyed on LINUX_VERSION_CODE: out-of-tree
 * builds have no configure step to probe features with.
 */
#ifndef _SHIFTFS_COMPAT_H
#define _SHIFTFS_COMPAT_H

#include <linux/version.h>
#include <linux/cred.h>
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
#else
#define shiftfs_idmap user_namespace
#define SHIFTFS_NOP_IDMAP (&init_user_ns)
#define shiftfs_mnt_idmap(mnt) mnt_user_ns(mnt)
#endif

/*
 * 6.7 hid i_atime/i_mtime behind accessors (ctime came earlier).  Called
 * on every stat: compare first, store only what changed (a time store is
 * a call on 7.x, and hot inodes are read on every CPU).
 */
static inline void shiftfs_copy_times(struct inode *dst,
				      const struct inode *src)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	if (inode_get_atime_sec(dst) != inode_get_atime_sec(src) ||
	    inode_get_atime_nsec(dst) != inode_get_atime_nsec(src))
		inode_set_atime_to_ts(dst, inode_get_atime(src));
	if (inode_get_mtime_sec(dst) != inode_get_mtime_sec(src) ||
	    inode_get_mtime_nsec(dst) != inode_get_mtime_nsec(src))
		inode_set_mtime_to_ts(dst, inode_get_mtime(src));
	if (inode_get_ctime_sec(dst) != inode_get_ctime_sec(src) ||
	    inode_get_ctime_nsec(dst) != inode_get_ctime_nsec(src))
		inode_set_ctime_to_ts(dst, inode_get_ctime(src));
#else
	struct timespec64 c = inode_get_ctime(src);
	struct timespec64 d = inode_get_ctime(dst);

	if (!timespec64_equal(&dst->i_atime, &src->i_atime))
		dst->i_atime = src->i_atime;
	if (!timespec64_equal(&dst->i_mtime, &src->i_mtime))
		dst->i_mtime = src->i_mtime;
	if (!timespec64_equal(&c, &d))
		inode_set_ctime_to_ts(dst, c);
#endif
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
 * The lower getattr, as overlayfs does it in each release.  From 6.7 the
 * VFS calls a stacked ->getattr only after security_inode_getattr() has
 * run on the stacked path with the caller's credentials (6.7-6.x flag it
 * with AT_GETATTR_NOSEC; 6.8 upstream dropped the flag and overlayfs and
 * ecryptfs call vfs_getattr_nosec() unconditionally, so 7.x has neither
 * flag nor second hook): the lower inode gets no second LSM hook.  6.1's
 * overlayfs still asks the LSM about the lower file with the mounter's
 * credentials, and so do we there.
 */
static inline int shiftfs_vfs_getattr(const struct path *path,
				      struct kstat *stat, u32 request_mask,
				      unsigned int flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	return vfs_getattr_nosec(path, stat, request_mask, flags);
#else
	return vfs_getattr(path, stat, request_mask, flags);
#endif
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
static inline struct file *shiftfs_tmpfile_open(const struct file *user_file,
						const struct path *parent,
						umode_t mode, int flags,
						const struct cred *cred)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	return backing_tmpfile_open(user_file, flags, parent, mode, cred);
#else
	return vfs_tmpfile_open(SHIFTFS_NOP_IDMAP, parent, mode, flags, cred);
#endif
}

/*
 * File I/O on the backing file, with the caller's credentials for the
 * lower filesystem installed already (file.c).  Since 6.8 the VFS has
 * helpers for stacking filesystems: a read or write from AIO or io_uring
 * stays asynchronous (the lower file completes it, then our iocb), an
 * mmap goes through the security hook for backing files.  The helpers
 * install ctx->cred themselves: the creds we installed.  Before 6.8, the
 * same synchronously, as overlayfs did.  6.16 passes a kiocb, not a file
 * and position, to splice and ->end_write.
 */
static inline rwf_t shiftfs_iocb_to_rwf(int ifl)
{
	rwf_t flags = 0;

	if (ifl & IOCB_NOWAIT)
		flags |= RWF_NOWAIT;
	if (ifl & IOCB_HIPRI)
		flags |= RWF_HIPRI;
	if (ifl & IOCB_DSYNC)
		flags |= RWF_DSYNC;
	if (ifl & IOCB_SYNC)
		flags |= RWF_SYNC;
	if (ifl & IOCB_APPEND)
		flags |= RWF_APPEND;
	return flags;
}

/*
 * A read of the backing file that is over when the call returns: a copy
 * of the caller's kiocb without its completion, through the checks every
 * read makes (vfs_iocb_iter_read(): rw_verify_area() with the LSM hook,
 * fsnotify), with the creds the caller installed.  Cheaper than
 * vfs_iter_read(), which builds a kiocb of its own from scratch.
 */
static inline ssize_t shiftfs_read_now(struct file *real, struct kiocb *iocb,
				       struct iov_iter *iter)
{
	struct kiocb kiocb;
	ssize_t ret;

	/*
	 * Not without waiting if the real file cannot: 6.1's io_uring tries
	 * every regular file so, whatever its FMODE_NOWAIT.  EAGAIN sends
	 * it to a worker.
	 */
	if ((iocb->ki_flags & IOCB_NOWAIT) && !(real->f_mode & FMODE_NOWAIT))
		return -EAGAIN;
	kiocb_clone(&kiocb, iocb, real);
	ret = vfs_iocb_iter_read(real, &kiocb, iter);
	iocb->ki_pos = kiocb.ki_pos;
	return ret;
}

/* file.c: after data changed, possibly at an async completion. */
void shiftfs_file_modified(struct file *file);

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
static inline void shiftfs_backing_end_write(struct kiocb *iocb, ssize_t ret)
{
	shiftfs_file_modified(iocb->ki_filp);
}
#else
static inline void shiftfs_backing_end_write(struct file *file, loff_t pos,
					     ssize_t ret)
{
	shiftfs_file_modified(file);
}
#endif

static inline void shiftfs_backing_ctx(struct backing_file_ctx *ctx,
				       struct file *user_file, bool write)
{
	*ctx = (struct backing_file_ctx) {
		.cred		= current_cred(),
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 16, 0)
		.user_file	= user_file,
#endif
		.end_write	= write ? shiftfs_backing_end_write : NULL,
	};
}

/*
 * A read that may complete later, or a write, through the helpers (out of
 * line: their context stays off the common read path's stack).
 */
static noinline ssize_t shiftfs_do_backing_iter(struct file *real,
						struct kiocb *iocb,
						struct iov_iter *iter,
						bool write)
{
	struct backing_file_ctx ctx;

	shiftfs_backing_ctx(&ctx, iocb->ki_filp, write);
	if (write)
		return backing_file_write_iter(real, iter, iocb,
					       iocb->ki_flags, &ctx);
	return backing_file_read_iter(real, iter, iocb, iocb->ki_flags, &ctx);
}

static inline ssize_t shiftfs_file_read_iter(struct file *real,
					     struct kiocb *iocb,
					     struct iov_iter *iter)
{
	/*
	 * A synchronous read, or io_uring's first, non-blocking try of a
	 * buffered one (our file has FMODE_NOWAIT when the real one does,
	 * file.c): served from the page cache before the call returns, or
	 * EAGAIN, and io_uring retries from a worker without IOCB_NOWAIT.
	 * Neither completes later: read now, without the helper's context
	 * for an asynchronous completion.  Direct I/O from AIO and io_uring
	 * stays asynchronous.
	 */
	if (is_sync_kiocb(iocb) ||
	    (iocb->ki_flags & (IOCB_NOWAIT | IOCB_DIRECT)) == IOCB_NOWAIT)
		return shiftfs_read_now(real, iocb, iter);
	return shiftfs_do_backing_iter(real, iocb, iter, false);
}

static inline ssize_t shiftfs_file_write_iter(struct file *real,
					      struct kiocb *iocb,
					      struct iov_iter *iter)
{
	return shiftfs_do_backing_iter(real, iocb, iter, true);
}

static inline ssize_t shiftfs_file_splice_read(struct file *in,
					       struct file *real, loff_t *ppos,
					       struct pipe_inode_info *pipe,
					       size_t len, unsigned int flags)
{
	struct backing_file_ctx ctx;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	struct kiocb iocb;
	ssize_t ret;

	shiftfs_backing_ctx(&ctx, in, false);
	init_sync_kiocb(&iocb, in);
	iocb.ki_pos = *ppos;
	ret = backing_file_splice_read(real, &iocb, pipe, len, flags, &ctx);
	*ppos = iocb.ki_pos;
	return ret;
#else
	shiftfs_backing_ctx(&ctx, in, false);
	return backing_file_splice_read(real, ppos, pipe, len, flags, &ctx);
#endif
}

static inline int shiftfs_file_mmap(struct file *file, struct file *real,
				    struct vm_area_struct *vma)
{
	struct backing_file_ctx ctx;

	shiftfs_backing_ctx(&ctx, file, false);
	return backing_file_mmap(real, vma, &ctx);
}
#else
/* Every read completes before the call returns, as in overlayfs 6.1. */
static inline ssize_t shiftfs_file_read_iter(struct file *real,
					     struct kiocb *iocb,
					     struct iov_iter *iter)
{
	return shiftfs_read_now(real, iocb, iter);
}

static inline ssize_t shiftfs_file_write_iter(struct file *real,
					      struct kiocb *iocb,
					      struct iov_iter *iter)
{
	ssize_t ret;

	file_start_write(real);
	ret = vfs_iter_write(real, iter, &iocb->ki_pos,
			     shiftfs_iocb_to_rwf(iocb->ki_flags));
	file_end_write(real);
	shiftfs_file_modified(iocb->ki_filp);
	return ret;
}

/*
 * Before 6.5 a pipe iterator through our ->read_iter hands the lower
 * page-cache pages to the pipe (.splice_read is generic_file_splice_read);
 * 6.5 dropped pipe iterators, and the generic helper copies through
 * bounce pages: call the lower file's splice_read, as overlayfs does
 * (sendfile by busybox tar -c cost 1.36x plain with the copy).
 */
static inline ssize_t shiftfs_file_splice_read(struct file *in,
					       struct file *real, loff_t *ppos,
					       struct pipe_inode_info *pipe,
					       size_t len, unsigned int flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	return vfs_splice_read(real, ppos, pipe, len, flags);
#else
	return generic_file_splice_read(in, ppos, pipe, len, flags);
#endif
}

/* The mapping belongs to the lower file and its page cache. */
static inline int shiftfs_file_mmap(struct file *file, struct file *real,
				    struct vm_area_struct *vma)
{
	if (!real->f_op->mmap)
		return -ENODEV;
	if (WARN_ON_ONCE(file != vma->vm_file))
		return -EIO;
	vma_set_file(vma, real);
	return call_mmap(vma->vm_file, vma);
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

/*
 * Installing credentials around a lower call, by pointer and without a
 * reference.  Since 6.14 that is what override_creds() and revert_creds()
 * do (override_creds_light() before that, 6.13): use them.  On 6.1 and
 * 6.12 they take a reference on the cred and drop it, an atomic on one
 * cache line shared by every caller on every CPU, twice for each lower
 * call, so swap the pointer by hand as 6.14's do.  That is equivalent
 * there: only the task itself reads or writes its subjective cred
 * (current->cred), which is all either does; the reference guards nothing
 * shiftfs needs, since the mount holds the creds it installs until umount
 * and no call into it outlives the mount; lower code that keeps
 * current_cred() beyond the call takes its own reference, as it must with
 * any cred; and a nested override_creds() below us reverts to ours.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
#define shiftfs_override_creds(new)	override_creds(new)
#define shiftfs_revert_creds(old)	revert_creds(old)
#else
/* Installs @new; returns the creds it replaces. */
static inline const struct cred *shiftfs_swap_creds(const struct cred *new)
{
	return rcu_replace_pointer(current->cred, new, true);
}
#define shiftfs_override_creds(new)	shiftfs_swap_creds(new)
/* Back to @old; returns the creds being left. */
#define shiftfs_revert_creds(old)	shiftfs_swap_creds(old)
#endif

/*
 * Lookups by name in a lower directory.  6.16 made them take a struct qstr
 * and dropped lookup_one_len(), which is lookup_one() with the no-op idmap.
 * @base locked by the caller for shiftfs_lookup_one().
 */
static inline struct dentry *shiftfs_lookup_one(const struct qstr *name,
						struct dentry *base)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	struct qstr this = QSTR_LEN(name->name, name->len);

	return lookup_one(SHIFTFS_NOP_IDMAP, &this, base);
#else
	return lookup_one_len(name->name, base, name->len);
#endif
}

static inline struct dentry *
shiftfs_lookup_one_unlocked(const struct qstr *name, struct dentry *base)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
	struct qstr this = QSTR_LEN(name->name, name->len);

	return lookup_one_unlocked(SHIFTFS_NOP_IDMAP, &this, base);
#else
	return lookup_one_unlocked(SHIFTFS_NOP_IDMAP, name->name, base,
				   name->len);
#endif
}

/*
 * Creating and removing in a lower directory whose inode the caller has
 * locked.  6.19 took the directory out of vfs_create() (it is the
 * dentry's parent) and gave vfs_mknod(), vfs_mkdir(), vfs_symlink() and
 * vfs_rmdir() a struct delegated_inode, as vfs_link() and vfs_unlink()
 * had: overlayfs passes none and so do we (see shiftfs.h).
 */
static inline int shiftfs_vfs_create(struct inode *dir, struct dentry *dentry,
				     umode_t mode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
	return vfs_create(SHIFTFS_NOP_IDMAP, dentry, mode, NULL);
#else
	return vfs_create(SHIFTFS_NOP_IDMAP, dir, dentry, mode, true);
#endif
}

static inline int shiftfs_vfs_mknod(struct inode *dir, struct dentry *dentry,
				    umode_t mode, dev_t dev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
	return vfs_mknod(SHIFTFS_NOP_IDMAP, dir, dentry, mode, dev,
			 NULL);
#else
	return vfs_mknod(SHIFTFS_NOP_IDMAP, dir, dentry, mode, dev);
#endif
}

static inline int shiftfs_vfs_symlink(struct inode *dir, struct dentry *dentry,
				      const char *oldname)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
	return vfs_symlink(SHIFTFS_NOP_IDMAP, dir, dentry, oldname,
			   NULL);
#else
	return vfs_symlink(SHIFTFS_NOP_IDMAP, dir, dentry, oldname);
#endif
}

static inline int shiftfs_vfs_rmdir(struct inode *dir, struct dentry *dentry)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
	return vfs_rmdir(SHIFTFS_NOP_IDMAP, dir, dentry, NULL);
#else
	return vfs_rmdir(SHIFTFS_NOP_IDMAP, dir, dentry);
#endif
}

/*
 * mkdir, with the contract of 6.19's vfs_mkdir() on every kernel: it
 * returns the dentry of the new directory, which since 6.15 may be another
 * than @dentry (a filesystem that splices one: @dentry is then put); on
 * error @dentry is put and, since 6.19 (end_creating()), @dir unlocked.
 * Before 6.15 the filesystem may also leave @dentry unhashed or negative,
 * which the caller handles as for the other creations.
 */
static inline struct dentry *shiftfs_vfs_mkdir(struct inode *dir,
					       struct dentry *dentry,
					       umode_t mode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
	return vfs_mkdir(SHIFTFS_NOP_IDMAP, dir, dentry, mode, NULL);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
	struct dentry *ret = vfs_mkdir(SHIFTFS_NOP_IDMAP, dir, dentry, mode);

	if (IS_ERR(ret))
		inode_unlock(dir);
	return ret;
#else
	int err = vfs_mkdir(SHIFTFS_NOP_IDMAP, dir, dentry, mode);

	if (!err)
		return dentry;
	inode_unlock(dir);
	dput(dentry);
	return ERR_PTR(err);
#endif
}

/* 7.3 dropped ->create()'s "excl": the VFS checks O_EXCL itself. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 3, 0)
#define SHIFTFS_CREATE_ARGS struct shiftfs_idmap *idmap, struct inode *dir, \
			    struct dentry *dentry, umode_t mode
#else
#define SHIFTFS_CREATE_ARGS struct shiftfs_idmap *idmap, struct inode *dir, \
			    struct dentry *dentry, umode_t mode, bool excl
#endif

/* 6.15: ->mkdir returns the dentry it made, NULL for the one it was given. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
#define shiftfs_mkdir_ret struct dentry *
#define SHIFTFS_MKDIR_RET(err) ERR_PTR(err)
#else
#define shiftfs_mkdir_ret int
#define SHIFTFS_MKDIR_RET(err) (err)
#endif

/*
 * Renames in the lower filesystem: both directories locked, both names
 * looked up, the one an ancestor of the other refused, as the VFS does for
 * rename(2).  6.19 made lock_rename() private to fs/namei.c, for
 * start_renaming()/end_renaming(), and renamedata names parent dentries
 * where it named their inodes and two idmaps.  Use rd.old_dentry,
 * rd.new_dentry and rd.flags only.
 */
struct shiftfs_renaming {
	struct renamedata rd;
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 19, 0)
	struct dentry *old_parent;
	struct dentry *new_parent;
#endif
};

static inline int shiftfs_start_renaming(struct shiftfs_renaming *r,
					 struct dentry *old_parent,
					 const struct qstr *old_name,
					 struct dentry *new_parent,
					 const struct qstr *new_name,
					 unsigned int flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
	struct qstr old_last = QSTR_LEN(old_name->name, old_name->len);
	struct qstr new_last = QSTR_LEN(new_name->name, new_name->len);

	r->rd = (struct renamedata) {
		.mnt_idmap	= SHIFTFS_NOP_IDMAP,
		.old_parent	= old_parent,
		.new_parent	= new_parent,
		.flags		= flags,
	};
	return start_renaming(&r->rd, 0, &old_last, &new_last);
#else
	struct dentry *trap, *old, *new;
	int err;

	r->old_parent = old_parent;
	r->new_parent = new_parent;
	r->rd = (struct renamedata) {
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
		.old_mnt_idmap	= SHIFTFS_NOP_IDMAP,
		.new_mnt_idmap	= SHIFTFS_NOP_IDMAP,
#else
		.old_mnt_userns	= SHIFTFS_NOP_IDMAP,
		.new_mnt_userns	= SHIFTFS_NOP_IDMAP,
#endif
		.old_dir	= d_inode(old_parent),
		.new_dir	= d_inode(new_parent),
		.flags		= flags,
	};
	trap = lock_rename(new_parent, old_parent);
	if (IS_ERR(trap))
		return PTR_ERR(trap);
	old = shiftfs_lookup_one(old_name, old_parent);
	err = PTR_ERR(old);
	if (IS_ERR(old))
		goto out_unlock;
	new = shiftfs_lookup_one(new_name, new_parent);
	err = PTR_ERR(new);
	if (IS_ERR(new))
		goto out_dput_old;
	/* The source an ancestor of the target, or the other way round. */
	err = -EINVAL;
	if (old == trap)
		goto out_dput_new;
	err = (flags & RENAME_EXCHANGE) ? -EINVAL : -ENOTEMPTY;
	if (new == trap)
		goto out_dput_new;
	r->rd.old_dentry = old;
	r->rd.new_dentry = new;
	return 0;

out_dput_new:
	dput(new);
out_dput_old:
	dput(old);
out_unlock:
	unlock_rename(new_parent, old_parent);
	return err;
#endif
}

static inline void shiftfs_end_renaming(struct shiftfs_renaming *r)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
	end_renaming(&r->rd);
#else
	unlock_rename(r->new_parent, r->old_parent);
	dput(r->rd.old_dentry);
	dput(r->rd.new_dentry);
#endif
}

/*
 * 6.14 gave ->d_revalidate() the parent directory and a stable name.
 * shiftfs_d_revalidate() reads neither (it compares its lower dentry),
 * but passes them to a lower ->d_revalidate() as overlayfs does: a
 * snapshot of the name, the parent as it is now (-ECHILD in RCU walk
 * if it is going away).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
#define SHIFTFS_D_REVALIDATE_ARGS struct inode *dir, const struct qstr *name, \
				  struct dentry *dentry, unsigned int flags
#else
#define SHIFTFS_D_REVALIDATE_ARGS struct dentry *dentry, unsigned int flags
#endif

static inline int shiftfs_lower_d_revalidate(struct dentry *lower,
					     unsigned int flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
	struct name_snapshot n;
	struct dentry *parent;
	struct inode *dir;
	int ret;

	if (flags & LOOKUP_RCU) {
		parent = READ_ONCE(lower->d_parent);
		dir = d_inode_rcu(parent);
		if (!dir)
			return -ECHILD;
	} else {
		parent = dget_parent(lower);
		dir = d_inode(parent);
	}
	take_dentry_name_snapshot(&n, lower);
	ret = lower->d_op->d_revalidate(dir, &n.name, lower, flags);
	release_dentry_name_snapshot(&n);
	if (!(flags & LOOKUP_RCU))
		dput(parent);
	return ret;
#else
	return lower->d_op->d_revalidate(lower, flags);
#endif
}

/* 6.17: a superblock's default dentry operations are set with a helper. */
static inline void shiftfs_set_d_op(struct super_block *sb,
				    const struct dentry_operations *ops)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
	set_default_d_op(sb, ops);
#else
	sb->s_d_op = ops;
#endif
}

/* 6.18 renamed generic_delete_inode(): never keep an unused inode. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 18, 0)
#define shiftfs_drop_inode_always inode_just_drop
#else
#define shiftfs_drop_inode_always generic_delete_inode
#endif

/* 6.19 put i_state behind accessors. */
static inline bool shiftfs_inode_is_new(struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
	return inode_state_read_once(inode) & I_NEW;
#else
	return inode->i_state & I_NEW;
#endif
}

/* 6.17 renamed struct fileattr, as the inode operations see it. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define shiftfs_fileattr file_kattr
#else
#define shiftfs_fileattr fileattr
#endif

/*
 * Leases refused.  Since 6.19 a file_operations without ->setlease
 * refuses them (simple_nosetlease() is gone); before, it allowed them.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 19, 0)
#define SHIFTFS_NOSETLEASE
#else
#define SHIFTFS_NOSETLEASE .setlease = simple_nosetlease,
#endif

#endif /* _SHIFTFS_COMPAT_H */
