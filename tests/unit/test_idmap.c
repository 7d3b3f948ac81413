// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of shiftctl's pure logic (shiftctl/idmap.c, json.c,
 * source.c, mntattr.c):
 * every malformed map is rejected with a message naming it, maps survive
 * the option-string round trip, and /proc uid_map text derives the right
 * shiftfs options.  No root, no kernel features.
 *
 * Output: "ok N - name" / "not ok N - name" lines with "# " diagnostics,
 * then "N passed, N failed".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

#include "idmap.h"
#include "json.h"
#include "mntattr.h"
#include "source.h"

struct ctx {
	int num, passed, failed;
	const char *name;
	bool ok;
};

static struct ctx T;

static void begin(const char *name)
{
	T.name = name;
	T.ok = true;
}

static void end(void)
{
	T.num++;
	if (T.ok)
		T.passed++;
	else
		T.failed++;
	printf("%s %d - %s\n", T.ok ? "ok" : "not ok", T.num, T.name);
}

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...)
{
	va_list ap;

	T.ok = false;
	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

#define CHECK(cond)							\
	do {								\
		if (!(cond))						\
			failf("%s:%d: %s", __FILE__, __LINE__, #cond);	\
	} while (0)

#define CHECK_STR(a, b)							\
	do {								\
		const char *_a = (a), *_b = (b);			\
		if (!_a || !_b || strcmp(_a, _b))			\
			failf("%s:%d: '%s' != '%s'", __FILE__, __LINE__,\
			      _a ? _a : "(null)", _b ? _b : "(null)");	\
	} while (0)

/* The call failed and its message holds every one of the needles. */
static void check_msg(int ret, const char *err, const char *n1,
		      const char *n2, int line)
{
	if (ret == 0) {
		failf("line %d: accepted, expected a rejection", line);
		return;
	}
	if ((n1 && !strstr(err, n1)) || (n2 && !strstr(err, n2)))
		failf("line %d: message '%s' lacks '%s'%s%s%s", line, err, n1,
		      n2 ? " or '" : "", n2 ? n2 : "", n2 ? "'" : "");
}

#define REJECT(call, n1, n2) check_msg((call), err, (n1), (n2), __LINE__)

static struct idmap uid, gid;
static char err[512];

/* One uidmap extent string, rejected with a message naming it. */
static void reject_extent(const char *s, const char *why)
{
	idmap_init(&uid);
	err[0] = '\0';
	check_msg(idmap_add_string(&uid, IDMAP_UID, s, err, sizeof(err)), err,
		  why, "uidmap", __LINE__);
	if (*s)
		check_msg(-1, err, s, NULL, __LINE__);
	if (uid.nr != 0)
		failf("'%s': rejected extent was added", s);
}

static void test_extent_rejects(void)
{
	begin("extent: too few / too many fields");
	reject_extent("0:1", "too few fields");
	reject_extent("", "too few fields");
	reject_extent("5", "too few fields");
	reject_extent("0:1:2:3", "too many fields");
	end();

	begin("extent: non-numeric fields");
	reject_extent("a:1:2", "FROM 'a' is not a number");
	reject_extent("0:1x:2", "TO '1x' is not a number");
	reject_extent("0:1:0x10", "COUNT '0x10' is not a number");
	reject_extent(" 1:2:3", "is not a number");
	reject_extent("+1:2:3", "is not a number");
	reject_extent("::", "FROM is empty");
	reject_extent("1::3", "TO is empty");
	end();

	begin("extent: negative numbers");
	reject_extent("-1:0:1", "FROM '-1' is negative");
	reject_extent("0:-100000:1", "TO '-100000' is negative");
	reject_extent("0:0:-5", "COUNT '-5' is negative");
	end();

	begin("extent: overflow past 2^32");
	reject_extent("4294967296:0:1", "FROM '4294967296' is larger than 4294967295");
	reject_extent("0:99999999999999999999:1", "larger than");
	reject_extent("0:0:4294967296", "COUNT '4294967296' is larger");
	reject_extent("4294967290:0:10", "FROM+COUNT runs past");
	reject_extent("0:4294967290:10", "TO+COUNT runs past");
	reject_extent("1:0:4294967295", "FROM+COUNT runs past");
	end();

	begin("extent: count 0");
	reject_extent("0:100000:0", "COUNT is 0");
	reject_extent("0:100000:000", "COUNT is 0");
	end();

	begin("extent: edge values accepted");
	idmap_init(&uid);
	CHECK(idmap_add_string(&uid, IDMAP_UID, "0:0:4294967295", err, sizeof(err)) == 0);
	idmap_init(&uid);
	CHECK(idmap_add_string(&uid, IDMAP_UID, "4294967294:0:1", err, sizeof(err)) == 0);
	CHECK(idmap_add_string(&uid, IDMAP_UID, "007:8:9", err, sizeof(err)) == 0);
	CHECK(uid.nr == 2 && uid.ext[1].from == 7 && uid.ext[1].to == 8 &&
	      uid.ext[1].count == 9);
	end();
}

static void test_overlaps(void)
{
	begin("overlap of underlying ids rejected, naming both extents");
	idmap_init(&gid);
	CHECK(idmap_add_string(&gid, IDMAP_GID, "0:100000:1000", err, sizeof(err)) == 0);
	REJECT(idmap_add_string(&gid, IDMAP_GID, "999:200000:10", err, sizeof(err)),
	       "gidmap 999:200000:10 overlaps 0:100000:1000", "underlying");
	CHECK(gid.nr == 1);
	end();

	begin("overlap of shifted ids rejected (the map is a bijection)");
	idmap_init(&uid);
	CHECK(idmap_add_string(&uid, IDMAP_UID, "0:100:10", err, sizeof(err)) == 0);
	REJECT(idmap_add_string(&uid, IDMAP_UID, "50:109:3", err, sizeof(err)),
	       "50:109:3 overlaps 0:100:10", "shifted");
	end();

	begin("adjacent extents are not overlapping");
	idmap_init(&uid);
	CHECK(idmap_add_string(&uid, IDMAP_UID, "0:100:10", err, sizeof(err)) == 0);
	CHECK(idmap_add_string(&uid, IDMAP_UID, "10:110:10", err, sizeof(err)) == 0);
	CHECK(idmap_add_string(&uid, IDMAP_UID, "20:0:100", err, sizeof(err)) == 0);
	CHECK(uid.nr == 3);
	end();
}

static void fill(struct idmap *m, unsigned int n)
{
	struct idmap_extent e;
	unsigned int i;

	idmap_init(m);
	for (i = 0; i < n; i++) {
		e.from = i * 10;
		e.to = 100000 + i * 10;
		e.count = 10;
		if (idmap_add(m, &e, err, sizeof(err)))
			failf("extent %u refused: %s", i, err);
	}
}

static void test_limit(void)
{
	struct idmap_extent e = { 5000, 500000, 1 };

	begin("340 extents accepted, the 341st rejected");
	fill(&uid, IDMAP_MAX_EXTENTS);
	CHECK(uid.nr == IDMAP_MAX_EXTENTS);
	REJECT(idmap_add(&uid, &e, err, sizeof(err)), "more than 340 extents",
	       "5000:500000:1");
	CHECK(uid.nr == IDMAP_MAX_EXTENTS);
	end();

	begin("a 341-extent option string is rejected");
	{
		char *opts = idmap_format_options(&uid, &gid);
		char *more = NULL;

		CHECK(opts != NULL);
		CHECK(asprintf(&more, "%s,uidmap=5000:500000:1", opts) > 0);
		REJECT(idmap_parse_options(more, &uid, &gid, err, sizeof(err)),
		       "uidmap", "more than 340 extents");
		free(opts);
		free(more);
	}
	end();
}

static const char *three_line =
	"         0     100000       1000\n"
	"      1000       1000          1\n"
	"     65534     101000          1\n";

static void reject_proc(const char *text, const char *n1, const char *n2)
{
	err[0] = '\0';
	check_msg(idmap_parse_proc(&uid, text, "/proc/42/uid_map", err,
				   sizeof(err)), err, n1, n2, __LINE__);
	check_msg(-1, err, "/proc/42/uid_map", NULL, __LINE__);
}

static void test_proc(void)
{
	begin("uid_map: empty file rejected");
	reject_proc("", "is empty", NULL);
	reject_proc("\n", "is empty", NULL);
	reject_proc("   \n \n", "is empty", NULL);
	end();

	begin("uid_map: malformed lines rejected, naming line and text");
	reject_proc("0 100000\n", "line 1 '0 100000'", "too few fields");
	reject_proc("0 100000 65536 1\n", "line 1", "too many fields");
	reject_proc("0 100000 65536\n1000 x 1\n", "line 2 '1000 x 1'",
		    "OUTSIDE 'x' is not a number");
	reject_proc("0 -1 5\n", "OUTSIDE '-1' is negative", NULL);
	reject_proc("0 0 4294967296\n", "COUNT '4294967296' is larger", NULL);
	reject_proc("0 100000 0\n", "line 1", "COUNT is 0");
	reject_proc("0 100000 65536\n10 200000 5\n", "line 2", "overlaps");
	reject_proc("4294967295 0 1\n", "INSIDE+COUNT runs past", NULL);
	end();

	begin("uid_map: 340 lines accepted, 341 rejected");
	{
		char *text = NULL, *more = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		unsigned int i;

		for (i = 0; i < IDMAP_MAX_EXTENTS; i++)
			fprintf(f, "%10u %10u %10u\n", i * 2, 100000 + i * 2, 2);
		fclose(f);
		CHECK(idmap_parse_proc(&uid, text, "m", err, sizeof(err)) == 0);
		CHECK(uid.nr == IDMAP_MAX_EXTENTS);
		CHECK(asprintf(&more, "%s%10u %10u %10u\n", text, 5000, 900000, 1) > 0);
		reject_proc(more, "line 341", "more than 340 extents");
		free(text);
		free(more);
	}
	end();

	begin("uid_map: kernel-padded 3-extent map parsed");
	CHECK(idmap_parse_proc(&uid, three_line, "m", err, sizeof(err)) == 0);
	CHECK(uid.nr == 3);
	CHECK(uid.ext[0].from == 0 && uid.ext[0].to == 100000 && uid.ext[0].count == 1000);
	CHECK(uid.ext[1].from == 1000 && uid.ext[1].to == 1000 && uid.ext[1].count == 1);
	CHECK(uid.ext[2].from == 65534 && uid.ext[2].to == 101000 && uid.ext[2].count == 1);
	CHECK(idmap_map(&uid, 0) == 100000);
	CHECK(idmap_map(&uid, 999) == 100999);
	CHECK(idmap_map(&uid, 1000) == 1000);
	CHECK(idmap_map(&uid, 65534) == 101000);
	CHECK(idmap_map(&uid, 2000) == -1);
	/* no trailing newline, tabs */
	CHECK(idmap_parse_proc(&uid, "0\t100000\t65536", "m", err, sizeof(err)) == 0);
	CHECK(uid.nr == 1 && uid.ext[0].count == 65536);
	end();
}

static void test_derive(void)
{
	char *opts;

	begin("derive: 3-extent uid map, 1-extent gid map -> options");
	CHECK(idmap_derive(three_line, "0 100000 65536\n", false, "pid 42",
			   &uid, &gid, err, sizeof(err)) == 0);
	opts = idmap_format_options(&uid, &gid);
	CHECK_STR(opts, "uidmap=0:100000:1000,uidmap=1000:1000:1,"
			"uidmap=65534:101000:1,gidmap=0:100000:65536");
	free(opts);
	end();

	begin("derive: identity map (not in a user namespace) rejected");
	REJECT(idmap_derive("         0          0 4294967295\n",
			    "         0          0 4294967295\n", false, "pid 1",
			    &uid, &gid, err, sizeof(err)),
	       "pid 1 is not in a user namespace", "--allow-identity");
	REJECT(idmap_derive("0 100000 65536\n", "0 0 4294967295\n", false,
			    "pid 7", &uid, &gid, err, sizeof(err)),
	       "pid 7", "gid_map is the identity");
	end();

	begin("derive: identity accepted with allow_identity");
	CHECK(idmap_derive("0 0 4294967295\n", "0 0 4294967295\n", true, "pid 1",
			   &uid, &gid, err, sizeof(err)) == 0);
	CHECK(idmap_is_identity(&uid) && idmap_is_identity(&gid));
	opts = idmap_format_options(&uid, &gid);
	CHECK_STR(opts, "uidmap=0:0:4294967295,gidmap=0:0:4294967295");
	free(opts);
	end();

	begin("derive: errors name the pid and the file");
	REJECT(idmap_derive("0 100000 65536\n", "", false, "pid 99", &uid,
			    &gid, err, sizeof(err)),
	       "pid 99 gid_map", "is empty");
	REJECT(idmap_derive("0 1\n", "0 1 1\n", false, "pid 99", &uid, &gid,
			    err, sizeof(err)),
	       "pid 99 uid_map line 1", "too few fields");
	end();
}

static bool same(const struct idmap *a, const struct idmap *b)
{
	return a->nr == b->nr &&
	       !memcmp(a->ext, b->ext, a->nr * sizeof(a->ext[0]));
}

static void test_round_trip(void)
{
	struct idmap u2, g2;
	char *opts, *opts2;

	begin("round trip: maps -> options -> maps (3 + 1 extents)");
	CHECK(idmap_derive(three_line, "0 100000 65536\n", false, "p", &uid,
			   &gid, err, sizeof(err)) == 0);
	opts = idmap_format_options(&uid, &gid);
	CHECK(idmap_parse_options(opts, &u2, &g2, err, sizeof(err)) == 0);
	CHECK(same(&uid, &u2) && same(&gid, &g2));
	opts2 = idmap_format_options(&u2, &g2);
	CHECK_STR(opts2, opts);
	free(opts);
	free(opts2);
	end();

	begin("round trip: 340 + 340 extents");
	fill(&uid, IDMAP_MAX_EXTENTS);
	fill(&gid, IDMAP_MAX_EXTENTS);
	opts = idmap_format_options(&uid, &gid);
	CHECK(opts && idmap_parse_options(opts, &u2, &g2, err, sizeof(err)) == 0);
	CHECK(same(&uid, &u2) && same(&gid, &g2));
	free(opts);
	end();

	begin("options: other mount options ignored, maps kept in order");
	CHECK(idmap_parse_options("rw,relatime,uidmap=0:100000:65536,xino=off,"
				  "gidmap=0:200000:10,gidmap=10:300000:5",
				  &u2, &g2, err, sizeof(err)) == 0);
	CHECK(u2.nr == 1 && g2.nr == 2 && g2.ext[1].to == 300000);
	CHECK(idmap_parse_options("", &u2, &g2, err, sizeof(err)) == 0);
	CHECK(u2.nr == 0 && g2.nr == 0);
	opts = idmap_format_options(&u2, &g2);
	CHECK_STR(opts, "");
	free(opts);
	end();

	begin("options: malformed map options rejected, named");
	REJECT(idmap_parse_options("uidmap=0:1", &u2, &g2, err, sizeof(err)),
	       "uidmap '0:1'", "too few fields");
	REJECT(idmap_parse_options("gidmap=0:1:2,gidmap=1:5:1", &u2, &g2, err,
				   sizeof(err)), "gidmap 1:5:1 overlaps", NULL);
	REJECT(idmap_parse_options("uidmap=", &u2, &g2, err, sizeof(err)),
	       "uidmap", "too few fields");
	REJECT(idmap_parse_options("uidmap=0:0:0", &u2, &g2, err, sizeof(err)),
	       "uidmap '0:0:0'", "COUNT is 0");
	end();
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

static void check_json(const char *in, const char *want, int line)
{
	char *got = json_of(in);

	if (strcmp(got, want))
		failf("line %d: json '%s', want '%s'", line, got, want);
	free(got);
}

static void test_json(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	begin("json: escaping");
	check_json("plain/path", "\"plain/path\"", __LINE__);
	check_json("a\"b\\c", "\"a\\\"b\\\\c\"", __LINE__);
	check_json("l1\nl2\tx\r", "\"l1\\nl2\\tx\\r\"", __LINE__);
	check_json("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"", __LINE__);
	check_json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		   "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", __LINE__);
	check_json("bad\xff" "byte", "\"bad\\ufffdbyte\"", __LINE__);
	check_json("\xc3", "\"\\ufffd\"", __LINE__);	/* truncated */
	check_json("\xc0\xaf", "\"\\ufffd\\ufffd\"", __LINE__);	/* overlong */
	check_json("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"", __LINE__); /* surrogate */
	check_json("", "\"\"", __LINE__);
	check_json(NULL, "null", __LINE__);
	end();

	begin("utf8_sanitize: valid UTF-8 kept, each invalid byte U+FFFD");
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
			CHECK_STR(got, t[i].want);
			free(got);
		}
	}
	end();

	begin("json: id maps");
	idmap_init(&uid);
	CHECK(idmap_add_string(&uid, IDMAP_UID, "0:100000:1000", err, sizeof(err)) == 0);
	CHECK(idmap_add_string(&uid, IDMAP_UID, "1000:1000:1", err, sizeof(err)) == 0);
	f = open_memstream(&buf, &len);
	json_idmap(f, &uid);
	idmap_init(&gid);
	json_idmap(f, &gid);
	fclose(f);
	CHECK_STR(buf, "[{\"from\":0,\"to\":100000,\"count\":1000},"
		       "{\"from\":1000,\"to\":1000,\"count\":1}][]");
	free(buf);
	end();
}

static void test_source_names(void)
{
	char buf[128], dev[40];

	begin("tmpdir names carry the device and parse back");
	CHECK(source_tmpdir_template(buf, sizeof(buf), "/run", "/dev/loop12") == 0);
	CHECK_STR(buf, "/run/shiftctl-loop12.XXXXXX");
	memcpy(buf + strlen(buf) - 6, "a1B2c3", 6);	/* as mkdtemp() would */
	CHECK(source_tmpdir_dev(buf, dev, sizeof(dev)) == 0);
	CHECK_STR(dev, "loop12");
	CHECK(source_tmpdir_template(buf, sizeof(buf), "/tmp", "nvme0n1p2") == 0);
	CHECK_STR(buf, "/tmp/shiftctl-nvme0n1p2.XXXXXX");
	CHECK(source_tmpdir_dev("/tmp/shiftctl-nvme0n1p2.Zz09Aa", dev, sizeof(dev)) == 0);
	CHECK_STR(dev, "nvme0n1p2");
	end();

	begin("tmpdir names: anything else is not one");
	CHECK(source_tmpdir_template(buf, sizeof(buf), "/run", "/dev/a b") != 0);
	CHECK(source_tmpdir_template(buf, sizeof(buf), "/run", "/dev/") != 0);
	CHECK(source_tmpdir_template(buf, 16, "/run", "loop0") == -ENAMETOOLONG);
	CHECK(source_tmpdir_dev("/srv/rootfs", dev, sizeof(dev)) != 0);
	CHECK(source_tmpdir_dev("shiftctl-loop0.abcdef", dev, sizeof(dev)) != 0);
	CHECK(source_tmpdir_dev("/run/shiftctl-.abcdef", dev, sizeof(dev)) != 0);
	CHECK(source_tmpdir_dev("/run/shiftctl-loop0", dev, sizeof(dev)) != 0);
	CHECK(source_tmpdir_dev("/run/shiftctl-lo op0.abcdef", dev, sizeof(dev)) != 0);
	CHECK(source_tmpdir_dev("/run/shiftctl-loop0.abc", dev, sizeof(dev)) != 0);
	CHECK(source_tmpdir_dev("/run/shiftctl-loop0.abcdef", dev, 5) != 0);
	end();
}

static void test_mount_attr(void)
{
	const uint64_t nosuid = MOUNT_ATTR_NOSUID, nodev = MOUNT_ATTR_NODEV;
	const uint64_t noexec = MOUNT_ATTR_NOEXEC, ro = MOUNT_ATTR_RDONLY;

	begin("mount attrs: explicit maps are nosuid,nodev unless --suid");
	CHECK(shift_mount_attr(SHIFT_MAPS, false, false, 0) == (nosuid | nodev));
	CHECK(shift_mount_attr(SHIFT_MAPS, true, false, 0) == (ro | nosuid | nodev));
	CHECK(shift_mount_attr(SHIFT_MAPS, false, true, 0) == nodev);
	end();

	begin("mount attrs: the source's nosuid and noexec are kept");
	CHECK(shift_mount_attr(SHIFT_MAPS, false, true, ST_NOSUID) == (nosuid | nodev));
	CHECK(shift_mount_attr(SHIFT_MAPS, false, true, ST_NOEXEC) == (noexec | nodev));
	CHECK(shift_mount_attr(SHIFT_MAPS, false, false, ST_NOEXEC | ST_NOSUID) ==
	      (noexec | nosuid | nodev));
	/* the source's other flags (ro, nodev) are not ours to copy */
	CHECK(shift_mount_attr(SHIFT_MAPS, false, true, ST_RDONLY | ST_NODEV) == nodev);
	end();

	begin("mount attrs: mounts from a mark and marks keep ro only");
	CHECK(shift_mount_attr(SHIFT_FROM_MARK, false, false, ST_NOSUID | ST_NOEXEC) == 0);
	CHECK(shift_mount_attr(SHIFT_FROM_MARK, true, false, 0) == ro);
	CHECK(shift_mount_attr(SHIFT_MARK, false, false, 0) == 0);
	end();
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_extent_rejects();
	test_overlaps();
	test_limit();
	test_proc();
	test_derive();
	test_round_trip();
	test_json();
	test_source_names();
	test_mount_attr();
	printf("%d passed, %d failed\n", T.passed, T.failed);
	return T.failed ? 1 : 0;
}
