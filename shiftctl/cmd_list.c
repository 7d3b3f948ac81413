// SPDX-License-Identifier: GPL-2.0
/*
 * shiftctl list: the shiftfs mounts of our mount namespace, read with
 * libmount and printed with libsmartcols (as findmnt and lsblk do): a
 * table, --raw, --json, --noheadings, --output COLUMN,...
 */
#include <getopt.h>
#include <libmount.h>
#include <libsmartcols.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "shiftctl.h"
#include "source.h"

enum {
	COL_TARGET, COL_SOURCE, COL_MODE, COL_NOSUID, COL_NODEV, COL_NOEXEC,
	COL_MAPS, COL_UIDMAP, COL_GIDMAP, COL_DEVICE, COL_IMAGE, COL_RO,
	COL_MARK, COL_USER,
};

static const struct list_column {
	const char *name;
	double whint;
	int flags;
	int json_type;
	const char *help;
} columns[] = {
	[COL_TARGET] = { "TARGET", 0.3, 0, SCOLS_JSON_STRING, "mount point" },
	[COL_SOURCE] = { "SOURCE", 0.3, 0, SCOLS_JSON_STRING,
			 "image file, device or directory shifted" },
	[COL_MODE]   = { "MODE", 4, 0, SCOLS_JSON_STRING, "rw, ro, or mark" },
	[COL_NOSUID] = { "NOSUID", 1, SCOLS_FL_RIGHT, SCOLS_JSON_BOOLEAN,
			 "1 if setuid bits and file capabilities are ignored" },
	[COL_NODEV]  = { "NODEV", 1, SCOLS_FL_RIGHT, SCOLS_JSON_BOOLEAN,
			 "1 if device files cannot be opened" },
	[COL_NOEXEC] = { "NOEXEC", 1, SCOLS_FL_RIGHT, SCOLS_JSON_BOOLEAN,
			 "1 if nothing can be executed" },
	[COL_MAPS]   = { "MAPS", 0.3, SCOLS_FL_TRUNC, SCOLS_JSON_STRING,
			 "uidmap=...,gidmap=... as the kernel shows them" },
	[COL_UIDMAP] = { "UIDMAP", 0.2, SCOLS_FL_TRUNC, SCOLS_JSON_ARRAY_STRING,
			 "uid extents FROM:TO:COUNT" },
	[COL_GIDMAP] = { "GIDMAP", 0.2, SCOLS_FL_TRUNC, SCOLS_JSON_ARRAY_STRING,
			 "gid extents FROM:TO:COUNT" },
	[COL_DEVICE] = { "DEVICE", 0.1, 0, SCOLS_JSON_STRING,
			 "loop device of an image file" },
	[COL_IMAGE]  = { "IMAGE", 0.2, 0, SCOLS_JSON_STRING,
			 "image file behind the loop device" },
	[COL_RO]     = { "RO", 1, SCOLS_FL_RIGHT, SCOLS_JSON_BOOLEAN,
			 "1 if read-only" },
	[COL_MARK]   = { "MARK", 1, SCOLS_FL_RIGHT, SCOLS_JSON_BOOLEAN,
			 "1 if a mark (see shiftctl mark)" },
	[COL_USER]   = { "USER", 0.1, 0, SCOLS_JSON_STRING,
			 "the user a mark serves (its uids in his /etc/subuid range)" },
};

#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

static const int default_columns[] = {
	COL_TARGET, COL_SOURCE, COL_MODE, COL_USER, COL_NOSUID, COL_MAPS,
};

/* --json without --output: every key the JSON output has always had */
static const int default_json_columns[] = {
	COL_TARGET, COL_SOURCE, COL_DEVICE, COL_IMAGE, COL_RO, COL_MARK,
	COL_NOSUID, COL_NODEV, COL_NOEXEC, COL_MAPS, COL_UIDMAP, COL_GIDMAP,
	COL_USER,
};

struct list_ctl {
	int cols[NCOLUMNS * 2];	/* --output may name a column twice */
	size_t ncols;
	bool json, raw, noheadings;
};

void list_columns_help(FILE *out)
{
	size_t i;

	fputs("\nAvailable output columns:\n", out);
	for (i = 0; i < NCOLUMNS; i++)
		fprintf(out, " %8s  %s\n", columns[i].name, columns[i].help);
}

static int column_id(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NCOLUMNS; i++)
		if (strlen(columns[i].name) == len &&
		    !strncasecmp(columns[i].name, name, len))
			return (int)i;
	return -1;
}

/* "COL,COL" replaces the defaults, "+COL,COL" adds to them. */
static int parse_columns(const struct sc_cmd *cmd, struct list_ctl *ctl,
			 const char *list)
{
	const char *p, *end;
	int id;

	if (*list == '+')
		list++;
	else
		ctl->ncols = 0;
	for (p = list; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ',');
		id = column_id(p, (size_t)(end - p));
		if (id < 0)
			return cmd_usage_error(cmd, "unknown column: '%.*s'",
					       (int)(end - p), p);
		if (ctl->ncols >= sizeof(ctl->cols) / sizeof(ctl->cols[0]))
			return cmd_usage_error(cmd, "too many columns");
		ctl->cols[ctl->ncols++] = id;
	}
	if (!ctl->ncols)
		return cmd_usage_error(cmd, "--output names no column");
	return -1;
}

static void set_defaults(struct list_ctl *ctl, const int *ids, size_t n)
{
	memcpy(ctl->cols, ids, n * sizeof(*ids));
	ctl->ncols = n;
}

static int list_options(const struct sc_cmd *cmd, int argc, char **argv,
			struct list_ctl *ctl)
{
	static const struct option longopts[] = {
		{ "json",       no_argument,       NULL, 'J' },
		{ "raw",        no_argument,       NULL, 'r' },
		{ "noheadings", no_argument,       NULL, 'n' },
		{ "output",     required_argument, NULL, 'o' },
		{ "help",       no_argument,       NULL, 'h' },
		{ "version",    no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *output = NULL;
	int c;

	memset(ctl, 0, sizeof(*ctl));
	while ((c = getopt_long(argc, argv, "Jrno:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'J':
			ctl->json = true;
			break;
		case 'r':
			ctl->raw = true;
			break;
		case 'n':
			ctl->noheadings = true;
			break;
		case 'o':
			output = optarg;
			break;
		default:
			return common_option(cmd, c);
		}
	}
	if (argc - optind != 0)
		return cmd_usage_error(cmd, "takes no arguments");
	if (ctl->json && ctl->raw)
		return cmd_usage_error(cmd, "--json and --raw are mutually exclusive");
	if (ctl->json)
		set_defaults(ctl, default_json_columns,
			     sizeof(default_json_columns) / sizeof(int));
	else
		set_defaults(ctl, default_columns,
			     sizeof(default_columns) / sizeof(int));
	return output ? parse_columns(cmd, ctl, output) : -1;
}

/* One shiftfs mount, as the columns show it. */
struct list_row {
	const char *target;
	const char *source;	/* as mountinfo has it */
	const char *fs_opts;
	const char *vfs_opts;
	bool mark;
	char device[48];	/* "/dev/loop0" for an image, else "" */
	char *image;		/* the image file behind device, if known */
	struct idmap uid, gid;
	bool maps_ok;
	char user[64];		/* whom a mark serves, or "" */
};

/*
 * A shiftfs mount of an image file shows the temporary directory its
 * lower filesystem was on as its source; the name of that directory
 * gives the device, and the loop driver the image file behind it.
 */
static void find_image(struct list_row *r)
{
	char dev[40], path[96];
	char *text = NULL;
	size_t n;

	if (source_tmpdir_dev(r->source, dev, sizeof(dev)))
		return;
	snprintf(r->device, sizeof(r->device), "/dev/%s", dev);
	snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", dev);
	if (read_text(path, &text))
		return;
	n = strlen(text);
	while (n && text[n - 1] == '\n')
		text[--n] = '\0';
	r->image = text;
}

static bool has_opt(const char *optstr, const char *name)
{
	return optstr && mnt_optstr_get_option(optstr, name, NULL, NULL) == 0;
}

/* "F:T:C" extents, one a line for a JSON array, else comma separated. */
static char *extents(const struct idmap *map, bool json)
{
	char *buf = NULL;
	size_t size = 0, i;
	FILE *f;

	f = open_memstream(&buf, &size);
	if (!f)
		return NULL;
	for (i = 0; i < map->nr; i++)
		fprintf(f, "%s%u:%u:%u", i ? (json ? "\n" : ",") : "",
			map->ext[i].from, map->ext[i].to, map->ext[i].count);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The cell text of column id for r, malloc()ed; NULL for an empty cell. */
static int cell(const struct list_row *r, int id, bool json, char **data)
{
	const char *s = NULL;

	*data = NULL;
	switch (id) {
	case COL_TARGET:
		s = r->target;
		break;
	case COL_SOURCE:
		s = r->image ? r->image : *r->device ? r->device : r->source;
		break;
	case COL_MODE:
		s = r->mark ? "mark" : has_opt(r->vfs_opts, "ro") ? "ro" : "rw";
		break;
	case COL_NOSUID:
		s = has_opt(r->vfs_opts, "nosuid") ? "1" : "0";
		break;
	case COL_NODEV:
		s = has_opt(r->vfs_opts, "nodev") ? "1" : "0";
		break;
	case COL_NOEXEC:
		s = has_opt(r->vfs_opts, "noexec") ? "1" : "0";
		break;
	case COL_RO:
		s = has_opt(r->vfs_opts, "ro") ? "1" : "0";
		break;
	case COL_MARK:
		s = r->mark ? "1" : "0";
		break;
	case COL_MAPS:
		if (!r->maps_ok) {
			s = r->fs_opts;
			break;
		}
		*data = idmap_format_options(&r->uid, &r->gid);
		return *data ? 0 : -ENOMEM;
	case COL_UIDMAP:
	case COL_GIDMAP:
		if (!r->maps_ok)
			return 0;
		*data = extents(id == COL_UIDMAP ? &r->uid : &r->gid, json);
		return *data ? 0 : -ENOMEM;
	case COL_DEVICE:
		s = *r->device ? r->device : NULL;
		break;
	case COL_IMAGE:
		s = r->image;
		break;
	case COL_USER:
		s = r->user;
		break;
	}
	if (!s || !*s)
		return 0;
	/* paths are bytes: JSON must be UTF-8 whatever they hold */
	*data = json ? utf8_sanitize(s) : strdup(s);
	return *data ? 0 : -ENOMEM;
}

static int add_row(struct libscols_table *tb, const struct list_ctl *ctl,
		   struct libmnt_fs *fs)
{
	struct libscols_line *ln;
	struct list_row r;
	size_t i;
	char *data;
	int ret = 0;

	memset(&r, 0, sizeof(r));
	r.target = mnt_fs_get_target(fs) ? mnt_fs_get_target(fs) : "?";
	r.source = mnt_fs_get_source(fs) ? mnt_fs_get_source(fs) : "?";
	r.fs_opts = mnt_fs_get_fs_options(fs);
	r.vfs_opts = mnt_fs_get_vfs_options(fs);
	r.mark = has_opt(r.fs_opts, "mark");
	r.maps_ok = idmap_parse_options(r.fs_opts ? r.fs_opts : "", &r.uid,
					&r.gid, NULL, 0) == 0;
	find_image(&r);
	if (r.mark && r.maps_ok && mark_user(&r.uid, r.user, sizeof(r.user)))
		r.user[0] = '\0';

	ln = scols_table_new_line(tb, NULL);
	if (!ln) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < ctl->ncols; i++) {
		ret = cell(&r, ctl->cols[i], ctl->json, &data);
		if (ret)
			goto out;
		/* the line owns data from here */
		if (data && scols_line_refer_data(ln, i, data)) {
			free(data);
			ret = -ENOMEM;
			goto out;
		}
	}
out:
	free(r.image);
	return ret;
}

static struct libscols_table *new_table(const struct list_ctl *ctl)
{
	struct libscols_table *tb;
	struct libscols_column *cl;
	const struct list_column *col;
	size_t i;
	int flags;

	tb = scols_new_table();
	if (!tb)
		return NULL;
	scols_table_set_name(tb, "filesystems");
	scols_table_enable_json(tb, ctl->json);
	scols_table_enable_raw(tb, ctl->raw);
	scols_table_enable_noheadings(tb, ctl->noheadings);
	for (i = 0; i < ctl->ncols; i++) {
		col = &columns[ctl->cols[i]];
		flags = col->flags;
		/* extents one a line become the elements of a JSON array */
		if (ctl->json && col->json_type == SCOLS_JSON_ARRAY_STRING)
			flags |= SCOLS_FL_WRAP;
		cl = scols_table_new_column(tb, col->name, col->whint, flags);
		if (!cl) {
			scols_unref_table(tb);
			return NULL;
		}
		scols_column_set_json_type(cl, col->json_type);
		if (flags & SCOLS_FL_WRAP)
			scols_column_set_wrapfunc(cl, scols_wrapnl_chunksize,
						  scols_wrapnl_nextchunk, NULL);
	}
	return tb;
}

int cmd_list(const struct sc_cmd *cmd, int argc, char **argv)
{
	struct libmnt_table *mt = NULL;
	struct libmnt_iter *itr = NULL;
	struct libscols_table *tb = NULL;
	struct libmnt_fs *fs;
	struct list_ctl ctl;
	const char *path;
	int ret;

	ret = list_options(cmd, argc, argv, &ctl);
	if (ret >= 0)
		return ret;

	/* the host unit tests list a mount table of their own making */
	path = secure_getenv("SHIFTCTL_MOUNTINFO");
	if (!path)
		path = "/proc/self/mountinfo";
	ret = EXIT_FAILURE;
	mt = mnt_new_table_from_file(path);
	itr = mnt_new_iter(MNT_ITER_FORWARD);
	if (!mt || !itr) {
		warnx("%s: cannot read the mount table", path);
		goto out;
	}
	tb = new_table(&ctl);
	if (!tb) {
		warnx("cannot make the output table: out of memory");
		goto out;
	}
	while (mnt_table_next_fs(mt, itr, &fs) == 0) {
		if (!mnt_fs_match_fstype(fs, "shiftfs"))
			continue;
		if (add_row(tb, &ctl, fs)) {
			warnx("out of memory");
			goto out;
		}
	}
	if (scols_print_table(tb)) {
		warnx("cannot print the table");
		goto out;
	}
	ret = EXIT_SUCCESS;
out:
	scols_unref_table(tb);
	mnt_free_iter(itr);
	mnt_unref_table(mt);
	return ret;
}
