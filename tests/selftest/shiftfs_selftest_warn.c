// SPDX-License-Identifier: GPL-2.0
/*
 * Runner self-test: a module whose only job is to WARN when loaded, so that
 * "make check" can prove the guest runner fails a run whose kernel log
 * shows a warning.  Never part of the product; loaded only in the guest by
 * "shiftfs.selftest=warn".
 */
#include <linux/bug.h>
#include <linux/init.h>
#include <linux/module.h>

static int __init shiftfs_selftest_warn_init(void)
{
	WARN(1, "shiftfs_selftest_warn: deliberate warning for the runner self-test\n");
	return 0;
}

static void __exit shiftfs_selftest_warn_exit(void)
{
}

module_init(shiftfs_selftest_warn_init);
module_exit(shiftfs_selftest_warn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("shiftfs test runner self-test: WARNs on load");
