// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the pure parts of shiftctl lxc-hook
 * (shiftctl/lxchook.c): what LXC passes a hook, the effective lxc.idmap
 * of a config and its includes, the record format, and what pre-start,
 * start-host and post-stop decide from the records and the mark.  No
 * root; the config tests write files under a temporary directory.
 *
 * On tests/harness.h: TAP on stdout, each test in a child of its own.
 */
#include "harness.h"

#include <sys/stat.h>

#include "idmap.h"
#include "lxchook.h"

static char err[2048];

/* enums are unsigned here: compared as ints */
#define EXPECT_ENUM(a, b) EXPECT_EQ((int)(a), (int)(b))

static bool has(const char *needle)
{
	if (!strstr(err, needle)) {
		TH_LOG("message '%s' lacks '%s'", err, needle);
		return false;
	}
	return true;
}

/* ---- hook type and rootfs ------------------------------------------------ */

TEST(hook_type_version_0_and_1)
{
	char *args[] = { "c1", "lxc", "start-host" };
	enum lxchook_type t;

	EXPECT_EQ(lxchook_parse_type(NULL, NULL, args, 3, &t, err, sizeof(err)), 0);
	EXPECT_ENUM(t, LXCHOOK_START_HOST);
	EXPECT_EQ(lxchook_parse_type("0", "pre-start", args, 3, &t, err, sizeof(err)), 0);
	EXPECT_ENUM(t, LXCHOOK_START_HOST);
	EXPECT_EQ(lxchook_parse_type("1", "post-stop", NULL, 0, &t, err, sizeof(err)), 0);
	EXPECT_ENUM(t, LXCHOOK_POST_STOP);
	EXPECT_EQ(lxchook_parse_type("1", "pre-mount", args, 3, &t, err, sizeof(err)), 0);
	EXPECT_ENUM(t, LXCHOOK_PRE_MOUNT);
	EXPECT_STREQ(lxchook_type_name(LXCHOOK_PRE_START), "pre-start");
}

TEST(hook_type_refusals)
{
	char *args[] = { "c1", "lxc", "stop" };
	enum lxchook_type t;

	EXPECT_NE(lxchook_parse_type("0", NULL, args, 2, &t, err, sizeof(err)), 0);
	EXPECT_TRUE(has("hook version 0 expects NAME SECTION TYPE arguments"));
	EXPECT_NE(lxchook_parse_type(NULL, NULL, args, 3, &t, err, sizeof(err)), 0);
	EXPECT_TRUE(has("cannot run as a stop hook (only pre-start, pre-mount, start-host and post-stop)"));
	EXPECT_NE(lxchook_parse_type("1", "", NULL, 0, &t, err, sizeof(err)), 0);
	EXPECT_TRUE(has("LXC_HOOK_TYPE is not set (hook version 1)"));
	EXPECT_NE(lxchook_parse_type("1", NULL, NULL, 0, &t, err, sizeof(err)), 0);
	EXPECT_TRUE(has("LXC_HOOK_TYPE is not set"));
	EXPECT_NE(lxchook_parse_type("7", "pre-start", NULL, 0, &t, err, sizeof(err)), 0);
	EXPECT_TRUE(has("unsupported hook version 7"));
	EXPECT_NE(lxchook_parse_type("1", "mount", NULL, 0, &t, err, sizeof(err)), 0);
	EXPECT_TRUE(has("cannot run as a mount hook"));
	EXPECT_NE(lxchook_parse_type("1", "pre-start ", NULL, 0, &t, err, sizeof(err)), 0);
}

/* path, is_dir -> dir, lower (NULL: not that kind) */
static void rootfs_ok(const char *path, bool is_dir, const char *dir,
		      const char *lower)
{
	struct lxchook_rootfs r;
	int ret;

	ret = lxchook_parse_rootfs(path, is_dir, LXCHOOK_PRE_START, &r, err,
				   sizeof(err));
	if (ret)
		TH_LOG("%s: refused: %s", path, err);
	EXPECT_EQ(ret, 0);
	if (ret)
		return;
	EXPECT_STREQ(r.dir ? r.dir : "(null)", dir ? dir : "(null)");
	EXPECT_STREQ(r.lower ? r.lower : "(null)", lower ? lower : "(null)");
	lxchook_rootfs_free(&r);
}

TEST(rootfs_kinds)
{
	rootfs_ok("dir:/srv/c1", false, "/srv/c1", NULL);
	rootfs_ok("/srv/c1", true, "/srv/c1", NULL);
	rootfs_ok("overlay:/b/rootfs:/var/lib/lxc/k1/overlay/delta", false,
		  NULL, "/b/rootfs");
	rootfs_ok("overlayfs:/b:/u", false, NULL, "/b");
	/* liblxc strips the type: LOWER:UPPER, or a directory named so */
	rootfs_ok("/b/rootfs:/var/lib/lxc/k1/delta", false, NULL, "/b/rootfs");
	rootfs_ok("/srv/odd:/name", true, "/srv/odd:/name", NULL);
	/* UPPER follows the last ":/" (LOWER may hold a ":" not before "/") */
	rootfs_ok("overlay:/b:x/rootfs:/u", false, NULL, "/b:x/rootfs");
}

static void rootfs_refused(const char *path, enum lxchook_type type,
			   const char *why)
{
	struct lxchook_rootfs r;
	int ret;

	err[0] = '\0';
	ret = lxchook_parse_rootfs(path, false, type, &r, err, sizeof(err));
	if (!why) {
		/* post-stop: nothing of ours to clean up */
		if (ret != 1)
			TH_LOG("%s: post-stop returned %d, want 1", path ? path : "(null)", ret);
		EXPECT_EQ(ret, 1);
		return;
	}
	EXPECT_LT(ret, 0);
	EXPECT_TRUE(has(why));
	EXPECT_TRUE(!r.dir && !r.lower);
}

TEST(rootfs_refusals)
{
	rootfs_refused(NULL, LXCHOOK_PRE_START, "LXC_ROOTFS_PATH is not set");
	rootfs_refused("", LXCHOOK_POST_STOP, "LXC_ROOTFS_PATH is not set");
	rootfs_refused("loop:/srv/c1.img", LXCHOOK_PRE_START,
		       "rootfs loop:/srv/c1.img: only directory (dir:) and overlay (overlay:LOWER:UPPER) rootfs can be shifted");
	rootfs_refused("zfs:tank/c1", LXCHOOK_PRE_MOUNT, "only directory");
	rootfs_refused("overlay:/b", LXCHOOK_PRE_START,
		       "rootfs overlay:/b: expected an overlay LOWER:UPPER");
	rootfs_refused("overlay::/u", LXCHOOK_PRE_START, "expected an overlay");
	rootfs_refused("overlay:/a:/b:/u", LXCHOOK_START_HOST,
		       "an overlay with several lower layers cannot be shifted (only one LOWER)");
	rootfs_refused("loop:/srv/c1.img", LXCHOOK_POST_STOP, NULL);
	rootfs_refused("overlay:/b", LXCHOOK_POST_STOP, NULL);
	rootfs_refused("overlay:/a:/b:/u", LXCHOOK_POST_STOP, NULL);
}

TEST(record_key)
{
	char *k = lxchook_record_key("c1", "/var/lib/lxc/c1/config");

	ASSERT_TRUE(k != NULL);
	EXPECT_STREQ(k, "c1@%var%lib%lxc%c1%config");
	free(k);
	k = lxchook_record_key("container", NULL);
	EXPECT_STREQ(k, "container@");
	free(k);
}

TEST(names_that_leave_the_state_directory_refused)
{
	char err[256];

	EXPECT_EQ(lxchook_check_names("c1", "/var/lib/lxc/c1/config", err,
				      sizeof(err)), 0);
	EXPECT_EQ(lxchook_check_names("c1", NULL, err, sizeof(err)), 0);
	EXPECT_EQ(lxchook_check_names("../escape", NULL, err, sizeof(err)),
		  -EINVAL);
	EXPECT_TRUE(strstr(err, "container name '../escape'") != NULL);
	EXPECT_EQ(lxchook_check_names("..", NULL, err, sizeof(err)), -EINVAL);
	EXPECT_EQ(lxchook_check_names(".", NULL, err, sizeof(err)), -EINVAL);
	EXPECT_EQ(lxchook_check_names("a\nrootfs=/", NULL, err, sizeof(err)),
		  -EINVAL);
	/* a config path may hold anything: records escape it */
	EXPECT_EQ(lxchook_check_names("c1", "/x\nrootfs=/etc", err,
				      sizeof(err)), 0);
}

/* ---- maps and config ------------------------------------------------------ */

static void words(const struct idmap *m, const char *want)
{
	char buf[1024];

	lxchook_map_words(m, buf, sizeof(buf));
	EXPECT_STREQ(buf, want);
}

TEST(idmap_text_lxc_info)
{
	struct idmap u, g;

	EXPECT_EQ(lxchook_idmap_text("u 1000 1000 1\nu 0 100000 1000\n"
				     "g 0 100000 1000\n\nu 65534 101000 1\n"
				     "g 1000 1000 1\n  g 65534 101000 1  \n",
				     "lxc-info", &u, &g, err, sizeof(err)), 0);
	words(&u, "0:100000:1000 1000:1000:1 65534:101000:1");
	words(&g, "0:100000:1000 1000:1000:1 65534:101000:1");
	/* a key with an empty value, as lxc-info may print it */
	EXPECT_EQ(lxchook_idmap_text("lxc.idmap =\n", "lxc-info", &u, &g, err,
				     sizeof(err)), 0);
	EXPECT_EQ(u.nr + g.nr, 0u);
	EXPECT_NE(lxchook_idmap_text("u 0 100000\n", "lxc-info", &u, &g, err,
				     sizeof(err)), 0);
	EXPECT_TRUE(has("lxc-info: lxc.idmap = u 0 100000: expected 'u|g INSIDE OUTSIDE COUNT'"));
	EXPECT_NE(lxchook_idmap_text("b 0 100000 65536\n", "x", &u, &g, err,
				     sizeof(err)), 0);
	EXPECT_TRUE(has("expected 'u|g"));
	EXPECT_NE(lxchook_idmap_text("u 0 100000 65536 7\n", "x", &u, &g, err,
				     sizeof(err)), 0);
	EXPECT_NE(lxchook_idmap_text("u 0 100000 0\n", "x", &u, &g, err,
				     sizeof(err)), 0);
	EXPECT_TRUE(has("COUNT is 0"));
	EXPECT_NE(lxchook_idmap_text("u 0 100000 10\nu 5 200000 10\n", "x", &u,
				     &g, err, sizeof(err)), 0);
	EXPECT_TRUE(has("overlaps"));
}

TEST(maps_text_and_equality)
{
	struct idmap a, b;
	char buf[256];

	EXPECT_EQ(lxchook_idmap_text("u 5 10 1\nu 0 100000 5\ng 0 1 1\n", "x",
				     &a, &b, err, sizeof(err)), 0);
	lxchook_maps_text(&a, &b, buf, sizeof(buf));
	EXPECT_STREQ(buf, "uids 0:100000:5 5:10:1, gids 0:1:1");
	EXPECT_FALSE(lxchook_map_equal(&a, &b));
	b = a;
	EXPECT_TRUE(lxchook_map_equal(&a, &b));
	b.ext[1].count = 2;
	EXPECT_FALSE(lxchook_map_equal(&a, &b));
}

/* A scratch directory of config files. */
static char dir[64];

static void put_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ASSERT_TRUE(f != NULL);
	fputs(text, f);
	fclose(f);
}

static void scratch(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_lxchook.XXXXXX");
	ASSERT_TRUE(mkdtemp(dir) != NULL);
}

static void unscratch(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		TH_LOG("cannot remove %s", dir);
}

TEST(config_includes_and_clearing)
{
	struct idmap u, g;
	char path[256], text[1024];

	scratch();
	ASSERT_EQ(mkdir(strcat(strcpy(path, dir), "/conf.d"), 0755), 0);
	put_file("early.conf", "lxc.idmap = u 0 300000 65536\nlxc.idmap = g 0 300000 65536\n");
	put_file("conf.d/20-g.conf", "lxc.idmap = g 0 200000 65536\n");
	put_file("conf.d/10-u.conf", "  lxc.idmap=u 0 200000 65536   \n");
	put_file("conf.d/30-x.txt", "lxc.idmap = g 1 1 1\n");
	put_file("conf.d/.conf", "lxc.idmap = g 2 2 2\n");
	snprintf(text, sizeof(text),
		 "# lxc.idmap = u 9 9 9\n"
		 "lxc.uts.name = c1\n"
		 "lxc.include = %s/early.conf\n"
		 "lxc.idmap =\n"
		 "lxc.include = %s/conf.d\n"
		 "lxc.idmapx = u 7 7 7\n", dir, dir);
	put_file("config", text);
	snprintf(path, sizeof(path), "%s/config", dir);
	EXPECT_EQ(lxchook_config_idmap(path, &u, &g, err, sizeof(err)), 0);
	if (u.nr != 1)
		TH_LOG("%s", err);
	words(&u, "0:200000:65536");
	words(&g, "0:200000:65536");
	/* the include's lines count where it is included */
	snprintf(text, sizeof(text), "lxc.idmap = u 0 100000 65536\n"
		 "lxc.idmap =\nlxc.include = %s/early.conf\n", dir);
	put_file("config", text);
	EXPECT_EQ(lxchook_config_idmap(path, &u, &g, err, sizeof(err)), 0);
	words(&u, "0:300000:65536");
	words(&g, "0:300000:65536");
	unscratch();
}

TEST(config_refusals)
{
	struct idmap u, g;
	char path[256], text[512];

	scratch();
	snprintf(path, sizeof(path), "%s/config", dir);
	EXPECT_NE(lxchook_config_idmap(path, &u, &g, err, sizeof(err)), 0);
	EXPECT_TRUE(has("cannot read"));
	snprintf(text, sizeof(text), "lxc.include = %s/nope.conf\n", dir);
	put_file("config", text);
	EXPECT_NE(lxchook_config_idmap(path, &u, &g, err, sizeof(err)), 0);
	EXPECT_TRUE(has("/config: cannot read lxc.include = "));
	EXPECT_TRUE(has("/nope.conf"));
	/* including itself: too deep, not forever */
	snprintf(text, sizeof(text), "lxc.include = %s/config\n", dir);
	put_file("config", text);
	EXPECT_NE(lxchook_config_idmap(path, &u, &g, err, sizeof(err)), 0);
	EXPECT_TRUE(has("lxc.include nested too deep"));
	put_file("config", "lxc.idmap = u 0 100000\n");
	EXPECT_NE(lxchook_config_idmap(path, &u, &g, err, sizeof(err)), 0);
	EXPECT_TRUE(has("lxc.idmap = u 0 100000: expected"));
	EXPECT_TRUE(has("/config"));
	unscratch();
}

/* ---- records -------------------------------------------------------------- */

TEST(stat_field_odd_comm)
{
	unsigned long long v;
	const char *stat = "4242 (a) b (c) d) S 17 4242 4242 0 -1 4194560 "
			   "100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10\n";

	EXPECT_EQ(lxchook_stat_field(stat, 4, &v), 0);
	EXPECT_EQ(v, 17ull);
	EXPECT_EQ(lxchook_stat_field(stat, 22, &v), 0);
	EXPECT_EQ(v, 987654ull);
	EXPECT_NE(lxchook_stat_field("4242 (x) S 1", 22, &v), 0);
	EXPECT_NE(lxchook_stat_field("garbage", 4, &v), 0);
}

static void sample(struct lxchook_record *r, struct idmap *u, struct idmap *g)
{
	ASSERT_EQ(lxchook_idmap_text("u 0 100000 65536\ng 0 100000 65536\n", "x",
				     u, g, err, sizeof(err)), 0);
	memset(r, 0, sizeof(*r));
	r->name = "c1";
	r->config = "/var/lib/lxc/c1/config";
	r->rootfs = "/srv/odd\\dir\nwith newline";
	r->uid = *u;
	r->gid = *g;
	r->owner = (struct lxchook_proc){ 1234, 5678 };
	r->phase = LXCHOOK_PHASE_MARKED;
}

TEST(record_round_trip)
{
	struct lxchook_record r, back;
	struct idmap u, g;
	char *text;

	sample(&r, &u, &g);
	text = lxchook_record_format(&r);
	ASSERT_TRUE(text != NULL);
	/* one line per field: the newline in the path is escaped */
	EXPECT_STREQ(text, "name=c1\nconfig=/var/lib/lxc/c1/config\n"
			   "rootfs=/srv/odd\\\\dir\\nwith newline\n"
			   "uids=0:100000:65536\ngids=0:100000:65536\n"
			   "owner=1234 5678\nphase=marked\n");
	ASSERT_EQ(lxchook_record_parse(text, &back, err, sizeof(err)), 0);
	EXPECT_STREQ(back.rootfs, r.rootfs);
	EXPECT_STREQ(back.name, "c1");
	EXPECT_TRUE(lxchook_map_equal(&back.uid, &u));
	EXPECT_TRUE(lxchook_map_equal(&back.gid, &g));
	EXPECT_EQ(back.owner.pid, 1234);
	EXPECT_EQ(back.owner.start, 5678ull);
	EXPECT_EQ(back.init.pid, 0);
	EXPECT_ENUM(back.phase, LXCHOOK_PHASE_MARKED);
	lxchook_record_free(&back);
	free(text);
	r.phase = LXCHOOK_PHASE_RUNNING;
	r.init = (struct lxchook_proc){ 99, 100 };
	text = lxchook_record_format(&r);
	EXPECT_TRUE(strstr(text, "init=99 100\nphase=running\n") != NULL);
	ASSERT_EQ(lxchook_record_parse(text, &back, err, sizeof(err)), 0);
	EXPECT_EQ(back.init.pid, 99);
	EXPECT_ENUM(back.phase, LXCHOOK_PHASE_RUNNING);
	lxchook_record_free(&back);
	free(text);
}

/* A record the shell hook wrote (maps with a trailing blank, unsorted). */
TEST(record_of_the_shell_hook)
{
	struct lxchook_record r;

	ASSERT_EQ(lxchook_record_parse("name=c7\nconfig=/var/lib/lxc/c7/config\n"
				       "rootfs=/srv/images/c7\n"
				       "uids=1000:1000:1 0:100000:1000 65534:101000:1 \n"
				       "gids=0:100000:1000 1000:1000:1 65534:101000:1 \n"
				       "owner=321 4455\nphase=running\nfuture=x\n",
				       &r, err, sizeof(err)), 0);
	words(&r.uid, "0:100000:1000 1000:1000:1 65534:101000:1");
	EXPECT_TRUE(lxchook_map_equal(&r.uid, &r.gid));
	EXPECT_EQ(r.owner.pid, 321);
	EXPECT_ENUM(r.phase, LXCHOOK_PHASE_RUNNING);
	lxchook_record_free(&r);
}

TEST(record_refusals)
{
	struct lxchook_record r;

	EXPECT_NE(lxchook_record_parse("rootfs=/x\n", &r, err, sizeof(err)), 0);
	EXPECT_TRUE(has("no name= line"));
	EXPECT_NE(lxchook_record_parse("name=c1\n", &r, err, sizeof(err)), 0);
	EXPECT_TRUE(has("no rootfs= line"));
	EXPECT_NE(lxchook_record_parse("name=c1\nrootfs=/x\nowner=12\n", &r,
				       err, sizeof(err)), 0);
	EXPECT_TRUE(has("owner=12: expected PID START"));
	EXPECT_NE(lxchook_record_parse("name=c1\nrootfs=/x\nuids=0:1\n", &r,
				       err, sizeof(err)), 0);
	EXPECT_TRUE(has("uidmap"));
	/* a torn record (cut mid-line) is refused, not half believed */
	EXPECT_NE(lxchook_record_parse("name=c1\nconfig=/c\nroot", &r, err,
				       sizeof(err)), 0);
}

/* ---- decisions ------------------------------------------------------------ */

struct world {
	struct idmap u1, g1, u2, g2;
	struct lxchook_record recs[4];
	struct lxchook_peer peers[4];
	struct lxchook_mark mark;
	struct lxchook_pre_start ps;
};

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	ASSERT_EQ(lxchook_idmap_text("u 0 100000 65536\ng 0 100000 65536\n",
				     "x", &w->u1, &w->g1, err, sizeof(err)), 0);
	ASSERT_EQ(lxchook_idmap_text("u 0 200000 65536\ng 0 200000 65536\n",
				     "x", &w->u2, &w->g2, err, sizeof(err)), 0);
	w->ps.name = "c2";
	w->ps.rootfs = "/srv/r";
	w->ps.uid = &w->u1;
	w->ps.gid = &w->g1;
}

/* peer i: name, rootfs, maps 1 or 2, phase, alive, ours */
static void peer(struct world *w, int i, const char *name, const char *rootfs,
		 int maps, enum lxchook_phase phase, bool alive, bool ours)
{
	w->recs[i].name = (char *)name;
	w->recs[i].rootfs = (char *)rootfs;
	w->recs[i].uid = maps == 1 ? w->u1 : w->u2;
	w->recs[i].gid = maps == 1 ? w->g1 : w->g2;
	w->recs[i].phase = phase;
	w->peers[i].rec = &w->recs[i];
	w->peers[i].alive = alive;
	w->peers[i].ours = ours;
}

static void mark(struct world *w, int maps)
{
	w->mark.present = true;
	w->mark.uid = maps == 1 ? w->u1 : w->u2;
	w->mark.gid = maps == 1 ? w->g1 : w->g2;
}

static int decide(struct world *w, size_t n)
{
	err[0] = '\0';
	return lxchook_decide_pre_start(&w->ps, w->peers, n, &w->mark,
					"shiftctl", err, sizeof(err));
}

TEST(pre_start_alone_and_stale_records)
{
	struct world w;

	world_init(&w);
	EXPECT_EQ(decide(&w, 0), 0);
	EXPECT_ENUM(w.ps.action, LXCHOOK_MARK_NEW);
	EXPECT_TRUE(w.ps.shared == NULL);
	/* ours (an earlier start), a dead one, an unreadable one: stale */
	peer(&w, 0, "c2", "/srv/r", 1, LXCHOOK_PHASE_RUNNING, true, true);
	peer(&w, 1, "c9", "/srv/r", 2, LXCHOOK_PHASE_MARKED, false, false);
	w.peers[2] = (struct lxchook_peer){ .rec = NULL, .alive = false };
	peer(&w, 3, "c8", "/srv/other", 2, LXCHOOK_PHASE_MARKED, true, false);
	EXPECT_EQ(decide(&w, 4), 0);
	EXPECT_TRUE(w.peers[0].remove && w.peers[1].remove && w.peers[2].remove);
	EXPECT_FALSE(w.peers[3].remove);
	EXPECT_ENUM(w.ps.action, LXCHOOK_MARK_NEW);
}

TEST(pre_start_other_maps_in_use)
{
	struct world w;

	world_init(&w);
	peer(&w, 0, "c1", "/srv/r", 2, LXCHOOK_PHASE_RUNNING, true, false);
	EXPECT_NE(decide(&w, 1), 0);
	EXPECT_TRUE(has("/srv/r is in use by c1 (uids 0:200000:65536, gids 0:200000:65536), c2 wants other maps (uids 0:100000:65536, gids 0:100000:65536): a rootfs is shifted for one set of maps at a time; stop c1 first"));
	/* while it starts, too */
	peer(&w, 0, "c1", "/srv/r", 2, LXCHOOK_PHASE_MARKED, true, false);
	mark(&w, 2);
	EXPECT_NE(decide(&w, 1), 0);
	EXPECT_TRUE(has("in use by c1"));
	/* once it is gone, its record is stale and explains its mark */
	w.peers[0].alive = false;
	EXPECT_EQ(decide(&w, 1), 0);
	EXPECT_TRUE(w.peers[0].remove);
	EXPECT_ENUM(w.ps.action, LXCHOOK_MARK_REPLACE);
}

TEST(pre_start_shares_a_starting_peers_mark)
{
	struct world w;

	world_init(&w);
	peer(&w, 0, "c1", "/srv/r", 1, LXCHOOK_PHASE_MARKED, true, false);
	mark(&w, 1);
	EXPECT_EQ(decide(&w, 1), 0);
	EXPECT_ENUM(w.ps.action, LXCHOOK_MARK_SHARE);
	EXPECT_STREQ(w.ps.shared, "c1");
	EXPECT_FALSE(w.peers[0].remove);
	/* a running peer with our maps: no mark to share, make one */
	world_init(&w);
	peer(&w, 0, "c1", "/srv/r", 1, LXCHOOK_PHASE_RUNNING, true, false);
	EXPECT_EQ(decide(&w, 1), 0);
	EXPECT_ENUM(w.ps.action, LXCHOOK_MARK_NEW);
	/* the peer's mark holds other maps than both of ours */
	world_init(&w);
	peer(&w, 0, "c1", "/srv/r", 1, LXCHOOK_PHASE_MARKED, true, false);
	mark(&w, 2);
	EXPECT_NE(decide(&w, 1), 0);
	EXPECT_TRUE(has("/srv/r carries a mark for uids 0:200000:65536, gids 0:200000:65536 while c1 starts with uids 0:100000:65536"));
}

TEST(pre_start_marks_nobody_holds)
{
	struct world w;

	world_init(&w);
	mark(&w, 2);
	EXPECT_NE(decide(&w, 0), 0);
	EXPECT_TRUE(has("/srv/r carries a shiftfs mark (uids 0:200000:65536, gids 0:200000:65536) that no container started by this hook holds; if it is stale, drop it with: shiftctl unmark /srv/r"));
	/* with our own maps: left by our start that never finished */
	mark(&w, 1);
	EXPECT_EQ(decide(&w, 0), 0);
	EXPECT_ENUM(w.ps.action, LXCHOOK_MARK_REPLACE);
	/* in the hook's own directory (an overlay's LOWER): ours */
	mark(&w, 2);
	w.ps.lower = true;
	EXPECT_EQ(decide(&w, 0), 0);
	EXPECT_ENUM(w.ps.action, LXCHOOK_MARK_REPLACE);
	/* a stale record on another rootfs explains nothing */
	world_init(&w);
	mark(&w, 2);
	peer(&w, 0, "c1", "/srv/other", 2, LXCHOOK_PHASE_MARKED, false, false);
	EXPECT_NE(decide(&w, 1), 0);
	EXPECT_TRUE(has("no container started by this hook holds"));
}

TEST(marking_peer_and_post_stop)
{
	struct world w;

	world_init(&w);
	peer(&w, 0, "c1", "/srv/r", 1, LXCHOOK_PHASE_MARKED, true, true);
	peer(&w, 1, "c3", "/srv/r", 1, LXCHOOK_PHASE_RUNNING, true, false);
	peer(&w, 2, "c4", "/srv/r", 1, LXCHOOK_PHASE_MARKED, false, false);
	peer(&w, 3, "c5", "/srv/x", 1, LXCHOOK_PHASE_MARKED, true, false);
	EXPECT_TRUE(lxchook_marking_peer(w.peers, 4, "/srv/r") == NULL);
	w.peers[2].alive = true;
	EXPECT_STREQ(lxchook_marking_peer(w.peers, 4, "/srv/r"), "c4");

	/* post-stop: our record in phase marked, the mark with our maps */
	mark(&w, 1);
	EXPECT_ENUM(lxchook_decide_post_stop(&w.recs[0], &w.mark, NULL),
		  LXCHOOK_POST_STOP_UNMARK);
	EXPECT_ENUM(lxchook_decide_post_stop(&w.recs[0], &w.mark, "c4"),
		  LXCHOOK_POST_STOP_KEEP);
	EXPECT_ENUM(lxchook_decide_post_stop(&w.recs[1], &w.mark, NULL),
		  LXCHOOK_POST_STOP_NOTHING);
	EXPECT_ENUM(lxchook_decide_post_stop(NULL, &w.mark, NULL),
		  LXCHOOK_POST_STOP_NOTHING);
	mark(&w, 2);
	EXPECT_ENUM(lxchook_decide_post_stop(&w.recs[0], &w.mark, NULL),
		  LXCHOOK_POST_STOP_NOTHING);
	w.mark.present = false;
	EXPECT_ENUM(lxchook_decide_post_stop(&w.recs[0], &w.mark, NULL),
		  LXCHOOK_POST_STOP_NOTHING);
}

TEST_HARNESS_MAIN
