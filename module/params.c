// SPDX-License-Identifier: GPL-2.0
/*
 * Mount options through the new mount API.  mount(2) users reach the same
 * code through the VFS' legacy-data splitter, so both get the same checks
 * and the same "e shiftfs: ..." explanations.
 */
#define pr_fmt(fmt) "shiftfs: " fmt

#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/slab.h>
#include "shiftfs.h"

enum shiftfs_param {
	Opt_uidmap,
	Opt_gidmap,
	Opt_mark,
	Opt_revoke,
};

const struct fs_parameter_spec shiftfs_fs_parameters[] = {
	fsparam_string("uidmap", Opt_uidmap),
	fsparam_string("gidmap", Opt_gidmap),
	fsparam_flag("mark", Opt_mark),
	fsparam_flag("revoke", Opt_revoke),
	/* As show_options() prints it: mount(8) resends it on remount. */
	fsparam_flag("revoked", Opt_revoke),
	{}
};

static int shiftfs_parse_param(struct fs_context *fc,
			       struct fs_parameter *param)
{
	struct shiftfs_fs_context *ctx = fc->fs_private;
	struct fs_parse_result result;
	int opt, err;

	opt = fs_parse(fc, shiftfs_fs_parameters, param, &result);
	if (opt < 0)
		return opt;
	err = shiftfs_mark_check_param(fc, param->key);
	if (err)
		return err;

	switch (opt) {
	case Opt_uidmap:
		return shiftfs_map_add(fc, &ctx->uid, "uidmap", param->string);
	case Opt_gidmap:
		return shiftfs_map_add(fc, &ctx->gid, "gidmap", param->string);
	case Opt_mark:
		ctx->mark = true;
		return 0;
	case Opt_revoke:
		ctx->revoke = true;
		return 0;
	}
	WARN_ON_ONCE(1);
	return -EINVAL;
}

static int shiftfs_get_tree(struct fs_context *fc)
{
	return get_tree_nodev(fc, shiftfs_fill_super);
}

/*
 * The maps and the source are baked into every inode and dentry we have
 * handed out: a remount may repeat them (mount(8) resends what it knows)
 * but not change them.  Read-only/read-write flips are the VFS' business.
 */
static int shiftfs_reconfigure(struct fs_context *fc)
{
	struct shiftfs_fs_context *ctx = fc->fs_private;
	struct shiftfs_fs *fs = SHIFTFS_SB(fc->root->d_sb);

	if (ctx->uid.nr && !shiftfs_map_equal(&fs->uid_map, &ctx->uid))
		return invalfc(fc, "uidmap cannot be changed on remount");
	if (ctx->gid.nr && !shiftfs_map_equal(&fs->gid_map, &ctx->gid))
		return invalfc(fc, "gidmap cannot be changed on remount");
	if (ctx->mark && !fs->mark)
		return invalfc(fc, "a mount cannot become a mark on remount");
	if (ctx->revoke)
		return shiftfs_mark_revoke(fc, fs);
	return 0;
}

static void shiftfs_free_fc(struct fs_context *fc)
{
	struct shiftfs_fs_context *ctx = fc->fs_private;

	if (ctx && ctx->mark_cred)
		put_cred(ctx->mark_cred);
	kvfree(fc->fs_private);
}

static const struct fs_context_operations shiftfs_context_ops = {
	.parse_param	= shiftfs_parse_param,
	.get_tree	= shiftfs_get_tree,
	.reconfigure	= shiftfs_reconfigure,
	.free		= shiftfs_free_fc,
};

int shiftfs_init_fs_context(struct fs_context *fc)
{
	struct shiftfs_fs_context *ctx;

	/* Two 340-extent tables: too big to want a contiguous kmalloc. */
	ctx = kvzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	fc->fs_private = ctx;
	fc->ops = &shiftfs_context_ops;
	return 0;
}
