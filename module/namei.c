// SPDX-License-Identifier: GPL-2.0
/*
 * Lookup through the dcache.  Each shiftfs dentry pins the lower dentry it
 * was looked up as (negative ones too), and revalidation compares the two
 * so that changes made directly on the lower filesystem show through.
 *
 * The comparison is skipped while neither dentry has changed since they
 * were last seen to match: d_time holds both d_seq counts from then.  The
 * VFS bumps a dentry's d_seq on every d_move() and d_exchange() of it (its
 * name and parent), d_instantiate() and d_delete() (its inode) and
 * __d_drop() (its hashing), so equal counts mean the same name, parent,
 * inode and hashing on both sides.  What d_seq does not cover is checked
 * every time: that d_fsdata is still the lower dentry the counts were
 * taken from, that our parent still pins the lower dentry's parent, and
 * the lower filesystem's own d_revalidate().  A count read outside a
 * write section is even: SHIFTFS_SEQ_UNKNOWN (odd) matches none.  The
 * key is recorded by a lookup that finds a positive entry, and by any
 * revalidation that compared the names; the common case of every path
 * walk, RCU walk with the key matching and no lower d_revalidate(), is a
 * handful of loads without a stack frame (shiftfs_revalidate_fast()).
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/dcache.h>
#include <linux/namei.h>
#include "shiftfs.h"

static void shiftfs_seed_seq(struct dentry *dentry);

struct dentry *shiftfs_lookup(struct inode *dir, struct dentry *dentry,
			      unsigned int flags)
{
	struct dentry *lower_dir = shiftfs_dentry_lower(dentry->d_parent);
	struct inode *inode = NULL;
	struct dentry *lower, *alias;
	const struct cred *old;

	old = shiftfs_creds_mounter(dir->i_sb);
	lower = shiftfs_lookup_one_unlocked(&dentry->d_name, lower_dir);
	shiftfs_creds_revert(dir->i_sb, old);
	if (IS_ERR(lower))
		return lower;

	if (d_really_is_positive(lower)) {
		inode = shiftfs_get_inode(dir->i_sb, d_inode(lower));
		if (IS_ERR(inode)) {
			dput(lower);
			return ERR_CAST(inode);
		}
	}
	/* Not yet visible to anyone: no need for d_lock. */
	dentry->d_fsdata = lower;
	dentry->d_time = SHIFTFS_SEQ_UNKNOWN;
	alias = d_splice_alias(inode, dentry);
	/*
	 * A file just looked up is usually walked through again soon (a
	 * stat after a readdir, the second open): seed the key that lets
	 * d_revalidate() skip the name comparison.  Not for negative
	 * dentries, which a create is about to change anyway.
	 */
	if (!alias && inode)
		shiftfs_seed_seq(dentry);
	return alias;
}

static void shiftfs_d_release(struct dentry *dentry)
{
	dput(dentry->d_fsdata);
}

/* Compare two dentry names that may be changing under RCU walk. */
bool shiftfs_names_equal(const struct dentry *a, const struct dentry *b)
{
	const unsigned char *na = READ_ONCE(a->d_name.name);
	const unsigned char *nb = READ_ONCE(b->d_name.name);
	unsigned int len = READ_ONCE(a->d_name.len);
	unsigned int i;

	if (len != READ_ONCE(b->d_name.len))
		return false;
	/*
	 * A rename may leave len and name out of step; names are
	 * NUL-terminated, so stopping at a NUL never reads past one.  The
	 * caller's seqcount check throws a torn result away.
	 */
	for (i = 0; i < len; i++)
		if (na[i] != nb[i] || !na[i])
			return false;
	return true;
}

/*
 * A lower filesystem that folds case (ext4's +F directories) finds the
 * lower dentry under any spelling of our name: ask it, as its own lookup
 * did.  Its d_compare() is safe under d_lock and in RCU walk, but in RCU
 * walk our name may be changing under us: -ECHILD, retry in ref-walk.
 */
static int shiftfs_names_fold_equal(const struct dentry *dentry,
				    const struct dentry *lower, bool rcu)
{
	const struct dentry *lower_parent = READ_ONCE(lower->d_parent);

	if (!(lower_parent->d_flags & DCACHE_OP_COMPARE))
		return 0;
	if (rcu)
		return -ECHILD;
	return !lower_parent->d_op->d_compare(lower, lower->d_name.len,
					      lower->d_name.name,
					      &dentry->d_name);
}

/*
 * Is @lower still what @dentry stands for?  Renames, unlinks and creations
 * made directly on the lower filesystem make them differ.  Called either
 * with d_lock of both dentries held, or in RCU walk inside d_seq read
 * sections of both, which a rename, d_instantiate() or d_delete() bumps.
 * SHIFTFS_NAME_MATCH if it is, names compared; 1 if it is and no name is
 * involved, 0 if not, -ECHILD if RCU walk cannot tell.
 */
#define SHIFTFS_NAME_MATCH	2

static int shiftfs_lower_matches(struct dentry *dentry, struct dentry *lower,
				 bool weak, bool rcu)
{
	struct dentry *parent = READ_ONCE(dentry->d_parent);
	struct inode *inode = d_inode_rcu(dentry);
	struct inode *lower_inode = d_inode_rcu(lower);
	int ret;

	if (!inode != !lower_inode)
		return 0;
	if (inode && shiftfs_inode_lower(inode) != lower_inode)
		return 0;
	/*
	 * Not reached by name (weak: a jump through /proc/<pid>/fd, "." or
	 * a mount root), or not findable by name at all (the root, which
	 * pins a source that may itself be a never-hashed filesystem root;
	 * O_TMPFILE and unlinked-but-open files): only the object matters.
	 */
	if (weak || IS_ROOT(dentry) || d_unhashed(dentry))
		return 1;
	if (d_unhashed(lower))
		return 0;
	if (READ_ONCE(lower->d_parent) != shiftfs_dentry_lower(parent))
		return 0;
	/* Not the hashes: they are salted with the parent's address. */
	if (shiftfs_names_equal(dentry, lower))
		return SHIFTFS_NAME_MATCH;
	ret = shiftfs_names_fold_equal(dentry, lower, rcu);
	return ret > 0 ? SHIFTFS_NAME_MATCH : ret;
}

/* What d_time holds for the two d_seq counts (see the top); even. */
static inline unsigned long shiftfs_seq_key(unsigned int seq,
					    unsigned int lower_seq)
{
#if BITS_PER_LONG == 64
	return (unsigned long)seq << 32 | lower_seq;
#else
	return SHIFTFS_SEQ_UNKNOWN;	/* no room for both: always compare */
#endif
}

/*
 * Record @key, under which the dentries were seen to match, in RCU walk.
 * shiftfs_dentry_set_lower() may give @dentry another lower dentry
 * meanwhile; it stores d_fsdata, then SHIFTFS_SEQ_UNKNOWN: whichever order
 * the two sides' stores land in, the old @lower's count does not stay
 * recorded for the new one.
 */
static void shiftfs_record_seq(struct dentry *dentry, struct dentry *lower,
			       unsigned long key)
{
	WRITE_ONCE(dentry->d_time, key);
	/* our store before our load; pairs with set_lower()'s smp_wmb() */
	smp_mb();
	if (READ_ONCE(dentry->d_fsdata) != lower)
		WRITE_ONCE(dentry->d_time, SHIFTFS_SEQ_UNKNOWN);
}

/*
 * RCU walk: no locks, so that walks through a hot directory (the mount
 * root above all) don't all bounce its d_lock between CPUs.  Any change
 * to either dentry while we look sends the walk to ref-walk mode.
 */
static int shiftfs_revalidate_rcu(struct dentry *dentry, unsigned int flags,
				  bool weak)
{
	struct dentry *lower = shiftfs_dentry_lower(dentry);
	unsigned int seq, lower_seq;
	unsigned long key;
	int match;

	if (!lower)
		return -ECHILD;
	seq = raw_seqcount_begin(&dentry->d_seq);
	lower_seq = raw_seqcount_begin(&lower->d_seq);
	key = shiftfs_seq_key(seq, lower_seq);
	if (!weak && !(key & SHIFTFS_SEQ_UNKNOWN) &&
	    READ_ONCE(dentry->d_time) == key)
		/* unchanged since they matched; the parent is not in d_seq */
		match = READ_ONCE(lower->d_parent) ==
			shiftfs_dentry_lower(READ_ONCE(dentry->d_parent));
	else
		match = shiftfs_lower_matches(dentry, lower, weak, true);
	if (read_seqcount_retry(&lower->d_seq, lower_seq) ||
	    read_seqcount_retry(&dentry->d_seq, seq) ||
	    READ_ONCE(dentry->d_fsdata) != lower)
		return -ECHILD;
	if (match <= 0)
		return match;
	if (match == SHIFTFS_NAME_MATCH && !(key & SHIFTFS_SEQ_UNKNOWN))
		shiftfs_record_seq(dentry, lower, key);
	if (!weak && (lower->d_flags & DCACHE_OP_REVALIDATE))
		return shiftfs_lower_d_revalidate(lower, flags);
	if (weak && (lower->d_flags & DCACHE_OP_WEAK_REVALIDATE))
		return -ECHILD;
	return 1;
}

/*
 * Record the key under which @dentry and its lower dentry match, if they
 * do; returns what shiftfs_lower_matches() said.  Called with both
 * d_locks held (@lower's nested in @dentry's); shiftfs_match_and_record()
 * takes @lower's.  Both d_seq are then even and stable: their writers
 * hold the d_locks.
 */
static int shiftfs_match_and_record_locked(struct dentry *dentry,
					   struct dentry *lower, bool weak)
{
	int match;

	lockdep_assert_held(&dentry->d_lock);
	lockdep_assert_held(&lower->d_lock);
	match = shiftfs_lower_matches(dentry, lower, weak, false);
	if (match == SHIFTFS_NAME_MATCH)
		WRITE_ONCE(dentry->d_time,
			   shiftfs_seq_key(raw_seqcount_begin(&dentry->d_seq),
					   raw_seqcount_begin(&lower->d_seq)));
	return match;
}

static int shiftfs_match_and_record(struct dentry *dentry,
				    struct dentry *lower, bool weak)
{
	int match;

	spin_lock_nested(&lower->d_lock, DENTRY_D_LOCK_NESTED);
	match = shiftfs_match_and_record_locked(dentry, lower, weak);
	spin_unlock(&lower->d_lock);
	return match;
}

/* After a lookup: record the key if the two match, as ref-walk does. */
static void shiftfs_seed_seq(struct dentry *dentry)
{
	spin_lock(&dentry->d_lock);
	if (dentry->d_fsdata)
		shiftfs_match_and_record(dentry, dentry->d_fsdata, false);
	spin_unlock(&dentry->d_lock);
}

/* Everything but the fast path of shiftfs_d_revalidate(). */
static noinline int shiftfs_revalidate_common(struct dentry *dentry,
					      unsigned int flags, bool weak)
{
	struct dentry *lower;
	int match, ret = 1;

	if (flags & LOOKUP_RCU)
		return shiftfs_revalidate_rcu(dentry, flags, weak);

	/*
	 * Our d_lock keeps d_fsdata, and the reference it holds, in place
	 * while we take ours; that is taken under the lower dentry's own
	 * d_lock, nested, never with dget(): lockref_get() would take that
	 * lock as a second d_lock of the same lockdep class.
	 */
	spin_lock(&dentry->d_lock);
	lower = dentry->d_fsdata;
	if (WARN_ON_ONCE(!lower)) {
		spin_unlock(&dentry->d_lock);
		return 0;
	}
	spin_lock_nested(&lower->d_lock, DENTRY_D_LOCK_NESTED);
	dget_dlock(lower);
	match = shiftfs_match_and_record_locked(dentry, lower, weak);
	spin_unlock(&lower->d_lock);
	spin_unlock(&dentry->d_lock);
	if (!match) {
		ret = 0;
		goto out;
	}

	if (!weak && (lower->d_flags & DCACHE_OP_REVALIDATE))
		ret = shiftfs_lower_d_revalidate(lower, flags);
	else if (weak && (lower->d_flags & DCACHE_OP_WEAK_REVALIDATE))
		ret = lower->d_op->d_weak_revalidate(lower, flags);
	if (ret > 0 && d_really_is_positive(dentry))
		shiftfs_copyattr(d_inode(dentry));
out:
	dput(lower);
	return ret;
}

/*
 * The common case of every shiftfs component of every path walk, kept
 * to a handful of loads: RCU walk, both dentries unchanged since they
 * were seen to match (d_time holds their key), the lower dentry still a
 * child of our parent's, and no lower d_revalidate() to ask.  1 if so,
 * -ECHILD if something changed while we looked, 0 for "ask the slow
 * path", which decides everything else.
 */
static __always_inline int shiftfs_revalidate_fast(struct dentry *dentry)
{
	struct dentry *lower = READ_ONCE(dentry->d_fsdata);
	unsigned int seq, lower_seq;
	unsigned long key;

	if (unlikely(!lower))
		return 0;
	seq = raw_seqcount_begin(&dentry->d_seq);
	lower_seq = raw_seqcount_begin(&lower->d_seq);
	key = shiftfs_seq_key(seq, lower_seq);
	/* the parent is not in d_seq; 32-bit kernels have no key */
	if ((key & SHIFTFS_SEQ_UNKNOWN) ||
	    READ_ONCE(dentry->d_time) != key ||
	    (READ_ONCE(lower->d_flags) & DCACHE_OP_REVALIDATE) ||
	    READ_ONCE(lower->d_parent) !=
	    shiftfs_dentry_lower(READ_ONCE(dentry->d_parent)))
		return 0;
	if (read_seqcount_retry(&lower->d_seq, lower_seq) ||
	    read_seqcount_retry(&dentry->d_seq, seq) ||
	    READ_ONCE(dentry->d_fsdata) != lower)
		return -ECHILD;
	return 1;
}

/*
 * RCU walk: owner, group and mode as they are underneath before the VFS
 * reads them.  A trailing symlink's owner (fs.protected_symlinks), the
 * setuid bit and owner of a link source (protected_hardlinks) and, from
 * 6.12 where an O_CREAT open of what exists stays in RCU walk, the
 * owner of the file (protected_fifos, protected_regular) are checked on
 * our inode without a ->permission() call first: a chown or chmod made
 * underneath (by the host, or through another mount of the tree) must
 * count there as on the plain tree.  Ref walk refreshes them in
 * shiftfs_revalidate_common().  A handful of loads, stores on change
 * only (shiftfs_copy_access()).
 *
 * Not for directories, every component but the last of a walk: the VFS
 * reads a directory's owner and mode only after our ->permission() on
 * it has refreshed them (may_lookup() before it descends, and the
 * nd->dir_uid/dir_mode the link and sticky checks use are taken right
 * after; open, getattr and the sticky checks of unlink and rename, in
 * ref walk, call us first).  We set no IOP_FASTPERM_MAY_EXEC, so no
 * kernel skips that ->permission().  Half the refreshes of a
 * two-component stat, without reopening what they closed.
 */
static __always_inline void shiftfs_revalidate_access(struct dentry *dentry)
{
	struct inode *inode;
	struct inode *lower;

	if (d_is_dir(dentry))
		return;
	inode = d_inode_rcu(dentry);
	if (!inode)
		return;
	/* NULL: being evicted; the walk will find out (d_seq) */
	lower = shiftfs_inode_lower_rcu(inode);
	if (lower)
		shiftfs_copy_access(inode, lower);
}

/* The refresh, out of line: the fast path below keeps no stack frame. */
static noinline int shiftfs_revalidate_access_slow(struct dentry *dentry)
{
	shiftfs_revalidate_access(dentry);
	return 1;
}

/* RCU walk, when the fast path cannot say: everything, then the refresh. */
static noinline int shiftfs_revalidate_rcu_slow(struct dentry *dentry,
						unsigned int flags)
{
	int ret = shiftfs_revalidate_common(dentry, flags, false);

	if (likely(ret > 0))
		shiftfs_revalidate_access(dentry);
	return ret;
}

static int shiftfs_d_revalidate(SHIFTFS_D_REVALIDATE_ARGS)
{
	struct inode *inode, *lower;
	int ret;

	if (unlikely(!(flags & LOOKUP_RCU)))
		return shiftfs_revalidate_common(dentry, flags, false);
	ret = shiftfs_revalidate_fast(dentry);
	if (unlikely(ret <= 0))
		return ret ?: shiftfs_revalidate_rcu_slow(dentry, flags);
	/* Loads and compares only, while nothing needs refreshing. */
	if (d_is_dir(dentry))
		return 1;
	inode = d_inode_rcu(dentry);
	if (!inode)
		return 1;
	lower = shiftfs_inode_lower_rcu(inode);
	if (!lower || shiftfs_access_current(inode, lower))
		return 1;
	return shiftfs_revalidate_access_slow(dentry);
}

static int shiftfs_d_weak_revalidate(struct dentry *dentry,
				     unsigned int flags)
{
	return shiftfs_revalidate_common(dentry, flags, true);
}

const struct dentry_operations shiftfs_dentry_ops = {
	.d_release		= shiftfs_d_release,
	.d_revalidate		= shiftfs_d_revalidate,
	.d_weak_revalidate	= shiftfs_d_weak_revalidate,
};
