// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the pure parts behind declared marks and marks made
 * for a user (shiftctl/subid.c, decl.c, idmap.c's idmap_allows()): the
 * user's range found in /etc/subuid text, the maps a mark for him gets
 * (with and without his own id), which container maps such a mark allows
 * (the kernel's rule), and the declarations file's lines.  No root.
 */
#include "harness.h"

#include "decl.h"
#include "idmap.h"
#include "subid.h"

static char err[512];

static const char subuid[] =
	"# useradd's ranges\n"
	"alice:100000:65536\n"
	"jejb:165536:65536\n"
	"1002:231072:65536\n"
	"broken:12x:5\n";

static struct idmap map_of(const char *a, const char *b, const char *c)
{
	struct idmap m;
	const char *s[3] = { a, b, c };
	int i;

	idmap_init(&m);
	for (i = 0; i < 3 && s[i]; i++)
		if (idmap_add_string(&m, IDMAP_UID, s[i], err, sizeof(err)))
			TH_LOG("%s: %s", s[i], err);
	return m;
}

static bool same(const struct idmap *m, const char *want)
{
	char *got = idmap_format_options(m, m);
	bool ok = got && !strncmp(got, want, strlen(want)) &&
		  got[strlen(want)] == ',';

	if (!ok)
		TH_LOG("map '%s', expected '%s'", got ? got : "(null)", want);
	free(got);
	return ok;
}

TEST(subid_lookup_by_name_and_id)
{
	struct subid_range r;

	ASSERT_EQ(subid_lookup(subuid, "/etc/subuid", "jejb", 1000, &r, err,
			       sizeof(err)), 0);
	EXPECT_EQ(r.start, 165536u);
	EXPECT_EQ(r.count, 65536u);
	/* a line may name the user by uid */
	ASSERT_EQ(subid_lookup(subuid, "/etc/subuid", "bob", 1002, &r, err,
			       sizeof(err)), 0);
	EXPECT_EQ(r.start, 231072u);
	/* none, named in the message with the fix */
	EXPECT_EQ(subid_lookup(subuid, "/etc/subuid", "carol", 1003, &r, err,
			       sizeof(err)), -ENOENT);
	EXPECT_TRUE(strstr(err, "carol") && strstr(err, "/etc/subuid") &&
		    strstr(err, "usermod"));
	/* a malformed line of his is an error, not skipped */
	EXPECT_EQ(subid_lookup(subuid, "/etc/subuid", "broken", 1004, &r, err,
			       sizeof(err)), -EINVAL);
	EXPECT_TRUE(strstr(err, "12x:5") != NULL);
	/* "jej" is not "jejb" */
	EXPECT_EQ(subid_lookup(subuid, "/etc/subuid", "jej", 1005, &r, err,
			       sizeof(err)), -ENOENT);
}

TEST(user_maps)
{
	struct subid_range r = { 165536, 65536 };
	struct idmap m;

	ASSERT_EQ(subid_user_map(&r, false, 1000, &m, err, sizeof(err)), 0);
	EXPECT_TRUE(same(&m, "uidmap=0:165536:65536"));
	/* own ids kept: the range skips 1000, which stays 1000 */
	ASSERT_EQ(subid_user_map(&r, true, 1000, &m, err, sizeof(err)), 0);
	EXPECT_TRUE(same(&m, "uidmap=0:165536:1000,uidmap=1001:166537:64535,uidmap=1000:1000:1"));
	/* uid 0 or one past the range: no hole to cut */
	ASSERT_EQ(subid_user_map(&r, true, 0, &m, err, sizeof(err)), 0);
	EXPECT_TRUE(same(&m, "uidmap=1:165537:65535,uidmap=0:0:1"));
	ASSERT_EQ(subid_user_map(&r, true, 70000, &m, err, sizeof(err)), 0);
	EXPECT_TRUE(same(&m, "uidmap=0:165536:65536,uidmap=70000:70000:1"));
	/* his own id inside his range shifted: refused (overlap) */
	r.start = 1000;
	EXPECT_NE(subid_user_map(&r, true, 1500, &m, err, sizeof(err)), 0);
}

TEST(mark_allows_what_the_kernel_allows)
{
	struct idmap mark = map_of("0:165536:65536", NULL, NULL);
	struct idmap own = map_of("0:165536:1000", "1001:166537:64535",
				  "1000:1000:1");
	struct idmap ct, adj;
	struct idmap_extent bad;

	ct = map_of("0:165536:65536", NULL, NULL);
	EXPECT_EQ(idmap_allows(&mark, &ct, NULL), 1);
	/* a sub-range delegates less */
	ct = map_of("0:165536:1000", NULL, NULL);
	EXPECT_EQ(idmap_allows(&mark, &ct, NULL), 1);
	/* another offset: refused, the extent named */
	ct = map_of("0:100000:65536", NULL, NULL);
	EXPECT_EQ(idmap_allows(&mark, &ct, &bad), 0);
	EXPECT_EQ(bad.to, 100000u);
	/* past the end */
	ct = map_of("0:165536:65537", NULL, NULL);
	EXPECT_EQ(idmap_allows(&mark, &ct, NULL), 0);
	/* the cover letter's build map in jejb's range, own uid kept */
	ct = map_of("0:165536:1000", "1000:1000:1", "65534:231070:1");
	EXPECT_EQ(idmap_allows(&own, &ct, NULL), 1);
	EXPECT_EQ(idmap_allows(&mark, &ct, &bad), 0);
	EXPECT_EQ(bad.from, 1000u);
	/* the whole range across the kept id: 1000 would be 166536 */
	ct = map_of("0:165536:65536", NULL, NULL);
	EXPECT_EQ(idmap_allows(&own, &ct, NULL), 0);
	/* adjacent mark extents at one offset, given out of order */
	adj = map_of("500:166036:500", "0:165536:500", NULL);
	ct = map_of("0:165536:1000", NULL, NULL);
	EXPECT_EQ(idmap_allows(&adj, &ct, NULL), 1);
}

TEST(subid_owner_names_the_user)
{
	struct idmap own = map_of("0:165536:1000", "1001:166537:64535",
				  "1000:1000:1");
	struct idmap other = map_of("0:300000:10", NULL, NULL);
	char who[64];

	ASSERT_EQ(subid_owner(subuid, &own, who, sizeof(who)), 0);
	EXPECT_STREQ(who, "jejb");
	EXPECT_EQ(subid_owner(subuid, &other, who, sizeof(who)), -ENOENT);
}

TEST(decl_lines)
{
	struct decl d;

	ASSERT_EQ(decl_parse_line("/srv/images/u1\tuser=jejb", &d, err,
				  sizeof(err)), 0);
	EXPECT_STREQ(d.path, "/srv/images/u1");
	EXPECT_STREQ(d.user, "jejb");
	EXPECT_FALSE(d.own_ids);
	ASSERT_EQ(decl_parse_line("  /srv/a\\040b  user=jejb,own-ids  # note",
				  &d, err, sizeof(err)), 0);
	EXPECT_STREQ(d.path, "/srv/a b");
	EXPECT_TRUE(d.own_ids);
	ASSERT_EQ(decl_parse_line("/srv/c uidmap=0:100000:65536,gidmap=0:100000:65536",
				  &d, err, sizeof(err)), 0);
	EXPECT_EQ(d.uid.nr, 1u);
	EXPECT_EQ(d.gid.ext[0].to, 100000u);
	EXPECT_EQ(decl_parse_line("   # a comment", &d, err, sizeof(err)), 1);
	EXPECT_EQ(decl_parse_line("", &d, err, sizeof(err)), 1);
}

/* Each bad line refused, the message naming what is wrong. */
TEST(decl_bad_lines)
{
	static const struct { const char *line, *why; } bad[] = {
		{ "srv/x user=a", "absolute" },
		{ "/srv/../etc user=a", "canonical" },
		{ "/srv//x user=a", "canonical" },
		{ "/srv/x/ user=a", "canonical" },
		{ "/srv/./x user=a", "canonical" },
		{ "/ user=a", "'/'" },
		{ "/srv/x", "no OPTIONS" },
		{ "/srv/x user=a extra", "more than" },
		{ "/srv/x user=a,uidmap=0:1:1", "exclude" },
		{ "/srv/x own-ids", "goes with" },
		{ "/srv/x uidmap=0:1:1", "no maps" },
		{ "/srv/x user=a/b", "user name" },
		{ "/srv/x colour=red", "unknown option" },
		{ "/srv/x uidmap=0:1", "uidmap" },
		{ "/srv/a\\04 user=a", "escape" },
		{ "/srv/a\\000b user=a", "escape" },
	};
	struct decl d;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		EXPECT_LT(decl_parse_line(bad[i].line, &d, err, sizeof(err)), 0);
		if (!strstr(err, bad[i].why))
			TH_LOG("'%s': message '%s' lacks '%s'", bad[i].line,
			       err, bad[i].why);
		EXPECT_TRUE(strstr(err, bad[i].why) != NULL);
	}
}

TEST(decl_round_trip_and_replace)
{
	static const char text[] =
		"# declared marks\n"
		"/srv/images/u1\tuser=jejb\n"
		"/srv/other\tuser=alice\n";
	struct decl d, back;
	char *line, *out;
	bool found;

	memset(&d, 0, sizeof(d));
	strcpy(d.path, "/srv/with space\\and tab\t");
	strcpy(d.user, "jejb");
	d.own_ids = true;
	line = decl_format(&d);
	ASSERT_TRUE(line != NULL);
	EXPECT_STREQ(line, "/srv/with\\040space\\134and\\040tab\\011\tuser=jejb,own-ids");
	ASSERT_EQ(decl_parse_line(line, &back, err, sizeof(err)), 0);
	EXPECT_STREQ(back.path, d.path);
	EXPECT_TRUE(back.own_ids);
	free(line);

	/* replaced in place, other lines and comments kept */
	out = decl_replace(text, "/srv/images/u1", "/srv/images/u1\tuser=jejb,own-ids",
			   &found);
	EXPECT_TRUE(found);
	EXPECT_STREQ(out, "# declared marks\n/srv/images/u1\tuser=jejb,own-ids\n/srv/other\tuser=alice\n");
	free(out);
	/* dropped */
	out = decl_replace(text, "/srv/other", NULL, &found);
	EXPECT_TRUE(found);
	EXPECT_STREQ(out, "# declared marks\n/srv/images/u1\tuser=jejb\n");
	free(out);
	/* appended, to a file without its last newline */
	out = decl_replace("/srv/a\tuser=x", "/srv/b", "/srv/b\tuser=y", &found);
	EXPECT_FALSE(found);
	EXPECT_STREQ(out, "/srv/a\tuser=x\n/srv/b\tuser=y\n");
	free(out);
}

TEST_HARNESS_MAIN
