// SPDX-License-Identifier: GPL-2.0
/*
 * Runner self-test for the debug kernels (make check-debug): a module that
 * plants one bug of a kind the kernel's detectors find, chosen by bug=, so
 * that the run proves each detector is on and that the runner fails the
 * run on its report.  Never part of the product; loaded only in the guest,
 * by "shiftfs.selftest=plant-BUG".
 *
 *   bug=uaf      a read of freed slab memory        (KASAN)
 *   bug=lockinv  two mutexes taken in both orders   (lockdep)
 *   bug=leak     an allocation whose pointer is lost (kmemleak, at the scan
 *                the guest asks for before powering off)
 */
#include <linux/init.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *bug = "";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "the bug to plant: uaf, lockinv or leak");

static DEFINE_MUTEX(shiftfs_plant_a);
static DEFINE_MUTEX(shiftfs_plant_b);
/* kmemleak scans .data and .bss: the leaked pointer must not stay here */
static void *shiftfs_plant_leaked;

static noinline int shiftfs_plant_uaf(void)
{
	char *p = kmalloc(64, GFP_KERNEL);
	int v;

	if (!p)
		return -ENOMEM;
	memset(p, 0x5a, 64);
	kfree(p);
	v = READ_ONCE(p[8]);	/* the planted use after free */
	pr_info("shiftfs_selftest_plant: read %d from freed memory\n", v);
	return 0;
}

static noinline void shiftfs_plant_lockinv(void)
{
	/* a then b here, b then a below: one thread, no deadlock, a report */
	mutex_lock(&shiftfs_plant_a);
	mutex_lock(&shiftfs_plant_b);
	mutex_unlock(&shiftfs_plant_b);
	mutex_unlock(&shiftfs_plant_a);

	mutex_lock(&shiftfs_plant_b);
	mutex_lock(&shiftfs_plant_a);
	mutex_unlock(&shiftfs_plant_a);
	mutex_unlock(&shiftfs_plant_b);
}

/*
 * Sixteen objects: a stale copy of the last pointer on a stack (insmod's,
 * cached for the next task) can hide one from kmemleak, not all.
 */
static noinline int shiftfs_plant_leak(void)
{
	int i;

	for (i = 0; i < 16; i++) {
		shiftfs_plant_leaked = kmalloc(128, GFP_KERNEL);
		if (!shiftfs_plant_leaked)
			return -ENOMEM;
		memset(shiftfs_plant_leaked, 0xa5, 128);
		/* the planted leak */
		WRITE_ONCE(shiftfs_plant_leaked, NULL);
	}
	return 0;
}

static int __init shiftfs_selftest_plant_init(void)
{
	pr_info("shiftfs_selftest_plant: planting '%s'\n", bug);
	if (!strcmp(bug, "uaf"))
		return shiftfs_plant_uaf();
	if (!strcmp(bug, "lockinv")) {
		shiftfs_plant_lockinv();
		return 0;
	}
	if (!strcmp(bug, "leak"))
		return shiftfs_plant_leak();
	pr_err("shiftfs_selftest_plant: bug='%s': not uaf, lockinv nor leak\n",
	       bug);
	return -EINVAL;
}

static void __exit shiftfs_selftest_plant_exit(void)
{
}

module_init(shiftfs_selftest_plant_init);
module_exit(shiftfs_selftest_plant_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("shiftfs test runner self-test: plants a bug for the kernel's detectors");
