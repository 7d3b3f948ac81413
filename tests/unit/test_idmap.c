// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of shiftctl's pure logic (shiftctl/idmap.c, json.c,
 * source.c, mntattr.c, loopuse.c):
 * every malformed map is rejected with a message naming it, maps survive
 * the option-string round trip, and /proc uid_map text derives the right
 * shiftfs options.  No root, no kernel features.
 *
 * On tests/harness.h, as the guest tests are: TAP on stdout, each test in
 * a child of its own.
 *
 * One file of some 500 lines: the four modules it covers share their
 * fixtures (maps, messages), and each test is a table of cases.
 */
#include "harness.h"

#include <sys/mount.h>
#include <sys/statvfs.h>

#include "idmap.h"
#include "json.h"
#include "loopuse.h"
#include "mntattr.h"
#include "source.h"

/*
 * Scratch maps and the message buffer the calls under test write to.
 * Every test runs in a fresh child, so each starts from zeroes.
 */
static struct idmap uid, gid;
static char err[512];

/* err names both needles (a NULL one is not looked for); else says why. */
static bool msg_has(const char *n1, const char *n2)
{
	if ((n1 && !strstr(err, n1)) || (n2 && !strstr(err, n2))) {
		TH_LOG("message '%s' lacks '%s'%s%s%s", err, n1 ? n1 : "",
		       n2 ? " or '" : "", n2 ? n2 : "", n2 ? "'" : "");
		return false;
	}
	return true;
}

/* The call (its return value @ret) was refused, naming both needles. */
static bool refused(int ret, const char *n1, const char *n2)
{
	if (ret == 0) {
		TH_LOG("accepted, expected a rejection");
		return false;
	}
	return msg_has(n1, n2);
}

#define EXPECT_REFUSED(call, n1, n2) EXPECT_TRUE(refused((call), (n1), (n2)))

/* One uidmap extent string, rejected with a message naming it. */
static void reject_extent(const char *s, const char *why)
{
	idmap_init(&uid);
	err[0] = '\0';
	EXPECT_REFUSED(idmap_add_string(&uid, IDMAP_UID, s, err, sizeof(err)),
		       why, "uidmap");
	if (*s)
		EXPECT_TRUE(msg_has(s, NULL));
	if (uid.nr != 0)
		TH_LOG("'%s': rejected extent was added", s);
	EXPECT_EQ(uid.nr, 0u);
}

TEST(extent_too_few_or_too_many_fields)
{
	reject_extent("0:1", "too few fields");
	reject_extent("", "too few fields");
	reject_extent("5", "too few fields");
	reject_extent("0:1:2:3", "too many fields");
}

TEST(extent_non_numeric_fields)
{
	reject_extent("a:1:2", "FROM 'a' is not a number");
	reject_extent("0:1x:2", "TO '1x' is not a number");
	reject_extent("0:1:0x10", "COUNT '0x10' is not a number");
	reject_extent(" 1:2:3", "is not a number");
	reject_extent("+1:2:3", "is not a number");
	reject_extent("::", "FROM is empty");
	reject_extent("1::3", "TO is empty");
}

TEST(extent_negative_numbers)
{
	reject_extent("-1:0:1", "FROM '-1' is negative");
	reject_extent("0:-100000:1", "TO '-100000' is negative");
	reject_extent("0:0:-5", "COUNT '-5' is negative");
}

TEST(extent_overflow_past_2_32)
{
	reject_extent("4294967296:0:1", "FROM '4294967296' is larger than 4294967295");
	reject_extent("0:99999999999999999999:1", "larger than");
	reject_extent("0:0:4294967296", "COUNT '4294967296' is larger");
	reject_extent("4294967290:0:10", "FROM+COUNT runs past");
	reject_extent("0:4294967290:10", "TO+COUNT runs past");
	reject_extent("1:0:4294967295", "FROM+COUNT runs past");
}

TEST(extent_count_0)
{
	reject_extent("0:100000:0", "COUNT is 0");
	reject_extent("0:100000:000", "COUNT is 0");
}

TEST(extent_edge_values_accepted)
{
	idmap_init(&uid);
	EXPECT_EQ(idmap_add_string(&uid, IDMAP_UID, "0:0:4294967295", err, sizeof(err)), 0);
	idmap_init(&uid);
	EXPECT_EQ(idmap_add_string(&uid, IDMAP_UID, "4294967294:0:1", err, sizeof(err)), 0);
	EXPECT_EQ(idmap_add_string(&uid, IDMAP_UID, "007:8:9", err, sizeof(err)), 0);
	EXPECT_TRUE(uid.nr == 2 && uid.ext[1].from == 7 && uid.ext[1].to == 8 &&
		    uid.ext[1].count == 9);
}

/* Naming both extents. */
TEST(overlap_of_underlying_ids_rejected)
{
	idmap_init(&gid);
	EXPECT_EQ(idmap_add_string(&gid, IDMAP_GID, "0:100000:1000", err, sizeof(err)), 0);
	EXPECT_REFUSED(idmap_add_string(&gid, IDMAP_GID, "999:200000:10", err, sizeof(err)),
		       "gidmap 999:200000:10 overlaps 0:100000:1000", "underlying");
	EXPECT_EQ(gid.nr, 1u);
}

/* The map is a bijection. */
TEST(overlap_of_shifted_ids_rejected)
{
	idmap_init(&uid);
	EXPECT_EQ(idmap_add_string(&uid, IDMAP_UID, "0:100:10", err, sizeof(err)), 0);
	EXPECT_REFUSED(idmap_add_string(&uid, IDMAP_UID, "50:109:3", err, sizeof(err)),
		       "50:109:3 overlaps 0:100:10", "shifted");
}

TEST(adjacent_extents_are_not_overlapping)
{
	idmap_init(&uid);
	EXPECT_EQ(idmap_add_string(&uid, IDMAP_UID, "0:100:10", err, sizeof(err)), 0);
	EXPECT_EQ(idmap_add_string(&uid, IDMAP_UID, "10:110:10", err, sizeof(err)), 0);
	EXPECT_EQ(idmap_add_string(&uid, IDMAP_UID, "20:0:100", err, sizeof(err)), 0);
	EXPECT_EQ(uid.nr, 3u);
}

/* @n extents of 10 ids each, i * 10 -> 100000 + i * 10. */
static void fill(struct idmap *m, unsigned int n)
{
	struct idmap_extent e;
	unsigned int i;
	int ret;

	idmap_init(m);
	for (i = 0; i < n; i++) {
		e.from = i * 10;
		e.to = 100000 + i * 10;
		e.count = 10;
		ret = idmap_add(m, &e, err, sizeof(err));
		if (ret)
			TH_LOG("extent %u refused: %s", i, err);
		EXPECT_EQ(ret, 0);
	}
}

TEST(extent_340_accepted_341_rejected)
{
	struct idmap_extent e = { 5000, 500000, 1 };

	fill(&uid, IDMAP_MAX_EXTENTS);
	EXPECT_EQ(uid.nr, (unsigned int)IDMAP_MAX_EXTENTS);
	EXPECT_REFUSED(idmap_add(&uid, &e, err, sizeof(err)),
		       "more than 340 extents", "5000:500000:1");
	EXPECT_EQ(uid.nr, (unsigned int)IDMAP_MAX_EXTENTS);
}

TEST(option_string_of_341_extents_rejected)
{
	char *opts, *more = NULL;

	fill(&uid, IDMAP_MAX_EXTENTS);
	fill(&gid, 1);
	opts = idmap_format_options(&uid, &gid);
	EXPECT_NE(opts, NULL);
	EXPECT_GT(asprintf(&more, "%s,uidmap=5000:500000:1", opts), 0);
	EXPECT_REFUSED(idmap_parse_options(more, &uid, &gid, err, sizeof(err)),
		       "uidmap", "more than 340 extents");
	free(opts);
	free(more);
}

static const char *three_line =
	"         0     100000       1000\n"
	"      1000       1000          1\n"
	"     65534     101000          1\n";

/* uid_map text rejected, the message naming the file and the needles. */
static void reject_proc(const char *text, const char *n1, const char *n2)
{
	err[0] = '\0';
	EXPECT_REFUSED(idmap_parse_proc(&uid, text, "/proc/42/uid_map", err,
					sizeof(err)), n1, n2);
	EXPECT_TRUE(msg_has("/proc/42/uid_map", NULL));
}

TEST(uid_map_empty_file_rejected)
{
	reject_proc("", "is empty", NULL);
	reject_proc("\n", "is empty", NULL);
	reject_proc("   \n \n", "is empty", NULL);
}

/* Naming the line and its text. */
TEST(uid_map_malformed_lines_rejected)
{
	reject_proc("0 100000\n", "line 1 '0 100000'", "too few fields");
	reject_proc("0 100000 65536 1\n", "line 1", "too many fields");
	reject_proc("0 100000 65536\n1000 x 1\n", "line 2 '1000 x 1'",
		    "OUTSIDE 'x' is not a number");
	reject_proc("0 -1 5\n", "OUTSIDE '-1' is negative", NULL);
	reject_proc("0 0 4294967296\n", "COUNT '4294967296' is larger", NULL);
	reject_proc("0 100000 0\n", "line 1", "COUNT is 0");
	reject_proc("0 100000 65536\n10 200000 5\n", "line 2", "overlaps");
	reject_proc("4294967295 0 1\n", "INSIDE+COUNT runs past", NULL);
}

TEST(uid_map_340_lines_accepted_341_rejected)
{
	char *text = NULL, *more = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	unsigned int i;

	for (i = 0; i < IDMAP_MAX_EXTENTS; i++)
		fprintf(f, "%10u %10u %10u\n", i * 2, 100000 + i * 2, 2);
	fclose(f);
	EXPECT_EQ(idmap_parse_proc(&uid, text, "m", err, sizeof(err)), 0);
	EXPECT_EQ(uid.nr, (unsigned int)IDMAP_MAX_EXTENTS);
	EXPECT_GT(asprintf(&more, "%s%10u %10u %10u\n", text, 5000, 900000, 1), 0);
	reject_proc(more, "line 341", "more than 340 extents");
	free(text);
	free(more);
}

TEST(uid_map_kernel_padded_3_extent_map_parsed)
{
	EXPECT_EQ(idmap_parse_proc(&uid, three_line, "m", err, sizeof(err)), 0);
	EXPECT_EQ(uid.nr, 3u);
	EXPECT_TRUE(uid.ext[0].from == 0 && uid.ext[0].to == 100000 && uid.ext[0].count == 1000);
	EXPECT_TRUE(uid.ext[1].from == 1000 && uid.ext[1].to == 1000 && uid.ext[1].count == 1);
	EXPECT_TRUE(uid.ext[2].from == 65534 && uid.ext[2].to == 101000 && uid.ext[2].count == 1);
	EXPECT_EQ(idmap_map(&uid, 0), 100000);
	EXPECT_EQ(idmap_map(&uid, 999), 100999);
	EXPECT_EQ(idmap_map(&uid, 1000), 1000);
	EXPECT_EQ(idmap_map(&uid, 65534), 101000);
	EXPECT_EQ(idmap_map(&uid, 2000), -1);
	/* no trailing newline, tabs */
	EXPECT_EQ(idmap_parse_proc(&uid, "0\t100000\t65536", "m", err, sizeof(err)), 0);
	EXPECT_TRUE(uid.nr == 1 && uid.ext[0].count == 65536);
}

/* A 3-extent uid map and a 1-extent gid map give these options. */
TEST(derive_options_from_maps)
{
	char *opts;

	EXPECT_EQ(idmap_derive(three_line, "0 100000 65536\n", false, "pid 42",
			       &uid, &gid, err, sizeof(err)), 0);
	opts = idmap_format_options(&uid, &gid);
	EXPECT_STREQ(opts, "uidmap=0:100000:1000,uidmap=1000:1000:1,"
			   "uidmap=65534:101000:1,gidmap=0:100000:65536");
	free(opts);
}

/* An identity map: not in a user namespace. */
TEST(derive_identity_map_rejected)
{
	EXPECT_REFUSED(idmap_derive("         0          0 4294967295\n",
				    "         0          0 4294967295\n", false,
				    "pid 1", &uid, &gid, err, sizeof(err)),
		       "pid 1 is not in a user namespace", "--allow-identity");
	EXPECT_REFUSED(idmap_derive("0 100000 65536\n", "0 0 4294967295\n",
				    false, "pid 7", &uid, &gid, err,
				    sizeof(err)),
		       "pid 7", "gid_map is the identity");
}

TEST(derive_identity_accepted_with_allow_identity)
{
	char *opts;

	EXPECT_EQ(idmap_derive("0 0 4294967295\n", "0 0 4294967295\n", true,
			       "pid 1", &uid, &gid, err, sizeof(err)), 0);
	EXPECT_TRUE(idmap_is_identity(&uid) && idmap_is_identity(&gid));
	opts = idmap_format_options(&uid, &gid);
	EXPECT_STREQ(opts, "uidmap=0:0:4294967295,gidmap=0:0:4294967295");
	free(opts);
}

TEST(derive_errors_name_the_pid_and_the_file)
{
	EXPECT_REFUSED(idmap_derive("0 100000 65536\n", "", false, "pid 99",
				    &uid, &gid, err, sizeof(err)),
		       "pid 99 gid_map", "is empty");
	EXPECT_REFUSED(idmap_derive("0 1\n", "0 1 1\n", false, "pid 99", &uid,
				    &gid, err, sizeof(err)),
		       "pid 99 uid_map line 1", "too few fields");
}

static bool same(const struct idmap *a, const struct idmap *b)
{
	return a->nr == b->nr &&
	       !memcmp(a->ext, b->ext, a->nr * sizeof(a->ext[0]));
}

/* Maps -> options -> maps, 3 + 1 extents. */
TEST(round_trip_3_and_1_extents)
{
	struct idmap u2, g2;
	char *opts, *opts2;

	EXPECT_EQ(idmap_derive(three_line, "0 100000 65536\n", false, "p", &uid,
			       &gid, err, sizeof(err)), 0);
	opts = idmap_format_options(&uid, &gid);
	EXPECT_EQ(idmap_parse_options(opts, &u2, &g2, err, sizeof(err)), 0);
	EXPECT_TRUE(same(&uid, &u2) && same(&gid, &g2));
	opts2 = idmap_format_options(&u2, &g2);
	EXPECT_STREQ(opts2, opts);
	free(opts);
	free(opts2);
}

TEST(round_trip_340_and_340_extents)
{
	struct idmap u2, g2;
	char *opts;

	fill(&uid, IDMAP_MAX_EXTENTS);
	fill(&gid, IDMAP_MAX_EXTENTS);
	opts = idmap_format_options(&uid, &gid);
	EXPECT_TRUE(opts && idmap_parse_options(opts, &u2, &g2, err, sizeof(err)) == 0);
	EXPECT_TRUE(same(&uid, &u2) && same(&gid, &g2));
	free(opts);
}

/* Other mount options are ignored, the maps kept in order. */
TEST(options_other_mount_options_ignored)
{
	struct idmap u2, g2;
	char *opts;

	EXPECT_EQ(idmap_parse_options("rw,relatime,uidmap=0:100000:65536,xino=off,"
				      "gidmap=0:200000:10,gidmap=10:300000:5",
				      &u2, &g2, err, sizeof(err)), 0);
	EXPECT_TRUE(u2.nr == 1 && g2.nr == 2 && g2.ext[1].to == 300000);
	EXPECT_EQ(idmap_parse_options("", &u2, &g2, err, sizeof(err)), 0);
	EXPECT_TRUE(u2.nr == 0 && g2.nr == 0);
	opts = idmap_format_options(&u2, &g2);
	EXPECT_STREQ(opts, "");
	free(opts);
}

/* Malformed map options are rejected, named. */
TEST(options_malformed_maps_rejected)
{
	struct idmap u2, g2;

	EXPECT_REFUSED(idmap_parse_options("uidmap=0:1", &u2, &g2, err, sizeof(err)),
		       "uidmap '0:1'", "too few fields");
	EXPECT_REFUSED(idmap_parse_options("gidmap=0:1:2,gidmap=1:5:1", &u2, &g2, err,
					   sizeof(err)), "gidmap 1:5:1 overlaps", NULL);
	EXPECT_REFUSED(idmap_parse_options("uidmap=", &u2, &g2, err, sizeof(err)),
		       "uidmap", "too few fields");
	EXPECT_REFUSED(idmap_parse_options("uidmap=0:0:0", &u2, &g2, err, sizeof(err)),
		       "uidmap '0:0:0'", "COUNT is 0");
}

static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_string(f, s);
	fclose(f);
	return buf;
}

#define EXPECT_JSON(in, want)						\
	do {								\
		char *__json = json_of(in);				\
									\
		EXPECT_STREQ(__json, want);				\
		free(__json);						\
	} while (0)

TEST(json_escaping)
{
	EXPECT_JSON("plain/path", "\"plain/path\"");
	EXPECT_JSON("a\"b\\c", "\"a\\\"b\\\\c\"");
	EXPECT_JSON("l1\nl2\tx\r", "\"l1\\nl2\\tx\\r\"");
	EXPECT_JSON("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	EXPECT_JSON("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		    "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	EXPECT_JSON("bad\xff" "byte", "\"bad\\ufffdbyte\"");
	EXPECT_JSON("\xc3", "\"\\ufffd\"");	/* truncated */
	EXPECT_JSON("\xc0\xaf", "\"\\ufffd\\ufffd\"");	/* overlong */
	EXPECT_JSON("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""); /* surrogate */
	EXPECT_JSON("", "\"\"");
	EXPECT_JSON(NULL, "null");
}

/* Valid UTF-8 is kept, each invalid byte becomes U+FFFD. */
TEST(utf8_sanitize_replaces_each_invalid_byte)
{
	static const struct { const char *in, *want; } t[] = {
		{ "/mnt/plain", "/mnt/plain" },
		{ "caf\xc3\xa9 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xf0\x9f\x98\x80" },
		{ "/mnt/\xff" "bad", "/mnt/\xef\xbf\xbd" "bad" },
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xc3", "\xef\xbf\xbd" },
		{ "", "" },
	};
	size_t i;
	char *got;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		got = utf8_sanitize(t[i].in);
		EXPECT_STREQ(got, t[i].want);
		free(got);
	}
}

TEST(json_id_maps)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	idmap_init(&uid);
	EXPECT_EQ(idmap_add_string(&uid, IDMAP_UID, "0:100000:1000", err, sizeof(err)), 0);
	EXPECT_EQ(idmap_add_string(&uid, IDMAP_UID, "1000:1000:1", err, sizeof(err)), 0);
	f = open_memstream(&buf, &len);
	json_idmap(f, &uid);
	idmap_init(&gid);
	json_idmap(f, &gid);
	fclose(f);
	EXPECT_STREQ(buf, "[{\"from\":0,\"to\":100000,\"count\":1000},"
			  "{\"from\":1000,\"to\":1000,\"count\":1}][]");
	free(buf);
}

/* Temporary directory names carry the device and parse back. */
TEST(tmpdir_names_carry_the_device)
{
	char buf[128], dev[40];

	EXPECT_EQ(source_tmpdir_template(buf, sizeof(buf), "/run", "/dev/loop12"), 0);
	EXPECT_STREQ(buf, "/run/shiftctl-loop12.XXXXXX");
	memcpy(buf + strlen(buf) - 6, "a1B2c3", 6);	/* as mkdtemp() would */
	EXPECT_EQ(source_tmpdir_dev(buf, dev, sizeof(dev)), 0);
	EXPECT_STREQ(dev, "loop12");
	EXPECT_EQ(source_tmpdir_template(buf, sizeof(buf), "/tmp", "nvme0n1p2"), 0);
	EXPECT_STREQ(buf, "/tmp/shiftctl-nvme0n1p2.XXXXXX");
	EXPECT_EQ(source_tmpdir_dev("/tmp/shiftctl-nvme0n1p2.Zz09Aa", dev, sizeof(dev)), 0);
	EXPECT_STREQ(dev, "nvme0n1p2");
}

/* Anything else is not one. */
TEST(tmpdir_names_anything_else_is_not_one)
{
	char buf[128], dev[40];

	EXPECT_NE(source_tmpdir_template(buf, sizeof(buf), "/run", "/dev/a b"), 0);
	EXPECT_NE(source_tmpdir_template(buf, sizeof(buf), "/run", "/dev/"), 0);
	EXPECT_EQ(source_tmpdir_template(buf, 16, "/run", "loop0"), -ENAMETOOLONG);
	EXPECT_NE(source_tmpdir_dev("/srv/rootfs", dev, sizeof(dev)), 0);
	EXPECT_NE(source_tmpdir_dev("shiftctl-loop0.abcdef", dev, sizeof(dev)), 0);
	EXPECT_NE(source_tmpdir_dev("/run/shiftctl-.abcdef", dev, sizeof(dev)), 0);
	EXPECT_NE(source_tmpdir_dev("/run/shiftctl-loop0", dev, sizeof(dev)), 0);
	EXPECT_NE(source_tmpdir_dev("/run/shiftctl-lo op0.abcdef", dev, sizeof(dev)), 0);
	EXPECT_NE(source_tmpdir_dev("/run/shiftctl-loop0.abc", dev, sizeof(dev)), 0);
	EXPECT_NE(source_tmpdir_dev("/run/shiftctl-loop0.abcdef", dev, 5), 0);
}

static const uint64_t nosuid = MOUNT_ATTR_NOSUID, nodev = MOUNT_ATTR_NODEV;
static const uint64_t noexec = MOUNT_ATTR_NOEXEC, ro = MOUNT_ATTR_RDONLY;

/* Explicit maps are nosuid,nodev unless --suid. */
TEST(mount_attr_explicit_maps)
{
	EXPECT_EQ(shift_mount_attr(SHIFT_MAPS, false, false, 0), nosuid | nodev);
	EXPECT_EQ(shift_mount_attr(SHIFT_MAPS, true, false, 0), ro | nosuid | nodev);
	EXPECT_EQ(shift_mount_attr(SHIFT_MAPS, false, true, 0), nodev);
}

/* The source's nosuid and noexec are kept. */
TEST(mount_attr_source_nosuid_noexec_kept)
{
	EXPECT_EQ(shift_mount_attr(SHIFT_MAPS, false, true, ST_NOSUID), nosuid | nodev);
	EXPECT_EQ(shift_mount_attr(SHIFT_MAPS, false, true, ST_NOEXEC), noexec | nodev);
	EXPECT_EQ(shift_mount_attr(SHIFT_MAPS, false, false, ST_NOEXEC | ST_NOSUID),
		  noexec | nosuid | nodev);
	/* the source's other flags (ro, nodev) are not ours to copy */
	EXPECT_EQ(shift_mount_attr(SHIFT_MAPS, false, true, ST_RDONLY | ST_NODEV), nodev);
}

/* Mounts from a mark, and marks, keep ro only. */
TEST(mount_attr_marks_keep_ro_only)
{
	EXPECT_EQ(shift_mount_attr(SHIFT_FROM_MARK, false, false, ST_NOSUID | ST_NOEXEC), 0u);
	EXPECT_EQ(shift_mount_attr(SHIFT_FROM_MARK, true, false, 0), ro);
	EXPECT_EQ(shift_mount_attr(SHIFT_MARK, false, false, 0), 0u);
}

/* A loop device on an image: st_dev 0x803, inode 12, 32 MiB. */
static struct stat img = { .st_dev = 0x803, .st_ino = 12,
			   .st_size = 32 << 20 };

static struct loop_info64 lo(uint64_t dev, uint64_t ino, uint64_t offset,
			     uint64_t sizelimit, uint32_t flags)
{
	return (struct loop_info64){ .lo_device = dev, .lo_inode = ino,
				     .lo_offset = offset,
				     .lo_sizelimit = sizelimit,
				     .lo_flags = flags };
}

static int use(const struct loop_info64 *i, bool ro)
{
	return (int)loop_use(i, &img, ro);
}

/* The whole image, as asked: shared, whatever else its flags say. */
TEST(loop_use_whole_image_is_shared)
{
	struct loop_info64 i;

	i = lo(0x803, 12, 0, 0, LO_FLAGS_AUTOCLEAR);
	EXPECT_EQ(use(&i, false), (int)LOOP_SHARE);
	EXPECT_EQ(use(&i, true), (int)LOOP_SHARE);
	/* a size limit at or past the end still covers it all */
	i = lo(0x803, 12, 0, 32 << 20, 0);
	EXPECT_EQ(use(&i, false), (int)LOOP_SHARE);
	i = lo(0x803, 12, 0, 64 << 20, 0);
	EXPECT_EQ(use(&i, false), (int)LOOP_SHARE);
	/* read-only on read-only */
	i = lo(0x803, 12, 0, 0, LO_FLAGS_READ_ONLY);
	EXPECT_EQ(use(&i, true), (int)LOOP_SHARE);
}

/* Read-write on a read-only device: refused. */
TEST(loop_use_rw_on_ro_device)
{
	struct loop_info64 i = lo(0x803, 12, 0, 0,
				  LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR);

	EXPECT_EQ(use(&i, false), (int)LOOP_READ_ONLY);
}

/* A part of the image is an overlap, read-only or not. */
TEST(loop_use_part_is_an_overlap)
{
	struct loop_info64 i;

	i = lo(0x803, 12, 1 << 20, 0, 0);
	EXPECT_EQ(use(&i, false), (int)LOOP_OVERLAP);
	EXPECT_EQ(use(&i, true), (int)LOOP_OVERLAP);
	i = lo(0x803, 12, 0, 1 << 20, 0);
	EXPECT_EQ(use(&i, false), (int)LOOP_OVERLAP);
	i = lo(0x803, 12, 512, 0, LO_FLAGS_READ_ONLY);
	EXPECT_EQ(use(&i, false), (int)LOOP_OVERLAP);
}

/* Another file (device or inode), or an offset past the end: unrelated. */
TEST(loop_use_other_files_unrelated)
{
	struct loop_info64 i;

	i = lo(0x803, 13, 0, 0, 0);
	EXPECT_EQ(use(&i, false), (int)LOOP_UNRELATED);
	i = lo(0x804, 12, 0, 0, 0);
	EXPECT_EQ(use(&i, false), (int)LOOP_UNRELATED);
	i = lo(0x803, 12, 32 << 20, 0, 0);
	EXPECT_EQ(use(&i, false), (int)LOOP_UNRELATED);
}

TEST_HARNESS_MAIN
