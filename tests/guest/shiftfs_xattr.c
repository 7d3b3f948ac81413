// SPDX-License-Identifier: GPL-2.0
/*
 * Extended attributes through shiftfs: plain ones pass through (with the
 * VFS' namespace rules checked against the caller), the ids inside
 * system.posix_acl_* and the rootid of security.capability are shifted,
 * and ACLs take part in permission checks.
 */
#include "harness.h"
#include "shiftfs_util.h"

#include <linux/capability.h>
#include <stdint.h>
#include <sys/xattr.h>

TEST_F(world, plain_xattrs_pass_through)
{
	struct world *w = &self->w;
	char buf[256];
	ssize_t n;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	if (setxattr(P(w->lower, "f"), "user.probe", "1", 1, 0) &&
	    errno == EOPNOTSUPP) {
		/* tmpfs before 6.6: trusted.* only, which is enough here. */
		ASSERT_EQ(setxattr(P(w->mnt, "f"), "trusted.a", "va", 2, 0), 0);
		ASSERT_EQ(getxattr(P(w->lower, "f"), "trusted.a", buf,
				   sizeof(buf)), 2);
		SKIP("lower fs has no user.* xattrs");
	}
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(setxattr(P(w->mnt, "f"), "user.a", "value", 5, 0), 0);
	become_fsids(0, 0);
	ASSERT_EQ(getxattr(P(w->lower, "f"), "user.a", buf, sizeof(buf)), 5);
	EXPECT_EQ(memcmp(buf, "value", 5), 0);
	ASSERT_EQ(setxattr(P(w->lower, "f"), "user.b", "below", 5, 0), 0);
	ASSERT_EQ(getxattr(P(w->mnt, "f"), "user.b", buf, sizeof(buf)), 5);
	EXPECT_EQ(memcmp(buf, "below", 5), 0);
	EXPECT_EQ(getxattr(P(w->mnt, "f"), "user.b", NULL, 0), 5);
	EXPECT_ERRNO(getxattr(P(w->mnt, "f"), "user.b", buf, 2), ERANGE);
	n = listxattr(P(w->mnt, "f"), buf, sizeof(buf));
	ASSERT_GT(n, 0);
	EXPECT_TRUE(memmem(buf, n, "user.a", 7) != NULL);
	EXPECT_TRUE(memmem(buf, n, "user.b", 7) != NULL);
	EXPECT_ERRNO(setxattr(P(w->mnt, "f"), "user.a", "x", 1, XATTR_CREATE),
		     EEXIST);
	/* Someone else's file: no writing its user.* xattrs. */
	become_fsids(ID_SHIFT + 1, ID_SHIFT + 1);
	EXPECT_ERRNO(setxattr(P(w->mnt, "f"), "user.c", "x", 1, 0), EACCES);
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(removexattr(P(w->mnt, "f"), "user.a"), 0);
	become_fsids(0, 0);
	EXPECT_ERRNO(getxattr(P(w->lower, "f"), "user.a", buf, sizeof(buf)),
		     ENODATA);
}

static int container_trusted(void *arg)
{
	const struct world *w = arg;
	char buf[256];
	ssize_t n;

	/* Not even the names of trusted.* xattrs. */
	n = listxattr(P(w->mnt, "f"), buf, sizeof(buf));
	if (n < 0 || memmem(buf, n, "trusted.", 8))
		return 3;
	/* trusted.* is for CAP_SYS_ADMIN in the initial namespace only. */
	if (setxattr(P(w->mnt, "f"), "trusted.b", "x", 1, 0) != -1 ||
	    errno != EPERM)
		return 1;
	if (getxattr(P(w->mnt, "f"), "trusted.a", buf, sizeof(buf)) != -1 ||
	    errno != ENODATA)
		return 2;
	return 0;
}

TEST_F(world, trusted_xattrs_for_init_root_only)
{
	struct world *w = &self->w;
	char buf[256];

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(make_file(P(w->lower, "f"), 0644, 0, 0), 0);
	ASSERT_EQ(setxattr(P(w->mnt, "f"), "trusted.a", "t", 1, 0), 0);
	ASSERT_EQ(getxattr(P(w->lower, "f"), "trusted.a", buf, sizeof(buf)), 1);
	EXPECT_GT(listxattr(P(w->mnt, "f"), buf, sizeof(buf)), 0);
	EXPECT_TRUE(memmem(buf, sizeof(buf), "trusted.a", 10) != NULL);
	ASSERT_EQ(in_container(container_trusted, w), 0);
	EXPECT_ERRNO(getxattr(P(w->lower, "f"), "trusted.b", buf, sizeof(buf)),
		     ENODATA);
}

/* Raw system.posix_acl_* values. */
struct acl_entry {
	uint16_t tag, perm;
	uint32_t id;
};

struct acl_value {
	uint32_t version;
	struct acl_entry e[5];
};

static void acl_make(struct acl_value *v, uint32_t user, uint32_t group)
{
	v->version = 2;
	v->e[0] = (struct acl_entry){ 0x01, 6, (uint32_t)-1 };	/* USER_OBJ */
	v->e[1] = (struct acl_entry){ 0x02, 6, user };		/* USER */
	v->e[2] = (struct acl_entry){ 0x04, 4, (uint32_t)-1 };	/* GROUP_OBJ */
	v->e[3] = (struct acl_entry){ 0x08, 4, group };		/* GROUP */
	v->e[4] = (struct acl_entry){ 0x10, 6, (uint32_t)-1 };	/* MASK */
}

static int acl_probe(const char *path)
{
	struct acl_value v;
	struct acl_entry other = { 0x20, 0, (uint32_t)-1 };
	char buf[sizeof(v) + sizeof(other)];

	acl_make(&v, 1000, 1000);
	memcpy(buf, &v, sizeof(v));
	memcpy(buf + sizeof(v), &other, sizeof(other));
	return setxattr(path, "system.posix_acl_access", buf, sizeof(buf), 0);
}

static int acl_set(const char *path, uint32_t user, uint32_t group)
{
	struct acl_value v;
	struct acl_entry other = { 0x20, 0, (uint32_t)-1 };
	char buf[sizeof(v) + sizeof(other)];

	acl_make(&v, user, group);
	memcpy(buf, &v, sizeof(v));
	memcpy(buf + sizeof(v), &other, sizeof(other));
	return setxattr(path, "system.posix_acl_access", buf, sizeof(buf), 0);
}

static int acl_get(const char *path, uint32_t *user, uint32_t *group)
{
	char buf[256];
	struct acl_entry e;
	ssize_t n = getxattr(path, "system.posix_acl_access", buf, sizeof(buf));
	size_t off;

	if (n < 0)
		return -1;
	*user = *group = (uint32_t)-2;
	for (off = 4; off + sizeof(e) <= (size_t)n; off += sizeof(e)) {
		memcpy(&e, buf + off, sizeof(e));
		if (e.tag == 0x02)
			*user = e.id;
		if (e.tag == 0x08)
			*group = e.id;
	}
	return 0;
}

TEST_F(world, posix_acl_ids_shifted)
{
	struct world *w = &self->w;
	uint32_t u, g;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(make_file(P(w->lower, "f"), 0600, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "g"), 0600, 0, 0), 0);
	if (acl_probe(P(w->lower, "f")))
		SKIP("lower fs has no POSIX ACLs: %s", strerror(errno));

	/* Set underneath, read through the mount. */
	ASSERT_EQ(acl_set(P(w->lower, "f"), 1000, 2000), 0);
	ASSERT_EQ(acl_get(P(w->mnt, "f"), &u, &g), 0);
	EXPECT_EQ(u, ID_SHIFT + 1000);
	EXPECT_EQ(g, ID_SHIFT + 2000);

	/* Set through the mount, read underneath. */
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(acl_set(P(w->mnt, "g"), ID_SHIFT + 33, ID_SHIFT + 44), 0);
	become_fsids(0, 0);
	ASSERT_EQ(acl_get(P(w->lower, "g"), &u, &g), 0);
	EXPECT_EQ(u, 33u);
	EXPECT_EQ(g, 44u);
	ASSERT_EQ(acl_get(P(w->mnt, "g"), &u, &g), 0);
	EXPECT_EQ(u, ID_SHIFT + 33);

	/* An entry the map can't take back. */
	EXPECT_ERRNO(acl_set(P(w->mnt, "g"), 200000, ID_SHIFT), EOVERFLOW);
	ASSERT_EQ(acl_get(P(w->lower, "g"), &u, &g), 0);
	EXPECT_EQ(u, 33u);

	/* Removal. */
	become_fsids(ID_SHIFT, ID_SHIFT);
	ASSERT_EQ(removexattr(P(w->mnt, "g"), "system.posix_acl_access"), 0);
	become_fsids(0, 0);
	EXPECT_ERRNO(getxattr(P(w->lower, "g"), "system.posix_acl_access",
			      NULL, 0), ENODATA);
}

TEST_F(world, posix_acl_grants_access)
{
	struct world *w = &self->w;
	int fd;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(make_file(P(w->lower, "f"), 0600, 0, 0), 0);
	if (acl_probe(P(w->lower, "f")))
		SKIP("lower fs has no POSIX ACLs");
	/* user:1000:rw- underneath: image uid 1000 = shifted 101000. */
	ASSERT_EQ(acl_set(P(w->lower, "f"), 1000, 3000), 0);
	ASSERT_EQ(setgroups(0, NULL), 0);
	become_fsids(ID_SHIFT + 1000, ID_SHIFT + 1000);
	fd = open(P(w->mnt, "f"), O_RDWR);
	EXPECT_GE(fd, 0);
	if (fd >= 0)
		close(fd);
	/* Twice: the second time from a warm dcache (RCU path walk). */
	fd = open(P(w->mnt, "f"), O_RDWR);
	EXPECT_GE(fd, 0);
	if (fd >= 0)
		close(fd);
	/* Host uid 1000 is not image uid 1000. */
	become_fsids(1000, 1000);
	EXPECT_ERRNO(open(P(w->mnt, "f"), O_RDONLY), EACCES);
	/* Group entry: shifted 103000 may read. */
	become_fsids(ID_SHIFT + 5, ID_SHIFT + 3000);
	fd = open(P(w->mnt, "f"), O_RDONLY);
	EXPECT_GE(fd, 0);
	if (fd >= 0)
		close(fd);
	EXPECT_ERRNO(open(P(w->mnt, "f"), O_WRONLY), EACCES);
}

TEST_F(world, default_acl_inherited_by_new_files)
{
	struct world *w = &self->w;
	uint32_t u, g;
	int fd;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(make_dir(P(w->lower, "d"), 0755, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "probe"), 0644, 0, 0), 0);
	if (acl_probe(P(w->lower, "probe")))
		SKIP("lower fs has no POSIX ACLs");
	{
		struct acl_value v;
		struct acl_entry other = { 0x20, 5, (uint32_t)-1 };
		char buf[sizeof(v) + sizeof(other)];

		acl_make(&v, 1000, 1000);
		memcpy(buf, &v, sizeof(v));
		memcpy(buf + sizeof(v), &other, sizeof(other));
		ASSERT_EQ(setxattr(P(w->lower, "d"), "system.posix_acl_default",
				   buf, sizeof(buf), 0), 0);
	}
	become_fsids(ID_SHIFT, ID_SHIFT);
	fd = open(P(w->mnt, "d/new"), O_CREAT | O_WRONLY, 0666);
	ASSERT_GE(fd, 0);
	close(fd);
	become_fsids(0, 0);
	ASSERT_EQ(acl_get(P(w->lower, "d/new"), &u, &g), 0);
	EXPECT_EQ(u, 1000u);
	ASSERT_EQ(acl_get(P(w->mnt, "d/new"), &u, &g), 0);
	EXPECT_EQ(u, ID_SHIFT + 1000);
}

/* security.capability values. */
struct caps_v3 {
	uint32_t magic_etc;
	struct {
		uint32_t permitted, inheritable;
	} data[2];
	uint32_t rootid;
};

#define CAP_NET_RAW_BIT (1u << 13)

static int caps_set(const char *path, int v3, uint32_t rootid)
{
	struct caps_v3 c = { 0 };

	c.magic_etc = (v3 ? VFS_CAP_REVISION_3 : VFS_CAP_REVISION_2) |
		      VFS_CAP_FLAGS_EFFECTIVE;
	c.data[0].permitted = CAP_NET_RAW_BIT;
	c.rootid = rootid;
	return setxattr(path, "security.capability", &c,
			v3 ? XATTR_CAPS_SZ_3 : XATTR_CAPS_SZ_2, 0);
}

/* Returns the revision (2 or 3), *rootid for v3; -1 on error. */
static int caps_get(const char *path, uint32_t *rootid)
{
	struct caps_v3 c = { 0 };
	ssize_t n = getxattr(path, "security.capability", &c, sizeof(c));

	if (n < 0)
		return -1;
	if (c.data[0].permitted != CAP_NET_RAW_BIT)
		return -1;
	if ((c.magic_etc & VFS_CAP_REVISION_MASK) == VFS_CAP_REVISION_3 &&
	    n == XATTR_CAPS_SZ_3) {
		*rootid = c.rootid;
		return 3;
	}
	return (c.magic_etc & VFS_CAP_REVISION_MASK) == VFS_CAP_REVISION_2 &&
	       n == XATTR_CAPS_SZ_2 ? 2 : -1;
}

static int container_caps(void *arg)
{
	const struct world *w = arg;
	uint32_t rootid = 0;

	/* Image-root (v2) caps are this container's root's caps. */
	if (caps_get(P(w->mnt, "v2"), &rootid) != 2)
		return 1;
	/* Written by container root as v2: image-root caps underneath. */
	if (caps_set(P(w->mnt, "fromct"), 0, 0))
		return 2;
	return 0;
}

TEST_F(world, file_capabilities_rootid_shifted)
{
	struct world *w = &self->w;
	uint32_t rootid = 0;

	ASSERT_EQ(shiftfs_mount_default(w), 0);
	ASSERT_EQ(make_file(P(w->lower, "v2"), 0755, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "v3"), 0755, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "fromct"), 0755, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "fromhost"), 0755, 0, 0), 0);
	ASSERT_EQ(make_file(P(w->lower, "unmapped"), 0755, 0, 0), 0);
	ASSERT_EQ(caps_set(P(w->lower, "v2"), 0, 0), 0);
	ASSERT_EQ(caps_set(P(w->lower, "v3"), 1, 1000), 0);
	ASSERT_EQ(caps_set(P(w->lower, "unmapped"), 1, 70000), 0);

	/* From the host: image root is 100000, so v2 reads as v3. */
	ASSERT_EQ(caps_get(P(w->mnt, "v2"), &rootid), 3);
	EXPECT_EQ(rootid, ID_SHIFT);
	ASSERT_EQ(caps_get(P(w->mnt, "v3"), &rootid), 3);
	EXPECT_EQ(rootid, ID_SHIFT + 1000);
	EXPECT_EQ(caps_get(P(w->mnt, "unmapped"), &rootid), -1);

	ASSERT_EQ(in_container(container_caps, w), 0);
	EXPECT_EQ(caps_get(P(w->lower, "fromct"), &rootid), 2);

	/* Host root writing rootid 100005: image rootid 5. */
	ASSERT_EQ(caps_set(P(w->mnt, "fromhost"), 1, ID_SHIFT + 5), 0);
	ASSERT_EQ(caps_get(P(w->lower, "fromhost"), &rootid), 3);
	EXPECT_EQ(rootid, 5u);
	/* v2 from host root means host root, which the map can't express. */
	EXPECT_ERRNO(caps_set(P(w->mnt, "fromhost"), 0, 0), EOVERFLOW);
}

TEST_HARNESS_MAIN
